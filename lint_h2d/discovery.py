"""Paths given on the command line → the Python files to check.

Directories are walked (skipping excluded and git-ignored entries, never following symlinked
directories, so loops cannot hang the walk); a file named explicitly is always checked.
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Pattern, Sequence, Set, Tuple

from lint_h2d.config import Settings

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Problem:
    """A path that could not be walked (missing, unreadable): reported, the scan goes on."""

    path: str
    message: str


@lru_cache(maxsize=1024)  # the walk asks for the same few patterns once per path
def _glob_regex(pattern: str) -> Pattern[str]:
    """gitignore-style glob: `*` stays inside a path segment, `**` crosses segments."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                out.append(pattern[i : end + 1].replace("\\", "\\\\"))
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class PathPattern:
    """One exclude/include/gitignore pattern, relative to `base` (a posix path, '' = root)."""

    regex: Pattern[str]
    base: str
    anchored: bool
    directory_only: bool
    negated: bool = False

    @classmethod
    def parse(cls, text: str, base: str = "") -> "PathPattern":
        negated = text.startswith("!")
        if negated:
            text = text[1:]
        directory_only = text.endswith("/")
        text = text.rstrip("/")
        anchored = "/" in text
        text = text.lstrip("/")
        return cls(_glob_regex(text), base, anchored, directory_only, negated)

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.directory_only and not is_dir:
            return False
        if self.base:
            if not rel.startswith(self.base + "/"):
                return False
            rel = rel[len(self.base) + 1 :]
        if self.anchored:
            return bool(self.regex.match(rel))
        return bool(self.regex.match(rel.rsplit("/", 1)[-1]))


def _matches_any(patterns: Sequence[PathPattern], rel: str, is_dir: bool) -> bool:
    result = False
    for p in patterns:
        if p.matches(rel, is_dir):
            result = not p.negated
    return result


def _read_gitignore(folder: Path, base: str) -> List[PathPattern]:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line.startswith("#"):
            continue
        out.append(PathPattern.parse(line, base))
    return out


@lru_cache(maxsize=16)
def _compiled(globs: Tuple[str, ...]) -> Tuple[Tuple[str, PathPattern], ...]:
    """Parsed once per settings, not once per path (a walk of vLLM asks 3,600 times)."""
    return tuple((glob, PathPattern.parse(glob)) for glob in globs)


def _matches_glob_list(globs: Sequence[str], rel: str, is_dir: bool) -> bool:
    """Config excludes: a glob with no slash matches any path segment, else the relative path."""
    for glob, p in _compiled(tuple(globs)):
        if p.matches(rel, is_dir):
            return True
        if p.anchored and not p.directory_only and fnmatch.fnmatchcase(rel, glob.strip("/")):
            return True
    return False


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix().lstrip("./")


def included(settings: Settings, rel: str) -> bool:
    """`include` narrows the walk (e.g. only attention and model files)."""
    if not settings.include:
        return True
    return any(
        fnmatch.fnmatchcase(rel, glob) or fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], glob)
        for glob in settings.include
    )


def excluded(settings: Settings, rel: str, is_dir: bool) -> bool:
    return _matches_glob_list(tuple(settings.exclude) + tuple(settings.extend_exclude), rel, is_dir)


def _explicitly_excluded(settings: Settings, given: str, root: Path) -> bool:
    rel = _relative(Path(given), root)
    parts = rel.split("/")
    for i in range(1, len(parts)):
        if excluded(settings, "/".join(parts[:i]), True):
            return True
    return excluded(settings, rel, False) or not included(settings, rel)


def discover(paths: Sequence[str], settings: Settings,
             folders: Optional[List[str]] = None) -> Tuple[List[str], List[Problem]]:
    """Files to check (deduplicated, in a stable order) and the paths that could not be read.

    `folders`, if given, receives every folder the walk listed (the project index keys its file
    list by their stat: a file added or renamed changes its folder's)."""
    files: List[str] = []
    seen: Set[str] = set()
    problems: List[Problem] = []
    root = settings.root.resolve()

    def add(path: str, key: str) -> None:
        if key not in seen:
            seen.add(key)
            files.append(path)

    for given in paths:
        p = Path(given)
        if not os.path.lexists(given):
            problems.append(Problem(given, "No such file or directory"))
            continue
        if p.is_file() or (p.exists() and not p.is_dir()):
            # Named explicitly: always checked, unless --force-exclude asks to apply the
            # excludes anyway (pre-commit names every staged file, tests included).
            if settings.force_exclude and _explicitly_excluded(settings, given, root):
                continue
            add(given, os.path.realpath(given))
            continue
        if not p.is_dir():
            problems.append(Problem(given, "not a file or directory (broken symlink?)"))
            continue
        # The walk follows no symlinked folder, so resolving the top once names every file
        # it yields uniquely (a realpath per file was a third of a one-file run's time).
        top, real_top = str(p), os.path.realpath(given)
        for found in _walk(p, root, settings, problems, folders):
            add(found, real_top + found[len(top):] if found.startswith(top) else os.path.realpath(found))
    return files, problems


def _walk(top: Path, root: Path, settings: Settings, problems: List[Problem],
          folders: Optional[List[str]] = None) -> Iterator[str]:
    gitignores: Dict[str, List[PathPattern]] = {}
    # .gitignore files from the root down to `top` apply too.
    if settings.respect_gitignore:
        rel_top = _relative(top, root)
        inherited: List[PathPattern] = []
        if not rel_top.startswith(".."):
            parts = [] if rel_top in ("", ".") else rel_top.split("/")
            for i in range(len(parts) + 1):
                base = "/".join(parts[:i])
                inherited += _read_gitignore(root / base if base else root, base)
        gitignores[""] = inherited

    def onerror(err: OSError) -> None:
        problems.append(Problem(str(err.filename), err.strerror or str(err)))

    for dirpath, dirnames, filenames in os.walk(top, onerror=onerror, followlinks=False):
        if folders is not None:
            folders.append(dirpath)
        folder = Path(dirpath)
        rel_folder = _relative(folder, root)
        parent = os.path.dirname(dirpath)
        active = list(gitignores.get(parent, gitignores.get("", [])))
        if settings.respect_gitignore and (folder != top or rel_folder.startswith("..")):
            active += _read_gitignore(folder, rel_folder if not rel_folder.startswith("..") else "")
        gitignores[dirpath] = active
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_folder}/{d}" if rel_folder not in ("", ".") else d
            if excluded(settings, rel, True) or _matches_any(active, rel, True):
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(PYTHON_SUFFIXES):
                continue
            rel = f"{rel_folder}/{name}" if rel_folder not in ("", ".") else name
            if excluded(settings, rel, False) or _matches_any(active, rel, False):
                continue
            if not included(settings, rel):
                continue
            yield os.path.join(dirpath, name)
