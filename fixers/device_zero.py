"""The device-side form of a scalar element write ``T[I] = V``.

Why: when every dimension of ``T`` is indexed by an integer, ``T[I] = V`` builds a 0-dim CPU
tensor and copies it host->device, which synchronises the stream.  ``T[k].zero_()`` /
``T.select(0, i).fill_(V)`` launch a kernel with the value as an argument instead, and write
the same bits (``zero_``/``fill_`` cast the scalar exactly as the assignment does).

Spelling rules, each chosen so that the rewrite fails the same way the assignment does:

* a literal index keeps its subscript: ``T[k].zero_()``, ``T[0, 1].fill_(V)``.  An integer
  subscript is a select view (the fill is in place) and raises the same ``IndexError`` as the
  assignment when ``k`` is out of range;
* a literal index ``k`` on a tensor the caller *proves* longer than ``k`` (``min_length``)
  becomes a one-element slice, the spelling vLLM ships: ``0 -> [:1]``, ``k -> [k:k+1]``,
  ``-1 -> [-1:]``, ``-k -> [-k:-k+1]``.  Without the proof a slice would be wrong: on a
  tensor of length <= k it is empty, so the write silently does nothing where the
  assignment raises;
* names the caller *proves* to be Python ``int``s (``int_names``: ``for i in range(n)``,
  ``idx = 0`` / ``idx += 1``) keep the subscript too, for the same reason:
  ``self.state_conv_widths[idx].fill_(state.size(2))``;
* any other index becomes a chain of ``select`` calls (``T.select(0, i)``,
  ``T[i, j] -> T.select(0, i).select(0, j)``, ``T[..., i] -> T.select(-1, i)``).  ``select``
  takes an integer (or a 0-dim integer tensor) and raises ``TypeError`` for a list, a tensor
  of indices, a slice or a bool, where ``T[i].fill_(V)`` would fill a copy and silently lose
  the write; leading integers keep their subscript (``T[b, h, p] -> T[b, h].select(0, p)``);
* the value ``0``/``0.0``/``False`` becomes ``zero_()``; everything else, ``-0.0`` included
  (negative zero has a different bit pattern), becomes ``fill_(V)`` with ``V`` unchanged.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import AbstractSet, List, Optional, Sequence, Union

import libcst as cst

from fixers.edits import Unfixable

__all__ = ["DeviceZero", "Unfixable", "DeviceZeroResult", "device_zero_form", "slice_is_exact"]


@dataclass(frozen=True)
class DeviceZero:
    """The replacement expression and how certain it is.

    ``call`` is the expression ``T[...].zero_()`` / ``T[...].fill_(V)`` (wrap it in
    ``cst.Expr`` to make a statement).  ``index_is_literal``: every index element is an
    integer literal (or ``...``), so the rewrite is an in-place view that raises where the
    assignment raises; when False the index is spelled with ``select``, which raises for a
    list, tensor or bool index that the assignment accepts.  ``value_is_literal``: ``V`` is a
    Python scalar literal, so ``fill_`` accepts it; a non-literal ``V`` may be a one-element
    1-D tensor, which the assignment accepts and ``fill_`` rejects.
    """

    call: cst.Call
    index_is_literal: bool
    value_is_literal: bool
    # ``V`` is a literal that ``fill_`` treats exactly as the assignment does for every dtype,
    # errors included: an integer literal outside int64 makes the assignment raise
    # ``ValueError`` while ``fill_`` writes it (uint64, floating types) or raises another error.
    value_fits: bool = True


DeviceZeroResult = Union[DeviceZero, Unfixable]

# Index expressions that are certainly not an integer: selecting with them is advanced or
# boolean indexing (a copy, so ``T[I].zero_()`` would write to a temporary), or a type error.
_NON_INTEGER_INDEX = (
    cst.List,
    cst.ListComp,
    cst.Set,
    cst.SetComp,
    cst.Dict,
    cst.DictComp,
    cst.GeneratorExp,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Float,
    cst.Imaginary,
    cst.Comparison,
    cst.Lambda,
)
_NON_INTEGER_NAMES = frozenset({"None", "True", "False"})


def _int_literal(node: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal, optionally negated (``3``, ``0x1``, ``1_000``, ``-2``)."""
    negate = False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        negate = True
        node = node.expression
    if not isinstance(node, cst.Integer):
        return None
    value = ast.literal_eval(node.value)  # Integer.value is the token, without parentheses
    assert isinstance(value, int)
    return -value if negate else value


def _is_number(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float, cst.Imaginary))


def _is_literal_value(node: cst.BaseExpression) -> bool:
    """A Python scalar literal: a number, a signed number, ``True`` or ``False``."""
    if _is_number(node):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _is_number(node.expression)
    return isinstance(node, cst.Name) and node.value in ("True", "False")


def _is_zero(node: cst.BaseExpression) -> bool:
    """Unsigned int/float literal equal to zero, or ``False``: exactly what ``zero_()`` writes."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return bool(ast.literal_eval(node.value) == 0)
    return isinstance(node, cst.Name) and node.value == "False"


def _non_integer_reason(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Tuple):
        for element in node.elements:
            if isinstance(element, cst.StarredElement):
                return "the index unpacks a starred expression"
            reason = _non_integer_reason(element.value)
            if reason is not None:
                return reason
        return None
    if isinstance(node, _NON_INTEGER_INDEX) or (
        isinstance(node, cst.Name) and node.value in _NON_INTEGER_NAMES
    ):
        code = cst.Module([]).code_for_node(node)
        return f"index `{code}` is not an integer, so the select would not be an in-place view"
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return "a boolean index is not an integer select"
    return None


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _signed_int(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(operator=cst.Minus(), expression=cst.Integer(str(-value)))
    return cst.Integer(str(value))


def _one_element_slice(index: int) -> cst.Slice:
    """``[:1]``, ``[k:k+1]``, ``[-1:]`` or ``[-k:-k+1]`` with the numbers computed."""
    if index == 0:
        return cst.Slice(lower=None, upper=cst.Integer("1"))
    if index == -1:
        return cst.Slice(lower=_signed_int(-1), upper=None)
    return cst.Slice(lower=_signed_int(index), upper=_signed_int(index + 1))


def slice_is_exact(index: int, min_length: Optional[int]) -> bool:
    """Whether ``T[k:k+1]`` (or ``[-1:]``) is the element ``T[k]`` for every length >= ``min_length``."""
    if min_length is None:
        return False
    return 0 <= index < min_length or -min_length <= index < 0


def _fits_every_dtype(value: cst.BaseExpression) -> bool:
    """False for an integer literal outside int64 (see ``DeviceZero.value_fits``)."""
    negate = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
    node = value.expression if isinstance(value, cst.UnaryOperation) else value
    if not isinstance(node, cst.Integer):
        return True
    number = ast.literal_eval(node.value)
    assert isinstance(number, int)
    return INT64_MIN <= (-number if negate else number) <= INT64_MAX


def _index_values(target: cst.Subscript) -> List[cst.BaseExpression]:
    """The index elements, a parenthesised tuple (``T[(i, j)]`` is ``T[i, j]``) spread out."""
    values: List[cst.BaseExpression] = []
    for element in target.slice:
        if not isinstance(element.slice, cst.Index):
            continue
        value = element.slice.value
        if isinstance(value, cst.Tuple):
            values.extend(e.value for e in value.elements)
        else:
            values.append(value)
    return values


def _select_chain(target: cst.Subscript, int_names: AbstractSet[str] = frozenset()) -> cst.BaseExpression:
    """``T[i, j]`` -> ``T.select(0, i).select(0, j)``; after ``...``, dims count from the end.

    Without ``...``, leading integers (literals, ``int_names``) keep their subscript:
    ``T[b, h, qt, p] -> T[b, h].select(0, qt).select(0, p)`` (``T[b, h]`` is the same view).
    """
    values = _index_values(target)
    view: cst.BaseExpression = target.value
    if any(isinstance(v, cst.Ellipsis) for v in values):
        split = next(n for n, v in enumerate(values) if isinstance(v, cst.Ellipsis))
    else:
        split = len(values)
        lead = next((n for n, v in enumerate(values) if not _integer(v, int_names)), len(values))
        if lead:
            view = _subscript(target.value, values[:lead])
            values = values[lead:]
            split -= lead
    before, after = values[:split], values[split + 1:]
    steps = [(0, v) for v in before] + [(-(len(after) - n), v) for n, v in enumerate(after)]
    for dim, value in steps:
        view = cst.Call(
            func=cst.Attribute(value=view, attr=cst.Name("select")),
            args=[cst.Arg(_signed_int(dim), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                  cst.Arg(_as_argument(value))],
        )
    return view


def _as_argument(value: cst.BaseExpression) -> cst.BaseExpression:
    """``V`` as a call argument: a bare tuple or yield needs parentheses there."""
    if isinstance(value, (cst.Tuple, cst.Yield)):
        if not value.lpar:
            return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return value
    if (len(value.lpar) == 1 and len(value.rpar) == 1 and not isinstance(value, cst.NamedExpr)
            and "#" not in cst.Module([]).code_for_node(value.lpar[0]) + cst.Module([]).code_for_node(value.rpar[0])):
        # `t[i] = (a *\n b)` → `fill_(a *\n b)`: the call's own parentheses already allow the
        # line break, and `fill_((...))` reads as a tuple to a person (not to Python).
        # A walrus keeps its parentheses: `fill_(x := 1)` is a keyword-like syntax error.
        return value.with_changes(lpar=[], rpar=[])
    return value


def _integer(value: cst.BaseExpression, int_names: AbstractSet[str]) -> bool:
    """An integer literal or a name the caller proved to hold an ``int``."""
    return _int_literal(value) is not None or (
        isinstance(value, cst.Name) and not value.lpar and value.value in int_names)


def _subscript(base: cst.BaseExpression, values: Sequence[cst.BaseExpression]) -> cst.Subscript:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    elements = [cst.SubscriptElement(cst.Index(v), comma=comma if n < len(values) - 1 else cst.MaybeSentinel.DEFAULT)
                for n, v in enumerate(values)]
    return cst.Subscript(value=base, slice=elements)


def _ints_only(values: Sequence[cst.BaseExpression], int_names: AbstractSet[str]) -> bool:
    """Every index element is an integer literal, ``...`` or a name proven to be an ``int``
    (and at least one is not ``...``): the subscript is a select view, like a literal one."""
    return (any(_integer(v, int_names) for v in values)
            and all(_integer(v, int_names) or isinstance(v, cst.Ellipsis) for v in values))


def device_zero_form(
    target: cst.BaseExpression, value: cst.BaseExpression, min_length: Optional[int] = None,
    int_names: AbstractSet[str] = frozenset(),
) -> DeviceZeroResult:
    """The device-side call equivalent to ``target = value`` for a scalar element write.

    ``min_length``: a lower bound on the length of ``target``'s tensor that the caller has
    proven (then a literal index may use the one-element slice spelling).  ``int_names``:
    names the caller has proven to hold a Python ``int`` where the write stands (an index
    made of those, integer literals and ``...`` keeps its subscript).  Returns
    :class:`Unfixable` when ``target`` is not a subscript, has a slice or starred element, or
    an index that is certainly not an integer (list, string, ``None``...).
    """
    if not isinstance(target, cst.Subscript):
        return Unfixable("the assignment target is not a subscript")
    elements: Sequence[cst.SubscriptElement] = target.slice
    for element in elements:
        if not isinstance(element.slice, cst.Index):
            return Unfixable("the subscript has a slice element, so it does not write a single element")
        if element.slice.star is not None:
            return Unfixable("the subscript has a starred element")
        reason = _non_integer_reason(element.slice.value)
        if reason is not None:
            return Unfixable(reason)

    values = _index_values(target)
    index_is_literal = any(_int_literal(v) is not None for v in values) and all(
        _int_literal(v) is not None or isinstance(v, cst.Ellipsis) for v in values
    )
    literal_index = _int_literal(values[0]) if len(values) == 1 and len(elements) == 1 else None
    view: cst.BaseExpression
    if literal_index is not None and slice_is_exact(literal_index, min_length):
        view = cst.Subscript(
            value=target.value,
            slice=[cst.SubscriptElement(slice=_one_element_slice(literal_index))],
        )
    elif index_is_literal or _ints_only(values, int_names):
        view = target
    else:
        view = _select_chain(target, int_names)

    if _is_zero(value):
        call = cst.Call(func=cst.Attribute(value=view, attr=cst.Name("zero_")))
    else:
        call = cst.Call(
            func=cst.Attribute(value=view, attr=cst.Name("fill_")),
            args=[cst.Arg(value=_as_argument(value))],
        )
    return DeviceZero(
        call=call,
        index_is_literal=index_is_literal,
        value_is_literal=_is_literal_value(value),
        value_fits=_fits_every_dtype(value),
    )
