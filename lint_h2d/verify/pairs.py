"""Statement pairs (original, rewrite) taken from the fixer's real output.

Why a separate, torch-free module: finding what to verify is static work (engine + text
edits); only executing the pair needs torch.  The user's module is never imported: only the
one statement and its rewrite are executed later, in a synthesized namespace.
"""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Tuple

from fixers.edits import TextEdit, line_offsets, split_lines, to_offset
from fixers.pipeline import group_edit, runs
from lint_h2d.config import Settings
from lint_h2d.engine import ERROR_CODES, Engine, Source
from lint_h2d.findings import Finding

# Names every statement may use without a binding from us.
BUILTIN_CALLS = frozenset({"len", "int", "float", "bool", "abs", "min", "max", "round"})
PROVIDED = frozenset({"torch", "current_platform", "True", "False", "None"}) | BUILTIN_CALLS


@dataclass(frozen=True)
class StatementPair:
    """One fix: the statement as written and the text that replaces it, both dedented."""

    code: str  # rule code
    path: str
    row: int
    original: str
    rewritten: str
    target: str  # the written tensor's base expression (details "target")
    rank: Optional[int]
    applicability: str
    # The tensor length the rule proved at the write (the fix then uses the slice spelling).
    min_length: int = 0
    # A deleted redundant write: the allocating call the rule says left the value there.
    allocation: Optional[str] = None
    # A run of rewrites the fix loop put under one gate: how many, and why the group is not
    # exactly the single rewrites side by side (None when it is).
    grouped: int = 0
    problem: Optional[str] = None

    @property
    def label(self) -> str:
        return f"{self.path}:{self.row}"


def _dedent(text: str, column: int) -> str:
    """Edit text starts at ``column``; later lines carry that indentation too: strip it.

    Lines are split where Python splits them and joined with ``\\n`` (what ``exec`` and
    ``textwrap`` expect), so CR-only and CRLF files verify like any other.
    """
    lines = split_lines(text) + ([""] if text.endswith(("\n", "\r")) or not text else [])
    out = [lines[0]]
    for line in lines[1:]:
        strip = 0
        while strip < column and strip < len(line) and line[strip] in " \t":
            strip += 1
        out.append(line[strip:])
    return "\n".join(out)


def _statement_edit(finding: Finding) -> Optional[TextEdit]:
    """The edit that replaces the statement: the one that is not an import insertion."""
    if finding.fix is None:
        return None
    for edit in finding.fix.edits:
        if edit.is_insertion:
            continue
        return edit
    return None


def _detail(finding: Finding, key: str) -> Optional[str]:
    for k, v in finding.details:
        if k == key:
            return v
    return None


def _rank(finding: Finding) -> Optional[int]:
    text = _detail(finding, "rank")
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def pair_from_finding(finding: Finding, text: str) -> Optional[StatementPair]:
    """The (original, rewrite) pair of one finding's fix, or None when it has no fix."""
    expression, replacement = _detail(finding, "expression"), _detail(finding, "replacement")
    if finding.fix is not None and expression is not None and replacement is not None:
        # An expression rewritten in place (H2D003/H2D004): the rule recorded both sides.
        return StatementPair(finding.code, finding.path, finding.location.row, expression,
                             replacement, "", None, finding.fix.applicability.value)
    edit = _statement_edit(finding)
    if edit is None:
        return None
    offsets = line_offsets(text)
    original = text[to_offset(offsets, edit.start) : to_offset(offsets, edit.end)]
    # Later lines carry the statement's indentation: what precedes it on its line, without
    # anything up to a form feed (Python restarts the indentation there).
    prefix = text[offsets[edit.start[0] - 1] : to_offset(offsets, edit.start)]
    column = len(prefix) - (prefix.rfind("\f") + 1)
    target = _detail(finding, "target") or ""
    before, after = _narrowed(
        textwrap.dedent(_dedent(original, column)).strip("\n"),
        textwrap.dedent(_dedent(edit.text, column)).strip("\n"),
    )
    proven = _detail(finding, "min_length")
    rewrite = finding.fix.rewrite if finding.fix else None
    if rewrite is not None and rewrite.delete and not after.strip():
        after = "pass"
    return StatementPair(
        code=finding.code,
        path=finding.path,
        row=finding.location.row,
        original=before,
        rewritten=after,
        target=" ".join(target.split()),
        rank=_rank(finding),
        applicability=finding.fix.applicability.value if finding.fix else "",
        min_length=int(proven) if proven and proven.isdigit() else 0,
        allocation=_detail(finding, "allocation") if rewrite is not None and rewrite.delete else None,
    )


def _dedented(text: str, edit: TextEdit) -> str:
    """The edit's text as a dedented block (what ``pair_from_finding`` does to a single edit)."""
    offsets = line_offsets(text)
    prefix = text[offsets[edit.start[0] - 1] : to_offset(offsets, edit.start)]
    column = len(prefix) - (prefix.rfind("\f") + 1)
    return textwrap.dedent(_dedent(edit.text, column)).strip("\n")


def composition_problem(group: str, singles: Sequence[str]) -> Optional[str]:
    """Why ``group`` (one gate) is not the ``singles`` (one gate each) side by side, or None.

    Each single rewrite is verified on its own; the group is equivalent to running them one
    after the other when it is one ``if`` with the same test, whose branches hold the singles'
    branches in order (the test is a platform flag: the same value every time it is read).
    """
    try:
        tree = ast.parse(group).body
        parts = [ast.parse(single).body for single in singles]
    except SyntaxError as exc:
        return f"does not parse: {exc}"
    lazy = [n for n in tree if not isinstance(n, ast.If)]
    ifs = [n for n in tree if isinstance(n, ast.If)]
    if len(ifs) != 1:
        return "the group is not one `if`"
    gate = ifs[0]
    bodies: List[str] = []
    others: List[str] = []
    for part in parts:
        found = [n for n in part if isinstance(n, ast.If)]
        if len(found) != 1 or ast.dump(found[0].test) != ast.dump(gate.test):
            return "a single rewrite has another gate"
        bodies += [ast.dump(n) for n in found[0].body]
        others += [ast.dump(n) for n in found[0].orelse]
        if [ast.dump(n) for n in part if not isinstance(n, ast.If)] != [ast.dump(n) for n in lazy]:
            return "the lazy import differs"
    if [ast.dump(n) for n in gate.body] != bodies:
        return "the gated branch is not the single rewrites in order"
    if [ast.dump(n) for n in gate.orelse] != others:
        return "the other branch is not the original statements in order"
    return None


def group_pairs(trace: Sequence[Tuple[Finding, str]]) -> List[StatementPair]:
    """The runs the fix loop put under one gate (same grouping as `Engine.fix_text`), each as
    one pair whose ``problem`` says whether it is the verified single rewrites side by side."""
    by_text: Dict[str, List[Finding]] = {}
    for finding, text in trace:
        rewrite = finding.fix.rewrite if finding.fix else None
        if rewrite is not None and rewrite.groups:
            by_text.setdefault(text, []).append(finding)
    out: List[StatementPair] = []
    for text, found in by_text.items():
        owner = {id(f.fix.rewrite): f for f in found if f.fix is not None}
        for run in runs(f.fix.rewrite for f in found if f.fix is not None and f.fix.rewrite is not None):
            if len(run) < 2:
                continue
            edit = group_edit(run)
            offsets = line_offsets(text)
            original = text[to_offset(offsets, edit.start):to_offset(offsets, edit.end)]
            group = _dedented(text, edit)
            singles = [_dedented(text, r.single) for r in run]
            first = owner[id(run[0])]
            out.append(StatementPair(
                code=first.code, path=first.path, row=first.location.row,
                original=textwrap.dedent(_dedent(original, edit.start[1])).strip("\n"), rewritten=group,
                target="", rank=None,
                applicability="safe" if all(owner[id(r)].fix.applicability.value == "safe"  # type: ignore[union-attr]
                                            for r in run) else "unsafe",
                grouped=len(run), problem=composition_problem(group, singles),
            ))
    return out


def _narrowed(original: str, rewritten: str) -> Tuple[str, str]:
    """Drop the statements both sides share (``n = 1; t[0] = 0`` → ``t[0] = 0``).

    Why: a fix on a line with other statements replaces the whole line; only the statement
    that changed is the pair (issue #16: ``n = 1; m.x_cpu.zero_()`` → ``n = 1`` is a removal,
    not a different mutation).
    """
    try:
        a, b = ast.parse(original).body, ast.parse(rewritten).body
    except SyntaxError:
        return original, rewritten
    if len(a) < 2 and len(b) < 2:
        return original, rewritten
    same = [ast.dump(x) for x in a], [ast.dump(x) for x in b]
    head = 0
    while head < min(len(a), len(b)) and same[0][head] == same[1][head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and same[0][-1 - tail] == same[1][-1 - tail]:
        tail += 1
    keep_a, keep_b = a[head:len(a) - tail], b[head:len(b) - tail]
    if not keep_a:
        return original, rewritten
    return "\n".join(ast.unparse(x) for x in keep_a), "\n".join(ast.unparse(x) for x in keep_b)


def pairs_for_source(engine: Engine, source: Source) -> Tuple[List[StatementPair], List[Finding]]:
    """Exactly the fixes `check --fix --unsafe-fixes` applies in one file (the same fix loop,
    each fix paired with the text it was computed on), plus the findings left unfixed."""
    trace: List[Tuple[Finding, str]] = []
    _, _, remaining = engine.fix_text(source.path, source.text, True, trace=trace)
    pairs: List[StatementPair] = []
    for finding, text in trace:
        pair = pair_from_finding(finding, text)
        if pair is not None:
            pairs.append(pair)
    pairs.extend(group_pairs(trace))
    skipped = [f for f in remaining if f.code in ERROR_CODES or f.fix is None]
    return pairs, skipped


def bare_settings(settings: Settings) -> Settings:
    """The same settings with the un-gated device form (``fix-gate = "none"``)."""
    return replace(settings, fix_gate="none", custom_gate=None)


def free_names(code: str) -> List[str]:
    """Names a statement reads that it does not bind itself, in order of appearance."""
    seen: Dict[str, None] = {}
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            seen.setdefault(node.id, None)
    return list(seen)


def root_name(target: str) -> Optional[str]:
    """``self.a.b`` → ``self``; None when the target is not a name/attribute chain."""
    chain = attribute_chain(target)
    return chain[0] if chain else None


def attribute_chain(target: str) -> Optional[Sequence[str]]:
    """``a.b.c`` → ``["a", "b", "c"]``; None for anything else (calls, subscripts)."""
    try:
        node = ast.parse(target, mode="eval").body
    except SyntaxError:
        return None
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return list(reversed(parts))
