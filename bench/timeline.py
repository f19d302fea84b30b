"""A cold scan's timeline from `LINT_H2D_TRACE` (lint_h2d/trace.py): per process, when each
phase ran and the CPU it took, and how long the cores sat idle.

Usage: LINT_H2D_TRACE=/tmp/t.tsv python -m lint_h2d check --no-cache ... ; python bench/timeline.py /tmp/t.tsv

A process is busy inside its phases but for those named `*.wait` (it waits for another) and
for the outer phases (`plan`, `analyze_many`, `analysis.pool`, `index.build`) that hold
others; the idle cores at an instant are the cores (`--cores`, 2 by default) less the busy
processes (a process counts once, inside nested phases).  Idle here is "no traced phase":
a process's untraced work (the main process's walk before `index.build`) counts as idle.
Per-file phases (`row`, `read_row`, `analyze`) are shown as one line per process with their
count, first start and last end.
"""
from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Dict, List, Tuple

Span = Tuple[int, str, float, float, float, float]
OUTER = {"plan", "analyze_many", "analysis.pool", "index.build"}
PER_FILE = {"row", "read_row", "analyze"}


def read(path: str) -> List[Span]:
    spans: List[Span] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            pid, name, w0, w1, c0, c1 = line.rstrip("\n").split("\t")
            spans.append((int(pid), name, float(w0), float(w1), float(c0), float(c1)))
    return spans


def busy(span: Span) -> bool:
    return not span[1].endswith(".wait") and span[1] not in OUTER


def idle_seconds(spans: List[Span], cores: int, start: float, end: float, step: float = 0.01) -> List[Tuple[float, float]]:
    """(time, idle cores) sampled every `step` seconds."""
    intervals = [(s[0], s[2], s[3]) for s in spans if busy(s)]
    out: List[Tuple[float, float]] = []
    t = start
    while t < end:
        n = len({pid for pid, a, b in intervals if a <= t < b})  # nested phases: one process
        out.append((t, max(0, cores - n)))
        t += step
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    spans = read(args.trace)
    t0 = min(s[2] for s in spans)
    t_end = max(s[3] for s in spans)
    by_pid: Dict[int, List[Span]] = defaultdict(list)
    for s in spans:
        by_pid[s[0]].append(s)
    print(f"{'pid':>8} {'phase':<16} {'start':>7} {'end':>7} {'wall':>6} {'cpu':>6} {'n':>5}")
    for pid, mine in sorted(by_pid.items(), key=lambda kv: min(s[2] for s in kv[1])):
        grouped: Dict[str, List[Span]] = defaultdict(list)
        for s in mine:
            grouped[s[1]].append(s)
        for name, group in sorted(grouped.items(), key=lambda kv: min(s[2] for s in kv[1])):
            if name in PER_FILE or len(group) == 1:
                a = min(s[2] for s in group) - t0
                b = max(s[3] for s in group) - t0
                wall = sum(s[3] - s[2] for s in group)
                cpu = sum(s[5] - s[4] for s in group)
                print(f"{pid:>8} {name:<16} {a:7.2f} {b:7.2f} {wall:6.2f} {cpu:6.2f} {len(group):>5}")
            else:
                for s in group:
                    print(f"{pid:>8} {name:<16} {s[2] - t0:7.2f} {s[3] - t0:7.2f} {s[3] - s[2]:6.2f} "
                          f"{s[5] - s[4]:6.2f} {1:>5}")
    samples = idle_seconds(spans, args.cores, t0, t_end)
    print(f"\ntraced span {t_end - t0:.2f} s; idle core-seconds by second (cores={args.cores}):")
    per_second: Dict[int, float] = defaultdict(float)
    for t, idle in samples:
        per_second[int(t - t0)] += idle * 0.01
    print(" ".join(f"{k}:{v:.1f}" for k, v in sorted(per_second.items())))
    print(f"total idle core-seconds: {sum(per_second.values()):.2f}")


if __name__ == "__main__":
    main()
