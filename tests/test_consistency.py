"""One answer per file (issue 16, acceptance): the findings for each file are the same however
lint-h2d is run — a whole-tree scan, one file at a time, pre-commit's many-file call in either
order, cold and warm cache, from any folder, with relative or absolute paths, and with a cache
folder shared with another project.

The project uses a cross-file fact (a class pairing `query_start_loc` with
`query_start_loc_cpu` in another file), so the project index matters, and a nested
configuration, so per-file settings matter.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Set, Tuple

import pytest

from lint_h2d import cli
from tests.test_cli import FLAGGED, write

META = (
    "import torch\n\n\nclass CommonAttentionMetadata:\n    query_start_loc: torch.Tensor\n"
    "    query_start_loc_cpu: torch.Tensor\n"
)
BUILDER = "def build(meta):\n    meta.query_start_loc[0] = 0\n    meta.seq_lens[0] = 0\n"
OTHER_META = (
    "import torch\n\n\nclass Other:\n    seq_lens: torch.Tensor\n    seq_lens_cpu: torch.Tensor\n"
)
FILES = ["pkg/meta.py", "pkg/builder.py", "sub/y.py", "z.py", "tests/test_t.py"]
Row = Tuple[str, int, int, str]


def make_project(root: Path) -> Path:
    write(root, "pyproject.toml", "[project]\nname = 'p'\n\n[tool.lint-h2d]\nselect = ['H2D']\n")
    (root / ".git").mkdir(parents=True)
    write(root, "pkg/meta.py", META)
    write(root, "pkg/builder.py", BUILDER)
    write(root, "sub/pyproject.toml", "[tool.lint-h2d]\nignore = ['H2D001']\n")
    write(root, "sub/y.py", FLAGGED)
    write(root, "z.py", FLAGGED)
    write(root, "tests/test_t.py", BUILDER)  # excluded from walks, checked when named
    return root


def findings(cwd: Path, *args: str) -> Set[Row]:
    """(real path, row, column, code) of every finding, from the JSON report."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        cli.main(["check", "--jobs", "1", "--output-format", "json", *args])
    finally:
        os.chdir(old)
    out = _capsys.readouterr().out  # type: ignore[name-defined]  # set by the fixture
    return {(os.path.realpath(d["filename"]), d["location"]["row"], d["location"]["column"], d["code"])
            for d in json.loads(out)}


def per_file(rows: Set[Row], files: Sequence[Path]) -> Dict[str, List[Row]]:
    wanted = {os.path.realpath(f) for f in files}
    return {w: sorted(r for r in rows if r[0] == w) for w in sorted(wanted)}


Runner = Callable[[Path, Path, Path], Set[Row]]  # (root, elsewhere, other project) → findings


def _each(root: Path, cwd: Callable[[Path], Path], spell: Callable[[Path, Path], str],
          cache: Sequence[str] = ("--no-cache",)) -> Set[Row]:
    rows: Set[Row] = set()
    for name in FILES:
        path = root / name
        rows |= findings(cwd(path), *cache, spell(path, cwd(path)))
    return rows


WAYS: Dict[str, Runner] = {
    "tree-warm": lambda root, elsewhere, other: (findings(root, "."), findings(root, "."))[1],
    "tree-from-subfolder": lambda root, elsewhere, other: findings(root / "pkg", "--no-cache", ".."),
    "one-file-relative": lambda root, elsewhere, other: _each(
        root, lambda p: root, lambda p, c: os.path.relpath(p, c)),
    "one-file-own-folder": lambda root, elsewhere, other: _each(
        root, lambda p: p.parent, lambda p, c: p.name),
    "one-file-absolute-elsewhere": lambda root, elsewhere, other: _each(
        root, lambda p: elsewhere, lambda p, c: str(p)),
    "one-file-warm-cache": lambda root, elsewhere, other: (
        findings(root, "."), _each(root, lambda p: p.parent, lambda p, c: p.name, cache=()))[1],
    "precommit-forward": lambda root, elsewhere, other: findings(
        root, "--no-cache", "--force-exclude", *FILES[:-1]) | findings(root, "--no-cache", FILES[-1]),
    "precommit-reverse": lambda root, elsewhere, other: findings(
        root, "--no-cache", "--force-exclude", *reversed(FILES[:-1])) | findings(root, "--no-cache", FILES[-1]),
    "precommit-with-outside-path": lambda root, elsewhere, other: findings(
        root, "--no-cache", *FILES, str(elsewhere / "loose.py")),
    "shared-cache-dir-tree": lambda root, elsewhere, other: (
        findings(other, "--cache-dir", str(elsewhere / "cache"), "."),
        findings(root, "--cache-dir", str(elsewhere / "cache"), "."))[1],
    "shared-cache-dir-one-file": lambda root, elsewhere, other: (
        findings(other, "--cache-dir", str(elsewhere / "cache"), "."),
        _each(root, lambda p: root, lambda p, c: os.path.relpath(p, c),
              cache=("--cache-dir", str(elsewhere / "cache"))))[1],
}


@pytest.fixture
def capsys_global(capsys: pytest.CaptureFixture) -> pytest.CaptureFixture:
    globals()["_capsys"] = capsys
    return capsys


@pytest.mark.parametrize("way", list(WAYS))
def test_findings_per_file_agree_with_the_cold_tree_scan(tmp_path: Path, capsys_global: pytest.CaptureFixture,
                                                        way: str) -> None:
    root = make_project(tmp_path / "proj")
    other = tmp_path / "other"
    write(other, "pyproject.toml", "[project]\nname = 'o'\n")
    write(other, "meta.py", OTHER_META)  # would make `meta.seq_lens[0] = 0` a finding in proj
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, "loose.py", "x = 1\n")
    reference = findings(root, "--no-cache", ".")
    files = [root / f for f in FILES]
    # Sanity: the cross-file fact, the nested config and the excluded test file all matter.
    expected_tree = {
        (os.path.realpath(root / "pkg/builder.py"), 2, 5, "H2D001"),
        (os.path.realpath(root / "z.py"), 6, 5, "H2D001"),
    }
    assert reference == expected_tree
    rows = WAYS[way](root, elsewhere, other)
    got = per_file(rows, files)
    want = per_file(reference, files)
    test_file = os.path.realpath(root / "tests/test_t.py")
    if way.startswith(("one-file", "precommit", "shared-cache-dir-one")):
        # Named explicitly, the excluded test file is checked (with the project's facts).
        want[test_file] = [(test_file, 2, 5, "H2D001")]
    assert got == want
