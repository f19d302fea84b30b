"""A scan parses each file with CPython once (issue 12): the tree its summary is built from also
answers the prefilter's stage 2 (`prefilter.tree_verdict`), and the analysis reads that verdict
instead of parsing the file again (`Engine.analyze(..., verdict)`).

What must hold: the verdict's answer is stage 2's answer for every set of project facts (or it
declines, and the analysis parses); a verdict on other text is ignored; findings are the same
with and without verdicts; and a project scan no longer parses twice.
"""
from __future__ import annotations

import ast
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import AbstractSet, List

import pytest

from lint_h2d import cli, prefilter, triage
from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.inference.project import collect
from lint_h2d.pipeline import summary_and_verdict
from lint_h2d.rules import all_rules
from tests.conftest import FIXTURES
from tests.test_prefilter import DEVICE_FIELDS_SOURCE, LOOKALIKES

TEXTS = {p.name: p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))}
TEXTS.update({f"lookalike_{k}": v for k, v in LOOKALIKES.items()})


def _names_in(tree: ast.AST) -> List[str]:
    """Every fact the file could ask about: attributes, `call:` names, `param:` of its defs."""
    out: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            out += [node.attr, "call:" + node.attr]
        elif isinstance(node, ast.Name):
            out.append("call:" + node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [f"param:{node.name}.{a.arg}" for a in node.args.args]
    return out


def _fact_sets(tree: ast.AST) -> List[AbstractSet[str]]:
    every = _names_in(tree)
    return [frozenset(), frozenset({"query_start_loc", "seq_lens"}), frozenset(every),
            frozenset(every[::3]), frozenset(every[1::4])]


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_verdict_answers_as_stage_2_does(name: str) -> None:
    text = TEXTS[name]
    try:
        tree = ast.parse(text)
    except SyntaxError:
        assert summary_and_verdict(name, text, ())[1] is None  # no verdict: the analysis reports it
        return
    settings = Settings(root=FIXTURES)
    rules = all_rules()
    verdict = prefilter.tree_verdict(tree, text, settings.capture_functions)
    for fields in _fact_sets(tree):
        for hints in ((), ("*seq_lens*",)):
            s = Settings(root=FIXTURES, device_hints=hints)
            survivors = [r for r in rules if r.could_match(text, s, device_fields=fields)]
            answer = prefilter.apply_verdict(verdict, survivors, text, s, fields)
            expected = prefilter.tree_filter(survivors, tree, text, s, fields)
            # What the verdict excludes before the text stage (`verdict_excludes`) is never kept.
            excluded = {r.code for r in rules if prefilter.verdict_excludes(verdict, r, text, s, fields)}
            assert not excluded & {r.code for r in expected}, (fields, hints)
            if answer is not None:
                assert [r.code for r in answer] == [r.code for r in expected], (fields, hints)
            else:
                # It declines only when H2D001 asked about a fact the project holds.
                assert fields and any(r.code == "H2D001" for r in survivors)
        # Without project facts nothing is left to the analysis to parse for.
        survivors = [r for r in rules if r.could_match(text, settings)]
        assert prefilter.apply_verdict(verdict, survivors, text, settings) is not None


@lru_cache(maxsize=2)
def _engine(prefilter_on: bool = True) -> Engine:
    texts = list(TEXTS.values())
    parseable = []
    for text in texts:
        try:
            ast.parse(text)
            parseable.append(text)
        except SyntaxError:
            pass
    return Engine(Settings(root=FIXTURES), collect(parseable + [DEVICE_FIELDS_SOURCE]), use_prefilter=prefilter_on)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_findings_are_the_same_with_a_verdict(name: str) -> None:
    text = TEXTS[name]
    engine = _engine()
    verdict = summary_and_verdict(name, text, engine.settings.capture_functions)[1]
    plain = engine.analyze(name, text)
    assert engine.analyze(name, text, verdict) == plain == _engine(False).analyze(name, text) or \
        name == "lookalike_syntax_error"  # CPython's and LibCST's wording differ (test_prefilter)


def test_a_verdict_on_other_text_is_ignored() -> None:
    engine = _engine()
    flagged = LOOKALIKES["factory_device"]
    silent_text = LOOKALIKES["cpu_only"]
    stale = summary_and_verdict("x.py", silent_text, engine.settings.capture_functions)[1]
    assert stale is not None
    found = engine.analyze("x.py", flagged, stale)
    assert found and found == engine.analyze("x.py", flagged)
    # A verdict can only come from text that parses: with a syntax error there is none to use.
    broken = "def f(:\n    t[0] = 1\n"
    assert [f.code for f in engine.analyze("x.py", broken, stale)] == ["H2D901"]


PROJECT = {
    "pyproject.toml": "[project]\nname = 'p'\n",
    "pkg/meta.py": ("import torch\n\n\nclass CommonAttentionMetadata:\n    query_start_loc: torch.Tensor\n"
                    "    query_start_loc_cpu: torch.Tensor\n"),
    "pkg/builder.py": "def build(meta):\n    meta.query_start_loc[0] = 0\n    meta.seq_lens[0] = 0\n",
    "pkg/look.py": "def build(meta):\n    meta.seq_lens[0] = 0\n",
    "pkg/plain.py": "def f(xs):\n    xs[0] = 1\n    return xs\n",
    "pkg/other.py": "import os\n\n\ndef g():\n    return os.getcwd()\n",
    "z.py": ("import torch\n\n\ndef build(n, device):\n"
             "    t = torch.empty(n + 1, dtype=torch.int32, device=device)\n    t[0] = 0\n    return t\n"),
    "bad.py": "def f(:\n    pass\n",
}


def _scan(root: Path, capsys: pytest.CaptureFixture, *args: str) -> list:
    old = os.getcwd()
    os.chdir(root)
    try:
        cli.main(["check", ".", "--no-cache", "--jobs", "1", "--output-format", "json", "--exit-zero", *args])
    finally:
        os.chdir(old)
    return sorted((d["filename"], d["location"]["row"], d["code"]) for d in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("in_project", [True, False])
def test_a_scan_parses_a_file_once(tmp_path: Path, capsys: pytest.CaptureFixture,
                                   monkeypatch: pytest.MonkeyPatch, in_project: bool) -> None:
    root = tmp_path / "p"
    for name, text in PROJECT.items():
        if name == "pyproject.toml" and not in_project:
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    parsed: List[str] = []
    real = triage.cpython_parse

    def counting(path: str, text: str) -> tuple:
        parsed.append(os.path.basename(path))
        return real(path, text)

    monkeypatch.setattr(triage, "cpython_parse", counting)
    with_verdicts = _scan(root, capsys)
    # Only the file that does not parse (no verdict) and the one whose H2D001 check asks about
    # a project fact (`meta.query_start_loc`) are parsed again.  Before: every file.
    assert sorted(parsed) == ["bad.py", "builder.py"]
    parsed.clear()
    assert with_verdicts == _scan(root, capsys, "--no-prefilter")
    codes = [c for _, _, c in with_verdicts]
    assert "H2D901" in codes and codes.count("H2D001") == 2


def test_facts_resolved_in_a_child_process_are_the_same(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`pipeline.facts_from_index` resolves a large project's facts in a child process (so the
    process the analysis workers fork from never holds the summaries): same findings, and the
    child really ran (the summaries never entered this process)."""
    from lint_h2d import pipeline, project_index

    root = tmp_path / "p"
    for name, text in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    here = _scan(root, capsys)  # a small project: resolved in this process
    merged: List[str] = []
    real = project_index.merge_facts
    monkeypatch.setattr(project_index, "merge_facts", lambda *a: merged.append(a[2]) or real(*a))
    monkeypatch.setattr(pipeline, "RESOLVE_APART", 1)
    assert _scan(root, capsys) == here
    assert merged == []  # merged in the child, not here
    assert any(code == "H2D001" for _, _, code in here)
