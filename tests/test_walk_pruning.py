"""The walk enters only the definitions that hold a statement a rule asked for (perf5).

`ModuleWalker` asks the rules' `wants` once per statement (`wanted_statements`) and skips a
`def` or `class` with no statement asked for at or below it: such a walk emits nothing, and what
it binds stays in its own scope (a class's fields reach only its own methods).  Nested
definitions met while a class's fields are collected (a walk that emits nothing and records
into nothing) are skipped too, and so are, in those passes, the methods that cannot record a
field (`_may_record`).  These tests pin that the facts handed to the rules are the same
as the full walk's, on every fixture and on vLLM-shaped modules, and that the work is gone.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, List, Tuple

import libcst as cst
import pytest

import lint_h2d.inference.scope as scope
from lint_h2d.capture import DEFAULT_CAPTURE_FUNCTIONS
from lint_h2d.inference.scope import ModuleWalker, StatementFact, _Walker
from lint_h2d.rules import all_rules

FIXTURES = sorted(Path(__file__).parent.joinpath("fixtures").rglob("*.py"))
RULES = all_rules()


def _wants(small: cst.BaseSmallStatement, in_capture: bool) -> bool:
    """What `Engine` hands the walk with every rule selected."""
    return any(r.wants(small) and (in_capture or not r.capture_only) for r in RULES)


def _key(fact: StatementFact) -> Tuple[Any, ...]:
    facts = fact.facts
    return (id(fact.small), id(fact.owner), fact.scope, fact.capture,
            tuple((id(g), b) for g, b in fact.gates), tuple(map(id, fact.block)), id(fact.container),
            dict(facts.names), dict(facts.self_attributes), facts.self_name, facts.self_class,
            facts.torch_names, facts.numpy_names, facts.scalar_functions)


class _Everything(set):  # type: ignore[type-arg]
    """`needed` as before the pruning: every definition is entered."""

    def __contains__(self, item: object) -> bool:
        return True


def _walk(module: cst.Module, code: str, full: bool,
          wants: Callable[[cst.BaseSmallStatement, bool], bool] = _wants) -> List[Tuple[Any, ...]]:
    walker = ModuleWalker(module, capture_patterns=DEFAULT_CAPTURE_FUNCTIONS, wants=wants, text=code)
    if not full:
        return [_key(f) for f in walker.run()]
    walker.needed = _Everything()
    walker.walrus_holders = scope.walrus_holders(module) if walker.walrus else frozenset()
    may_record = scope._may_record
    scope._may_record = lambda fn, constructors: True  # type: ignore[assignment]
    try:
        return [_key(f) for f in walker.run()]
    finally:
        scope._may_record = may_record


def _fixture(path: Path) -> Tuple[cst.Module, str]:
    """A fixture's tree and text; a fixture that is not Python skips the test."""
    code = path.read_text(encoding="utf-8")
    try:
        return cst.parse_module(code), code
    except cst.ParserSyntaxError:
        pytest.skip("not Python")
        raise AssertionError("unreachable")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_pruned_walk_emits_the_full_walks_facts(path: Path) -> None:
    module, code = _fixture(path)
    assert _walk(module, code, full=False) == _walk(module, code, full=True)


MODULE = '''
import torch
from vllm.platforms import current_platform

LIMIT = 4

def helper_{k}(n):
    out = torch.zeros(n, device="cuda")
    for i in range(n):
        out = out + i
    if n > LIMIT:
        def inner(m):
            return [m := x for x in range(m)]
        out = inner(n)
    return out

class Quiet_{k}:
    def __init__(self, n):
        self.buf = torch.zeros(n, device="cuda")
        self.buf_cpu = torch.zeros(n)
    def step(self, i):
        with torch.no_grad():
            self.buf.add_(i)
        def later():
            class Nested:
                def go(self):
                    return 1
            return Nested
        return later
'''

TARGET = '''
class Runner:
    def __init__(self, n):
        self.pos = torch.zeros(n, device="cuda")
        self.count = 0
    def reset(self):
        self.count = self.count + 1
        def nested():
            return torch.ones(3)
        return nested
    def step(self, i):
        self.pos[i] = 0
'''


def _counted(module: cst.Module, code: str, full: bool) -> Tuple[List[Tuple[Any, ...]], int]:
    """The facts and how many small statements the walk bound (`_Walker.line`'s work)."""
    calls = [0]
    original = _Walker.bind_small

    def counting(self: _Walker, small: cst.BaseSmallStatement, names: Any) -> Any:
        calls[0] += 1
        return original(self, small, names)

    _Walker.bind_small = counting  # type: ignore[method-assign]
    try:
        facts = _walk(module, code, full=full)
    finally:
        _Walker.bind_small = original  # type: ignore[method-assign]
    return facts, calls[0]


def test_definitions_without_wanted_statements_are_not_walked() -> None:
    code = "".join(MODULE.format(k=k) for k in range(20)) + TARGET
    module = cst.parse_module(code)
    pruned, pruned_work = _counted(module, code, full=False)
    full, full_work = _counted(module, code, full=True)
    assert pruned == full and len(pruned) == 1
    # Before: every function and class of the module, the classes' fields twice over, and the
    # functions nested in methods once per pass (~500 statements here).  Now: the module's
    # own statements and the one class with a write (its fields' two passes and the emitting
    # pass; the function nested in `reset` is not entered).
    assert full_work > 500, full_work
    assert pruned_work < 80, pruned_work  # 60 module-level lines, 12 of `Runner`


def test_a_walk_asking_for_nothing_enters_no_definition() -> None:
    code = "".join(MODULE.format(k=k) for k in range(5)) + TARGET
    module = cst.parse_module(code)
    walker = ModuleWalker(module, wants=lambda s, c: False, text=code)
    assert walker.needed == set()
    assert walker.run() == []


def test_wants_is_asked_once_per_statement() -> None:
    code = "".join(MODULE.format(k=k) for k in range(3)) + TARGET
    module = cst.parse_module(code)
    asked: List[int] = []

    def wants(small: cst.BaseSmallStatement, in_capture: bool) -> bool:
        asked.append(id(small))
        return _wants(small, in_capture)

    ModuleWalker(module, wants=wants, text=code).run()
    assert len(asked) == len(set(asked))


def test_capture_code_is_entered_for_capture_only_rules() -> None:
    code = (
        "import torch\n"
        "def build_for_cudagraph_capture(meta):\n"
        "    meta.seq_lens_cpu.zero_()\n"
        "def plain(meta):\n"
        "    meta.seq_lens_cpu.zero_()\n"
        "def runner(g, meta):\n"
        "    with torch.cuda.graph(g):\n"
        "        def body():\n"
        "            meta.x_cpu.fill_(0)\n"
        "        body()\n"
    )
    module = cst.parse_module(code)

    def capture_only(small: cst.BaseSmallStatement, in_capture: bool) -> bool:
        return in_capture and isinstance(small, cst.Expr)

    pruned, full = _walk(module, code, False, capture_only), _walk(module, code, True, capture_only)
    assert pruned == full and len(pruned) >= 1
    walker = ModuleWalker(module, wants=capture_only, text=code)
    assert id(module.body[2]) not in walker.needed  # `plain` runs outside capture


METHODS = '''
class Holder:
    def __init__(self, n):
        self.pos = torch.zeros(n, device="cuda")
    def read(self, i):
        x = self.pos[i]
        for j in range(i):
            x = x + j
        return x
    def store(self, i):
        self.pos[i] = 0
    def swap(self, other):
        a, (self.b, c) = other
    @classmethod
    def make(cls, n):
        return cls(n=n)
    def buffers(self):
        self.register_buffer("extra", torch.zeros(3))
    def loop(self, xs):
        for self.last in xs:
            pass
        with ctx() as self.handle:
            pass
    def nested(self):
        def inner():
            self.hidden = 1
        return inner
'''


def test_methods_that_cannot_record_a_field_are_told_apart() -> None:
    module = cst.parse_module(METHODS)
    cls = module.body[0]
    assert isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)
    found = {m.name.value: scope._may_record(m, {"Holder", "cls"}) for m in cls.body.body
             if isinstance(m, cst.FunctionDef)}
    assert found == {"__init__": True, "read": False, "store": True, "swap": True, "make": True,
                     "buffers": True, "loop": True, "nested": False}
    assert _walk(module, METHODS, full=False) == _walk(module, METHODS, full=True)


def test_read_only_methods_are_not_walked_to_collect_fields() -> None:
    readers = "".join(
        f"    def read_{k}(self, i):\n        x = self.pos[i]\n        y = x + {k}\n        z = y * 2\n        return z\n"
        for k in range(30))
    code = "import torch\nclass Big:\n    def __init__(self, n):\n        self.pos = torch.zeros(n, device='cuda')\n" \
        + readers + "    def store(self, i):\n        self.pos[i] = 0\n"
    module = cst.parse_module(code)
    pruned, work = _counted(module, code, full=False)
    assert pruned == _counted(module, code, full=True)[0] and len(pruned) == 1
    # Before: the 30 readers' 90 statements in each of the fields' two passes (180 more).
    assert work < 20, work


def _plain_wants(small: cst.BaseSmallStatement, in_capture: bool) -> bool:
    return any(r.wants(small) for r in RULES if not r.capture_only)


@pytest.mark.parametrize("path", FIXTURES[::3], ids=lambda p: p.name)
def test_without_capture_only_rules_the_facts_are_the_same_but_capture(path: Path) -> None:
    module, code = _fixture(path)
    with_regions = ModuleWalker(module, wants=_plain_wants, text=code).run()
    without = ModuleWalker(module, wants=_plain_wants, text=code, capture=False).run()
    assert [_key(f)[:3] + _key(f)[4:] for f in with_regions] == [_key(f)[:3] + _key(f)[4:] for f in without]
    assert all(f.capture is None for f in without)


def test_capture_regions_are_computed_only_for_capture_only_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    from lint_h2d.analysis import Engine
    from lint_h2d.config import Settings
    from lint_h2d.inference.project import collect

    calls = [0]
    original = scope.capture_regions

    def counting(*args: Any) -> Any:
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(scope, "capture_regions", counting)
    code = "import torch\ndef f(n):\n    t = torch.zeros(n, device='cuda')\n    t[0] = 1\n"
    engine = Engine(Settings(), collect([""]))
    assert [f.code for f in engine.analyze("a.py", code)] == ["H2D001"]
    assert calls[0] == 0  # H2D002's prefilter drops it here: nothing reads capture
    graph = code + "def g(meta, gr):\n    with torch.cuda.graph(gr):\n        meta.x_cpu.zero_()\n"
    engine.analyze("b.py", graph)
    assert calls[0] == 1
