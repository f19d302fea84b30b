"""`device-hints` / `cpu-hints` in `[tool.lint-h2d]` (issue 17): validated like every key,
documented with their defaults, and part of the findings cache's key (a changed hint can
change findings)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from lint_h2d import config
from lint_h2d.cache import Cache, cache_key
from tests.conftest import REPO, run_cli
from tests.test_cli import FLAGGED, write


@pytest.mark.parametrize("key,value", [
    ("device-hints", '"logits"'), ("cpu-hints", "[1, 2]"), ("device-hints", '["ok", ["nested"]]'),
    ("cpu-hints", '{ a = "b" }'),
])
def test_bad_hint_types_exit_2_naming_file_and_key(tmp_path: Path, key: str, value: str) -> None:
    write(tmp_path, "pyproject.toml", f"[tool.lint-h2d]\n{key} = {value}\n")
    write(tmp_path, "bad.py", FLAGGED)
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"`{key}` must be a list of strings" in result.stderr
    assert str(tmp_path / "pyproject.toml") in result.stderr
    assert "Traceback" not in result.stderr


def test_hints_are_read_and_change_the_cache_key(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml",
                 '[tool.lint-h2d]\ndevice-hints = ["logits", "*.gpu_buf"]\ncpu-hints = ["*.host_buf"]\n')
    settings = config.load_file(path)
    assert settings.device_hints == ("logits", "*.gpu_buf") and settings.cpu_hints == ("*.host_buf",)
    assert config.Settings().device_hints == () == config.Settings().cpu_hints  # empty by default
    keys = {
        cache_key(s, "facts")
        for s in (settings, config.Settings(root=settings.root),
                  replace(settings, device_hints=("logits",)),
                  replace(settings, cpu_hints=()))
    }
    assert len(keys) == 4
    assert len({Cache(tmp_path / "c", k).file for k in keys}) == 4
    # A valid table is accepted by the CLI (exit 1: the flagged file, not 2).
    write(tmp_path, "bad.py", FLAGGED)
    assert run_cli("check", "--no-cache", ".", cwd=tmp_path).returncode == 1


def test_readme_documents_the_hints() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "| `device-hints` | `[]` |" in text and "| `cpu-hints` | `[]` |" in text
