"""The findings cache: same findings warm and cold, re-analysis of changed files, robustness."""
from __future__ import annotations

import json
from pathlib import Path

from lint_h2d.cache import Cache
from tests.conftest import run_cli

FLAGGED = (
    "import torch\n\n\ndef build(n, device):\n"
    "    t = torch.empty(n + 1, dtype=torch.int32, device=device)\n    t[0] = 0\n    return t\n"
)
CLEAN = "def add(a, b):\n    return a + b\n"


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.lint-h2d]\n", encoding="utf-8")
    (tmp_path / "a.py").write_text(FLAGGED, encoding="utf-8")
    (tmp_path / "b.py").write_text(CLEAN, encoding="utf-8")
    return tmp_path


def _check(root: Path, *extra: str):
    return run_cli("check", ".", "--output-format", "concise", "-q", "--cache-dir", ".c", *extra, cwd=root)


def _cache_files(root: Path):
    """The findings caches (the folder also holds the project index, `project-index.json`)."""
    from lint_h2d import __version__

    return sorted((root / ".c").glob(f"{__version__}-*.json"))


def test_warm_run_same_findings_and_gitignore(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    cold = _check(root, "--no-cache")
    first = _check(root)
    warm = _check(root)
    assert cold.stdout == first.stdout == warm.stdout and "H2D001" in cold.stdout
    assert (root / ".c" / ".gitignore").read_text().strip().endswith("*")
    assert len(_cache_files(root)) == 1


def test_changed_file_is_analyzed_again(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert "a.py" in _check(root).stdout
    (root / "a.py").write_text(CLEAN, encoding="utf-8")
    assert "H2D001" not in _check(root).stdout
    (root / "b.py").write_text(FLAGGED, encoding="utf-8")
    assert "b.py" in _check(root).stdout


def test_corrupt_or_foreign_cache_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    expected = _check(root, "--no-cache").stdout
    _check(root)
    (cache_file,) = _cache_files(root)
    for junk in ("{not json", json.dumps([1, 2]), json.dumps({"key": "other", "files": {}}),
                 json.dumps({"key": json.loads(cache_file.read_text())["key"] if False else "x", "files": []})):
        cache_file.write_text(junk, encoding="utf-8")
        assert _check(root).stdout == expected
        assert json.loads(cache_file.read_text())["files"]  # rebuilt
    data = json.loads(cache_file.read_text())
    for path in data["files"]:
        data["files"][path] = ["foreign", 1]  # entries of the right key but the wrong shape
    cache_file.write_text(json.dumps(data), encoding="utf-8")
    assert _check(root).stdout == expected


def test_key_changes_with_settings(tmp_path: Path) -> None:
    a = Cache(tmp_path, "settings-1|facts")
    b = Cache(tmp_path, "settings-2|facts")
    c = Cache(tmp_path, "settings-1|other-facts")
    assert len({a.key, b.key, c.key}) == 3 and len({a.file, b.file, c.file}) == 3
    (tmp_path / "t").mkdir()
    root = _tree(tmp_path / "t")
    _check(root)
    _check(root, "--ignore", "H2D002")
    assert len(_cache_files(root)) == 2


def test_the_folder_keeps_only_the_findings_caches_used_last(tmp_path: Path) -> None:
    """Every change of the project's facts, the settings or the tool starts a new cache file;
    a save keeps the `KEEP_FILES` used last (reading one touches it) and stale temp files go.
    Before, the folder kept a file per change for as long as it lived."""
    import os

    from lint_h2d.cache import KEEP_FILES

    root = _tree(tmp_path)
    _check(root)
    (current,) = _cache_files(root)
    folder = root / ".c"
    old = [folder / f"0.0.{i}-{i:024x}.json" for i in range(KEEP_FILES + 3)]
    for age, path in enumerate(old):
        path.write_text("{}", encoding="utf-8")
        os.utime(path, (1_600_000_000 - age, 1_600_000_000 - age))
    stale_tmp, fresh_tmp = folder / f".{current.stem}-abc.tmp", folder / f".{current.stem}-def.tmp"
    foreign = [folder / ".x-1.tmp", folder / "notes.json", folder / "report-0123456789abcdef01234567.json"]
    for path in [stale_tmp, *foreign]:
        path.write_text("", encoding="utf-8")
        os.utime(path, (1_600_000_000, 1_600_000_000))
    fresh_tmp.write_text("", encoding="utf-8")
    os.utime(current, (1_500_000_000, 1_500_000_000))
    assert "H2D001" in _check(root).stdout  # reads `current`: it counts as used now
    (root / "b.py").write_text(CLEAN + "# edited\n", encoding="utf-8")
    _check(root, "--select", "H2D001")  # another key: a new file is saved, the folder pruned
    kept = set(_cache_files(root)) | set(folder.glob("0.0.*.json"))
    assert current in kept
    assert set(old[:KEEP_FILES - 2]) <= kept and not set(old[KEEP_FILES - 2:]) & kept
    assert len(kept) == KEEP_FILES
    assert not stale_tmp.exists() and fresh_tmp.exists()
    assert all(path.exists() for path in foreign)  # not our names
    assert list(folder.glob("project-index-*.json"))  # never a findings cache


def test_a_cache_folder_lint_h2d_did_not_make_is_never_pruned(tmp_path: Path) -> None:
    """`--cache-dir` may name a folder of the user's (`.`, `/tmp`): without lint-h2d's own
    `.gitignore` there, nothing in it is deleted, whatever its names."""
    import os

    root = _tree(tmp_path)
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    theirs = [root / f"0.0.{i}-{i:024x}.json" for i in range(12)]
    for path in theirs:
        path.write_text("{}", encoding="utf-8")
        os.utime(path, (1_600_000_000, 1_600_000_000))
    run_cli("check", ".", "-q", "--cache-dir", ".", cwd=root)
    (root / "b.py").write_text(CLEAN + "# edited\n", encoding="utf-8")
    run_cli("check", ".", "-q", "--cache-dir", ".", "--select", "H2D001", cwd=root)
    assert all(path.exists() for path in theirs)
    assert (root / ".gitignore").read_text(encoding="utf-8") == "build/\n"
