"""Which host memory backs a CPU tensor: pinned (page-locked) or pageable (H2D003).

A host-to-device copy with `non_blocking=True` is asynchronous only when its source is
pinned: from pageable memory the CUDA/HIP runtime stages the bytes and the host waits for the
stream.  This module adds that fact to the values `expressions.infer` computes, as
:class:`~lint_h2d.inference.values.HostMemory` on `Value.memory`, so that it flows through
names, `self.` fields, views, slices, containers and loops with everything else the walk knows.

The PyTorch facts it rests on:

* factories (`torch.zeros/empty/ones/full/arange/tensor/eye/linspace/...`) on the CPU allocate
  pageable memory unless `pin_memory=` is truthy; `torch.from_numpy` / `torch.as_tensor`
  share the array's memory (pageable unless the array views pinned torch memory, like vLLM's
  `CpuGpuBuffer.np`);
* `.pin_memory()` returns pinned memory; views and slices share their base's memory;
* every other CPU op that allocates (arithmetic, `torch.cat`, `clone`, advanced indexing,
  dtype conversions) returns pageable memory, and so do the positions `torch.nonzero(m)`,
  `m.nonzero(as_tuple=True)`, `torch.argwhere(m)`, `torch.where(m)` give of a CPU `m` (each
  tensor of an index tuple), whichever memory `m` is in;
* `.cpu()` / `.to("cpu")` of a device tensor copy into pageable memory, except
  `.to("cpu", non_blocking=True)`, which PyTorch allocates pinned (the copy must be async).
"""
from __future__ import annotations

import ast

from dataclasses import replace
from typing import Callable, List, Optional

import libcst as cst

from lint_h2d.inference.torch_api import ALL_FACTORIES, NONZERO_OPS, SAME_DEVICE_FUNCTIONS
from lint_h2d.inference.values import HostMemory, Kind, LocalStep, Value

Infer = Callable[[cst.BaseExpression, "object"], Value]

# Factories that take `pin_memory=` (and therefore can be fixed by adding it).
PINNABLE_FACTORIES = frozenset(
    {"zeros", "empty", "ones", "full", "arange", "tensor", "eye", "linspace", "logspace",
     "rand", "randn", "randint", "randperm", "empty_strided"}
)
_SIZE_FACTORIES = frozenset({"zeros", "empty", "ones", "rand", "randn"})
_VIEW_FUNCTIONS = frozenset(
    {"narrow", "select", "squeeze", "unsqueeze", "transpose", "permute", "chunk", "split",
     "flatten", "reshape", "as_strided", "unbind"}
)
_CONVERSIONS = frozenset(
    {"int", "long", "float", "half", "bfloat16", "double", "bool", "short", "byte", "char",
     "type", "type_as", "contiguous"}
)
_FALSY = ("False", "None")


def keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The value passed as `name=` (None when absent; a `**kwargs` may still hold it)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional_args(call: cst.Call) -> List[cst.BaseExpression]:
    """The positional arguments whose position is known: those before the first `*args` (or
    `**kwargs`).  After `f(*a, x)` nobody knows which parameter `x` fills: taking it for the
    first would read `torch.arange(*bounds, 0)` as `arange(0)`, an empty tensor."""
    out: List[cst.BaseExpression] = []
    for arg in call.args:
        if arg.star:
            break
        if arg.keyword is None:
            out.append(arg.value)
    return out


def is_falsy_constant(node: cst.BaseExpression) -> bool:
    """`False`, `None`, `0`, `""`: a flag that is off whatever runs (vLLM's script: `bool()`)."""
    if isinstance(node, cst.Name):
        return node.value in _FALSY
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        try:
            return not ast.literal_eval(node.value)
        except (ValueError, SyntaxError):
            return False
    return False


def _code(node: cst.CSTNode) -> str:
    return " ".join(cst.Module([]).code_for_node(node).split())


def _short(node: cst.CSTNode, limit: int = 60) -> str:
    text = _code(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def pinned_by(call: cst.Call) -> Optional[HostMemory]:
    """The memory a `pin_memory=` keyword asks for; None when there is none."""
    pin = keyword_value(call, "pin_memory")
    if pin is None:
        return None
    if is_falsy_constant(pin):
        return HostMemory(False, evidence=(LocalStep(
            f"allocated by `{_short(call)}` with `pin_memory={_code(pin)}`", call),))
    shown = _code(pin)
    why = "" if shown == "True" else f" when `{shown}` is true"
    return HostMemory(True, evidence=(LocalStep(f"allocated pinned by `{_short(call)}`{why}", call),))


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and is_falsy_constant(node)


def _has_zero_size(node: cst.BaseExpression) -> bool:
    if _is_zero(node):
        return True
    if isinstance(node, (cst.Tuple, cst.List)):
        return any(not isinstance(e, cst.StarredElement) and _is_zero(e.value) for e in node.elements)
    return False


def zero_elements(call: cst.Call, name: str) -> bool:
    """A factory call that provably makes a tensor with no elements (`torch.zeros(0)`)."""
    if name in _SIZE_FACTORIES or name == "empty_strided":
        size = keyword_value(call, "size")
        if size is not None:
            return _has_zero_size(size)
        positional = positional_args(call)
        if name == "empty_strided":
            return bool(positional) and _has_zero_size(positional[0])
        return any(_has_zero_size(p) for p in positional)
    if name == "full":
        size = keyword_value(call, "size")
        positional = positional_args(call)
        first = size if size is not None else (positional[0] if positional else None)
        return first is not None and _has_zero_size(first)
    if name == "tensor":
        data = keyword_value(call, "data")
        positional = positional_args(call)
        first = data if data is not None else (positional[0] if positional else None)
        return isinstance(first, (cst.List, cst.Tuple)) and not first.elements
    if name in ("arange", "randperm"):
        positional = positional_args(call)
        return len(positional) == 1 and _is_zero(positional[0])
    return False


def factory_memory(call: cst.Call, name: str) -> HostMemory:
    """A CPU factory call's memory: pinned by `pin_memory=`, pageable otherwise."""
    empty = zero_elements(call, name)
    pinned = pinned_by(call)
    if pinned is not None:
        return replace(pinned, empty=empty, node=call)
    step = LocalStep(f"allocated by `{_short(call)}` without `pin_memory=`", call)
    return HostMemory(False, empty, call, (step,))


def _pageable(message: str, node: cst.CSTNode, kind: str = "direct") -> HostMemory:
    return HostMemory(False, evidence=(LocalStep(message, node, kind),))


def _first_tensor_of(node: cst.BaseExpression, facts: object, infer: Infer) -> Value:
    """The first argument of `torch.cat`-like functions: a display's first element, or a
    container's element type."""
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        return infer(node.elements[0].value, facts)
    value = infer(node, facts)
    if not value.kind.is_tensor and value.element is not None:
        return value.element
    return value


def _target_is_cpu(call: cst.Call, infer: Infer, facts: object) -> Optional[bool]:
    """`.to(...)`'s target: True for the CPU, False for something else, None without one."""
    from lint_h2d.inference.expressions import place_of, _is_dtype  # cycle: expressions imports us

    target = keyword_value(call, "device")
    if target is None:
        positional = positional_args(call)
        if not positional:
            return None
        target = positional[0]
    if _is_dtype(target, facts):  # type: ignore[arg-type]
        return None
    return place_of(target, facts) == Kind.CPU_PLACE  # type: ignore[arg-type]


def _non_blocking(call: cst.Call) -> bool:
    flag = keyword_value(call, "non_blocking")
    return flag is not None and not is_falsy_constant(flag)


def annotate(node: cst.BaseExpression, facts: object, value: Value, infer: Infer) -> Value:
    """`value` (what `infer` found for `node`) with the host memory behind it, when known."""
    if value.memory is not None or value.kind in (Kind.DEVICE, Kind.SCALAR, Kind.CPU_PLACE,
                                                  Kind.DEVICE_PLACE):
        return value
    memory: Optional[HostMemory] = None
    if isinstance(node, cst.Call):
        return _call(node, facts, value, infer)
    if isinstance(node, cst.Subscript):
        if value.kind not in (Kind.CPU, Kind.NUMPY, Kind.TENSOR):
            return value
        base = infer(node.value, facts)
        if base.memory is None:
            return value
        advanced = any(not isinstance(e.slice, cst.Slice) and not _basic_index(e, facts, infer)
                       for e in node.slice)
        memory = base.memory if not advanced or not base.memory.pinned else None
        if advanced and memory is not None:
            memory = replace(memory, node=None)
    elif isinstance(node, cst.Attribute):
        attr = node.attr.value
        if attr in ("T", "mT", "data", "real", "imag") and value.kind in (Kind.CPU, Kind.TENSOR):
            memory = infer(node.value, facts).memory
        elif attr == "np" and value.kind == Kind.NUMPY:
            memory = HostMemory(True, evidence=(LocalStep(
                "a `.np` view (convention: vLLM's CpuGpuBuffer, the numpy view of its pinned `.cpu`)",
                node, "convention"),))
    elif isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)):
        if value.kind in (Kind.CPU, Kind.NUMPY):
            memory = _pageable(f"computed on the host by `{_short(node)}`, a new pageable tensor", node)
        elif isinstance(node, cst.BinaryOperation) and value.kind in (Kind.UNKNOWN, Kind.TENSOR):
            host = _host_operand(infer(node.left, facts), infer(node.right, facts))
            if host is not None:
                value = Value(Kind.CPU, host.rank, value.origin)
                memory = _pageable(f"computed on the host by `{_short(node)}`, a new pageable tensor", node)
    if memory is None:
        return value
    return replace(value, memory=memory)


def _host_operand(left: Value, right: Value) -> Optional[Value]:
    """The CPU side of `a <op> b` when the result must be on the CPU: a CPU tensor of rank >= 1
    mixes only with CPU tensors and Python values (with a device tensor PyTorch raises), so
    an operand that is not known to be a tensor on the device leaves the result on the host."""
    for a, b in ((left, right), (right, left)):
        if a.kind == Kind.CPU and a.memory is not None and (a.rank or 0) >= 1 \
                and b.kind in (Kind.UNKNOWN, Kind.OTHER, Kind.SCALAR, Kind.TENSOR, Kind.CPU):
            return a
    return None


def _basic_index(element: cst.SubscriptElement, facts: object, infer: Infer) -> bool:
    """An index that makes a view (an int, `None`, `...`), not a gather."""
    sl = element.slice
    if not isinstance(sl, cst.Index) or sl.star is not None:
        return False
    index = sl.value
    if isinstance(index, (cst.Integer, cst.Ellipsis)):
        return True
    if isinstance(index, cst.Name) and index.value == "None":
        return True
    return infer(index, facts).kind == Kind.SCALAR


def _call(call: cst.Call, facts: object, value: Value, infer: Infer) -> Value:
    func = call.func
    if isinstance(func, cst.Name):
        # Project helpers named for pinned memory (`make_pinned(...)`, `pinned_buffer(...)`).
        if "pin" in func.value.lower() and "pin_memory" != func.value:
            return replace(value, memory=HostMemory(True, evidence=(LocalStep(
                f"returned by `{func.value}(...)` (convention: a pinned-buffer helper)", call,
                "convention"),)))
        return value
    if not isinstance(func, cst.Attribute):
        return value
    method = func.attr.value
    receiver_node = func.value
    torch_names = getattr(facts, "torch_names", frozenset({"torch"}))
    numpy_names = getattr(facts, "numpy_names", frozenset({"np", "numpy"}))
    names = getattr(facts, "names", {})
    if isinstance(receiver_node, cst.Name) and receiver_node.value not in names:
        module = receiver_node.value
        if module in torch_names:
            return _torch_function(call, method, facts, value, infer)
        if module in numpy_names and value.kind == Kind.NUMPY:
            return replace(value, memory=_pageable(
                f"a numpy array made by `{_short(call)}`", call))
    if "pin" in method.lower() and method not in ("pin_memory", "is_pinned"):
        if method.startswith(("_", "get", "make", "alloc", "new", "pinned")):
            return replace(value, memory=HostMemory(True, evidence=(LocalStep(
                f"returned by `.{method}(...)` (convention: a pinned-buffer helper)", call,
                "convention"),)))
    if method in NONZERO_OPS:
        return _new_positions(value, infer(receiver_node, facts), f".{method}(...)", call)
    if value.kind == Kind.OTHER:
        return value
    receiver = infer(receiver_node, facts)
    if method == "pin_memory" and value.kind in (Kind.CPU, Kind.TENSOR):
        return replace(value, memory=HostMemory(True, node=None, evidence=(LocalStep(
            "pinned by `.pin_memory()`", call),)))
    if method == "cpu" and not call.args:
        if receiver.kind == Kind.CPU:
            return replace(value, memory=receiver.memory) if receiver.memory else value
        if receiver.kind in (Kind.DEVICE, Kind.TENSOR, Kind.UNKNOWN):
            out = value if value.kind == Kind.CPU else Value(Kind.CPU, receiver.rank, value.origin)
            return replace(out, memory=_pageable(
                "copied to the host by `.cpu()`, into pageable memory", call,
                "direct" if receiver.kind == Kind.DEVICE else "convention"))
        return value
    if method == "to":
        cpu = _target_is_cpu(call, infer, facts)
        if cpu is None:  # a dtype change: same memory, or a new pageable tensor
            if receiver.memory is not None and not receiver.memory.pinned and value.kind == Kind.CPU:
                return replace(value, memory=receiver.memory)
            return value
        if not cpu:
            return value
        if receiver.kind == Kind.CPU:
            copy = keyword_value(call, "copy")
            if copy is not None and not is_falsy_constant(copy):
                return replace(value, memory=_pageable("copied on the host by `.to(..., copy=True)`", call))
            return replace(value, memory=receiver.memory) if receiver.memory else value
        if receiver.kind not in (Kind.DEVICE, Kind.TENSOR, Kind.UNKNOWN):
            return value
        out = value if value.kind == Kind.CPU else Value(Kind.CPU, receiver.rank, value.origin)
        if _non_blocking(call):
            if receiver.kind != Kind.DEVICE:
                return out
            return replace(out, memory=HostMemory(True, evidence=(LocalStep(
                "copied to the host with `non_blocking=True`: PyTorch allocates it pinned", call),)))
        return replace(out, memory=_pageable(
            "copied to the host by `.to(\"cpu\")`, into pageable memory", call,
            "direct" if receiver.kind == Kind.DEVICE else "convention"))
    if receiver.memory is None:
        return value
    if method == "numpy" and value.kind == Kind.NUMPY:
        return replace(value, memory=receiver.memory)
    if receiver.kind == Kind.NUMPY and value.kind == Kind.NUMPY:
        if method in ("reshape", "view", "ravel", "squeeze", "transpose"):
            return replace(value, memory=receiver.memory)
        return replace(value, memory=_pageable(f"a new numpy array made by `.{method}(...)`", call))
    if value.kind not in (Kind.CPU, Kind.TENSOR) or receiver.kind not in (Kind.CPU, Kind.TENSOR):
        return value
    if not receiver.memory.pinned:
        # Every result of a pageable tensor is pageable: a view shares it, a new one is new.
        return replace(value, memory=replace(receiver.memory, node=None))
    if method in _CONVERSIONS:
        return value  # the receiver itself when nothing changes, a new tensor otherwise
    if method.endswith("_") and not method.startswith("_"):
        return replace(value, memory=receiver.memory)
    return replace(value, memory=_pageable(f"a new host tensor made by `.{method}(...)`", call))


# What gives the positions of a tensor's nonzero elements: new tensors, allocated where the
# input is (`torch.where` with the condition alone).
_POSITION_FUNCTIONS = NONZERO_OPS | {"where"}


def _new_positions(value: Value, source: Value, shown: str, call: cst.Call) -> Value:
    """`torch.nonzero(keep)` / `keep.nonzero(as_tuple=True)` of a CPU `keep`: the positions are
    new host tensors in pageable memory, whichever memory `keep` is in; each tensor of an
    index tuple (`as_tuple=True`, `torch.where(keep)`) is one.  `value` unchanged otherwise."""
    if source.kind != Kind.CPU:
        return value
    memory = _pageable(f"positions computed on the host by `{shown}`, new pageable tensors", call)
    def fresh(held: Value) -> Value:
        return replace(held, memory=memory) if held.kind == Kind.CPU else held
    if value.kind == Kind.OTHER:
        return replace(value, element=fresh(value.element) if value.element is not None else None,
                       items=tuple(fresh(item) for item in value.items) if value.items is not None else None)
    return fresh(value)


def _torch_function(call: cst.Call, name: str, facts: object, value: Value, infer: Infer) -> Value:
    positional = positional_args(call)
    if name in _POSITION_FUNCTIONS and (name != "where" or len(call.args) == 1) and positional:
        return _new_positions(value, infer(positional[0], facts), f"torch.{name}(...)", call)
    if name in ("from_numpy", "frombuffer", "as_tensor", "asarray"):
        if value.kind not in (Kind.CPU, Kind.TENSOR):
            return value
        first = keyword_value(call, "data") or keyword_value(call, "obj") or (positional[0] if positional else None)
        source = infer(first, facts) if first is not None else None
        if source is not None and source.memory is not None:
            converts = keyword_value(call, "dtype") is not None
            if not converts or not source.memory.pinned:
                return replace(value, memory=replace(source.memory, node=None))
            return value
        if source is not None and source.kind.is_tensor and name in ("as_tensor", "asarray"):
            return value  # the tensor itself, memory unknown
        if name in ("as_tensor", "asarray") and source is not None and source.kind in (Kind.OTHER,):
            return replace(value, memory=_pageable(
                f"built from Python data by `torch.{name}(...)`", call))
        return replace(value, memory=_pageable(
            f"shares a numpy array's memory (`torch.{name}(...)`), pageable unless the array "
            "views pinned memory", call, "direct" if source is not None and source.kind == Kind.NUMPY else "convention"))
    if name in ALL_FACTORIES:
        if value.kind != Kind.CPU:
            return value
        if name.endswith("_like"):
            return replace(value, memory=_pageable(
                f"allocated by `torch.{name}(...)`", call))
        return replace(value, memory=factory_memory(call, name))
    if name in SAME_DEVICE_FUNCTIONS or name in _VIEW_FUNCTIONS:
        out = keyword_value(call, "out")
        if out is not None:
            target = infer(out, facts)
            return replace(value, memory=target.memory) if target.memory else value
        if not positional:
            return value
        source = _first_tensor_of(positional[0], facts, infer)
        if source.kind != Kind.CPU and value.kind != Kind.CPU:
            return value
        result = value
        if value.kind == Kind.UNKNOWN and source.kind == Kind.CPU:
            result = Value(Kind.CPU, None, value.origin)  # `torch.cat(list_of_cpu_tensors)`
        if name in _VIEW_FUNCTIONS and source.memory is not None:
            if not source.memory.pinned:
                return replace(result, memory=replace(source.memory, node=None))
            return result
        if result.kind == Kind.CPU:
            return replace(result, memory=_pageable(
                f"computed on the host by `torch.{name}(...)`, a new pageable tensor", call))
    return value
