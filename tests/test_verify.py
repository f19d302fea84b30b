"""`lint-h2d verify`, levels 1 (CPU bitwise equality) and 4 (H2D002 capture sequence), and the CLI.

The verifier must be able to fail: deliberately wrong rewrites are handed to the core
comparison and must be caught.
"""
from __future__ import annotations

import argparse
import io

import pytest

torch = pytest.importorskip("torch")

from lint_h2d import cli  # noqa: E402
from lint_h2d.verify import capture, equivalence, matrix, run  # noqa: E402
from lint_h2d.verify.equivalence import Case, compare_pair, verify_statements  # noqa: E402
from lint_h2d.verify.pairs import StatementPair  # noqa: E402
from tests.conftest import REPO, run_cli  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "verify" / "seed.py"
NO_DEVICE = run.Levels(fake_cuda=None, fake_cuda_reason="not wanted in this test", gpu=False)


# -- level 1: the core comparison can fail ---------------------------------------------------


def test_wrong_slice_for_minus_one_is_caught() -> None:
    """`t[i:i+1]` is empty for i == -1: the brief's canonical wrong rewrite."""
    outcome = compare_pair("t[i] = 0", "t[i:i+1].zero_()", "t", Case(torch.int32, (5,), {"i": -1}))
    assert not outcome.equivalent and outcome.ran
    assert verify_statements("t[i] = 0", "t[i:i+1].zero_()", "t", 1).verified is False


def test_fill_of_one_element_1d_value_is_caught() -> None:
    """The assignment accepts a 1-element 1-D tensor; `fill_` raises on it."""
    case = Case(torch.float32, (5,), {"v": torch.tensor([3.0])})
    assert compare_pair("t[0] = v", "t[0:1].copy_(v)", "t", case).equivalent
    outcome = compare_pair("t[0] = v", "t[:1].fill_(v)", "t", case)
    assert not outcome.equivalent and "raised" in outcome.detail


def test_negative_zero_is_not_zero_bitwise() -> None:
    case = Case(torch.float32, (5,), {})
    assert not compare_pair("t[0] = -0.0", "t[:1].zero_()", "t", case).equivalent
    assert compare_pair("t[0] = -0.0", "t[:1].fill_(-0.0)", "t", case).equivalent


def test_gate_is_forced_to_each_branch() -> None:
    """A wrong device form inside a gate is caught only on the branch that runs it."""
    for test in ("current_platform.is_rocm()", "torch.version.hip is not None", "my_platform.rocm"):
        wrong = f"if {test}:\n    t[1:2].zero_()\nelse:\n    t[0] = 0"
        prepared = equivalence.prepare("t[0] = 0", wrong, "t")
        assert prepared.gated and prepared.problem is None, prepared
        assert not compare_pair(prepared.original, prepared.rewritten, "t", Case(torch.int64, (5,), {}, gate=True)).equivalent
        assert compare_pair(prepared.original, prepared.rewritten, "t", Case(torch.int64, (5,), {}, gate=False)).equivalent


def test_nan_safe_and_nonzero_initial_contents() -> None:
    for dtype in equivalence.DTYPES:
        t = equivalence.initial_tensor(dtype, (5, 5))
        assert bool((t != 0).all()), dtype
        assert equivalence.bitwise_equal(t, t.clone())


def test_uncallable_value_is_abstracted_consistently() -> None:
    prepared = equivalence.prepare(
        "out[3] = seq_lens.max().item() + 1", "out[3:4].fill_(seq_lens.max().item() + 1)", "out"
    )
    assert prepared.problem is None and prepared.value_names == ("__lint_h2d_value__",)
    assert verify_statements("out[3] = seq_lens.max().item() + 1", "out[3:4].fill_(seq_lens.max().item() + 1)", "out", 1).verified
    # a rewrite that changed the value keeps a free name: unverifiable, never a silent pass
    changed = verify_statements("out[3] = seq_lens.max().item() + 1", "out[3:4].fill_(seq_lens.max().item())", "out", 1)
    assert not changed.verified and "cannot bind" in changed.detail


def test_attribute_chain_targets() -> None:
    verdict = verify_statements("self.a.buf[n] = n", "self.a.buf[n].fill_(n)", "self.a.buf", 1)
    assert verdict.verified and verdict.dtypes == equivalence.DTYPES


def test_class_attribute_chain_targets() -> None:
    """`self.__class__.table[-1] = 1`: the bound `self` is an instance of a class holding the
    tensor (a namespace entry named `__class__` is not what `self.__class__` reads), so cases
    run; a wrong rewrite of it is still caught."""
    verdict = verify_statements("self.__class__.table[-1] = 1", "self.__class__.table[-1].fill_(1)",
                                "self.__class__.table", 1)
    assert verdict.verified and verdict.dtypes == equivalence.DTYPES
    wrong = verify_statements("self.__class__.table[-1] = 1", "self.__class__.table[-1:0].fill_(1)",
                              "self.__class__.table", 1)
    assert wrong.verified is False


# -- level 1: the matrix, built by the real fixer ---------------------------------------------


def test_matrix_entries_come_from_the_fixer() -> None:
    entries = matrix.entries()
    assert len(entries) == (len(matrix.INDEX_FORMS_1D) + len(matrix.INDEX_FORMS_2D)) * len(matrix.VALUES)
    by_original = {(e.rank, e.original): e for e in entries}
    assert by_original[(1, "t[-1] = 0")].bare == "t[-1].zero_()"
    assert by_original[(1, "t[i] = 7")].bare == "t.select(0, i).fill_(7)"
    assert by_original[(2, "t[i, j] = 2.5")].gated[0].startswith("if current_platform.is_rocm():")


def test_matrix_level1_all_equivalent() -> None:
    rows = run.matrix_rows(NO_DEVICE)
    assert len(rows) == len(matrix.entries()) + 1  # + the H2D002 capture row
    bad = [(r.original, r.detail) for r in rows if r.equivalent is not True]
    assert not bad


def test_wrong_matrix_entry_fails_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = matrix.MatrixEntry(1, "t[i] = 0", "t[i:i+1].zero_()", ())
    monkeypatch.setattr(matrix, "entries", lambda: [wrong])
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(paths=[], matrix=True, no_fake_cuda=True, no_gpu=True)
    assert run.run_verify(args, out, err) == 1
    assert "NOT VERIFIED matrix rank 1" in out.getvalue()


# -- level 4: H2D002 ------------------------------------------------------------------------


def test_capture_sequence_device_only_zero_form() -> None:
    pairs = capture.matrix_pairs()
    assert [p.rewritten for p in pairs] == [""]  # the real fixer removes the CPU zero
    verdict = capture.simulate(pairs[0])
    assert verdict.verified and verdict.device_equal
    assert verdict.original_lengths == (0, 0, 0, 0)
    assert verdict.fixed_lengths == (3, 1, 5, 2) and all(x > 0 for x in verdict.fixed_lengths)


def test_capture_sequence_catches_a_fix_that_keeps_the_cpu_zero() -> None:
    wrong = StatementPair("H2D002", "x.py", 1, "m.query_start_loc_cpu.zero_()", "m.query_start_loc_cpu.fill_(0)",
                          "m.query_start_loc_cpu", None, "safe")
    verdict = capture.simulate(wrong)
    assert not verdict.verified and verdict.fixed_lengths == (0, 0, 0, 0)


# -- the command ----------------------------------------------------------------------------


def test_verify_fixture_file_every_finding_verified() -> None:
    pairs, notes = run.file_pairs([str(FIXTURE)])
    assert {p.code for p in pairs} == {"H2D001", "H2D002"} and len(pairs) >= 10
    rows = run.pair_rows(pairs, NO_DEVICE)
    assert all(r.equivalent is True for r in rows), [(r.label, r.detail) for r in rows if r.equivalent is not True]
    seed = next(p for p in pairs if p.original.startswith("cu[0] = 0"))
    assert "cu[0].zero_()" in seed.rewritten and seed.rank == 1


def test_cli_verify_fixture_file_exit_0() -> None:
    result = run_cli("verify", "--no-fake-cuda", str(FIXTURE))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "`cu[0] = 0  # the seed (vLLM PR #56170)`" in result.stdout
    assert "NOT VERIFIED" not in result.stdout and " verified equivalent." in result.stdout


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["verify", "--matrix", str(FIXTURE)]) == 2
    assert "takes no paths" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["verify", "--no-such-option"])
    assert exc.value.code == 2


def test_cli_without_torch(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import lint_h2d.verify as verify

    monkeypatch.setattr(verify, "torch_available", lambda: False)
    assert cli.main(["verify", "--matrix"]) == 2
    assert "needs PyTorch" in capsys.readouterr().err


def test_torch_warnings_come_after_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Warnings raised while the cases run are printed after the table, never inside it."""
    import argparse
    import io
    import warnings

    import lint_h2d.verify.run as run_module
    from lint_h2d.verify import run_verify

    def noisy(args: argparse.Namespace, out: io.StringIO, err: io.StringIO) -> int:
        out.write("| table row 1 |\n")
        warnings.warn("torch says something", UserWarning)
        out.write("| table row 2 |\n")
        return 0

    monkeypatch.setattr(run_module, "run_verify", noisy)
    out, err = io.StringIO(), io.StringIO()
    assert run_verify(argparse.Namespace(), out, err) == 0
    assert out.getvalue() == "| table row 1 |\n| table row 2 |\n"
    assert "UserWarning: torch says something" in err.getvalue()
