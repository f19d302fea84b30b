"""Small helpers over the source text (private to :mod:`fixers`).

Why: LibCST positions say where a node starts and ends, but not what surrounds it on the line
(indentation, trailing comment, the newline), and edits must account for exactly those bytes.
"""
from __future__ import annotations

from functools import lru_cache
from typing import List, Optional, Sequence, Union

import libcst as cst

from fixers.edits import line_offsets

#: A statement that can stand in a block (what ``Module.body``/``IndentedBlock.body`` hold).
Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]


class SourceLines:
    """A source text with its line starts, addressed like LibCST (lines 1-based)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.offsets: List[int] = line_offsets(source)

    @property
    def line_count(self) -> int:
        return len(self.offsets)

    def line_end(self, line: int) -> int:
        """Column where ``line``'s newline starts (its length without the newline)."""
        start = self.offsets[line - 1]
        stop = self.offsets[line] if line < len(self.offsets) else len(self.source)
        text = self.source[start:stop]
        return len(text.rstrip("\r\n"))

    def text(self, line: int) -> str:
        """The line without its newline."""
        start = self.offsets[line - 1]
        return self.source[start : start + self.line_end(line)]

    def has_newline(self, line: int) -> bool:
        return line < len(self.offsets)

    def is_blank(self, line: int) -> bool:
        return 1 <= line <= self.line_count and self.text(line).strip(" \t\f") == ""

    def indentation(self, line: int) -> str:
        text = self.text(line)
        return text[: len(text) - len(text.lstrip(" \t\f"))]


def source_of(module: cst.Module, source: Optional[str]) -> SourceLines:
    """The caller's source text, or the module's regenerated code (identical for a parsed module).

    Memoized on the text: a file with many findings asks for the same lines once per fix, and
    splitting a 50k-line file a thousand times made fixing quadratic.
    """
    return _lines(module.code if source is None else source)


@lru_cache(maxsize=4)
def _lines(source: str) -> SourceLines:
    return SourceLines(source)


def with_semicolon_dropped(node: cst.BaseSmallStatement) -> cst.BaseSmallStatement:
    return node.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)


def render_at_indent(module: cst.Module, nodes: Sequence[Statement], indent: str) -> str:
    """Code of ``nodes`` as if they stood in a block indented by ``indent``.

    The first line's indentation and the final newline are left out: edits start after the
    existing indentation and stop before the existing newline.  Rendering inside a real block
    (instead of prefixing lines afterwards) keeps multi-line strings intact while LibCST
    re-indents continuation lines, which it stores relative to the block.
    """
    unit = module.default_indent
    # A block indented with tabs in a file whose first indent is spaces (or the reverse)
    # nests with its own character, never a mix like `\t  `.
    if "\t" in indent and "\t" not in unit:
        unit = "\t"
    elif indent and "\t" not in indent and "\t" in unit:
        unit = "    "
    if indent:
        wrapper = cst.Module(
            body=[cst.If(test=cst.Name("_"), body=cst.IndentedBlock(body=list(nodes), indent=indent))],
            default_indent=unit,
            default_newline=module.default_newline,
        )
        header = "if _:" + module.default_newline
        code = wrapper.code
        assert code.startswith(header)
        code = code[len(header) :]
        if code.startswith(indent):  # not when the first line is an unindented comment
            code = code[len(indent) :]
    else:
        code = cst.Module(body=list(nodes), default_indent=unit, default_newline=module.default_newline).code
    newline = module.default_newline
    if code.endswith(newline):
        code = code[: -len(newline)]
    return code
