"""`recorded_children` stands in for LibCST's `children` in the collecting walks of the capture
analysis and H2D003 (`lint_h2d/cst_children.py`): the walks must see the same statements, the
same calls and the same bindings, in the same order where order matters.  Speed is measured in
`bench/`; here the answers are compared with the plain walks over `children`."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, List, Set

import libcst as cst
import pytest

from lint_h2d import capture_flow
from lint_h2d.cst_children import UNRECORDED, recorded_children
from tests.test_h2d003 import _plain_has_copy_call

SOURCES = sorted((Path(__file__).parent / "fixtures").rglob("*.py"))

EXTRA = '''
import torch as T
@deco
def f(a, *, b=1):
    try:
        x = 1
    except* ValueError as e:
        y = e
    else:
        z = g(h(1))
    finally:
        w = [k(i) for i in range(3)]
    match a:
        case [t, *_]:
            t2 = t
        case {"k": v}:
            v2 = v
    while (n := step()):
        for q in T.arange(n):
            with ctx() as c, other():
                c[q] = 0
        else:
            pass
    async def inner():
        async with lock() as l:
            await l
    class K(Base, metaclass=M):
        attr = helper()
    lam = lambda u: u(1)
    global G
    del x
'''


def _modules() -> Iterator[cst.Module]:
    yield cst.parse_module(EXTRA)
    for path in SOURCES:
        try:
            yield cst.parse_module(path.read_text(encoding="utf-8"))
        except (cst.ParserSyntaxError, UnicodeDecodeError, ValueError):
            continue


def _every_node(module: cst.Module) -> List[cst.CSTNode]:
    out: List[cst.CSTNode] = []
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children)
    return out


def test_recorded_children_are_children_without_whitespace_and_operators() -> None:
    for module in _modules():
        for node in _every_node(module):
            kept = [c for c in node.children if type(c) not in UNRECORDED]
            assert {id(c) for c in recorded_children(node)} == {id(c) for c in kept}, type(node).__name__


def _plain_child_statements(node: cst.CSTNode) -> List[cst.CSTNode]:
    out: List[cst.CSTNode] = []
    for child in node.children:
        if isinstance(child, cst.IndentedBlock):
            out.extend(child.body)
        elif isinstance(child, (cst.BaseStatement, cst.BaseSuite)):
            out.append(child)
        elif isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally, cst.MatchCase)) \
                or type(child).__name__ == "ExceptStarHandler":
            out.extend(_plain_child_statements(child))
    return out


def test_capture_walks_see_the_same_statements_in_the_same_order() -> None:
    """`_child_statements` feeds `import_aliases` (the last import of a name wins), so the
    order of the statements it returns matters, not only the set."""
    for module in _modules():
        for node in _every_node(module):
            if isinstance(node, (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.Finally,
                                 cst.MatchCase)) or type(node).__name__ == "ExceptStarHandler":
                assert [id(s) for s in capture_flow._child_statements(node)] == \
                    [id(s) for s in _plain_child_statements(node)]


def test_capture_walks_find_the_same_calls_and_bindings() -> None:
    names = ("x", "c", "e", "t", "v", "n", "q", "l", "G", "K", "inner", "T", "torch", "self")
    checked = 0
    for module in _modules():
        for node in _every_node(module):
            if isinstance(node, cst.FunctionDef):
                checked += 1
                bound = _plain_bound(node)
                for name in names:
                    assert capture_flow.shadows(node, name) == (name in bound), name
                assert {id(c) for c in capture_flow._calls(node.body)} == \
                    {id(c) for c in _plain_calls(node.body)}
    assert checked > 50


def _plain_bound(fn: cst.FunctionDef) -> Set[str]:
    """Every name `fn` binds itself, by a plain walk of `.children`: `shadows(fn, name)` is
    `name in _plain_bound(fn)` (one walk for all names, not one per name)."""
    params = fn.params
    every = (list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
             + [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)])
    bound = {p.name.value for p in every}
    stack: List[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                bound.add(node.name.value)
            continue
        if not isinstance(node, (cst.Import, cst.ImportFrom)):
            bound.update(capture_flow._binding_names(node))
        stack.extend(node.children)
    return bound


def _plain_calls(node: cst.CSTNode) -> List[cst.Call]:
    out: List[cst.Call] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            out.append(current)
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(current.children)
    return out


# -- the rules' `wants` (perf5): the same answers, without LibCST's `children` or ABC checks ---

WANTS_EXTRA = '''
x = torch.zeros(4).to("cuda")
y = torch.ones(n, dtype=d).cuda(non_blocking=True)
dst.copy_(src, non_blocking=True)
f(a.to(dev, non_blocking=flag), [b.cuda(), {"k": torch.empty(2).to(dev)}])
z = (lambda: torch.full((2,), 1).cuda())()
w = np.zeros(3).to("cuda")
'''


def _smalls() -> Iterator[cst.BaseSmallStatement]:
    for module in [cst.parse_module(WANTS_EXTRA), *_modules()]:
        for node in _every_node(module):
            if isinstance(node, cst.BaseSmallStatement):
                yield node


def test_the_rules_wants_answer_as_the_children_walks() -> None:
    from lint_h2d.rules.constant_tensor_built_on_host import _has_moves_shape, _moves_shape
    from lint_h2d.rules.non_blocking_copy_from_pageable_memory import has_copy_call

    copies = moves = 0
    for small in _smalls():
        assert has_copy_call(small) == _plain_has_copy_call(small)
        expected = any(True for _ in _moves_shape(small))
        assert _has_moves_shape(small) == expected
        copies += has_copy_call(small)
        moves += expected
    assert copies >= 3 and moves >= 3


def test_the_rules_wants_make_no_abstract_instance_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A negative `isinstance` against a LibCST node class goes through `ABCMeta`; the scans that
    run on every statement answer from tables by type instead.  Before: thousands of them for
    these statements (H2D004's scan took LibCST's `children`, a visitor per node)."""
    import abc

    from lint_h2d.rules.constant_tensor_built_on_host import ConstantTensorBuiltOnHost
    from lint_h2d.rules.non_blocking_copy_from_pageable_memory import NonBlockingCopyFromPageableMemory

    module = cst.parse_module("".join(
        f"v{i} = f(a{i}, b=[c{i} + {i}, d.e{i}(x, y=z)], k='s{i}', n=-{i}.5)\n" for i in range(50)))
    smalls = [n for n in _every_node(module) if isinstance(n, cst.BaseSmallStatement)]
    rules = [ConstantTensorBuiltOnHost(), NonBlockingCopyFromPageableMemory()]
    for rule in rules:  # the tables fill on first sight of a type
        [rule.wants(s) for s in smalls]
    calls = [0]
    original = abc.ABCMeta.__instancecheck__

    def counting(cls: abc.ABCMeta, instance: object) -> bool:
        calls[0] += 1
        return original(cls, instance)

    monkeypatch.setattr(abc.ABCMeta, "__instancecheck__", counting)
    answers = [rule.wants(s) for rule in rules for s in smalls]
    monkeypatch.undo()
    assert not any(answers)
    assert calls[0] <= 2 * len(smalls), calls[0]  # a called name that is no attribute, per rule
