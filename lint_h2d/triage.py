"""Which of a file's rules can report anything, decided without LibCST.

The first half of a file's analysis (`analysis.Engine.analyze`): the prefilter's text stage,
then its tree stage from the verdict the project index recorded or from CPython's tree.  Most
files end here with no finding (on vLLM, 2,705 of 3,227 are decided by the verdict alone).

A module of its own, importing neither LibCST nor the rules, so that a run whose files all end
here need not import them: a pre-commit run after an edit of a file without candidates is
decided by `pipeline.LazyEngine.decide` with the rules' `prefilter.RULE_FILTERS`, and builds the
engine (LibCST, the walk, the rules: ~0.5 s of imports) only for a file that survives.  The
engine runs the same function on its rules, so both give the same answer.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, AbstractSet, Generic, List, Optional, Sequence, Tuple, Union

from lint_h2d.diagnostics import SYNTAX_ERROR, error_finding
from lint_h2d.findings import Finding
from lint_h2d.parse_chunks import parse_python
from lint_h2d.prefilter import R, TreeVerdict, apply_verdict, text_hash, tree_filter, verdict_excludes

if TYPE_CHECKING:
    from lint_h2d.config import Settings




def cpython_parse(path: str, text: str) -> Tuple[Optional[ast.AST], List[Finding]]:
    """CPython's tree of `text`, or the diagnostic saying why there is none."""
    try:
        # In chunks: the same tree and errors, a fraction of the peak for a large file.
        return parse_python(text, path), []
    except SyntaxError as exc:
        return None, [error_finding(SYNTAX_ERROR, path, f"SyntaxError: {exc.msg}",
                                    exc.lineno or 1, exc.offset or 1)]
    except (ValueError, MemoryError) as exc:
        return None, [error_finding(SYNTAX_ERROR, path, f"cannot parse: {exc}")]
    # RecursionError propagates: `Engine.analyze` retries the file on a deep stack.


@dataclass(frozen=True)
class Kept(Generic[R]):
    """The rules that may report something in the file, and CPython's tree when it was
    parsed here (None: the verdict answered, or the prefilter is off)."""

    rules: List[R]
    tree: Optional[ast.AST]


def triage(rules: Sequence[R], path: str, text: str, verdict: Optional[TreeVerdict], settings: "Settings",
           device_fields: AbstractSet[str], use_prefilter: bool = True) -> Union[List[Finding], Kept[R]]:
    """The file's findings when no rule survives the prefilter ([] or CPython's syntax error),
    else the rules left and the tree.

    CPython's parser checks the syntax of every file, so a file that is not Python is reported
    with or without the prefilter; its tree feeds the prefilter's stage 2.  A verdict on this
    text (its hash) says the file parses and what stage 2 answers, without parsing it again.
    `cpython_parse` is this module's, looked up when called: the one name a test or benchmark
    patches to count every parse (the engine's and `pipeline.LazyEngine.decide`'s)."""
    tree: Optional[ast.AST] = None
    kept = list(rules)
    if use_prefilter and kept:
        if verdict is not None and verdict.text_hash != text_hash(text):
            verdict = None
        if verdict is not None:  # what the verdict rules out needs no text stage either
            kept = [r for r in kept if not verdict_excludes(verdict, r, text, settings, device_fields)]
        kept = [r for r in kept if r.could_match(text, settings, device_fields=device_fields)]
        decided = None
        if verdict is not None:
            decided = apply_verdict(verdict, kept, text, settings, device_fields) if kept else []
        if decided is not None:
            kept = decided
            if not kept:
                return []  # it parses: the verdict comes from its tree
        else:
            tree, syntax_errors = cpython_parse(path, text)
            if tree is not None:
                kept = tree_filter(kept, tree, text, settings, device_fields)
            if not kept or syntax_errors:
                return syntax_errors  # CPython's verdict and position, not LibCST's
    if not kept:
        return cpython_parse(path, text)[1]
    return Kept(kept, tree)
