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
