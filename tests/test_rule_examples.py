"""Each rule's own examples (Fixit's habit): its doc's Example is flagged and its Use instead
is not, and so are its `invalid_examples` / `valid_examples`."""
from __future__ import annotations

from typing import List

import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.inference.project import collect
from lint_h2d.rules import all_rules
from lint_h2d.rules.base import Rule

RULES = all_rules()


def codes(rule: Rule, source: str) -> List[str]:
    engine = Engine(Settings(), collect([source]), rules=[rule])
    return [f.code for f in engine.analyze("example.py", source)]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_examples_both_ways(rule: Rule) -> None:
    assert rule.invalid_examples and rule.valid_examples


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_doc_example_is_flagged_and_use_instead_is_not(rule: Rule) -> None:
    assert codes(rule, rule.doc.example.strip() + "\n") == [rule.code]
    assert codes(rule, rule.doc.use_instead.strip() + "\n") == []


@pytest.mark.parametrize(
    "rule,source", [(r, s) for r in RULES for s in r.invalid_examples], ids=lambda x: getattr(x, "code", "")
)
def test_invalid_examples_are_flagged(rule: Rule, source: str) -> None:
    assert codes(rule, source) == [rule.code], source


@pytest.mark.parametrize(
    "rule,source", [(r, s) for r in RULES for s in r.valid_examples], ids=lambda x: getattr(x, "code", "")
)
def test_valid_examples_are_silent(rule: Rule, source: str) -> None:
    assert codes(rule, source) == [], source
