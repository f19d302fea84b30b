"""What numpy gives where its result's shape and dtype are fixed by the call, and what one
element of a numpy array is, for the one question the rules ask of it: does it index a tensor
like an int?

Why it matters: host-side bookkeeping in serving and detection code is numpy (`np.nonzero`,
`np.argsort`, scipy's `linear_sum_assignment`, `ids.cpu().numpy()`), and its elements then
index device tensors: `for r, c in zip(*linear_sum_assignment(cost)): ids[c] = r`.  PyTorch
takes a numpy integer scalar as an index like a Python int (it reads it through `__index__`:
`select` and a host-to-device `copy_`, checked with a dispatch trace); a numpy floating or
boolean scalar raises there ("only integers, slices ... are valid indices").  So an element of
a numpy array of known rank indexes one element or raises; of an array whose dtype is an
integer one, it is also a Python number as a value (`np.int64` is accepted as `int`).

Pure functions of `Value`s: the caller (`expressions`) infers the arguments.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from lint_h2d.inference.values import Kind, LocalStep, Origin, Value

# numpy functions of one array whose result holds integer positions (int64, `np.intp`).
_POSITION_TUPLES = frozenset({"nonzero", "where"})  # one 1-D array per dimension
# scipy.optimize's assignment solver: (row indices, column indices), two 1-D int arrays; and
# py-motmetrics' `motmetrics.lap.linear_sum_assignment`, which trackers import in its stead (it
# runs whichever solver is installed and returns the same pair, as `np.array`s of ints).
ASSIGNMENT_SOLVERS = frozenset({"linear_sum_assignment"})
ASSIGNMENT_MODULES = frozenset({"scipy.optimize", "scipy.optimize._lsap", "motmetrics.lap"})
_INTEGER_DTYPE_NAMES = frozenset({"int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                  "uint64", "intp", "uintp", "int_", "longlong", "intc"})
_NON_INTEGER_DTYPE_NAMES = frozenset({"float", "float16", "float32", "float64", "half", "single", "double",
                                      "bool", "bool_", "complex64", "complex128", "longdouble"})


def integer_array(rank: Optional[int], evidence: Tuple[LocalStep, ...] = ()) -> Value:
    """A numpy array of integer positions (`np.intp`) of `rank` dimensions."""
    return Value(Kind.NUMPY, rank, Origin.LOCAL, integer=True, evidence=evidence)


def position_tuple(element: Value, source_rank: Optional[int]) -> Value:
    """What `nonzero` as a tuple gives (`np.nonzero(x)`, `np.where(c)`, `torch.where(c)`,
    `x.nonzero(as_tuple=True)`): one 1-D `element` (an integer array or tensor) per dimension
    of the input, one for a 0-dim input; its length unknown where the input's rank is."""
    count = None if source_rank is None else max(source_rank, 1)
    return Value(Kind.OTHER, origin=Origin.LOCAL, length=count, element=element,
                 items=(element,) * count if count is not None else None)


def numpy_function(name: str, first: Optional[Value], positional: int, keywords: Sequence[str],
                   step: LocalStep, integer_arguments: Optional[bool] = False) -> Optional[Value]:
    """What `np.<name>(first, ...)` gives where numpy fixes its rank and an integer dtype;
    None for any other function or spelling (the caller's generic numpy array).

    `positional` and `keywords` say how the call passes its arguments: `np.argmax(x)` is one
    integer (the flat position), `np.argmax(x, axis=1)` an array; `np.where(c, a, b)` is
    elementwise, `np.where(c)` the positions of `c`'s nonzero elements.  `integer_arguments`:
    True where every positional argument is a Python int (`np.arange(n)` then holds ints), None
    (`values.NON_INTEGER`) where one is a float (it holds floats), False where not known."""
    rank = first.rank if first is not None and (first.kind.is_tensor or first.kind == Kind.NUMPY) else None
    if name in _POSITION_TUPLES and positional == 1 and not keywords:
        return position_tuple(integer_array(1, (step,)), rank)
    if name == "flatnonzero" and positional == 1 and not keywords:
        return integer_array(1, (step,))
    if name == "argwhere" and positional == 1 and not keywords:
        return integer_array(2, (step,))
    if name in ("argmax", "argmin") and positional == 1 and not keywords:
        return Value(Kind.SCALAR, 0, Origin.LOCAL, integer=True, evidence=(step,))  # the flat position
    if name == "argsort" and positional == 1 and set(keywords) <= {"kind", "stable"}:
        return integer_array(rank, (step,))  # along the last axis: the input's shape
    if name == "arange" and 1 <= positional <= 3 and not keywords:
        # Ints from int arguments; a float argument makes them floats, whose elements index
        # nothing (they raise) but are numbers as values.
        if integer_arguments:
            return integer_array(1, (step,))
        return Value(Kind.NUMPY, 1, Origin.LOCAL, integer=integer_arguments)
    return None


def numpy_dtype_integer(dotted: Optional[str]) -> Optional[bool]:
    """What `astype(<dtype>)` says of `Value.integer`: True for an integer dtype (`np.int64`,
    `int`, `"int32"`), None (`values.NON_INTEGER`) for a floating or boolean one, False for
    anything else (a variable, `x.dtype`)."""
    last = (dotted or "").split(".")[-1]
    if last in _INTEGER_DTYPE_NAMES:
        return True
    return None if last in _NON_INTEGER_DTYPE_NAMES else False


def assignment_result(step: LocalStep) -> Value:
    """`linear_sum_assignment(cost)`: `(row_ind, col_ind)`, two 1-D integer arrays."""
    rows = integer_array(1, (step,))
    return Value(Kind.OTHER, origin=Origin.LOCAL, length=2, element=rows, items=(rows, rows))


def numpy_element(array: Value, indices: int) -> Value:
    """What `array[i, j, ...]` is with `indices` integer positions (or what iterating it yields,
    with one): an array of the remaining dimensions, or, with every dimension indexed, one
    element.  An element of an integer array is a Python number by what PyTorch accepts
    (`numpy_values`); one of another dtype is a numpy scalar (rank 0), which indexes as an int
    or raises (`expressions.index_effect`) and is no number as a value (`np.float32` raises)."""
    assert array.kind == Kind.NUMPY
    if array.rank is None or indices > array.rank:
        return Value(Kind.NUMPY, None, array.origin)
    left = array.rank - indices
    if left > 0:
        return Value(Kind.NUMPY, left, array.origin, integer=array.integer, evidence=array.evidence)
    if array.integer:
        return Value(Kind.SCALAR, 0, array.origin, integer=True, evidence=array.evidence)
    return Value(Kind.NUMPY, 0, array.origin, integer=array.integer, evidence=array.evidence)


def numpy_scalar_index(value: Value) -> bool:
    """`value` is one element of a numpy array of a dtype not known (`numpy_element`): as a
    tensor index, an int or an error.  Not one of a floating or boolean array (it raises)."""
    return value.kind == Kind.NUMPY and value.rank == 0 and value.integer is False
