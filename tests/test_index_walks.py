"""The index's fast walks (`inference/summary.py`, `prefilter.scan_tree`) against the plain
walks they replace: the same calls in the same order, the same walruses in `ast.walk`'s
order, the same stage-2 answers, the same size bounds.  A summary or verdict that changed
would change which files are parsed again and what the project-wide inference concludes.

Speed itself is measured in `bench/` (`bench/summary_identity.py` compares whole summaries
and verdicts of a corpus before and after a change); here only the work done is counted."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from lint_h2d import prefilter
from lint_h2d.config import Settings
from lint_h2d.inference import summary

FIXTURES = sorted((Path(__file__).parent / "fixtures").rglob("*.py"))

# Forms the fixtures may lack: walruses in odd places, conditional expressions (whose
# branches hold call sites too), lambdas, `**` in displays, f-strings, `match`,
# `try`/`except*`, decorators, defaults, class keywords, async, slices, starred targets.
EXTRA = '''
import torch as T
from x import (a as b)
@deco(f(1))
def g(p=h(2), *q, k=(y := m(3)), **r) -> ann(4):
    global z
    x = [c(i) for i in range(n(5)) if (w := d(i))]
    y = {**e(6), k(7): v(8)}
    s = f"{fmt(9)!r:>{width(10)}}"
    t = (lambda u: inner(u))(outer(11))
    v = a1(12) if cond(13) else a2(14)
    del arr[idx(15)]
    arr[sl(16):sl(17):sl(18)] = 0
    *rest, last = seq(19)
    assert check(20), msg(21)
    raise err(22) from cause(23)
    async def inner2():
        async with ctx(24) as c2, ctx2(25):
            async for i in agen(26):
                await aw(27)
        return (yield ylv(28)), (yield from yf(29))
    while (cnt := step(30)) > 0:
        pass
    else:
        tail(31)
    try:
        body(32)
    except E(33) as e:
        handler(34)
    else:
        other(35)
    finally:
        fin(36)
    match subject(37):
        case {"k": [1, *more]} if guard(38):
            matched(39)
        case Point(x=0, y=yy) | None:
            matched2(40)
    with T.device("cuda"):
        build(41, k=kw(42))
    t2 = x.to("cuda", non_blocking=flag(43))
    t3 = T.zeros(4).cuda()
    return ret(44) or [*spread(45)]
class K(Base(46), metaclass=meta(47)):
    attr: int = field(48)
    def m(self):
        self.f = make(49)
try:
    pass
except* ValueError:
    star(50)
'''


def _sources() -> List[str]:
    out = [EXTRA]
    for path in FIXTURES:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        out.append(text)
    return out


def _reference_calls(stmt: ast.stmt) -> List[ast.Call]:
    """The call search as first written (every field through `_fields`, by isinstance), with a
    conditional expression's branches searched (their names are those of statement blocks)."""
    out: List[ast.Call] = []
    stack: List[Any] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            out.append(node)
        elif isinstance(node, (ast.Name, ast.Constant, ast.Lambda)):
            continue
        names = node._fields if isinstance(node, ast.IfExp) else summary._fields_of(type(node).__name__)
        for name in names:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, ast.stmt))
            elif isinstance(value, ast.AST) and not isinstance(value, ast.stmt):
                stack.append(value)
    return out


def _every_statement(tree: ast.AST) -> List[ast.stmt]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def test_calls_in_statement_as_the_plain_search() -> None:
    checked = 0
    for text in _sources():
        for stmt in _every_statement(ast.parse(text)):
            assert summary._calls_in_statement(stmt) == _reference_calls(stmt), ast.dump(stmt)[:200]
            checked += 1
    assert checked > 1000


def test_calls_in_conditional_branches_are_call_sites() -> None:
    # The branches of `a if c else b` hold calls like any expression (they were skipped once,
    # because the field names match statement blocks' `body`/`orelse`).
    stmt = ast.parse("v = a1(1, x) if cond(2, y) else a2(3, z)\n").body[0]
    assert sorted(ast.unparse(c.func) for c in summary._calls_in_statement(stmt)) == ["a1", "a2", "cond"]


def test_call_field_table_omits_only_fields_without_calls() -> None:
    for kind, fields in summary._CALL_FIELDS.items():
        if kind is type(None):
            continue
        every = [f for f in kind._fields if f not in summary._SKIPPED_FIELDS or kind is ast.IfExp]
        assert [f for f in every if f in fields] == list(fields), kind  # a subsequence, in order
    # On real trees, an omitted field never holds an expression (a lambda's arguments and
    # body are omitted on purpose: another scope).
    on_purpose = {(ast.Lambda, "args"), (ast.Lambda, "body")}
    for text in _sources():
        for node in ast.walk(ast.parse(text)):
            fields = summary._CALL_FIELDS.get(type(node))
            if fields is None:
                continue
            for name in type(node)._fields:
                if name in fields or name in summary._SKIPPED_FIELDS or (type(node), name) in on_purpose:
                    continue
                value = getattr(node, name, None)
                values = value if isinstance(value, list) else [value]
                assert not any(isinstance(v, (ast.expr, ast.keyword, ast.comprehension)) for v in values), \
                    (type(node).__name__, name)


def _reference_walruses(tree: ast.AST) -> List[ast.NamedExpr]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.NamedExpr)]


def test_scan_tree_as_ast_walk() -> None:
    for text in _sources():
        tree = ast.parse(text)
        scan = prefilter.scan_tree(tree, h2d003=True, h2d004=True, walruses=True)
        assert list(scan.walruses) == _reference_walruses(tree)  # the same nodes, the same order
        assert scan.h2d003 == any(prefilter._non_blocking_call(n) for n in ast.walk(tree))
        assert scan.h2d004 == any(isinstance(n, ast.Call) and prefilter._factory_moved(n)
                                  for n in ast.walk(tree))
        assert prefilter.h2d003_tree(tree) == scan.h2d003
        aliases = prefilter.torch_aliases(n for n in ast.walk(tree) if isinstance(n, ast.stmt))
        assert prefilter.h2d004_tree(tree) == prefilter.scan_tree(tree, h2d004=True, torch_names=aliases).h2d004 \
            == any(isinstance(n, ast.Call) and prefilter._factory_moved(n, aliases) for n in ast.walk(tree))
    extra = prefilter.scan_tree(ast.parse(EXTRA), True, True, True)
    assert len(extra.walruses) == 3 and extra.h2d003 and extra.h2d004


_PIECES = ["(a := f(x))", "[y for y in z if (w := y)]", "g(k=(v := 1))", "lambda q: (r := q)",
           "x.to(d, non_blocking=True)", "x.to(d, non_blocking=False)", "y.copy_(z, 0)",
           "y.copy_(z, t)", "torch.zeros(3).cuda()", "torch.tensor(v).to(d)", "{**m, k: (u := 2)}",
           "f'{(s := 3)}'", "a if (c := b) else d", "t[(i := 0)]"]


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6),
       st.sampled_from(["{}\n", "def f():\n    return {}\n", "class C:\n    x = {}\n",
                        "if {}:\n    pass\n", "@dec({})\ndef f(): pass\n"]))
def test_scan_tree_on_composed_expressions(pieces: List[str], frame: str) -> None:
    tree = ast.parse(frame.format("(" + ", ".join(pieces) + ")"))
    scan = prefilter.scan_tree(tree, True, True, True)
    assert list(scan.walruses) == _reference_walruses(tree)
    assert scan.h2d003 == any(prefilter._non_blocking_call(n) for n in ast.walk(tree))
    assert scan.h2d004 == any(isinstance(n, ast.Call) and prefilter._factory_moved(n) for n in ast.walk(tree))


def test_verdict_walks_the_tree_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # H2D003's and H2D004's checks and the walruses H2D001 binds came from three `ast.walk`s
    # over the whole tree; one pass over its nodes now answers all three.
    text = "import torch\nx = y.to('cuda', non_blocking=True)\nz = torch.zeros(2).cuda()\n" \
           "if (t := x.cuda()) is not None:\n    t[0] = 1\n"
    tree = ast.parse(text)
    walks: List[Any] = []
    real_walk = ast.walk
    monkeypatch.setattr(ast, "walk", lambda node: walks.append(node) or real_walk(node))
    scans: List[Any] = []
    real_scan = prefilter.scan_tree
    monkeypatch.setattr(prefilter, "scan_tree", lambda *a, **k: scans.append(a) or real_scan(*a, **k))
    verdict = prefilter.tree_verdict(tree, text, Settings().capture_functions)
    assert walks == [] and len(scans) == 1
    assert dict(verdict.fixed) == {"H2D003": True, "H2D004": True, "H2D001": True}


def test_summary_lists_a_function_statements_once(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "def f(a):\n    b = g(a)\n    if b:\n        return h(b)\n\ndef k():\n    return 1\n"
    lists: List[Any] = []
    real = summary._own_statements
    monkeypatch.setattr(summary, "_own_statements", lambda body: lists.append(body) or real(body))
    made = summary.summarize_tree("m.py", ast.parse(text))
    assert len(lists) == 3  # the module's and each function's, once (was twice a function)
    assert [c.callee for c in made.calls] == ["g", "h"]


_TERMS = st.recursive(st.one_of(st.none(), st.integers(), st.text(max_size=3)),
                      lambda inner: st.lists(inner, max_size=5).map(tuple), max_leaves=60)


@hsettings(max_examples=200, deadline=None)
@given(_TERMS, st.integers(min_value=0, max_value=40))
def test_larger_than_is_the_size_bound(term: Any, limit: int) -> None:
    assert summary._larger_than(term, limit) == (summary._size(term) > limit)


def _bodies(tree: ast.Module) -> List[List[ast.stmt]]:
    """The module's body and every function's, as `_Builder` collects them."""
    return [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _reference_bound_at(body: List[ast.stmt]) -> Dict[Tuple[str, int], int]:
    """`_collect_env`'s `bound_at` found as it first was: after each statement, the values
    its names' lists grew by (here every name's, a superset of `_bound_names`' answer); by
    (name, position) of the value, since the values it makes up (`...`, a `for`'s element)
    are new objects in each collection."""
    env: Dict[str, List[ast.expr]] = {}
    declared: Set[str] = set()
    binder = summary._Binder(env, None)
    found: Dict[Tuple[str, int], int] = {}
    for stmt in summary._own_statements(body):
        before = {name: len(values) for name, values in env.items()}
        summary._collect_statement(stmt, env, declared, binder)
        for name, values in env.items():
            for i in range(before.get(name, 0), len(values)):
                found[(name, i)] = id(stmt)
    return found


_BINDINGS = '''
def f(xs, k, rows):
    a = 1
    b, (c, *d) = g()
    e = [k]
    e.append(xs)
    e.extend([1, 2])
    m = {}
    m["buf"] = k
    m[k] = xs
    n: int = 0
    n += len(xs)
    o: float
    import os.path, sys as system
    from json import loads as parse
    for i in range(n):
        a = i
    for p, q in rows:
        pass
    with tqdm(xs) as bar, open(k) as fh:
        pass
    with ctx() as (u, v):
        pass
    try:
        pass
    except ValueError as err:
        pass
    match rows:
        case [first, *others]:
            pass
        case {"k": val, **more}:
            pass
    a = b = h()
    return a
'''


def test_bound_at_notes_each_value_with_its_statement() -> None:
    # `_collect_env` notes the statement of each value as it adds it (`_Binder`); it was found
    # afterwards by diffing the lists of the names a statement may bind.
    checked = 0
    for text in _sources() + [_BINDINGS]:
        for body in _bodies(ast.parse(text)):
            env: Dict[str, List[ast.expr]] = {}
            bound_at: Dict[int, int] = {}
            summary._collect_env(body, env, None, bound_at)
            assert {(name, i): bound_at[id(v)] for name, values in env.items() for i, v in enumerate(values)} \
                == _reference_bound_at(body)
            assert set(bound_at) == {id(v) for values in env.values() for v in values}
            checked += len(bound_at)
    assert checked > 1000


class _SearchingBuilder(summary._Builder):
    """The builder without the cycle-read count: every name's values are searched for a cycle
    read (`_mentions_cycle`, `_cycles_in`), as before the count was kept."""

    @property
    def cycle_reads(self) -> int:
        self._reads = getattr(self, "_reads", 0) + 1  # a new number each time: "some were read"
        return self._reads

    @cycle_reads.setter
    def cycle_reads(self, value: int) -> None:
        pass


_CYCLES = '''
import torch

def f(xs, k, t):
    n = 0
    for x in xs:
        n += k
    use(n)
    d = len(xs)
    m = d
    for x in xs:
        d = min(d, m - k)
        m = m + d
    use(d, m)
    acc = torch.zeros(4, device="cuda")
    acc = acc + t
    acc = [acc]
    use(acc)
    slot = free.pop(0)
    by_request = {}
    by_request[k] = slot
    slot = by_request[k]
    use(slot)
    return n, d
'''


def test_names_without_cycle_reads_are_not_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    # A name's values are searched for reads of names being evaluated only where one was read
    # while they were built; the summaries are those of the search done for every name.
    texts = _sources() + [_CYCLES]
    counted = [summary.summarize_tree("m.py", ast.parse(text)).to_json() for text in texts]
    monkeypatch.setattr(summary, "_Builder", _SearchingBuilder)
    searched = [summary.summarize_tree("m.py", ast.parse(text)).to_json() for text in texts]
    assert counted == searched
    calls = summary.summarize_tree("m.py", ast.parse(_CYCLES)).calls
    n = ("join", (("scalar",), ("same", ("param", "f", "k", None), None)))  # `0`, then `n + k` settled
    assert [c.args[0] for c in calls if c.callee == "use"][:1] == [n]


def test_call_site_arguments_keep_their_order_around_stars() -> None:
    text = "def f(a, b, kw, rest):\n    g(a, *rest, b, k=a, **kw)\n    h(b, j=a)\n" \
           "    d = dict(buf=a, n=3)\n    g(**d)\n    x.to('cuda')\n"
    calls = summary.summarize_tree("m.py", ast.parse(text)).calls
    g, h, unpacked = calls[:3]
    pa, pb = ("param", "f", "a", None), ("param", "f", "b", None)
    assert (g.args, g.keywords, g.starred) == ((pa, pb), (("k", pa), ("**", ("param", "f", "kw", None))), True)
    assert (h.args, h.keywords, h.starred) == ((pb,), (("j", pa),), False)
    assert unpacked.keywords == (("**", ("list", ("join", (pa, ("scalar",))), (("buf", pa), ("n", ("scalar",))))),)
    assert unpacked.starred
