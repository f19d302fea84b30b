"""The compact position table (`lint_h2d.rules._positions.Positions`) against LibCST's own
`PositionProvider`, node by node, over every statement and expression form that LibCST's code
generation positions from another node (`end_node=`: import names and parentheses, handlers,
`else`/`finally`, `match` cases) and the odd whitespace of issue 15.  A node missing from the
table is a KeyError that costs a file all its findings (as `from m import *` did)."""
from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from lint_h2d.rules._positions import UNRECORDED, Positions

SOURCES = [
    "from os import (join)\n", "from os import (join,)\n", "from . import *\n", "from .a import (b as c)\n",
    "import a.b as c, d\n", "from a import (b,\n c)\n", "import a; import b\n",
    "try:\n  pass\nexcept* E:\n  pass\nelse:\n  pass\nfinally:\n  pass\n",
    "try:\n  pass\nexcept (A, B) as e:\n  pass\n", "try:\n  pass\nfinally:\n  pass\n",
    "match x:\n  case [1, *r] if r:\n    pass\n  case {'a': 1, **kw}:\n    pass\n  case A(b=1) | B():\n    pass\n",
    "async def f():\n  async with a as b, c:\n    pass\n  async for x in y:\n    pass\n  else:\n    pass\n  await z\n",
    "type X = int\n", "def f[T: int, *Ts, **P](a, /, b, *, c): pass\n", "class A[T](B, metaclass=M): pass\n",
    "x = f'{a!r:>{w}}' f\"{b=}\"\n", "global a, b\n", "del a, (b), [c]\n", "@d\n@e.f(1)\nclass A: x: int = 1\n",
    "while x: pass\nelse: pass\n", "for (a, b) in c: pass\nelse: pass\n", "if a: pass\nelif b: pass\nelse: pass\n",
    "with (a as b, c as d,): pass\n", "x = (yield)\n", "x = lambda *a, b=1, **k: (a, b)\n", "print(*a, **b)\n",
    "a[1:2, ::3, ...]\n", "x = [i async for i in y if i]\n", "x = {**a, 'b': 1}\n", "x = {1, *a}\n",
    "assert x, y\nraise E from F\n", "x: int\n", "x @= 1\n", "x = not a is not b\n", "x = (a := 1)\n",
    "\x0cx = 1\n", "if x:\n    \x0c    y = 1\n", "x = 1 \\\n  + 2\n", "x = 'a\x85b\u2028c'\n", "x = 1\r\ny = 2\r\n",
    "if x:\n\ty = (1,\n\t\t2)\n", "class A:\n    def f(self):\n        return (\n            1  # c\n        )\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_compact_positions_match_libcst(source: str) -> None:
    module = cst.parse_module(source)
    compact = Positions(module)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    for node, where in full.items():
        assert compact[node] == where, type(node).__name__
    assert any(type(node) in UNRECORDED for node in full)  # those answered from LibCST's table
