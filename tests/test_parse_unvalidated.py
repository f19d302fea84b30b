"""LibCST's parse without its per-node validation (`parse_chunks.parse_module_unvalidated`, perf5).

The tree must be the one `cst.parse_module` builds, syntax errors must stay the parser's, and
validation must be back on afterwards (for the nodes the fixers build) even when the parse
raises.  The work removed is counted: no node is validated while the analysis parses.
"""
from __future__ import annotations

import ast
import threading
from pathlib import Path
from typing import List

import libcst as cst
import pytest

from lint_h2d.parse_chunks import _unvalidated_parse as parse_module_unvalidated
from lint_h2d.parse_chunks import parse_module_in_chunks

FIXTURES = sorted(Path(__file__).parent.joinpath("fixtures").rglob("*.py"))

ODD = (
    "x = (  # c\n    1 +\\\n 2)\nif a:\n\tpass\nelif (b):  pass\nelse :\n  y = [*z, ]\n"
    "async def f(a, /, b=1, *c, d, **e) -> 'T':\n    async with g() as (h, i): await j\n"
    "    return f'{a!r:>{b}}' 'k', rb'l' b'm'\n@d\nclass C(B, metaclass=M): z: int = 3; w = lambda: (yield)\n"
    "match p:\n    case [1, *r] | {'k': _, **kw} if r: pass\n    case C(x=1) as q: pass\n"
    "try:\n    pass\nexcept* (E, F) as e:\n    del e\nfinally:\n    global G\n"
)


def _sources() -> List[str]:
    out = [ODD]
    for path in FIXTURES:
        text = path.read_text(encoding="utf-8")
        try:
            compile(text, str(path), "exec", ast.PyCF_ONLY_AST)  # the precondition
        except SyntaxError:
            continue
        out.append(text)
    return out


def test_the_tree_is_the_validated_parse() -> None:
    for text in _sources():
        expected = cst.parse_module(text)
        found = parse_module_unvalidated(text)
        assert found.deep_equals(expected)
        assert found.code == expected.code


def test_chunked_parse_is_unvalidated_and_the_same() -> None:
    text = "".join(f"def f{i}(a):\n    return a[{i}] + {i}\n" for i in range(60))
    found = parse_module_in_chunks(text, chunk_lines=20, validate=False)
    assert found.deep_equals(cst.parse_module(text))


def test_what_only_validation_rejects_is_rejected_unless_cpython_accepted() -> None:
    """LibCST's parser takes a str and bytes concatenation; its validation (and CPython) do not:
    the default parse, and the analysis of a text CPython rejects, still validate."""
    text = "x = 'a' b'b'\n"
    with pytest.raises(SyntaxError):
        compile(text, "t.py", "exec", ast.PyCF_ONLY_AST)
    with pytest.raises(cst.CSTValidationError):
        parse_module_in_chunks(text)
    from lint_h2d.analysis import Engine
    from lint_h2d.config import Settings
    from lint_h2d.inference.project import collect

    for prefilter in (True, False):
        findings = Engine(Settings(), collect([""]), use_prefilter=prefilter).analyze(
            "t.py", "import torch\nt = torch.zeros(4, device='cuda')\nt[0] = 1\n" + text)
        assert [f.code for f in findings] == ["H2D901"], findings


def _validations(monkeypatch: pytest.MonkeyPatch, parse: "object") -> int:
    calls = [0]
    original = cst.Name._validate

    def counting(self: cst.Name) -> None:
        calls[0] += 1
        original(self)

    monkeypatch.setattr(cst.Name, "_validate", counting)
    parse("a = b + c\n" * 50)  # type: ignore[operator]
    monkeypatch.undo()
    return calls[0]


def test_no_node_is_validated_while_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _validations(monkeypatch, cst.parse_module) >= 150  # what LibCST's parse does
    assert _validations(monkeypatch, lambda t: parse_module_in_chunks(t, validate=False)) == 0


def test_validation_is_back_on_after_a_parse_and_after_a_syntax_error() -> None:
    parse_module_unvalidated("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.ParserSyntaxError):
        parse_module_unvalidated("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_parses_in_threads_leave_validation_on() -> None:
    errors: List[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                parse_module_unvalidated(ODD)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
