"""`path:row:col: CODE message`, the source line with a caret, the evidence as notes, and the
fix as a hint."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Sequence

from lint_h2d.findings import Applicability, EvidenceKind, EvidenceStep, Finding
from lint_h2d.report.concise import line_for
from lint_h2d.report.paths import display_path

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
        out.extend(evidence_lines(f))
        if ctx.show_fix_hints:
            if f.fix is not None:
                kind = "safe fix" if f.fix.applicability == Applicability.SAFE else "unsafe fix (--unsafe-fixes)"
                out.append(f"  help: {f.fix.message} [{kind}]")
            elif f.no_fix_reason:
                out.append(f"  note: no fix: {f.no_fix_reason}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def step_location(step: EvidenceStep, finding_path: str) -> str:
    """`path:row:col` with what is known (a step without a path is in the finding's file;
    one without a row, such as a configured hint, has no location)."""
    if step.row is None:
        return "" if step.path is None else display_path(step.path)
    where = f"{display_path(step.path if step.path is not None else finding_path)}:{step.row}"
    return where if step.column is None else f"{where}:{step.column}"


def evidence_lines(finding: Finding) -> List[str]:
    """The chain that convinced the rule, in order, one numbered note per step; a step that
    is not direct evidence says what it rests on (`[convention]`, `[hint]`)."""
    if not finding.evidence:
        return []
    out = ["  note: evidence:"]
    for number, step in enumerate(finding.evidence, 1):
        where = step_location(step, finding.path)
        kind = "" if step.kind == EvidenceKind.DIRECT else f" [{step.kind.value}]"
        message = re.sub(r"\s*[\r\n]+\s*", " ", step.message)  # one line per step
        out.append(f"    {number}. {where + ': ' if where else ''}{message}{kind}")
    return out
