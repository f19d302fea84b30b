"""The device-side form of a scalar element write ``T[I] = V``.

Why: when every dimension of ``T`` is indexed by an integer, ``T[I] = V`` builds a 0-dim CPU
tensor and copies it host->device, which synchronises the stream.  ``T[:1].zero_()`` /
``T[I].fill_(V)`` launch a kernel with the value as an argument instead, and write the same
bits (``zero_``/``fill_`` cast the scalar exactly as the assignment does).

Spelling rules (see the brief, "Consequences for the rewrite"):

* a literal index becomes a one-element slice: ``0 -> [:1]``, ``k -> [k:k+1]``,
  ``-1 -> [-1:]`` (``[-1:0]`` would be empty), ``-k -> [-k:-k+1]``;
* any other index is kept exactly as written (``T[i].zero_()``, ``T[i, j].fill_(v)``): an
  integer select is a view, so the fill is in place, and it is right for negative ``i`` where
  ``T[i:i+1]`` is not;
* the value ``0``/``0.0``/``False`` becomes ``zero_()``; everything else, ``-0.0`` included
  (negative zero has a different bit pattern), becomes ``fill_(V)`` with ``V`` unchanged.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import libcst as cst

from fixers.edits import Unfixable

__all__ = ["DeviceZero", "Unfixable", "DeviceZeroResult", "device_zero_form"]


@dataclass(frozen=True)
class DeviceZero:
    """The replacement expression and how certain it is.

    ``call`` is the expression ``T[...].zero_()`` / ``T[...].fill_(V)`` (wrap it in
    ``cst.Expr`` to make a statement).  ``index_is_literal``: every index element is an
    integer literal (or ``...``), so the rewritten view is certainly an in-place view; when
    False the index could be a list/tensor at run time, for which ``T[I].zero_()`` writes to a
    copy.  ``value_is_literal``: ``V`` is a Python scalar literal, so ``fill_`` accepts it; a
    non-literal ``V`` may be a one-element 1-D tensor, which the assignment accepts and
    ``fill_`` rejects.
    """

    call: cst.Call
    index_is_literal: bool
    value_is_literal: bool


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


def _as_argument(value: cst.BaseExpression) -> cst.BaseExpression:
    """``V`` as a call argument: a bare tuple or yield needs parentheses there."""
    if isinstance(value, (cst.Tuple, cst.Yield)):
        if not value.lpar:
            return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return value
    if len(value.lpar) == 1 and len(value.rpar) == 1 and not isinstance(value, cst.NamedExpr):
        # `t[i] = (a *\n b)` → `fill_(a *\n b)`: the call's own parentheses already allow the
        # line break, and `fill_((...))` reads as a tuple to a person (not to Python).
        # A walrus keeps its parentheses: `fill_(x := 1)` is a keyword-like syntax error.
        return value.with_changes(lpar=[], rpar=[])
    return value


def device_zero_form(target: cst.BaseExpression, value: cst.BaseExpression) -> DeviceZeroResult:
    """The device-side call equivalent to ``target = value`` for a scalar element write.

    Returns :class:`Unfixable` when ``target`` is not a subscript, has a slice or starred
    element, or an index that is certainly not an integer (list, string, ``None``...).
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

    literal_index: Optional[int] = None
    if len(elements) == 1:
        index_expr = elements[0].slice
        assert isinstance(index_expr, cst.Index)
        literal_index = _int_literal(index_expr.value)

    if literal_index is not None:
        view: cst.BaseExpression = cst.Subscript(
            value=target.value,
            slice=[cst.SubscriptElement(slice=_one_element_slice(literal_index))],
        )
        index_is_literal = True
    else:
        view = target
        values = [e.slice.value for e in elements if isinstance(e.slice, cst.Index)]
        index_is_literal = any(_int_literal(v) is not None for v in values) and all(
            _int_literal(v) is not None or isinstance(v, cst.Ellipsis) for v in values
        )

    if _is_zero(value):
        call = cst.Call(func=cst.Attribute(value=view, attr=cst.Name("zero_")))
    else:
        call = cst.Call(
            func=cst.Attribute(value=view, attr=cst.Name("fill_")),
            args=[cst.Arg(value=_as_argument(value))],
        )
    return DeviceZero(call=call, index_is_literal=index_is_literal, value_is_literal=_is_literal_value(value))
