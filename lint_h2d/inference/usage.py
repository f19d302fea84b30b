"""What the way a function uses a local tensor proves about its rank (issue 17, precision).

PyTorch raises `IndexError: too many indices for tensor of dimension d` when a subscript has
more dimension-consuming positions than the tensor has dimensions.  So when a function reads
or writes `t[a, b]` (or `t[:, j]`), the object bound to `t` has at least two dimensions, and a
write `t[i] = 0` into the same object keeps a dimension: a fill kernel, not the host-to-device
copy of a one-element write (`covered = cost * mask; covered[row, col] == 0; covered[row] = 0`).

The floor holds only for one object: the name must be bound once in the function (a
parameter, or one assignment; `t *= x` keeps the object), never declared `global`/`nonlocal`,
and never changed in rank in place (`t.unsqueeze_()`, `t.resize_()`, `t.data = ...`).  Nested
functions and classes are scopes of their own and are not read.

A floor only ever removes a finding (a write that is not one element); it never adds one.

`spelled_rank` is of another kind: a convention, not a proof.  A subscript ending in a bare `:`
names every dimension the writer means the tensor to have, and that rank may add a finding
(one marked as resting on a convention: an unsafe fix at most).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from fixers.imports import target_name_nodes, target_names
from lint_h2d.cst_children import any_node, every_param, own_scope_nodes, recorded_children
from lint_h2d.inference.expressions import CPU_SIBLING, literal_int

# In-place methods that can change a tensor's number of dimensions.
_RANK_CHANGING = frozenset({
    "squeeze_", "unsqueeze_", "resize_", "resize_as_", "set_", "as_strided_", "flatten_",
    "view_", "reshape_", "unflatten_",
})


def rank_floor(function: cst.FunctionDef, name: str) -> int:
    """The least number of dimensions the object bound to the local `name` of `function` has,
    by the subscripts the function applies to it; 0 when nothing proves more."""
    usage = _Usage(name)
    usage.add_params(function.params)
    function.body.visit(usage)
    if usage.bindings > 1 or usage.escaped:
        return 0
    return usage.floor


def region_rank_floor(function: cst.FunctionDef, name: str, statement: cst.CSTNode) -> int:
    """`rank_floor` where `function` binds `name` more than once: the floor the subscripts of
    the region that one binding opens prove, for a `statement` in that region.  The region of a
    binding statement `B` (`name = ...` alone on its line) is the statements after `B` in its
    block, nested ones included; when `statement` is there and none of them binds `name` again,
    every use there reads `B`'s object (a loop around the block runs `B` again first; a region
    that binds it again proves nothing, and a later binding's own region may).  OFA's
    beam search binds `constraint_masks` in two branches, and each branch's
    `constraint_masks[i][:, nodes] = True` proves its own tensor two-dimensional.  0 when no
    such region holds `statement`, or something there changes the tensor's rank."""
    for block in _blocks(function):
        for k, stmt in enumerate(block):
            if not _binds_alone(stmt, name):
                continue
            rest = block[k + 1:]
            if not any(any_node(s, lambda node: node is statement) for s in rest):
                continue
            usage = _Usage(name)
            for s in rest:
                s.visit(usage)
            if not usage.bindings and not usage.escaped:
                return usage.floor
    return 0


def _binds_alone(stmt: cst.BaseStatement, name: str) -> bool:
    """`name = value` (or `name: T = value`), the line's only statement, with one target."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Assign):
        return len(small.targets) == 1 and _is(small.targets[0].target, name)
    return isinstance(small, cst.AnnAssign) and small.value is not None and _is(small.target, name)


def _consumes_one(element: cst.SubscriptElement) -> bool:
    """Whether a subscript position consumes exactly one dimension for sure enough.

    A slice and an integer do; so does an advanced index (a tensor or a list, one dimension
    each). `None`, `...`, `True`/`False` and boolean expressions (a Python bool adds a
    dimension) do not count, nor a starred or tuple position.  A bare name is taken to be an
    integer, a slice or an index tensor, never a Python bool (a bool among several index
    positions is not something code does); if it were, the floor would only hide a finding.
    """
    sl = element.slice
    if isinstance(sl, cst.Slice):
        return True
    if not isinstance(sl, cst.Index) or sl.star is not None:
        return False
    value = sl.value
    if literal_int(value) is not None:
        return True
    if isinstance(value, cst.Name):
        return value.value not in ("None", "True", "False")
    if isinstance(value, cst.BinaryOperation):
        return True  # arithmetic never yields a bool or None
    return isinstance(value, (cst.Attribute, cst.Subscript, cst.Call))


class OneScopeVisitor(cst.CSTVisitor):
    """A visitor of one function's own scope: lambdas and comprehensions are scopes of their
    own (Python 3), so their bodies are not visited; a subclass decides what a nested `def` or
    `class` statement binds."""

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False


class NameBindings(OneScopeVisitor):
    """Counts the bindings of one name in one function's own scope: its parameters
    (`add_params`), assignment, loop, `with`, `except`, import and `match` targets, `:=`, and a
    nested `def` or `class` of that name; `escaped` when it is declared `global` / `nonlocal` or
    deleted.  `x += v` is no binding (the object is kept); a subclass reads it if it cares."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.bindings = 0
        self.escaped = False  # global/nonlocal/del (and what a subclass adds)

    def add_params(self, params: cst.Parameters) -> None:
        self.bindings += sum(1 for p in every_param(params) if p.name.value == self.name)

    def _bound(self, target: cst.CSTNode) -> None:
        for node in target_names(target):
            if node == self.name:
                self.bindings += 1

    # Nested scopes bind and read their own names.
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node.name.value == self.name:
            self.bindings += 1
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        if node.name.value == self.name:
            self.bindings += 1
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bound(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bound(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bound(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bound(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bound(node.target)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bound(node.name.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound: cst.BaseExpression = node.asname.name if node.asname is not None else node.name
        while isinstance(bound, cst.Attribute):
            bound = bound.value
        self._bound(bound)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bound(node.name)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bound(node.name)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._bound(node.rest)

    def visit_Del(self, node: cst.Del) -> None:
        if self.name in target_names(node.target):
            self.escaped = True

    def visit_Global(self, node: cst.Global) -> None:
        self._declared(node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._declared(node.names)

    def _declared(self, names: Sequence[cst.NameItem]) -> None:
        if any(item.name.value == self.name for item in names):
            self.escaped = True



class _Usage(NameBindings):
    """The bindings of one name in one scope (`NameBindings`; a rank-changing in-place call
    escapes too) and the widest subscript applied to it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.floor = 0

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and _is(func.value, self.name) and func.attr.value in _RANK_CHANGING:
            self.escaped = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if isinstance(target, cst.Attribute) and _is(target.value, self.name) and target.attr.value == "data":
            self.escaped = True  # `t.data = other` swaps the storage, shape included

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if _is(node.value, self.name):
            self.floor = max(self.floor, sum(1 for e in node.slice if _consumes_one(e)))
        elif isinstance(node.value, cst.Subscript):
            self.floor = max(self.floor, _chained_floor(node, self.name))


@dataclass(frozen=True)
class SpelledRank:
    """A rank read from a function's subscripts by convention (`spelled_rank`), and where it
    comes from: `spelled` spells `spelled_as` dimensions for the object it reads, and each
    statement of `through` (`x = x[:, -1, :]`, in the order they run, with the rank it leaves)
    rebound the name to a part of a known number of dimensions fewer or more since, the last
    leaving `rank`."""

    rank: int
    spelled: cst.Subscript
    spelled_as: int
    through: Tuple[Tuple[cst.SimpleStatementLine, int], ...] = ()


def spelled_rank(function: cst.FunctionDef, name: str,
                 statement: Optional[cst.CSTNode] = None) -> Optional[SpelledRank]:
    """The rank the function's own subscripts of the local `name` spell out, by convention,
    for the object `statement` reads: a subscript of two positions or more, each consuming one
    dimension (no `None`, `...` or bool), that ends in a bare `:` (`adj[:, :, keep:, :]`).

    A trailing `:` selects nothing (`t[a, :]` is `t[a]`), so code writes one to name every
    dimension it has: `cur_adj[:, :, k:, :] = 0.` beside `cur_adj[0, e, i, j] = 1.0` says the
    tensor is 4-D, so the second write is one element (dive-into-graphs' molecule graphs, held
    in tensors built elsewhere).  Python raises for nothing of the kind, so this is a convention
    (`[convention]`), never a proof: the finding it allows gets an unsafe fix at most.  None
    where no subscript spells a rank, two spell different ones, another subscript of the name
    uses more positions (`rank_floor`'s proof wins), or something changes the tensor's rank in
    place or rebinds the name out of this scope (`global`, `nonlocal`, `del`).

    The name may be bound several times: a binding is read as of the rank spelled (one object
    renamed in the function's steps, `x = x.cuda()`), except one that may change the rank, a
    part of the name (`logits = logits[:, -1, :]`) or a reshaping call of it (`x = x.view(...)`,
    `.sum(...)`; `_RESHAPING`).  Where the function has such rebindings, each opens an epoch
    (`_Epochs`), the subscripts spell a rank per epoch, and a part whose positions are all
    slices, integer literals and `None` carries its epoch's rank to the next one (3 dimensions
    less the one `-1` drops); `statement` (where the rank is read) must then be given, and lie
    where one epoch's object reaches it for sure."""
    usage = _Spelling(name)
    usage.add_params(function.params)
    function.body.visit(usage)
    if usage.escaped or not usage.spelled:
        return None
    if not usage.rebound and not usage.rebound_elsewhere:
        ranks = {len(node.slice) for node in usage.spelled}
        if len(ranks) != 1:
            return None
        rank = ranks.pop()
        if usage.floor > rank:
            return None
        return SpelledRank(rank, usage.spelled[0], rank)
    if statement is None or usage.rebound_elsewhere:
        return None
    return _Epochs(function, usage).rank_at(statement)


# Methods whose result may have another number of dimensions than their receiver: a binding
# `x = x.view(...)` opens an epoch of its own (`spelled_rank`).
_RESHAPING = frozenset({
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "view_as", "reshape_as",
    "expand", "expand_as", "repeat", "select", "narrow_copy", "diagonal", "diag", "sum", "mean",
    "prod", "amax", "amin", "max", "min", "argmax", "argmin", "norm", "std", "var", "any", "all",
    "logsumexp", "unbind", "chunk", "split", "tolist", "item", "nonzero", "argwhere", "ravel",
})


def _reshapes(value: cst.BaseExpression, name: str) -> bool:
    """Whether `value`, assigned to `name`, may have another rank than `name`'s object: a
    subscript of the name with a position that is not a slice, or a reshaping method call on
    it (`_RESHAPING`)."""
    if isinstance(value, cst.Subscript) and _is(value.value, name):
        return not all(isinstance(e.slice, cst.Slice) for e in value.slice)
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and _is(value.func.value, name) and value.func.attr.value in _RESHAPING


def _rank_change(value: cst.BaseExpression) -> Optional[int]:
    """What a rebinding `x = x[...]` adds to the rank: -1 per integer literal, +1 per `None`,
    nothing for a slice or `...`; None for any other position (a name may be an integer or an
    index tensor) or a call."""
    if not isinstance(value, cst.Subscript):
        return None
    change = 0
    for element in value.slice:
        sl = element.slice
        if isinstance(sl, cst.Slice):
            continue
        if not isinstance(sl, cst.Index) or sl.star is not None:
            return None
        if literal_int(sl.value) is not None:
            change -= 1
        elif isinstance(sl.value, cst.Name) and sl.value.value == "None":
            change += 1
        elif not isinstance(sl.value, cst.Ellipsis):
            return None
    return change


class _Epochs:
    """The epochs of one local that a function rebinds to a part or a reshaping of itself
    (`spelled_rank`): epoch 0 is the object before any such rebinding, epoch k the one the
    k-th (in source order) binds.  A node is in epoch k when the k-th is the last such
    rebinding before it in source order and the node lies after it in its block (nested
    statements included: the rebinding runs first on every way there), and no such rebinding
    after it shares a loop with it (a later iteration would read that one's object); in epoch 0
    when none comes before it, under the same loop condition.  Anything else: no epoch (None).
    The value of a rebinding reads the epoch before it."""

    def __init__(self, function: cst.FunctionDef, usage: _Spelling) -> None:
        self.usage = usage
        self.lines = usage.rebound
        self.spans = _spans(function.body)
        self.loops = [self.spans[id(node)] for node in own_scope_nodes(function.body)
                      if isinstance(node, (cst.For, cst.While))]
        self.blocks = _blocks(function)
        self._ranks: Dict[int, Optional[SpelledRank]] = {}

    def rank_at(self, statement: cst.CSTNode) -> Optional[SpelledRank]:
        if id(statement) not in self.spans or any(self.epoch(s) is None for s in self.usage.spelled):
            return None
        epoch = self.epoch(statement)
        return None if epoch is None else self.rank(epoch)

    def epoch(self, node: cst.CSTNode) -> Optional[int]:
        start, end = self.spans[id(node)]
        last: Optional[int] = None
        for k, line in enumerate(self.lines):
            line_start, line_end = self.spans[id(line)]
            if line_end <= start:
                last = k
            elif any(loop_start <= min(start, line_start) and max(end, line_end) <= loop_end
                     for loop_start, loop_end in self.loops):
                return None
        if last is None:
            return 0
        return last + 1 if self._after_in_block(self.lines[last], start) else None

    def _after_in_block(self, line: cst.SimpleStatementLine, start: int) -> bool:
        for block in self.blocks:
            for k, stmt in enumerate(block):
                if stmt is line:
                    return any(self.spans[id(s)][0] <= start < self.spans[id(s)][1] for s in block[k + 1:])
        return False

    def rank(self, epoch: int) -> Optional[SpelledRank]:
        if epoch not in self._ranks:
            self._ranks[epoch] = None  # no cycle: a rebinding's value reads an earlier epoch
            self._ranks[epoch] = self._read(epoch)
        return self._ranks[epoch]

    def _read(self, epoch: int) -> Optional[SpelledRank]:
        own = [node for node in self.usage.spelled if self.epoch(node) == epoch]
        ranks = {len(node.slice) for node in own}
        if len(ranks) > 1:
            return None
        found = SpelledRank(len(own[0].slice), own[0], len(own[0].slice)) if own else None
        if epoch > 0:
            line = self.lines[epoch - 1]
            value = _rebinding_value(line)
            change = _rank_change(value)
            before = self.epoch(value)
            carried = self.rank(before) if before is not None else None
            if change is not None and carried is not None:
                derived = SpelledRank(carried.rank + change, carried.spelled, carried.spelled_as,
                                      carried.through + ((line, carried.rank + change),))
                if found is not None and found.rank != derived.rank:
                    return None
                found = found or derived
        if found is None or found.rank < 0:
            return None
        for node, floor in self.usage.floors:
            if floor > found.rank and self.epoch(node) in (epoch, None):
                return None
        return found


def _rebinding_value(line: cst.SimpleStatementLine) -> cst.BaseExpression:
    small = line.body[0]
    assert isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None
    return small.value


def _spans(root: cst.CSTNode) -> Dict[int, Tuple[int, int]]:
    """`id(node)` → (first, last + 1) of its own-scope nodes in source order (`own_scope_nodes`'
    order): `a` lies inside `b` when `b`'s span holds `a`'s first; `a` comes before `b` when
    `a`'s ends before `b`'s first."""
    spans: Dict[int, Tuple[int, int]] = {}
    count = 0
    stack: List[Tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            spans[id(node)] = (spans[id(node)][0], count)
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        spans[id(node)] = (count, count)
        count += 1
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(recorded_children(node)))
    return spans


# Methods whose result has the receiver's shape: a copy, a move, a dtype cast.
_SHAPE_KEEPING = frozenset({
    "clone", "detach", "contiguous", "cuda", "cpu", "to", "float", "half", "double", "bfloat16", "long",
    "int", "bool",
})


def spelled_rank_of_copy(function: cst.FunctionDef, name: str) -> Optional[Tuple[int, cst.Subscript, str]]:
    """`spelled_rank` of the one other local that every binding of `name` copies: each is
    `name = other.clone()` (or `.detach()`, `.cuda()`, `.to(...)`, a dtype cast: the shape is
    kept), `other` the same name each time, and `name`'s own subscripts spell no rank and
    prove no larger one (dive-into-graphs' `cur_adj_tmp = cur_adj.clone()`, edited for a
    trial step, of the rank `cur_adj[:, :, k:, :]` spells).  Also a convention; with the
    name of `other`.  None where a binding is of another form (a parameter, a loop target, an
    unpacking) or copies another name, or where the function rebinds `other` to a part or a
    reshaping of itself (the copies' epochs are not read)."""
    copies = _Copies(name)
    copies.add_params(function.params)
    function.body.visit(copies)
    if copies.escaped or copies.bindings != copies.copies or len(copies.sources) != 1 or copies.spelled:
        return None
    source = next(iter(copies.sources))
    if source == name:
        return None
    found = spelled_rank(function, source)
    if found is None or copies.floor > found.rank:
        return None
    return found.rank, found.spelled, source


class _Spelling(_Usage):
    """`_Usage`, and the subscripts of the name that spell its rank (`spelled_rank`), each
    subscript's floor, and the rebindings that may change the rank: those alone on their line
    (`rebound`, in source order), and whether there is one in another form (`x = y = x[0]`,
    `(x := x[0])`: `rebound_elsewhere`)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.spelled: List[cst.Subscript] = []
        self.floors: List[Tuple[cst.Subscript, int]] = []
        self.rebound: List[cst.SimpleStatementLine] = []
        self.rebound_elsewhere = False

    def visit_Subscript(self, node: cst.Subscript) -> None:
        before = self.floor
        self.floor = 0
        super().visit_Subscript(node)
        if self.floor:
            self.floors.append((node, self.floor))
        self.floor = max(before, self.floor)
        if _is(node.value, self.name) and len(node.slice) >= 2 and _bare_colon(node.slice[-1]) \
                and all(_consumes_one(e) for e in node.slice):
            self.spelled.append(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        for small in node.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None \
                    and self.name in _assigned(small) and _reshapes(small.value, self.name):
                if len(node.body) == 1 and _binds_alone(node, self.name):
                    self.rebound.append(node)
                else:
                    self.rebound_elsewhere = True

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        super().visit_NamedExpr(node)
        if _is(node.target, self.name) and _reshapes(node.value, self.name):
            self.rebound_elsewhere = True


def _assigned(small: cst.BaseSmallStatement) -> Set[str]:
    """The names an assignment statement binds."""
    if isinstance(small, cst.Assign):
        return {n for target in small.targets for n in target_names(target.target)}
    assert isinstance(small, cst.AnnAssign)
    return set(target_names(small.target))


class _Copies(_Spelling):
    """`_Spelling`, and what the name's plain assignments copy (`spelled_rank_of_copy`): the
    names whose shape-keeping calls they assign (`sources`), and how many of the bindings
    they are (`copies`; any other binding makes the two counts differ)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.sources: Set[str] = set()
        self.copies = 0

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        copied = _copied_name(node.value)
        if len(node.targets) == 1 and _is(node.targets[0].target, self.name) and copied is not None:
            self.sources.add(copied)
            self.copies += 1


def _copied_name(value: cst.BaseExpression) -> Optional[str]:
    """`other` of `other.clone()`, `other.detach().cuda()`, `other.to(device)`: a chain of
    shape-keeping method calls on a bare name."""
    node = value
    seen = False
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in _SHAPE_KEEPING:
        node = node.func.value
        seen = True
    return node.value if seen and isinstance(node, cst.Name) else None


def _bare_colon(element: cst.SubscriptElement) -> bool:
    """`:` alone: no bound, no step."""
    sl = element.slice
    return isinstance(sl, cst.Slice) and sl.lower is None and sl.upper is None and sl.step is None


def _chained_floor(node: cst.Subscript, name: str) -> int:
    """The least rank of `name` that a chain of subscripts of it proves (`m[i][:, j]`): the
    positions the outermost one consumes, plus one per literal integer of the inner ones (each
    removes a dimension before the next subscript reads), less one per `None` of theirs (each
    adds one).  An inner slice, or a name (an integer, a slice or an index tensor, as
    `_consumes_one` takes a bare name), may keep its dimension, so it adds nothing; an inner
    `...` or a position of any other form leaves the count unknown (0).  `m[i][:, j]` proves
    `m` has two dimensions at least, so `m[i] = 0` there keeps one (a fill, no copy)."""
    floor = sum(1 for e in node.slice if _consumes_one(e))
    inner = node.value
    while isinstance(inner, cst.Subscript):
        for element in inner.slice:
            sl = element.slice
            if isinstance(sl, cst.Slice):
                continue
            if not isinstance(sl, cst.Index) or sl.star is not None:
                return 0
            value = sl.value
            if literal_int(value) is not None:
                floor += 1
            elif isinstance(value, cst.Name) and value.value == "None":
                floor -= 1
            elif not isinstance(value, cst.Name) or value.value in ("True", "False"):
                return 0
        inner = inner.value
    return max(floor, 0) if _is(inner, name) else 0


def _is(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _blocks(function: cst.FunctionDef) -> List[Sequence[cst.BaseStatement]]:
    """The statement lists of one function's own scope (its body and every nested block)."""
    return [node.body for node in own_scope_nodes(function.body) if isinstance(node, cst.IndentedBlock)]


class RangeBounds:
    """The names of one function, each bound once there (a parameter or one assignment, never
    `global`/`nonlocal`/`del`), that its own statements pass to `range()` as an argument:
    `name in RangeBounds(function)`.

    `range` raises `TypeError` for anything but an int (or an object with `__index__`: a
    0-dim integer tensor), so the one object bound to such a name is a number wherever the
    call runs.  Flow-insensitive, as a parameter's `range(p)` is (`summary._Scope.ints`):
    read only for the shape of a factory sized by the name (`torch.zeros(n)` is 1-D).
    Answered lazily, per name (the walk asks only about a factory sized by a name alone):
    one cheap pass for the calls, a binding count only for a name passed to one."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self._arguments: Optional[FrozenSet[str]] = None
        self._answers: Dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if self._arguments is None:
            self._arguments = _range_arguments(self.function)
        if name not in self._arguments:
            return False
        found = self._answers.get(name)
        if found is None:
            found = self._answers[name] = _bindings(self.function, name) == (1, False)
        return found


def _range_arguments(function: cst.FunctionDef) -> FrozenSet[str]:
    """The names passed directly to `range(...)` in the function's own scope (nested
    definitions and lambdas are their own); none where `range` is named otherwise than
    called (a parameter, an assignment, an argument: it may not be the builtin)."""
    found: Set[str] = set()
    stack: List[cst.CSTNode] = [function.params, function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range":
            for arg in node.args:
                if arg.keyword is None and not arg.star and isinstance(arg.value, cst.Name):
                    found.add(arg.value.value)
            stack.extend(a.value for a in node.args)
            continue
        if isinstance(node, cst.Name) and node.value == "range":
            return frozenset()
        stack.extend(recorded_children(node))
    return frozenset(found)


class DeviceNamed:
    """The names of one function whose `.device` its own statements pass as a place:
    `torch.zeros(n, device=x.device)`, `y.to(x.device)`, `y.to(device=x.device)`.
    `DeviceNamed(function).get(name)` is the first such call, or None.  And the names `x` whose
    `x_cpu` the function binds (`sibling(name)`: the first binding, or None): `cu_seqlens`
    beside `cu_seqlens_cpu`, the device half of a CPU/device pair by the convention that reads
    a field beside its `_cpu` sibling field so.

    Code that allocates or moves onto `x.device` is written for `x` on the accelerator (the
    same reading that makes such an allocation a device tensor, `expressions._placed_by`), so
    a tensor bound to `x` that nothing else places is read as on the accelerator too, as a
    convention.  Flow-insensitive, as a function's `range(p)` is: the call may come before or
    after the read.  Made lazily: one pass over the function's own scope (nested definitions
    and lambdas are their own) the first time a name of unknown place is read."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self._found: Optional[Dict[str, cst.Call]] = None
        self._siblings: Optional[Dict[str, cst.Name]] = None

    def get(self, name: str) -> Optional[cst.Call]:
        if self._found is None:
            self._found = _device_named(self.function)
        return self._found.get(name)

    def sibling(self, name: str) -> Optional[cst.Name]:
        if self._siblings is None:
            self._siblings = _cpu_siblings(self.function)
        return self._siblings.get(name)


def _device_named(function: cst.FunctionDef) -> Dict[str, cst.Call]:
    """`DeviceNamed`'s table: each name whose `.device` a call in the function's own scope
    takes as `device=` (or as the first argument of `.to(...)`), with the first such call in
    source order."""
    found: Dict[str, cst.Call] = {}
    for node in own_scope_nodes(function.body):
        if isinstance(node, cst.Call):
            to = isinstance(node.func, cst.Attribute) and node.func.attr.value == "to"
            for i, arg in enumerate(node.args):
                placed = arg.keyword.value == "device" if arg.keyword is not None else (to and i == 0 and not arg.star)
                value = arg.value
                if placed and isinstance(value, cst.Attribute) and value.attr.value == "device" \
                        and isinstance(value.value, cst.Name):
                    found.setdefault(value.value.value, node)
    return found


def _cpu_siblings(function: cst.FunctionDef) -> Dict[str, cst.Name]:
    """`DeviceNamed.sibling`'s table: each name `x` whose `x_cpu` the function binds in its own
    scope (a parameter, an assignment's, a loop's or a `with`'s target, a walrus), with the
    first such binding (parameters first, then source order)."""
    found: Dict[str, cst.Name] = {}

    def add(name: cst.Name) -> None:
        if name.value.endswith(CPU_SIBLING) and len(name.value) > len(CPU_SIBLING):
            found.setdefault(name.value[:-len(CPU_SIBLING)], name)

    for param in every_param(function.params):
        add(param.name)
    for node in own_scope_nodes(function.body):
        target: Optional[cst.BaseExpression] = None
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.For, cst.NamedExpr)):
            target = node.target
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            target = node.asname.name
        if target is not None:
            for name in target_name_nodes(target):
                add(name)
    return found


# `df.loc["a":"b"]`: pandas' label slices take any label, not only ints.
_LABEL_INDEXERS = frozenset({"loc", "at"})
_INT_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)


def expression_shape(node: cst.BaseExpression) -> Optional[Tuple[object, ...]]:
    """A hashable form of an integer-looking expression (names, int literals, `+ - * // %`,
    unary minus), equal for two spellings of one expression (spaces, parentheses aside); None
    for anything else."""
    if isinstance(node, cst.Name):
        return ("name", node.value)
    if isinstance(node, cst.Integer):
        return ("int", node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = expression_shape(node.expression)
        return ("neg", inner) if inner is not None else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _INT_OPERATORS):
        left, right = expression_shape(node.left), expression_shape(node.right)
        if left is None or right is None:
            return None
        return ("op", type(node.operator).__name__, left, right)
    return None


def shape_names(shape: Tuple[object, ...]) -> Set[str]:
    """The names an `expression_shape` reads."""
    if shape[0] == "name":
        return {str(shape[1])}
    found: Set[str] = set()
    for part in shape[1:]:
        if isinstance(part, tuple):
            found |= shape_names(part)
    return found


class SliceBounds:
    """The expressions one function uses as the start or stop of a slice (`t[a:a + n]`,
    `xs[:end]`): `SliceBounds(function).find(node)` is the subscript that uses `node`'s
    expression so, or None.

    A slice of a tensor, a list, a string or an array takes only ints there (or `None`, or
    an object with `__index__`: a 0-dim integer tensor); anything else raises.  So where the
    function also indexes with the same expression alone (`t[a + n] = 0`), that index is an
    integer, as a convention: the names must each be bound at most once in the function (a
    parameter, one assignment) so that both uses read one object, and pandas' label indexers
    (`.loc`, `.at`) do not count.  Flow-insensitive; made lazily, once per function."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self._bounds: Optional[Dict[Tuple[object, ...], cst.Subscript]] = None
        self._once: Dict[str, bool] = {}

    def find(self, node: cst.BaseExpression) -> Optional[cst.Subscript]:
        shape = expression_shape(node)
        if shape is None or shape[0] == "int":
            return None
        if self._bounds is None:
            self._bounds = _slice_bounds(self.function)
        found = self._bounds.get(shape)
        if found is None:
            return None
        for name in shape_names(shape):
            once = self._once.get(name)
            if once is None:
                bindings, escaped = _bindings(self.function, name)
                once = self._once[name] = bindings <= 1 and not escaped
            if not once:
                return None
        return found


def _slice_bounds(function: cst.FunctionDef) -> Dict[Tuple[object, ...], cst.Subscript]:
    """`SliceBounds`' table: each start or stop of a slice in the function's own scope (nested
    definitions and lambdas are their own), with the first subscript using it in source order."""
    found: Dict[Tuple[object, ...], cst.Subscript] = {}
    for node in own_scope_nodes(function.body):
        if isinstance(node, cst.Subscript) and not (
                isinstance(node.value, cst.Attribute) and node.value.attr.value in _LABEL_INDEXERS):
            for element in node.slice:
                if isinstance(element.slice, cst.Slice):
                    for bound in (element.slice.lower, element.slice.upper):
                        shape = expression_shape(bound) if bound is not None else None
                        if shape is not None:
                            found.setdefault(shape, node)
    return found


def _bindings(function: cst.FunctionDef, name: str) -> Tuple[int, bool]:
    """How many times `function` binds `name`, and whether it escapes (`_Usage`)."""
    usage = _Usage(name)
    usage.add_params(function.params)
    function.body.visit(usage)
    return usage.bindings, usage.escaped

