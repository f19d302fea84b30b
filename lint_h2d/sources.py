"""Source files as bytes and text: reading (regular files only), decoding exactly as Python
does (coding cookie, BOM), and writing a fix back atomically without losing the file's links,
owner or mode."""
from __future__ import annotations

import codecs
import hashlib
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass, replace
from typing import Optional, Tuple

# A file's (size, mtime_ns, ctime_ns, inode): what the caches compare before hashing.
Stamp = Tuple[int, int, int, int]


@dataclass(frozen=True)
class Source:
    """A file's text and how to write it back exactly as it was encoded."""

    path: str
    raw: bytes
    text: str
    encoding: str
    bom: bool
    # The stat taken before the bytes were read (None for stdin): a later write changes it or
    # happens within the racy window the caches distrust (`cache.py`).
    stamp: Optional[Stamp] = None

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


class SourceError(Exception):
    """The file could not be read or decoded; the message names the reason."""


def decode(path: str, raw: bytes) -> Source:
    bom = raw.startswith(codecs.BOM_UTF8)
    if b"\x00" in raw:
        raise SourceError("file contains NUL bytes (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        if "invalid or missing" in exc.msg:  # no cookie, and the first lines are not UTF-8
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise SourceError(f"cannot decode as utf-8 (no coding cookie): {err}") from None
        raise SourceError(f"invalid encoding declaration: {exc.msg}") from None
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = raw[len(codecs.BOM_UTF8):] if bom else raw
    if b"\x00" in body:
        raise SourceError("file contains NUL bytes (binary file?)")
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    return Source(path, raw, text, encoding, bom)


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def read_source(path: str) -> Source:
    """Read a regular file; a FIFO or device is refused without blocking on it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)  # before reading: a write after it changes the stat, or is racy
        if not stat.S_ISREG(st.st_mode):
            raise SourceError("not a regular file (a FIFO, socket or device)")
        with open(fd, "rb", closefd=False) as handle:
            raw = handle.read()
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    return replace(decode(path, raw), stamp=stamp_of(st))


class WriteError(Exception):
    pass


def write_atomic(source: Source, new_text: str) -> None:
    """Replace the file only if it still holds the bytes we read; keep encoding and BOM.

    A symlink is written through (the real file is fixed; the link stays a link).  The real
    file keeps its mode, owner and group and its inode's other names: normally a temp file
    with the same mode and owner replaces it atomically; a file with hard links (which a
    replace would split) or one whose owner this user cannot give a new file is rewritten in
    place instead, after the same check that nobody changed it.
    """
    data = source.encode(new_text)
    path = os.path.realpath(source.path)
    try:
        with open(path, "rb") as handle:
            current = handle.read()
        st = os.stat(path)
    except OSError as exc:
        raise WriteError(f"cannot re-read before writing: {exc.strerror or exc}") from None
    if current != source.raw:
        raise WriteError("file changed on disk since it was read; not written")
    if not os.access(path, os.W_OK):
        raise WriteError("file is not writable; not written")
    if st.st_nlink > 1:
        _write_in_place(path, data)
        return
    folder = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lint-h2d-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        tmp_st = os.stat(tmp)
        if (tmp_st.st_uid, tmp_st.st_gid) != (st.st_uid, st.st_gid):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
                os.chmod(tmp, stat.S_IMODE(st.st_mode))  # chown clears set-id bits
            except OSError:
                os.unlink(tmp)
                _write_in_place(path, data)  # keeps the owner we may not give away
                return
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, WriteError):
            raise
        if isinstance(exc, OSError):
            raise WriteError(f"cannot write: {exc.strerror or exc}") from None
        raise


def _write_in_place(path: str, data: bytes) -> None:
    """Rewrite the file's own inode (hard links, owner and mode stay as they are)."""
    try:
        with open(path, "r+b") as handle:
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror or exc}") from None
