"""How an expression maps to an abstract :class:`Value`, given what is known about names.

Every function here is pure: it reads the expression and a :class:`Facts` view of the scope
and returns a value.  The tables at the top are the PyTorch facts the inference rests on.
"""
from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass, field, replace
from typing import Callable, Container, Dict, FrozenSet, List, Mapping, MutableMapping, Optional, Protocol, Sequence, Tuple, Union

import libcst as cst

from lint_h2d.cst_children import every_param
from lint_h2d.findings import EvidenceKind, EvidenceStep
from lint_h2d.inference.gpu_mode import gpu_mode, one_line
from lint_h2d.inference.memory import annotate as annotate_memory
from lint_h2d.inference.names import layer
from lint_h2d.inference.resolved import (host_by_default, INT_ENUM, NN_CONTAINERS, NN_RANK_KEEPING, NN_RANK_PLUS_ONE, NN_TENSOR_MODULES,
                                         Resolved, compute_logits_message, module_step_message, output_field_message,
                                         LOADER_METHODS, PRETRAINED, pretrained_loader, pretrained_step_message,
                                         through_message, names_model, named_model_message)
from lint_h2d.inference.numpy_values import (assignment_result, numpy_dtype_integer, numpy_element, numpy_function,
                                             numpy_scalar_index, position_tuple)
from lint_h2d.inference.summary import ANNOTATION_QUALIFIERS, CONCATENATIONS, DISTRIBUTED_INTS, NN_TENSOR_WRAPPERS, PROGRESS_BARS, SCALAR_BUILTINS, place_term
from lint_h2d.inference.torch_api import (advanced_index_dims, advanced_indexed_rank, ALL_FACTORIES, concatenated_rank, FFT_FACTORIES, matmul_rank, FFT_FUNCTIONS, LINALG_NORMS, DATA_FACTORIES, dtype_integer, FLOAT_DEFAULT_FACTORIES, FUNCTIONAL_DTYPE_KEEPING, FUNCTIONAL_RANK_ADDING, FUNCTIONAL_RANK_KEEPING, INDEX_OPS, IndexOp, LEGACY_TENSOR_TYPES, LIKE_FACTORIES, NEW_METHODS, NONZERO_OPS, ONE_D_FACTORIES, PAIR_FIELDS, SAME_DEVICE_FUNCTIONS, SAME_DEVICE_METHODS, SCALAR_METHODS, SCALAR_WITH_ARG_METHODS, SIZE_FACTORIES, SPLIT_OPS, stacked_rank, TORCH_DTYPE_NAMES, VIEW_METHODS)
from lint_h2d.inference.values import (enum_step_message, module_output_items, sunder, is_tokenized, rests_on, tokenized, TOKENIZED_STEP, concatenation_source, meshgrid_result, returned_through, cpu_by_default, entry, forward_input_only, is_json_data, join_all, json_data, JSON_STEP, EMPTY_DICT, MODULE_DEVICE_NOTE, MODULE_TENSOR_STEP, NON_INTEGER, NONE, OTHER, SCALAR, UNKNOWN, Kind, LocalStep, Origin, Value,
                                       join, module_tensor, ordered_number,
                                       config_field, config_value, CONFIG_STEP, from_config, host_object, names_config, nothing_known,
                                       plain_number)

# A `torch.Size` (or any `shape` / `size()` nothing else tells about): a tuple of Python ints.
SIZE_TUPLE = Value(Kind.OTHER, element=SCALAR)
SCALAR_FOLDS = frozenset({"min", "max", "sum"})
CONTAINER_BUILTINS = frozenset(
    {"list", "dict", "tuple", "set", "frozenset", "range", "sorted", "defaultdict",
     "OrderedDict", "deque", "Counter", "str", "bytes", "bytearray", "enumerate", "zip"}
)
NUMPY_MODULES = frozenset({"np", "numpy"})
CPU_SUFFIXES = ("_cpu", "_host")
# `x_cpu` beside `x`: the host half of a CPU/device pair (`usage.DeviceNamed.sibling`).
CPU_SIBLING = "_cpu"
# The evidence of a parameter annotated `torch.device` that no call site places: an explicit
# device in serving code is the accelerator (as any `device=` not provably the CPU).
ANNOTATED_DEVICE_STEP = ("`{}` is annotated `torch.device` and no call in the project says where it points: "
                         "taken to be the accelerator")
NUMPY_SUFFIXES = ("_np", "_numpy")


class DeviceNamedTable(Protocol):
    """`usage.DeviceNamed` as the walk asks it (usage.py imports this module)."""

    def get(self, name: str) -> Optional[cst.Call]: ...

    def sibling(self, name: str) -> Optional[cst.Name]: ...


class SliceBoundsTable(Protocol):
    """`usage.SliceBounds` as the walk asks it."""

    def find(self, node: cst.BaseExpression) -> Optional[cst.Subscript]: ...


@dataclass(frozen=True)
class Facts:
    """What the enclosing scope knows; the walker in `scope.py` provides it."""

    names: Mapping[str, Value] = field(default_factory=dict)
    self_attributes: Mapping[str, Value] = field(default_factory=dict)
    class_fields: Mapping[str, FrozenSet[str]] = field(default_factory=dict)
    # Field names that have a `_cpu` sibling in some class of the checked tree.
    device_fields: FrozenSet[str] = frozenset()
    torch_names: FrozenSet[str] = frozenset({"torch"})
    numpy_names: FrozenSet[str] = frozenset({"np", "numpy"})
    self_name: Optional[str] = None
    # Module-level functions annotated `-> int | float | bool`.
    scalar_functions: FrozenSet[str] = frozenset()
    # Facts resolved across the project (other classes' fields, returns, call sites).
    project: Resolved = field(default_factory=Resolved)
    # The class whose method is being walked (its fields are in `project` too).
    self_class: Optional[str] = None
    # `device-hints` / `cpu-hints`: name or attribute globs the project asserts.
    device_hints: Tuple[str, ...] = ()
    cpu_hints: Tuple[str, ...] = ()
    # Names bound to `torch.nn` (`import torch.nn as nn`, `from torch import nn`).
    nn_names: FrozenSet[str] = frozenset()
    # The module imports vLLM: its sampling hooks' logits are the runner's device logits.
    vllm: bool = False
    # The `with torch.device(...)` (an accelerator) the code is lexically inside, as the step
    # that names it, or None: a factory without `device=` allocates on the context's device.
    # An `EvidenceStep` when the context is elsewhere: `__init__` of a class the project (or
    # vLLM's model loader) constructs under one (`Resolved.built_on_device`).
    default_device: Optional[Union[LocalStep, EvidenceStep]] = None
    # A classmethod's first parameter (`cls`): the class itself, so `cls.m(...)` is what the
    # class's method `m` returns, as `self.m(...)` is (its instance fields are not on it).
    cls_name: Optional[str] = None
    # Names of the function being walked, each bound once there, that it passes to `range()`
    # (`usage.RangeBounds`): ints wherever the call runs, so a factory sized by one alone
    # (`torch.zeros(vocab)` with `for i in range(start, vocab)`) is 1-D.
    range_ints: Container[str] = frozenset()
    # The checked file's path (as given), for the module a relative import names.
    path: str = ""
    # Names only `import random` / `import bisect` bind (`scope.stdlib_number_modules`).
    stdlib_names: FrozenSet[str] = frozenset()
    # Names bound to `torch.nn.functional` (`import torch.nn.functional as F`,
    # `scope.functional_aliases`): `F.softmax(x)` keeps `x`'s place and rank.
    functional_names: FrozenSet[str] = frozenset()
    # In a method of a dataset class (`scope.is_dataset_class`): a `DataLoader` runs it in host
    # processes, on samples read from storage, so a tensor nothing places there is no device
    # tensor, and `device=x.device` / `x.new_zeros(n)` of one is not read as the accelerator.
    data_loading: bool = False
    # The names of the function being walked whose `.device` it passes as a place
    # (`usage.DeviceNamed`): a tensor of unknown place bound to one is read as on the
    # accelerator, by the convention that makes `device=x.device` the accelerator.
    device_named: Optional[DeviceNamedTable] = None
    # The expressions the function uses as a slice's start or stop (`usage.SliceBounds`): the
    # same expression alone as an index is an integer, by convention (`slice_bound_index`).
    slice_bounds: Optional[SliceBoundsTable] = None
    # How the module spells scipy's `linear_sum_assignment` (`from scipy.optimize import
    # linear_sum_assignment`, `scipy.optimize.linear_sum_assignment`): two 1-D integer arrays.
    assignment_solvers: FrozenSet[str] = frozenset()
    # How the module spells scipy.sparse's `issparse` and `isspmatrix*` (`scope.sparse_checks`):
    # a name they hold true for is a scipy matrix there, not a tensor.
    sparse_checks: FrozenSet[str] = frozenset()
    # Names bound to `torch.distributed` (`scope.distributed_names`): `dist.get_rank()` is an int.
    distributed_names: FrozenSet[str] = frozenset()
    # The module-level names an import binds to a module (`import pkg.consts as C`,
    # `from pkg import consts`: `scope.module_imports`), by spelling, to its dotted name:
    # `C.SOS_ID` reads the project module's constant as `from pkg.consts import SOS_ID` does.
    module_imports: Mapping[str, str] = field(default_factory=dict)
    # The fields of a class of the module that hold an accelerator switch
    # (`scope.ModuleWalker.gpu_flag_fields`, `gpu_mode.gpu_flag_fields`), asked by class name.
    gpu_flag_fields: Callable[[Optional[str]], FrozenSet[str]] = lambda cls: frozenset()
    # Names a module-level `from torch import zeros` (or `... as z`) binds, by spelling, to the
    # function of `torch` they name (`scope.torch_function_aliases`): `zeros(n)` is `torch.zeros(n)`.
    torch_functions: Mapping[str, str] = field(default_factory=dict)
    # In a method that building an instance runs (`__init__`, a method it calls on `self` or
    # hands to `self.apply`: `scope._run_at_construction`) of a class the project builds under
    # no device context: the fields hold what the constructor made, before any move of the
    # module, so `device=self.w.device` of a field tensor of unknown place names no accelerator.
    constructing: bool = False

    def with_names(self, names: Mapping[str, Value]) -> "Facts":
        return replace(self, names=names)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def last_name(node: cst.BaseExpression) -> Optional[str]:
    """The name a Name or an attribute is read by (`model` of `model`, `seq_lens` of
    `self.meta.seq_lens`), whatever the receiver; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def literal_number(node: cst.BaseExpression) -> Optional[complex]:
    """The value of a numeric literal, with an optional unary sign; None otherwise."""
    sign = 1
    while isinstance(node, cst.UnaryOperation) and isinstance(
        node.operator, (cst.Minus, cst.Plus)
    ):
        if isinstance(node.operator, cst.Minus):
            sign = -sign
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        value = ast.literal_eval(node.value)
        return sign * value  # type: ignore[no-any-return]
    return None


def literal_int(node: cst.BaseExpression) -> Optional[int]:
    sign = 1
    while isinstance(node, cst.UnaryOperation) and isinstance(
        node.operator, (cst.Minus, cst.Plus)
    ):
        if isinstance(node.operator, cst.Minus):
            sign = -sign
        node = node.expression
    if isinstance(node, cst.Integer):
        return sign * int(ast.literal_eval(node.value))
    return None


def is_bool_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("True", "False")


def is_literal_scalar(node: cst.BaseExpression) -> bool:
    """Numeric literal (optionally signed) or True/False: its value is known without running."""
    return literal_number(node) is not None or is_bool_literal(node)


def _string_value(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, SyntaxError):
            return None
        return value if isinstance(value, str) else None
    return None


def _arg(call: cst.Call, index: int, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if index < len(positional):
        return positional[index].value
    return None


def _keyword(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return None


def place_of(node: cst.BaseExpression, facts: Facts) -> Kind:
    """Where a device specification points: CPU_PLACE, DEVICE_PLACE, or UNKNOWN."""
    text = _string_value(node)
    if text is not None:
        kind = text.split(":")[0]
        if kind == "meta":
            return Kind.UNKNOWN  # shapes only: no memory, nothing is ever copied
        return Kind.CPU_PLACE if kind == "cpu" else Kind.DEVICE_PLACE
    if isinstance(node, cst.Name) and node.value == "None":
        return Kind.CPU_PLACE  # the default device
    if isinstance(node, cst.Call) and _is_torch_attr(node.func, facts, "device"):
        first = _arg(node, 0, "type")
        return place_of(first, facts) if first is not None else Kind.UNKNOWN
    value = infer(node, facts)
    if value.kind in (Kind.CPU_PLACE, Kind.DEVICE_PLACE):
        return value.kind
    return Kind.UNKNOWN


def _device_kwarg_kind(call: cst.Call, facts: Facts) -> Optional[Kind]:
    """Kind of a factory result from its `device=`/`pin_memory=`; None when neither is given."""
    pin = _keyword(call, "pin_memory")
    if pin is not None and isinstance(pin, cst.Name) and pin.value == "True":
        return Kind.CPU
    device = _keyword(call, "device")
    if device is None:
        return None
    if is_meta(device, facts):
        return Kind.TENSOR  # a meta tensor: setitem on it copies nothing
    if place_of(device, facts) == Kind.CPU_PLACE:
        return Kind.CPU
    if isinstance(device, (cst.Name, cst.Attribute)) and cpu_by_default(infer(device, facts)):
        # `def f(n, device=None)`, or a field that keeps such a parameter
        # (`self.storage_device`): on the CPU unless a caller says otherwise.
        return Kind.TENSOR
    source = _tensor_of_device(device, facts)
    if source is not None:
        # `device=x.device`: where `x` is.  A tensor (or a parameter) with no evidence of its
        # place is taken to be on the accelerator, as any explicit device= is: in serving code
        # that is where such tensors live (vLLM's MiniMax builder allocated `cu_seqlens_k` on
        # `kv_lens.device`), also in a function nothing in the project calls (a library's API).
        if source.kind not in (Kind.CPU, Kind.DEVICE) and (facts.data_loading or built_field(source, facts)
                                                           or host_by_default(source)):
            return Kind.TENSOR
        return Kind.CPU if source.kind == Kind.CPU else Kind.DEVICE
    # Any other device= that is not provably the CPU is an explicit request for an accelerator.
    return Kind.DEVICE


def is_device_context(node: cst.BaseExpression, facts: Facts) -> bool:
    """`torch.device(d)` used as a context manager with `d` an accelerator (not the CPU, not
    `meta`): PyTorch's `DeviceContext` then fills `device=` of every factory call
    (`torch.zeros`, `torch.tensor`, ...) that leaves it out.  `torch.cuda.device(i)` is not
    one: it picks the current GPU, factories still allocate on the CPU.  A name bound to
    `torch.device(d)` counts when the walk knows it as an accelerator place."""
    if isinstance(node, cst.Call):
        if not is_torch_device_call(node, facts):
            return False
        # As for `device=`: a spec that is not provably the CPU asks for an accelerator.
        first = _arg(node, 0, "type")
        return first is not None and not is_meta(first, facts) and place_of(first, facts) != Kind.CPU_PLACE
    if isinstance(node, cst.Name):
        value = infer(node, facts)
        return value.kind == Kind.DEVICE_PLACE or value.kind == Kind.UNKNOWN and rests_on(
            value.evidence, TORCH_DEVICE_STEP)
    return False


# How a `torch.device(x)` whose `x` may be anything but the CPU or `meta` is remembered.
TORCH_DEVICE_STEP = "a `torch.device(...)` that is not provably the CPU"


def is_torch_device_call(node: cst.BaseExpression, facts: Facts) -> bool:
    """`torch.device(...)` (any place): as a context, the default device of factories."""
    return isinstance(node, cst.Call) and _is_torch_attr(node.func, facts, "device")


def is_meta(node: cst.BaseExpression, facts: Facts) -> bool:
    """`"meta"` or `torch.device("meta")`: PyTorch's device of shapes without storage."""
    if isinstance(node, cst.Call) and _is_torch_attr(node.func, facts, "device"):
        first = _arg(node, 0, "type")
        return first is not None and is_meta(first, facts)
    text = _string_value(node)
    return text is not None and text.split(":")[0] == "meta"


def built_field(value: Value, facts: Facts) -> bool:
    """A field of `self` read in a method that building its class runs (`Facts.constructing`):
    where the constructor made it, before anything moved the module, which nothing says."""
    return facts.constructing and value.origin == Origin.SELF


def _tensor_of_device(device: cst.BaseExpression, facts: Facts) -> Optional[Value]:
    """The tensor whose `.device` a `device=` names, when it is a tensor or a parameter of
    unknown kind (not `self.device`, not a typed object's device attribute)."""
    if not (isinstance(device, cst.Attribute) and device.attr.value == "device"):
        return None
    base_node = device.value
    if isinstance(base_node, cst.Name) and base_node.value == facts.self_name:
        return None
    # Read without `Facts.device_named`: this very call is what that convention rests on.
    base = infer(base_node, replace(facts, device_named=None) if facts.device_named is not None else facts)
    if base.kind.is_tensor:
        return base
    if base.kind == Kind.UNKNOWN and base.origin == Origin.PARAM and base.path == dotted_name(base_node) \
            and isinstance(base_node, cst.Name):
        return base
    return None


def _is_torch_attr(func: cst.BaseExpression, facts: Facts, name: Optional[str] = None) -> bool:
    """`func` is `torch.<name>` (any attribute of `torch` where `name` is None), or, where `name`
    is given, a bare name `from torch import <name>` binds (`Facts.torch_functions`)."""
    if name is not None and isinstance(func, cst.Name):
        return facts.torch_functions.get(func.value) == name and _imported_name(func.value, facts)
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value in facts.torch_names
        and (name is None or func.attr.value == name)
    )


def _is_dtype(node: cst.BaseExpression, facts: Facts) -> bool:
    if _is_torch_attr(node, facts) and isinstance(node, cst.Attribute):
        return node.attr.value in TORCH_DTYPE_NAMES
    name = dotted_name(node)
    return name is not None and name.split(".")[-1].endswith("dtype")


def _sequence_length(node: cst.BaseExpression, facts: Facts) -> Optional[int]:
    if isinstance(node, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return None
        return len(node.elements)
    value = infer(node, facts)
    if value.kind == Kind.OTHER:
        return value.length
    return None


def _rank_from_sizes(call: cst.Call, facts: Facts, skip_trailing: int = 0) -> Optional[int]:
    size = _keyword(call, "size")
    if size is not None:
        return _sequence_length(size, facts)
    positional = [a for a in call.args if a.keyword is None]
    if skip_trailing:
        positional = positional[: len(positional) - skip_trailing]
    if any(a.star for a in positional):
        return None
    if not positional:
        return None
    if len(positional) == 1:
        only = positional[0].value
        length = _sequence_length(only, facts)
        if length is not None:
            return length
        return 1 if _int_size(only, facts) else None
    # `zeros(*size: int)`: with several positional sizes each one is an int (a tuple among
    # them is a TypeError), whatever is known about its value.
    return len(positional)


# Operators no sequence defines (a tuple, a list, `torch.Size` have `+` and `*` only): what they
# give is a number, a tensor or an error, never a shape of several sizes.  `summary._size_rank`
# reads the same operators on CPython's tree.
_NUMBER_ONLY_OPERATORS = (cst.Subtract, cst.FloorDivide, cst.Modulo, cst.Power, cst.LeftShift,
                          cst.RightShift, cst.Divide)


def _int_size(node: cst.BaseExpression, facts: Facts) -> bool:
    """A size that is one Python int (a 1-D shape): a number, a name of the function the
    function passes to `range()` (`Facts.range_ints`; `range` raises on anything else, a
    tuple or a `torch.Size` included), or arithmetic that makes no sequence (`n - k // 2`,
    `n + 1` with a number: `_NUMBER_ONLY_OPERATORS`; a one-element integer tensor is a size too:
    whatever such a size is, when `torch.zeros(size)` does not raise it makes one dimension)."""
    if plain_number(infer(node, facts)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus, cst.BitInvert)):
        return True
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, _NUMBER_ONLY_OPERATORS):
            return True
        if isinstance(node.operator, cst.Add):  # a sequence plus a number raises
            return any(plain_number(infer(side, facts)) for side in (node.left, node.right))
    return isinstance(node, cst.Name) and node.value in facts.range_ints


def _data_rank(node: cst.BaseExpression, facts: "Facts") -> Optional[int]:
    """Rank of `torch.tensor(data)` from the nesting of the data's displays."""
    if is_literal_scalar(node) or plain_number(infer(node, facts)):
        return 0
    if isinstance(node, (cst.List, cst.Tuple)):
        if not node.elements:
            return 1
        inner = _data_rank(node.elements[0].value, facts)
        return None if inner is None else inner + 1
    if isinstance(node, cst.ListComp):
        inner = _data_rank(node.elt, facts)
        return None if inner is None else inner + 1
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        if isinstance(node.left, cst.List):  # `[0] * n`
            return _data_rank(node.left, facts)
    return None


def _factory(call: cst.Call, name: str, facts: Facts) -> Value:
    value = _factory_value(call, name, facts)
    integer = _factory_integer(call, name, value.integer)
    if value.kind == Kind.DEVICE and not value.evidence:
        device = _keyword(call, "device")
        source = _tensor_of_device(device, facts) if device is not None else None
        if source is not None and source.kind == Kind.DEVICE and not forward_input_only(source):
            value = replace(value, evidence=source.evidence).because(LocalStep(
                f"allocated on the device of a device tensor here (`torch.{name}(..., device=...)`)", call))
        else:
            module = _module_device(device, facts) if device is not None and source is None else None
            if module is not None and device is not None:
                value = value.because(LocalStep(
                    f"allocated on `{_callee_text(device)}` here (`torch.{name}(..., device=...)`): the device "
                    f"of an `nn.Module` (`{module}`), {MODULE_DEVICE_NOTE}", call, "convention"))
            elif device is not None:
                value = _placed_by(value, device, source, f"torch.{name}", call, facts)
            else:
                value = value.because(LocalStep(f"allocated on the device here (`torch.{name}(...)`)", call))
    return replace(value, integer=integer) if integer != value.integer else value


def _factory_integer(call: cst.Call, name: str, made: Optional[bool]) -> Optional[bool]:
    """`Value.integer` of `torch.<name>(...)`, where `made` is what the factory's value knows (a
    `*_like` factory's source's): `dtype=` decides where it names a dtype; else `randint`,
    `randperm` and int data (`torch.tensor([1, 2])`) give int64, float or bool data and the
    size factories (`torch.zeros(n)`) a floating or boolean dtype (`NON_INTEGER`)."""
    dtype = _keyword(call, "dtype")
    if dtype is not None:
        known = dtype_integer(dotted_name(dtype))
        return known if known is not False else made
    if made or name in ("randint", "randperm"):
        return True
    if name in DATA_FACTORIES:
        data = _arg(call, 0, "data")
        return True if _int_data(data) else NON_INTEGER if _float_or_bool_data(data) else made
    return NON_INTEGER if name in FLOAT_DEFAULT_FACTORIES else made


_LEGACY_INTEGER_TYPES = frozenset({"LongTensor", "IntTensor", "ShortTensor", "CharTensor"})


def _legacy_cuda_tensor(call: cst.Call, type_name: str, facts: Facts) -> Value:
    """`torch.cuda.LongTensor(n)`, `torch.cuda.FloatTensor(2, 3)`, `torch.cuda.IntTensor([1, 2])`:
    the legacy typed constructors of the CUDA module allocate on the current CUDA device.  The
    rank: the number of sizes where every argument is a Python int (`*sizes`), the nesting of a
    list or tuple display (the data); else open (a single tensor or sequence argument is data of
    any rank).  The integer types index like ints when 0-dim (`uint8` indexes as a mask: not one)."""
    rank: Optional[int] = None
    args = call.args
    if args and all(a.keyword is None and not a.star for a in args):
        only = args[0].value
        if len(args) == 1 and isinstance(only, (cst.List, cst.Tuple, cst.ListComp)):
            rank = _data_rank(only, facts)  # the data, as `torch.tensor(data)` reads it
        elif all(plain_number(infer(a.value, facts)) for a in args):
            rank = len(args)
    return Value(Kind.DEVICE, rank, Origin.LOCAL, integer=type_name in _LEGACY_INTEGER_TYPES).because(
        LocalStep(f"allocated on the current CUDA device here (`torch.cuda.{type_name}(...)`)", call))


def _placed_by(value: Value, device: cst.BaseExpression, source: Optional[Value], how: str, call: cst.Call,
               facts: Facts) -> Value:
    """`value` (a device tensor made by `how(..., device=<device>)`) with a step that says what
    `device=` names and why that is the accelerator, so that a reviewer need not open the file
    that sets it: a place the project proves (`self.current_device = torch.device("cuda")` in
    another file) brings its own steps; a string names itself; a tensor or a parameter that
    nothing places, and any other expression, is read as the accelerator because an explicit
    `device=` that is not provably the CPU is one in serving code (`_device_kwarg_kind`), and
    the step says that this is what it rests on."""
    shown = _callee_text(device) if not isinstance(device, cst.SimpleString) else device.value
    allocated = f"allocated on `{shown}` here (`{how}(..., device=...)`)"
    if source is not None and isinstance(device, cst.Attribute):
        base = _callee_text(device.value)
        return value.because(LocalStep(
            f"{allocated}: nothing in the project proves where `{base}` is, and a tensor's `.device` "
            f"passed as `device=` is taken to be the accelerator", call))
    place = infer(device, facts)
    if place.kind == Kind.DEVICE_PLACE and place.evidence:
        return replace(value, evidence=place.evidence).because(LocalStep(allocated, call))
    if place.kind == Kind.DEVICE_PLACE or isinstance(device, cst.SimpleString):
        return value.because(LocalStep(allocated, call))
    return value.because(LocalStep(
        f"{allocated}: nothing in the project proves where `{shown}` points, and a `device=` that is "
        f"not provably the CPU is taken to be the accelerator", call))


def _module_device(device: cst.BaseExpression, facts: Facts) -> Optional[str]:
    """The `nn.Module` class whose `device` a `device=` names (`self.device` in its methods,
    `model.device` of an instance), when nothing says where that `device` points: it is where
    the module's parameters are (`next(self.parameters()).device`, Lightning's and HF's
    `device`), the accelerator under the serving convention.  None for any other object and
    for a `device` the class assigns a place (read as that place, `place_of`)."""
    if not (isinstance(device, cst.Attribute) and device.attr.value == "device"):
        return None
    if infer(device, facts).kind in (Kind.CPU_PLACE, Kind.DEVICE_PLACE):
        return None
    base = device.value
    if isinstance(base, cst.Name) and base.value == facts.self_name and facts.self_class is not None:
        cls: Optional[str] = facts.self_class
    else:
        cls = infer(base, facts).type_name
    return cls if cls is not None and cls in facts.project.modules else None


def _int_data(node: Optional[cst.BaseExpression]) -> bool:
    """Data of int literals (`0`, `[1, 2]`, `((0, 1), (2, 3))`): `torch.tensor` infers int64 from
    Python ints (a bool gives torch.bool, a float the default float dtype)."""
    if node is None:
        return False
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(
            not isinstance(e, cst.StarredElement) and _int_data(e.value) for e in node.elements)
    return literal_int(node) is not None


def _float_or_bool_data(node: Optional[cst.BaseExpression]) -> bool:
    """Data of float or bool literals (`0.5`, `[1.0, -2.0]`, `[True, False]`): `torch.tensor`
    gives the default float dtype or torch.bool, neither an integer index."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(
            not isinstance(e, cst.StarredElement) and _float_or_bool_data(e.value) for e in node.elements)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Float) or node is not None and is_bool_literal(node)



def _factory_value(call: cst.Call, name: str, facts: Facts) -> Value:
    if name in LIKE_FACTORIES:
        source = infer(call.args[0].value, facts) if call.args else UNKNOWN
        explicit = _device_kwarg_kind(call, facts)
        kind = explicit if explicit is not None else (
            source.kind if source.kind.is_tensor else Kind.TENSOR
        )
        if explicit is None and kind == Kind.TENSOR and not built_field(source, facts) \
                and not facts.data_loading and not host_by_default(source) and call.args:
            # `torch.zeros_like(t)` is `t.new_zeros(t.shape)`: read as `_new_tensor` reads that,
            # the accelerator where nothing proves `t`'s place.
            return Value(Kind.DEVICE, source.rank, Origin.LOCAL, integer=source.integer,
                         evidence=source.evidence).because(
                _followed_device_step(_callee_text(call.args[0].value), f"torch.{name}", call))
        return Value(kind, source.rank, Origin.LOCAL, integer=source.integer,
                     evidence=source.evidence if explicit is None else ())
    kind = _device_kwarg_kind(call, facts) or Kind.CPU
    if _keyword(call, "device") is None and kind == Kind.CPU and facts.default_device is not None \
            and _keyword(call, "pin_memory") is None:
        # Inside `with torch.device(d):` a factory without `device=` allocates on `d`.
        return replace(_factory_value(call, name, replace(facts, default_device=None)),
                       kind=Kind.DEVICE).because(
            LocalStep(f"allocated without `device=` (`torch.{name}(...)`) here", call),
            facts.default_device)
    if name in DATA_FACTORIES:
        first = _arg(call, 0, "data")
        rank = _data_rank(first, facts) if first is not None else None
        if name == "as_tensor" or name == "asarray":
            # as_tensor of a tensor keeps its device unless device= is given
            source = infer(first, facts) if first is not None else UNKNOWN
            if source.kind.is_tensor and _keyword(call, "device") is None:
                return Value(source.kind, source.rank, Origin.LOCAL, integer=source.integer,
                             evidence=source.evidence)
            if source.kind.is_tensor or source.kind == Kind.NUMPY:
                rank = source.rank
        return Value(kind, rank, Origin.LOCAL)
    if name in ONE_D_FACTORIES or name in FFT_FACTORIES:
        return Value(kind, 1, Origin.LOCAL)
    if name == "eye":
        return Value(kind, 2, Origin.LOCAL)
    if name == "randint":
        size = _keyword(call, "size")
        if size is None:
            positional = [a.value for a in call.args if a.keyword is None]
            size = positional[-1] if positional else None
        rank = _sequence_length(size, facts) if size is not None else None
        return Value(kind, rank, Origin.LOCAL)
    if name == "full":
        first = _arg(call, 0, "size")
        rank = _sequence_length(first, facts) if first is not None else None
        if rank is None and first is not None and _int_size(first, facts):
            rank = 1
        return Value(kind, rank, Origin.LOCAL)
    if name == "empty_strided":
        first = _arg(call, 0, "size")
        return Value(kind, _sequence_length(first, facts) if first is not None else None, Origin.LOCAL)
    return Value(kind, _rank_from_sizes(call, facts), Origin.LOCAL)


def _converted_integer(integer: Optional[bool], call: cst.Call, facts: Facts) -> Optional[bool]:
    """`Value.integer` after `t.to(..., dtype)`: the dtype's where it names one (`torch.long`,
    `torch.float16`), else `t`'s."""
    dtype = _keyword(call, "dtype") or next(
        (a.value for a in call.args if a.keyword is None and _is_dtype(a.value, facts)), None)
    known = dtype_integer(dotted_name(dtype)) if dtype is not None else False
    return known if known is not False else integer


def _to_result(receiver: Value, call: cst.Call, facts: Facts) -> Value:
    """`t.to(...)`: device from the first device-ish argument; a dtype keeps the device."""
    device = _keyword(call, "device")
    candidates = [device] if device is not None else [
        a.value for a in call.args if a.keyword is None
    ][:1]
    keep = Value(receiver.kind if receiver.kind.is_tensor else Kind.TENSOR, receiver.rank,
                 receiver.origin, root=receiver.root, path=receiver.path,
                 integer=_converted_integer(receiver.integer, call, facts), evidence=receiver.evidence)
    if not candidates:
        return keep
    target = candidates[0]
    if _is_dtype(target, facts):
        return keep
    if is_meta(target, facts):
        return Value(Kind.TENSOR, receiver.rank, Origin.LOCAL, integer=receiver.integer)
    place = place_of(target, facts)
    source = _tensor_of_device(target, facts) if place == Kind.UNKNOWN else None
    if place == Kind.CPU_PLACE:
        kind = Kind.CPU
    elif place == Kind.DEVICE_PLACE:
        kind = Kind.DEVICE
    elif source is not None:
        # `.to(x.device)`: where `x` is (the accelerator for a tensor nothing tells about,
        # as for `device=x.device`, but a field read while its module is built).
        kind = Kind.CPU if source.kind == Kind.CPU else (
            Kind.TENSOR if source.kind != Kind.DEVICE and built_field(source, facts) else Kind.DEVICE)
    else:
        other = infer(target, facts)
        if other.kind.is_tensor:
            kind = other.kind
        else:
            kind = Kind.DEVICE if _names_a_device(target) else Kind.TENSOR
    # `.to` returns the tensor itself when nothing changes: ownership is kept.
    moved = Value(kind, receiver.rank, receiver.origin, root=receiver.root, path=receiver.path,
                  integer=receiver.integer)
    if kind == Kind.DEVICE:
        if receiver.kind == Kind.DEVICE and not forward_input_only(receiver):
            return replace(moved, evidence=receiver.evidence)
        return moved.because(LocalStep("moved to the device here (`.to(...)`)", call))
    return moved


def _names_a_device(node: cst.BaseExpression) -> bool:
    """`device`, `self.device`, `dev`, `target_device`: a name chosen for a device spec."""
    name = (dotted_name(node) or "").split(".")[-1]
    return "device" in name or name == "dev" or name.endswith("_dev")


def _class_reference(node: cst.BaseExpression, facts: Facts) -> Optional[str]:
    """The project class `node` names: `cls` in a classmethod, `type(self)` or
    `self.__class__` in a method (the method's class), or a project class's own name that
    nothing in the body rebinds.  None for anything else."""
    if isinstance(node, cst.Name):
        if facts.cls_name is not None and node.value == facts.cls_name:
            return facts.self_class
        bound = facts.names.get(node.value)
        if facts.project.knows_class(node.value) and (
                bound is None or (bound.kind == Kind.OTHER and bound.origin == Origin.GLOBAL)):
            return node.value  # defined or imported at module level, not rebound here
        return None
    if facts.self_name is None:
        return None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "type" \
            and "type" not in facts.names and len(node.args) == 1 \
            and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == facts.self_name:
        return facts.self_class
    if isinstance(node, cst.Attribute) and node.attr.value == "__class__" \
            and isinstance(node.value, cst.Name) and node.value.value == facts.self_name:
        return facts.self_class
    return None


def _is_super(node: cst.BaseExpression, facts: Facts) -> bool:
    """`super()` or `super(Cls, self)`, the builtin (not a name the module rebinds)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super" \
        and "super" not in facts.names


def _method(receiver_node: cst.BaseExpression, method: str, call: cst.Call, facts: Facts) -> Value:
    receiver = infer(receiver_node, facts)
    if isinstance(receiver_node, cst.Name) and facts.self_class is not None and receiver.kind == Kind.UNKNOWN \
            and receiver_node.value in (facts.self_name, facts.cls_name):
        # `self.make()`, `cls.make()` in a classmethod: what the class's own method returns
        # (resolved with the project).
        found = facts.project.method_return(facts.self_class, method)
        if found is None and receiver_node.value == facts.cls_name:
            return UNKNOWN  # `cls.attr(...)`: no field of an instance holds a module here
        if found is None:
            # `self.lm_head(h)`: a field holding a module (no method of that name).
            return _called_module(infer(call.func, facts), call.func, call, facts) or UNKNOWN
        return replace(found, origin=Origin.LOCAL)
    if _is_super(receiver_node, facts) and facts.self_class is not None:
        # `super().make()`: the method as the class's project bases have it (the first that
        # does, in the order the class lists them), resolved with the project.
        for base in facts.project.bases.get(facts.self_class, ()):
            found = facts.project.method_return(base, method)
            if found is not None:
                return replace(found, origin=Origin.LOCAL)
    if method in MODULE_SELF_METHODS and module_type(receiver, facts) is not None:
        return receiver  # `nn.Linear(...).to(device)`, `.eval()`: the module itself
    if method == "to" and is_tokenized(receiver) and receiver.element is not None:
        # `tokenizer(text, return_tensors="pt").to(device)`: `BatchEncoding.to` moves every
        # tensor it holds; the tokenizer's step stays first in their evidence.
        def move(held: Value) -> Value:
            moved = _to_result(held, call, facts)
            kept = moved.evidence[len(held.evidence):] if moved.evidence[:len(held.evidence)] == held.evidence \
                else moved.evidence
            return replace(moved, evidence=held.evidence + kept)
        return replace(receiver, element=move(receiver.element),
                       entries=tuple((k, move(v)) for k, v in receiver.entries or ()))
    if method in SCALAR_METHODS:
        return SCALAR
    if method in _INT_METHODS and receiver.kind in (Kind.OTHER, Kind.UNKNOWN) and receiver.type_name is None:
        return SCALAR
    if method in RDKIT_INT_METHODS and receiver.kind in (Kind.OTHER, Kind.UNKNOWN) and receiver.type_name is None:
        return SCALAR.because(LocalStep(f"`.{method}()` is RDKit's, which returns a Python int", call))
    if method in SCALAR_WITH_ARG_METHODS:
        # `x.size(0)`: a dimension; `x.size()`: a `torch.Size`, a tuple of them, so that
        # `_, n, k = logits.size()` binds numbers as `logits.size(2)` is one.
        return SCALAR if call.args else SIZE_TUPLE
    if receiver.kind == Kind.OTHER and receiver.type_name is None and not receiver.none \
            and (receiver.element is not None or receiver.key is not None):
        found = _container_method(receiver, method, call, facts)
        if found is not None:
            return found
    if method == "get" and 1 <= len(call.args) <= 2 and all(a.keyword is None and not a.star for a in call.args):
        key = string_key(call.args[0].value)
        if key is not None and config_field(key) and _reads_config(receiver_node, receiver):
            # `cfg.get("queue_size", 57600)`: a configuration's field read by key, a host value
            # as `cfg.queue_size` is (`values.config_value`), or the default.
            found = config_value(LocalStep(CONFIG_STEP, call, "convention"))
            return join(found, infer(call.args[1].value, facts)) if len(call.args) == 2 else found
    if method == "tolist":
        # A 1-D tensor's (or array's) `tolist()` is a list of Python numbers; a 2-D one's, a
        # list of such lists (`for r, c in pairs.tolist()` unpacks numbers), and so on.
        if (receiver.kind.is_tensor or receiver.kind == Kind.NUMPY) and receiver.rank is not None \
                and 1 <= receiver.rank <= 4:
            nested = SCALAR
            for _ in range(receiver.rank):
                nested = Value(Kind.OTHER, element=nested)
            return nested
        if receiver.kind.is_tensor and receiver.rank == 0:
            return SCALAR  # a 0-dim tensor's `tolist()` is its Python number
        return OTHER
    if method == "numpy":
        # The tensor's data: its shape and dtype (an integer tensor's elements are ints).
        return Value(Kind.NUMPY, receiver.rank, receiver.origin,
                     integer=receiver.integer if receiver.kind.is_tensor else False)
    if method == "cuda" and not call.args or method == "cuda" and receiver.kind.is_tensor:
        # `x.cuda()` is a tensor on the device whatever `x` was (a module returns itself, and
        # a module is not indexed by integers with a number as value).
        return Value(Kind.DEVICE, receiver.rank if receiver.kind.is_tensor else None,
                     Origin.LOCAL, integer=receiver.integer).because(
            LocalStep("moved to the device here (`.cuda()`)", call))
    if method == "to" and not receiver.kind.is_tensor and receiver.kind != Kind.NUMPY \
            and receiver.type_name is None:
        moved = _to_result(Value(Kind.TENSOR, origin=Origin.LOCAL), call, facts)
        return moved if moved.kind == Kind.DEVICE else UNKNOWN
    if (method in INDEX_OPS or method in NONZERO_OPS) and receiver.kind.is_tensor:
        # (values, indices), indices alone, or a reduced value: `INDEX_OPS`.
        found = _index_result(method, call, receiver, facts)
        if found is not None:
            return found
    if method in NEW_METHODS and receiver.kind == Kind.UNKNOWN and receiver.type_name is None:
        return _new_tensor(receiver, method, call, facts)  # only a tensor has `.new_zeros()`
    if not receiver.kind.is_tensor:
        if receiver.kind == Kind.NUMPY and method in ("nonzero", "argsort") and not call.args:
            found = numpy_function(method, receiver, 1, (), _numpy_step(method, call, method=True))
            if found is not None:
                return found
        if receiver.kind == Kind.NUMPY and method == "copy" and not call.args:
            return receiver  # the same shape and dtype
        if receiver.kind == Kind.NUMPY and method == "astype" and call.args and call.args[0].keyword is None:
            # The same shape, the dtype named (`astype(np.int64)`: its elements are ints).
            named = call.args[0].value
            dtype = named.evaluated_value if isinstance(named, cst.SimpleString) else dotted_name(named)
            return Value(Kind.NUMPY, receiver.rank, Origin.LOCAL,
                         integer=numpy_dtype_integer(dtype if isinstance(dtype, str) else None))
        if receiver.kind == Kind.NUMPY and method in ("copy", "reshape", "view", "astype"):
            return Value(Kind.NUMPY, None, Origin.LOCAL)
        if receiver.type_name is not None:
            found = facts.project.method_return(receiver.type_name, method)
            if found is not None:
                # How the object's class is known comes first (an annotation, the call sites).
                return found.because(*receiver.evidence) if found.kind == Kind.DEVICE else found
            if facts.project.knows_class(receiver.type_name):
                # `self.model.head(h)`: a field of a project class that holds a module.
                return _called_module(infer(call.func, facts), call.func, call, facts) or UNKNOWN
        return UNKNOWN
    if method in ("cpu", "pin_memory"):
        # `.cpu()` of a CPU tensor is the tensor itself.
        origin = receiver.origin if receiver.kind == Kind.CPU else Origin.LOCAL
        return Value(Kind.CPU, receiver.rank, origin, root=receiver.root, path=receiver.path)
    if method == "to":
        return _to_result(receiver, call, facts)
    if method.endswith("_") and not method.startswith("_"):
        return receiver  # in-place ops return self
    if method in VIEW_METHODS:
        viewed = receiver.with_rank(_view_rank(receiver, method, call, facts))
        if method == "squeeze" and viewed.rank is not None and viewed.kind == Kind.DEVICE:
            return viewed.because(_squeeze_step(receiver.rank, call))
        return viewed
    if method in SAME_DEVICE_METHODS:
        rank = receiver.rank if method in _RANK_KEEPING else None
        if method in _FULL_REDUCTIONS and not call.args:
            rank = 0  # `t.sum()`, `t.max()`: one element, 0-dim
        elif method in DIM_REDUCTIONS:
            rank = reduced_rank(receiver.rank, _arg(call, 0, "dim"), _arg(call, 1, "keepdim"), facts)
        elif method == "repeat":
            rank = _grown_rank(receiver.rank, call, facts)
        integer = _method_integer(method, receiver.integer)
        return Value(receiver.kind, rank, Origin.LOCAL, integer=integer, evidence=receiver.evidence)
    if method in NEW_METHODS:
        return _new_tensor(receiver, method, call, facts)
    if method == "unique" and receiver.kind.is_tensor:
        return _unique(receiver, call)
    if method in SPLIT_OPS:
        return _pieces(receiver, method)
    return UNKNOWN


def _pieces(source: Value, op: str) -> Value:
    """What `torch.split(x, ...)`, `x.chunk(n)`, `x.unbind(dim)` return: a tuple of tensors on
    `x`'s device, each with `x`'s rank (`unbind`: one less, each piece a slice along `dim`).
    The number of pieces is not known here, so the tuple knows only its element."""
    if not source.kind.is_tensor:
        return UNKNOWN
    rank = source.rank
    if op == "unbind":
        rank = rank - 1 if rank is not None and rank > 0 else None
    return Value(Kind.OTHER, origin=Origin.LOCAL, element=Value(
        source.kind, rank, Origin.LOCAL, integer=source.integer, evidence=source.evidence))


# `nn.Module` methods that return the module itself.
MODULE_SELF_METHODS = frozenset({"to", "cuda", "cpu", "half", "float", "bfloat16", "double", "eval",
                                 "train", "requires_grad_", "to_empty", "type"})


def _nn_layer(func: cst.Attribute, facts: Facts) -> Optional[str]:
    """`nn.Linear` / `torch.nn.Linear` (a class of `torch.nn`, by its capitalised name)."""
    attr = func.attr.value
    if not attr[:1].isupper():
        return None
    return attr if _names_torch_nn(func.value, facts) else None


def _names_torch_nn(node: cst.BaseExpression, facts: Facts) -> bool:
    """`node` is the `torch.nn` module: a name an import binds to it (`nn`, no local hiding it),
    or `torch.nn` spelled out."""
    if isinstance(node, cst.Name):
        return node.value in facts.nn_names and _module_binding(node.value, facts)
    return isinstance(node, cst.Attribute) and node.attr.value == "nn" and isinstance(node.value, cst.Name) \
        and node.value.value in facts.torch_names and node.value.value not in facts.names


def _functional(func: cst.Attribute, facts: Facts) -> Optional[str]:
    """`F.softmax` (`F` bound to `torch.nn.functional`), `torch.nn.functional.softmax`,
    `nn.functional.softmax`: the function's name; None for anything else."""
    base = func.value
    if isinstance(base, cst.Name):
        known = base.value in facts.functional_names and _module_binding(base.value, facts)
    else:
        known = isinstance(base, cst.Attribute) and base.attr.value == "functional" \
            and _names_torch_nn(base.value, facts)
    return func.attr.value if known else None


def _module_binding(name: str, facts: Facts) -> bool:
    """`name` still holds what the module's import bound (no local of that name hides it)."""
    bound = facts.names.get(name)
    return bound is None or (bound.kind == Kind.OTHER and bound.origin == Origin.GLOBAL)


def _functional_call(name: str, call: cst.Call, facts: Facts) -> Value:
    """`F.<name>(x, ...)`: a tensor where `x` is, of its rank (`FUNCTIONAL_RANK_KEEPING`: an
    activation, a dropout, a normalization, `pad`), or one more (`one_hot`, int64); not known
    for any other function (a loss, `linear`, `embedding`) or an input that is no tensor."""
    first = call.args[0] if call.args else None
    data = first.value if first is not None and first.keyword is None and not first.star else _keyword(call, "input")
    if data is None or (name not in FUNCTIONAL_RANK_KEEPING and name not in FUNCTIONAL_RANK_ADDING):
        return UNKNOWN
    source = infer(data, facts)
    if not source.kind.is_tensor:
        return UNKNOWN
    if name in FUNCTIONAL_RANK_ADDING:
        rank = source.rank + 1 if source.rank is not None else None
        return Value(source.kind, rank, Origin.LOCAL, integer=True, evidence=source.evidence)
    integer = source.integer if name in FUNCTIONAL_DTYPE_KEEPING else False
    return Value(source.kind, source.rank, Origin.LOCAL, integer=integer, evidence=source.evidence)


def _nn_module(layer: str, call: cst.Call, facts: Facts) -> Value:
    """An instance of a `torch.nn` class; a `ModuleList`/`ModuleDict` knows its modules."""
    value = Value(Kind.OTHER, origin=Origin.LOCAL, type_name=f"nn.{layer}")
    if layer in NN_CONTAINERS and call.args and call.args[0].keyword is None and not call.args[0].star:
        element = infer(call.args[0].value, facts).element
        if element is not None and module_type(element, facts) is not None:
            return replace(value, element=element, key=OTHER if layer == "ModuleDict" else None)
    return value


def module_type(value: Value, facts: Facts) -> Optional[str]:
    """The class of an `nn.Module` instance (`nn.Linear`, a project class deriving from
    `nn.Module`), or None."""
    name = value.type_name
    if value.kind != Kind.OTHER or name is None:
        return None
    if name.startswith(("nn.", PRETRAINED)) or name in facts.project.modules:
        return name
    return None


def _pretrained(receiver: cst.BaseExpression, method: str, facts: Facts) -> Optional[Value]:
    """`AutoModel.from_pretrained(name)`, `timm.create_model(name)`: a model a library loads, an
    `nn.Module` (`resolved.pretrained_loader`), where the receiver is no local and no project
    class (whose own `from_pretrained` the project resolves)."""
    dotted = dotted_name(receiver)
    if dotted is None or facts.project.knows_class(dotted.split(".")[-1]) \
            or not _module_binding(dotted.split(".")[0], facts):
        return None
    loaded = pretrained_loader(dotted, method)
    return Value(Kind.OTHER, origin=Origin.LOCAL, type_name=loaded) if loaded is not None else None


def _callee_text(func: cst.BaseExpression) -> str:
    name = dotted_name(func)
    if name is not None:
        return name
    if isinstance(func, cst.Subscript):
        return f"{dotted_name(func.value) or '...'}[...]"
    return "..."


def _called_module(callee: Value, func: cst.BaseExpression, call: cst.Call, facts: Facts) -> Optional[Value]:
    """What calling `callee` gives when it is an `nn.Module`: a tensor on the accelerator (a
    convention: serving code keeps a model's parameters there, and a layer computes where its
    parameters are).  A `torch.nn` layer's rank follows its input where the table knows it; a
    project module gives what its `forward` returns, where the project says."""
    cls = module_type(callee, facts)
    if cls is None:
        return _named_model_call(callee, func, call)
    shown = _callee_text(func)
    if cls.startswith(PRETRAINED):
        return Value(Kind.DEVICE, None, Origin.LOCAL).because(
            LocalStep(pretrained_step_message(shown, cls), call, "convention"))
    step = LocalStep(module_step_message(shown, cls), call, "convention")
    if cls.startswith("nn."):
        layer = cls[3:]
        if layer not in NN_TENSOR_MODULES:
            return UNKNOWN  # `nn.LSTM`, `nn.MultiheadAttention`: tuples
        rank: Optional[int] = None
        first = _arg(call, 0, "input")
        if first is not None and (layer in NN_RANK_KEEPING or layer in NN_RANK_PLUS_ONE):
            source = infer(first, facts)
            if source.kind.is_tensor and source.rank is not None:
                rank = source.rank + (1 if layer in NN_RANK_PLUS_ONE else 0)
        return Value(Kind.DEVICE, rank, Origin.LOCAL).because(step)
    forward = facts.project.module_forward(cls)
    if forward is not None and forward.kind == Kind.DEVICE:
        return replace(forward, origin=Origin.LOCAL, root=None, path=None).because(
            LocalStep(f"`{shown}(...)` runs `{cls}.forward`", call))
    if forward is not None and forward.kind not in (Kind.TENSOR, Kind.UNKNOWN):
        # a tuple (its tensors of no known place on the accelerator, as the module's), a number
        return replace(module_output_items(forward, step), origin=Origin.LOCAL, root=None, path=None)
    rank = forward.rank if forward is not None else None
    return Value(Kind.DEVICE, rank, Origin.LOCAL).because(step)


def _named_model_call(callee: Value, func: cst.BaseExpression, call: cst.Call) -> Optional[Value]:
    """`model(ids)`, `self.model(ids)`, `draft_model(x)` where nothing tells what the callable
    is (an unannotated parameter, a field set from one): a call of an `nn.Module` by its name
    (`resolved.names_model`), whose output is on the accelerator, of unknown rank."""
    if not nothing_known(callee):
        return None
    name = last_name(func)
    if name is None or not names_model(name):
        return None
    return Value(Kind.DEVICE, None, Origin.LOCAL).because(
        LocalStep(named_model_message(_callee_text(func)), call, "convention"))


def _container_method(receiver: Value, method: str, call: cst.Call, facts: Facts) -> Optional[Value]:
    """What the methods of a list or dict whose contents are known return (Python's own
    semantics): `d.values()`, `d.keys()`, `d.items()`, `xs.pop()`, `d.pop(k)`, `d.get(k)`,
    `d.setdefault(k, v)`, `xs.copy()`.  None for anything else (unknown)."""
    element = receiver.element
    key = receiver.key if receiver.key is not None and not receiver.key.none else None
    args = [a for a in call.args if a.keyword is None and not a.star]
    if len(args) != len(call.args):
        return None
    # `.values()` / `.items()` exist on a mapping only: a container of known elements that
    # answers them is a dict, whether or not its keys are known (a project field's dict display
    # and a list display read alike).
    mapping = receiver.key is not None or (receiver.kind == Kind.OTHER and receiver.items is None)
    if method == "values" and not args and mapping and element is not None:
        return Value(Kind.OTHER, element=element)
    if method == "keys" and not args and key is not None:
        return Value(Kind.OTHER, element=key)
    if method == "items" and not args and mapping and element is not None:
        return Value(Kind.OTHER, element=Value(Kind.OTHER, length=2, items=(key or UNKNOWN, element)))
    if method == "copy" and not args:
        return replace(receiver, origin=Origin.LOCAL)
    if element is None:
        return None
    if method in ("get", "pop", "setdefault") and args and receiver.entries is not None and is_json_data(receiver):
        # Parsed JSON with a key stored since (`cfg["mask"] = t`): that key reads what was stored.
        name = string_key(args[0].value)
        element = dict(receiver.entries).get(name, element) if name is not None else element
    if method == "pop" and (receiver.key is None and len(args) <= 1 or receiver.key is not None and len(args) == 1):
        return element  # `xs.pop()`, `xs.pop(0)`, `d.pop(k)`: an element (or it raises)
    if method in ("get", "pop", "setdefault") and mapping and len(args) == 2:
        # With a default: the element or the default (`d.get(k, 0)`); None adds nothing.  A
        # mapping whose keys nothing tells (`data: dict[str, float]`) too: a list has no `get`
        # and takes one argument to `pop`, so the call raises on anything but a mapping.
        return join(element, infer(args[1].value, facts))
    if method == "get" and mapping and len(args) == 1:
        return join(element, NONE)
    return None


def _new_tensor(receiver: Value, method: str, call: cst.Call, facts: Facts) -> Value:
    """`t.new_zeros(size)`: on `t`'s device (and of its dtype) unless `device=` says otherwise."""
    explicit = _device_kwarg_kind(call, facts)
    kind = explicit if explicit is not None else receiver.kind
    if method == "new_tensor":
        first = _arg(call, 0, "data")
        rank = _data_rank(first, facts) if first is not None else None
    elif method == "new_full":
        first = _arg(call, 0, "size")
        rank = _sequence_length(first, facts) if first is not None else None
    elif method == "new":
        rank = _legacy_new_rank(call, facts)
    else:
        rank = _rank_from_sizes(call, facts)
    dtype = _keyword(call, "dtype")
    integer = dtype_integer(dotted_name(dtype)) if dtype is not None else receiver.integer
    if explicit is None and kind == Kind.DEVICE:
        return Value(kind, rank, Origin.LOCAL, integer=integer, evidence=receiver.evidence).because(
            LocalStep(f"`.{method}()` of a device tensor: on its device", call))
    if explicit is None and kind in (Kind.TENSOR, Kind.UNKNOWN) and not built_field(receiver, facts) \
            and not facts.data_loading and not host_by_default(receiver):
        # `t.new_zeros(n)` is `torch.zeros(n, device=t.device, dtype=t.dtype)`: read as that
        # `device=` is (`_device_kwarg_kind`), the accelerator where nothing proves `t`'s place.
        shown = _callee_text(call.func.value) if isinstance(call.func, cst.Attribute) else "t"
        return Value(Kind.DEVICE, rank, Origin.LOCAL, integer=integer, evidence=receiver.evidence).because(
            _followed_device_step(shown, f".{method}", call))
    device = _keyword(call, "device")
    if kind == Kind.DEVICE and device is not None:
        source = _tensor_of_device(device, facts)
        if source is not None and source.kind == Kind.DEVICE and not forward_input_only(source):
            return Value(kind, rank, Origin.LOCAL, integer=integer, evidence=source.evidence).because(
                LocalStep(f"allocated on the device of a device tensor here (`.{method}(..., device=...)`)", call))
        return _placed_by(Value(kind, rank, Origin.LOCAL, integer=integer), device, source, f".{method}", call, facts)
    return Value(kind, rank, Origin.LOCAL, integer=integer)


def _followed_device_step(shown: str, how: str, call: cst.Call) -> LocalStep:
    """The step of `t.new_zeros(n)` / `torch.zeros_like(t)` (`how`: `.new_zeros`, `torch.zeros_like`)
    of a tensor `shown` nothing places: taken to be on the accelerator, as `device=t.device` is."""
    return LocalStep(f"allocated on `{shown}`'s device here (`{how}(...)`): nothing in the project proves "
                     f"where `{shown}` is, and a tensor's device that a new tensor follows is taken to be the "
                     f"accelerator, as `device={shown}.device` is", call)


def _unique(source: Value, call: cst.Call) -> Value:
    """`torch.unique(x)` / `x.unique()` without `dim=`: the sorted distinct elements of `x`,
    flattened, a 1-D tensor of `x`'s dtype on its device (iterating it yields 0-dim tensors).
    `return_inverse=True` / `return_counts=True` make it a tuple: the elements, then the
    inverse indices (int64, `x`'s shape), then the counts (int64, 1-D), each on `x`'s device.
    With `dim=`, a flag that is not a literal or more positional arguments: nothing known."""
    flags = {"return_inverse": False, "return_counts": False}
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "sorted":
            continue
        if arg.keyword.value not in flags or not is_bool_literal(arg.value):
            return UNKNOWN
        flags[arg.keyword.value] = isinstance(arg.value, cst.Name) and arg.value.value == "True"
    if not source.kind.is_tensor or sum(1 for a in call.args if a.keyword is None) > 1:
        return UNKNOWN
    values = Value(source.kind, 1, Origin.LOCAL, integer=source.integer, evidence=source.evidence)
    if not any(flags.values()):
        return values
    items = (values,) + (
        (Value(source.kind, source.rank, Origin.LOCAL, integer=True, evidence=source.evidence),)
        if flags["return_inverse"] else ()) + (
        (Value(source.kind, 1, Origin.LOCAL, integer=True, evidence=source.evidence),)
        if flags["return_counts"] else ())
    return Value(Kind.OTHER, length=len(items), items=items)


def _legacy_new_rank(call: cst.Call, facts: Facts) -> Optional[int]:
    """Rank of `t.new(...)`: several positional arguments are sizes (`t.new(n, m)` is 2-D; the
    legacy constructor takes nothing else after the first), one int is a length (`t.new(n)`,
    1-D), and a list or tuple display is data, as for `new_tensor` (`t.new((2, 3))` is the 1-D
    `tensor([2, 3])`, not a 2x3 tensor).  Anything else (a `torch.Size`, a tensor) is unknown."""
    positional = [a for a in call.args if a.keyword is None]
    if not positional or any(a.star for a in positional):
        return None
    if len(positional) > 1:
        return len(positional)
    only = positional[0].value
    if isinstance(only, (cst.List, cst.Tuple, cst.ListComp)):
        return _data_rank(only, facts)
    return 1 if _int_size(only, facts) else None


# Reductions that, called without arguments, reduce every dimension (a 0-dim result).
_FULL_REDUCTIONS = frozenset({"sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all"})
_INTEGER_RESULTS = frozenset({"int", "long", "short", "byte", "char", "argmax", "argmin", "argsort"})
# `mask.any()`, `t.all(dim=1)`: booleans (a 0-dim one indexes as a mask, not as an int).
_NON_INTEGER_RESULTS = frozenset({"float", "half", "bfloat16", "double", "bool", "any", "all"})

_RANK_KEEPING = frozenset(
    {"argsort", "index_select", "clone", "int", "long", "float", "half", "bfloat16", "double", "bool", "short", "byte",
     "char", "type", "type_as", "cumsum", "cumprod", "abs", "neg", "clamp", "clip", "add", "sub",
     "mul", "div", "masked_fill", "flip", "roll", "exp", "log", "sqrt", "pow", "eq", "ne", "lt",
     "le", "gt", "ge", "logical_not", "floor_divide", "remainder", "softmax", "log_softmax", "sigmoid",
     "nan_to_num", "tril", "triu", "gather"}
)


def _method_integer(method: str, receiver: Optional[bool]) -> Optional[bool]:
    """`Value.integer` of `t.<method>(...)` for `t`'s: the casts say; a method that keeps the
    shape keeps the dtype; a reduction is not known (`mask.sum()` of a bool mask is int64)."""
    if method in _INTEGER_RESULTS:
        return True
    if method in _NON_INTEGER_RESULTS:
        return NON_INTEGER
    if method in ("type", "type_as"):
        return receiver or False  # a dtype not read here: an integer `t` is taken to stay one, as before
    return receiver if method in _RANK_KEEPING else False


def _view_rank(receiver: Value, method: str, call: cst.Call, facts: Facts) -> Optional[int]:
    if method in ("view", "reshape"):
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) == 1:
            only = positional[0].value
            if _is_dtype(only, facts):
                return receiver.rank
            length = _sequence_length(only, facts)
            if length is not None:
                return length
            return 1 if plain_number(infer(only, facts)) else None
        return len(positional) if positional and not any(a.star for a in positional) else None
    if method == "flatten":
        return flattened_rank(receiver.rank, _arg(call, 0, "start_dim"), _arg(call, 1, "end_dim"))
    if method in ("narrow", "transpose", "t", "permute", "contiguous", "detach", "movedim",
                  "swapaxes", "as_strided", "view_as", "reshape_as", "expand_as"):
        return receiver.rank if method not in ("as_strided", "view_as", "reshape_as", "expand_as") else None
    if method == "select":
        return receiver.rank - 1 if receiver.rank is not None else None
    if method == "unsqueeze":
        return receiver.rank + 1 if receiver.rank is not None else None
    if method == "expand":
        return _grown_rank(receiver.rank, call, facts)
    if method == "squeeze":
        return squeezed_rank(receiver.rank, _arg(call, 0, "dim"), facts)
    return None


def _grown_rank(rank: Optional[int], call: cst.Call, facts: Facts) -> Optional[int]:
    """The rank of `x.repeat(*sizes)` / `x.expand(*sizes)`: as many dimensions as sizes
    (`repeat(bs, 1, 1)` of a 2-D tensor is 3-D); None where they are not known, or fewer than
    `x` has (PyTorch raises)."""
    sizes = _rank_from_sizes(call, facts)
    if sizes is None or rank is not None and sizes < rank:
        return None
    return sizes


def squeezed_rank(rank: Optional[int], dim: Optional[cst.BaseExpression], facts: Facts) -> Optional[int]:
    """The rank after `x.squeeze(dim)` / `torch.squeeze(x, dim)` with one int `dim`: one
    dimension fewer.  PyTorch leaves a dimension whose size is not 1 in place, but a call that
    names the dimension is written to drop it (`topk(1, dim=1)` then `squeeze(dim=1)`), and
    that is the rank the code goes on to index.  None without a dim (`squeeze()` drops every
    dimension of size 1, as many as the shape has: unknown), for a tuple of dims, or an input
    of unknown rank."""
    if rank is None or dim is None or not (literal_int(dim) is not None or plain_number(infer(dim, facts))):
        return None
    return max(rank - 1, 0)


def _squeeze_step(rank: Optional[int], call: cst.Call) -> LocalStep:
    """The evidence of a rank read off `squeeze(dim)` (`squeezed_rank`)."""
    return LocalStep(f"`{_callee_text(call.func)}(...)` names a dimension to drop: rank {rank} to "
                     f"{max((rank or 1) - 1, 0)} (code names one it knows is of size 1; PyTorch would "
                     "keep any other)", call)


_SCALAR_CALLS = frozenset({"distributed.get_rank", "distributed.get_world_size",
                           "cuda.current_device", "cuda.device_count", "get_tensor_model_parallel_rank",
                           "get_tensor_model_parallel_world_size"})


def _call(call: cst.Call, facts: Facts) -> Value:
    found = _known_call(call, facts)
    if found.kind == Kind.UNKNOWN and not found.evidence:
        return _tokenizer_call(call) or found
    return found


# Tokenizer methods that give the ids tensor itself with `return_tensors="pt"`, not a
# `BatchEncoding` (unless `return_dict=True`).
_TOKEN_TENSOR_METHODS = frozenset({"encode", "apply_chat_template"})


def _tokenizer_call(call: cst.Call) -> Optional[Value]:
    """A call nothing else tells about that passes `return_tensors="pt"`: the transformers
    convention of tokenizers, processors and feature extractors (`tokenizer(text, ...)`,
    `processor(images=..., ...)`, `tokenizer.pad(...)`), which allocate what they return on the
    CPU.  `tok.encode(...)` and `tok.apply_chat_template(...)` give the ids tensor itself (2-D
    for `encode`: one row), the others a `BatchEncoding` of CPU tensors (`values.tokenized`).
    `apply_chat_template(..., tokenize=False)` gives a string.  A `**kwargs` argument cannot
    pass a keyword the call names (Python raises), but may pass `return_dict` where it does not.
    None for any other call."""
    wanted = _keyword(call, "return_tensors")
    if wanted is None or _string_value(wanted) != "pt":
        return None
    step = LocalStep(TOKENIZED_STEP, call)
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    if method in _TOKEN_TENSOR_METHODS:
        tokenize = _keyword(call, "tokenize")
        if tokenize is not None and _bool_literal(tokenize) is False:
            return OTHER  # the chat template's text
        given = _keyword(call, "return_dict")
        as_dict = _bool_literal(given) if given is not None else \
            None if any(a.star == "**" for a in call.args) else False
        if as_dict is None:
            return None
        if not as_dict:
            return Value(Kind.CPU, 2 if method == "encode" else None, Origin.LOCAL, integer=True, evidence=(step,))
    return tokenized(step)


def _known_call(call: cst.Call, facts: Facts) -> Value:
    func = call.func
    dotted = dotted_name(func)
    if dotted is not None and dotted in facts.assignment_solvers \
            and _imported_name(dotted.split(".")[0], facts) and not any(a.star for a in call.args):
        return assignment_result(LocalStep(f"`{dotted}(...)` gives two 1-D integer arrays (row and column"
                                           " positions): an element indexes as an int", call))
    if dotted is not None and "." in dotted and dotted.split(".", 1)[1] in _SCALAR_CALLS \
            and dotted.split(".")[0] in facts.torch_names:
        return SCALAR  # `torch.distributed.get_rank()`: a Python int
    if dotted is not None and dotted.count(".") == 1 and dotted.split(".")[1] in DISTRIBUTED_INTS \
            and dotted.split(".")[0] in facts.distributed_names and _module_binding(dotted.split(".")[0], facts):
        return SCALAR  # `dist.get_rank()` after `import torch.distributed as dist`
    if isinstance(func, cst.Name):
        name = func.value
        imported = facts.torch_functions.get(name)
        if imported is not None and _imported_name(name, facts):
            return _torch_function(imported, call, facts)  # `zeros(n)` after `from torch import zeros`
        if name in ("abs", "round") and call.args and name not in facts.names:
            inner = infer(call.args[0].value, facts)
            if inner.kind.is_tensor:
                return inner  # `abs(t)`, `round(t)` of a tensor: a tensor (`Tensor.__abs__`)
        if name in SCALAR_BUILTINS:
            return SCALAR
        if name == "pow" and name not in facts.names and call.args and not any(a.star for a in call.args) \
                and all(infer(a.value, facts).kind == Kind.SCALAR for a in call.args):
            return SCALAR  # `pow(base, exp, mod)` of Python numbers: a Python number
        if name in SCALAR_FOLDS:
            # min(a, b) with a scalar among arguments that are not tensors: a scalar.
            kinds = [infer(a.value, facts).kind for a in call.args]
            if Kind.SCALAR in kinds and all(k in (Kind.SCALAR, Kind.UNKNOWN) for k in kinds) \
                    and not any(a.star for a in call.args):
                return SCALAR
            return SCALAR if _fold_of_numbers(call, facts) else UNKNOWN
        if name == "zip":
            return _zip(call, facts)
        if name == "range" and name not in facts.names:
            return Value(Kind.OTHER, element=SCALAR)
        if name in PROGRESS_BARS and _imported_name(name, facts):
            return _progress_bar(name, call, facts)
        if name in _SAME_ELEMENTS and name not in facts.names and call.args \
                and call.args[0].keyword is None and not call.args[0].star \
                and all(a.keyword is not None and a.keyword.value in ("key", "reverse") and name == "sorted"
                        for a in call.args[1:]):
            # `sorted(xs)`, `sorted(xs, key=len)`, `list(range(n))`: a list of what `xs` holds.
            element = element_of(infer(call.args[0].value, facts))
            return Value(Kind.OTHER, element=element) if element is not None else OTHER
        if name == "divmod" and name not in facts.names and len(call.args) == 2 \
                and all(infer(a.value, facts).kind == Kind.SCALAR for a in call.args):
            return Value(Kind.OTHER, length=2, items=(SCALAR, SCALAR))
        if name == "dict" and name not in facts.names and not call.args:
            return EMPTY_DICT  # `dict()`, as `{}`
        if name == "dict" and name not in facts.names and call.args \
                and all(a.keyword is not None and not a.star for a in call.args):
            # `dict(buf=t, n=3)`: the keyword names are its string keys.
            return keyed_dict([(a.keyword.value if a.keyword is not None else "", infer(a.value, facts))
                               for a in call.args])
        if name in CONTAINER_BUILTINS:
            return OTHER
        bound = facts.names.get(name)
        if bound is not None and bound.returns is not None:
            # A function defined in this body: what its `return`s give (`scope.ModuleWalker.returns_of`).
            return replace(bound.returns, origin=Origin.LOCAL, root=None, path=None)
        if name in facts.scalar_functions and (bound is None or bound.kind == Kind.OTHER):
            return SCALAR
        if bound is None or (bound.kind == Kind.OTHER and bound.origin == Origin.GLOBAL):
            return _project_call(name, name, call, facts)
        if bound is not None:
            return _called_module(bound, func, call, facts) or UNKNOWN  # `head(x)`
        return UNKNOWN
    if not isinstance(func, cst.Attribute):
        if isinstance(func, cst.Subscript):
            # `self.heads[i](x)`: a module of an `nn.ModuleList`.
            return _called_module(infer(func, facts), func, call, facts) or UNKNOWN
        return UNKNOWN
    method = func.attr.value
    if method == "fromkeys" and dotted == "dict" + ".fromkeys" and "dict" not in facts.names and call.args \
            and not any(a.star or a.keyword is not None for a in call.args):
        # `dict.fromkeys(range(n))`: a dict whose keys are what the iterable yields.
        key = element_of(infer(call.args[0].value, facts))
        held = infer(call.args[1].value, facts) if len(call.args) > 1 else NONE
        return Value(Kind.OTHER, element=held, key=key if key is not None else UNKNOWN)
    functional = _functional(func, facts)
    if functional is not None:
        return _functional_call(functional, call, facts)
    submodule = _torch_submodule(func, facts)
    if submodule is not None:
        return _submodule_call(submodule, method, call, facts)
    layer_name = _nn_layer(func, facts)
    if layer_name in NN_TENSOR_WRAPPERS:
        # `nn.Buffer(t)` / `nn.Parameter(t)`: the tensor itself, where it is (a module's
        # buffers and parameters then follow the module's `.to()`, its plain tensors do not).
        data = _arg(call, 0, "data")
        return module_tensor(infer(data, facts), LocalStep(MODULE_TENSOR_STEP, call)) if data is not None else UNKNOWN
    if layer_name is not None:
        return _nn_module(layer_name, call, facts)
    if method == "compute_logits" and facts.vllm and isinstance(func.value, cst.Call) \
            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super" \
            and "super" not in facts.names:
        # A vLLM model's parent `compute_logits`: the language-model head's 2-D device logits.
        return Value(Kind.DEVICE, 2, Origin.LOCAL).because(LocalStep(compute_logits_message(), call, "convention"))
    if method in LEGACY_TENSOR_TYPES and isinstance(func.value, cst.Attribute) and func.value.attr.value == "cuda" \
            and isinstance(func.value.value, cst.Name) and func.value.value.value in facts.torch_names \
            and func.value.value.value not in facts.names:
        return _legacy_cuda_tensor(call, method, facts)
    if method == "randint" and _is_numpy_random(func.value, facts):
        found = _numpy_randint(call)
        if found is not None:
            return found
    if isinstance(func.value, cst.Name):
        module = func.value.value
        if module in facts.torch_names and module not in facts.names:
            return _torch_function(method, call, facts)
        if module in facts.numpy_names and module not in facts.names:
            return _numpy_call(method, call, facts) or Value(Kind.NUMPY, None, Origin.LOCAL)
        if module == "math":
            return SCALAR
        if _stdlib_number(module, method, call, facts):
            return SCALAR  # `bisect.bisect_left(xs, x)`, `random.randint(a, b)`: a Python number
        if module == "json" and method in ("load", "loads") \
                and facts.names.get("json", Value(Kind.OTHER, origin=Origin.GLOBAL)).origin == Origin.GLOBAL:
            return json_data(LocalStep(JSON_STEP, call))
        bound = facts.names.get(module)
        if facts.project.knows_class(module) and (
                bound is None or (bound.kind == Kind.OTHER and bound.origin == Origin.GLOBAL)):
            return _project_call(f"{module}.{method}", f"{module}.{method}", call, facts)
    if method in LOADER_METHODS:
        loaded = _pretrained(func.value, method, facts)
        if loaded is not None:
            return loaded
    return _method(func.value, method, call, facts)


def _torch_function(method: str, call: cst.Call, facts: Facts) -> Value:
    """`torch.<method>(...)`, spelled through the module (`torch.zeros(n)`) or through a name a
    module-level `from torch import zeros` binds (`Facts.torch_functions`): the same function."""
    if method in ALL_FACTORIES:
        return _factory(call, method, facts)
    if method in LEGACY_TENSOR_TYPES and not any(a.keyword is not None for a in call.args):
        # `torch.LongTensor([1])`: the legacy typed constructor allocates on the CPU,
        # whatever device context it runs in; its rank as `torch.cuda.LongTensor`'s.
        return replace(_legacy_cuda_tensor(call, method, facts), kind=Kind.CPU, evidence=())
    if method == "from_numpy":
        first = call.args[0].value if call.args else None
        rank = infer(first, facts).rank if first is not None else None
        return Value(Kind.CPU, rank, Origin.LOCAL)
    if method == "device":
        first = _arg(call, 0, "type")
        if first is None:
            return UNKNOWN
        place = place_of(first, facts)
        if place == Kind.UNKNOWN and not is_meta(first, facts):
            # Not provably the CPU: `with` this name is a device context (as `device=`).
            return Value(place, evidence=(LocalStep(TORCH_DEVICE_STEP, call),))
        return Value(place)
    if method in INDEX_OPS or method in NONZERO_OPS or method in _SEARCH_OPS or method == "where":
        found = _index_result(method, call, None, facts)
        if found is not None:
            return found
    if method in SPLIT_OPS:
        head = call.args[0] if call.args else None
        first = head.value if head is not None and head.keyword is None and not head.star \
            else _keyword(call, "tensor" if method == "split" else "input")
        return _pieces(infer(first, facts), method) if first is not None else UNKNOWN
    if method in SAME_DEVICE_FUNCTIONS:
        return _same_device_function(call, facts, method)
    if method == "meshgrid":
        return _meshgrid(call, facts)
    if method == "unique" and call.args and call.args[0].keyword is None and not call.args[0].star:
        return _unique(infer(call.args[0].value, facts), call)
    return UNKNOWN


def _fold_of_numbers(call: cst.Call, facts: Facts) -> bool:
    """`max(len(x) for x in xs)`, `min(lengths, default=0)`, `sum(sizes)`: with one iterable
    argument, `min`/`max` return one of its elements (or `default=`) and `sum` adds them to
    `start=` (0): a Python number when every element is one."""
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    if len(positional) != 1 or positional[0].star \
            or any(a.star or a.keyword is None or a.keyword.value not in ("key", "default", "start")
                   for a in keywords):
        return False
    element = element_of(infer(positional[0].value, facts))
    if element is None or element.kind != Kind.SCALAR:
        return False
    return all(infer(a.value, facts).kind == Kind.SCALAR for a in keywords
               if a.keyword is not None and a.keyword.value != "key")


_SAME_ELEMENTS = frozenset({"sorted", "reversed", "list", "tuple", "set", "frozenset"})
# `str.index`, `list.index`, `list.count`, `int.bit_length`: Python ints (no tensor has them).
_INT_METHODS = frozenset({"index", "count", "bit_length", "find", "rfind"})
# RDKit's molecule, atom and bond methods that return a Python int (an atom's index, a count,
# a charge): `RWMol.AddAtom` returns the new atom's index, `AddBond` the number of bonds.
# Molecule-graph code indexes its adjacency tensors with them (dive-into-graphs' GraphDF and
# GraphAF, deepchem's featurizers).  CamelCase names no tensor, array or builtin has.
RDKIT_INT_METHODS = frozenset({
    "GetNumAtoms", "GetNumHeavyAtoms", "GetNumBonds", "GetNumConformers", "GetIdx", "GetBeginAtomIdx",
    "GetEndAtomIdx", "GetAtomicNum", "GetDegree", "GetTotalDegree", "GetTotalNumHs", "GetNumExplicitHs",
    "GetNumImplicitHs", "GetFormalCharge", "GetNumRadicalElectrons", "GetExplicitValence",
    "GetImplicitValence", "GetTotalValence", "GetIsotope", "AddAtom", "AddBond",
})
# `torch.finfo(dtype).min`, `torch.iinfo(dtype).max`: Python numbers.
_INFO_FIELDS = frozenset({"min", "max", "eps", "tiny", "smallest_normal", "resolution", "bits"})
_MATH_CONSTANTS = frozenset({"inf", "nan", "pi", "e", "tau"})
# Standard-library functions that return a Python number, with the most positional arguments
# each takes.  Beyond them, or with `size=`, a `random` bound to `numpy.random` returns an array.
_STDLIB_NUMBERS: Dict[str, Dict[str, int]] = {
    "bisect": {"bisect": 4, "bisect_left": 4, "bisect_right": 4},
    "random": {"randint": 2, "randrange": 3, "random": 0, "uniform": 2, "gauss": 2, "getrandbits": 1},
}


def _stdlib_number(module: str, method: str, call: cst.Call, facts: Facts) -> bool:
    """`bisect.bisect_left(xs, x)`, `random.randint(a, b)`: a Python number, `module` being a
    module-level name and the call within the standard library function's arity."""
    most = _STDLIB_NUMBERS.get(module, {}).get(method)
    if most is None or facts.names.get(module, Value(Kind.OTHER, origin=Origin.GLOBAL)).origin != Origin.GLOBAL:
        return False
    positional = [a for a in call.args if a.keyword is None]
    # `*bounds` may hold more arguments than the standard library's function takes (numpy's
    # `randint(low, high, size)`), unless the name is the standard library's module: its
    # function returns a number or raises, whatever the star holds.
    starred = any(a.star for a in call.args) and module not in facts.stdlib_names
    return len(positional) <= most and not starred \
        and all(a.keyword is None or a.keyword.value not in ("size", "dtype") for a in call.args)


def flattened_rank(rank: Optional[int], start: Optional[cst.BaseExpression],
                   end: Optional[cst.BaseExpression]) -> Optional[int]:
    """The rank of `flatten(start_dim, end_dim)` of a tensor of `rank` (defaults 0 and -1): the
    dimensions from `start_dim` to `end_dim` become one.  `flatten()` of anything is 1-D (a
    0-dim tensor too); otherwise the rank and both bounds (int literals) must be known."""
    if start is None and end is None:
        return 1
    first = 0 if start is None else literal_int(start)
    last = -1 if end is None else literal_int(end)
    if rank is None or first is None or last is None or rank == 0:
        return None
    if not (-rank <= first < rank and -rank <= last < rank):
        return None  # out of range: `flatten` raises
    first, last = first % rank, last % rank  # a negative dimension counts from the end
    if first > last:
        return None  # reversed: `flatten` raises
    return rank - (last - first)


def _project_call(key: str, shown: str, call: cst.Call, facts: Facts) -> Value:
    """A call of a project class (an instance) or function (what it returns)."""
    project = facts.project
    if "." not in key and project.knows_class(key):
        return Value(Kind.OTHER, origin=Origin.LOCAL, type_name=key)
    found = project.own_return(key, facts.path) if "." not in key else None
    if found is None:
        found = project.returns.get(key)
    if key in project.through and (found is None or found.kind in (Kind.UNKNOWN, Kind.TENSOR)):
        passed = _through_argument(call, *project.through[key][:2])
        if passed is not None:
            value = returned_through(infer(passed, facts), *project.through[key][2:])
            if value.kind == Kind.DEVICE:
                value = value.because(LocalStep(through_message(shown, project.through[key][0]), call))
            return replace(value, origin=Origin.LOCAL)
    if found is None:
        return UNKNOWN
    return replace(found, origin=Origin.LOCAL, root=None, path=None)


def _through_argument(call: cst.Call, param: str, position: int) -> Optional[cst.BaseExpression]:
    """What `call` passes as parameter `param`, at `position` among the positional ones
    (`Resolved.through`): by keyword, else by position where no `*args` comes before it."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == param:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if position < len(positional) and not any(a.star for a in positional[:position + 1]):
        return positional[position].value
    return None


def progress_bar(node: cst.BaseExpression, facts: Facts) -> Optional[Value]:
    """What `tqdm(xs)` / `trange(n)` iterates as (the imported names, not a local or project
    definition of the same name); None for any other expression.  `with tqdm(xs) as bar:` binds
    the bar itself: its `__enter__` returns it."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in PROGRESS_BARS \
            and _imported_name(node.func.value, facts):
        return _progress_bar(node.func.value, node, facts)
    return None


def _imported_name(name: str, facts: Facts) -> bool:
    """`name` is bound by an import (or not bound in the walk at all, a star import's): not a
    local, a parameter or a project definition of the same name."""
    bound = facts.names.get(name)
    return bound is None or (bound.kind == Kind.OTHER and bound.origin == Origin.GLOBAL and bound.type_name is None
                             and bound.element is None and not bound.evidence)


def _progress_bar(name: str, call: cst.Call, facts: Facts) -> Value:
    """`tqdm(xs, desc=...)`: iterating it yields `xs`'s elements; `trange(n)`: ints."""
    if name == "trange":
        return Value(Kind.OTHER, element=SCALAR)
    first = call.args[0] if call.args else None
    if first is None or first.keyword is not None or first.star:
        return OTHER
    element = element_of(infer(first.value, facts))
    return Value(Kind.OTHER, element=element) if element is not None else OTHER


def _zip(call: cst.Call, facts: Facts) -> Value:
    """`zip(a, b)`: an iterable of tuples of the arguments' elements (`strict=` only decides
    whether unequal lengths raise).  `zip(*pair)` of a tuple whose items are known (`rows, cols`
    of `torch.where(mask)`, `mask.nonzero(as_tuple=True)`) is `zip(pair[0], pair[1])`: each row
    holds one element of each, 0-dim tensors there."""
    if any(a.star == "**" or (a.keyword is not None and a.keyword.value != "strict") for a in call.args):
        return OTHER
    items: List[Value] = []
    for arg in (a for a in call.args if a.keyword is None):
        value = infer(arg.value, facts)
        if arg.star == "*":
            if value.items is None:
                inner = element_of(value.element) if value.element is not None else None
                if inner is not None and len(call.args) == 1:
                    # `zip(*mask.nonzero(as_tuple=True))` of a mask of unknown rank: rows of
                    # an unknown width, each item an element of one of the same tensors.
                    return Value(Kind.OTHER, element=Value(Kind.OTHER, element=inner))
                return OTHER  # a sequence of a length not known: rows of an unknown width
            items.extend(element_of(item) or UNKNOWN for item in value.items)
            continue
        items.append(element_of(value) or UNKNOWN)
    return Value(Kind.OTHER, element=Value(Kind.OTHER, length=len(items), items=tuple(items)))


def _numpy_step(name: str, call: cst.Call, method: bool = False) -> LocalStep:
    shown = f"`.{name}()`" if method else f"`np.{name}(...)`"
    if name in ("argmax", "argmin"):
        return LocalStep(f"{shown} without an axis gives one integer position (numpy's `intp`), an int as an index",
                         call)
    return LocalStep(f"{shown} gives integer positions (numpy's `intp`): an element indexes as an int", call)


def _numpy_call(name: str, call: cst.Call, facts: Facts) -> Optional[Value]:
    """`np.<name>(...)` where numpy fixes the result's rank and an integer dtype
    (`numpy_values.numpy_function`); None otherwise."""
    arguments = _op_arguments(call, False)
    if arguments is None:
        return None
    _, positional, keywords = arguments
    first = infer(positional[0], facts) if positional else None
    # Int literals: ints.  A number nothing types (`np.arange(n)`): an int or a float, so its
    # elements index as ints or raise (`numpy_scalar_index`).  `np.arange(0, 1, 0.1)`: floats.
    integers: Optional[bool] = all(literal_int(a) is not None for a in positional)
    if any(_float_expression(a) for a in positional):
        integers = None
    return numpy_function(name, first, len(positional), tuple(keywords), _numpy_step(name, call), integers)


def _is_numpy_random(node: cst.BaseExpression, facts: Facts) -> bool:
    """`np.random` (numpy's module-level random functions), `np` a name bound to numpy."""
    return isinstance(node, cst.Attribute) and node.attr.value == "random" and isinstance(node.value, cst.Name) \
        and node.value.value in facts.numpy_names and node.value.value not in facts.names


def _numpy_randint(call: cst.Call) -> Optional[Value]:
    """`np.random.randint(low)` / `np.random.randint(low, high)` (also with `dtype=`): without
    `size`, numpy draws one integer, a numpy integer scalar (`np.int64`), which indexes and
    writes as a Python int.  With a size (a third positional argument or `size=`), or a star,
    an array: None."""
    if any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if not 1 <= len(positional) <= 2 or not keywords <= {"high", "dtype"}:
        return None
    return Value(Kind.SCALAR, 0, Origin.LOCAL, integer=True,
                 evidence=(LocalStep("one integer drawn here (`np.random.randint(...)` without a size)", call),))


def _float_expression(node: cst.BaseExpression) -> bool:
    """A number written so that it is a float whatever its operands: `1.5`, `n / 2`, `float(n)`."""
    if isinstance(node, cst.Float):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return True
    if isinstance(node, cst.BinaryOperation):
        return _float_expression(node.left) or _float_expression(node.right)
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "float"


def _numpy_positions(elements: Sequence[cst.SubscriptElement], facts: Facts) -> Optional[int]:
    """How many dimensions of a numpy array `a[i, j]` indexes with integers, or None where a
    position is anything else (a slice, an array, `None`, `...`)."""
    for element in elements:
        if index_effect(element, facts) not in ("int", "maybe-int", "int-tensor"):
            return None
    return len(elements)


def element_of(value: Value) -> Optional[Value]:
    """What iterating over a container yields, when known (a dict's keys)."""
    if value.key is not None:
        return value.key if not value.key.none else None
    if value.element is not None:
        return value.element
    if value.kind.is_tensor:
        return tensor_row(value)
    if value.kind == Kind.NUMPY:
        return numpy_element(value, 1)
    return None


def tensor_row(value: Value) -> Value:
    """What iterating (or unpacking) the tensor `value` yields: a tensor on its device with one
    dimension fewer (of unknown rank where `value`'s rank is unknown or 0), its dtype kept."""
    rank = value.rank - 1 if value.rank is not None and value.rank > 0 else None
    return Value(value.kind, rank, value.origin, root=value.root, path=value.path,
                 integer=value.integer, evidence=value.evidence)


def _torch_submodule(func: cst.Attribute, facts: Facts) -> Optional[str]:
    """`fft` or `linalg` where `func` is `torch.fft.<f>` / `torch.linalg.<f>` (`torch` the
    module, no local or parameter of that name); None else."""
    holder = func.value
    if isinstance(holder, cst.Attribute) and holder.attr.value in ("fft", "linalg") \
            and isinstance(holder.value, cst.Name) and holder.value.value in facts.torch_names \
            and holder.value.value not in facts.names:
        return holder.attr.value
    return None


def _submodule_call(submodule: str, name: str, call: cst.Call, facts: Facts) -> Value:
    """`torch.fft.rfft(x, dim=1)`: where `x` is, of its rank (`FFT_FUNCTIONS`); `torch.linalg.
    vector_norm(x, dim=1)` / `torch.linalg.norm(x)`: where `x` is, 0-dim without `dim`, one
    dimension fewer along one int `dim` (`LINALG_NORMS`); `torch.fft.fftfreq(n, device=d)`: a
    factory (`FFT_FACTORIES`).  Unknown for any other function."""
    if f"{submodule}.{name}" in FFT_FACTORIES:
        return _factory(call, f"{submodule}.{name}", facts)
    first = _arg(call, 0, "input" if submodule == "fft" else "x" if name == "vector_norm" else "A")
    if first is None or any(a.star for a in call.args):
        return UNKNOWN
    source = infer(first, facts)
    if not source.kind.is_tensor:
        return UNKNOWN
    if submodule == "fft" and name in FFT_FUNCTIONS:
        integer = source.integer if name in ("fftshift", "ifftshift") else NON_INTEGER
        return Value(source.kind, source.rank, Origin.LOCAL, integer=integer, evidence=source.evidence)
    if submodule == "linalg" and name in LINALG_NORMS:
        dim, keepdim = _arg(call, 2, "dim"), _arg(call, 3, "keepdim")
        rank = 0 if dim is None and keepdim is None else reduced_rank(source.rank, dim, keepdim, facts) \
            if dim is not None else None
        return Value(source.kind, rank, Origin.LOCAL, integer=NON_INTEGER, evidence=source.evidence)
    return UNKNOWN


def _meshgrid(call: cst.Call, facts: Facts) -> Value:
    """`torch.meshgrid(a, b, indexing="ij")` or of one list or tuple display (`torch.meshgrid([a,
    b])`): one grid per input (`values.meshgrid_result`).  Unknown where an input is starred or
    the tensors come in a container whose length is not shown."""
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional) or not positional:
        return UNKNOWN
    inputs: Sequence[cst.BaseExpression] = [a.value for a in positional]
    if len(positional) == 1 and isinstance(positional[0].value, (cst.List, cst.Tuple)):
        elements = positional[0].value.elements
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return UNKNOWN
        inputs = [e.value for e in elements]
    return meshgrid_result([infer(e, facts) for e in inputs], Origin.LOCAL)


def _same_device_function(call: cst.Call, facts: Facts, name: str) -> Value:
    """`torch.<name>(x, ...)` of `SAME_DEVICE_FUNCTIONS`: on `x`'s device (or `out=`'s)."""
    out = _keyword(call, "out")
    if out is not None:
        target = infer(out, facts)
        if target.kind.is_tensor:
            return target
    if not call.args:
        return UNKNOWN
    first = call.args[0].value
    if name in CONCATENATIONS or name == "stack":
        return _concatenation(name, first, facts)
    if isinstance(first, (cst.List, cst.Tuple)) and first.elements:
        first = first.elements[0].value
    source = infer(first, facts)
    if source.kind.is_tensor:
        if name in ("sort", "topk"):
            return Value(Kind.OTHER, length=2, items=(
                Value(source.kind, source.rank, Origin.LOCAL, evidence=source.evidence),
                Value(source.kind, source.rank, Origin.LOCAL, integer=True, evidence=source.evidence)))
        integer = NON_INTEGER if name in ("any", "all") else \
            name in ("argsort", "argmax", "argmin", "nonzero", "searchsorted", "bucketize")
        made = Value(source.kind, _function_rank(name, source, call, facts), Origin.LOCAL, integer=integer,
                     evidence=source.evidence)
        if name == "squeeze" and made.rank is not None and made.kind == Kind.DEVICE:
            return made.because(_squeeze_step(source.rank, call))
        return made
    return UNKNOWN


# `torch.f(x, ...)` that give a tensor of `x`'s shape (elementwise on one tensor, a scan or a
# softmax along a dimension, a reorder); the summary's `_RANK_KEEPING` reads them the same way.
RANK_KEEPING_FUNCTIONS = frozenset({
    "argsort", "cumsum", "cumprod", "abs", "neg", "clamp", "clip", "exp", "log", "sqrt", "sigmoid",
    "softmax", "log_softmax", "flip", "roll", "index_select", "masked_fill", "nan_to_num",
    "tril", "triu", "gather",
})
# Reductions that, along one dimension, drop it (or keep it as 1 with `keepdim=True`).
DIM_REDUCTIONS = frozenset({"sum", "mean", "prod", "logsumexp", "any", "all"})


def _concatenation(name: str, inputs: cst.BaseExpression, facts: Facts) -> Value:
    """`torch.cat((a, b))` / `torch.stack((a, b))`, or of a container (`torch.cat(chunks)`):
    where any input of a known place is (`values.concatenation_source`: PyTorch raises on
    mixed devices), of the rank PyTorch requires of the inputs (`torch_api.concatenated_rank`,
    `stacked_rank`; open where a starred input hides some); a container's inputs are what it
    holds (`chunks.append(x.cpu())`).  Each input is inferred once."""
    combine = concatenated_rank if name in CONCATENATIONS else stacked_rank
    if isinstance(inputs, (cst.List, cst.Tuple)) and inputs.elements:
        shown = [infer(e.value, facts) for e in inputs.elements if not isinstance(e, cst.StarredElement)]
        source = concatenation_source(shown) if shown else UNKNOWN
        if not source.kind.is_tensor:
            return UNKNOWN
        rank = combine([v.rank for v in shown]) if len(shown) == len(inputs.elements) else None
        return Value(source.kind, rank, Origin.LOCAL, evidence=source.evidence)
    container = infer(inputs, facts)
    held = container.element
    if held is not None and held.kind.is_tensor:
        return Value(held.kind, combine([held.rank]), Origin.LOCAL, integer=held.integer, evidence=held.evidence)
    if container.kind.is_tensor:
        return Value(container.kind, None, Origin.LOCAL, evidence=container.evidence)  # its rows, concatenated
    return UNKNOWN


def _function_rank(name: str, source: Value, call: cst.Call, facts: Facts) -> Optional[int]:
    """The rank of `torch.name(x, ...)` with `source` the value of `x`: kept by
    `RANK_KEEPING_FUNCTIONS`, one less by a reduction along one dimension; None where nothing
    says (a concatenation is `_concatenation`'s)."""
    if name in RANK_KEEPING_FUNCTIONS:
        return source.rank
    if name in ("outer", "ger"):
        return 2  # of two vectors (PyTorch raises on anything else)
    if name in _FULL_REDUCTIONS and _reduces_everything(call):
        return 0  # `torch.mean(x)`, `torch.max(x)`: one element, 0-dim (as `x.mean()`)
    if name in DIM_REDUCTIONS:
        return reduced_rank(source.rank, _arg(call, 1, "dim"), _arg(call, 2, "keepdim"), facts)
    if name == "squeeze":
        return squeezed_rank(source.rank, _arg(call, 1, "dim"), facts)
    if name == "flatten":
        # `torch.flatten(x)`: every dimension into one (a 0-dim `x` gives 1-D too)
        return flattened_rank(source.rank, _arg(call, 1, "start_dim"), _arg(call, 2, "end_dim"))
    if name == "reshape" and len(call.args) == 2 and not call.args[1].star:
        shape = _sequence_length(call.args[1].value, facts)  # `torch.reshape(x, (-1,))`
        return shape if shape is not None and shape > 0 else None
    if name == "unsqueeze" and source.rank is not None and _arg(call, 1, "dim") is not None:
        return source.rank + 1  # `torch.unsqueeze(x, d)`: one dimension of size 1 more
    if name == "repeat_interleave" and _arg(call, 2, "dim") is None \
            and not any(a.star for a in call.args):
        return 1  # without `dim=`, `x` is flattened first: a 1-D result (as `torch.repeat_interleave(repeats)`)
    return None


def _reduces_everything(call: cst.Call) -> bool:
    """`torch.f(x)` with one positional argument, no `*`/`**` and no `dim=`/`axis=`: a reduction
    of every element (`torch.max(x, y)` of two tensors is elementwise, `torch.max(x, 1)` along
    a dimension)."""
    positional = [a for a in call.args if a.keyword is None]
    return len(positional) == 1 and not any(a.star for a in call.args) and not any(
        a.keyword is not None and a.keyword.value in ("dim", "axis", "other", "input") for a in call.args)


def reduced_rank(rank: Optional[int], dim: Optional[cst.BaseExpression],
                 keepdim: Optional[cst.BaseExpression], facts: Facts) -> Optional[int]:
    """The rank after a reduction along `dim` (one int: one dimension fewer, or as many with
    `keepdim=True`); None for a tuple of dimensions, no `dim`, or a `keepdim` not written as
    a literal."""
    if rank is None or dim is None or not (literal_int(dim) is not None or plain_number(infer(dim, facts))):
        return None
    keep = _bool_literal(keepdim) if keepdim is not None else False
    if keep is None:
        return None
    return rank if keep else max(rank - 1, 0)


def _op_arguments(call: cst.Call, function: bool, input_name: str = "input") -> Optional[
        Tuple[Optional[cst.BaseExpression], List[cst.BaseExpression], Dict[str, cst.BaseExpression]]]:
    """(input, positional arguments after it, keywords) of `torch.op(x, ...)` (`function`) or
    `x.op(...)` (input None: the receiver); None with `*args` / `**kwargs` or no input."""
    if any(a.star for a in call.args):
        return None
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if not function:
        return None, positional, keywords
    if input_name in keywords:
        return keywords.pop(input_name), positional, keywords
    if not positional:
        return None
    return positional[0], positional[1:], keywords


def _index_op(name: str, source: Value, positional: Sequence[cst.BaseExpression],
              keywords: Mapping[str, cst.BaseExpression], facts: Facts) -> Value:
    """The result of an :data:`INDEX_OPS` op on `source` (a tensor of kind `source.kind`)."""
    op = INDEX_OPS[name]

    def given(keyword: str, position: Optional[int]) -> Optional[cst.BaseExpression]:
        if keyword in keywords:
            return keywords[keyword]
        if position is not None and position < len(positional):
            return positional[position]
        return None

    evidence = source.evidence
    dim = given("dim", op.dim)
    if op.other and ("other" in keywords or (dim is not None and "dim" not in keywords)):
        # `torch.max(a, b)` is elementwise, `torch.max(a, 0)` reduces along dim 0.
        other = keywords.get("other", dim)
        assert other is not None
        found = infer(other, facts) if literal_int(other) is None else SCALAR
        if found.kind.is_tensor:
            kind = Kind.DEVICE if Kind.DEVICE in (source.kind, found.kind) else (
                source.kind if source.kind == found.kind else Kind.TENSOR)
            return Value(kind, None, Origin.LOCAL,
                         evidence=evidence if kind == source.kind else found.evidence)
        if found.kind != Kind.SCALAR or "other" in keywords:
            return UNKNOWN  # an int (a dim) or a tensor (`other`): not known which
    if dim is not None and isinstance(dim, cst.Name) and dim.value == "None":
        dim = None
    keep_node = given("keepdim", op.keepdim)
    keep = _bool_literal(keep_node) if keep_node is not None else False
    rank = source.rank
    if dim is None and op.full:
        # Every dimension reduced: one 0-dim tensor (all dimensions kept as 1 with keepdim).
        out_rank = 0 if keep is False else (rank if keep else None)
        return Value(source.kind, out_rank, Origin.LOCAL,
                     integer=op.indices_only or source.integer, evidence=evidence)
    if op.keeps_rank:
        out_rank = rank
    elif keep is None or rank is None:
        out_rank = None
    else:
        out_rank = rank if keep else max(rank - 1, 0)
    indices = Value(source.kind, out_rank, Origin.LOCAL, integer=True, evidence=evidence)
    if not op.pair:
        return indices
    values = Value(source.kind, out_rank, Origin.LOCAL, integer=source.integer, evidence=evidence)
    return Value(Kind.OTHER, origin=Origin.LOCAL, length=2, items=(values, indices), fields=PAIR_FIELDS)


def _bool_literal(node: cst.BaseExpression) -> Optional[bool]:
    """`True` / `False` as written; None for anything else."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _index_tuple(source: Value) -> Value:
    """`torch.where(cond)` (one argument) and `nonzero(as_tuple=True)`: a tuple with one 1-D
    int64 tensor per dimension of the input (one for a 0-dim input), on the input's device.
    Indexing with them (`t[torch.where(m)]`, `t[rows, cols]`) is advanced indexing; an element
    of one of them (`rows[0]`, `for r in rows`) is a 0-dim integer tensor."""
    return position_tuple(Value(source.kind, 1, Origin.LOCAL, integer=True, evidence=source.evidence), source.rank)


def _nonzero(source: Value, keywords: Mapping[str, cst.BaseExpression], name: str) -> Value:
    """`nonzero()` / `argwhere()`: a 2-D int64 tensor (one row per nonzero element, one
    column per dimension), even for a 0-dim input; `nonzero(as_tuple=True)`: an index tuple."""
    as_tuple = keywords.get("as_tuple") if name == "nonzero" else None
    flag = _bool_literal(as_tuple) if as_tuple is not None else False
    if flag is None:
        return UNKNOWN
    if flag:
        return _index_tuple(source)
    return Value(source.kind, 2, Origin.LOCAL, integer=True, evidence=source.evidence)


# torch functions giving positions in a sorted sequence, with the searched values' shape.
_SEARCH_OPS = frozenset({"searchsorted", "bucketize"})


def _searched(name: str, call: cst.Call, facts: Facts) -> Optional[Value]:
    """`torch.searchsorted(sorted_sequence, values)`, `torch.bucketize(values, boundaries)`:
    integer positions (int64, int32 with `out_int32=True`) with the shape of `values`, 0-dim
    when `values` is a Python number, on the sequence's device.  None for other spellings."""
    if any(a.star for a in call.args):
        return None
    positional = [a.value for a in call.args if a.keyword is None]
    if len(positional) != 2:
        return None
    sequence, values = (positional[0], positional[1]) if name == "searchsorted" else (positional[1], positional[0])
    over, searched = infer(sequence, facts), infer(values, facts)
    if searched.kind == Kind.SCALAR:
        rank: Optional[int] = 0
    elif searched.kind.is_tensor:
        rank = searched.rank
    else:
        return UNKNOWN
    source = over if over.kind.is_tensor else searched if searched.kind.is_tensor else Value(Kind.TENSOR)
    return Value(source.kind, rank, Origin.LOCAL, integer=True, evidence=source.evidence)


def _index_result(name: str, call: cst.Call, receiver: Optional[Value], facts: Facts) -> Optional[Value]:
    """The result of an index-producing op: `torch.name(x, ...)` (receiver None) or
    `x.name(...)` with `x` a tensor.  None where another rule of this module decides
    (`out=`, `torch.where(c, a, b)`)."""
    if name in _SEARCH_OPS:
        return _searched(name, call, facts) if receiver is None else None
    arguments = _op_arguments(call, receiver is None, "condition" if name == "where" else "input")
    if arguments is None:
        return UNKNOWN if receiver is None else None
    node, positional, keywords = arguments
    if "out" in keywords:
        return None
    if receiver is None:
        assert node is not None
        if name == "where" and (positional or keywords):
            return None  # `torch.where(cond, a, b)`: elementwise
        source = infer(node, facts)
        if not source.kind.is_tensor:
            if source.kind != Kind.UNKNOWN:
                return UNKNOWN
            # These functions take only tensors: whatever `x` is, the result (if any) is a
            # tensor, on a device nothing here tells.
            source = Value(Kind.TENSOR)
    else:
        source = receiver
    if name == "where":
        return _index_tuple(source)
    if name in NONZERO_OPS:
        return _nonzero(source, keywords, name)
    return _index_op(name, source, positional, keywords, facts)


def _module_constant(dotted: str, facts: Facts) -> Optional[Value]:
    """`consts.SOS_ID` where `consts` is a project module the file imports at module level
    (`Facts.module_imports`) and that module binds `SOS_ID` only to numbers (or displays of
    them) at module level: that value, with its evidence (`Resolved.constant`).  None when the
    name is bound otherwise where the read is (a parameter, a local of the same name)."""
    base, _, attr = dotted.rpartition(".")
    module = facts.module_imports.get(base)
    if module is None or not _imported_name(base.split(".")[0], facts):
        return None  # not a module, or rebound on this path: a parameter, a local, a loop variable
    return facts.project.constant(module, attr)


def _attribute(node: cst.Attribute, facts: Facts) -> Value:
    attr = node.attr.value
    base_node = node.value
    if attr in _INFO_FIELDS and isinstance(base_node, cst.Call) and isinstance(base_node.func, cst.Attribute) \
            and base_node.func.attr.value in ("finfo", "iinfo") and isinstance(base_node.func.value, cst.Name) \
            and base_node.func.value.value in facts.torch_names:
        return SCALAR
    if attr in _MATH_CONSTANTS and isinstance(base_node, cst.Name) and base_node.value == "math" \
            and facts.names.get("math", Value(Kind.OTHER, origin=Origin.GLOBAL)).origin == Origin.GLOBAL:
        return SCALAR
    if attr == "maxsize" and isinstance(base_node, cst.Name) and base_node.value == "sys" \
            and facts.names.get("sys", Value(Kind.OTHER, origin=Origin.GLOBAL)).origin == Origin.GLOBAL:
        return SCALAR  # `sys.maxsize`: a Python int
    dotted = dotted_name(node)
    if dotted is not None and dotted in facts.names:
        return facts.names[dotted]  # `args.gpu = [0, 1]` earlier on this path
    if facts.module_imports and dotted is not None:
        constant = _module_constant(dotted, facts)
        if constant is not None:
            return constant
    if isinstance(base_node, cst.Name) and facts.self_name is not None and base_node.value == facts.self_name:
        found = facts.self_attributes.get(attr)
        self_path = f"self.{attr}"
        if found is not None:
            return replace(found, origin=Origin.SELF, root=facts.self_name, path=self_path)
        if facts.self_class is not None:
            known = facts.project.field(facts.self_class, attr)
            if known is not None:  # inherited from a project base class
                return replace(known, origin=Origin.SELF, root=facts.self_name, path=self_path)
        return _hinted(attr, _by_name_convention(attr, Value(Kind.UNKNOWN, origin=Origin.SELF,
                                                             root=facts.self_name, path=self_path)),
                       node, facts)
    owner = _class_reference(base_node, facts)
    if owner is not None:
        # `cls.table` in a classmethod, `type(self).table`, `Table.table`: the class's own
        # attribute (an instance-only field read through the class raises, so it adds no case).
        own = facts.self_attributes.get(attr) if owner == facts.self_class else None
        known = own if own is not None else facts.project.field(owner, attr)
        if known is not None and owner in facts.project.enums and not sunder(attr):
            return _enum_member(owner, facts)  # `Kind.NORMAL`: a member, not the number assigned
        if known is not None:
            return replace(known, origin=Origin.LOCAL, root=None, path=None)
    enum = _enum_member_read(base_node, facts) if attr in ("value", "_value_") else None
    if enum is not None:  # `Kind.NORMAL.value`: the number the class body assigned
        return _enum_number(enum, facts)
    base = infer(base_node, facts)
    if attr in ("value", "_value_") and base.kind == Kind.OTHER and base.type_name is not None \
            and base.type_name in facts.project.enums:
        return _enum_number(base.type_name, facts)  # `kind.value` of `kind: Kind`, `Kind(1)`
    if base.fields is not None and base.items is not None and attr in base.fields:
        return base.items[base.fields.index(attr)]  # `torch.sort(x).indices`: `[1]`
    if is_tokenized(base) and base.element is not None and not attr.startswith("_"):
        # `enc.input_ids`: a `BatchEncoding` reads its keys as attributes too.
        return replace(entry(base, attr) or base.element, origin=base.origin)
    path: Optional[str] = f"{base.path}.{attr}" if base.path is not None else None
    inherited = Value(Kind.UNKNOWN, None, base.origin, None, None, base.root, path)
    if base.type_name is not None and facts.project.knows_class(base.type_name):
        # Direct evidence about the object at hand: its class's own field, wherever it is
        # defined.  It beats every convention below (`.gpu`, `_cpu` siblings, names).
        known = facts.project.field(base.type_name, attr)
        if known is not None and (known.kind not in (Kind.TENSOR, Kind.UNKNOWN)
                                  or known.type_name is not None or known.element is not None):
            cls_path, cls_line = facts.project.classes[base.type_name]
            step = EvidenceStep(f"`{attr}` is a field of `{base.type_name}`", cls_path, cls_line)
            steps = base.evidence + (step,) if known.kind == Kind.DEVICE else ()
            if is_json_data(known) and known.element is not None:
                # `model.config` of parsed JSON: what it holds says how the object was reached.
                known = replace(known, element=known.element.because(*base.evidence, step))
            return replace(known, origin=base.origin, root=base.root, path=path,
                           evidence=steps + known.evidence)
    if config_field(attr) and _reads_config(base_node, base):
        # `self.loss_config.queue_size`, `args.pad_id`: a host value (`values.config_value`).
        return config_value(LocalStep(CONFIG_STEP, node, "convention"))
    if base.kind.is_tensor:
        if attr in ("T", "mT", "data", "real", "imag"):
            # The same tensor (a view): its evidence, conventions included, carries over.
            return Value(base.kind, base.rank if attr != "T" else base.rank, base.origin,
                         root=base.root, path=path, evidence=base.evidence)
        if attr == "shape":
            # A `torch.Size`: a tuple of Python ints, one per dimension.
            return Value(Kind.OTHER, length=base.rank, element=SCALAR,
                         items=(SCALAR,) * base.rank if base.rank is not None else None)
        if attr == "device":
            if base.kind == Kind.CPU:
                return Value(Kind.CPU_PLACE)
            if base.kind == Kind.DEVICE and not forward_input_only(base):
                return Value(Kind.DEVICE_PLACE)
            # On the device only by the forward-input convention: `device = x.device` then
            # `torch.zeros(n, device=device)` reads as `device=x.device` does (`_factory`): an
            # explicit `device=` nothing places, said so in the allocation's own step.
            return UNKNOWN
        if attr in ("ndim", "is_cuda", "dtype", "layout"):
            return SCALAR if attr == "ndim" else OTHER
    if base.kind == Kind.DEVICE and base.rank is None:
        field = output_field_message(base.evidence, attr)
        if field is not None:  # `outputs.logits` of `outputs = self.model(ids)`
            return Value(Kind.DEVICE, None, Origin.LOCAL, path=path, evidence=base.evidence).because(
                LocalStep(field, node, "convention"))
    if attr == "device":
        return UNKNOWN
    if attr == "shape" and base.kind == Kind.UNKNOWN and base.type_name is None and not base.none:
        # `b, n = x.shape[:2]`, `_, n = x.shape` of an `x` nothing tells about: a tuple of
        # dimensions, as `x.shape[1]` is one (`_subscript`).
        return SIZE_TUPLE
    # vLLM's CpuGpuBuffer: `.gpu` is the device tensor, `.cpu` the (pinned) host one, `.np`
    # a numpy view of the host one.
    if attr == "gpu":
        return inherited.with_kind(Kind.DEVICE).because(
            LocalStep("a `.gpu` buffer (convention: the device half of a CPU/GPU pair)", node, "convention"))
    if attr == "cpu":
        return inherited.with_kind(Kind.CPU)
    if attr == "np":
        return inherited.with_kind(Kind.NUMPY)
    pair = LocalStep(f"`{attr}` has a `{attr}_cpu` sibling field (convention: the device half)",
                     node, "convention")
    if base.type_name is not None and base.type_name in facts.class_fields:
        fields = facts.class_fields[base.type_name]
        if attr in fields and attr + "_cpu" in fields:
            return inherited.with_kind(Kind.DEVICE).because(pair)
    elif attr in facts.device_fields:
        return inherited.with_kind(Kind.DEVICE).because(pair)
    return _hinted(attr, _by_name_convention(attr, inherited), node, facts)


def _enum_member_read(node: cst.BaseExpression, facts: Facts) -> Optional[str]:
    """The project enumeration of numbers (`Resolved.enums`) whose member `node` reads through
    the class (`Kind.NORMAL`; an `IntEnum` member reads as the int it is, so its `.value`
    asks here); None for anything else."""
    if isinstance(node, cst.Attribute) and not sunder(node.attr.value):
        owner = _class_reference(node.value, facts)
        if owner is not None and owner in facts.project.enums \
                and facts.project.field(owner, node.attr.value) is not None:
            return owner
    return None


def _enum_member(enum: str, facts: Facts) -> Value:
    """A member of `enum` (`Resolved.enums`): an `int` itself where the enumeration makes its
    members ints (`IntEnum`), else an object of the class whose `.value` is a number."""
    if facts.project.enums[enum] == INT_ENUM:
        return _enum_number(enum, facts)
    return Value(Kind.OTHER, origin=Origin.LOCAL, type_name=enum)


def _enum_number(enum: str, facts: Facts) -> Value:
    """`member.value` of a member of `enum` (or an `IntEnum` member itself): the Python number
    its class body assigned."""
    path, line = facts.project.classes[enum]
    return Value(Kind.SCALAR, 0, Origin.LOCAL, evidence=(EvidenceStep(enum_step_message(enum), path, line),))


def _reads_config(receiver: cst.BaseExpression, value: Value) -> bool:
    """Whether `receiver`, what an attribute is read from, is a configuration: a field of one
    (`config.text_config`), or a name or field spelled like one (`values.names_config`) that
    nothing else tells about (a known class, a tensor, a container beat the spelling: vLLM's
    multimodal processors read `hf_config: PretrainedConfig` token ids into tensors on the
    `.device` of processor outputs, which the convention for an unplaced tensor's `.device`
    would take for the accelerator)."""
    if from_config(value):
        return True
    if not nothing_known(value):
        return False
    name = last_name(receiver)
    return name is not None and names_config(name)


def _hinted(name: str, value: Value, node: cst.CSTNode, facts: Facts) -> Value:
    """`device-hints` / `cpu-hints`: what the project asserts about a name with no evidence."""
    if value.kind != Kind.UNKNOWN or not (facts.device_hints or facts.cpu_hints):
        return value
    full = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    candidates = [c for c in (name, full, f"*.{name}") if c]
    for glob in facts.cpu_hints:
        if any(fnmatch.fnmatchcase(c, glob) for c in candidates):
            return value.with_kind(Kind.CPU)
    for glob in facts.device_hints:
        if any(fnmatch.fnmatchcase(c, glob) for c in candidates):
            return value.with_kind(Kind.DEVICE).because(
                LocalStep(f"`{full or name}` matches the device hint `{glob}`", node, "hint"))
    return value


def _by_name_convention(name: str, value: Value) -> Value:
    if name.endswith(CPU_SUFFIXES):
        return value.with_kind(Kind.CPU, value.rank)
    if name.endswith(NUMPY_SUFFIXES):
        return value.with_kind(Kind.NUMPY, value.rank)
    return value


def index_effect(element: cst.SubscriptElement, facts: Facts) -> str:
    """How one subscript position acts on a tensor: 'int', 'maybe-int', 'int-tensor', 'slice',
    'new', 'ellipsis', 'advanced'."""
    sl = element.slice
    if isinstance(sl, cst.Slice):
        return "slice"
    if not isinstance(sl, cst.Index):
        return "advanced"
    if sl.star is not None:
        return "advanced"
    value = sl.value
    if isinstance(value, cst.Ellipsis):
        return "ellipsis"
    if isinstance(value, cst.Name) and value.value == "None":
        return "new"
    if is_bool_literal(value) or _is_boolean_expression(value):
        return "advanced"  # a bool index adds a dimension (like None): not an element write
    if literal_int(value) is not None:
        return "int"
    inferred = infer(value, facts)
    if inferred.kind == Kind.SCALAR and host_object(inferred):
        # A value read from parsed JSON or a configuration is a host object, not an int by
        # evidence: a list there (`"eos_token_id": [1, 2]`) indexes several elements.
        return "advanced"
    if boolean_result(inferred):
        # `m = info.status == DONE; t[m] = v`: a test's result through a name is a mask (a
        # Python bool adds a dimension), as the comparison written in place is.
        return "advanced"
    if inferred.kind == Kind.SCALAR:
        # An int by what the project's call sites pass: evidence, but not a proof (a caller
        # the project cannot see may pass a list), so the fix stays unsafe.
        return "maybe-int" if _rests_on_parameter(value, facts) else "int"
    if inferred.kind.is_tensor and inferred.rank == 0 and inferred.integer:
        # A 0-dim integer tensor indexes like an int: PyTorch reads it back (`item()`) and
        # selects one element, so the value is still copied host-to-device.
        return "int-tensor"
    if unknown_dtype_scalar_tensor(inferred):
        # A 0-dim tensor of a dtype not known here (`for g in torch.unique(keys)`): an index
        # of one is an integer one (a floating one raises) unless a boolean mask, which a
        # 0-dim condition rarely is: a convention, so the fix stays unsafe (`index_evidence`).
        return "maybe-int"
    if numpy_scalar_index(inferred):
        # One element of a numpy array of a dtype not known here: PyTorch takes a numpy
        # integer as an int and raises for a floating or boolean one; the fix raises another
        # error there, so it stays unsafe.
        return "maybe-int"
    if ordered_number(inferred):
        # Ordered against a number in a test that held (`if 0 <= i < n:`): an int, unless a
        # one-element tensor (`scope.compared_names`); a convention, so the fix stays unsafe.
        return "maybe-int"
    if _looks_integral(value, facts):
        return "maybe-int"
    if slice_bound_index(value, inferred, facts) is not None:
        return "maybe-int"
    return "advanced"


_EMPTY_MODULE = cst.Module(body=[])


def slice_bound_index(node: cst.BaseExpression, value: Value, facts: Facts) -> Optional[cst.Subscript]:
    """The subscript of the function that uses `node` (of value `value`, which nothing else
    tells to be an int) as a slice's start or stop, or None.  A slice takes only an int, `None`
    or a 0-dim integer tensor there: as an index alone, the expression is taken to be an
    integer (a convention, `usage.SliceBounds`).  Not where the value is known to be something
    else than a number or a tensor of rank 0 or unknown (a list, an index tensor)."""
    if facts.slice_bounds is None:
        return None
    if value.kind.is_tensor:
        if value.rank not in (None, 0) or value.integer is NON_INTEGER:
            return None
    elif value.kind != Kind.UNKNOWN or value.element is not None or value.items is not None \
            or value.type_name is not None:
        return None
    return facts.slice_bounds.find(node)


def _rests_on_parameter(node: cst.BaseExpression, facts: Facts) -> bool:
    """An int index that is one only by evidence about a parameter (`slot`, `slot + 1`)."""
    if isinstance(node, cst.Name):
        value = infer(node, facts)
        return value.origin == Origin.PARAM and bool(value.evidence)
    if isinstance(node, cst.BinaryOperation):
        return _rests_on_parameter(node.left, facts) or _rests_on_parameter(node.right, facts)
    if isinstance(node, cst.UnaryOperation):
        return _rests_on_parameter(node.expression, facts)
    return False


def unknown_dtype_scalar_tensor(value: Value) -> bool:
    """A 0-dim tensor of a dtype nothing says: neither an integer one nor `NON_INTEGER`."""
    return value.kind.is_tensor and value.rank == 0 and value.integer is False


def index_evidence(node: cst.BaseExpression, facts: Facts) -> Tuple[object, ...]:
    """The evidence an int index rests on: parameters (`slot`, `slot + 1`), fields that only
    ever hold ints (`self.total`), a 0-dim tensor of a dtype not known, an expression the
    function also uses as a slice bound (conventions), numpy's positions and elements."""
    if isinstance(node, (cst.Name, cst.BinaryOperation, cst.UnaryOperation)) and facts.slice_bounds is not None:
        inferred = infer(node, facts)
        bound = None if ordered_number(inferred) or inferred.kind == Kind.SCALAR \
            or _looks_integral(node, facts) else slice_bound_index(node, inferred, facts)
        if bound is not None:
            return (LocalStep(
                f"`{_EMPTY_MODULE.code_for_node(node)}` is also a slice bound here: a slice takes only an int (or `None`, "
                "or a 0-dim integer tensor) there, so as an index it is taken to be an integer", bound,
                "convention"),)
    if isinstance(node, cst.Call):
        called = infer(node, facts)  # `np.argmax(x)`: numpy's position, an integer
        return called.evidence if called.kind == Kind.SCALAR and called.integer is True else ()
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
        value = infer(node, facts)
        if numpy_scalar_index(value):
            return value.evidence + (LocalStep(
                f"`{_callee_text(node)}` is one element of a numpy array of a dtype not known here: as an index, "
                "PyTorch takes a numpy integer as an int (a floating or boolean one raises)", node),)
        if unknown_dtype_scalar_tensor(value):
            return value.evidence + (LocalStep(
                f"`{_callee_text(node)}` is a 0-dim tensor of a dtype not known here: as an index, taken to be "
                "an integer one (a floating one raises, and a 0-dim boolean mask is rare)", node, "convention"),)
    if isinstance(node, (cst.Name, cst.Attribute)):
        return value.evidence if value.origin == Origin.PARAM or value.kind == Kind.SCALAR \
            or ordered_number(value) else ()
    if isinstance(node, cst.Subscript):  # an element of a container of ints (`order[i]`)
        return value.evidence if value.kind == Kind.SCALAR else ()
    if isinstance(node, cst.BinaryOperation):
        return index_evidence(node.left, facts) + index_evidence(node.right, facts)
    if isinstance(node, cst.UnaryOperation):
        return index_evidence(node.expression, facts)
    return ()


def _is_boolean_expression(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return True
    return isinstance(node, (cst.Comparison, cst.BooleanOperation))


def _looks_integral(node: cst.BaseExpression, facts: "Facts") -> bool:
    """Arithmetic of an int-by-evidence parameter with ints, used as an index (`slot + 1`).

    An un-annotated parameter with no evidence (call sites, an int default, `range(p)` in the
    body) is not one: callers pass index tensors and lists as often as ints
    (`free(self, indices)`), and advanced indexing does not copy (issue 17, item 9).
    """
    if isinstance(node, cst.Name):
        value = infer(node, facts)
        return value.kind == Kind.SCALAR and value.origin == Origin.PARAM and bool(value.evidence)
    if isinstance(node, cst.BinaryOperation) and isinstance(
        node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
    ):
        sides = [node.left, node.right]
        known = [infer(x, facts).kind == Kind.SCALAR for x in sides]
        loose = [_looks_integral(x, facts) for x in sides]
        return all(k or l for k, l in zip(known, loose)) and any(loose)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _looks_integral(node.expression, facts)
    return False


def subscript_rank(base: Value, elements: Sequence[cst.SubscriptElement], facts: Facts) -> Optional[int]:
    """The rank of `base[elements]`: integers select, `None` adds a dimension, tensor and list
    indices replace what they consume by their broadcast shape (`torch_api.advanced_indexed_rank`:
    `sequences[order, 1:]` with `order` a 1-D index keeps two dimensions); None where an index
    is not known to act one of those ways."""
    if base.rank is None:
        return None
    removed = added = 0
    advanced: List[Tuple[int, int]] = []
    for element in elements:
        effect = index_effect(element, facts)
        if effect in ("int", "maybe-int", "int-tensor"):
            removed += 1
        elif effect == "new":
            added += 1
        elif effect == "advanced":
            dims = _advanced_dims(element, facts)
            if dims is None:
                return None
            advanced.append(dims)
    return advanced_indexed_rank(base.rank, removed, added, advanced)


def _advanced_dims(element: cst.SubscriptElement, facts: Facts) -> Optional[Tuple[int, int]]:
    """How an advanced index acts (`torch_api.advanced_index_dims`): a tensor of known rank, or a
    list display of numbers (`x[[0, 2]]`, one dimension: PyTorch makes a 1-D tensor of it; a
    list holding anything else may index as a tuple would)."""
    sl = element.slice
    if not isinstance(sl, cst.Index) or sl.star is not None:
        return None
    if isinstance(sl.value, cst.List):
        numbers = sl.value.elements and all(
            not isinstance(e, cst.StarredElement) and (literal_int(e.value) is not None or is_bool_literal(e.value))
            for e in sl.value.elements)
        return (1, 1) if numbers else None
    index = infer(sl.value, facts)
    return advanced_index_dims(index.rank, index.integer) if index.kind.is_tensor else None


def _subscript(node: cst.Subscript, facts: Facts) -> Value:
    base = infer(node.value, facts)
    if base.kind.is_tensor:
        return Value(base.kind, subscript_rank(base, node.slice, facts), base.origin,
                     root=base.root, path=base.path, integer=base.integer, evidence=base.evidence)
    first = node.slice[0].slice if len(node.slice) == 1 else None
    index = first.value if isinstance(first, cst.Index) else None
    key = string_key(index) if index is not None else None
    if key is not None and nothing_known(base) and config_field(key) and _reads_config(node.value, base):
        # `config["high_order"]`, `self.cfg["pad_id"]`: a configuration's field by key, a host
        # value (`values.config_value`) as `config.high_order` is.  Only of an object spelled
        # like a configuration: a value read from one (`tta = extra_args.get("tta")`) may be a
        # container whose entries an annotation elsewhere declares (vLLM-Omni's `end_tid`).
        return config_value(LocalStep(CONFIG_STEP, node, "convention"))
    # A number or a container (`ids: int | list[int]`) indexes as the container: a number raises.
    container = base.kind == Kind.OTHER or base.kind == Kind.UNKNOWN and base.element is not None
    if container and index is not None:
        held = entry(base, key) if key is not None else None
        if held is not None:
            return _held(replace(held, origin=base.origin if held.kind.is_tensor else held.origin), base)
        position = literal_int(index)
        if base.items is not None and position is not None and -len(base.items) <= position < len(base.items):
            return _held(base.items[position], base)
        if base.element is not None:
            return _held(replace(base.element, origin=base.origin if base.element.kind.is_tensor
                                 else base.element.origin), base)
    if base.kind == Kind.OTHER and base.element is not None and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Slice):
        return Value(Kind.OTHER, origin=base.origin, element=base.element)  # `xs[1:]`
    if base.kind == Kind.NUMPY:
        positions = _numpy_positions(node.slice, facts)
        return numpy_element(base, positions) if positions is not None else Value(Kind.NUMPY, None, base.origin)
    if base.kind == Kind.OTHER and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
        return SCALAR
    if isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute) and node.value.func.attr.value in ("size", "stride") and not node.value.args:
        return SCALAR
    if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
        return SCALAR
    selected = _selected_by_device_indices(base, node, facts)
    if selected is not None:
        return selected
    return Value(Kind.UNKNOWN, origin=base.origin, root=base.root, path=base.path)


def _selected_by_device_indices(base: Value, node: cst.Subscript, facts: Facts) -> Optional[Value]:
    """`x[idx]` of an `x` nothing tells about, `idx` a device tensor of one dimension or more
    (`data_batch_idxs[source_atom_index]`, a mask): advanced indexing, which PyTorch runs only
    where `x` is on `idx`'s device (a CPU tensor indexed by device indices raises, a list or a
    numpy array cannot take them), so `x` and the result are on the device.  Its rank is not
    known (the index's dimensions replace `x`'s first)."""
    if base.kind != Kind.UNKNOWN or base.element is not None or base.items is not None or base.key is not None \
            or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = infer(node.slice[0].slice.value, facts)
    if index.kind != Kind.DEVICE or index.rank is None or index.rank < 1:
        return None
    return Value(Kind.DEVICE, None, Origin.LOCAL, evidence=index.evidence).because(LocalStep(
        f"indexed with a device tensor of {index.rank} dimension{'s' if index.rank > 1 else ''} here "
        f"(`{_callee_text(node.value)}[...]`): advanced indexing runs only on that device (a CPU tensor "
        "indexed by device indices raises), so what it selects is there", node))


def string_key(node: cst.BaseExpression) -> Optional[str]:
    """The text of a plain string literal (`"buf"`), the key of a dict display or subscript;
    None for anything else (an f-string, a name, a concatenation)."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        text = node.evaluated_value
        return text if isinstance(text, str) else None
    return None


def keyed_dict(pairs: Sequence[Tuple[str, Value]]) -> Value:
    """A dict built with constant string keys (`dict(buf=t, n=3)`): each key's value
    (`entries`), and their join as what any other key reads (`element`)."""
    element = pairs[0][1]
    for _, v in pairs[1:]:
        element = join(element, v)
    return Value(Kind.OTHER, element=element, key=OTHER, entries=tuple(pairs))


def _held(element: Value, container: Value) -> Value:
    """An element of `container`: a number or a tuple it holds is one for the container's
    reasons (`ranges: Dict[K, Tuple[int, int]]` declares `ranges[k][0]` an int)."""
    if element.evidence or not container.evidence or element.kind not in (Kind.SCALAR, Kind.OTHER):
        return element
    return element.because(*container.evidence)


# The `type_name` of a scipy sparse matrix (`scope.non_tensor_checks`).
SPARSE_MATRIX = "scipy.sparse"


def _binary(left: Value, right: Value, node: Optional[cst.BinaryOperation] = None) -> Value:
    if node is not None and isinstance(node.operator, _LOGICAL_OPERATORS) and boolean_result(left) \
            and boolean_result(right):
        # `m & (s == DONE)` of two tests' results: a bool (or an array of them) again.
        return left if left.kind == right.kind else Value(Kind.UNKNOWN, integer=NON_INTEGER)
    if left.kind == Kind.SCALAR and right.kind == Kind.SCALAR:
        # `end - begin` of declared ints: a number for the operands' reasons (the evidence).
        reasons = left.evidence + tuple(s for s in right.evidence if s not in left.evidence)
        return SCALAR.because(*reasons) if reasons else SCALAR
    if node is not None and isinstance(node.operator, _INTEGER_OPERATORS):
        for a, b in ((left, right), (right, left)):
            if ordered_number(a) and (ordered_number(b) or plain_number(b)):
                # `i - self.unroll` of a value ordered against a number (`scope.compared_names`)
                # and an int: an int where it indexes (a float raises there), unless a
                # one-element tensor, for the ordered operand's reasons.
                return Value(Kind.UNKNOWN, origin=Origin.LOCAL, integer=True, evidence=a.evidence + tuple(
                    s for s in b.evidence if s not in a.evidence))
    if node is not None and (left.element is not None or right.element is not None) \
            and not left.kind.is_tensor and not right.kind.is_tensor:
        # `[t] + [t.clone() for _ in r]`, `[t] * k`: a list of the same elements.
        if isinstance(node.operator, cst.Add) and left.element is not None and right.element is not None:
            return Value(Kind.OTHER, element=join(left.element, right.element))
        if isinstance(node.operator, cst.Multiply):
            return Value(Kind.OTHER, element=left.element or right.element)
    for a, b in ((left, right), (right, left)):
        if a.kind == Kind.OTHER and a.type_name == SPARSE_MATRIX and not b.kind.is_tensor:
            # `sp.eye(n) + adj` of a scipy matrix (`scope.non_tensor_checks`): scipy's operators
            # give a matrix (or an array), never a tensor.
            return Value(Kind.OTHER, type_name=SPARSE_MATRIX)
        if a.kind.is_tensor and (b.kind in (Kind.SCALAR,) or b.kind.is_tensor):
            kind = Kind.DEVICE if Kind.DEVICE in (a.kind, b.kind) else a.kind
            if b.kind.is_tensor and b.kind != a.kind and Kind.DEVICE not in (a.kind, b.kind):
                kind = Kind.TENSOR
            # A host object (a configuration's field) may be a list: broadcasting may add dimensions.
            rank = (a.rank if plain_number(b) else None) if b.kind == Kind.SCALAR else (
                max(a.rank, b.rank) if a.rank is not None and b.rank is not None else None
            )
            if node is not None and isinstance(node.operator, cst.MatrixMultiply):
                # `a @ b` contracts dimensions, not broadcast elementwise (`torch_api.matmul_rank`;
                # a Python number as an operand raises).
                rank = matmul_rank(left.rank, right.rank) if b.kind.is_tensor else None
            evidence = a.evidence if a.kind == kind else (b.evidence if b.kind == kind else ())
            return Value(kind, rank, Origin.LOCAL, evidence=evidence, integer=_arithmetic_integer(node, left, right))
    for a, b in ((left, right), (right, left)):
        if a.kind == Kind.DEVICE and a.rank != 0 and b.kind == Kind.UNKNOWN:
            # `dev & other`, `dev * w`: whatever `other` is, an operator that succeeds gives a
            # tensor on `dev`'s device (a CPU operand must be 0-dim, anything else is moved
            # there or raises).  Only a 0-dim device operand can yield a CPU result, so its
            # rank must not be 0; the result's rank is open (broadcasting).
            return Value(Kind.DEVICE, None, Origin.LOCAL, evidence=a.evidence)
    if Kind.NUMPY in (left.kind, right.kind):
        return Value(Kind.NUMPY)
    if Kind.OTHER in (left.kind, right.kind) and Kind.SCALAR in (left.kind, right.kind):
        return OTHER  # `[0] * n`, `"ab" * 2`
    return UNKNOWN


_INTEGER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
_LOGICAL_OPERATORS = (cst.BitAnd, cst.BitOr, cst.BitXor)


def _arithmetic_integer(node: Optional[cst.BinaryOperation], left: Value, right: Value) -> Optional[bool]:
    """`Value.integer` of a tensor's arithmetic: `/` gives a floating tensor (`NON_INTEGER`);
    integer arithmetic keeps an integer dtype (`_integer_arithmetic`); else not known."""
    if node is None:
        return False
    if isinstance(node.operator, cst.Divide):
        return NON_INTEGER
    return _integer_arithmetic(node, left, right)


def _integer_arithmetic(node: cst.BinaryOperation, left: Value, right: Value) -> bool:
    """`count - 1`, `idx * 2 + off`: `+ - * // %` of integer tensors with each other or with
    int literals keep an integer dtype (PyTorch's type promotion: a Python int does not
    promote an integer tensor); `/` and float operands give floats."""
    if not isinstance(node.operator, _INTEGER_OPERATORS):
        return False
    sides = ((left, node.left), (right, node.right))
    return any(v.kind.is_tensor for v, _ in sides) and all(
        v.integer if v.kind.is_tensor else literal_int(n) is not None for v, n in sides)


_IDENTITY_OR_MEMBERSHIP = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def _comparison(node: cst.Comparison, facts: Facts) -> Value:
    """`a is None`, `k in d` are Python bools; `a == b` is one only when neither side may be
    an array (`mask == 1` on a tensor is a boolean tensor: an index mask, not a scalar).

    An ordering or equality test of anything else is a boolean too (a Python bool, or an
    array of them where a side is an array an annotation calls an instance: `info.status ==
    Status.DONE` of an `np.ndarray` field), so it carries `NON_INTEGER`: as an index it is a
    mask (`t[True]` adds a dimension), never one element (`index_effect`)."""
    if all(isinstance(c.operator, _IDENTITY_OR_MEMBERSHIP) for c in node.comparisons):
        return SCALAR
    operands = [infer(node.left, facts)] + [infer(c.comparator, facts) for c in node.comparisons]
    for operand in operands:
        if operand.kind.is_tensor:
            return Value(operand.kind, operand.rank, Origin.LOCAL, integer=NON_INTEGER, evidence=operand.evidence)
    if all(o.kind in (Kind.SCALAR, Kind.OTHER) for o in operands):
        return BOOLEAN
    return Value(Kind.UNKNOWN, integer=NON_INTEGER)


# A Python bool a test gives (`a == b` of numbers): a number, but no integer index.
BOOLEAN = Value(Kind.SCALAR, integer=NON_INTEGER)


def boolean_result(value: Value) -> bool:
    """A comparison's result that is no tensor (`_comparison`): a Python bool or an array of
    them, which indexes as a mask, not as one element."""
    return value.integer is NON_INTEGER and value.kind in (Kind.SCALAR, Kind.UNKNOWN)


def _named_device(name: str, found: Value, facts: Facts) -> Value:
    """`found`, the value of `name`, where nothing says where it is: on the accelerator when
    the function passes `name.device` as a place (`Facts.device_named`), or binds `name_cpu`
    beside it (the device half of a CPU/device pair, as a field beside its `_cpu` sibling
    field is), as a convention.  A value known to be something else than a tensor (a
    container, an instance of a class) is kept; so is any value in a dataset's methods
    (`Facts.data_loading`: host processes) and a name with a host suffix itself."""
    if facts.data_loading or facts.device_named is None:
        return found
    if found.kind == Kind.UNKNOWN and (found.type_name is not None or found.element is not None
                                       or found.items is not None or found.entries is not None):
        return found
    call = facts.device_named.get(name)
    if call is None:
        sibling = facts.device_named.sibling(name) if not name.endswith(CPU_SUFFIXES) else None
        if sibling is None:
            return found
        return replace(found, kind=Kind.DEVICE).because(LocalStep(
            f"`{name}` has a host sibling `{sibling.value}` bound here (convention: the device half of a "
            "CPU/device pair)", sibling, kind=EvidenceKind.CONVENTION.value))
    return replace(found, kind=Kind.DEVICE).because(LocalStep(
        f"`{name}.device` is passed as a place here: nothing in the project proves where `{name}` is, "
        f"and a tensor code allocates or moves onto is taken to be on the accelerator", call,
        kind=EvidenceKind.CONVENTION.value))


def infer(node: cst.BaseExpression, facts: Facts) -> Value:
    """The abstract value of `node`.  Unknown stays unknown."""
    value = _infer(node, facts)
    if isinstance(node, (cst.Call, cst.Subscript, cst.Attribute, cst.BinaryOperation,
                         cst.UnaryOperation)):
        # Pinned or pageable host memory (H2D003), from `lint_h2d.inference.memory`.
        return annotate_memory(node, facts, value, infer)  # type: ignore[arg-type]
    return value


def _infer(node: cst.BaseExpression, facts: Facts) -> Value:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return SCALAR
    if isinstance(node, cst.Name):
        found = facts.names.get(node.value)
        if found is not None:
            if found.kind == Kind.UNKNOWN and (facts.device_hints or facts.cpu_hints):
                found = _hinted(node.value, found, node, facts)
            if found.kind in (Kind.TENSOR, Kind.UNKNOWN) and facts.device_named is not None:
                return _named_device(node.value, found, facts)
            return found
        if node.value in ("True", "False"):
            return SCALAR
        if node.value == "None":
            return NONE
        return _hinted(node.value, _by_name_convention(node.value, UNKNOWN), node, facts)
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return _string_place(node)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        starred = any(isinstance(e, cst.StarredElement) for e in node.elements)
        if starred:
            return OTHER
        values = tuple(infer(e.value, facts) for e in node.elements)
        element = None
        if values:
            element = values[0]
            for v in values[1:]:
                element = join(element, v)
        return Value(Kind.OTHER, length=len(node.elements), element=element,
                     items=values if isinstance(node, cst.Tuple) else None)
    if isinstance(node, cst.Dict):
        values = tuple(infer(e.value, facts) for e in node.elements if isinstance(e, cst.DictElement))
        if values and len(values) == len(node.elements):
            element = values[0]
            for v in values[1:]:
                element = join(element, v)
            keys = [infer(e.key, facts) for e in node.elements if isinstance(e, cst.DictElement)]
            key = keys[0]
            for k in keys[1:]:
                key = join(key, k)
            names = [string_key(e.key) for e in node.elements if isinstance(e, cst.DictElement)]
            entries = tuple((n, v) for n, v in zip(names, values) if n is not None) \
                if None not in names else None
            return Value(Kind.OTHER, element=element, key=key, entries=entries)
        return EMPTY_DICT if not node.elements else OTHER
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return Value(Kind.OTHER, element=_comprehension_element(node.elt, node.for_in, facts))
    if isinstance(node, cst.DictComp):
        return Value(Kind.OTHER, element=_comprehension_element(node.value, node.for_in, facts),
                     key=_comprehension_element(node.key, node.for_in, facts))
    if isinstance(node, cst.Lambda):
        # `make = lambda: torch.zeros(n, device=d)`: calling it gives what its body gives, read
        # where it is defined (its parameters nothing known, the names it closes over as here),
        # as a nested `def`'s `return`s are.
        called = layer(facts.names)
        for param in every_param(node.params):
            called[param.name.value] = UNKNOWN
        # It runs when called, not here: a `with torch.device(...)` around the definition does not apply.
        return Value(Kind.OTHER, returns=infer(node.body, replace(facts, names=called, default_device=None)))
    if isinstance(node, cst.UnaryOperation):
        inner = infer(node.expression, facts)
        if isinstance(node.operator, cst.Not):
            return SCALAR if inner.kind == Kind.SCALAR else UNKNOWN
        if inner.kind == Kind.SCALAR:
            return SCALAR
        if inner.kind.is_tensor:
            return Value(inner.kind, inner.rank, Origin.LOCAL, evidence=inner.evidence)
        return UNKNOWN
    if isinstance(node, cst.BinaryOperation):
        return _binary(infer(node.left, facts), infer(node.right, facts), node)
    if isinstance(node, cst.BooleanOperation):
        left, right = infer(node.left, facts), infer(node.right, facts)
        return SCALAR if left.kind == right.kind == Kind.SCALAR else UNKNOWN
    if isinstance(node, cst.Comparison):
        return _comparison(node, facts)
    if isinstance(node, cst.IfExp):
        holds = gpu_test(node.test, facts)
        if holds is not None:
            # `t.cuda() if use_gpu else t`: the side taken where the accelerator is in use.
            chosen, other = (node.body, node.orelse) if holds else (node.orelse, node.body)
            return gpu_side(infer(chosen, facts), infer(other, facts), node.test)
        # `x if flag else None`: an optional value; subscripting None raises anyway, so a
        # write through it is a write into the other side.
        for side, other in ((node.body, node.orelse), (node.orelse, node.body)):
            if isinstance(other, cst.Name) and other.value == "None":
                return _checked_side(node, side, facts)
        return join(_checked_side(node, node.body, facts), _checked_side(node, node.orelse, facts))
    if isinstance(node, cst.Call):
        return _call(node, facts)
    if isinstance(node, cst.Attribute):
        return _attribute(node, facts)
    if isinstance(node, cst.Subscript):
        return _subscript(node, facts)
    if isinstance(node, cst.NamedExpr):
        return infer(node.value, facts)
    return UNKNOWN


def _string_place(node: cst.BaseExpression) -> Value:
    """A string literal: the place it names when it is a device spec (`"cpu"`, `"cuda:0"`),
    as `torch.device(...)` of it would be, so that `self.device = "cpu"` read later as
    `device=self.device` is the CPU (the summary's `place_term` reads it the same way); any
    other string (and `"meta"`, no storage) is just an object."""
    text = _string_value(node)
    term = place_term(text) if text is not None else None
    if term is None or term[1] == "meta":
        return OTHER
    return Value(Kind.CPU_PLACE if term[1] == "cpu" else Kind.DEVICE_PLACE)


def _comprehension_element(elt: cst.BaseExpression, for_in: cst.CompFor, facts: Facts) -> Value:
    """The value of a comprehension's element, with its loop variables bound (over the
    enclosing names, read through rather than copied: `names.layer`)."""
    names = layer(facts.names)
    clause: Optional[cst.CompFor] = for_in
    while clause is not None:
        item = element_of(infer(clause.iter, facts.with_names(names)))
        if isinstance(clause.iter, cst.Call) and isinstance(clause.iter.func, cst.Name) \
                and clause.iter.func.value == "range" and clause.iter.func.value not in names:
            item = SCALAR
        _bind_pattern(clause.target, item or UNKNOWN, names)
        clause = clause.inner_for_in
    return infer(elt, facts.with_names(names))


def _bind_pattern(target: cst.BaseExpression, value: Value, names: MutableMapping[str, Value]) -> None:
    if isinstance(target, cst.Name):
        names[target.value] = value
    elif isinstance(target, (cst.Tuple, cst.List)):
        items = value.items
        for i, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                _bind_pattern(element.value, OTHER, names)
                items = None
                continue
            item = items[i] if items is not None and len(items) == len(target.elements) else UNKNOWN
            _bind_pattern(element.value, item, names)


def surely_evaluated(test: cst.BaseExpression, holds: bool) -> Tuple[Tuple[cst.BaseExpression, bool], ...]:
    """The parts of `test` that surely ran when it evaluated to `holds`, each with the truth it
    had: through `not`, every operand of a true `and` or of a false `or` (otherwise either
    operand may have decided alone, and the other not run)."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    if isinstance(test, cst.BooleanOperation):
        if holds == isinstance(test.operator, cst.And):
            return surely_evaluated(test.left, holds) + surely_evaluated(test.right, holds)
        return ()
    return ((test, holds),)


def isinstance_checks(test: cst.BaseExpression, holds: bool) -> Tuple[Tuple[str, cst.BaseExpression], ...]:
    """The (name, class expression) pairs of the `isinstance(name, C)` checks that `test`
    evaluating to `holds` proves true: `isinstance(x, C)` when true, `not isinstance(x, C)`
    when false, and every operand of a true `and` (or of a false `or`).  Nothing else is read
    as proof."""
    found: List[Tuple[str, cst.BaseExpression]] = []
    for part, truth in surely_evaluated(test, holds):
        if not truth or not (isinstance(part, cst.Call) and isinstance(part.func, cst.Name)
                             and part.func.value == "isinstance" and len(part.args) == 2
                             and all(a.keyword is None and not a.star for a in part.args)):
            continue
        subject = part.args[0].value
        if isinstance(subject, cst.Name):
            found.append((subject.value, part.args[1].value))
    return tuple(found)


def gpu_test(test: cst.BaseExpression, facts: Facts) -> Optional[bool]:
    """`gpu_mode.gpu_mode` of `test` in the scope `facts` describes (`self.x` a field of its
    class that holds an accelerator switch)."""
    return gpu_mode(test, facts.self_name, lambda: facts.gpu_flag_fields(facts.self_class))


def gpu_side(chosen: Value, dropped: Value, test: cst.BaseExpression) -> Value:
    """What the side a `gpu_test` selects gives, `chosen`, with the convention said where it
    decides the place (a device tensor there, anything else on the side dropped)."""
    if chosen.kind != Kind.DEVICE or join(chosen, dropped).kind == Kind.DEVICE:
        return chosen
    return chosen.because(LocalStep(
        f"`{one_line(test)}` tests whether an accelerator is in use: serving code runs where one is and "
        f"takes what the test selects there (the other branch runs only without one)", test,
        EvidenceKind.CONVENTION.value))


def _checked_side(choice: cst.IfExp, side: cst.BaseExpression, facts: Facts) -> Value:
    """A side of `x if isinstance(x, Pool) else Pool.load(x)`: the side the test's truth
    selects, when it is a name the test proves an instance of a class (`isinstance_checks`)
    and no class or tensor is known of it (a parameter `char_dict: Union[str, Vocab]`), is an
    instance of that class, or a number for `int` / `float` / `bool` (as the summary's
    `_checked_instance`); else what the side is."""
    value = infer(side, facts)
    if value.kind not in (Kind.UNKNOWN, Kind.OTHER) or value.type_name is not None or not isinstance(side, cst.Name):
        return value
    for name, types in isinstance_checks(choice.test, side is choice.body):
        if name != side.value:
            continue
        kind, type_name = _declared_kind(types, facts)
        if kind == Kind.SCALAR:
            return replace(SCALAR, evidence=value.evidence)
        if kind == Kind.OTHER and type_name is not None:
            return Value(Kind.OTHER, type_name=type_name, evidence=value.evidence)
    return value


def annotation_value(annotation: Optional[cst.Annotation], facts: Facts) -> Tuple[Kind, Optional[str]]:
    """Kind (and class name) declared by a parameter annotation."""
    if annotation is None:
        return Kind.UNKNOWN, None
    node = _unquoted(annotation.annotation)
    if node is None or one_or_many(cst.Annotation(node), facts) is not None:
        return Kind.UNKNOWN, None  # (`int | list[int]`: a number or a container)
    return _declared_kind(node, facts)


def _declared_kind(node: cst.BaseExpression, facts: Facts) -> Tuple[Kind, Optional[str]]:
    """`annotation_value` of an unquoted annotation that is no "one or many" union (the caller
    has asked `one_or_many`); its parts are asked again (`annotation_value`)."""
    # `X | None`, Optional[X]
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        for side in (node.left, node.right):
            if not (isinstance(side, cst.Name) and side.value == "None"):
                return annotation_value(cst.Annotation(side), facts)
    if isinstance(node, cst.Subscript):
        head = dotted_name(node.value) or ""
        if head.split(".")[-1] == "Optional" and node.slice:
            inner = node.slice[0].slice
            if isinstance(inner, cst.Index):
                return annotation_value(cst.Annotation(inner.value), facts)
        return Kind.OTHER, None
    name = dotted_name(node)
    if name is None:
        return Kind.UNKNOWN, None
    last = name.split(".")[-1]
    if name in ("int", "float", "bool"):
        return Kind.SCALAR, None
    if last == "Tensor" or last in LEGACY_TENSOR_TYPES:
        return Kind.TENSOR, None
    if name in ("torch.device", "device"):
        return Kind.DEVICE_PLACE, None
    if last == "ndarray":
        return Kind.NUMPY, None
    if name in ("list", "dict", "tuple", "set", "str", "bytes", "List", "Dict", "Tuple", "Set"):
        return Kind.OTHER, None
    if facts.project.enums.get(last) == INT_ENUM:
        return Kind.SCALAR, None  # `mode: Mode` of an `IntEnum`: an int (`Resolved.enums`)
    return Kind.OTHER, last


_SEQUENCE_ANNOTATIONS = frozenset({
    "list", "List", "Sequence", "MutableSequence", "Iterable", "Iterator", "Collection", "set",
    "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet", "deque", "Deque",
})
_MAPPING_ANNOTATIONS = frozenset({
    "dict", "Dict", "Mapping", "MutableMapping", "defaultdict", "DefaultDict", "OrderedDict",
})


def annotated_value(annotation: Optional[cst.Annotation], facts: Facts) -> Value:
    """The value an annotation declares, with what a container holds: `list[Frame]` is a
    list of `Frame` instances, `dict[int, bool]` a dict whose iteration yields ints,
    `tuple[int, ...]` a tuple of ints, `tuple[Tensor, int]` a pair (issue 17, item 5)."""
    union = one_or_many(annotation, facts)
    if union is not None:
        return union
    unquoted = _unquoted(annotation.annotation) if annotation is not None else None
    if annotation is None or unquoted is None:
        return Value(Kind.UNKNOWN)
    kind, type_name = _declared_kind(unquoted, facts)  # (no union: asked just above)
    if kind != Kind.OTHER or type_name is not None:
        return Value(kind, type_name=type_name)
    node = _unoptional(annotation.annotation)
    if not isinstance(node, cst.Subscript):
        return Value(kind)
    head = (dotted_name(node.value) or "").split(".")[-1]
    args = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
    if len(args) != len(node.slice) or not args:
        return Value(kind)
    if head in ("Type", "type") and len(args) == 1:
        # `metric_class: Type[Metrics]`: a class object; calling it builds a `Metrics` (or an
        # instance of a subclass) where the project defines `Metrics`, as the summary's
        # `class_annotation` and the resolver's `built` terms read it.
        built = annotated_value(cst.Annotation(args[0]), facts)
        shown = dotted_name(args[0]) if not isinstance(args[0], cst.SimpleString) else None
        if built.kind == Kind.OTHER and built.type_name is not None \
                and not (shown or "").startswith(("nn.", "torch.")) \
                and facts.project.knows_class(built.type_name):
            return Value(Kind.OTHER, returns=Value(Kind.OTHER, type_name=built.type_name))
        return Value(kind)
    inner = [annotated_value(cst.Annotation(a), facts) for a in args]
    if head == "Callable" and len(args) == 2 and inner[1].kind == Kind.SCALAR:
        # `get_env_idx: Callable[[], int]`: calling it gives a Python number (the walk adds
        # the annotation as evidence where it binds the parameter).
        return Value(Kind.OTHER, returns=inner[1])
    if head in _SEQUENCE_ANNOTATIONS and len(args) == 1:
        return Value(Kind.OTHER, element=inner[0])
    if head in _MAPPING_ANNOTATIONS and len(args) == 2:
        return Value(Kind.OTHER, element=inner[1], key=inner[0])
    if head in ("tuple", "Tuple"):
        if len(args) == 2 and isinstance(args[1], cst.Ellipsis):
            return Value(Kind.OTHER, element=inner[0])
        if any(isinstance(a, cst.Ellipsis) for a in args):
            return Value(kind)
        return Value(Kind.OTHER, length=len(inner), element=join_all(inner), items=tuple(inner))
    return Value(kind)


def one_or_many(annotation: Optional[cst.Annotation], facts: Facts) -> Optional[Value]:
    """`int | list[int]`, `Union[float, Sequence[float]]` ("one or many", `None` aside): the
    join of a number and a container, which iterates and indexes as the container (a number
    cannot be iterated or indexed), and is neither a number nor a container for anything else.
    None for an annotation that is no such union (`Tensor | int` keeps its first member)."""
    if annotation is None:
        return None
    node = _unquoted(annotation.annotation)
    if node is None:
        return None
    members = [m for m in _union_members(node) if not (isinstance(m, cst.Name) and m.value == "None")]
    if len(members) < 2:
        return None
    values = [annotated_value(cst.Annotation(m), facts) for m in members]
    if not all(v.kind == Kind.SCALAR or v.kind == Kind.OTHER and v.element is not None for v in values) \
            or all(v.kind == Kind.SCALAR for v in values):
        return None
    return replace(join_all(values), rank=None)


def _union_members(node: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The members of `A | B | C`, `Union[A, B, C]` or `Optional[A]` (with `None`; one member
    for anything else)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    if isinstance(node, cst.Subscript) and (dotted_name(node.value) or "").split(".")[-1] in ("Union", "Optional") \
            and all(isinstance(e.slice, cst.Index) for e in node.slice):
        return [m for e in node.slice if isinstance(e.slice, cst.Index) for m in _union_members(e.slice.value)]
    return [node]


def _unquoted(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """A string annotation's expression (`"Frame"`, `"int | list[int]"`), the node itself for
    any other annotation; None for a string that is no expression.  A qualifier is looked
    through (`ClassVar[int]`, `Final[int]`, `Annotated[int, ...]`: an int, `_unqualified`)."""
    if not isinstance(node, cst.SimpleString):
        return _unqualified(node)
    try:
        parsed = cst.parse_expression(ast.literal_eval(node.value))
    except Exception:
        return None
    return _unqualified(parsed)


def _unqualified(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`ClassVar[X]`, `Final[X]`, `Annotated[X, ...]` (also quoted inside) → X's expression;
    any other node itself."""
    if isinstance(node, cst.Subscript) and (dotted_name(node.value) or "").split(".")[-1] in ANNOTATION_QUALIFIERS \
            and node.slice and isinstance(node.slice[0].slice, cst.Index):
        return _unquoted(node.slice[0].slice.value)
    return node


def _unoptional(node: cst.BaseExpression) -> cst.BaseExpression:
    """`X | None`, `Optional[X]`, `"X"` → X (the parts `annotation_value` looks through)."""
    unquoted = _unquoted(node)
    if unquoted is None:
        return node
    node = unquoted
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        sides = [x for x in (node.left, node.right) if not (isinstance(x, cst.Name) and x.value == "None")]
        return _unoptional(sides[0]) if len(sides) == 1 else node
    if isinstance(node, cst.Subscript) and (dotted_name(node.value) or "").split(".")[-1] == "Optional" \
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _unoptional(node.slice[0].slice.value)
    return node
