"""Runtime proof that lint-h2d's fixes are equivalent to the code they replace.

torch is optional for the linter, so nothing here imports it at import time: the CLI calls
:func:`run_verify`, which says clearly (exit 2) when torch is missing.
"""
from __future__ import annotations

import argparse
import importlib.util
from typing import TextIO

EXIT_ERROR = 2


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def run_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Entry point of ``lint-h2d verify`` (see :mod:`lint_h2d.verify.run`)."""
    if not torch_available():
        err.write(
            "lint-h2d: error: `verify` needs PyTorch, which is not installed "
            "(install the CPU build: `pip install torch`, or `pip install 'lint-h2d[verify]'`)\n"
        )
        return EXIT_ERROR
    import warnings

    from lint_h2d.verify.run import run_verify as _run

    # torch warns while it runs the cases (deprecations, fake-tensor notes): collected and
    # printed after the report on stderr, so they never interleave with the table.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        code = _run(args, out, err)
    out.flush()
    for message in dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught):
        err.write(f"lint-h2d: warning (from the verified code's torch): {message}\n")
    return code


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `verify` subcommand's options (kept here so cli.py only wires it in)."""
    parser.add_argument("paths", nargs="*", help="files or folders to verify the fixes of (default: .)")
    parser.add_argument("--matrix", action="store_true", help="run the built-in matrix instead of files")
    parser.add_argument("--no-fake-cuda", action="store_true",
                        help="skip level 2 (the fake-CUDA op trace, which builds a tiny C++ extension once)")
    parser.add_argument("--no-gpu", action="store_true", help="skip level 3 even when a GPU is present")
