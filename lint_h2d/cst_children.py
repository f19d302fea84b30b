"""Reading a LibCST node's children from its fields, without LibCST's ``children``.

``CSTNode.children`` runs a visitor over the node (it rebuilds and validates it) each time it
is read; the collecting walks of the rules, the capture analysis and the position table only
need the nodes that can hold code, in field order.  This module has no other lint_h2d import,
so any module can use it without an import cycle (``capture_flow`` sits below ``rules``).
"""
from __future__ import annotations

import inspect
from typing import Callable, Dict, FrozenSet, Iterator, List, Tuple

import libcst as cst
import libcst._nodes.op as _op
import libcst._nodes.whitespace as _whitespace

#: Operator-module nodes that LibCST's code generation itself looks up: ``ImportFrom`` ends its
#: syntactic range at ``names`` (the ``*`` of ``from m import *``), so that position must be kept.
_END_NODES: FrozenSet[type] = frozenset({cst.ImportStar})


def _unrecorded_types() -> FrozenSet[type]:
    """Node classes defined in LibCST's whitespace and operator modules that no rule asks about and
    that no other node's position is computed from (see ``_END_NODES``)."""
    names = (_whitespace.__name__, _op.__name__)
    return frozenset(
        cls for module in (_whitespace, _op) for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, cst.CSTNode) and cls.__module__ in names and cls not in _END_NODES
    )


UNRECORDED: FrozenSet[type] = _unrecorded_types()


#: A value's type → what it is to `recorded_children`: 1 a node it keeps, 2 a node it drops
#: (`UNRECORDED`), 3 a tuple or list, 0 anything else.  By type, as `isinstance` would answer
#: (LibCST's node classes are ABCs: a negative `isinstance` goes through `ABCMeta`, and most
#: fields hold strings, sentinels or None).
_SORT: Dict[type, int] = {}
#: A node type → its dataclass fields, in order.
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _sort(kind: type) -> int:
    found = _SORT.get(kind)
    if found is None:
        if issubclass(kind, cst.CSTNode):
            found = 2 if kind in UNRECORDED else 1
        else:
            found = 3 if issubclass(kind, (tuple, list)) else 0
        _SORT[kind] = found
    return found


def recorded_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The node's children in field order, read from its fields in place (LibCST's ``children``
    runs a visitor per node), without the whitespace and operator nodes (``UNRECORDED``)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(node.__dataclass_fields__)
    found: List[cst.CSTNode] = []
    sort = _SORT
    for name in names:
        value = getattr(node, name)
        kind = sort.get(type(value))
        if kind is None:
            kind = _sort(type(value))
        if kind == 1:
            found.append(value)
        elif kind == 3:
            for v in value:
                k = sort.get(type(v))
                if k == 1 or (k is None and _sort(type(v)) == 1):
                    found.append(v)
    return found


def any_node(root: cst.CSTNode, test: Callable[[cst.CSTNode], bool]) -> bool:
    """Whether `root` or a node below it passes `test` (read through `recorded_children`: the
    whitespace and operator nodes it leaves out hold no code)."""
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if test(node):
            return True
        stack.extend(recorded_children(node))
    return False


def own_scope_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`root` (a function's body, not a definition) and every node below it in source order
    (parents before their children), read
    through `recorded_children`, without entering a nested `def`, `class` or `lambda`: what a
    function's own statements run when it is called (the nested definitions run later, in
    scopes of their own; the definition nodes themselves are not yielded either)."""
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        yield node
        stack.extend(reversed(recorded_children(node)))  # popped in source order


def type_test(*classes: type) -> Callable[[object], bool]:
    """`isinstance(value, classes)`, answered from a table by the value's type: for LibCST's
    node classes (ABCs) a negative `isinstance` goes through `ABCMeta.__instancecheck__`, which
    made the statement scans of the rules' `wants` several times slower."""
    table: Dict[type, bool] = {}

    def test(value: object) -> bool:
        kind = type(value)
        hit = table.get(kind)
        if hit is None:
            hit = table[kind] = issubclass(kind, classes)
        return hit

    return test


def every_param(params: cst.Parameters) -> List[cst.Param]:
    """Every parameter a ``def`` or ``lambda`` binds: positional-only, ordinary and keyword-only
    ones in order, then ``*args`` and ``**kwargs`` where present (a bare ``*`` binds nothing)."""
    every = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    every.extend(star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param))
    return every
