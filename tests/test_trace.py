"""The opt-in timeline (`lint_h2d/trace.py`, `LINT_H2D_TRACE`) and the resolving child's
shorter tail (`pipeline._resolved_from(apart=True)`): neither changes a fact."""
from __future__ import annotations

import gc
import os
import pickle
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import REPO
from tests.test_project_index import _streamed_index


def test_the_trace_has_every_process_s_phases_and_changes_no_fact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold scan's path (index workers, the reader that resolves, this process waiting)
    traced: one line per phase from each process, read back by `bench/timeline.py`; the
    facts are those of the same scan untraced.  Without the variable nothing is written."""
    from lint_h2d.pipeline import facts_from_index

    trace = tmp_path / "trace.tsv"
    monkeypatch.delenv("LINT_H2D_TRACE", raising=False)
    plain, _ = _streamed_index(tmp_path, monkeypatch)
    expected = pickle.dumps(facts_from_index(plain))
    assert not trace.exists()
    monkeypatch.setenv("LINT_H2D_TRACE", str(trace))
    traced, _ = _streamed_index(tmp_path, monkeypatch)
    assert pickle.dumps(facts_from_index(traced)) == expected

    sys.path.insert(0, str(REPO / "bench"))
    try:
        import timeline
    finally:
        sys.path.pop(0)
    spans = timeline.read(str(trace))
    names = {name for _, name, *_ in spans}
    assert {"index.build", "row", "read_row", "facts.read", "facts.resolve", "facts.wait"} <= names
    by_name = {name: {pid for pid, n, *_ in spans if n == name} for name in names}
    here = {os.getpid()}
    assert by_name["facts.wait"] == by_name["index.build"] == here
    assert by_name["row"] and not by_name["row"] & here  # built in the index workers
    reader = by_name["facts.resolve"]  # read and resolved in the reader
    assert reader == by_name["read_row"] and len(reader) == 1 and not reader & (by_name["row"] | here)
    assert all(w0 <= w1 and c0 <= c1 for _, _, w0, w1, c0, c1 in spans)


def test_the_resolving_child_skips_the_collection_it_does_not_need(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resolving child (`_index_facts_file`), which pickles the facts and exits, runs no
    collection after the resolve (the explicit one, or the automatic one skipping it would
    bring: the collector stays paused) unless a snapshot is written next; the facts are byte
    for byte those resolved, with a collection, in the process the analysis forks from."""
    from lint_h2d import pipeline

    collections: List[int] = []

    def count(phase: str, info: Dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    with_it, _ = _streamed_index(tmp_path, monkeypatch)
    assert with_it.reader is not None
    with_it.reader.close()
    gc.callbacks.append(count)
    try:
        expected = pickle.dumps(pipeline._resolved_from(with_it, ()), protocol=pickle.HIGHEST_PROTOCOL)
        assert 2 in collections  # in the process the analysis workers fork from: collected
        collections.clear()
        apart, _ = _streamed_index(tmp_path, monkeypatch)
        assert apart.reader is not None
        apart.reader.close()
        path = pipeline._index_facts_file(apart, ())
        assert collections == [] and apart.snapshot is None
        with open(path, "rb") as handle:
            blob = handle.read()
        os.unlink(path)
    finally:
        gc.callbacks.remove(count)
    assert blob == expected
