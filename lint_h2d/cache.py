"""Content-hash cache: a file whose bytes, tool version, settings, project root and cross-file
facts are unchanged gets its previous findings back without being parsed.

One JSON file per (cache format, tool version, settings, project root, project facts) key
(`cache_key`), entries by absolute path and SHA-256 of the file's bytes, written atomically; a corrupt
or foreign file is ignored and rebuilt.  Concurrent runs may each write it: the last complete
write wins and every write is whole, so readers never see a torn file.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from lint_h2d import __version__
from lint_h2d.findings import Finding
from lint_h2d.serialize import finding_to_cache, findings_from_cache

if TYPE_CHECKING:
    from lint_h2d.config import Settings
    from lint_h2d.engine import Source

FORMAT = 2  # 2: findings carry their evidence
DEFAULT_DIR = ".lint_h2d_cache"


def cache_key(settings: "Settings", project_fingerprint: str) -> str:
    """What a file's findings depend on besides its bytes: the settings that change findings,
    the project root (per-file-ignores and the index are relative to it; a cache folder shared
    by several projects keeps them apart) and the project's cross-file facts (the fingerprint
    of what the project index resolved: a change anywhere in the project that changes a fact
    starts a new cache file)."""
    return f"{settings.fingerprint()}|{settings.root.resolve()}|{project_fingerprint}"


class Cache:
    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.key = hashlib.sha256(f"{FORMAT}|{__version__}|{key}".encode()).hexdigest()[:24]
        self.file = folder / f"{__version__}-{self.key}.json"
        self.entries: Dict[str, Dict[str, Any]] = {}
        self.dirty = False
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("key") != self.key or not isinstance(data.get("files"), dict):
            return
        self.entries = data["files"]

    def get(self, source: "Source") -> Optional[List[Finding]]:
        entry = self.entries.get(os.path.abspath(source.path))
        if not isinstance(entry, dict) or entry.get("sha256") != source.digest:
            return None  # missing, changed, or a foreign/corrupt entry: analyze again
        try:
            # Entries hold content, not presentation: the path is this run's spelling.
            return [replace(f, path=source.path) for f in findings_from_cache(entry["findings"])]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def put(self, source: "Source", findings: List[Finding]) -> None:
        from lint_h2d.engine import ERROR_CODES

        if any(f.code in ERROR_CODES for f in findings):
            return  # errors are retried on the next run
        self.entries[os.path.abspath(source.path)] = {
            "sha256": source.digest,
            "findings": [finding_to_cache(f) for f in findings],
        }
        self.dirty = True

    def save(self) -> None:
        if self.dirty:
            save_json(self.file, {"key": self.key, "files": self.entries})


def save_json(file: Path, data: Dict[str, Any]) -> None:
    """Write a cache-folder file atomically (a temp file, then `os.replace`), creating the
    folder with its `.gitignore`.  Failing to write only makes the next run slower."""
    folder = file.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Automatically created by lint-h2d.\n*\n", encoding="utf-8")
        fd, tmp = tempfile.mkstemp(prefix=f".{file.stem}-", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, file)
    except OSError:
        pass
