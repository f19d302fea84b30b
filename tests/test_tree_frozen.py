"""A long file analyzed with the collector running (issue 15, item 22): its tree is out of the
collections' reach while the walk and the rules run, so each collection costs what they allocate,
not the whole file (the oldest generation's walks of the tree made the time grow faster than the
file).  The collector itself keeps running, so their cyclic garbage still goes on the way."""
from __future__ import annotations

import gc
from pathlib import Path
from typing import List, Tuple

import pytest

from lint_h2d import analysis
from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.inference.project import collect

TEXT = "import torch\n\nt = torch.zeros(4, device='cuda')\nt[0] = 1\n"


def _during_walk(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[bool, bool, int]]:
    """(collector on, tree frozen, freeze count) as the walk starts."""
    seen: List[Tuple[bool, bool, int]] = []
    original = analysis.ModuleWalker.run

    def run(self: analysis.ModuleWalker) -> list:  # type: ignore[type-arg]
        frozen = not any(o is self.module for o in gc.get_objects())  # frozen objects are not listed
        seen.append((gc.isenabled(), frozen, gc.get_freeze_count()))
        return original(self)

    monkeypatch.setattr(analysis.ModuleWalker, "run", run)
    return seen


def test_the_tree_is_frozen_while_the_rules_run_and_thawed_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "FREEZE_MIN_CHARS", len(TEXT))  # TEXT stands for a long file
    seen = _during_walk(monkeypatch)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    findings = Engine(Settings(root=Path.cwd()), collect([TEXT])).analyze("big.py", TEXT)
    assert [f.code for f in findings] == ["H2D001"]
    assert seen[0][0] and seen[0][1] and seen[0][2] > 0
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_nothing_changes_when_the_collector_is_paused_or_the_heap_already_frozen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "FREEZE_MIN_CHARS", len(TEXT))
    seen = _during_walk(monkeypatch)
    engine = Engine(Settings(root=Path.cwd()), collect([TEXT]))
    gc.disable()
    try:
        assert [f.code for f in engine.analyze("small.py", TEXT)] == ["H2D001"]
        assert not gc.isenabled()
    finally:
        gc.enable()
    gc.freeze()  # the pipeline's `frozen_heap`: unfreezing would thaw what it froze
    try:
        before = gc.get_freeze_count()
        assert [f.code for f in engine.analyze("other.py", TEXT)] == ["H2D001"]
        assert gc.get_freeze_count() == before and gc.isenabled()
    finally:
        gc.unfreeze()
    assert [(on, frozen) for on, frozen, _ in seen] == [(False, False), (True, False)]


def test_a_short_file_is_left_to_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    # A full collection per file would cost more than it saves on short files (an in-process run
    # checks many): below FREEZE_MIN_CHARS nothing is collected or frozen.
    seen = _during_walk(monkeypatch)
    collected: List[int] = []
    real_collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or real_collect(*a))
    findings = Engine(Settings(root=Path.cwd()), collect([TEXT])).analyze("small.py", TEXT)
    assert [f.code for f in findings] == ["H2D001"]
    assert seen[0][0] and not seen[0][1] and seen[0][2] == 0
    assert not collected
