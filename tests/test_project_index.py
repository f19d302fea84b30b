"""Cross-file facts reach one-file runs (pre-commit) through the project index."""
from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli
from tests.test_cli import write

META = (
    "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\n"
    "class CommonAttentionMetadata:\n    query_start_loc: torch.Tensor\n"
    "    query_start_loc_cpu: torch.Tensor\n"
)
BUILDER = "def build(meta):\n    meta.query_start_loc[0] = 0\n"


def project(tmp_path: Path) -> Path:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path, "pkg/meta.py", META)
    write(tmp_path, "pkg/builder.py", BUILDER)
    return tmp_path


def rows(result) -> list:  # type: ignore[no-untyped-def]
    return [line.split(": ")[0] for line in result.stdout.splitlines() if ": H2D" in line]


def test_one_file_run_agrees_with_the_repo_scan(tmp_path: Path) -> None:
    root = project(tmp_path)
    scan = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root)
    one = run_cli("check", "--no-cache", "--output-format", "concise", "pkg/builder.py", cwd=root)
    assert rows(scan) == rows(one) == ["pkg/builder.py:2:5"]


def test_index_is_cached_and_follows_changes(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert rows(run_cli("check", "--output-format", "concise", "pkg/builder.py", cwd=root)) == ["pkg/builder.py:2:5"]
    index = root / ".lint_h2d_cache" / "project-index.json"
    data = json.loads(index.read_text())
    assert str((root / "pkg/meta.py").resolve()) in {str(Path(k).resolve()) for k in data["files"]}
    # The pair disappears: the index notices the change and the finding goes.
    meta = root / "pkg/meta.py"
    meta.write_text(META.replace("query_start_loc_cpu", "other_cpu"))
    os.utime(meta, ns=(meta.stat().st_atime_ns, meta.stat().st_mtime_ns + 10_000_000))
    assert rows(run_cli("check", "--output-format", "concise", "pkg/builder.py", cwd=root)) == []


def test_no_index_outside_a_project(tmp_path: Path) -> None:
    """Without pyproject.toml or .git the folder is not a project: only the named files count."""
    write(tmp_path, "pkg/meta.py", META)
    write(tmp_path, "pkg/builder.py", BUILDER)
    assert rows(run_cli("check", "--no-cache", "--output-format", "concise", "pkg/builder.py", cwd=tmp_path)) == []
    assert rows(run_cli("check", "--no-cache", "--output-format", "concise", "pkg", cwd=tmp_path)) == ["pkg/builder.py:2:5"]
