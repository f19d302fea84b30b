"""What PyTorch's functions and methods do with a tensor's device, rank and dtype: the tables
the inference rests on.

A module of its own, importing nothing but the standard library, so that what reads these
tables without a LibCST tree (the prefilter's stage 2 on CPython's tree) need not import LibCST
through `expressions.py`, the walk's typing of expressions, which reads them too.  A pre-commit
run on a file the prefilter drops then imports no parser at all.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Tuple

# Factories whose first positional arguments (or `size=`) give the shape.
SIZE_FACTORIES = frozenset(
    {"empty", "zeros", "ones", "rand", "randn", "empty_strided", "full"}
)
# Factories that always make a 1-D tensor.
ONE_D_FACTORIES = frozenset({"arange", "linspace", "logspace", "randperm"})
LIKE_FACTORIES = frozenset(
    {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like"}
)
DATA_FACTORIES = frozenset({"tensor", "as_tensor", "asarray"})
ALL_FACTORIES = (
    SIZE_FACTORIES | ONE_D_FACTORIES | LIKE_FACTORIES | DATA_FACTORIES | {"eye", "randint"}
)
# torch.* functions whose result lives where their first tensor argument lives.
SAME_DEVICE_FUNCTIONS = frozenset(
    {
        "cumsum", "cumprod", "cat", "concat", "concatenate", "stack", "where", "clamp", "clip",
        "abs", "neg", "add", "sub", "mul", "div", "floor_divide", "remainder", "maximum",
        "minimum", "max", "min", "sum", "prod", "mean", "argmax", "argmin", "sort", "argsort",
        "flatten", "reshape", "narrow", "squeeze", "unsqueeze", "transpose", "permute",
        "repeat_interleave", "gather", "index_select", "masked_select", "nonzero", "diff",
        "exp", "log", "sqrt", "sigmoid", "softmax", "log_softmax", "logsumexp", "topk",
        "searchsorted", "bucketize",
        "roll", "flip", "select", "einsum", "matmul", "bmm", "mm",
        "logical_and", "logical_or", "logical_not", "eq", "ne", "lt", "le", "gt", "ge",
        "nan_to_num", "tril", "triu", "outer", "ger", "any", "all", "quantile", "nanquantile",
    }
)
# `torch.nn.functional` functions (`F.softmax(x, dim=-1)`, `F.gelu(x)`, `F.pad(x, (0, 1))`) whose
# result is a tensor of their input's rank on its device: activations, dropouts, normalizations
# along dimensions, padding and resizing (each computes on its input's device, as a layer does).
FUNCTIONAL_RANK_KEEPING = frozenset({
    "softmax", "log_softmax", "softmin", "gumbel_softmax", "relu", "relu6", "elu", "selu", "celu",
    "gelu", "silu", "mish", "leaky_relu", "hardtanh", "hardswish", "hardsigmoid", "sigmoid", "tanh",
    "softplus", "softsign", "logsigmoid", "tanhshrink", "softshrink", "hardshrink", "threshold",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "normalize", "layer_norm", "group_norm", "rms_norm", "batch_norm", "instance_norm",
    "local_response_norm", "pad", "interpolate",
})
# `torch.nn.functional` functions that add one dimension to their input's, on its device
# (`F.one_hot(x)`: int64).
FUNCTIONAL_RANK_ADDING = frozenset({"one_hot"})
# Of the rank-keeping ones, those that keep their input's dtype too (an integer tensor stays one).
FUNCTIONAL_DTYPE_KEEPING = frozenset({"pad", "dropout", "relu", "relu6", "threshold"})
# Functions and methods that cut a tensor into a tuple of tensors on its device: `unbind` drops
# the dimension it cuts along (each piece is a row), the others keep every dimension.
SPLIT_OPS = frozenset({"split", "chunk", "tensor_split", "unbind", "split_with_sizes", "hsplit",
                       "vsplit", "dsplit"})
# Tensor methods that return a view (or the tensor itself): same storage, same owner.
VIEW_METHODS = frozenset(
    {
        "view", "view_as", "reshape", "reshape_as", "flatten", "narrow", "transpose", "t",
        "permute", "squeeze", "unsqueeze", "expand", "expand_as", "select", "as_strided",
        "unflatten", "movedim", "swapaxes", "diagonal", "unfold", "contiguous", "detach",
        "data_ptr_view",
    }
)
# Tensor methods that keep the tensor's device but may allocate.
SAME_DEVICE_METHODS = frozenset(
    {
        "clone", "int", "long", "float", "half", "bfloat16", "double", "bool", "short", "byte",
        "char", "type", "type_as", "cumsum", "cumprod", "sum", "prod", "mean", "max", "min",
        "argmax", "argmin", "abs", "neg", "clamp", "clip", "add", "sub", "mul", "div",
        "masked_fill", "index_select", "gather", "repeat", "repeat_interleave", "flip", "roll",
        "sort", "argsort", "exp", "log", "sqrt", "pow", "eq", "ne", "lt", "le", "gt", "ge",
        "logical_not", "logical_and", "logical_or", "diff", "floor_divide", "remainder",
        "to_dense", "coalesce", "softmax", "log_softmax", "sigmoid", "logsumexp", "nan_to_num",
        "tril", "triu", "any", "all", "quantile", "nanquantile",
    }
)
# Methods returning a Python scalar.
SCALAR_METHODS = frozenset({"item", "numel", "dim", "ndimension", "element_size", "nelement"})
# Methods returning a scalar when given an argument (`t.size(0)`), a tuple otherwise.
SCALAR_WITH_ARG_METHODS = frozenset({"size", "stride"})

TORCH_DTYPE_NAMES = frozenset(
    {
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8",
        "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64", "complex128",
        "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16",
        "uint32", "uint64",
    }
)

# `torch.LongTensor`, `torch.BoolTensor`, ...: PyTorch's legacy tensor types.  As annotations
# (`finished: torch.BoolTensor`) they say "a tensor of this dtype", not where it lives.
LEGACY_TENSOR_TYPES = frozenset({
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
})

@dataclass(frozen=True)
class IndexOp:
    """What one of PyTorch's index-producing reductions and sorts returns, from its signature.

    Why it matters: an index a write selects one element with is what makes `t[i] = v` a
    host-to-device copy, and a 0-dim integer tensor is such an index (PyTorch reads it back
    with `item()`, then `select`s and `copy_`s), where a 1-D one is advanced indexing
    (`index_put_`, no copy).  So the rank and dtype of these results decide the finding:

    * `dim` / `keepdim`: where those parameters sit after the input (the method's first
      positional argument, the function's second; None: the op has no such parameter);
    * `full`: called without `dim` (or `dim=None`) the op reduces every dimension and returns
      one 0-dim tensor (`t.argmax()`, `t.max()`, `t.median()`), not a tuple; otherwise `dim`
      has a default (-1) and the op always works along one dimension;
    * along a dimension, the result drops that dimension unless `keepdim=True` (a 1-D input
      gives 0-dim results), or keeps the input's shape (`keeps_rank`: sort, topk, argsort,
      cummax, cummin);
    * `pair`: along a dimension the result is a named tuple `(values, indices)`
      (`torch.return_types.max`, ...): `values` has the input's dtype, `indices` is int64;
    * `indices_only`: the op returns just the int64 indices (argmax, argmin, argsort);
    * `other`: a tensor where `dim` would be is the elementwise form (`torch.max(a, b)`).

    Every result is on the input's device (checked against PyTorch 2.13: `return_types`,
    shapes, `int64` indices, `argmax(keepdim=True)` without dim keeping every dimension as 1).
    """

    dim: Optional[int]
    keepdim: Optional[int]
    full: bool
    pair: bool
    keeps_rank: bool = False
    indices_only: bool = False
    other: bool = False


INDEX_OPS: Mapping[str, IndexOp] = {
    "argmax": IndexOp(0, 1, full=True, pair=False, indices_only=True),
    "argmin": IndexOp(0, 1, full=True, pair=False, indices_only=True),
    "max": IndexOp(0, 1, full=True, pair=True, other=True),
    "min": IndexOp(0, 1, full=True, pair=True, other=True),
    "median": IndexOp(0, 1, full=True, pair=True),
    "nanmedian": IndexOp(0, 1, full=True, pair=True),
    "mode": IndexOp(0, 1, full=False, pair=True),
    "kthvalue": IndexOp(1, 2, full=False, pair=True),
    "sort": IndexOp(0, None, full=False, pair=True, keeps_rank=True),
    "topk": IndexOp(1, None, full=False, pair=True, keeps_rank=True),
    "argsort": IndexOp(0, None, full=False, pair=False, keeps_rank=True, indices_only=True),
    "cummax": IndexOp(0, None, full=False, pair=True, keeps_rank=True),
    "cummin": IndexOp(0, None, full=False, pair=True, keeps_rank=True),
    # `multinomial(probs, n)`: n int64 samples per row, the input's rank.
    "multinomial": IndexOp(None, None, full=False, pair=False, keeps_rank=True, indices_only=True),
}
# The fields of the named tuple a pair-returning op gives (`r.values`, `r.indices`).
PAIR_FIELDS = ("values", "indices")

# `t.new(...)` is the legacy constructor (`Tensor.new`): like the `new_*` methods, on `t`'s
# device and of its dtype; its rank is read by `expressions._legacy_new_rank`.
NEW_METHODS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new"})

# Ops whose results are (or hold) indices, besides INDEX_OPS.
NONZERO_OPS = frozenset({"nonzero", "argwhere"})

INTEGER_DTYPES = frozenset({"int", "int8", "int16", "int32", "int64", "long", "short", "uint8",
                            "uint16", "uint32", "uint64"})
# Floating, complex and boolean dtypes: a 0-dim tensor of one is no integer index (a floating
# one raises, a boolean one is a mask that adds a dimension).
NON_INTEGER_DTYPES = frozenset({"float", "float16", "float32", "float64", "half", "double", "bfloat16",
                                "complex64", "complex128", "cfloat", "cdouble", "bool",
                                "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"})
# Factories whose result, without `dtype=`, has the default floating dtype (`torch.full`'s
# follows its fill value, `torch.arange`'s its arguments: not these).
# `torch.fft.fftfreq(n, d, device=...)`, `torch.fft.rfftfreq(...)`: the fft submodule's
# factories, named with it: 1-D, of the default floating dtype, placed by `device=`.
FFT_FACTORIES = frozenset({"fft.fftfreq", "fft.rfftfreq"})
FLOAT_DEFAULT_FACTORIES = frozenset({"empty", "zeros", "ones", "rand", "randn", "empty_strided", "eye",
                                     "linspace", "logspace"}) | FFT_FACTORIES


def dtype_integer(dtype: Optional[str]) -> Optional[bool]:
    """What `dtype=<dotted name>` says of `Value.integer`: True for an integer dtype, None
    (`values.NON_INTEGER`) for a floating or boolean one, False (unknown) for anything else (a
    variable, `x.dtype`)."""
    last = (dtype or "").split(".")[-1]
    if last in INTEGER_DTYPES:
        return True
    return None if last in NON_INTEGER_DTYPES else False


def concatenated_rank(ranks: Iterable[Optional[int]]) -> Optional[int]:
    """The rank of `torch.cat((a, b, ...))` whose inputs have `ranks` (None: not known).

    PyTorch requires every input to have the result's number of dimensions, but for a legacy
    empty 1-D tensor (shape `(0,)`), which it skips, and raises on a 0-dim one.  So a rank of 2
    or more that one input is known to have is the result's, whatever the others are (one of
    rank 1, or not known, may be such an empty tensor; two different such ranks raise); where
    no input has one, only ranks all known and equal say the result's.
    """
    ranks = list(ranks)
    wide = {r for r in ranks if r is not None and r >= 2}
    if wide:
        return wide.pop() if len(wide) == 1 else None
    known = set(ranks)
    return known.pop() if len(known) == 1 and None not in known else None


# `torch.fft.<f>(x, ...)`: a tensor where `x` is, of its rank (the transformed dimensions change
# size only); complex or floating, but `fftshift` / `ifftshift`, which roll `x` (its dtype).
FFT_FUNCTIONS = frozenset({
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2",
    "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftshift", "ifftshift",
})
# `torch.linalg.<f>(x, ord, dim, keepdim)`: a norm where `x` is, 0-dim without `dim`, one
# dimension fewer along one `dim` (as `sum`).
LINALG_NORMS = frozenset({"vector_norm", "norm"})


def matmul_rank(left: Optional[int], right: Optional[int]) -> Optional[int]:
    """The rank of `a @ b` (`torch.matmul`) of operands of ranks `left` and `right`: a vector
    contracted with a vector is 0-dim, with a matrix (or a batch of them) loses the vector's
    dimension, two matrices (or batches, broadcast) have the larger rank; None where a rank is
    not known, or is 0 (matmul raises on a 0-dim operand)."""
    if left is None or right is None or left == 0 or right == 0:
        return None
    if left == 1 and right == 1:
        return 0
    if left == 1 or right == 1:
        return max(left, right) - 1
    return max(left, right)


def advanced_index_dims(rank: Optional[int], integer: Optional[bool]) -> Optional[Tuple[int, int]]:
    """How a tensor index of `rank` dimensions acts in `x[..., idx, ...]` (advanced indexing):
    (dimensions of `x` it consumes, dimensions of the broadcast index it stands for), or None
    where that is not known.  An integer index consumes one dimension and stands for its own
    shape; a boolean mask consumes as many dimensions as it has and stands for one (the count
    of its true elements), so a 1-D index acts the same whatever its dtype; a floating index
    raises, so a known non-integer one that runs is a mask.  `integer` is `Value.integer`
    (True, False unknown, None floating or boolean).  0-dim indices are not advanced ones
    (`expressions.index_effect` reads an integer one as an int; a boolean one adds a
    dimension)."""
    if rank is None or rank < 1:
        return None
    if integer:
        return 1, rank
    if rank == 1:
        return 1, 1
    return (rank, 1) if integer is None else None


def advanced_indexed_rank(rank: int, removed: int, added: int, advanced: Sequence[Tuple[int, int]]) -> Optional[int]:
    """The rank of `x[...]` where `x` has `rank` dimensions, `removed` positions are integers
    (each selects, one dimension less), `added` are `None` (one more), and `advanced` lists
    each tensor or list index as `advanced_index_dims` gives it.  PyTorch selects the
    integers first and broadcasts the advanced indices together: they replace the dimensions
    they consume by the broadcast shape, whose rank is the largest of theirs (numpy's rule,
    which puts those dimensions first or in place, and never changes how many there are).
    None where more is consumed than `x` has (it raises)."""
    consumed = sum(c for c, _ in advanced)
    out = rank - removed - consumed + added + (max(b for _, b in advanced) if advanced else 0)
    return out if rank - removed - consumed >= 0 and out >= 0 else None


def stacked_rank(ranks: Iterable[Optional[int]]) -> Optional[int]:
    """The rank of `torch.stack((a, b, ...))` whose inputs have `ranks` (None: not known): one
    more than the rank any input is known to have, since PyTorch requires every input to have
    the same shape (no legacy exception, unlike `torch.cat`); None where none is known, or two
    known ranks differ (it raises)."""
    known = {r for r in ranks if r is not None}
    return known.pop() + 1 if len(known) == 1 else None
