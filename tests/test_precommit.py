"""The pre-commit hooks for real: `pre-commit try-repo` builds the hook's environment with pip
(so the package installs from a clone) and runs `lint-h2d` on the files pre-commit passes.

Marked `network`: building the environment downloads libcst from the package index; the test
skips cleanly when pip cannot reach it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.network

FLAGGED = '''\
import torch


def build(n: int, device: torch.device) -> torch.Tensor:
    cu_seqlens = torch.empty(n + 1, dtype=torch.int32, device=device)
    cu_seqlens[0] = 0
    return cu_seqlens
'''

CLEAN = '''\
def add(a: int, b: int) -> int:
    return a + b
'''

# A fixed identity and date: the same tree gives the same commit.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "lint-h2d tests", "GIT_AUTHOR_EMAIL": "tests@lint-h2d.invalid",
    "GIT_COMMITTER_NAME": "lint-h2d tests", "GIT_COMMITTER_EMAIL": "tests@lint-h2d.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _env(tmp: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_ENV)
    env["HOME"] = env.get("HOME", str(tmp))
    env["PRE_COMMIT_HOME"] = str(tmp / "pre-commit-home")  # outside the repository
    env.pop("PYTHONPATH", None)  # the hook must run the installed package, not this checkout
    env.pop("CI", None)
    return env


def _git(*args: str, cwd: Path, env: Dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=str(cwd), env=env, check=True, capture_output=True, timeout=120)


def _pip_reaches_index() -> bool:
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", "libcst"],
            capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _tree_files() -> List[str]:
    """The working tree as a commit would hold it: tracked and untracked, minus ignored files."""
    if shutil.which("git") and (REPO / ".git").exists():
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=str(REPO), capture_output=True, check=True,
        )
        return [p for p in proc.stdout.decode().split("\0") if p and (REPO / p).is_file()]
    skip = {".git", "__pycache__", ".lint_h2d_cache", ".pytest_cache", ".mypy_cache", ".hypothesis"}
    return [
        p.relative_to(REPO).as_posix() for p in REPO.rglob("*")
        if p.is_file() and not (set(p.relative_to(REPO).parts) & skip)
        and not any(part.endswith(".egg-info") for part in p.relative_to(REPO).parts)
    ]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed copy of this working tree: try-repo sees uncommitted work too, in CI and locally."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not _pip_reaches_index():
        pytest.skip("pip cannot reach the package index (needed to build the hook environment)")
    copy = tmp_path_factory.mktemp("hook-repo")
    for rel in _tree_files():
        target = copy / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    env = _env(copy)
    _git("init", "-q", cwd=copy, env=env)
    _git("add", "-A", cwd=copy, env=env)
    _git("commit", "-q", "--no-verify", "-m", "hook repo", cwd=copy, env=env)
    return copy


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    env = _env(tmp_path)
    _git("init", "-q", cwd=work, env=env)
    (work / "builder.py").write_text(FLAGGED)
    (work / "clean.py").write_text(CLEAN)
    _git("add", "-A", cwd=work, env=env)
    return work


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One PRE_COMMIT_HOME for the `pre-commit run` checks: the hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _run_hook(hook_repo: Path, store: Path, hook: str, work: Path, *files: str) -> subprocess.CompletedProcess:
    """`pre-commit run` with a config naming the hook repo (what a user's config does)."""
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=str(hook_repo), capture_output=True,
                         text=True, check=True).stdout.strip()
    config = work.parent / "pre-commit-config.yaml"
    config.write_text(yaml.safe_dump(
        {"repos": [{"repo": str(hook_repo), "rev": rev, "hooks": [{"id": "lint-h2d"}, {"id": "lint-h2d-fix"}]}]}
    ))
    env = _env(work.parent)
    env["PRE_COMMIT_HOME"] = str(store)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "-c", str(config), "--color", "never",
         "--files", *files],
        cwd=str(work), env=env, capture_output=True, text=True, timeout=900,
    )


def _try_repo(hook_repo: Path, hook: str, work: Path, *files: str) -> subprocess.CompletedProcess:
    env = _env(work.parent)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook,
         "--ref", "HEAD", "--color", "never", "--files", *files],
        cwd=str(work), env=env, capture_output=True, text=True, timeout=900,
    )


def test_manifest_declares_both_hooks() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"lint-h2d", "lint-h2d-fix"}
    # --force-exclude: pre-commit names files explicitly; the configured excludes still hold.
    assert by_id["lint-h2d"]["entry"] == "lint-h2d check --force-exclude"
    assert by_id["lint-h2d-fix"]["entry"] == "lint-h2d check --fix --force-exclude"
    for hook in hooks:
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi"]
        assert hook["require_serial"] is True
        assert hook["minimum_pre_commit_version"]


def test_manifest_is_valid_for_pre_commit() -> None:
    from pre_commit.clientlib import load_manifest

    load_manifest(str(REPO / ".pre-commit-hooks.yaml"))


def test_try_repo_check_hook_fails_on_finding(hook_repo: Path, project: Path) -> None:
    proc = _try_repo(hook_repo, "lint-h2d", project, "builder.py", "clean.py")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Failed" in out, out
    assert "builder.py:6:5: H2D001" in out, out
    assert (project / "builder.py").read_text() == FLAGGED  # check never writes


def test_check_hook_passes_clean_file(hook_repo: Path, store: Path, project: Path) -> None:
    proc = _run_hook(hook_repo, store, "lint-h2d", project, "clean.py")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Passed" in out, out


def test_fix_hook_rewrites_and_fails_like_a_modifying_hook(hook_repo: Path, store: Path, project: Path) -> None:
    proc = _run_hook(hook_repo, store, "lint-h2d-fix", project, "builder.py")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "files were modified by this hook" in out, out
    fixed = (project / "builder.py").read_text()
    assert fixed != FLAGGED
    assert "cu_seqlens[0].zero_()" in fixed
    # After the fix the check hook passes on the same file.
    subprocess.run(["git", "add", "-A"], cwd=str(project), env=_env(project.parent), check=True)
    proc = _run_hook(hook_repo, store, "lint-h2d", project, "builder.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
