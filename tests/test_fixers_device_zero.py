"""``fixers.device_zero``: the device-side spelling of ``T[I] = V``."""
from __future__ import annotations

from typing import List, Optional

import libcst as cst
import pytest

from fixers.device_zero import DeviceZero, Unfixable, device_zero_form


def _form(statement: str) -> object:
    module = cst.parse_module(statement + "\n")
    line = module.body[0]
    assert isinstance(line, cst.SimpleStatementLine)
    assign = line.body[0]
    assert isinstance(assign, cst.Assign)
    return device_zero_form(assign.targets[0].target, assign.value)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


# statement, expected call, index_is_literal, value_is_literal
CASES = [
    # index forms: a literal keeps its subscript (a select view that raises like the write)
    ("t[0] = 0", "t[0].zero_()", True, True),
    ("prefill_cu_seqlens_k[0] = 0", "prefill_cu_seqlens_k[0].zero_()", True, True),
    ("t[3] = 1", "t[3].fill_(1)", True, True),
    ("t[-1] = 0", "t[-1].zero_()", True, True),
    ("t[-3] = 7", "t[-3].fill_(7)", True, True),
    ("t[0x1] = 0", "t[0x1].zero_()", True, True),
    ("t[1_000] = 0", "t[1_000].zero_()", True, True),
    ("t[(2)] = 0", "t[(2)].zero_()", True, True),
    ("t[-(3)] = 0", "t[-(3)].zero_()", True, True),
    ("t[ 0 ] = 0", "t[ 0 ].zero_()", True, True),
    # any other index: select, which raises for a list, tensor, slice or bool index
    ("t[i] = 0", "t.select(0, i).zero_()", False, True),
    ("t[i] = 1.5", "t.select(0, i).fill_(1.5)", False, True),
    ("t[-i] = 0", "t.select(0, -i).zero_()", False, True),
    ("t[i + 1] = 0", "t.select(0, i + 1).zero_()", False, True),
    ("t[n - 1] = x", "t.select(0, n - 1).fill_(x)", False, False),
    ("t[len(x)] = 0", "t.select(0, len(x)).zero_()", False, True),
    ("t2[0, 1] = 0", "t2[0, 1].zero_()", True, True),
    ("t2[0, -1] = 5", "t2[0, -1].fill_(5)", True, True),
    ("t2[i, j] = 0", "t2.select(0, i).select(0, j).zero_()", False, True),
    ("t2[i, 0] = 0", "t2.select(0, i).select(0, 0).zero_()", False, True),
    ("t[..., 0] = 0", "t[..., 0].zero_()", True, True),
    ("t[..., i] = 0", "t.select(-1, i).zero_()", False, True),
    ("t3[i, ..., j, k] = 0", "t3.select(0, i).select(-2, j).select(-1, k).zero_()", False, True),
    ("t[...] = 0", "t.zero_()", False, True),
    ("t[(0, 1)] = 0", "t[(0, 1)].zero_()", True, True),
    ("t[(i, 1)] = 0", "t.select(0, i).select(0, 1).zero_()", False, True),
    # value forms
    ("t[0] = 0.0", "t[0].zero_()", True, True),
    ("t[0] = 0.", "t[0].zero_()", True, True),
    ("t[0] = 0e0", "t[0].zero_()", True, True),
    ("t[0] = 0x0", "t[0].zero_()", True, True),
    ("t[0] = False", "t[0].zero_()", True, True),
    ("t[0] = (0)", "t[0].zero_()", True, True),
    ("t[0] = -0.0", "t[0].fill_(-0.0)", True, True),
    ("t[0] = -0", "t[0].fill_(-0)", True, True),
    ("t[0] = 0j", "t[0].fill_(0j)", True, True),
    ("t[0] = 1", "t[0].fill_(1)", True, True),
    ("t[0] = 1.5", "t[0].fill_(1.5)", True, True),
    ("t[0] = True", "t[0].fill_(True)", True, True),
    ("t[0] = -2", "t[0].fill_(-2)", True, True),
    ("t[0] = +2", "t[0].fill_(+2)", True, True),
    ("t[0] = float('-inf')", "t[0].fill_(float('-inf'))", True, False),
    ("t[0] = x", "t[0].fill_(x)", True, False),
    ("t[0] = f(x)", "t[0].fill_(f(x))", True, False),
    ("t[0] = x.item()", "t[0].fill_(x.item())", True, False),
    ("t[0] = a if c else b", "t[0].fill_(a if c else b)", True, False),
    ("t[0] = 1, 2", "t[0].fill_((1, 2))", True, False),
    ("t[0] = None", "t[0].fill_(None)", True, False),
    # target expressions are kept exactly
    ("self.buf[0] = 0", "self.buf[0].zero_()", True, True),
    ("a.b.c[-1] = 0", "a.b.c[-1].zero_()", True, True),
    ("x[1:][0] = 0", "x[1:][0].zero_()", True, True),
    ("x[1:][i] = 0", "x[1:].select(0, i).zero_()", False, True),
    ("(t)[0] = 0", "(t)[0].zero_()", True, True),
    ("(t[i]) = 0", "t.select(0, i).zero_()", False, True),
    ("get()[k] = 0", "get().select(0, k).zero_()", False, True),
]


@pytest.mark.parametrize("statement, expected, index_literal, value_literal", CASES)
def test_device_zero_form(statement: str, expected: str, index_literal: bool, value_literal: bool) -> None:
    result = _form(statement)
    assert isinstance(result, DeviceZero), result
    assert _code(result.call) == expected
    assert result.index_is_literal is index_literal
    assert result.value_is_literal is value_literal
    cst.parse_expression(expected)  # valid on its own


# With a proven length, a literal index uses the one-element slice vLLM ships.
SLICE_CASES = [
    ("t[0] = 0", 1, "t[:1].zero_()"),
    ("prefill_cu_seqlens_k[0] = 0", 2, "prefill_cu_seqlens_k[:1].zero_()"),
    ("t[3] = 1", 4, "t[3:4].fill_(1)"),
    ("t[3] = 1", 3, "t[3].fill_(1)"),  # not proven: length 3 has no element 3
    ("t[-1] = 0", 1, "t[-1:].zero_()"),
    ("t[-2] = 0", 2, "t[-2:-1].zero_()"),
    ("t[-2] = 0", 1, "t[-2].zero_()"),
    ("t[1_000] = 0", 1001, "t[1000:1001].zero_()"),
    ("self.buf[0] = 0", 1, "self.buf[:1].zero_()"),
    ("t2[0, 1] = 0", 5, "t2[0, 1].zero_()"),  # several indices: never sliced
]


@pytest.mark.parametrize("statement, length, expected", SLICE_CASES)
def test_slice_only_with_a_proven_length(statement: str, length: int, expected: str) -> None:
    module = cst.parse_module(statement + "\n")
    assign = module.body[0].body[0]  # type: ignore[attr-defined]
    result = device_zero_form(assign.targets[0].target, assign.value, length)
    assert isinstance(result, DeviceZero)
    assert _code(result.call) == expected


@pytest.mark.parametrize("value, fits", [
    ("9223372036854775807", True), ("-9223372036854775808", True), ("9223372036854775808", False),
    ("18446744073709551615", False), ("-9223372036854775809", False), ("0xFFFFFFFFFFFFFFFF", False),
    ("1e300", True), ("True", True), ("-0.0", True),
])
def test_integer_literals_outside_int64_do_not_fit(value: str, fits: bool) -> None:
    result = _form(f"t[0] = {value}")
    assert isinstance(result, DeviceZero)
    assert result.value_fits is fits


UNFIXABLE = [
    ("t[0:1] = 0", "slice"),
    ("t[:] = 0", "slice"),
    ("t2[0, :] = 0", "slice"),
    ("t2[::2, 0] = 0", "slice"),
    ("t[*idx] = 0", "starred"),
    ("t[[0]] = 0", "not an integer"),
    ("t[[i, j]] = 0", "not an integer"),
    ("t[None] = 0", "not an integer"),
    ("t[True] = 0", "not an integer"),
    ("t['a'] = 0", "not an integer"),
    ("t[0.5] = 0", "not an integer"),
    ("t[x > 0] = 0", "not an integer"),
    ("t[not m] = 0", "boolean"),
    ("t2[0, [1]] = 0", "not an integer"),
    ("t[(0, [1])] = 0", "not an integer"),
    ("t = 0", "not a subscript"),
    ("t.x = 0", "not a subscript"),
]


@pytest.mark.parametrize("statement, reason", UNFIXABLE)
def test_unfixable(statement: str, reason: str) -> None:
    result = _form(statement)
    assert isinstance(result, Unfixable), result
    assert reason in result.reason


@pytest.mark.parametrize("k", range(-6, 7))
def test_literal_slice_selects_exactly_element_k(k: int) -> None:
    """The computed one-element slice picks the same element as the integer index, for every
    sign (the rewrite ``t[i:i+1]`` would be empty for ``i == -1``)."""
    module = cst.parse_module(f"t[{k}] = 0\n")
    assign = module.body[0].body[0]  # type: ignore[attr-defined]
    result = device_zero_form(assign.targets[0].target, assign.value, 7)
    assert isinstance(result, DeviceZero)
    view = result.call.func
    assert isinstance(view, cst.Attribute)
    slice_code = _code(view.value)
    assert ":" in slice_code
    values: List[int] = list(range(10, 17))
    selected = eval(slice_code, {"t": values})  # noqa: S307 - a computed slice of a literal list
    assert selected == [values[k]]


@pytest.mark.parametrize("statement", ["t[i] = 7", "t[i, j] = 7", "t[..., i] = 7", "t[i, ..., j] = 7"])
@pytest.mark.parametrize("index", [[1, 2], [1], "tensor", "bool-tensor", True, slice(0, 2), None, 1.0])
def test_non_integer_index_raises_instead_of_writing_a_copy(statement: str, index: object) -> None:
    """Issue #17 item 10: ``t[i].fill_(v)`` on a list or tensor index fills a copy and loses the
    write silently; the select spelling raises instead."""
    torch = pytest.importorskip("torch")
    result = _form(statement)
    assert isinstance(result, DeviceZero)
    value = {"tensor": torch.tensor([1, 2]), "bool-tensor": torch.tensor([True, False, True])}.get(
        index, index) if isinstance(index, str) else index
    t = torch.zeros(3, 3)
    with pytest.raises((TypeError, RuntimeError, IndexError)):
        eval(_code(result.call), {"t": t, "i": value, "j": 1})  # noqa: S307


@pytest.mark.parametrize("index", [0, 2, -1, -3, "t0", "np"])
def test_integer_like_index_writes_the_element(index: object) -> None:
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    value = {"t0": torch.tensor(1), "np": np.int64(2)}.get(index, index) if isinstance(index, str) else index
    result = _form("t[i] = 7")
    assert isinstance(result, DeviceZero)
    a, b = torch.zeros(3), torch.zeros(3)
    a[value] = 7
    eval(_code(result.call), {"t": b, "i": value})  # noqa: S307
    assert a.tolist() == b.tolist()


def test_non_literal_negative_index_is_not_sliced() -> None:
    result = _form("t[i] = 0")
    assert isinstance(result, DeviceZero)
    assert ":" not in _code(result.call)


def test_multiline_value_kept_verbatim() -> None:
    result = _form("t[0] = compute(\n    a,\n    b,\n)")
    assert isinstance(result, DeviceZero)
    assert _code(result.call) == "t[0].fill_(compute(\n    a,\n    b,\n))"


def test_value_node_is_reused_not_copied_into_new_spelling() -> None:
    module = cst.parse_module("t[0] = some.value  # c\n")
    line = module.body[0]
    assert isinstance(line, cst.SimpleStatementLine)
    assign = line.body[0]
    assert isinstance(assign, cst.Assign)
    result = device_zero_form(assign.targets[0].target, assign.value)
    assert isinstance(result, DeviceZero)
    argument: Optional[cst.Arg] = result.call.args[0] if result.call.args else None
    assert argument is not None and argument.value is assign.value


def test_results_are_frozen() -> None:
    result = _form("t[0] = 0")
    assert isinstance(result, DeviceZero)
    with pytest.raises(AttributeError):
        result.index_is_literal = False  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Unfixable("x").reason = "y"  # type: ignore[misc]


@pytest.mark.parametrize(
    "source,expected",
    [
        ("t[0] = (a *\n    b)", "t[0].fill_(a *\n    b)"),  # the call's parentheses suffice
        ("t[0] = (x := 1)", "t[0].fill_((x := 1))"),  # a walrus keeps them
        ("t[0] = (1, 2)", "t[0].fill_((1, 2))"),  # so does a tuple
        ("t[0] = ((a))", "t[0].fill_(((a)))"),  # only one redundant pair is dropped
    ],
)
def test_redundant_value_parentheses(source: str, expected: str) -> None:
    module = cst.parse_module(source)
    assign = module.body[0].body[0]
    form = device_zero_form(assign.targets[0].target, assign.value)
    assert isinstance(form, DeviceZero)
    assert module.code_for_node(form.call) == expected
    compile(expected, "<fix>", "eval")
