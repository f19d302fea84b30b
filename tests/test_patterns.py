"""Globs mean what they mean to git: checked against `git check-ignore` (issue 16 items 16, 17)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

from lint_h2d.patterns import BadPattern, GitPattern, ignored, parse_lines

FILES = [
    "a.py", "_a.py", "b.py", "-.py", "]x.py", "sub/a.py", "sub/_a.py", "pkg/a.py", "pkg/x/y/a.py",
    "legacy/old.py", "deep/legacy/old.py", "abc/d.py", "doc/a b.py", "x.pyc", "A.py", "#c.py",
]
PATTERNS = [
    "[!_]*.py", "[^_]*.py", "[]x]*.py", "[a-c].py", "[[:upper:]].py", "[[:alpha:]_].py", "*.py",
    "/a.py", "sub/", "legacy/", "/legacy/", "pkg/**/*.py", "**/legacy", "pkg/**", "a**.py",
    "sub/*", "?.py", "\\#c.py", "doc/a\\ b.py", "doc/a b.py   ", "[-].py", "*.py[co]", "!x",
    "deep/**/old.py", "**/*.py",
]


def _git_ignored(root: Path, pattern: str) -> List[str]:
    (root / ".gitignore").write_text(pattern + "\n")
    result = subprocess.run(["git", "check-ignore", "--no-index", "--", *FILES], cwd=root,
                            capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return sorted(result.stdout.splitlines())


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("globs")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


@pytest.mark.parametrize("pattern", PATTERNS)
def test_agrees_with_git_check_ignore(repo: Path, pattern: str) -> None:
    patterns, bad = parse_lines(pattern + "\n", "")
    assert not bad
    ours = sorted(f for f in FILES if ignored(patterns, f, False))
    assert ours == _git_ignored(repo, pattern)


@pytest.mark.parametrize("pattern", ["[z-a].py", "[].py", "[", "x[", "[[:nope:]].py"])
def test_bad_patterns_are_reported_not_raised_from_the_scan(pattern: str) -> None:
    with pytest.raises(BadPattern):
        GitPattern.parse(pattern)
    patterns, bad = parse_lines(f"*.tmp\n{pattern}\nbuild/\n", "")
    assert [b[0] for b in bad] == [2]
    assert len(patterns) == 2  # the good lines still count


def test_negated_class_is_not_inverted() -> None:
    """`[!_]*.py` is "not starting with _" to git (it was read as a literal `!`)."""
    p = GitPattern.parse("[!_]*.py")
    assert p is not None
    assert p.matches("a.py", False) and not p.matches("_a.py", False)


def test_double_star_matches_zero_folders() -> None:
    p = GitPattern.parse("pkg/**/*.py")
    assert p is not None and p.matches("pkg/a.py", False) and p.matches("pkg/x/a.py", False)
