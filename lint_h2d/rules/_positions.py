"""Node positions for one module, as LibCST's ``PositionProvider`` computes them, in less memory.

Why: rules ask for the position of a few nodes per finding, but LibCST resolves every node of
the module (``MetadataWrapper.resolve(PositionProvider)``): one ``CodeRange`` and two
``CodePosition`` objects per node, the table then copied once more by the wrapper, plus a
second walk of the whole tree for batchable providers that this one does not need.  On a
100k-line file that was several hundred MB and a third of the time to check it.

Here the same code generation runs (the same ``PositionProvidingCodegenState``, so every
position is the one LibCST gives, syntactic hoisting included), but

* whitespace, comment and operator nodes (about half of all nodes) are not recorded: no rule
  asks where a comma is; if one is ever asked for, the full LibCST table is computed then;
* a range is kept as one integer, decoded into a ``CodeRange`` when asked for;
* the generated tokens are counted, not kept.
"""
from __future__ import annotations

import inspect
from typing import Dict, FrozenSet, Iterator, List, MutableMapping, Optional

import libcst as cst
import libcst._nodes.op as _op
import libcst._nodes.whitespace as _whitespace
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

_BITS = 32
_MASK = (1 << _BITS) - 1


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


def _pack(where: CodeRange) -> int:
    start, end = where.start, where.end
    return (((start.line << _BITS | start.column) << _BITS | end.line) << _BITS) | end.column


def _unpack(packed: int) -> CodeRange:
    end_column = packed & _MASK
    end_line = (packed >> _BITS) & _MASK
    start_column = (packed >> 2 * _BITS) & _MASK
    start_line = packed >> 3 * _BITS
    return CodeRange(CodePosition(start_line, start_column), CodePosition(end_line, end_column))


class _PackedRanges(MutableMapping[cst.CSTNode, CodeRange]):
    """``node -> CodeRange``, stored as one int per node (what the codegen state reads and writes)."""

    def __init__(self) -> None:
        self.packed: Dict[cst.CSTNode, int] = {}

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        return _unpack(self.packed[node])

    def __setitem__(self, node: cst.CSTNode, where: CodeRange) -> None:
        self.packed[node] = _pack(where)

    def __delitem__(self, node: cst.CSTNode) -> None:
        del self.packed[node]

    def __contains__(self, node: object) -> bool:
        return node in self.packed

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self.packed)

    def __len__(self) -> int:
        return len(self.packed)


class _Table:
    """Stands where the codegen state expects a provider: it only reads ``_computed``."""

    def __init__(self) -> None:
        self._computed = _PackedRanges()


class _TokenCount:
    """The part of a token list that code generation reads: its length (and the last pop)."""

    def __init__(self) -> None:
        self.count = 0

    def append(self, value: str) -> None:
        self.count += 1

    def extend(self, values: List[str]) -> None:
        self.count += len(values)

    def pop(self) -> None:
        self.count -= 1

    def __len__(self) -> int:
        return self.count


class _State(PositionProvidingCodegenState):
    """LibCST's position state, minus the nodes no rule asks about."""

    def before_codegen(self, node: cst.CSTNode) -> None:
        if type(node) not in UNRECORDED:
            super().before_codegen(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if type(node) not in UNRECORDED:
            super().after_codegen(node)


class Positions:
    """Where the nodes of one module are (LibCST's ``PositionProvider`` semantics)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        table = _Table()
        state = _State(default_indent=module.default_indent, default_newline=module.default_newline,
                       provider=table)  # type: ignore[arg-type]
        state.tokens = _TokenCount()  # type: ignore[assignment]
        module._codegen(state)
        self._ranges = table._computed
        self._full: Optional[MutableMapping[cst.CSTNode, CodeRange]] = None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        try:
            return self._ranges[node]
        except KeyError:
            if type(node) not in UNRECORDED:
                raise
        if self._full is None:  # a whitespace or operator node: LibCST's own table, once
            from libcst.metadata import MetadataWrapper, PositionProvider

            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._full = dict(wrapper.resolve(PositionProvider))
        return self._full[node]

    def __len__(self) -> int:
        return len(self._ranges)
