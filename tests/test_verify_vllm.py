"""`verify` on real vLLM 0.33.0 code (downloaded once into ~/.cache/lint-h2d, never committed):
the qwen4_exp QSA cache and the MiniMax M3 builder as it was before vLLM PR #56170."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from lint_h2d.verify import run  # noqa: E402
from tests.corpus import corpus_tree  # noqa: E402

pytestmark = pytest.mark.network

QSA = "vllm/models/qwen4_exp/common/qsa_cache.py"
MINIMAX = "vllm/models/minimax_m3/common/sparse_attention.py"
GATED = (
    "            if current_platform.is_rocm():\n"
    "                prefill_cu_seqlens_k[:1].zero_()\n"
    "            else:\n"
    "                prefill_cu_seqlens_k[0] = 0\n"
)
NO_DEVICE = run.Levels(fake_cuda=None, fake_cuda_reason="equivalence only", gpu=False)


@pytest.fixture(scope="module")
def vllm_root() -> Path:
    return corpus_tree("vllm", "0.33.0", "vllm")


def _verified(path: Path) -> list:
    pairs, _ = run.file_pairs([str(path)])
    rows = run.pair_rows(pairs, NO_DEVICE)
    assert rows, f"no fix found in {path}"
    assert all(r.equivalent is True for r in rows), [(r.label, r.detail) for r in rows if r.equivalent is not True]
    return pairs


def test_verify_qsa_cache(vllm_root: Path, tmp_path: Path) -> None:
    target = tmp_path / QSA
    target.parent.mkdir(parents=True)
    shutil.copy2(vllm_root / QSA, target)
    pairs = _verified(target)
    assert any(p.original.endswith("[0] = 0") and "current_platform.is_rocm()" in p.rewritten for p in pairs)


def test_verify_minimax_before_pr_56170(vllm_root: Path, tmp_path: Path) -> None:
    text = (vllm_root / MINIMAX).read_text()
    assert text.count(GATED) == 1, "the 0.33.0 MiniMax file no longer has the gated form"
    target = tmp_path / MINIMAX
    target.parent.mkdir(parents=True)
    target.write_text(text.replace(GATED, "            prefill_cu_seqlens_k[0] = 0\n"))
    pairs = _verified(target)
    seed = [p for p in pairs if p.original == "prefill_cu_seqlens_k[0] = 0"]
    assert len(seed) == 1 and "prefill_cu_seqlens_k[:1].zero_()" in seed[0].rewritten
