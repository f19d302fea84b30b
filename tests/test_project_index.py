"""Cross-file facts reach one-file runs (pre-commit) through the project index."""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from tests.conftest import run_cli
from tests.test_cli import write

META = (
    "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\n"
    "class CommonAttentionMetadata:\n    query_start_loc: torch.Tensor\n"
    "    query_start_loc_cpu: torch.Tensor\n"
)
BUILDER = "def build(meta):\n    meta.query_start_loc[0] = 0\n"


def project(tmp_path: Path) -> Path:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path, "pkg/meta.py", META)
    write(tmp_path, "pkg/builder.py", BUILDER)
    return tmp_path


def rows(result) -> list:  # type: ignore[no-untyped-def]
    return [line.split(": ")[0] for line in result.stdout.splitlines() if ": H2D" in line]


def test_one_file_run_agrees_with_the_repo_scan(tmp_path: Path) -> None:
    root = project(tmp_path)
    scan = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root)
    one = run_cli("check", "--no-cache", "--output-format", "concise", "pkg/builder.py", cwd=root)
    assert rows(scan) == rows(one) == ["pkg/builder.py:2:5"]


def test_index_is_cached_and_follows_changes(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert rows(run_cli("check", "--output-format", "concise", "pkg/builder.py", cwd=root)) == ["pkg/builder.py:2:5"]
    (index,) = (root / ".lint_h2d_cache").glob("project-index*.json")
    data = json.loads(index.read_text())
    assert str((root / "pkg/meta.py").resolve()) in {str(Path(k).resolve()) for k in data["files"]}
    # The pair disappears: the index notices the change and the finding goes.
    meta = root / "pkg/meta.py"
    meta.write_text(META.replace("query_start_loc_cpu", "other_cpu"))
    os.utime(meta, ns=(meta.stat().st_atime_ns, meta.stat().st_mtime_ns + 10_000_000))
    assert rows(run_cli("check", "--output-format", "concise", "pkg/builder.py", cwd=root)) == []


def test_no_index_outside_a_project(tmp_path: Path) -> None:
    """Without pyproject.toml or .git the folder is not a project: only the named files count."""
    write(tmp_path, "pkg/meta.py", META)
    write(tmp_path, "pkg/builder.py", BUILDER)
    assert rows(run_cli("check", "--no-cache", "--output-format", "concise", "pkg/builder.py", cwd=tmp_path)) == []
    assert rows(run_cli("check", "--no-cache", "--output-format", "concise", "pkg", cwd=tmp_path)) == ["pkg/builder.py:2:5"]


# -- what the index is keyed by (issue 16 items 4 and 5, issue 15 item 14) ---------------------

OLD = 1_600_000_000 * 10**9  # a time long past: stamps are not "racy" (see project_index.py)


def _age(root: Path) -> None:
    """Date every file and folder of the project in the past, as a checkout made long ago:
    the index may then trust stat alone, and only a real change can invalidate it."""
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(OLD, OLD), follow_symlinks=False)


def one_file(root: Path, *extra: str) -> list:
    return rows(run_cli("check", "--output-format", "concise", *extra, "pkg/builder.py", cwd=root))


def test_added_or_renamed_file_reaches_the_one_file_run(tmp_path: Path) -> None:
    """A checkout that adds (or renames into place) the class file: the one-file run must see
    it, although it names only builder.py and the index lists the files of an earlier run."""
    write(tmp_path, "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path, "pkg/builder.py", BUILDER)
    write(tmp_path, "pkg/sub/meta.txt", META)
    _age(tmp_path)
    assert one_file(tmp_path) == []
    _age(tmp_path)
    (tmp_path / "pkg/sub/meta.txt").rename(tmp_path / "pkg/sub/meta.py")  # a rename, two levels down
    assert one_file(tmp_path) == ["pkg/builder.py:2:5"]
    (tmp_path / "pkg/sub/meta.py").unlink()
    write(tmp_path, "pkg/new/deeper/meta.py", META)  # a new folder holding a new file
    _age(tmp_path)
    os.utime(tmp_path / "pkg/new/deeper", ns=(OLD + 10**9, OLD + 10**9))
    assert one_file(tmp_path) == ["pkg/builder.py:2:5"]


def test_same_size_edit_with_mtime_kept(tmp_path: Path) -> None:
    """`touch -r`, `cp -p`, `rsync -a`: same size, same mtime, other content."""
    root = project(tmp_path)
    _age(root)
    assert one_file(root) == ["pkg/builder.py:2:5"]
    assert rows(run_cli("check", "--output-format", "concise", ".", cwd=root)) == ["pkg/builder.py:2:5"]
    meta = root / "pkg/meta.py"
    meta.write_text(META.replace("query_start_loc_cpu", "query_start_loc_cpX"))  # touch -r
    os.utime(meta, ns=(OLD, OLD))
    assert one_file(root) == []
    assert rows(run_cli("check", "--output-format", "concise", ".", cwd=root)) == []
    other = tmp_path / "elsewhere.py"  # cp -p of a same-size file: another inode, mtime kept
    other.write_text(META)
    os.utime(other, ns=(OLD, OLD))
    import shutil

    shutil.copy2(other, meta)
    assert one_file(root) == ["pkg/builder.py:2:5"]


def test_configuration_change_reaches_the_index(tmp_path: Path) -> None:
    root = project(tmp_path)
    _age(root)
    assert one_file(root) == ["pkg/builder.py:2:5"]
    (root / "pyproject.toml").write_text(
        "[project]\nname = 'p'\n\n[tool.lint-h2d]\nextend-exclude = ['pkg/meta.py']\n"
    )
    os.utime(root / "pyproject.toml", ns=(OLD, OLD))
    assert rows(run_cli("check", "--output-format", "concise", ".", cwd=root)) == []
    assert one_file(root) == []
    (root / ".gitignore").write_text("")  # .gitignore edits change the file set too
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    _age(root)
    assert one_file(root) == ["pkg/builder.py:2:5"]
    (root / ".gitignore").write_text("meta.py\n")
    os.utime(root / ".gitignore", ns=(OLD, OLD + 10**9))
    assert one_file(root) == []


def test_shared_cache_dir_keeps_projects_apart(tmp_path: Path) -> None:
    shared = tmp_path / "shared-cache"
    a = project(tmp_path / "a")
    b = tmp_path / "b"
    write(b, "pyproject.toml", "[project]\nname = 'b'\n")
    write(b, "pkg/builder.py", BUILDER)
    _age(tmp_path)
    assert one_file(a, "--cache-dir", str(shared)) == ["pkg/builder.py:2:5"]
    assert one_file(b, "--cache-dir", str(shared)) == []
    assert rows(run_cli("check", "--output-format", "concise", "--cache-dir", str(shared), ".", cwd=b)) == []
    assert one_file(a, "--cache-dir", str(shared)) == ["pkg/builder.py:2:5"]


# -- the stat path, in process: a clock set ahead makes every stamp old enough to trust --------

def _index(root: Path, cache: Path, walk: bool):  # type: ignore[no-untyped-def]
    from lint_h2d.config import Settings
    from lint_h2d.project_index import project_classes

    settings = Settings(root=root.resolve())
    return project_classes(settings, [str(root / "pkg/builder.py")], cache, walk=walk)


def test_trusted_stat_path_walks_only_when_a_folder_changed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import time

    from lint_h2d import project_index

    root = project(tmp_path / "p")
    (root / "pkg/meta.py").rename(root / "pkg/meta.txt")
    cache = tmp_path / "cache"
    ahead = time.time_ns() + 3600 * 10**9
    monkeypatch.setattr(project_index.time, "time_ns", lambda: ahead)
    walks = []
    real = project_index.discover
    monkeypatch.setattr(project_index, "discover", lambda *a: walks.append(1) or real(*a))
    reads = []
    real_facts = project_index.file_facts
    monkeypatch.setattr(project_index, "file_facts", lambda p, d, *a: reads.append(p) or real_facts(p, d, *a))

    assert _index(root, cache, walk=False) == {} and len(walks) == 1
    reads.clear()
    assert _index(root, cache, walk=False) == {}
    assert len(walks) == 1 and reads == []  # nothing changed: no walk, no read
    (root / "pkg/meta.txt").rename(root / "pkg/meta.py")
    assert "CommonAttentionMetadata" in _index(root, cache, walk=False)
    assert len(walks) == 2 and reads == [str(root / "pkg/meta.py")]
    # `touch -r`: bytes changed, size and mtime kept; ctime gives it away.
    meta = root / "pkg/meta.py"
    st = meta.stat()
    meta.write_text(META.replace("query_start_loc_cpu", "query_start_loc_cpX"))
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _index(root, cache, walk=False) == {} and len(walks) == 2
    # A plain `touch`: the stat changes, the bytes do not; the facts are reused unread.
    reads.clear()
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns + 5))
    assert _index(root, cache, walk=False) == {} and reads == []


def test_racy_entries_are_compared_by_content(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A file system whose stat did not move (coarse timestamps, a write in the same tick as
    the indexing run): a recent stamp is checked against a hash of the file."""
    import json as json_
    import time

    from lint_h2d import project_index

    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    assert "CommonAttentionMetadata" in _index(root, cache, walk=False)
    meta = root / "pkg/meta.py"
    meta.write_text(META.replace("query_start_loc_cpu", "query_start_loc_cpX"))
    (index,) = cache.glob("project-index-*.json")
    data = json_.loads(index.read_text())
    st = meta.stat()
    data["files"][str(meta)][:4] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    data["built_ns"] = time.time_ns()  # the stamp is as recent as the run: not proof
    index.write_text(json_.dumps(data))
    assert _index(root, cache, walk=False) == {}
    # Outside the window stat alone decides (no read): a forged stat recorded long after its
    # stamp hides the change back, which shows that only racy entries cost a read.
    data = json_.loads(index.read_text())
    meta.write_text(META)
    data["built_ns"] = time.time_ns() + 3600 * 10**9
    st = meta.stat()
    data["files"][str(meta)][:4] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    data["folders"] = {k: project_index._folder_stamp(k) for k in data["folders"]}
    index.write_text(json_.dumps(data))
    assert _index(root, cache, walk=False) == {}


def test_corrupt_index_entries_are_rebuilt(tmp_path: Path) -> None:
    import json as json_

    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    expected = _index(root, cache, walk=True)
    (index,) = cache.glob("project-index-*.json")
    # Each file's facts are a file of their own: corrupt ones, missing ones, rows that are not
    # rows, and an index that is not JSON are all built again.
    facts = sorted(cache.glob("project-index-*-facts/*.json"))
    assert facts
    for i, blob in enumerate(facts):
        if i % 2:
            blob.write_text(json_.dumps({"classes": [1, 2]}))
        else:
            blob.unlink()
    assert _index(root, cache, walk=False) == expected
    data = json_.loads(index.read_text())
    for row in data["files"].values():
        row[4] = {"classes": [1, 2]}
    index.write_text(json_.dumps(data))
    assert _index(root, cache, walk=False) == expected
    index.write_text("{not json")
    assert _index(root, cache, walk=False) == expected


def test_folder_changes_that_keep_the_file_set_do_not_walk(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An editor's swap file, a file rewritten by a checkout, our own cache writes inside the
    project: the folder's stat moves, its Python files do not; no walk (it costs more than the
    whole one-file check on a large tree).  A new Python file still is found."""
    import time
    from dataclasses import replace

    from lint_h2d import project_index
    from lint_h2d.config import Settings
    from lint_h2d.project_index import project_classes

    root = project(tmp_path / "p")
    (root / "pkg/meta.py").rename(root / "pkg/meta.txt")
    ahead = time.time_ns() + 3600 * 10**9
    monkeypatch.setattr(project_index.time, "time_ns", lambda: ahead)
    walks = []
    real = project_index.discover
    monkeypatch.setattr(project_index, "discover", lambda *a: walks.append(1) or real(*a))
    # `exclude = []`: the cache folder inside the project is walked (only its .gitignore hides it).
    settings = replace(Settings(root=root.resolve()), exclude=())
    cache = root / ".cache" / "lint"
    checked = [str(root / "pkg/builder.py")]

    def run() -> dict:  # type: ignore[type-arg]
        return project_classes(settings, checked, cache, walk=False)

    for _ in range(3):
        assert run() == {}
    assert len(walks) == 2  # the first run, and the one that sees `.cache/` it created
    (root / "pkg/.builder.py.swp").write_text("x")
    assert run() == {}
    (root / "pkg/.builder.py.swp").unlink()
    (root / "pkg/builder.py").unlink()
    (root / "pkg/builder.py").write_text(BUILDER)  # rewritten as a checkout does: a new inode
    (cache / "other.json").write_text("{}")
    assert run() == {} and run() == {}
    assert len(walks) == 2
    (root / "pkg/meta.txt").rename(root / "pkg/meta.py")
    assert "CommonAttentionMetadata" in run() and len(walks) == 3


def test_a_symlinked_file_pointing_outside_keeps_the_index(tmp_path: Path) -> None:
    # A link to a shared file elsewhere is the project's file where it is named: resolving it
    # took the whole run "out of the project" and every file lost its cross-file facts.
    root = project(tmp_path / "proj")
    write(tmp_path, "elsewhere/shared.py", "x = 1\n")
    (root / "pkg" / "shared.py").symlink_to(tmp_path / "elsewhere" / "shared.py")
    for args in (["."], ["pkg/builder.py", "pkg/shared.py"]):
        result = run_cli("check", "--no-cache", "--output-format", "concise", *args, cwd=root)
        assert rows(result) == ["pkg/builder.py:2:5"], result.stdout


POOL = ("import torch\n\n\nclass Pool:\n    def __init__(self, n: int) -> None:\n"
        "        self.write_pos = torch.zeros(n, dtype=torch.int64, device=\"cuda\")\n")
STEP = "from pool import Pool\n\n\ndef step(pool: Pool, i: int) -> None:\n    pool.write_pos[i] = 0\n"


def test_outside_a_project_the_files_are_indexed_in_memory_with_the_same_facts(tmp_path: Path) -> None:
    """Outside a project the checked files are indexed in memory (workers read them; a child
    resolves them) rather than read and summarized by the main process: the facts must be
    exactly those `project_facts` gives for the same files, the verdicts those of each file,
    and a path that cannot be read gets no row (its analysis reports it)."""
    from lint_h2d.pipeline import facts_from_index, project_facts
    from lint_h2d.prefilter import tree_verdict
    from lint_h2d.project_index import memory_index
    from lint_h2d.sources import read_source

    write(tmp_path, "pool.py", POOL)
    write(tmp_path, "step.py", STEP)
    paths = [str(tmp_path / "pool.py"), str(tmp_path / "step.py")]
    index = memory_index(paths + [str(tmp_path / "missing.py")], ("torch.cuda.graph",))
    assert sorted(index.rows) == sorted(paths)
    assert set(index.verdicts) == set(paths)
    for path in paths:
        text = read_source(path).text
        assert index.verdicts[path] == tree_verdict(ast.parse(text), text, ("torch.cuda.graph",))
    direct = project_facts([read_source(p) for p in paths])
    assert facts_from_index(index).fingerprint == direct.fingerprint


def test_outside_a_project_cross_file_facts_and_bad_paths(tmp_path: Path) -> None:
    """No pyproject.toml nor .git: the files named together still share their facts, and a
    missing path is reported (exit 2) while the others are checked."""
    write(tmp_path, "pool.py", POOL)
    write(tmp_path, "step.py", STEP)
    result = run_cli("check", "--no-cache", "--output-format", "concise", "pool.py", "step.py", "missing.py",
                     cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot check missing.py" in result.stdout
    assert rows(result) == ["missing.py:1:1", "step.py:5:5"]


def test_the_facts_folder_keeps_only_the_files_the_index_names(tmp_path: Path) -> None:
    """Each file's facts are stored under its path and the hash of its bytes: an edit wrote a
    new facts file and the old one stayed, so the folder grew by a file per edit of every file.
    A saved index deletes the facts files none of its rows names (an edited or removed file's)."""
    root = project(tmp_path)
    write(root, "pkg/gone.py", "x = 1\n")
    run_cli("check", "--output-format", "concise", ".", cwd=root)
    (facts,) = (root / ".lint_h2d_cache").glob("project-index-*-facts")
    assert len(list(facts.glob("*.json"))) == 3
    builder = root / "pkg/builder.py"
    builder.write_text(BUILDER + "\n\ndef other():\n    return 1\n")
    (root / "pkg/gone.py").unlink()
    assert rows(run_cli("check", "--output-format", "concise", ".", cwd=root)) == ["pkg/builder.py:2:5"]
    assert len(list(facts.glob("*.json"))) == 2
    # The pruned facts are not needed: a one-file run from the saved index agrees.
    assert rows(run_cli("check", "--output-format", "concise", "pkg/builder.py", cwd=root)) == ["pkg/builder.py:2:5"]


# -- the snapshot of the decoded facts (issue 12: the run after an edit) ------------------------


def _facts(root: Path, cache: Path):  # type: ignore[no-untyped-def]
    """The index's classes and summaries, by path relative to `root`."""
    from lint_h2d.config import Settings
    from lint_h2d.project_index import load_index

    index = load_index(Settings(root=root.resolve()), [str(root / "pkg/builder.py")], cache, walk=False)
    assert index is not None
    classes, summaries = index.facts()
    index.save_snapshot()  # as `pipeline.facts_from_index` does, once they are resolved
    return classes, {os.path.relpath(p, root): s for p, s in summaries.items()}


def test_the_snapshot_replaces_the_facts_files_for_unchanged_rows(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A run that reads every row's facts from the facts files writes them, decoded, into one
    pickle; the next run reads the rows whose bytes are unchanged from it (the facts files
    are then not needed), and a file edited since is read from its own facts."""

    from lint_h2d import project_index

    monkeypatch.setattr(project_index, "SNAPSHOT_SLACK", 0)
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)  # every row built by this run: no snapshot of them
    (index_file,) = cache.glob("project-index-*.json")
    snapshot = project_index.snapshot_path(index_file)
    assert not snapshot.exists()
    assert _facts(root, cache) == first  # read from the facts files, then snapshotted
    assert set(_snapshot(snapshot)) == {str(root / "pkg/meta.py"), str(root / "pkg/builder.py")}
    facts_folder = project_index.facts_folder(index_file)
    for name in facts_folder.iterdir():
        name.write_text("not json")  # only the snapshot can answer now
    assert _facts(root, cache) == first
    # An edit: its row's bytes differ from the snapshot's entry, which must not be used.
    builder = root / "pkg/builder.py"
    builder.write_text(BUILDER + "\n\ndef other(x):\n    return x\n")
    os.utime(builder, ns=(builder.stat().st_atime_ns, builder.stat().st_mtime_ns + 10_000_000))
    monkeypatch.setattr(project_index, "SNAPSHOT_SLACK", 10)  # the stale entry stays
    edited = _facts(root, cache)  # built by this run (fresh)
    assert [f.name for f in edited[1]["pkg/builder.py"].functions] == ["build", "other"]
    assert _facts(root, cache) == edited  # from its facts file, not the snapshot's old entry
    stale = _snapshot(snapshot)[str(builder)]
    assert [f.name for f in stale[2].functions] == ["build"]


def test_a_corrupt_or_foreign_snapshot_is_ignored_and_rebuilt(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pickle

    root, cache, first, snapshot, stored, head = _snapshot_setup(tmp_path, monkeypatch)
    meta = str(root / "pkg/meta.py")
    for bad in (b"\x80\x05truncated", pickle.dumps({**head, "key": {"other": 1}}) + pickle.dumps({}),
                pickle.dumps({**head, "parts": 2}) + pickle.dumps({}),  # a part missing
                pickle.dumps(head) + pickle.dumps(  # the right digest, no summary
                    {meta: (stored["files"][meta][4], {}, "not a summary")})):
        snapshot.write_bytes(bad)
        assert _facts(root, cache) == first
        entries = _snapshot(snapshot)  # written again, whole
        assert set(entries) == {str(root / "pkg/meta.py"), str(root / "pkg/builder.py")}
    # A snapshot written under another key (another build, other settings) is not read.
    entries[meta] = (entries[meta][0], {}, entries[meta][2])
    snapshot.write_bytes(pickle.dumps({**head, "key": {**stored["key"], "code": "another build"}})
                         + pickle.dumps(entries))
    assert _facts(root, cache)[0] == first[0] != {}
    snapshot.write_bytes(pickle.dumps(head) + pickle.dumps(entries))  # the same, under the right key
    assert _facts(root, cache)[0] != first[0]  # (it was read: the check above could fail)


def _snapshot(file: Path):  # type: ignore[no-untyped-def]
    import pickle

    with open(file, "rb") as handle:
        head = pickle.load(handle)
        entries = {}
        for _ in range(head["parts"]):
            entries.update(pickle.load(handle))
    return entries


def test_a_snapshot_naming_any_other_callable_runs_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The cache folder is not trusted (CI restores it from a cache another job may have
    written): a snapshot that names a callable other than the summaries' classes is not
    loaded, so nothing it names runs, and the facts files answer as before."""
    import pickle

    root, cache, first, snapshot, stored, head = _snapshot_setup(tmp_path, monkeypatch)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (Path.touch, (marker,))

    for bad in (pickle.dumps(head) + pickle.dumps({"x": Payload()}), pickle.dumps(Payload())):
        snapshot.write_bytes(bad)
        assert _facts(root, cache) == first
        assert not marker.exists()
        assert set(_snapshot(snapshot)) == {str(root / "pkg/meta.py"), str(root / "pkg/builder.py")}


def _snapshot_setup(tmp_path: Path, monkeypatch):  # type: ignore[no-untyped-def]
    """A project whose facts were read once (so a snapshot may be written at once), its cache
    folder, those facts, the snapshot's path, the stored index and a valid snapshot header."""
    from lint_h2d import project_index

    monkeypatch.setattr(project_index, "SNAPSHOT_SLACK", 0)
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)
    (index_file,) = cache.glob("project-index-*.json")
    snapshot = project_index.snapshot_path(index_file)
    stored = json.loads(index_file.read_text())
    head = {"format": project_index.SNAPSHOT_FORMAT, "key": stored["key"], "parts": 1}
    return root, cache, first, snapshot, stored, head


def _streamed_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int = 6) -> Tuple[Any, List[str]]:
    """An in-memory index of `count` files built by workers, its rows read as they were built
    (`pipeline.RowReader`): the thresholds lowered so a few files take the cold scan's path."""
    from lint_h2d import pipeline, project_index

    monkeypatch.setattr(project_index, "PARALLEL_FACTS", 1)
    monkeypatch.setattr(pipeline, "RESOLVE_APART", 1)
    monkeypatch.setattr(pipeline, "default_jobs", lambda: 2)
    write(tmp_path, "pool.py", POOL)
    paths = [str(tmp_path / "pool.py")]
    for i in range(count - 1):
        write(tmp_path, f"step{i}.py", STEP.replace("def step(", f"def step{i}("))
        paths.append(str(tmp_path / f"step{i}.py"))
    return project_index.memory_index(paths, ("torch.cuda.graph",)), paths


def test_rows_read_as_they_are_built_resolve_to_the_same_facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold scan's resolving process reads the rows while the workers build them
    (`RowReader`): the facts it resolves are byte for byte those resolved after the build
    (its reader closed unused), and no row was read in this process."""
    import pickle

    from lint_h2d import project_index
    from lint_h2d.pipeline import RowReader, facts_from_index

    streamed, paths = _streamed_index(tmp_path, monkeypatch)
    after, _ = _streamed_index(tmp_path, monkeypatch)
    assert streamed.reader is not None and after.reader is not None
    after.reader.close()
    after.reader = None
    merged: List[str] = []
    real = project_index.merge_facts
    monkeypatch.setattr(project_index, "merge_facts", lambda *a: merged.append(a[2]) or real(*a))
    answers: List[Any] = []
    resolved = RowReader.resolved
    monkeypatch.setattr(RowReader, "resolved", lambda self, index: answers.append(resolved(self, index)) or answers[-1])
    facts = facts_from_index(streamed)
    assert len(answers) == 1 and answers[0] is not None  # the reader resolved them
    assert not os.path.exists(answers[0])  # the file the facts came through is removed
    assert merged == [] and streamed.reader is None and streamed.fresh == {}
    assert pickle.dumps(facts) == pickle.dumps(facts_from_index(after))
    assert len(paths) == 6


def test_a_reader_that_cannot_answer_is_done_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader read other rows than the index's (one dropped), or died: the facts are
    resolved as without it, from the rows this process kept."""
    import pickle

    from lint_h2d.pipeline import facts_from_index

    reference, _ = _streamed_index(tmp_path, monkeypatch)
    assert reference.reader is not None
    reference.reader.close()
    reference.reader = None
    expected = pickle.dumps(facts_from_index(reference))
    dead, _ = _streamed_index(tmp_path, monkeypatch)
    assert dead.reader is not None
    dead.reader._process.terminate()
    dead.reader._process.join()
    assert pickle.dumps(facts_from_index(dead)) == expected
    fewer, paths = _streamed_index(tmp_path, monkeypatch)
    del fewer.rows[paths[-1]]
    smaller, _ = _streamed_index(tmp_path, monkeypatch)
    assert smaller.reader is not None
    smaller.reader.close()
    smaller.reader = None
    del smaller.rows[paths[-1]]
    assert pickle.dumps(facts_from_index(fewer)) == pickle.dumps(facts_from_index(smaller))
