"""Summaries and prefilter verdicts of a set of files, saved by one checkout, compared by another.

    python bench/summary_identity.py save out.pickle [PATH ...]
    python bench/summary_identity.py compare out.pickle [PATH ...]

Run `save` with the code before a change (e.g. `main`, PYTHONPATH pointing at its checkout) and
`compare` with the code after: a speed-up of the index (`inference/summary.py`,
`prefilter.tree_verdict`) must leave every `FileSummary` and `TreeVerdict` equal.  PATHs are
files or folders (every `*.py` below); the default is the test fixtures and every 7th file of
the seen vLLM 0.33.0 tree in ~/.cache/lint-h2d (when present).  Optional timing: `--time`
prints the CPU seconds of the summaries and of the verdicts.

A change that leaves out what the resolver never reads (call sites of library code) changes
the summaries but must not change what they resolve to: `--resolved` saves and compares,
instead of each summary, the verdicts and the facts of all the PATHs resolved as one project
(`project.resolve`: every `Resolved` field, evidence included, and its `fingerprint_of`).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
VLLM = Path.home() / ".cache" / "lint-h2d" / "vllm-0.33.0" / "vllm"


def default_paths() -> List[str]:
    paths = sorted(str(p) for p in (REPO / "tests" / "fixtures").rglob("*.py"))
    if VLLM.is_dir():
        paths += sorted(str(p) for p in VLLM.rglob("*.py"))[::7]
    return paths


def expand(args: Sequence[str]) -> List[str]:
    out: List[str] = []
    for arg in args:
        arg = os.path.abspath(arg)
        out += sorted(str(p) for p in Path(arg).rglob("*.py")) if os.path.isdir(arg) else [arg]
    return out


def compute(paths: Sequence[str], timing: bool) -> Dict[str, Tuple[Any, Any]]:
    from lint_h2d.config import Settings
    from lint_h2d.inference.summary import summarize_tree
    from lint_h2d.parse_chunks import parse_python
    from lint_h2d.prefilter import tree_verdict

    capture = tuple(Settings().capture_functions)
    out: Dict[str, Tuple[Any, Any]] = {}
    spent = [0.0, 0.0]
    for path in paths:
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        start = time.process_time()
        verdict = tree_verdict(tree, text, capture)
        middle = time.process_time()
        summary = summarize_tree(path, tree)
        spent[0] += time.process_time() - middle
        spent[1] += middle - start
        out[path] = (summary, verdict)
        del tree
    if timing:
        print(f"{len(out)} files: summaries {spent[0]:.2f} s CPU, verdicts {spent[1]:.2f} s CPU", file=sys.stderr)
    return out


def resolved_of(got: Dict[str, Tuple[Any, Any]]) -> Dict[str, Any]:
    """The verdicts by path, and the facts of every summary resolved together."""
    from lint_h2d.inference.project import fingerprint_of, resolve

    facts = resolve([got[path][0] for path in sorted(got)])
    return {"verdicts": {path: verdict for path, (_, verdict) in got.items()},
            "resolved": facts, "fingerprint": fingerprint_of(facts)}


def compare_resolved(want: Dict[str, Any], got: Dict[str, Any]) -> int:
    """Print what differs between two `resolved_of` answers; 1 when anything does."""
    bad = sorted(p for p in set(want["verdicts"]) | set(got["verdicts"])
                 if want["verdicts"].get(p) != got["verdicts"].get(p))
    for path in bad[:20]:
        print(f"DIFFERS (verdict): {path}")
    old, new = want["resolved"], got["resolved"]
    fields = [f.name for f in dataclasses.fields(old) if getattr(old, f.name) != getattr(new, f.name)]
    for name in fields:
        a, b = getattr(old, name), getattr(new, name)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            keys = sorted((k for k in set(a) | set(b) if a.get(k) != b.get(k)), key=repr)
            print(f"DIFFERS (resolved.{name}): {len(keys)} entries, e.g. {keys[:5]}")
        else:
            print(f"DIFFERS (resolved.{name})")
    same = want["fingerprint"] == got["fingerprint"]
    print(f"compared {len(got['verdicts'])} files: {len(bad)} verdicts differ, {len(fields)} resolved fields "
          f"differ, fingerprint {'equal' if same else 'differs'} ({got['fingerprint']})")
    return 1 if bad or fields or not same else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("save", "compare"))
    ap.add_argument("file")
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--resolved", action="store_true",
                    help="save/compare the facts the summaries resolve to (and the verdicts)")
    args = ap.parse_intermixed_args(argv)
    paths = expand(args.paths) if args.paths else default_paths()
    got = compute(paths, args.time)
    if args.resolved:
        facts = resolved_of(got)
        if args.mode == "save":
            Path(args.file).write_bytes(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL))
            print(f"saved {len(got)} files, fingerprint {facts['fingerprint']}")
            return 0
        return compare_resolved(pickle.loads(Path(args.file).read_bytes()), facts)
    if args.mode == "save":
        Path(args.file).write_bytes(pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL))
        print(f"saved {len(got)} files")
        return 0
    want = pickle.loads(Path(args.file).read_bytes())
    bad = sorted(p for p in set(want) | set(got) if want.get(p) != got.get(p))
    for path in bad[:20]:
        old, new = want.get(path), got.get(path)
        which = "missing" if old is None or new is None else \
            ("summary" if old[0] != new[0] else "verdict")
        print(f"DIFFERS ({which}): {path}")
    print(f"compared {len(got)} files: {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
