"""The fix pipeline (issue 14): one gate per run of adjacent rewrites, redundant writes
deleted, module flags reused, trailing comments kept, rewrites laid out like ruff.

Each finding keeps its own fix (one gate around one statement) for `--diff` of a finding, the
language server and `verify`; only what the fix loop writes is grouped.
"""
from __future__ import annotations

import ast
import dataclasses
import shutil
import sys
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest

from fixers.layout import project_line_length
from lint_h2d.config import Settings
from lint_h2d.engine import Engine, Source
from lint_h2d.findings import Applicability, Finding
from lint_h2d.inference.project import collect
from lint_h2d.verify.pairs import composition_problem, pairs_for_source
from tests.conftest import FIXTURES

# ruff is a test dependency: the one on PATH, else the one beside this interpreter.
RUFF = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")


def engine(text: str, gate: str = "vllm", root: Path = Path(".")) -> Engine:
    return Engine(dataclasses.replace(Settings(root=root), fix_gate=gate), collect([text]))


def fix(text: str, gate: str = "vllm", unsafe: bool = False, path: str = "m.py") -> Tuple[str, List[Finding]]:
    new, applied, _ = engine(text, gate).fix_text(path, text, unsafe)
    return new, applied


RUN = (
    "import torch\nfrom vllm.platforms import current_platform\n\n\n"
    "def f(n: int, k: int, device: torch.device):\n"
    "    t = torch.empty(n, device=device)\n"
    "    t[0] = 0  # first\n"
    "    # between\n"
    "    t[k] = 1\n"
    "\n"
    "    t[2] = 2\n"
    "    return t\n"
)


def test_each_finding_keeps_its_own_gate() -> None:
    found = [f for f in engine(RUN).analyze("m.py", RUN) if f.fix is not None]
    assert len(found) == 3
    for f in found:
        assert f.fix is not None
        assert sum(e.text.count("if current_platform.is_rocm():") for e in f.fix.edits) == 1


def test_safe_fixes_group_alone_and_all_group_with_unsafe_fixes() -> None:
    safe_only, applied = fix(RUN)
    assert len(applied) == 2 and safe_only.count("if current_platform.is_rocm():") == 2
    everything, applied = fix(RUN, unsafe=True)
    assert len(applied) == 3  # `check` reports "3 fixed": every finding counts, grouped or not
    assert everything.count("if current_platform.is_rocm():") == 1
    body = everything.split("def f")[1]
    assert body.index("t[0].zero_()  # first") < body.index("t.select(0, k).fill_(1)") < body.index("t[2].fill_(2)")
    # the else branch holds the originals with the comment and the blank line between them
    assert ("    else:\n        t[0] = 0  # first\n        # between\n        t[k] = 1\n\n        t[2] = 2\n"
            in everything), everything
    assert fix(everything, unsafe=True)[1] == []


def test_statement_between_splits_the_run() -> None:
    text = RUN.replace("    # between\n", "    x = 1\n")
    new, applied = fix(text, unsafe=True)
    assert len(applied) == 3 and new.count("if current_platform.is_rocm():") == 2


def test_other_blocks_do_not_group() -> None:
    text = ("import torch\nfrom vllm.platforms import current_platform\n\n\n"
            "def f(n: int, flag: bool, device: torch.device):\n"
            "    t = torch.empty(n, device=device)\n"
            "    if flag:\n        t[1] = 1\n    t[0] = 0\n")
    new, applied = fix(text)
    assert len(applied) == 2 and new.count("if current_platform.is_rocm():") == 2
    ast.parse(new)


# -- redundant writes ------------------------------------------------------------------------

FLASHMLA = (
    "import torch\nfrom vllm.platforms import current_platform\n\n\n"
    "def f(q: torch.Tensor, end_block_idx: int, device: torch.device):\n"
    "    dtype = torch.int32\n"
    "    B = q.shape[0]\n"
    "    meta = torch.zeros((1, 8), dtype=dtype, device=device)\n"
    "    meta[0, 0] = 0  # begin_idx\n"
    "    meta[0, 1] = 0  # sched_begin_block_idx\n"
    "    meta[0, 2] = B - 1  # end_idx\n"
    "    meta[0, 3] = end_block_idx\n"
    "    meta[0, 4] = 0  # begin_n_split_idx\n"
    "    # fields [5..7] stay 0\n"
    "    return meta\n"
)


def test_redundant_writes_are_deleted_and_the_rest_share_one_gate() -> None:
    found = [f for f in engine(FLASHMLA).analyze("m.py", FLASHMLA) if f.code == "H2D001"]
    deleted = [f for f in found if f.fix is not None and f.fix.rewrite is not None and f.fix.rewrite.delete]
    assert [f.location.row for f in deleted] == [9, 10, 13]
    for f in deleted:
        assert f.message.startswith("Redundant scalar write") and "already holds 0" in f.message
        assert f.fix is not None and f.fix.applicability == Applicability.SAFE
    new, applied = fix(FLASHMLA, unsafe=True)
    assert len(applied) == 5 and new.count("if current_platform.is_rocm():") == 1
    assert "meta[0, 0]" not in new and "meta[0, 4]" not in new and "# fields [5..7] stay 0" in new
    assert fix(new, unsafe=True)[1] == []


@pytest.mark.parametrize("between", ["    print(meta)\n", "    alias = meta\n", "    meta[0, 4] = 5\n",
                                     "    meta[0, -4] = 5\n", "    if B:\n        pass\n"])
def test_anything_that_may_touch_the_tensor_keeps_the_write(between: str) -> None:
    text = FLASHMLA.replace("    meta[0, 0] = 0  # begin_idx\n", between)
    found = [f for f in engine(text).analyze("m.py", text) if f.location.row == 13 and f.code == "H2D001"]
    assert found and not found[0].message.startswith("Redundant"), found


# -- flags, comments, layout -----------------------------------------------------------------


def test_module_flag_is_read_and_recognised_as_a_gate() -> None:
    text = ("import torch\n\n_IS_ROCM = torch.version.hip is not None\n\n\n"
            "def f(n: int, device: torch.device):\n    t = torch.empty(n, device=device)\n"
            "    t[0] = 0\n    t[1] = 1\n")
    new, applied = fix(text, "torch-hip")
    assert len(applied) == 2 and "if _IS_ROCM:\n" in new and "torch.version.hip is not None:" not in new.split("def f")[1]
    assert fix(new, "torch-hip")[1] == []


LONG = (
    "import torch\nfrom vllm.platforms import current_platform\n\n\n"
    "class Ctx:\n"
    "    def __init__(self, n: int) -> None:\n"
    '        self.state_block_strides = torch.empty(n, dtype=torch.int64, device="cuda")\n\n'
    "    def build(self, states: list[torch.Tensor]) -> None:\n"
    "        for idx, state in enumerate(states):\n"
    "            for _ in range(2):\n"
    "                if state.dim() > 1:\n"
    "                    block_stride_elems = state.stride(0)\n"
    "                    self.state_block_strides[idx] = (\n"
    "                        block_stride_elems * state.element_size()\n"
    "                    )  # bytes\n"
)


def test_rewrites_are_laid_out_like_ruff(tmp_path: Path) -> None:
    new, applied = fix(LONG, unsafe=True)
    assert len(applied) == 1
    # `idx` comes from `enumerate`: an int, so the subscript stays (no `select`)
    assert ("self.state_block_strides[idx].fill_(\n"
            "                            block_stride_elems * state.element_size()\n"
            "                        )  # bytes\n") in new, new
    assert max(len(line) for line in new.splitlines()) <= 88
    if not Path(RUFF).exists():
        pytest.skip("ruff is not installed")
    for name, code in (("before.py", LONG), ("after.py", new)):
        (tmp_path / name).write_text(code)
        done = subprocess.run([RUFF, "format", "--check", "--isolated", str(tmp_path / name)],
                              capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stdout, done.stderr)


def test_argument_edits_are_laid_out_like_ruff() -> None:
    """H2D004's edit inside a statement (vLLM's mimo_audio.py: dropping `.to(\n...\n)` left the
    statement's old breaks): the fixture pair's input and output both pass ruff format."""
    if not Path(RUFF).exists():
        pytest.skip("ruff is not installed")
    pair = [FIXTURES / "H2D004_layout.in.py", FIXTURES / "H2D004_layout.out.py"]
    done = subprocess.run([RUFF, "format", "--check", "--isolated", *map(str, pair)],
                          capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout, done.stderr)
    out = pair[1].read_text(encoding="utf-8")
    assert "base ** (torch.arange(0, dim, 2, dtype=torch.float, device=device) / dim)" in out


def test_line_length_comes_from_the_project(tmp_path: Path) -> None:
    assert project_line_length(str(tmp_path / "a.py")) == 88
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    (tmp_path / "sub").mkdir()
    assert project_line_length(str(tmp_path / "sub" / "a.py")) == 120
    (tmp_path / "sub" / "pyproject.toml").write_text("[tool.black]\nline-length = 60\n")
    assert project_line_length(str(tmp_path / "sub" / "b.py")) == 60
    text = LONG.replace("    )  # bytes\n", "    )\n")
    path = tmp_path / "wide.py"
    new, _, _ = engine(text).fix_text(str(path), text, True)
    assert "self.state_block_strides[idx].fill_(block_stride_elems * state.element_size())" in new


# -- verify ----------------------------------------------------------------------------------


def test_verify_sees_grouped_and_deleted_rewrites() -> None:
    from lint_h2d.verify import equivalence

    pairs, _ = pairs_for_source(engine(FLASHMLA), Source("m.py", FLASHMLA.encode(), FLASHMLA, "utf-8", False))
    groups = [p for p in pairs if p.grouped]
    deletions = [p for p in pairs if p.allocation]
    assert len(groups) == 1 and groups[0].grouped == 2 and groups[0].problem is None
    assert len(deletions) == 3 and all(p.rewritten == "pass" for p in deletions)
    for p in deletions:
        verdict = equivalence.verify_statements(p.original, p.rewritten, p.target, p.rank,
                                                safe=True, min_length=p.min_length, allocation=p.allocation)
        assert verdict.verified, verdict.detail
    # The same deletion after an allocation that holds something else is caught.
    wrong = equivalence.verify_statements("meta[0, 4] = 0", "pass", "meta", 2, safe=True, min_length=1,
                                          allocation="torch.ones((1, 8))")
    assert not wrong.verified


def test_composition_check_catches_a_reordered_group() -> None:
    single = ["if g():\n    a.zero_()\nelse:\n    a[0] = 0", "if g():\n    b.zero_()\nelse:\n    b[0] = 0"]
    good = "if g():\n    a.zero_()\n    b.zero_()\nelse:\n    a[0] = 0\n    b[0] = 0"
    bad = "if g():\n    b.zero_()\n    a.zero_()\nelse:\n    a[0] = 0\n    b[0] = 0"
    assert composition_problem(good, single) is None
    assert composition_problem(bad, single) is not None


def test_fake_cuda_sees_the_copy_gone_after_a_deletion() -> None:
    from lint_h2d.verify import fake_cuda, run

    try:
        levels = run.Levels.detect(want_fake=True, want_gpu=False)
    except Exception as exc:  # pragma: no cover - no compiler
        pytest.skip(str(exc))
    if not levels.fake_cuda:
        pytest.skip(levels.fake_cuda_reason)
    row = run.verify_h2d001("m.py:9", "meta[0, 4] = 0", ("pass",), "meta", 2, levels, safe=True,
                            min_length=1, allocation="torch.zeros((1, 8))")
    assert row.equivalent is True and row.copy_before is True and row.copy_after is False, row
    del fake_cuda
