"""A first, cheaper look at a file: LibCST on the top-level units that may hold a finding.

Why: the files that survive the prefilter are parsed by LibCST whole (most of the analysis'
time), yet the walk enters only the `def`s and `class`es that hold a statement some rule asks
for (`scope.wanted_statements`); on vLLM about half of their lines are in the others, and only
one survivor in ten has a finding at all.  So the engine first parses a *stubbed* text: every
top-level `def`/`class` that holds no statement a rule may ask for keeps its header lines
(decorators, signature, bases: what the module binds) and gets an empty body on the same rows
(`pass`, or a string that spans them: `_empty_body`), so the lines and columns of everything
kept are the file's own.  When
that text gives no finding the file has none; when it gives one (or an error), the file is
analyzed again whole, as before, and those findings are the ones reported: the stubbed pass
only ever *skips* work, so findings, fixes and `--diff` are exactly the whole-file ones.

Why no finding of the stubbed text means no finding of the file: a finding is a statement a
rule asked for, in a kept unit or at module level, both kept verbatim; what the walk knows
there comes from the module-level statements (kept), the unit itself, and the project's facts,
never from another top-level unit's body (a module-level `def`/`class` binds its name to the
project's function or class, `scope._Walker.definition`, which the stub still does; a unit
without a wanted statement is not walked at all, `ModuleWalker.walk_function`), save the
bindings of a name a function declares `global` (`ModuleWalker.assigned_globals`): a unit
holding a `global` statement is kept whole.  Context that
only *silences* a finding (a gate elsewhere, a test off the host) can make the stubbed pass
report more, never less, and more only costs the second pass.  Rules whose findings depend on
other units' bodies (H2D002 follows the calls of capture regions into other functions) and
rules this module does not know keep the whole-file parse.

Within a kept class, a method is stubbed the same way when the walk of the class never needs
its body (`_stubbed_methods`): it holds nothing a rule may ask for, it is not `__init__`, and
by its syntax it cannot tell the class walk a field (no attribute target, annotated
assignment, `register_buffer` or constructor call), so the class walk's passes skip it and
the walk never enters it; what rules read of it beyond that only silences, as for a unit.
On vLLM the big classes (a model runner, a worker) are most of what the stubbed pass parsed.

H2D001's test is sharper than its `wants` where the engine can afford it: of a file's
`T[I] = V` statements, only those whose target stage 2 says may be a device tensor keep their
unit (`one_of`, `prefilter.h2d001_may_statements`); the others (host lists, CPU tensors) are
never flagged, so their units are stubbed as if they held none.
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_left
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from fixers.edits import line_offsets
from lint_h2d.inference.reaching import every_statement
from lint_h2d.prefilter import node_fields

#: The attributes of a call H2D003 (`.to/.cuda/.copy_` with a non-blocking flag) and H2D004
#: (`torch.<factory>(...).to/.cuda(...)`) ask about.
_MOVES = frozenset({"to", "cuda", "copy_"})


def _subscript_store(node: ast.AST) -> bool:
    """`T[I] = V` with one target: H2D001's `wants` (`Assign`, one target, a `Subscript`)."""
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript)


def _move_call(node: ast.AST) -> bool:
    """A `<x>.to/.cuda/.copy_(...)` call: what H2D004's `wants` looks for, and more."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MOVES


def _non_blocking_move_call(node: ast.AST) -> bool:
    """A move call that may pass a non-blocking flag: H2D003's `wants` (`has_copy_call`: a
    `non_blocking=` keyword, or a second positional argument of `.copy_`/`.cuda`), and more
    (the flag's value is not read; a starred argument counts as positional).

    Why not `_move_call`: most of a serving file's `.to(...)` calls pass no flag, and a unit
    holding only those was kept whole for H2D003 (a fifth of its files' stubbed lines on vLLM)."""
    if not _move_call(node):
        return False
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    if any(keyword.arg == "non_blocking" for keyword in node.keywords):
        return True
    return node.func.attr in ("copy_", "cuda") and len(node.args) > 1


def _statement_test(test: Callable[[ast.AST], bool]) -> Callable[[ast.AST], bool]:
    """Mark `test` as one that holds for statements only (an `ast.Assign`): `_wanted_rows` then
    visits the statements of the tree, not every expression node."""
    setattr(test, "statements_only", True)
    return test


#: Rule code → a test that holds for some node of every statement the rule's `wants` accepts
#: (a superset: the test may hold where `wants` does not).  A code not here keeps the whole
#: parse.  `tests/test_parse_units.py` checks each against the rule on its fixtures.
UNIT_TESTS: Dict[str, Callable[[ast.AST], bool]] = {
    "H2D001": _statement_test(_subscript_store),
    "H2D003": _non_blocking_move_call,
    "H2D004": _move_call,
}


#: A `global` statement: its unit is kept whole (`stubbed_text`).
_GLOBAL_DECLARATION = _statement_test(lambda node: type(node) is ast.Global)


def unit_tests_for(codes: Iterable[str], sharper: Optional[Mapping[str, Callable[[ast.AST], bool]]] = None
                   ) -> Optional[Tuple[Callable[[ast.AST], bool], ...]]:
    """The tests of these rules, or None when one of them has none (parse the file whole).
    `sharper`: a test of this very tree to use instead of a rule's own (`one_of`)."""
    tests = []
    for code in codes:
        test = (sharper or {}).get(code) or UNIT_TESTS.get(code)
        if test is None:
            return None
        if test not in tests:
            tests.append(test)
    return tuple(tests)


def one_of(nodes: FrozenSet[int]) -> Callable[[ast.AST], bool]:
    """A unit test that holds for the nodes of one tree whose `id` is in `nodes` (that tree is
    the one stubbed, alive meanwhile: ids are not reused).

    Why: H2D001's stage 2 says which of a file's `T[I] = V` statements may be flagged
    (`prefilter.h2d001_may_statements`, with the project's facts); a unit holding only the
    others (writes into host lists and tensors) is stubbed like one without any.  On vLLM's
    files that pass stage 2 for H2D001 and have no finding, about a fifth of the lines the
    stubbed pass parsed."""
    return _statement_test(lambda node: type(node) is ast.Assign and id(node) in nodes)


def _wanted_rows(tree: ast.Module, tests: Sequence[Callable[[ast.AST], bool]]) -> List[int]:
    """The rows (sorted) where a node some test accepts begins, in one pass over the tree.

    Why rows: a unit (a top-level `def`/`class`, a method, a statement of a class body) holds
    such a node exactly when one begins within the unit's rows (`_holds_wanted`), because the
    statements of one body never share a row (a compound statement ends its last row, and `;`
    joins simple statements only, which hold no unit).  So one walk answers for every unit and
    method; walking each unit with `ast.walk` (and a kept class's methods once more) cost the
    stubbed pass as much as a summary of the file."""
    rows: List[int] = []
    if all(getattr(test, "statements_only", False) for test in tests):
        for stmt in every_statement(tree):
            if any(test(stmt) for test in tests):
                rows.append(stmt.lineno)
    else:
        queue: List[Any] = list(tree.body)
        append, extend = queue.append, queue.extend
        for node in queue:
            if any(test(node) for test in tests):
                rows.append(node.lineno)
            for name in node_fields(type(node)):
                value = getattr(node, name, None)
                if type(value) is list:
                    extend(value)
                elif value is not None:
                    append(value)
    rows.sort()
    return rows


def _first_row(unit: ast.stmt) -> int:
    """The unit's first row: its first decorator's, or its own."""
    return int(min([unit.lineno] + [d.lineno for d in getattr(unit, "decorator_list", ())]))


def _holds_wanted(unit: ast.stmt, rows: Sequence[int]) -> bool:
    """Some node a test accepts begins within `unit`'s rows (`_wanted_rows`)."""
    at = bisect_left(rows, _first_row(unit))
    return at < len(rows) and rows[at] <= (unit.end_lineno or unit.lineno)


def _body_line(unit: ast.stmt, lines: Sequence[str]) -> Optional[int]:
    """The line (1-based) where the unit's body starts, when the body starts a line of its own
    below the header (`def f(): return 1` has none: it is kept as it is)."""
    first = unit.body[0]  # type: ignore[attr-defined]
    # A decorated first statement (`@dataclass` over a nested class) starts at its first
    # decorator: stubbing from the `class`/`def` line left the decorator over `pass`, a text
    # that does not parse, so the file paid for a failed stubbed pass and the whole one.
    row = _first_row(first)
    line = lines[row - 1]
    indent = len(line) - len(line.lstrip(" \t"))
    if row <= unit.lineno or len(line[:indent].encode("utf-8")) != _start_column(first, row):
        return None
    return int(row)


def _start_column(statement: ast.stmt, row: int) -> int:
    """The column (UTF-8 bytes) where `statement` begins on `row`: its own, or its decorator's."""
    for decorator in getattr(statement, "decorator_list", ()):
        if decorator.lineno == row:
            return int(decorator.col_offset) - 1  # the `@` before the decorator's expression
    return int(statement.col_offset)


_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_UNIT_START = re.compile(r"^(?:async[ \t]+def|def|class)[ \t]", re.MULTILINE)
_CLASS_START = re.compile(r"^class[ \t]", re.MULTILINE)
_METHOD_START = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]", re.MULTILINE)


def may_stub(text: str) -> bool:
    """The text may have two top-level units, or a top-level class with two methods (lines
    opening them: a guess, a string may hold such a line).  Otherwise nothing can be left out
    that the walk would enter, and the CPython parse that finds the units would be spent for
    nothing."""
    found = _UNIT_START.search(text)
    if found is None:
        return False
    if _UNIT_START.search(text, found.end()) is not None:
        return True
    method = _METHOD_START.search(text) if _CLASS_START.search(text) is not None else None
    return method is not None and _METHOD_START.search(text, method.end()) is not None


def _may_record(method: ast.stmt, cls: ast.ClassDef) -> bool:
    """Whether walking `method` may tell the class walk something about the class's fields
    (`scope.ModuleWalker.walk_class`), by syntax only and wider than the walk's own tests: an
    attribute in an assignment, `for` or `with` target (`scope._may_record`, which also skips
    nested definitions: these are looked into here), an annotated assignment (`_declared_numbers`
    reads them), `register_buffer(...)`, or a call of the class or of a parameter (`cls(...)`,
    a constructor whose keywords are fields)."""
    assert isinstance(method, _FUNCTIONS)
    args = method.args
    called = {cls.name} | {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    for node in ast.walk(method):
        targets: List[ast.AST] = []
        if isinstance(node, ast.AnnAssign):
            return True
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in called \
                    or isinstance(func, ast.Attribute) and func.attr == "register_buffer":
                return True
        if any(isinstance(part, ast.Attribute) for target in targets for part in ast.walk(target)):
            return True
    return False


def _stubbed_methods(cls: ast.ClassDef, rows: Sequence[int]) -> List[ast.stmt]:
    """The methods of a kept class whose bodies the walk of the class never needs: they hold
    nothing the tests accept (no row of `rows`, `_wanted_rows`; so no statement of theirs is
    walked: `ModuleWalker.walk_function` skips a method without one), are not `__init__`
    (what runs at construction, whether the base's `__init__` runs: read from its body) and
    cannot tell the class walk a field
    (`_may_record`).  None when a statement of the class's own body (not of a method) holds
    something the tests accept: such a statement's block is the class body, methods included,
    which rules read (`StatementFact.block`)."""
    methods = [s for s in cls.body if isinstance(s, _FUNCTIONS)]
    if any(_holds_wanted(s, rows) for s in cls.body if not isinstance(s, _FUNCTIONS)):
        return []
    return [m for m in methods if m.name != "__init__" and not _holds_wanted(m, rows)
            and not _may_record(m, cls)]


def _empty_body(unit: ast.stmt, lines: Sequence[str], emptied: Dict[int, str]) -> None:
    """Mark `unit`'s body for an empty body on the same rows, when the body starts a line of
    its own: `pass` for a one-line body, else one string statement that opens on the body's
    first line (same indentation) and closes on its last, the lines between left empty (their
    line endings are the string's only content).

    Why a string and not `pass` and empty lines: LibCST makes three nodes of each empty line
    (`EmptyLine`, its whitespace and its newline), each built and validated in Python, and an
    emptied body is most of a stub's lines; a string is one token and one node however many
    rows it spans (on vLLM the stubbed pass's LibCST parse took about an eighth less).  Like
    `pass` it binds nothing, calls nothing and holds no statement a rule asks for."""
    start = _body_line(unit, lines)
    end = unit.end_lineno
    if start is None or end is None:
        return
    first = lines[start - 1]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if end <= start:
        emptied[start] = indent + "pass"
        return
    emptied[start] = indent + '"""'
    for row in range(start + 1, end):
        emptied[row] = ""
    emptied[end] = '"""'


def stubbed_text(text: str, tree: ast.Module, tests: Sequence[Callable[[ast.AST], bool]]) -> Optional[str]:
    """`text` with the body of every top-level unit that holds nothing `tests` accept replaced
    by an empty one on the same rows (`_empty_body`: `pass`, or a string from the body's first
    line to its last), each line ending kept, and so for the methods of a kept class that the
    walk never needs
    (`_stubbed_methods`); None when nothing can be stubbed (or the text has form feeds, which
    LibCST reads through `parse_view`: the whole parse handles those)."""
    if "\f" in text:
        return None
    offsets = line_offsets(text)
    ends = offsets[1:] + [len(text)]
    lines = [text[a:b] for a, b in zip(offsets, ends)]
    emptied: Dict[int, str] = {}
    if "global" in text:
        # A function binding a module-level name it declares `global` tells every unit's walk
        # what the name may hold (`scope.ModuleWalker.assigned_globals`): it keeps its body.
        tests = tuple(tests) + (_GLOBAL_DECLARATION,)
    rows = _wanted_rows(tree, tests)
    for unit in tree.body:
        if not isinstance(unit, _UNITS):
            continue
        if not _holds_wanted(unit, rows):
            _empty_body(unit, lines, emptied)
        elif isinstance(unit, ast.ClassDef):
            for method in _stubbed_methods(unit, rows):
                _empty_body(method, lines, emptied)
    if not emptied:
        return None
    out: List[str] = []
    for row, line in enumerate(lines, start=1):
        body = emptied.get(row)
        if body is None:
            out.append(line)
        else:
            out.append(body + line[len(line.rstrip("\r\n")):])
    return "".join(out)


__all__ = ["UNIT_TESTS", "may_stub", "one_of", "stubbed_text", "unit_tests_for"]
