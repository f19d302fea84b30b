"""What PyTorch's index-producing ops return (`INDEX_OPS`, `torch.where`, `nonzero`): kind,
rank and integer dtype, one case per fact, next to look-alikes that stay unknown.

A 0-dim integer tensor indexes like an int (the write copies host-to-device), a 1-D one is
advanced indexing: the rank and dtype of these results decide H2D001's findings
(`tests/fixtures/projects/python/index_ops.py` holds the flagged writes and the silent ones).
Shapes checked against PyTorch 2.13 on the CPU.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from lint_h2d.findings import Finding
from lint_h2d.inference.values import NON_INTEGER, Kind, Value
from tests.test_fixtures import analyze
from tests.test_inference import value_of

DEV, T, CPU, SC, OTH, UNK = Kind.DEVICE, Kind.TENSOR, Kind.CPU, Kind.SCALAR, Kind.OTHER, Kind.UNKNOWN
FLOAT = NON_INTEGER  # `Value.integer` of a tensor whose floating (or boolean) dtype is known

SETUP = ("x = torch.zeros(n, device=device)\n"  # 1-D on the device
         "m = torch.zeros(n, n, device=device)\n"  # 2-D on the device
         "c = torch.zeros(n, 4)\n")  # 2-D on the CPU


def fact(expr: str, body: str = "") -> Tuple[Kind, Optional[int], Optional[bool]]:
    v = value_of(SETUP + body, expr)
    return v.kind, v.rank, v.integer


@pytest.mark.parametrize("expr,expected", [
    # Full reductions: one 0-dim tensor; argmax/argmin give int64, max/min/median the input's dtype.
    ("x.argmax()", (DEV, 0, True)),
    ("torch.argmax(x)", (DEV, 0, True)),
    ("torch.argmin(m)", (DEV, 0, True)),
    ("m.argmax(dim=None)", (DEV, 0, True)),
    ("torch.argmax(c)", (CPU, 0, True)),
    ("torch.argmax(p)", (T, 0, True)),  # any input: torch.argmax returns a tensor
    ("m.argmax(keepdim=True)", (DEV, 2, True)),  # every dimension kept, as 1
    ("x.max()", (DEV, 0, FLOAT)),  # of `x`'s dtype: `torch.zeros(n)`'s, floating
    ("torch.min(m)", (DEV, 0, FLOAT)),
    ("x.median()", (DEV, 0, FLOAT)),
    ("torch.nanmedian(m)", (DEV, 0, FLOAT)),
    # Along a dimension: the dimension is dropped (a 1-D input gives 0-dim) unless keepdim.
    ("m.argmax(dim=1)", (DEV, 1, True)),
    ("torch.argmax(m, 1)", (DEV, 1, True)),
    ("torch.argmin(m, 1, True)", (DEV, 2, True)),
    ("x.argmax(0)", (DEV, 0, True)),
    ("m.argmax(dim=1)[0]", (DEV, 0, True)),  # an element of a 1-D int tensor
    ("m.argsort()", (DEV, 2, True)),
    ("torch.argsort(x, descending=True)", (DEV, 1, True)),
    ("m.argmax(dim=1, keepdim=p)", (DEV, None, True)),  # keepdim unknown: rank unknown
    # Positions in a sorted sequence have the searched values' shape: 0-dim for a number.
    ("torch.searchsorted(x, 3)", (DEV, 0, True)),
    ("torch.searchsorted(x, n)", (DEV, 0, True)),
    ("torch.searchsorted(x, m)", (DEV, 2, True)),
    ("torch.bucketize(n, x)", (DEV, 0, True)),
    ("torch.bucketize(m, x, right=True)", (DEV, 2, True)),
    ("torch.multinomial(m, 1)", (DEV, 2, True)),
    ("x.multinomial(2)", (DEV, 1, True)),
])
def test_single_results(expr: str, expected: Tuple[Kind, Optional[int], bool]) -> None:
    assert fact(expr) == expected


@pytest.mark.parametrize("expr,rank", [
    ("torch.max(x, dim=0)", 0), ("x.max(0)", 0), ("torch.min(m, 1)", 1), ("m.max(dim=1, keepdim=True)", 2),
    ("torch.max(m, 1, True)", 2), ("x.kthvalue(2)", 0), ("torch.kthvalue(m, 1, 0)", 1),
    ("torch.kthvalue(m, 1, 0, True)", 2), ("x.mode()", 0), ("torch.mode(m, dim=0)", 1),
    ("x.median(0)", 0), ("torch.median(m, dim=1)", 1), ("torch.sort(m)", 2), ("x.sort(descending=True)", 1),
    ("torch.topk(x, 2)", 1), ("m.topk(2, dim=0)", 2), ("x.cummax(0)", 1), ("torch.cummin(m, 1)", 2),
])
def test_values_and_indices(expr: str, rank: int) -> None:
    v = value_of(SETUP, expr)
    assert v.kind == OTH and v.fields == ("values", "indices") and v.items is not None
    values, indices = v.items
    assert (values.kind, values.rank, values.integer) == (DEV, rank, FLOAT)  # of the input's dtype
    assert (indices.kind, indices.rank, indices.integer) == (DEV, rank, True)
    # `r.values` / `r.indices` are the positions; `v, i = r` unpacks them.
    assert fact(f"r.indices", f"r = {expr}\n") == (DEV, rank, True)
    assert fact(f"r.values", f"r = {expr}\n") == (DEV, rank, FLOAT)
    assert fact("i", f"v, i = {expr}\n") == (DEV, rank, True)
    assert fact("r[1]", f"r = {expr}\n") == (DEV, rank, True)


def test_values_keep_an_integer_dtype() -> None:
    body = "k = torch.zeros(n, dtype=torch.long, device=device)\n"
    assert fact("torch.max(k, 0).values", body) == (DEV, 0, True)
    assert fact("k.max()", body) == (DEV, 0, True)


@pytest.mark.parametrize("expr", [
    "x.max(p)",  # `p` may be a dim or a tensor: not known which
    "p.argmax()",  # `p` may be a numpy array (its argmax is a numpy int)
    "p.sort()",
    "torch.max(x, other=p)",
    "torch.argmax(*p)",
    "torch.searchsorted(x, p)",  # `p` may be a number or a tensor of any rank
])
def test_unknown_stays_unknown(expr: str) -> None:
    assert value_of(SETUP, expr).kind == UNK


def test_elementwise_max_is_a_tensor_not_a_pair() -> None:
    v = value_of(SETUP, "torch.max(x, m)")
    assert (v.kind, v.fields, v.integer) == (DEV, None, False)


def test_a_plain_tuple_has_no_fields() -> None:
    assert value_of(SETUP + "r = (x, x)\n", "r.indices").kind != DEV


# -- index tuples and nonzero ------------------------------------------------------------------

@pytest.mark.parametrize("expr,count", [
    ("torch.where(m > 0)", 2), ("torch.where(x == 0)", 1), ("torch.where(condition=m > 0)", 2),
    ("m.nonzero(as_tuple=True)", 2), ("torch.nonzero(x, as_tuple=True)", 1),
    ("torch.where(p)", None),
])
def test_index_tuples_hold_one_d_integer_tensors(expr: str, count: Optional[int]) -> None:
    v = value_of(SETUP, expr)
    assert v.kind == OTH and v.length == count and v.element is not None
    assert (v.element.rank, v.element.integer) == (1, True)
    assert fact("w[0]", f"w = {expr}\n")[1:] == (1, True)
    # Iterating one of them (or its list) yields 0-dim integer tensors.
    assert fact("list(w[0])[0]", f"w = {expr}\n")[1:] == (0, True)


def test_where_unpacks_and_iterates() -> None:
    body = "rows, cols = torch.where(m == 0)\nfor a, b in zip(rows, cols):\n    pass\n"
    assert fact("rows", body) == (DEV, 1, True)
    assert fact("a", body) == (DEV, 0, True)
    body = "for r in torch.where(x > 0)[0]:\n    pass\n"
    assert fact("r", body) == (DEV, 0, True)


def test_where_with_three_arguments_is_elementwise() -> None:
    v = value_of(SETUP, "torch.where(m > 0, m, 0)")
    assert v.kind == DEV and v.fields is None and v.length is None


@pytest.mark.parametrize("expr", ["torch.nonzero(x)", "m.nonzero()", "torch.argwhere(m)", "x.nonzero(as_tuple=False)"])
def test_nonzero_is_two_d(expr: str) -> None:
    assert fact(expr) == (DEV, 2, True)
    assert fact(f"{expr}[0, 0]") == (DEV, 0, True)


def test_nonzero_with_an_unknown_as_tuple_is_unknown() -> None:
    assert value_of(SETUP, "x.nonzero(as_tuple=p)").kind == UNK


# -- Python numbers from index results -------------------------------------------------------

@pytest.mark.parametrize("expr", [
    "x.argmax().item()", "int(torch.argmax(x))", "x.argmin().tolist()", "sys.maxsize",
    "max(len(s) for s in p)", "min([1, 2, 3])", "sum(len(s) for s in p)", "max((n for _ in p), default=0)",
])
def test_python_numbers(expr: str) -> None:
    assert value_of(SETUP, expr, header="import sys\nimport torch\n").kind == SC


@pytest.mark.parametrize("expr", ["max(p)", "max((len(s) for s in p), default=p)", "max(t for t in p)",
                                  "sum(p, start=p)", "x.tolist()", "max([x, x])", "sum(x for _ in p)"])
def test_not_python_numbers(expr: str) -> None:
    assert value_of(SETUP, expr).kind != SC


@pytest.mark.parametrize("expr,integer", [
    ("torch.tensor(0)", True), ("torch.tensor([1, -2])", True), ("torch.tensor([[0, 1], [2, 3]])", True),
    ("torch.tensor(0.0)", FLOAT), ("torch.tensor(True)", FLOAT), ("torch.tensor([0, 1.5])", False),
    ("torch.tensor(0, dtype=torch.float32)", FLOAT), ("torch.tensor(n)", False), ("torch.tensor(-1.0)", FLOAT),
    ("torch.tensor(0, dtype=d)", False),  # a dtype not known: nothing known
    ("torch.as_tensor([1, 2])", True),
])
def test_tensor_of_python_ints_is_int64(expr: str, integer: Optional[bool]) -> None:
    assert value_of("", expr).integer is integer


@pytest.mark.parametrize("expr,integer", [
    ("k - 1", True), ("k * 2 + 1", True), ("k // 2", True), ("k % 3", True), ("k + k", True),
    ("k / 2", FLOAT), ("k + 0.5", False), ("k + n", False), ("k + x", False), ("k > 0", FLOAT),
])
def test_integer_arithmetic(expr: str, integer: Optional[bool]) -> None:
    v = value_of(SETUP + "k = torch.tensor(0)\n", expr)
    assert v.kind.is_tensor and v.integer is integer


@pytest.mark.parametrize("expr,integer", [
    ("torch.ones(n)", FLOAT), ("torch.rand(n)", FLOAT), ("torch.empty(n, dtype=torch.bool)", FLOAT),
    ("torch.zeros(n, dtype=d)", False), ("torch.arange(n)", False), ("torch.randint(0, 9, (n,))", True),
    ("torch.zeros_like(k)", True), ("torch.zeros_like(x)", FLOAT), ("torch.zeros_like(k, dtype=torch.half)", FLOAT),
    ("k.float()", FLOAT), ("x.long()", True), ("k.bool()", FLOAT), ("k.clone()", True), ("x.clone()", FLOAT),
    ("k.to(torch.float16)", FLOAT), ("x.to(dtype=torch.int32)", True), ("x.to(device)", FLOAT),
    ("(k > 0).sum()", False),  # a boolean mask's sum is int64: a reduction's dtype is not read
    ("x.new_zeros(2)", FLOAT), ("x.new_zeros(2, dtype=torch.long)", True), ("p.new_zeros(2)", False),
])
def test_floating_and_boolean_dtypes_are_known(expr: str, integer: Optional[bool]) -> None:
    """`Value.integer`: True for an integer dtype, `NON_INTEGER` for a floating or boolean one
    (a 0-dim one is no integer index), False where nothing says."""
    assert value_of(SETUP + "k = torch.tensor(0)\n", expr).integer is integer


def test_shape_is_a_tuple_of_ints() -> None:
    assert fact("a", "a, b = m.shape\n")[0] == SC
    assert value_of(SETUP, "m.shape[1:]").kind == OTH  # a slice of a torch.Size is a tuple
    v: Value = value_of(SETUP, "m.shape")
    assert v.length == 2 and v.element is not None and v.element.kind == SC


# -- how H2D001 reports a 0-dim integer tensor index -------------------------------------------

def _findings(tmp_path: Path, body: str) -> List[Finding]:
    source = "import torch\n\n\ndef f(n: int):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    return [f for f in analyze(path) if f.code == "H2D001"]


def test_a_device_index_names_its_own_sync(tmp_path: Path) -> None:
    (finding,) = _findings(tmp_path, 'x = torch.zeros(n, device="cuda")\nv, i = torch.max(x, dim=0)\nx[i] = 1')
    assert "an index is a 0-dim integer tensor on the device: it is read back to the host first, " \
           "a device-to-host sync of its own" in finding.message
    assert "; use `x.select(0, i).fill_(1)`" in finding.message  # raises for a non-integer index
    assert finding.evidence[-1].message.startswith("every index is a 0-dim integer tensor:")


def test_a_cpu_index_and_a_mixed_subscript(tmp_path: Path) -> None:
    (finding,) = _findings(tmp_path, 'm = torch.zeros(n, n, device="cuda")\nc = torch.tensor(0)\nm[c, 1] = 2')
    assert "an index is a 0-dim integer CPU tensor, read back with `item()` first" in finding.message
    assert "sync of its own" not in finding.message
    assert finding.evidence[-1].message.startswith("every index is an integer or a 0-dim integer tensor:")
    assert "m.select(0, c).select(0, 1).fill_(2)" in finding.message


def test_an_index_of_unknown_device(tmp_path: Path) -> None:
    # `q` is not bound here: torch.argmax returns a 0-dim int64 tensor wherever `q` lives.
    (finding,) = _findings(tmp_path, 'x = torch.zeros(n, device="cuda")\nx[torch.argmax(q)] = 1')
    assert "read back to the host first: a sync of its own if it is on the device" in finding.message
