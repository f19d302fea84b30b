#!/usr/bin/env python3
"""The resolve alone, A/B between two trees of lint-h2d (a perf change to `project.resolve`
must give the very same facts).

    python bench/resolve_ab.py build ROOT OUT.pkl     # summaries of ROOT's files, once
    python bench/resolve_ab.py run OUT.pkl [--rounds N]  # resolve them, print CPU and digests

`build` makes the summaries as a cold run's resolving child holds them (`bench/phases.py`'s
read-back: every part, then the call sites of `read_callees`' names) and pickles them.  `run`
loads them, resolves with the `lint_h2d` on its `sys.path` (run it with `PYTHONPATH=` one tree,
then the other, each in its own process), and prints the resolve's CPU (`time.process_time`,
the collector paused as the child pauses it) and two digests: SHA-256 of
`pickle.dumps(resolved)` and `fingerprint_of(resolved)`.  Equal digests: byte-identical facts (the script runs itself
under `PYTHONHASHSEED=0`: a frozenset of strings pickles in an order the hash seed decides).
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import os
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.setrecursionlimit(10_000)


def build(root: Path, out: Path) -> None:
    """Pickle the summaries of ROOT's files, read back as the resolving child reads them."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from phases import python_files

    from lint_h2d.inference.project import read_callees
    from lint_h2d.inference.summary import FileSummary, calls_from_json, from_json, summarize_tree
    from lint_h2d.parse_chunks import parse_python

    summaries: List[FileSummary] = []
    for path in python_files(root):
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            summaries.append(FileSummary(path))
            continue
        summaries.append(summarize_tree(path, tree))
    blobs = [(s.path, s.to_json()) for s in summaries]
    memo: Dict[Any, Any] = {}
    found = [from_json(p, {k: v for k, v in j.items() if k != "calls"}, memo) for p, j in blobs]
    callees = read_callees(found)
    back = [replace(s, calls=calls_from_json(j.get("calls", ()), memo, callees)) for s, (_, j) in zip(found, blobs)]
    out.write_bytes(pickle.dumps(back, protocol=pickle.HIGHEST_PROTOCOL))
    print(f"{root}: {len(back)} summaries -> {out}")


def run(source: Path, rounds: int) -> None:
    """Resolve the pickled summaries `rounds` times (fresh copies each time); print CPU and digests."""
    import lint_h2d
    from lint_h2d.inference.project import fingerprint_of, resolve

    blob = source.read_bytes()
    times: List[float] = []
    digest: Optional[str] = None
    for _ in range(rounds):
        summaries = pickle.loads(blob)
        gc.collect()
        gc.disable()
        start = time.process_time()
        resolved = resolve(summaries)
        times.append(time.process_time() - start)
        gc.enable()
        now = hashlib.sha256(pickle.dumps(resolved, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()[:16] \
            + " " + fingerprint_of(resolved)
        assert digest is None or digest == now, "the resolve differs between rounds"
        digest = now
        del resolved, summaries
    print(f"{Path(lint_h2d.__file__).parent.parent} {source.name} cpu " + " ".join(f"{t:.2f}" for t in times)
          + f" digest {digest}")


def main(argv: Optional[List[str]] = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # A frozenset of strings pickles in its iteration order, which the hash seed decides:
        # two processes' pickles compare only under one seed.
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, "PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("root", type=Path)
    b.add_argument("out", type=Path)
    r = sub.add_parser("run")
    r.add_argument("source", type=Path)
    r.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.root, args.out)
    else:
        run(args.source, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
