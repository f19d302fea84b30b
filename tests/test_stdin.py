"""`lint-h2d check - --stdin-filename PATH`: code from stdin, named by PATH."""
from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REPO, run_cli

FLAGGED = (REPO / "examples" / "attention_builder.py").read_text()
CLEAN = "def f(x):\n    return x + 1\n"


def test_reports_with_the_given_name() -> None:
    proc = run_cli("check", "-", "--stdin-filename", "pkg/builder.py", "--output-format", "concise", stdin=FLAGGED)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("pkg/builder.py:11:9: H2D001 [*] ")
    assert "Found 2 errors." in proc.stdout


def test_clean_source_exits_zero() -> None:
    proc = run_cli("check", "-", "--stdin-filename", "ok.py", stdin=CLEAN)
    assert proc.returncode == 0, proc.stderr
    assert "All checks passed!" in proc.stdout


def test_without_a_name() -> None:
    proc = run_cli("check", "-", "--output-format", "json", stdin=FLAGGED)
    assert proc.returncode == 1
    assert {d["code"] for d in json.loads(proc.stdout)} == {"H2D001"}


def test_fix_prints_only_the_fixed_source(tmp_path: Path) -> None:
    proc = run_cli("check", "-", "--stdin-filename", "builder.py", "--fix", stdin=FLAGGED, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "cu_seqlens_k[0].zero_()" in proc.stdout
    assert "if torch.version.hip is not None:" in proc.stdout  # auto gate outside vLLM
    compile(proc.stdout, "builder.py", "exec")
    assert "Found" not in proc.stdout and "fixed" not in proc.stdout
    assert not (tmp_path / "builder.py").exists()  # nothing is written


def test_fix_of_clean_source_echoes_it() -> None:
    proc = run_cli("check", "-", "--stdin-filename", "ok.py", "--fix", stdin=CLEAN)
    assert proc.returncode == 0
    assert proc.stdout == CLEAN


def test_fix_with_remaining_findings_exits_one_and_reports_on_stderr() -> None:
    source = "import torch\n\ndef f(i: int):\n    t = torch.zeros(4, device='cuda')\n    t[0] = i\n"
    proc = run_cli("check", "-", "--stdin-filename", "m.py", "--fix", stdin=source)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == source  # only an unsafe fix: the source comes back unchanged
    assert "H2D001" in proc.stderr


def test_vllm_folder_name_alone_does_not_choose_the_vllm_gate() -> None:
    """Issue #15 item 19: the gate follows the file's imports and the project's name."""
    proc = run_cli("check", "-", "--stdin-filename", "vllm/v1/attention/builder.py", "--fix", stdin=FLAGGED)
    assert proc.returncode == 0, proc.stderr
    assert "vllm" not in proc.stdout and "if torch.version.hip is not None:" in proc.stdout
    importing = FLAGGED.replace("import torch\n", "import torch\n\nfrom vllm.platforms import current_platform\n", 1)
    proc = run_cli("check", "-", "--stdin-filename", "builder.py", "--fix", stdin=importing)
    assert proc.returncode == 0, proc.stderr
    assert "if current_platform.is_rocm():" in proc.stdout


def test_diff_prints_the_diff() -> None:
    proc = run_cli("check", "-", "--stdin-filename", "builder.py", "--diff", stdin=FLAGGED)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("--- builder.py\n+++ builder.py\n")
    assert "+            cu_seqlens_k[0].zero_()" in proc.stdout
    proc = run_cli("check", "-", "--stdin-filename", "ok.py", "--diff", stdin=CLEAN)
    assert proc.returncode == 0 and proc.stdout == ""


def test_config_and_per_file_ignores_follow_the_filename(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.lint-h2d]\nper-file-ignores = { "legacy/*" = ["H2D001"] }\n'
    )
    (tmp_path / "legacy").mkdir()
    ignored = run_cli("check", "-", "--stdin-filename", "legacy/old.py", stdin=FLAGGED, cwd=tmp_path)
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    checked = run_cli("check", "-", "--stdin-filename", "new.py", stdin=FLAGGED, cwd=tmp_path)
    assert checked.returncode == 1


def test_config_error_exits_two(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.lint-h2d]\nbogus = 1\n')
    proc = run_cli("check", "-", "--stdin-filename", "m.py", stdin=CLEAN, cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown key `bogus`" in proc.stderr


def test_syntax_error_exits_two() -> None:
    proc = run_cli("check", "-", "--stdin-filename", "bad.py", stdin="import torch\ndef f(:\n")
    assert proc.returncode == 2
    assert "H2D901" in proc.stdout


def test_stdin_cannot_be_mixed_with_paths() -> None:
    proc = run_cli("check", "-", "examples", stdin=CLEAN)
    assert proc.returncode == 2
    assert "cannot be combined" in proc.stderr
