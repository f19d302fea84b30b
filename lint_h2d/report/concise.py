from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from lint_h2d.findings import Finding
from lint_h2d.report.paths import display_path

if TYPE_CHECKING:
    from lint_h2d.report import ReportContext


def line_for(finding: Finding, unsafe_fixes: bool = False) -> str:
    """`[*]` marks a finding that `--fix` would fix with the flags given (ruff's meaning)."""
    fixable = " [*]" if finding.fix_applies(unsafe_fixes) else ""
    return (
        f"{display_path(finding.path)}:{finding.location.row}:{finding.location.column}: "
        f"{finding.code}{fixable} {finding.message}"
    )


def render(findings: Sequence[Finding], ctx: "ReportContext") -> str:
    return "".join(line_for(f, ctx.unsafe_fixes) + "\n" for f in findings)
