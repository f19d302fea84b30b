"""The text LibCST parses, and the way back to the file's own rows and columns.

Why: LibCST drops a form feed that sits in the indentation of a logical line
(``"\\f\\tt[0] = 0"`` comes back as ``"\\tt[0] = 0"``), so its columns on such a line are off by
the dropped characters, and an edit computed from them writes the gate at column 0 — outside
the function.  Python's tokenizer resets the indentation column at a form feed, so the
indentation that counts is what follows the last one: removing everything up to it leaves a
text with the same statements in the same blocks, which LibCST reproduces byte for byte.
Rules and fixers work on that text; :meth:`ParseView.restore` moves their findings and edits
back onto the file.  Form feeds anywhere else (blank and comment lines, between tokens,
continuation lines) LibCST keeps, so they are left alone.
"""
from __future__ import annotations

import tokenize
from dataclasses import dataclass, field, replace
from typing import Dict, Iterator, List, Mapping, Tuple

from fixers.edits import Position, TextEdit, split_lines
from lint_h2d.findings import Finding, Fix, Location

_SKIPPED = (tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.COMMENT, tokenize.ENCODING)


@dataclass(frozen=True)
class ParseView:
    """``text`` with ``shifts[row]`` characters removed from the start of those rows."""

    text: str
    shifts: Mapping[int, int] = field(default_factory=dict)

    def column(self, row: int, column: int) -> int:
        """A column of ``text`` (any base) as a column of the original line."""
        return column + self.shifts.get(row, 0)

    def _edit(self, edit: TextEdit) -> TextEdit:
        insertion = edit.is_insertion
        start = self._position(edit.start, at_line_start_keeps=True)
        # An edit that ends at the start of a row stops before that row's form feed: the
        # feed belongs to the line below, which the edit does not touch.
        end = self._position(edit.end, at_line_start_keeps=not insertion)
        return TextEdit(start, start if insertion else end, edit.text)

    def _position(self, position: Position, at_line_start_keeps: bool) -> Position:
        row, column = position
        if column == 0 and not at_line_start_keeps:
            return position
        return (row, self.column(row, column))

    def restore(self, finding: Finding) -> Finding:
        """``finding`` (computed on ``text``) with rows and columns of the original file."""
        if not self.shifts:
            return finding
        fix = finding.fix
        if fix is not None:
            rewrite = fix.rewrite
            if rewrite is not None:  # the fix pipeline's pieces move with their edit
                single = self._edit(rewrite.single)
                rewrite = replace(rewrite, start=single.start, end=single.end, single=single)
            fix = Fix(fix.applicability, fix.message, tuple(self._edit(e) for e in fix.edits), rewrite)
        start, end = finding.location, finding.end_location
        return replace(
            finding,
            location=Location(start.row, self.column(start.row, start.column)),
            end_location=Location(end.row, self.column(end.row, end.column)),
            fix=fix,
        )


def parse_view(text: str) -> ParseView:
    """The view of ``text`` that LibCST round-trips (``text`` itself when it has no form feed)."""
    if "\f" not in text:
        return ParseView(text)
    lines = split_lines(text, keepends=True)
    shifts: Dict[int, int] = {}
    try:
        for row, column in _logical_line_starts(lines):
            prefix = lines[row - 1][:column]
            if "\f" in prefix:
                shifts[row] = prefix.rindex("\f") + 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return ParseView(text)  # not Python: the parser reports it on the text as it is
    if not shifts:
        return ParseView(text)
    out: List[str] = [line[shifts.get(row, 0):] for row, line in enumerate(lines, start=1)]
    return ParseView("".join(out), shifts)


def _logical_line_starts(lines: List[str]) -> Iterator[Tuple[int, int]]:
    """(row, column) of the first token of every logical line."""
    at_start = True
    # The pure-Python tokenizer ends lines at `\n` only: give it every line ending in one.
    remaining = iter([line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line
                      for line in lines])
    for token in tokenize.generate_tokens(lambda: next(remaining, "")):
        if token.type == tokenize.NEWLINE:
            at_start = True
        elif token.type in _SKIPPED or token.type == tokenize.ENDMARKER:
            continue
        elif at_start:
            at_start = False
            yield token.start


__all__ = ["ParseView", "parse_view"]
