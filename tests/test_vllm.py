"""The seeds and known sites on the real vLLM 0.33.0 tree (downloaded at test time, cached
outside the repository under ~/.cache/lint-h2d, never committed).

Inputs for the end-to-end seed tests are built here from the wheel: the code before vLLM PR
#56170 (MiniMax M3, H2D001) and before PR #51585 (ROCm attention, H2D002).
"""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.corpus import corpus_tree

pytestmark = pytest.mark.network

MINIMAX = "vllm/models/minimax_m3/common/sparse_attention.py"
ROCM_ATTN = "vllm/v1/attention/backends/rocm_attn.py"
GATED = (
    "            if current_platform.is_rocm():\n"
    "                prefill_cu_seqlens_k[:1].zero_()\n"
    "            else:\n"
    "                prefill_cu_seqlens_k[0] = 0\n"
)
IMPORT = "from vllm.platforms import current_platform\n"


@pytest.fixture(scope="module")
def vllm_root() -> Path:
    return corpus_tree("vllm", "0.33.0", "vllm")


def findings(*args: str, cwd: Path) -> list:
    result = run_cli("check", "--no-cache", "--output-format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr + result.stdout
    return json.loads(result.stdout)


def test_known_h2d001_sites_are_found(vllm_root: Path) -> None:
    files = [
        "vllm/models/qwen4_exp/common/qsa_cache.py",
        "vllm/models/qwen4_exp/amd/model_state.py",
        "vllm/models/qwen4_exp/nvidia/model_state.py",
        "vllm/v1/worker/gpu/input_batch.py",
        MINIMAX,  # the fixed, gated form: silent
    ]
    found = findings("--select", "H2D001", *files, cwd=vllm_root)
    sites = sorted((Path(f["filename"]).relative_to(vllm_root).as_posix(), f["location"]["row"]) for f in found)
    assert sites == [
        ("vllm/models/qwen4_exp/amd/model_state.py", 122),
        ("vllm/models/qwen4_exp/common/qsa_cache.py", 549),
        ("vllm/models/qwen4_exp/nvidia/model_state.py", 125),
    ]
    assert all("k_start_loc" in f["message"] or "query_start_loc" in f["message"] for f in found)


def test_minimax_seed_fix_restores_the_released_file(vllm_root: Path, tmp_path: Path) -> None:
    released = (vllm_root / MINIMAX).read_bytes()
    text = released.decode("utf-8")
    assert text.count(GATED) == 1
    before = text.replace(GATED, "            prefill_cu_seqlens_k[0] = 0\n")
    target = tmp_path / "vllm" / "models" / "minimax_m3" / "common" / "sparse_attention.py"
    target.parent.mkdir(parents=True)
    target.write_text(before, encoding="utf-8")
    report = findings(str(target), cwd=tmp_path)
    assert [(f["code"], f["location"]["row"]) for f in report] == [("H2D001", 320)]
    assert report[0]["fix"]["applicability"] == "safe"
    result = run_cli("fix", "--no-cache", str(target), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == released


def test_minimax_seed_fix_adds_the_import_once(vllm_root: Path, tmp_path: Path) -> None:
    text = (vllm_root / MINIMAX).read_text(encoding="utf-8")
    before = text.replace(GATED, "            prefill_cu_seqlens_k[0] = 0\n").replace(IMPORT, "", 1)
    assert IMPORT not in before
    target = tmp_path / "sparse_attention.py"
    target.write_text(before, encoding="utf-8")
    result = run_cli("fix", "--no-cache", "--config", str(_config(tmp_path, 'fix-gate = "vllm"')), str(target), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    after = target.read_text(encoding="utf-8")
    assert after.count(IMPORT) == 1
    assert GATED in after
    ast.parse(after)
    # A second run changes nothing.
    again = run_cli("fix", "--no-cache", "--config", str(tmp_path / "lint-h2d.toml"), str(target), cwd=tmp_path)
    assert again.returncode == 0 and target.read_text(encoding="utf-8") == after


def _config(folder: Path, body: str) -> Path:
    path = folder / "lint-h2d.toml"
    path.write_text(body + "\n", encoding="utf-8")
    return path


def test_rocm_attention_seed_h2d002(vllm_root: Path, tmp_path: Path) -> None:
    released = (vllm_root / ROCM_ATTN).read_bytes()
    lines = released.decode("utf-8").splitlines(keepends=True)
    anchor = next(i for i, line in enumerate(lines) if line.strip() == "common_attn_metadata.query_start_loc.zero_()")
    lines.insert(anchor + 1, "        common_attn_metadata.query_start_loc_cpu.zero_()\n")
    target = tmp_path / "rocm_attn.py"
    target.write_text("".join(lines), encoding="utf-8")
    # The dataclass with the `_cpu` pair lives in another file of the tree: give it too.
    backend = tmp_path / "backend.py"
    shutil.copy(vllm_root / "vllm/v1/attention/backend.py", backend)
    report = [f for f in findings(str(target), str(backend), cwd=tmp_path) if f["code"] == "H2D002"]
    assert [(f["location"]["row"]) for f in report] == [anchor + 2]
    assert report[0]["fix"]["applicability"] == "safe"
    result = run_cli("fix", "--no-cache", "--select", "H2D002", str(target), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == released


def test_unmodified_rocm_attention_is_silent(vllm_root: Path) -> None:
    assert findings("--select", "H2D002", ROCM_ATTN, "vllm/v1/attention/backend.py", cwd=vllm_root) == []
