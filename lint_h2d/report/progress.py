"""`files done/total` on stderr while a big scan runs, only for a person at a terminal.

Off in pipes, CI (the `CI` environment variable) and pre-commit (its output is not a tty), and
for small scans, where it would only flicker.
"""
from __future__ import annotations

import os
import time
from typing import Mapping, Optional, TextIO

THRESHOLD = 200  # files to parse before progress is worth showing


def wanted(stream: TextIO, environ: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if environ is None else environ
    if env.get("CI") or env.get("PRE_COMMIT") or env.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """A callback `progress(done, total)`; redraws at most every `interval` seconds."""

    def __init__(self, stream: TextIO, threshold: int = THRESHOLD, interval: float = 0.1,
                 label: str = "Checking") -> None:
        self.stream = stream
        self.threshold = threshold
        self.interval = interval
        self.label = label
        self._last = 0.0
        self._width = 0

    def __call__(self, done: int, total: int) -> None:
        if total < self.threshold:
            return
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        text = f"{self.label} files {done}/{total}"
        self._width = max(self._width, len(text))
        self.stream.write("\r" + text)
        self.stream.flush()

    def close(self) -> None:
        """Erase the progress line so the report starts on a clean line."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def for_stream(stream: TextIO, environ: Optional[Mapping[str, str]] = None) -> Optional[Progress]:
    return Progress(stream) if wanted(stream, environ) else None
