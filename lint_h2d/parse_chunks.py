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

CPython's own tree (:func:`parse_python`) is parsed in chunks for the same reason: for a
100k-line file ``compile(..., PyCF_ONLY_AST)`` peaks near 370 MB and its tree keeps 170 MB (a
node costs ~270 bytes, more than LibCST's), so the engine keeps it only as long as the
prefilter and the chunk plan need it (:class:`ChunkPlan`) and drops it before LibCST parses.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple, Union

from fixers.edits import line_offsets

if TYPE_CHECKING:  # imported where LibCST parses: `parse_python` serves the light project index
    import libcst as cst

# Below this many lines a file is parsed whole (splitting would gain nothing).
CHUNK_LINES = 4000
_LEADING = re.compile(r"[ \t\f]*")
# A line that may begin a top-level statement of its own: not indented, not a comment or blank
# line, not a clause that continues the compound statement above it.
_NOT_A_START = re.compile(r"[ \t\f#\r\n]|(?:else|elif|except|finally)\b|[)\]}]")


def _few_lines(text: str, chunk_lines: int) -> bool:
    """Certainly fewer than ``2 * chunk_lines`` lines (the files parsed whole), counted without
    building the line table: each line after the first starts after a ``\n`` or a ``\r``, so
    their counts bound ``len(line_offsets(text))`` from above (most files: two ``count``s
    instead of a regex pass and a list)."""
    return 1 + text.count("\n") + text.count("\r") < 2 * chunk_lines


def parsed_whole(text: str) -> bool:
    """Whether :func:`parse_module_in_chunks` certainly parses ``text`` in one piece (fewer than
    ``2 * CHUNK_LINES`` lines): the engine's stubbed first pass (`parse_units.py`) is for such
    files only, so a long file's LibCST parse stays chunked and its CPython tree is gone first."""
    return _few_lines(text, CHUNK_LINES)


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


@dataclass(frozen=True)
class ChunkPlan:
    """Where LibCST's parse of a text is cut, and the file's first indentation: all that
    :func:`parse_module_in_chunks` needs of CPython's tree, so the tree can go first."""

    cuts: Tuple[int, ...]
    indent: Optional[str]


def chunk_plan(text: str, tree: ast.Module, chunk_lines: int = CHUNK_LINES) -> Optional[ChunkPlan]:
    """The plan for ``text`` (``tree``: CPython's tree of it), or None when it is parsed whole."""
    if _few_lines(text, chunk_lines):
        return None
    offsets = line_offsets(text)
    if len(offsets) < 2 * chunk_lines:
        return None
    cuts = split_lines_at(tree, chunk_lines)
    if not cuts:
        return None
    lines = [text[a:b] for a, b in zip(offsets, offsets[1:] + [len(text)])]
    return ChunkPlan(tuple(cuts), first_indent(tree, lines))


def parse_module_in_chunks(text: str, tree: Optional[ast.Module] = None,
                           chunk_lines: int = CHUNK_LINES, plan: Optional[ChunkPlan] = None) -> cst.Module:
    """``cst.parse_module(text)``, with a bounded peak of memory for a large ``text``.

    ``plan``: :func:`chunk_plan` made by a caller that had CPython's tree (the engine, which
    drops the tree before calling: it is larger than LibCST's).  Else ``tree``, CPython's tree
    of ``text`` when the caller has it; parsed here (in chunks) otherwise.
    """
    import libcst as cst

    if _few_lines(text, chunk_lines):
        return cst.parse_module(text)
    offsets = line_offsets(text)
    if len(offsets) < 2 * chunk_lines:
        return cst.parse_module(text)
    if plan is None:
        if tree is None:
            try:
                tree = parse_python(text, chunk_lines=chunk_lines)
            except (SyntaxError, ValueError, MemoryError):
                return cst.parse_module(text)
        plan = chunk_plan(text, tree, chunk_lines)
        del tree
        if plan is None:
            return cst.parse_module(text)
    cuts = plan.cuts
    starts = [0] + [offsets[line - 1] for line in cuts] + [len(text)]
    first = cst.parse_module(text[: starts[1]])
    newline = first.default_newline
    indent = plan.indent or first.default_indent
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


def _compile(text: str, filename: str) -> ast.Module:
    tree = compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    assert isinstance(tree, ast.Module)
    return tree


def python_cuts(text: str, offsets: Sequence[int], chunk_lines: int) -> List[int]:
    """Lines (1-based) where a chunk of CPython's parse may start: not indented, not blank, not a
    comment, not an ``else``/``elif``/``except``/``finally`` clause or a closing bracket, each at
    least ``chunk_lines`` after the previous one.  A guess (such a line can sit in a string or
    after a backslash): :func:`parse_python` proves it by parsing."""
    cuts: List[int] = []
    line = 1 + chunk_lines
    while line + chunk_lines <= len(offsets):  # a last chunk of at least chunk_lines lines
        start = offsets[line - 1]
        if start < len(text) and not _NOT_A_START.match(text, start):
            cuts.append(line)
            line += chunk_lines
        else:
            line += 1
    return cuts


def parse_python(text: str, filename: str = "<unknown>", chunk_lines: int = CHUNK_LINES) -> ast.Module:
    """``compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)``: the same tree
    (every node, line and column) and the same ``SyntaxError``, with the peak of one chunk.

    Why the chunks are the whole parse: each chunk starts at a line of :func:`python_cuts` and
    the chunks before it parsed, so the text before the cut is complete statements (a cut inside
    a string, a bracket, a backslash continuation, a decorator or a block header leaves the
    previous chunk unparseable).  The tokenizer is then at depth 0 with no indentation, exactly
    as at the start of a file, and CPython's grammar at the top level is a sequence of
    statements: the file's statements are the chunks' statements, lines shifted.  Any chunk
    that does not parse, or that warns (a warning names a line), and the whole text is parsed as
    before, so errors and warnings are CPython's own.
    """
    if _few_lines(text, chunk_lines):
        return _compile(text, filename)
    offsets = line_offsets(text)
    if len(offsets) < 2 * chunk_lines:
        return _compile(text, filename)
    cuts = python_cuts(text, offsets, chunk_lines)
    if not cuts:
        return _compile(text, filename)
    starts = [0] + [offsets[line - 1] for line in cuts] + [len(text)]
    firsts = [1] + cuts
    body: List[ast.stmt] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for first, a, b in zip(firsts, starts, starts[1:]):
                # Blank lines in front give CPython's line numbers (cheaper than shifting them).
                part = _compile("\n" * (first - 1) + text[a:b], filename)
                if caught:
                    break
                body.extend(part.body)
    except (SyntaxError, ValueError):
        return _compile(text, filename)
    if caught:
        del body
        return _compile(text, filename)
    return ast.Module(body=body, type_ignores=[])
