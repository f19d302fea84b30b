"""`lint-h2d verify` level 4 (H2D002 removals) reads the capture function: issue 16 items 14
and 15 (level-4 part)."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from lint_h2d.verify import capture  # noqa: E402
from lint_h2d.verify.pairs import StatementPair  # noqa: E402

HEADER = '''\
class B:
    def build_for_cudagraph_capture(self, m, flag):
'''
CPU = "m.query_start_loc_cpu.zero_()"


def removal(body: str, row: int, original: str = CPU) -> capture.CaptureVerdict:
    """Verdict on removing the statement at `row` of `HEADER + body`."""
    pair = StatementPair("H2D002", "x.py", row, original, "", "m.query_start_loc_cpu", None, "safe")
    return capture.simulate(pair, source=HEADER + body)


def test_twin_zeroed_before_on_every_path_is_verified() -> None:
    body = "        m.query_start_loc.zero_()\n        m.query_start_loc_cpu.zero_()\n"
    verdict = removal(body, 4)
    assert verdict.verified, verdict.detail


def test_twin_zeroed_after_the_cpu_write_fails() -> None:
    body = "        m.query_start_loc_cpu.zero_()\n        m.query_start_loc.zero_()\n"
    verdict = removal(body, 3)
    assert not verdict.verified and "before" in verdict.detail


def test_twin_zeroed_only_in_another_branch_fails() -> None:
    body = ("        if flag:\n            m.query_start_loc.zero_()\n"
            "        else:\n            m.query_start_loc_cpu.zero_()\n")
    verdict = removal(body, 6)
    assert not verdict.verified and "before" in verdict.detail


def test_twin_zeroed_only_in_part_fails() -> None:
    body = "        m.query_start_loc[:1].zero_()\n        m.query_start_loc_cpu.zero_()\n"
    verdict = removal(body, 4)
    assert not verdict.verified and "in part" in verdict.detail


def test_twin_never_zeroed_fails() -> None:
    body = "        m.seq_lens.zero_()\n        m.query_start_loc_cpu.zero_()\n"
    verdict = removal(body, 4)
    assert not verdict.verified and "never" in verdict.detail


def test_same_subscript_covers() -> None:
    body = "        m.query_start_loc[:1].zero_()\n        m.query_start_loc_cpu[:1].zero_()\n"
    pair = StatementPair("H2D002", "x.py", 4, "m.query_start_loc_cpu[:1].zero_()", "",
                         "m.query_start_loc_cpu", None, "unsafe")
    assert capture.simulate(pair, source=HEADER + body).verified


def test_the_seed_is_read_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "seed.py"
    path.write_text(HEADER + "        m.query_start_loc.zero_()\n        m.query_start_loc_cpu.zero_()\n")
    pair = StatementPair("H2D002", str(path), 4, CPU, "", "m.query_start_loc_cpu", None, "safe")
    assert capture.simulate(pair).verified


def test_matrix_seed_still_verified() -> None:
    pairs = capture.matrix_pairs()
    assert len(pairs) == 1 and capture.simulate(pairs[0]).verified


# -- item 14: a call spread over lines with a comment line at column 0 --------------------------


def test_statement_with_a_column_0_comment_inside_does_not_crash() -> None:
    original = "        m.query_start_loc_cpu.fill_(\n# a comment at column 0\n            0)"
    body = "        m.query_start_loc.zero_()\n" + original + "\n"
    verdict = removal(body, 4, original)
    assert verdict.verified, verdict.detail


def test_verify_command_on_such_a_file(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    (tmp_path / "a.py").write_text(
        "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\nclass Meta:\n"
        "    query_start_loc: torch.Tensor\n    query_start_loc_cpu: torch.Tensor\n\n\n"
        "class B:\n    def build_for_cudagraph_capture(self, m: Meta):\n"
        "        m.query_start_loc.zero_()\n        m.query_start_loc_cpu.fill_(\n"
        "# a comment at column 0\n            0)\n        return None\n"
    )
    result = run_cli("verify", "--no-gpu", "--no-fake-cuda", "a.py", cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
