"""Each file is checked with its own project's configuration and facts (issue 16 items 1-3, 6).

In-process runs (`cli.main`) with the current directory moved, as a user moves it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Tuple

import pytest

from lint_h2d import cli
from tests.test_cli import FLAGGED, write

META = (
    "import torch\n\n\nclass CommonAttentionMetadata:\n    query_start_loc: torch.Tensor\n"
    "    query_start_loc_cpu: torch.Tensor\n"
)
BUILDER = "def build(meta):\n    meta.query_start_loc[0] = 0\n"


def run(capsys: pytest.CaptureFixture, cwd: Path, *args: str) -> Tuple[int, List[str]]:
    """Exit code and `path:row:col: CODE` heads of the concise report, run from `cwd`."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = cli.main(["check", "--jobs", "1", "--output-format", "concise", "-q", *args])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    return code, [line.split(" [")[0].split(" Scalar")[0] for line in out.splitlines() if ": H2D" in line]


def test_each_file_gets_its_nearest_config_in_any_order(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """pre-commit names many files in one call: the first one's config must not apply to all."""
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\nselect = ["H2D"]\n')
    write(tmp_path, "a/pyproject.toml", '[tool.lint-h2d]\nignore = ["H2D001"]\n')
    write(tmp_path, "a/x.py", FLAGGED)
    write(tmp_path, "b/y.py", FLAGGED)
    whole = run(capsys, tmp_path, "--no-cache", ".")
    assert whole == (1, ["b/y.py:6:5: H2D001"])
    assert run(capsys, tmp_path, "--no-cache", "a/x.py", "b/y.py") == whole
    assert run(capsys, tmp_path, "--no-cache", "b/y.py", "a/x.py") == whole
    assert run(capsys, tmp_path, "--no-cache", "a/x.py") == (0, [])


@pytest.mark.parametrize("spelling", [
    '[tool."lint-h2d"]\nignore = ["H2D001"]\n',
    '[tool]\nlint-h2d.ignore = ["H2D001"]\n',
    "[tool]\n'lint-h2d' = { ignore = ['H2D001'] }\n",
])
def test_every_toml_spelling_of_the_table_is_read(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                  spelling: str) -> None:
    write(tmp_path, "pyproject.toml", spelling)
    write(tmp_path, "src/bad.py", FLAGGED)
    assert run(capsys, tmp_path / "src", "--no-cache", "bad.py") == (0, [])


def test_table_named_in_a_string_or_comment_is_not_config(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\nignore = ["H2D001"]\n')
    write(tmp_path, "src/pyproject.toml", '[project]\nname = "x"\n# see [tool.lint-h2d] upstairs\n'
                                          'description = "tool.lint-h2d"\n')
    write(tmp_path, "src/bad.py", FLAGGED)
    assert run(capsys, tmp_path / "src", "--no-cache", "bad.py") == (0, [])


def project(tmp_path: Path) -> Path:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path, "pkg/meta.py", META)
    write(tmp_path, "pkg/builder.py", BUILDER)
    return tmp_path


def test_project_root_is_found_from_the_file_not_the_cwd(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = project(tmp_path / "proj")
    write(tmp_path, "elsewhere/other.py", "x = 1\n")
    expected = ["pkg/builder.py:2:5: H2D001"]
    assert run(capsys, root, "--no-cache", "pkg/builder.py")[1] == expected
    assert run(capsys, root / "pkg", "--no-cache", "builder.py")[1] == ["builder.py:2:5: H2D001"]
    # An unrelated path outside the project must not drop the project's index.
    assert run(capsys, root, "--no-cache", "pkg/builder.py", "../elsewhere/other.py")[1] == expected
    assert run(capsys, tmp_path / "elsewhere", "--no-cache", str(root / "pkg/builder.py"))[1] == [
        f"{root / 'pkg/builder.py'}:2:5: H2D001"]


def test_cached_findings_keep_no_path_spelling(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The cache holds content: a warm run from another folder prints its own spelling."""
    root = project(tmp_path)
    assert run(capsys, root, ".")[1] == ["pkg/builder.py:2:5: H2D001"]
    assert run(capsys, root / "pkg", "builder.py")[1] == ["builder.py:2:5: H2D001"]
    old = os.getcwd()
    os.chdir(root / "pkg")
    try:
        cli.main(["check", "--jobs", "1", "--output-format", "json", "builder.py"])
    finally:
        os.chdir(old)
    data = json.loads(capsys.readouterr().out)
    assert [d["filename"] for d in data] == [str(root / "pkg" / "builder.py")]
