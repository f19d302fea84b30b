"""`path:row:col: CODE message`, the source line with a caret, and the fix as a hint."""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Sequence

from lint_h2d.findings import Applicability, Finding
from lint_h2d.report.paths import display_path

if TYPE_CHECKING:
    from lint_h2d.report import ReportContext


def render(findings: Sequence[Finding], ctx: "ReportContext") -> str:
    out: List[str] = []
    for f in findings:
        fixable = " [*]" if f.fix is not None and (
            f.fix.applicability == Applicability.SAFE or ctx.unsafe_fixes
        ) else ""
        out.append(f"{display_path(f.path)}:{f.location.row}:{f.location.column}: {f.code}{fixable} {f.message}")
        source = ctx.line(f.path, f.location.row)
        if source:
            gutter = f"{f.location.row} | "
            out.append(gutter + source.expandtabs(4))
            start = len(source[: f.location.column - 1].expandtabs(4))
            if f.end_location.row == f.location.row:
                width = max(1, len(source[: f.end_location.column - 1].expandtabs(4)) - start)
            else:
                width = max(1, len(source.expandtabs(4)) - start)
            out.append(" " * len(gutter) + " " * start + "^" * width)
        if ctx.show_fix_hints:
            if f.fix is not None:
                kind = "safe fix" if f.fix.applicability == Applicability.SAFE else "unsafe fix (--unsafe-fixes)"
                out.append(f"  help: {f.fix.message} [{kind}]")
            elif f.no_fix_reason:
                out.append(f"  note: no fix: {f.no_fix_reason}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
