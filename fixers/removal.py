"""Deleting a statement and leaving valid, tidy code.

Why a dedicated fixer: the device-only zero form (vLLM PR #51585) *removes* the zeroing of
shared CPU metadata in a capture function.  A deletion must not leave an empty block, a dangling
``;``, or a doubled blank line, and must not take neighbours' comments with it.

Rules:

* alone on its line: the whole line goes (indentation through newline); comment lines above
  it stay (they may describe the neighbours); if that leaves blank lines both above and below,
  one of them goes too;
* the only statement of its block: it becomes ``pass`` (its trailing comment goes with it);
* sharing its line (``a; b``, ``if x: a; b``): only it and its ``;`` separator go;
* the only statement of a one-line block (``if x: b``): it becomes ``pass``.
"""
from __future__ import annotations

from typing import List, Optional, Union

import libcst as cst

from fixers._text import render_at_indent, source_of, with_semicolon_dropped
from fixers.edits import PositionLike, TextEdit, as_position

__all__ = ["remove_statement"]


def _index_of(parent: Union[cst.SimpleStatementLine, cst.SimpleStatementSuite], small: cst.BaseSmallStatement) -> int:
    for index, candidate in enumerate(parent.body):
        if candidate is small:
            return index
    for index, candidate in enumerate(parent.body):
        if candidate.deep_equals(small):
            return index
    raise ValueError("`small` is not one of `parent`'s statements")


def remove_statement(
    module: cst.Module,
    parent: Union[cst.SimpleStatementLine, cst.SimpleStatementSuite],
    small: cst.BaseSmallStatement,
    start: PositionLike,
    end: PositionLike,
    block: Union[cst.IndentedBlock, cst.Module, None] = None,
    *,
    source: Optional[str] = None,
) -> TextEdit:
    """The edit that deletes ``small``.

    ``parent`` is the line (or one-line suite) holding ``small``; ``start``/``end`` are
    ``parent``'s ``PositionProvider`` range.  ``block`` is the block whose body holds
    ``parent`` (an ``IndentedBlock``, or the ``Module`` at top level); it is required when
    ``parent`` is a ``SimpleStatementLine`` (to know whether the block would become empty) and
    ignored for a ``SimpleStatementSuite``.  Raises ``ValueError`` when ``small`` is not in
    ``parent`` or ``block`` is missing.
    """
    lines = source_of(module, source)
    first, last = as_position(start), as_position(end)
    index = _index_of(parent, small)
    indent = lines.indentation(first[0])

    if len(parent.body) > 1:
        body: List[cst.BaseSmallStatement] = list(parent.body)
        del body[index]
        # The range stops before the last statement's own ``;`` (if any), which stays in the
        # text: the new last statement must not render one.
        body[-1] = with_semicolon_dropped(body[-1])
        text = render_at_indent(module, [cst.SimpleStatementLine(body=body)], indent)
        return TextEdit(first, last, text)

    if isinstance(parent, cst.SimpleStatementSuite):
        return TextEdit(first, last, "pass")

    if block is None:
        raise ValueError("`block` (the IndentedBlock or Module holding the line) is required for a statement line")
    if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
        return TextEdit(first, (last[0], lines.line_end(last[0])), "pass")

    top, bottom = first[0], last[0]
    if lines.is_blank(top - 1) and lines.is_blank(bottom + 1):
        top -= 1
    if lines.has_newline(bottom):
        return TextEdit((top, 0), (bottom + 1, 0), "")
    # The last line of a file without a final newline: the file now ends with the line above.
    return TextEdit((top, 0), (bottom, lines.line_end(bottom)), "")
