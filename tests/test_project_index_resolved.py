"""The project's resolved facts, stored beside the index and reused after an edit that changed
no file's facts (`ProjectIndex.reused_facts`): never when a fact changed, never from a
corrupt, foreign or malicious file, and always equal to resolving again."""
from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from tests.conftest import run_cli
from tests.test_project_index import BUILDER, project, rows


def _touch_later(path: Path) -> None:
    """An mtime past the racy window, so the index sees the edit by stat."""
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000))


def _edit(root: Path, text: str) -> None:
    builder = root / "pkg/builder.py"
    builder.write_text(text)
    _touch_later(builder)


def _facts(root: Path, cache: Any):  # type: ignore[no-untyped-def]
    """The project's facts as a one-file run gets them (`plan._project_engine`)."""
    from lint_h2d.config import Settings
    from lint_h2d.pipeline import facts_from_index
    from lint_h2d.project_index import load_index

    index = load_index(Settings(root=root.resolve()), [str(root / "pkg/builder.py")], cache, walk=False)
    assert index is not None
    return facts_from_index(index)


def _resolved_file(cache: Path) -> Path:
    from lint_h2d.project_index import resolved_path

    (index_file,) = cache.glob("project-index-*.json")
    return resolved_path(index_file)


def test_an_edit_that_changes_no_fact_reuses_the_resolved_facts(tmp_path: Path, resolves: List[int]) -> None:
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)
    assert len(resolves) == 1 and _resolved_file(cache).is_file()
    # A comment changed in place: every line where it was, the summary the same.
    _edit(root, BUILDER.replace("= 0\n", "= 0  # the first offset\n"))
    assert _facts(root, cache) == first
    assert len(resolves) == 1  # not resolved again
    assert first.module_facts.resolved.fields  # (a project with facts: equality could fail)


CALLING = BUILDER + "    build(meta)\n"  # a call of a project function: its sites are read


def _facts_after_edit(tmp_path: Path, before: str, after: str) -> Tuple[Path, Path, Any]:
    """The project with `before` as its builder, its facts stored by a first run, then
    `after` written: the project, the cache folder and the facts the next run gets."""
    root = project(tmp_path / "p")
    _edit(root, before)
    cache = tmp_path / "cache"
    _facts(root, cache)
    _edit(root, after)
    return root, cache, _facts(root, cache)


@pytest.mark.parametrize("before, after", [
    (BUILDER, BUILDER + "\n\ndef other(meta):\n    return meta.query_start_loc\n"),  # a new function
    (CALLING, BUILDER),  # a call deleted
    (BUILDER, CALLING),  # a call added
    (BUILDER, BUILDER.replace("(meta)", "(meta, extra=None)")),  # a parameter added
    (BUILDER, BUILDER + "    record(meta.cuda())\n"),  # a call nothing reads, but around a move
])
def test_an_edit_that_changes_a_fact_resolves_again(tmp_path: Path, resolves: List[int], before: str,
                                                    after: str) -> None:
    root, cache, facts = _facts_after_edit(tmp_path, before, after)
    assert len(resolves) == 2
    assert facts == _facts(root, None)  # as without any cache
    assert _facts(root, cache) == facts and len(resolves) == 3  # stored again: reused now


@pytest.mark.parametrize("before, after", [
    (BUILDER, BUILDER + "    helper(meta)\n"),  # a call added of a function the project does not define
    (BUILDER + "    helper(meta)\n", BUILDER),  # and deleted
    (BUILDER, "record(1)\n\n\n" + BUILDER),  # at module level, every line below it moved
    (BUILDER, BUILDER + "    helper(meta, 2)\n    helper(meta)\n"),  # two of them, its first line moved
    (BUILDER, BUILDER + "    probe = meta.query_start_loc\n    record(probe)\n"),  # of a new local name
])
def test_an_edit_that_adds_or_removes_only_calls_nothing_reads_reuses_them(
        tmp_path: Path, resolves: List[int], before: str, after: str) -> None:
    """A call of a name that is no project function, method or class, nor one a return calls
    (`Resolved.read_callees`), is read by nothing in the resolve (`summary.without_calls`):
    such an edit (a common one in a pre-commit run) carries the stored facts (to the new lines)
    instead of resolving the project again, and they are what a resolve gives."""
    root, _, facts = _facts_after_edit(tmp_path, before, after)
    assert len(resolves) == 1  # carried, not resolved again
    assert facts == _facts(root, None) and len(resolves) == 2  # the second: no cache
    assert facts.fingerprint == _facts(root, None).fingerprint


def test_a_line_inserted_above_reuses_them_at_the_new_lines(tmp_path: Path, resolves: List[int]) -> None:
    """Every line the file's summary records moves, nothing else (`moved_lines`; more in
    tests/test_moved_lines.py)."""
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    _facts(root, cache)
    _edit(root, "\n" + BUILDER)
    assert _facts(root, cache) == _facts(root, None) and len(resolves) == 2  # the second: no cache


def test_a_deleted_statement_the_summary_does_not_record_reuses_them(tmp_path: Path, resolves: List[int]) -> None:
    """A store into a parameter's field is read by the file's own walk, not the summary."""
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)
    _edit(root, "def build(meta):\n    pass\n")
    assert _facts(root, cache) == first and len(resolves) == 1


def test_a_changed_fact_of_another_file_is_not_reused(tmp_path: Path, resolves: List[int]) -> None:
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)
    meta = root / "pkg/meta.py"
    meta.write_text(meta.read_text().replace("query_start_loc_cpu", "other_cpu"))
    _touch_later(meta)
    changed = _facts(root, cache)
    assert changed != first and len(resolves) == 2
    assert changed == _facts(root, None)


def _prime(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)
    target = _resolved_file(cache)
    with open(target, "rb") as handle:
        head = pickle.load(handle)
    stored = json.loads(next(cache.glob("project-index-*.json")).read_text())
    assert head["key"] == stored["key"]
    return root, cache, first, target, head


def test_a_corrupt_or_foreign_resolved_file_is_ignored_and_rebuilt(tmp_path: Path, resolves: List[int]) -> None:
    root, cache, first, target, head = _prime(tmp_path)
    good = target.read_bytes()
    wrong_facts = pickle.dumps({"not": "facts"})
    for bad in (b"\x80\x05truncated", pickle.dumps(head),  # the facts missing
                pickle.dumps(head) + b"\x80\x05trunc",
                pickle.dumps({**head, "key": {**head["key"], "code": "another build"}}) + good[len(pickle.dumps(head)):],
                pickle.dumps({**head, "format": -1}) + good[len(pickle.dumps(head)):],
                pickle.dumps(head) + wrong_facts):
        target.write_bytes(bad)
        count = len(resolves)
        assert _facts(root, cache) == first
        assert len(resolves) == count + 1  # resolved, not read
        assert target.read_bytes() == good  # written again, whole
    count = len(resolves)
    assert _facts(root, cache) == first and len(resolves) == count  # (a good file is read)


def test_a_resolved_file_naming_any_other_callable_runs_nothing(tmp_path: Path, resolves: List[int]) -> None:
    """The cache folder is not trusted: facts that name a callable other than the resolved
    facts' own classes are not loaded, so nothing they name runs."""
    root, cache, first, target, head = _prime(tmp_path)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (Path.touch, (marker,))

    for bad in (pickle.dumps(head) + pickle.dumps(Payload()), pickle.dumps(Payload()),
                pickle.dumps({**head, "files": {"x": Payload()}})):
        target.write_bytes(bad)
        count = len(resolves)
        assert _facts(root, cache) == first
        assert not marker.exists()
        assert len(resolves) == count + 1


def test_the_edited_file_s_findings_equal_a_cold_run_s(tmp_path: Path) -> None:
    """The CLI, edit after edit: the one-file run with a warm cache reports what `--no-cache`
    reports on the same tree."""
    root = project(tmp_path)
    one = ("check", "--output-format", "concise", "pkg/builder.py")
    assert rows(run_cli(*one, cwd=root)) == ["pkg/builder.py:2:5"]
    for text in (BUILDER.replace("= 0\n", "= 0  # edited\n"),  # a comment: facts reused
                 "# moved\n" + BUILDER,  # lines shift
                 BUILDER + "\n\ndef other(meta):\n    meta.query_start_loc[1] = 1\n",  # a new function
                 "def build(meta):\n    pass\n"):  # the statement deleted
        _edit(root, text)
        warm = run_cli(*one, cwd=root)
        cold = run_cli(*one[:1], "--no-cache", *one[1:], cwd=root)
        assert warm.stdout == cold.stdout
    assert rows(warm) == []


def test_a_file_added_or_removed_is_not_reused(tmp_path: Path, resolves: List[int]) -> None:
    """Stored facts name every file they were resolved from: a file added (its facts are new)
    or removed (the others' facts all match) resolves again."""
    root = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)
    extra = root / "pkg/extra.py"
    extra.write_text("def helper(meta):\n    return meta\n")
    folder = root / "pkg"
    os.utime(folder, ns=(folder.stat().st_atime_ns, folder.stat().st_mtime_ns + 10_000_000))
    _facts(root, cache)
    assert len(resolves) == 2
    extra.unlink()
    os.utime(folder, ns=(folder.stat().st_atime_ns, folder.stat().st_mtime_ns + 20_000_000))
    assert _facts(root, cache) == first and len(resolves) == 3
