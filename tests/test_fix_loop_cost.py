"""The fix loop's choice of non-overlapping fixes (issue 15, item 22): the same choice as testing
each fix against every span taken before it, without the (fixes x fixes) cost that a file with
10,000 findings paid on every pass."""
from __future__ import annotations

from typing import List, Sequence, Tuple

import pytest
from hypothesis import given, settings as hsettings, strategies as st

import lint_h2d.fix_loop as fix_loop
from fixers.edits import TextEdit, line_offsets, to_offset
from lint_h2d.findings import Applicability, Finding, Fix, Location

TEXT = "".join(f"line {i:02d} = value_{i:02d}\n" for i in range(6))  # 6 lines of 20 characters


def _finding(row: int, column: int, edits: Sequence[TextEdit]) -> Finding:
    return Finding("H2D001", "m", "f.py", Location(row, column), Location(row, column + 1),
                   fix=Fix(Applicability.SAFE, "fix", tuple(edits)))


def _pairwise(text: str, fixes: Sequence[Finding]) -> Tuple[List[Finding], List[TextEdit]]:
    """The loop's choice as it was written before: each fix against every span taken so far."""
    offsets = line_offsets(text)
    taken: List[Tuple[int, int]] = []
    chosen: List[Finding] = []
    edits: List[TextEdit] = []
    seen = set()
    for finding in sorted(fixes, key=Finding.sort_key):
        assert finding.fix is not None
        spans = [(to_offset(offsets, e.start), to_offset(offsets, e.end)) for e in finding.fix.edits if e not in seen]
        if any(fix_loop._overlaps(s, t) for s in spans for t in taken):
            continue
        taken.extend(spans)
        chosen.append(finding)
        for e in finding.fix.edits:
            if e not in seen:
                seen.add(e)
                edits.append(e)
    return chosen, edits


_POSITION = st.tuples(st.integers(1, 6), st.integers(0, 20))
_EDIT = st.tuples(_POSITION, st.integers(0, 25), st.sampled_from(["", "x", "import torch\n"])).map(
    lambda t: TextEdit(t[0], _advance(t[0], t[1]), t[2]))
# Shared edits (one import wanted by many fixes) come from a small pool.
_SHARED = [TextEdit((1, 0), (1, 0), "import torch\n"), TextEdit((3, 4), (3, 9), "y")]


def _advance(start: Tuple[int, int], length: int) -> Tuple[int, int]:
    offsets = line_offsets(TEXT)
    offset = min(to_offset(offsets, start) + length, len(TEXT))
    line = max(i for i, o in enumerate(offsets) if o <= offset)
    return (line + 1, offset - offsets[line])


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_POSITION, st.lists(_EDIT, min_size=1, max_size=3),
                          st.lists(st.sampled_from(_SHARED), max_size=1)), max_size=14))
def test_the_choice_is_the_pairwise_choice(specs: list) -> None:  # type: ignore[type-arg]
    fixes = [_finding(row, column, edits + shared) for (row, column), edits, shared in specs]
    assert fix_loop._non_overlapping(TEXT, fixes) == _pairwise(TEXT, fixes)


def _comparisons(count: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many span pairs the choice compares for ``count`` disjoint fixes plus one shared import."""
    text = "".join(f"t_{i}[0] = 0\n" for i in range(count))
    import_edit = TextEdit((1, 0), (1, 0), "import torch\n")
    fixes = [_finding(i + 1, 0, [TextEdit((i + 1, 0), (i + 1, 10), f"t_{i}[0:1].zero_()"), import_edit])
             for i in range(count)]
    calls = [0]
    original = fix_loop._overlaps

    def counting(a: Tuple[int, int], b: Tuple[int, int]) -> bool:
        calls[0] += 1
        return original(a, b)

    with monkeypatch.context() as patch:
        patch.setattr(fix_loop, "_overlaps", counting)
        chosen, edits = fix_loop._non_overlapping(text, fixes)
    assert len(chosen) == count and len(edits) == count + 1
    return calls[0]


def test_choosing_among_many_fixes_does_not_compare_every_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = _comparisons(200, monkeypatch), _comparisons(800, monkeypatch)
    # Pairwise: ~20,000 and ~320,000 comparisons.
    assert large <= 4 * small + 800, (small, large)
