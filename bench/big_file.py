"""One big file: does checking (and fixing) it cost time linear in its size and bounded memory?

    python bench/big_file.py [--sizes 10000,30000,100000] [--fix [--unsafe-fixes]] [--keep DIR] [--json out.json]

Generates a synthetic module of N lines with about one H2D001 finding per 10 lines (module-level
and in-function scalar writes into device tensors, redundant writes after `torch.zeros`, writes
through `self.` attributes, most with a safe fix), then runs, each in its own process (wall time,
CPU time and peak RSS from `wait4`):

* `check --no-cache --select H2D001,H2D002 --output-format json` (findings and fixes as `check`
  reports them);
* `check --no-cache --select H2D001,H2D002 --fix` on a copy (with `--fix-only`-like intent: the
  file is rewritten), when `--fix` is given; with `--unsafe-fixes` too, `--fix --unsafe-fixes`
  (every finding's fix applied: the fix loop at its largest).

It prints one row per size and case, and the cost per 1,000 lines (wall and CPU): a linear cost
keeps those columns flat as the file grows (on a loaded machine, compare the CPU column).  Issue 15 item 22's target: cost linear in the file's size and
peak RSS <= 300 MB for a 100k-line file.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent

HEADER = '''"""Synthetic serving module (bench/big_file.py): scalar writes into device tensors."""
import torch

_DEVICE = "cuda"


'''

# Each block is exactly 10 lines and holds exactly one finding; `{k}` makes names unique.
BLOCKS = (
    # module-level allocation and write
    '''buf_{k} = torch.empty(16, dtype=torch.int32, device="cuda")
buf_{k}[0] = 0
# padding so that every block holds ten lines
value_{k} = {k} * 2
other_{k} = [value_{k}, value_{k} + 1]


def helper_{k}(x):
    return x + {k}

''',
    # in-function allocation with a proven length and a write at the end
    '''def prepare_{k}(num_reqs: int, seq_lens):
    cu_{k} = torch.empty(num_reqs + 1, dtype=torch.int32, device=_DEVICE)
    cu_{k}[0] = 0
    torch.cumsum(seq_lens, dim=0, out=cu_{k}[1:])
    total = int(seq_lens.sum())
    if total > {k}:
        total = {k}
    return cu_{k}, total


''',
    # a redundant write right after torch.zeros (safe deletion)
    '''def flags_{k}(device):
    meta = torch.zeros((1, 8), dtype=torch.int32, device="cuda")
    meta[0, 1] = 0
    scale = 1.0 + {k}
    out = meta.float() * scale
    for i in range(2):
        out = out + i
    return out


''',
    # a method writing into a device attribute (non-literal index: unsafe fix)
    '''class Runner{k}:
    def __init__(self, n: int):
        self.positions = torch.zeros(n, dtype=torch.int64, device="cuda")
        self.n = n

    def step(self, i: int):
        self.positions[i] = 7
        return self.positions


''',
)


def generate(lines: int) -> str:
    """A module of about ``lines`` lines, one finding per ten lines."""
    parts = [HEADER]
    count = HEADER.count("\n")
    k = 0
    while count < lines:
        block = BLOCKS[k % len(BLOCKS)].format(k=k)
        parts.append(block)
        count += block.count("\n")
        k += 1
    return "".join(parts)


def measure(cmd: Sequence[str], cwd: Path, code: Path) -> Dict[str, object]:
    """Wall time, CPU time (user+sys) and peak RSS (MB) of one command, from ``wait4`` on its pid
    (its worker processes, if any, are counted by the CPU time only)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    out_path = cwd / ".stdout"
    err_path = cwd / ".stderr"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "rc": os.waitstatus_to_exitcode(status), "stdout": out_path.read_bytes(),
            "stderr": err_path.read_bytes()}


def bench(sizes: Sequence[int], fix: bool, keep: Optional[Path], code: Path,
          unsafe: bool = False) -> List[Dict[str, object]]:
    rows: List[Dict[str, object]] = []
    base = Path(tempfile.mkdtemp(prefix="lint-h2d-big-"))
    try:
        for size in sizes:
            folder = base / str(size)
            folder.mkdir()
            (folder / "pyproject.toml").write_text("[tool.lint-h2d]\n")
            text = generate(size)
            path = folder / "big.py"
            path.write_text(text)
            lines = text.count("\n")
            cmd = [sys.executable, "-m", "lint_h2d", "check", "--no-cache", "--select", "H2D001,H2D002",
                   "--output-format", "json", "big.py"]
            result = measure(cmd, folder, code)
            findings = json.loads(result["stdout"] or b"[]")  # type: ignore[arg-type]
            fixable = sum(1 for f in findings if f.get("fix"))
            rows.append(_row("check", lines, result, len(findings), fixable))
            if fix:
                shutil.copy(path, folder / "fixed.py")
                cmd = [sys.executable, "-m", "lint_h2d", "check", "--no-cache", "--select", "H2D001,H2D002",
                       "--fix", *(["--unsafe-fixes"] if unsafe else []), "-q", "fixed.py"]
                result = measure(cmd, folder, code)
                case = "check --fix --unsafe-fixes" if unsafe else "check --fix"
                rows.append(_row(case, lines, result, len(findings), fixable))
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, keep / f"big_{size}.py")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rows


def _row(case: str, lines: int, result: Dict[str, object], findings: int, fixable: int) -> Dict[str, object]:
    wall = float(result["wall"])  # type: ignore[arg-type]
    cpu = float(result["cpu"])  # type: ignore[arg-type]
    if result["rc"] not in (0, 1):
        sys.stderr.write(bytes(result["stderr"]).decode(errors="replace")[-2000:])  # type: ignore[arg-type]
    return {"case": case, "lines": lines, "findings": findings, "fixable": fixable, "rc": result["rc"],
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "rss_mb": round(float(result["rss_mb"]), 1),  # type: ignore[arg-type]
            "ms_per_1k_lines": round(1000 * wall / (lines / 1000), 1),
            "cpu_ms_per_1k_lines": round(1000 * cpu / (lines / 1000), 1)}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,30000,100000")
    parser.add_argument("--fix", action="store_true", help="also time `check --fix` on a copy")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix: `--fix --unsafe-fixes`")
    parser.add_argument("--keep", type=Path, help="copy the generated files here")
    parser.add_argument("--json", type=Path, help="write the rows as JSON")
    parser.add_argument("--code", type=Path, default=REPO,
                        help="the lint-h2d checkout to run (default: this one; e.g. another worktree for before/after)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    load = os.getloadavg()[0]
    rows = bench(sizes, args.fix, args.keep, args.code.resolve(), args.unsafe_fixes)
    print(f"# {args.code}: Python {platform.python_version()} on {platform.machine()}, nproc={os.cpu_count()}, "
          f"load average before {load:.2f}")
    print("| case | lines | findings | fixable | wall s | CPU s | peak RSS MB | wall ms / 1k lines "
          "| CPU ms / 1k lines |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['lines']} | {r['findings']} | {r['fixable']} | {r['wall_s']} | {r['cpu_s']} "
              f"| {r['rss_mb']} | {r['ms_per_1k_lines']} | {r['cpu_ms_per_1k_lines']} |")
    print(f"# load average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
