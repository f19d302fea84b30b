"""Documentation generated from the rule registry, so the README cannot drift from the code.

`lint-h2d rule CODE` / `rule --all` print each rule's own `doc`/`summary`; the README's rule
table is rendered here from the same `all_rules()` and kept between two markers:

    python -m lint_h2d.docs --write    # rewrite the README's table
    python -m lint_h2d.docs --check    # exit 1 if it is stale (the test suite does this too)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from lint_h2d.rules import all_rules

START = "<!-- rules-table:start -->"
END = "<!-- rules-table:end -->"
README = Path(__file__).resolve().parent.parent / "README.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rules_table_markdown() -> str:
    """The rule table: one row per rule, from `rule.code`, `rule.name` and `rule.summary`."""
    rows = ["| code | name | summary |", "|---|---|---|"]
    for rule in all_rules():
        rows.append(f"| {rule.code} | {_cell(rule.name)} | {_cell(rule.summary)} |")
    return "\n".join(rows) + "\n"


def replace_table(text: str) -> str:
    """`text` with the block between the markers replaced by the generated table."""
    start = text.find(START)
    end = text.find(END)
    if start == -1 or end == -1 or end < start:
        raise ValueError(f"the README has no {START} ... {END} block")
    head = text[: start + len(START)]
    return head + "\n" + rules_table_markdown() + text[end:]


def readme_block(text: str) -> str:
    """What the README holds between the markers now."""
    start = text.find(START)
    end = text.find(END)
    if start == -1 or end == -1 or end < start:
        raise ValueError(f"the README has no {START} ... {END} block")
    return text[start + len(START): end].lstrip("\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lint_h2d.docs", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="update the README's rule table in place")
    group.add_argument("--check", action="store_true", help="exit 1 if the README's rule table is stale")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    if not (args.write or args.check):
        sys.stdout.write(rules_table_markdown())
        return 0
    text = args.readme.read_text(encoding="utf-8")
    new = replace_table(text)
    if args.check:
        if new != text:
            sys.stderr.write(f"{args.readme}: rule table is stale; run `python -m lint_h2d.docs --write`\n")
            return 1
        return 0
    if new != text:
        args.readme.write_text(new, encoding="utf-8")
        sys.stdout.write(f"updated {args.readme}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
