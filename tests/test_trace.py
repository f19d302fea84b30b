"""The opt-in timeline (`lint_h2d/trace.py`, `LINT_H2D_TRACE`): it changes no fact."""
from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

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

