"""What numpy gives, for the rules' one question: does an element index a tensor as an int?
(`lint_h2d.inference.numpy_values`, and how a module spells scipy's assignment solver.)"""
from __future__ import annotations

import libcst as cst
import pytest

from lint_h2d.inference.numpy_values import (integer_array, numpy_dtype_integer, numpy_element, numpy_function,
                                             numpy_scalar_index)
from lint_h2d.inference.scope import assignment_solvers
from lint_h2d.inference.values import NON_INTEGER, Kind, LocalStep, Value

STEP = LocalStep("a numpy call", cst.Name("np"))
VECTOR = Value(Kind.NUMPY, 1)
MATRIX = Value(Kind.NUMPY, 2)


def test_positions_of_nonzero_elements_are_one_integer_array_per_dimension() -> None:
    found = numpy_function("nonzero", MATRIX, 1, (), STEP)
    assert found is not None and found.length == 2 and found.items is not None
    assert all(item.kind == Kind.NUMPY and item.rank == 1 and item.integer is True for item in found.items)
    unknown = numpy_function("where", Value(Kind.NUMPY), 1, (), STEP)
    assert unknown is not None and unknown.length is None and unknown.element == integer_array(1, (STEP,))
    assert numpy_function("where", MATRIX, 3, (), STEP) is None  # `np.where(c, a, b)`: elementwise


@pytest.mark.parametrize("keywords, expected", [((), Kind.SCALAR), (("axis",), None), (("keepdims",), None)])
def test_argmax_is_one_position_only_without_an_axis(keywords: tuple, expected: object) -> None:
    found = numpy_function("argmax", MATRIX, 1, keywords, STEP)
    assert (found.kind if found is not None else None) == expected
    if found is not None:
        assert found.integer is True and found.evidence == (STEP,)


def test_argsort_keeps_the_input_rank_and_arange_follows_its_arguments() -> None:
    assert numpy_function("argsort", VECTOR, 1, (), STEP) == integer_array(1, (STEP,))
    assert numpy_function("argsort", Value(Kind.UNKNOWN), 1, (), STEP) == integer_array(None, (STEP,))
    assert numpy_function("argsort", VECTOR, 1, ("axis",), STEP) is None
    assert numpy_function("arange", None, 1, (), STEP, True) == integer_array(1, (STEP,))
    floats = numpy_function("arange", None, 3, (), STEP, NON_INTEGER)
    assert floats is not None and floats.rank == 1 and floats.integer is NON_INTEGER
    assert numpy_function("arange", None, 1, ("dtype",), STEP, True) is None
    assert numpy_function("zeros", VECTOR, 1, (), STEP) is None


def test_an_element_is_a_number_of_an_integer_array_and_an_int_or_an_error_of_another() -> None:
    assert numpy_element(integer_array(1), 1).kind == Kind.SCALAR
    row = numpy_element(integer_array(2), 1)
    assert row.kind == Kind.NUMPY and row.rank == 1 and row.integer is True
    unknown_dtype = numpy_element(VECTOR, 1)
    assert unknown_dtype.kind == Kind.NUMPY and unknown_dtype.rank == 0 and numpy_scalar_index(unknown_dtype)
    floating = numpy_element(Value(Kind.NUMPY, 1, integer=NON_INTEGER), 1)
    assert floating.rank == 0 and not numpy_scalar_index(floating)  # a floating index raises
    assert numpy_element(Value(Kind.NUMPY), 1).rank is None  # rank unknown: anything
    assert numpy_element(VECTOR, 2).rank is None  # more indices than dimensions: raises


@pytest.mark.parametrize("dtype, expected", [
    ("np.int64", True), ("int", True), ("numpy.intp", True), ("int32", True),
    ("np.float32", NON_INTEGER), ("bool", NON_INTEGER), ("x.dtype", False), (None, False)])
def test_astype_dtypes(dtype: object, expected: object) -> None:
    assert numpy_dtype_integer(dtype) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize("source, expected", [
    ("from scipy.optimize import linear_sum_assignment\n", {"linear_sum_assignment"}),
    ("from scipy.optimize import linear_sum_assignment as lsa\n", {"lsa"}),
    ("import scipy.optimize\n", {"scipy.optimize.linear_sum_assignment"}),
    ("import scipy.optimize as opt\n", {"opt.linear_sum_assignment"}),
    ("from scipy import optimize\n", {"optimize.linear_sum_assignment"}),
    ("from mylib.lap import linear_sum_assignment\n", set()),  # another library's: not known
    ("from scipy.optimize import *\n", set()),
])
def test_how_a_module_spells_the_assignment_solver(source: str, expected: set) -> None:
    assert assignment_solvers(cst.parse_module(source)) == frozenset(expected)
