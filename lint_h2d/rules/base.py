"""What a rule declares, and the context it is handed for one file.

A rule is one module in `lint_h2d/rules/` defining one subclass of :class:`Rule`.  The
registry finds it by itself: adding a rule means adding a file (plus its fixtures).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AbstractSet, ClassVar, Dict, Iterable, List, Optional, Pattern, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodeRange

from lint_h2d.findings import EvidenceKind, EvidenceStep, Finding, Fix, Location
from lint_h2d.inference.scope import StatementFact

if TYPE_CHECKING:
    import ast

    from lint_h2d.config import Settings


@dataclass(frozen=True)
class RuleDoc:
    """ruff's sections; `lint-h2d rule CODE` and the README print them."""

    what: str
    why: str
    example: str
    use_instead: str
    fix_safety: str

    def render(self, code: str, name: str) -> str:
        def block(text: str) -> str:
            return "```python\n" + text.strip("\n") + "\n```"

        return "\n".join(
            [
                f"# {name} ({code})",
                "",
                "## What it does",
                self.what.strip(),
                "",
                "## Why is this bad?",
                self.why.strip(),
                "",
                "## Example",
                block(self.example),
                "",
                "## Use instead",
                block(self.use_instead),
                "",
                "## Fix safety",
                self.fix_safety.strip(),
                "",
            ]
        )


@dataclass
class FileContext:
    """One file as rules see it."""

    path: str
    module: cst.Module
    text: str
    settings: "Settings"
    _positions: Optional[object] = field(default=None, repr=False)
    # Per-file results a rule computes once for all its findings (e.g. where an import goes).
    memo: Dict[str, object] = field(default_factory=dict, repr=False)

    def position(self, node: cst.CSTNode) -> CodeRange:
        """Resolved lazily: most files have no finding and never pay for it.  LibCST's
        positions, kept compactly (`rules/_positions.py`): a large file's table was most of
        the memory its check took."""
        if self._positions is None:
            from lint_h2d.rules._positions import Positions

            self._positions = Positions(self.module)
        return self._positions[node]  # type: ignore[index, no-any-return]

    def evidence(self, raw: Iterable[object]) -> Tuple[EvidenceStep, ...]:
        """Evidence as findings report it: the inference's local steps (`LocalStep`, a node of
        this file) positioned in this file, duplicates dropped.  A local step whose node this
        module does not hold (nothing to point at) is left out rather than failing the file:
        a finding without one of its steps beats a file without findings."""
        from lint_h2d.inference.values import LocalStep

        out: List[EvidenceStep] = []
        for step in raw:
            if isinstance(step, LocalStep):
                try:
                    where = self.position(step.node)
                except KeyError:
                    continue
                step = EvidenceStep(step.message, None, where.start.line, where.start.column + 1,
                                    EvidenceKind(step.kind))
            if isinstance(step, EvidenceStep) and step not in out:
                out.append(step)
        return tuple(out)

    def finding(
        self,
        code: str,
        node: cst.CSTNode,
        message: str,
        fix: Optional[Fix] = None,
        no_fix_reason: Optional[str] = None,
        statement: Optional[cst.CSTNode] = None,
        details: Tuple[Tuple[str, str], ...] = (),
    ) -> Finding:
        where = self.position(node)
        span = self.position(statement) if statement is not None else where
        return Finding(
            code=code,
            message=message,
            path=self.path,
            location=Location(where.start.line, where.start.column + 1),
            end_location=Location(where.end.line, where.end.column + 1),
            fix=fix,
            no_fix_reason=no_fix_reason,
            noqa_row=span.start.line,
            details=details + (("statement_end_row", str(span.end.line)),),
        )


class Rule(ABC):
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, names the bad pattern
    summary: ClassVar[str]
    doc: ClassVar[RuleDoc]
    # Prefilter: a file can only produce findings if its text matches every pattern here.
    # Keep these necessary conditions (never sufficient ones): a wrong pattern hides findings,
    # and the test suite compares results with and without the prefilter.
    required_text: ClassVar[Tuple[Pattern[str], ...]] = ()
    # True when the rule only looks at statements that run during CUDA-graph capture: the
    # walk then records nothing for it elsewhere.
    capture_only: ClassVar[bool] = False
    # Fixit's habit: small modules the rule must flag / must stay silent on, kept next to the
    # rule (tests/test_rule_examples.py runs them, together with the doc's Example and Use
    # instead).  The fixture files hold the long lists.
    invalid_examples: ClassVar[Tuple[str, ...]] = ()
    valid_examples: ClassVar[Tuple[str, ...]] = ()
    # Stage 2 of the prefilter (lint_h2d/prefilter.py): a rule that sets this gets the file's
    # `ast` tree (parsed once, shared by the rules) in `could_match_tree`.
    has_tree_check: ClassVar[bool] = False

    def could_match(self, text: str, settings: "Settings",
                    device_fields: AbstractSet[str] = frozenset()) -> bool:
        """The prefilter: False only when the file cannot produce a finding of this rule.

        `device_fields` are the project's fields with a `_cpu` sibling (cross-file facts).
        """
        return all(p.search(text) for p in self.required_text)

    def could_match_tree(self, tree: "ast.AST", settings: "Settings",
                         device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
        """Prefilter stage 2 on the `ast` tree; like `could_match`, a necessary condition only."""
        return True

    @abstractmethod
    def wants(self, small: cst.BaseSmallStatement) -> bool:
        """Which statements this rule inspects (the walk snapshots names only for those)."""

    @abstractmethod
    def check(self, facts: Sequence[StatementFact], ctx: FileContext) -> Iterable[Finding]:
        """Findings for one file, given the statements it asked for."""
