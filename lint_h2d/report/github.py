"""GitHub Actions workflow commands: one `::error ...::message` line per finding.

GitHub turns these into annotations on the pull request's diff.  Escaping follows
@actions/core: data escapes `%`, `\\r`, `\\n`; property values also escape `:` and `,`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from lint_h2d.findings import Finding
from lint_h2d.report.paths import display_path

if TYPE_CHECKING:
    from lint_h2d.report import ReportContext


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def line_for(finding: Finding) -> str:
    path = display_path(finding.path)
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in (
            ("file", path),
            ("line", finding.location.row),
            ("col", finding.location.column),
            ("endLine", finding.end_location.row),
            ("endColumn", finding.end_location.column),
            ("title", f"lint-h2d ({finding.code})"),
        )
    )
    message = f"{path}:{finding.location.row}:{finding.location.column}: {finding.code} {finding.message}"
    return f"::error {props}::{escape_data(message)}"


def render(findings: Sequence[Finding], ctx: "ReportContext") -> str:
    return "".join(line_for(f) + "\n" for f in findings)
