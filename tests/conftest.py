from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
