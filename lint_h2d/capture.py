"""What counts as CUDA-graph capture code: one definition for the walk, the prefilter and the
configuration (kept free of LibCST so the prefilter and config load fast)."""
from __future__ import annotations

import fnmatch
from typing import Sequence, Tuple

DEFAULT_CAPTURE_FUNCTIONS: Tuple[str, ...] = ("build_for_cudagraph_capture", "*capture*")
# `with torch.cuda.graph(g):` (also `torch.cuda.graphs.graph`), and vLLM's `graph_capture()`.
GRAPH_CONTEXT_SUFFIXES: Tuple[str, ...] = ("cuda.graph", "cuda.graphs.graph")
GRAPH_CONTEXT_NAMES: Tuple[str, ...] = ("graph_capture",)


def is_capture_name(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def is_graph_context(dotted: str) -> bool:
    """`dotted` is the callee (or object) of a `with` item, e.g. "torch.cuda.graph"."""
    return dotted.endswith(GRAPH_CONTEXT_SUFFIXES) or dotted in GRAPH_CONTEXT_NAMES
