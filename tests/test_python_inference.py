"""Issue 17, second round: inference that knows Python and PyTorch, not one project's habits.

The project in tests/fixtures/projects/python holds, per kind of miss seen on code the tool
was not written against, the flagged cases (`# error`) next to look-alikes that must stay
silent: fields allocated in one method and written in another through chains and aliases
(ctx.py), integer indices Python makes (ints.py), tensors whose device comes from another
tensor (derived.py), and `device=`/index evidence that must be there before a finding
(evidence.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

from lint_h2d.config import Settings
from lint_h2d.findings import Finding
from tests.conftest import FIXTURES
from tests.test_project_inference import expected_rows, scan_files

PROJECT = FIXTURES / "projects" / "python"
# (A package of it, too: `place_constants_pkg`, which `imported_places.py` imports from.)
FILES = sorted(PROJECT.glob("*.py")) + sorted(PROJECT.glob("*/*.py"))


def scan(prefilter: bool, files: List[Path] = FILES) -> Dict[str, List[Finding]]:
    return scan_files(files, Settings(root=PROJECT), prefilter)


@pytest.fixture(scope="module")
def results() -> Dict[str, List[Finding]]:
    return scan(True)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_flagged_lines_are_exactly_the_marked_ones(path: Path, results: Dict[str, List[Finding]]) -> None:
    assert sorted(f.location.row for f in results[path.name]) == sorted(expected_rows(path))


def test_prefilter_keeps_every_finding(results: Dict[str, List[Finding]]) -> None:
    assert scan(False) == results


def _passed_to_g(text: str) -> List[Any]:
    """The summary's term of the first argument of each call `g(...)` in `text`, in order."""
    from lint_h2d.inference.summary import summarize
    return [c.args[0] for c in summarize("k.py", text).calls if c.callee == "g"]


def _chain(results: Dict[str, List[Finding]], name: str, row: int) -> List[str]:
    (finding,) = [f for f in results[name] if f.location.row == row]
    return [f"{Path(s.path).name if s.path else name}:{s.row}: {s.message}" for s in finding.evidence]


def test_evidence_names_where_the_device_came_from(results: Dict[str, List[Finding]]) -> None:
    # A field allocated in `allocate()`, written in `reset()`.
    assert _chain(results, "ctx.py", 19)[0].startswith("ctx.py:15: allocated on `self.device` here")
    # A chain through a field built by `Workspace(...)`: the class, then the allocation.
    chain = _chain(results, "ctx.py", 39)
    assert "ctx.py:7: `buf` is a field of `Workspace`" in chain
    assert any(s.startswith("ctx.py:15: allocated on the device here") for s in chain)
    # `device=values.device` on the device because every caller passes a device tensor.
    chain = _chain(results, "evidence.py", 13)
    assert chain[0].startswith("evidence.py:12: allocated on the device of a device tensor")
    assert any("every call of `called` passes a device tensor as `values`" in s for s in chain)
    # A class's constructions are named by the class, not by its `__init__`.
    assert "passed_places.py:43: every call of `PassedBeam` passes an accelerator as `device` " \
           "(passed_places.py:43, passed_places.py:44)" in _chain(results, "passed_places.py", 21)
    # An `isinstance` check of a project class is where the object's class comes from.
    assert _chain(results, "checked_instances.py", 91)[0] == \
        "checked_instances.py:90: `md` is a `CheckedMeta` here (`isinstance` check)"
    # `.new_zeros()` of a device tensor names the method, then where the tensor was allocated.
    chain = _chain(results, "derived.py", 12)
    assert chain[0] == "derived.py:11: `.new_zeros()` of a device tensor: on its device"
    assert chain[1].startswith("derived.py:7: allocated on `\"cuda\"` here")


def test_indices_resting_on_parameter_evidence_get_an_unsafe_fix_at_most(
        results: Dict[str, List[Finding]]) -> None:
    for row in (40, 45, 48):  # an int default, `range(i)` in the body, arithmetic of one
        (finding,) = [f for f in results["evidence.py"] if f.location.row == row]
        assert "taken to be integers" in finding.evidence[-1].message
        assert any(s.message.endswith(("defaults to an int", "to `range()`: an int")) for s in finding.evidence[:-1])
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_an_index_of_unknown_dtype_rests_on_a_convention(results: Dict[str, List[Finding]]) -> None:
    """A 0-dim tensor of a dtype nothing says, as an index: taken to be an integer, and said so."""
    for row, shown in ((17, "group"), (19, "last")):
        (finding,) = [f for f in results["unknown_dtypes.py"] if f.location.row == row]
        assert any(s.message.startswith(f"`{shown}` is a 0-dim tensor of a dtype not known here: as an index, "
                                        "taken to be an integer one") for s in finding.evidence)
        assert "taken to be integers" in finding.evidence[-1].message
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_a_numpy_value_is_a_numpy_scalar_with_an_unsafe_fix(results: Dict[str, List[Finding]]) -> None:
    for row in (20, 28):
        (finding,) = [f for f in results["numpy_values.py"] if f.location.row == row]
        assert finding.evidence[-1].message.endswith("the value is a numpy scalar (setitem raises for a numpy array)")
        assert finding.fix is not None and finding.fix.applicability.value == "unsafe"


def test_what_device_indices_select_says_why(results: Dict[str, List[Finding]]) -> None:
    chain = _chain(results, "device_selected.py", 15)
    assert chain[0].startswith("device_selected.py:14: indexed with a device tensor of 1 dimension here (`table[...]`)")
    assert chain[1].startswith("device_selected.py:13: allocated on `\"cuda\"` here")


def test_one_file_facts_match_the_project(results: Dict[str, List[Finding]]) -> None:
    """The file's own facts need no other file: ctx.py alone gives the same findings."""
    alone = scan(True, [PROJECT / "ctx.py"])
    assert [f.location.row for f in alone["ctx.py"]] == [f.location.row for f in results["ctx.py"]]


def test_third_round_evidence_names_each_new_step(results: Dict[str, List[Finding]]) -> None:
    """Issue 17, third round: the chain says why, for each new kind of evidence."""
    # A dataclass built by position: the argument that passed the device tensor.
    chain = _chain(results, "counters.py", 80)
    assert any("`GraphState(...)` passes a device tensor as `attention` (argument 2)" in s for s in chain)
    assert any("`Runner.state()` returns a `GraphState`" in s for s in chain)
    # A field that only ever holds ints: named as the index's evidence.
    chain = _chain(results, "counters.py", 34)
    assert any("`total` is only ever assigned Python numbers" in s for s in chain)
    # An operator's device operand: where that operand was allocated.
    chain = _chain(results, "operators.py", 14)
    assert chain[0].startswith("operators.py:11: allocated on `\"cuda\"` here")
    # A name that is None on one path: the other path's allocation.
    chain = _chain(results, "optional.py", 16)
    assert chain[0].startswith("optional.py:13: allocated on `\"cuda\"` here")
    # A parameter every call passes `self._buffer()`: the method and the allocation.
    chain = _chain(results, "calls.py", 24)
    assert any("every call of `write_position` passes a device tensor as `positions`" in s for s in chain)
    assert any(s.startswith("calls.py:12: allocated on the device here") for s in chain)


def test_fourth_round_evidence_names_each_new_step(results: Dict[str, List[Finding]]) -> None:
    """Issue 17, fourth round: the chain says why, for each new kind of evidence."""
    # A call-site operator term cut to its first operands: still the call and the allocation.
    chain = _chain(results, "bookkeeping.py", 21)
    assert any("every call of `record_step` passes a device tensor as `active_mask`" in s for s in chain)
    assert any(s.startswith("bookkeeping.py:30: allocated on the device here") for s in chain)
    # A legacy tensor type's parameter, passed back to itself in a loop (a cycle's least solution).
    chain = _chain(results, "legacy_types.py", 40)
    assert any("every call of `step_finished` passes a device tensor as `finished`" in s for s in chain)
    assert any(s.startswith("legacy_types.py:50: allocated on the device here") for s in chain)
    # An index taken from a function annotated `-> tuple[int, ...]`.
    chain = _chain(results, "shuffle_run.py", 12)
    assert any("`shuffled_rows()` is annotated to return a container of python scalars" in s for s in chain)


def test_fifth_round_isinstance_checks_are_named_as_evidence(results: Dict[str, List[Finding]]) -> None:
    """Issue 17, fifth round: a value proven a Python number by `isinstance` says where."""
    chain = _chain(results, "narrowing.py", 20)
    assert "narrowing.py:19: `state` is a Python `int` here (`isinstance` check)" in chain
    chain = _chain(results, "narrowing.py", 38)
    assert "narrowing.py:36: `value` is a Python `float` here (`isinstance` check)" in chain


def test_fifth_round_device_context_is_named_as_evidence(results: Dict[str, List[Finding]]) -> None:
    """A factory inside `with torch.device(...)`: the allocation, then the context; in another
    file, the field's allocation names the context and its line."""
    chain = _chain(results, "device_context.py", 23)
    assert chain[0].startswith("device_context.py:17: allocated without `device=` (`torch.zeros(...)`) here")
    assert chain[1].startswith("device_context.py:16: inside `with torch.device(...)`")
    chain = _chain(results, "device_context_use.py", 6)
    assert any("device_context.py:17: allocated on the device here (`torch.zeros(...) inside with "
               "torch.device(...) at line 16`)" in s for s in chain)


def test_ninth_round_device_context_names_the_calls_to_the_construction(
        results: Dict[str, List[Finding]]) -> None:
    """A class built by a method the block calls (an override in a subclass): the base's
    buffer, then the `with` line naming each call from the block to the construction."""
    chain = _chain(results, "device_context_calls.py", 90)
    assert chain[1].startswith("device_context_layers.py:9: allocated without `device=` in `__init__`")
    assert chain[2].startswith("device_context_calls.py:35: `SlotLayer` is built by `Model.__init__`; `Model` is "
                               "constructed under `with torch.device(...)` through the calls the block makes")
    assert chain[2].endswith("`self.init_model(...)` at device_context_calls.py:36 runs `Runner.init_model` "
                             "(device_context_calls.py:47) -> `Model(...)` at device_context_calls.py:48")
    chain = _chain(results, "device_context_calls.py", 91)
    assert "`self.make_extra(...)` at device_context_calls.py:49 runs `Runner.make_extra`" in chain[3]
    assert chain[3].endswith("`HelperLayer(...)` at device_context_calls.py:58")
    # A base constructed nowhere, its subclasses all built on the device: a convention.
    (finding,) = [f for f in results["device_context_layers.py"] if f.location.row == 69]
    assert finding.evidence[1].message.startswith(
        "`_RankBase` is constructed nowhere in the project, only its subclasses (`RankA`, `RankB`)")
    assert finding.evidence[1].kind.value == "convention"


def test_module_outputs_say_they_rest_on_a_convention_and_get_no_safe_fix(
        results: Dict[str, List[Finding]]) -> None:
    """Issue 17, fifth round: a module's output is on the device by a convention of serving
    code (its parameters are there), so the chain says so and the fix is never safe."""
    for name in ("modules.py", "module_users.py", "sampling_hook.py"):
        for finding in results[name]:
            if (name, finding.location.row) == ("module_users.py", 15):
                continue  # `Head.forward` allocates on its input's device: direct evidence
            kinds = [s.kind.value for s in finding.evidence]
            assert "convention" in kinds, (name, finding.location.row)
            assert finding.fix is None or finding.fix.applicability.value == "unsafe"
    chain = _chain(results, "modules.py", 27)
    assert chain[0].startswith("modules.py:26: `head(...)` calls an `nn.Module` (`nn.Linear`)")
    # Across methods: the allocation of one path and the Linear of the other are both named.
    chain = _chain(results, "modules.py", 64)
    assert any("`Talker.codebook_logits()` returns a device tensor" in s for s in chain)
    assert any("`self.codebook_head(...)` calls an `nn.Module`" in s for s in chain)
    # A project module across files: its forward's own allocation, after the call.
    chain = _chain(results, "module_users.py", 15)
    assert chain[0] == "module_users.py:14: `self.head(...)` runs `Head.forward`"
    assert any(s.startswith("module_blocks.py:13: `Head.forward()` returns a device tensor") for s in chain)
    chain = _chain(results, "sampling_hook.py", 15)
    assert any("vLLM's model runner passes its `[num_reqs, vocab]` logits here" in s for s in chain)


def test_annotated_assignments_name_the_annotation(results: Dict[str, List[Finding]]) -> None:
    """`self.eos: int = tokenizer.end_index`: the index is an int because it is declared
    one where it is assigned, and the chain says so."""
    assert "annotated_assign.py:10: `self.eos` is annotated `int` where it is assigned" in _chain(
        results, "annotated_assign.py", 16)
    assert "annotated_assign.py:23: `slot` is annotated `int` where it is assigned" in _chain(
        results, "annotated_assign.py", 24)


def test_call_sites_read_through_place_keeping_ops(results: Dict[str, List[Finding]]) -> None:
    # `torch.log_softmax(rows[i])` at the call keeps the place of `.cuda()`: the chain names the
    # call site, then the move; `cls._pick(...)` is what the class's `_pick` returns (an int).
    chain = _chain(results, "call_site_places.py", 16)
    assert chain[0].startswith("call_site_places.py:35: every call of `_penalise` passes a device tensor as `scores`")
    assert any(s.startswith("call_site_places.py:33: moved to the device here") for s in chain)
    # `torch.exp(on_device[0])`, then `probs.softmax(...) > 0.5` in the callee.
    chain = _chain(results, "call_site_places.py", 42)
    assert chain[0].startswith("call_site_places.py:52: every call of `_keep_top` passes a device tensor as `probs`")


def test_summary_keeps_place_and_rank_through_elementwise_ops() -> None:
    text = ("import torch\n"
            "def f(x, n, rows):\n"
            "    for i in range(n):\n"
            "        g(torch.log_softmax(x[i], dim=0))\n"
            "        g(x[i] / 2.0)\n"
            "    for j in rows:\n"
            "        g(x[j].clone())\n"
            "    g(x.sum())\n")
    args = _passed_to_g(text)
    x = ("param", "f", "x", None)
    # A range counter is an int: `x[i]` drops one dimension; log_softmax keeps place and rank.
    assert args[0] == ("keep", ("sub", x, 1))
    assert args[1] == ("same", ("sub", x, 1), ("scalar",))
    # Another loop's target is unknown: the rank of `x[j]` is open, `.clone()` still keeps it.
    assert args[2] == ("keep", ("sub", x, None))
    # A reduction keeps the place only.
    assert args[3] == ("same", x, None)


def test_ninth_round_number_facts_are_named_as_evidence(results: Dict[str, List[Finding]]) -> None:
    # A name unpacked from a container of numbers says so.
    chain = _chain(results, "unpacked_numbers.py", 26)
    assert any("`cond_row` is unpacked from a container whose every element is a Python number" in s
               for s in chain)
    # An imported module-level number names the binding in the other file.
    chain = _chain(results, "imported_constants_use.py", 13)
    assert "imported_constants.py:5: `AUDIO_OFFSET` is bound at module level only to Python numbers" in chain
    chain = _chain(results, "imported_constants_use.py", 14)
    assert "imported_constants.py:6: `SPECIAL_IDS` is bound at module level only to a dict display of numbers" \
        in chain
    # A `None` default that every passing call fills with ints names the calls.
    chain = _chain(results, "passed_slots.py", 33)
    assert any("every call of `prefill` passes a container of Python numbers as `slots`" in s for s in chain)
    # An int default passed on names the default; the fix is unsafe at most.
    (finding,) = [f for f in results["progress_loops.py"] if f.location.row == 29]
    messages = [s.message for s in finding.evidence]
    assert "`Scorer.score` defaults `n_ctx` to an int" in messages
    assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_summary_grows_lists_and_reads_loops_over_numbers() -> None:
    text = ("from tqdm import tqdm\n"
            "def f(n, taken, ids, rows):\n"
            "    free = [s for s in range(n) if s not in taken]\n"
            "    slots = []\n"
            "    for _ in ids:\n"
            "        slot = free.pop(0)\n"
            "        slots.append(slot)\n"
            "    g(tuple(slots))\n"
            "    for i in tqdm(range(n)):\n"
            "        g(i)\n"
            "    for r in rows:\n"
            "        g(r)\n"
            "    made = [rows]\n"
            "    made.append(3)\n"
            "    g(made)\n")
    args = _passed_to_g(text)
    assert args[0] == ("list", ("scalar",))  # popped from a comprehension of ints, appended
    assert args[1] == ("scalar",)  # `tqdm(range(n))` yields ints
    assert args[2] == ("unk",)  # a loop over what nothing tells about
    # A list also holding `rows`: both elements are kept (the resolver joins them).
    assert args[3] == ("join", (("list", ("param", "f", "rows", None)), ("list", ("scalar",))))


def test_summary_grows_the_rows_of_a_list_of_lists() -> None:
    text = ("def f(n, rows_in, ys):\n"
            "    rows = [[] for _ in range(n)]\n"
            "    rows[0].append(3)\n"
            "    g(rows)\n"
            "    grid = []\n"
            "    grid.append([])\n"
            "    grid[0].extend(ys)\n"
            "    g(grid)\n"
            "    rows_in[0].append(3)\n"
            "    g(rows_in)\n"
            "    table = {}\n"
            "    table[0] = []\n"
            "    table[0].append(3)\n"
            "    g(table)\n")
    args = _passed_to_g(text)
    # Every row may be the one `rows[0]` picks: each holds 3 too, beside the empty rows.
    assert args[0] == ("join", (("list", ("list", ("none",))), ("list", ("list", ("scalar",)))))
    # Extended by what nothing tells about: a row of unknown contents joins in.
    assert args[1][0] == "join" and ("list", ("unk",)) in args[1][1]
    # A parameter's rows, a dict's values: not this body's lists of lists, left as they are.
    assert args[2] == ("param", "f", "rows_in", None)
    assert "scalar" not in repr(args[3])


def test_summary_hands_on_a_cpu_default_device_only_untested() -> None:
    text = ("def f(n, device=None, other_device=None, dev_id=None):\n"
            "    g(device)\n"
            "    if other_device is not None:\n"
            "        g(other_device)\n"
            "    g(dev_id)\n")
    args = _passed_to_g(text)
    # Neither rebound nor tested: the caller's calls decide, else the CPU by default.
    assert args[0][0] == "cpudefault" and args[0][1] == ("param", "f", "device", None)
    # Past a test of it the default may be ruled out; a name that is no device name is left.
    assert args[1] == ("param", "f", "other_device", None)
    assert args[2] == ("param", "f", "dev_id", None)


def test_a_modules_device_rests_on_the_convention(results: Dict[str, List[Finding]]) -> None:
    """Issue 17, ninth round: `device=self.device` / `device=model.device` of an `nn.Module`
    whose class does not say where `device` points is where its parameters are (a convention),
    so the chain says so and the fix is never safe; a class's own place is direct evidence."""
    for row, shown in ((68, "self.device"), (74, "model.device")):
        finding = next(f for f in results["object_device.py"] if f.location.row == row)
        assert "convention" in [s.kind.value for s in finding.evidence]
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"
        assert any(f"allocated on `{shown}` here" in s and "(`Speaker`)" in s
                   for s in _chain(results, "object_device.py", row))
    # Across classes (the project's summary of `Decoder.steps`): the same convention.
    finding = next(f for f in results["object_device.py"] if f.location.row == 150)
    assert "convention" in [s.kind.value for s in finding.evidence]
    assert any("allocated on the device of an `nn.Module` (`Decoder`)" in s
               for s in _chain(results, "object_device.py", 150))
    finding = next(f for f in results["object_device.py"] if f.location.row == 103)
    assert "convention" not in [s.kind.value for s in finding.evidence]


def test_a_passed_device_of_an_unplaced_tensor_rests_on_the_convention(results: Dict[str, List[Finding]]) -> None:
    """Issue 17, thirty-fifth round: `SosBeam(n, self.sosdev_sos.device)` at every call, the
    buffer of a module nothing moves: the parameter is the accelerator by the convention that
    reads `device=x.device` as one, and the chain says so."""
    finding = next(f for f in results["buffer_device_passed.py"] if f.location.row == 12)
    assert "convention" in [s.kind.value for s in finding.evidence]
    chain = _chain(results, "buffer_device_passed.py", 12)
    assert any("every call of `SosBeam` passes an accelerator as `device`" in s for s in chain)
    assert any(s.startswith("buffer_device_passed.py:36: the `.device` of a tensor is passed here") for s in chain)


def test_a_module_read_through_its_import_names_the_binding(results: Dict[str, List[Finding]]) -> None:
    for row in (30, 31):
        assert "imported_constants.py:5: `AUDIO_OFFSET` is bound at module level only to Python numbers" \
            in _chain(results, "module_attributes.py", row)


def test_evidence_says_what_a_device_keyword_rests_on(results: Dict[str, List[Finding]]) -> None:
    # A `device=` that is not a string: the step names it and says why it is the accelerator,
    # so that the finding can be checked without opening the code that sets it.
    annotated = _chain(results, "device_kwarg_evidence.py", 9)
    assert annotated[0] == "device_kwarg_evidence.py:8: allocated on `device` here (`torch.zeros(..., device=...)`)"
    assert annotated[1] == ("device_kwarg_evidence.py:6: `device` is annotated `torch.device` and no call in the "
                            "project says where it points: taken to be the accelerator")
    from_tensor = _chain(results, "device_kwarg_evidence.py", 15)
    assert from_tensor[0] == (
        "device_kwarg_evidence.py:14: allocated on `angle.device` here (`torch.zeros(..., device=...)`): nothing "
        "in the project proves where `angle` is, and a tensor's `.device` passed as `device=` is taken to be the "
        "accelerator")
    field = _chain(results, "device_kwarg_evidence.py", 29)
    assert field[0].startswith("device_kwarg_evidence.py:25: allocated on `self.dev` here")
    assert "nothing in the project proves where `self.dev` points" in field[0]
    # A string names itself and needs no more.
    assert _chain(results, "derived.py", 10)[0] == "derived.py:7: allocated on `\"cuda\"` here (`torch.zeros(..., device=...)`)"


def test_stores_from_outside_the_class_name_the_store(results: Dict[str, List[Finding]]) -> None:
    """Issue 17, tenth round (lightllm's infer states): a field the class only sets to `None`,
    filled by `state.seq_lens = seq_lens` on an instance built through a class-valued attribute
    (`self.state_class()`), names that store, the call that passed the tensor, and the
    allocation that a later rebinding of the name (a list, then the tensor) made."""
    chain = _chain(results, "handoff_state.py", 23)
    assert any(s.startswith("handoff_runner.py:34: `state.seq_lens = ...` stores a device tensor in the "
                            "`seq_lens` of a `HandoffWindowState`") for s in chain)
    assert any(s.startswith("handoff_runner.py:14: allocated on the device here") for s in chain)
    chain = _chain(results, "handoff_state.py", 37)
    assert any("of a `HandoffPlainState`" in s for s in chain)


def test_a_name_read_after_an_outright_rebinding_is_that_binding() -> None:
    text = ("import torch\n"
            "def f(rows, flag):\n"
            "    lens = []\n"
            "    for r in rows:\n"
            "        lens.append(r)\n"
            "    g(lens)\n"
            "    lens = torch.tensor(lens, device='cuda')\n"
            "    g(lens)\n"
            "    other = torch.zeros(3, device='cuda')\n"
            "    if flag:\n"
            "        other = []\n"
            "    g(other)\n"
            "    for r in rows:\n"
            "        g(lens)\n"
            "        lens = []\n")
    args = _passed_to_g(text)
    assert args[0] == ("list", ("unk",))  # before the rebinding: the list grown (the empty display adds nothing)
    assert args[1] == ("dev", None, 7, "torch.tensor(..., device=\"cuda\")", False)  # after it: the tensor
    assert args[2][0] == "join"  # rebound on one path only: both
    # In a loop, a rebinding after the read reaches it again from the second iteration.
    assert args[3] == ("join", (args[1], ("list", ("none",))))


def test_reaching_hides_only_what_an_outright_rebinding_precedes() -> None:
    import ast

    from lint_h2d.inference.reaching import reaching, rebinds, statement_sites
    body = ast.parse("x = 1\nif c:\n    x = 2\n    use(x)\nuse(x)\nwhile c:\n    x = 3\n    use(x)\n").body
    sites = statement_sites(body)
    first, branch, after, loop = body[0], body[1], body[2], body[3]
    assert isinstance(branch, ast.If) and isinstance(loop, ast.While)
    bindings = [(sites[id(s)], rebinds(s, "x")) for s in (first, branch.body[0], loop.body[0])]
    assert reaching(sites[id(branch.body[1])], bindings) == (1,)  # the loop's comes later
    assert reaching(sites[id(after)], bindings) == (0, 1)  # the branch may not run
    assert reaching(sites[id(loop.body[1])], bindings) == (2,)


def test_a_rebinding_inside_the_loop_hides_the_last_iterations_binding() -> None:
    """`for ...: a = x.cpu(); a = a.to(dev); use(a)`: the second line's read of `a` is the first
    line's binding; the second line's own binding of the iteration before runs the first line
    again on its way back.  A rebinding before the loop hides nothing of the kind."""
    import ast

    from lint_h2d.inference.reaching import reaching, rebinds, statement_sites
    body = ast.parse("for i in r:\n    a = f()\n    a = g(a)\n    use(a)\n"
                     "b = f()\nfor i in r:\n    b = g(b)\n"
                     "for i in r:\n    c = f()\n    while k:\n        use(c)\n        c = g(c)\n").body
    sites = statement_sites(body)
    first_loop, outside, second_loop, third_loop = body[0], body[1], body[2], body[3]
    assert isinstance(first_loop, ast.For) and isinstance(second_loop, ast.For) and isinstance(third_loop, ast.For)
    fresh, moved, used = first_loop.body
    bindings = [(sites[id(s)], rebinds(s, "a")) for s in (fresh, moved)]
    assert reaching(sites[id(moved)], bindings) == (0,)  # `g(a)` reads `f()`'s `a` only
    assert reaching(sites[id(used)], bindings) == (1,)
    again = second_loop.body[0]
    bindings = [(sites[id(s)], rebinds(s, "b")) for s in (outside, again)]
    assert reaching(sites[id(again)], bindings) is None  # the loop's own `b` comes round again
    inner = third_loop.body[1]
    assert isinstance(inner, ast.While)
    read, rebound = inner.body
    bindings = [(sites[id(s)], rebinds(s, "c")) for s in (third_loop.body[0], rebound)]
    assert reaching(sites[id(read)], bindings) is None  # the inner loop comes round without `c = f()`


def test_a_rebinding_later_in_a_branch_hides_what_the_branch_bound_before_it() -> None:
    """`x = f()` then `x = g(x)` in one branch of an `if`: a read after the `if` sees the second
    binding (and the other branch's), never the first; unless a `break` may leave the block
    between the two, or a `try` or `with` around them may resume after an exception."""
    import ast

    from lint_h2d.inference.reaching import reaching, rebinds, statement_sites

    def kept(code: str) -> object:
        body = ast.parse(code).body
        sites = statement_sites(body)
        binds = [s for s in ast.walk(ast.Module(body=body, type_ignores=[]))
                 if isinstance(s, ast.Assign) and rebinds(s, "x")]
        (use,) = [s for s in ast.walk(ast.Module(body=body, type_ignores=[])) if isinstance(s, ast.Expr)]
        return reaching(sites[id(use)], [(sites[id(s)], True) for s in binds])

    assert kept("if c:\n    x = f()\n    x = g(x)\nelse:\n    x = h()\nuse(x)\n") == (1, 2)
    assert kept("if c:\n    x = f()\n    if d:\n        pass\n    x = g(x)\nuse(x)\n") == (1,)
    assert kept("for r in rs:\n    x = f()\n    if d:\n        break\n    x = g(x)\nuse(x)\n") is None
    assert kept("for r in rs:\n    x = f()\n    if d:\n        continue\n    x = g(x)\nuse(x)\n") is None
    assert kept("try:\n    x = f()\n    x = g(x)\nexcept E:\n    pass\nuse(x)\n") is None
    assert kept("with m:\n    x = f()\n    x = g(x)\nuse(x)\n") is None
    # A read between the two still sees the first.
    assert kept("if c:\n    x = f()\n    use(x)\n    x = g(x)\n") == (0,)


def test_an_if_whose_every_branch_rebinds_hides_what_came_before() -> None:
    """`if c: x = f() else: x = g()`: past the `if`, and in a loop past it, no binding from
    before it reaches a read (the loop's last line bound `x` in the iteration before); an `if`
    without an `else`, a branch that may `break` first, and an `elif` chain one branch of which
    does not rebind hide nothing; `x /= t` rebinds (to what the operator makes of the old value)."""
    import ast

    from lint_h2d.inference.reaching import branch_rebindings, reaching, rebinds, statement_sites

    def kept(code: str) -> object:
        body = ast.parse(code).body
        sites = statement_sites(body)
        everything = list(ast.walk(ast.Module(body=body, type_ignores=[])))
        binds = sorted((s for s in everything if isinstance(s, (ast.Assign, ast.AugAssign)) and rebinds(s, "x")),
                       key=lambda s: s.lineno)
        (use,) = [s for s in everything if isinstance(s, ast.Expr)]
        parents = {sites[id(s)].chain: s for s in everything if isinstance(s, ast.stmt) and id(s) in sites}
        branched = branch_rebindings([(sites[id(s)], s) for s in binds], parents, sites)
        return reaching(sites[id(use)], [(sites[id(s)], True) for s in binds], branched)

    loop = "for r in rs:\n    if c:\n        x = f()\n    else:\n        x = g()\n    use(x)\n    x = h(x)\n"
    assert kept(loop) == (0, 1)  # not `h(x)` of the iteration before
    assert kept("x = a()\nif c:\n    x = f()\nelse:\n    x = g()\nuse(x)\n") == (1, 2)
    assert kept("x = a()\nif c:\n    x = f()\nelif d:\n    x = g()\nelse:\n    x = k()\nuse(x)\n") == (1, 2, 3)
    assert kept("x = a()\nif c:\n    x = f()\nelif d:\n    x = g()\nuse(x)\n") is None
    assert kept("x = a()\nif c:\n    x = f()\nuse(x)\n") is None
    assert kept("for r in rs:\n    if c:\n        if d:\n            break\n        x = f()\n    else:\n"
                "        x = g()\n    use(x)\n    x = h(x)\n") is None
    assert kept("x = a()\nx /= t\nuse(x)\n") == (1,)
    assert rebinds(ast.parse("x += 1").body[0], "x") and not rebinds(ast.parse("x[0] += 1").body[0], "x")


def test_legacy_new_names_the_method_then_the_source(results: Dict[str, List[Finding]]) -> None:
    """`t.new(n)` (legacy_new.py): the step names the method, then where `t` was allocated."""
    chain = _chain(results, "legacy_new.py", 13)
    assert chain[0] == "legacy_new.py:12: `.new()` of a device tensor: on its device"
    assert chain[1].startswith("legacy_new.py:11: allocated on `\"cuda\"` here")


def test_module_call_is_a_call_of_forward(results: Dict[str, List[Finding]]) -> None:
    """`self.prior(states, lens)` (module_call.py) passes `states` to `PriorHead.forward`: the
    chain names the call of the module, then where `states` was allocated."""
    chain = _chain(results, "module_call.py", 25)
    assert chain[0] == "module_call.py:24: `.new_full()` of a device tensor: on its device"
    assert "every call of `forward` passes a device tensor as `embeddings`" in chain[2]
    assert chain[3] == ("module_call.py:65: `self.prior(...)` calls an `nn.Module` (`PriorHead`): "
                        "it runs `forward` with the call's arguments")
    assert chain[4] == "module_call.py:59: allocated on the device here (`torch.zeros(..., device=\"cuda\")`)"


def test_forward_inputs_rest_on_the_convention(results: Dict[str, List[Finding]]) -> None:
    """A tensor input of `forward` of a project `nn.Module` that no call places (forward_inputs.py)
    is on the module's device by a convention: the chain names the parameter and its module and
    says `[convention]`, also through a call that passes it on, and the fix is never safe."""
    for row in (23, 38, 51):
        finding = next(f for f in results["forward_inputs.py"] if f.location.row == row)
        assert "convention" in [s.kind.value for s in finding.evidence], row
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"
    chain = _chain(results, "forward_inputs.py", 23)
    assert chain[0] == "forward_inputs.py:22: `.new_zeros()` of a device tensor: on its device"
    # `batch, n, _ = inputs.shape` says its rank, as strong as the convention it rests on.
    assert chain[1] == "forward_inputs.py:20: `inputs`'s sizes unpack into 3 names: it has 3 dimensions"
    assert chain[2] == ("forward_inputs.py:19: `inputs` is an input of `AlignmentPrior.forward` (an `nn.Module`), "
                        "and no call in the project says where it is: taken to be on the module's device, "
                        "where serving code keeps a model's parameters")
    chain = _chain(results, "forward_inputs.py", 38)
    assert chain[0] == "forward_inputs.py:37: `.new_full()` of a device tensor: on its device"
    assert "every call of `_log_state_priors` passes a device tensor as `text_embeddings`" in chain[1]
    assert chain[2] == "forward_inputs.py:20: `inputs`'s sizes unpack into 3 names: it has 3 dimensions"
    assert chain[3].startswith("forward_inputs.py:19: `inputs` is an input of `AlignmentPrior.forward`")
    assert _chain(results, "forward_inputs.py", 51)[1].startswith(
        "forward_inputs.py:49: `durations` is an input of `DurationPrior.forward`")
    # `device=inputs.device`: an explicit `device=`, as before the convention (a safe fix).
    count = next(f for f in results["forward_inputs.py"] if f.location.row == 31)
    assert "convention" not in [s.kind.value for s in count.evidence]
    assert count.fix is not None and count.fix.applicability.value == "safe"
    # The same through a name bound to the input's `.device`: the allocation's step says what it
    # rests on (it said nothing at all before).
    aliased = next(f for f in results["forward_inputs.py"] if "seen[0]" in f.message)
    assert "convention" not in [s.kind.value for s in aliased.evidence]
    assert aliased.evidence[0].message == (
        "allocated on `place` here (`torch.zeros(..., device=...)`): nothing in the project proves where `place` "
        "points, and a `device=` that is not provably the CPU is taken to be the accelerator")
    # `self.mask(...)` runs the holder's method: MaskHead's input rests on the convention, no call.
    chain = _chain(results, "module_call.py", 43)
    assert chain[1].startswith("module_call.py:41: `scores` is an input of `MaskHead.forward`")


def test_held_modules_rest_on_the_convention(results: Dict[str, List[Finding]]) -> None:
    """A module the project neither builds nor moves (held_modules.py) runs where models run: the
    chain names the class first, as a convention, then the buffer; the fix is never safe.  A
    mixin's method reads the buffer its subclass registers under the same convention."""
    for row in (35, 44, 51):
        finding = next(f for f in results["held_modules.py"] if f.location.row == row)
        assert finding.evidence[0].kind.value == "convention", row
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"
    chain = _chain(results, "held_modules.py", 35)
    assert chain[0].startswith("held_modules.py:13: `HeldQueue` holds buffers or parameters (an `nn.Module`), "
                               "and nothing in the project builds it or moves it")
    assert chain[0].endswith("a method its construction does not run is taken to run after that move "
                             "(a write before it is a host write)")
    assert chain[1].startswith("held_modules.py:20: held by the module as a buffer or parameter")
    assert any("`HeldMixed` holds buffers or parameters" in s for s in _chain(results, "held_modules.py", 51))


def test_instance_call_is_a_call_of_dunder_call(results: Dict[str, List[Finding]]) -> None:
    """`self.graph_step(ids, offsets)` (instance_call.py) passes `offsets` to
    `GraphStep.__call__`: the chain names that method by its class, the call of the instance,
    then where `offsets` was allocated.  The other classes' `__call__(self, offsets)` keep
    their own call sites (`Owner.__call__` keys them): `HostStep`'s, passed a CPU tensor once,
    stays silent."""
    chain = _chain(results, "instance_call.py", 29)
    assert chain[0] == ("instance_call.py:78: every call of `GraphStep.__call__` passes a device tensor as "
                        "`offsets` (instance_call.py:78, instance_call.py:76)")
    assert chain[1] == ("instance_call.py:78: `self.graph_step(...)` calls an instance of `GraphStep`: "
                        "Python runs its class's `__call__` with the call's arguments")
    assert chain[3] == "instance_call.py:20: allocated on the device here (`torch.tensor(..., device=device)`)"


def test_empty_list_field_names_the_empty_list(results: Dict[str, List[Finding]]) -> None:
    """`self.counts = []` never grown (empty_list_field.py): the chain says why the list is
    not among the field's values, then where the device tensor was allocated."""
    chain = _chain(results, "empty_list_field.py", 42)
    assert chain[0] == ("empty_list_field.py:22: `self.counts = []` is never grown: an item store into it "
                        "raises `IndexError`, so one that copies writes into the field's other values")
    assert chain[1].startswith("empty_list_field.py:34: allocated on `x.device` here")


def test_grown_fields_reads_only_what_may_add_elements() -> None:
    import ast

    from lint_h2d.inference.summary import _grown_fields
    cls = ast.parse(
        "class C:\n"
        "    def m(self, other):\n"
        "        self.a.append(1)\n"
        "        self.b[0:2] = [1, 2]\n"
        "        self.c += [1]\n"
        "        other.d = self.d\n"
        "        f(self.e)\n"
        "        n = len(self.f) + self.g[0]\n"
        "        for v in self.h: pass\n"
        "        self.i = [];  self.j[0] = 1\n"
        "        return self.k\n").body[0]
    assert isinstance(cls, ast.ClassDef)
    assert _grown_fields(cls, set("abcdefghijk")) == set("abcdek")


def test_self_attributes_finds_each_self_field_with_its_parent() -> None:
    """`_grown_fields`' walk: every `self.x` of the asked names, nested ones included (a
    lambda, a nested def, a decorator), with the node it hangs from; another object's `x`,
    another name's field and a field not asked for are left out."""
    import ast

    from lint_h2d.inference.summary import _self_attributes
    method = ast.parse(
        "def m(self, other):\n"
        "    self.a.append(1)\n"
        "    other.a.append(2)\n"
        "    f = lambda: g(self.b)\n"
        "    def inner(q=self.c):\n"
        "        return [self.a for _ in range(2)]\n"
        "    self.z = self.a\n").body[0]
    found = _self_attributes(method, "self", {"a", "b", "c"})
    shown = sorted((type(parent).__name__, child.attr, child.lineno) for parent, child in found)
    assert shown == [("Assign", "a", 7), ("Attribute", "a", 2), ("Call", "b", 4),
                     ("ListComp", "a", 6), ("arguments", "c", 5)]
    assert _self_attributes(method, "other", {"a"})[0][1].lineno == 3


def test_names_in_reads_a_tuple_of_names_as_the_walk_does() -> None:
    """`_names_in`'s shortcut for `a, b = ...` gives what `ast.walk` gives, in its order; a
    nested or starred target still takes the walk."""
    import ast

    from lint_h2d.inference.summary import _names_in
    for source in ("a, b, c = t", "[x, y] = t", "a, (b, c) = t", "a, *b = t", "self.x, y = t"):
        target = ast.parse(source).body[0].targets[0]  # type: ignore[attr-defined]
        walked = [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
        assert _names_in(target) == walked, source


def test_json_values_name_the_parse(results: Dict[str, List[Finding]]) -> None:
    """A value read out of `json.load`ed data (json_config.py): the chain names where the
    data was parsed, through the model's field as for a local."""
    chain = _chain(results, "json_config.py", 40)
    assert chain[0].startswith("json_config.py:33: allocated on `\"cuda\"` here")
    assert chain[1:4] == [
        "json_config.py:26: every call of `init_window` passes a `ConfiguredModel` as `model` (json_config.py:26)",
        "json_config.py:18: `config` is a field of `ConfiguredModel`",
        "json_config.py:21: read from data that `json.load` parsed: JSON holds no tensors, so a value is a "
        "host object (a number, `None`, ...)"]
    chain = _chain(results, "json_config.py", 51)
    assert chain[1] == ("json_config.py:51: read from data that `json.load` parsed: JSON holds no tensors, so a "
                        "value is a host object (a number, `None`, ...)")


def test_squeezed_rank_names_the_squeeze(results: Dict[str, List[Finding]]) -> None:
    """A module output's rank read off `squeeze(dim)` (module_ranks.py): the chain says which
    call dropped the dimension and from what rank, before the module convention it rests on;
    such a finding gets no safe fix (its device is a convention)."""
    chain = _chain(results, "module_ranks.py", 26)
    assert chain[0] == ("module_ranks.py:25: `torch.squeeze(...)` names a dimension to drop: rank 2 to 1 "
                        "(code names one it knows is of size 1; PyTorch would keep any other)")
    assert chain[1] == "module_ranks.py:18: `Punctuator.punc_forward()` returns a device tensor as position 0 of its tuple"
    assert "`self.decoder(...)` calls an `nn.Module` (`nn.Linear`)" in chain[2]
    assert _chain(results, "module_ranks.py", 29)[0].startswith("module_ranks.py:28: `indices.squeeze(...)` names")
    (finding,) = [f for f in results["module_ranks.py"] if f.location.row == 26]
    assert finding.fix is None or finding.fix.applicability.value != "safe"


def test_one_or_many_names_the_annotation_or_the_calls(results: Dict[str, List[Finding]]) -> None:
    """A number read out of an `int | list[int]` parameter (one_or_many.py): the chain names
    the annotation, or, two calls away, the calls that pass such a value."""
    chain = _chain(results, "one_or_many.py", 38)
    assert chain[1] == ("one_or_many.py:35: `ids` is annotated as a number or a container: a loop over it or an "
                        "index into it runs only on the container, and reads what the container holds")
    chain = _chain(results, "one_or_many.py", 25)
    assert chain[1] == ("one_or_many.py:29: every call of `complete_mask` passes a Python number or a container "
                        "of Python numbers as `has_mask` (one_or_many.py:29)")


def test_a_summary_says_how_calls_may_bind_and_on_what() -> None:
    """`FunctionSummary.arity` (positional parameters, `*args`, `**kwargs`) where the `def`
    alone decides how a call binds, () under a decorator that may change it; a call on the
    method's own instance or an attribute chain of it is marked (`CallSite.instance`), a call
    on any other object is not (it may be a class: `Cls.m(obj, x)`).  Both survive the
    index's JSON form."""
    from lint_h2d.inference.summary import from_json, summarize

    source = (
        "import functools\n"
        "def plain(a, b=1, *, c): pass\n"
        "def varied(a, /, b, *rest, **named): pass\n"
        "@functools.lru_cache()\n"
        "def cached(a): pass\n"
        "@register\n"
        "def registered(a): pass\n"
        "class K:\n"
        "    @staticmethod\n"
        "    def helper(a, b): pass\n"
        "    def run(self, x, other):\n"
        "        self.go(x)\n"
        "        self.inner.deep.go(x)\n"
        "        other.go(x)\n"
        "        K.go(self, x)\n"
        "        self.make().go(x)\n"
    )
    summary = summarize("m.py", source)
    arity = {f.name: f.arity for f in summary.functions}
    assert arity == {"plain": (2, 0, 0), "varied": (2, 1, 1), "cached": (1, 0, 0), "registered": (),
                     "helper": (2, 0, 0), "run": (3, 0, 0)}
    go = [c for c in summary.calls if c.callee == "go"]
    assert [(c.line, c.instance) for c in go] == [(12, True), (13, True), (14, False), (15, False), (16, False)]
    assert from_json("m.py", summary.to_json()) == summary


def test_a_row_unpacked_from_a_device_tensor_says_so(results: Dict[str, List[Finding]]) -> None:
    """`total, count = stats`: the finding names the unpacking (why the row has one dimension
    fewer), then where `stats` was allocated."""
    chain = _chain(results, "unpacked_rows.py", 12)
    assert chain[0] == "unpacked_rows.py:11: `total` is a row of a 2-D tensor, unpacked by position"
    assert chain[1].startswith("unpacked_rows.py:10: allocated on `device` here")
    # A 3-D tensor's rows are 2-D: the step says which rank was unpacked.
    assert _chain(results, "unpacked_rows.py", 17)[0].endswith("`first` is a row of a 3-D tensor, unpacked by position")


def test_a_class_built_through_a_type_parameter_is_that_class(results: Dict[str, List[Finding]]) -> None:
    """`meter = meter_class(); meter.to(device)` with `meter_class: Type[Meter]`: the move names
    `Meter`, and the buffer's write rests on it."""
    chain = _chain(results, "class_params.py", 14)
    assert chain[0].startswith("class_params_use.py:13: an instance of `Meter` is moved here (`.to(device)`)")
    assert chain[1].startswith("class_params.py:11: held by the module as a buffer or parameter")


def test_a_tokenizer_special_token_id_is_a_number_by_convention(results: Dict[str, List[Finding]]) -> None:
    """`self.ids[i] = self.tokenizer.eos_token_id`, and a local bound only to such ids: the value
    step says it is a convention, and the finding gets no safe fix."""
    for row in (17, 18, 33, 34):
        finding = next(f for f in results["tokenizer_ids.py"] if f.location.row == row)
        assert any(s.kind.value == "convention" and "special-token id" in s.message for s in finding.evidence), row
        assert finding.fix is None or finding.fix.applicability.value == "unsafe"
    assert "tokenizer_ids.py:33: `bos_token_id` is bound only to `tokenizer.bos_token_id`, a tokenizer's " \
           "special-token id: a Python int (a convention)" in _chain(results, "tokenizer_ids.py", 33)


def test_a_row_of_a_device_tensor_iterated_says_so(results: Dict[str, List[Finding]]) -> None:
    """`for row in table.unbind(1)` iterates a tuple of tensors (no row step: its elements are
    what `unbind` cut), while iterating a tensor names the tensor and its rank."""
    chain = _chain(results, "unpacked_rows.py", 27)
    assert not any("per iteration" in step for step in chain)
    chain = _chain(results, "containers.py", 19)  # `for b in self.bufs`: a list of tensors
    assert not any("per iteration" in step for step in chain)
    assert _chain(results, "unpacked_rows.py", 29)[0] == \
        "unpacked_rows.py:28: one row of `table` (a 2-D tensor) per iteration"


def test_a_row_of_a_module_output_keeps_the_convention(results: Dict[str, List[Finding]]) -> None:
    """A row of what an `nn.Module` returns (unpacked or iterated) rests on the module-output
    convention like the output itself: the row step is a convention too, and no fix is safe."""
    for row in (78, 80):
        finding = next(f for f in results["unpacked_rows.py"] if f.location.row == row)
        assert any("row" in s.message and s.kind.value == "convention" for s in finding.evidence), row
        assert finding.fix is None or finding.fix.applicability.value == "unsafe", row


def test_an_index_ordered_against_a_number_is_an_int_by_convention(results: Dict[str, List[Finding]]) -> None:
    """`if 0 <= i < n: t[i, 0, 0] = 1.0`: the test's step names the ordering and says it is a
    convention (a one-element tensor also passes it), the index step says "taken to be", and
    the fix is unsafe; a look-alike with `==` stays silent (the fixture's other rows)."""
    for row, test_row in ((17, 16), (20, 19), (29, 27)):
        finding = next(f for f in results["ordered_indices.py"] if f.location.row == row)
        (ordered,) = [s for s in finding.evidence if "is ordered against a number" in s.message]
        assert ordered.kind.value == "convention" and ordered.row == test_row, row
        assert "taken to be integers" in finding.evidence[-1].message
        assert finding.fix is not None and finding.fix.applicability.value == "unsafe"


def test_a_field_only_subclasses_set_is_theirs_by_convention(results: Dict[str, List[Finding]]) -> None:
    """`self.queue_ptr[0] = ptr` in a mixin that never sets `queue_ptr`: the chain says that
    the subclasses that set it hold a device tensor, names them, and marks the step as a
    convention (a subclass outside the project could hold anything): no safe fix."""
    finding = next(f for f in results["mixin_fields.py"] if f.location.row == 11)
    (below,) = [s for s in finding.evidence if "does not set `queue_ptr`" in s.message]
    assert below.kind.value == "convention"
    assert "`OtherQueueModel`, `QueueModel`" in below.message
    assert Path(below.path or "").name == "mixin_fields_use.py"
    assert any("is moved to the accelerator here" in s.message for s in finding.evidence)
    assert finding.fix is None or finding.fix.applicability.value == "unsafe"


def test_a_tensor_whose_device_the_function_names_is_on_the_accelerator_by_convention(
        results: Dict[str, List[Finding]]) -> None:
    """`device=m_indptr.device` in the function places `m_indptr` (and `empty_like` of it) on the
    accelerator: the step names the call and is a convention, and the fix is unsafe at most."""
    for row, name, call_row in ((19, "m_indptr", 17), (27, "scores", 28), (34, "hidden", 32)):
        finding = next(f for f in results["device_named.py"] if f.location.row == row)
        (named,) = [s for s in finding.evidence if f"`{name}.device` is passed as a place" in s.message]
        assert named.kind.value == "convention" and named.row == call_row, row
        assert finding.fix is None or finding.fix.applicability.value == "unsafe", row


def test_an_index_the_function_also_slices_with_is_an_int_by_convention(
        results: Dict[str, List[Finding]]) -> None:
    """`t[a : a + n] = ...` then `t[a + n] = 4`: the step names the slice that uses the same
    expression, says it is a convention, and the fix is unsafe."""
    for row, shown, slice_row in ((22, "img_start + num_vae", 21), (31, "stop", 30)):
        finding = next(f for f in results["slice_bounds.py"] if f.location.row == row)
        (bound,) = [s for s in finding.evidence if "is also a slice bound here" in s.message]
        assert bound.message.startswith(f"`{shown}` is also a slice bound here"), row
        assert bound.kind.value == "convention" and bound.row == slice_row, row
        assert finding.fix is not None and finding.fix.applicability.value == "unsafe", row


@pytest.mark.parametrize("one, other, same", [
    ("a + n", "(a) + n", True),
    ("a+n", "a + (n)", True),
    ("-(a * 2)", "- (a*2)", True),
    ("a + n", "n + a", False),
    ("a + n", "a - n", False),
    ("a // 2", "a / 2", False),  # true division is no integer expression: no shape at all
])
def test_an_expression_shape_ignores_spelling_only(one: str, other: str, same: bool) -> None:
    import libcst as cst

    from lint_h2d.inference.usage import expression_shape

    a, b = expression_shape(cst.parse_expression(one)), expression_shape(cst.parse_expression(other))
    assert a is not None
    assert (a == b) is same


def test_numpy_positions_index_as_ints(results: Dict[str, List[Finding]]) -> None:
    """Positions numpy or scipy give are integers: the finding's evidence names the call that
    gave them.  An element of an array of a dtype not known is an int or an error (a floating
    one raises `IndexError`, the fix's `select` a `TypeError`): the evidence says so, and the
    fix is unsafe at most."""
    by_row = {f.location.row: f for f in results["numpy_positions.py"]}
    for row, call in ((15, "linear_sum_assignment(...)"), (18, "np.nonzero(...)"), (21, "np.argmax(...)"),
                      (26, "np.argsort(...)"), (39, "np.arange(...)")):
        assert any(s.message.startswith(f"`{call}` ") for s in by_row[row].evidence), row
    host = by_row[35]
    assert any("`k` is one element of a numpy array of a dtype not known here" in s.message for s in host.evidence)
    assert host.fix is None or host.fix.applicability.value == "unsafe"


def test_a_name_beside_its_host_sibling_is_the_device_half_by_convention(results: Dict[str, List[Finding]]) -> None:
    """`cu_seqlens` beside a bound `cu_seqlens_cpu` (a parameter or a local) is read as the
    device half of the pair: the step names the sibling's binding and is a convention, and the
    fix is unsafe at most."""
    for row, sibling_row in ((9, 7), (17, 16)):
        finding = next(f for f in results["cpu_siblings.py"] if f.location.row == row)
        (step,) = [s for s in finding.evidence if "has a host sibling" in s.message]
        assert step.kind.value == "convention" and step.row == sibling_row, row
        assert finding.fix is None or finding.fix.applicability.value == "unsafe", row


def test_summary_reads_named_buffers_arithmetic_sizes_and_cpu_default_fields() -> None:
    """A buffer registered under a local bound once to a string is that field; a single size
    made with `-` is one dimension; a field that keeps a device parameter defaulting to the
    CPU is a `cpudefault` term, and `device=self.<field>` keeps the field's term to read it."""
    from lint_h2d.inference.summary import summarize
    text = ("import torch\n"
            "from torch import nn\n"
            "class Q(nn.Module):\n"
            "    def __init__(self, n, storage_device='cpu', name='given'):\n"
            "        key = 'enabled'\n"
            "        self.register_buffer(key, torch.zeros(n - 1))\n"
            "        self.register_buffer(name, torch.zeros(1))\n"
            "        self.storage_device = storage_device\n"
            "    def grow(self, n):\n"
            "        self.rows = torch.zeros(n, device=self.storage_device)\n")
    (cls,) = summarize("k.py", text).classes
    fields = dict(cls.fields)
    assert fields["enabled"][0] == "wrap" and fields["enabled"][1][:2] == ("dflt", 1)  # a default-device tensor of one dimension
    assert "given" not in fields  # the caller's string
    assert fields["storage_device"] == ("cpudefault", ("param", "__init__", "storage_device", "Q"), 8)
    assert fields["rows"][0] == "dev" and fields["rows"][5] == ("field", "Q", "storage_device")


def test_summary_reads_torch_nn_functional_as_keeping_place_and_rank() -> None:
    text = ("import torch\n"
            "import torch.nn.functional as F\n"
            "from torch.nn import functional\n"
            "def f(x):\n"
            "    g(F.softmax(x, dim=-1))\n"
            "    g(functional.pad(x, (0, 1)))\n"
            "    g(torch.nn.functional.gelu(x))\n"
            "    g(F.linear(x, x))\n"
            "def h(x, F):\n"
            "    g(F.softmax(x))\n")
    args = _passed_to_g(text)
    x = ("param", "f", "x", None)
    assert args[:3] == [("keep", x)] * 3
    assert args[3][0] != "keep"  # `linear` changes the last dimension's size only, but is not in the table
    assert args[4] == ("keep", ("param", "h", "F", None))  # `F` is a parameter of `h`: its own method


def test_summary_reads_a_size_made_by_arithmetic_as_one_dimension() -> None:
    text = ("import torch\n"
            "def f(n, shape):\n"
            "    g(torch.zeros(n - 1, device='cuda'))\n"
            "    g(torch.zeros(n + 1, device='cuda'))\n"
            "    g(torch.zeros(shape + n, device='cuda'))\n")
    ranks = [arg[1] for arg in _passed_to_g(text)]
    assert ranks == [1, 1, None]  # `shape + n` may be a longer shape


def test_summary_reads_meshgrid_and_an_allocation_on_a_cpu_default_device() -> None:
    text = ("import torch\n"
            "def f(a, b, xs, device=None, other=None):\n"
            "    g(torch.meshgrid(a, b, indexing='ij'))\n"
            "    g(torch.meshgrid([a, b]))\n"
            "    g(torch.meshgrid(*xs))\n"
            "    g(torch.zeros(3, device=device))\n"
            "    if other is None:\n"
            "        other = 'cpu'\n"
            "    g(torch.zeros(3, device=other))\n")
    args = _passed_to_g(text)
    a, b = ("param", "f", "a", None), ("param", "f", "b", None)
    assert args[0] == args[1] == ("mesh", (a, b))
    assert args[2] == ("unk",)  # a starred input: how many grids is not shown
    device = ("param", "f", "device", None)
    assert args[3][0] == "dev" and args[3][5] == ("cpudefault", device, 6)
    assert args[4] == ("tensor", 1)  # `other` is tested (and rebound): what the calls pass is not its value


def test_meshgrid_gives_one_grid_per_input_where_the_inputs_are() -> None:
    from lint_h2d.inference.values import meshgrid_result, UNKNOWN, Kind, Value
    device, tensor = Value(Kind.DEVICE, 1, integer=True), Value(Kind.TENSOR, 0, integer=True)
    grids = meshgrid_result([tensor, device, tensor])
    assert grids.length == 3 and grids.items is not None
    assert all(g.kind == Kind.DEVICE and g.rank == 3 and g.integer is True for g in grids.items)
    assert meshgrid_result([Value(Kind.CPU, 1), tensor]).items[0].kind == Kind.CPU  # type: ignore[index]
    assert meshgrid_result([device, Value(Kind.DEVICE, 1)]).items[0].integer is False  # type: ignore[index]
    assert meshgrid_result([UNKNOWN, Value(Kind.SCALAR)]) == UNKNOWN
    assert meshgrid_result([]) == UNKNOWN


def test_a_function_returning_an_op_of_one_parameter_keeps_its_place() -> None:
    from lint_h2d.inference.project import through_parameter
    from lint_h2d.inference.summary import summarize
    text = ("import torch\n"
            "def roll(x, k):\n"
            "    return torch.roll(x, k, 0)\n"
            "def scaled(x, y):\n"
            "    return y * 2\n"
            "def square(x):\n"
            "    if x.numel() == 4:\n"
            "        return x.reshape(2, 2)\n"
            "    return x.view(2, -1)\n"
            "def pair(a, b):\n"
            "    return a + b\n"
            "def summed(x):\n"
            "    return x.sum()\n"
            "def maybe(x):\n"
            "    if x is None:\n"
            "        return None\n"
            "    return x\n"
            "def fresh(x):\n"
            "    if x.numel() == 0:\n"
            "        return torch.zeros(3)\n"
            "    return x\n"
            "class C:\n"
            "    def m(self, x):\n"
            "        return x.float()\n")
    rules = {fn.name: through_parameter(fn) for fn in summarize("k.py", text).functions}
    assert rules["roll"] == (0, True, None)
    assert rules["scaled"] == (1, True, None)  # the second parameter, of its rank
    assert rules["square"] == (0, False, 2)  # both returns have two dimensions
    assert rules["pair"] is None  # two tensors: either may decide
    assert rules["summed"] == (0, False, None)  # where `x` is, of a rank not known
    assert rules["maybe"] == (0, True, None)  # `None` adds nothing: a write into it raises
    assert rules["fresh"] is None  # a return of something else
    assert rules["m"] is None  # a method: its object may decide


def test_matmul_rank_contracts_dimensions() -> None:
    from lint_h2d.inference.torch_api import matmul_rank
    assert matmul_rank(1, 1) == 0
    assert matmul_rank(2, 1) == 1 and matmul_rank(1, 2) == 1
    assert matmul_rank(3, 1) == 2 and matmul_rank(1, 4) == 3
    assert matmul_rank(2, 2) == 2 and matmul_rank(3, 2) == 3 and matmul_rank(2, 4) == 4
    assert matmul_rank(0, 2) is None and matmul_rank(2, None) is None  # raises / not known


def test_summary_ranks_a_parameter_read_after_its_sizes_are_unpacked() -> None:
    text = ("def f(x, y, z, w):\n"
            "    g(x)\n"
            "    b, t, n = x.size()\n"
            "    g(x)\n"
            "    g(x.mean(0))\n"
            "    first, *rest = y.shape\n"
            "    g(y)\n"
            "    if n:\n"
            "        h, k = z.shape\n"
            "    g(z)\n"
            "    r, c = w.shape\n"
            "    w = w.flatten()\n"
            "    g(w)\n"
            "    u, v = x.shape\n"
            "    g(x)\n")
    args = _passed_to_g(text)
    x = ("param", "f", "x", None)
    assert args[0] == x  # before the unpacking: any rank
    assert args[1] == ("ranked", x, 3, 3)  # after it: three dimensions, the unpacking's line
    assert args[2][1] == ("ranked", x, 3, 3)  # also inside what is built of it
    assert args[3] == ("param", "f", "y", None)  # a starred target: at least one dimension
    assert args[4] == ("param", "f", "z", None)  # inside a branch: it need not have run
    assert "ranked" not in repr(args[5])  # rebound after the unpacking
    assert args[6] == ("ranked", x, 3, 3)  # the first unpacking of a parameter decides


def test_the_walk_ranks_a_tensor_past_an_unpacking_of_its_sizes() -> None:
    import libcst as cst
    from lint_h2d.inference.scope import shape_unpacked
    def small(code: str) -> cst.Assign:
        statement = cst.parse_statement(code)
        assert isinstance(statement, cst.SimpleStatementLine)
        node = statement.body[0]
        assert isinstance(node, cst.Assign)
        return node
    assert shape_unpacked(small("b, t, n = x.size()\n")) == ("x", 3)
    assert shape_unpacked(small("[b, t] = x.shape\n")) == ("x", 2)
    assert shape_unpacked(small("b, *rest = x.shape\n")) is None  # any rank of at least one
    assert shape_unpacked(small("b, t = x.size(0)\n")) is None  # one size, not the sizes
    assert shape_unpacked(small("x, t = x.shape\n")) is None  # rebinds `x` itself
    assert shape_unpacked(small("b, t = self.x.shape\n")) is None  # a name only
    assert shape_unpacked(small("a = b, t = x.shape\n")) is None  # two targets


def test_a_device_type_test_proves_another_backend_only_where_it_says_so() -> None:
    import libcst as cst
    from lint_h2d.inference.scope import other_backend
    def test(code: str) -> cst.BaseExpression:
        return cst.parse_expression(code)
    assert other_backend(test('x.device.type == "npu"'), True) == ("x", "npu")
    assert other_backend(test('"npu" == x.device.type'), True) == ("x", "npu")
    assert other_backend(test('x.device.type == "npu"'), False) is None  # any other backend, CUDA too
    assert other_backend(test('x.device.type != "cuda"'), True) == ("x", "not cuda")
    assert other_backend(test('x.device.type == "cuda"'), False) == ("x", "not cuda")
    assert other_backend(test('x.device.type == "cuda"'), True) is None
    assert other_backend(test('x.device.type != "cpu"'), False) == ("x", "cpu")
    assert other_backend(test('x.device.type != "cpu"'), True) is None
    assert other_backend(test('flag and x.device.type == "npu"'), True) == ("x", "npu")
    assert other_backend(test('flag or x.device.type == "npu"'), True) is None  # `flag` may decide alone
    assert other_backend(test('self.x.device.type == "npu"'), True) is None  # a name only
    assert other_backend(test('x.device == "npu"'), True) is None


def test_advanced_indices_replace_the_dimensions_they_consume() -> None:
    from lint_h2d.inference.torch_api import advanced_index_dims, advanced_indexed_rank
    # An integer index consumes one dimension and stands for its own shape; a boolean mask
    # consumes its dimensions and stands for one; a 1-D one acts the same whatever its dtype.
    assert advanced_index_dims(1, False) == (1, 1)
    assert advanced_index_dims(2, True) == (1, 2)
    assert advanced_index_dims(2, None) == (2, 1)  # a known non-integer index that runs is a mask
    assert advanced_index_dims(2, False) is None  # a 2-D index of unknown dtype: either
    assert advanced_index_dims(0, True) is None  # a 0-dim one selects (`index_effect`)
    assert advanced_index_dims(None, True) is None
    # `x[order, 1:]` of a 2-D `x`, `order` 1-D: two dimensions; `x[0, idx]` with `idx` 2-D: two.
    assert advanced_indexed_rank(2, 0, 0, [(1, 1)]) == 2
    assert advanced_indexed_rank(3, 1, 0, [(1, 2)]) == 3
    # Two indices broadcast together (the larger rank); a mask of a 2-D `x` leaves one dimension.
    assert advanced_indexed_rank(3, 0, 0, [(1, 1), (1, 2)]) == 3
    assert advanced_indexed_rank(2, 0, 0, [(2, 1)]) == 1
    assert advanced_indexed_rank(2, 0, 1, [(1, 1)]) == 3  # and a `None`
    assert advanced_indexed_rank(1, 1, 0, [(1, 1)]) is None  # more consumed than `x` has: raises


def test_summary_reads_advanced_indices_and_pairs() -> None:
    text = ("import torch\n"
            "def f(x, order, n):\n"
            "    g(x[order, 1:])\n"
            "    g(x[[0, 2]])\n"
            "    g(x[..., order])\n"
            "    g(x.topk(3))\n"
            "    g(torch.max(x, 1))\n"
            "    g(x.max(dim=1, keepdim=True))\n"
            "    g(x.max(order))\n"
            "    g(x.max())\n"
            "    g(x.argsort())\n"
            "    g(x[:, -1])\n")
    args = _passed_to_g(text)
    x = ("param", "f", "x", None)
    order = ("param", "f", "order", None)
    # Each advanced position's term, for the project to read (a list of ints: one dimension).
    assert args[0] == ("sub", x, None, ("advanced", 0, (order,)))
    assert args[1][3] == ("advanced", 0, (("numlist",),))
    assert args[2] == ("sub", x, None)  # an ellipsis: not read
    # `(values, indices)` pairs: of the input's rank, or one dimension fewer along a written `dim`.
    assert args[3] == ("pair", x, 0)
    assert args[4] == ("pair", x, 1)
    assert args[5] == ("pair", x, 0)
    assert args[6][0] != "pair" and args[7][0] != "pair"  # elementwise, or one 0-dim tensor
    assert args[8] == ("keep", x, True)  # an integer dtype
    # A negative int literal selects as any int does.
    assert args[9] == ("sub", x, 1)


def test_a_module_tuple_output_puts_its_unplaced_tensors_on_the_accelerator() -> None:
    from lint_h2d.inference.values import Kind, Value, module_output_items
    step = "convention step"
    tokens, lens = Value(Kind.TENSOR, 2), Value(Kind.CPU, 1)
    out = module_output_items(Value(Kind.OTHER, length=2, items=(tokens, lens)), step)
    assert out.items is not None
    assert (out.items[0].kind, out.items[0].rank, out.items[0].evidence[0]) == (Kind.DEVICE, 2, step)
    assert out.items[1] == lens  # a place the `forward` proves stays
    # Unknown positions are tensors only where the annotation says so (`-> Tuple[Tensor, Tensor]`).
    unknown = Value(Kind.UNKNOWN)
    plain = Value(Kind.OTHER, length=2, items=(unknown, unknown))
    assert module_output_items(plain, step) == plain
    declared = module_output_items(Value(Kind.OTHER, items=(unknown, unknown), element=Value(Kind.TENSOR)), step)
    assert declared.items is not None and all(i.kind == Kind.DEVICE for i in declared.items)
    number = Value(Kind.SCALAR)
    assert module_output_items(number, step) == number


def _constant_of(files: Dict[str, str], module: str, name: str) -> Any:
    from lint_h2d.inference.project import resolve
    from lint_h2d.inference.summary import summarize
    resolved = resolve([summarize(path, text) for path, text in files.items()])
    found = resolved.constant(module, name)
    return None if found is None else found.kind


def test_a_constant_is_followed_through_re_exports() -> None:
    from lint_h2d.inference.values import Kind
    common = {"pkg/common.py": 'DEV = "cpu"\nACC = "cuda:0"\nN = 3\n'}
    # A package's star import, and its `from m import name`, name the submodule's constants.
    assert _constant_of({**common, "pkg/__init__.py": "from .common import *\n"}, "pkg", "DEV") == Kind.CPU_PLACE
    assert _constant_of({**common, "pkg/__init__.py": "from pkg.common import ACC\n"}, "pkg", "ACC") == Kind.DEVICE_PLACE
    assert _constant_of({**common, "pkg/__init__.py": "from .common import N as M\n"}, "pkg", "M") == Kind.SCALAR
    # A private name is not star-imported; a name the package binds again is its own.
    assert _constant_of({"pkg/common.py": '_DEV = "cpu"\n', "pkg/__init__.py": "from .common import *\n"},
                        "pkg", "_DEV") is None
    assert _constant_of({**common, "pkg/__init__.py": "from .common import *\nDEV = pick()\n"}, "pkg", "DEV") is None
    # A star import of a module outside the project may bind the name too.
    assert _constant_of({**common, "pkg/__init__.py": "from .common import *\nfrom elsewhere import *\n"},
                        "pkg", "DEV") is None
    # Star imports of each other end (depth-limited), knowing nothing.
    assert _constant_of({"a.py": "from b import *\n", "b.py": "from a import *\n"}, "a", "DEV") is None
    # A module's `from m import name` outside a package's `__init__.py` is not followed.
    assert _constant_of({**common, "pkg/user.py": "from .common import DEV\n"}, "pkg.user", "DEV") is None


def test_summary_reads_a_from_imported_torch_function_as_the_function() -> None:
    text = ("from torch import zeros, full as filled, device\n"
            "def f(n):\n"
            "    g(zeros(n, device='cuda'))\n"
            "    g(filled((n, n), 0, device='cuda'))\n"
            "    with device('cuda'):\n"
            "        g(zeros(n))\n"
            "    g(zeros(n))\n"
            "def h(zeros, n):\n"
            "    g(zeros(n, device='cuda'))\n")
    args = _passed_to_g(text)
    # Allocations, as `torch.zeros(...)` / `torch.full(...)` are: on the device they name.
    assert [a[0] for a in args[:3]] == ["dev", "dev", "dev"]
    assert args[1][1] == 2  # `full((n, n), ...)`: two dimensions
    assert args[3][0] == "cpu"  # no `device=`, outside the context: the CPU
    # A parameter of the same name hides the import: a call of whatever the caller passes.
    assert args[4][0] not in ("dev", "cpu")
    # A second module-level binding of the name: which one a call reads depends on order.
    rebound = _passed_to_g("from torch import zeros\nzeros = make_zeros()\ndef f(n):\n    g(zeros(n, device='cuda'))\n")
    assert rebound[0][0] not in ("dev", "cpu")


def test_the_walk_reads_a_from_imported_torch_function_as_the_function() -> None:
    import libcst as cst

    from lint_h2d.inference.scope import torch_function_aliases
    module = cst.parse_module("from torch import zeros, tensor as T, nn\nfrom numpy import ones\n")
    assert torch_function_aliases(module) == {"zeros": "zeros", "T": "tensor", "nn": "nn"}
    # Bound again at the top level (an assignment, a `def`, a second import): left out.
    rebound = cst.parse_module("from torch import zeros, ones\nzeros = 1\ndef ones(): pass\n")
    assert torch_function_aliases(rebound) == {}
    # Inside a function or under `if TYPE_CHECKING:` an import binds nothing module-wide here.
    nested = cst.parse_module("def f():\n    from torch import zeros\nif X:\n    from torch import ones\n")
    assert torch_function_aliases(nested) == {}


def test_summary_reads_an_enumerate_counter_as_an_int() -> None:
    text = ("import torch\n"
            "def f(xs, n):\n"
            "    batch = torch.zeros((4, n, n), device='cuda')\n"
            "    for i, x in enumerate(xs):\n"
            "        g(batch[i])\n"
            "    for i, (a, b) in enumerate(xs, 1):\n"
            "        g(batch[i])\n"
            "    for i, x in zip(xs, xs):\n"
            "        g(batch[i])\n")
    args = _passed_to_g(text)
    # The counter is an int: one matrix of the batch (`sub` with an int position).
    assert args[0][0] == "sub" and args[0][2] == 1
    assert args[1][0] == "sub" and args[1][2] == 1
    # A `zip` row may be anything: no int position is claimed.
    assert args[2][0] != "sub" or args[2][2] is None


def test_a_deep_move_argument_keeps_the_move() -> None:
    from lint_h2d.inference.summary import _SMALL, UNK, _size, _small

    receiver = ("keep", ("shape", ("keep", ("shape", ("same", ("item", ("call", "make", 3), 0), None), 3)), 2), True)
    moved = ("shape", ("on", ("move", receiver, 8, ".to(...)"), 2, 9, "torch.zeros(..., device=x.device)", "f"), 1)
    cut = _small(moved)
    # Too deep to carry whole: the receiver of the move goes, the move and the allocation stay.
    assert _size(moved) > _SMALL and cut != UNK and _size(cut) <= _SMALL
    assert cut[0] == "shape" and cut[1][0] == "on" and cut[1][1][:1] == ("move",) and cut[1][1][1] == UNK
    # A term that fits is left as it is.
    small = ("move", ("param", "f", "x", None), 8, ".cuda()")
    assert _small(small) == small
    # Any other term too deep is still unknown as a whole.
    assert _small(("mcall", receiver, "m", 3, receiver)) == UNK


def test_boolean_reductions_keep_the_place_and_drop_a_dimension() -> None:
    text = ("import torch\n"
            "def f(x):\n"
            "    y = x.cuda()\n"
            "    g((y > 0).any(dim=1))\n"
            "    g(torch.all(y, dim=0))\n"
            "    g(torch.quantile(y, 0.5))\n")
    args = _passed_to_g(text)
    # Where `y` is (a `same` term of it), whatever their rank.
    assert [a[0] for a in args] == ["same", "same", "same"]
    assert all(a[1][0] == "move" for a in args[1:])


def test_a_spelled_rank_rests_on_a_convention_and_gets_no_safe_fix(results: Dict[str, List[Finding]]) -> None:
    """Session 52: a rank a trailing bare `:` spells is a convention, whatever the place rests
    on: `graph = adj.cuda()` is direct, the indices and the value are literals, and still the
    fix is unsafe at most (a 5-D `graph` would make the write a row fill)."""
    (finding,) = [f for f in results["spelled_ranks.py"] if f.location.row == 64]
    steps = [(s.kind.value, s.message) for s in finding.evidence]
    assert ("convention", "`graph[:, :, keep:, :]` spells out 4 dimensions: a bare `:` last selects nothing, "
                          "so it names every one (convention: the tensor's rank)") in steps
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    chain = _chain(results, "spelled_ranks.py", 17)
    assert any("(every binding of `trial` copies `graph`)" in s for s in chain)


def test_a_spelled_rank_carried_through_a_part_names_both(results: Dict[str, List[Finding]]) -> None:
    """Session 57: `logits = logits[:, -1, :]` rebinds the name to a part of the 3-D tensor its
    own subscript spells: the write after it reads 2 dimensions, and the evidence names the
    spelling (a convention) and the rebinding that drops one."""
    row = next(i for i, line in enumerate(
        (PROJECT / "spelled_ranks.py").read_text().splitlines(), 1) if "logits[0, banned] = 0.0" in line)
    (finding,) = [f for f in results["spelled_ranks.py"] if f.location.row == row]
    steps = [(s.kind.value, s.message) for s in finding.evidence]
    assert ("convention", "`logits[:, -1, :]` spells out 3 dimensions: a bare `:` last selects nothing, "
                          "so it names every one (convention: the tensor's rank)") in steps
    assert any(message == "`logits = logits[:, -1, :]` binds the name to a part of it: 2 dimensions"
               for _, message in steps)
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"


def test_molecule_indices_name_the_library_call(results: Dict[str, List[Finding]]) -> None:
    """RDKit's int getters and `np.random.randint` without a size say where the int came from."""
    chain = _chain(results, "molecule_indices.py", 15)
    assert any("`.AddAtom()` is RDKit's, which returns a Python int" in s for s in chain)
    chain = _chain(results, "molecule_indices.py", 18)
    assert any("one integer drawn here (`np.random.randint(...)` without a size)" in s for s in chain)
