"""An opt-in timeline of a run's phases, per process: `LINT_H2D_TRACE=<file>` appends one
line per phase (pid, name, wall start and end, CPU start and end) to `<file>`.

Why: a cold scan runs in up to five processes (the main one, index workers, the process
that resolves, analysis workers); where a core sits idle, and for how long, shows only on a
common clock.  `bench/timeline.py` reads the file.  Without the variable a phase costs one
environment lookup and writes nothing; the findings never depend on it.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterator

ENV = "LINT_H2D_TRACE"


@contextmanager
def span(name: str) -> Iterator[None]:
    """Time the block as phase `name` of this process (when tracing is on)."""
    target = os.environ.get(ENV)
    if not target:
        yield
        return
    wall, cpu = time.time(), time.process_time()
    try:
        yield
    finally:
        line = f"{os.getpid()}\t{name}\t{wall:.4f}\t{time.time():.4f}\t{cpu:.4f}\t{time.process_time():.4f}\n"
        # One short write to a file opened for appending: lines of processes writing at once
        # do not interleave.
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(line)
