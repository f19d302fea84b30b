from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite tests/fixtures/*.snap and *.out.py from the current output",
    )


@pytest.fixture
def resolves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of `project.resolve` (each resolves the whole project): what a run
    that reuses stored resolved facts must not make (tests of the project index)."""
    from lint_h2d.inference import project

    calls: list[int] = []
    real = project.resolve

    def counted(summaries: Any) -> Any:
        calls.append(len(summaries))
        return real(summaries)

    monkeypatch.setattr(project, "resolve", counted)
    return calls


@pytest.fixture
def update_snapshots(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-snapshots"))


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `python -m lint_h2d` as a user would (a real process, real exit code)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "lint_h2d", *args],
        cwd=str(cwd or REPO), input=stdin, capture_output=True, text=True, env=full_env, timeout=600,
    )


# -- skips in CI -------------------------------------------------------------------------------
# CI has no GPU but has network, so the only acceptable skips there are the GPU/ROCm tests: any
# other skip (a corpus that could not be fetched, a missing tool) means the run checked less
# than it claims, and fails the session when `CI` is set.
_ALLOWED_SKIP_MARKERS = ("gpu", "rocm")
_unexpected_skips: list = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    if any(marker in report.keywords for marker in _ALLOWED_SKIP_MARKERS):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    _unexpected_skips.append((report.nodeid, reason))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("CI") and _unexpected_skips and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter: "pytest.TerminalReporter") -> None:
    if os.environ.get("CI") and _unexpected_skips:
        terminalreporter.section("skips not allowed in CI (only gpu/rocm tests may skip)")
        for nodeid, reason in _unexpected_skips:
            terminalreporter.write_line(f"{nodeid}: {reason}")
