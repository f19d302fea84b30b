"""``fixers.removal.remove_statement``: deleting a statement, leaving valid and tidy code."""
from __future__ import annotations

import libcst as cst
import pytest

from fixers.removal import remove_statement
from tests.test_fixers_support import apply, locate, vllm_file


def _remove(source: str, line: int, index: int = 0) -> str:
    located = locate(source, line, index)
    edit = remove_statement(
        located.module,
        located.parent,
        located.small,
        located.parent_start,
        located.parent_end,
        located.block,
        source=source,
    )
    return apply(source, [edit])


CASES = [
    pytest.param(
        "def f(m):\n    m.a.zero_()\n    m.a_cpu.zero_()\n    return m\n",
        3,
        0,
        "def f(m):\n    m.a.zero_()\n    return m\n",
        id="whole-line",
    ),
    pytest.param(
        "def f(m):\n    m.a.zero_()\n    m.a_cpu.zero_()  # why\n    return m\n",
        3,
        0,
        "def f(m):\n    m.a.zero_()\n    return m\n",
        id="whole-line-with-trailing-comment",
    ),
    pytest.param(
        "def f(m):\n    # about a\n    m.a.zero_()\n    # about a_cpu\n    m.a_cpu.zero_()\n    return m\n",
        5,
        0,
        "def f(m):\n    # about a\n    m.a.zero_()\n    # about a_cpu\n    return m\n",
        id="comment-above-kept",
    ),
    pytest.param(
        "def f(m):\n    a()\n\n    m.a_cpu.zero_()\n\n    return m\n",
        4,
        0,
        "def f(m):\n    a()\n\n    return m\n",
        id="no-doubled-blank-line",
    ),
    pytest.param(
        "def f(m):\n    a()\n\n    m.a_cpu.zero_()\n    return m\n",
        4,
        0,
        "def f(m):\n    a()\n\n    return m\n",
        id="blank-above-only",
    ),
    pytest.param(
        "def f(m):\n    m.a_cpu.zero_(\n        x,\n    )\n    return m\n",
        2,
        0,
        "def f(m):\n    return m\n",
        id="multi-line-statement",
    ),
    pytest.param(
        "def f(m):\n    m.a_cpu.zero_()\n",
        2,
        0,
        "def f(m):\n    pass\n",
        id="only-statement-becomes-pass",
    ),
    pytest.param(
        "def f(m):\n    # why\n    m.a_cpu.zero_()  # c\n\n\nx = 1\n",
        3,
        0,
        "def f(m):\n    # why\n    pass\n\n\nx = 1\n",
        id="only-statement-with-comments",
    ),
    pytest.param(
        "if x:\n\tm.a_cpu.zero_()\nelse:\n\tb()\n",
        2,
        0,
        "if x:\n\tpass\nelse:\n\tb()\n",
        id="only-statement-tabs",
    ),
    pytest.param(
        '"""Doc."""\nm.a_cpu.zero_()\n',
        2,
        0,
        '"""Doc."""\n',
        id="module-level",
    ),
    pytest.param(
        "m.a_cpu.zero_()\n",
        1,
        0,
        "",
        id="only-statement-of-module",
    ),
    pytest.param(
        "def f(m):\n    a()\n    m.a_cpu.zero_()",
        3,
        0,
        "def f(m):\n    a()\n",
        id="last-line-without-newline",
    ),
    pytest.param(
        "def f(m):\r\n    a()\r\n    m.a_cpu.zero_()\r\n    return m\r\n",
        3,
        0,
        "def f(m):\r\n    a()\r\n    return m\r\n",
        id="crlf",
    ),
    # sharing a line
    pytest.param("def f(m):\n    a(); m.b()\n", 2, 1, "def f(m):\n    a()\n", id="semicolon-last"),
    pytest.param("def f(m):\n    m.b(); a()\n", 2, 0, "def f(m):\n    a()\n", id="semicolon-first"),
    pytest.param("def f(m):\n    a(); m.b(); c()  # k\n", 2, 1, "def f(m):\n    a(); c()  # k\n", id="semicolon-middle"),
    pytest.param("def f(m):\n    a(); m.b();\n", 2, 1, "def f(m):\n    a();\n", id="semicolon-trailing"),
    pytest.param("def f(m):\n    a() ;m.b()\n", 2, 1, "def f(m):\n    a()\n", id="semicolon-odd-spacing"),
    pytest.param("if x: a(); m.b()\n", 1, 1, "if x: a()\n", id="one-line-block-shared"),
    pytest.param("if x: m.b()\n", 1, 0, "if x: pass\n", id="one-line-block-only"),
    pytest.param("if x: m.b()  # c\nelse: a()\n", 1, 0, "if x: pass  # c\nelse: a()\n", id="one-line-block-comment"),
    pytest.param("while x: m.b();\n", 1, 0, "while x: pass;\n", id="one-line-block-semicolon"),
]


@pytest.mark.parametrize("source, line, index, expected", CASES)
def test_remove_statement(source: str, line: int, index: int, expected: str) -> None:
    assert _remove(source, line, index) == expected


def test_block_required_for_statement_line() -> None:
    source = "def f():\n    a()\n"
    located = locate(source, 2)
    with pytest.raises(ValueError, match="block"):
        remove_statement(located.module, located.parent, located.small, located.parent_start, located.parent_end)


def test_small_must_belong_to_parent() -> None:
    source = "a()\n"
    located = locate(source, 1)
    stranger = cst.Expr(cst.parse_expression("b()"))
    with pytest.raises(ValueError, match="not one of"):
        remove_statement(located.module, located.parent, stranger, located.parent_start, located.parent_end, located.block)


def test_without_source_uses_module_code() -> None:
    source = "def f(m):\n    a()\n    m.b()\n"
    located = locate(source, 3)
    edit = remove_statement(
        located.module, located.parent, located.small, located.parent_start, located.parent_end, located.block
    )
    assert apply(source, [edit]) == "def f(m):\n    a()\n"


def test_vllm_rocm_attn_seed_removal_is_byte_identical() -> None:
    """vLLM PR #51585's device-only zero form: removing the CPU zeroing restores the release."""
    original = vllm_file("v1/attention/backends/rocm_attn.py")
    lines = original.splitlines(keepends=True)
    assert lines[104] == "        common_attn_metadata.query_start_loc.zero_()\n"
    source = "".join(lines[:105] + ["        common_attn_metadata.query_start_loc_cpu.zero_()\n"] + lines[105:])
    assert _remove(source, 106) == original
