"""Issue 17: facts that cross files, on a small project of our own (tests/fixtures/projects).

Every line marked `# error` must be flagged and no other line: the files hold each item's
flagged cases next to look-alikes that must stay silent.  The prefilter must agree (it is a
necessary condition for every inference path), and so must a one-file run.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import Engine, load_sources, project_facts
from lint_h2d.findings import EvidenceKind, Finding
from lint_h2d.inference.values import Kind
from lint_h2d.inference.resolved import Resolved
from tests.conftest import FIXTURES, run_cli

PROJECT = FIXTURES / "projects" / "xfile"
FILES = sorted(PROJECT.glob("*.py"))


def expected_rows(path: Path) -> Set[int]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {i for i, line in enumerate(lines, 1) if re.search(r"#\s*error\b", line)}


def scan_files(files: List[Path], settings: Settings, prefilter: bool) -> Dict[str, List[Finding]]:
    """H2D001 findings per file name, the files read as one project (also used by
    test_python_inference for its own fixture project)."""
    sources, errors = load_sources([str(p) for p in files])
    assert not errors
    engine = Engine(settings, project_facts(sources), use_prefilter=prefilter)
    return {Path(s.path).name: [f for f in engine.analyze(s.path, s.text) if f.code == "H2D001"]
            for s in sources}


def scan(prefilter: bool, settings: Settings = Settings(root=PROJECT)) -> Dict[str, List[Finding]]:
    return scan_files(FILES, settings, prefilter)


@pytest.fixture(scope="module")
def results() -> Dict[str, List[Finding]]:
    return scan(True)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_flagged_lines_are_exactly_the_marked_ones(path: Path, results: Dict[str, List[Finding]]) -> None:
    assert sorted(f.location.row for f in results[path.name]) == sorted(expected_rows(path))


def test_prefilter_keeps_every_cross_file_finding(results: Dict[str, List[Finding]]) -> None:
    assert scan(False) == results


def test_every_finding_carries_evidence(results: Dict[str, List[Finding]]) -> None:
    for findings in results.values():
        for finding in findings:
            assert finding.evidence, finding
            assert finding.evidence[-1].message.startswith("every index is")


def _evidence(results: Dict[str, List[Finding]], name: str, row: int) -> List[str]:
    (finding,) = [f for f in results[name] if f.location.row == row]
    return [f"{Path(s.path).name if s.path else name}:{s.row}: {s.message}" for s in finding.evidence]


def test_evidence_names_the_other_files(results: Dict[str, List[Finding]]) -> None:
    chain = _evidence(results, "users.py", 18)
    assert chain[0] == "users.py:12: `pool` is annotated `Pool`"
    assert chain[1] == "pool.py:8: `write_pos` is a field of `Pool`"
    # The allocation in the other file names its `device=` (issue 17: checkable without opening it).
    assert chain[2] == "pool.py:10: allocated on the device here (`torch.zeros(..., device=device)`)"
    loader = _evidence(results, "users.py", 54)
    assert any(step.startswith("loader.py:8: `Model` is constructed under `with torch.device") for step in loader)
    calls = _evidence(results, "calls.py", 8)
    assert any("every call of `rank_axis` passes a device tensor" in step for step in calls)


def test_call_site_ints_and_conventions_give_unsafe_fixes_at_most(results: Dict[str, List[Finding]]) -> None:
    (clear,) = [f for f in results["calls.py"] if f.location.row == 29]
    assert clear.fix is None or clear.fix.applicability.value == "unsafe"


def test_a_finding_resting_on_a_convention_alone_is_unsafe(tmp_path: Path) -> None:
    text = "def f(buf):\n    buf.gpu[0] = 0\n"
    engine = Engine(Settings(root=tmp_path), project_facts([]))
    (finding,) = engine.analyze(str(tmp_path / "c.py"), text)
    assert [s.kind for s in finding.evidence[:-1]] == [EvidenceKind.CONVENTION]
    assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_device_and_cpu_hints(tmp_path: Path) -> None:
    text = "def f(logits, host_buf, other):\n    logits[0] = 0\n    host_buf[0] = 0\n    other.gpu_buf[0] = 1\n"
    settings = Settings(root=tmp_path, device_hints=("logits", "*.gpu_buf", "host_buf"), cpu_hints=("host_*",))
    engine = Engine(settings, project_facts([]))
    findings = engine.analyze(str(tmp_path / "h.py"), text)
    assert [f.location.row for f in findings] == [2, 4]
    assert all(f.evidence[0].kind == EvidenceKind.HINT for f in findings)
    assert all(f.fix is None or f.fix.applicability.value == "unsafe" for f in findings)
    assert Engine(Settings(root=tmp_path), project_facts([])).analyze(str(tmp_path / "h.py"), text) == []


def test_one_file_run_sees_the_same_cross_file_facts(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")

    def rows(*paths: str) -> List[str]:
        result = run_cli("check", "--no-cache", "--select", "H2D001", "--output-format", "concise", *paths, cwd=root)
        return sorted(line.split(": ")[0] for line in result.stdout.splitlines() if ": H2D" in line)

    scan_rows = [r for r in rows(".") if r.startswith("users.py")]
    assert scan_rows and rows("users.py") == scan_rows


def test_vllm_loader_convention_names_the_loader_and_gives_no_safe_fix(results: Dict[str, List[Finding]]) -> None:
    """A plugin model's `__init__` runs under vLLM's `with torch.device(load_device)`: the chain
    says so as a convention, names base_loader.py, and the fix is never safe."""
    chain = _evidence(results, "vllm_models.py", 26)
    assert chain[0] == "vllm_models.py:25: allocated without `device=` (`torch.zeros(...)`) here"
    assert chain[1] == ("vllm_models.py:22: vLLM's model loader constructs `TalkerForGeneration` (keyword "
                        "`vllm_config`) under `with torch.device(load_device)` "
                        "(vllm/model_executor/model_loader/base_loader.py)")
    sub = _evidence(results, "vllm_models.py", 17)
    assert sub[1].startswith("vllm_models.py:22: `CodecHead` is constructed by `TalkerForGeneration.__init__` (in its body or a function it calls); ")
    called = _evidence(results, "vllm_models.py", 49)
    assert called[1].startswith("vllm_models.py:22: `_suppressed_tokens` is called by `TalkerForGeneration.__init__`; "
                                "vLLM's model loader constructs")
    for finding in results["vllm_models.py"]:
        assert any(s.kind == EvidenceKind.CONVENTION for s in finding.evidence)
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_the_cli_scan_sees_classes_built_on_the_device(tmp_path: Path) -> None:
    """Through the CLI's project index the prefilter's stage 2 is answered from the summaries'
    trees before the facts are known (`prefilter.tree_verdict`): a factory without `device=` in
    a class built on the device elsewhere must still reach the walk."""
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    result = run_cli("check", "--no-cache", "--select", "H2D001", "--output-format", "concise", ".", cwd=root)
    rows = sorted(int(line.split(":")[1]) for line in result.stdout.splitlines()
                  if line.startswith("vllm_models.py:") and ": H2D" in line)
    assert rows == sorted(expected_rows(PROJECT / "vllm_models.py"))


def test_a_moved_modules_buffers_name_the_move_as_a_convention(results: Dict[str, List[Finding]]) -> None:
    """`pool.cuda()` moves `MovedPool`'s buffers and parameters; that a method runs after the
    move is taken, not proven: a convention, no safe fix.  Its plain tensors, its `__init__`
    (and what `__init__` calls), and modules moved `.to(<a parameter>)` or `.to("cpu")` stay silent."""
    chain = _evidence(results, "module_buffers.py", 57)
    assert chain[0].startswith("module_buffers.py:83: an instance of `MovedPool` is moved to the accelerator "
                               "here (`.cuda()`)")
    assert chain[1].startswith("module_buffers.py:46: held by the module as a buffer or parameter")
    for row in (57, 58):
        (finding,) = [f for f in results["module_buffers.py"] if f.location.row == row]
        assert finding.evidence[0].kind == EvidenceKind.CONVENTION
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def _passed(source: str) -> tuple:
    """The term the summary records for the first argument of the call of `use` in `source`."""
    from lint_h2d.inference.summary import summarize

    (site,) = [c for c in summarize("m.py", source).calls if c.callee == "use"]
    return site.args[0]


def test_a_classmethods_cls_call_records_its_class() -> None:
    """`cls(...)` in a classmethod is a construction of its class (or of the subclass it is
    called on): the site names the class (`self_owner`); a `cls` that is no classmethod's first
    parameter, or that the body rebinds, names none."""
    from lint_h2d.inference.summary import summarize

    source = ("class A:\n    @classmethod\n    def make(cls, n):\n        return cls(size=n)\n"
              "    def plain(self, cls):\n        return cls(size=1)\n"
              "    @classmethod\n    def other(cls, n):\n        cls = B\n        return cls(size=n)\n")
    sites = [(c.line, c.callee, c.self_owner) for c in summarize("m.py", source).calls if c.callee == "cls"]
    assert sites == [(4, "cls", "A"), (6, "cls", None), (10, "cls", None)]


def test_one_field_of_one_method_in_two_branches_is_one_value() -> None:
    """`out = self.model(...)` then `logits = out.logits` in both branches of an `if`: one
    value, the field of what `self.model` returns (one branch's lines), small enough to
    travel as the call's argument; before, the join of two was cut to unknown."""
    source = ("class G:\n    def f(self, c, t):\n        if c:\n            out = self.model(t)\n"
              "            logits = out.logits\n        else:\n            out = self.model(t[:, -1:])\n"
              "            logits = out.logits\n        use(logits)\n")
    term = _passed(source)
    assert term[0] == "attr" and term[1][:3] == ("ret", "G", "model") and term[2] == "logits"
    other = source.replace("logits = out.logits\n        use", "logits = out.scores\n        use")
    assert _passed(other)[0] in ("join", "unk")  # two fields: two values (here cut to size)


@pytest.mark.parametrize("body, term", [
    # what the operator makes of the base and `k` (a number only where `k` is one): `n += k`
    # rebinds `n`, so the base alone no longer reaches the use
    ("n = 0\n    n += k\n    use(n)", ("same", ("scalar",), ("param", "f", "k", None))),
    ("n = 0\n    n += 1\n    use(n)", ("scalar",)),
    ("n = len(x)\n    d = 0\n    d = min(d, n - 1)\n    n -= d\n    use(n)", ("scalar",)),
    ("n = max({i: len(v) for i, v in x}.values())\n    use(n)", ("scalar",)),
    # a cycle (a loop around the rebinding) through a method or a display: unknown
    ("n = 0\n    for _ in x:\n        n = n.sum()\n    use(n)", ("join", (("scalar",), ("same", ("unk",), None)))),
    ("n = 0\n    for _ in x:\n        n = [n]\n    use(n)", ("join", (("scalar",), ("list", ("unk",))))),
    # through a subscript of itself: where the other values are, of a rank not known
    ("n = torch.zeros(3)\n    for _ in x:\n        n = n[k]\n    use(n)", ("same", ("cpu", 1, 5), None)),
    ("n = 0\n    for _ in x:\n        n = n[0]\n    use(n)", ("scalar",)),
    # a list grown by `append`: what was appended (the empty display adds nothing), and a
    # concatenation of it, of what it holds
    ("xs = []\n    for _ in x:\n        xs.append(k.cpu())\n    use(xs)", ("list", ("cpu", None, 7))),
    ("xs = []\n    for _ in x:\n        xs.append(k.cpu())\n    use(torch.cat(xs))",
     ("cat", (("sub", ("list", ("cpu", None, 7)), None),))),
    # without a loop, the rebinding reads what reaches it (the 0), and hides it from the use
    ("n = 0\n    n = [n]\n    use(n)", ("list", ("scalar",))),
    ("n = 0\n    n = n[0]\n    use(n)", ("sub", ("scalar",), 1)),
    ("global g\n    g += 1\n    use(g)", ("unk",)),
])
def test_a_name_read_in_its_own_values_is_its_fixpoint(body: str, term: tuple) -> None:
    """`n += k` is what `n`'s other values and `k` give (a number when both are numbers); a
    cycle through a method or a list display is unknown, one through a subscript of the name
    itself where the other values are (indexing keeps a tensor's place), and a name only its
    own reads bind (a global) is unknown."""
    assert _passed(f"import torch\n\n\ndef f(x, k):\n    {body}\n") == term


@pytest.mark.parametrize("head, body, term", [
    ("import math", "use(math.ceil(k / 2))", ("scalar",)),
    ("import math as m", "use(m.floor(k))", ("scalar",)),
    # not the module: a parameter, a local, or a module-level name bound to something else too
    ("import math", "math = k\n    use(math.ceil(k))", ("mcall", ("param", "f", "k", None), "ceil", 6)),
    ("import math\nmath = object()", "use(math.ceil(k))", ("mcall", ("global", "math"), "ceil", 6)),
    ("from mylib import math", "use(math.ceil(k))", ("mcall", ("global", "math"), "ceil", 5)),
])
def test_a_function_of_the_math_module_is_a_number(head: str, body: str, term: tuple) -> None:
    """`math.ceil(n / b)` is a Python number where `math` is the module the file imports (the
    walk reads it so); a name bound to anything else says nothing."""
    assert _passed(f"{head}\n\n\ndef f(x, k):\n    {body}\n") == term


def test_a_store_through_a_field_of_a_project_class_is_an_object_store() -> None:
    """`cfg = self.parallel; cfg.dp_size = ...` and `self.parallel.micro = ...` store into the
    instance `parallel` holds (`_STORE_RECEIVER_TAGS`), with the whole arithmetic of several
    fields (`_STORE_SMALL`); `self.x = ...` is the class's own field, no object store."""
    from lint_h2d.inference.summary import summarize

    source = ("class P:\n    pass\n\n\nclass A:\n    parallel: P\n\n    def __init__(self):\n"
              "        self.world = 8\n        cfg = self.parallel\n"
              "        cfg.dp_size = self.world // (cfg.pp * cfg.cp * cfg.tp * cfg.ep)\n"
              "        self.parallel.micro = 2\n")
    stores = {s.attr: s for s in summarize("m.py", source).stores}
    assert set(stores) == {"dp_size", "micro"}
    assert stores["dp_size"].receiver == ("field", "A", "parallel")
    assert "unk" not in repr(stores["dp_size"].value) and repr(stores["dp_size"].value).count("'attr'") == 4
    assert stores["micro"].value == ("scalar",)


def test_a_module_moved_to_a_passed_place_names_the_move_and_the_caller(results: Dict[str, List[Finding]]) -> None:
    """`model.to(device)` in a loop over a method's list of modules, `device` a parameter a
    call passes (`encoder_output.device`): the declared base's subclass moves, said in the
    chain with the call that passes the place; a convention, no safe fix.  A module every call
    moves to "cpu", and a `.to(torch.float16)`, stay silent (the marked-lines test)."""
    chain = _evidence(results, "module_moves.py", 26)
    assert chain[0].startswith("module_moves.py:54: declared as `TableBase`, an instance of `BiasTable` is moved "
                               "here (`.to(device)`), to a place not provably the CPU (parameter `device`, passed "
                               "by the call of `_move` at line 57)")
    assert chain[1].startswith("module_moves.py:19: held by the module as a buffer or parameter")
    assert _evidence(results, "module_moves.py", 38)[0].startswith(
        "module_moves.py:54: an instance of `LanguageModel` is moved here")
    # Moved in a constructor: the call that passes the place is the class's construction.
    assert _evidence(results, "module_moves.py", 96)[0].startswith(
        "module_moves.py:102: an instance of `SlotKernel` is moved here (`.to(device)`), to a place not provably "
        "the CPU (parameter `device`, passed by the call of `Proposer` at line 107)")
    for row in (26, 27, 38, 96):
        (finding,) = [f for f in results["module_moves.py"] if f.location.row == row]
        assert finding.evidence[0].kind == EvidenceKind.CONVENTION
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_a_projects_own_loader_names_itself_as_a_convention(results: Dict[str, List[Finding]]) -> None:
    """A fork's loader builds `model_class(engine_config=..., prefix=...)` (a class a registry
    picks) under `with target_device:`: the module classes whose constructor takes those
    keywords and no other are taken to be built there.  The chain names the loader's call and
    its context; a convention, no safe fix.  A constructor that needs more, a non-module, and
    what a builder outside any context makes stay silent (the marked-lines test)."""
    chain = _evidence(results, "own_loader.py", 29)
    assert chain[1] == ("own_loader.py:20: `build_model` builds the class a registry picks "
                        "(`model_class(engine_config=..., prefix=...)`, own_loader.py:15) under `with target_device`: "
                        "`ForkModel` is taken to be one it builds there (its constructor takes those keywords and "
                        "needs no other)")
    (finding,) = [f for f in results["own_loader.py"] if f.location.row == 29]
    assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_a_module_move_to_a_place_survives_the_index() -> None:
    """The project index stores summaries as JSON: a `.to(device)` move keeps its place and
    its loop-element receiver through the round trip (a cached index reads the same facts), as
    a `.to(torch.float16)` keeps the `OTHER` place that says the project moves the module itself."""
    import ast
    import json

    from lint_h2d.inference.summary import from_json, summarize_tree

    path = PROJECT / "module_moves.py"
    summary = summarize_tree(str(path), ast.parse(path.read_text(encoding="utf-8")))
    moves = [m for m in summary.moves if m.device is not None and m.device != ("other",)]
    assert [m.how for m in moves] == [".to(device)"] * 3
    assert [m.how for m in summary.moves if m.device == ("other",)] == [".to(torch.float16)"]
    assert moves[0].receiver[0] == "sub" and moves[0].device == ("param", "_move", "device", "Decoder")
    again = from_json(str(path), json.loads(json.dumps(summary.to_json())))
    assert again.moves == summary.moves


def test_parameter_defaults_survive_the_index() -> None:
    """A parameter's default that reads a module-level name's attribute (`kind=Kind.NORMAL`,
    `FunctionSummary.default_terms`) keeps its term through the JSON round trip, with and without
    the function's called names (`without_calls` drops a called name, never the defaults)."""
    import ast
    import json

    from lint_h2d.inference.summary import from_json, summarize_tree, without_calls

    text = ("from enum import Enum\n"
            "class Kind(Enum):\n    A = 1\n"
            "def f(x, kind=Kind.A, n=3, *, other=Kind.A):\n    helper(x)\n    return kind\n"
            "def g(kind=Kind.A):\n    return kind\n")
    summary = summarize_tree("m.py", ast.parse(text))
    f, g = summary.functions
    assert f.default_terms == (("kind", ("attr", ("global", "Kind"), "A", 4)),
                               ("other", ("attr", ("global", "Kind"), "A", 4)))
    for data in (summary.to_json(), without_calls(summary.to_json(), frozenset())):
        again = from_json("m.py", json.loads(json.dumps(data)))
        assert [fn.default_terms for fn in again.functions] == [f.default_terms, g.default_terms]
    assert from_json("m.py", json.loads(json.dumps(summary.to_json()))).functions == summary.functions


def test_summaries_read_back_share_equal_values_and_keep_their_types() -> None:
    """`from_json` with one memo for several files makes equal terms and names one object
    (the resolving process holds every summary of the project at once), yet gives back
    exactly what it was given: a tuple holding `True` or `1.0` is never taken for the one
    holding `1` (equal, with equal hashes), and JSON's lists and pickle's tuples read the
    same."""
    import json
    import pickle

    from lint_h2d.inference.summary import CallSite, FileSummary, FunctionSummary, from_json

    def summary(path: str, flag: object) -> FileSummary:
        fn = FunctionSummary("build", None, 3, ("cfg", "n"), (("unk",), ("scalar",)), False,
                             (("call", "make", ("const", flag), 4),), ("unk",), defaults=("n",))
        call = CallSite("build", False, 9, (("const", flag), ("unk",)), (("n", ("const", 1)),), False)
        return FileSummary(path, functions=(fn,), calls=(call,))

    memo: dict = {}  # type: ignore[type-arg]
    written = [summary("a.py", 1), summary("b.py", True), summary("c.py", 1.0), summary("d.py", 1)]
    read = [from_json(s.path, json.loads(json.dumps(s.to_json())) if i % 2 else pickle.loads(pickle.dumps(s.to_json())),
                      memo) for i, s in enumerate(written)]
    assert [repr(s) for s in read] == [repr(s) for s in written]  # repr tells True, 1.0 and 1 apart
    a, b, c, d = read
    assert a.calls[0].args[0] is d.calls[0].args[0]  # ("const", 1), in two files
    assert a.calls[0].args[1] is b.calls[0].args[1] is a.functions[0].annotations[0]  # ("unk",)
    assert b.calls[0].args[0][1] is True and c.calls[0].args[0][1] == 1.0 and type(c.calls[0].args[0][1]) is float
    assert b.functions[0].returns[0][2] == ("const", True) and type(b.functions[0].returns[0][2][1]) is bool


def test_the_parallel_resolve_sees_what_the_loader_reads() -> None:
    """A scan with several workers resolves from pickled summaries keeping only the call sites
    `wanted_callees` names (`pipeline._resolve_blobs`).  The loader fact reads the call of the
    class a registry picks (`model_class(engine_config=..., prefix=...)`): without that site the
    facts, and the findings, depended on the machine's core count."""
    from lint_h2d.inference.project import resolve
    from lint_h2d.pipeline import _resolve_blobs, _summarize_job, summary_and_verdict

    sources, _ = load_sources([str(p) for p in FILES])
    serial = resolve([summary_and_verdict(s.path, s.text)[0] for s in sources])
    parallel = _resolve_blobs([_summarize_job((s.path, s.text, None))[:2] for s in sources], [])
    assert "ForkModel" in serial.built_on_device
    assert parallel.built_on_device == serial.built_on_device


def test_the_parallel_resolve_gives_every_fact_the_serial_one_gives() -> None:
    """The same facts from the parallel resolve (pickled summaries, only the call sites
    `wanted_callees` names) as from resolving every summary whole: every fact, not only the
    loader's.  `reset_listed(slot=0)` overridden with a list by its one call is no int; when
    the sites of functions whose parameters all have defaults were dropped, the parallel
    resolve (taken on 2+ cores for 64+ files) called it an int and flagged the write."""
    from lint_h2d.inference.project import fingerprint_of, resolve
    from lint_h2d.pipeline import _resolve_blobs, _summarize_job, summary_and_verdict

    python = sorted((FIXTURES / "projects" / "python").glob("*.py"))
    sources, _ = load_sources([str(p) for p in python])
    serial = resolve([summary_and_verdict(s.path, s.text)[0] for s in sources])
    parallel = _resolve_blobs([_summarize_job((s.path, s.text, None))[:2] for s in sources], [])
    assert ("reset_listed", "slot") in serial.passed_non_numbers
    assert parallel.passed_non_numbers == serial.passed_non_numbers
    assert parallel.passed_given.keys() == serial.passed_given.keys()
    assert fingerprint_of(parallel) == fingerprint_of(serial)


def _serial_and_parallel(files: List[Path]) -> Tuple[Resolved, Resolved]:
    """The project's facts resolved from every summary whole (one core, or fewer than 64
    files) and as the parallel resolve does (pickled summaries, only the call sites
    `wanted_callees` names: `pipeline._resolve_blobs`)."""
    from lint_h2d.inference.project import resolve
    from lint_h2d.pipeline import _resolve_blobs, _summarize_job, summary_and_verdict

    sources, _ = load_sources([str(p) for p in files])
    serial = resolve([summary_and_verdict(s.path, s.text)[0] for s in sources])
    return serial, _resolve_blobs([_summarize_job((s.path, s.text, None))[:2] for s in sources], [])


def test_the_parallel_resolve_keeps_the_sites_no_parameter_fact_reads() -> None:
    """Call sites that teach no parameter fact, which other facts read: a base the project
    constructs at module level or through its module (`filtered_sites.py`) is no base "built
    only as its subclasses" (`_mark_bases_of_built` reads every call's name), and a module moved
    to `dev: torch.device` is moved where the calls of its function pass the accelerator
    (`_accelerator_place` reads them).  The parallel resolve dropped those sites: it marked
    both bases built on the device and the module unmoved, and the findings depended on the
    core count and the project's size."""
    serial, parallel = _serial_and_parallel(sorted((FIXTURES / "projects" / "python").glob("*.py")))
    assert {"ModLevelSub", "AttrCallSub"} <= serial.built_on_device.keys()
    assert not {"_ModLevelBase", "_AttrCallBase"} & serial.built_on_device.keys()
    assert "MovedSlots" in serial.moved
    assert parallel.built_on_device == serial.built_on_device
    assert parallel.moved == serial.moved


@pytest.mark.parametrize("project", sorted(p for p in (FIXTURES / "projects").iterdir() if p.is_dir()),
                         ids=lambda p: p.name)
def test_every_fixture_project_resolves_alike_in_parallel(project: Path) -> None:
    """One answer whatever the core count: every fact of each fixture project, from the
    parallel resolve as from the serial one."""
    from lint_h2d.inference.project import fingerprint_of

    serial, parallel = _serial_and_parallel(sorted(project.glob("*.py")))
    assert fingerprint_of(parallel) == fingerprint_of(serial)


@pytest.mark.parametrize("path", sorted((FIXTURES / "projects").glob("*/*.py")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_summary_survives_the_index(path: Path) -> None:
    """Every part of a summary (stores into other objects' fields included) reads back from
    the project index's JSON as it was written: a cached index must give the facts a fresh
    one gives (a part that `from_json` could not read back raised only on a warm run)."""
    import ast
    import json

    from lint_h2d.inference.summary import from_json, summarize_tree

    summary = summarize_tree(str(path), ast.parse(path.read_text(encoding="utf-8")))
    assert from_json(str(path), json.loads(json.dumps(summary.to_json()))) == summary
    assert from_json(str(path), json.loads(json.dumps(summary.to_json())), {}) == summary


def _read_back(summaries: List[Any], drop: Tuple[str, ...] = ()) -> List[Any]:
    """The summaries as `ProjectIndex.facts` reads a cold run's: every part but the call sites
    through JSON, then only the sites of `project.read_callees` (less `drop`)."""
    import json
    from dataclasses import replace

    from lint_h2d.inference.project import read_callees
    from lint_h2d.inference.summary import calls_from_json, from_json

    memo: Dict[object, object] = {}
    blobs = [json.loads(json.dumps(s.to_json())) for s in summaries]
    found = [from_json(s.path, {k: v for k, v in b.items() if k != "calls"}, memo) for s, b in zip(summaries, blobs)]
    callees = read_callees(found) - set(drop)
    return [replace(s, calls=calls_from_json(b["calls"], memo, callees)) for s, b in zip(found, blobs)]


def test_reading_only_the_sites_the_resolver_may_ask_gives_every_fact() -> None:
    """`ProjectIndex.facts` builds only the call sites of names `read_callees` lists (the
    project's functions and classes, and the names a return calls): every fact of the fixture
    projects is what the whole summaries give, though most library calls' sites are gone.
    The names a return calls are needed: without `model_class` (a registry's class, no project
    name) the loader's `ForkModel` is not built on the device."""
    from lint_h2d.inference.project import fingerprint_of, resolve
    from lint_h2d.pipeline import summary_and_verdict

    for files in (FILES, sorted((FIXTURES / "projects" / "python").glob("*.py"))):
        sources, _ = load_sources([str(p) for p in files])
        whole = [summary_and_verdict(s.path, s.text)[0] for s in sources]
        read = _read_back(whole)
        assert sum(len(s.calls) for s in read) < sum(len(s.calls) for s in whole)
        assert repr(resolve(read)) == repr(resolve(whole))
        assert fingerprint_of(resolve(read)) == fingerprint_of(resolve(whole))
    sources, _ = load_sources([str(p) for p in FILES])
    whole = [summary_and_verdict(s.path, s.text)[0] for s in sources]
    assert "ForkModel" in resolve(_read_back(whole)).built_on_device
    assert "ForkModel" not in resolve(_read_back(whole, ("model_class",))).built_on_device


def test_an_autograd_functions_apply_sites_are_read() -> None:
    """`HingeSlopes.apply(pred, 1, n)` runs `HingeSlopes.forward(ctx, pred, 1, n)`: its
    sites are read under `apply` (`read_callees`, `wanted_callees`), keyed by the class (a
    static `forward` of another class with the same parameters is told apart), the context
    taking `forward`'s first position."""
    from lint_h2d.inference.project import resolve
    from lint_h2d.pipeline import summary_and_verdict

    sources, _ = load_sources([str(p) for p in sorted((FIXTURES / "projects" / "python").glob("*.py"))])
    whole = [summary_and_verdict(s.path, s.text)[0] for s in sources]
    params = resolve(_read_back(whole)).params
    assert params[("HingeSlopes.forward", "sign")].kind == Kind.SCALAR
    assert ("HingeSlopes.forward", "ctx") not in params
    assert ("SlopeTable.forward", "sign") not in params  # no autograd `Function`: `apply` is its own
    assert ("HingeSlopes.forward", "sign") not in resolve(_read_back(whole, ("apply",))).params


def test_packed_facts_read_back_whole(tmp_path: Path) -> None:
    """A row built in a worker carries its facts as two pickles, the call sites apart
    (`project_index._packed_row`); put back together they are `file_facts`' own."""
    from lint_h2d import project_index

    path = PROJECT / "own_loader.py"
    row = project_index._packed_row(str(path))
    assert row is not None and isinstance(row[5], list) and len(row[5]) == 2
    assert project_index.unpacked_facts(row[5]) == project_index.file_facts(str(path), path.read_bytes())


_TWIN_A = """
import torch

class BaseA:
    pass

class Pool(BaseA):
    def __init__(self, n):
        self.write_pos = torch.zeros(n, device="cuda")
"""
_TWIN_B = """
import torch

class BaseB:
    pass

class Pool(BaseB):
    def __init__(self, n):
        self.write_pos = torch.zeros(n)
        self.extra = torch.zeros(n, device="cuda")
"""


def test_the_facts_do_not_depend_on_the_order_of_the_summaries(tmp_path: Path) -> None:
    """Two files define a class of one name: which definition comes first decides some
    facts.  A cold run resolved the summaries in the order its workers returned them, the
    project index in its rows' order, so the same project gave two fingerprints (the
    findings cache's key): the first edit after a cold scan analysed every file again.  The
    resolver takes them in the order of their paths."""
    from lint_h2d.inference.project import fingerprint_of, resolve
    from lint_h2d.pipeline import summary_and_verdict

    (tmp_path / "a.py").write_text(_TWIN_A)
    (tmp_path / "b.py").write_text(_TWIN_B)
    summaries = [summary_and_verdict(str(tmp_path / n), (tmp_path / n).read_text())[0] for n in ("a.py", "b.py")]
    forward, backward = resolve(summaries), resolve(summaries[::-1])
    assert forward.bases["Pool"] == backward.bases["Pool"] == ("BaseA", "BaseB")
    assert forward.fields == backward.fields
    assert fingerprint_of(forward) == fingerprint_of(backward)


def test_the_facts_do_not_depend_on_how_a_path_is_spelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A summary is named by its absolute path, as the project index names it: a run given
    `pkg/a.py` and one given its absolute path (or reading it from the index) resolve to the
    same facts and the same fingerprint (evidence steps carry the path)."""
    from lint_h2d.inference.project import fingerprint_of, resolve
    from lint_h2d.pipeline import summary_and_verdict

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(_TWIN_A)
    monkeypatch.chdir(tmp_path)
    relative = summary_and_verdict("pkg/a.py", _TWIN_A)[0]
    absolute = summary_and_verdict(str(tmp_path / "pkg" / "a.py"), _TWIN_A)[0]
    assert relative.path == absolute.path == str(tmp_path / "pkg" / "a.py")
    assert fingerprint_of(resolve([relative])) == fingerprint_of(resolve([absolute]))


def _flatbuffer_like(n: int) -> str:
    """`n` classes built as flatbuffers' generated Python is: each `InitFromObj(cls, obj)`
    calls `_UnPack`, which calls other classes' `InitFromObj` by name on the object's parts,
    so every parameter's calls pass what other parameters hold: one cycle through them all."""
    return "".join(
        f"class T{i}:\n    @classmethod\n    def InitFromObj(cls, obj{i}):\n        x = T{i}()\n"
        f"        x._UnPack(obj{i})\n        return x\n\n    def _UnPack(self, obj{i}):\n"
        f"        if obj{i} is None:\n            return\n"
        f"        self.f = T{(i + 1) % n}.InitFromObj(obj{i}.Child())\n        self.g = []\n"
        f"        for k in range(obj{i}.OtherLength()):\n"
        f"            self.g.append(T{(i + 2) % n}.InitFromObj(obj{i}.Other(k)))\n"
        f"        self.h = T{(i + 3) % n}.InitFromObj(obj{i}.Third())\n\n\n"
        for i in range(n))


def test_a_resolve_that_drops_the_same_facts_again_and_again_gives_up_on_its_cycles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ExecuTorch's generated serialization classes sent the resolve into hours: each fact of
    one big cycle, when asked, computed the whole cycle with a guess, dropped it, and the next
    fact did the same.  Past a floor, when the facts dropped are the same ones over and over,
    every cycle reads unknown at once (`_DROP_FLOOR`, `_DROPS_PER_FACT`): the count of facts
    computed stays near the floor however many classes there are (counts, not time), and what
    the resolve gives is what a spent pass budget gives."""
    from lint_h2d.inference import project
    from lint_h2d.inference.summary import summarize

    monkeypatch.setattr(project, "_DROP_FLOOR", 2_000)
    monkeypatch.setattr(project, "_DROPS_PER_FACT", 20)
    computed = [0]
    fixpoint = project._Resolver._fixpoint

    def counted(self: Any, key: Any, compute: Any) -> Any:
        computed[0] += 1
        assert computed[0] < 20_000, "the resolve keeps computing the same cycle"
        return fixpoint(self, key, compute)

    monkeypatch.setattr(project._Resolver, "_fixpoint", counted)
    for n in (10, 20):
        computed[0] = 0
        resolved = project.resolve([summarize(f"gen{n}.py", _flatbuffer_like(n))])
        assert computed[0] < 5_000, n
        assert not any(v.kind.is_tensor for v in resolved.params.values())
    monkeypatch.setattr(project, "_MAX_PASSES", 0)  # no guess at all: the same facts
    spent = project.resolve([summarize("gen20.py", _flatbuffer_like(20))])
    assert project.fingerprint_of(spent) == project.fingerprint_of(resolved)
