"""`# noqa` with ruff's semantics: bare `# noqa` silences everything on the line,
`# noqa: H2D001, H2D002` only those codes (prefixes of codes are not accepted, as in ruff)."""
from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional

from fixers.edits import split_lines
from lint_h2d.findings import Finding

#: a `# noqa` comment, bare or with codes (shared with `add-noqa` and the language server).
NOQA = re.compile(
    r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Z][A-Z0-9]*[0-9](?:[\s,]+[A-Z][A-Z0-9]*[0-9])*))?", re.IGNORECASE
)
ALL = frozenset({"*"})
GPU_SYNC_OK = "gpu-sync-ok"
GPU_SYNC_OK_CODES = frozenset({"H2D003"})


def noqa_lines(text: str) -> Dict[int, FrozenSet[str]]:
    """Row (1-based) → codes suppressed there (`{"*"}` for a bare noqa).

    Found by a plain text search; a `# noqa` inside a string literal also counts, which is
    what ruff does too and errs on the side of silence.
    """
    out: Dict[int, FrozenSet[str]] = {}
    if GPU_SYNC_OK in text:
        # vLLM's `# gpu-sync-ok: <reason>` (tools/pre_commit/check_gpu_sync_patterns.py)
        # silences H2D003 on the statement, as it silences vLLM's own check.
        # Rows as Python and LibCST count them (`splitlines` also splits on form feeds).
        for row, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
            if GPU_SYNC_OK in line:
                out[row] = GPU_SYNC_OK_CODES
    if "noqa" not in text and "NOQA" not in text.upper():
        return out
    for row, line in enumerate(split_lines(text), start=1):
        if "#" not in line:
            continue
        m = NOQA.search(line)
        if m is None:
            continue
        codes = m.group("codes")
        if codes is None:
            out[row] = ALL
        else:
            found = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)
            out[row] = found | out.get(row, frozenset())
    return out


def is_suppressed(finding: Finding, noqa: Dict[int, FrozenSet[str]]) -> bool:
    if not noqa:
        return False
    first = finding.noqa_row or finding.location.row
    last = statement_end(finding) or finding.end_location.row
    for row in range(first, max(first, last) + 1):
        codes = noqa.get(row)
        if codes is not None and (codes is ALL or "*" in codes or finding.code in codes):
            return True
    return False


def statement_end(finding: Finding) -> Optional[int]:
    """The last row of the finding's statement, when the rule recorded it: a `# noqa` for a
    multi-line statement goes there (`add-noqa`, the editor's "suppress" action), because that
    is where ruff and this module look for it."""
    for key, value in finding.details:
        if key == "statement_end_row":
            return int(value)
    return None
