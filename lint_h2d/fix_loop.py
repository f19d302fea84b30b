"""The fix loop: apply fixes until none is left, re-analyzing the text after every pass.

It sees a file only through `analyze(path, text)`, so it knows nothing of rules, parsers or
caches; it guarantees that no edit is applied to text it was not computed for and that no
applied fix leaves a file that does not parse.
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from fixers.edits import OverlappingEdits, TextEdit, apply_edits, line_offsets, split_lines, to_offset
from fixers.pipeline import Rewrite, group_edit, runs
from lint_h2d.triage import cpython_parse
from lint_h2d.diagnostics import SYNTAX_ERROR
from lint_h2d.findings import Finding
from lint_h2d.parse_view import parse_view

MAX_FIX_ITERATIONS = 10


def fix_text(analyze: Callable[[str, str], List[Finding]], path: str, text: str, unsafe: bool,
             trace: Optional[List[Tuple[Finding, str]]] = None) -> Tuple[str, List[Finding], List[Finding]]:
    """Apply fixes until none is left (or edits stop converging).

    Returns the new text, the findings that were fixed, and those that remain.
    Fixes whose edits overlap are applied in later passes, after re-analysis, so no edit
    is ever applied to text it was not computed for.  A fix whose rewrite does not parse
    is left out (and reported unfixed, with the reason); the others are still applied.
    ``trace`` receives every applied finding with the text its fix was computed on (what
    `verify` checks: exactly these fixes).
    """
    applied: List[Finding] = []
    broken: Dict[Tuple[str, Tuple[Tuple[str, str], ...]], str] = {}
    findings = analyze(path, text)
    for _ in range(MAX_FIX_ITERATIONS):
        fixable = [f for f in findings if f.fix_applies(unsafe)]
        if broken:  # the line table once per pass, not once per finding (10k findings: minutes)
            offsets = line_offsets(text)
            fixable = [f for f in fixable if _fix_key(text, f, offsets) not in broken]
        if not fixable:
            break
        chosen, edits = _non_overlapping(text, fixable)
        chosen, edits = _planned(text, chosen, edits)
        try:
            new_text = apply_edits(text, edits)
        except OverlappingEdits:  # pragma: no cover - _non_overlapping prevents it
            break
        if new_text == text:
            break
        after = analyze(path, new_text)
        if any(f.code == SYNTAX_ERROR for f in after):
            # A fix must never break a file: find the fixes that break it on their own,
            # set them aside, and apply the rest (one at a time if they only fail together).
            good: List[Finding] = []
            offsets = line_offsets(text)
            for finding in chosen:
                assert finding.fix is not None
                problem = _parse_problem(path, apply_edits(text, finding.fix.edits))
                if problem is None:
                    good.append(finding)
                else:
                    broken[_fix_key(text, finding, offsets)] = problem
            if not good:
                continue
            chosen, edits = _non_overlapping(text, good)
            new_text = apply_edits(text, edits)
            after = analyze(path, new_text)
            if any(f.code == SYNTAX_ERROR for f in after):
                chosen = good[:1]
                assert chosen[0].fix is not None
                new_text = apply_edits(text, chosen[0].fix.edits)
                after = analyze(path, new_text)
        if trace is not None:
            trace.extend((f, text) for f in chosen)
        text = new_text
        applied.extend(chosen)
        findings = after
    if broken:
        offsets = line_offsets(text)
        keys = {id(f): _fix_key(text, f, offsets) for f in findings if f.fix is not None}
        findings = [
            replace(f, fix=None, no_fix_reason=f"the rewrite does not parse ({broken[keys[id(f)]]})")
            if id(f) in keys and keys[id(f)] in broken else f
            for f in findings
        ]
    return text, applied, findings


def _planned(text: str, chosen: List[Finding], edits: List[TextEdit]) -> Tuple[List[Finding], List[TextEdit]]:
    """The fix pipeline's view of one pass (`fixers/pipeline.py`).

    Deletions go first, in a pass of their own (with fixes that never group): a gated rewrite
    next to a deleted statement becomes adjacent to the next rewrite only once the deletion
    is in the text, and re-analysis then groups them.  Otherwise consecutive gated rewrites
    of one block share one gate: their single edits are replaced by one edit per run.  Each
    finding keeps its own fix (``--diff`` of one finding, the language server, ``verify``);
    only what the loop writes changes.
    """
    def rewrite(f: Finding) -> Optional[Rewrite]:
        return f.fix.rewrite if f.fix is not None else None

    pieces = [rewrite(f) for f in chosen]
    if any(r is not None and r.delete for r in pieces):
        first = [f for f, r in zip(chosen, pieces) if r is None or not r.groups]
        return _non_overlapping(text, first)
    grouped = [run for run in runs(r for r in pieces if r is not None and r.groups) if len(run) > 1]
    if not grouped:
        return chosen, edits
    replaced = {r.single for run in grouped for r in run}
    planned = [e for e in edits if e not in replaced] + [group_edit(run) for run in grouped]
    try:
        apply_edits(text, planned)
    except OverlappingEdits:  # pragma: no cover - runs cover only their own statements and comments
        return chosen, edits
    return chosen, planned


def _fix_key(text: str, finding: Finding, offsets: Sequence[int]) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    """A fix's identity across passes: the text it replaces and the text it writes (``offsets``:
    ``line_offsets(text)``, computed once by the caller for all its findings)."""
    assert finding.fix is not None
    spans = tuple(
        (text[to_offset(offsets, e.start):to_offset(offsets, e.end)], e.text) for e in finding.fix.edits
    )
    return finding.code, spans


def _parse_problem(path: str, text: str) -> Optional[str]:
    """Why ``text`` would not parse (CPython or LibCST), or None."""
    _, errors = cpython_parse(path, text)
    if errors:
        return f"line {errors[0].location.row}: {errors[0].message}"
    try:
        cst.parse_module(parse_view(text).text)
    except Exception as exc:  # noqa: BLE001 - any parser failure means "does not parse"
        return split_lines(str(exc))[0] if str(exc) else type(exc).__name__
    return None


def _non_overlapping(text: str, fixes: Sequence[Finding]) -> Tuple[List[Finding], List[TextEdit]]:
    """The fixes, in file order, that overlap none taken before them (`_overlaps`), and their
    edits (an edit two fixes share, such as one import, counted once).

    Why `_Taken`: testing each fix against every span taken so far cost (fixes x fixes), which
    a file with 10,000 findings paid on every pass of the loop."""
    offsets = line_offsets(text)
    ordered = sorted(fixes, key=Finding.sort_key)
    spans_of: List[List[Tuple[int, int]]] = []
    for finding in ordered:
        assert finding.fix is not None
        spans_of.append([(to_offset(offsets, e.start), to_offset(offsets, e.end)) for e in finding.fix.edits])
    taken = _Taken(sorted({start for spans in spans_of for start, _ in spans}))
    chosen: List[Finding] = []
    edits: List[TextEdit] = []
    seen_edits = set()
    for finding, all_spans in zip(ordered, spans_of):
        assert finding.fix is not None
        spans = [span for e, span in zip(finding.fix.edits, all_spans) if e not in seen_edits]
        if any(taken.overlaps(s) for s in spans):
            continue
        for span in spans:
            taken.add(span)
        chosen.append(finding)
        for e in finding.fix.edits:
            if e not in seen_edits:
                seen_edits.add(e)
                edits.append(e)
    return chosen, edits


class _Taken:
    """Spans taken so far, asked "does any overlap this one?" in O(log n).

    `_overlaps(s, t)` is, in every case (insertions included), ``t.start < s.end and
    s.start < t.end``: so a span overlaps a taken one exactly when, among the taken spans that
    start before its end, the largest end lies after its start.  A Fenwick tree over the
    possible starts (known in advance) keeps that largest end per prefix."""

    def __init__(self, starts: Sequence[int]) -> None:
        self.starts = starts
        self.ends = [-1] * (len(starts) + 1)

    def add(self, span: Tuple[int, int]) -> None:
        start, end = span
        i = bisect_left(self.starts, start) + 1
        while i < len(self.ends):
            if self.ends[i] < end:
                self.ends[i] = end
            i += i & -i

    def overlaps(self, span: Tuple[int, int]) -> bool:
        start, end = span
        i = bisect_left(self.starts, end)  # the taken spans that start before `end`
        largest = -1
        while i > 0:
            if self.ends[i] > largest:
                largest = self.ends[i]
            i -= i & -i
        return largest > start


def _overlaps(a: Tuple[int, int], b: Tuple[int, int]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # an insertion conflicts only strictly inside a span
        point, span = (a, b) if a[0] == a[1] else (b, a)
        return span[0] < point[0] < span[1]
    return a[0] < b[1] and b[0] < a[1]
