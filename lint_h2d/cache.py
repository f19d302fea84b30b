"""Content-hash cache: a file whose bytes, tool version, settings, project root and cross-file
facts are unchanged gets its previous findings back without being parsed.

One JSON file per (cache format, tool version and build (`code_id`), settings, project root, project facts) key
(`cache_key`), entries by absolute path and SHA-256 of the file's bytes, written atomically; a corrupt
or foreign file is ignored and rebuilt.  Concurrent runs may each write it: the last complete
write wins and every write is whole, so readers never see a torn file.

An entry also keeps the file's stat (size, mtime_ns, ctime_ns, inode) as it was before its bytes
were read, and when the run that recorded it started.  A file whose stat is unchanged is
answered without being read (`lookup`), as ruff does, unless its stamps lie within `RACY_NS`
of that start: a file system with coarse timestamps can change a file in the same tick
without changing its stat (git's "racy" case), so such a file is read and compared by hash.
ctime and inode catch `touch -r`, `cp -p` and `rsync -a`, which keep size and mtime.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from lint_h2d import __version__
from lint_h2d.code_id import code_id
from lint_h2d.findings import Finding
from lint_h2d.serialize import finding_to_cache, findings_from_cache

if TYPE_CHECKING:
    from lint_h2d.config import Settings
    from lint_h2d.sources import Source

FORMAT = 3  # 2: findings carry their evidence; 3: entries keep the file's stat
# Stamps this close to (or after) the start of the recording run are not trusted.
RACY_NS = 3_000_000_000
DEFAULT_DIR = ".lint_h2d_cache"


def cache_key(settings: "Settings", project_fingerprint: str) -> str:
    """What a file's findings depend on besides its bytes: the settings that change findings,
    the project root (per-file-ignores and the index are relative to it; a cache folder shared
    by several projects keeps them apart) and the project's cross-file facts (the fingerprint
    of what the project index resolved: a change anywhere in the project that changes a fact
    starts a new cache file)."""
    return f"{settings.fingerprint()}|{settings.root.resolve()}|{project_fingerprint}"


def _hashed(key: str) -> str:
    # code_id: a source checkout's edits change findings without a version bump.
    return hashlib.sha256(f"{FORMAT}|{__version__}|{code_id()}|{key}".encode()).hexdigest()[:24]


class Cache:
    """The findings cache of one key (`cache_key`).

    `carry`: (the key of the facts this run's were carried from, the names of the files whose
    lines moved), when the run's facts are the stored ones with an edit's moved lines carried
    to their new lines (`ProjectIndex.reused_facts`), or a resolve gave the stored ones but for
    the edited files' lines (`ProjectIndex.carry_resolved`).  Such facts differ from the old ones
    only in those files' lines, so they have a new key, yet a file's findings under them are its
    findings under the old ones with those lines renumbered: the analysis reads the facts'
    lines only to copy them into evidence (a step's file and row, `name.py:N` words), as the
    resolver does (`moved_lines`).  An old entry that names none of the moved files anywhere
    is therefore what analysing the file again would give, and is taken over (`_carry`); one
    that names one is left behind (analysed again).  Without it an edit that moved a line,
    almost any edit, made the next scan of the tree analyse every file again."""

    def __init__(self, folder: Path, key: str, carry: Optional[Tuple[str, FrozenSet[str]]] = None) -> None:
        self.folder = folder
        self.key = _hashed(key)
        self.file = folder / f"{__version__}-{self.key}.json"
        self.dirty = False
        self.started = time.time_ns()
        self.entries: Dict[str, Dict[str, Any]] = self._load(self.file, self.key)
        if carry is not None and carry[0] != key:
            self._carry(_hashed(carry[0]), carry[1])

    def _load(self, file: Path, key: str) -> Dict[str, Dict[str, Any]]:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("files"), dict):
            return {}
        try:  # used: the pruning of other runs (`prune`) keeps the files used last
            os.utime(file)
        except OSError:
            pass
        files: Dict[str, Dict[str, Any]] = data["files"]
        return files

    def _carry(self, key: str, moved: FrozenSet[str]) -> None:
        """Take over the entries of the cache file of `key` that this one lacks and that name
        no file of `moved` (`evidence_file_name`s: a file's path ends with its name, so an
        evidence step's path and `name.py:N` words both hold it)."""
        if not moved:
            return
        names = _named(moved)
        for path, entry in self._load(self.folder / f"{__version__}-{key}.json", key).items():
            if path in self.entries or not isinstance(entry, dict) or _names_any(entry.get("findings"), names):
                continue
            self.entries[path] = entry
            self.dirty = True

    def lookup(self, path: str) -> Optional[List[Finding]]:
        """The findings of `path` if its stat proves it unchanged since they were recorded
        (no read, no hash), else None: read it and ask `get`."""
        entry = self.entries.get(os.path.abspath(path))
        if not isinstance(entry, dict):
            return None
        if not _trusted(entry):
            return None  # racy: the stat may not show a write in the same clock tick
        stamp = entry["stat"]
        try:
            st = os.stat(path)
        except OSError:
            return None
        if [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino] != stamp:
            return None
        return self._findings(entry, path)

    def get(self, source: "Source") -> Optional[List[Finding]]:
        entry = self.entries.get(os.path.abspath(source.path))
        if not isinstance(entry, dict) or entry.get("sha256") != source.digest:
            return None  # missing, changed, or a foreign/corrupt entry: analyze again
        found = self._findings(entry, source.path)
        if found is not None and source.stamp is not None and (
                entry.get("stat") != list(source.stamp) or not _trusted(entry)):
            # Same bytes, a new stat (a `touch`) or one recorded too close to its write: record
            # it again, so that a later run can trust it and read nothing.
            self.put(source, found)
        return found

    def _findings(self, entry: Dict[str, Any], path: str) -> Optional[List[Finding]]:
        try:
            # Entries hold content, not presentation: the path is this run's spelling.
            return [replace(f, path=path) for f in findings_from_cache(entry["findings"])]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def knows(self, path: str) -> bool:
        """Whether there is an entry to compare the file's hash with (else it is not read
        before it is analyzed: a worker reads it)."""
        return os.path.abspath(path) in self.entries

    def put(self, source: "Source", findings: List[Finding]) -> None:
        self.record(source.path, source.digest, source.stamp, findings)

    def record(self, path: str, digest: str, stamp: Optional[Sequence[int]], findings: List[Finding]) -> None:
        """Remember the findings of the bytes with this SHA-256, read after this stat."""
        from lint_h2d.diagnostics import ERROR_CODES

        if any(f.code in ERROR_CODES for f in findings):
            return  # errors are retried on the next run
        self.entries[os.path.abspath(path)] = {
            "sha256": digest,
            "stat": list(stamp) if stamp is not None else None,
            "seen": self.started,
            "findings": [finding_to_cache(f) for f in findings],
        }
        self.dirty = True

    def save(self) -> None:
        if self.dirty:
            save_json(self.file, {"key": self.key, "files": self.entries})
            prune(self.folder, self.file)


#: Findings-cache files kept in a cache folder: the ones used last.
KEEP_FILES = 8
# Our names: findings caches (`<version>-<24 hex>.json`, the version starting with a digit) and
# the temp files `save_json` writes beside them and beside the project index.
_CACHE_FILE = re.compile(r"[0-9][0-9A-Za-z.+!_]*-[0-9a-f]{24}\.json")
_TEMP_FILE = re.compile(r"\.(?:[0-9][0-9A-Za-z.+!_]*-[0-9a-f]{24}|project-index-[0-9a-f]{16})-[^/\\]+\.tmp")
GITIGNORE = "# Automatically created by lint-h2d.\n*\n"
# A temp file of ours older than this was left by a killed run (a write takes seconds); the
# pruning of the findings caches and of the project index's facts deletes it.
STALE_TEMP_S = 3600


def prune(folder: Path, current: Path) -> None:
    """Delete all but the `KEEP_FILES` findings-cache files used last (each run that reads
    one touches it), and temp files of ours a killed run left over an hour ago.

    Why: a change of the project's facts, the settings or the tool starts a new file (the key
    is in its name); without pruning, a cache folder kept a file per such change (about 1 MB
    each on vLLM) for as long as it lived.  A run that still wanted a deleted file analyses its
    files again: slower, never wrong.

    Only in a folder lint-h2d made (its `.gitignore` is ours, `save_json`), and only files with
    our names: `--cache-dir` may name a folder that holds the user's files (`.`, `/tmp`)."""
    try:
        if (folder / ".gitignore").read_text(encoding="utf-8") != GITIGNORE:
            return
        names = os.listdir(folder)
    except (OSError, UnicodeDecodeError):
        return
    used: List[Tuple[float, Path]] = []
    stale_before = time.time() - STALE_TEMP_S
    for name in names:
        target = folder / name
        try:
            if _CACHE_FILE.fullmatch(name) and target != current:
                used.append((target.stat().st_mtime, target))
            elif _TEMP_FILE.fullmatch(name) and target.stat().st_mtime < stale_before:
                target.unlink()
        except OSError:
            pass
    for _, target in sorted(used, reverse=True)[KEEP_FILES - 1:]:
        try:
            target.unlink()
        except OSError:
            pass


def _named(names: FrozenSet[str]) -> "re.Pattern[str]":
    """Any of `names` as a whole path component or word (`/utils.py`, `utils.py:12`), not as
    the tail of another name (`mamba_utils.py`): a step that names a moved file holds it so."""
    return re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, sorted(names))) + r")(?!\w)")


def _names_any(data: Any, names: "re.Pattern[str]") -> bool:
    """Whether any string in `data` (an entry's findings as JSON data) holds a match of
    `names`; anything but JSON data counts as one (the entry is not taken over)."""
    if isinstance(data, str):
        return names.search(data) is not None
    if isinstance(data, list):
        return any(_names_any(item, names) for item in data)
    if isinstance(data, dict):
        return any(_names_any(key, names) or _names_any(value, names) for key, value in data.items())
    return not (data is None or isinstance(data, (int, float, bool)))


def _trusted(entry: Dict[str, Any]) -> bool:
    """The entry's stat was recorded long enough after the file's last change to prove it."""
    stamp, seen = entry.get("stat"), entry.get("seen")
    return (isinstance(stamp, list) and len(stamp) == 4 and all(isinstance(x, int) for x in stamp)
            and isinstance(seen, int) and max(stamp[1], stamp[2]) < seen - RACY_NS)


def save_json(file: Path, data: Dict[str, Any]) -> None:
    """Write a cache-folder file atomically (a temp file, then `os.replace`), creating the
    folder with its `.gitignore`.  Failing to write only makes the next run slower."""
    folder = file.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text(GITIGNORE, encoding="utf-8")
        fd, tmp = tempfile.mkstemp(prefix=f".{file.stem}-", suffix=".tmp", dir=folder)
        # `json.dumps`, then one write: `json.dump` encodes with the pure-Python encoder (the C
        # one serves only `dumps`), ~4x the CPU for the same text; the index and the results
        # cache are 0.6 and 0.9 MB on vLLM, written by every run that changes them.
        text = json.dumps(data)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, file)
    except OSError:
        pass
