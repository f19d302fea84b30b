"""Cross-file facts for the whole project, not only for the files being checked.

A pre-commit run names one changed file, but the class that pairs `query_start_loc` with
`query_start_loc_cpu` lives in another file; without it the one-file run and the repo-wide
scan would disagree about the same line.  So the project's files are indexed too: a stat per
file, and a read only for files that changed since the index (kept in the cache folder) was
written.  The index only speeds this up: without a cache every file is read.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from lint_h2d.cache import save_json
from lint_h2d.config import Settings
from lint_h2d.discovery import discover
from lint_h2d.inference.project import class_fields_in
from lint_h2d.inference.summary import FileSummary, from_json, summarize

INDEX_NAME = "project-index.json"
INDEX_FORMAT = 2
# A folder this large is not a project root someone meant (a home folder): skip the index.
MAX_FILES = 50_000

Classes = Dict[str, FrozenSet[str]]


def is_project_root(root: Path) -> bool:
    return (root / "pyproject.toml").is_file() or (root / ".git").exists()


def covers(root: Path, paths: Iterable[str]) -> bool:
    """Every checked path lies inside `root` (facts of one project never leak into another)."""
    resolved = root.resolve()
    for path in paths:
        try:
            Path(path).resolve().relative_to(resolved)
        except ValueError:
            return False
    return True


def project_classes(settings: Settings, checked: Sequence[str], cache_folder: Optional[Path],
                    walk: bool = True) -> Classes:
    """Classes with a `*_cpu` field anywhere in the project of the checked paths ({} if none)."""
    return project_index(settings, checked, cache_folder, walk)[0]


def project_index(settings: Settings, checked: Sequence[str], cache_folder: Optional[Path],
                  walk: bool = True) -> Tuple[Classes, Dict[str, FileSummary]]:
    """The project's `_cpu` field pairs and every file's summary (`inference/summary.py`).

    Each entry holds what one file offers the others: its classes with a `*_cpu` field and
    its summary (classes, fields, returns, call sites, device contexts).

    With `walk=False` (a run that names files, as pre-commit does) an existing index's file
    list is reused and only stat'ed: walking the project costs more than the whole check of
    one file.  Files added since are picked up by the next run over a folder.
    """
    root = settings.root
    if not checked or not is_project_root(root) or not covers(root, checked):
        return {}, {}
    index_file = cache_folder / INDEX_NAME if cache_folder is not None else None
    old = _load(index_file)
    if walk or not old:
        files, _ = discover([str(root)], settings)
    else:
        files = list(old)
    if len(files) > MAX_FILES:
        return {}, {}
    new: Dict[str, Dict[str, object]] = {}
    classes: Dict[str, FrozenSet[str]] = {}
    summaries: Dict[str, FileSummary] = {}
    for path in files:
        key = os.path.abspath(path)
        try:
            st = os.stat(path)
        except OSError:
            continue
        entry = old.get(key)
        if not (isinstance(entry, dict) and entry.get("size") == st.st_size
                and entry.get("mtime_ns") == st.st_mtime_ns and isinstance(entry.get("classes"), dict)
                and isinstance(entry.get("summary"), dict)):
            entry = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, **_read_entry(path)}
        new[key] = entry
        for name, fields in entry["classes"].items():
            classes[name] = classes.get(name, frozenset()) | frozenset(fields)
        try:
            summaries[key] = from_json(path, entry["summary"])
        except (TypeError, ValueError):
            continue  # a damaged entry: this file offers no facts until it changes
    if index_file is not None and new != old:
        _save(index_file, new)
    return classes, summaries


def _read_entry(path: str) -> Dict[str, Any]:
    """What one file offers the others: its `_cpu` field pairs and its summary."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return {"classes": {}, "summary": {}}
    text = data.decode("utf-8", errors="replace")
    classes = {} if b"_cpu" not in data else {
        name: sorted(fields) for name, fields in class_fields_in(text).items()}
    return {"classes": classes, "summary": summarize(path, text).to_json()}


def _load(index_file: Optional[Path]) -> Dict[str, object]:
    if index_file is None:
        return {}
    try:
        data = json.loads(index_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT or not isinstance(data.get("files"), dict):
        return {}
    return data["files"]  # type: ignore[no-any-return]


def _save(index_file: Path, files: Dict[str, Dict[str, object]]) -> None:
    save_json(index_file, {"format": INDEX_FORMAT, "files": files})
