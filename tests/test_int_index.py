"""`int_names`: the index names proven to hold a Python int (they keep the subscript spelling)."""
from __future__ import annotations

from typing import Tuple

import libcst as cst
import pytest

from lint_h2d.rules._int_index import int_names
from lint_h2d.rules._scopes import bound_names


def proven(source: str, *names: str) -> Tuple[str, ...]:
    module = cst.parse_module(source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return int_names(names, function, bound_names([module]))


@pytest.mark.parametrize("body", [
    "i = 0\n    i += 1\n",
    "i = -3\n    i -= 2\n    i *= 4\n",
    "i: int = 0\n",
    "i = len(xs)\n",
    "for i in range(n):\n        pass\n",
    "for i in range(0, n, 2):\n        pass\n",
    "for i, x in enumerate(xs):\n        pass\n",
    "for (i, x) in enumerate(xs):\n        pass\n",
    "i = 0\n    ys = [i for i in xs]\n",  # a comprehension's own `i`
    "i = 0\n    def g():\n        i = 'x'\n",  # a nested function's own `i`
])
def test_proven_int(body: str) -> None:
    assert proven(f"def f(xs, n):\n    {body}", "i") == ("i",)


@pytest.mark.parametrize("body", [
    "pass\n",  # not bound here: a global
    "i = 0.0\n",
    "i = True\n",
    "i = n\n",
    "i = 0\n    i += 0.5\n",
    "i = 0\n    i /= 2\n",
    "i = 0\n    i <<= n\n",
    "i = 0\n    i, j = 1, 2\n",
    "i = 0\n    with open(n) as i:\n        pass\n",
    "i = 0\n    try:\n        pass\n    except E as i:\n        pass\n",
    "i = 0\n    import i\n",
    "i = 0\n    from m import i\n",
    "i = 0\n    del i\n",
    "i = 0\n    def i():\n        pass\n",
    "i = 0\n    class i:\n        pass\n",
    "i = 0\n    (i := n)\n",
    "i = 0\n    ys = [(i := y) for y in xs]\n",
    "i = 0\n    global i\n",
    "i = 0\n    def g():\n        nonlocal i\n        i = 'x'\n",
    "i = 0\n    for i in xs:\n        pass\n",
    "for i in range(*xs):\n        pass\n",
    "for i, x in enumerate(xs, 1):\n        pass\n",
    "for i, x in enumerate(xs, start=True):\n        pass\n",
    "for x, i in enumerate(xs):\n        pass\n",
    "for i, i in enumerate(xs):\n        pass\n",
    "i = len(*xs)\n",
    "i = 0\n    match n:\n        case [*i]:\n            pass\n",
    "i = 0\n    match n:\n        case i:\n            pass\n",
])
def test_not_proven(body: str) -> None:
    assert proven(f"def f(xs, n, E=None):\n    {body}", "i") == ()


def test_parameters_are_not_proven() -> None:
    assert proven("def f(i: int):\n    i = 0\n", "i") == ()


@pytest.mark.parametrize("shadow", ["range = list\n", "from m import enumerate\n", "def len(x):\n    return 0.5\n",
                                    "class C:\n    range = 1\n"])
def test_shadowed_builtins_prove_nothing(shadow: str) -> None:
    source = "def f(xs, n):\n    for i in range(n):\n        pass\n    j = 0\n" + shadow
    assert proven(source, "i", "j") == ()


def test_module_level_reads_prove_nothing() -> None:
    module = cst.parse_module("i = 0\n")
    assert int_names(["i"], None, bound_names([module])) == ()
