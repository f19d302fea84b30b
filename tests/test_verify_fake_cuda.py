"""Level 2: the host→device copy seen in the aten trace of fake CUDA tensors (no GPU needed).

The fake CUDA guard is a tiny C++ extension built once into ~/.cache/lint-h2d/torch_ext.
If it cannot be built the tests FAIL, loudly, unless LINT_H2D_NO_COMPILER=1 says that this
machine has no compiler on purpose (then they skip with that reason).
"""
from __future__ import annotations

import os
from typing import Iterator

import pytest

torch = pytest.importorskip("torch")

from lint_h2d import cli  # noqa: E402
from lint_h2d.verify import fake_cuda  # noqa: E402
from lint_h2d.verify.fake_cuda import trace_statement  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def fake_cuda_ready() -> Iterator[str]:
    try:
        how = fake_cuda.ensure_fake_cuda()
    except fake_cuda.FakeCudaUnavailable as exc:
        if os.environ.get("LINT_H2D_NO_COMPILER") == "1":
            pytest.skip(f"LINT_H2D_NO_COMPILER=1: {exc}")
        pytest.fail(f"level 2 (fake CUDA) unavailable — set LINT_H2D_NO_COMPILER=1 to skip on purpose: {exc}",
                    pytrace=False)
    yield how


def test_1d_scalar_write_copies_rewrite_does_not() -> None:
    before = trace_statement("t[0] = 0", "t", torch.int32, (5,), {}, None)
    after = trace_statement("t[:1].zero_()", "t", torch.int32, (5,), {}, None)
    assert before.h2d_copies == 1, before.summary()
    assert any(str(op) == "aten.copy_.default(T[]@cuda, T[]@cpu)" for op in before.ops), before.summary()
    assert after.h2d_copies == 0 and [op.name for op in after.ops] == ["aten.slice.Tensor", "aten.zero_.default"]


def test_2d_ij_write_copies_rewrite_does_not() -> None:
    before = trace_statement("t[i, j] = 2.5", "t", torch.float16, (5, 5), {"i": 1, "j": -1}, None)
    after = trace_statement("t[i, j].fill_(2.5)", "t", torch.float16, (5, 5), {"i": 1, "j": -1}, None)
    assert before.h2d_copies == 1 and after.h2d_copies == 0, (before.summary(), after.summary())


def test_row_write_of_2d_tensor_does_not_copy() -> None:
    """`t2[0] = 0` fills a row (fill_ with a CPU scalar): not the slow case, as the brief says."""
    assert trace_statement("t[0] = 0", "t", torch.float32, (5, 5), {}, None).h2d_copies == 0


def test_gated_rewrite_on_the_rocm_branch_does_not_copy() -> None:
    gated = "if current_platform.is_rocm():\n    t[-1:].fill_(7)\nelse:\n    t[-1] = 7"
    assert trace_statement(gated, "t", torch.int64, (5,), {}, True).h2d_copies == 0
    assert trace_statement(gated, "t", torch.int64, (5,), {}, False).h2d_copies == 1


def test_installed_torch_still_copies_for_scalar_setitem() -> None:
    """Upstream tried to switch scalar setitem to fill_ (PRs #186482, #188267, #189105); 2.13 copies."""
    copies = fake_cuda.scalar_setitem_copies()
    if torch.__version__.startswith("2.13."):
        assert copies is True
    assert isinstance(copies, bool)


def test_verify_matrix_prints_full_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["verify", "--matrix", "--no-gpu"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| matrix rank")]
    assert len(rows) == 66
    assert all("| yes |" in r for r in rows)
    copies = fake_cuda.scalar_setitem_copies()
    expect = "| yes | yes | no |" if copies else "| yes | no | no |"
    one_d = [r for r in rows if r.startswith("| matrix rank 1")]
    ij = [r for r in rows if "`t[i, j] =" in r]
    assert one_d and ij and all(expect in r for r in one_d + ij), [r for r in one_d + ij if expect not in r]
    assert "67/67 verified equivalent." in out
    assert "still a host→device copy" in out or "no host→device copy" in out


def test_zero_dim_integer_tensor_index_selects_and_copies() -> None:
    """Issue 17 item 8: a 0-dim integer tensor index is read back (`_local_scalar_dense`, i.e.
    `.item()`), then `select` picks one element and the value is copied host→device, exactly
    as for a Python int; a float 0-dim tensor or a 1-element 1-D index does not."""
    env = {"torch": torch}
    before = trace_statement("g = torch.tensor(2)\nt[1, g] = 5", "t", torch.float32, (4, 4), env, None)
    names = [op.name for op in before.ops]
    assert before.h2d_copies == 1, before.summary()
    assert "aten._local_scalar_dense.default" in names, before.summary()
    assert names.index("aten._local_scalar_dense.default") < names.index("aten.copy_.default")
    rewrite = trace_statement("g = torch.tensor(2)\nt[1].select(0, g).fill_(5)", "t", torch.float32, (4, 4),
                              env, None)
    assert rewrite.h2d_copies == 0 and rewrite.error is None, rewrite.summary()
    # A one-element 1-D index tensor is advanced indexing (index_put_), not a select + copy_.
    advanced = trace_statement("g = torch.tensor([2])\nt[1, g] = 5", "t", torch.float32, (4, 4), env, None)
    assert "aten._local_scalar_dense.default" not in [op.name for op in advanced.ops], advanced.summary()


def test_zero_dim_integer_index_on_the_device_is_read_back() -> None:
    """With the index itself on the GPU, PyTorch needs its value on the host: the fake tensor
    cannot give it (data-dependent), which is the device→host read-back the message mentions."""
    before = trace_statement("g = torch.tensor(2, device='cuda')\nt[1, g] = 5", "t", torch.float32, (4, 4),
                             {"torch": torch}, None)
    assert before.error is not None and "_local_scalar_dense" in before.error, before.summary()


def test_a_lock_left_by_a_killed_build_is_cleared(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """torch's load_inline waits forever on a leftover `lock`: an old one goes, a fresh one
    (a build in progress) stays, and a folder without one is left alone."""
    import os

    from lint_h2d.verify.fake_cuda import STALE_LOCK_SECONDS, clear_stale_lock

    lock = tmp_path / "lock"
    assert clear_stale_lock(tmp_path) is False
    lock.write_text("")
    assert clear_stale_lock(tmp_path) is False and lock.exists()
    old = lock.stat().st_mtime - STALE_LOCK_SECONDS - 5
    os.utime(lock, (old, old))
    assert clear_stale_lock(tmp_path) is True and not lock.exists()


def test_a_fresh_lock_of_a_dead_build_is_cleared_under_the_build_lock(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A killed build leaves torch's `lock` however young: holding `build_lock` (a `flock` the
    kernel drops with its process) proves no live build owns it, so it goes at once; a second
    builder waits while the first holds it."""
    import threading

    fcntl = pytest.importorskip("fcntl")
    from lint_h2d.verify.fake_cuda import build_lock

    lock = tmp_path / "lock"
    lock.write_text("")  # just now, by a build that died
    with build_lock(tmp_path):
        assert not lock.exists()
    # Another process's build in progress: its flock held on another open file.
    with open(tmp_path / "build.flock", "a+b") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        lock.write_text("")  # that build's own torch lock
        entered = threading.Event()

        def second() -> None:
            with build_lock(tmp_path):
                entered.set()

        thread = threading.Thread(target=second, daemon=True)
        thread.start()
        assert not entered.wait(0.3) and lock.exists()  # waits, and leaves the live build's lock
        lock.unlink()
        fcntl.flock(other.fileno(), fcntl.LOCK_UN)
        assert entered.wait(30)
        thread.join(30)
