"""Cross-file facts for the whole project, not only for the files being checked.

A pre-commit run names one changed file, but the class that pairs `query_start_loc` with
`query_start_loc_cpu` lives in another file; without it the one-file run and the repo-wide
scan would disagree about the same line.  So the project's files are indexed too, and the
index (kept in the cache folder) is reused only while everything it was built from is
unchanged.  It is keyed by:

- the project root: one index file per resolved root (`project-index-<hash>.json`), so a
  cache folder shared by several projects never mixes their facts;
- the settings that decide which files are walked (`include`, `exclude`, `extend-exclude`,
  `respect-gitignore`), the index format and the tool version: any change rebuilds it;
- the file set: the stat (mtime, ctime, inode) of every folder the walk listed, of its
  `.gitignore`, and a digest of its Python files' and sub-folders' names.  A file added,
  removed or renamed changes its folder's stat; a one-file run then lists that folder again
  and walks the project only if those names changed (walking vLLM costs more than checking
  one file; stat'ing its 442 folders a few milliseconds);
- each file's stat (size, mtime_ns, ctime_ns, inode) and a hash of its bytes (BLAKE2b-128).
  ctime and inode catch `touch -r`, `cp -p` and `rsync -a`, which keep size and mtime.  A stat
  taken within `RACY_NS` of the run that recorded it may not show a later write in the same
  clock tick (coarse timestamps, git's "racy" case), so such files are re-read and compared
  by hash, and such folders listed again.

The index only speeds things up: without a cache folder every file is read.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Tuple, Any, Dict, FrozenSet, Iterable, List, Optional, Sequence

from lint_h2d import __version__
from lint_h2d.cache import save_json
from lint_h2d.config import Settings, canonical_folder
from lint_h2d.discovery import PYTHON_SUFFIXES, discover
from lint_h2d.inference.project import class_fields_in
from lint_h2d.inference.summary import FileSummary, from_json, summarize

INDEX_FORMAT = 4  # 3: entries hold the file's summary (inference/summary.py); 4: its terms changed (issue 17, infer2)
# A folder this large is not a project root someone meant (a home folder): skip the index.
MAX_FILES = 50_000
# Stamps this close to (or after) the recording run are not trusted: file systems with 1 s or
# 2 s timestamps (and writes racing the run) can change a file without changing its stat.
RACY_NS = 3_000_000_000

Classes = Dict[str, FrozenSet[str]]
Stat = List[int]


def is_project_root(root: Path) -> bool:
    return (root / "pyproject.toml").is_file() or (root / ".git").exists()


def covers(root: Path, paths: Iterable[str]) -> bool:
    """Every checked path lies inside `root` (facts of one project never leak into another).

    A path is where it is named, its folders resolved (`config.canonical_folder`), not where a
    symlinked file points: a link to a shared file outside the project is still the
    project's file, and resolving it cost every file of the run its project index."""
    resolved = root.resolve()
    for path in paths:
        try:
            (canonical_folder(path) / os.path.basename(path)).relative_to(resolved)
        except ValueError:
            return False
    return True


# -- what an entry holds (the one place that reads a file's facts) -----------------------------


def file_facts(path: str, data: bytes) -> Dict[str, Any]:
    """The facts the index keeps about one file, from its bytes (JSON-able; `merge_facts`
    reads them back): its classes with a `*_cpu` field, and its summary (classes, fields,
    returns, call sites, device contexts: `inference/summary.py`).  Bump INDEX_FORMAT when
    their shape changes."""
    text = data.decode("utf-8", errors="replace")
    classes = {} if b"_cpu" not in data else {
        name: sorted(fields) for name, fields in class_fields_in(text).items()}
    return {"classes": classes, "summary": summarize(path, text).to_json()}


def merge_facts(classes: Dict[str, FrozenSet[str]], summaries: Dict[str, FileSummary],
                path: str, facts: Dict[str, Any]) -> None:
    """Add one entry's facts to the project's (all or nothing: a corrupt entry raises)."""
    summary = from_json(path, facts["summary"])
    found = {str(name): frozenset(str(f) for f in fields) for name, fields in facts["classes"].items()}
    for name, fields in found.items():
        classes[name] = classes.get(name, frozenset()) | fields
    summaries[path] = summary


# -- keys ---------------------------------------------------------------------------------------


def index_path(cache_folder: Path, root: Path) -> Path:
    """One index per project root, so a shared `--cache-dir` never mixes projects."""
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()
    return cache_folder / f"project-index-{digest[:16]}.json"


def index_key(settings: Settings) -> Dict[str, Any]:
    """Everything besides the files themselves that the index content depends on."""
    return {
        "format": INDEX_FORMAT,
        "version": __version__,
        "root": str(settings.root.resolve()),
        "include": list(settings.include),
        "exclude": list(settings.exclude),
        "extend_exclude": list(settings.extend_exclude),
        "respect_gitignore": settings.respect_gitignore,
        "max_files": MAX_FILES,
    }


def _stat(path: str) -> Optional[Stat]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _racy(stat: Optional[Stat], trusted_before: int) -> bool:
    """A stamp too close to the run that recorded it to prove the content unchanged since."""
    return stat is not None and max(stat[1], stat[2]) >= trusted_before


def _names(folder: str) -> Optional[str]:
    """A digest of the entries of `folder` that the walk can yield or enter (Python files and
    sub-folders): an editor's swap file or a checkout that rewrites files in place changes the
    folder's stat but not these."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                e.name + "/" if e.is_dir(follow_symlinks=False) else e.name
                for e in entries
                if e.name.endswith(PYTHON_SUFFIXES) or e.is_dir(follow_symlinks=False)
            )
    except OSError:
        return None
    return hashlib.blake2b("\0".join(names).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def _folder_stamp(folder: str) -> List[Any]:
    """A folder's stat, its `.gitignore`'s (the walk reads it; an edit in place does not
    change the folder's stat) and the digest of its entries (`_names`)."""
    return [_stat(folder), _stat(os.path.join(folder, ".gitignore")), _names(folder)]


def _same_file_set(folders: Dict[str, Any], trusted_before: int) -> Optional[Dict[str, Any]]:
    """The folders' stamps brought up to date if the walk would list the same files, else None.

    A folder whose stat is unchanged and old enough to trust is not read; one whose stat
    moved is listed again (one `scandir`) and compared by `_names`.  A changed `.gitignore`
    means walking again."""
    updated: Dict[str, Any] = {}
    for folder, stamp in folders.items():
        if not (isinstance(stamp, list) and len(stamp) == 3):
            return None
        stat, ignore = _stat(folder), _stat(os.path.join(folder, ".gitignore"))
        if ignore != stamp[1] or _racy(ignore, trusted_before):
            return None
        if stat == stamp[0] and not _racy(stat, trusted_before):
            updated[folder] = stamp
            continue
        names = _names(folder)
        if stat is None or names is None or names != stamp[2]:
            return None
        updated[folder] = [stat, ignore, names]
    return updated


# -- the index ----------------------------------------------------------------------------------
#
# The stored index is {"key": index_key(...), "built_ns": when the run that wrote it started,
# "folders": {folder: _folder_stamp(folder)}, "files": {path: [size, mtime_ns, ctime_ns, inode,
# blake2b-128 of the bytes, facts]}}.  Rows are lists, not objects: a one-file run loads all of them, and on vLLM
# (3,200 files) the JSON parse is a good part of its time.


def project_classes(settings: Settings, checked: Sequence[str], cache_folder: Optional[Path],
                    walk: bool = True) -> Classes:
    """Classes with a `*_cpu` field anywhere in the project of the checked paths ({} if none)."""
    return project_index(settings, checked, cache_folder, walk)[0]


def project_index(settings: Settings, checked: Sequence[str], cache_folder: Optional[Path],
                  walk: bool = True) -> Tuple[Classes, Dict[str, FileSummary]]:
    """The project's `_cpu` field pairs and every file's summary, by absolute path ({} and {}
    outside a project).

    With `walk=False` (a run that names files, as pre-commit does) the index's file list is
    reused while no walked folder changed: walking the project costs more than the whole check
    of one file, stat'ing its folders a few milliseconds.
    """
    root = settings.root
    if not checked or not is_project_root(root) or not covers(root, checked):
        return {}, {}
    started = time.time_ns()
    index_file = index_path(cache_folder, root) if cache_folder is not None else None
    key = index_key(settings)
    old = _load(index_file, key)
    old_files: Dict[str, Any] = old.get("files", {})
    trusted_before = old.get("built_ns", 0) - RACY_NS
    same = None if walk or not old else _same_file_set(old.get("folders", {}), trusted_before)
    if same is None:
        listed: List[str] = []
        found, _ = discover([str(root)], settings, listed)
        files = [os.path.abspath(f) for f in found]
        # The cache folder may lie in the project and be walked (its `.gitignore` hides its
        # files): our own writes there must not look like a change of the file set.
        mine = os.path.abspath(cache_folder) if cache_folder is not None else None
        folders = {os.path.abspath(f): _folder_stamp(f) for f in listed
                   if mine is None or not _inside(os.path.abspath(f), mine)}
    else:
        files, folders = list(old_files), same
    if len(files) > MAX_FILES:
        return {}, {}
    new: Dict[str, List[Any]] = {}
    classes: Dict[str, FrozenSet[str]] = {}
    summaries: Dict[str, FileSummary] = {}
    changed = folders != old.get("folders") or len(files) != len(old_files)
    for path in files:
        old_row = old_files.get(path)
        row = _row(path, old_row, trusted_before)
        if row is None:
            changed = True
            continue
        try:
            merge_facts(classes, summaries, path, row[5])
        except (KeyError, TypeError, AttributeError, IndexError, ValueError):  # corrupt: read it again
            row = _row(path, None, trusted_before)
            if row is None:
                continue
            merge_facts(classes, summaries, path, row[5])
        changed = changed or row is not old_row
        new[path] = row
    if index_file is not None and changed:
        save_json(index_file, {"key": key, "built_ns": started, "folders": folders, "files": new})
    return classes, summaries


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _row(path: str, old: Any, trusted_before: int) -> Optional[List[Any]]:
    """The index row of `path` (None if it cannot be read).

    The old row itself is returned when its stat matches and is old enough to trust; a row
    with the new stat and the old facts when the bytes are the same (a `touch`); else a row
    built from the bytes."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stat = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    valid = isinstance(old, list) and len(old) == 6
    if valid and old[:4] == stat and max(stat[1], stat[2]) < trusted_before:
        return old  # type: ignore[no-any-return]
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if valid and old[4] == digest:
        return [*stat, digest, old[5]]
    return [*stat, digest, file_facts(path, data)]


def _load(index_file: Optional[Path], key: Dict[str, Any]) -> Dict[str, Any]:
    """The stored index if it was built under `key`, else {} (missing, corrupt, foreign)."""
    if index_file is None:
        return {}
    try:
        data = json.loads(index_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if (not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("files"), dict)
            or not isinstance(data.get("folders"), dict) or not isinstance(data.get("built_ns"), int)):
        return {}
    return data
