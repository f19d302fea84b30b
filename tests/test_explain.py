"""`lint-h2d explain PATH:LINE`: why H2D001 flags a write or not, from the analysis `check` runs."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

SOURCE = '''import torch


def f(n: int, device: torch.device, ids: torch.Tensor):
    buf = torch.zeros(n, device=device)
    buf[0] = 1
    host = torch.zeros(n)
    host[0] = 1
    grid = torch.zeros(n, n, device=device)
    grid[0] = 1
    buf[0] = ids
    buf[ids] = 1
    return buf, host, grid
'''


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SOURCE, encoding="utf-8")
    return tmp_path


def _explained(root: Path, *lines: int) -> str:
    result = run_cli("explain", *(f"pkg/m.py:{n}" for n in lines), cwd=root)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_flagged_write_shows_each_fact_and_its_evidence(tmp_path: Path) -> None:
    out = _explained(_project(tmp_path), 6)
    assert "pkg/m.py:6:5: `buf[0] = 1`" in out
    assert "destination `buf`: a tensor on the accelerator, rank 1" in out
    assert "pkg/m.py:5: allocated on `device` here" in out
    assert "indices: `0` int" in out
    assert "value `1`: a Python number" in out
    assert "H2D001: flagged" in out
    flagged = run_cli("check", "--no-cache", "--select", "H2D001", "--output-format", "concise", "pkg", cwd=tmp_path)
    assert [line.split(": ")[0] for line in flagged.stdout.splitlines() if "H2D001" in line] == ["pkg/m.py:6:5"]


def test_each_look_alike_names_the_check_that_fails(tmp_path: Path) -> None:
    root = _project(tmp_path)
    host, grid, tensor_value, index = (_explained(root, n) for n in (8, 10, 11, 12))
    assert "destination `host`: a CPU tensor, rank 1" in host
    assert "not flagged: the destination is not known to be a tensor on the accelerator" in host
    assert "rank 2" in grid and "not flagged: the indices are not known to select one element" in grid
    assert "value `ids`: a tensor whose place is not known" in tensor_value
    assert "not flagged: the value is not known to be a Python number" in tensor_value
    assert "`ids` advanced" in index and "not flagged: the indices" in index


def test_several_places_and_bad_ones(tmp_path: Path) -> None:
    """Each argument is explained; a bad one is named on stderr, exit 2, the others still run."""
    root = _project(tmp_path)
    result = run_cli("explain", "pkg/m.py:6", "pkg/missing.py:3", "pkg/m.py:x", "pkg/m.py:1", cwd=root)
    assert result.returncode == 2
    assert "H2D001: flagged" in result.stdout
    assert "pkg/m.py:1: no `t[...] = v` write on this line" in result.stdout
    assert "pkg/missing.py" in result.stderr and "expected PATH:LINE" in result.stderr
    (root / "pkg" / "bad.py").write_text("def f(:\n", encoding="utf-8")
    bad = run_cli("explain", "pkg/bad.py:1", cwd=root)
    assert bad.returncode == 2 and "pkg/bad.py" in bad.stderr


def test_a_file_alone_explains_every_write_in_it(tmp_path: Path) -> None:
    root = _project(tmp_path)
    out = run_cli("explain", "pkg/m.py", cwd=root)
    assert out.returncode == 0, out.stderr
    heads = [line.split(": `")[0] for line in out.stdout.splitlines() if line.startswith("pkg/m.py:")]
    assert heads == ["pkg/m.py:6:5", "pkg/m.py:8:5", "pkg/m.py:10:5", "pkg/m.py:11:5", "pkg/m.py:12:5"]
    assert out.stdout.count("H2D001: flagged") == 1
    (root / "pkg" / "none.py").write_text("x = [0]\n", encoding="utf-8")
    empty = run_cli("explain", "pkg/none.py", cwd=root)
    assert "pkg/none.py: no `t[...] = v` write in the file" in empty.stdout


def test_explain_needs_neither_pygls_nor_torch(tmp_path: Path) -> None:
    """`explain` is part of the linter, not of the editor server: it ran the server's module to
    plan the file's engine, which imports pygls (the `server` extra), so a plain install
    crashed on it."""
    import subprocess
    import sys

    root = _project(tmp_path)
    blocked = ("import sys\nfor name in ('lsprotocol', 'pygls', 'torch'):\n    sys.modules[name] = None\n"
               "from lint_h2d.cli import main\nsys.exit(main(['explain', 'pkg/m.py:6']))\n")
    result = subprocess.run([sys.executable, "-c", blocked], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "H2D001: flagged" in result.stdout


def test_a_form_feed_in_the_indentation_keeps_the_files_column(tmp_path: Path) -> None:
    """LibCST parses a view without indentation form feeds; the place printed is the file's,
    as `check` prints it."""
    root = _project(tmp_path)
    (root / "pkg" / "m.py").write_text(SOURCE.replace("    buf[0] = 1\n", "\x0c    buf[0] = 1\n"), encoding="utf-8")
    flagged = run_cli("check", "--no-cache", "--select", "H2D001", "--output-format", "concise", "pkg", cwd=root)
    (place,) = [line.split(": ")[0] for line in flagged.stdout.splitlines() if "H2D001" in line]
    assert place == "pkg/m.py:6:6"
    assert _explained(root, 6).startswith(f"{place}: `buf[0] = 1`")
