"""An edit that only moves lines reuses the stored resolved facts, carried to the new lines
(`moved_lines`, `ProjectIndex.reused_facts`), and reports exactly what a cold run reports;
an edit that changes a fact (or that the mapping cannot prove) resolves again."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

import pytest

from lint_h2d.moved_lines import SHIFT, FileMove, Unmappable, line_map
from lint_h2d.pipeline import facts_from_index
from tests.conftest import run_cli

MODEL = '''import torch


class Holder:
    def __init__(self, n):
        self.query_start_loc = torch.zeros(n, device="cuda")
        self.query_start_loc_cpu = torch.zeros(n)


def make(n):
    return torch.empty(n, device="cuda")


def consume(x, idx):
    x[idx] = 0
    return x.tolist()
'''

USER = '''import torch
from pkg.model import Holder, make, consume


class Runner:
    def __init__(self, n):
        self.holder = Holder(n)
        self.out = make(n)
        with torch.device("cuda"):
            self.scratch = torch.zeros(3)

    def step(self, meta):
        consume(self.out, 1)
        meta.query_start_loc[0] = 0
        self.scratch[0] = 1
        return self.out[0].item()


def build(meta, n):
    r = Runner(n)
    return r.step(meta)
'''


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    # An mtime past the racy window, so the index sees the edit by stat.
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000))


def _project(root: Path) -> Path:
    _write(root, "pyproject.toml", "[project]\nname = 'p'\n")
    _write(root, "pkg/__init__.py", "")
    _write(root, "pkg/model.py", MODEL)
    _write(root, "pkg/user.py", USER)
    return root


def _index(root: Path, cache: Any):  # type: ignore[no-untyped-def]
    from lint_h2d.config import Settings
    from lint_h2d.project_index import load_index

    index = load_index(Settings(root=root.resolve()), [str(root / "pkg/user.py")], cache, walk=False)
    assert index is not None
    return index


def _facts(root: Path, cache: Any):  # type: ignore[no-untyped-def]
    """The project's facts as a one-file run gets them (`plan._project_engine`)."""
    return facts_from_index(_index(root, cache))


def _same(carried: Any, resolved: Any) -> bool:
    """The facts carried to the new lines are the ones a resolve gives: the same values, and
    the same digest of what the walk learns (`fingerprint_of`).  Their cache key is another
    (`moved_lines.carried_fingerprint`: made from the old key and the moves)."""
    from lint_h2d.inference.project import fingerprint_of

    return (carried.module_facts == resolved.module_facts
            and fingerprint_of(carried.module_facts.resolved) == fingerprint_of(resolved.module_facts.resolved))


def _rows(facts: Any, name: str) -> List[int]:
    """The rows of every evidence step of the resolved facts in the file `name`."""
    from lint_h2d.findings import EvidenceStep

    found: List[int] = []
    seen: set = set()

    def walk(obj: Any) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, EvidenceStep):
            if obj.path is not None and obj.path.endswith(name) and obj.row is not None:
                found.append(obj.row)
        elif isinstance(obj, dict):
            for v in obj.values():
                walk(v)
        elif isinstance(obj, (tuple, list, frozenset)):
            for v in obj:
                walk(v)
        elif hasattr(obj, "__dataclass_fields__"):
            for f in obj.__dataclass_fields__:
                walk(getattr(obj, f))

    walk(facts.module_facts.resolved)
    return sorted(set(found))


# Edits that move lines and change no fact but their lines: (file, new text).
MOVING = {
    "a blank line at the top": {"pkg/model.py": "\n" + MODEL},
    "a comment inside a function that holds facts": {
        "pkg/user.py": USER.replace("        consume(self.out, 1)\n", "        # copy\n        consume(self.out, 1)\n")},
    "a line deleted above a class with device fields": {"pkg/model.py": MODEL.replace("import torch\n\n", "import torch\n", 1)},
    "a statement the summary does not record": {
        "pkg/user.py": USER.replace("    def step(self, meta):\n", "    def step(self, meta):\n        print(meta)\n")},
    "a statement split across lines": {
        "pkg/model.py": MODEL.replace('torch.zeros(n, device="cuda")', 'torch.zeros(\n            n, device="cuda")')},
    "two files at once": {"pkg/model.py": "# model\n\n" + MODEL,
                          "pkg/user.py": USER.replace("import torch\n", "import torch\n\n# user\n", 1)},
}


@pytest.mark.parametrize("kind", sorted(MOVING))
def test_a_line_moving_edit_reuses_the_resolved_facts_at_the_new_lines(tmp_path: Path, resolves: List[int],
                                                                        kind: str) -> None:
    root = _project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = _facts(root, cache)
    assert len(resolves) == 1
    for name, text in MOVING[kind].items():
        _write(root, name, text)
    moved = _facts(root, cache)
    assert len(resolves) == 1  # not resolved again
    cold = _facts(root, None)
    assert len(resolves) == 2
    assert _same(moved, cold)  # every line where a resolve puts it (the fingerprint too)
    assert moved != first or kind == "a statement the summary does not record"
    assert _rows(moved, "model.py") and _rows(moved, "user.py")
    assert _same(_facts(root, cache), cold) and len(resolves) == 2  # stored again, at the new lines


def test_the_new_lines_are_the_ones_a_cold_run_names(tmp_path: Path, resolves: List[int]) -> None:
    root = _project(tmp_path / "p")
    cache = tmp_path / "cache"
    before = _rows(_facts(root, cache), "model.py")
    _write(root, "pkg/model.py", "\n\n\n" + MODEL)
    after = _rows(_facts(root, cache), "model.py")
    assert after == [row + 3 for row in before] and len(resolves) == 1


@pytest.mark.parametrize("name, text", [
    ("pkg/model.py", MODEL.replace('empty(n, device="cuda")', 'empty(n, device="cpu")')),  # a fact
    ("pkg/model.py", "\n" + MODEL + '\n\ndef other(n):\n    return torch.ones(n, device="cuda")\n'),  # moved, and added to
    ("pkg/user.py", "\n" + USER.replace("torch.zeros(3)", "torch.zeros(3, 4)")),  # a number, not a line: a rank
    ("pkg/model.py", MODEL.replace("def make(n):\n    return torch.empty(n, device=\"cuda\")\n",
                                   "") + "\n\ndef make(n):\n    return torch.empty(n, device=\"cuda\")\n"),  # reordered
])
def test_an_edit_that_changes_more_than_lines_resolves_again(tmp_path: Path, resolves: List[int], name: str,
                                                             text: str) -> None:
    root = _project(tmp_path / "p")
    cache = tmp_path / "cache"
    _facts(root, cache)
    _write(root, name, text)
    facts = _facts(root, cache)
    assert len(resolves) == 2
    assert facts == _facts(root, None)


def test_a_missing_old_facts_file_resolves_again(tmp_path: Path, resolves: List[int]) -> None:
    """The old summary is what proves the map: without it (a pruned or foreign cache), resolve."""
    root = _project(tmp_path / "p")
    cache = tmp_path / "cache"
    _facts(root, cache)
    (folder,) = cache.glob("project-index-*-facts")
    for facts_file in folder.iterdir():
        facts_file.unlink()
    _write(root, "pkg/model.py", "\n" + MODEL)
    assert _facts(root, cache) == _facts(root, None)
    assert len(resolves) == 3


def test_the_old_facts_files_are_kept_only_while_the_resolved_facts_name_them(tmp_path: Path, resolves: List[int]) -> None:
    root = _project(tmp_path / "p")
    cache = tmp_path / "cache"
    _facts(root, cache)
    (folder,) = cache.glob("project-index-*-facts")
    count = len(list(folder.iterdir()))
    _write(root, "pkg/model.py", "\n" + MODEL)
    index = _index(root, cache)
    assert len(list(folder.iterdir())) == count + 1  # the contents the stored facts were resolved from kept
    assert _same(facts_from_index(index), _facts(root, None))  # ... which prove the map
    assert len(list(folder.iterdir())) == count  # stored again at the new lines: not needed any more
    assert len(resolves) == 2  # the first run, and the one without a cache


def test_the_cli_reports_what_a_cold_run_reports_edit_after_edit(tmp_path: Path) -> None:
    """The pre-commit run (`check FILES`, warm cache), byte for byte against `--no-cache`,
    with the evidence of every finding (JSON)."""
    root = _project(tmp_path)
    one = ("check", "--output-format", "json", "--exit-zero", "pkg/model.py", "pkg/user.py")
    first = run_cli(*one, cwd=root)
    assert json.loads(first.stdout)
    edits: List[Dict[str, str]] = [*MOVING.values(), {"pkg/model.py": "\n" + MODEL.replace('empty(n, device="cuda")',
                                                                                         'empty(n, device="cpu")')}]
    shown = []
    for edit in edits:
        for name, text in edit.items():
            _write(root, name, text)
        warm = run_cli(*one, cwd=root)
        cold = run_cli(*one[:1], "--no-cache", *one[1:], cwd=root)
        assert warm.stdout == cold.stdout
        shown.append({(f["filename"].rsplit("/", 1)[-1], f["location"]["row"]) for f in json.loads(warm.stdout)})
    row = MODEL.count("\n", 0, MODEL.index("x[idx] = 0")) + 1
    assert ("model.py", row + 2) in shown[-2]  # two lines added above it by the last moving edit
    assert ("model.py", row + 1) not in shown[-1]  # the fact changed: no device tensor passed


def _summary(text: str) -> Any:
    from lint_h2d.inference.summary import summarize

    return json.loads(json.dumps(summarize("a.py", text).to_json()))


def _shifted(text: str) -> Any:
    from lint_h2d.moved_lines import shifted_summary

    return json.loads(json.dumps(shifted_summary("a.py", text.encode())))


def test_line_map_is_the_order_keeping_bijection_of_the_summary_s_lines() -> None:
    new = "\n\n" + MODEL
    lines, texts = line_map(_summary(MODEL), _summary(new), _shifted(new))
    assert lines and all(b == a + 2 for a, b in lines.items()) and not texts
    with pytest.raises(Unmappable):  # a fact changed
        changed = new.replace('empty(n, device="cuda")', 'empty(n, device="cpu")')
        line_map(_summary(MODEL), _summary(changed), _shifted(changed))


def test_line_map_finds_lines_in_a_summary_s_words() -> None:
    """`inside with torch.device(...) at line 9` is a line too (`summary._Builder`)."""
    new = "\n" + USER
    lines, texts = line_map(_summary(USER), _summary(new), _shifted(new))
    assert any("at line" in t for t in texts)
    assert all(b == a + 1 for a, b in lines.items())
    assert SHIFT > 1_000_000


def test_line_words_that_are_no_line_are_refused() -> None:
    """`line N` in a summary's words that did not move with the lines would be mapped in
    evidence like a line (`_Remap._words`): refused."""
    old = {"s": ["torch.zeros(...) at line 5", "f('line 7')"]}
    with pytest.raises(Unmappable):
        line_map(old, {"s": ["torch.zeros(...) at line 6", "f('line 7')"]},
                 {"s": [f"torch.zeros(...) at line {6 + SHIFT}", "f('line 7')"]})
    assert line_map({"s": ["at line 5"]}, {"s": ["at line 6"]}, {"s": [f"at line {6 + SHIFT}"]}) == (
        {5: 6}, frozenset({"at line 5"}))


def test_a_name_another_file_shares_is_mapped_by_the_file_the_words_were_written_for() -> None:
    """`model.py:3` in evidence, when another file is named `model.py` too, is mapped as the
    resolver's table says (`Resolved.site_words`): words of the moved file's line move, words
    of the other file's stay, and words written for both (or for neither, at a moved line) are
    not guessed (the project is resolved again)."""
    from lint_h2d.findings import EvidenceStep
    from lint_h2d.moved_lines import _Remap

    a, b = "/p/a/model.py", "/p/b/model.py"
    move = FileMove(a, {3: 4, 7: 8, 9: 9}, "model.py")
    sites = {"model.py:3": frozenset({(a, 3)}), "model.py:7": frozenset({(a, 7), (b, 7)}),
             "model.py:9": frozenset({(a, 9), (b, 9)}), "model.py:12": frozenset({(b, 12)})}
    remap = _Remap({a: move}, sites)
    # Kept alive: the remap memoizes by `id` (the stored facts' objects all live while it runs).
    steps = [EvidenceStep("every call of `f` passes a device tensor as `x` (model.py:9, model.py:12)", "/p/u.py", 2),
             EvidenceStep("every call of `f` passes a device tensor as `x` (model.py:3)", "/p/u.py", 2),
             EvidenceStep("`g(...)` at model.py:3 runs `h` (my_model.py:7), line 3", a, 3),
             EvidenceStep("(model.py:7)", "/p/u.py", 2), EvidenceStep("(model.py:3)", "/p/u.py", 2)]
    assert remap.value(steps[0]) is steps[0]  # 9 did not move (either file's), 12 is the other file's
    # 3 may be a line of the other file too: the table says whose these words are.
    assert remap.value(steps[1]).message.endswith("(model.py:4)")
    step = remap.value(steps[2])
    assert (step.message, step.row) == ("`g(...)` at model.py:4 runs `h` (my_model.py:7), line 4", 4)
    with pytest.raises(Unmappable):  # one words for the moved line 7 and the other file's 7
        remap.value(steps[3])
    with pytest.raises(Unmappable):  # a moved line in words nothing recorded
        _Remap({a: move}, {}).value(steps[4])
    # The table itself as resolving the new lines writes it.
    assert remap._sites(sites) == {"model.py:4": {(a, 4)}, "model.py:8": {(a, 8)}, "model.py:7": {(b, 7)},
                                   "model.py:9": {(a, 9), (b, 9)}, "model.py:12": {(b, 12)}}


def test_two_moved_files_of_one_name_are_each_mapped_once() -> None:
    """Words made new for one moved file are not read again for the other (one pattern)."""
    from lint_h2d.findings import EvidenceStep
    from lint_h2d.moved_lines import _Remap

    a, b = "/p/a/model.py", "/p/b/model.py"
    moves = {a: FileMove(a, {3: 4, 4: 5}, "model.py"), b: FileMove(b, {4: 6}, "model.py")}
    sites = {"model.py:3": frozenset({(a, 3)}), "model.py:4": frozenset({(b, 4)})}
    step = _Remap(moves, sites).value(EvidenceStep("(model.py:3, model.py:4)", "/p/u.py", 2))
    assert step.message == "(model.py:4, model.py:6)"


# Two files named `model.py`: the first's call at line 6 is named in the evidence of `use`'s
# parameter (`model.py:6`); the second holds a line 6 too, but no words name it.
NAMED = {
    "pkg/lib.py": "def use(t):\n    return t.sum()\n\n\ndef other(t):\n    return t\n",
    "pkg/a/model.py": ("import torch\nfrom pkg.lib import use\n\n\ndef run(n):\n"
                       "    return use(torch.zeros(n, device=\"cuda\"))\n"),
    "pkg/b/model.py": ("import torch\nfrom pkg.lib import other\n\n\nclass Box:\n    def __init__(self, n):\n"
                       "        self.buf = torch.zeros(n, device=\"cuda\")\n        self.buf_cpu = torch.zeros(n)\n"),
}


@pytest.mark.parametrize("edited", ["pkg/a/model.py", "pkg/b/model.py"])
def test_words_naming_one_of_two_files_of_a_name_are_carried_without_resolving(
        tmp_path: Path, resolves: List[int], edited: str) -> None:
    """The edit of the file the words name moves them; the edit of the other file of that name
    leaves them: both reuse the stored facts (a line number both files hold made the run
    resolve again before `Resolved.site_words`)."""
    root = tmp_path / "p"
    _write(root, "pyproject.toml", "[project]\nname = 'p'\n")
    for name, text in {"pkg/__init__.py": "", "pkg/a/__init__.py": "", "pkg/b/__init__.py": "", **NAMED}.items():
        _write(root, name, text)
    cache = tmp_path / "cache"
    first = _facts(root, cache).module_facts.resolved
    (word,) = [w for w, pairs in first.site_words.items() if w.startswith("model.py:")]
    assert (word, first.site_words[word]) == ("model.py:6", {(str(root.resolve() / "pkg/a/model.py"), 6)})
    _write(root, edited, "# edited\n\n" + NAMED[edited])
    moved = _facts(root, cache)
    assert len(resolves) == 1  # not resolved again
    assert _same(moved, _facts(root, None))
    shown = [s.message for v in moved.module_facts.resolved.params.values() for s in v.evidence]
    assert any(("model.py:8" if edited == "pkg/a/model.py" else "model.py:6") in m for m in shown), shown


def test_every_value_field_that_may_hold_a_step_is_walked() -> None:
    """`_Remap.value` reads only `_VALUE_PARTS` of a `Value`: every other field is a number,
    a name, a flag or an enum (a new field holding values must be added there)."""
    import dataclasses

    from lint_h2d.inference.values import Value
    from lint_h2d.moved_lines import _VALUE_PARTS

    scalar = {"Kind", "Optional[int]", "Origin", "Optional[str]", "bool", "Optional[bool]", "Optional[Tuple[str, ...]]"}
    for field in dataclasses.fields(Value):
        assert field.name in _VALUE_PARTS or str(field.type) in scalar, field


def test_a_step_of_another_file_is_read_again_only_for_a_moved_file_s_words() -> None:
    """`_Remap` gives a step of a file the edit did not move back as it is unless its words
    hold the moved file's short name or one of its old summary strings (`_Remap.probes`):
    those are still made new, or refused."""
    from lint_h2d.findings import EvidenceStep
    from lint_h2d.moved_lines import _Remap

    a = "/p/a/model.py"
    text = "inside with torch.device(...) at line 3"
    remap = _Remap({a: FileMove(a, {3: 4}, "model.py", frozenset({text}))}, {"model.py:3": frozenset({(a, 3)})})
    plain = EvidenceStep("allocated on `self.device` here, line 3 (user.py:3)", "/p/u.py", 3)
    assert remap.value(plain) is plain  # its own file's line 3, another file's name
    assert remap.value(EvidenceStep("(model.py:3)", "/p/u.py", 2)).message == "(model.py:4)"
    with pytest.raises(Unmappable):  # the moved file's words, in another file's step
        remap.value(EvidenceStep(f"built {text}", "/p/u.py", 2))


def _plain_description(value: Any) -> str:
    """`project._describe` as it was written before it memoized: every part described anew."""
    from lint_h2d.findings import EvidenceStep

    parts = [value.kind.name, str(value.rank), str(value.type_name), str(value.integer)]
    if value.element is not None:
        parts.append("[" + _plain_description(value.element) + "]")
    if value.items is not None:
        parts.append("(" + ",".join(_plain_description(v) for v in value.items) + ")")
    if value.entries is not None:
        parts.append("{" + ",".join(f"{k}:{_plain_description(v)}" for k, v in value.entries) + "}")
    parts.extend(f"{s.path}:{s.row}:{s.message}" for s in value.evidence if isinstance(s, EvidenceStep))
    return "|".join(parts)


def test_the_fingerprint_describes_each_value_as_it_did_before_it_memoized(tmp_path: Path) -> None:
    """`fingerprint_of` describes a value met twice once (`project._describer`): the same
    words as describing it anew, for every value of a project's facts, shared ones included."""
    from lint_h2d.inference.project import _describer
    from lint_h2d.inference.values import Value

    root = _project(tmp_path / "p")
    resolved = _facts(root, None).module_facts.resolved
    values = [v for table in (resolved.fields, resolved.constants) for bound in table.values() for v in bound.values()]
    values += [v for table in (resolved.returns, resolved.own_returns, resolved.params, resolved.int_params,
                               resolved.forwards, resolved.passed_given) for v in table.values()]
    assert values and all(isinstance(v, Value) for v in values)
    describe = _describer()
    for value in values + values:  # the second time from the memo
        assert describe(value) == _plain_description(value)


def test_the_carried_facts_key_is_made_from_the_old_key_and_the_moves() -> None:
    """A digest of the old key and every moved line: other moves or other old facts, another
    key (a findings cache never answers for facts it was not made for); moves of lines no fact
    holds leave the facts, and their key, as they were."""
    from lint_h2d.inference.project import collect
    from lint_h2d.moved_lines import FileMove, carried_fingerprint, remap_facts

    one = {"a.py": FileMove("a.py", {3: 4, 5: 6}, "a.py")}
    assert carried_fingerprint("k", one) == carried_fingerprint("k", dict(one))
    assert len({carried_fingerprint("k", one), carried_fingerprint("j", one), "k",
                carried_fingerprint("k", {"a.py": FileMove("a.py", {3: 4, 5: 7}, "a.py")}),
                carried_fingerprint("k", {"b/a.py": FileMove("b/a.py", {3: 4, 5: 6}, "a.py")})}) == 5
    # Moves that move nothing do not count.
    assert carried_fingerprint("k", {**one, "c.py": FileMove("c.py", {1: 1}, "c.py")}) == carried_fingerprint("k", one)
    facts = collect(["import torch\n\nx = torch.zeros(3, device='cuda')\n"])
    assert remap_facts(facts, {"elsewhere.py": FileMove("elsewhere.py", {1: 2}, "elsewhere.py")}) is facts


def test_same_but_lines_erases_the_edited_files_lines_and_compares_the_rest() -> None:
    from lint_h2d.inference.project import collect
    from lint_h2d.moved_lines import same_but_lines

    base = ("import torch\n\n\nclass State:\n    def __init__(self, n):\n"
            "        self.active = torch.zeros(n, device='cuda')\n\n\ndef make(n):\n"
            "    return torch.zeros(n, device='cuda')\n")
    old = collect([base])
    moved = collect(["# header\n\n" + base.replace("    def __init__(self, n):\n",
                                                   "    def __init__(self, n):\n        unknown_helper(n)\n")])
    assert old.fingerprint != moved.fingerprint  # the lines differ ...
    assert same_but_lines(old, moved, ["<text 0>"])  # ... and nothing else
    assert not same_but_lines(old, moved, ["<text 1>"])  # another file's lines are not erased
    cpu = collect([base.replace("self.active = torch.zeros(n, device='cuda')", "self.active = torch.zeros(n)")])
    assert not same_but_lines(old, cpu, ["<text 0>"])
    returns = collect([base.replace("    return torch.zeros(n, device='cuda')", "    return None")])
    assert not same_but_lines(old, returns, ["<text 0>"])


@pytest.mark.parametrize("kept", [frozenset(), frozenset({"Holder", "make"}), None])
def test_without_calls_is_the_summary_of_a_file_without_those_calls(kept: Any) -> None:
    """`summary.without_calls` on a summary's JSON form is the JSON form of that summary with
    the calls of the names not kept removed, from the call sites and from what each function
    calls, and the references to them (`FileSummary.references`), in the form `to_json` gives
    such a summary (the optional lists of a function row)."""
    from dataclasses import replace

    from lint_h2d.inference.summary import summarize, without_calls
    from tests.conftest import FIXTURES

    for path in sorted((FIXTURES / "projects" / "python").glob("*.py"))[:40]:
        summary = summarize(path.name, path.read_text(encoding="utf-8"))
        names = kept if kept is not None else frozenset(
            c.callee for c in summary.calls[::2]) | {n for f in summary.functions for n, _ in f.called[::2]}
        expected = replace(summary, calls=tuple(c for c in summary.calls if c.callee in names), functions=tuple(
            replace(f, called=tuple(e for e in f.called if e[0] in names),
                    self_called=tuple(e for e in f.self_called if e[0] in names)) for f in summary.functions),
            references=tuple(n for n in summary.references if n in names))
        assert json.loads(json.dumps(without_calls(summary.to_json(), names))) == json.loads(json.dumps(expected.to_json()))
