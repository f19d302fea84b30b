"""Which files a run checks: gitignore semantics everywhere, bad globs reported, odd files
skipped (issue 16 items 16-18, issue 15 item 13)."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.test_cli import FLAGGED, write
from tests.test_projects import run


def test_bad_gitignore_line_is_named_and_the_scan_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path, ".gitignore", "*.tmp\n[z-a].py\n[]\nbuild/\n")
    write(tmp_path, "bad.py", FLAGGED)
    write(tmp_path, "build/gen.py", FLAGGED)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        from lint_h2d import cli

        code = cli.main(["check", "--no-cache", "--jobs", "1", "--output-format", "concise", "."])
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    assert code == 1 and "bad.py:6:5: H2D001" in out and "build" not in out
    assert ".gitignore:2: bad pattern '[z-a].py'" in err and ".gitignore:3: bad pattern '[]'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("key", ["extend-exclude = ['[z-a].py']", "per-file-ignores = { '[]' = ['H2D001'] }",
                                 "include = ['[', '*.py']"])
def test_bad_config_glob_is_named_and_the_scan_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture, key: str) -> None:
    write(tmp_path, "pyproject.toml", f"[tool.lint-h2d]\n{key}\n")
    write(tmp_path, "bad.py", FLAGGED)
    assert run(capsys, tmp_path, "--no-cache", ".") == (1, ["bad.py:6:5: H2D001"])
    # `run` drained the output; run again to read the warning.
    from lint_h2d import cli

    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        cli.main(["check", "--no-cache", "--jobs", "1", "-q", "."])
    finally:
        os.chdir(old)
    err = capsys.readouterr().err
    assert "pyproject.toml: [tool.lint-h2d] `" in err and "bad pattern" in err


def test_negated_class_in_gitignore(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`[!_]*.py` ignores files not starting with `_` (it was read as starting with `!` or `_`)."""
    write(tmp_path, "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path, ".gitignore", "[!_]*.py\n")
    write(tmp_path, "mod.py", FLAGGED)
    write(tmp_path, "_private.py", FLAGGED)
    assert run(capsys, tmp_path, "--no-cache", ".")[1] == ["_private.py:6:5: H2D001"]


def test_include_double_star_matches_zero_folders(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\ninclude = ["pkg/**/*.py"]\n')
    write(tmp_path, "pkg/a.py", FLAGGED)
    write(tmp_path, "pkg/sub/b.py", FLAGGED)
    write(tmp_path, "other/c.py", FLAGGED)
    assert run(capsys, tmp_path, "--no-cache", ".")[1] == ["pkg/a.py:6:5: H2D001", "pkg/sub/b.py:6:5: H2D001"]


@pytest.mark.parametrize("key", ["legacy/", "legacy", "/legacy/", "legacy/**"])
def test_per_file_ignores_folder_key_covers_its_files(tmp_path: Path, capsys: pytest.CaptureFixture, key: str) -> None:
    write(tmp_path, "pyproject.toml", f'[tool.lint-h2d]\nper-file-ignores = {{ "{key}" = ["H2D001"] }}\n')
    write(tmp_path, "legacy/old.py", FLAGGED)
    write(tmp_path, "legacy/deep/older.py", FLAGGED)
    write(tmp_path, "new.py", FLAGGED)
    assert run(capsys, tmp_path, "--no-cache", ".")[1] == ["new.py:6:5: H2D001"]
    assert run(capsys, tmp_path / "legacy", "--no-cache", "old.py") == (0, [])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_in_a_walked_folder_is_skipped_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "bad.py", FLAGGED)
    os.mkfifo(tmp_path / "pipe.py")
    result: dict = {}

    def scan() -> None:
        result["value"] = run(capsys, tmp_path, "--no-cache", ".")

    thread = threading.Thread(target=scan, daemon=True)
    thread.start()
    thread.join(60)
    if thread.is_alive():  # unblock the reader so the test process can end
        fd = os.open(tmp_path / "pipe.py", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("the scan hung on a FIFO")
    assert result["value"] == (1, ["bad.py:6:5: H2D001"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_named_explicitly_is_an_error_not_a_hang(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    code, _ = run(capsys, tmp_path, "--no-cache", "pipe.py")
    assert code == 2


def test_explicit_notebook_is_reported_unsupported(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "nb.ipynb", '{"cells": [{"cell_type": "code", "source": ["t[0] = 0"]}], "metadata": {}}')
    write(tmp_path, "bad.py", FLAGGED)
    from lint_h2d import cli

    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = cli.main(["check", "--no-cache", "--jobs", "1", "--output-format", "concise", "nb.ipynb", "bad.py"])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    assert code == 2
    assert "nb.ipynb" in out and "not supported" in out and "bad.py:6:5: H2D001" in out


@pytest.mark.parametrize("globs", [
    (),
    ("*.pyi",),
    ("/top.py", "docs/**/x*.py", "a/[bc]?/", "vllm/model_executor/", "build/", "*_test.py"),
    ("*.py", "!keep.py"),  # a negation: git's last-match rule itself
])
def test_exclude_test_is_git_last_match(globs: tuple) -> None:
    """`excluded` answers with one alternation of the globs' regexes when none is negated:
    the same answer as `last_match` over the patterns, for names and anchored paths, files
    and folders."""
    from lint_h2d.config import DEFAULT_EXCLUDE
    from lint_h2d.discovery import _exclude_test, compiled
    from lint_h2d.patterns import last_match

    names = ["tests", "test_a.py", "a_test.py", "conftest.py", ".git", "build", "x.egg-info", "top.py",
             "a/b1", "a/cd", "docs/q/r/x1.py", "docs/x.py", "vllm/model_executor", "keep.py", "m.pyi", ""]
    for every in (globs, DEFAULT_EXCLUDE + globs):
        patterns, test = compiled(every), _exclude_test(every)
        for name in names:
            for rel in (name, f"q/{name}", f"vllm/{name}"):
                for is_dir in (True, False):
                    assert test(rel, is_dir) == bool(last_match(patterns, rel, is_dir)), (every, rel, is_dir)
