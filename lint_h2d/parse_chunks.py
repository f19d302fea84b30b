"""LibCST's tree of a large module, parsed a few thousand lines at a time.

Why: LibCST's native parser holds its tokens and an intermediate tree for the whole text while
it builds the Python nodes: about 11 MB per 1,000 lines at its peak, so a 100k-line file took
over 1 GB to parse, although the finished tree needs about a tenth of that.  Parsed in chunks,
the peak is one chunk's.

The result is the tree ``cst.parse_module(text)`` gives (``deep_equals``, and the module's
``default_indent``, ``default_newline``, ``encoding`` and trailing newline), because chunks are
cut only where nothing can tell the difference:

* at a line where a top-level statement begins (its first decorator, for a decorated one),
  right after the line where the previous top-level statement ends: no blank or comment line
  between them (those belong to a neighbour's ``leading_lines``, a block's ``footer`` or the
  module's ``header``/``footer``, depending on what surrounds them), and no ``;`` joining them;
* every chunk after the first is parsed behind a two-line prefix (``if 1:`` and an indented
  ``pass``, written with the file's own newline and first indentation) and the prefix's
  statement is dropped: LibCST stores an indentation or newline only where it differs from the
  module's detected default, so each chunk must detect the defaults the whole file has.

Anything unexpected (a syntax error, a file too small to split) parses the whole text as
before, so errors are reported exactly as LibCST reports them.
"""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Sequence, Tuple, Union

import libcst as cst

from fixers.edits import line_offsets

# Below this many lines a file is parsed whole (splitting would gain nothing).
CHUNK_LINES = 4000
_LEADING = re.compile(r"[ \t\f]*")


def _statement_lines(tree: ast.Module) -> List[Tuple[int, int]]:
    """(first line, last line) of every top-level statement, decorators included."""
    out = []
    for node in tree.body:
        first = node.lineno
        for decorator in getattr(node, "decorator_list", ()):
            first = min(first, decorator.lineno)
        end = node.end_lineno if node.end_lineno is not None else node.lineno
        out.append((first, end))
    return out


def split_lines_at(tree: ast.Module, chunk_lines: int) -> List[int]:
    """The lines (1-based) where a new chunk starts: clean boundaries (see the module doc),
    the first one at least ``chunk_lines`` lines after the previous cut."""
    spans = _statement_lines(tree)
    cuts: List[int] = []
    last = 1
    for (_, previous_end), (first, _) in zip(spans, spans[1:]):
        if first == previous_end + 1 and first - last >= chunk_lines:
            cuts.append(first)
            last = first
    return cuts


def first_indent(tree: ast.Module, lines: Sequence[str]) -> Optional[str]:
    """The whitespace of the file's first indented statement line (LibCST's ``default_indent``:
    the first INDENT token), or None when nothing is indented."""
    best: Optional[Tuple[int, str]] = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.col_offset == 0:
            continue
        if best is not None and node.lineno >= best[0]:
            continue
        text = lines[node.lineno - 1]
        leading = _LEADING.match(text)
        assert leading is not None
        # First on its line (not after `;` or in a one-line suite): then it opened a block.
        if leading.end() > 0 and len(text[: leading.end()].encode("utf-8")) == node.col_offset:
            best = (node.lineno, leading.group())
    return best[1] if best is not None else None


def parse_module_in_chunks(text: str, tree: Optional[ast.Module] = None,
                           chunk_lines: int = CHUNK_LINES) -> cst.Module:
    """``cst.parse_module(text)``, with a bounded peak of memory for a large ``text``.

    ``tree``: CPython's tree of ``text`` when the caller has it (the engine parses every file
    with ``ast`` first); parsed here otherwise.
    """
    offsets = line_offsets(text)
    if len(offsets) < 2 * chunk_lines:
        return cst.parse_module(text)
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return cst.parse_module(text)
    cuts = split_lines_at(tree, chunk_lines)
    if not cuts:
        return cst.parse_module(text)
    starts = [0] + [offsets[line - 1] for line in cuts] + [len(text)]
    first = cst.parse_module(text[: starts[1]])
    newline = first.default_newline
    lines = [text[a:b] for a, b in zip(offsets, offsets[1:] + [len(text)])]
    indent = first_indent(tree, lines) or first.default_indent
    del lines
    prefix = f"if 1:{newline}{indent}pass{newline}"
    body: List[Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]] = list(first.body)
    last = first
    try:
        for a, b in zip(starts[1:], starts[2:]):
            chunk = cst.parse_module(prefix + text[a:b])
            if (chunk.header or len(chunk.body) < 2 or not isinstance(chunk.body[0], cst.If)
                    or chunk.default_indent != indent or chunk.default_newline != newline
                    or (last is not first and last.footer)):
                return cst.parse_module(text)  # not the boundary this module assumes
            body.extend(chunk.body[1:])
            last = chunk
    except cst.ParserSyntaxError:
        return cst.parse_module(text)
    if first.footer:
        return cst.parse_module(text)
    return cst.Module(
        body=body, header=first.header, footer=last.footer, encoding=first.encoding,
        default_indent=indent,
        default_newline=newline, has_trailing_newline=last.has_trailing_newline,
    )
