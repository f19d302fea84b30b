"""Reading a LibCST node's children from its fields, without LibCST's ``children``.

``CSTNode.children`` runs a visitor over the node (it rebuilds and validates it) each time it
is read; the collecting walks of the rules, the capture analysis and the position table only
need the nodes that can hold code, in field order.  This module has no other lint_h2d import,
so any module can use it without an import cycle (``capture_flow`` sits below ``rules``).
"""
from __future__ import annotations

import inspect
from typing import FrozenSet, List

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


def recorded_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The node's children in field order, read from its fields in place (LibCST's ``children``
    runs a visitor per node), without the whitespace and operator nodes (``UNRECORDED``)."""
    found: List[cst.CSTNode] = []
    for name in node.__dataclass_fields__:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            if type(value) not in UNRECORDED:
                found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(v for v in value if isinstance(v, cst.CSTNode) and type(v) not in UNRECORDED)
    return found
