"""H2D003: a `non_blocking` host-to-device copy whose source is pageable host memory."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from fixers.arguments import keyword_insertion, rewrite_segment
from fixers.edits import TextEdit, Unfixable
from fixers.imports import import_insertion
from lint_h2d import prefilter
from lint_h2d.findings import Applicability, EvidenceKind, EvidenceStep, Finding, Fix
from lint_h2d.inference.expressions import (
    Facts,
    _bind_pattern,
    element_of,
    _is_dtype,
    dotted_name,
    infer,
    place_of,
)
from lint_h2d.inference.memory import PINNABLE_FACTORIES, is_falsy_constant, keyword_value, positional_args
from lint_h2d.inference.scope import StatementFact
from lint_h2d.inference.values import UNKNOWN, HostMemory, Kind, Value
from lint_h2d.rules.base import FileContext, Rule, RuleDoc
from lint_h2d.cst_children import recorded_children, type_test
from lint_h2d.rules.constant_tensor_built_on_host import move_of

if TYPE_CHECKING:
    import ast

    from lint_h2d.config import Settings

# The methods that copy to the device with a `non_blocking` flag.
COPY_METHODS = frozenset({"to", "cuda", "copy_"})
_VLLM_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+vllm\b", re.M)
VLLM_PIN_IMPORT = "from vllm.utils.platform_utils import is_pin_memory_available"


@dataclass(frozen=True)
class CopySite:
    """One `.to(...)` / `.cuda(...)` / `.copy_(...)` call that asks for a non-blocking copy."""

    call: cst.Call
    method: str
    source: cst.BaseExpression
    flag: cst.BaseExpression  # the `non_blocking` argument
    facts: Facts


def non_blocking_flag(call: cst.Call, method: str) -> Optional[cst.BaseExpression]:
    """The `non_blocking` argument when it is not provably off (`False`, `0`, `None`).

    A keyword anywhere; positionally only where the signature leaves no doubt
    (`dst.copy_(src, True)`, `t.cuda(device, True)`): `.to`'s overloads put it at 1 or 2.
    """
    flag = keyword_value(call, "non_blocking")
    if flag is None and method in ("copy_", "cuda"):
        positional = positional_args(call)
        flag = positional[1] if len(positional) > 1 else None
    if flag is None or is_falsy_constant(flag):
        return None
    return flag


def moves_to_device(call: cst.Call, method: str, facts: Facts) -> bool:
    """`.cuda(...)`, or `.to(...)` with a target that is not provably the CPU or a dtype."""
    if method == "cuda":
        return True
    target = keyword_value(call, "device")
    if target is None:
        positional = positional_args(call)
        if not positional:
            return False
        target = positional[0]
    if _is_dtype(target, facts) or place_of(target, facts) == Kind.CPU_PLACE:
        return False
    value = infer(target, facts)
    return value.kind not in (Kind.CPU, Kind.NUMPY)


def copy_sites(small: cst.CSTNode, facts: Facts) -> Iterator[CopySite]:
    """Every call in `small` that copies host-to-device with a non-blocking flag, with the
    names of enclosing comprehensions bound (`[t.to(d, non_blocking=True) for t in ts]`)."""
    stack: List[Tuple[cst.CSTNode, Facts]] = [(small, facts)]
    while stack:
        node, here = stack.pop()
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            inner = _comprehension_facts(node.for_in, here)
            for child in node.children:
                if child is not node.for_in:
                    stack.append((child, inner))
            clause: Optional[cst.CompFor] = node.for_in
            first = True
            while clause is not None:
                # The first iterable runs outside the comprehension; the rest inside it.
                stack.append((clause.iter, here if first else inner))
                stack.extend((cond, inner) for cond in clause.ifs)
                clause, first = clause.inner_for_in, False
            continue
        if isinstance(node, cst.Lambda):
            shadowed = {p.name.value for p in node.params.params}
            names = {k: v for k, v in here.names.items() if k not in shadowed}
            stack.append((node.body, here.with_names(names)))
            continue
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            site = _site(node, here)
            if site is not None:
                yield site
        stack.extend((child, here) for child in reversed(node.children))


def _comprehension_facts(for_in: cst.CompFor, facts: Facts) -> Facts:
    names: Dict[str, Value] = dict(facts.names)
    clause: Optional[cst.CompFor] = for_in
    while clause is not None:
        item = element_of(infer(clause.iter, facts.with_names(names)))
        _bind_pattern(clause.target, item or UNKNOWN, names)
        clause = clause.inner_for_in
    return facts.with_names(names)


def _site(call: cst.Call, facts: Facts) -> Optional[CopySite]:
    func = call.func
    assert isinstance(func, cst.Attribute)
    method = func.attr.value
    if method not in COPY_METHODS:
        return None
    flag = non_blocking_flag(call, method)
    if flag is None:
        return None
    if method == "copy_":
        source = keyword_value(call, "src")
        positional = positional_args(call)
        if source is None and positional:
            source = positional[0]
        if source is None:
            return None
        destination = infer(func.value, facts)
        if destination.kind in (Kind.CPU, Kind.NUMPY):
            return None  # a host-to-host (or device-to-host) copy
        return CopySite(call, method, source, flag, facts)
    if not moves_to_device(call, method, facts):
        return None
    return CopySite(call, method, func.value, flag, facts)


def has_copy_call(node: cst.CSTNode) -> bool:
    """Cheap test for `wants`: some `.to/.cuda/.copy_` call mentions a non-blocking flag.

    It runs on every small statement of every analysed file, so it reads children in place
    (`recorded_children`: no whitespace or operator nodes, which hold no call) instead of
    LibCST's `children`, which runs a visitor per node (4x slower on vLLM's statements)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if _is_call(current):
            assert isinstance(current, cst.Call)
            if isinstance(current.func, cst.Attribute) and current.func.attr.value in COPY_METHODS \
                    and non_blocking_flag(current, current.func.attr.value) is not None:
                return True
        if _is_leaf(current):
            continue
        stack.extend(recorded_children(current))
    return False


_is_call = type_test(cst.Call)
_is_leaf = type_test(cst.Name, cst.SimpleString, cst.Integer, cst.Float)


def pageable_source(site: CopySite) -> Optional[Tuple[Value, HostMemory]]:
    """The source's value and memory when it is pageable and holds at least one element."""
    value = infer(site.source, site.facts)
    memory = value.memory
    if memory is None or memory.pinned or memory.empty or value.kind == Kind.DEVICE:
        return None
    return value, memory


def is_vllm_file(path: str, text: str) -> bool:
    return "vllm" in Path(path).parts or bool(_VLLM_IMPORT.search(text))


class NonBlockingCopyFromPageableMemory(Rule):
    code = "H2D003"
    name = "non-blocking-copy-from-pageable-memory"
    summary = "Non-blocking host-to-device copy from pageable memory (the host blocks anyway)"
    has_tree_check = True
    doc = RuleDoc(
        what="""
Flags a host-to-device copy that asks not to block — `x.to(device, non_blocking=True)`,
`x.cuda(non_blocking=True)`, `dst.copy_(x, non_blocking=True)` — whose source `x` is a CPU
tensor in pageable (not pinned) memory: built by a torch factory without `pin_memory=`, by
`torch.from_numpy` / `torch.as_tensor` from a numpy array or Python data, by arithmetic or
`torch.cat` on the host, by `.cpu()` / `.to("cpu")` of a device tensor; reached directly, through
a local name, a `self.` field set in another method, a view or slice, or a list of such tensors.
The message shows where the source's memory was allocated.

Not flagged: pinned sources (`pin_memory=True`, `pin_memory=<name>` such as vLLM's
`PIN_MEMORY` / `is_pin_memory_available()`, `.pin_memory()`, `.to("cpu", non_blocking=True)`
of a device tensor, vLLM's `.np` / `CpuGpuBuffer` views), copies to the CPU, copies whose
`non_blocking` is `False`, and tensors that provably hold no element (`torch.zeros(0)`: no byte
moves). vLLM's `# gpu-sync-ok: <reason>` comment on a line of the statement silences this rule
(as it silences vLLM's `tools/pre_commit/check_gpu_sync_patterns.py`), like `# noqa: H2D003`.
""",
        why="""
`non_blocking=True` is a promise the runtime can keep only for page-locked memory. From
pageable memory, `cudaMemcpyAsync` / `hipMemcpyAsync` first stage the bytes through a driver
buffer, synchronously: the host waits until the copy — and every kernel queued before it on the
stream — is done, and the hint is silently dropped. In a serving loop the scheduler then stops
queuing work every step. vLLM added a pre-commit check and a runtime checker for exactly this
(PR #53491).
""",
        example="""
positions = torch.arange(num_tokens, dtype=torch.int64)
positions_gpu = positions.to(device, non_blocking=True)
""",
        use_instead="""
positions = torch.arange(num_tokens, dtype=torch.int64, pin_memory=True)
positions_gpu = positions.to(device, non_blocking=True)
""",
        fix_safety="""
When the pageable tensor is allocated in the same function by a factory that takes
`pin_memory=` (`torch.zeros/empty/ones/full/arange/tensor/eye/linspace/...`), the fix adds
`pin_memory=True` to that allocation (in vLLM code `pin_memory=is_pin_memory_available()`,
with its import). The fix is **unsafe**: page-locked memory is a scarce resource that costs more
to allocate than pageable memory (allocate it once, outside hot loops, or reuse a pinned buffer),
`pin_memory=True` raises where no accelerator driver is present, and the tensor's other uses see
the change too. The values, dtype and shape of every tensor are unchanged.

Sources made by `torch.from_numpy`, `.cpu()`, arithmetic or another function get no fix: pin a
buffer once and copy into it (vLLM: `CpuGpuBuffer`, `async_tensor_h2d`).
""",
    )
    invalid_examples = (
        "import torch\ndef f(dev, n):\n    x = torch.zeros(n)\n    return x.to(dev, non_blocking=True)\n",
        "import torch, numpy as np\ndef f(buf, a: np.ndarray):\n    buf.copy_(torch.from_numpy(a), non_blocking=True)\n",
        "import torch\nclass B:\n    def __init__(self, n):\n        self.x_cpu = torch.zeros(n, dtype=torch.int32)\n"
        "    def step(self, dst, k):\n        dst.copy_(self.x_cpu[:k], non_blocking=True)\n",
        "import torch\ndef f(t):\n    return t.cpu().cuda(non_blocking=True)\n",
    )
    valid_examples = (
        "import torch\ndef f(dev, n):\n    x = torch.zeros(n, pin_memory=True)\n    return x.to(dev, non_blocking=True)\n",
        "import torch\ndef f(dev, n, PIN_MEMORY):\n    return torch.zeros(n, pin_memory=PIN_MEMORY).to(dev, non_blocking=True)\n",
        "import torch\ndef f(dev, n):\n    return torch.zeros(n).pin_memory().to(dev, non_blocking=True)\n",
        "import torch\ndef f(n):\n    return torch.zeros(n).to('cpu', non_blocking=True)\n",
        "import torch\ndef f(dev, n):\n    return torch.zeros(n).to(dev)\n",  # blocking, and says so
        "import torch\ndef f(dev):\n    return torch.zeros(0).to(dev, non_blocking=True)\n",  # no element
        "import torch\ndef f(dev, n):\n    return torch.zeros(n, device=dev).to(dev, non_blocking=True)\n",
        "import torch\ndef f(dev, n):\n    return torch.zeros(n).to(dev, non_blocking=True)  # gpu-sync-ok: once\n",
    )

    def could_match(self, text: str, settings: "Settings",
                    device_fields: AbstractSet[str] = frozenset()) -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match(text, settings, device_fields)

    def could_match_tree(self, tree: "ast.AST", settings: "Settings",
                         device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match_tree(tree, settings, device_fields, text)

    def wants(self, small: cst.BaseSmallStatement) -> bool:
        return has_copy_call(small)

    def check(self, facts: Sequence[StatementFact], ctx: FileContext) -> Iterable[Finding]:
        for fact in facts:
            for site in copy_sites(fact.small, fact.facts):
                found = pageable_source(site)
                if found is not None and not _tested_off_host(fact, site.source, ctx.module):
                    yield self._finding(fact, site, found[0], found[1], ctx)

    def _finding(self, fact: StatementFact, site: CopySite, value: Value, memory: HostMemory,
                 ctx: FileContext) -> Finding:
        call_code = _one_line(ctx.module.code_for_node(site.call))
        source_code = _one_line(ctx.module.code_for_node(site.source))
        flag = _one_line(ctx.module.code_for_node(site.flag))
        when = "" if flag in ("True", "1") else f" (when `{flag}` is true)"
        fix, reason = self._fix(fact, site, memory, ctx)
        vllm = is_vllm_file(ctx.path, ctx.text)
        advice = ("pin it once (`pin_memory=is_pin_memory_available()`, a `CpuGpuBuffer`, or "
                  "`async_tensor_h2d`)" if vllm else
                  "allocate it pinned (`pin_memory=True`) or copy through a pinned buffer")
        steps = ctx.evidence(memory.evidence)
        origin = f" ({steps[0].message}, line {steps[0].row})" if steps and steps[0].row else ""
        message = (
            f"Non-blocking copy `{_shorten(call_code)}` blocks the host{when}: its source "
            f"`{_shorten(source_code)}` is pageable host memory{origin}, so the runtime stages "
            f"the copy and waits for the stream; {advice}"
        )
        row = ctx.position(site.call).start.line
        steps += (EvidenceStep(f"`non_blocking={flag}` is dropped: the copy from pageable memory "
                               "is synchronous", None, row, None, EvidenceKind.DIRECT),)
        details: Tuple[Tuple[str, str], ...] = (("source", source_code),)
        if fix is not None and isinstance(memory.node, cst.Call):
            # The allocation before and after, for `lint-h2d verify` (lint_h2d/verify/moves.py).
            where = ctx.position(memory.node)
            after = rewrite_segment(ctx.text, (where.start.line, where.start.column),
                                    (where.end.line, where.end.column), fix.edits)
            if after is not None:
                details += (("expression", ctx.module.code_for_node(memory.node)), ("replacement", after))
        finding = ctx.finding(self.code, site.call, message, fix=fix, no_fix_reason=reason,
                              statement=fact.owner, details=details)
        return replace(finding, evidence=steps)

    def _fix(self, fact: StatementFact, site: CopySite, memory: HostMemory,
             ctx: FileContext) -> Tuple[Optional[Fix], Optional[str]]:
        alloc = memory.node
        if not isinstance(alloc, cst.Call) or not _pinnable(alloc, fact.facts):
            return None, ("the source is not allocated by a factory that takes `pin_memory=`; "
                          "pin a buffer once and copy into it")
        if alloc is site.source and site.method in ("to", "cuda") and move_of(site.call, fact.facts):
            return None, "H2D004's fix allocates it on the device instead (no copy at all)"
        if not _same_function(alloc, fact, ctx):
            return None, "the source is allocated in another function; pin it there"
        if keyword_value(alloc, "pin_memory") is not None:
            return None, "the allocation sets `pin_memory=` explicitly"
        if any(arg.star == "**" for arg in alloc.args):
            return None, "the allocation passes `**kwargs`, which may hold `pin_memory=`"
        vllm = is_vllm_file(ctx.path, ctx.text)
        value = "is_pin_memory_available()" if vllm else "True"
        edit = keyword_insertion(alloc, f"pin_memory={value}", ctx.position, ctx.text)
        if edit is None:
            return None, "cannot place a keyword in this call's layout"
        edits: List[TextEdit] = [edit]
        if vllm:
            key = f"import:{VLLM_PIN_IMPORT}"
            if key not in ctx.memo:
                ctx.memo[key] = import_insertion(ctx.module, VLLM_PIN_IMPORT)
            insertion = ctx.memo[key]
            if isinstance(insertion, Unfixable):
                return None, f"cannot add `{VLLM_PIN_IMPORT}`: {insertion.reason}"
            if isinstance(insertion, TextEdit):
                edits.append(insertion)
        return Fix(Applicability.UNSAFE, f"Allocate the source pinned (`pin_memory={value}`)",
                   tuple(edits)), None


def _tested_off_host(fact: StatementFact, source: cst.BaseExpression, module: cst.Module) -> bool:
    """An enclosing `if` says the source is not pageable host memory on this branch:
    `else` of `if x.is_cpu:`, body of `if x.is_cuda:` / `if x.is_pinned():` /
    `if x.device.type != "cpu":` (and their negations)."""
    root = source
    while isinstance(root, cst.Subscript):
        root = root.value
    name = _one_line(module.code_for_node(root))
    for if_node, branch in fact.gates:
        test = if_node.test
        negate = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negate, test = not negate, test.expression
        verdict = _off_host_when_true(_one_line(module.code_for_node(test)), name)
        if verdict is None:
            continue
        if verdict != negate and branch == "body" or verdict == negate and branch == "orelse":
            return True
    return False


def _off_host_when_true(test: str, name: str) -> Optional[bool]:
    """True: the test holding means `name` is not pageable host memory; False: the test holding
    means it is on the host; None: the test says nothing about it."""
    test = test.replace("'", '"').replace(" ", "")
    name = name.replace(" ", "")
    if test in (f"{name}.is_cuda", f"{name}.is_pinned()"):
        return True
    if test == f"{name}.is_cpu":
        return False
    for op, value in (("==", True), ("!=", False)):
        if test == f'{name}.device.type{op}"cpu"':
            return not value
        if test == f'{name}.device.type{op}"cuda"':
            return value
    return None


def _pinnable(call: cst.Call, facts: Facts) -> bool:
    func = call.func
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value in facts.torch_names and func.attr.value in PINNABLE_FACTORIES)


def _same_function(alloc: cst.Call, fact: StatementFact, ctx: FileContext) -> bool:
    """The allocation lies in the function that copies (not in `__init__` or a caller)."""
    scope = fact.scope.node
    inner = ctx.position(alloc)
    if scope is None:
        statement = ctx.position(fact.owner)
        return ((statement.start.line, statement.start.column) <= (inner.start.line, inner.start.column)
                and (inner.end.line, inner.end.column) <= (statement.end.line, statement.end.column))
    outer = ctx.position(scope)
    if not ((outer.start.line, outer.start.column) <= (inner.start.line, inner.start.column)
            and (inner.end.line, inner.end.column) <= (outer.end.line, outer.end.column)):
        return False
    # Not inside a function nested in it.
    for node in _nested_functions(scope):
        pos = ctx.position(node)
        if (pos.start.line, pos.start.column) <= (inner.start.line, inner.start.column) \
                and (inner.end.line, inner.end.column) <= (pos.end.line, pos.end.column):
            return False
    return True


def _nested_functions(fn: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    stack: List[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield node
            continue
        stack.extend(node.children)


def _one_line(code: str) -> str:
    return " ".join(code.split())


def _shorten(code: str, limit: int = 80) -> str:
    return code if len(code) <= limit else code[: limit - 3] + "..."


__all__ = ["NonBlockingCopyFromPageableMemory", "copy_sites", "pageable_source", "dotted_name"]
