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

from fixers.edits import TextEdit, line_offsets, to_offset
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

    @property
    def label(self) -> str:
        return f"{self.path}:{self.row}"


def _dedent(text: str, column: int) -> str:
    """Edit text starts at ``column``; later lines carry that indentation too: strip it."""
    lines = text.split("\n")
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
    column = edit.start[1]
    target = _detail(finding, "target") or ""
    return StatementPair(
        code=finding.code,
        path=finding.path,
        row=finding.location.row,
        original=textwrap.dedent(_dedent(original, column)).strip("\n"),
        rewritten=textwrap.dedent(_dedent(edit.text, column)).strip("\n"),
        target=" ".join(target.split()),
        rank=_rank(finding),
        applicability=finding.fix.applicability.value if finding.fix else "",
    )


def pairs_for_source(engine: Engine, source: Source) -> Tuple[List[StatementPair], List[Finding]]:
    """Every fix `check --fix --unsafe-fixes` would make in one file, plus unfixable findings."""
    pairs: List[StatementPair] = []
    skipped: List[Finding] = []
    for finding in engine.analyze(source.path, source.text):
        if finding.code in ERROR_CODES:
            skipped.append(finding)
            continue
        pair = pair_from_finding(finding, source.text)
        if pair is None:
            skipped.append(finding)
        else:
            pairs.append(pair)
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
