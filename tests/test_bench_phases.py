"""`bench/phases.py`, the cold scan's per-phase profile: it runs the pipeline's phases over a
project and finds what a scan finds (its figures are CPU times: not asserted)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _phases():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_phases", REPO / "bench" / "phases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_phase_runs_and_the_findings_are_the_scans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (tmp_path / "writer.py").write_text(
        "import torch\n\n\ndef step(n: int) -> None:\n"
        "    buf = torch.zeros(n, device='cuda')\n    buf[0] = 1\n    lens = [0] * n\n    lens[0] = 1\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    import gc

    assert gc.isenabled()
    assert _phases().main([str(tmp_path), "--profile", "summaries", "--top", "5"]) == 0
    assert gc.isenabled()  # the phases run with the collector off; the caller gets it back
    out = capsys.readouterr().out
    # One finding in writer.py, and the syntax error of broken.py (the analysis reports it).
    assert f"{tmp_path}: 2 files, 2 findings" in out
    for phase in ("parse", "summaries", "cycles", "resolve", "analysis", "LibCST parse", "walk"):
        assert f"  {phase} " in out
    assert "function calls" in out  # the profile of the phase asked for
