"""The diagnostics lint-h2d reports about itself (a file it cannot read, parse or analyze).

Kept apart from the analysis so that the command line, the cache and the reporters can name
them without importing a parser.
"""
from __future__ import annotations

import traceback
from pathlib import Path

from lint_h2d.findings import Finding, Location

IO_ERROR = "H2D900"
SYNTAX_ERROR = "H2D901"
INTERNAL_ERROR = "H2D902"
ERROR_CODES = (IO_ERROR, SYNTAX_ERROR, INTERNAL_ERROR)


def error_finding(code: str, path: str, message: str, row: int = 1, column: int = 1) -> Finding:
    return Finding(code, message, path, Location(row, column), Location(row, column), noqa_row=None)


_MAX_DETAIL = 160


def describe_exception(exc: BaseException) -> str:
    """One line: the exception and where it was raised (no traceback for users)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    text = " ".join(str(exc).split())  # a KeyError of a LibCST node prints the whole tree
    if len(text) > _MAX_DETAIL:
        text = text[: _MAX_DETAIL - 3] + "..."
    return f"{type(exc).__name__}: {text}{where}"
