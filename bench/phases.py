#!/usr/bin/env python3
"""Where a cold scan's CPU goes, phase by phase, in one process (issue 12's "profile of the
cold scan").

    python bench/phases.py ROOT                  # CPU seconds per phase over ROOT's .py files
    python bench/phases.py ROOT --profile summaries   # and a cProfile of one phase

ROOT is a project folder (a `pyproject.toml` there gives its settings), e.g. a copy of vLLM's
`vllm/` next to a minimal `pyproject.toml`.  The phases are the cold pipeline's
(`project_index.file_facts`, `pipeline.project_facts`, `analysis.Engine.analyze`), run one
after the other over every file, without worker processes, so that each is timed alone:

- read: the files' bytes, decoded;
- classes: the classes with `*_cpu` fields (`project.class_fields_of`, files that mention it);
- parse: CPython's tree of each file (`parse_chunks.parse_python`), which the index workers
  build for every file of the project;
- verdict: the prefilter's stage 2 on that tree (`prefilter.tree_verdict`);
- summaries: `summary.summarize_tree`;
- cycles: the cyclic garbage a file's parse, verdict and summary leave, collected once per file
  over that file's objects only (what the first collection after `pipeline.gc_paused` pays in
  an index worker);
- to_json / from_json: the summaries' round trip through the index's JSON form;
- resolve: `project.resolve` over every summary;
- analysis: `Engine.analyze` of every file with its verdict (the analysis workers' part), and
  within it LibCST's parse, CPython's second parse (for a verdict that needs the project's
  facts), the walk (`ModuleWalker.run`) and the rules.

The real run spreads the index and the analysis over worker processes and resolves in a child,
and pickles between them; `bench/scan_bench.py` times that run against ruff.  These figures
say which phase a change should target, and by how much it moved (CPU: `time.process_time`).
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PHASES = ("read", "classes", "parse", "verdict", "summaries", "cycles", "to_json", "from_json", "resolve", "analysis")


def python_files(root: Path) -> List[str]:
    """The files a scan of ROOT would walk (the project's settings: include, exclude)."""
    from lint_h2d.config import resolve as resolve_settings
    from lint_h2d.discovery import discover

    settings = resolve_settings([str(root)], None)
    files, _ = discover([str(root)], settings)
    return sorted(files)


class Clock:
    """CPU seconds per named phase, and optionally a cProfile of one of them."""

    def __init__(self, profiled: Optional[str]) -> None:
        self.seconds: Dict[str, float] = {}
        self.profiled = profiled
        self.profile = cProfile.Profile() if profiled else None

    def run(self, name: str, work: Callable[[], Any]) -> Any:
        profile = self.profile if name == self.profiled else None
        start = time.process_time()
        if profile is not None:
            profile.enable()
        try:
            return work()
        finally:
            if profile is not None:
                profile.disable()
            self.seconds[name] = self.seconds.get(name, 0.0) + time.process_time() - start


class Timed:
    """A function of a module replaced by one that adds its CPU time to a counter (the
    analysis's sub-phases), restored on exit."""

    def __init__(self, module: Any, name: str, counter: Dict[str, float], key: str) -> None:
        self.module, self.name, self.counter, self.key = module, name, counter, key
        self.original = getattr(module, name)

    def __enter__(self) -> "Timed":
        original, counter, key = self.original, self.counter, self.key

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                counter[key] = counter.get(key, 0.0) + time.process_time() - start

        setattr(self.module, self.name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(self.module, self.name, self.original)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--profile", choices=PHASES, help="print a cProfile of this phase")
    parser.add_argument("--top", type=int, default=40, help="lines of the profile")
    args = parser.parse_args(argv)
    limit, collecting = sys.getrecursionlimit(), gc.isenabled()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return _run(args)
    finally:  # a caller in the same process (the test) gets its interpreter back as it was
        sys.setrecursionlimit(limit)
        if collecting:
            gc.enable()


def _run(args: argparse.Namespace) -> int:

    from lint_h2d import analysis, triage
    from lint_h2d.config import resolve as resolve_settings
    from lint_h2d.inference.project import class_fields_of, from_classes, read_callees, resolve
    from lint_h2d.inference.scope import ModuleWalker
    from lint_h2d.inference.summary import FileSummary, calls_from_json, from_json, summarize_tree
    from lint_h2d.parse_chunks import parse_python
    from lint_h2d.prefilter import TreeVerdict, tree_verdict

    settings = resolve_settings([str(args.root)], None)
    paths = python_files(args.root)
    clock = Clock(args.profile)
    gc.disable()  # collections are timed apart ("cycles"), as a worker's gc_paused makes them

    def read() -> List[Tuple[str, str]]:
        return [(p, Path(p).read_bytes().decode("utf-8", errors="replace")) for p in paths]

    texts = clock.run("read", read)
    classes = clock.run("classes", lambda: class_fields_of(t for _, t in texts if "_cpu" in t))
    summaries: List[FileSummary] = []
    verdicts: Dict[str, TreeVerdict] = {}
    for path, text in texts:
        try:
            tree = clock.run("parse", lambda: parse_python(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            summaries.append(FileSummary(path))
            continue
        verdicts[path] = clock.run("verdict", lambda: tree_verdict(tree, text, settings.capture_functions))
        summaries.append(clock.run("summaries", lambda: summarize_tree(path, tree)))
        del tree
        clock.run("cycles", gc.collect)
        gc.freeze()  # the next file's collection walks that file's objects only, as a worker's
    gc.unfreeze()
    blobs = clock.run("to_json", lambda: [(s.path, s.to_json()) for s in summaries])
    memo: Dict[Any, Any] = {}

    def read_back() -> List[FileSummary]:
        # As `ProjectIndex.facts` reads a cold run's facts: every part but the call sites, then
        # the call sites of the names the resolver may ask for (`project.read_callees`).
        found = [from_json(p, {k: v for k, v in j.items() if k != "calls"}, memo) for p, j in blobs]
        callees = read_callees(found)
        return [replace(s, calls=calls_from_json(j.get("calls", ()), memo, callees)) for s, (_, j) in zip(found, blobs)]

    back = clock.run("from_json", read_back)
    del blobs, memo, summaries
    resolved = clock.run("resolve", lambda: resolve(back))
    del back
    gc.collect()
    engine = analysis.Engine(settings, from_classes(classes, resolved))
    parts: Dict[str, float] = {}
    findings = 0

    def analyze() -> int:
        count = 0
        for path, text in texts:
            count += len(engine.analyze(path, text, verdicts.get(path)))
        return count

    with Timed(analysis, "parse_module_in_chunks", parts, "LibCST parse"), \
            Timed(triage, "cpython_parse", parts, "CPython parse again"), \
            Timed(ModuleWalker, "run", parts, "walk"), \
            Timed(analysis, "_run_rule", parts, "rules"):
        findings = clock.run("analysis", analyze)
    total = sum(clock.seconds.values())
    print(f"{args.root}: {len(paths)} files, {findings} findings, {total:.1f} s CPU in all")
    for name in PHASES:
        print(f"  {name:10s} {clock.seconds.get(name, 0.0):6.1f} s")
    for name, seconds in parts.items():
        print(f"    {name:22s} {seconds:6.1f} s")
    if clock.profile is not None:
        out = io.StringIO()
        pstats.Stats(clock.profile, stream=out).sort_stats("tottime").print_stats(args.top)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
