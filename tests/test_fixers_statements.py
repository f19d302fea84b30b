"""``fixers.statements``: new statements as text edits at the right place."""
from __future__ import annotations

from typing import List

import libcst as cst
import pytest
from libcst.metadata import CodePosition, MetadataWrapper, PositionProvider

from fixers.device_zero import DeviceZero, device_zero_form
from fixers.edits import TextEdit, Unfixable
from fixers.statements import (
    is_alone_on_line,
    replace_expression,
    replace_small_statement,
    replace_statement_line,
)
from tests.test_fixers_support import apply, assign_parts, locate


def _device_statement(source: str, line: int, index: int = 0) -> cst.Expr:
    target, value = assign_parts(locate(source, line, index))
    form = device_zero_form(target, value)
    assert isinstance(form, DeviceZero)
    return cst.Expr(form.call)


def test_libcst_statement_range_excludes_trailing_comment_and_newline() -> None:
    """The premise of the column arithmetic: checked against the installed LibCST."""
    wrapper = MetadataWrapper(cst.parse_module("def f():\n    # c\n    t[0] = 0  # d\n"))
    positions = wrapper.resolve(PositionProvider)
    lines = [n for n in positions if isinstance(n, cst.SimpleStatementLine)]
    assert positions[lines[0]].start == CodePosition(3, 4)
    assert positions[lines[0]].end == CodePosition(3, 12)


# --- replace_small_statement: the non-gated, in-place rewrite --------------------------------

SMALL_CASES = [
    ("def f(t):\n    t[0] = 0\n", 2, 0, "def f(t):\n    t[0].zero_()\n"),
    ("def f(t):\n    t[0] = 0  # keep me\n", 2, 0, "def f(t):\n    t[0].zero_()  # keep me\n"),
    ("def f(t):\n    # above\n    t[-1] = 1\n", 3, 0, "def f(t):\n    # above\n    t[-1].fill_(1)\n"),
    ("def f(t):\n    a = 1; t[0] = 0\n", 2, 1, "def f(t):\n    a = 1; t[0].zero_()\n"),
    ("def f(t):\n    t[0] = 0; a = 1\n", 2, 0, "def f(t):\n    t[0].zero_(); a = 1\n"),
    ("def f(t):\n    a = 1 ;t[0] = 0 ; b = 2  # c\n", 2, 1, "def f(t):\n    a = 1 ;t[0].zero_() ; b = 2  # c\n"),
    ("def f(t):\n    t[0] = 0;\n", 2, 0, "def f(t):\n    t[0].zero_();\n"),
    ("def f(t):\n    if x: t[0] = 0\n", 2, 0, "def f(t):\n    if x: t[0].zero_()\n"),
    ("def f(t):\n    if x: t[i] = 0  # c\n", 2, 0, "def f(t):\n    if x: t.select(0, i).zero_()  # c\n"),
    ("for i in r: t[i, 0] = -0.0\n", 1, 0, "for i in r: t.select(0, i).select(0, 0).fill_(-0.0)\n"),
    ("def f(t):\n\tif x:\n\t\tt[3] = v\n", 3, 0, "def f(t):\n\tif x:\n\t\tt[3].fill_(v)\n"),
    ("def f(t):\r\n    t[0] = 0  # c\r\n", 2, 0, "def f(t):\r\n    t[0].zero_()  # c\r\n"),
    (
        "def f(t):\n    if x:\n        t[0] = g(\n            a,\n        )\n",
        3,
        0,
        "def f(t):\n    if x:\n        t[0].fill_(g(\n            a,\n        ))\n",
    ),
]


@pytest.mark.parametrize("source, line, index, expected", SMALL_CASES)
def test_replace_small_statement(source: str, line: int, index: int, expected: str) -> None:
    located = locate(source, line, index)
    edit = replace_small_statement(
        located.module, located.small_start, located.small_end, _device_statement(source, line, index), source=source
    )
    assert isinstance(edit, TextEdit)
    assert apply(source, [edit]) == expected


def test_replace_small_statement_without_source_uses_module_code() -> None:
    source = "def f(t):\n    t[0] = 0\n"
    located = locate(source, 2)
    edit = replace_small_statement(located.module, located.small_start, located.small_end, _device_statement(source, 2))
    assert isinstance(edit, TextEdit)
    assert apply(source, [edit]) == "def f(t):\n    t[0].zero_()\n"


def test_replace_small_statement_accepts_code_positions() -> None:
    source = "t[0] = 0\n"
    located = locate(source, 1)
    edit = replace_small_statement(
        located.module, CodePosition(1, 0), CodePosition(1, 8), _device_statement(source, 1), source=source
    )
    assert edit == TextEdit((1, 0), (1, 8), "t[0].zero_()")


def test_replace_small_statement_drops_semicolon_of_new_node() -> None:
    source = "a = 1; b = 2\n"
    located = locate(source, 1, 0)
    new = cst.parse_statement("c = 3; d = 4")
    assert isinstance(new, cst.SimpleStatementLine)
    edit = replace_small_statement(located.module, located.small_start, located.small_end, new.body[0], source=source)
    assert isinstance(edit, TextEdit)
    assert apply(source, [edit]) == "c = 3; b = 2\n"


@pytest.mark.parametrize(
    "new",
    [
        cst.parse_statement("if x:\n    pass\n"),
        cst.parse_statement("a = 1\n"),
        [cst.parse_statement("a = 1\n")],
    ],
)
def test_replace_small_statement_refuses_compound(new: object) -> None:
    source = "def f(t):\n    a = 1; t[0] = 0\n"
    located = locate(source, 2, 1)
    result = replace_small_statement(located.module, located.small_start, located.small_end, new, source=source)  # type: ignore[arg-type]
    assert isinstance(result, Unfixable)
    assert "shares its line" in result.reason


# --- replace_statement_line ------------------------------------------------------------------


def _if(text: str) -> cst.If:
    node = cst.parse_statement(text)
    assert isinstance(node, cst.If)
    return node


def test_replace_statement_line_with_several_statements() -> None:
    source = "def f(t):\n    # c\n    t[0] = 0  # d\n    return t\n"
    located = locate(source, 3)
    assert isinstance(located.parent, cst.SimpleStatementLine)
    new: List[cst.BaseStatement] = [cst.parse_statement("a = 1\n"), _if("if a:\n    b = 2\n")]
    edit = replace_statement_line(
        located.module, located.parent, located.parent_start, located.parent_end, new, source=source  # type: ignore[arg-type]
    )
    # The trailing comment belonged to the replaced line; the new statements do not carry it.
    assert apply(source, [edit]) == "def f(t):\n    # c\n    a = 1\n    if a:\n        b = 2\n    return t\n"


def test_replace_statement_line_renders_deliberate_new_leading_lines() -> None:
    source = "def f(t):\n    # c\n    t[0] = 0\n"
    located = locate(source, 3)
    assert isinstance(located.parent, cst.SimpleStatementLine)
    new = located.parent.with_changes(
        leading_lines=[*located.parent.leading_lines, cst.EmptyLine(comment=cst.Comment("# new"))]
    )
    edit = replace_statement_line(located.module, located.parent, located.parent_start, located.parent_end, new, source=source)
    assert apply(source, [edit]) == "def f(t):\n    # c\n    # new\n    t[0] = 0\n"


def test_replace_statement_line_keeps_leading_lines_single() -> None:
    source = "def f(t):\n\n    # one\n    # two\n    t[0] = 0\n"
    located = locate(source, 5)
    assert isinstance(located.parent, cst.SimpleStatementLine)
    new = located.parent.with_changes(body=[_device_statement(source, 5)])
    edit = replace_statement_line(located.module, located.parent, located.parent_start, located.parent_end, new, source=source)
    assert apply(source, [edit]) == "def f(t):\n\n    # one\n    # two\n    t[0].zero_()\n"


def test_replace_statement_line_file_without_final_newline() -> None:
    source = "def f(t):\n    t[0] = 0  # c"
    located = locate(source, 2)
    assert isinstance(located.parent, cst.SimpleStatementLine)
    new = _if("if g:\n    t[0].zero_()\nelse:\n    t[0] = 0  # c\n")
    edit = replace_statement_line(located.module, located.parent, located.parent_start, located.parent_end, new, source=source)
    assert apply(source, [edit]) == "def f(t):\n    if g:\n        t[0].zero_()\n    else:\n        t[0] = 0  # c"


def test_replace_statement_line_rejects_mid_line_statement() -> None:
    source = "if x: t[0] = 0\n"
    located = locate(source, 1)
    line = cst.parse_statement("t[0] = 0\n")
    assert isinstance(line, cst.SimpleStatementLine)
    with pytest.raises(ValueError, match="does not begin its line"):
        replace_statement_line(located.module, line, located.parent_start, located.parent_end, line, source=source)


def test_replace_statement_line_rejects_empty_replacement() -> None:
    source = "t[0] = 0\n"
    located = locate(source, 1)
    assert isinstance(located.parent, cst.SimpleStatementLine)
    with pytest.raises(ValueError):
        replace_statement_line(located.module, located.parent, located.parent_start, located.parent_end, [], source=source)


# --- replace_expression, is_alone_on_line ----------------------------------------------------


def test_replace_expression() -> None:
    source = "def f(m):\n    m.query_start_loc_cpu.zero_()  # c\n"
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    attribute = next(n for n in positions if isinstance(n, cst.Attribute) and n.attr.value == "query_start_loc_cpu")
    span = positions[attribute]
    new = attribute.with_changes(attr=cst.Name("query_start_loc"))
    edit = replace_expression(wrapper.module, span.start, span.end, new, source=source)
    assert apply(source, [edit]) == "def f(m):\n    m.query_start_loc.zero_()  # c\n"


@pytest.mark.parametrize(
    "source, line, index, alone",
    [
        ("t[0] = 0\n", 1, 0, True),
        ("t[0] = 0;\n", 1, 0, True),
        ("a = 1; t[0] = 0\n", 1, 1, False),
        ("if x: t[0] = 0\n", 1, 0, False),
    ],
)
def test_is_alone_on_line(source: str, line: int, index: int, alone: bool) -> None:
    located = locate(source, line, index)
    assert is_alone_on_line(located.parent, located.small) is alone
