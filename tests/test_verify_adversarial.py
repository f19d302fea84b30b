"""`verify` must be able to catch wrong rewrites (issues #15, #16, #17): bounds, index kinds,
dtype limits, evaluation order, line breaks, and the same fixes as `check --fix --unsafe-fixes`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from lint_h2d.verify import run  # noqa: E402

NO_DEVICE = run.Levels(fake_cuda=None, fake_cuda_reason="not wanted in this test", gpu=False)


def rows_for(path: Path) -> list:
    pairs, _ = run.file_pairs([str(path)])
    return run.pair_rows(pairs, NO_DEVICE)


# -- issue 15 item 20: CR-only files -----------------------------------------------------------

@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_verify_reads_every_line_ending(tmp_path: Path, newline: str) -> None:
    text = newline.join([
        "import torch",
        'def f(n: int):',
        '    t = torch.zeros(n + 4, device="cuda")',
        "    t[n] = (1 +",
        "            2)",
        "    return t",
        "",
    ])
    path = tmp_path / "m.py"
    path.write_bytes(text.encode())
    rows = rows_for(path)
    assert rows, "the finding has a fix to verify"
    assert all("does not parse" not in r.detail for r in rows), [r.detail for r in rows]


from lint_h2d.verify.equivalence import (  # noqa: E402
    BOUNDS, DIFFERS, INDEX_KIND, ORDER, RAISES, verify_statements,
)
from tests.conftest import REPO, run_cli  # noqa: E402

ISSUE15 = REPO / "tests" / "fixtures" / "verify" / "issue15.py"


# -- issue 15, "verify must be able to catch these" -----------------------------------------

def test_slice_on_a_possibly_empty_tensor_is_caught() -> None:
    """Item 7: `t[:1].zero_()` does nothing on an empty tensor; `t[0] = 0` raises."""
    verdict = verify_statements("t[0] = 0", "t[:1].zero_()", "t", 1, safe=True)
    assert not verdict.verified and BOUNDS in verdict.detail and RAISES in verdict.detail
    # ...and accepted where the code proves the length (the fixer then writes the slice)
    assert verify_statements("t[0] = 0", "t[:1].zero_()", "t", 1, safe=True, min_length=2).verified
    assert verify_statements("t[0] = 0", "t[0].zero_()", "t", 1, safe=True).verified


def test_literal_past_int64_is_caught_when_called_safe() -> None:
    """Item 8: the assignment raises, `fill_` writes or raises another error."""
    verdict = verify_statements("t[0] = 18446744073709551615", "t[0].fill_(18446744073709551615)", "t", 1, safe=True)
    assert not verdict.verified


def test_non_integer_indices_are_reported() -> None:
    """Issue 17 item 10: list / tensor / 0-dim tensor / bool indices are tried."""
    old = verify_statements("t[i] = 7", "t[i].fill_(7)", "t", 1)
    new = verify_statements("t[i] = 7", "t.select(0, i).fill_(7)", "t", 1)
    assert f"{INDEX_KIND}: " in old.summary and DIFFERS in old.summary.split(f"{INDEX_KIND}: ")[1]
    kinds = new.summary.split(f"{INDEX_KIND}: ")[1]
    assert RAISES in kinds and DIFFERS not in kinds  # never silently wrong
    # a fix that claims to be safe with a silent copy fails
    assert not verify_statements("t[i] = 7", "t[i].fill_(7)", "t", 1, safe=True).verified


def test_evaluation_order_is_tried() -> None:
    """Item 9 / issue 16 item 15: `t[pos] = advance()` with `advance()` moving `pos`."""
    verdict = verify_statements("t[pos] = advance()", "t.select(0, pos).fill_(advance())", "t", 1)
    assert f"{ORDER}: " in verdict.summary and DIFFERS in verdict.summary.split(f"{ORDER}: ")[1]
    assert not verify_statements("t[pos] = advance()", "t.select(0, pos).fill_(advance())", "t", 1,
                                 safe=True).verified
    order = verify_statements("self.pos[0] = len(self._grow())", "self.pos[0].fill_(len(self._grow()))",
                              "self.pos", 1, safe=True)
    assert not order.verified and DIFFERS in order.summary.split(f"{ORDER}: ")[1]


def test_sizes_follow_the_index() -> None:
    """Issue 16 item 15: `t[start + 16] = 0` ran no case on 5-element tensors."""
    verdict = verify_statements("t[start + 16] = 0", "t.select(0, start + 16).zero_()", "t", 1)
    assert verdict.verified and verdict.ran > 0


def test_statements_sharing_the_line_are_narrowed() -> None:
    """Issue 16 item 15: `n = 1; t[0] = 0` → `n = 1; t[0].zero_()` is the pair `t[0] = 0`."""
    from lint_h2d.verify.pairs import _narrowed

    assert _narrowed("n = 1; t[0] = 0", "n = 1; t[0].zero_()") == ("t[0] = 0", "t[0].zero_()")
    assert _narrowed("n = 1; m.x_cpu.zero_()", "n = 1") == ("m.x_cpu.zero_()", "")
    assert _narrowed("t[0] = 0", "t[0].zero_()") == ("t[0] = 0", "t[0].zero_()")


def test_issue15_fixture_verifies_with_every_family() -> None:
    rows = rows_for(ISSUE15)
    assert len(rows) >= 7
    assert all(r.equivalent is True for r in rows), [(r.label, r.detail) for r in rows if r.equivalent is not True]
    details = " ".join(r.detail for r in rows)
    for family in (BOUNDS, INDEX_KIND, ORDER, "dtype limit"):
        assert family in details, family
    assert any("[:1].zero_()" in r.rewritten for r in rows)  # the proven slice
    assert any("w[4].zero_()" in r.rewritten for r in rows)  # out of range: raises like the write


# -- issue 16 items 7 and 13 -------------------------------------------------------------------

def test_verify_exits_2_when_something_cannot_be_checked(tmp_path: Path) -> None:
    (tmp_path / "syntax.py").write_text("def f(:\n")
    (tmp_path / "undecodable.py").write_bytes(b"\xff\xfe x = 1\n")
    for name in ("missing.py", "syntax.py", "undecodable.py"):
        result = run_cli("verify", "--no-fake-cuda", "--no-gpu", name, cwd=tmp_path)
        assert result.returncode == 2, (name, result.stdout, result.stderr)
        assert name in result.stderr


def test_verify_uses_the_project_index(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.lint-h2d]\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "meta.py").write_text(
        "import torch\n\n\nclass Meta:\n    def __init__(self, n: int) -> None:\n"
        '        self.query_start_loc = torch.zeros(n, device="cuda")\n'
        "        self.query_start_loc_cpu = torch.zeros(n)\n")
    (pkg / "builder.py").write_text("def build(m):\n    m.query_start_loc[0] = 0\n    m.query_start_loc[1] = 1\n")
    check = run_cli("check", "--no-cache", "--output-format", "json", "pkg/builder.py", cwd=tmp_path)
    import json

    fixable = [f for f in json.loads(check.stdout) if f["fix"]]
    verify = run_cli("verify", "--no-fake-cuda", "--no-gpu", "pkg/builder.py", cwd=tmp_path)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "No fixes to verify" not in verify.stdout
    # One row per fix, plus one per run of fixes the loop put under one gate.
    import re

    rows = re.search(r"(\d+)/(\d+) verified equivalent\.", verify.stdout)
    assert rows and rows.group(1) == rows.group(2) and int(rows.group(1)) >= len(fixable) and fixable
