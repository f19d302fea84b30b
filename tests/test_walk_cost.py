"""The inference walk's cost: walrus bindings are found without re-walking every expression.

`_walruses` used to take LibCST's `children` (which rebuilds a node's child list on each call)
of every node of every statement value and test, on every pass of the walk, in any file with
one `:=`.  Now `walrus_holders` marks the nodes with a walrus below them once per module and
`_walruses` enters only those.  These tests pin both halves: the bindings found are the same,
in the same order, and the work no longer grows with the statements that hold no walrus.
"""
from __future__ import annotations

from typing import Iterator, List

import libcst as cst
import pytest

from lint_h2d.inference.scope import ModuleWalker, _walruses, walrus_holders

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
