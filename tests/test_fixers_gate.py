"""``fixers.platform_gate`` and the end-to-end gated fix (``statements.gated_replacement``)."""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst
import pytest

from fixers.device_zero import DeviceZero, device_zero_form
from fixers.edits import TextEdit, Unfixable
from fixers.platform_gate import TORCH_HIP_GATE, VLLM_GATE, Gate, gated_statement, matches_gate
from fixers.statements import gated_replacement
from tests.test_fixers_support import apply, assign_parts, locate, vllm_file


def _gated_fix(source: str, line: int, gate: Gate = VLLM_GATE, index: int = 0,
               min_length: Optional[int] = None) -> object:
    located = locate(source, line, index)
    target, value = assign_parts(located)
    form = device_zero_form(target, value, min_length)
    assert isinstance(form, DeviceZero)
    return gated_replacement(
        located.module,
        located.parent,
        located.small,
        located.parent_start,
        located.parent_end,
        form.call,
        gate,
        source=source,
    )


def _fixed(source: str, line: int, gate: Gate = VLLM_GATE) -> str:
    edits = _gated_fix(source, line, gate)
    assert isinstance(edits, tuple), edits
    return apply(source, edits)


def test_constants() -> None:
    assert VLLM_GATE == Gate("current_platform.is_rocm()", "from vllm.platforms import current_platform")
    assert TORCH_HIP_GATE == Gate("torch.version.hip is not None", "import torch")


@pytest.mark.parametrize("test", ["is_rocm(", "x = 1", "", "if x", "a b"])
def test_gate_test_must_be_an_expression(test: str) -> None:
    with pytest.raises(ValueError, match="not a Python expression"):
        Gate(test, None)


@pytest.mark.parametrize("line", ["x = 1", "import a; import b", "from x import (", "import a\nimport b"])
def test_gate_import_must_be_one_import(line: str) -> None:
    with pytest.raises(ValueError):
        Gate("x", line)


def test_gate_is_frozen() -> None:
    with pytest.raises(AttributeError):
        VLLM_GATE.test = "x"  # type: ignore[misc]


def test_gated_statement_structure() -> None:
    module = cst.parse_module("x = 1\n\n# right above\nt[0] = 0  # trailing\n")
    original = module.body[1]
    assert isinstance(original, cst.SimpleStatementLine)
    call = cst.parse_expression("t[0].zero_()")
    assert isinstance(call, cst.Call)
    node = gated_statement(original, call, VLLM_GATE)
    assert module.code_for_node(node) == (
        "\n# right above\n"
        "if current_platform.is_rocm():\n"
        "    t[0].zero_()\n"
        "else:\n"
        "    t[0] = 0  # trailing\n"
    )
    assert node.leading_lines == original.leading_lines


def test_gated_statement_validates_test_even_if_gate_was_bypassed() -> None:
    gate = Gate("x", None)
    object.__setattr__(gate, "test", "not valid (")
    module = cst.parse_module("t[0] = 0\n")
    original = module.body[0]
    assert isinstance(original, cst.SimpleStatementLine)
    with pytest.raises(ValueError):
        gated_statement(original, cst.Call(func=cst.Name("f")), gate)


# --- end to end: the gated fix as text ------------------------------------------------------

IMPORTED = "from vllm.platforms import current_platform\n"

GATED_CASES = [
    pytest.param(
        IMPORTED + "\n\ndef f(t):\n    t[0] = 0\n",
        5,
        IMPORTED
        + "\n\ndef f(t):\n"
        "    if current_platform.is_rocm():\n"
        "        t[0].zero_()\n"
        "    else:\n"
        "        t[0] = 0\n",
        id="function-body",
    ),
    pytest.param(
        IMPORTED + "t[0] = 0\n",
        2,
        IMPORTED + "if current_platform.is_rocm():\n    t[0].zero_()\nelse:\n    t[0] = 0\n",
        id="module-level",
    ),
    pytest.param(
        IMPORTED + "class A:\n    def f(self):\n        if x:\n            for i in y:\n                self.buf[-1] = 1.5  # keep\n",
        6,
        IMPORTED + "class A:\n    def f(self):\n        if x:\n            for i in y:\n"
        "                if current_platform.is_rocm():\n"
        "                    self.buf[-1].fill_(1.5)\n"
        "                else:\n"
        "                    self.buf[-1] = 1.5  # keep\n",
        id="deeply-nested-with-comment",
    ),
    pytest.param(
        IMPORTED + "def f(t):\n  if x:\n    t[3] = v\n",
        4,
        IMPORTED + "def f(t):\n  if x:\n"
        "    if current_platform.is_rocm():\n"
        "      t[3].fill_(v)\n"
        "    else:\n"
        "      t[3] = v\n",
        id="two-space-indent",
    ),
    pytest.param(
        IMPORTED + "def f(t):\n\tif x:\n\t\tt[i] = 0\n",
        4,
        IMPORTED + "def f(t):\n\tif x:\n"
        "\t\tif current_platform.is_rocm():\n"
        "\t\t\tt.select(0, i).zero_()\n"
        "\t\telse:\n"
        "\t\t\tt[i] = 0\n",
        id="tabs",
    ),
    pytest.param(
        IMPORTED + "def f(t):\n    a = 1\n\n    # why we zero\n    # more why\n    t[0] = 0  # beside\n    b = 2\n",
        7,
        IMPORTED + "def f(t):\n    a = 1\n\n    # why we zero\n    # more why\n"
        "    if current_platform.is_rocm():\n"
        "        t[0].zero_()\n"
        "    else:\n"
        "        t[0] = 0  # beside\n"
        "    b = 2\n",
        id="comments-above-and-beside",
    ),
    pytest.param(
        IMPORTED + "def f(t):\n    t[-2] = compute(\n        a,\n        b,\n    )\n    return t\n",
        3,
        IMPORTED + "def f(t):\n"
        "    if current_platform.is_rocm():\n"
        "        t[-2].fill_(compute(\n"
        "            a,\n"
        "            b,\n"
        "        ))\n"
        "    else:\n"
        "        t[-2] = compute(\n"
        "            a,\n"
        "            b,\n"
        "        )\n"
        "    return t\n",
        id="multi-line-value-reindented",
    ),
    pytest.param(
        IMPORTED + 'def f(t):\n    t[k] = g("""a\nb""")\n',
        3,
        IMPORTED + "def f(t):\n"
        "    if current_platform.is_rocm():\n"
        '        t.select(0, k).fill_(g("""a\nb"""))\n'
        "    else:\n"
        '        t[k] = g("""a\nb""")\n',
        id="multi-line-string-untouched",
    ),
    pytest.param(
        IMPORTED + "def f(t):\n    t[0] = 0;\n",
        3,
        IMPORTED + "def f(t):\n"
        "    if current_platform.is_rocm():\n"
        "        t[0].zero_()\n"
        "    else:\n"
        "        t[0] = 0;\n",
        id="trailing-semicolon",
    ),
    pytest.param(
        IMPORTED + "def f(t2):\n    t2[..., 0] = False\n",
        3,
        IMPORTED + "def f(t2):\n"
        "    if current_platform.is_rocm():\n"
        "        t2[..., 0].zero_()\n"
        "    else:\n"
        "        t2[..., 0] = False\n",
        id="ellipsis",
    ),
]


@pytest.mark.parametrize("source, line, expected", GATED_CASES)
def test_gated_fix_text(source: str, line: int, expected: str) -> None:
    assert _fixed(source, line) == expected


def test_gated_fix_crlf() -> None:
    source = IMPORTED.replace("\n", "\r\n") + "def f(t):\r\n    # c\r\n    t[0] = 0  # d\r\n"
    expected = (
        IMPORTED.replace("\n", "\r\n") + "def f(t):\r\n    # c\r\n"
        "    if current_platform.is_rocm():\r\n"
        "        t[0].zero_()\r\n"
        "    else:\r\n"
        "        t[0] = 0  # d\r\n"
    )
    assert _fixed(source, 4) == expected


def test_gated_fix_adds_import_once_for_several_fixes() -> None:
    source = "import torch\n\n\ndef f(a, b):\n    a[0] = 0\n    b[1] = 0\n"
    edits = list(_gated_fix(source, 5))  # type: ignore[call-overload]
    edits += list(_gated_fix(source, 6))  # type: ignore[call-overload]
    assert len(edits) == 4  # two statements, the same import twice: apply_edits keeps one
    assert apply(source, edits) == (
        "import torch\n\nfrom vllm.platforms import current_platform\n\n\ndef f(a, b):\n"
        "    if current_platform.is_rocm():\n        a[0].zero_()\n    else:\n        a[0] = 0\n"
        "    if current_platform.is_rocm():\n        b[1].zero_()\n    else:\n        b[1] = 0\n"
    )


def test_gated_fix_no_import_when_present() -> None:
    edits = _gated_fix(IMPORTED + "t[0] = 0\n", 2)
    assert isinstance(edits, tuple) and len(edits) == 1


def test_torch_gate() -> None:
    source = '"""Doc."""\n\nimport os\n\n\ndef f(t):\n    t[0] = 0\n'
    assert _fixed(source, 7, TORCH_HIP_GATE) == (
        '"""Doc."""\n\nimport os\n\nimport torch\n\n\ndef f(t):\n'
        "    if torch.version.hip is not None:\n        t[0].zero_()\n    else:\n        t[0] = 0\n"
    )


def test_gate_without_import() -> None:
    gate = Gate("IS_ROCM", None)
    edits = _gated_fix("def f(t):\n    t[0] = 0\n", 2, gate)
    assert isinstance(edits, tuple) and len(edits) == 1


@pytest.mark.parametrize(
    "source, line, index",
    [
        ("def f(t):\n    a = 1; t[0] = 0\n", 2, 1),
        ("def f(t):\n    t[0] = 0; a = 1\n", 2, 0),
        ("def f(t):\n    if x: t[0] = 0\n", 2, 0),
        ("def f(t):\n    while x: t[0] = 0; break\n", 2, 0),
    ],
)
def test_gated_fix_needs_its_own_line(source: str, line: int, index: int) -> None:
    result = _gated_fix(source, line, index=index)
    assert isinstance(result, Unfixable)
    assert "shares its line" in result.reason


def test_gated_fix_refuses_to_rebind_gate_name() -> None:
    source = "current_platform = object()\n\n\ndef f(t):\n    t[0] = 0\n"
    result = _gated_fix(source, 5)
    assert isinstance(result, Unfixable)
    assert "current_platform" in result.reason


def _seed_input(original: str) -> Tuple[str, int]:
    lines = original.splitlines(keepends=True)
    assert lines[319:323] == [
        "            if current_platform.is_rocm():\n",
        "                prefill_cu_seqlens_k[:1].zero_()\n",
        "            else:\n",
        "                prefill_cu_seqlens_k[0] = 0\n",
    ]
    return "".join(lines[:319] + ["            prefill_cu_seqlens_k[0] = 0\n"] + lines[323:]), 320


def test_vllm_minimax_m3_seed_fix_is_byte_identical() -> None:
    """vLLM PR #56170's fix, reproduced from the unfixed line: the same bytes a person wrote."""
    original = vllm_file("models/minimax_m3/common/sparse_attention.py")
    source, line = _seed_input(original)
    # The rule proves the length (`if num_prefills > 0:` ... `torch.empty(num_prefills + 1)`,
    # tests/test_fix_correctness.py); the fixer is given that proof.
    edits = _gated_fix(source, line, min_length=2)
    assert isinstance(edits, tuple)
    assert len(edits) == 1  # the module already imports current_platform
    assert isinstance(edits[0], TextEdit)
    assert apply(source, edits) == original


@pytest.mark.parametrize(
    "test, gate, expected",
    [
        ("current_platform.is_rocm()", VLLM_GATE, True),
        ("(current_platform.is_rocm( ))", VLLM_GATE, True),
        ("current_platform.is_rocm(\n    # c\n)", VLLM_GATE, True),
        ("current_platform.is_cuda()", VLLM_GATE, False),
        ("not current_platform.is_rocm()", VLLM_GATE, False),
        ("torch.version.hip is not None", TORCH_HIP_GATE, True),
        ("torch.version.hip", TORCH_HIP_GATE, False),
    ],
)
def test_matches_gate(test: str, gate: Gate, expected: bool) -> None:
    assert matches_gate(cst.parse_expression(test), gate) is expected


def test_matches_gate_recognises_a_fixed_statement() -> None:
    source = IMPORTED + "def f(t):\n    t[0] = 0\n"
    fixed = _fixed(source, 3)
    function = cst.parse_module(fixed).body[1]
    assert isinstance(function, cst.FunctionDef) and isinstance(function.body, cst.IndentedBlock)
    gated = function.body.body[0]
    assert isinstance(gated, cst.If)
    assert matches_gate(gated.test, VLLM_GATE)
