"""The inference walk's cost: walrus bindings are found without re-walking every expression.

`_walruses` used to take LibCST's `children` (which rebuilds a node's child list on each call)
of every node of every statement value and test, on every pass of the walk, in any file with
one `:=`.  Now `walrus_holders` marks the nodes with a walrus below them once per module and
`_walruses` enters only those.  These tests pin both halves: the bindings found are the same,
in the same order, and the work no longer grows with the statements that hold no walrus.
"""
from __future__ import annotations

from typing import Dict, Iterator, List, Mapping, MutableMapping

import libcst as cst
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from lint_h2d.inference.names import copy_names, join_names, layer
from lint_h2d.inference.scope import ModuleWalker, Scope, _walruses, walrus_holders
from lint_h2d.inference.values import OTHER, SCALAR, UNKNOWN, Kind, Value, join

SNIPPETS = [
    "x = (a := 1) + (b := a)\n",
    "if (t := torch.ones(n).cuda()) is not None:\n    t[0] = 1\n",
    "f = lambda: (y := 2)\nz = [(w := i) for i in range(3)]\n",
    "while (chunk := read()) and (n := len(chunk)):\n    (m := n)\n",
    "def g(p):\n    with open((q := p)) as h:\n        return (r := (s := h) or q)\n",
    "match (v := get()):\n    case [u, *_]:\n        pass\n",
    "class C:\n    k = (j := 3)\n    def m(self):\n        for e in (d := self.x):\n            e[0] = d\n",
    "print(f\"{(fx := 1)}\", {(kx := 1): (vx := 2)}, lambda q=(dq := 1): (lq := q))\n",
    "t = torch.zeros(4)\n",  # no walrus at all
]


def _expressions(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BaseExpression):
            yield current
        stack.extend(current.children)


@pytest.mark.parametrize("code", SNIPPETS)
def test_pruned_walrus_search_finds_the_same_bindings_in_the_same_order(code: str) -> None:
    module = cst.parse_module(code)
    holders = walrus_holders(module)
    for expression in _expressions(module):
        assert _walruses(expression, holders) == _walruses(expression)


def test_holders_are_exactly_the_ancestors_of_walruses() -> None:
    module = cst.parse_module("a = 1\nb = [x for x in (y := range(3))]\nc = d + 1\n")
    holders = walrus_holders(module)
    assert id(module) in holders
    assert id(module.body[1]) in holders
    assert id(module.body[0]) not in holders and id(module.body[2]) not in holders


def _children_calls(code: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How often the walk takes a node's `children` (LibCST rebuilds the list each time)."""
    module = cst.parse_module(code)
    calls = [0]
    original = cst.CSTNode.children

    def counting(self: cst.CSTNode) -> object:
        calls[0] += 1
        return original.fget(self)  # type: ignore[attr-defined]

    with monkeypatch.context() as patch:
        patch.setattr(cst.CSTNode, "children", property(counting))
        ModuleWalker(module, wants=lambda s, c: False, text=code).run()
    return calls[0]


def test_one_walrus_does_not_make_the_walk_rewalk_every_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(f"    v{i} = torch.zeros(n, device=d)[{i}] + f(a, b={i}, c=[1, 2, 3])\n" for i in range(150))
    plain = "import torch\ndef f(n, d):\n" + body + "    for i in range(3):\n        v0[i] = 0\n"
    with_walrus = plain + "if (w := 1):\n    pass\n"
    extra = _children_calls(with_walrus, monkeypatch) - _children_calls(plain, monkeypatch)
    # Before: every node of the 150 statement values, twice over the loop (~6,000 calls).
    assert extra < 20, extra


def test_holders_survive_very_deep_expressions() -> None:
    expression: cst.BaseExpression = cst.NamedExpr(cst.Name("y"), cst.Integer("1"),
                                                   lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    for _ in range(5000):  # built, not parsed: LibCST's parser is slow on such nesting
        expression = cst.BinaryOperation(cst.Name("a"), cst.Add(), expression)
    module = cst.Module([cst.SimpleStatementLine([cst.Expr(expression)])])
    holders = walrus_holders(module)  # an explicit stack: no recursion
    assert id(module.body[0]) in holders and len(holders) > 5000


# -- the name map: a scope costs its own size, not the enclosing scope's (issue 15, item 22) ---

class _CountingNames(dict):  # type: ignore[type-arg]
    """The module's name map, counting every read the walk makes of it: a copy (`dict(m)` goes
    through `keys()` and `__getitem__` for a subclass), a join's iteration or a lookup."""

    reads = 0

    def __getitem__(self, key: str) -> object:
        _CountingNames.reads += 1
        return super().__getitem__(key)

    def get(self, key: str, default: object = None) -> object:
        _CountingNames.reads += 1
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        _CountingNames.reads += 1
        return super().__contains__(key)

    def __iter__(self) -> Iterator[str]:
        for key in super().__iter__():
            _CountingNames.reads += 1
            yield key

    def keys(self):  # type: ignore[no-untyped-def]
        _CountingNames.reads += len(self)
        return list(super().keys())

    def items(self):  # type: ignore[no-untyped-def]
        _CountingNames.reads += len(self)
        return list(super().items())


class _CountingWalker(ModuleWalker):
    def run(self) -> list:  # type: ignore[type-arg]
        scope = Scope("<module>", "<module>", (), None)
        self._walker(self.root, scope, None, None).body(self.module.body, _CountingNames(), self.module)
        return self.facts_out


def _long_module(blocks: int) -> str:
    """Module-level names and functions that branch, loop, catch and hold a class: what made
    every function pay for all the module's names above it (copies and joins of the whole map)."""
    parts = ["import torch\n"]
    for k in range(blocks):
        parts.append(
            f"buf_{k} = torch.empty(16, device='cuda')\n"
            f"value_{k} = {k}\n"
            f"def prepare_{k}(n, xs):\n"
            f"    out = torch.empty(n, device='cuda')\n"
            f"    if n > {k}:\n        out = xs\n"
            f"    for i in range(2):\n        out = out + i\n"
            f"    try:\n        out[0] = 0\n    except IndexError:\n        pass\n"
            f"    return [x for x in xs if x]\n"
            f"class Runner_{k}:\n"
            f"    def __init__(self, n):\n        self.pos = torch.zeros(n, device='cuda')\n"
            f"    def step(self, i):\n        with torch.no_grad():\n            self.pos[i] = value_{k}\n"
        )
    return "".join(parts)


def _module_reads(blocks: int) -> int:
    code = _long_module(blocks)
    _CountingNames.reads = 0
    _CountingWalker(cst.parse_module(code), text=code).run()
    return _CountingNames.reads


def test_the_walk_reads_the_module_names_linearly_in_the_file_size() -> None:
    small, large = _module_reads(40), _module_reads(160)
    # Linear: 4x the blocks, ~4x the reads.  Before: every function copied and joined the whole
    # module map (~16x here, and growing with the size).
    assert large < 5 * small, (small, large)


NAMES = ["a", "b", "c", "d", "e"]
VALUES = [UNKNOWN, OTHER, SCALAR, Value(Kind.DEVICE), Value(Kind.CPU)]


def _old_join(a: Mapping[str, Value], b: Mapping[str, Value]) -> Dict[str, Value]:
    """The plain join the layered one must answer as (a dict copy of `a`, then `b` in)."""
    out = dict(a)
    for key, vb in b.items():
        va = out.get(key)
        out[key] = vb if va is None else (va if va is vb else join(va, vb))
    return out


_OPS = st.lists(st.tuples(st.sampled_from(["set", "del", "branch"]), st.sampled_from(NAMES),
                          st.integers(0, len(VALUES) - 1)), max_size=12)


@hsettings(max_examples=300, deadline=None)
@given(base=st.dictionaries(st.sampled_from(NAMES), st.integers(0, len(VALUES) - 1)), left=_OPS, right=_OPS)
def test_layered_names_answer_as_a_copied_dict(base: Dict[str, int], left: list, right: list) -> None:  # type: ignore[type-arg]
    plain_base = {k: VALUES[v] for k, v in base.items()}
    layered = layer(plain_base)
    plain: Dict[str, Value] = dict(plain_base)

    def run(ops: list, m: MutableMapping[str, Value], p: Dict[str, Value]):  # type: ignore[no-untyped-def,type-arg]
        for op, key, v in ops:
            if op == "set":
                m[key] = VALUES[v]
                p[key] = VALUES[v]
            elif op == "del":
                assert (key in m) == (key in p)
                if key in p:
                    del m[key]
                    del p[key]
                else:
                    with pytest.raises(KeyError):
                        del m[key]
            else:  # a branch taken, then joined back
                mb, pb = copy_names(m), dict(p)
                mb[key] = VALUES[v]
                pb[key] = VALUES[v]
                m, p = join_names(m, mb, join), _old_join(p, pb)
        return m, p

    m1, p1 = run(left, copy_names(layered), dict(plain))
    m2, p2 = run(right, copy_names(layered), dict(plain))
    for m, p in ((m1, p1), (m2, p2), (join_names(m1, m2, join), _old_join(p1, p2))):
        assert dict(m) == p and len(m) == len(p)
        assert all(m.get(k) == p.get(k) and (k in m) == (k in p) for k in NAMES)
    assert plain_base == {k: VALUES[v] for k, v in base.items()}  # the base is never written


def _own_annotated_by_children(body: cst.BaseSuite) -> List[cst.AnnAssign]:
    """The former `_own_annotated`: every child of every node (the reference)."""
    found: List[cst.AnnAssign] = []
    todo: List[cst.CSTNode] = [body]
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.AnnAssign):
            found.append(node)
            continue
        if isinstance(node, cst.BaseExpression):
            continue
        todo.extend(node.children)
    return found


ANNOTATED = """\
def m(self, p):
    self.a: int = 0
    if p:
        self.b: int | None = None
    elif q:
        self.c: float = 1.0
    else:
        x: int = 1; self.d: int = 2
    for i in range(3):
        self.e: int = i
    else:
        self.f: int = 0
    while p:
        self.g: int = 0
    else:
        self.h: int = 0
    try:
        self.i: int = 0
    except ValueError:
        self.j: int = 0
    else:
        self.k: int = 0
    finally:
        self.l: int = 0
    with open(p) as h:
        self.m: int = 0
    match p:
        case [u, *_]:
            self.n: int = 0
        case {"k": v} if v:
            self.o: int = 0
    if p: self.q: int = 0; r: str = ""
    def inner(self):
        self.hidden: int = 0
    class Inner:
        hidden: int = 0
    f = lambda: 0
    self.last: "int" = 0
"""


def test_own_annotated_follows_blocks_only_and_keeps_the_order() -> None:
    """The statement structure alone finds what every child did, in the same order (the last
    one wins in `_declared_numbers`), and nothing of a nested `def` or `class`."""
    from lint_h2d.inference.scope import _own_annotated

    module = cst.parse_module(ANNOTATED)
    fn = module.body[0]
    assert isinstance(fn, cst.FunctionDef)
    expected = _own_annotated_by_children(fn.body)
    found = _own_annotated(fn.body)
    assert [id(n) for n in found] == [id(n) for n in expected]
    names = [module.code_for_node(n.target) for n in found]
    assert "self.hidden" not in names and "hidden" not in names
    assert {"self.a", "self.j", "self.l", "self.o", "self.q", "r", "self.last"} <= set(names)
