"""H2D002: a CUDA-graph capture function mutates CPU metadata it shares with its caller."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, AbstractSet, Dict, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from fixers.edits import TextEdit
from fixers.removal import remove_statement
from fixers.statements import replace_small_statement
from lint_h2d import prefilter
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


def mutation_of(fact: StatementFact) -> Optional[Tuple[cst.BaseExpression, str, Optional[str]]]:
    """The tensor a statement writes to, how, and the in-place method if any."""
    small = fact.small
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method.endswith("_") and not method.startswith("_"):
                return func.value, f"`.{method}()`", method
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                return arg.value, "`out=`", None
        return None
    if isinstance(small, cst.Assign):
        for assign_target in small.targets:
            if isinstance(assign_target.target, cst.Subscript):
                return assign_target.target.value, "item assignment", None
        return None
    if isinstance(small, cst.AugAssign):
        target = small.target
        if isinstance(target, cst.Subscript):
            return target.value, "augmented item assignment", None
        if isinstance(target, (cst.Name, cst.Attribute)):
            return target, "augmented assignment", None
    return None


def device_sibling_path(path: Optional[str]) -> Optional[str]:
    if path is None or not path.endswith("_cpu"):
        return None
    return path[: -len("_cpu")]


class CaptureMutatesSharedCpuMetadata(Rule):
    code = "H2D002"
    name = "capture-mutates-shared-cpu-metadata"
    summary = "CUDA-graph capture function mutates CPU metadata shared with its caller"
    capture_only = True
    doc = RuleDoc(
        what="""
Flags, inside a CUDA-graph capture function (by default `build_for_cudagraph_capture`, any
function whose name contains `capture`, and any block under `with torch.cuda.graph(...)`;
setting `capture-functions`), a mutation (`.zero_()`, `.fill_()`, `.copy_()`, other in-place
ops, item or slice assignment, `out=`) of a CPU tensor that the function does not own: one
reached through a parameter, or an alias of one. Locals and `self`'s own buffers are not
flagged.
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
When the same function already zeroes or fills the device sibling (the same field without
`_cpu`), the fix removes the CPU statement: the device-only zero form. It is **safe**: the
device tensor is treated exactly as before and the caller's CPU offsets stay intact.

When the device sibling is known (a class declares both `x` and `x_cpu`) but is not written
in the function, the fix replaces the CPU mutation with the same mutation of the device
tensor. That is **unsafe**: it adds device work the author may not want.

Otherwise no fix is offered.
""",
    )

    has_tree_check = True

    def could_match(self, text: str, settings: "Settings",
                    device_fields: AbstractSet[str] = frozenset()) -> bool:
        return prefilter.h2d002_text(text, settings.capture_functions)

    def could_match_tree(self, tree: "ast.AST", settings: "Settings",
                         device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
        return prefilter.h2d002_tree(tree, settings.capture_functions)

    invalid_examples = (
        "def build_for_cudagraph_capture(self, meta):\n    meta.query_start_loc_cpu.zero_()\n",
        "import torch\ndef run(meta, g):\n    with torch.cuda.graph(g):\n        meta.seq_lens_cpu[0] = 1\n",
        "def capture_model(meta):\n    m = meta\n    m.positions_cpu.fill_(0)\n",
    )
    valid_examples = (
        "def build_for_cudagraph_capture(self, meta):\n    meta.query_start_loc.zero_()\n",
        "import torch\ndef build_for_cudagraph_capture(self, meta):\n    x_cpu = torch.zeros(4)\n"
        "    x_cpu.zero_()\n",  # a local
        "class B:\n    def build_for_cudagraph_capture(self, meta):\n"
        "        self.host_cpu.zero_()\n",  # self's own buffer
        "def prepare(meta):\n    meta.query_start_loc_cpu.zero_()\n",  # not a capture function
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
            receiver, how, method = found
            mutations.append(Mutation(fact, receiver, infer(receiver, fact.facts), how, method))
        by_scope: Dict[int, List[Mutation]] = {}
        for m in mutations:
            by_scope.setdefault(id(m.fact.scope.node), []).append(m)
        for m in mutations:
            if m.value.kind != Kind.CPU or m.value.origin != Origin.PARAM:
                continue
            yield self._finding(m, by_scope[id(m.fact.scope.node)], ctx)

    def _finding(self, m: Mutation, same_scope: List[Mutation], ctx: FileContext) -> Finding:
        shown = " ".join(ctx.module.code_for_node(m.receiver).split())
        sibling = device_sibling_path(m.value.path)
        via = f" (reached through parameter `{m.value.root}`)" if m.value.root and not shown.startswith(m.value.root + ".") and shown != m.value.root else ""
        where = (
            "Code under `with torch.cuda.graph(...)`" if m.fact.capture.startswith("with ")
            else f"Capture function `{m.fact.capture}`"
        ) if m.fact.capture else "Capture code"
        message = (
            f"{where} mutates shared CPU metadata `{shown}`{via} "
            f"with {m.how}: the caller and the builders that run after capture read it "
            "(e.g. query lengths computed from CPU offsets become 0)"
        )
        fix, reason = self._fix(m, same_scope, sibling, ctx)
        if fix is None and sibling is not None:
            message += f"; write only the device tensor `{_sibling_code(shown)}`"
        return ctx.finding(self.code, m.fact.small, message, fix=fix, no_fix_reason=reason,
                           statement=m.fact.owner,
                           details=(("target", shown),))

    def _fix(self, m: Mutation, same_scope: List[Mutation], sibling: Optional[str],
             ctx: FileContext) -> Tuple[Optional[Fix], Optional[str]]:
        if sibling is None:
            return None, "no device sibling (a field of the same name without `_cpu`) is known"
        device_written = any(
            other.value.path == sibling and other.method in _ZEROING for other in same_scope
        )
        where = ctx.position(m.fact.owner)
        if device_written:
            container = m.fact.container
            try:
                edit = remove_statement(
                    ctx.module, m.fact.owner, m.fact.small,
                    (where.start.line, where.start.column), (where.end.line, where.end.column),
                    container, source=ctx.text,
                )
            except ValueError as exc:
                return None, str(exc)
            # Removing a zero/fill is the device-only zero form; removing another kind of
            # write (copy_, +=) drops data the author may have meant to keep.
            safety = Applicability.SAFE if m.method in _ZEROING else Applicability.UNSAFE
            return Fix(safety,
                       f"Remove the CPU mutation; `{_sibling_code(_code(ctx, m.receiver))}` is already "
                       "written on the device (device-only zero form)", (edit,)), None
        if m.method not in _ZEROING:
            return None, "only a zero_/fill_ has a device-side replacement"
        if not self._sibling_known(m, sibling, ctx):
            return None, f"the device sibling `{sibling}` is not a known field"
        receiver_code = _code(ctx, m.receiver)
        new_receiver = _sibling_code(receiver_code)
        if new_receiver == receiver_code:
            return None, "cannot name the device sibling here"
        try:
            new_small = cst.parse_statement(
                _code(ctx, m.fact.small).replace(receiver_code, new_receiver, 1)
            )
        except cst.ParserSyntaxError:
            return None, "cannot rewrite this statement"
        assert isinstance(new_small, cst.SimpleStatementLine)
        small_pos = ctx.position(m.fact.small)
        replacement = replace_small_statement(
            ctx.module, (small_pos.start.line, small_pos.start.column),
            (small_pos.end.line, small_pos.end.column), new_small.body[0], source=ctx.text,
        )
        if not isinstance(replacement, TextEdit):
            return None, replacement.reason
        return Fix(Applicability.UNSAFE,
                   f"Mutate the device tensor `{new_receiver}` instead of the shared CPU copy",
                   (replacement,)), None

    @staticmethod
    def _sibling_known(m: Mutation, sibling: str, ctx: FileContext) -> bool:
        field = sibling.rsplit(".", 1)[-1]
        facts = m.fact.facts
        return field in facts.device_fields


def _code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


def _sibling_code(code: str) -> str:
    """`a.query_start_loc_cpu[:n]` → `a.query_start_loc[:n]` (the first `_cpu` attribute)."""
    return re.sub(r"_cpu\b", "", code, count=1)
