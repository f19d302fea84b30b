"""`path:row:col: CODE message`, the source line with a caret, and the fix as a hint."""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Sequence

from lint_h2d.findings import Applicability, Finding
from lint_h2d.report.concise import line_for

if TYPE_CHECKING:
    from lint_h2d.report import ReportContext


def render(findings: Sequence[Finding], ctx: "ReportContext") -> str:
    out: List[str] = []
    for f in findings:
        out.append(line_for(f, ctx.unsafe_fixes))  # the concise line heads each entry
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
