"""H2D003/H2D004 beyond the fixtures: host-memory facts, `# gpu-sync-ok`, the prefilter's
necessary conditions, argument edits and the verifier's expression pairs."""
from __future__ import annotations

from typing import List
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given, settings, strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from fixers.arguments import argument_removal, keyword_insertion
from fixers.edits import apply_edits
from lint_h2d import prefilter
from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.inference.project import collect
from lint_h2d.inference.scope import ModuleWalker
from lint_h2d.suppression import noqa_lines


def codes(source: str, prefilter_on: bool = True) -> List[str]:
    engine = Engine(Settings(), collect([source]), use_prefilter=prefilter_on)
    return [f"{f.code}:{f.location.row}" for f in engine.analyze("m.py", source)]


def memory_of(source: str, name: str):  # type: ignore[no-untyped-def]
    module = cst.parse_module(source + "\nprobe = " + name + "\n")
    facts = ModuleWalker(module).run()
    return facts[-1].facts.names.get(name)


@pytest.mark.parametrize("source,pinned", [
    ("import torch\nx = torch.zeros(4)", False),
    ("import torch\nx = torch.zeros(4, pin_memory=True)", True),
    ("import torch\nx = torch.zeros(4, pin_memory=PIN)", True),
    ("import torch\nx = torch.zeros(4, pin_memory=None)", False),
    ("import torch\nx = torch.zeros(4).pin_memory()[:2]", True),
    ("import torch\nx = torch.zeros(4, pin_memory=True) + 1", False),
    ("import torch\nx = torch.zeros(4, pin_memory=True)[torch.tensor([0, 1])]", None),
    ("import torch\ndef f(g: torch.Tensor):\n    return 0\nx = torch.ones(2, device='cuda').to('cpu', non_blocking=True)", True),
    ("import torch\nx = torch.ones(2, device='cuda').cpu()", False),
    ("import torch, numpy as np\nx = torch.from_numpy(np.zeros(3))", False),
])
def test_host_memory_facts(source: str, pinned: object) -> None:
    value = memory_of(source, "x")
    got = None if value is None or value.memory is None else value.memory.pinned
    assert got == pinned


def test_zero_element_allocations_are_marked_empty() -> None:
    for expr in ("torch.zeros(0)", "torch.empty((0, 3))", "torch.tensor([])", "torch.arange(0)"):
        value = memory_of(f"import torch\nx = {expr}", "x")
        assert value is not None and value.memory is not None and value.memory.empty, expr
    value = memory_of("import torch\nx = torch.zeros(1)", "x")
    assert value is not None and value.memory is not None and not value.memory.empty


def test_positional_arguments_stop_at_the_first_star() -> None:
    """After `*args` nobody knows which parameter a positional argument fills: the one helper
    H2D003 and the memory inference share stops there (`torch.arange(*bounds, 0)` is not
    `arange(0)`, an empty tensor whose copy would move nothing)."""
    from lint_h2d.inference.memory import positional_args, zero_elements

    call = cst.parse_expression("torch.arange(*bounds, 0)")
    assert isinstance(call, cst.Call)
    assert positional_args(call) == []
    assert not zero_elements(call, "arange")
    plain = cst.parse_expression("torch.arange(0, device=d)")
    assert isinstance(plain, cst.Call)
    assert [cst.Module([]).code_for_node(a) for a in positional_args(plain)] == ["0"]
    assert zero_elements(plain, "arange")


def test_gpu_sync_ok_silences_only_h2d003() -> None:
    rows = noqa_lines("a = 1  # gpu-sync-ok: setup\nb = 2  # noqa: H2D001 gpu-sync-ok\n")
    assert rows[1] == frozenset({"H2D003"})
    assert rows[2] == frozenset({"H2D001", "H2D003"})
    source = ("import torch\ndef f(device, n):\n"
              "    return torch.zeros(n, dtype=torch.int32).to(device, non_blocking=True)  # gpu-sync-ok: x\n")
    assert codes(source) == ["H2D004:3"]


@settings(max_examples=40, deadline=None)
@given(
    factory=st.sampled_from(["zeros", "ones", "arange", "full", "from_numpy", "tensor", "empty"]),
    pin=st.sampled_from(["", ", pin_memory=True", ", pin_memory=False", ", device='cpu'", ", device=d"]),
    move=st.sampled_from([".to(d, non_blocking=True)", ".cuda(non_blocking=True)", ".to(d)",
                          ".to('cpu', non_blocking=True)", ".to(torch.int32, non_blocking=nb)"]),
    two_lines=st.booleans(),
)
def test_prefilter_is_a_necessary_condition(factory: str, pin: str, move: str, two_lines: bool) -> None:
    args = "a" if factory == "from_numpy" else ("(n,), 1" if factory == "full" else "n")
    if factory == "from_numpy":
        pin = ""
    build = f"torch.{factory}({args}{pin})"
    body = f"    x = {build}\n    return x{move}\n" if two_lines else f"    return {build}{move}\n"
    source = f"import torch\ndef f(d, n, a, nb):\n{body}"
    assert codes(source, True) == codes(source, False)


def test_prefilter_rejects_files_without_a_flag() -> None:
    assert not prefilter.h2d003_text("x = torch.zeros(4).to(dev)\n")
    assert prefilter.h2d003_text("dst.copy_(src, True)\n")
    import ast
    assert not prefilter.h2d003_tree(ast.parse("x.to(d, non_blocking=False)\ny.copy_(z, 0)\n"))
    assert prefilter.h2d003_tree(ast.parse("y.copy_(z, flag)\n"))
    assert not prefilter.h2d004_tree(ast.parse("torch.tensor(v).to(d)\n"))


@pytest.mark.parametrize("source,expected", [
    ("f(n)\n", "f(n, k=1)\n"),
    ("f(n,)\n", "f(n, k=1,)\n"),
    ("f(\n    n,\n)\n", "f(\n    n,\n    k=1,\n)\n"),
    ("f(n  # c\n)\n", "f(n, k=1  # c\n)\n"),
    ("f(n)\x0c\n", "f(n, k=1)\x0c\n"),
])
def test_keyword_insertion_keeps_layout(source: str, expected: str) -> None:
    module = cst.parse_module(source)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    call = module.body[0].body[0].value  # type: ignore[attr-defined]
    edit = keyword_insertion(call, "k=1", lambda n: positions[n], source)
    assert edit is not None and apply_edits(source, [edit]) == expected


def test_argument_removal() -> None:
    source = "f(a, p=True, b=2)\ng(a, p=True)\n"
    module = cst.parse_module(source)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    edits = []
    for stmt in module.body:
        call = stmt.body[0].value  # type: ignore[attr-defined]
        arg = [a for a in call.args if a.keyword is not None][0]
        edit = argument_removal(call, arg, lambda n: positions[n])
        assert edit is not None
        edits.append(edit)
    assert apply_edits(source, edits) == "f(a, b=2)\ng(a)\n"


def test_pin_fix_and_device_fix_never_combine() -> None:
    # Both rules flag the inline shape; only H2D004 fixes it (pinned memory on the device raises).
    source = "import torch\ndef f(device, n):\n    return torch.zeros(n).to(device, non_blocking=True)\n"
    engine = Engine(Settings(), collect([source]))
    new, _, _ = engine.fix_text("m.py", source, unsafe=True)
    assert "torch.zeros(n, device=device)" in new and "pin_memory" not in new


def test_verify_moves_equivalence_and_copies() -> None:
    pytest.importorskip("torch")
    from lint_h2d.verify.moves import cpu_equivalence

    ok, _ = cpu_equivalence("torch.zeros(n, dtype=torch.int32).to(device)",
                            "torch.zeros(n, dtype=torch.int32, device=device)")
    assert ok is True
    bad, detail = cpu_equivalence("torch.full((n,), 3.7).to(device, dtype=torch.int32)",
                                  "torch.full((n,), 3.7, dtype=torch.float64, device=device)")
    assert bad is False and "dtype" in detail


@pytest.mark.parametrize("move, safe", [
    (".to(\n        device,\n    )", True),
    (".to(  # keep me\n        device,\n    )", False),  # the rewrite drops the move and its comment
    (".to(\n        device,  # keep me\n    )", False),
    (".to(device, non_blocking=True)  # outside the move: kept", True),
])
def test_h2d004_fix_that_would_delete_a_comment_is_unsafe(move: str, safe: bool) -> None:
    source = f"import torch\n\n\ndef f(device, n):\n    return torch.zeros(n){move}\n"
    findings = Engine(Settings(), collect([source])).analyze("m.py", source)
    [finding] = [f for f in findings if f.code == "H2D004"]
    assert finding.fix is not None
    assert (finding.fix.applicability.value == "safe") is safe
    assert ("delete a comment" in finding.fix.message) is not safe


def _plain_has_copy_call(node: "cst.CSTNode") -> bool:
    """`has_copy_call` as first written: LibCST's own `children`, whitespace nodes included."""
    from lint_h2d.rules.non_blocking_copy_from_pageable_memory import COPY_METHODS, non_blocking_flag
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) \
                and current.func.attr.value in COPY_METHODS \
                and non_blocking_flag(current, current.func.attr.value) is not None:
            return True
        stack.extend(current.children)
    return False


def test_has_copy_call_reads_children_in_place_with_the_same_answers() -> None:
    """The fast walk skips whitespace and operator nodes; no call can hide there, so every
    small statement of the fixtures gets the answer of the plain walk over `children`."""
    from lint_h2d.rules.non_blocking_copy_from_pageable_memory import has_copy_call
    smalls: list = []

    class Collect(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            smalls.extend(node.body)

    for path in sorted((Path(__file__).parent / "fixtures").rglob("*.py")):
        try:
            cst.parse_module(path.read_text(encoding="utf-8")).visit(Collect())
        except (cst.ParserSyntaxError, UnicodeDecodeError):
            continue
    answers = [has_copy_call(s) for s in smalls]
    assert answers == [_plain_has_copy_call(s) for s in smalls]
    assert sum(answers) >= 5 and len(answers) - sum(answers) >= 100
