"""An index name that is certainly a Python ``int``, so ``T[i].fill_(V)`` may keep the subscript.

Why: a non-literal index is spelled ``T.select(0, i).fill_(V)`` because ``T[i]`` with a list,
an index tensor or a bool is a *copy* (the fill would be lost) where ``select`` raises.  When
``i`` is provably an ``int`` that danger does not exist: ``T[i]`` is the same in-place view
and raises the same ``IndexError`` as the assignment, and it is what a maintainer writes
(``self.state_conv_widths[idx].fill_(state.size(2))`` fits in 88 columns where the
``select`` spelling is wrapped over three lines).

Proof, for a name ``i`` read in a function (anything else is no proof):

* ``i`` is not a parameter, and no ``global``/``nonlocal`` naming it and no walrus binding it
  appears anywhere in the function (nested scopes included: they could rebind it);
* every binding of ``i`` in the function's own scope is one of
  ``i = <int literal>``, ``i: int = <int literal>``, ``i = len(x)``,
  ``i += / -= / *= <int literal>``, ``for i in range(...)`` and
  ``for i, x in enumerate(xs)`` (one argument: ``start=`` may be a bool);
  nothing else (``with ... as i``, ``except ... as i``, ``import``, ``del``, ``match``,
  tuple unpacking, a ``def``/``class`` named ``i``);
* ``range``, ``enumerate`` and ``len`` are bound nowhere in the module, so they are the
  builtins.

Comprehension variables and the locals of nested functions are their own scopes and do not
count.  An unbound ``i`` raises the same ``NameError`` in every spelling.
"""
from __future__ import annotations

from typing import FrozenSet, Optional, Sequence, Tuple

import libcst as cst

from fixers.imports import target_names

__all__ = ["BUILTINS", "int_names"]

# The builtins the proof relies on; a module that binds one of them gets no proof.
BUILTINS = frozenset({"range", "enumerate", "len"})


def _int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def _call_to(node: cst.BaseExpression, name: str) -> Optional[cst.Call]:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name:
        return node
    return None


def _plain_args(call: cst.Call, count: Optional[int]) -> bool:
    """Positional arguments only, no ``*``/``**`` (and exactly ``count`` of them when given)."""
    if any(arg.keyword is not None or arg.star for arg in call.args):
        return False
    return count is None or len(call.args) == count


def _int_value(node: cst.BaseExpression) -> bool:
    """``<int literal>`` or ``len(x)``: an ``int`` (never a ``bool``) or an error."""
    if _int_literal(node):
        return True
    call = _call_to(node, "len")
    return call is not None and _plain_args(call, 1)


def _int_loop(node: cst.For, name: str) -> bool:
    """``for name in range(...)`` or ``for name, x in enumerate(xs)``."""
    target = node.target
    if isinstance(target, cst.Name):
        call = _call_to(node.iter, "range")
        return target.value == name and call is not None and _plain_args(call, None)
    if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
        return False
    first, second = target.elements
    call = _call_to(node.iter, "enumerate")
    return (isinstance(first, cst.Element) and isinstance(first.value, cst.Name) and first.value.value == name
            and isinstance(second, cst.Element) and name not in set(target_names(second.value))
            and call is not None and _plain_args(call, 1))


class _Bindings(cst.CSTVisitor):
    """Whether every binding of ``name`` in one function's own scope gives it an ``int``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ok = True
        self.seen = False  # bound at least once: otherwise the name is read from outside

    def _binds(self, node: cst.CSTNode) -> bool:
        return self.name in set(target_names(node))

    # Nested scopes: their own bindings do not count, but `nonlocal`/`global`/walrus do
    # (checked separately over the whole subtree).
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.ok &= node.name.value != self.name
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.ok &= node.name.value != self.name
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        node.iter.visit(self)  # the first iterable is evaluated in the function's scope
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if self._binds(target.target):
                self.seen = True
                self.ok &= isinstance(target.target, cst.Name) and _int_value(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self._binds(node.target):
            self.seen = True
            self.ok &= node.value is not None and _int_literal(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._binds(node.target):
            self.seen = True
            self.ok &= (isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign))
                        and _int_literal(node.value))

    def visit_For(self, node: cst.For) -> None:
        if self._binds(node.target):
            self.seen = True
            self.ok &= _int_loop(node, self.name)

    def visit_AsName(self, node: cst.AsName) -> None:
        self.ok &= not self._binds(node.name)

    def visit_Del(self, node: cst.Del) -> None:
        self.ok &= not self._binds(node.target)

    def visit_Import(self, node: cst.Import) -> None:
        self.ok &= all(alias.asname is not None or cst.Module([]).code_for_node(alias.name).split(".")[0]
                       != self.name for alias in node.names)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.ok = False
            return
        self.ok &= all(alias.asname is not None or cst.Module([]).code_for_node(alias.name) != self.name
                       for alias in node.names)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        self.ok &= node.name is None or node.name.value != self.name

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        self.ok &= node.name is None or node.name.value != self.name

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        self.ok &= node.rest is None or node.rest.value != self.name

    def visit_TypeAlias(self, node: cst.TypeAlias) -> None:
        self.ok &= node.name.value != self.name


class _Declared(cst.CSTVisitor):
    """``global``/``nonlocal`` naming ``name``, or a walrus binding it, anywhere below."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_Global(self, node: cst.Global) -> None:
        self.found |= any(item.name.value == self.name for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found |= any(item.name.value == self.name for item in node.names)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.found |= self.name in set(target_names(node.target))


def _parameters(function: cst.FunctionDef) -> FrozenSet[str]:
    params = function.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    names |= {star.name.value for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)}
    return frozenset(names)


def _is_int_name(function: cst.FunctionDef, name: str) -> bool:
    if name in _parameters(function):
        return False
    declared = _Declared(name)
    function.body.visit(declared)
    if declared.found:
        return False
    bindings = _Bindings(name)
    function.body.visit(bindings)
    return bindings.ok and bindings.seen


def int_names(names: Sequence[str], function: Optional[cst.FunctionDef],
              module_bound: FrozenSet[str]) -> Tuple[str, ...]:
    """The ``names`` that are certainly ``int`` where ``function``'s body reads them.

    ``function``: the innermost scope of the read (None at module or class level: no proof);
    ``module_bound``: every name bound anywhere in the module (``bound_names([module])``).
    """
    if function is None or module_bound & BUILTINS:
        return ()
    return tuple(n for n in names if _is_int_name(function, n))
