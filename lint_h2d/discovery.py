"""Paths given on the command line → the Python files to check.

Directories are walked (skipping excluded and git-ignored entries, never following symlinked
directories, so loops cannot hang the walk); a file named explicitly is always checked.  Each
folder is walked with its own settings (`config.Resolver`: the nearest `[tool.lint-h2d]`),
and every glob is a gitignore pattern (`patterns.py`).
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Pattern, Sequence, Set, Tuple, Union

from lint_h2d.config import ConfigError, Resolver, Settings, canonical_folder
from lint_h2d.patterns import BadPattern, GitPattern, ignored, last_match, parse_lines

PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"


@dataclass(frozen=True)
class Problem:
    """A path that could not be walked (missing, unreadable): reported, the scan goes on.

    A warning (a skipped FIFO, a bad .gitignore line) is printed but does not make the run fail.
    """

    path: str
    message: str
    warning: bool = False
    # The configuration that applies to the path is invalid (the message names it): the
    # files under it are not checked, the rest of the scan goes on.
    config: bool = False


@lru_cache(maxsize=256)
def compiled(globs: Tuple[str, ...]) -> Tuple[GitPattern, ...]:
    """Config globs as gitignore patterns relative to the project root, parsed once per
    settings (a walk of vLLM asks 3,600 times); bad ones dropped (`glob_warnings` names them)."""
    out = []
    for glob in globs:
        try:
            pattern = GitPattern.parse(glob)
        except BadPattern:
            continue
        if pattern is not None:
            out.append(pattern)
    return tuple(out)


def glob_warnings(settings: Settings) -> List[str]:
    """One message per bad glob in the settings, naming the config file and key."""
    where = str(settings.config_path) if settings.config_path else "settings"
    keyed = [("exclude", g) for g in settings.exclude] + [("extend-exclude", g) for g in settings.extend_exclude]
    keyed += [("include", g) for g in settings.include]
    keyed += [(f"per-file-ignores.{g!r}", g) for g, _ in settings.per_file_ignores]
    messages = []
    for key, glob in keyed:
        try:
            GitPattern.parse(glob)
        except BadPattern as exc:
            messages.append(f"{where}: [tool.lint-h2d] `{key}`: bad pattern {glob!r} ({exc}); ignored")
    return messages


def relative(path: Union[str, Path], root: Path) -> str:
    """`path` relative to the settings' root, as patterns see it; outside the root, the
    absolute path without its leading slash (names still match, anchored globs do not)."""
    absolute = os.path.join(str(canonical_folder(str(path))), os.path.basename(os.path.abspath(path)))
    if os.path.isdir(path):
        absolute = str(canonical_folder(str(path)))
    try:
        return Path(absolute).relative_to(root).as_posix()
    except ValueError:
        return Path(absolute).as_posix().lstrip("/")


def excluded(settings: Settings, rel: str, is_dir: bool) -> bool:
    return _exclude_test(tuple(settings.exclude) + tuple(settings.extend_exclude))(rel, is_dir)


class _AnyMatch:
    """`bool(last_match(patterns, rel, is_dir))` for patterns none of which is negated or
    relative to a folder: then any match excludes, so each kind of pattern (matched against
    the name, or anchored and matched against the whole path; for files, those not limited to
    folders) is one alternation of their regexes: one `re.match` instead of a loop of method
    calls over the 24 default globs for every entry of a walk."""

    def __init__(self, patterns: Sequence[GitPattern]) -> None:
        named = [p for p in patterns if not p.anchored]
        anchored = [p for p in patterns if p.anchored]
        self.name_dir, self.rel_dir = _union(named), _union(anchored)
        self.name_file = _union([p for p in named if not p.directory_only])
        self.rel_file = _union([p for p in anchored if not p.directory_only])

    def __call__(self, rel: str, is_dir: bool) -> bool:
        name, whole = (self.name_dir, self.rel_dir) if is_dir else (self.name_file, self.rel_file)
        if name is not None and name.match(rel.rsplit("/", 1)[-1]) is not None:
            return True
        return whole is not None and whole.match(rel) is not None


def _union(patterns: Sequence[GitPattern]) -> Optional[Pattern[str]]:
    """One regex matching where any of the patterns' does (each ends in `\\Z`), or None."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p.regex.pattern})" for p in patterns), re.S)


@lru_cache(maxsize=256)
def _exclude_test(globs: Tuple[str, ...]) -> Callable[[str, bool], bool]:
    """Whether the exclude globs exclude a path (relative to the root), built once per
    settings: `_AnyMatch` when it applies, else git's last-match rule."""
    patterns = compiled(globs)
    if not any(p.negated or p.base for p in patterns):
        return _AnyMatch(patterns)
    return lambda rel, is_dir: bool(last_match(patterns, rel, is_dir))


def included(settings: Settings, rel: str) -> bool:
    """`include` narrows the walk: a file is checked if it, or a folder above it, matches."""
    if not settings.include:
        return True
    return ignored(compiled(tuple(settings.include)), rel, False)


def per_file_ignored(settings: Settings, path: str) -> Set[str]:
    """Codes `per-file-ignores` turns off for `path` (a key naming a folder covers its files)."""
    codes: Set[str] = set()
    if not settings.per_file_ignores:
        return codes
    rel = relative(path, settings.root)
    for glob, glob_codes in settings.per_file_ignores:
        patterns = compiled((glob,))
        if patterns and ignored(patterns, rel, False):
            codes.update(c.upper() for c in glob_codes)
    return codes


def codes_for_file(settings: Settings, path: str, codes: Sequence[str]) -> List[str]:
    """Of the selected `codes`, those `per-file-ignores` leaves on for `path` (an ignored
    prefix, or `ALL`, turns a code off): the engine's rules for a file and the prefilter's
    `RULE_FILTERS` a run decides a file with before building the engine are the same."""
    ignored = per_file_ignored(settings, path)
    return [c for c in codes if not any(c.startswith(i) or i == "ALL" for i in ignored)]


def explicitly_excluded(settings: Settings, given: str) -> bool:
    """For --force-exclude: a named file under an excluded folder, or not included."""
    rel = relative(given, settings.root)
    patterns = compiled(tuple(settings.exclude) + tuple(settings.extend_exclude))
    return ignored(patterns, rel, False) or not included(settings, rel)


def _as_resolver(settings: Union[Settings, Resolver]) -> Resolver:
    return Resolver.fixed(settings) if isinstance(settings, Settings) else settings


def discover(paths: Sequence[str], settings: Union[Settings, Resolver],
             folders: Optional[List[str]] = None) -> Tuple[List[str], List[Problem]]:
    """Files to check (deduplicated, in a stable order) and the paths that could not be read.

    `settings` is one Settings for every file, or a Resolver giving each folder its own.
    `folders`, if given, receives every folder the walk listed (the project index keys its file
    list by their stat: a file added or renamed changes its folder's).
    """
    resolver = _as_resolver(settings)
    files: List[str] = []
    seen: Set[str] = set()
    problems: List[Problem] = []

    def add(path: str, key: str) -> None:
        if key not in seen:
            seen.add(key)
            files.append(path)

    for given in paths:
        if not os.path.lexists(given):
            problems.append(Problem(given, "No such file or directory"))
            continue
        try:
            mode = os.stat(given).st_mode
        except OSError as exc:  # a broken or looping symlink: reading it says why
            add(given, os.path.abspath(given))
            del exc
            continue
        if stat.S_ISDIR(mode):
            top, real_top = given, os.path.realpath(given)
            for found in _walk(given, resolver, problems, folders):
                add(found, real_top + found[len(top):] if found.startswith(top) else os.path.realpath(found))
            continue
        if not stat.S_ISREG(mode):
            problems.append(Problem(given, "not a regular file (a FIFO, socket or device); not checked"))
            continue
        try:
            file_settings = resolver.for_path(given)
        except ConfigError as exc:
            problems.append(Problem(given, str(exc), config=True))
            continue
        # Named explicitly: always checked, unless --force-exclude asks to apply the
        # excludes anyway (pre-commit names every staged file, tests included).
        if file_settings.force_exclude and explicitly_excluded(file_settings, given):
            continue
        if given.endswith(NOTEBOOK_SUFFIX):
            problems.append(Problem(given, "Jupyter notebooks are not supported; not checked"))
            continue
        add(given, os.path.realpath(given))
    return files, problems


def _git_root(folder: Path) -> Optional[Path]:
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def _read_gitignore(folder: Path, problems: List[Problem]) -> List[GitPattern]:
    """A folder's .gitignore, as patterns over absolute paths (without the leading slash)."""
    file = folder / ".gitignore"
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    patterns, bad = parse_lines(text, folder.as_posix().lstrip("/"))
    for number, line, reason in bad:
        problems.append(Problem(f"{file}:{number}", f"bad pattern {line!r} ({reason}); ignored", warning=True))
    return patterns


def _inherited_gitignores(real_top: Path, settings: Settings, problems: List[Problem]) -> List[GitPattern]:
    """.gitignore files above the walked folder apply too: from the git root (else the
    project root) down to the folder above `real_top`."""
    start = _git_root(real_top) or settings.root
    try:
        parts = real_top.relative_to(start).parts
    except ValueError:
        return []
    out: List[GitPattern] = []
    folder = start
    for part in parts:
        out += _read_gitignore(folder, problems)
        folder = folder / part
    return out


def _walk(top: str, resolver: Resolver, problems: List[Problem],
          listed: Optional[List[str]] = None) -> Iterator[str]:
    real_top = Path(os.path.realpath(top))
    try:
        top_settings = resolver.for_folder(real_top)
    except ConfigError as exc:
        problems.append(Problem(top, str(exc), config=True))
        return
    base: List[GitPattern] = []
    if top_settings.respect_gitignore:
        base = _inherited_gitignores(real_top, top_settings, problems)
    # (spelled folder, real folder, .gitignore patterns that apply above it)
    stack: List[Tuple[str, Path, List[GitPattern]]] = [(top, real_top, base)]
    while stack:
        spelled, real, above = stack.pop()
        if listed is not None:
            listed.append(spelled)
        try:
            settings = resolver.for_folder(real)
        except ConfigError as exc:  # a nested config is broken: skip its folder, go on
            problems.append(Problem(spelled, str(exc), config=True))
            continue
        active = above + _read_gitignore(real, problems) if settings.respect_gitignore else []
        try:
            with os.scandir(spelled) as handle:
                entries = sorted(handle, key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(spelled, exc.strerror or str(exc)))
            continue
        folders: List[Tuple[str, Path, List[GitPattern]]] = []
        # Children's paths by string concatenation, the folder's computed once: per-file
        # pathlib work was most of a warm scan's discovery.
        real_text = real.as_posix().rstrip("/")
        folder_rel = relative_to_root(real, settings.root)
        for entry in entries:
            git_rel = f"{real_text}/{entry.name}".lstrip("/")
            rel = entry.name if folder_rel in (".", "") else f"{folder_rel}/{entry.name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if excluded(settings, rel, True) or (active and last_match(active, git_rel, True)):
                    continue
                folders.append((os.path.join(spelled, entry.name), real / entry.name, active))
                continue
            if not entry.name.endswith(PYTHON_SUFFIXES):
                continue
            if excluded(settings, rel, False) or (active and last_match(active, git_rel, False)):
                continue
            if not included(settings, rel):
                continue
            path = os.path.join(spelled, entry.name)
            try:
                regular = entry.is_file()  # follows a symlinked file
                special = not regular and not entry.is_dir()
            except OSError:
                regular, special = False, False
            if special and os.path.exists(path):
                # A FIFO named x.py would block the read forever; a socket or device is no source.
                problems.append(Problem(path, "not a regular file (a FIFO, socket or device); skipped",
                                        warning=True))
                continue
            if entry.is_symlink() and os.path.isdir(path):
                continue  # a symlinked folder named like a module: never followed
            yield path  # a regular file, or a broken symlink (reading it says why)
        stack.extend(reversed(folders))


def relative_to_root(real: Path, root: Path) -> str:
    try:
        return real.relative_to(root).as_posix()
    except ValueError:
        return real.as_posix().lstrip("/")
