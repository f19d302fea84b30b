"""Level 3: the facts on a real GPU (CUDA or ROCm), run only when ``torch.cuda.is_available()``.

Why each probe:
* ``torch.profiler`` names the copy: runtime calls ``cudaStreamSynchronize`` (CUDA) /
  ``hipMemcpyWithStream`` (ROCm) and ``Memcpy HtoD`` activities.  ``cudaMemcpyAsync`` also
  serves device-to-device copies, so it is not counted.
* ``torch.cuda.set_sync_debug_mode("error")`` raises on a synchronizing statement.
* ``torch.cuda.graph`` capture: the rewrite must capture; the original is expected to fail
  ("operation not permitted when stream is capturing").
* host submission time while a long kernel is queued: the original waits for the queue.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

import torch

from lint_h2d.verify.equivalence import build_namespace, compile_statement

SYNC_EVENTS = ("cudaStreamSynchronize", "hipStreamSynchronize", "hipMemcpyWithStream", "cudaDeviceSynchronize")
SLEEP_CYCLES = 50_000_000  # a queued kernel of some tens of milliseconds


def available() -> bool:
    return bool(torch.cuda.is_available())


def backend() -> str:
    """``rocm <hip>`` or ``cuda <version>`` plus the device name."""
    kind = f"rocm {torch.version.hip}" if torch.version.hip else f"cuda {torch.version.cuda}"
    return f"{kind} ({torch.cuda.get_device_name(0)})"


@dataclass(frozen=True)
class GpuFacts:
    syncs: Tuple[int, int]  # (original, rewrite) synchronizing runtime calls
    htod: Tuple[int, int]  # (original, rewrite) Memcpy HtoD activities
    sync_debug: Tuple[str, str]
    capture: Tuple[str, str]
    submit_ms: Tuple[float, float]
    equal_after_replay: Optional[bool]

    @property
    def ratio(self) -> float:
        return self.submit_ms[0] / self.submit_ms[1] if self.submit_ms[1] > 0 else float("inf")


Runner = Callable[[], None]


def _runner(code: str, target: str, tensor: torch.Tensor, bindings: Mapping[str, Any]) -> Runner:
    ns = build_namespace(target, tensor, bindings, True)  # gate forced to the device-form branch
    compiled = compile_statement(code)
    return lambda: exec(compiled, ns)


def _profile_counts(run: Runner) -> Tuple[int, int]:
    from torch.profiler import ProfilerActivity, profile

    run()  # warm up outside the profile (lazy init, caching allocator)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    syncs = sum(1 for n in names if any(s in n for s in SYNC_EVENTS) and "Device" not in n)
    htod = sum(1 for n in names if n.startswith("Memcpy HtoD"))
    return syncs, htod


def _sync_debug(run: Runner) -> str:
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        run()
        result = "no error"
    except RuntimeError as exc:
        result = f"raises ({str(exc).splitlines()[0][:60]})"
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    torch.cuda.synchronize()
    return result


def _submit_ms(run: Runner, repeats: int = 7) -> float:
    """Host time to submit the statement while a long kernel is queued (median)."""
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        torch.cuda._sleep(SLEEP_CYCLES)  # type: ignore[no-untyped-call]
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
        torch.cuda.synchronize()
    return statistics.median(times)


def _capture(run: Runner) -> Tuple[str, Optional[torch.cuda.CUDAGraph]]:
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()  # type: ignore[no-untyped-call]
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run()  # warm-up on a side stream, as torch.cuda.graph's docs ask
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    try:
        with torch.cuda.graph(graph):
            run()
    except Exception as exc:
        torch.cuda.synchronize()
        return f"fails ({str(exc).splitlines()[0][:70]})", None
    return "captures", graph


def measure(original: str, rewritten: str, target: str, dtype: torch.dtype, shape: Tuple[int, ...],
            bindings: Mapping[str, Any]) -> GpuFacts:
    """All level-3 facts for one pair; the original's capture runs last (it may fail)."""
    base = torch.arange(1, 1 + int(torch.tensor(shape).prod()), dtype=torch.float32).reshape(shape).to(dtype)
    t_a, t_b = base.cuda(), base.cuda()
    run_a, run_b = _runner(original, target, t_a, bindings), _runner(rewritten, target, t_b, bindings)
    syncs_a, htod_a = _profile_counts(run_a)
    syncs_b, htod_b = _profile_counts(run_b)
    debug = (_sync_debug(run_a), _sync_debug(run_b))
    timing = (_submit_ms(run_a), _submit_ms(run_b))
    t_b.copy_(base.cuda())
    cap_b, graph = _capture(run_b)
    equal: Optional[bool] = None
    if graph is not None:
        t_b.copy_(base.cuda())
        graph.replay()
        torch.cuda.synchronize()
        t_a.copy_(base.cuda())
        run_a()
        torch.cuda.synchronize()
        equal = bool(torch.equal(t_a.view(-1).view(torch.uint8), t_b.view(-1).view(torch.uint8)))
    cap_a, _ = _capture(run_a)
    return GpuFacts((syncs_a, syncs_b), (htod_a, htod_b), debug, (cap_a, cap_b), timing, equal)


def describe(facts: GpuFacts) -> Dict[str, str]:
    return {
        "syncs": f"{facts.syncs[0]} / {facts.syncs[1]}",
        "htod": f"{facts.htod[0]} / {facts.htod[1]}",
        "sync_debug": f"{facts.sync_debug[0]} / {facts.sync_debug[1]}",
        "capture": f"{facts.capture[0]} / {facts.capture[1]}",
        "submit": f"{facts.submit_ms[0]:.3f} ms / {facts.submit_ms[1]:.3f} ms (x{facts.ratio:.0f})",
    }
