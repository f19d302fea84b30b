"""Level 2: which aten ops a statement dispatches on a (fake) CUDA tensor, without a GPU.

Why: the host→device copy is visible in the dispatcher as ``aten.copy_(cuda dst, cpu src)``.
``FakeTensorMode`` makes ``cuda`` tensors without memory; ``setitem`` still needs a CUDA
device guard, which a CPU-only build lacks, so c10's ``FakeGuardImpl`` is registered for CUDA
from a tiny inline C++ extension (built once into a cache folder outside the repo).
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from lint_h2d.verify.equivalence import build_namespace, compile_statement

_GUARD_SOURCE = r"""
#include <c10/core/impl/FakeGuardImpl.h>
#include <torch/extension.h>
// A device guard for CUDA on a CPU-only build: lets FakeTensorMode run setitem on "cuda".
C10_REGISTER_GUARD_IMPL(CUDA, c10::impl::FakeGuardImpl<c10::DeviceType::CUDA>);
int lint_h2d_fake_cuda_guard() { return 1; }
"""
_STATE: Dict[str, Any] = {}


class FakeCudaUnavailable(RuntimeError):
    """The fake CUDA guard could not be built or loaded; the message says why."""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "lint-h2d" / "torch_ext" / torch.__version__.replace("+", "_")


#: A build of the guard takes under a minute; a lock older than this was left by a killed run.
STALE_LOCK_SECONDS = 600.0


def clear_stale_lock(folder: Path, now: Optional[float] = None) -> bool:
    """Remove ``folder/lock`` when a killed build left it behind; True if removed.

    Why: torch's ``load_inline`` waits, forever and silently, while that file exists, so one
    interrupted ``verify`` (or test run) would hang every later one.  A lock younger than
    :data:`STALE_LOCK_SECONDS` may belong to a build in progress and is kept."""
    lock = folder / "lock"
    try:
        age = (time.time() if now is None else now) - lock.stat().st_mtime
    except OSError:
        return False
    if age < STALE_LOCK_SECONDS:
        return False
    try:
        lock.unlink()
    except OSError:
        return False
    return True


@contextmanager
def build_lock(folder: Path) -> Iterator[None]:
    """Held while the guard is built into ``folder``: an exclusive ``flock`` on
    ``folder/build.flock``, which the kernel releases when its process dies, and, once held,
    torch's own ``folder/lock`` removed whatever its age.

    Why: torch's ``load_inline`` waits, forever and silently, while ``lock`` exists, and a
    build killed between creating and removing it (Ctrl-C during a first ``verify``, a test run
    stopped) leaves it behind: the next run hung until :data:`STALE_LOCK_SECONDS` had passed,
    and one already waiting hung for good.  Every build here holds the flock first, so a
    ``lock`` found while holding it belongs to no live build.  Where ``fcntl`` is missing
    (Windows) only an old lock is cleared (`clear_stale_lock`)."""
    try:
        import fcntl
    except ImportError:
        clear_stale_lock(folder)
        yield
        return
    with open(folder / "build.flock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # waits for a live build to finish
        try:
            try:
                (folder / "lock").unlink()
            except FileNotFoundError:
                pass
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _cuda_compiled() -> bool:
    return bool(torch.version.cuda or torch.version.hip)


def ensure_fake_cuda() -> str:
    """Make ``device="cuda"`` fake tensors usable; returns how (for the report).

    A build with CUDA/ROCm compiled in already has a guard; a CPU-only build gets the fake one.
    Raises :class:`FakeCudaUnavailable` when the extension cannot be built.
    """
    if "how" in _STATE:
        return str(_STATE["how"])
    if "failed" in _STATE:  # do not rebuild (tens of seconds) after a failure in this process
        raise FakeCudaUnavailable(str(_STATE["failed"]))
    if _cuda_compiled():
        _STATE["how"] = "fake tensors on the build's own CUDA guard"
        return str(_STATE["how"])
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        from torch.utils.cpp_extension import load_inline

        with build_lock(folder):
            load_inline(  # type: ignore[no-untyped-call]
                "lint_h2d_fake_cuda_guard", cpp_sources=[_GUARD_SOURCE],
                functions=["lint_h2d_fake_cuda_guard"], build_directory=str(folder), verbose=False,
            )
    except Exception as exc:  # compiler, ninja or headers missing: say which
        _STATE["failed"] = (
            f"cannot build the fake CUDA guard extension in {folder}: {type(exc).__name__}: "
            f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else ''} (needs g++ and ninja)"
        )
        raise FakeCudaUnavailable(str(_STATE["failed"])) from exc
    _STATE["how"] = "FakeTensorMode + c10 FakeGuardImpl<CUDA> (CPU-only torch build)"
    return str(_STATE["how"])


@dataclass(frozen=True)
class Op:
    name: str
    devices: Tuple[str, ...]  # devices of the tensor arguments, in order
    shapes: Tuple[Tuple[int, ...], ...]

    def __str__(self) -> str:
        args = ", ".join(f"T{list(s)}@{d}" for d, s in zip(self.devices, self.shapes))
        return f"{self.name}({args})"


class OpRecorder(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Logs every aten op with the devices and shapes of its tensor arguments."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.ops: List[Op] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if not str(func).startswith("prim."):
            self.ops.append(Op(str(func), tuple(t.device.type for t in tensors), tuple(tuple(t.shape) for t in tensors)))
        return func(*args, **(kwargs or {}))


def is_h2d_copy(op: Op) -> bool:
    """``copy_`` into a device tensor from a CPU tensor: the blocking upload."""
    return op.name.startswith("aten.copy_") and len(op.devices) >= 2 and op.devices[0] == "cuda" and op.devices[1] == "cpu"


@dataclass(frozen=True)
class Trace:
    ops: Tuple[Op, ...]
    error: Optional[str] = None

    @property
    def h2d_copies(self) -> int:
        return sum(1 for op in self.ops if is_h2d_copy(op))

    def summary(self) -> str:
        if self.error:
            return f"raised {self.error}"
        return ", ".join(str(op) for op in self.ops if not op.name.startswith("aten.lift_fresh")) or "(no ops)"


def trace_statement(code: str, target: str, dtype: torch.dtype, shape: Tuple[int, ...],
                    bindings: Mapping[str, Any], gate: Optional[bool]) -> Trace:
    """Run one statement on a fake ``cuda`` tensor and record the aten ops it dispatches."""
    ensure_fake_cuda()
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        tensor = torch.empty(shape, dtype=dtype, device="cuda")
        ns = build_namespace(target, tensor, bindings, gate)
        recorder = OpRecorder()
        try:
            with recorder:
                exec(compile_statement(code), ns)
        except Exception as exc:
            return Trace(tuple(recorder.ops), f"{type(exc).__name__}: {exc}")
    return Trace(tuple(recorder.ops))


def scalar_setitem_copies() -> bool:
    """Does the installed torch still copy host→device for ``t[0] = 0``? (Upstream tried ``fill_``.)"""
    if "setitem_copies" not in _STATE:
        trace = trace_statement("t[0] = 0", "t", torch.int32, (4,), {}, None)
        _STATE["setitem_copies"] = trace.h2d_copies > 0
    return bool(_STATE["setitem_copies"])
