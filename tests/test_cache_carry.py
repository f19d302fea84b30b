"""A line-moving edit keeps the other files' cached findings (issue 12).

An edit that only moves lines (a comment added at the top: almost any edit) gives the project's
facts a new fingerprint, since evidence records lines; the facts are carried to the new lines
without resolving (`ProjectIndex.reused_facts`).  The findings cache is keyed by that
fingerprint, so before this every later scan of the tree analysed every file again (23 s on
vLLM instead of 0.4 s).  Now the old key's entries that name no moved file are taken over
(`cache.Cache`): only the edited file and the files whose findings point into it are analysed
again, and the findings equal a cold run's, evidence lines included.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from lint_h2d.cache import Cache, _named, _names_any
from tests.test_warm_path import _count_reads, clock_ahead, json_report, set_clock_ahead  # noqa: F401 (a fixture)

STATE = 'import torch\n\n\nclass State:\n    def __init__(self, n: int) -> None:\n        self.active = torch.zeros(n, device="cuda")\n'
USE = "from pkg.state import State\n\n\ndef reset(state: State, rank: int) -> None:\n    state.active[rank] = 1\n"
OWN = "import torch\n\n\ndef build(n):\n    t = torch.empty(n, device='cuda')\n    t[0] = 0\n    return t\n"
QUIET = "def build(meta):\n    meta.seq_lens[0] = 0\n"
# A file whose name ends like the edited one's: its findings do not name `state.py`.
OTHER = ("import torch\n\n\nclass Other:\n    def __init__(self, n: int) -> None:\n"
         "        self.flags = torch.zeros(n, device='cuda')\n\n    def set(self, i: int) -> None:\n"
         "        self.flags[i] = 1\n")


def project(root: Path) -> Path:
    for name, text in {"pyproject.toml": "[project]\nname = 'p'\n", "pkg/__init__.py": "", "pkg/state.py": STATE,
                       "pkg/use.py": USE, "pkg/own.py": OWN, "pkg/quiet.py": QUIET,
                       "pkg/other_state.py": OTHER}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def report(capsys: pytest.CaptureFixture, root: Path, *args: str) -> List[Dict[str, Any]]:
    """The JSON report (evidence included), paths made real."""
    out = json_report(capsys, root, *args)
    for d in out:
        d["filename"] = os.path.realpath(d["filename"])
    return sorted(out, key=lambda d: (d["filename"], d["location"]["row"], d["code"]))


def _edit(root: Path, text: str) -> None:
    (root / "pkg/state.py").write_text(text, encoding="utf-8")


def test_a_tree_scan_after_a_line_moving_edit_analyses_only_what_names_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, clock_ahead: None) -> None:
    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    before = report(capsys, root, *cache, ".")
    use = [d for d in before if d["filename"].endswith("use.py")]
    assert [e["location"]["row"] for e in use[0]["evidence"] if (e["filename"] or "").endswith("state.py")] == [4, 6]
    _edit(root, "# a comment added at the top\n" + STATE)
    # The pre-commit run of the edited file, then the next scan of the tree.
    assert report(capsys, root, *cache, "pkg/state.py") == report(capsys, root, "--no-cache", "pkg/state.py")
    reads = _count_reads(monkeypatch)
    warm = report(capsys, root, *cache, ".")
    assert reads == ["use.py"]  # its evidence names `state.py`; every other file kept its entry
    cold = report(capsys, root, "--no-cache", ".")
    assert warm == cold
    moved = [d for d in warm if d["filename"].endswith("use.py")]
    assert [e["location"]["row"] for e in moved[0]["evidence"] if (e["filename"] or "").endswith("state.py")] == [5, 7]
    reads.clear()
    assert report(capsys, root, *cache, ".") == cold and reads == []


def test_a_tree_scan_right_after_the_edit_carries_them_too(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, clock_ahead: None) -> None:
    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    report(capsys, root, *cache, ".")
    _edit(root, STATE.replace("\n\n\nclass", "\n\n\n\n\nclass"))
    reads = _count_reads(monkeypatch)
    warm = report(capsys, root, *cache, ".")
    assert sorted(reads) == ["state.py", "use.py"]
    assert warm == report(capsys, root, "--no-cache", ".")


def _after_the_child_stored(monkeypatch: pytest.MonkeyPatch, cache_dir: Path) -> None:
    """The resolving child, when it is quicker than this process, has stored its facts
    (replacing the file of the facts resolved before) when this process reads those: made
    so here by waiting, in `_import_engine` (the parent's step before it reads), for the
    file to be replaced."""
    from lint_h2d import pipeline

    [stored] = cache_dir.rglob("*-resolved.pickle")
    before = stored.stat().st_ino
    real = pipeline._import_engine

    def wait_for_the_child() -> None:
        real()
        deadline = time.monotonic() + 60
        while stored.exists() and stored.stat().st_ino == before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stored.stat().st_ino != before

    monkeypatch.setattr(pipeline, "_import_engine", wait_for_the_child)


@pytest.mark.parametrize("how", ["here", "child", "child first"],
                         ids=["resolved here", "resolved in a child", "the child stores first"])
def test_an_edit_the_resolve_ignores_carries_them_too(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, clock_ahead: None,
        how: str) -> None:
    """A call of a function the project does not define changes the file's facts (its summary
    records call sites), so the project is resolved again; the resolved facts are the old ones
    with the file's lines moved (`moved_lines.same_but_lines`), so the entries that name the
    file are the only ones left behind.  Whichever process is first: the child's storing of
    the facts it resolved does not hide the old ones from this process (it failed 1 CI run
    in 4 before `ProjectIndex.hold_resolved`)."""
    from lint_h2d import pipeline

    if how != "here":
        monkeypatch.setattr(pipeline, "RESOLVE_APART", 1)  # the forked child's way, as on vLLM
    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    report(capsys, root, *cache, ".")
    if how == "child first":
        _after_the_child_stored(monkeypatch, tmp_path / "cache")
    _edit(root, STATE.replace("        self.active", "        self.probe = probe_helper(n)\n        self.active"))
    assert report(capsys, root, *cache, "pkg/state.py") == report(capsys, root, "--no-cache", "pkg/state.py")
    reads = _count_reads(monkeypatch)
    warm = report(capsys, root, *cache, ".")
    assert reads == ["use.py"]
    assert warm == report(capsys, root, "--no-cache", ".")
    assert [e["location"]["row"] for d in warm if d["filename"].endswith("use.py")
            for e in d["evidence"] if (e["filename"] or "").endswith("state.py")] == [4, 7]
    # The file a resolving child hands its facts through (`pipeline._index_facts_file`) is gone.
    assert not list((tmp_path / "cache").rglob(".lint-h2d-facts-*"))


def test_an_edit_that_changes_a_fact_carries_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, clock_ahead: None) -> None:
    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    report(capsys, root, *cache, ".")
    _edit(root, "# a comment\n" + STATE.replace('device="cuda"', 'device="cpu"'))
    reads = _count_reads(monkeypatch)
    warm = report(capsys, root, *cache, ".")
    assert sorted(reads) == ["__init__.py", "other_state.py", "own.py", "quiet.py", "state.py", "use.py"]
    assert warm == report(capsys, root, "--no-cache", ".")
    assert not any(d["filename"].endswith("use.py") for d in warm)  # the field is on the CPU now


def _entry(findings: List[Any]) -> Dict[str, Any]:
    return {"sha256": "0" * 64, "stat": None, "seen": 0, "findings": findings}


def test_the_entries_taken_over_name_no_moved_file(tmp_path: Path) -> None:
    old = Cache(tmp_path, "old")
    old.entries = {
        "/p/a.py": _entry([]),
        "/p/b.py": _entry([{"message": "m", "evidence": [["e", "/p/pkg/utils.py", 3, None, "direct"]]}]),
        "/p/c.py": _entry([{"message": "`f` is called by `g` (utils.py:12)", "evidence": []}]),
        "/p/d.py": _entry([{"message": "m", "evidence": [["e", "/p/pkg/mamba_utils.py", 3, None, "direct"]]}]),
        "/p/e.py": _entry([{"message": "m", "evidence": [["e", "/p/pkg/other.py", 3, None, "direct"]]}]),
        "/p/g.py": "not an entry",
    }
    old.dirty = True
    tmp_path.joinpath(".gitignore").write_text("# Automatically created by lint-h2d.\n*\n", encoding="utf-8")
    old.save()
    new = Cache(tmp_path, "new", carry=("old", frozenset({"utils.py"})))
    assert sorted(new.entries) == ["/p/a.py", "/p/d.py", "/p/e.py"] and new.dirty
    mine = Cache(tmp_path, "mine")
    mine.entries = {"/p/a.py": _entry([{"message": "recorded under this key"}])}
    mine.dirty = True
    mine.save()
    kept = Cache(tmp_path, "mine", carry=("old", frozenset({"utils.py"})))
    assert kept.entries["/p/a.py"]["findings"] == [{"message": "recorded under this key"}]
    assert sorted(kept.entries) == ["/p/a.py", "/p/d.py", "/p/e.py"]
    assert Cache(tmp_path, "old", carry=("old", frozenset({"utils.py"}))).entries == old.entries
    assert not Cache(tmp_path, "empty", carry=("missing", frozenset({"utils.py"}))).entries


def test_names_match_whole_components_only() -> None:
    names = _named(frozenset({"utils.py", "a-b.py"}))
    assert _names_any(["/a/utils.py", "x"], names) and _names_any({"k": "(utils.py:3)"}, names)
    assert _names_any("C:\\a\\utils.py", names)
    assert not _names_any(["/a/mamba_utils.py", "a.utils.py", "utils.pyc", 3, None, True], names)
    assert _names_any("`a-b.py:2`", names) and not _names_any("x-a-b.py", names)
    assert _names_any([object()], names)  # not JSON data: not taken over


def test_a_run_of_line_moving_edits_always_gives_the_cold_findings(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, clock_ahead: None) -> None:
    """Edits one after another (one file, two at once, one undone), each checked first by a
    one-file run of what changed or straight by the tree: the tree's warm findings, evidence
    lines included, are the cold run's every time, and files that name no edited file are not
    read again."""
    import random

    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    report(capsys, root, *cache, ".")
    rng = random.Random(int(os.environ.get("LINT_H2D_TEST_SEED", "12")))
    original = {"pkg/state.py": STATE, "pkg/use.py": USE, "pkg/own.py": OWN, "pkg/other_state.py": OTHER}
    texts = dict(original)
    for step in range(8):
        edited = rng.sample(sorted(texts), 1 if step % 2 else 2)
        for name in edited:
            if step == 5:  # undone
                texts[name] = original[name]
                (root / name).write_text(texts[name], encoding="utf-8")
                continue
            lines = texts[name].splitlines(keepends=True)
            # A blank line or a comment between two top-level or body lines, never inside a
            # bracket: every file here keeps each statement on one line.
            at = rng.randrange(len(lines) + 1)
            texts[name] = "".join(lines[:at] + [rng.choice(["\n", "# note\n"])] + lines[at:])
            if at < len(lines) and lines[at][:1] == " ":  # inside a body: keep the indentation
                texts[name] = "".join(lines[:at] + ["    # note\n"] + lines[at:])
            (root / name).write_text(texts[name], encoding="utf-8")
        if step % 3 == 0:
            report(capsys, root, *cache, *edited)
        reads = _count_reads(monkeypatch)
        warm = report(capsys, root, *cache, ".")
        assert "quiet.py" not in reads and "__init__.py" not in reads, (step, reads)
        assert warm == report(capsys, root, "--no-cache", "."), (step, edited)
        monkeypatch.undo()
        set_clock_ahead(monkeypatch)  # (`undo` undid the clock too)

