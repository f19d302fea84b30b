"""Concurrency (issue #8): two `lint-h2d fix` processes on the same tree at the same time.

Every file must end up either original or correctly fixed (never truncated, interleaved or
fixed twice), a final `check` has no fixable finding left, and the cache that concurrent
`check` runs write stays valid (or is detected as corrupt and rebuilt).
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import REPO

FILES = 16

TEMPLATE = """import torch


def build_{i}(n):
    t = torch.zeros(n, device="cuda")
    t[0] = 0  # slot {i}
{filler}    return t
"""
FIXED_BLOCK = """    if torch.version.hip is not None:
        t[0].zero_()  # slot {i}
    else:
        t[0] = 0  # slot {i}
"""


def write_tree(root: Path) -> Dict[Path, str]:
    (root / "pyproject.toml").write_text("[tool.lint-h2d]\n")
    originals = {}
    for i in range(FILES):
        filler = "".join(f"    x{j} = n + {j}\n" for j in range(i * 3))  # varied sizes
        path = root / f"pkg{i % 3}" / f"mod_{i}.py"
        path.parent.mkdir(exist_ok=True)
        text = TEMPLATE.format(i=i, filler=filler)
        path.write_text(text)
        originals[path] = text
    return originals


def spawn(*args: str, cwd: Path) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", "lint_h2d", *args], cwd=str(cwd), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def expected_fixed(text: str, i: int) -> str:
    return text.replace(f"    t[0] = 0  # slot {i}\n", FIXED_BLOCK.format(i=i))


@pytest.mark.parametrize("round_", range(2))
def test_two_fix_processes_on_the_same_tree(tmp_path: Path, round_: int) -> None:
    originals = write_tree(tmp_path)
    procs = [spawn("fix", "--no-cache", "--jobs", "1", ".", cwd=tmp_path) for _ in range(2)]
    procs.append(spawn("fix", "--jobs", "2", ".", cwd=tmp_path))  # --fix never uses the cache
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        # 0: all fixed by this run; 2: some file changed under it (the other run won): reported.
        assert proc.returncode in (0, 1, 2), (proc.returncode, out, err)
        assert "Traceback" not in err, err
        if proc.returncode == 2:
            assert "changed on disk" in out or "cannot fix" in out, out
    for path, text in originals.items():
        i = int(path.stem.split("_")[1])
        now = path.read_text()
        assert now in (text, expected_fixed(text, i)), f"{path} is neither original nor fixed:\n{now}"
        ast.parse(now)
    leftovers = [p for p in tmp_path.rglob(".lint-h2d-*")]
    assert not leftovers, f"temporary files left behind: {leftovers}"
    final = spawn("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    out, err = final.communicate(timeout=300)
    fixable = [f for f in json.loads(out) if f["fix"] is not None]
    if fixable:  # a file another run changed under a run is left for the next run
        again = spawn("fix", "--no-cache", ".", cwd=tmp_path)
        again.communicate(timeout=300)
        final = spawn("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
        out, err = final.communicate(timeout=300)
        fixable = [f for f in json.loads(out) if f["fix"] is not None]
    assert not fixable, fixable
    for path, text in originals.items():
        assert path.read_text() == expected_fixed(text, int(path.stem.split("_")[1]))


def _cache_files(root: Path) -> List[Path]:
    return sorted((root / ".lint_h2d_cache").glob("*.json"))


def test_concurrent_checks_keep_the_cache_valid(tmp_path: Path) -> None:
    write_tree(tmp_path)
    procs = [spawn("check", "--jobs", "1", "--output-format", "json", ".", cwd=tmp_path) for _ in range(4)]
    results = [p.communicate(timeout=300) for p in procs]
    reference = None
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 1, err
        findings = sorted((f["filename"], f["location"]["row"]) for f in json.loads(out))
        assert len(findings) == FILES
        reference = reference or findings
        assert findings == reference
    caches = _cache_files(tmp_path)
    assert caches, "no cache written"
    for cache in caches:
        data = json.loads(cache.read_text())  # whole, never torn
        assert len(data["files"]) == FILES
    assert not list((tmp_path / ".lint_h2d_cache").glob(".cache-*.tmp")), "temp cache file left"

    # A torn or foreign cache is ignored and rebuilt, never trusted.
    for garbage in ("{\"key\": ", "not json at all", json.dumps({"key": "other", "files": {}}),
                    json.dumps({"key": json.loads(caches[0].read_text())["key"], "files": {"x": 1}})):
        caches[0].write_text(garbage)
        proc = spawn("check", "--jobs", "1", "--output-format", "json", ".", cwd=tmp_path)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 1, err
        assert sorted((f["filename"], f["location"]["row"]) for f in json.loads(out)) == reference
        rebuilt = json.loads(caches[0].read_text())["files"]
        assert len([k for k in rebuilt if k.endswith(".py")]) == FILES, "cache not rebuilt"

    # A cache entry whose findings are malformed for the current file is not trusted either.
    data = json.loads(caches[0].read_text())
    data["files"] = {k: v for k, v in data["files"].items() if isinstance(v, dict)}
    for entry in data["files"].values():
        entry["findings"] = [{"bogus": True}]
    for files in (data["files"], {k: 1 for k in data["files"]}, {k: {"sha256": None} for k in data["files"]}):
        caches[0].write_text(json.dumps({"key": data["key"], "files": files}))
        proc = spawn("check", "--jobs", "1", "--output-format", "json", ".", cwd=tmp_path)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 1, err
        assert sorted((f["filename"], f["location"]["row"]) for f in json.loads(out)) == reference


def test_fix_during_check_with_cache(tmp_path: Path) -> None:
    """A fix running while cached checks run: the checks report either state, never a mix
    that points at lines the file does not have, and the cache ends consistent."""
    originals = write_tree(tmp_path)
    checks = [spawn("check", "--jobs", "1", "--output-format", "json", ".", cwd=tmp_path) for _ in range(2)]
    fixer = spawn("fix", "--jobs", "1", ".", cwd=tmp_path)
    fixer.communicate(timeout=300)
    for proc in checks:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 1, 2), err
        assert "Traceback" not in err
    final = spawn("check", "--jobs", "1", "--output-format", "json", ".", cwd=tmp_path)
    out, err = final.communicate(timeout=300)
    assert final.returncode == 0, (out, err)
    assert json.loads(out) == []
    for path, text in originals.items():
        assert path.read_text() == expected_fixed(text, int(path.stem.split("_")[1]))
