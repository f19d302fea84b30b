#!/usr/bin/env python3
"""Run lint-h2d's fix over real corpora and verify every guarantee (issue #8; not run in CI).

For each corpus: copy its Python sources to a temp dir, `check` (count findings), `check
--fix --unsafe-fixes --no-cache`, then verify: no internal error, every written file parses
(LibCST, ast) and compiles, a second run changes nothing, files without findings are
byte-identical, fixed files differ only at fix sites and inserted imports.

Corpora: vLLM wheels (default 0.31.0 0.32.0 0.33.0; ~336 MB each, downloaded once to
~/.cache/lint-h2d/wheels), the installed torch package's own sources, and optionally the
whole transformers tree.  Prints a Markdown table; `--write` records it in bench/CORPUS.md.

    python scripts/corpus_check.py --vllm 0.33.0 --torch --jobs 2 --write
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.corpus import CorpusReport, CorpusUnavailable, check_corpus, download_wheel, extract_py  # noqa: E402


def py_paths(root: Path, package: str) -> list:
    return sorted(p.relative_to(root).as_posix() for p in (root / package).rglob("*.py") if p.is_file())


def run_one(name: str, root: Path, package: str, jobs: int, work: Path) -> CorpusReport:
    started = time.perf_counter()
    report = check_corpus(name, root, work / name.replace(" ", "_"), REPO, paths=py_paths(root, package), jobs=jobs)
    report.seconds = time.perf_counter() - started
    return report


def row(r: CorpusReport) -> str:
    return (f"| {r.name} | {r.files} | {r.findings} | {r.fixes} | {r.remaining} | {r.changed} | "
            f"{len(r.errors)} | {len(r.syntax_errors)} | {r.seconds:.0f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vllm", nargs="*", default=None, help="vLLM versions (default: 0.31.0 0.32.0 0.33.0)")
    ap.add_argument("--torch", action="store_true", help="the installed torch package's sources")
    ap.add_argument("--transformers-full", metavar="VERSION", help="the whole transformers tree")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--write", action="store_true", help="append the results to bench/CORPUS.md")
    ap.add_argument("--json", help="also write the reports as JSON here")
    args = ap.parse_args()
    versions = ["0.31.0", "0.32.0", "0.33.0"] if args.vllm is None or args.vllm == [] else args.vllm
    if args.vllm is None and (args.torch or args.transformers_full):
        versions = []

    reports = []
    with tempfile.TemporaryDirectory(prefix="lint-h2d-corpus-") as tmp:
        work = Path(tmp)
        jobs = []
        for v in versions:
            jobs.append((f"vllm {v}", lambda v=v: extract_py(download_wheel("vllm", v, skip=False, timeout=3600), "vllm"), "vllm"))
        if args.torch:
            import torch

            jobs.append((f"torch {torch.__version__}", lambda: Path(torch.__file__).resolve().parent.parent, "torch"))
        if args.transformers_full:
            jobs.append((f"transformers {args.transformers_full} (full)",
                         lambda: extract_py(download_wheel("transformers", args.transformers_full, skip=False), "transformers"),
                         "transformers"))
        for name, get_root, package in jobs:
            try:
                root = get_root()
            except CorpusUnavailable as exc:
                print(f"{name}: skipped: {exc}", file=sys.stderr)
                continue
            report = run_one(name, root, package, args.jobs, work)
            reports.append(report)
            print(row(report), flush=True)
            for e in report.errors[:20]:
                print(f"  error: {e}", file=sys.stderr)
            for e in report.syntax_errors[:20]:
                print(f"  syntax error in the corpus: {e}", file=sys.stderr)

    header = ("| corpus | files | findings | fixed | remaining | files changed | errors | corpus syntax errors | seconds |\n"
              "|---|---|---|---|---|---|---|---|---|")
    table = header + "\n" + "\n".join(row(r) for r in reports)
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in reports], indent=1))
    if args.write:
        out = REPO / "bench" / "CORPUS.md"
        stamp = time.strftime("%Y-%m-%d")
        with out.open("a", encoding="utf-8") as handle:
            handle.write(f"\n### {stamp}: `python scripts/corpus_check.py` (jobs={args.jobs or 'all cores'})\n\n{table}\n")
    return 1 if any(r.errors for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
