"""H2D001: a Python scalar written into one element of a device tensor."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import (TYPE_CHECKING, AbstractSet, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple,
                    TypeVar, Union)

import libcst as cst

from fixers.device_zero import DeviceZero, device_zero_form
from fixers.edits import TextEdit, Unfixable
from fixers.imports import import_insertion, target_names
from fixers.layout import project_line_length
from fixers.pipeline import Rewrite, deletion, gated_rewrite, ungated_rewrite
from fixers.platform_gate import Gate, matches_gate
from fixers.removal import remove_statement
from fixers.statements import replace_small_statement
from lint_h2d import prefilter

from lint_h2d.findings import Applicability, EvidenceKind, EvidenceStep, Finding, Fix
from lint_h2d.inference.expressions import index_effect, index_evidence, infer, last_name
from lint_h2d.inference.resolved import rests_on_module_output
from lint_h2d.inference.scope import StatementFact
from lint_h2d.inference.usage import (NameBindings, SpelledRank, rank_floor, region_rank_floor, spelled_rank,
                                      spelled_rank_of_copy)
from lint_h2d.inference.values import LENGTHS_STEP, SCALAR, Kind, LocalStep, Value, names_lengths
from lint_h2d.rules._gate_site import GateSite, ModuleImports, gate_site, module_flags
from lint_h2d.rules._int_index import int_names
from lint_h2d.rules._redundant import Redundant, redundant_write
from lint_h2d.rules._scopes import ScopeMap, bound_names, fast_visit
from lint_h2d.rules._sizes import proven_length
from lint_h2d.rules._sync_allowed import AllowedRegion, SyncAllowed, describe
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
scalar (a literal, a name bound to a number, `len(...)`, `.item()`, `.size(i)`, ...), a
numpy scalar (an element of a numpy array: setitem raises for a numpy array itself) or a 0-dim
CPU tensor.
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
The fix writes the same value with a device kernel instead of a host-to-device copy:

- a literal index keeps its subscript, `t[3].zero_()`, `t2[0, -1].fill_(v)`: an integer
  subscript is a view, so the fill is in place, and it raises the same `IndexError` as the
  assignment when the index is out of range;
- a literal index on a tensor whose length the code proves becomes the one-element slice vLLM
  ships, `t[:1].zero_()`, `t[k:k+1]`, `t[-1:]`.  Proof: `t` is a function's local,
  allocated in the same block by `torch.empty/zeros/ones(SIZE, ...)` with nothing in between
  rebinding it, and `SIZE` is a literal, `len(...) + c`, or `n + c` / `n` inside
  `if n > c0:` (or `>=`) whose body never rebinds `n`.  Without proof a slice would be empty
  on a short tensor and the write would silently not happen;
- any other index becomes `t.select(0, i)` (`t.select(0, i).select(0, j)`, `t.select(-1, i)`
  after `...`): `select` takes an integer or a 0-dim integer tensor and raises for a list, a
  tensor of indices, a slice or a bool, where `t[i].fill_(v)` would fill a copy;
- `0`, `0.0` and `False` become `zero_()`; any other value `fill_(v)` (`-0.0` keeps its sign).

By default it is wrapped in a platform gate (`current_platform.is_rocm()` in vLLM code,
`torch.version.hip is not None` elsewhere; setting `fix-gate`) so that the CUDA path is
unchanged.  The gate is written so that it reads the module's own names: where a parameter,
local or class attribute shadows `torch` or `current_platform`, the module's alias of the same
import is used (`import torch as th`), or there is no fix.  A file that imports the gate's
module only inside functions gets the import inside the function, above the gate; a
`@torch.jit.script`, `@torch.compile` or `@triton.jit` function gets
`torch.version.hip is not None` (and no fix under a custom gate).

Consecutive fixed statements of one block (only comments and blank lines between them) share
one gate when `--fix` applies them together: the ROCm branch holds every rewrite in order, the
other branch the original statements with their comments.  A module's own flag
(`_is_hip = current_platform.is_rocm()`, `_IS_ROCM = torch.version.hip is not None`, bound once
at module level, not shadowed) is read instead of a new call.  A trailing comment is kept on
the original and repeated on the rewrite; rewrites follow the project's line length
(`[tool.ruff]`/`[tool.black]` `line-length`, else 88) and break as ruff/black would.

A write of the value the element already holds goes away (both platforms gain): `t[0] = 0`
right after `t = torch.zeros((1, 8), ...)` (1 after `ones`, `v` after `full(..., v)`), when
`t` is a local allocated in the same block with nothing in between that could reach it (no
call, alias or compound statement; other element writes only, earlier statements on the
write's own line included: `t[0] = 1; t[0] = 0` keeps its second write).  The deletion is safe only when
the index lies within the allocation's literal (or proven) shape and the dtype is absent or an
ordinary one; otherwise the usual rewrite is offered.

No fix is offered where the project itself allows syncs (setting `sync-allowed`, default
`["gpu_sync_allowed"]`, vLLM's context manager): a write lexically inside
`with gpu_sync_allowed():` (called without arguments; vLLM's `first_only=True` allows only the
first pass), or in a private function (`_name`) of the file whose every same-file call
(`_f(...)`, `self._f(...)`) is inside one, directly or through another such function, and
that is never mentioned otherwise (passed around, named in a string, decorated) nor defined
twice in the file.  The write
still blocks, so it is still reported; its message and evidence name the `with`.  vLLM uses
the block for run-once setup (`MambaSpecDecodeGPUContext._populate_metadata`): a maintainer
would send back a rewrite of code they explicitly allowed to sync.  A private function called
from another file is not seen (only its own file's calls are).  `sync-allowed = []` turns
this off.

The fix is **safe** only when it is provably the same for every input, errors included: every
index is an integer literal and the value is a number literal (or `True`/`False`) whose
integer value, if any, lies within int64.  Then `zero_`/`fill_` cast the value exactly as the
assignment does, for every dtype, and fail exactly where it fails.

It is **unsafe** (applied only with `--unsafe-fixes`, after reading it) when:

- an index is not a literal: the assignment accepts a list, a tensor or a bool index (advanced
  indexing), where `select` raises;
- the value is not a literal: `fill_` rejects a one-element 1-D tensor that the assignment
  accepts, and the evaluation order changes.  `t[i] = v` evaluates `v` first, then `t` and
  `i`; `t.select(0, i).fill_(v)` evaluates `t` and `i` first, so a value that calls
  something (`self.pos[0] = len(self._grow())` where `_grow()` replaces `self.pos`) would
  write into the old tensor.  Only literals are free of calls;
- an integer literal value lies outside int64: the assignment raises `ValueError`, while
  `fill_` writes it (uint64 and floating dtypes) or raises another error;
- the finding rests on a convention (`[convention]` in its evidence: a tensor's place or rank
  read from how serving code is written, such as a module's output or a rank a trailing `:`
  spells), which a program may break: the write may then be no one-element copy.
"""
    )

    def could_match(self, text: str, settings: "Settings",
                    device_fields: AbstractSet[str] = frozenset()) -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match(text, settings, device_fields)

    def could_match_tree(self, tree: "ast.AST", settings: "Settings",
                         device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match_tree(tree, settings, device_fields, text)

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
                finding = _redundancy_noted(finding, ctx.memo.pop(f"redundant:{id(fact.small)}", None))
                yield _allowed_noted(finding, _sync_allowed_region(fact, ctx))

    def _check_one(self, fact: StatementFact, ctx: FileContext) -> Optional[Finding]:
        decision = decide(fact, ctx)
        if decision.reason is not None or decision.value is None:
            return None
        assign = fact.small
        assert isinstance(assign, cst.Assign)
        target = assign.targets[0].target
        assert isinstance(target, cst.Subscript)
        tensor, effects, value = decision.tensor, list(decision.effects), decision.value
        cpu_tensor_value = value.kind == Kind.CPU and value.rank == 0
        target_code = ctx.module.code_for_node(target.value)
        steps = ctx.evidence(tensor.evidence)
        # A finding that rests on a convention or a hint alone gets an unsafe fix at most.
        convention_only = not any(step.kind == EvidenceKind.DIRECT for step in steps) and bool(steps) \
            or rests_on_module_output(tensor.evidence) or decision.rank_convention \
            or any(step.kind == EvidenceKind.CONVENTION for step in ctx.evidence(value.evidence))
        proven_index = all(e in ("int", "ellipsis") for e in effects) and not convention_only
        fix, reason, suggestion, proven = self._fix(fact, target, assign.value, proven_index, ctx)
        written = _one_line(ctx.module.code_for_node(target))
        notes = []
        if cpu_tensor_value:
            notes.append("the value is a 0-dim CPU tensor")
        if "int-tensor" in effects:
            notes.append(_int_tensor_note(target, effects, fact))
        extra = f" ({'; '.join(notes)})" if notes else ""
        message = (
            f"Scalar write into one element of device tensor `{_one_line(target_code)}` "
            f"(`{written} = ...`): a host-to-device copy that blocks the host until the "
            f"stream drains{extra}; use `{_one_line(suggestion)}`"
        )
        steps = steps + _why_scalar(effects, cpu_tensor_value, target, assign.value, value, fact, ctx)
        finding = ctx.finding(
            self.code, assign, message, fix=fix, no_fix_reason=reason, statement=fact.owner,
            details=(("target", target_code), ("rank", str(tensor.rank)))
            + ((("min_length", str(proven)),) if proven is not None else ()),
        )
        return replace(finding, evidence=steps)

    def _fix(
        self,
        fact: StatementFact,
        target: cst.Subscript,
        value: cst.BaseExpression,
        proven_index: bool,
        ctx: FileContext,
    ) -> Tuple[Optional[Fix], Optional[str], str, Optional[int]]:
        """The fix, or why there is none; the suggested call; the proven length (verify uses
        it, so it is reported only with a fix)."""
        scopes = _memo(ctx, "scopes", lambda: ScopeMap.of(ctx.module, ctx.text))
        min_length = proven_length(fact, target.value, scopes) if _one_literal_index(target) else None
        fix, reason, suggestion = self._build(fact, target, value, proven_index, ctx, scopes, min_length)
        return fix, reason, suggestion, (min_length if fix is not None else None)

    def _build(
        self,
        fact: StatementFact,
        target: cst.Subscript,
        value: cst.BaseExpression,
        proven_index: bool,
        ctx: FileContext,
        scopes: ScopeMap,
        min_length: Optional[int],
    ) -> Tuple[Optional[Fix], Optional[str], str]:
        """What to write instead (the device call, or nothing), and its safety; the layout,
        gate, grouping and imports are the fix pipeline's (`fixers/pipeline.py`)."""
        owner = fact.owner
        where = ctx.position(owner)
        limit = _memo(ctx, "line_length", lambda: project_line_length(ctx.path))
        block, index = _block_key(fact, ctx, scopes)
        redundant = (redundant_write(fact, target, value, scopes)
                     if isinstance(owner, cst.SimpleStatementLine) and fact.container is not None else None)
        # Deleted only when provably the same, errors included; otherwise the rewrite below
        # (always safe here: literal index and value) is the better fix.
        if redundant is not None and redundant.safe:
            return self._deletion(fact, target, value, redundant, ctx, block, index)
        form = device_zero_form(target, value, min_length, _proven_int_names(fact, target, scopes, ctx))
        if not isinstance(form, DeviceZero):
            return None, form.reason, "a device-side `zero_()`/`fill_()`"
        suggestion = ctx.module.code_for_node(form.call)
        # Safe only when every input the original accepts gives the same result, errors
        # included: literal index (the rewrite raises where the assignment raises), literal
        # value that fits int64 (see `lint-h2d rule H2D001`, Fix safety).
        safe = form.index_is_literal and form.value_is_literal and form.value_fits and proven_index
        applicability = Applicability.SAFE if safe else Applicability.UNSAFE
        gate = _memo(ctx, "gate", lambda: ctx.settings.gate_for(ctx.path, ctx.text))
        assert gate is None or isinstance(gate, Gate)
        alone = isinstance(owner, cst.SimpleStatementLine) and len(owner.body) == 1
        replacement = [cst.Expr(form.call)]
        if gate is None:
            if alone:
                assert isinstance(owner, cst.SimpleStatementLine)
                rewrite: Optional[Rewrite] = ungated_rewrite(
                    ctx.module, owner, where.start, where.end, replacement, block=block, index=index,
                    limit=limit, source=ctx.text)
                assert rewrite is not None
                edit: object = rewrite.edit
            else:
                rewrite = None
                small = ctx.position(fact.small)
                edit = replace_small_statement(
                    ctx.module, (small.start.line, small.start.column),
                    (small.end.line, small.end.column), cst.Expr(form.call), source=ctx.text,
                )
            if not isinstance(edit, TextEdit):
                return None, getattr(edit, "reason", "cannot rewrite here"), suggestion
            return Fix(applicability, f"Replace with `{_one_line(suggestion)}`", (edit,), rewrite), None, suggestion
        if not alone:
            return (
                None,
                "the statement shares its line with others; a platform-gated `if` cannot "
                "be inserted there (split the line, or set fix-gate = \"none\")",
                suggestion,
            )
        assert isinstance(owner, cst.SimpleStatementLine)
        site = self._gate_site(gate, owner, where.start.line, ctx, scopes)
        if isinstance(site, str):
            return None, site, suggestion
        gate = site.gate
        rewrite = gated_rewrite(
            ctx.module, owner, where.start, where.end, replacement, gate.test, block=block, index=index,
            limit=limit, lazy_import=gate.import_line.strip() if site.lazy_import and gate.import_line else None,
            source=ctx.text,
        )
        edits = [rewrite.edit]
        if gate.import_line and site.import_at == "module":
            insertion = _memo(ctx, f"import:{gate.import_line}",
                              lambda: import_insertion(ctx.module, gate.import_line or ""))
            if isinstance(insertion, TextEdit):
                edits.append(insertion)
            elif isinstance(insertion, Unfixable):
                return None, f"cannot add `{gate.import_line}`: {insertion.reason}", suggestion
        message = f"Use `{_one_line(suggestion)}` under `if {gate.test}:`"
        return Fix(applicability, message, tuple(edits), rewrite), None, suggestion

    @staticmethod
    def _deletion(fact: StatementFact, target: cst.Subscript, value: cst.BaseExpression, redundant: Redundant,
                  ctx: FileContext, block: Tuple[int, int], index: int) -> Tuple[Optional[Fix], Optional[str], str]:
        """The write stores what the element holds: the fix deletes it (both platforms gain)."""
        owner = fact.owner
        assert isinstance(owner, cst.SimpleStatementLine) and fact.container is not None
        where = ctx.position(owner)
        edit = remove_statement(ctx.module, owner, fact.small, where.start, where.end, fact.container,
                                source=ctx.text)
        rewrite = deletion(edit, block=block, index=index, newline=ctx.module.default_newline)
        name = ctx.module.code_for_node(target.value)
        written = _one_line(ctx.module.code_for_node(target))
        stored = _one_line(ctx.module.code_for_node(value))
        why = f"`{name}` was allocated by `{redundant.allocation}` and already holds {redundant.holds}"
        ctx.memo[f"redundant:{id(fact.small)}"] = (
            f"Redundant scalar write into device tensor `{name}` (`{written} = {stored}`): {why}, "
            "so the write only costs a host-to-device copy that blocks the host until the stream "
            "drains; delete it",
            (("redundant", redundant.holds), ("allocation", redundant.allocation),
             ("min_length", str(redundant.min_length))),
        )
        return Fix(Applicability.SAFE, f"Delete the write ({why})", (edit,), rewrite), None, \
            "nothing (delete the write)"

    @staticmethod
    def _gate_site(gate: Gate, owner: cst.SimpleStatementLine, row: int, ctx: FileContext,
                   scopes: ScopeMap) -> Union[GateSite, str]:
        imports = _memo(ctx, "imports", lambda: ModuleImports.of(ctx.module))
        assert isinstance(imports, ModuleImports)
        has_import = gate.import_line is not None and _memo(
            ctx, f"has:{gate.import_line}",
            lambda: import_insertion(ctx.module, gate.import_line or "") is None,
        )
        flags = _memo(ctx, "flags", lambda: module_flags(ctx.module, ctx.text))
        return gate_site(gate, owner, row, ctx.module, scopes, imports,
                         lambda node: ctx.position(node).start.line, bool(has_import), flags)


T = TypeVar("T")


# A tokenizer's special-token ids (`tokenizer.eos_token_id`, NeMo's `tokenizer.eos`): Python
# ints in Hugging Face's, SentencePiece wrappers' and NeMo's tokenizers.
SPECIAL_TOKEN_IDS = frozenset({
    "bos_token_id", "eos_token_id", "pad_token_id", "unk_token_id", "sep_token_id", "cls_token_id",
    "mask_token_id", "bos_id", "eos_id", "pad_id", "unk_id", "bos", "eos", "pad", "eod",
})


def special_token_id(node: cst.BaseExpression) -> Optional[Value]:
    """A Python number by convention, where nothing else says what `node` is and it reads a
    special-token id off a tokenizer (`self.tokenizer.eos_token_id`, `self._tokenizer.pad_id`: the
    object's own name says tokenizer; `tok.pad_id` is not read).  Only as the value of a write:
    there a working program writes a number into one element (a string or `None` raises), while
    as an index `None` (a tokenizer without that token) would add a dimension.  A `[convention]`
    step, so a finding that rests on it gets no safe fix."""
    if not (isinstance(node, cst.Attribute) and node.attr.value in SPECIAL_TOKEN_IDS):
        return None
    owner = node.value
    name = last_name(owner) or ""
    if "tokenizer" not in name.lower():
        return None
    return SCALAR.because(LocalStep(
        f"`{name}.{node.attr.value}` is a tokenizer's special-token id: a Python int (a convention)",
        node, EvidenceKind.CONVENTION.value))


def bound_special_token_id(node: cst.BaseExpression, fact: StatementFact) -> Optional[Value]:
    """`special_token_id` of what a local name holds: a name the function binds only by plain
    assignments of special-token ids (`bos, pad = tokenizer.bos_token_id, tokenizer.pad_token_id`),
    and in no other way (not a parameter, a loop or `with` target, an augmented assignment, an
    import, `global`...).  Such a name is one of those ids wherever it is read (or unbound)."""
    function = fact.scope.node
    if not isinstance(node, cst.Name) or not isinstance(function, cst.FunctionDef):
        return None
    bindings = _AssignedValues(node.value)
    bindings.add_params(function.params)
    fast_visit(function.body, bindings)
    # Every binding is a plain assignment whose value is known (`values`), each an id.
    if bindings.escaped or not bindings.values or bindings.bindings != len(bindings.values) \
            or not all(v is not None and special_token_id(v) for v in bindings.values):
        return None
    shown = ", ".join(f"`{_one_line(cst.Module([]).code_for_node(v))}`" for v in bindings.values if v is not None)
    return SCALAR.because(LocalStep(
        f"`{node.value}` is bound only to {shown}, a tokenizer's special-token id: a Python int (a convention)",
        node, EvidenceKind.CONVENTION.value))


class _AssignedValues(NameBindings):
    """`NameBindings` that also keeps the value each plain assignment binds to the name
    (`values`; None for a target without its own value, `a, b = f()`), and counts `x += v` as an
    escape (the value changes)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.values: List[Optional[cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        for target in node.targets:
            self._pair(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        super().visit_AnnAssign(node)
        if node.value is not None and isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.values.append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.escaped = self.escaped or self.name in target_names(node.target)

    def _pair(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, cst.Name):
            if target.value == self.name:
                self.values.append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = list(value.elements) if isinstance(value, (cst.Tuple, cst.List)) else None
            if values is not None and len(values) == len(target.elements) and not any(
                    isinstance(e, cst.StarredElement) for e in (*target.elements, *values)):
                for t, v in zip(target.elements, values):
                    self._pair(t.value, v.value)
            else:
                self.values.extend(None for n in target_names(target) if n == self.name)


@dataclass(frozen=True)
class Decision:
    """What H2D001 concluded about one `t[...] = v`, in the order it checks: the destination
    tensor, how each index acts, the value, and why it is not flagged (`reason`; None when it
    is).  Fields after the failing check stay empty.  `lint-h2d explain` prints it."""

    tensor: Value
    effects: Tuple[str, ...] = ()
    value: Optional[Value] = None
    reason: Optional[str] = None
    # The destination's rank rests on a convention (`spelled_rank`), whatever its place rests on.
    rank_convention: bool = False


def decide(fact: StatementFact, ctx: FileContext) -> Decision:
    """H2D001's checks of one `t[...] = v` statement (the rule's `wants`), first failing one
    named.  The rule reports exactly the statements with no `reason`."""
    assign = fact.small
    assert isinstance(assign, cst.Assign)
    target = assign.targets[0].target
    assert isinstance(target, cst.Subscript)
    tensor = infer(target.value, fact.facts)
    if tensor.kind != Kind.DEVICE:
        return Decision(tensor, reason="the destination is not known to be a tensor on the accelerator")
    spelled = _spelled(fact, target) if tensor.rank is None else None
    if tensor.rank is None and rests_on_module_output(tensor.evidence):
        # A module's output has the rank of what the layer computes: without a proven
        # rank, `out[i] = 0` may fill a row (no copy).  A name that says per-sequence lengths
        # (`encoder_out_lens`, `cu_seqlens`) says one dimension, a convention too, and so do
        # the function's subscripts that spell every dimension (`spelled_rank`).
        shown = last_name(target.value)
        if shown is not None and names_lengths(shown):
            tensor = replace(tensor, rank=1, evidence=tensor.evidence + (
                LocalStep(f"`{shown}` is {LENGTHS_STEP}", target.value, "convention"),))
        elif spelled is None:
            return Decision(tensor, reason="the destination is a module's output of unknown rank: "
                                           "the write may fill a row (no copy)")
    spelled_rank_convention = False
    if tensor.rank is None and spelled is not None:
        found, copied = spelled
        copy = f" (every binding of `{last_name(target.value)}` copies `{copied}`)" if copied is not None else ""
        steps = [LocalStep(f"`{_one_line(ctx.module.code_for_node(found.spelled))}` "
                           f"{SPELLED_STEP.format(rank=found.spelled_as)}{copy}", found.spelled, "convention")]
        for line, rank in found.through:
            rebinding = line.body[0]
            steps.append(LocalStep(f"`{_one_line(ctx.module.code_for_node(rebinding))}` "
                                   f"{REBOUND_STEP.format(rank=rank)}", rebinding))
        tensor = replace(tensor, rank=found.rank, evidence=tensor.evidence + tuple(steps))
        spelled_rank_convention = True
    effects = tuple(index_effect(e, fact.facts) for e in target.slice)
    if not _destination_is_one_element(effects, tensor.rank):
        return Decision(tensor, effects, reason="the indices are not known to select one element "
                                                "(a slice, an advanced index, or fewer integers than the rank)")
    if tensor.rank is None and _wider_by_usage(fact, target, effects):
        return Decision(tensor, effects, reason="the function indexes the destination with more positions "
                                                "elsewhere: this write keeps a dimension (a fill, no copy)")
    value = infer(assign.value, fact.facts)
    if value.kind == Kind.UNKNOWN:
        value = special_token_id(assign.value) or bound_special_token_id(assign.value, fact) or value
    # A Python number, or a 0-dim CPU tensor (a checkpoint's per-tensor scale): both are
    # copied host-to-device into the selected element.  So is a numpy value: PyTorch's setitem
    # raises for a numpy array ("can't assign a numpy.ndarray"), so one that is written is a
    # numpy scalar (`np.float64`, `np.int64`), read as a Python number.
    if value.kind not in (Kind.SCALAR, Kind.NUMPY) and not (value.kind == Kind.CPU and value.rank == 0):
        return Decision(tensor, effects, value, reason="the value is not known to be a Python number "
                                                       "or a 0-dim CPU tensor")
    if _already_gated(fact, ctx.module.code_for_node(target.value), ctx.module, ctx.settings.custom_gate):
        return Decision(tensor, effects, value, reason="the other branch of a ROCm gate already writes "
                                                       "this element with a kernel")
    return Decision(tensor, effects, value, rank_convention=spelled_rank_convention)


def _redundancy_noted(finding: Finding, note: object) -> Finding:
    """A redundant write gets its own message (why it changes nothing) and the facts verify needs."""
    if note is None:
        return finding
    assert isinstance(note, tuple)
    message: str = note[0]
    details: Tuple[Tuple[str, str], ...] = note[1]
    kept = tuple(d for d in finding.details if d[0] != "min_length")
    return replace(finding, message=message, details=kept + tuple(details))


def _sync_allowed_region(fact: StatementFact, ctx: FileContext) -> Optional[AllowedRegion]:
    """The region the project declares sync-allowed that the write runs in (`sync-allowed`)."""
    allowed = _memo(ctx, "sync_allowed", lambda: SyncAllowed.of(
        ctx.module, ctx.text, ctx.settings.sync_allowed, lambda node: ctx.position(node).start.line,
        os.path.basename(ctx.path) if ctx.path not in ("", "-") else "<stdin>"))
    assert isinstance(allowed, SyncAllowed)
    if not allowed.lines and not allowed.functions:
        return None
    scopes = _memo(ctx, "scopes", lambda: ScopeMap.of(ctx.module, ctx.text))
    chain = scopes.chain(fact.owner)
    function = chain[-1] if chain and isinstance(chain[-1], cst.FunctionDef) else None
    return allowed.region(fact.owner, function)


def _allowed_noted(finding: Finding, region: Optional[AllowedRegion]) -> Finding:
    """A write where the project allows syncs stays reported (it blocks), without a fix: a
    maintainer would not take a rewrite of code they explicitly allowed to sync."""
    if region is None:
        return finding
    why = describe(region)
    step = EvidenceStep(why, None, region.row, None, EvidenceKind.DIRECT)
    return replace(finding, message=f"{finding.message}; {why}, so no fix is offered", fix=None,
                   no_fix_reason=why, evidence=finding.evidence + (step,))


def _block_key(fact: StatementFact, ctx: FileContext, scopes: ScopeMap) -> Tuple[Tuple[int, int], int]:
    """Where the statement's block starts and the statement's index in it (adjacency)."""
    block = fact.block
    found = scopes.block_index(block, fact.owner)
    index = -1 if found is None else found
    if not block:
        return (0, 0), index
    start = ctx.position(block[0]).start
    return (start.line, start.column), index


def _memo(ctx: FileContext, key: str, compute: Callable[[], T]) -> T:
    """Per-file values every finding of the file shares (computed for the first fix only)."""
    if key not in ctx.memo:
        ctx.memo[key] = compute()
    return ctx.memo[key]  # type: ignore[return-value]


def _proven_int_names(fact: StatementFact, target: cst.Subscript, scopes: ScopeMap,
                      ctx: FileContext) -> FrozenSet[str]:
    """The index names proven to be Python ints (they keep the subscript spelling)."""
    names = [e.slice.value.value for e in target.slice
             if isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name)]
    if not names or not isinstance(fact.owner, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return frozenset()
    chain = scopes.chain(fact.owner)
    function = chain[-1] if chain and isinstance(chain[-1], cst.FunctionDef) else None
    bound = _memo(ctx, "module_bound", lambda: bound_names([ctx.module]))
    # Each proof walks the whole function twice: made once per function and name, not once
    # per finding (vLLM's `mamba_utils._populate_metadata` holds 15 writes indexed by `idx`/`i`).
    # (Keyed by the node itself, which the table keeps alive: an id could be reused.)
    proven: Dict[Tuple[Optional[cst.FunctionDef], str], bool] = _memo(ctx, "int_names", dict)
    for name in names:
        if (function, name) not in proven:
            proven[(function, name)] = bool(int_names([name], function, bound))
    return frozenset(name for name in names if proven[(function, name)])


def _one_literal_index(target: cst.Subscript) -> bool:
    return len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)


def _why_scalar(effects: List[str], cpu_tensor_value: bool, target: cst.Subscript,
                value: cst.BaseExpression, inferred: Value, fact: StatementFact,
                ctx: FileContext) -> Tuple[EvidenceStep, ...]:
    """Why the destination is one element and the value a host scalar (the last steps);
    `inferred` is what the caller inferred for `value`."""
    row = ctx.position(value).start.line
    index = ("a 0-dim integer tensor" if all(e == "int-tensor" for e in effects) else
             "an integer or a 0-dim integer tensor") if "int-tensor" in effects else (
        "integers" if all(e in ("int", "ellipsis") for e in effects) else
        "taken to be integers (by the evidence above)")
    what = "a 0-dim CPU tensor" if cpu_tensor_value else (
        "a numpy scalar (setitem raises for a numpy array)" if inferred.kind == Kind.NUMPY else "a Python number")
    # Why a parameter used as an index is taken to be an int (call sites, a default, `range`).
    loose = tuple(step for element, effect in zip(target.slice, effects) if effect in ("maybe-int", "int")
                  and isinstance(element.slice, cst.Index)
                  for step in ctx.evidence(index_evidence(element.slice.value, fact.facts)))
    # Why the value is a host scalar, where that took a step (an `isinstance` check).
    scalar = tuple(step for step in ctx.evidence(inferred.evidence) if step not in loose)
    return loose + scalar + (EvidenceStep(f"every index is {index}: the destination is one element, the value "
                                  f"is {what}", None, row, None, EvidenceKind.DIRECT),)


def _one_line(code: str) -> str:
    return " ".join(code.split())


def _int_tensor_note(target: cst.Subscript, effects: List[str], fact: StatementFact) -> str:
    """What a 0-dim integer tensor index adds: PyTorch reads it back (`item()`) before it
    selects, which is a device-to-host sync of its own when the index is on the device."""
    kinds = {infer(element.slice.value, fact.facts).kind for element, effect in zip(target.slice, effects)
             if effect == "int-tensor" and isinstance(element.slice, cst.Index)}
    if Kind.DEVICE in kinds:
        return ("an index is a 0-dim integer tensor on the device: it is read back to the host"
                " first, a device-to-host sync of its own")
    if kinds == {Kind.CPU}:
        return "an index is a 0-dim integer CPU tensor, read back with `item()` first"
    return ("an index is a 0-dim integer tensor, read back to the host first: a sync of its own"
            " if it is on the device")


def _destination_is_one_element(effects: Sequence[str], rank: Optional[int]) -> bool:
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


# What the step of a rank spelled by the function's subscripts says (`_spelled`).
SPELLED_STEP = ("spells out {rank} dimensions: a bare `:` last selects nothing, so it names every one "
                "(convention: the tensor's rank)")


# What the step of a rebinding to a part says, after the rank spelled before it (`_spelled`).
REBOUND_STEP = "binds the name to a part of it: {rank} dimensions"


def _spelled(fact: StatementFact, target: cst.Subscript) -> Optional[Tuple[SpelledRank, Optional[str]]]:
    """The rank the function's other subscripts of a local destination spell out for the
    object this write reads (`usage.spelled_rank`), or those of the one local every binding of
    it copies (`usage.spelled_rank_of_copy`, with that local's name), read where nothing proves
    the destination's rank."""
    function = fact.scope.node
    if function is None or not isinstance(target.value, cst.Name):
        return None
    found = spelled_rank(function, target.value.value, fact.small)
    if found is not None:
        return found, None
    copied = spelled_rank_of_copy(function, target.value.value)
    if copied is None:
        return None
    rank, node, source = copied
    return SpelledRank(rank, node, rank), source


def _wider_by_usage(fact: StatementFact, target: cst.Subscript, effects: Sequence[str]) -> bool:
    """A local of unknown rank that the function also indexes with more positions than this
    write (`m[r, c] == 0` ... `m[r] = 0`): the write keeps a dimension (`inference/usage.py`).
    Where the function binds the name several times, the uses after the binding this write
    reads, up to the next one (`region_rank_floor`)."""
    function = fact.scope.node
    if function is None or not isinstance(target.value, cst.Name):
        return False
    integers = sum(1 for e in effects if e in ("int", "maybe-int", "int-tensor"))
    name = target.value.value
    floor = rank_floor(function, name) or region_rank_floor(function, name, fact.owner)
    return floor > integers


def _already_gated(fact: StatementFact, target_code: str, module: cst.Module,
                   custom_gate: Optional[Gate] = None) -> bool:
    """The seed's fixed form: one branch of a ROCm gate writes with zero_/fill_, this is the other."""
    for if_node, branch in reversed(fact.gates):
        test = module.code_for_node(if_node.test)
        # A configured gate is recognised too, or a second --fix would wrap its else branch.
        ours = custom_gate is not None and matches_gate(if_node.test, custom_gate)
        # Case aside: a module flag `_IS_ROCM` reads like `is_rocm` (fixers reuse such flags).
        if not ours and not any(marker in test.lower() for marker in _GATE_MARKERS):
            continue
        other = if_node.orelse if branch == "body" else if_node.body
        if other is None:
            continue
        other_code = module.code_for_node(other)
        views = (f"{target_code}[", f"{target_code}.select(", f"{target_code}.narrow(")
        if any(v in other_code for v in views) and any(m in other_code for m in (".zero_()", ".fill_(")):
            return True
    return False
