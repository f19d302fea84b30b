"""H2D002: a CUDA-graph capture function mutates CPU metadata it shares with its caller."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, AbstractSet, Dict, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from fixers.edits import TextEdit
from fixers.removal import remove_statement
from fixers.statements import replace_small_statement
from lint_h2d import capture_flow, prefilter
from lint_h2d.findings import Applicability, Finding, Fix
from lint_h2d.inference.expressions import infer
from lint_h2d.inference.scope import StatementFact
from lint_h2d.inference.values import Kind, Origin, Value
from lint_h2d.rules.base import FileContext, Rule, RuleDoc

if TYPE_CHECKING:
    import ast

    from lint_h2d.config import Settings

# In-place tensor methods that only write (their result is the receiver).
_ZEROING = ("zero_", "fill_")


@dataclass(frozen=True)
class Mutation:
    fact: StatementFact
    receiver: cst.BaseExpression
    value: Value
    how: str  # "`.zero_()`", "item assignment", ...
    method: Optional[str]  # the in-place method, when it is one
    # `torch.zero_(t)`: the receiver is the call's first argument.
    receiver_is_first_arg: bool = False


def mutation_of(fact: StatementFact) -> Optional[Tuple[cst.BaseExpression, str, Optional[str], bool]]:
    """The tensor a statement writes to, how, the in-place method if any, and whether the
    tensor is the first argument (`torch.fill_(t, v)`) rather than the receiver."""
    small = fact.small
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method.endswith("_") and not method.startswith("_"):
                if isinstance(func.value, cst.Name) and func.value.value in fact.facts.torch_names:
                    first = call.args[0] if call.args else None
                    if first is None or first.keyword is not None or first.star:
                        return None
                    return first.value, f"`torch.{method}()`", method, True
                return func.value, f"`.{method}()`", method, False
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                return arg.value, "`out=`", None, False
        return None
    if isinstance(small, cst.Assign):
        for assign_target in small.targets:
            if isinstance(assign_target.target, cst.Subscript):
                return assign_target.target.value, "item assignment", None, False
        return None
    if isinstance(small, cst.AugAssign):
        target = small.target
        if isinstance(target, cst.Subscript):
            return target.value, "augmented item assignment", None, False
        if isinstance(target, (cst.Name, cst.Attribute)):
            return target, "augmented assignment", None, False
    return None


def device_sibling_path(path: Optional[str]) -> Optional[str]:
    """`a_cpu.b_cpu` → `a_cpu.b`: only the last component's `_cpu` is dropped."""
    if path is None or not path.endswith("_cpu") or path.rsplit(".", 1)[-1] == "_cpu":
        return None
    return path[: -len("_cpu")]


class CaptureMutatesSharedCpuMetadata(Rule):
    code = "H2D002"
    name = "capture-mutates-shared-cpu-metadata"
    summary = "CUDA-graph capture function mutates CPU metadata shared with its caller"
    capture_only = True
    doc = RuleDoc(
        what="""
Flags, in code that runs during CUDA-graph capture, a mutation (`.zero_()`, `.fill_()`,
`.copy_()`, other in-place methods, `torch.zero_(t)` and other in-place `torch.*_` functions,
item or slice assignment, `out=`) of a CPU tensor that the code does not own: one reached
through a parameter, or a local alias of one (`q = meta.x_cpu`, a loop over such tensors).
Locals and `self`'s own buffers are not flagged.

Capture code is decided from evidence, never from a name fragment: the body of
`with torch.cuda.graph(...)` (under any import alias: `import torch.cuda as tc`,
`from torch.cuda import graph`) and of vLLM's `graph_capture()`; the statements between
`g.capture_begin()` and `g.capture_end()`; the functions of the same file that those regions
call (`helper(...)`, `self.method(...)`); functions named in the `capture-functions` setting
(by default vLLM's `build_for_cudagraph_capture`); and functions nested in any of these.
""",
        why="""
Capture functions are handed metadata that the caller keeps using. vLLM's
`RocmAttentionMetadataBuilder.build_for_cudagraph_capture` zeroed both
`common_attn_metadata.query_start_loc` (the device tensor: needed, the prefix-prefill kernel
would read out of bounds during capture) and `common_attn_metadata.query_start_loc_cpu` (the
host copy: not read by that kernel, but shared with the builders that run after it). Those
builders then computed query lengths of 0 from the CPU offsets and the server crashed at start
with `assert decode_query_len > 0` (vLLM PR #51585). CPU work is also not recorded into the
graph: a host-side mutation runs once, at capture time, never on replay.
""",
        example="""
def build_for_cudagraph_capture(self, common_attn_metadata):
    attn_metadata = self.build(0, common_attn_metadata)
    common_attn_metadata.query_start_loc.zero_()
    common_attn_metadata.query_start_loc_cpu.zero_()
    return attn_metadata
""",
        use_instead="""
def build_for_cudagraph_capture(self, common_attn_metadata):
    attn_metadata = self.build(0, common_attn_metadata)
    common_attn_metadata.query_start_loc.zero_()
    return attn_metadata
""",
        fix_safety="""
When the function also zeroes or fills the device sibling (the same path with only the
written field's own `_cpu` dropped: `a_cpu.b_cpu` → `a_cpu.b`), the fix deletes the CPU
statement: the device-only zero form. The deletion is **safe** only when all of these hold,
and **unsafe** otherwise:

- the statement is `.zero_()` / `torch.zero_(t)` without other arguments, or `.fill_(v)` /
  `torch.fill_(t, v)` with `v` a number or bool literal of magnitude at most 127 (one that every
  dtype accepts); its target is a plain attribute path (`a.b.x_cpu`) or name, with no call and
  no subscript (a subscript may raise). So deleting it drops no call and no error;
- the device sibling's zero/fill runs before it on every path (same block or an enclosing
  one, not in another branch, not after it) and covers it (the whole sibling, or the same
  subscript);
- no code of the function after it (in a loop: anywhere in the loop) reads the CPU tensor or
  uses an object that holds it: a read, a method call on it or on its holder, passing the
  holder to a call (`self.build(0, meta)`), an alias bound from any of these, a closure that
  mentions them. Handing the object back with `return`/`yield` does not count: the caller
  keeping intact CPU offsets is the point of the fix;
- the tensor is reached through a parameter of this very function, not a variable of an
  enclosing one (which may read it after a nested function returns); the function never
  rebinds that parameter (`if (m := other()):` would put the device write on another object),
  and a local alias of the tensor (`q = m.x_cpu`) is bound once;
- the function reads no variable by name (`locals()`, `vars()`, `eval`, `exec`, a frame's
  `f_locals`): those see the tensor without naming it.

Attribute reads are taken to be plain field reads (no property with effects).
Deleting any other write (`copy_`, item assignment, `+=`) is always **unsafe**: it drops data
the author may mean to keep.

When the device sibling is not written in the function but is a known field (a field of the
holder's declared class, or, when the class is unknown, a field that some class of the project
pairs with its `_cpu` twin), the fix replaces the CPU zero/fill with the same call on the device
sibling. That is **unsafe**: it adds device work the author may not want. No fix is offered for
other writes, for a target reached through a local alias (the sibling has no name there), or
when the sibling is unknown.
""",
    )

    has_tree_check = True

    def could_match(self, text: str, settings: "Settings",
                    device_fields: AbstractSet[str] = frozenset()) -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match(text, settings, device_fields)

    def could_match_tree(self, tree: "ast.AST", settings: "Settings",
                         device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match_tree(tree, settings, device_fields, text)

    invalid_examples = (
        "def build_for_cudagraph_capture(self, meta):\n    meta.query_start_loc_cpu.zero_()\n",
        "import torch\ndef run(meta, g):\n    with torch.cuda.graph(g):\n        meta.seq_lens_cpu[0] = 1\n",
        "def build_for_cudagraph_capture(meta):\n    m = meta\n    m.positions_cpu.fill_(0)\n",
        "import torch.cuda as tc\ndef run(meta, g):\n    with tc.graph(g):\n"
        "        meta.seq_lens_cpu.zero_()\n",  # an import alias
        "from torch.cuda import graph\ndef run(meta, g):\n    with graph(g):\n"
        "        meta.seq_lens_cpu.zero_()\n",
        "def run(meta, g):\n    g.capture_begin()\n    meta.seq_lens_cpu.zero_()\n    g.capture_end()\n",
        "import torch\ndef step(meta):\n    meta.seq_lens_cpu.zero_()\n"
        "def run(meta, g):\n    with torch.cuda.graph(g):\n        step(meta)\n",  # called from a region
        "def build_for_cudagraph_capture(meta):\n    def helper():\n"
        "        meta.seq_lens_cpu.zero_()\n    helper()\n",  # nested in a capture function
        "import torch\ndef build_for_cudagraph_capture(meta):\n    torch.zero_(meta.seq_lens_cpu)\n",
        "def build_for_cudagraph_capture(meta):\n    for t in (meta.a_cpu, meta.b_cpu):\n        t.zero_()\n",
        "def build_for_cudagraph_capture(meta):\n    q = meta.query_start_loc_cpu\n    q.zero_()\n",
    )
    valid_examples = (
        "def build_for_cudagraph_capture(self, meta):\n    meta.query_start_loc.zero_()\n",
        "import torch\ndef build_for_cudagraph_capture(self, meta):\n    x_cpu = torch.zeros(4)\n"
        "    x_cpu.zero_()\n",  # a local
        "class B:\n    def build_for_cudagraph_capture(self, meta):\n"
        "        self.host_cpu.zero_()\n",  # self's own buffer
        "def prepare(meta):\n    meta.query_start_loc_cpu.zero_()\n",  # not a capture function
        "class Foo:\n    def capture(self, meta):\n        meta.seq_lens_cpu.zero_()\n",  # a name only
        "def capture_hidden(module, args, output):\n    output.hidden_cpu.zero_()\n",  # a forward hook
        "def capture_model(meta):\n    meta.seq_lens_cpu.zero_()\n",  # a name fragment is no evidence
        "import torch\ndef step(meta):\n    meta.seq_lens_cpu.zero_()\n"
        "def run(meta, g):\n    step(meta)\n    with torch.cuda.graph(g):\n        pass\n",  # called outside
        "import torch\ndef build_for_cudagraph_capture(meta):\n    torch.zero_(meta.seq_lens)\n",
    )

    def wants(self, small: cst.BaseSmallStatement) -> bool:
        return isinstance(small, (cst.Expr, cst.Assign, cst.AugAssign))

    def check(self, facts: Sequence[StatementFact], ctx: FileContext) -> Iterable[Finding]:
        in_capture = [f for f in facts if f.capture is not None]
        if not in_capture:
            return
        mutations: List[Mutation] = []
        for fact in in_capture:
            found = mutation_of(fact)
            if found is None:
                continue
            receiver, how, method, first_arg = found
            mutations.append(Mutation(fact, receiver, infer(receiver, fact.facts), how, method, first_arg))
        by_scope: Dict[int, List[Mutation]] = {}
        for m in mutations:
            by_scope.setdefault(id(m.fact.scope.node), []).append(m)
        for m in mutations:
            if m.value.kind != Kind.CPU or m.value.origin != Origin.PARAM:
                continue
            yield self._finding(m, by_scope[id(m.fact.scope.node)], ctx)

    def _finding(self, m: Mutation, same_scope: List[Mutation], ctx: FileContext) -> Finding:
        shown = " ".join(_code(ctx, m.receiver).split())
        via = f" (reached through parameter `{m.value.root}`)" if m.value.root and not shown.startswith(m.value.root + ".") and shown != m.value.root else ""
        message = (
            f"{_where(m.fact.capture)} mutates shared CPU metadata `{shown}`{via} "
            f"with {m.how}: the caller and the builders that run after capture read it "
            "(e.g. query lengths computed from CPU offsets become 0)"
        )
        fix, reason = self._fix(m, same_scope, ctx)
        twin = _twin_name(m, ctx)
        if fix is None and twin is not None:
            message += f"; write only the device tensor `{twin}`"
        return ctx.finding(self.code, m.fact.small, message, fix=fix, no_fix_reason=reason,
                           statement=m.fact.owner,
                           details=(("target", shown),))

    def _fix(self, m: Mutation, same_scope: List[Mutation],
             ctx: FileContext) -> Tuple[Optional[Fix], Optional[str]]:
        sibling = device_sibling_path(m.value.path)
        if sibling is None and isinstance(m.receiver, cst.Name) and m.value.path is None:
            return None, f"`{m.receiver.value}` may stand for more than one tensor (no single device sibling)"
        if sibling is None:
            return None, "no device sibling (a field of the same name without `_cpu`) is known"
        twins = [other for other in same_scope
                 if other is not m and other.value.path == sibling and other.method in _ZEROING]
        if twins:
            return self._removal(m, twins, ctx)
        if m.method not in _ZEROING:
            return None, "only a zero_/fill_ has a device-side replacement"
        new_receiver = capture_flow.twin_of(m.receiver)
        if new_receiver is None:
            return None, (f"`{_code(ctx, m.receiver)}` is an alias: the device sibling "
                          f"`{sibling}` cannot be named here")
        if not self._sibling_known(m, ctx):
            return None, f"the device sibling `{sibling}` is not a known field"
        new_small = m.fact.small.deep_replace(m.receiver, new_receiver)
        assert isinstance(new_small, cst.BaseSmallStatement)
        small_pos = ctx.position(m.fact.small)
        replacement = replace_small_statement(
            ctx.module, (small_pos.start.line, small_pos.start.column),
            (small_pos.end.line, small_pos.end.column), new_small, source=ctx.text,
        )
        if not isinstance(replacement, TextEdit):
            return None, replacement.reason
        return Fix(Applicability.UNSAFE,
                   f"Mutate the device tensor `{_code(ctx, new_receiver)}` instead of the shared CPU copy",
                   (replacement,)), None

    def _removal(self, m: Mutation, twins: List[Mutation],
                 ctx: FileContext) -> Tuple[Optional[Fix], Optional[str]]:
        """Delete the CPU write: the device-only zero form.  Safe only when nothing can tell."""
        where = ctx.position(m.fact.owner)
        try:
            edit = remove_statement(
                ctx.module, m.fact.owner, m.fact.small,
                (where.start.line, where.start.column), (where.end.line, where.end.column),
                m.fact.container, source=ctx.text,
            )
        except ValueError as exc:
            return None, str(exc)
        twin = _twin_name(m, ctx) or "the device sibling"
        risk = self._removal_risk(m, twins, ctx)
        message = f"Remove the CPU mutation; `{twin}` is already written on the device (device-only zero form)"
        if risk is None:
            return Fix(Applicability.SAFE, message, (edit,)), None
        return Fix(Applicability.UNSAFE, f"{message}; unsafe: {risk}", (edit,)), None

    @staticmethod
    def _removal_risk(m: Mutation, twins: List[Mutation], ctx: FileContext) -> Optional[str]:
        """Why the removal might change behaviour; None when it cannot (the safe fix)."""
        if m.method not in _ZEROING:
            return "it drops a write that is not a zero_/fill_, data the author may mean to keep"
        scope: cst.CSTNode = m.fact.scope.node if m.fact.scope.node is not None else ctx.module
        place = capture_flow.place_of(scope, m.fact.small)
        if place is None:
            return "the statement was not found in its function"
        dominating = [t for t in twins if _dominates(scope, t, place)]
        if not dominating:
            return "the device sibling is not written before it on every path"
        if not any(capture_flow.covers(t.receiver, m.receiver) for t in dominating):
            return "the device sibling is written only in part"
        small = m.fact.small
        assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
        assert m.method is not None
        risk = capture_flow.evaluation_risk(small.value, m.receiver, m.method, m.receiver_is_first_arg)
        if risk is not None:
            return risk
        if m.value.root is not None and m.value.root not in m.fact.scope.params:
            return (f"`{m.value.root}` belongs to an enclosing function, which may read the tensor "
                    "after this one returns")
        rebound = _rebound(scope, m)
        if rebound is not None:
            return rebound
        dynamic = capture_flow.dynamic_access(scope)
        if dynamic is not None:
            return dynamic
        tracked: Dict[str, capture_flow.Chain] = {}
        receiver_chain = capture_flow.chain_of(m.receiver)
        if receiver_chain is not None:
            tracked[receiver_chain[0]] = receiver_chain
        if m.value.path is not None:
            path = tuple(m.value.path.split("."))
            tracked.setdefault(path[0], path)
        return capture_flow.observed_after(scope, small, tracked, lambda n: _code(ctx, n))

    @staticmethod
    def _sibling_known(m: Mutation, ctx: FileContext) -> bool:
        """The twin is a declared field of the holder's class, or (class unknown) of some class
        in the project that pairs it with the `_cpu` field."""
        receiver = m.receiver
        while isinstance(receiver, cst.Subscript):
            receiver = receiver.value
        if not isinstance(receiver, cst.Attribute):
            return False
        field = receiver.attr.value[: -len("_cpu")]
        facts = m.fact.facts
        holder = infer(receiver.value, facts)
        if holder.type_name is not None and holder.type_name in facts.class_fields:
            return field in facts.class_fields[holder.type_name]
        return field in facts.device_fields


def _rebound(scope: cst.CSTNode, m: Mutation) -> Optional[str]:
    """Why the names the proof rests on may not mean what it assumes: the parameter must keep
    its object (else the device write may be on another one: `if (m := other()):`), and a local
    alias (`q = m.x_cpu`) must be bound once."""
    chain = capture_flow.chain_of(m.receiver)
    names = {m.value.root} if m.value.root is not None else set()
    if chain is not None:
        names.add(chain[0])
    for name in sorted(names):
        allowed = 0 if name == m.value.root else 1
        if capture_flow.binding_count(scope, name) > allowed:
            return f"`{name}` is rebound in the function: the device write may be on another object"
    return None


def _dominates(scope: cst.CSTNode, twin: Mutation, place: capture_flow.Place) -> bool:
    twin_place = capture_flow.place_of(scope, twin.fact.small)
    return twin_place is not None and capture_flow.dominates(twin_place, place)


def _where(capture: Optional[str]) -> str:
    """The subject of the message: why this code runs during capture."""
    if not capture:
        return "Capture code"
    if capture.startswith("with "):
        return f"Code under `{capture}`"
    if capture.startswith("between "):
        return f"Code {capture}"
    return f"Capture function `{capture}`" if capture.isidentifier() else f"Capture function {capture}"


def _twin_name(m: Mutation, ctx: FileContext) -> Optional[str]:
    """How to name the device tensor in a message: the receiver with its field's `_cpu`
    dropped, or (for an alias such as `q = m.x_cpu`) the access path it stands for."""
    twin = capture_flow.twin_of(m.receiver)
    if twin is not None:
        return " ".join(_code(ctx, twin).split())
    return device_sibling_path(m.value.path)


def _code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)
