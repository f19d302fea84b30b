"""Adversarial review of the H2D004 relayout (`fixers.layout.relaid`): each input below passes
`ruff format --check --isolated`; the fixed file must still pass it, keep its comments and
parse to the rewrite's tree, and a conditional expression split over lines must not crash the
rule (H2D902 lost the finding)."""
from __future__ import annotations

import ast
import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from fixers.layout import _operator_split, is_pragma
from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.findings import Finding
from lint_h2d.inference.project import collect

RUFF = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
HEAD = "import torch\n\n\ndef f(n, device, c, table):\n"
MOVE = (
    "torch.zeros(n, dtype=torch.int64).to(\n"
    "{i}    device=device, dtype=torch.float32, non_blocking=True\n"
    "{i})"
)


def _move(indent: str) -> str:
    return MOVE.format(i=indent)


def fix(text: str) -> Tuple[str, List[Finding]]:
    engine = Engine(dataclasses.replace(Settings(root=Path(".")), fix_gate="vllm"), collect([text]))
    new, applied, _ = engine.fix_text("m.py", text, True)
    return new, applied


def ruff_formatted(text: str) -> bool:
    done = subprocess.run([RUFF, "format", "--check", "--isolated", "-"], input=text.encode(),
                          capture_output=True)
    return done.returncode == 0


def comments(text: str) -> List[str]:
    return sorted(line.split("#", 1)[1] for line in text.split("\n") if "#" in line)


def columns(line: str) -> int:
    import unicodedata
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in line)


CASES = {
    # The trailing comment counts in the last line's width (ruff's rule): joining the call would
    # make a 99-column line.
    "trailing comment": (
        HEAD + "    x = foo(\n        " + _move("        ") + "\n    )  # one row per request, zeroed\n    return x\n",
        "    x = foo(\n        torch.zeros(n, dtype=torch.float32, device=device)\n"
        "    )  # one row per request, zeroed\n",
    ),
    # ...but a pragma comment does not (ruff leaves `# noqa`, `# type:` out).
    "pragma comment": (
        HEAD + "    x = foo(\n        " + _move("        ") + "\n    )  # type: ignore[arg-type]  # why\n"
        "    return x\n",
        "    x = foo(torch.zeros(n, dtype=torch.float32, device=device))  # type: ignore[arg-type]  # why\n",
    ),
    # Wide characters take two columns: 84 code points, 98 columns.
    "wide characters": (
        HEAD + "    x = foo(\n        " + _move("        ") + "\n        + len(\"提示提示提示提示提示提示提示\")\n"
        "    )\n    return x\n",
        "    x = foo(\n        torch.zeros(n, dtype=torch.float32, device=device)\n"
        "        + len(\"提示提示提示提示提示提示提示\")\n    )\n",
    ),
    # A binary expression that does not fit breaks before its operators, not inside an operand.
    "operator split": (
        HEAD + "    y = foo(\n        " + _move("        ") + "\n"
        "        + some_function_with_a_long_name(another_argument, yet_another_argument)\n    )\n    return y\n",
        "    y = foo(\n        torch.zeros(n, dtype=torch.float32, device=device)\n"
        "        + some_function_with_a_long_name(another_argument, yet_another_argument)\n    )\n",
    ),
    # A conditional expression split over lines (ruff's layout of a long one): once an
    # H2D902 crash (`Must have at least one space before 'else' keyword`).
    "conditional expression": (
        HEAD + "    x = (\n        " + _move("        ") + "\n        if c\n        else None\n    )\n    return x\n",
        "    x = torch.zeros(n, dtype=torch.float32, device=device) if c else None\n",
    ),
    "comprehension": (
        HEAD + "    y = [\n        " + _move("        ") + "\n        for _ in range(n)\n        if c\n    ]\n"
        "    return y\n",
        "    y = [torch.zeros(n, dtype=torch.float32, device=device) for _ in range(n) if c]\n",
    ),
    # An edit within one line after which the statement fits on one line: ruff joins it, and
    # drops the parentheses it had put around the value to split it.
    "joined": (
        HEAD + "    x = table[\n        table[torch.arange(0, n, 2, dtype=torch.int64).to(device, non_blocking=True)]\n"
        "    ]\n    return x\n",
        "    x = table[table[torch.arange(0, n, 2, dtype=torch.int64, device=device)]]\n",
    ),
    "joined without parentheses": (
        HEAD + "    self.buf = (\n"
        "        torch.arange(0, n, 2, dtype=torch.int64).to(device, non_blocking=True) == device\n    )\n",
        "    self.buf = torch.arange(0, n, 2, dtype=torch.int64, device=device) == device\n",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_relayout_keeps_the_file_ruff_formatted(name: str) -> None:
    text, expected = CASES[name]
    assert ruff_formatted(text)
    new, applied = fix(text)
    assert [f.code for f in applied] == ["H2D004"]
    assert expected in new, new
    assert ruff_formatted(new), new
    assert comments(new) == comments(text)
    assert all(columns(line) <= 88 or "# type:" in line for line in new.split("\n"))
    assert fix(new)[0] == new
    ast.parse(new)


def test_conditional_expression_keeps_the_finding() -> None:
    text = CASES["conditional expression"][0]
    findings = Engine(Settings(), collect([text])).analyze("m.py", text)
    assert [f.code for f in findings if f.code.startswith("H2D9")] == []
    assert any(f.code == "H2D004" and f.fix is not None for f in findings)


@pytest.mark.parametrize("body, pieces", [
    ("a + len(x)", ["a", "+ len(x)"]),
    ("a if c else b", ["a", "if c", "else b"]),
    ("a and b or c", ["a and b", "or c"]),
    ("x not in y", ["x", "not in y"]),
    ("a is not b + 1", ["a", "is not b + 1"]),
    ("-a * b", ["-a", "* b"]),
    ("f(a) ** (b / c)", ["f(a)", "** (b / c)"]),
    ("lambda a: a + 1", None),
    ("x for x in y", None),
    ("key=a + b", None),
    ("*a", None),
    ("not a", None),
])
def test_operator_split(body: str, pieces: object) -> None:
    assert _operator_split(body) == pieces


@pytest.mark.parametrize("comment, pragma", [
    ("# noqa: E501", True), ("# NOQA", True), ("# type: ignore", True), ("# nosec B602", True),
    ("# pyright: ignore", True), ("# isort: skip", True), ("# a type: of comment", False),
    ("# one row per request", False), ("#", False),
])
def test_pragma_comments(comment: str, pragma: bool) -> None:
    assert is_pragma(comment) is pragma


def test_an_f_string_is_one_token_on_every_python() -> None:
    """Since Python 3.12 the tokenizer splits f-strings into OP/NAME tokens: `{...}` was taken
    for a bracket pair to split in (`f"{\\n    x\\n}"` parses on 3.12 only).  (Checked by hand on
    3.12.1; the suite's 3.11 tokenizer yields one STRING either way.)"""
    from fixers.layout import _top_commas, _top_pairs

    line = 'x = foo(torch.zeros(n, device=d)) + f"{some_long_name}" + f"a{b:{c}}d{e!r}"'
    assert _top_pairs(line) == ([(7, 32)], 2, None)
    assert _top_commas('a, f"{b, c}", d') == ["a", 'f"{b, c}"', "d"]
