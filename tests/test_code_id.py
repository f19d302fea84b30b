"""The caches follow the tool's own code (code_id.py): an edited checkout never answers from
findings or summaries an older build recorded."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from lint_h2d.code_id import code_id, sources_fingerprint
from lint_h2d.project_index import index_key
from tests.conftest import REPO

FLAGGED = (
    "import torch\n\n\ndef build(n, device):\n"
    "    t = torch.empty(n + 1, dtype=torch.int32, device=device)\n    t[0] = 0\n    return t\n"
)


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("A = 1\n", encoding="utf-8")
    (root / "sub" / "b.py").write_text("B = 2\n", encoding="utf-8")
    return root


def test_fingerprint_follows_sources_only(tmp_path: Path) -> None:
    root = _package(tmp_path)
    first = sources_fingerprint([str(root)])
    assert sources_fingerprint([str(root)]) == first
    # Bytecode, data files and other suffixes do not count.
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (root / "notes.txt").write_text("x", encoding="utf-8")
    assert sources_fingerprint([str(root)]) == first
    # An edit (new size), a touch (new mtime), an added and a renamed file all count.
    seen = {first}
    (root / "a.py").write_text("A = 10\n", encoding="utf-8")
    seen.add(sources_fingerprint([str(root)]))
    st = os.stat(root / "sub" / "b.py")
    os.utime(root / "sub" / "b.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    seen.add(sources_fingerprint([str(root)]))
    (root / "sub" / "c.py").write_text("", encoding="utf-8")
    seen.add(sources_fingerprint([str(root)]))
    (root / "sub" / "c.py").rename(root / "sub" / "d.py")
    seen.add(sources_fingerprint([str(root)]))
    assert len(seen) == 5


def test_index_key_carries_the_build() -> None:
    from lint_h2d.config import Resolver

    settings = Resolver().for_path(str(REPO / "examples"))
    assert index_key(settings)["code"] == code_id() and len(code_id()) == 24


def _run(build: Path, tree: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(build))
    out = subprocess.run([sys.executable, "-m", "lint_h2d", "check", ".", "--output-format", "concise",
                          "-q", "--exit-zero", "--cache-dir", ".c"], cwd=str(tree), env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_edited_build_does_not_answer_from_the_old_cache(tmp_path: Path) -> None:
    """A checkout whose rule changed (same `__version__`) reports what the new code says on a
    warm cache, not what the old code recorded."""
    build = tmp_path / "build"
    for name in ("lint_h2d", "fixers"):
        shutil.copytree(REPO / name, build / name, ignore=shutil.ignore_patterns("__pycache__"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[tool.lint-h2d]\n", encoding="utf-8")
    (tree / "a.py").write_text(FLAGGED, encoding="utf-8")
    before = _run(build, tree)
    assert "Scalar write into one element" in before and _run(build, tree) == before
    rule = build / "lint_h2d" / "rules" / "scalar_write_to_device_tensor.py"
    text = rule.read_text(encoding="utf-8")
    assert "Scalar write into one element" in text
    rule.write_text(text.replace("Scalar write into one element", "Edited: scalar write into one element"),
                    encoding="utf-8")
    after = _run(build, tree)
    assert "Edited: scalar write into one element" in after
    assert after == _run(build, tree)  # and that answer is cached in turn
