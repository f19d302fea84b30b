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
* the generated tokens are counted, not kept;
* only a few top-level statements are resolved at a time (:class:`Positions`): a rule asks
  about the statement it checks and the few its evidence points to, and a table for the whole
  of a 100k-line file was 60 MB.
"""
from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from typing import Dict, Iterator, List, MutableMapping, Optional, Tuple

import libcst as cst
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

from lint_h2d.cst_children import UNRECORDED, recorded_children

_BITS = 32
_MASK = (1 << _BITS) - 1




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


class _LineCount(PositionProvidingCodegenState):
    """Code generation that only follows the line and column (where each top-level statement
    starts): nothing recorded."""

    def before_codegen(self, node: cst.CSTNode) -> None:
        pass

    def after_codegen(self, node: cst.CSTNode) -> None:
        pass

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> Iterator[None]:
        yield


def _children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and the nodes under it that have a recorded position, read in place (LibCST's
    ``children`` runs a visitor for each node).  Whitespace and operator nodes hold none."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(recorded_children(current))


def _holds(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(n is node for n in _children(root))


class Positions:
    """Where the nodes of one module are (LibCST's ``PositionProvider`` semantics).

    A top-level statement's nodes get the same positions from its own code generation as from
    the module's, started at the line and column where the module's reaches it (nothing in a
    statement's code depends on what came before, and no indentation is open between
    top-level statements).  So one cheap pass records where each statement starts, and a
    statement's table is computed when one of its nodes is asked for; the last
    :data:`KEPT` tables stay.  A node is looked for in the statements near the last one asked
    about (rules go through a file in order, and evidence is mostly close by), else by a walk
    of the whole module; after :data:`FAR_SCANS` such walks, through an index of every node
    (built once), so the work stays linear in the file.
    """

    KEPT = 8
    NEAR = 8
    FAR_SCANS = 16

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        state = _LineCount(default_indent=module.default_indent, default_newline=module.default_newline,
                           provider=_Table())  # type: ignore[arg-type]
        state.tokens = _TokenCount()  # type: ignore[assignment]
        for h in module.header:
            h._codegen(state)
        starts: List[Tuple[int, int]] = []
        for stmt in module.body:
            starts.append((state.line, state.column))
            stmt._codegen(state)
        self._starts = starts
        self._tables: "OrderedDict[int, _PackedRanges]" = OrderedDict()
        self._last = 0
        self._far = 0
        self._found: Dict[int, Optional[int]] = {}  # id(node) -> statement, found by a walk
        self._index: Optional[Dict[int, int]] = None  # id(node) -> statement, when needed
        self._full: Optional[MutableMapping[cst.CSTNode, CodeRange]] = None

    def _table(self, number: int) -> _PackedRanges:
        table = self._tables.get(number)
        if table is not None:
            self._tables.move_to_end(number)
            return table
        line, column = self._starts[number]
        provider = _Table()
        state = _State(default_indent=self.module.default_indent, default_newline=self.module.default_newline,
                       provider=provider, line=line, column=column)  # type: ignore[arg-type]
        state.tokens = _TokenCount()  # type: ignore[assignment]
        self.module.body[number]._codegen(state)
        table = provider._computed
        self._tables[number] = table
        if len(self._tables) > self.KEPT:
            self._tables.popitem(last=False)
        return table

    def _statement_of(self, node: cst.CSTNode) -> Optional[int]:
        """The top-level statement that holds ``node`` (None: the module, its header or footer,
        or a node of another tree)."""
        body = self.module.body
        if self._index is None:
            near = [self._last] + [n for d in range(1, self.NEAR + 1) for n in (self._last + d, self._last - d)]
            for number in near:  # a statement whose table is kept does not hold it (asked first)
                if 0 <= number < len(body) and number not in self._tables and _holds(body[number], node):
                    self._last = number
                    return number
            if id(node) in self._found:  # the cursor stays where the rule is
                return self._found[id(node)]
            self._far += 1
            if self._far <= self.FAR_SCANS:  # a walk of the file; the answer kept (the module's
                # first statement is asked about for every module-level finding)
                found = next((number for number, stmt in enumerate(body) if _holds(stmt, node)), None)
                self._found[id(node)] = found
                if found is not None:
                    self._last = found
                return found
            # Evidence all over the file: an index of every node from now on (time stays linear).
            self._index = {id(n): number for number, stmt in enumerate(body) for n in _children(stmt)}
        indexed = self._index.get(id(node))
        if indexed is not None:
            self._last = indexed
        return indexed

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        if type(node) not in UNRECORDED:
            for table in reversed(self._tables.values()):
                if node in table:
                    return table[node]
            number = self._statement_of(node)
            if number is not None:
                table = self._table(number)
                if node in table:
                    return table[node]
        if self._full is None:  # a whitespace or operator node, or the module: LibCST's own table, once
            from libcst.metadata import MetadataWrapper, PositionProvider

            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._full = dict(wrapper.resolve(PositionProvider))
        return self._full[node]
