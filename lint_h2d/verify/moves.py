"""Verifying H2D003 / H2D004 fixes: one expression before and after.

H2D004 (`torch.zeros(n).to(device)` → `torch.zeros(n, device=device)`): level 1 evaluates
both on the CPU for several sizes (the device spelled `"cpu"`) and compares values (bitwise,
except for `empty`), dtype, shape and device, errors included; level 2 runs both on the fake
CUDA device and counts the host-to-device copies in the aten trace (one before, none after).

H2D003 (`torch.zeros(n)` → `torch.zeros(n, pin_memory=True)`): the rewrite must carry
`pin_memory=`, and with pinning switched off (a CPU-only torch cannot pin) both allocations
must give the same values, dtype and shape.
"""
from __future__ import annotations

import ast
import builtins
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from lint_h2d.verify.equivalence import bitwise_equal
from lint_h2d.verify.pairs import StatementPair, free_names
from lint_h2d.verify.report import Row

SIZES = (0, 1, 5)
_CUDA_STRING = re.compile(r"""(["'])cuda(?::\d+)?\1""")
_PIN = re.compile(r"pin_memory=[^,)\n]+")


def _roles(code: str) -> Dict[str, str]:
    """What each free name is used as: 'device', 'dtype', 'tensor' (`x.device`) or 'int'."""
    roles: Dict[str, str] = {}
    tree = ast.parse(code, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and isinstance(node.value, ast.Name):
            if node.arg == "dtype":
                roles[node.value.id] = "dtype"
            elif node.arg == "device":
                roles[node.value.id] = "device"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            roles[node.value.id] = "tensor" if node.attr == "device" else "sized"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
            for arg in node.args:
                if isinstance(arg, ast.Name):
                    roles[arg.id] = "sized"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
            for arg in node.args[:1]:
                if isinstance(arg, ast.Name):
                    roles.setdefault(arg.id, "device")
    return roles


def _bindings(names: Sequence[str], roles: Dict[str, str], size: int, device: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name in names:
        role = roles.get(name, "int")
        if role == "device":
            out[name] = device
        elif role == "dtype":
            out[name] = torch.int32
        elif role == "tensor":
            out[name] = torch.zeros(1, device=device)
        elif role == "sized":  # `len(x)`, `x.numel()`, `x.shape[0]`: a host tensor of `size` elements
            out[name] = torch.zeros(size)
        else:
            out[name] = size
    return out


def _evaluate(code: str, ns: Dict[str, Any]) -> Tuple[Optional[Any], Optional[BaseException]]:
    try:
        return eval(compile(code, "<verify>", "eval"), dict(ns)), None  # noqa: S307 - our own fix text
    except Exception as exc:  # the original's errors must be the rewrite's errors
        return None, exc


def _same(a: Any, b: Any, values: bool) -> Optional[str]:
    """None when equal; else what differs."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return None if type(a) is type(b) else f"{type(a).__name__} vs {type(b).__name__}"
    for what, x, y in (("dtype", a.dtype, b.dtype), ("shape", tuple(a.shape), tuple(b.shape)),
                       ("device", a.device, b.device)):
        if x != y:
            return f"{what} {x} vs {y}"
    if values and a.numel() and not bitwise_equal(a, b):
        return "values differ"
    return None


def _on_cpu(code: str) -> str:
    """The expression on a CPU-only torch: the device is the CPU, and pinning (not observable in
    values, and impossible without an accelerator driver) is off."""
    code = _PIN.sub("pin_memory=False", code)
    return _CUDA_STRING.sub('"cpu"', code).replace(".cuda()", '.to("cpu")')


def cpu_equivalence(original: str, rewritten: str, values: bool = True) -> Tuple[Optional[bool], str]:
    """Level 1: both expressions on the CPU for each size; (verdict, detail)."""
    names = sorted(set(free_names(original)) | set(free_names(rewritten)))
    names = [n for n in names if n != "torch" and not hasattr(builtins, n)]
    roles = _roles(original)
    roles.update({k: v for k, v in _roles(rewritten).items() if k not in roles})
    ran = 0
    for size in SIZES:
        ns = {"torch": torch, **_bindings(names, roles, size, torch.device("cpu"))}
        before, err_before = _evaluate(_on_cpu(original), ns)
        after, err_after = _evaluate(_on_cpu(rewritten), ns)
        if err_before is not None or err_after is not None:
            if type(err_before) is not type(err_after):
                return False, f"size {size}: original {_what(err_before)}, rewrite {_what(err_after)}"
            continue
        problem = _same(before, after, values)
        if problem:
            return False, f"size {size}: {problem}"
        ran += 1
    if not ran:
        return None, "could not be run on the CPU"
    return True, f"{ran}/{len(SIZES)} sizes equal (values, dtype, shape, device)"


def _what(err: Optional[BaseException]) -> str:
    return "ran" if err is None else f"raised {type(err).__name__}"


def fake_cuda_copies(original: str, rewritten: str) -> Tuple[Optional[int], Optional[int], str]:
    """Level 2: host-to-device copies of each expression on the fake CUDA device."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from lint_h2d.verify.fake_cuda import OpRecorder, ensure_fake_cuda, is_h2d_copy

    ensure_fake_cuda()
    counts: List[int] = []
    names = sorted(n for n in set(free_names(original)) | set(free_names(rewritten))
                   if n != "torch" and not hasattr(builtins, n))
    roles = _roles(original)
    for code in (original, rewritten):
        with FakeTensorMode():
            ns = {"torch": torch, **_bindings(names, roles, 5, torch.device("cuda"))}
            recorder = OpRecorder()
            try:
                with recorder:
                    eval(compile(code, "<verify>", "eval"), ns)  # noqa: S307
            except Exception as exc:
                return None, None, f"fake cuda raised {type(exc).__name__}: {exc}"
        counts.append(sum(1 for op in recorder.ops if is_h2d_copy(op) or _is_upload(op.name, op.devices)))
    return counts[0], counts[1], ""


def _is_upload(name: str, devices: Tuple[str, ...]) -> bool:
    """`aten._to_copy` of a host tensor: in these expressions, the move to the fake CUDA device
    (the only other device there is)."""
    return name.startswith("aten._to_copy") and devices[:1] == ("cpu",)


def verify_move(pair: StatementPair, fake_cuda: bool) -> Row:
    # Parenthesized: a multi-line call with comments stays one expression.
    original = f"(\n{pair.original}\n)"
    rewritten = f"(\n{pair.rewritten}\n)"
    row = Row(pair.label, pair.code, pair.original, pair.rewritten)
    if pair.code == "H2D003":
        if "pin_memory=" not in rewritten:
            row.equivalent, row.detail = False, "the rewrite does not pin the source"
            return row
        unpinned = _PIN.sub("pin_memory=False", rewritten)
        row.equivalent, detail = cpu_equivalence(original, unpinned)
        row.detail = f"{pair.applicability} fix; pin_memory present on the source; with pinning off: {detail}"
        row.measured_on.append("equivalence: cpu")
        return row
    values = "torch.empty" not in original  # uninitialised memory: dtype, shape, device only
    row.equivalent, detail = cpu_equivalence(original, rewritten, values)
    row.detail = f"{pair.applicability} fix; {detail}"
    row.measured_on.append("equivalence: cpu")
    if fake_cuda:
        before, after, problem = fake_cuda_copies(original, rewritten)
        if before is None:
            row.detail += f"; {problem}"
        else:
            row.copy_before, row.copy_after = before > 0, after is not None and after > 0
            row.measured_on.append("copy: fake cuda (aten trace)")
    return row
