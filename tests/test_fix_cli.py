"""`check --fix`, `fix`, `--diff`, `--unsafe-fixes`, `--exit-non-zero-on-fix`, `--show-fixes`,
and the configurable gate, through the real command line."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.test_cli import FLAGGED, write

# `n: int`: an annotated int index (an un-annotated one could be an index tensor: no finding).
UNSAFE = FLAGGED.replace("cu[0] = 0", "cu[n] = 0").replace("def build(n, device)", "def build(n: int, device)")


def test_fix_writes_and_second_run_is_clean(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", FLAGGED)
    os.chmod(path, 0o640)
    result = run_cli("check", "--fix", "--no-cache", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "Found 1 error (1 fixed, 0 remaining)." in result.stdout
    text = path.read_text()
    assert "    if torch.version.hip is not None:\n        cu[0].zero_()\n    else:\n        cu[0] = 0\n" in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    again = run_cli("fix", "--no-cache", "a.py", cwd=tmp_path)
    assert again.returncode == 0 and path.read_text() == text
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".lint-h2d-")], "temp file left behind"


def test_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", FLAGGED)
    result = run_cli("check", "--diff", "--no-cache", "a.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a.py\n+++ a.py\n")
    assert "+    if torch.version.hip is not None:" in result.stdout
    assert path.read_text() == FLAGGED
    clean = write(tmp_path, "b.py", "x = 1\n")
    assert run_cli("check", "--diff", "--no-cache", str(clean), cwd=tmp_path).returncode == 0


def test_unsafe_fixes_need_the_flag(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", UNSAFE)
    result = run_cli("check", "--fix", "--no-cache", "a.py", cwd=tmp_path)
    assert result.returncode == 1 and path.read_text() == UNSAFE
    assert "hidden fixes can be enabled with the `--unsafe-fixes` option" in result.stdout
    result = run_cli("check", "--fix", "--unsafe-fixes", "--no-cache", "a.py", cwd=tmp_path)
    assert result.returncode == 0
    assert "cu.select(0, n).zero_()" in path.read_text()


def test_exit_non_zero_on_fix_and_show_fixes(tmp_path: Path) -> None:
    write(tmp_path, "a.py", FLAGGED)
    result = run_cli("check", "--fix", "--exit-non-zero-on-fix", "--show-fixes", "--no-cache", "a.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "Fixed:" in result.stdout and "a.py:6: H2D001" in result.stdout


@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "github"])
def test_show_fixes_keeps_a_machine_format_one_document(tmp_path: Path, fmt: str) -> None:
    """`--show-fixes` lists the applied fixes for a reader (full, concise), as ruff does; with a
    machine format the stream stays what its reader parses (it had a `Fixed:` list after the
    JSON array)."""
    write(tmp_path, "a.py", FLAGGED)
    write(tmp_path, "b.py", UNSAFE)  # a finding that stays: the documents are not empty
    result = run_cli("check", "--fix", "--show-fixes", "--no-cache", "--output-format", fmt, "a.py", "b.py",
                     cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Fixed:" not in result.stdout and "cu[0].zero_()" in (tmp_path / "a.py").read_text()
    if fmt in ("json", "sarif"):
        assert json.loads(result.stdout)
    elif fmt == "json-lines":
        assert [json.loads(line) for line in result.stdout.splitlines()]
    else:
        assert all(line.startswith("::error ") for line in result.stdout.splitlines())


def test_custom_gate_from_config(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml",
          '[tool.lint-h2d.fix-gate]\ntest = "is_hip()"\nimport = "from myproj.platform import is_hip"\n')
    path = write(tmp_path, "a.py", FLAGGED)
    assert run_cli("fix", "--no-cache", "a.py", cwd=tmp_path).returncode == 0
    text = path.read_text()
    assert text.count("from myproj.platform import is_hip\n") == 1
    assert text.index("import torch\n") < text.index("from myproj.platform import is_hip") < text.index("def build")
    assert "    if is_hip():\n        cu[0].zero_()\n    else:\n        cu[0] = 0\n" in text


def test_gate_none_from_config(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\nfix-gate = "none"\n')
    path = write(tmp_path, "a.py", FLAGGED)
    assert run_cli("fix", "--no-cache", "a.py", cwd=tmp_path).returncode == 0
    assert path.read_text() == FLAGGED.replace("cu[0] = 0", "cu[0].zero_()")


def test_full_output_explains_missing_fix(tmp_path: Path) -> None:
    write(tmp_path, "a.py", FLAGGED.replace("    cu[0] = 0", "    a = 1; cu[0] = 0"))
    out = run_cli("check", "--no-cache", "a.py", cwd=tmp_path).stdout
    assert "note: no fix: the statement shares its line with others" in out


def test_custom_gate_fix_is_idempotent(tmp_path: Path) -> None:
    """The configured gate is recognised as a gate: the else branch is not wrapped again."""
    write(tmp_path, "pyproject.toml",
          '[tool.lint-h2d.fix-gate]\ntest = "my_platform.amd()"\nimport = "import my_platform"\n')
    path = write(tmp_path, "a.py", FLAGGED)
    assert run_cli("fix", "--no-cache", "a.py", cwd=tmp_path).returncode == 0
    once = path.read_text()
    assert "    if my_platform.amd():\n        cu[0].zero_()\n    else:\n        cu[0] = 0\n" in once
    assert run_cli("check", "--no-cache", "a.py", cwd=tmp_path).returncode == 0
    assert run_cli("fix", "--no-cache", "a.py", cwd=tmp_path).returncode == 0
    assert path.read_text() == once
