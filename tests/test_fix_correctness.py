"""Every safe fix is right (issue #15): one test per reproduced wrong or corrupting fix.

Each case runs the real engine on a small module and checks the rewritten text, or the
finding's position and fix safety; where behaviour matters the module is executed on CPU
tensors before and after the fix (`run_module`).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import SYNTAX_ERROR, INTERNAL_ERROR, Engine
from lint_h2d.findings import Applicability, Finding
from lint_h2d.inference.project import collect

torch = pytest.importorskip("torch")


def engine(text: str, gate: str = "torch-hip", root: Optional[Path] = None) -> Engine:
    return Engine(Settings(root=root or Path.cwd(), fix_gate=gate), collect([text]))


def findings(text: str, gate: str = "torch-hip", path: str = "m.py") -> List[Finding]:
    return engine(text, gate).analyze(path, text)


def fixed(text: str, gate: str = "torch-hip", unsafe: bool = False, path: str = "m.py") -> Tuple[str, List[Finding]]:
    new, applied, _ = engine(text, gate).fix_text(path, text, unsafe)
    return new, applied


def errors(found: List[Finding]) -> List[Finding]:
    return [f for f in found if f.code in (SYNTAX_ERROR, INTERNAL_ERROR)]


GATE_TESTS = ("torch.version.hip is not None", "current_platform.is_rocm()")


def structure(text: str) -> Any:
    """Which block each statement is in, with gates seen through (their `else` stands for them).

    A fix may turn a statement into a gated if/else or a device call; it must never move a
    statement into another block.
    """
    def block(body: List[ast.stmt]) -> List[Any]:
        out: List[Any] = []
        for node in body:
            if isinstance(node, ast.If) and ast.unparse(node.test) in GATE_TESTS and node.orelse:
                out.extend(block(node.orelse))
                continue
            if isinstance(node, ast.ImportFrom) and node.module == "vllm.platforms":
                continue
            kind = "stmt" if isinstance(node, (ast.Assign, ast.Expr)) else type(node).__name__
            children = [block(getattr(node, f)) for f in ("body", "orelse", "finalbody", "handlers", "cases")
                        if isinstance(getattr(node, f, None), list) and getattr(node, f)
                        and isinstance(getattr(node, f)[0], ast.stmt)]
            for handler in getattr(node, "handlers", []) or []:
                children.append(block(handler.body))
            for case in getattr(node, "cases", []) or []:
                children.append(block(case.body))
            out.append((kind, children))
        return out

    return block(ast.parse(text).body)


def run_module(text: str, call: str, hip: Optional[str] = "6.0") -> Any:
    """Execute ``text`` with ``device="cuda"`` mapped to the CPU, then evaluate ``call``."""
    source = text.replace('device="cuda"', 'device="cpu"').replace("device='cuda'", "device='cpu'")
    saved = torch.version.hip
    torch.version.hip = hip
    try:
        ns: Dict[str, Any] = {"__name__": "m"}
        exec(compile(source, "m.py", "exec"), ns)
        return eval(call, ns)
    finally:
        torch.version.hip = saved


# -- 1: form feeds ------------------------------------------------------------------------------

FORM_FEED = 'import torch\nt = torch.zeros(4, device="cuda")\ndef reset():\n\tprint("r")\n\f\tt[0] = 0\n'


@pytest.mark.parametrize("gate", ["torch-hip", "none"])
def test_form_feed_keeps_the_fix_inside_its_function(gate: str) -> None:
    new, applied = fixed(FORM_FEED, gate)
    assert len(applied) == 1
    assert structure(new) == structure(FORM_FEED), new  # nothing moved out of reset()
    assert "\f\t" in new  # the form feed stays where it was
    t = run_module(new, "(reset(), t)[1]")
    assert t.tolist() == [0.0, 0.0, 0.0, 0.0]
    before = run_module(FORM_FEED.replace("zeros", "ones"), "(reset(), t)[1]")
    after = run_module(new.replace("zeros", "ones"), "(reset(), t)[1]")
    assert before.tolist() == after.tolist() == [0.0, 1.0, 1.0, 1.0]


def test_form_feed_column_is_the_files_own() -> None:
    (finding,) = findings(FORM_FEED)
    assert (finding.location.row, finding.location.column) == (5, 3)  # after "\f\t"
    tree = ast.parse(FORM_FEED)
    assign = tree.body[2].body[1]  # type: ignore[attr-defined]
    assert assign.col_offset + 1 == finding.location.column


@pytest.mark.parametrize("text", [
    # form feed, then spaces: Python's indentation restarts at the feed
    'import torch\nt = torch.zeros(4, device="cuda")\ndef f():\n    x = 1\n  \f    t[0] = 0\n',
    # a form feed that ends a block
    'import torch\nt = torch.zeros(4, device="cuda")\ndef f():\n    if True:\n        x = 1\n    \f    t[0] = 0\n',
    'import torch\nt = torch.zeros(4, device="cuda")\ndef f():\n    if True:\n        x = 1\n\f    t[0] = 0\n',
    # top level, CRLF and CR-only line ends
    'import torch\r\nt = torch.zeros(4, device="cuda")\r\n\ft[0] = 0\r\n',
    'import torch\rt = torch.zeros(4, device="cuda")\r\ft[0] = 0\r',
])
@pytest.mark.parametrize("gate", ["torch-hip", "none"])
def test_form_feed_lines_are_analysed_and_fixed_in_place(text: str, gate: str) -> None:
    found = findings(text, gate)
    assert not errors(found), found
    assert [f.code for f in found] == ["H2D001"]
    new, applied = fixed(text, gate)
    assert len(applied) == 1
    assert new.count("\f") == text.count("\f")
    assert structure(new) == structure(text)
    again, more = fixed(new, gate)
    assert again == new and not more


# -- 2: Python's line breaks only -----------------------------------------------------------

@pytest.mark.parametrize("odd", ["\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\v"])
def test_noqa_applies_to_its_own_line_after_an_odd_line_break(odd: str) -> None:
    text = (
        "import torch\n"
        't = torch.zeros(4, device="cuda")\n'
        f's = "a{odd}b"\n'
        "t[0] = 0  # noqa: H2D001\n"
        "t[1] = 0\n"
    )
    found = findings(text)
    assert [f.location.row for f in found if f.code == "H2D001"] == [5]
    new, applied = fixed(text)
    assert [f.location.row for f in applied] == [5]
    assert "t[0] = 0  # noqa: H2D001\n" in new


def test_split_lines_breaks_only_where_python_does() -> None:
    from fixers.edits import split_lines

    text = "a\fb\x85c\u2028d\r\ne\rf\ng"
    assert split_lines(text) == ["a\fb\x85c\u2028d", "e", "f", "g"]
    assert "".join(split_lines(text, keepends=True)) == text
    assert split_lines("") == [] and split_lines("x\n") == ["x"]
