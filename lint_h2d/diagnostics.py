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

# What `lint-h2d rule H2D90x` prints: these codes name no rule, but they appear in the output
# like findings, and a maintainer who meets one asks the tool what it means.
DIAGNOSTIC_DOCS = {
    IO_ERROR: ("io-error",
               "The file could not be read or decoded (a missing or unreadable path, bytes that "
               "are not text in the file's encoding, a binary file named `.py`).  The message "
               "names the path and why.  Nothing in the file was checked."),
    SYNTAX_ERROR: ("syntax-error",
                   "The file does not parse: Python's own message and position.  Or Python "
                   "parses it and LibCST, which lint-h2d's rules read, does not (some mixes of "
                   "tabs and spaces in the indentation): the message says so and why, and "
                   "re-indenting with spaces lets the file be checked.  Nothing in the file "
                   "was checked."),
    INTERNAL_ERROR: ("internal-error",
                     "lint-h2d failed while analysing the file: a bug in lint-h2d, not in "
                     "the file.  The message says where; please report it with the file (or a "
                     "part that reproduces it).  The other files were checked."),
}
_DIAGNOSTIC_TAIL = ("Reported whatever `--select`, `--ignore`, `# noqa` or `--exit-zero` say, "
                    "and the run exits 2; the other files are still checked.  No fix.")


def render_diagnostic(code: str) -> str:
    """The documentation `lint-h2d rule CODE` prints for one of `ERROR_CODES`."""
    name, text = DIAGNOSTIC_DOCS[code]
    return f"# {code} ({name})\n\n{text}\n\n{_DIAGNOSTIC_TAIL}\n"


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
