"""The README's two first commands and `.ci/run` stay in step (CI must run the README's test
command), and the scan command finds something in the example tree it names."""
from __future__ import annotations

import re

from tests.conftest import REPO, run_cli


def _commands() -> list:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text, re.S)[:2]


def test_ci_runs_the_readme_test_command() -> None:
    scan, tests = _commands()
    assert scan.startswith("pip install . && lint-h2d check ")
    assert tests.startswith("pip install torch==2.13.0 && ")  # the CPU build first
    assert tests in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_scan_command_prints_findings() -> None:
    scan, _ = _commands()
    target = scan.split("lint-h2d check ", 1)[1].split()
    result = run_cli("check", "--no-cache", "--output-format", "concise", *target)
    assert result.returncode == 1, result.stdout + result.stderr
    codes = {line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": H2D" in line}
    assert codes == {"H2D001", "H2D002"}
