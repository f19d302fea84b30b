"""H2D001: a Python scalar written into one element of a device tensor."""
from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from fixers.device_zero import DeviceZero, device_zero_form
from fixers.edits import TextEdit, Unfixable
from fixers.platform_gate import Gate, gated_statement, matches_gate
from fixers.imports import import_insertion
from fixers.statements import replace_small_statement, replace_statement_line
from lint_h2d import prefilter
from dataclasses import replace

from lint_h2d.findings import Applicability, EvidenceKind, EvidenceStep, Finding, Fix
from lint_h2d.inference.expressions import index_effect, infer
from lint_h2d.inference.scope import StatementFact
from lint_h2d.inference.values import Kind, LocalStep
from lint_h2d.rules.base import FileContext, Rule, RuleDoc

if TYPE_CHECKING:
    import ast

    from lint_h2d.config import Settings

# The ROCm side of an existing platform gate mentions one of these.
_GATE_MARKERS = ("is_rocm", "version.hip", "is_hip")


class ScalarWriteToDeviceTensor(Rule):
    code = "H2D001"
    name = "scalar-write-to-device-tensor"
    summary = "Scalar written into one element of a device tensor (blocking host-to-device copy)"
    # Prefilter: `could_match` / `could_match_tree` below (lint_h2d/prefilter.py).
    has_tree_check = True
    doc = RuleDoc(
        what="""
Flags `t[i] = v` where `t` is a tensor on an accelerator (CUDA or ROCm), every index is an
integer so that the destination is a single element (a 0-dim view), and `v` is a Python
scalar (a literal, a name bound to a number, `len(...)`, `.item()`, `.size(i)`, ...).
""",
        why="""
PyTorch turns the scalar into a 0-dim CPU tensor and copies it into the 0-dim device view
with `copy_`. A copy from pageable host memory goes through `memcpy_and_sync`: on ROCm a
blocking `hipMemcpyWithStream`, on CUDA `cudaMemcpyAsync` + `cudaStreamSynchronize`. The host
waits until every kernel already queued on the stream has finished, so the scheduler stops
submitting work. In vLLM's MiniMax M3 metadata builder one such write cost 727-802 ms of host
time per rank over 12 prefill steps (vLLM PR #56170). The statement also fails under CUDA-graph
capture and raises under `torch.cuda.set_sync_debug_mode("error")`.

Writes that leave at least one dimension (`t2[0] = 0` on a 2-D tensor, `t[0:1] = 0`) use a
fill kernel and are not flagged.
""",
        example="""
cu_seqlens_k = torch.empty(num_prefills + 1, dtype=torch.int32, device=device)
cu_seqlens_k[0] = 0
torch.cumsum(kv_lens, dim=0, out=cu_seqlens_k[1:])
""",
        use_instead="""
cu_seqlens_k = torch.empty(num_prefills + 1, dtype=torch.int32, device=device)
if current_platform.is_rocm():
    cu_seqlens_k[:1].zero_()
else:
    cu_seqlens_k[0] = 0
torch.cumsum(kv_lens, dim=0, out=cu_seqlens_k[1:])
""",
        fix_safety="""
The fix writes the same value with a device kernel: `t[:1].zero_()` for a zero,
`t[k:k+1].fill_(v)` for another literal, `t[-1:]` for index -1, and `t[i].zero_()` /
`t[i].fill_(v)` on the select view for a non-literal index (correct for negative indices too).
By default it is wrapped in a platform gate (`current_platform.is_rocm()` in vLLM code,
`torch.version.hip is not None` elsewhere; setting `fix-gate`) so that the CUDA path is
unchanged.

The fix is **safe** when the index and the value are literals: `zero_`/`fill_` cast the value
to the tensor's dtype exactly as the assignment does, so the result is bitwise equal for every
dtype (`-0.0` keeps its sign: it becomes `fill_(-0.0)`, never `zero_()`).

It is **unsafe** when the value is not a literal (`fill_` needs a 0-dim value: a name bound
to a 1-element 1-D tensor would work in the assignment and raise in `fill_`) or when an index
is a name whose integer type is not proven (a list or tensor index would make `t[idx]` a copy
and the write would be lost). Apply those with `--unsafe-fixes` after reading them.
""",
    )

    def could_match(self, text: str, settings: "Settings",
                    device_fields: AbstractSet[str] = frozenset()) -> bool:
        return prefilter.h2d001_text(text, device_fields) or prefilter.mentions_hint(
            text, settings.device_hints)

    def could_match_tree(self, tree: "ast.AST", settings: "Settings",
                         device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
        return prefilter.h2d001_tree(tree, device_fields, text) or prefilter.mentions_hint(
            text, settings.device_hints)

    invalid_examples = (
        "import torch\nt = torch.zeros(4, device='cuda')\nt[0] = 0\n",
        "import torch\ndef f(dev: torch.device):\n    g = torch.zeros(2, 3).to(dev)\n    g[1, 2] = 1.5\n",
        "class B:\n    def __init__(self, buf):\n        self.buf = buf\n    def step(self, n: int):\n"
        "        self.buf.gpu[n] = 0\n",
    )
    valid_examples = (
        "import torch\nt = torch.zeros(4)\nt[0] = 0\n",  # CPU
        "import torch\nt = torch.zeros(4, pin_memory=True)\nt[0] = 0\n",  # pinned host memory
        "import numpy as np\na = np.zeros(4)\na[0] = 0\n",  # numpy
        "import torch\ng = torch.zeros(2, 3, device='cuda')\ng[0] = 0\n",  # a row: fill kernel
        "import torch\nt = torch.zeros(4, device='cuda')\nt[:1] = 0\n",  # slice
        "def f(t):\n    t[0] = 0\n",  # no evidence of a device
    )

    def wants(self, small: cst.BaseSmallStatement) -> bool:
        return (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Subscript)
        )

    def check(self, facts: Sequence[StatementFact], ctx: FileContext) -> Iterable[Finding]:
        for fact in facts:
            finding = self._check_one(fact, ctx)
            if finding is not None:
                yield finding

    def _check_one(self, fact: StatementFact, ctx: FileContext) -> Optional[Finding]:
        assign = fact.small
        assert isinstance(assign, cst.Assign)
        target = assign.targets[0].target
        assert isinstance(target, cst.Subscript)
        tensor = infer(target.value, fact.facts)
        if tensor.kind != Kind.DEVICE:
            return None
        effects = [index_effect(e, fact.facts) for e in target.slice]
        if not _destination_is_one_element(effects, tensor.rank):
            return None
        value = infer(assign.value, fact.facts)
        # A Python number, or a 0-dim CPU tensor (a checkpoint's per-tensor scale): both are
        # copied host-to-device into the selected element.
        cpu_tensor_value = value.kind == Kind.CPU and value.rank == 0
        if value.kind != Kind.SCALAR and not cpu_tensor_value:
            return None
        target_code = ctx.module.code_for_node(target.value)
        if _already_gated(fact, target_code, ctx.module, ctx.settings.custom_gate):
            return None
        steps = _evidence(tensor.evidence, ctx)
        # A finding that rests on a convention or a hint alone gets an unsafe fix at most.
        convention_only = not any(step.kind == EvidenceKind.DIRECT for step in steps) and bool(steps)
        proven_index = all(e in ("int", "ellipsis") for e in effects) and not convention_only
        fix, reason, suggestion = self._fix(fact, target, assign.value, proven_index, ctx)
        written = _one_line(ctx.module.code_for_node(target))
        notes = []
        if cpu_tensor_value:
            notes.append("the value is a 0-dim CPU tensor")
        if "int-tensor" in effects:
            notes.append("an index is a 0-dim integer tensor, read back to the host first"
                         " (a sync of its own when it is on the device)")
        extra = f" ({'; '.join(notes)})" if notes else ""
        message = (
            f"Scalar write into one element of device tensor `{_one_line(target_code)}` "
            f"(`{written} = ...`): a host-to-device copy that blocks the host until the "
            f"stream drains{extra}; use `{_one_line(suggestion)}`"
        )
        steps = steps + _why_scalar(effects, cpu_tensor_value, target, assign.value, fact, ctx)
        finding = ctx.finding(
            self.code, assign, message, fix=fix, no_fix_reason=reason, statement=fact.owner,
            details=(("target", target_code), ("rank", str(tensor.rank))),
        )
        return replace(finding, evidence=steps)

    def _fix(
        self,
        fact: StatementFact,
        target: cst.Subscript,
        value: cst.BaseExpression,
        proven_index: bool,
        ctx: FileContext,
    ) -> Tuple[Optional[Fix], Optional[str], str]:
        form = device_zero_form(target, value)
        if not isinstance(form, DeviceZero):
            return None, form.reason, "a device-side `zero_()`/`fill_()`"
        suggestion = ctx.module.code_for_node(form.call)
        safe = form.index_is_literal and form.value_is_literal and proven_index
        applicability = Applicability.SAFE if safe else Applicability.UNSAFE
        if "gate" not in ctx.memo:
            ctx.memo["gate"] = ctx.settings.gate_for(ctx.path, ctx.text)
        gate = ctx.memo["gate"]
        assert gate is None or isinstance(gate, Gate)
        owner = fact.owner
        where = ctx.position(owner)
        alone = isinstance(owner, cst.SimpleStatementLine) and len(owner.body) == 1
        if gate is None:
            if alone:
                assert isinstance(owner, cst.SimpleStatementLine)
                # Same line node, new body: its trailing comment stays where it was.
                replacement = owner.with_changes(body=[cst.Expr(form.call)])
                edit: object = replace_statement_line(
                    ctx.module, owner, (where.start.line, where.start.column),
                    (where.end.line, where.end.column), replacement, source=ctx.text,
                )
            else:
                small = ctx.position(fact.small)
                edit = replace_small_statement(
                    ctx.module, (small.start.line, small.start.column),
                    (small.end.line, small.end.column), cst.Expr(form.call), source=ctx.text,
                )
            if not isinstance(edit, TextEdit):
                return None, getattr(edit, "reason", "cannot rewrite here"), suggestion
            return Fix(applicability, f"Replace with `{suggestion}`", (edit,)), None, suggestion
        if not alone:
            return (
                None,
                "the statement shares its line with others; a platform-gated `if` cannot "
                "be inserted there (split the line, or set fix-gate = \"none\")",
                suggestion,
            )
        assert isinstance(owner, cst.SimpleStatementLine)
        new = gated_statement(owner, form.call, gate)
        edit = replace_statement_line(
            ctx.module, owner, (where.start.line, where.start.column),
            (where.end.line, where.end.column), new, source=ctx.text,
        )
        edits = [edit]
        if gate.import_line:
            key = f"import:{gate.import_line}"
            if key not in ctx.memo:
                ctx.memo[key] = import_insertion(ctx.module, gate.import_line)
            insertion = ctx.memo[key]
            if isinstance(insertion, TextEdit):
                edits.append(insertion)
            elif isinstance(insertion, Unfixable):
                return None, f"cannot add `{gate.import_line}`: {insertion.reason}", suggestion
        message = f"Use `{suggestion}` under `if {gate.test}:`"
        return Fix(applicability, message, tuple(edits)), None, suggestion


def _evidence(raw: Iterable[object], ctx: FileContext) -> Tuple[EvidenceStep, ...]:
    """The value's evidence as reported: local steps positioned, duplicates dropped."""
    out: List[EvidenceStep] = []
    for step in raw:
        if isinstance(step, LocalStep):
            where = ctx.position(step.node)
            step = EvidenceStep(step.message, None, where.start.line, where.start.column + 1,
                                EvidenceKind(step.kind))
        if isinstance(step, EvidenceStep) and step not in out:
            out.append(step)
    return tuple(out)


def _why_scalar(effects: List[str], cpu_tensor_value: bool, target: cst.Subscript,
                value: cst.BaseExpression, fact: StatementFact,
                ctx: FileContext) -> Tuple[EvidenceStep, ...]:
    """Why the destination is one element and the value a host scalar (the last steps)."""
    row = ctx.position(value).start.line
    index = "a 0-dim integer tensor" if "int-tensor" in effects else (
        "integers" if all(e in ("int", "ellipsis") for e in effects) else
        "taken to be integers (un-annotated parameter)")
    what = "a 0-dim CPU tensor" if cpu_tensor_value else "a Python number"
    return (EvidenceStep(f"every index is {index}: the destination is one element, the value "
                         f"is {what}", None, row, None, EvidenceKind.DIRECT),)


def _one_line(code: str) -> str:
    return " ".join(code.split())


def _destination_is_one_element(effects: List[str], rank: Optional[int]) -> bool:
    """True when indexing leaves a 0-dim view: that is the only case setitem copies."""
    if any(e not in ("int", "maybe-int", "int-tensor", "ellipsis") for e in effects):
        return False
    integers = sum(1 for e in effects if e in ("int", "maybe-int", "int-tensor"))
    ellipses = effects.count("ellipsis")
    if ellipses > 1 or integers == 0:
        return False
    if rank is None:
        return integers == 1 and ellipses == 0
    return integers == rank


def _already_gated(fact: StatementFact, target_code: str, module: cst.Module,
                   custom_gate: Optional[Gate] = None) -> bool:
    """The seed's fixed form: one branch of a ROCm gate writes with zero_/fill_, this is the other."""
    for if_node, branch in reversed(fact.gates):
        test = module.code_for_node(if_node.test)
        # A configured gate is recognised too, or a second --fix would wrap its else branch.
        ours = custom_gate is not None and matches_gate(if_node.test, custom_gate)
        if not ours and not any(marker in test for marker in _GATE_MARKERS):
            continue
        other = if_node.orelse if branch == "body" else if_node.body
        if other is None:
            continue
        other_code = module.code_for_node(other)
        for method in (".zero_()", ".fill_("):
            if target_code + "[" in other_code and method in other_code:
                return True
        if f"{target_code}.narrow(" in other_code:
            return True
    return False
