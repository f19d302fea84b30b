"""Turning new CST statements into text edits at the right place.

Why edits rather than a regenerated module: only the bytes of the fixed statement may change.
Why render inside a block of the statement's own indentation: the output must read exactly as
if a person had typed it there (same indentation characters, the module's indent unit and
newline style), including continuation lines of multi-line expressions.

Ranges are LibCST ``PositionProvider`` ranges.  For a ``SimpleStatementLine`` the range starts
after the indentation and ends after the last small statement, *before* the trailing
whitespace, comment and newline; for a small statement it excludes its ``;``.  The functions
here work out the rest from the source text (pass ``source=`` to avoid regenerating it from
the module).
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

import libcst as cst

from fixers._text import SourceLines, Statement, render_at_indent, source_of, with_semicolon_dropped
from fixers.edits import PositionLike, TextEdit, Unfixable, as_position, line_offsets
from fixers.imports import import_insertion
from fixers.platform_gate import Gate, gated_statement

__all__ = [
    "replace_statement_line",
    "replace_small_statement",
    "replace_expression",
    "is_alone_on_line",
    "gated_replacement",
]

NewStatements = Union[Statement, Sequence[Statement]]


def _statement_indentation(lines: SourceLines, start: Tuple[int, int]) -> str:
    line, column = start
    prefix = lines.text(line)[:column]
    if prefix.strip(" \t\f"):
        raise ValueError(f"the statement at {line}:{column} does not begin its line (preceded by {prefix!r})")
    return prefix


def _drop_moved_leading_lines(first: Statement, original: cst.SimpleStatementLine) -> Statement:
    """Leading lines already in the text above the edit must not be rendered a second time."""
    kept = list(first.leading_lines)
    moved = list(original.leading_lines)
    if len(kept) >= len(moved) and all(a.deep_equals(b) for a, b in zip(kept, moved)):
        kept = kept[len(moved) :]
    return first.with_changes(leading_lines=kept)


def replace_statement_line(
    module: cst.Module,
    line_node: cst.SimpleStatementLine,
    start: PositionLike,
    end: PositionLike,
    new: NewStatements,
    *,
    source: Optional[str] = None,
) -> TextEdit:
    """Replace a whole statement line (all its small statements and its trailing comment).

    ``start``/``end`` are ``line_node``'s ``PositionProvider`` range.  The edit runs from the
    statement to the end of its last line, trailing comment included, newline excluded, so a
    replacement that wants the comment must carry it (``gated_statement`` does: it keeps the
    original line, comment and all, in ``else``).  Leading lines of the first new statement
    that equal ``line_node``'s (``gated_statement`` moves them onto its ``if``) are not
    rendered again; other leading lines are.  Raises ``ValueError`` if the statement does not
    begin its physical line.
    """
    lines = source_of(module, source)
    first_pos, last_pos = as_position(start), as_position(end)
    indent = _statement_indentation(lines, first_pos)
    nodes: List[Statement] = [new] if isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) else list(new)
    if not nodes:
        raise ValueError("no replacement statements; use fixers.removal.remove_statement to delete")
    nodes[0] = _drop_moved_leading_lines(nodes[0], line_node)
    text = render_at_indent(module, nodes, indent)
    # The line node owns its trailing whitespace, which can run over a backslash onto the
    # next line (`t[0] = 0 \` / `  # c`): the edit covers it too, or a replacement that
    # carries the comment would leave it twice.
    trailing = module.code_for_node(line_node.trailing_whitespace)
    end_line = last_pos[0] + max(len(line_offsets(trailing)) - 2, 0)
    return TextEdit(first_pos, (end_line, lines.line_end(end_line)), text)


def replace_small_statement(
    module: cst.Module,
    start: PositionLike,
    end: PositionLike,
    new: Union[cst.BaseSmallStatement, NewStatements],
    *,
    source: Optional[str] = None,
) -> Union[TextEdit, Unfixable]:
    """Replace one small statement in place, leaving its ``;``, neighbours and comment alone.

    ``start``/``end`` are the small statement's range.  Works wherever the statement stands:
    alone on its line, after ``;``, or as the body of a one-line ``if x: ...``.  A compound or
    multi-line replacement (an ``if``/``else``) cannot be spliced into such a place, so any
    ``new`` that is not a small statement gives :class:`Unfixable`.
    """
    if not isinstance(new, cst.BaseSmallStatement):
        return Unfixable(
            "statement shares its line with other code (`;` or a one-line block); "
            "a compound replacement needs a line of its own"
        )
    lines = source_of(module, source)
    first_pos, last_pos = as_position(start), as_position(end)
    indent = lines.indentation(first_pos[0])
    line = cst.SimpleStatementLine(body=[with_semicolon_dropped(new)])
    return TextEdit(first_pos, last_pos, render_at_indent(module, [line], indent))


def replace_expression(
    module: cst.Module,
    start: PositionLike,
    end: PositionLike,
    new: cst.BaseExpression,
    *,
    source: Optional[str] = None,
) -> TextEdit:
    """Replace an expression in place (e.g. ``x_cpu`` by ``x``).

    The caller answers for precedence: ``new`` must be valid where the old expression stood
    (a name or attribute always is; add ``lpar``/``rpar`` otherwise).
    """
    lines = source_of(module, source)
    first_pos = as_position(start)
    indent = lines.indentation(first_pos[0])
    line = cst.SimpleStatementLine(body=[cst.Expr(value=new)])
    return TextEdit(first_pos, as_position(end), render_at_indent(module, [line], indent))


def is_alone_on_line(
    parent: Union[cst.SimpleStatementLine, cst.SimpleStatementSuite], small: cst.BaseSmallStatement
) -> bool:
    """True when ``small`` is the only statement of a line of its own (so it can become a block)."""
    return isinstance(parent, cst.SimpleStatementLine) and len(parent.body) == 1 and parent.body[0] is small


def gated_replacement(
    module: cst.Module,
    parent: Union[cst.SimpleStatementLine, cst.SimpleStatementSuite],
    small: cst.BaseSmallStatement,
    start: PositionLike,
    end: PositionLike,
    device_call: cst.Call,
    gate: Gate,
    *,
    source: Optional[str] = None,
) -> Union[Tuple[TextEdit, ...], Unfixable]:
    """The whole gated fix: the ``if gate: device else: original`` edit plus the gate's import.

    ``start``/``end`` are ``parent``'s range.  Returns one or two edits (statement, and the
    import when the module lacks it), or :class:`Unfixable` when the statement shares its line
    or the gate's import name is already bound to something else at module level.
    """
    if not is_alone_on_line(parent, small):
        return Unfixable(
            "statement shares its line with other code (`;` or a one-line block); "
            "the platform-gated if/else needs a line of its own"
        )
    assert isinstance(parent, cst.SimpleStatementLine)
    edits = [replace_statement_line(module, parent, start, end, gated_statement(parent, device_call, gate), source=source)]
    if gate.import_line is not None:
        import_edit = import_insertion(module, gate.import_line)
        if isinstance(import_edit, Unfixable):
            return import_edit
        if import_edit is not None:
            edits.append(import_edit)
    return tuple(edits)
