"""H2D002 (capture function mutates shared CPU metadata): one test per reviewed defect.

Issue 16 items 8-12 and issue 15 item 10.  Every source here is small and self-contained: a
dataclass declares the `x` / `x_cpu` pair, so the device twin is a known field.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.findings import Applicability, Finding
from lint_h2d.inference.project import collect

HEADER = '''\
from dataclasses import dataclass

import torch


@dataclass
class Meta:
    query_start_loc: torch.Tensor
    query_start_loc_cpu: torch.Tensor
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor


'''


def findings(body: str, settings: Optional[Settings] = None) -> List[Finding]:
    source = HEADER + body
    engine = Engine(settings or Settings(), collect([source]))
    return [f for f in engine.analyze("x.py", source) if f.code == "H2D002"]


def fixed(body: str, unsafe: bool = False) -> Tuple[str, int]:
    source = HEADER + body
    engine = Engine(Settings(), collect([source]))
    new, applied, _ = engine.fix_text("x.py", source, unsafe)
    assert new.startswith(HEADER)
    return new[len(HEADER):], len(applied)


def one(body: str) -> Finding:
    found = findings(body)
    assert len(found) == 1, [f.message for f in found]
    return found[0]


def applicability(body: str) -> Optional[Applicability]:
    finding = one(body)
    return finding.fix.applicability if finding.fix is not None else None


SEED = '''\
class B:
    def build_for_cudagraph_capture(self, m: Meta):
        attn = self.build(0, m)
        m.query_start_loc.zero_()
        {write}
        {after}
        return attn
'''


def seed(write: str = "m.query_start_loc_cpu.zero_()", after: str = "pass") -> str:
    return SEED.format(write=write, after=after)


def test_seed_removal_is_safe() -> None:
    assert applicability(seed()) == Applicability.SAFE
    new, count = fixed(seed())
    assert "query_start_loc_cpu" not in new and count == 1


# -- issue 16 item 8: the removal must not drop side effects ------------------------------------


def test_removal_of_a_fill_with_a_call_argument_is_unsafe() -> None:
    body = seed("m.query_start_loc_cpu.fill_(self.lens.pop())")
    finding = one(body)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "pop" in finding.fix.message or "call" in finding.fix.message
    new, count = fixed(body)  # safe fixes only: the statement (and its pop()) stays
    assert "self.lens.pop()" in new and count == 0


def test_removal_with_a_call_in_the_receiver_is_unsafe() -> None:
    assert applicability(seed("m.query_start_loc_cpu[:self.n()].zero_()")) == Applicability.UNSAFE


def test_removal_of_a_literal_fill_is_safe() -> None:
    assert applicability(seed("m.query_start_loc_cpu.fill_(0)")) == Applicability.SAFE
    assert applicability(seed("m.query_start_loc_cpu.fill_(value=-1.5)")) == Applicability.SAFE


def test_removal_of_a_fill_that_may_raise_is_unsafe() -> None:
    # 1e40 overflows every integer dtype: the original raises, a removal would not.
    assert applicability(seed("m.query_start_loc_cpu.fill_(1e40)")) == Applicability.UNSAFE
    assert applicability(seed("m.query_start_loc_cpu.zero_(1)")) == Applicability.UNSAFE
    # An index may be out of range (IndexError), a slice of a 0-dim tensor raises.
    assert applicability(seed("m.query_start_loc_cpu[7:][0].zero_()")) == Applicability.UNSAFE
    assert applicability(seed("m.query_start_loc_cpu[:2].zero_()")) == Applicability.UNSAFE


# -- issue 16 item 9: nothing after the mutation may observe it --------------------------------


def test_removal_unsafe_when_the_cpu_tensor_is_read_later() -> None:
    body = seed(after="max_q = int(m.query_start_loc_cpu[-1])")
    finding = one(body)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "read" in finding.fix.message or "observ" in finding.fix.message


def test_removal_unsafe_when_the_holder_is_passed_to_a_call_later() -> None:
    assert applicability(seed(after="self.build(0, m)")) == Applicability.UNSAFE
    assert applicability(seed(after="other = m")) == Applicability.UNSAFE
    assert applicability(seed(after="print(m.query_start_loc_cpu.sum())")) == Applicability.UNSAFE


def test_removal_unsafe_when_an_alias_reads_it_later() -> None:
    body = seed(write="q = m.query_start_loc_cpu; m.query_start_loc_cpu.zero_()", after="print(q)")
    assert applicability(body) == Applicability.UNSAFE


def test_removal_unsafe_in_a_loop_that_reads_it_before_the_write() -> None:
    body = '''\
class B:
    def build_for_cudagraph_capture(self, m: Meta, n):
        m.query_start_loc.zero_()
        for _ in range(n):
            print(m.query_start_loc_cpu[0])
            m.query_start_loc_cpu.zero_()
'''
    assert applicability(body) == Applicability.UNSAFE


def test_removal_safe_when_later_code_touches_other_fields_only() -> None:
    body = seed(after="n = m.seq_lens.shape[0]; m.query_start_loc.fill_(0); x = m.seq_lens_cpu")
    assert applicability(body) == Applicability.SAFE


def _run_both(body: str, call: str) -> Tuple[object, object]:
    """Execute the original and its safe fix on CPU tensors; what `call` returns in each."""
    results = []
    for source in (HEADER + body, HEADER + fixed(body)[0]):
        namespace: dict = {}
        exec(compile(source, "x.py", "exec"), namespace)
        results.append(eval(call, namespace))
    return results[0], results[1]


DYNAMIC_READS = {
    "locals": "return int(locals()['m'].query_start_loc_cpu.sum())",
    "eval": "return int(eval('m.query_start_loc_cpu.sum()'))",
    "frame": "import sys; return int(sys._getframe().f_locals['m'].query_start_loc_cpu.sum())",
}


@pytest.mark.parametrize("read", sorted(DYNAMIC_READS))
def test_removal_unsafe_when_the_function_reads_its_variables_by_name(read: str) -> None:
    # `locals()['m']`, `eval(...)` and frames read the tensor without naming it.
    body = SEED.replace("attn = self.build(0, m)", "attn = None").format(
        write="m.query_start_loc_cpu.zero_()", after=DYNAMIC_READS[read])
    assert applicability(body) == Applicability.UNSAFE
    call = ("B().build_for_cudagraph_capture(Meta(torch.ones(3), torch.ones(3), "
            "torch.ones(3), torch.ones(3)))")
    before, after = _run_both(body, call)
    assert before == after == 0


REBOUND = {
    "walrus": "if (m := other):\n            m.query_start_loc_cpu.zero_()",
    "for": "for m in (other,):\n            m.query_start_loc_cpu.zero_()",
    "with": "with nullcontext(other) as m:\n            m.query_start_loc_cpu.zero_()",
    "alias twice": "q = m.query_start_loc_cpu\n        if (q := other.query_start_loc_cpu) is not None:\n"
                   "            q.zero_()",
}


@pytest.mark.parametrize("how", sorted(REBOUND))
def test_removal_unsafe_when_the_holder_is_rebound(how: str) -> None:
    # The device write was on the parameter's first object; the CPU write is on another one,
    # whose CPU tensor stays unwritten after the removal (nothing zeroes it any more).
    body = f'''\
from contextlib import nullcontext


class B:
    def build_for_cudagraph_capture(self, m: Meta, other: Meta):
        m.query_start_loc.zero_()
        {REBOUND[how]}
'''
    assert all(f.fix is None or f.fix.applicability == Applicability.UNSAFE
               for f in findings(body)), [f.fix for f in findings(body)]
    assert fixed(body)[1] == 0


# -- issue 16 item 10 / issue 15 item 10: the device twin drops only the last `_cpu` ----------


NESTED = '''\
@dataclass
class Holder:
    host_cpu: Meta


class B:
    def build_for_cudagraph_capture(self, m: Holder, meta_cpu: Meta):
        {body}
'''


def test_twin_of_a_nested_path_keeps_the_outer_cpu_name() -> None:
    body = NESTED.format(body="meta_cpu.query_start_loc_cpu.zero_()")
    finding = one(body)
    assert "meta_cpu.query_start_loc`" in finding.message or finding.fix is not None
    new, count = fixed(body, unsafe=True)
    assert "meta_cpu.query_start_loc.zero_()" in new and count == 1


def test_two_statements_two_fixes_and_the_right_object() -> None:
    body = NESTED.format(
        body="m.host_cpu.query_start_loc_cpu.zero_()\n        meta_cpu.seq_lens_cpu.fill_(1)"
    )
    assert len(findings(body)) == 2
    new, count = fixed(body, unsafe=True)
    assert "m.host_cpu.query_start_loc.zero_()" in new
    assert "meta_cpu.seq_lens.fill_(1)" in new
    assert count == 2


def test_pinned_batch_twin_issue_15_item_10() -> None:
    body = '''\
@dataclass
class Batch:
    pinned_cpu: Meta


def build_for_cudagraph_capture(batch: Batch, other: Meta):
    batch.pinned_cpu.query_start_loc_cpu.zero_()
    other.seq_lens_cpu.zero_()
'''
    new, count = fixed(body, unsafe=True)
    assert "batch.pinned_cpu.query_start_loc.zero_()" in new
    assert "batch.pinned.query_start_loc" not in new
    assert "other.seq_lens.zero_()" in new
    assert count == 2


def test_twin_must_be_a_field_of_the_declared_class() -> None:
    body = '''\
@dataclass
class Other:
    offsets_cpu: torch.Tensor


def build_for_cudagraph_capture(o: Other, m: Meta):
    o.query_start_loc_cpu.zero_()
'''
    finding = one(body)
    assert finding.fix is None and "not a known field" in (finding.no_fix_reason or "")


# -- issue 16 items 11 and 12: capture code from evidence, not from a name fragment -------------


CAPTURED = {
    "import alias": "import torch.cuda as tc\ndef run(m: Meta, g):\n    with tc.graph(g):\n"
                    "        m.seq_lens_cpu.zero_()\n",
    "from import": "from torch.cuda import graph\ndef run(m: Meta, g):\n    with graph(g):\n"
                   "        m.seq_lens_cpu.zero_()\n",
    "begin/end": "def run(m: Meta, g):\n    g.capture_begin()\n    m.seq_lens_cpu.zero_()\n"
                 "    g.capture_end()\n",
    "try/finally": "def run(m: Meta, g):\n    g.capture_begin()\n    try:\n        m.seq_lens_cpu.zero_()\n"
                   "    finally:\n        g.capture_end()\n",
    "nested": "def build_for_cudagraph_capture(m: Meta):\n    def inner():\n"
              "        m.seq_lens_cpu.zero_()\n    inner()\n",
    "called function": "def step(m: Meta):\n    m.seq_lens_cpu.zero_()\n"
                       "def run(m: Meta, g):\n    with torch.cuda.graph(g):\n        step(m)\n",
    "called method": "class R:\n    def step(self, m: Meta):\n        m.seq_lens_cpu.zero_()\n"
                     "    def run(self, m: Meta, g):\n        with torch.cuda.graph(g):\n            self.step(m)\n",
    "one-line block": "import torch.cuda as tc\ndef run(m: Meta, g):\n    with tc.graph(g): m.seq_lens_cpu.zero_()\n",
    "torch.zero_": "def build_for_cudagraph_capture(m: Meta):\n    torch.zero_(m.seq_lens_cpu)\n",
    "torch.fill_": "def build_for_cudagraph_capture(m: Meta):\n    torch.fill_(m.seq_lens_cpu, 1)\n",
    "loop": "def build_for_cudagraph_capture(m: Meta):\n    for t in (m.seq_lens_cpu, m.query_start_loc_cpu):\n"
            "        t.zero_()\n",
    "alias": "def build_for_cudagraph_capture(m: Meta):\n    q = m.query_start_loc_cpu\n    q.zero_()\n",
}

NOT_CAPTURED = {
    "method named capture": "class Foo:\n    def capture(self, m: Meta):\n        m.seq_lens_cpu.zero_()\n",
    "forward hook": "def capture_hidden(module, args, output: Meta):\n    output.seq_lens_cpu.zero_()\n",
    "capture_model": "def capture_model(m: Meta):\n    m.seq_lens_cpu.zero_()\n",
    "after capture_end": "def run(m: Meta, g):\n    g.capture_begin()\n    g.capture_end()\n"
                         "    m.seq_lens_cpu.zero_()\n",
    "called before the block": "def step(m: Meta):\n    m.seq_lens_cpu.zero_()\n"
                               "def run(m: Meta, g):\n    step(m)\n    with torch.cuda.graph(g):\n        pass\n",
    "another class's method": "class A:\n    def step(self, m: Meta):\n        m.seq_lens_cpu.zero_()\n"
                              "class R:\n    def run(self, m: Meta, g):\n        with torch.cuda.graph(g):\n"
                              "            self.step(m)\n",
    "a graph() of another module": "from networkx import graph\ndef run(m: Meta, g):\n    with graph(g):\n"
                                   "        m.seq_lens_cpu.zero_()\n",
    "a def inside a graph block": "def run(m: Meta, g):\n    with torch.cuda.graph(g):\n"
                                  "        def later():\n            m.seq_lens_cpu.zero_()\n",
    "a method ending in cuda.graph": "class X:\n    def run(self, m: Meta, g):\n"
                                     "        with self.cuda.graph(g):\n            m.seq_lens_cpu.zero_()\n",
    "a parameter named torch": "def run(m: Meta, g, torch):\n    with torch.cuda.graph(g):\n"
                               "        m.seq_lens_cpu.zero_()\n",
    "an alias shadowed by a local": "import torch.cuda as tc\ndef run(m: Meta, g, ctx):\n    tc = ctx\n"
                                    "    with tc.graph(g):\n        m.seq_lens_cpu.zero_()\n",
    "a helper shadowed by a parameter": "def step(m: Meta):\n    m.seq_lens_cpu.zero_()\n"
                                        "def run(m: Meta, g, step):\n    with torch.cuda.graph(g):\n"
                                        "        step(m)\n",
    "torch.zero_ of a device tensor": "def build_for_cudagraph_capture(m: Meta):\n    torch.zero_(m.seq_lens)\n",
}


def _with_and_without_prefilter(body: str) -> List[Finding]:
    source = HEADER + body
    found = [Engine(Settings(), collect([source]), use_prefilter=p).analyze("x.py", source) for p in (True, False)]
    assert found[0] == found[1]
    return [f for f in found[0] if f.code == "H2D002"]


@pytest.mark.parametrize("case", sorted(CAPTURED))
def test_capture_code_found_from_evidence(case: str) -> None:
    assert len(_with_and_without_prefilter(CAPTURED[case])) == 1


@pytest.mark.parametrize("case", sorted(NOT_CAPTURED))
def test_look_alikes_are_not_capture_code(case: str) -> None:
    assert _with_and_without_prefilter(NOT_CAPTURED[case]) == []


def test_alias_message_names_the_device_path_not_the_alias() -> None:
    finding = one(CAPTURED["alias"])
    assert "the device tensor `q`" not in finding.message
    assert "the device tensor `m.query_start_loc`" in finding.message


def test_alias_removal_when_the_twin_is_zeroed() -> None:
    body = ("def build_for_cudagraph_capture(m: Meta):\n    m.query_start_loc.zero_()\n"
            "    q = m.query_start_loc_cpu\n    q.zero_()\n")
    assert applicability(body) == Applicability.SAFE
    new, count = fixed(body)
    assert "q.zero_()" not in new and "m.query_start_loc.zero_()" in new and count == 1


def test_removal_in_a_closure_is_unsafe() -> None:
    body = ('''def build_for_cudagraph_capture(m: Meta):
    def helper():
        m.query_start_loc.zero_()
        m.query_start_loc_cpu.zero_()
    helper()
    return int(m.query_start_loc_cpu[-1])
''')
    assert applicability(body) == Applicability.UNSAFE


def test_cli_summary_counts_one_fix_per_statement(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import run_cli

    body = '''\
@dataclass
class Batch:
    pinned_cpu: Meta


def build_for_cudagraph_capture(batch: Batch, meta_cpu: Meta):
    batch.pinned_cpu.query_start_loc_cpu.zero_()
    meta_cpu.query_start_loc_cpu.zero_()
'''
    (tmp_path / "b.py").write_text(HEADER + body)
    result = run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", "b.py", cwd=tmp_path)
    assert "Found 2 errors (2 fixed, 0 remaining)." in result.stdout + result.stderr
    text = (tmp_path / "b.py").read_text()
    assert "batch.pinned_cpu.query_start_loc.zero_()" in text
    assert "meta_cpu.query_start_loc.zero_()" in text


def test_prefilter_keeps_a_name_bound_twice() -> None:
    # The walk takes the last import; the prefilter must not take the first one only.
    body = ("from networkx import graph\nfrom torch.cuda import graph\n"
            "def run(m: Meta, g):\n    with graph(g):\n        m.seq_lens_cpu.zero_()\n")
    assert len(_with_and_without_prefilter(body)) == 1
