"""In CI only the GPU/ROCm tests may skip: any other skip fails the session (tests/conftest.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SUITE = '''
import pytest

@pytest.mark.gpu
def test_needs_gpu():
    pytest.skip("no GPU")

def test_ok():
    pass
'''


def _run(tmp_path: Path, extra: str, ci: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_sample.py").write_text(SUITE + extra)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    gpu: gpu\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("CI", None)
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


def test_gpu_skips_pass_in_ci(tmp_path: Path) -> None:
    assert _run(tmp_path, "", ci=True).returncode == 0


def test_other_skips_fail_in_ci_only(tmp_path: Path) -> None:
    extra = '\ndef test_corpus():\n    pytest.skip("cannot download vllm==0.33.0")\n'
    ci = _run(tmp_path, extra, ci=True)
    assert ci.returncode == 1, ci.stdout
    assert "skips not allowed in CI" in ci.stdout and "test_corpus" in ci.stdout
    assert _run(tmp_path, extra, ci=False).returncode == 0
