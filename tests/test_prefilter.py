"""The prefilter is sound: findings with it == without it; and it skips what cannot match."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import AbstractSet, Iterable, List

import pytest
from hypothesis import example, given, settings as hsettings, strategies as st

from lint_h2d import prefilter
from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.findings import Finding
from lint_h2d.inference.project import collect
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(p for p in FIXTURES.glob("*.py"))

# Look-alikes: each reaches DEVICE by one route the prefilter must see (or none at all).
LOOKALIKES = {
    "factory_device": "import torch\ndef f(n, dev):\n    t = torch.empty(n, device=dev)\n    t[0] = 0\n",
    "factory_cpu": "import torch\ndef f(n):\n    t = torch.empty(n, device='cpu')\n    t[0] = 0\n",
    "factory_concat_str": "import torch\ndef f(n):\n    t = torch.empty(n, device='cp' 'u')\n    t[0] = 0\n",
    "pinned": "import torch\ndef f(n, dev):\n    t = torch.empty(n, device=dev, pin_memory=True)\n    t[0] = 0\n",
    "cuda": "import torch\ndef f(n):\n    t = torch.zeros(n).cuda()\n    t[0] = 1\n",
    "to_device": "import torch\ndef f(n, device):\n    t = torch.zeros(n).to(device)\n    t[0] = 1\n",
    "to_dtype": "import torch\ndef f(n):\n    t = torch.zeros(n).to(torch.float32)\n    t[0] = 1\n",
    "to_multiline": "import torch\ndef f(n, device):\n    t = (torch.zeros(n)\n         .to(  # move\n             device))\n    t[0] = 1\n",
    "gpu_buffer": "def f(self, n):\n    self.buf.gpu[0] = 0\n",
    "device_field": "def f(m):\n    m.query_start_loc[0] = 0\n",
    "self_attr": ("import torch\nclass A:\n    def __init__(self, n):\n        self.x = torch.empty(n, device='cuda')\n"
                  "    def g(self):\n        self.x[0] = 1\n"),
    "constructor_kw": ("import torch\nfrom dataclasses import dataclass\n@dataclass\nclass M:\n    x: torch.Tensor\n"
                       "    @classmethod\n    def make(cls, n):\n        return cls(x=torch.zeros(n, device='cuda'))\n"
                       "    def g(self):\n        self.x[0] = 1\n"),
    "tuple_assign": "import torch\ndef f(n):\n    a, (b, c) = 1, (torch.ones(n).cuda(), 2)\n    b[0] = 1\n",
    "walrus": "import torch\ndef f(n):\n    if (t := torch.ones(n).cuda()) is not None:\n        t[0] = 1\n",
    "loop": "import torch\ndef f(n):\n    for row in torch.ones(n, n).cuda():\n        row[0] = 1\n",
    "view": "import torch\ndef f(n):\n    t = torch.ones(n).cuda()\n    t.view(-1)[0] = 1\n",
    "like": "import torch\ndef f(n):\n    t = torch.ones(n).cuda()\n    u = torch.zeros_like(t)\n    u[0] = 1\n",
    "ifexp": "import torch\ndef f(n, c):\n    t = torch.ones(n).cuda() if c else torch.zeros(n).cuda()\n    t[0] = 1\n",
    "backslash": "import torch\ndef f(n):\n    t = torch.ones(n).cuda()\n    t[0] \\\n        = 1\n",
    "paren_target": "import torch\ndef f(n):\n    t = torch.ones(n).cuda()\n    (t[0]) = 1\n",
    "slice": "import torch\ndef f(x):\n    t = x.cuda()\n    t[0:1] = 1\n",
    "dict": "def f(d):\n    d['a'] = 1\n",
    "cpu_only": "import torch\ndef f(n):\n    t = torch.zeros(n)\n    t[0] = 1\n",
    "comment_banner": "x = [1]\n" + ("#" * 80 + "\n") * 200 + "x[0] = 2\n",
    "capture": ("def build_for_cudagraph_capture(self, common_attn_metadata):\n"
                "    common_attn_metadata.query_start_loc_cpu.zero_()\n"),
    "graph_with": ("import torch\ndef run(m, meta):\n    with torch.cuda.graph(g):\n        meta.seq_lens_cpu.fill_(0)\n"),
    "capture_no_mutation": "def capture_thing(meta):\n    return meta.seq_lens_cpu\n",
    "syntax_error": "def f(:\n    t[0] = 1\n",
    "device_context": "import torch\ndef f(n):\n    with torch.device('cuda'):\n        t = torch.zeros(n)\n    t[0] = 1\n",
    "device_context_named": ("import torch as th\ndef f(n, gpu):\n    ctx = th . device(gpu)\n    with ctx:\n"
                             "        t = th.full((n,), 0)\n    t[0] = 1\n"),
    "cuda_device_context": "import torch\ndef f(n):\n    with torch.cuda.device(0):\n        t = torch.zeros(n)\n    t[0] = 1\n",
    # Scopes (perf6): a name is bound in its function and read there or in functions inside it.
    "other_function": ("import torch\ndef f(n):\n    out = torch.zeros(n, device='cuda')\n    return out\n"
                       "def g(n):\n    out = [0] * n\n    out[0] = 1\n    return out\n"),
    "sibling_method": ("import torch\nclass A:\n    def f(self, n):\n        buf = torch.zeros(n, device='cuda')\n"
                       "        return buf\n    def g(self, buf):\n        buf[0] = 1\n"),
    "module_name": "import torch\nBUF = torch.zeros(4, device='cuda')\ndef f():\n    BUF[0] = 1\n",
    "module_name_after": "import torch\ndef f():\n    BUF[0] = 1\nBUF = torch.zeros(4, device='cuda')\n",
    "enclosing": ("import torch\ndef f(n):\n    t = torch.zeros(n).cuda()\n    def g():\n        t[0] = 1\n"
                  "    g()\n"),
    "enclosing_class_method": ("import torch\ndef f(n):\n    t = torch.zeros(n).cuda()\n    class A:\n"
                               "        def g(self):\n            t[0] = 1\n    return A\n"),
    "global_decl": ("import torch\nBUF = None\ndef init(n):\n    global BUF\n    BUF = torch.zeros(n, device='cuda')\n"
                    "def step():\n    BUF[0] = 1\n"),
    "nonlocal_decl": ("import torch\ndef f(n):\n    t = [0]\n    def make():\n        nonlocal t\n"
                      "        t = torch.zeros(n, device='cuda')\n    make()\n    t[0] = 1\n"),
    "walrus_other_function": ("import torch\ndef f(n):\n    if (t := torch.ones(n).cuda()) is not None:\n"
                              "        return t\ndef g(t):\n    t[0] = 1\n"),
    "comprehension": ("import torch\ndef f(xs):\n    ts = [x.cuda() for x in xs]\n    for t in ts:\n"
                      "        t[0] = 1\n"),
    # H2D004 flags a factory of a torch alias only (perf6: Triton's `tl` is no torch).
    "triton_arange": "import triton.language as tl\ndef k(n, dev):\n    x = tl.arange(0, n).to(dev)\n    return x\n",
    "torch_alias_move": "import torch as th\ndef f(dev):\n    return th.zeros(3).to(dev)\n",
    "torch_submodule_move": "import torch.nn\ndef f(dev):\n    return torch.ones(3).to(dev)\n",
    # An index op's method (`t.topk(k)`, `t.median(dim)`) keeps `t`'s device (`_index_result`).
    "index_op_method": ("import torch\ndef f(n, x):\n    _, i = x.cuda().view(-1, n).topk(1, dim=1)\n"
                        "    p = i.squeeze(1)\n    p[0] = 1\n"),
    "index_op_values": ("import torch\ndef f(n, x):\n    m = x.cuda().view(-1, n).median(dim=1).values\n"
                        "    m[0] = 1\n"),
    "bool_index": "import torch\ndef f(n):\n    t = torch.zeros(n, device='cuda')\n    t[t > 0] = 0\n",
    "bool_index_not": "import torch\ndef f(n, m):\n    t = torch.zeros(n, device='cuda')\n    t[not m] = 0\n",
    "bool_index_and": ("import torch\ndef f(n, a, b):\n    t = torch.zeros(n, n, device='cuda')\n"
                       "    t[0, a and b] = 0\n"),
}

DEVICE_FIELDS_SOURCE = "class M:\n    query_start_loc: object\n    query_start_loc_cpu: object\n"


def findings(text: str, prefilter_on: bool, name: str = "case.py") -> List[Finding]:
    engine = Engine(Settings(root=FIXTURES), collect([text, DEVICE_FIELDS_SOURCE]), use_prefilter=prefilter_on)
    return engine.analyze(name, text)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixtures_same_with_and_without_prefilter(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert findings(text, True, str(path)) == findings(text, False, str(path))


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
def test_lookalikes_same_with_and_without_prefilter(name: str) -> None:
    text = LOOKALIKES[name]
    if name == "syntax_error":  # reported by CPython's or LibCST's parser: same code, own wording
        assert [f.code for f in findings(text, True)] == [f.code for f in findings(text, False)] == ["H2D901"]
        return
    assert findings(text, True) == findings(text, False)


def test_lookalikes_that_must_be_found_are_found() -> None:
    for name in ("factory_device", "factory_concat_str", "cuda", "to_device", "to_multiline", "gpu_buffer",
                 "device_field", "self_attr", "constructor_kw", "tuple_assign", "loop", "view", "like",
                 "ifexp", "backslash", "paren_target", "capture", "graph_with", "device_context",
                 "device_context_named", "module_name", "enclosing", "enclosing_class_method",
                 "comprehension", "index_op_method", "index_op_values"):
        assert findings(LOOKALIKES[name], True), name


def _stages(text: str) -> tuple:
    fields = frozenset({"query_start_loc"})
    settings = Settings()
    text_ok = prefilter.h2d001_text(text, fields)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text_ok, None
    return text_ok, text_ok and prefilter.h2d001_tree(tree, fields, text)


@pytest.mark.parametrize("name", ["factory_cpu", "pinned", "to_dtype", "slice", "dict", "cpu_only", "comment_banner",
                                  "other_function", "sibling_method", "bool_index", "bool_index_not",
                                  "bool_index_and"])
def test_prefilter_skips_what_cannot_match(name: str) -> None:
    assert _stages(LOOKALIKES[name]) != (True, True)
    assert findings(LOOKALIKES[name], False) == []


@pytest.mark.parametrize("name", ["module_name", "module_name_after", "enclosing", "enclosing_class_method",
                                  "global_decl", "nonlocal_decl", "walrus_other_function", "comprehension"])
def test_stage_two_sees_names_of_enclosing_and_shared_scopes(name: str) -> None:
    """A name bound around the candidate's function (the module, an enclosing `def`, a
    `global`/`nonlocal` declaration, a walrus anywhere) still makes it a candidate, in the
    check with the project's facts and in the verdict without them (`tree_verdict`)."""
    text = LOOKALIKES[name]
    assert _stages(text) == (True, True)
    assert dict(prefilter.tree_verdict(ast.parse(text), text, Settings().capture_functions).fixed)["H2D001"]


def test_names_are_scoped_per_function() -> None:
    """Stage 2 before perf6 pooled every binding of the file: `out` of `f` made `g`'s list a
    candidate.  Kept apart, neither `f` nor `g` writes a device tensor's element."""
    text = LOOKALIKES["other_function"]
    tree = ast.parse(text)
    scoped = prefilter.scoped_statements(tree)
    assert scoped.parents == (-1, 0, 0)
    assert not prefilter.h2d001_tree(tree, frozenset(), text)
    verdict = prefilter.tree_verdict(tree, text, Settings().capture_functions)
    assert "H2D001" not in dict(verdict.fixed)
    pooled = text.replace("def g(n):\n    out = [0] * n\n", "def g(n):\n    global out\n    out = [0] * n\n")
    assert prefilter.h2d001_tree(ast.parse(pooled), frozenset(), pooled)  # `global`: shared


def test_h2d004_stage_two_asks_for_a_torch_alias() -> None:
    def stage2(name: str) -> bool:
        return prefilter.h2d004_tree(ast.parse(LOOKALIKES[name]))

    assert not stage2("triton_arange") and findings(LOOKALIKES["triton_arange"], False) == []
    for name in ("torch_alias_move", "torch_submodule_move"):
        assert stage2(name) and [f.code for f in findings(LOOKALIKES[name], True)] == ["H2D004"], name
    tree = ast.parse("import torch as th, torch.cuda\ndef f():\n    import torch.nn as nn\n    import numpy as np\n")
    assert prefilter.torch_aliases(prefilter.scoped_statements(tree).statements) == {"torch", "th"}


def test_cuda_device_context_passes_the_prefilter_but_is_not_found() -> None:
    """`torch.cuda.device(i)` picks a GPU and sets no default device: its text passes the
    (sound, loose) prefilter, the inference stays silent."""
    assert _stages(LOOKALIKES["cuda_device_context"]) == (True, True)
    assert findings(LOOKALIKES["cuda_device_context"], False) == []


def test_obvious_non_matches_fail_the_text_stage() -> None:
    assert not prefilter.h2d001_text("x = 1\nprint(x)\n")
    assert not prefilter.h2d001_text("t[0] = 1\n")  # a candidate, but no device source at all
    assert not prefilter.h2d002_text("def f():\n    pass\n", Settings().capture_functions)


def test_capture_without_mutation_is_skipped() -> None:
    tree = ast.parse(LOOKALIKES["capture_no_mutation"])
    assert not prefilter.h2d002_tree(tree, Settings().capture_functions)


# -- stage 1's project-field search (perf5): hundreds of called names, one pass for words ---

def _alternation_h2d001_text(text: str, device_fields: AbstractSet[str]) -> bool:
    """`h2d001_text` as it was: one alternation of every field, call and definition."""
    import re

    from lint_h2d.prefilter import CANDIDATE, DEVICE_SOURCES, GAP

    if not CANDIDATE.search(text):
        return False
    if any(p.search(text) for p in DEVICE_SOURCES):
        return True

    def alternatives(names: Iterable[str]) -> str:
        return "|".join(re.escape(f) for f in sorted(names, key=len, reverse=True))

    attrs = [f for f in device_fields if ":" not in f]
    calls = [f[5:] for f in device_fields if f.startswith("call:")]
    defs = [f[4:] for f in device_fields if f.startswith("def:")]
    parts = []
    if attrs:
        parts.append(r"\." + GAP + r"(?:" + alternatives(attrs) + r")\b")
    if calls:
        parts.append(r"\b(?:" + alternatives(calls) + r")" + GAP + r"\(")
    if defs:
        parts.append(r"\bdef[ \t]+(?:" + alternatives(defs) + r")\b")
    return bool(parts) and re.search("|".join(parts), text) is not None


_NAMES = ["make", "make_buf", "buf", "_b", "get2", "x", "mk.a", "é"]
_PIECES = ["make", "make_buf", "buf", "_b", "get2", "x", "mk", ".", "a", "é", "(", " ", "\n", "\\\n",
           "# c\n", "def ", "t[0] = 1\n", "y", "=", "1", "\t", "make_buf_2", "ç"]


@hsettings(max_examples=600, deadline=None)
@given(calls=st.lists(st.sampled_from(_NAMES), max_size=4),
       plain=st.lists(st.sampled_from(_NAMES), max_size=2),
       defs=st.lists(st.sampled_from(_NAMES), max_size=2),
       text=st.lists(st.sampled_from(_PIECES), max_size=24), many=st.booleans())
def test_field_search_answers_as_the_alternation(calls: List[str], plain: List[str], defs: List[str],
                                                 text: List[str], many: bool) -> None:
    fields = {f"call:{c}" for c in calls} | set(plain) | {f"def:{d}" for d in defs}
    if many:  # past CALLED_WORDS_MIN: the called words are looked up in a set
        fields |= {f"call:filler{i}" for i in range(prefilter.CALLED_WORDS_MIN + 1)}
    code = "t[0] = 1\n" + "".join(text)
    assert prefilter.h2d001_text(code, frozenset(fields)) == _alternation_h2d001_text(code, fields)


def test_many_called_names_are_not_one_alternation() -> None:
    fields = frozenset(f"call:make_{i}" for i in range(500)) | {"call:a.b"}
    patterns, words = prefilter._field_patterns(fields)
    assert len(words) == 500
    assert all("make_" not in p.pattern for p in patterns)


@given(st.lists(st.sampled_from(["def", " ", "\t", "\n", "f", "g", "fg", "_", "é", "x", "(", "un", "2"]),
                max_size=12))
@example(["un", "def", " ", "f"])
@example(["é", "def", " ", "g"])
@example(["def", " ", "fg", "2"])
@example(["def", "\t", "\t", "fg", "("])
@example(["def", "\n", "f"])
@example(["x", " ", "def", " ", "é"])
@hsettings(max_examples=300, deadline=None)
def test_the_functions_a_file_defines_are_the_whole_words_after_def(parts: List[str]) -> None:
    """`_params_defined_here` finds `def NAME` with a pattern that starts with `def` (searched
    for as a literal): the same names as `\\bdef[ \\t]+(f|g|fg)\\b`, the alternation it replaced,
    on any text: inside a word (`undef f`, `édef f`), a longer name (`def fg2`), a line break."""
    import re

    fields = frozenset({"param:f.a", "param:g.b", "param:fg.c", "param:é.d"})
    text = "".join(parts)
    old = re.compile(r"\bdef[ \t]+(é|fg|f|g)\b")
    names = {"f": "a", "g": "b", "fg": "c", "é": "d"}
    expected = old.findall(text) if text else names  # no text: every function's (a tree alone)
    assert prefilter._params_defined_here(fields, text) == frozenset(names[n] for n in expected)


_FORWARD_INPUT = """\
import torch.nn as nn


class Head(nn.Module):
    def forward(self, x, n):
        return x


def fill(n):
    x = [0] * n
    x[0] = 1
    return x
"""


def test_a_forward_parameter_is_a_name_of_forward_only() -> None:
    """Issue 12: `param:forward.x` (every call places `x`, or the forward-input convention
    does) makes `x` a possible device tensor in `forward`'s scope and the functions nested in
    it, as the walk binds a parameter, not in every scope of the file: `x[0] = 1` on a host
    list in another function is no candidate (on main the whole file read `x` as one)."""
    fields = frozenset({"param:forward.x", "def:forward", "module:Head"})

    def stage2(text: str) -> bool:
        assert prefilter.h2d001_text(text, fields)
        return prefilter.h2d001_tree(ast.parse(text), fields, text)

    assert not stage2(_FORWARD_INPUT)
    inside = _FORWARD_INPUT.replace("        return x\n", "        x[0] = 1\n        return x\n", 1)
    assert stage2(inside)
    nested = _FORWARD_INPUT.replace("        return x\n", "        def g():\n            x[0] = 1\n"
                                    "        return x\n", 1)
    assert stage2(nested)  # a function nested in forward sees its parameter
    other = _FORWARD_INPUT.replace("def fill(n):", "def forward(n):")
    assert stage2(other)  # any `def forward`: the facts are keyed by the function's name
    tree = ast.parse(inside)
    assert prefilter.h2d001_may_statements(tree, fields, inside) != frozenset()
    assert prefilter.h2d001_may_statements(ast.parse(_FORWARD_INPUT), fields, _FORWARD_INPUT) == frozenset()


def test_rule_filters_are_the_rules_stages_by_code() -> None:
    """`prefilter.RULE_FILTERS` names every built-in rule, in `all_rules()`'s order (what
    `pipeline.LazyEngine.decide` selects from without importing the rules)."""
    from lint_h2d.rules import all_rules

    assert list(prefilter.RULE_FILTERS) == [r.code for r in all_rules()]
    assert all(f.has_tree_check == r.has_tree_check for f, r in zip(prefilter.RULE_FILTERS.values(), all_rules()))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_the_triage_decides_alike_from_the_filters_and_from_the_rules(path: Path) -> None:
    """`triage` on the rules' `RULE_FILTERS` (no engine built) and on the engine's rules keeps
    the same codes and returns the same findings when nothing is kept: the run that decides a
    file before building the engine gives what the engine gives.  With a verdict too."""
    from lint_h2d.triage import Kept, triage

    text = path.read_text(encoding="utf-8")
    facts = collect([text, DEVICE_FIELDS_SOURCE])
    engine = Engine(Settings(root=FIXTURES), facts)
    fields = facts.prefilter_names
    try:
        verdicts = [None, prefilter.tree_verdict(ast.parse(text), text, engine.settings.capture_functions)]
    except SyntaxError:
        verdicts = [None]
    for verdict in verdicts:
        by_rules = triage(engine.rules_for(str(path)), str(path), text, verdict, engine.settings, fields)
        by_filters = triage(list(prefilter.RULE_FILTERS.values()), str(path), text, verdict, engine.settings, fields)
        if isinstance(by_rules, Kept):
            assert isinstance(by_filters, Kept)
            assert [r.code for r in by_rules.rules] == [r.code for r in by_filters.rules]
        else:
            assert by_rules == by_filters


@pytest.mark.parametrize("code, named", [
    ("a = torch.zeros(1, device=x.device)\n", {"x"}),
    ("a = torch.zeros(1, device = (\n  x # c\n  ).device)\n", {"x"}),
    ("a = torch.zeros(1, device=((x)).device)\n", {"x"}),
    ("a = torch.zeros(1, device=x\\\n  .device)\n", {"x"}),
    ("a = f(g(h(1, device=\n    xs.device)))\n", {"xs"}),
    ("y = y.to(x.device)\n", {"x"}),
    ("y = y.to(\n  # c\n  x . device, non_blocking=True)\n", {"x"}),
    ("y = y.to(device=x.device)\n", {"x"}),
    ("y = y.to(x.device.type)\n", set()),  # a string: the text's superset holds `x` too
    ("a = torch.zeros(1, device=x.dev)\ny = y.to(x)\n", set()),
    ("a = torch.zeros(1, device=self.x.device)\n", set()),
    ("def f(lens, lens_cpu):\n    pass\n", {"lens"}),  # `lens` beside its host sibling
    ("seq_lens_cpu = seq_lens.cpu()\n", {"seq_lens"}),
    ("for a_cpu_cpu, (b_cpu) in xs:\n    pass\n", {"a_cpu", "b"}),
    ("with f() as cu_cpu:\n    pass\n", {"cu"}),
    ("self.lens_cpu = None\n", set()),  # a field, no name of the function
    ("_cpu = 1\n", set()),
])
def test_names_whose_device_is_a_place_are_found_in_the_text(code: str, named: AbstractSet[str]) -> None:
    """Stage 2 seeds every name the walk may read as placed by `device=x.device` or
    `.to(x.device)`, or as the device half beside a bound `x_cpu` (`usage.DeviceNamed`): the
    text's names hold the tree's (parentheses, comments, line breaks and continuations between
    the tokens included)."""
    tree_names = prefilter.device_named_tree(ast.parse(code))
    assert tree_names == named
    assert tree_names <= prefilter.device_named_text(code)
