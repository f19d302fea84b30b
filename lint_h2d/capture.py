"""What counts as CUDA-graph capture code: one definition for the walk, the prefilter and the
configuration (kept free of LibCST so the prefilter and config load fast)."""
from __future__ import annotations

import fnmatch
from typing import Mapping, Sequence, Tuple

# Function names that are capture functions by themselves (vLLM's attention-metadata builders).
# Other capture code is found from evidence (`lint_h2d/capture_flow.py`): graph blocks,
# `capture_begin()`...`capture_end()`, functions called from them, functions nested in capture
# functions.  A name fragment such as `*capture*` is no evidence: it matched any method called
# `capture` and forward hooks such as `capture_hidden`.
DEFAULT_CAPTURE_FUNCTIONS: Tuple[str, ...] = ("build_for_cudagraph_capture",)
# `with torch.cuda.graph(g):` (also `torch.cuda.graphs.graph`), and vLLM's `graph_capture()`.
GRAPH_CONTEXT_SUFFIXES: Tuple[str, ...] = ("cuda.graph", "cuda.graphs.graph")
GRAPH_CONTEXT_NAMES: Tuple[str, ...] = ("graph_capture",)


def is_capture_name(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def is_graph_context(dotted: str) -> bool:
    """`dotted` is the callee (or object) of a `with` item, e.g. "torch.cuda.graph"."""
    return dotted.endswith(GRAPH_CONTEXT_SUFFIXES) or dotted in GRAPH_CONTEXT_NAMES


def is_graph_context_in(written: str, aliases: Mapping[str, str]) -> bool:
    """`written` as spelled in a file whose imports bind `aliases` (bound name → dotted module
    path): `tc.graph` after `import torch.cuda as tc`, `graph` after `from torch.cuda import
    graph`, `ps.graph_capture` after `from vllm.distributed import parallel_state as ps`."""
    head, _, rest = written.partition(".")
    resolved = aliases.get(head, head) + ("." + rest if rest else "")
    # Only what resolves to torch's own `graph` counts: `self.cuda.graph(g)` ends the same way.
    if resolved.startswith("torch.") and is_graph_context(resolved):
        return True
    return resolved in GRAPH_CONTEXT_NAMES or resolved.endswith(tuple("." + n for n in GRAPH_CONTEXT_NAMES))
