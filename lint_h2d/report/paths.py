from __future__ import annotations

import os


def display_path(path: str) -> str:
    """Relative to the current directory when below it, as ruff prints paths."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
