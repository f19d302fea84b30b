"""Tests that ask whether the code runs on an accelerator (issue 17, recall).

Why: research and serving code often keeps a CPU path beside the GPU one, chosen by a flag or by
`torch.cuda.is_available()`:

    if self.use_gpu:                      # or `if torch.cuda.is_available():`
        feats = torch.zeros(1, n, d).cuda()
    else:
        feats = torch.zeros(1, n, d)
    feats[0, i, k] = 1.0                  # a blocking host-to-device copy on the GPU path

Joining the two paths makes `feats` a tensor of unknown place, and the write went unflagged.  On
the machines this tool is for, the accelerator is there and in use, so such a test holds (as
`"cuda" if use_gpu else "cpu"` is already read as the accelerator): the walk takes the branch the
test selects there and walks the other one silently (`scope._Walker.if_`), a convention said as
one in the evidence.

What counts (`gpu_mode`): `torch.cuda.is_available()`; a name, an attribute or a string-keyed
item whose last name is a GPU switch (`GPU_FLAGS`: `use_gpu`, `args.cuda`, `conf["use_cuda"]`);
`self.x` where every assignment of the field in its class is such a test (`gpu_flag_fields`:
`self.dp = conf["use_gpu"]`); and `not` / `and` / `or` of those only.  A GPU index (`args.gpu`,
`0` for the first GPU is false), a device comparison, or anything else mixed in is no such test.
"""
from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

# The last names of switches that turn the accelerator on.  Not `gpu` / `gpus` / `device`:
# those usually hold a device index or a list of them (`args.gpu == 0` is the first GPU), whose
# truth is no statement about the accelerator.  Not `self.cuda`: `nn.Module.cuda` is a method.
GPU_FLAGS = frozenset({
    "use_gpu", "use_cuda", "use_gpus", "on_gpu", "with_gpu", "with_cuda", "enable_gpu", "enable_cuda",
    "gpu_enabled", "cuda_enabled", "gpu_mode", "cuda", "is_gpu", "run_on_gpu", "gpu_available",
    "cuda_available", "has_cuda", "has_gpu",
})


def gpu_mode(test: cst.BaseExpression, self_name: Optional[str],
             flag_fields: Callable[[], FrozenSet[str]]) -> Optional[bool]:
    """What `test` evaluates to where the accelerator is present and switched on (every
    `gpu_atom` true), or None where it reads anything else.  `flag_fields` gives the fields of
    the method's class that hold such a switch (`gpu_flag_fields`), asked only for `self.x`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = gpu_mode(test.expression, self_name, flag_fields)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left = gpu_mode(test.left, self_name, flag_fields)
        right = gpu_mode(test.right, self_name, flag_fields)
        if left is None or right is None:
            return None
        return left and right if isinstance(test.operator, cst.And) else left or right
    return True if gpu_atom(test, self_name, flag_fields) else None


def gpu_atom(node: cst.BaseExpression, self_name: Optional[str],
             flag_fields: Callable[[], FrozenSet[str]]) -> bool:
    """`node` is true exactly where the accelerator is in use: `torch.cuda.is_available()`, a
    switch named in `GPU_FLAGS` (a name, the last name of an attribute, a string key), or
    `self.x` of a field holding one."""
    if isinstance(node, cst.Call) and not node.args:
        # `torch.cuda.is_available()`, `cuda.is_available()` (`from torch import cuda`).
        func = node.func
        return isinstance(func, cst.Attribute) and func.attr.value == "is_available" and (
            isinstance(func.value, cst.Name) and func.value.value == "cuda"
            or isinstance(func.value, cst.Attribute) and func.value.attr.value == "cuda")
    if isinstance(node, cst.Name):
        return node.value in GPU_FLAGS
    if isinstance(node, cst.Attribute):
        owner = node.value
        if isinstance(owner, cst.Name) and owner.value == self_name:
            # `self.use_gpu`, or `self.dp` set to a switch; never `self.cuda` (the module's method).
            return node.attr.value != "cuda" and (node.attr.value in GPU_FLAGS or node.attr.value in flag_fields())
        return node.attr.value in GPU_FLAGS
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        return isinstance(key, cst.SimpleString) and key.evaluated_value in GPU_FLAGS
    return False


def gpu_flag_fields(methods: Sequence[Tuple[str, Sequence[cst.BaseSmallStatement]]]) -> FrozenSet[str]:
    """The fields of a class that hold an accelerator switch, from its methods (each its first
    parameter's name and the assignments of its body: `scope._field_assignments`): every
    assignment `self.x = v` sets a `gpu_mode` test that holds there (`self.dp =
    model_conf["use_gpu"]`, `self.cuda_on = use_cuda and torch.cuda.is_available()`); a field
    also bound any other way (`self.x += 1`, a tuple target) is none."""
    values: Dict[str, List[Optional[cst.BaseExpression]]] = {}
    for self_name, smalls in methods:
        for small in smalls:
            for target, value in _bindings(small):
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                        and target.value.value == self_name:
                    values.setdefault(target.attr.value, []).append(value)
    none: Callable[[], FrozenSet[str]] = frozenset
    return frozenset(attr for attr, found in values.items() if found and all(
        v is not None and gpu_mode(v, None, none) is True for v in found))


def _bindings(small: cst.BaseSmallStatement) -> List[Tuple[cst.BaseExpression, Optional[cst.BaseExpression]]]:
    """The targets an assignment binds, each with the value it binds (None: not its own value,
    as an element of a tuple target or an augmented assignment)."""
    if isinstance(small, cst.Assign):
        out: List[Tuple[cst.BaseExpression, Optional[cst.BaseExpression]]] = []
        for target in small.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)):
                out.extend((element.value, None) for element in target.target.elements)
            else:
                out.append((target.target, small.value))
        return out
    if isinstance(small, cst.AnnAssign):
        # `self.x: bool` alone binds nothing.
        return [(small.target, small.value)] if small.value is not None else []
    if isinstance(small, cst.AugAssign):
        return [(small.target, None)]
    return []


def one_line(node: cst.CSTNode) -> str:
    """`node`'s source on one line, for a message."""
    return " ".join(cst.Module([]).code_for_node(node).split())
