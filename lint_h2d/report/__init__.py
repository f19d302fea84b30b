"""Output formats: each module renders a list of findings to text, knowing nothing of rules."""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence

from fixers.edits import split_lines
from lint_h2d.findings import Finding
from lint_h2d.report import concise, full, github, json_format, json_lines, sarif

Renderer = Callable[[Sequence[Finding], "ReportContext"], str]


class ReportContext:
    """What a renderer may need besides findings: source lines, whether fixes are shown."""

    def __init__(self, sources: Dict[str, str], show_fix_hints: bool = True, unsafe_fixes: bool = False) -> None:
        self.sources = sources
        self.show_fix_hints = show_fix_hints
        self.unsafe_fixes = unsafe_fixes

    def line(self, path: str, row: int) -> str:
        text = self.sources.get(path)
        if text is None:
            return ""
        lines = split_lines(text)
        return lines[row - 1] if 0 < row <= len(lines) else ""


FORMATS: Dict[str, Renderer] = {
    "full": full.render,
    "concise": concise.render,
    "json": json_format.render,
    "json-lines": json_lines.render,
    "github": github.render,
    "sarif": sarif.render,
}


def names() -> List[str]:
    return list(FORMATS)
