"""Text edits: the one currency in which fixers hand rewrites to their callers.

Edits address the original source by (line, column) with LibCST's convention: lines are
1-based, columns are 0-based character offsets.  Applying edits to text (instead of
regenerating a whole module) is what guarantees that every byte outside a fix stays put.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, List, Sequence, Tuple, Union

if TYPE_CHECKING:  # LibCST only where a position comes from it: reading edits back needs no parser
    from libcst.metadata import CodePosition

_NEWLINE = re.compile(r"\r\n|\r|\n")

Position = Tuple[int, int]
#: What fixers accept as a position: a ``(line, column)`` tuple or LibCST's ``CodePosition``
#: (so callers can pass ``PositionProvider`` ranges' ``start``/``end`` straight through).
PositionLike = Union[Position, "CodePosition"]


def as_position(position: PositionLike) -> Position:
    """Normalise a ``CodePosition`` or tuple to the ``(line, column)`` tuple edits use."""
    if not isinstance(position, tuple):
        from libcst.metadata import CodePosition

        if isinstance(position, CodePosition):
            return (position.line, position.column)
    line, column = position
    return (line, column)


@dataclass(frozen=True)
class Unfixable:
    """Why a fixer declined: the finding stays, reported without a fix.

    A value rather than an exception because declining is an expected outcome (a statement
    that shares its line cannot grow an ``if``/``else``), not an error in the caller.
    """

    reason: str


@dataclass(frozen=True, order=True)
class TextEdit:
    """Replace the text between ``start`` and ``end`` (end exclusive) by ``text``."""

    start: Position
    end: Position
    text: str

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end


class OverlappingEdits(ValueError):
    """Two edits touch the same text; the caller must apply them in separate passes."""


def line_offsets(code: str) -> List[int]:
    """Offsets of the start of every line (index 0 is line 1).

    Only ``\\n``, ``\\r\\n`` and ``\\r`` end a line, as in Python's tokenizer (``str.splitlines``
    would also split on form feeds and other characters LibCST does not count).
    """
    return [0] + [match.end() for match in _NEWLINE.finditer(code)]


def split_lines(code: str, keepends: bool = False) -> List[str]:
    """``code`` split where Python ends a line: ``\\n``, ``\\r\\n`` and ``\\r`` only.

    Why not ``str.splitlines``: it also breaks at form feeds, ``\\v``, ``\\x1c``-``\\x1e``,
    ``\\x85`` and U+2028/U+2029, which Python allows inside a line (a form feed in the
    indentation, U+2028 in a string literal); after such a character every row number
    computed from ``splitlines`` is off by one (a ``# noqa`` then silences the wrong line).
    Like ``splitlines``, an empty text has no lines and a final line break opens none.
    """
    offsets = line_offsets(code)
    ends = offsets[1:] + [len(code)]
    lines = [code[start:end] for start, end in zip(offsets, ends)]
    if lines and lines[-1] == "":
        lines.pop()
    if keepends:
        return lines
    return [line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line for line in lines]


def to_offset(offsets: Sequence[int], position: Position) -> int:
    line, column = position
    return offsets[line - 1] + column


def apply_edits(code: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits; identical duplicates (e.g. one import wanted by two fixes) count once."""
    unique = sorted(set(edits))
    offsets = line_offsets(code)
    spans = [(to_offset(offsets, e.start), to_offset(offsets, e.end), e.text) for e in unique]
    out: List[str] = []
    cursor = 0
    for start, end, text in spans:
        if start < cursor:
            raise OverlappingEdits(f"edit at offset {start} overlaps a previous edit ending at {cursor}")
        out.append(code[cursor:start])
        out.append(text)
        cursor = end
    out.append(code[cursor:])
    return "".join(out)
