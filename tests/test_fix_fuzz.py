"""Structural fuzzing of H2D001's fix (issue #15, acceptance): the write inside class bodies,
loops that rebind, walrus, `match`, beside shadowed gate names and lazy imports, on lines with
form feeds and every Python line break.

For every generated module and gate: the fixed text parses, every statement stays in its
block (gates seen through), a second run changes nothing, and running the module before and
after the fix on CPU tensors (ROCm branch forced) gives the same result: the same tensor bytes
or the same exception type.  Only safe fixes are applied, so any difference is a wrong fix.
"""
from __future__ import annotations

import ast
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

hypothesis = pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st  # noqa: E402

from lint_h2d.config import Settings  # noqa: E402
from lint_h2d.engine import Engine  # noqa: E402
from lint_h2d.inference.project import collect  # noqa: E402
from tests.test_fix_correctness import structure  # noqa: E402

PROFILE = dict(max_examples=60, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

WRAPPERS = ("none", "if", "for-rebind", "walrus", "match", "class", "while", "with")
VALUES = ("0", "1", "-7", "2.5", "-0.0", "True", "False", "9223372036854775807", "18446744073709551615")


@dataclass(frozen=True)
class Shape:
    length: int
    index: int
    value: str
    wrapper: str
    shadow: str  # "", "torch-local", "torch-alias" (module has `import torch as th`), "platform-param"
    lazy: bool
    form_feed: bool
    newline: str
    odd_string: bool
    indent: str


def _module(shape: Shape) -> str:
    ind = shape.indent
    lines = ["import torch"]
    if shape.shadow == "torch-alias":
        lines.append("import torch as th")
    lines += ["", f't = torch.zeros({shape.length}, device="cuda")', "", ""]
    if shape.lazy:
        lines += ["def helper():", f"{ind}from vllm.platforms import current_platform",
                  f"{ind}return current_platform.is_cuda()", "", ""]
    params = "n, current_platform=None" if shape.shadow == "platform-param" else "n"
    lines.append(f"def f({params}):")
    lines.append(f"{ind}global t")
    if shape.shadow in ("torch-local", "torch-alias"):
        lines.append(f"{ind}torch = n")
    if shape.odd_string:
        lines.append(f'{ind}s = "a\u2028b\x85c"  # noqa: E501')
    write = f"t[{shape.index}] = {shape.value}"
    body: Tuple[str, ...]
    if shape.wrapper == "none":
        body = (write,)
    elif shape.wrapper == "if":
        body = ("if n:", f"{ind}{write}")
    elif shape.wrapper == "for-rebind":
        body = ("for _ in range(2):", f"{ind}{write}", f'{ind}u = [0] * 4')
    elif shape.wrapper == "walrus":
        body = ("if (m := n) is not None:", f"{ind}{write}")
    elif shape.wrapper == "match":
        body = ("match n:", f"{ind}case _:", f"{ind}{ind}{write}")
    elif shape.wrapper == "class":
        body = ("class C:", f"{ind}{write}")
    elif shape.wrapper == "while":
        body = ("k = 0", "while k < 1:", f"{ind}k += 1", f"{ind}{write}")
    else:
        body = ("with open(__file__ if False else '/dev/null'):", f"{ind}{write}")
    for line in body:
        feed = "\f" if shape.form_feed and line.lstrip().startswith("t[") else ""
        lines.append(f"{feed}{ind}{line}")
    lines.append(f"{ind}return t")
    return shape.newline.join(lines) + shape.newline


SHAPES = st.builds(
    Shape,
    length=st.integers(0, 5),
    index=st.integers(-6, 5),
    value=st.sampled_from(VALUES),
    wrapper=st.sampled_from(WRAPPERS),
    shadow=st.sampled_from(("", "torch-local", "torch-alias", "platform-param")),
    lazy=st.booleans(),
    form_feed=st.booleans(),
    newline=st.sampled_from(("\n", "\r\n", "\r")),
    odd_string=st.booleans(),
    indent=st.sampled_from(("    ", "  ", "\t")),
)


def _fake_vllm() -> Dict[str, types.ModuleType]:
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_rocm=lambda: True, is_cuda=lambda: False)  # type: ignore[attr-defined]
    package = types.ModuleType("vllm")
    package.platforms = platforms  # type: ignore[attr-defined]
    return {"vllm": package, "vllm.platforms": platforms}


def _run(text: str) -> Any:
    """The module's `f(1)` on CPU tensors with the ROCm branch forced: bytes or exception type."""
    source = text.replace('device="cuda"', 'device="cpu"')
    saved_hip, saved = torch.version.hip, {k: sys.modules.get(k) for k in ("vllm", "vllm.platforms")}
    torch.version.hip = "6.0"
    sys.modules.update(_fake_vllm())
    try:
        ns: Dict[str, Any] = {"__name__": "fuzzed", "__file__": "/dev/null"}
        exec(compile(source, "fuzzed.py", "exec"), ns)
        result = ns["f"](1)
        return (str(result.dtype), result.view(torch.uint8).tolist() if result.numel() else [])
    except Exception as exc:  # noqa: BLE001 - the exception type is the result
        return type(exc).__name__
    finally:
        torch.version.hip = saved_hip
        for key, module in saved.items():
            if module is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = module


@pytest.mark.parametrize("gate", ["torch-hip", "vllm", "none"])
@hsettings(**PROFILE)
@given(shape=SHAPES)
def test_fuzzed_fix_keeps_structure_and_behaviour(gate: str, shape: Shape) -> None:
    text = _module(shape)
    ast.parse(text)
    engine = Engine(Settings(root=Path.cwd(), fix_gate=gate), collect([text]))
    new, applied, remaining = engine.fix_text("fuzzed.py", text, False)
    assert not [f for f in remaining if f.code.startswith("H2D9")], remaining
    ast.parse(new)
    assert structure(new) == structure(text), new
    again, more, _ = engine.fix_text("fuzzed.py", new, False)
    assert again == new and not more
    if applied:
        assert new.count("\f") == text.count("\f")
        assert _run(new) == _run(text), (text, new)
