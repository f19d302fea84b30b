"""ruff's options where users reach for them: --output-file, --exclude, --extend-exclude,
--per-file-ignores, --extend-per-file-ignores, --show-files, --show-settings."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import run_cli

FLAGGED = textwrap.dedent(
    """\
    import torch

    t = torch.zeros(4, device="cuda")
    t[0] = 0
    """
)


def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.lint-h2d]\nextend-exclude = ['gen/']\n")
    for rel in ("pkg/a.py", "pkg/b.py", "gen/c.py", "legacy/d.py", "tests/test_e.py"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(FLAGGED)
    return tmp_path


def flagged(result) -> set:  # type: ignore[no-untyped-def]
    return {Path(f["filename"]).name for f in json.loads(result.stdout)}


def test_show_files_lists_what_would_be_checked(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = run_cli("check", "--show-files", ".", cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["./legacy/d.py", "./pkg/a.py", "./pkg/b.py"]
    extended = run_cli("check", "--show-files", "--extend-exclude", "legacy/,pkg/b.py", ".", cwd=root)
    assert extended.stdout.splitlines() == ["./pkg/a.py"]
    # --exclude replaces `exclude` (here the defaults, which skip tests/); the configured
    # `extend-exclude` (gen/) still applies.
    replaced = run_cli("check", "--show-files", "--exclude", "legacy/", ".", cwd=root)
    assert replaced.stdout.splitlines() == ["./pkg/a.py", "./pkg/b.py", "./tests/test_e.py"]


def test_per_file_ignores_from_the_command_line(tmp_path: Path) -> None:
    root = project(tmp_path)
    base = ("check", "--no-cache", "--output-format", "json", ".")
    assert flagged(run_cli(*base, cwd=root)) == {"a.py", "b.py", "d.py"}
    assert flagged(run_cli(*base, "--per-file-ignores", "pkg/*:H2D001", cwd=root)) == {"d.py"}
    assert flagged(run_cli(*base, "--extend-per-file-ignores", "legacy/:H2D", "--per-file-ignores",
                           "pkg/a.py:H2D001", cwd=root)) == {"b.py"}
    bad = run_cli(*base, "--per-file-ignores", "pkg/*", cwd=root)
    assert bad.returncode == 2 and "GLOB:CODES" in bad.stderr


def test_output_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = run_cli("check", "--no-cache", "--output-format", "json", "--output-file", "out.json",
                     "pkg/a.py", cwd=root)
    assert result.returncode == 1 and result.stdout == ""
    report = json.loads((root / "out.json").read_text())
    assert [f["code"] for f in report] == ["H2D001"]
    missing = run_cli("check", "--no-cache", "-o", "no/such/dir/out.txt", "pkg/a.py", cwd=root)
    assert missing.returncode == 2 and "no/such/dir/out.txt" in missing.stderr


def test_show_settings(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = run_cli("check", "--show-settings", "--extend-exclude", "x/", "pkg/a.py", cwd=root)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Resolved settings for: pkg/a.py"
    assert lines[1] == f"Settings path: {(root / 'pyproject.toml').resolve()}"
    assert "extend-exclude = ('gen/', 'x/')" in lines
