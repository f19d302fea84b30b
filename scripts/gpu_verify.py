"""Level 3 of `lint-h2d verify` in one go: the built-in matrix (and optional paths) on a real
GPU, written as a markdown table to bench/gpu_verify_<date>.md.

Why a script: GPU time is scarce; one prepared run collects every fact (profiler counts,
sync-debug behaviour, CUDA-graph capture, host submission time) with the torch version and
backend beside each, so the table can be committed as evidence.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("paths", nargs="*", help="also verify the fixes in these files")
    parser.add_argument("--out", help="output file (default: bench/gpu_verify_<date>.md)")
    parser.add_argument("--allow-no-gpu", action="store_true", help="write the table even without a GPU")
    args = parser.parse_args(argv)

    import torch

    from lint_h2d.verify import run
    from lint_h2d.verify.report import render

    if not torch.cuda.is_available() and not args.allow_no_gpu:
        sys.stderr.write("gpu_verify: torch.cuda.is_available() is False; no GPU facts to measure\n")
        return 2
    levels = run.Levels.detect()
    rows = run.matrix_rows(levels)
    if args.paths:
        pairs, notes = run.file_pairs(args.paths)
        rows += run.pair_rows(pairs, levels)
        for note in notes:
            sys.stderr.write(f"note: {note}\n")
    stamp = _dt.datetime.now().strftime("%Y-%m-%d")
    out = Path(args.out) if args.out else REPO / "bench" / f"gpu_verify_{stamp}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    title = f"# lint-h2d verify on GPU, {stamp}\n\n"
    out.write_text(title + render(rows, run.header(levels)))
    sys.stdout.write(f"wrote {out}\n")
    return 0 if all(r.equivalent is True for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
