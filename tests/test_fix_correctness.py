"""Every safe fix is right (issue #15): one test per reproduced wrong or corrupting fix.

Each case runs the real engine on a small module and checks the rewritten text, or the
finding's position and fix safety; where behaviour matters the module is executed on CPU
tensors before and after the fix (`run_module`).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from lint_h2d.config import Settings
from lint_h2d.engine import SYNTAX_ERROR, INTERNAL_ERROR, Engine
from lint_h2d.findings import Applicability, Finding
from lint_h2d.inference.project import collect

torch = pytest.importorskip("torch")


def engine(text: str, gate: str = "torch-hip", root: Optional[Path] = None) -> Engine:
    return Engine(Settings(root=root or Path.cwd(), fix_gate=gate), collect([text]))


def findings(text: str, gate: str = "torch-hip", path: str = "m.py") -> List[Finding]:
    return engine(text, gate).analyze(path, text)


def fixed(text: str, gate: str = "torch-hip", unsafe: bool = False, path: str = "m.py") -> Tuple[str, List[Finding]]:
    new, applied, _ = engine(text, gate).fix_text(path, text, unsafe)
    return new, applied


def errors(found: List[Finding]) -> List[Finding]:
    return [f for f in found if f.code in (SYNTAX_ERROR, INTERNAL_ERROR)]


GATE_TESTS = ("torch.version.hip is not None", "current_platform.is_rocm()")


def structure(text: str) -> Any:
    """Which block each statement is in, with gates seen through (their `else` stands for them).

    A fix may turn a statement into a gated if/else or a device call; it must never move a
    statement into another block.
    """
    def block(body: List[ast.stmt]) -> List[Any]:
        out: List[Any] = []
        for node in body:
            test = ast.unparse(node.test) if isinstance(node, ast.If) else ""
            if isinstance(node, ast.If) and node.orelse and (test in GATE_TESTS or "version.hip" in test):
                out.extend(block(node.orelse))
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)) and (
                    getattr(node, "module", None) == "vllm.platforms" or ast.unparse(node) == "import torch"):
                continue
            kind = "stmt" if isinstance(node, (ast.Assign, ast.Expr)) else type(node).__name__
            children = [block(getattr(node, f)) for f in ("body", "orelse", "finalbody", "handlers", "cases")
                        if isinstance(getattr(node, f, None), list) and getattr(node, f)
                        and isinstance(getattr(node, f)[0], ast.stmt)]
            for handler in getattr(node, "handlers", []) or []:
                children.append(block(handler.body))
            for case in getattr(node, "cases", []) or []:
                children.append(block(case.body))
            out.append((kind, children))
        return out

    return block(ast.parse(text).body)


def run_module(text: str, call: str, hip: Optional[str] = "6.0") -> Any:
    """Execute ``text`` with ``device="cuda"`` mapped to the CPU, then evaluate ``call``."""
    source = text.replace('device="cuda"', 'device="cpu"').replace("device='cuda'", "device='cpu'")
    saved = torch.version.hip
    torch.version.hip = hip
    try:
        ns: Dict[str, Any] = {"__name__": "m"}
        exec(compile(source, "m.py", "exec"), ns)
        return eval(call, ns)
    finally:
        torch.version.hip = saved


# -- 1: form feeds ------------------------------------------------------------------------------

FORM_FEED = 'import torch\nt = torch.zeros(4, device="cuda")\ndef reset():\n\tprint("r")\n\f\tt[0] = 0\n'


@pytest.mark.parametrize("gate", ["torch-hip", "none"])
def test_form_feed_keeps_the_fix_inside_its_function(gate: str) -> None:
    new, applied = fixed(FORM_FEED, gate)
    assert len(applied) == 1
    assert structure(new) == structure(FORM_FEED), new  # nothing moved out of reset()
    assert "\f\t" in new  # the form feed stays where it was
    t = run_module(new, "(reset(), t)[1]")
    assert t.tolist() == [0.0, 0.0, 0.0, 0.0]
    before = run_module(FORM_FEED.replace("zeros", "ones"), "(reset(), t)[1]")
    after = run_module(new.replace("zeros", "ones"), "(reset(), t)[1]")
    assert before.tolist() == after.tolist() == [0.0, 1.0, 1.0, 1.0]


def test_form_feed_column_is_the_files_own() -> None:
    (finding,) = findings(FORM_FEED)
    assert (finding.location.row, finding.location.column) == (5, 3)  # after "\f\t"
    tree = ast.parse(FORM_FEED)
    assign = tree.body[2].body[1]  # type: ignore[attr-defined]
    assert assign.col_offset + 1 == finding.location.column


@pytest.mark.parametrize("text", [
    # form feed, then spaces: Python's indentation restarts at the feed
    'import torch\nt = torch.zeros(4, device="cuda")\ndef f():\n    x = 1\n  \f    t[0] = 0\n',
    # a form feed that ends a block
    'import torch\nt = torch.zeros(4, device="cuda")\ndef f():\n    if True:\n        x = 1\n    \f    t[0] = 0\n',
    'import torch\nt = torch.zeros(4, device="cuda")\ndef f():\n    if True:\n        x = 1\n\f    t[0] = 0\n',
    # top level, CRLF and CR-only line ends
    'import torch\r\nt = torch.zeros(4, device="cuda")\r\n\ft[0] = 0\r\n',
    'import torch\rt = torch.zeros(4, device="cuda")\r\ft[0] = 0\r',
])
@pytest.mark.parametrize("gate", ["torch-hip", "none"])
def test_form_feed_lines_are_analysed_and_fixed_in_place(text: str, gate: str) -> None:
    found = findings(text, gate)
    assert not errors(found), found
    assert [f.code for f in found] == ["H2D001"]
    new, applied = fixed(text, gate)
    assert len(applied) == 1
    assert new.count("\f") == text.count("\f")
    assert structure(new) == structure(text)
    again, more = fixed(new, gate)
    assert again == new and not more


# -- 2: Python's line breaks only -----------------------------------------------------------

@pytest.mark.parametrize("odd", ["\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\v"])
def test_noqa_applies_to_its_own_line_after_an_odd_line_break(odd: str) -> None:
    text = (
        "import torch\n"
        't = torch.zeros(4, device="cuda")\n'
        f's = "a{odd}b"\n'
        "t[0] = 0  # noqa: H2D001\n"
        "t[1] = 0\n"
    )
    found = findings(text)
    assert [f.location.row for f in found if f.code == "H2D001"] == [5]
    new, applied = fixed(text)
    assert [f.location.row for f in applied] == [5]
    assert "t[0] = 0  # noqa: H2D001\n" in new


def test_split_lines_breaks_only_where_python_does() -> None:
    from fixers.edits import split_lines

    text = "a\fb\x85c\u2028d\r\ne\rf\ng"
    assert split_lines(text) == ["a\fb\x85c\u2028d", "e", "f", "g"]
    assert "".join(split_lines(text, keepends=True)) == text
    assert split_lines("") == [] and split_lines("x\n") == ["x"]


# -- 7: literal indices out of range --------------------------------------------------------

def _one(text: str, gate: str = "none") -> Finding:
    found = [f for f in findings(text, gate) if f.code == "H2D001"]
    assert len(found) == 1, found
    return found[0]


def test_out_of_range_literal_index_raises_after_the_safe_fix() -> None:
    text = 'import torch\ndef f():\n    w = torch.zeros(4, device="cuda")\n    w[4] = 0\n    return w\n'
    finding = _one(text)
    assert finding.fix is not None and finding.fix.applicability == Applicability.SAFE
    new, _ = fixed(text, "none")
    assert "w[4].zero_()" in new
    for code in (text, new):
        with pytest.raises(IndexError):
            run_module(code, "f()")


@pytest.mark.parametrize("size, call", [("0", "f(0, [])"), ("n", "f(0, [])"), ("n + 1", "f(-1, [])"),
                                        ("len(xs) - 1", "f(0, [1])")])
def test_empty_tensor_write_still_raises(size: str, call: str) -> None:
    """`t[:1].zero_()` does nothing on an empty tensor where `t[0] = 0` raises."""
    text = (f'import torch\ndef f(n, xs):\n    t = torch.empty({size}, device="cuda")\n'
            "    t[0] = 0\n    return t\n")
    new, applied = fixed(text, "none")
    assert len(applied) == 1 and "[:1]" not in new
    for code in (text, new):
        with pytest.raises(IndexError):
            run_module(code, call)


PROVEN = [
    # literal size
    ('    t = torch.empty(4, device="cuda")\n    t[3] = 0\n', "t[3:4].zero_()"),
    # len(...) + 1 is never empty
    ('    t = torch.empty(len(xs) + 1, device="cuda")\n    t[0] = 0\n', "t[:1].zero_()"),
    # the vLLM shape: a guard on the size
    ('    if n > 0:\n        t = torch.empty(n + 1, device="cuda")\n        x = 1\n        t[0] = 0\n',
     "t[:1].zero_()"),
    ('    if n >= 1 and xs:\n        t = torch.empty(n, device="cuda")\n        t[-1] = 7\n', "t[-1:].fill_(7)"),
]
NOT_PROVEN = [
    ('    t = torch.empty(n + 1, device="cuda")\n    t[0] = 0\n', "n may be -1"),
    ('    t = torch.empty(4, device="cuda")\n    t[4] = 0\n', "index past the end"),
    ('    if n > 0:\n        n = n - 5\n        t = torch.empty(n + 1, device="cuda")\n        t[0] = 0\n',
     "the guard's name is rebound"),
    ('    t = torch.empty(4, device="cuda")\n    t = t[:0]\n    t[0] = 0\n', "rebound between"),
    ('    t = torch.empty(4, device="cuda")\n    for t in ts:\n        pass\n    t[0] = 0\n',
     "rebound by a loop"),
    ('    t = torch.empty(4, 3, device="cuda")[0]\n    t[0] = 0\n', "not a plain allocation"),
    ('    if n > 0:\n        pass\n    t = torch.empty(n + 1, device="cuda")\n    t[0] = 0\n',
     "the guard does not enclose the write"),
]


@pytest.mark.parametrize("body, expected", PROVEN)
def test_slice_spelling_only_with_a_proven_length(body: str, expected: str) -> None:
    text = f"import torch\ndef f(n, xs, ts):\n{body}    return 0\n"
    new, applied = fixed(text, "none")
    assert len(applied) == 1 and expected in new, new


@pytest.mark.parametrize("body, why", NOT_PROVEN)
def test_no_slice_without_proof(body: str, why: str) -> None:
    text = f"import torch\ndef f(n, xs, ts):\n{body}    return 0\n"
    new, _ = fixed(text, "none")
    assert ":1]" not in new and ":5]" not in new, why


def test_module_level_and_global_names_are_not_proof() -> None:
    text = ('import torch\nt = torch.empty(4, device="cuda")\nt[0] = 0\n'
            'def g():\n    global t\n    t = torch.empty(4, device="cuda")\n    t[0] = 0\n')
    new, applied = fixed(text, "none")
    assert len(applied) == 2 and "[:1]" not in new


# -- 8: literal values outside the dtype's range ----------------------------------------------

@pytest.mark.parametrize("value", ["18446744073709551615", "9223372036854775808", "-9223372036854775809",
                                   "0xFFFFFFFFFFFFFFFF"])
def test_values_outside_int64_are_not_safe(value: str) -> None:
    text = f'import torch\nt = torch.zeros(4, device="cuda", dtype=torch.int64)\nt[0] = {value}\n'
    finding = _one(text)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    new, applied = fixed(text, "none")
    assert new == text and not applied


@pytest.mark.parametrize("value", ["9223372036854775807", "-9223372036854775808", "1e308", "True", "-0.0", "2.5"])
def test_values_inside_int64_stay_safe(value: str) -> None:
    text = f'import torch\nt = torch.zeros(4, device="cuda")\nt[0] = {value}\n'
    finding = _one(text)
    assert finding.fix is not None and finding.fix.applicability == Applicability.SAFE


def test_int64_bound_is_where_setitem_and_fill_agree() -> None:
    """The rule behind `value_fits`, measured: inside int64 the assignment and `fill_` agree
    for every dtype (same bytes or the same exception type); just outside they do not."""
    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64, torch.complex64]
    if hasattr(torch, "uint64"):
        dtypes.append(torch.uint64)

    def outcome(code: str, t: Any, v: Any) -> Any:
        t = t.clone()
        try:
            exec(code, {"t": t, "v": v})
        except Exception as exc:  # noqa: BLE001 - the exception type is the result
            return type(exc)
        return t.view(torch.uint8).tolist() if t.dtype != torch.bool else t.tolist()

    inside = [2**63 - 1, -(2**63), 2**31, -1, 255, 256, 65504, 65536, 1e39, float("inf"), True]
    outside = [2**63, 2**64 - 1, -(2**63) - 1]
    for dtype in dtypes:
        t = torch.zeros(2, dtype=dtype)
        for v in inside:
            assert outcome("t[1] = v", t, v) == outcome("t[1].fill_(v)", t, v), (dtype, v)
    assert any(outcome("t[1] = v", torch.zeros(2, dtype=d), v) != outcome("t[1].fill_(v)", torch.zeros(2, dtype=d), v)
               for d in dtypes for v in outside)


# -- 9: evaluation order --------------------------------------------------------------------

def test_value_that_calls_is_never_safe() -> None:
    text = (
        "import torch\n"
        "class A:\n"
        "    def __init__(self):\n"
        '        self.pos = torch.zeros(4, device="cuda")\n'
        "    def _grow(self):\n"
        '        self.pos = torch.zeros(8, device="cuda")\n'
        "        return [1, 2]\n"
        "    def step(self):\n"
        "        self.pos[0] = len(self._grow())\n"
    )
    finding = _one(text)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert fixed(text, "none")[0] == text
    from lint_h2d.rules import rule_by_code

    doc = rule_by_code("H2D001").doc.fix_safety
    assert "evaluat" in doc and "order" in doc


# -- 5: the gate must read the module's names ---------------------------------------------

def test_local_torch_uses_the_modules_alias() -> None:
    text = ('import torch as th\n\n\ndef f(n):\n    torch = n\n    t = th.zeros(4, device="cuda")\n'
            "    t[0] = 0\n    return t, torch\n")
    new, applied = fixed(text, "torch-hip")
    assert len(applied) == 1
    assert "if th.version.hip is not None:" in new and "\nimport torch\n" not in new
    assert structure(new) == structure(text)
    assert run_module(new, "f(3)[0]").tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("text, scope", [
    ('import torch as th\n\n\ndef f(torch):\n    t = th.zeros(4, device="cuda")\n    t[0] = 0\n'
     "    th = 1\n", "function `f`"),
    ('from vllm.platforms import current_platform\nimport torch\n\n\n'
     'def f(current_platform):\n    t = torch.empty(4, device="cuda")\n    t[0] = 0\n', "function `f`"),
    ('import torch\nimport torch as th\nbuf = torch.zeros(4, device="cuda")\n\n\nclass A:\n'
     "    torch = None\n    th = None\n    buf[0] = 0\n", "class `A`"),
    ('import torch\nbuf = torch.zeros(4, device="cuda")\n\n\ndef outer():\n    torch = 1\n\n'
     "    def inner():\n        buf[0] = 0\n    return inner, torch\n", "function `outer`"),
])
def test_shadowed_gate_name_gives_no_fix(text: str, scope: str) -> None:
    gate = "vllm" if "current_platform" in text else "torch-hip"
    (finding,) = [f for f in findings(text, gate) if f.code == "H2D001"]
    assert finding.fix is None and scope in (finding.no_fix_reason or ""), finding


def test_class_attribute_does_not_shadow_inside_a_method() -> None:
    text = ('import torch\n\n\nclass A:\n    torch = None\n\n    def f(self):\n'
            '        t = torch.empty(4, device="cuda")\n        t[0] = 0\n')
    new, applied = fixed(text, "torch-hip")
    assert len(applied) == 1 and "if torch.version.hip is not None:" in new


def test_global_declaration_reads_the_module() -> None:
    text = ('import torch\n\n\ndef f():\n    global torch\n    t = torch.zeros(4, device="cuda")\n    t[0] = 0\n')
    _, applied = fixed(text, "torch-hip")
    assert len(applied) == 1


# -- 6: the import goes where the file puts it; compiled functions --------------------------

LAZY = (
    "import torch\n\n\n"
    "def helper():\n"
    "    from vllm.platforms import current_platform\n"
    "    return current_platform.is_cuda()\n\n\n"
    "def build(n):\n"
    '    t = torch.empty(4, device="cuda")\n'
    "    t[0] = 0\n"
    "    return t\n"
)


def test_lazy_import_pattern_is_followed() -> None:
    new, applied = fixed(LAZY, "vllm")
    assert len(applied) == 1
    assert new.count("from vllm.platforms import current_platform") == 2
    head = new.split("def helper")[0]
    assert "vllm" not in head  # no module-level import: it would bring the cycle back
    assert ("    from vllm.platforms import current_platform\n"
            "    if current_platform.is_rocm():\n        t[:1].zero_()\n") in new
    again, more = fixed(new, "vllm")
    assert again == new and not more


def test_lazy_import_already_in_the_function_is_reused() -> None:
    text = LAZY.replace("def build(n):\n", "def build(n):\n    from vllm.platforms import current_platform\n")
    new, applied = fixed(text, "vllm")
    assert len(applied) == 1
    assert new.count("from vllm.platforms import current_platform") == 2


def test_lazy_import_below_the_statement_is_not_enough() -> None:
    text = LAZY.replace("    return t\n", "    from vllm.platforms import current_platform\n    return t\n")
    new, applied = fixed(text, "vllm")
    assert len(applied) == 1
    body = new.split("def build")[1]
    assert body.index("from vllm.platforms") < body.index("if current_platform.is_rocm()")


@pytest.mark.parametrize("decorator", ["@torch.jit.script", "@torch.compile", "@torch.compile(fullgraph=True)"])
def test_compiled_function_uses_torch_version_hip(decorator: str) -> None:
    text = ("import torch\nfrom vllm.platforms import current_platform\n\n\n"
            f"{decorator}\ndef f(t: torch.Tensor):\n"
            '    u = torch.empty(4, device="cuda")\n    u[0] = 0\n    return u\n')
    new, applied = fixed(text, "vllm")
    assert len(applied) == 1
    assert "if torch.version.hip is not None:" in new and "current_platform.is_rocm()" not in new


def test_torchscript_accepts_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "scripted_gate.py").write_text(
        "import torch\n\n@torch.jit.script\ndef f(t: torch.Tensor):\n"
        "    if torch.version.hip is not None:\n        t[0].zero_()\n    else:\n        t[0] = 0\n"
        "    return t\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("scripted_gate")
    assert module.f(torch.ones(3)).tolist() == [0.0, 1.0, 1.0]


# -- 11: one rewrite that does not parse must not block the others ----------------------------

def test_a_fix_that_does_not_parse_does_not_block_the_others() -> None:
    from fixers.edits import TextEdit
    from lint_h2d.findings import Fix, Location
    from lint_h2d.rules import all_rules
    from lint_h2d.rules.base import Rule

    class Breaks(Rule):
        code = "H2D098"
        name = "breaks"
        summary = "a rule whose fix does not parse"
        doc = all_rules()[0].doc

        def wants(self, small):  # type: ignore[no-untyped-def]
            return True

        def check(self, facts, ctx):  # type: ignore[no-untyped-def]
            for fact in facts:
                if ctx.module.code_for_node(fact.small).startswith("marker"):
                    row = ctx.position(fact.small).start.line
                    yield Finding(self.code, "breaks", ctx.path, Location(row, 1), Location(row, 1),
                                  fix=Fix(Applicability.SAFE, "break it", (TextEdit((row, 0), (row, 6), "if x:"),)))

    text = ('import torch\nt = torch.zeros(4, device="cuda")\nmarker = 1\nt[0] = 0\nt[1] = 0\n')
    eng = Engine(Settings(root=Path.cwd(), fix_gate="none"), collect([text]), rules=[*all_rules(), Breaks()])
    new, applied, remaining = eng.fix_text("m.py", text, unsafe=False)
    ast.parse(new)
    assert sorted(f.code for f in applied) == ["H2D001", "H2D001"]
    assert "t[0].zero_()" in new and "t[1].zero_()" in new and "marker = 1" in new
    (left,) = [f for f in remaining if f.code == "H2D098"]
    assert left.fix is None and "does not parse" in (left.no_fix_reason or "")


# -- 19: fix-gate = "auto" decides from imports and the project's name, not the path --------

def test_auto_gate_ignores_a_vllm_folder_above_the_project(tmp_path: Path) -> None:
    from lint_h2d.config import Settings as S

    project = tmp_path / "vllm" / "proj"
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "proj"\n')
    path = project / "x.py"
    text = "import torch\n"
    assert S(root=project).gate_for(str(path), text).test == "torch.version.hip is not None"
    assert S(root=project).gate_for(str(path), "from vllm.platforms import current_platform\n").test == \
        "current_platform.is_rocm()"


def test_auto_gate_needs_an_import_of_vllm_that_always_runs(tmp_path: Path) -> None:
    """A file that imports vLLM only when it is there (ms-swift's `if is_vllm_available():`)
    gets the torch-only gate: a module-level `from vllm.platforms import current_platform`
    added by a fix would make it fail to import without vLLM."""
    from lint_h2d.config import Settings as S

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "trainer"\n')
    path = str(tmp_path / "x.py")
    optional = (
        "if is_vllm_available():\n    from vllm.lora.request import LoRARequest\n",
        "try:\n    import vllm\nexcept ImportError:\n    vllm = None\n",
        "def load():\n    from vllm import LLM\n    return LLM\n",
    )
    for text in optional:
        assert S(root=tmp_path).gate_for(path, "import torch\n" + text).test == "torch.version.hip is not None", text
    for text in ("from vllm.lora.request import LoRARequest\n", "import vllm\n"):
        assert S(root=tmp_path).gate_for(path, "import torch\n" + text).test == "current_platform.is_rocm()", text
    # End to end: the fix of such a file imports nothing from vLLM.
    source = ("import torch\n\nif is_vllm_available():\n    from vllm.lora.request import LoRARequest\n\n\n"
              "def step(n: int) -> None:\n    t = torch.zeros(n, device='cuda')\n    t[0] = 0\n")
    fixed, _, _ = Engine(S(root=tmp_path), collect([source])).fix_text(path, source, unsafe=False)
    assert "t[0].zero_()" in fixed and "torch.version.hip is not None" in fixed
    assert "vllm.platforms" not in fixed and "current_platform" not in fixed


def test_auto_gate_inside_vllm_itself(tmp_path: Path) -> None:
    from lint_h2d.config import Settings as S

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "vllm"\n')
    (tmp_path / "vllm").mkdir()
    path = tmp_path / "vllm" / "model.py"
    assert S(root=tmp_path).gate_for(str(path), "from ..utils import x\n").test == "current_platform.is_rocm()"
    assert S(root=tmp_path).gate_for("/elsewhere/y.py", "import torch\n").test == "torch.version.hip is not None"


# -- 21: comments, blank lines and indentation around the fix -------------------------------

def test_comment_after_a_backslash_is_not_duplicated() -> None:
    text = 'import torch\nt = torch.zeros(4, device="cuda")\nt[0] = 0 \\\n  # c\nx = 1  # next comment\n'
    for gate in ("torch-hip", "none"):
        new, applied = fixed(text, gate)
        # The comment stays on the original and is repeated on the rewrite (once each), never
        # left behind a second time after the backslash.
        expected = 2 if gate != "none" else 1
        assert len(applied) == 1 and new.count("# c\n") == expected and new.count("# next comment") == 1, new
        ast.parse(new)


def test_gate_none_keeps_comments_inside_the_value_and_target() -> None:
    text = ('import torch\nt = torch.zeros(4, device="cuda")\nt[0] = (  # c1\n    5  # c2\n)\n'
            "t[  # c3\n    1\n] = 0\n")
    new, applied = fixed(text, "none")
    assert len(applied) == 2
    for comment in ("# c1", "# c2", "# c3"):
        assert comment in new, new
    ast.parse(new)


def test_import_above_a_leading_class_gets_two_blank_lines() -> None:
    import libcst as cst

    from fixers.edits import apply_edits
    from fixers.imports import import_insertion

    for src in ("class A:\n    pass\n", "@dec\nclass A:\n    pass\n", "def f():\n    pass\n",
                '"""Doc."""\nclass A:\n    pass\n'):
        edit = import_insertion(cst.parse_module(src), "import torch")
        out = apply_edits(src, [edit])
        assert "import torch\n\n\n" in out and "\n\n\n\n" not in out, out
    edit = import_insertion(cst.parse_module("x = 1\n"), "import torch")
    assert apply_edits("x = 1\n", [edit]) == "import torch\n\nx = 1\n"


def test_tab_block_in_a_two_space_file_nests_with_tabs() -> None:
    text = 'import torch\nt = torch.zeros(4, device="cuda")\nif True:\n  x = 1\ndef f():\n\tt[0] = 0\n'
    new, _ = fixed(text)
    assert "\t  " not in new and "\tif torch.version.hip is not None:\n\t\tt[0].zero_()\n" in new
