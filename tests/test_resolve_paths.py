"""The resolve's fast paths give what the plain ones gave (perf22b).

The project's resolve answers each fact in an order that decides some answers (a depth cut,
a budget of fixpoint passes, a cycle's first guess), so its speed-ups keep every question and
its order; what they add (an index, a hand-written constructor, plain attributes) must read
exactly what the code before them read.  Each test holds the fast path against the plain
computation it replaced, on small projects of our own.
"""
from __future__ import annotations

import dataclasses
import inspect
import pickle
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from lint_h2d.inference.project import _Resolver, fingerprint_of, resolve
from lint_h2d.inference.summary import FileSummary, Term, summarize
from lint_h2d.inference.values import (
    CPU_KIND,
    DEVICE_KIND,
    DEVICE_PLACE_KIND,
    Kind,
    Origin,
    UNKNOWN_KIND,
    Value,
    join,
)
from tests.conftest import FIXTURES

PROJECTS = [FIXTURES / "projects" / "xfile", FIXTURES / "projects" / "python"]


def _summaries(texts: Dict[str, str]) -> List[FileSummary]:
    return [summarize(path, text) for path, text in sorted(texts.items())]


def _project(folder: Path) -> List[FileSummary]:
    return _summaries({str(p): p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))})


def test_value_constructor_is_the_dataclass_one() -> None:
    """`Value.__init__` is written by hand (one dict, not 17 `object.__setattr__`): it takes
    the declared fields, with their defaults, in their order, and leaves the instance's dict
    in that order (a pickle of the facts writes the dict as it is).  A field added to the
    class and not to the constructor fails here."""
    fields = dataclasses.fields(Value)
    params = list(inspect.signature(Value.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    for param, field in zip(params, fields):
        if field.default is dataclasses.MISSING:
            assert param.default is inspect.Parameter.empty
        else:
            assert param.default == field.default and type(param.default) is type(field.default)
    value = Value(DEVICE_KIND, 2, evidence=("step",))
    assert list(vars(value)) == [f.name for f in fields]
    # The class's key-sharing dict, not a table of its own (twice the memory per Value).
    assert sys.getsizeof(vars(value)) < sys.getsizeof(dict(vars(value)))
    assert (value.kind, value.rank, value.origin, value.evidence, value.integer) == (
        Kind.DEVICE, 2, Origin.UNKNOWN, ("step",), False)
    assert dataclasses.replace(value, rank=1) == Value(DEVICE_KIND, 1, evidence=("step",))
    assert pickle.loads(pickle.dumps(value)) == value and hash(value) == hash(Value(DEVICE_KIND, 2, evidence=("step",)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.rank = 3  # type: ignore[misc]


def test_kind_aliases_and_is_tensor_are_the_members() -> None:
    """The module names for Kind's members are the members themselves, and `is_tensor` (a
    plain attribute now) holds for the three tensor kinds only."""
    assert DEVICE_KIND is Kind.DEVICE and CPU_KIND is Kind.CPU and UNKNOWN_KIND is Kind.UNKNOWN
    assert DEVICE_PLACE_KIND is Kind.DEVICE_PLACE
    assert {k for k in Kind if k.is_tensor} == {Kind.DEVICE, Kind.CPU, Kind.TENSOR}
    assert pickle.loads(pickle.dumps(Kind.DEVICE)) is Kind.DEVICE


def test_join_of_one_value_or_of_two_kinds() -> None:
    """`join`'s shortcuts (the same object; two kinds are never equal) answer as the full join."""
    device = Value(DEVICE_KIND, 1, evidence=("a",))
    assert join(device, device) is device
    assert join(device, Value(DEVICE_KIND, 1, evidence=("a",))) is device  # equal: the first
    mixed = join(device, Value(CPU_KIND, 1))
    assert (mixed.kind, mixed.rank, mixed.evidence) == (Kind.TENSOR, 1, ())


TWO_DEFINITIONS = {
    # One class name defined in two modules, each assigning the fields in its own order, one
    # field assigned twice in a module and once in the other: the fields' index must keep the
    # files' order and each file's order (the join's evidence is the first path's).
    "a.py": (
        "import torch\n"
        "class Buf:\n"
        "    def __init__(self, n):\n"
        "        self.x = torch.zeros(n, device='cuda')\n"
        "        self.y = 1\n"
        "        self.x = torch.ones(n, device='cuda')\n"
        "        self.d = None\n"
    ),
    "b.py": (
        "import torch\n"
        "class Buf:\n"
        "    def __init__(self, n):\n"
        "        self.y = torch.zeros(n)\n"
        "        self.x = torch.empty(n, device='cuda')\n"
        "        self.z = []\n"
        "        self.d = torch.zeros(n).cuda()\n"
    ),
}


def _plain_assignments(resolver: _Resolver, cls: str) -> Dict[str, List[Tuple[str, Term]]]:
    """What `_field` scanned before the index: every definition's fields, in order, by name."""
    out: Dict[str, List[Tuple[str, Term]]] = {}
    for path, summary in resolver.classes[cls]:
        for name, term in summary.fields:
            out.setdefault(name, []).append((path, term))
    return out


@pytest.mark.parametrize("summaries", [
    pytest.param(_summaries(TWO_DEFINITIONS), id="two-definitions"),
    *[pytest.param(_project(folder), id=folder.name) for folder in PROJECTS],
])
def test_field_index_reads_the_assignments_in_their_order(summaries: List[FileSummary]) -> None:
    """`_Resolver._assignments` (by attribute, built once per class) lists, for every class and
    attribute, the assignments `_field` scanned for before: the same terms, files and order."""
    resolver = _Resolver(sorted(summaries, key=lambda s: s.path))
    assert resolver.classes
    for cls in resolver.classes:
        assert resolver._assignments(cls) == _plain_assignments(resolver, cls)


def test_a_field_of_a_class_defined_twice_joins_both_files_in_order() -> None:
    """`Buf.x` is a device tensor with `a.py`'s first allocation first in its evidence; `Buf.d`
    (`None` in one file) the move in the other; `Buf.y` a number in one file and a host
    tensor in the other: no device tensor."""
    facts = resolve(_summaries(TWO_DEFINITIONS))
    x = facts.fields["Buf"]["x"]
    assert x.kind == Kind.DEVICE
    assert x.evidence[0].path == "a.py" and x.evidence[0].row == 4
    assert facts.fields["Buf"]["d"].kind == Kind.DEVICE
    assert facts.fields["Buf"].get("y", Value(UNKNOWN_KIND)).kind != Kind.DEVICE


@pytest.mark.parametrize("folder", PROJECTS, ids=lambda p: p.name)
def test_resolve_is_the_same_twice(folder: Path) -> None:
    """The facts of a project resolved twice pickle to the same bytes (no state of one resolve
    leaks into the next: the fields' index is the resolver's), and resolved from pickled
    summaries (as the resolving child gets them) have the same fingerprint."""
    summaries = _project(folder)
    first = resolve(summaries)
    assert pickle.dumps(first) == pickle.dumps(resolve(summaries))
    assert fingerprint_of(first) == fingerprint_of(resolve(pickle.loads(pickle.dumps(summaries))))


CALLS = {
    # `scale` is passed by keyword at one site and by position at another, left to its default
    # at a third, hidden by `*args` at a fourth and by `**kw` at a fifth (a starred call: its
    # positions are not read either); `x` by position or keyword; a method's sites skip `self`.
    "lib.py": (
        "import torch\n"
        "def place(x, scale=1, *, out=None):\n"
        "    return x\n"
        "class Head:\n"
        "    def run(self, h, n=2):\n"
        "        return h\n"
    ),
    "use.py": (
        "import torch\n"
        "from lib import place, Head\n"
        "def main(args, kw, head: Head):\n"
        "    t = torch.zeros(3, device='cuda')\n"
        "    place(t, scale=2)\n"
        "    place(t, 3)\n"
        "    place(x=t)\n"
        "    place(*args)\n"
        "    place(t, **kw)\n"
        "    head.run(t, n=4)\n"
        "    head.run(h=t)\n"
        "    head.run(t, 5)\n"
    ),
}


def test_passed_of_keyword_positional_and_starred_sites() -> None:
    """On `CALLS`: what the sites that pass `place`'s `scale` pass (`passed`: the keyword's 2,
    the position's 3) is a number once no starred site may pass something else."""
    resolver = _Resolver(_summaries(CALLS))
    (_, place), = resolver.functions["place"]
    assert resolver.passed(place, 1).kind == Kind.UNKNOWN  # `place(*args)`, `**kw` may pass anything
    plain = CALLS["use.py"].replace("    place(*args)\n", "").replace("    place(t, **kw)\n", "")
    without_starred = _Resolver(_summaries(dict(CALLS, **{"use.py": plain})))
    (_, place), = without_starred.functions["place"]
    assert without_starred.passed(place, 1).kind == Kind.SCALAR  # 2 and 3 where passed
