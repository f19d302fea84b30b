"""Fix fixtures: `tests/fixtures/<CODE>_<case>.in.py` is fixed and compared with `.out.py`.

The first line of an input may set options: `# lint-h2d: fix-gate=none unsafe-fixes`
(`sync-allowed=a,b.c` sets that list; `sync-allowed=` empties it).
Each pair also proves idempotence: fixing the output again changes nothing.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Tuple

import libcst as cst
import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.inference.project import collect
from tests.conftest import FIXTURES
from tests.snapshots import compare

PAIRS = sorted(FIXTURES.glob("H2D*.in.py"))


def options(text: str) -> Tuple[Settings, bool]:
    settings = Settings(root=FIXTURES)
    unsafe = False
    first = text.splitlines()[0] if text else ""
    m = re.match(r"#\s*lint-h2d:\s*(.*)", first)
    if m:
        for word in m.group(1).split():
            if word == "unsafe-fixes":
                unsafe = True
            elif word.startswith("fix-gate="):
                settings = dataclasses.replace(settings, fix_gate=word.split("=", 1)[1])
            elif word.startswith("sync-allowed="):
                names = tuple(n for n in word.split("=", 1)[1].split(",") if n)
                settings = dataclasses.replace(settings, sync_allowed=names)
    return settings, unsafe


def fix(path: Path, text: str) -> Tuple[str, int, list]:
    settings, unsafe = options(text)
    engine = Engine(settings, collect([text]))
    new, applied, remaining = engine.fix_text(str(path), text, unsafe)
    return new, len(applied), remaining


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.name)
def test_fix_matches_expected(pair: Path, update_snapshots: bool) -> None:
    text = pair.read_bytes().decode("utf-8")
    new, applied, _ = fix(pair, text)
    assert applied > 0, "the fixture must exercise at least one fix"
    cst.parse_module(new)
    compile(new, str(pair), "exec")
    compare(new, pair.with_name(pair.name.replace(".in.py", ".out.py")), update_snapshots)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.name)
def test_fix_is_idempotent(pair: Path) -> None:
    text = pair.read_bytes().decode("utf-8")
    once, _, remaining = fix(pair, text)
    twice, applied, remaining_again = fix(pair, once)
    assert twice == once and applied == 0
    assert remaining_again == remaining


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.name)
def test_only_fix_sites_change(pair: Path) -> None:
    """Every line of the input survives in order: fixes only insert lines around kept ones,
    or replace the flagged statement lines themselves."""
    import difflib

    text = pair.read_bytes().decode("utf-8")
    new, _, _ = fix(pair, text)
    settings, unsafe = options(text)
    findings = Engine(settings, collect([text])).analyze(str(pair), text)
    fixed_rows = set()
    for f in findings:
        if f.fix is not None:
            for e in f.fix.edits:
                fixed_rows.update(range(e.start[0], e.end[0] + 1))
            rewrite = f.fix.rewrite
            if rewrite is not None and rewrite.groups:
                # Comment and blank lines above a rewrite move into `else` when it joins a run.
                fixed_rows.update(range(rewrite.start[0] - len(rewrite.leading), rewrite.start[0]))
    old_lines = text.splitlines()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            touched = set(range(i1 + 1, i2 + 1))
            assert touched <= fixed_rows, f"lines {sorted(touched - fixed_rows)} changed outside fix sites"
