"""One large file: its check costs work linear in its size, and the shortcuts that make it so
(memoized scope facts, a reading walk, compact positions, chunked parsing) give exactly what
the slow paths gave.  Issue 15, item 22.  Times and memory are measured by bench/big_file.py,
never here: this counts work (Python function calls), which does not depend on the machine.
"""
from __future__ import annotations

import cProfile
import pstats
import re
from pathlib import Path
from typing import Dict, List

import libcst as cst
import pytest
from hypothesis import given, settings, strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.inference.project import collect
from lint_h2d.parse_chunks import parse_module_in_chunks
from lint_h2d.rules import _scopes
from lint_h2d.rules._gate_site import ModuleImports
from lint_h2d.rules._positions import Positions
from lint_h2d.rules._scopes import ScopeMap, bound_names

# The H2D001/H2D002 fixtures: flagged cases and look-alikes.
FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("H2D00[12]*.py"))
OWN: List[Path] = []


def _readable(paths: List[Path]) -> Dict[str, str]:
    out = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            cst.parse_module(text)
        except Exception:  # fixtures of bad input
            continue
        out[path.name] = text
    return out


SOURCES = _readable(FIXTURES + OWN)


def _one_function(findings: int) -> str:
    """A module whose findings all stand in one function (each once walked the whole function),
    and as many at module level (each once scanned the whole module body)."""
    body = []
    top = []
    for k in range(findings):
        body.append(f"    t{k} = torch.zeros(8, device='cuda')\n    t{k}[1] = 0\n    n{k} = len(t{k})\n")
        top.append(f"m{k} = torch.empty(4, device='cuda')\nm{k}[0] = 1\n")
    return "import torch\n\n\ndef build():\n" + "".join(body) + "\n\n" + "".join(top)


def _calls(text: str) -> int:
    engine = Engine(Settings(root=Path.cwd()), collect([text]))
    profile = cProfile.Profile()
    profile.enable()
    findings = engine.analyze("big.py", text)
    profile.disable()
    assert len([f for f in findings if f.code == "H2D001"]) == text.count("] = ")
    stats = pstats.Stats(profile)
    return sum(row[1] for row in stats.stats.values())  # type: ignore[attr-defined]


def test_work_grows_linearly_with_the_file() -> None:
    """4x the findings (and lines) must cost about 4x the calls, not 16x: before, each finding
    walked its whole function, the module body and the text again (ratio ~11 here)."""
    small, large = _calls(_one_function(15)), _calls(_one_function(60))
    assert large / small < 5.5, (small, large)


def _with_libcst_visit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scopes, "fast_visit", lambda node, visitor: node.visit(visitor))


def _facts(module: cst.Module) -> object:
    scopes = ScopeMap.of(module, "")
    chains = {k: tuple(id(s) for s in v) for k, v in scopes.chains.items()}
    per_scope = []
    for scope in [s for chain in scopes.chains.values() for s in chain]:
        per_scope.append((scope.name.value, _scopes.local_names(scope), scopes.declared_global(scope)
                          if isinstance(scope, cst.FunctionDef) else None,
                          _scopes._closure_names(scope) if isinstance(scope, cst.FunctionDef) else None))
    statements = [bound_names([s]) for s in module.body]
    imports = ModuleImports.of(module)
    return chains, per_scope, statements, [id(n) for n in imports.top], [(id(f), id(n)) for f, n in imports.nested]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_reading_walk_collects_what_libcsts_visit_collects(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = cst.parse_module(SOURCES[name])
    fast = _facts(module)
    _with_libcst_visit(monkeypatch)
    assert _facts(module) == fast


# Statements whose position LibCST computes from a child's (``end_node``): a child left out of
# the compact table made ``Positions`` raise KeyError, and H2D001 lost the file's findings.
_END_NODE_SOURCES = {
    "star import": "from os import *\nimport torch\nt = torch.zeros(4, device='cuda')\nt[0] = 1\n",
    "star import in a function": "def f():\n    from os.path import *  # noqa\n",
    "parenthesized import": "from os import (\n    path,\n    sep,\n)\n",
    "try": "try:\n    x = 1\nexcept E:\n    pass\nelse:\n    y = 2\nfinally:\n    z = 3\n",
    "match": "match v:\n    case [a, *_]:\n        pass\n    case _:\n        pass\n",
    "if and while": "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\nwhile c:\n    pass\nelse:\n    pass\n",
}


@pytest.mark.parametrize("source", [SOURCES[n] for n in sorted(SOURCES)]
                         + [_END_NODE_SOURCES[n] for n in sorted(_END_NODE_SOURCES)],
                         ids=sorted(SOURCES) + sorted(_END_NODE_SOURCES))
def test_positions_are_libcsts(source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module)
    assert all(positions[node] == where for node, where in expected.items())


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_positions_asked_in_any_order_are_libcsts(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement's table at a time, nodes looked for near the last one, by a walk, then by
    the index (small limits, so that every path is taken), in an order no rule would use."""
    import random

    monkeypatch.setattr(Positions, "KEPT", 2)
    monkeypatch.setattr(Positions, "NEAR", 1)
    monkeypatch.setattr(Positions, "FAR_SCANS", 3)
    module = cst.parse_module(SOURCES[name])
    expected = list(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider).items())
    random.Random(name).shuffle(expected)
    positions = Positions(module)
    assert all(positions[node] == where for node, where in expected)


_TEXT = st.lists(st.sampled_from(["global", "nonlocal", " ", "\n", ";", "x", "y_1", "xy", ".", "#", "é", "\u0301",
                                  "_", "1", "globalx", "(", ","]), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=_TEXT, name=st.sampled_from(["x", "y_1", "xy", "global", "é", "x\u0301", "_"]))
def test_global_declarations_read_once_answer_as_the_regex_did(text: str, name: str) -> None:
    expected = re.search(rf"\b(?:global|nonlocal)\b[^\n;]*\b{re.escape(name)}\b", text) is not None
    assert ScopeMap(cst.Module([]), {}, text).rebinds_anywhere(name) == expected


_PIECES = [
    "x = 1\n", "y = 2; z = 3\n", "# comment\n", "\n", "def f(a):\n    return a\n", "def g():\n\tpass\n",
    "class C:\n    v = 1\n    # inner\n", "@dec\ndef h():\n    pass\n", "if x:\n    pass\nelse:\n    y = 1\n",
    "s = '''a\nb'''\n", "t = (1,\n     2)\n", "u = 1 \\\n    + 2\n", "async def k():\n    await x\n",
]


@settings(max_examples=80, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=25),
       newline=st.sampled_from(["\n", "\r\n", "\r"]), last_newline=st.booleans(), chunk=st.integers(1, 6))
def test_chunked_parse_is_the_whole_parse(pieces: List[str], newline: str, last_newline: bool, chunk: int) -> None:
    text = "".join(pieces).replace("\n", newline)
    if not last_newline:
        text = text.rstrip("\r\n")
    try:
        whole = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return
    parts = parse_module_in_chunks(text, chunk_lines=chunk)
    assert parts.deep_equals(whole) and parts.code == whole.code
    for attribute in ("default_indent", "default_newline", "encoding", "has_trailing_newline"):
        assert getattr(parts, attribute) == getattr(whole, attribute)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_chunked_parse_of_real_files(name: str) -> None:
    text = SOURCES[name]
    parts = parse_module_in_chunks(text, chunk_lines=3)
    whole = cst.parse_module(text)
    assert parts.deep_equals(whole) and parts.default_indent == whole.default_indent


def test_chunked_parse_reports_syntax_errors_as_the_whole_parse() -> None:
    text = "x = 1\n" * 10 + "def f(:\n    pass\n" + "y = 2\n" * 10
    with pytest.raises(cst.ParserSyntaxError) as whole:
        cst.parse_module(text)
    with pytest.raises(cst.ParserSyntaxError) as parts:
        parse_module_in_chunks(text, chunk_lines=2)
    assert (parts.value.raw_line, parts.value.raw_column) == (whole.value.raw_line, whole.value.raw_column)


# -- CPython's tree in chunks (issue 15 item 22: its whole-file parse peaked near 370 MB for
# 100k lines, more than LibCST's) ---------------------------------------------------------------

_PY_PIECES = _PIECES + [
    "s2 = '''\nx = 1\n'''\n", "s3 = \"\"\"\nelse:\n\"\"\"\n", "v = [\n1,\n]\n", "w = 1 + \\\n2\n",
    "try:\n    pass\nexcept E:\n    pass\nfinally:\n    pass\n", "@dec\n\ndef i():\n    pass\n",
    "\x0cq = 1\n", "r = '\\d'\n", "match m:\n    case 1:\n        pass\n", "def bad(:\n",
    "for k in x:\n    pass\nelse:\n    pass\n", "x = (1,\n)\n",
]


def _cpython(text: str) -> object:
    """What `compile` answers: the tree with every position, or the error's message and place."""
    import ast
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tree = compile(text, "f.py", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            answer: object = ast.dump(tree, include_attributes=True)
        except SyntaxError as exc:
            answer = ("error", exc.msg, exc.lineno, exc.offset, exc.end_lineno, exc.end_offset)
    return answer, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def _chunked(text: str, chunk: int) -> object:
    import ast
    import warnings

    from lint_h2d.parse_chunks import parse_python

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            answer: object = ast.dump(parse_python(text, "f.py", chunk_lines=chunk), include_attributes=True)
        except SyntaxError as exc:
            answer = ("error", exc.msg, exc.lineno, exc.offset, exc.end_lineno, exc.end_offset)
    return answer, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PY_PIECES), min_size=1, max_size=25),
       newline=st.sampled_from(["\n", "\r\n", "\r"]), last_newline=st.booleans(), chunk=st.integers(1, 6))
def test_chunked_cpython_parse_is_the_whole_parse(pieces: List[str], newline: str, last_newline: bool,
                                                  chunk: int) -> None:
    """Same tree (every line and column), same error, same warnings, wherever the cuts fall:
    in strings, brackets, continuations, between a decorator and its function, before `else`."""
    text = "".join(pieces).replace("\n", newline)
    if not last_newline:
        text = text.rstrip("\r\n")
    assert _chunked(text, chunk) == _cpython(text)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_chunked_cpython_parse_of_real_files(name: str) -> None:
    assert _chunked(SOURCES[name], 3) == _cpython(SOURCES[name])


def test_a_long_file_is_never_parsed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine parses a long file with CPython and LibCST a chunk at a time, and drops
    CPython's tree before LibCST parses (it is the larger of the two)."""
    import ast
    import gc

    from lint_h2d import parse_chunks

    text = _one_function(2) + "".join(
        f"b{k} = torch.empty(4, device='cuda')\nb{k}[0] = 1\n\n\ndef f{k}(x):\n    return x\n" for k in range(3000))
    lines = text.count("\n")
    compiled: List[int] = []
    real_compile = parse_chunks._compile

    def counting(source: str, filename: str) -> ast.Module:
        compiled.append(len(source.lstrip("\n").splitlines()))
        return real_compile(source, filename)

    alive: List[int] = []
    real_parse = parse_chunks.parse_module_in_chunks

    def parse(*args: object, **kwargs: object) -> cst.Module:
        gc.collect()
        alive.append(sum(1 for o in gc.get_objects() if isinstance(o, ast.Module)))
        return real_parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parse_chunks, "_compile", counting, raising=False)
    monkeypatch.setattr("lint_h2d.analysis.parse_module_in_chunks", parse)
    findings = Engine(Settings(root=Path.cwd()), collect([])).analyze("big.py", text)
    assert len([f for f in findings if f.code == "H2D001"]) == 3004
    assert compiled and max(compiled) <= 2 * parse_chunks.CHUNK_LINES < lines
    assert alive == [0]


def test_json_report_one_finding_at_a_time_is_json_dumps() -> None:
    """The JSON reporter renders entry by entry (bounded memory) exactly as one `json.dumps`."""
    import json

    from lint_h2d.report import json_format

    text = _one_function(3) + "x = 'é\\u2028\"\\\\'\n"
    findings = Engine(Settings(root=Path.cwd()), collect([text])).analyze("big.py", text)
    assert findings and any(f.fix for f in findings)
    for subset in (findings, findings[:1], []):
        expected = json.dumps([json_format._entry(f) for f in subset], indent=2) + "\n"
        assert json_format.render(subset, None) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("size, paused", [(100, True), (600 * 1024, False)])
def test_a_long_files_analysis_keeps_the_collector_running(size: int, paused: bool) -> None:
    """The collector is paused while a file is analyzed (a third of a cold scan's CPU went to
    collections that found nothing), but not for a long file: its trees' cyclic garbage, left
    until the end, raised a 100k-line file's peak from 318 to 406 MB."""
    import gc

    from lint_h2d import pipeline

    seen = []

    class Engine:
        def analyze(self, path: str, text: str, verdict: object = None) -> list:
            seen.append(gc.isenabled())
            return []

    assert gc.isenabled()
    assert pipeline._analyze(Engine(), "x.py", "x" * size) == []  # type: ignore[arg-type]
    assert seen == [not paused] and gc.isenabled()
