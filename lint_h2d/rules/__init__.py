"""The rule registry: every module in this package that defines a `Rule` subclass."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, List

from lint_h2d.rules.base import Rule


def all_rules() -> List[Rule]:
    """One instance of every rule, ordered by code."""
    found: Dict[str, Rule] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Rule)
                and obj is not Rule
                and obj.__module__ == module.__name__
                and getattr(obj, "code", None)
            ):
                if obj.code in found:
                    raise RuntimeError(f"two rules claim {obj.code}")
                found[obj.code] = obj()
    return [found[c] for c in sorted(found)]


def rule_by_code(code: str) -> Rule:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    raise KeyError(code)
