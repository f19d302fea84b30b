"""Every rule fixture `tests/fixtures/<CODE>*.py` against its snapshot `<name>.snap`.

The snapshot holds one line per finding (row, column, code, fix applicability, message).
A second check ties the fixture's own `# error` markers to the rows found, so a snapshot
cannot silently drift from what the fixture says it tests.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import List

import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.findings import Finding
from lint_h2d.inference.project import collect
from tests.conftest import FIXTURES
from tests.snapshots import compare

CASES = sorted(
    p for p in FIXTURES.glob("H2D*.py") if not p.name.endswith((".in.py", ".out.py"))
)


def snapshot_line(f: Finding) -> str:
    fix = "no fix" if f.fix is None else f"{f.fix.applicability.value} fix: {f.fix.message}"
    if f.fix is None and f.no_fix_reason:
        fix += f" ({f.no_fix_reason})"
    return f"{f.location.row}:{f.location.column}: {f.code} {f.message} [{fix}]"


def analyze(path: Path, prefilter: bool = True) -> List[Finding]:
    text = path.read_text(encoding="utf-8")
    engine = Engine(Settings(root=FIXTURES), collect([text]), use_prefilter=prefilter)
    return engine.analyze(str(path), text)


@pytest.mark.parametrize("fixture", CASES, ids=lambda p: p.name)
def test_fixture_matches_snapshot(fixture: Path, update_snapshots: bool) -> None:
    findings = analyze(fixture)
    compare("".join(snapshot_line(f) + "\n" for f in findings),
            fixture.with_suffix(".py.snap"), update_snapshots)


@pytest.mark.parametrize("fixture", CASES, ids=lambda p: p.name)
def test_error_markers_match_findings(fixture: Path) -> None:
    code = fixture.name[:6]
    marked = [
        i for i, line in enumerate(fixture.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"#.*\berror\b", line) and not line.lstrip().startswith("#")
    ]
    found = sorted({f.noqa_row or f.location.row for f in analyze(fixture) if f.code == code})
    # A marker sits on the statement's last line for multi-line statements.
    def row_of_marker(row: int, findings_rows: List[int]) -> bool:
        return row in findings_rows or any(r < row <= r + 3 for r in findings_rows)

    assert all(row_of_marker(r, found) for r in marked), f"marked but not found: {[r for r in marked if not row_of_marker(r, found)]}"
    assert len(found) == len(marked), f"found rows {found}, marked rows {marked}"


@pytest.mark.parametrize("fixture", CASES, ids=lambda p: p.name)
def test_prefilter_changes_nothing(fixture: Path) -> None:
    assert analyze(fixture, prefilter=True) == analyze(fixture, prefilter=False)
