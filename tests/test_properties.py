"""Property tests (issue #8): H2D001/H2D002 shapes generated inside random surrounding code
(nesting, comments, decorators, semicolons, line continuations, CRLF, tabs).

For every generated module: the fixed output parses (LibCST, ``ast``, ``compile``), a second
fix changes nothing, and bytes outside the fix sites are unchanged.  For H2D001 the original
and the fixed function run on CPU tensors and must return equal tensors (same values, same
sign of zero): with ``fix-gate = "none"`` the device form alone is what runs, so this checks
the rewrite itself; CPU tensors take the same values as device ones.
"""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any, Dict, List, Tuple

import libcst as cst
import pytest

hypothesis = pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st  # noqa: E402

from lint_h2d.config import Settings  # noqa: E402
from lint_h2d.engine import SYNTAX_ERROR, INTERNAL_ERROR, IO_ERROR, Engine  # noqa: E402
from lint_h2d.inference.project import collect  # noqa: E402

PROFILE = dict(max_examples=40, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LENGTH = 6

INDEX_FORMS = st.one_of(
    st.integers(min_value=-LENGTH, max_value=LENGTH - 1).map(str),  # literal (negative too)
    st.sampled_from(["n - 1", "k", "-k", "len(t) - 2", "n // 2", "(1)", "0x1", "1_0 - 8"]),
)
VALUE_FORMS = st.sampled_from(
    ["0", "0.0", "False", "True", "1", "-7", "2.5", "-0.0", "1e3", "n", "k + 1", "int(n)",
     "float(k)", "(3)"]
)
DTYPES = st.sampled_from(["torch.float32", "torch.int64", "torch.int32", "torch.float64", "torch.bfloat16"])
WRAPPERS = st.lists(st.sampled_from(["if", "for", "with", "try", "while"]), max_size=3)


@dataclasses.dataclass(frozen=True)
class Shape:
    index: str
    value: str
    dtype: str
    wrappers: Tuple[str, ...]
    in_class: bool
    decorator: bool
    comment_above: bool
    trailing_comment: bool
    semicolon: bool
    continuation: str  # "", "value" (parenthesised value over two lines), "backslash" (surrounding code)
    tabs: bool
    crlf: bool
    two_dims: bool


SHAPES = st.builds(
    Shape,
    index=INDEX_FORMS,
    value=VALUE_FORMS,
    dtype=DTYPES,
    wrappers=WRAPPERS.map(tuple),
    in_class=st.booleans(),
    decorator=st.booleans(),
    comment_above=st.booleans(),
    trailing_comment=st.booleans(),
    semicolon=st.booleans(),
    continuation=st.sampled_from(["", "value", "backslash"]),
    tabs=st.booleans(),
    crlf=st.booleans(),
    two_dims=st.booleans(),
)


def render(shape: Shape) -> str:
    """A module defining ``entry(n, dev)`` that allocates a tensor on ``dev`` and writes one
    element of it inside the generated surroundings."""
    unit = "\t" if shape.tabs else "    "
    lines: List[str] = ["import torch", "", "", "def deco(fn):", f"{unit}return fn", "", ""]
    depth = 0

    def emit(text: str) -> None:
        lines.append(unit * depth + text if text else "")

    if shape.in_class:
        emit("class Builder:")
        depth += 1
        emit("# a builder")
    if shape.decorator:
        emit("@deco")
        emit("@torch.no_grad()")
    emit("def build(self, n, dev):" if shape.in_class else "def build(n, dev):")
    depth += 1
    shape_args = "n, 3" if shape.two_dims else "n"
    emit(f"t = torch.zeros({shape_args}, dtype={shape.dtype}, device=dev)")
    emit("k = 2")
    if shape.continuation == "backslash":
        emit("m = k + \\")
        lines.append(unit * (depth + 1) + "1")
    for w in shape.wrappers:
        if w == "if":
            emit("if n > 0:  # always")
        elif w == "for":
            emit("for _ in range(1):")
        elif w == "with":
            emit("with torch.no_grad():")
        elif w == "while":
            emit("while True:")
        elif w == "try":
            emit("try:")
        depth += 1
    if shape.comment_above:
        emit("# zero the first slot")
    target = f"t[{shape.index}, 1]" if shape.two_dims else f"t[{shape.index}]"
    value = f"(\n{unit * (depth + 1)}{shape.value})" if shape.continuation == "value" else shape.value
    stmt = f"{target} = {value}"
    if shape.semicolon:
        stmt += "; k = k"
    if shape.trailing_comment:
        stmt += "  # the write"
    emit(stmt)
    for w in reversed(shape.wrappers):
        if w == "while":
            emit("break")
        depth -= 1
        if w == "try":
            emit("except IndexError:")
            emit(f"{unit}raise")
    emit("return t")
    depth -= 1
    if shape.in_class:
        depth -= 1
        lines += ["", "", "def entry(n, dev):", f"{unit}return Builder().build(n, dev)", ""]
    else:
        lines += ["", "", "def entry(n, dev):", f"{unit}return build(n, dev)", ""]
    text = "\n".join(lines)
    return text.replace("\n", "\r\n") if shape.crlf else text


def engine_for(text: str, gate: str) -> Engine:
    settings = dataclasses.replace(Settings(root=Path.cwd()), fix_gate=gate)
    return Engine(settings, collect([text]))


def assert_parses(text: str) -> None:
    cst.parse_module(text)
    compile(ast.parse(text), "<fixed>", "exec", dont_inherit=True)


def assert_only_fix_sites_changed(before: str, after: str) -> None:
    from tests.corpus import unexpected_changes

    assert not unexpected_changes(before, after), unexpected_changes(before, after)


def run_entry(text: str) -> Any:
    namespace: Dict[str, Any] = {"__name__": "generated"}
    exec(compile(text, "<generated>", "exec", dont_inherit=True), namespace)
    try:
        return namespace["entry"](LENGTH, "cpu")
    except Exception as exc:  # the original may raise (e.g. a value the dtype rejects)
        return exc


def same_result(a: Any, b: Any) -> bool:
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return type(a) is type(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point():
        return bool(torch.equal(a, b) and torch.equal(torch.signbit(a), torch.signbit(b)))
    return bool(torch.equal(a, b))


def fix(text: str, gate: str) -> Tuple[str, list, list]:
    return engine_for(text, gate).fix_text("generated.py", text, True)


def no_errors(findings: list) -> None:
    bad = [f for f in findings if f.code in (SYNTAX_ERROR, INTERNAL_ERROR, IO_ERROR)]
    assert not bad, bad


@hsettings(**PROFILE)
@given(SHAPES)
def test_h2d001_fix_parses_is_idempotent_and_equivalent(shape: Shape) -> None:
    text = render(shape)
    assert_parses(text)
    found = engine_for(text, "none").analyze("generated.py", text)
    no_errors(found)
    for gate in ("none", "auto"):
        fixed, applied, remaining = fix(text, gate)
        no_errors(remaining)
        assert_parses(fixed)
        again, applied_again, _ = fix(fixed, gate)
        assert again == fixed and not applied_again, f"not idempotent:\n{fixed}\n---\n{again}"
        if shape.crlf:
            assert "\n" not in fixed.replace("\r\n", ""), "newline style changed"
        if gate == "auto":
            assert_only_fix_sites_changed(text, fixed)
        if applied:
            # gate "none": the device form alone runs; gate "auto" on CPU: the original branch.
            assert same_result(run_entry(text), run_entry(fixed)), f"{gate}:\n{text}\n---\n{fixed}"


@pytest.mark.parametrize("seedless", ["t[0] = 0", "t[-1] = -0.0", "t[k] = True", "t[-k] = k"])
def test_h2d001_basic_shapes_are_found(seedless: str) -> None:
    """The generator is meaningful only if its plain shapes are flagged and fixed."""
    text = f"import torch\n\n\ndef entry(n, dev):\n    k = 2\n    t = torch.zeros(n, device=dev)\n    {seedless}\n    return t\n"
    fixed, applied, remaining = fix(text, "none")
    assert len(applied) == 1 and not remaining, remaining
    assert same_result(run_entry(text), run_entry(fixed))


# -- H2D002 --------------------------------------------------------------------------------

MUTATIONS = st.sampled_from([
    "{m}.query_start_loc_cpu.zero_()",
    "{m}.seq_lens_cpu.fill_(0)",
    "{m}.seq_lens_cpu.fill_(1)",
    "{m}.query_start_loc_cpu[0] = 0",
    "{m}.query_start_loc_cpu[:2] += 1",
    "{m}.query_start_loc_cpu.copy_(other)",
])


@dataclasses.dataclass(frozen=True)
class CaptureShape:
    mutation: str
    device_write_first: bool
    alias: bool
    wrappers: Tuple[str, ...]
    decorator: bool
    comment_above: bool
    trailing_comment: bool
    semicolon: bool
    tabs: bool
    crlf: bool
    under_graph: bool


CAPTURE_SHAPES = st.builds(
    CaptureShape,
    mutation=MUTATIONS,
    device_write_first=st.booleans(),
    alias=st.booleans(),
    wrappers=st.lists(st.sampled_from(["if", "for", "with"]), max_size=2).map(tuple),
    decorator=st.booleans(),
    comment_above=st.booleans(),
    trailing_comment=st.booleans(),
    semicolon=st.booleans(),
    tabs=st.booleans(),
    crlf=st.booleans(),
    under_graph=st.booleans(),
)

H2D002_HEADER = """from dataclasses import dataclass

import torch


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor
    query_start_loc_cpu: torch.Tensor
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor


def deco(fn):
    return fn


"""


def render_capture(shape: CaptureShape) -> str:
    unit = "\t" if shape.tabs else "    "
    lines = H2D002_HEADER.replace("    ", unit).split("\n")
    depth = 0

    def emit(text: str) -> None:
        lines.append(unit * depth + text)

    emit("class Builder:")
    depth += 1
    if shape.decorator:
        emit("@deco")
    name = "capture_graph" if shape.under_graph else "build_for_cudagraph_capture"
    emit(f"def {name}(self, common_attn_metadata: CommonAttentionMetadata, other):")
    depth += 1
    if shape.under_graph:  # a name is no evidence of capture: a graph block is
        emit("with torch.cuda.graph(other):")
        depth += 1
    m = "common_attn_metadata"
    if shape.alias:
        emit(f"m = {m}")
        m = "m"
    if shape.device_write_first:
        emit(f"{m}.query_start_loc.zero_()")
    for w in shape.wrappers:
        emit({"if": "if other is not None:", "for": "for _ in range(1):",
              "with": "with torch.no_grad():"}[w])
        depth += 1
    if shape.comment_above:
        emit("# keep capture deterministic")
    stmt = shape.mutation.format(m=m)
    if shape.semicolon:
        stmt += "; x = 1"
    if shape.trailing_comment:
        stmt += "  # mutation"
    emit(stmt)
    depth -= len(shape.wrappers)
    emit("return None")
    lines.append("")
    text = "\n".join(lines)
    return text.replace("\n", "\r\n") if shape.crlf else text


@hsettings(**PROFILE)
@given(CAPTURE_SHAPES)
def test_h2d002_fix_parses_and_is_idempotent(shape: CaptureShape) -> None:
    text = render_capture(shape)
    assert_parses(text)
    found = engine_for(text, "auto").analyze("generated.py", text)
    no_errors(found)
    assert any(f.code == "H2D002" for f in found), text
    for unsafe in (False, True):
        fixed, applied, remaining = engine_for(text, "auto").fix_text("generated.py", text, unsafe)
        no_errors(remaining)
        assert_parses(fixed)
        again, applied_again, _ = engine_for(fixed, "auto").fix_text("generated.py", fixed, unsafe)
        assert again == fixed and not applied_again, f"not idempotent:\n{fixed}\n---\n{again}"
        if shape.crlf:
            assert "\n" not in fixed.replace("\r\n", "")
        assert_only_fix_sites_changed(text, fixed)
