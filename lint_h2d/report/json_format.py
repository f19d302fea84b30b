"""A JSON list with ruff's field names, so editors and scripts that read ruff's JSON read ours."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Sequence

from lint_h2d.findings import Finding
from lint_h2d.report.paths import printable
from lint_h2d.serialize import finding_to_dict

if TYPE_CHECKING:
    from lint_h2d.report import ReportContext


def render(findings: Sequence[Finding], ctx: "ReportContext") -> str:
    """``json.dumps([...], indent=2)``, byte for byte, one finding's dict at a time: the dicts of
    10,000 findings were 30 MB at once (JSON strings hold no raw line break, so indenting each
    entry's lines by two spaces is what the list's indentation does)."""
    if not findings:
        return "[]\n"
    return "[\n" + ",\n".join("  " + json.dumps(_entry(f), indent=2).replace("\n", "\n  ")
                               for f in findings) + "\n]\n"


def _entry(finding: Finding) -> Dict[str, Any]:
    data = finding_to_dict(finding)
    data["filename"] = printable(data["filename"])  # strict JSON: no lone surrogates
    return data
