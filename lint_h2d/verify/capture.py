"""Level 4: H2D002's device-only zero form, on a simulated capture sequence.

Why a simulation: the bug (vLLM PR #51585) is not about bits written by one statement but about
what a *later* reader sees.  A metadata object holds ``query_start_loc`` (the device tensor,
simulated on the CPU when there is no GPU) and ``query_start_loc_cpu``; the capture body runs
with and without the CPU mutation, then a builder that runs after capture computes query
lengths from the CPU offsets.  The fix must leave the device tensor exactly as before and the
CPU offsets intact (lengths > 0, where the original gives 0).
"""
from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from lint_h2d.rules.capture_mutates_shared_cpu_metadata import device_sibling_path
from lint_h2d.verify.equivalence import bitwise_equal, compile_statement
from lint_h2d.verify.pairs import PROVIDED, StatementPair, attribute_chain, free_names

OFFSETS: Tuple[int, ...] = (0, 3, 4, 9, 11)  # query_start_loc of 4 requests: lengths 3, 1, 5, 2


@dataclass(frozen=True)
class CaptureVerdict:
    verified: bool
    device_equal: bool
    original_lengths: Tuple[int, ...]
    fixed_lengths: Tuple[int, ...]
    detail: str


def device_statement(cpu_statement: str, cpu_path: str) -> str:
    """The device sibling's write that the capture function keeps (the rule requires one for removal)."""
    sibling = device_sibling_path(cpu_path)
    assert sibling is not None
    return re.sub(re.escape(cpu_path) + r"\b", sibling, cpu_statement, count=1)


def _metadata(chain: Sequence[str], device: torch.device) -> Tuple[Dict[str, Any], Any]:
    """Namespace with ``root.….x_cpu`` and ``root.….x`` holding the same offsets."""
    holder = types.SimpleNamespace()
    setattr(holder, chain[-1], torch.tensor(OFFSETS, dtype=torch.int32))
    setattr(holder, chain[-1][: -len("_cpu")], torch.tensor(OFFSETS, dtype=torch.int32, device=device))
    value: Any = holder
    for attr in reversed(chain[1:-1]):
        value = types.SimpleNamespace(**{attr: value})
    return {"__builtins__": __builtins__, "torch": torch, chain[0]: value}, holder


def query_lens(cpu_offsets: torch.Tensor) -> Tuple[int, ...]:
    """What the builders after capture compute (``decode_query_len`` etc.)."""
    return tuple(int(x) for x in (cpu_offsets[1:] - cpu_offsets[:-1]).tolist())


def _is_removal(rewritten: str) -> bool:
    return rewritten.strip() in ("", "pass")


def run_body(statements: Sequence[str], chain: Sequence[str], device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
    """Execute a capture body; returns (device tensor, CPU tensor) afterwards."""
    ns, holder = _metadata(chain, device)
    for code in statements:
        if code.strip():
            exec(compile_statement(code), ns)
    return getattr(holder, chain[-1][: -len("_cpu")]), getattr(holder, chain[-1])


def simulate(pair: StatementPair, device: Optional[torch.device] = None) -> CaptureVerdict:
    """Original body (device zero + CPU mutation) vs fixed body; then the later reader."""
    device = device or torch.device("cpu")
    chain = attribute_chain(pair.target)
    if not chain or len(chain) < 2 or device_sibling_path(pair.target) is None:
        return CaptureVerdict(False, False, (), (), f"cannot simulate target `{pair.target}` (needs `obj.x_cpu`)")
    unknown = [n for n in free_names(pair.original) + free_names(pair.rewritten or "pass")
               if n not in PROVIDED and n != chain[0]]
    if unknown:
        return CaptureVerdict(False, False, (), (), f"cannot bind {', '.join(dict.fromkeys(unknown))}")
    try:
        if _is_removal(pair.rewritten):
            keep = device_statement(pair.original, pair.target)
            dev_a, cpu_a = run_body([keep, pair.original], chain, device)
            dev_b, cpu_b = run_body([keep, pair.rewritten], chain, device)
            device_ok = bitwise_equal(dev_a.cpu(), dev_b.cpu())
        else:  # the unsafe fix: the same mutation moved onto the device sibling
            dev_a, cpu_a = run_body([pair.original], chain, device)
            dev_b, cpu_b = run_body([pair.rewritten], chain, device)
            device_ok = bitwise_equal(cpu_a.cpu(), dev_b.cpu())
    except Exception as exc:
        return CaptureVerdict(False, False, (), (), f"raised {type(exc).__name__}: {exc}")
    true = query_lens(torch.tensor(OFFSETS))
    before, after = query_lens(cpu_a), query_lens(cpu_b)
    ok = device_ok and after == true and all(x > 0 for x in after)
    detail = (f"device tensor {'identical' if device_ok else 'DIFFERS'}; query lengths from CPU offsets: "
              f"original {list(before)}, fixed {list(after)}")
    return CaptureVerdict(ok, device_ok, before, after, detail)


CAPTURE_SOURCE = '''\
class RocmAttentionMetadataBuilder:
    def build_for_cudagraph_capture(self, common_attn_metadata):
        attn_metadata = self.build(0, common_attn_metadata)
        common_attn_metadata.query_start_loc.zero_()
        common_attn_metadata.query_start_loc_cpu.zero_()
        return attn_metadata
'''


def matrix_pairs() -> List[StatementPair]:
    """The seed capture function through the real engine and fixer (no rewrite re-implemented)."""
    from lint_h2d.config import Settings
    from lint_h2d.engine import Engine, project_facts, decode
    from lint_h2d.verify.pairs import pairs_for_source

    source = decode("capture_seed.py", CAPTURE_SOURCE.encode())
    engine = Engine(Settings(), project_facts([source]))
    pairs, _ = pairs_for_source(engine, source)
    return [p for p in pairs if p.code == "H2D002"]
