"""Adding `# noqa: CODE` comments: how a large repository adopts the linter (ruff's `--add-noqa`).

One edit per line: the codes of every finding whose statement ends on that line are merged
into the line's existing `# noqa: ...` list, or appended as a new comment at the end of the
statement's last line (a comment on any line of a statement suppresses it, see
`suppression.py`; the last line is the one a comment can always be added to: the first may
end inside a bracket or with a backslash).  A bare `# noqa` already silences everything, so
such a line gets no edit.  Applying the edits twice changes nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set

from fixers.edits import TextEdit, line_offsets
from lint_h2d.findings import Finding
from lint_h2d.suppression import NOQA, statement_end

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class NoqaEdit:
    """The edit for one line and the codes it adds there."""

    row: int
    codes: tuple[str, ...]
    edit: TextEdit


def _line(text: str, offsets: Sequence[int], row: int) -> str:
    start = offsets[row - 1]
    end = offsets[row] if row < len(offsets) else len(text)
    return _LINE_END.sub("", text[start:end])


def _comment_start(line: str) -> Optional[int]:
    """Column of the `#` that starts the line's comment, or None (tokenizer-exact)."""
    if "#" not in line:
        return None
    import io
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return token.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # The line alone is not complete Python (it ends a multi-line string or bracket):
        # only a `#` after the last quote can start a comment.
        last_quote = max(line.rfind('"'), line.rfind("'"))
        hash_at = line.find("#", last_quote + 1)
        return hash_at if hash_at >= 0 else None
    return None


def line_edit(text: str, row: int, codes: Iterable[str]) -> Optional[NoqaEdit]:
    """The edit that makes `row` suppress `codes` (None when it already does)."""
    offsets = line_offsets(text)
    if not 1 <= row <= len(offsets):
        return None
    line = _line(text, offsets, row)
    wanted = sorted({c.upper() for c in codes})
    end = (row, len(line))
    comment_at = _comment_start(line)
    match = NOQA.search(line, comment_at) if comment_at is not None else None
    if match is not None:
        if match.group("codes") is None:
            return None  # a bare noqa silences every code already
        present = [c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if c]
        missing = [c for c in wanted if c not in present]
        if not missing:
            return None
        merged = ", ".join(present + missing)
        start = (row, match.start())
        stop = (row, match.end())
        return NoqaEdit(row, tuple(missing), TextEdit(start, stop, f"# noqa: {merged}"))
    stripped = len(line.rstrip(" \t"))
    separator = "  " if stripped else ""
    return NoqaEdit(row, tuple(wanted),
                    TextEdit((row, stripped), end, f"{separator}# noqa: {', '.join(wanted)}"))


def noqa_edits(text: str, findings: Sequence[Finding]) -> List[NoqaEdit]:
    """One edit per line that needs one, for every finding that has a rule code."""
    by_row: Dict[int, Set[str]] = {}
    for finding in findings:
        row = statement_end(finding) or finding.end_location.row
        by_row.setdefault(row, set()).add(finding.code)
    out: List[NoqaEdit] = []
    for row in sorted(by_row):
        edit = line_edit(text, row, by_row[row])
        if edit is not None:
            out.append(edit)
    return out
