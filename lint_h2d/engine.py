"""The engine's public names, from the modules that hold them (kept for callers and tests).

The pipeline follows the data:

- `lint_h2d.sources`: reading, decoding and atomically writing a file;
- `lint_h2d.triage`: the prefilter's decision on one file, which imports no LibCST;
- `lint_h2d.analysis`: one file's text through prefilter, parse, walk, rules and noqa;
- `lint_h2d.fix_loop`: applying fixes until none is left, re-analyzing after each pass;
- `lint_h2d.pipeline`: many files, the project's facts and the worker pool;
- `lint_h2d.diagnostics`: the error codes lint-h2d reports about itself.

Importing this module imports LibCST (through `analysis`); the command line imports the
light modules directly, so that a run answered from the cache never loads a parser.
"""
from __future__ import annotations

from lint_h2d.analysis import (
    DEEP_RECURSION_LIMIT,
    DEEP_STACK_BYTES,
    Engine,
    run_with_deep_stack,
)
from lint_h2d.triage import cpython_parse
from lint_h2d.diagnostics import (
    ERROR_CODES,
    INTERNAL_ERROR,
    IO_ERROR,
    SYNTAX_ERROR,
    describe_exception,
    error_finding,
)
from lint_h2d.fix_loop import MAX_FIX_ITERATIONS
from lint_h2d.pipeline import (
    FileResult,
    Unit,
    analyze_many,
    default_jobs,
    load_sources,
    merge_classes,
    own_classes,
    project_facts,
)
from lint_h2d.sources import Source, SourceError, WriteError, decode, read_source, write_atomic

__all__ = [
    "Engine", "FileResult", "Unit", "analyze_many", "default_jobs", "error_finding", "load_sources",
    "project_facts", "own_classes", "merge_classes", "describe_exception", "run_with_deep_stack",
    "cpython_parse", "DEEP_RECURSION_LIMIT", "DEEP_STACK_BYTES", "MAX_FIX_ITERATIONS",
    "ERROR_CODES", "INTERNAL_ERROR", "IO_ERROR", "SYNTAX_ERROR",
    # reading and writing sources live in lint_h2d.sources; re-exported for callers
    "Source", "SourceError", "WriteError", "decode", "read_source", "write_atomic",
]
