from __future__ import annotations

import os


def printable(text: str) -> str:
    """Text safe for any output: undecodable bytes of a file name (which Python keeps as lone
    surrogates) become U+FFFD, as ruff prints such names (Rust's `to_string_lossy`)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte produced
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def display_path(path: str) -> str:
    """Relative to the current directory when below it, as ruff prints paths."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return printable(path)
    return printable(path if rel.startswith("..") else rel)
