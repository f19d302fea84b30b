"""Which build of lint-h2d is running, for the keys of the findings cache and the project index.

Why: both caches were keyed by `__version__` (and the index by `INDEX_FORMAT`), which a release
bumps but a source checkout does not.  Someone who runs lint-h2d from a git checkout (or
`pip install git+...`) and pulls a change to the inference kept getting the old findings back
from the cache, and the old summaries from the index, until they deleted the cache folder: the
answer depended on the cache's state, not only on the code and the files.

So the keys also carry a fingerprint of the tool's own sources: the relative path, size and
mtime_ns of every `.py` file of the `lint_h2d` and `fixers` packages.  Any edit, checkout or
reinstall that changes a source file changes the fingerprint.  It is read from stat, not from
the files' bytes, because it is computed on every run, the one-file pre-commit run included
(about a millisecond for the ~80 files); an edit that keeps both a file's size and its mtime is
not a case worth a read of every source file on every run.
"""
from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from typing import Iterable


def sources_fingerprint(roots: Iterable[str]) -> str:
    """A digest of (path relative to its root, size, mtime_ns) of every `.py` file under
    `roots`, in a fixed order (sorted names; `__pycache__` skipped: Python rewrites it)."""
    digest = hashlib.blake2b(digest_size=12)
    for root in roots:
        digest.update(f"root|{os.path.basename(root)}\n".encode())
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                relative = os.path.relpath(path, root).replace(os.sep, "/")
                digest.update(f"{relative}|{st.st_size}|{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


@lru_cache(maxsize=1)
def code_id() -> str:
    """The running build's fingerprint (`sources_fingerprint` of this package and `fixers`)."""
    import fixers
    import lint_h2d

    return sources_fingerprint(os.path.dirname(os.path.abspath(module.__file__ or ""))
                               for module in (lint_h2d, fixers))
