"""Counts that size the cold scan's remaining work (a measurement harness, not the tool).

    PYTHONPATH=<worktree> python bench/cold_counts.py <project root> [<folder under it>]

e.g. `python bench/cold_counts.py /tmp/vproj vllm` (a copy of vLLM 0.33.0's `vllm/` beside a
`pyproject.toml`).  One process, no cache: the project's index and facts are built as a cold
`check --no-cache` builds them (`plan.units`), then every file goes through `Engine.analyze`
with the index's verdict.  It prints:

1. the files whose analysis reaches LibCST, grouped by the rules left after the prefilter
   and by whether the file has a finding (what a sharper stage 2 could still remove), with
   the CPU seconds of LibCST's parse for each group;
2. the files parsed a second time by CPython because H2D001's verdict asked about a fact
   the project holds, and how many of them stage 2 then keeps;
3. how much of the resolved project the analysis reads: the keys the walk asks of each
   table of `Resolved`, against the table's size, and the keys the verdicts asked about
   (what a demand-driven resolve would have to answer);
4. whether a resolved fact's value depends on the order facts are asked in: a fresh
   resolver is asked a sample of the eager resolve's class fields in a shuffled order and
   the values (kind, rank, type, evidence) are compared.  Any difference means a resolve
   that asks only what is needed, in another order, cannot promise byte-identical findings.

The instrumentation wraps functions of `lint_h2d.analysis` and the tables of one `Resolved`
inside this process only; nothing here is used by the tool.
"""
from __future__ import annotations

import collections
import gc
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Set, Tuple

sys.setrecursionlimit(20_000)


class _RecordingTable(dict):  # type: ignore[type-arg]
    """A `Resolved` table that remembers every key it was asked for."""

    def __init__(self, data: Any, log: Set[Any]) -> None:
        super().__init__(data)
        self.log = log

    def __getitem__(self, key: Any) -> Any:
        self.log.add(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self.log.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.log.add(key)
        return super().__contains__(key)


_TABLES = ("fields", "returns", "params", "int_params", "bases", "forwards", "built_on_device", "moved",
           "classes")


def main(argv: List[str]) -> int:
    import lint_h2d.analysis as analysis
    import lint_h2d.triage as triage
    from lint_h2d.config import Resolver
    from lint_h2d.discovery import discover
    from lint_h2d.plan import Options, units
    from lint_h2d.sources import read_source

    root = Path(argv[1]).resolve()
    folder = root / (argv[2] if len(argv) > 2 else ".")
    resolver = Resolver()
    files, _ = discover([str(folder)], resolver.for_path(str(folder)))
    started = time.process_time()
    todo, _ = units(resolver, sorted(files), Options(use_cache=False, walk=True), findings_cache=False)
    engine = todo[0].engine
    print(f"{len(todo)} files; index and facts built ({time.process_time() - started:.1f} s CPU in this "
          "process, the index workers and the resolving child apart)")
    resolved = engine.project.module_facts.resolved
    logs: Dict[str, Set[Any]] = {}
    for name in _TABLES:
        logs[name] = set()
        object.__setattr__(resolved, name, _RecordingTable(getattr(resolved, name), logs[name]))

    kept: Dict[str, Tuple[List[str], float]] = {}
    reparsed: Set[str] = set()
    parse_module = getattr(analysis, "parse_module_in_chunks")
    cpython_parse = triage.cpython_parse

    def recording_parse(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1).f_locals
        t = time.process_time()
        try:
            return parse_module(*args, **kwargs)
        finally:
            kept[caller["path"]] = ([r.code for r in caller["rules"]], time.process_time() - t)

    def recording_cpython(path: str, text: str) -> Any:
        reparsed.add(path)
        return cpython_parse(path, text)

    setattr(analysis, "parse_module_in_chunks", recording_parse)
    setattr(triage, "cpython_parse", recording_cpython)
    found: Dict[str, Set[str]] = {}
    spent: Dict[str, float] = {}
    gc.disable()
    try:
        for unit in todo:
            text = read_source(unit.path).text
            t = time.process_time()
            found[unit.path] = {f.code for f in unit.engine.analyze(unit.path, text, unit.verdict)}
            spent[unit.path] = time.process_time() - t
    finally:
        setattr(analysis, "parse_module_in_chunks", parse_module)
        setattr(triage, "cpython_parse", cpython_parse)
        gc.enable()

    print("\n1. files reaching LibCST: rules left after the prefilter, with a finding?, files, "
          "CPU s of LibCST's parse, CPU s of the whole analysis")
    groups: Dict[Tuple[Tuple[str, ...], bool], List[Tuple[float, float]]] = collections.defaultdict(list)
    for path, (codes, seconds) in kept.items():
        groups[(tuple(codes), bool(found[path]))].append((seconds, spent[path]))
    for (rules, hit), times in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"   {'+'.join(rules):<24} {'finding' if hit else 'none':<8} {len(times):>5} "
              f"{sum(t for t, _ in times):7.2f} {sum(a for _, a in times):7.2f}")
    print(f"   in all: {len(kept)} files, {sum(1 for p in kept if found[p])} with a finding, "
          f"{sum(s for _, s in kept.values()):.2f} s parse, {sum(spent[p] for p in kept):.2f} s analysis; "
          f"the other {len(todo) - len(kept)} files' analysis: "
          f"{sum(a for p, a in spent.items() if p not in kept):.2f} s")

    print(f"\n2. parsed again by CPython in the analysis: {len(reparsed)} files; "
          f"{len(reparsed & set(kept))} of them reach LibCST")

    print("\n3. the resolved project the analysis reads (keys asked / present / table size)")
    for name in _TABLES:
        table = getattr(resolved, name)
        present = sum(1 for k in logs[name] if dict.__contains__(table, k))
        print(f"   {name:<16} {len(logs[name]):>6} {present:>6} {len(table):>7}")
    asked: Set[str] = set()
    for unit in todo:
        if unit.verdict is not None and unit.verdict.looked_up:
            asked.update(k for k in unit.verdict.looked_up.split("\0") if k)
    print(f"   verdicts asked about {len(asked)} names; {len(asked & resolved.device_names)} of the "
          f"{len(resolved.device_names)} device names are among them")

    print("\n4. order dependence of the resolve")
    _order_check([unit.path for unit in todo])
    return 0


def _order_check(paths: List[str], sample_size: int = 3000) -> None:
    from lint_h2d.inference import project
    from lint_h2d.inference.summary import FileSummary, summarize_tree
    from lint_h2d.parse_chunks import parse_python

    summaries = []
    gc.disable()
    try:
        for path in sorted(os.path.abspath(p) for p in paths):
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            try:
                summaries.append(summarize_tree(path, parse_python(text)))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                summaries.append(FileSummary(path))
        eager = project.resolve(summaries)
        keys = [(c, a) for c in sorted(eager.fields) for a in sorted(eager.fields[c])]
        random.Random(0).shuffle(keys)
        fresh = project._Resolver(summaries)
        describe: Callable[[Any], str] = project._describe
        differ = [(c, a) for c, a in keys[:sample_size]
                  if describe(fresh.field(c, a)) != describe(eager.fields[c][a])]
    finally:
        gc.enable()
    print(f"   {len(differ)} of {min(sample_size, len(keys))} class fields asked in a shuffled order "
          "resolve to another value than in the eager resolve")
    for cls, attr in differ[:3]:
        print(f"   e.g. {cls}.{attr}: eager {describe(eager.fields[cls][attr])[:120]!r}")
        print(f"   {' ' * len(cls + attr)}    shuffled {describe(fresh.field(cls, attr))[:120]!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
