"""A scalar write that stores the value the element already holds, and can go away.

Why: vLLM's flashmla.py allocates ``torch.zeros((1, 8), ...)`` and then writes ``0`` into
three of its elements, one blocking host-to-device copy each.  The write changes nothing, so
deleting it is better than any rewrite (both platforms gain).

Proof that the element holds the value (anything else is no proof):

* the tensor is a function's local name ``t``, never declared ``global``/``nonlocal`` and not
  read by a nested function or lambda, allocated in the *same block* as the write by
  ``torch.zeros|ones|full(...)``, ``torch.zeros_like|ones_like|full_like(...)`` or
  ``x.new_zeros|new_ones|new_full(...)`` (``torch`` not shadowed; no ``out=``, ``names=``,
  ``layout=`` other than ``torch.strided``, ``requires_grad=`` other than ``False``);
* every statement between the allocation and the write is a plain statement line (no
  compound statement, hence no loop back-edge) with no call, lambda, walrus, ``yield``,
  ``await``, ``import``, ``del``, ``global`` or ``nonlocal``; ``t`` appears there only as
  ``t[k0, k1, ...] = v`` with integer literals naming another element of a tensor of known
  shape (so nothing can hold a reference to ``t``, and no code can run that reaches it); the
  statements before the write on its own line (``t[0] = 1; t[0] = 0``) are between too, and
  none of them may bind ``t``;
* the written value is a number literal (or ``True``/``False``) equal to what the allocator
  stores: ``0``/``0.0``/``False`` after ``zeros``, ``1``/``1.0``/``True`` after ``ones``, the
  same literal (same type, same sign) after ``full``; an integer within int64.

The deletion is **safe** when the original could not have raised either: every index is an
integer literal within the allocation's literal (or proven) shape and the dtype is absent or a
known ordinary dtype (``zeros`` succeeds for ``torch.bits8``/``float4_e2m1fn_x2``/``uint1``, whose
element write raises).  Otherwise it is unsafe: the deletion would drop that error.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from lint_h2d.inference.scope import StatementFact
from lint_h2d.rules._scopes import ScopeMap, bound_names
from lint_h2d.rules._sizes import _size_bound

ORDINARY_DTYPES = frozenset({
    "float16", "half", "float32", "float", "float64", "double", "bfloat16",
    "int8", "int16", "short", "int32", "int", "int64", "long",
    "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "cfloat", "complex128", "cdouble",
})
_FILLED = {"zeros": 0, "ones": 1, "zeros_like": 0, "ones_like": 1, "new_zeros": 0, "new_ones": 1}
_FULL = {"full": 1, "full_like": 1, "new_full": 1}  # position of the fill value
_LIKE = frozenset({"zeros_like", "ones_like", "full_like"})
_KEYWORDS = frozenset({"dtype", "device", "pin_memory", "requires_grad", "layout", "memory_format", "size",
                       "fill_value"})
INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Redundant:
    """Why the write changes nothing, and whether deleting it is certainly safe."""

    allocation: str  # the allocating call as written, one line (`torch.zeros((1, 8), ...)`)
    holds: str  # the value the element holds (`0`)
    allocation_row: int
    safe: bool
    unsafe_reason: str = ""
    # The smallest proven dimension (verify sizes its tensors from it), 0 when unknown.
    min_length: int = 0


def _literal(node: cst.BaseExpression) -> Optional[object]:
    """The value of a number literal, ``-literal`` or ``True``/``False``; None otherwise."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    inner = node
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = node.expression
    if not isinstance(inner, (cst.Integer, cst.Float)) or inner.lpar or inner.rpar:
        return None
    try:
        value = ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, (int, float)) else None


def _key(value: object) -> Tuple[str, str]:
    return type(value).__name__, repr(value)


def _holds_value(allocated: object, written: object) -> bool:
    """Whether writing ``written`` stores the bits ``allocated`` left there, for every dtype."""
    if isinstance(written, int) and not isinstance(written, bool) and not INT64[0] <= written <= INT64[1]:
        return False
    if isinstance(written, float) and str(written) in ("-0.0", "nan", "inf", "-inf"):
        return _key(allocated) == _key(written)
    if allocated in (0, 1) and not isinstance(allocated, float) and type(allocated) is int:
        # zeros/ones: 0, 0.0, False (1, 1.0, True) cast to the same bits in every dtype.
        return written == allocated and str(written) != "-0.0"
    return _key(allocated) == _key(written)


def _int_index(element: cst.SubscriptElement) -> Optional[int]:
    if not isinstance(element.slice, cst.Index) or element.slice.star is not None:
        return None
    value = _literal(element.slice.value)
    return value if type(value) is int else None


def literal_indices(target: cst.Subscript) -> Optional[Tuple[int, ...]]:
    out: List[int] = []
    for element in target.slice:
        k = _int_index(element)
        if k is None:
            return None
        out.append(k)
    return tuple(out)


def _normalized(index: Sequence[int], shape: Sequence[int]) -> Optional[Tuple[int, ...]]:
    if len(index) != len(shape):
        return None
    out = []
    for k, n in zip(index, shape):
        if not -n <= k < n:
            return None
        out.append(k % n)
    return tuple(out)


@dataclass(frozen=True)
class _Allocation:
    kind: str
    holds: object
    shape: Optional[Tuple[int, ...]]  # literal shape when known
    min_length: Optional[int]  # 1-D proven length
    dtype_known: bool
    code: str


def _args(call: cst.Call) -> Optional[Tuple[List[cst.BaseExpression], Dict[str, cst.BaseExpression]]]:
    positional: List[cst.BaseExpression] = []
    keywords: Dict[str, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional.append(arg.value)
        else:
            keywords[arg.keyword.value] = arg.value
    return positional, keywords


def _shape(sizes: Sequence[cst.BaseExpression]) -> Optional[Tuple[int, ...]]:
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        sizes = [e.value for e in sizes[0].elements]
        if any(isinstance(e, cst.StarredElement) for e in sizes):
            return None
    out = []
    for size in sizes:
        value = _literal(size)
        if type(value) is not int or value < 0:
            return None
        out.append(value)
    return tuple(out)


def _dtype_known(node: Optional[cst.BaseExpression], block: Sequence[cst.BaseStatement], before: int,
                 scopes: ScopeMap) -> bool:
    if node is None:
        return True
    if isinstance(node, cst.Attribute) and _is_name(node.value, "torch"):
        return node.attr.value in ORDINARY_DTYPES
    if isinstance(node, cst.Name) and not scopes.rebinds_anywhere(node.value):
        k = scopes.latest_binding(block, node.value, before)
        if k is not None:
            statement = block[k]
            if (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                    and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
                    and _is_name(statement.body[0].targets[0].target, node.value)):
                return _dtype_known(statement.body[0].value, (), 0, scopes)
            return False
    return False


def _allocation(statement: cst.BaseStatement, name: str, fact: StatementFact, block: Sequence[cst.BaseStatement],
                at: int, scopes: ScopeMap, torch_ok: bool) -> Optional[_Allocation]:
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and _is_name(assign.targets[0].target, name) and isinstance(assign.value, cst.Call)):
        return None
    call = assign.value
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    kind = func.attr.value
    is_torch = isinstance(func.value, cst.Name) and func.value.value == "torch"
    if kind.startswith("new_"):
        if name in bound_names([func.value]) or _holds(func.value, lambda n: isinstance(n, cst.Call) or _is_name(n, name)):
            return None
    elif not (is_torch and torch_ok):
        return None
    if kind not in _FILLED and kind not in _FULL:
        return None
    parsed = _args(call)
    if parsed is None:
        return None
    positional, keywords = parsed
    if set(keywords) - _KEYWORDS:
        return None
    grad = keywords.get("requires_grad")
    if grad is not None and not _is_name(grad, "False"):
        return None
    layout = keywords.get("layout")
    if layout is not None and not (isinstance(layout, cst.Attribute) and _is_name(layout.value, "torch")
                                   and layout.attr.value == "strided"):
        return None
    if kind in _LIKE:
        positional = positional[1:]  # the source tensor: shape unknown
    sizes: List[cst.BaseExpression] = []
    if kind in _FULL:
        fill = keywords.get("fill_value")
        if fill is None:
            if not positional:
                return None
            fill = positional[-1]
            positional = positional[:-1]
        holds = _literal(fill)
        if holds is None:
            return None
        sizes = positional if kind not in _LIKE else []
        if "size" in keywords:
            sizes = [keywords["size"]]
    else:
        holds = _FILLED[kind]
        sizes = [keywords["size"]] if "size" in keywords else (positional if kind not in _LIKE else [])
    if kind in _LIKE:
        shape, min_length = None, None
    else:
        shape = _shape(sizes)
        min_length = None
        if shape is None and len(sizes) == 1 and not isinstance(sizes[0], (cst.Tuple, cst.List)):
            min_length = _size_bound(sizes[0], fact, scopes)
    dtype = keywords.get("dtype")
    known = _dtype_known(dtype, block, at, scopes) and (kind.startswith("new_") is False or dtype is not None) \
        and (kind not in _LIKE or dtype is not None)
    return _Allocation(kind, holds, shape, min_length, known, " ".join(cst.Module([]).code_for_node(call).split()))


_FORBIDDEN = (cst.Call, cst.Lambda, cst.NamedExpr, cst.Yield, cst.Await)


def _is_name(node: cst.CSTNode, value: str) -> bool:
    """``node`` is the name ``value`` (a bare name, not an attribute's)."""
    return isinstance(node, cst.Name) and node.value == value


def _holds(node: cst.CSTNode, wanted: Callable[[cst.CSTNode], bool]) -> bool:
    """Whether ``node`` or any node below it is ``wanted``: every child, the names after a
    dot (``obj.t``) included.  Plain isinstance tests, not ``libcst.matchers``, whose import
    alone costs a one-file run more than its analysis."""
    stack = [node]
    while stack:
        current = stack.pop()
        if wanted(current):
            return True
        stack.extend(current.children)
    return False


def _mentions(node: cst.CSTNode, name: str) -> bool:
    """``name`` appears in ``node`` as a name (an attribute's name after a dot included)."""
    return _holds(node, lambda n: _is_name(n, name))


def _inert_small(small: cst.BaseSmallStatement, name: str) -> Optional[List[Tuple[int, ...]]]:
    """The elements of ``name`` one small statement writes when it cannot otherwise touch it, or None."""
    if isinstance(small, (cst.Import, cst.ImportFrom, cst.Del, cst.Global, cst.Nonlocal)):
        return None
    if _holds(small, lambda n: isinstance(n, _FORBIDDEN)):
        return None
    if not _mentions(small, name):
        return []
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Subscript)
            and _is_name(small.targets[0].target.value, name)
            and not _mentions(small.value, name)):
        return None
    target = small.targets[0].target
    assert isinstance(target, cst.Subscript)
    index = literal_indices(target)
    if index is None or any(_mentions(e, name) for e in target.slice):
        return None
    return [index]


def _inert(statement: cst.BaseStatement, name: str) -> Optional[List[Tuple[int, ...]]]:
    """The elements of ``name`` written by a statement that cannot otherwise touch it, or None."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    written: List[Tuple[int, ...]] = []
    for small in statement.body:
        found = _inert_small(small, name)
        if found is None:
            return None
        written.extend(found)
    return written


@dataclass(frozen=True)
class _Run:
    """The statements of a block after one binding of a name that cannot touch the tensor except by
    element writes of literal indices: the first such statement after the binding is
    ``binding + 1``, and every statement up to ``end`` (exclusive) is one of them."""

    binding: int  # where the name is bound (the candidate allocation) in the block
    end: int  # the first statement after `binding` that binds the name again or could touch it
    writes: Tuple[Tuple[int, Tuple[int, ...]], ...]  # (statement's place in the block, element written)
    # Memo of first_clash: the first place each normalized element (None: no element) is written.
    _by_shape: Dict[Tuple[int, ...], Dict[Optional[Tuple[int, ...]], int]] = field(
        default_factory=dict, compare=False, repr=False)

    def first_write(self) -> int:
        """Where the run's first element write stands (past the block's end when none)."""
        return self.writes[0][0] if self.writes else self.end + 1

    def first_clash(self, shape: Tuple[int, ...], mine: Tuple[int, ...]) -> int:
        """Where the run first writes ``mine`` (normalized against ``shape``), or an index that is
        no element of ``shape`` (it raises, so nothing after it runs); past the end when never.
        The run's writes are normalized once per shape, not once per asking write."""
        first = self._by_shape.get(shape)
        if first is None:
            first = {}
            for at, index in self.writes:
                first.setdefault(_normalized(index, shape), at)
            self._by_shape[shape] = first
        return min(first.get(None, self.end + 1), first.get(mine, self.end + 1))


def _runs(block: Sequence[cst.BaseStatement], name: str, scopes: ScopeMap) -> Dict[int, _Run]:
    """Each statement of ``block`` that a run of ``name`` reaches (see :class:`_Run`), mapped to
    that run.  One forward pass per block and name: a file of thousands of writes to one tensor
    asked for the walk back to the allocation once per write, which cost time quadratic in the
    block's length."""
    out: Dict[int, _Run] = {}
    binding: Optional[int] = None
    writes: List[Tuple[int, Tuple[int, ...]]] = []

    def close(end: int) -> None:
        if binding is not None:
            run = _Run(binding, end, tuple(writes))
            for k in range(binding + 1, min(end + 1, len(block))):
                out[k] = run

    for k, statement in enumerate(block):
        if name in scopes.bound_names(statement):
            close(k)
            binding, writes = k, []
            continue
        if binding is None:
            continue
        found = scopes.cached(f"inert:{name}", statement, lambda: _inert(statement, name))
        if found is None:
            close(k)
            binding, writes = None, []
            continue
        writes.extend((k, index) for index in found)
    close(len(block))
    return out


def redundant_write(fact: StatementFact, target: cst.Subscript, value: cst.BaseExpression,
                    scopes: ScopeMap) -> Optional[Redundant]:
    """Why ``target = value`` stores what the element already holds, or None (see the module doc).

    The walks this needs (a function's closures, a statement's bindings, the text's ``global``
    declarations) are memoized in ``scopes`` for the whole file: a finding pays only for the
    statements between its write and the allocation."""
    if not isinstance(target.value, cst.Name) or fact.scope.node is None:
        return None
    name = target.value.value
    written = _literal(value)
    index = literal_indices(target)
    if written is None or index is None:
        return None
    chain = scopes.chain(fact.owner)
    if not chain or not isinstance(chain[-1], cst.FunctionDef) or scopes.rebinds_anywhere(name):
        return None
    function = chain[-1]
    if name in scopes.closure_names(function) or not isinstance(fact.owner, cst.SimpleStatementLine):
        return None
    block = fact.block
    at = scopes.block_index(block, fact.owner)
    if at is None:
        return None
    # Small statements before the write on its own line run between the allocation and it too.
    before_on_line: List[Tuple[int, ...]] = []
    for small in fact.owner.body:
        if small is fact.small:
            break
        found = None if name in bound_names([small]) else _inert_small(small, name)
        if found is None:
            return None
        before_on_line.extend(found)
    run = scopes.cached(f"runs:{name}", block, lambda: _runs(block, name, scopes)).get(at)
    if run is None:
        return None
    statement = block[run.binding]
    torch_ok = scopes.shadowing_scope(fact.owner, "torch") is None
    alloc = _allocation(statement, name, fact, block, run.binding, scopes, torch_ok)
    if alloc is None or not _holds_value(alloc.holds, written):
        return None
    return _decide(alloc, index, run, at, before_on_line)


def _decide(alloc: _Allocation, index: Tuple[int, ...], run: _Run, at: int,
            before_on_line: Sequence[Tuple[int, ...]]) -> Optional[Redundant]:
    """Whether the write at ``at`` (after the run's allocation) still finds the allocator's value:
    no earlier write in between touched its element (nor could raise instead)."""
    holds = repr(alloc.holds)
    if alloc.shape is not None:
        mine = _normalized(index, alloc.shape)
        if mine is None:  # out of range or not one element: the write raises or is no element
            return None
        if run.first_clash(alloc.shape, mine) < at:
            return None
        for other in before_on_line:
            theirs = _normalized(other, alloc.shape)
            if theirs is None or theirs == mine:
                return None
        proven, min_length = True, min(alloc.shape)
    else:
        if run.first_write() < at or before_on_line:
            return None
        proven = alloc.min_length is not None and len(index) == 1 and -alloc.min_length <= index[0] < alloc.min_length
        min_length = alloc.min_length or 0
    reasons = []
    if not proven:
        reasons.append("the tensor's shape is not proven, so the write may raise `IndexError` where the "
                       "deletion does not")
    if not alloc.dtype_known:
        reasons.append("the dtype is not a known ordinary one (an element write raises for `torch.bits8`, "
                       "`float4_e2m1fn_x2`, `uint1`...)")
    return Redundant(alloc.code, holds, 0, not reasons, "; ".join(reasons), min_length)
