"""Text edits on a call's arguments: append a keyword, drop one, keep every other byte.

Why text edits rather than regenerating the call with LibCST: a detached node renders the
continuation lines of a multi-line call without their indentation, and comments between
arguments must stay where the author put them.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodeRange

from fixers.edits import TextEdit, line_offsets, to_offset

Positions = Callable[[cst.CSTNode], CodeRange]


def _lines(source: str) -> List[str]:
    """Lines as LibCST counts them (`str.splitlines` would also split on form feeds, ...)."""
    offsets = line_offsets(source) + [len(source)]
    return [source[a:b] for a, b in zip(offsets, offsets[1:])]


def keyword_insertion(call: cst.Call, keyword: str, position: Positions, source: str) -> Optional[TextEdit]:
    """The edit that appends `keyword` (`name=value` text) to `call`'s arguments.

    One argument per line (a trailing comma before a closing parenthesis on its own line):
    a new line at the arguments' indentation.  Otherwise `, name=value` after the last
    argument (after a trailing comma: ` name=value,`; a comment stays after it).  None when
    the call has no argument or its own parentheses around it.
    """
    if not call.args or call.rpar:
        return None
    last = call.args[-1]
    if isinstance(last.comma, cst.Comma):
        comma = position(last.comma)
        end = position(call).end
        lines = _lines(source)
        if len(lines) < end.line:
            return None
        closing_line = lines[end.line - 1]
        if comma.end.line < end.line and closing_line[: end.column - 1].strip() == "":
            arg_line = lines[position(last).start.line - 1]
            indent = arg_line[: len(arg_line) - len(arg_line.lstrip(" \t"))]
            return TextEdit((end.line, 0), (end.line, 0), f"{indent}{keyword},\n")
        # The trailing comma stays trailing: two insertions at one point still parse.
        return TextEdit((comma.end.line, comma.end.column), (comma.end.line, comma.end.column),
                        f" {keyword},")
    where = position(last.value).end
    return TextEdit((where.line, where.column), (where.line, where.column), f", {keyword}")


def argument_removal(call: cst.Call, arg: cst.Arg, position: Positions) -> Optional[TextEdit]:
    """The edit that removes `arg` from `call`: up to the next argument, or for the last one
    from the previous argument's comma.  None when `arg` is the only argument."""
    args = list(call.args)
    index = next((i for i, a in enumerate(args) if a is arg), None)
    if index is None or len(args) < 2:
        return None
    start = position(arg).start
    if index + 1 < len(args):
        end = position(args[index + 1]).start
        return TextEdit((start.line, start.column), (end.line, end.column), "")
    previous = args[index - 1]
    if not isinstance(previous.comma, cst.Comma):
        return None
    begin = position(previous.comma).start
    stop = position(arg.comma).start if isinstance(arg.comma, cst.Comma) else position(arg).end
    return TextEdit((begin.line, begin.column), (stop.line, stop.column), "")


def rewrite_segment(source: str, start: Tuple[int, int], end: Tuple[int, int],
                    edits: Sequence[TextEdit]) -> Optional[str]:
    """The text between `start` and `end` with the `edits` inside it applied (the verifier's
    before/after pair of an expression).  None when an edit reaches outside the segment."""
    offsets = line_offsets(source)
    lo, hi = to_offset(offsets, start), to_offset(offsets, end)
    inside = []
    for edit in sorted(edits):
        a, b = to_offset(offsets, edit.start), to_offset(offsets, edit.end)
        if not (lo <= a <= b <= hi):
            continue
        inside.append((a - lo, b - lo, edit.text))
    segment = source[lo:hi]
    out, cursor = [], 0
    for a, b, text in inside:
        if a < cursor:
            return None
        out.append(segment[cursor:a])
        out.append(text)
        cursor = b
    out.append(segment[cursor:])
    return "".join(out)
