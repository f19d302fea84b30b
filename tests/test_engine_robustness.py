"""One file's problems never cost it its other findings (issue 15 items 16, 18)."""
from __future__ import annotations

import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import Engine, project_facts

WRITE = "\n\ndef f(n):\n    t = torch.zeros(4, device='cuda')\n    t[0] = 0\n"


def _engine(prefilter: bool = True) -> Engine:
    return Engine(Settings(), project_facts([]), use_prefilter=prefilter)


@pytest.mark.parametrize("middle", [
    "PROMPT = (" + " ".join(['"x"'] * 350) + ")\n",  # a prompt template, one string per line in real code
    "a = 1\nv = int(" + " and ".join(["a"] * 5000) + ")\n",
])
def test_deep_but_valid_code_keeps_the_files_findings(middle: str) -> None:
    text = "import torch\n\n" + middle + WRITE
    findings = _engine().analyze("deep.py", text)
    assert [(f.code, f.location.row) for f in findings] == [("H2D001", text.count("\n"))]


@pytest.mark.parametrize("prefilter", [True, False])
def test_syntax_error_reported_at_cpythons_position(prefilter: bool) -> None:
    """The prefilter sends this file to LibCST (it holds a device write): the position must
    still be CPython's (6:9, the unclosed parenthesis), not 1:1 nor LibCST's guess."""
    text = "import torch" + WRITE + "    x = (1,\n    y = 2 +\n"
    findings = _engine(prefilter).analyze("syn.py", text)
    assert [(f.code, f.location.row, f.location.column) for f in findings] == [("H2D901", 6, 9)]
    assert "'(' was never closed" in findings[0].message


@pytest.mark.parametrize("imports", ["from os import *\n", "from os.path import (\n    join,\n)\nfrom os import *\n"])
def test_a_star_import_keeps_the_files_findings(imports: str) -> None:
    """`from m import *` once made the compact position table raise KeyError (LibCST ends the
    import's range at the `*`, a node the table skipped): H2D902 and no finding."""
    text = "import torch\n" + imports + WRITE
    findings = _engine().analyze("star.py", text)
    assert [(f.code, f.location.row) for f in findings] == [("H2D001", text.count("\n"))]


def test_an_internal_error_is_described_on_one_short_line() -> None:
    from lint_h2d.diagnostics import describe_exception

    class Node:  # a LibCST node's repr spans one line per field
        def __repr__(self) -> str:
            return "Node(\n" + "    field=1,\n" * 500 + ")"

    try:
        {}[Node()]
    except KeyError as exc:
        text = describe_exception(exc)
    assert "\n" not in text and len(text) < 240
    assert text.startswith("KeyError: Node( field=1, field=1,")
    assert "... at test_engine_robustness.py:" in text


def test_a_rule_failing_on_one_statement_keeps_the_files_other_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """An internal error in one statement's check is reported at that statement (H2D902); the
    other statements of the file are still checked and reported."""
    from lint_h2d.rules import scalar_write_to_device_tensor as rule_module

    real = rule_module.ScalarWriteToDeviceTensor._check_one

    def flaky(self, fact, ctx):  # type: ignore[no-untyped-def]
        if "u[1]" in ctx.module.code_for_node(fact.small):
            raise KeyError("boom")
        return real(self, fact, ctx)

    monkeypatch.setattr(rule_module.ScalarWriteToDeviceTensor, "_check_one", flaky)
    text = ("import torch\n\n\ndef f():\n    t = torch.zeros(4, device='cuda')\n    t[0] = 0\n"
            "    u = torch.zeros(4, device='cuda')\n    u[1] = 0\n    t[2] = 0\n")
    findings = _engine().analyze("flaky.py", text)
    assert [(f.code, f.location.row) for f in findings] == [("H2D001", 6), ("H2D902", 8), ("H2D001", 9)]
    assert "internal error in rule H2D001: KeyError: 'boom'" in findings[1].message
