"""The one fix pipeline: what a rule wants written instead becomes text here.

Why one place: a rule knows *what* replaces a statement (the device-side call, or nothing at
all) and whether that is safe; where the gate goes, how adjacent rewrites share it, where the
import lands, how long the lines are and how they break are the same questions for every rule
and every finding.  Answering them per finding gave vLLM's flashmla.py five gates for five
consecutive writes.

Two views of the same rewrite:

* :meth:`Rewrite.edit`: the finding's own fix, one gate around one statement, what ``--diff``
  of a single finding, the language server's quick fix and ``verify`` see;
* :func:`runs` + :func:`group_edit`: what the fix loop writes when it applies several fixes
  at once: consecutive rewritten statements of one block (only comments and blank lines
  between them) under one gate, the ROCm branch holding every rewrite in order and the other
  branch the original statements with the comments and blank lines that stood between them.

Both are built from the same text pieces, so the group is exactly the single rewrites put
side by side (``verify`` checks that).  A rewrite carries text only (no CST), so findings stay
small and picklable.

Layout: new statements are flattened and wrapped to the project's line length
(:mod:`fixers.layout`); an original statement moved one level deeper into ``else`` is re-laid
out only when it no longer fits; a trailing comment of the original is kept on the original
and repeated on the rewrite.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from fixers._text import render_at_indent, source_of
from fixers.edits import PositionLike, Position, TextEdit, as_position, line_offsets
from fixers.layout import lay_out

__all__ = ["Rewrite", "gated_rewrite", "ungated_rewrite", "deletion", "runs", "group_edit", "group_text"]


@dataclass(frozen=True)
class Rewrite:
    """One statement line to rewrite (under a gate, in place, or away), as text pieces.

    ``block``/``index`` place the statement in its block (the block's first statement's
    position and the statement's index), which is how adjacency is known.  ``then`` and
    ``orig`` are the rewrite and the original statement rendered one level deeper than
    ``indent`` (full lines, indentation included); ``leading`` the comments and blank lines
    above the original at that depth (they move into ``else`` when the statement is not the
    first of its run).  ``gate`` is None for an ungated rewrite or a deletion, which never
    group.  ``single`` is the finding's own edit.
    """

    block: Tuple[int, int]
    index: int
    start: Position
    end: Position
    indent: str
    newline: str
    then: str
    orig: str
    leading: Tuple[str, ...]
    gate: Optional[str]
    lazy_import: Optional[str]
    single: TextEdit
    delete: bool = False

    @property
    def edit(self) -> TextEdit:
        return self.single

    @property
    def groups(self) -> bool:
        return self.gate is not None and not self.delete


def _line_end(module: cst.Module, line_node: cst.SimpleStatementLine, end: Position, source: Optional[str]) -> Position:
    """End of the line's last physical line (trailing comment included, newline excluded)."""
    lines = source_of(module, source)
    trailing = module.code_for_node(line_node.trailing_whitespace)
    end_line = end[0] + max(len(line_offsets(trailing)) - 2, 0)
    return (end_line, lines.line_end(end_line))


def _indent_of(module: cst.Module, start: Position, source: Optional[str]) -> str:
    lines = source_of(module, source)
    prefix = lines.text(start[0])[: start[1]]
    if prefix.strip(" \t\f"):
        raise ValueError(f"the statement at {start[0]}:{start[1]} does not begin its line")
    return prefix


def _unit(module: cst.Module, indent: str) -> str:
    unit = module.default_indent
    if "\t" in indent and "\t" not in unit:
        return "\t"
    if indent and "\t" not in indent and "\t" in unit:
        return "    "
    return unit


def _comment_of(line_node: cst.SimpleStatementLine) -> Optional[cst.Comment]:
    return line_node.trailing_whitespace.comment


def _leading(line_node: cst.SimpleStatementLine, inner: str) -> Tuple[str, ...]:
    out: List[str] = []
    for empty in line_node.leading_lines:
        out.append(inner + empty.comment.value if empty.comment is not None else "")
    return tuple(out)


def _render(module: cst.Module, node: cst.SimpleStatementLine, indent: str, limit: int, new: bool) -> str:
    """``node`` as full lines at ``indent``, laid out within ``limit``."""
    text = render_at_indent(module, [node], indent)
    return indent + lay_out(module, node, text, indent, limit, force_flat=new)


def _then(module: cst.Module, original: cst.SimpleStatementLine, replacement: Sequence[cst.BaseSmallStatement],
          inner: str, limit: int) -> str:
    comment = _comment_of(original)
    lines: List[str] = []
    for n, small in enumerate(replacement):
        node = cst.SimpleStatementLine(body=[small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        if comment is not None and n == len(replacement) - 1:
            node = node.with_changes(trailing_whitespace=cst.TrailingWhitespace(
                whitespace=cst.SimpleWhitespace("  "), comment=comment))
        lines.append(_render_commented(module, node, inner, limit, True))
    return module.default_newline.join(lines)


def _render_commented(module: cst.Module, node: cst.SimpleStatementLine, indent: str, limit: int,
                      new: bool) -> str:
    """Like :func:`_render`; when only the trailing comment takes the line past the limit, the
    comment goes on its own line above the statement (a formatter would break the statement
    inside its brackets for it, which reads worse and moves the comment into them)."""
    text = _render(module, node, indent, limit, new)
    comment = _comment_of(node)
    if comment is None or ("\n" not in text and "\r" not in text):
        return text
    bare = node.with_changes(trailing_whitespace=cst.TrailingWhitespace(newline=node.trailing_whitespace.newline))
    plain = _render(module, bare, indent, limit, new)
    if "\n" in plain or "\r" in plain or not _fits_line(indent + comment.value, limit):
        return text
    return indent + comment.value + module.default_newline + plain


def _fits_line(line: str, limit: int) -> bool:
    return len(line.expandtabs()) <= limit


def group_text(run: Sequence[Rewrite]) -> str:
    """The text of one gate around ``run`` (starting at the first statement's column)."""
    first = run[0]
    nl, indent = first.newline, first.indent
    parts: List[str] = []
    if first.lazy_import:
        parts.append(first.lazy_import)
        parts.append(indent + f"if {first.gate}:")
    else:
        parts.append(f"if {first.gate}:")
    parts.extend(r.then for r in run)
    parts.append(indent + "else:")
    for n, r in enumerate(run):
        if n:
            parts.extend(r.leading)
        parts.append(r.orig)
    return nl.join(parts)


def group_edit(run: Sequence[Rewrite]) -> TextEdit:
    """One edit for a run of adjacent rewrites (see :func:`runs`)."""
    return TextEdit(run[0].start, run[-1].end, group_text(run))


def gated_rewrite(
    module: cst.Module,
    line_node: cst.SimpleStatementLine,
    start: PositionLike,
    end: PositionLike,
    replacement: Sequence[cst.BaseSmallStatement],
    gate: str,
    *,
    block: Tuple[int, int],
    index: int,
    limit: int,
    lazy_import: Optional[str] = None,
    source: Optional[str] = None,
) -> Rewrite:
    """``if gate: <replacement> else: <line_node>`` for a statement alone on its line.

    ``start``/``end``: ``line_node``'s ``PositionProvider`` range.  The statement's leading
    lines stay above the ``if``; ``lazy_import`` (an import statement) goes right above it.
    """
    first, last = as_position(start), as_position(end)
    indent = _indent_of(module, first, source)
    inner = indent + _unit(module, indent)
    bare = line_node.with_changes(leading_lines=())
    # The original is re-laid out only when moving it one level deeper takes it past the
    # limit; a statement that was already longer stays exactly as its author wrote it.
    as_written = indent + render_at_indent(module, [bare], indent)
    fitted = max(len(line.expandtabs()) for line in as_written.splitlines()) <= limit
    orig = (_render_commented(module, bare, inner, limit, False) if fitted
            else inner + render_at_indent(module, [bare], inner))
    then = _then(module, line_node, replacement, inner, limit)
    stop = _line_end(module, line_node, last, source)
    piece = Rewrite(
        block=block, index=index, start=first, end=stop, indent=indent, newline=module.default_newline,
        then=then, orig=orig, leading=_leading(line_node, inner), gate=gate, lazy_import=lazy_import,
        single=TextEdit(first, stop, ""),
    )
    return _with_single(piece, group_edit([piece]))


def _with_single(piece: Rewrite, edit: TextEdit) -> Rewrite:
    from dataclasses import replace

    return replace(piece, single=edit)


def ungated_rewrite(
    module: cst.Module,
    line_node: cst.SimpleStatementLine,
    start: PositionLike,
    end: PositionLike,
    replacement: Sequence[cst.BaseSmallStatement],
    *,
    block: Tuple[int, int],
    index: int,
    limit: int,
    source: Optional[str] = None,
) -> Rewrite:
    """The replacement in place of a statement alone on its line, its trailing comment kept."""
    first, last = as_position(start), as_position(end)
    indent = _indent_of(module, first, source)
    then = _then(module, line_node, replacement, indent, limit)
    stop = _line_end(module, line_node, last, source)
    return Rewrite(
        block=block, index=index, start=first, end=stop, indent=indent, newline=module.default_newline,
        then=then, orig="", leading=(), gate=None, lazy_import=None,
        single=TextEdit(first, stop, then[len(indent):]),
    )


def deletion(edit: TextEdit, *, block: Tuple[int, int], index: int, newline: str) -> Rewrite:
    """A statement that goes away (``edit`` from :func:`fixers.removal.remove_statement`)."""
    return Rewrite(block=block, index=index, start=edit.start, end=edit.end, indent="", newline=newline,
                   then="", orig="", leading=(), gate=None, lazy_import=None, single=edit, delete=True)


def runs(rewrites: Iterable[Rewrite]) -> List[List[Rewrite]]:
    """Rewrites grouped into runs: same block, consecutive statements, same gate spelling and
    lazy import; everything else is a run of one.  Order: by position in the file."""
    ordered = sorted(rewrites, key=lambda r: (r.start, r.end))
    out: List[List[Rewrite]] = []
    for r in ordered:
        last = out[-1][-1] if out else None
        if (last is not None and r.groups and last.groups and r.block == last.block
                and r.index == last.index + 1 and r.gate == last.gate
                and r.lazy_import == last.lazy_import and r.indent == last.indent):
            out[-1].append(r)
        else:
            out.append([r])
    return out
