"""The stubbed first pass (`lint_h2d/parse_units.py`): it may only skip work, never findings.

The engine parses a file whose top-level units hold no statement a rule may ask for with those
units' bodies replaced by `pass`; a file is reported clean from that pass alone only when it
gives no finding.  These tests pin the three things that must hold for that to be exact: the
stub keeps every kept line where it was (and binds the same top-level names), the unit tests
accept every statement the rules ask for, and a file with a finding is never found clean by
the stubbed pass (so its findings come from the whole parse, fixes included).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import List

import libcst as cst
import pytest

from lint_h2d.analysis import Engine
from lint_h2d.capture_flow import CaptureRegions
from lint_h2d.config import Settings
from lint_h2d.findings import Finding
from lint_h2d.inference.project import collect
from lint_h2d.inference.scope import wanted_statements
from lint_h2d.parse_units import UNIT_TESTS, stubbed_text, unit_tests_for
from lint_h2d.rules import all_rules
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(p for p in FIXTURES.glob("*.py"))

SOURCE = """\
import torch
BUF = torch.zeros(4, device="cuda")


@decorated(
    "arg",
)
def helper(x: int) -> int:
    '''A docstring
    over lines.'''
    y = x + 1
    return y


class Holder(Base, metaclass=Meta):
    class Inner:
        def m(self):
            return 1

    def method(self):
        return torch.ones(3)


def one_liner(): return 2


def writes(n):
    BUF[0] = 1
"""


def _stub(text: str, codes: List[str]) -> str:
    tests = unit_tests_for(codes)
    assert tests is not None
    stubbed = stubbed_text(text, ast.parse(text), tests)
    assert stubbed is not None
    return stubbed


def test_the_stub_keeps_every_line_and_the_kept_units_verbatim() -> None:
    stubbed = _stub(SOURCE, ["H2D001"])
    old, new = SOURCE.split("\n"), stubbed.split("\n")
    assert len(old) == len(new)
    changed = [i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b]
    # helper's body from its docstring on, Holder's body from `class Inner` on.
    # Each emptied body is one string on the body's rows (`_empty_body`).
    assert new[8:12] == ['    """', "", "", '"""'] and new[15] == '    """' and new[20] == '"""'
    assert all(new[i - 1] in ("", '    """', '"""') for i in changed)
    assert new[4:8] == old[4:8]  # decorator and signature kept
    assert new[14] == old[14]  # the class header, bases and keywords kept
    assert new[23:] == old[23:]  # `one_liner` (no body line of its own) and `writes` kept
    module = cst.parse_module(stubbed)
    names = [s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    assert names == ["helper", "Holder", "one_liner", "writes"]
    assert module.default_indent == cst.parse_module(SOURCE).default_indent


def _libcst_nodes(text: str) -> int:
    count = 0

    class Counter(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal count
            count += 1
            return True

    cst.parse_module(text).visit(Counter())
    return count


def test_an_emptied_body_costs_libcst_the_same_however_long_it_was() -> None:
    """An emptied body is one string over its rows, not `pass` and empty lines: LibCST built
    three nodes for each empty line (`EmptyLine`, its whitespace, its newline), most of a
    stub's nodes.  The stub of a 2-line body and of a 300-line one parse to as many nodes,
    and the rows after it keep their numbers."""
    def source(body_lines: int) -> str:
        body = "".join(f"    x{i} = {i}  # note\n" for i in range(body_lines))
        return f"import torch\n\n\ndef long(n):\n{body}    return n\n\n\ndef writes(t):\n    t[0] = 1\n"

    short, long = _stub(source(2), ["H2D001"]), _stub(source(300), ["H2D001"])
    assert "x1 = 1" not in short and "x299 = 299" not in long
    assert _libcst_nodes(short) == _libcst_nodes(long)
    assert long.split("\n")[304:310] == ['"""', "", "", "def writes(t):", "    t[0] = 1", ""]
    assert short.split("\n")[4:7] == ['    """', "", '"""']


def test_the_stub_keeps_line_endings_and_leaves_form_feeds_to_the_whole_parse() -> None:
    crlf = SOURCE.replace("\n", "\r\n")
    stubbed = _stub(crlf, ["H2D001"])
    assert stubbed.count("\r\n") == crlf.count("\r\n") and "\n" not in stubbed.replace("\r\n", "")
    tests = unit_tests_for(["H2D001"])
    assert tests is not None
    feed = SOURCE.replace("def writes", "\fdef writes")
    assert stubbed_text(feed, ast.parse(feed), tests) is None


def test_units_with_a_wanted_statement_are_kept() -> None:
    # With H2D003/H2D004's test, `Holder` holds no move either: only `writes` is H2D001's.
    assert "return torch.ones(3)" not in _stub(SOURCE, ["H2D003"])
    moved = SOURCE.replace("torch.ones(3)", "torch.ones(3).to(d, non_blocking=True)")
    assert "non_blocking=True" in _stub(moved, ["H2D003"])
    assert unit_tests_for(["H2D001", "H2D999"]) is None  # an unknown rule: parse whole


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_unit_tests_accept_every_unit_a_rule_asks_about(path: Path) -> None:
    """Each `UNIT_TESTS` entry holds in every top-level unit where its rule's `wants` accepts a
    statement (what the walk enters: `wanted_statements`' definitions)."""
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
        module = cst.parse_module(text)
    except (SyntaxError, cst.ParserSyntaxError):
        return
    rules = {r.code: r for r in all_rules()}
    for code, test in UNIT_TESTS.items():
        rule = rules[code]
        _, needed = wanted_statements(module, lambda s, c, rule=rule: rule.wants(s), CaptureRegions())
        units = [s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        cpython = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        assert len(units) == len(cpython)
        for unit, node in zip(units, cpython):
            if id(unit) in needed:
                assert any(test(n) for n in ast.walk(node)), (code, node.name)


def _engine(text: str) -> Engine:
    return Engine(Settings(root=FIXTURES), collect([text]))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_a_file_with_a_finding_is_never_found_clean_by_the_stubbed_pass(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    engine = _engine(text)
    rules = [r for r in engine.rules_for(str(path)) if r.code in UNIT_TESTS]
    whole: List[Finding] = engine._libcst_findings(str(path), text, None, rules, suppress=False)
    if not whole or not rules:
        return
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    _, may_find = engine._may_find(str(path), text, tree, rules)
    assert may_find


def test_a_finding_in_a_kept_unit_reads_the_module_level_context() -> None:
    """`BUF` is a device tensor by a module-level statement; the unit writing it is kept and
    the stubbed pass finds it, so the file goes to the whole parse (its findings unchanged)."""
    engine = _engine(SOURCE)
    rules = engine.rules_for("case.py")
    _, may_find = engine._may_find("case.py", SOURCE, ast.parse(SOURCE), rules)
    assert may_find
    assert [f.code for f in engine.analyze("case.py", SOURCE)] == ["H2D001"]


def test_a_file_without_a_finding_is_found_clean_by_the_stubbed_pass() -> None:
    text = SOURCE.replace("BUF[0] = 1", "BUF = [0]; BUF[0] = 1").replace(
        'BUF = torch.zeros(4, device="cuda")', "BUF = [0, 0]")
    engine = _engine(text)
    rules = [r for r in engine.rules_for("case.py") if r.code == "H2D001"]
    _, may_find = engine._may_find("case.py", text, ast.parse(text), rules)
    assert not may_find
    assert engine.analyze("case.py", text) == []


def test_a_file_with_one_unit_is_not_parsed_for_a_stub() -> None:
    from lint_h2d.parse_units import may_stub

    assert not may_stub("import torch\n\n\ndef f(t):\n    t[0] = 1\n")
    assert may_stub("def f():\n    pass\n\n\nclass A:\n    pass\n")
    assert may_stub("async def f():\n    pass\n\n\nasync  def g():\n    pass\n")
    assert not may_stub("x = '''\\ndef f(): pass\\n'''\n    def g(): pass\n")


DECORATED_FIRST = """\
import dataclasses


class Holder:
    @dataclasses.dataclass(frozen=True)
    class Key:
        size: int

    def method(self):
        return 1


class Other:
    @staticmethod
    def build(n): return n


def writes(t):
    t[0] = 1
"""


def test_a_body_that_starts_with_a_decorated_statement_is_stubbed_from_its_decorator() -> None:
    """The decorator belongs to the body: stubbing from the `class Key` line left `@...`
    over `pass`, a stub that does not parse (each such file paid a failed stubbed pass and the
    whole parse).  A one-line body after a decorator on its own line is stubbed the same way."""
    stubbed = _stub(DECORATED_FIRST, ["H2D001"])
    ast.parse(stubbed)
    cst.parse_module(stubbed)
    lines = stubbed.split("\n")
    assert lines[4] == '    """' and lines[5:9] == ["", "", "", ""] and lines[9] == '"""'
    assert lines[13] == '    """' and lines[14] == '"""'
    assert lines[17:] == DECORATED_FIRST.split("\n")[17:]  # `writes` kept
    spaced = DECORATED_FIRST.replace("@dataclasses", "@ dataclasses")
    assert "class Key" in _stub(spaced, ["H2D001"])  # `@ x`: not where the rule expects; kept


def test_h2d003_keeps_only_units_with_a_flagged_move() -> None:
    """H2D003 asks only about moves that pass a non-blocking flag (`has_copy_call`): a unit
    whose `.to(...)` calls pass none is stubbed for it, and kept for H2D004 (any move)."""
    plain = SOURCE.replace("torch.ones(3)", "torch.ones(3).to(device)")
    assert "torch.ones(3).to(device)" not in _stub(plain, ["H2D003"])
    assert "torch.ones(3).to(device)" in _stub(plain, ["H2D004"])
    assert "torch.ones(3).to(device)" in _stub(plain, ["H2D003", "H2D004"])
    for call in ("dst.copy_(src, True)", "t.cuda(d, flag)", "t.to(d, non_blocking=False)",
                 "t.copy_(*args)", "t.to(d, non_blocking=nb)"):
        flagged = SOURCE.replace("torch.ones(3)", call)
        keeps = call != "t.copy_(*args)"
        assert (call in _stub(flagged, ["H2D003"])) == keeps, call


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_the_stubbed_pass_stops_at_its_first_finding(path: Path) -> None:
    """`first=True` (the stubbed pass asks only whether there is a finding): one of the
    findings the full run gives when it gives any, none when it gives none."""
    text = path.read_text(encoding="utf-8")
    engine = _engine(text)
    rules = engine.rules_for(str(path))
    whole = engine._libcst_findings(str(path), text, None, rules, suppress=False)
    first = engine._libcst_findings(str(path), text, None, rules, suppress=False, first=True)
    assert len(first) == min(1, len(whole))
    assert all(f in whole for f in first)


CLASS_SOURCE = """\
import torch


class Runner:
    def __init__(self, n):
        self.n = n

    def reset(self, device):
        self.buf = torch.zeros(self.n, device=device)

    def describe(self):
        name = type(self).__name__
        return f"{name}({self.n})"

    @classmethod
    def make(cls, n):
        return cls(n)

    @staticmethod
    def plain(n):
        total = n + 1
        return total

    def annotated(self):
        width: int = self.n
        return width

    def write(self):
        self.buf[0] = 1
"""


def test_the_methods_of_a_kept_class_that_the_walk_never_needs_are_stubbed() -> None:
    """`describe` and `plain` hold no wanted statement and tell the class walk nothing about its
    fields: stubbed.  `__init__`, `reset` (assigns a field), `make` (calls the class),
    `annotated` (an annotated assignment) and `write` (wanted) are kept verbatim."""
    stubbed = _stub(CLASS_SOURCE, ["H2D001"])
    ast.parse(stubbed)
    old, new = CLASS_SOURCE.split("\n"), stubbed.split("\n")
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    assert [old[i].strip() for i in changed] == [
        "name = type(self).__name__", 'return f"{name}({self.n})"', "total = n + 1", "return total"]
    assert [new[i] for i in changed] == ['        """', '"""', '        """', '"""']


def test_a_class_statement_wanted_outside_its_methods_keeps_every_method() -> None:
    text = CLASS_SOURCE.replace("class Runner:\n", "class Runner:\n    TABLE[0] = 1\n\n")
    assert "return total" in _stub(text + "\n\ndef other():\n    pass\n", ["H2D001"])


def test_a_finding_in_a_kept_method_reads_the_fields_other_methods_set() -> None:
    """`buf` is a device tensor by `reset` (kept: it assigns a field), written in `write`: the
    stubbed pass finds it and the whole parse reports it.  Without the field's device it is
    found clean by the stubbed pass alone."""
    text = CLASS_SOURCE.replace("device=device", 'device="cuda"')
    engine = _engine(text)
    rules = [r for r in engine.rules_for("case.py") if r.code == "H2D001"]
    _, may_find = engine._may_find("case.py", text, ast.parse(text), rules)
    assert may_find
    assert [f.code for f in engine.analyze("case.py", text)] == ["H2D001"]
    host = text.replace('device="cuda"', 'device="cpu"')
    _, may_find = _engine(host)._may_find("case.py", host, ast.parse(host), rules)
    assert not may_find


def test_a_file_with_one_class_may_be_stubbed() -> None:
    from lint_h2d.parse_units import may_stub

    assert may_stub(CLASS_SOURCE)
    assert not may_stub("class A:\n    def only(self):\n        pass\n")


# -- adversarial review (rev14): the shapes the stub must survive -------------------------------
#
# Each text holds a unit the stub empties *before* the writer of a device tensor (so a stub that
# emptied the wrong rows would blank or break the writer) and the writer itself: the stub must
# parse, keep every line it does not empty verbatim and in place, and still find the write.

_ODD_HEAD = 'import torch\nBUF = torch.zeros(4, device="cuda")\n\n\n'
_ODD_WRITER = "\n\ndef writes(n):\n    BUF[0] = 1\n"
ODD_UNITS = {
    "crlf": "def a():\r\n    x = 1\r\n    return x\r\n\r\n",
    "lone-cr": "def a():\r    x = 1\r    return x\r\r",
    "u2028-in-string": 'def a():\n    s = "x\u2028y"\n    return s\n\n',
    "u2029-in-comment": "def a():\n    # one\u2029two\n    return 1\n\n",
    "x85-in-comment": "def a():\n    # c\x85 more\n    return 1\n\n",
    "vt-in-string": 'def a():\n    s = "\x0b\x1c"\n    return s\n\n',
    "tabs": "def a():\n\tx = 1\n\treturn x\n\n",
    "continued-line": "def a():\n    x = 1 + \\\n        2\n    return x\n\n",
    "continued-header": "def a(): \\\n    return 1\n\n",
    "comment-between-decorator-and-def": "@deco\n# comment\ndef a():\n    return 1\n\n",
    "docstring-only": 'def a():\n    """doc\n    more"""\n\n',
    "async": "async def a():\n    await x\n    return 1\n\n",
    "match": "def a(v):\n    match v:\n        case [t, *_]:\n            return t\n    return 0\n\n",
    "walrus": "def a(v):\n    if (n := len(v)) > 1:\n        return n\n\n",
    "nonlocal": "def a():\n    y = 1\n    def b():\n        nonlocal y\n        y = 2\n    return b\n\n",
    "semicolons": "def a():\n    x = 1; y = 2\n    return x\n\n",
    "wide-header": 'def a(x="日本"): \\\n    return 1\n\n',
    "class-statements-between-defs": "class A:\n    X = 1\n    def m(self):\n        return 1\n    Y = m\n"
                                     "    def n(self):\n        return 2\n    Z = property(n)\n\n",
    "decorated-first-method": "class A:\n    @staticmethod\n    # c\n    def m():\n        return 1\n\n"
                              "    def n(self):\n        return 2\n\n",
}


@pytest.mark.parametrize("name", sorted(ODD_UNITS))
def test_odd_text_is_stubbed_in_place_and_keeps_the_finding(name: str) -> None:
    """CR, CRLF, U+2028/U+2029/\\x85/\\v in strings and comments (which `str.splitlines` would
    count as line breaks, CPython does not), tabs, continuations, one decorator's comment,
    `async`, `match`, walrus, `nonlocal`: rows are Python's, the stub parses, the rows
    it keeps are the file's, and the writer's finding is the stubbed pass's too."""
    from fixers.edits import split_lines

    text = _ODD_HEAD + ODD_UNITS[name] + _ODD_WRITER
    stubbed = _stub(text, ["H2D001"])
    assert stubbed != text
    tree = ast.parse(stubbed)
    cst.parse_module(stubbed)
    units = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert [u.name for u in units][-1] == "writes"
    for unit in units[:-1]:  # `pass`, or a string of line endings (`_empty_body`)
        assert len(unit.body) == 1
        body = unit.body[0]
        assert isinstance(body, ast.Pass) or isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant) \
            and str(body.value.value).strip() == ""
    old, new = split_lines(text, keepends=True), split_lines(stubbed, keepends=True)
    assert len(old) == len(new)
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert changed and all(b.strip() in ("", "pass", '"""') for _, b in changed)
    assert all(a[len(a.rstrip("\r\n")):] == b[len(b.rstrip("\r\n")):] for a, b in changed)
    assert "    BUF[0] = 1" in new[-1]
    engine = _engine(text)
    rules = [r for r in engine.rules_for("case.py") if r.code == "H2D001"]
    _, may_find = engine._may_find("case.py", text, ast.parse(text), rules)
    assert may_find
    assert [(f.code, f.location.row) for f in engine.analyze("case.py", text)] == [("H2D001", len(old))]


GLOBAL_WRITER = """\
import torch

WS = None


def unrelated():
    return 1


def init_ws():
    global WS
    WS = torch.zeros(4, device="cuda")


def writes(n):
    WS[0] = 1
"""


def test_a_unit_declaring_a_global_keeps_its_body() -> None:
    """A function binding a module-level name it declares `global` tells every other unit's
    walk what the name may hold (`scope.ModuleWalker.assigned_globals`): the stub keeps its
    body (it empties the others as before), so the stubbed pass finds what the whole parse
    finds, and a `global` rebinding to a list silences the write in both."""
    stubbed = _stub(GLOBAL_WRITER, ["H2D001"])
    assert '    WS = torch.zeros(4, device="cuda")\n' in stubbed and "return 1" not in stubbed
    row = GLOBAL_WRITER.splitlines().index("    WS[0] = 1") + 1
    assert [(f.code, f.location.row) for f in _engine(GLOBAL_WRITER).analyze("case.py", GLOBAL_WRITER)] \
        == [("H2D001", row)]
    to_list = _ODD_HEAD + "def a():\n    global BUF\n    BUF = [0]\n\n" + _ODD_WRITER
    assert "BUF = [0]" in (stubbed_text(to_list, ast.parse(to_list), unit_tests_for(["H2D001"]) or ()) or to_list)
    assert _engine(to_list).analyze("case.py", to_list) == []


FIELD_ONLY_THE_WALK_TELLS = """\
import dataclasses

import torch


@dataclasses.dataclass
class Holder:
    buf: torch.Tensor

    @classmethod
    def make(klass, n):
        return klass(buf=torch.zeros(n, device="cuda"))

    def describe(self):
        return "holder"

    def write(self):
        self.buf[0] = 1


class Looper:
    def __init__(self):
        self.n = 4

    def fill(self):
        for self.buf in [torch.zeros(self.n, device="cuda")]:
            pass

    def write(self):
        self.buf[0] = 1


def other():
    return 1
"""


def test_a_field_only_the_class_walk_tells_keeps_its_method() -> None:
    """`Holder.buf` is a device tensor by the keywords of `klass(...)` in a classmethod,
    `Looper.buf` by a `for` target in `fill`: what the writes read there is the class walk's
    own record of the fields (for `Holder`, over its `buf: torch.Tensor` annotation), so
    stubbing `make` or `fill` would find each file clean (checked: with `_may_record` answering
    False this test fails).  Both are kept; `describe` is stubbed."""
    stubbed = _stub(FIELD_ONLY_THE_WALK_TELLS, ["H2D001"])
    assert "klass(buf=" in stubbed and "for self.buf in" in stubbed
    assert 'return "holder"' not in stubbed
    engine = _engine(FIELD_ONLY_THE_WALK_TELLS)
    found = [(f.code, f.location.row) for f in engine.analyze("case.py", FIELD_ONLY_THE_WALK_TELLS)]
    assert found == [("H2D001", 18), ("H2D001", 30)]
    first = FIELD_ONLY_THE_WALK_TELLS.index("self.buf[0] = 1")
    last = FIELD_ONLY_THE_WALK_TELLS.rindex("self.buf[0] = 1")
    looper_only = FIELD_ONLY_THE_WALK_TELLS[:first] + "pass" + FIELD_ONLY_THE_WALK_TELLS[first + 15:]
    holder_only = FIELD_ONLY_THE_WALK_TELLS[:last] + "pass" + FIELD_ONLY_THE_WALK_TELLS[last + 15:]
    for name, text in (("Holder", holder_only), ("Looper", looper_only)):
        engine = _engine(text)
        assert [f.code for f in engine.analyze("case.py", text)] == ["H2D001"], name
        rules = [r for r in engine.rules_for("case.py") if r.code == "H2D001"]
        _, may_find = engine._may_find("case.py", text, ast.parse(text), rules)
        assert may_find, name


RETURNED_BY_A_STUBBED_METHOD = """\
import torch


class Runner:
    def scratch(self):
        return torch.zeros(4, device="cuda")

    @property
    def table(self):
        return torch.zeros(4, device="cuda")

    @staticmethod
    def make():
        return torch.zeros(4, device="cuda")

    def write(self):
        b = self.scratch()
        b[0] = 1
        self.table[0] = 1
        c = Runner.make()
        c[0] = 1


def other():
    return 1
"""


def test_what_a_stubbed_method_returns_still_reaches_a_kept_method() -> None:
    """A method, a property and a staticmethod returning device tensors: none assigns a field,
    so all three are stubbed, yet each write through them is found by the stubbed pass, since
    what a call returns comes from the project's facts (built from the whole text), not from
    the walk of the callee's body."""
    text = RETURNED_BY_A_STUBBED_METHOD
    stubbed = _stub(text, ["H2D001"])
    assert 'return torch.zeros(4, device="cuda")' not in stubbed
    engine = _engine(text)
    rules = [r for r in engine.rules_for("case.py") if r.code == "H2D001"]
    rows = [18, 19, 21]
    assert [(f.code, f.location.row) for f in engine.analyze("case.py", text)] == [("H2D001", r) for r in rows]
    lines = text.split("\n")
    for keep in rows:  # each write alone still sends the file to the whole parse
        only = "\n".join(line if i + 1 == keep or not line.strip().endswith("] = 1") else
                         line.replace("[0] = 1", "[0:2] = 1") for i, line in enumerate(lines))
        _, may_find = _engine(only)._may_find("case.py", only, ast.parse(only), rules)
        assert may_find, keep


# -- H2D001: only the writes stage 2 says may reach a device tensor keep their unit ----------

SHARP_SOURCE = """\
import torch
from lib import make_buffer


def host_writes(n):
    xs = [0] * n
    xs[0] = 1
    cpu = torch.zeros(4)
    cpu[1] = 2
    return xs, cpu


def device_write(n):
    buf = make_buffer(n)
    buf[0] = 1
    return buf


def other():
    return 3
"""

# Another file of the project: `make_buffer` returns a device tensor (a project fact,
# `call:make_buffer`), which only the project's facts tell `device_write`.
SHARP_LIB = """\
import torch


def make_buffer(n):
    return torch.zeros(n, device="cuda")
"""


def _sharp_stub(text: str, fields: "frozenset[str]") -> str:
    from lint_h2d.parse_units import one_of
    from lint_h2d.prefilter import h2d001_may_statements

    tree = ast.parse(text)
    tests = unit_tests_for(["H2D001"], {"H2D001": one_of(h2d001_may_statements(tree, fields, text))})
    assert tests is not None
    stubbed = stubbed_text(text, tree, tests)
    assert stubbed is not None
    return stubbed


def test_h2d001_keeps_only_units_whose_write_may_reach_a_device_tensor() -> None:
    """`host_writes` writes a list and a CPU tensor (`T[I] = V` both): stubbed for H2D001 once
    stage 2 says which writes may be flagged, kept by the syntactic test alone; `device_write`
    (a device tensor by the project's facts) is kept."""
    facts = collect([SHARP_SOURCE, SHARP_LIB])
    assert "call:make_buffer" in facts.prefilter_names
    stubbed = _sharp_stub(SHARP_SOURCE, facts.prefilter_names)
    assert "xs[0] = 1" not in stubbed and "cpu[1] = 2" not in stubbed
    assert "buf[0] = 1" in stubbed
    assert len(stubbed.splitlines()) == len(SHARP_SOURCE.splitlines())
    assert "xs[0] = 1" in _stub(SHARP_SOURCE, ["H2D001"])  # the syntactic test keeps it


def test_the_sharper_h2d001_stub_reads_the_project_facts() -> None:
    """The only finding is in `device_write`, whose tensor is a device one by a fact of another
    file: without the facts stage 2 finds no write that may be flagged and the unit would be
    stubbed (a file found clean wrongly); the engine passes them, so the stubbed pass finds
    it and the whole parse reports it."""
    assert "buf[0] = 1" not in _sharp_stub(SHARP_SOURCE, frozenset())
    engine = Engine(Settings(root=FIXTURES), collect([SHARP_SOURCE, SHARP_LIB]))
    rules = [r for r in engine.rules_for("case.py") if r.code == "H2D001"]
    _, may_find = engine._may_find("case.py", SHARP_SOURCE, ast.parse(SHARP_SOURCE), rules)
    assert may_find
    found = engine.analyze("case.py", SHARP_SOURCE)
    assert [(f.code, f.location.row) for f in found] == [("H2D001", 15)]
    assert found == Engine(Settings(root=FIXTURES), engine.project, use_prefilter=False).analyze(
        "case.py", SHARP_SOURCE)


def test_a_device_hint_keeps_every_write_for_h2d001() -> None:
    """Stage 2 does not model the settings' device hints: a file mentioning one keeps every
    `T[I] = V` unit (the syntactic test), as its stage 2 keeps H2D001."""
    text = SHARP_SOURCE.replace("xs = [0] * n", "xs = state_of(n)")
    settings = Settings(root=FIXTURES, device_hints=("xs",))
    assert "xs[0] = 1" not in _sharp_stub(text, collect([text, SHARP_LIB]).prefilter_names)
    engine = Engine(settings, collect([text, SHARP_LIB]))
    found = engine.analyze("case.py", text)
    assert found == Engine(settings, engine.project, use_prefilter=False).analyze("case.py", text)
    assert sorted(f.location.row for f in found if f.code == "H2D001") == [7, 15]
