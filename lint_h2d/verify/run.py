"""`lint-h2d verify`: every fix `check --fix --unsafe-fixes` would make, or the built-in matrix,
run as original vs rewrite on every level the machine allows.

Levels: 1 CPU bitwise equality (always); 2 fake-CUDA op trace (CPU build + tiny C++ extension);
3 real GPU (when ``torch.cuda.is_available()``); 4 H2D002 capture-sequence simulation.
"""
from __future__ import annotations

import argparse
import os
import platform
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

import torch

from lint_h2d.verify import capture, equivalence, fake_cuda, gpu, matrix
from lint_h2d.verify.pairs import StatementPair
from lint_h2d.verify.report import Row, render

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
CPU = f"cpu (torch {torch.__version__})"


@dataclass
class Levels:
    """Which levels run here, and why not when they do not."""

    fake_cuda: Optional[str]  # how fake CUDA works, None when unavailable
    fake_cuda_reason: str = ""
    gpu: bool = False

    @classmethod
    def detect(cls, want_fake: bool = True, want_gpu: bool = True) -> "Levels":
        how, reason = None, "disabled (--no-fake-cuda)"
        if want_fake:
            try:
                how = fake_cuda.ensure_fake_cuda()
            except fake_cuda.FakeCudaUnavailable as exc:
                reason = str(exc)
        return cls(how, reason, want_gpu and gpu.available())


def _trace_bindings(prepared: equivalence.Prepared) -> Dict[str, Any]:
    """In-range index (1) and a non-zero int value (7): one representative run."""
    out: Dict[str, Any] = {n: 1 for n in prepared.index_names}
    out.update({n: 7 for n in prepared.value_names})
    return out


def verify_h2d001(label: str, original: str, rewrites: Sequence[str], target: str,
                  rank: Optional[int], levels: Levels, safe: Optional[bool] = None,
                  min_length: int = 0, allocation: Optional[str] = None) -> Row:
    """Levels 1-3 for one statement and every spelling of its rewrite (bare, gated).

    Besides the ordinary cases, level 1 tries indices at and past the bounds, list/tensor/bool
    indices, values at the dtypes' limits and a value with side effects; the row's detail says
    per family how many were equivalent, raise or differ.  A safe fix must be equivalent in
    all of them; an unsafe one in the ordinary cases.
    """
    row = Row(label, "H2D001", original, rewrites[0])
    cases, ran = 0, 0
    summaries: List[str] = []
    for rewritten in rewrites:
        verdict = equivalence.verify_statements(original, rewritten, target, rank, safe=safe,
                                                min_length=min_length, allocation=allocation)
        cases, ran = cases + verdict.cases, ran + verdict.ran
        summaries.append(verdict.summary)
        if not verdict.verified:
            row.equivalent, row.detail = (False if verdict.cases else None), verdict.detail
            break
    else:
        row.equivalent = True
        row.detail = f"{ran} ordinary cases bitwise equal of {cases}; " + summaries[0]
    row.measured_on.append(f"equivalence: {CPU}")
    prepared = equivalence.prepare(original, rewrites[0], target)
    if prepared.problem:
        return row
    shape = (equivalence.SIZE,) * equivalence.ranks_for(rank, prepared.index_count)[0]
    bindings = _trace_bindings(prepared)
    if levels.fake_cuda:
        before = fake_cuda.trace_statement(prepared.original, prepared.target, torch.float32, shape, bindings, True)
        after_code = equivalence.prepare(original, rewrites[-1], target).rewritten
        after = fake_cuda.trace_statement(after_code, prepared.target, torch.float32, shape, bindings, True)
        if before.error is None and after.error is None:
            row.copy_before, row.copy_after = before.h2d_copies > 0, after.h2d_copies > 0
            row.measured_on.append("copy: fake cuda (aten trace)")
        else:
            row.detail += f"; fake cuda trace raised: {before.error or after.error}"
    if levels.gpu:
        facts = gpu.measure(prepared.original, equivalence.prepare(original, rewrites[-1], target).rewritten,
                            prepared.target, torch.float32, shape, bindings)
        row.gpu = gpu.describe(facts)
        row.copy_before, row.copy_after = facts.htod[0] > 0 or facts.syncs[0] > 0, facts.htod[1] > 0 or facts.syncs[1] > 0
        row.capture_safe = f"orig {facts.capture[0]}; new {facts.capture[1]}"
        row.measured_on.append(f"copy/capture: {gpu.backend()}")
        if facts.equal_after_replay is False:
            row.equivalent, row.detail = False, "graph replay of the rewrite differs from the original"
    return row


def verify_h2d002(pair: StatementPair, levels: Levels) -> Row:
    """Level 4: the capture sequence, device zero kept, CPU offsets read afterwards."""
    device = torch.device("cuda") if levels.gpu else torch.device("cpu")
    verdict = capture.simulate(pair, device)
    where = "device tensor on cuda" if levels.gpu else "device tensor simulated on cpu"
    simulated = bool(verdict.fixed_lengths)  # False: the pair could not be run at all
    return Row(pair.label, "H2D002", pair.original, pair.rewritten, verdict.verified if simulated else None,
               verdict.detail, capture_safe="n/a (CPU metadata)",
               measured_on=[f"capture simulation: {CPU}, {where}"])


def matrix_rows(levels: Levels) -> List[Row]:
    rows: List[Row] = []
    for entry in matrix.entries():
        rows.append(verify_h2d001(entry.label, entry.original, (entry.bare,) + entry.gated, "t", entry.rank, levels))
    rows.extend(verify_h2d002(pair, levels) for pair in capture.matrix_pairs())
    return rows


def pair_rows(pairs: Sequence[StatementPair], levels: Levels) -> List[Row]:
    rows: List[Row] = []
    for pair in pairs:
        if pair.grouped:
            ok = pair.problem is None
            rows.append(Row(pair.label, pair.code, pair.original, pair.rewritten, ok,
                            f"{pair.grouped} rewrites under one gate: "
                            + ("exactly the single rewrites side by side, each verified in its own row" if ok
                               else str(pair.problem)),
                            measured_on=["composition of the single rewrites (static)"]))
        elif pair.code == "H2D001":
            row = verify_h2d001(pair.label, pair.original, (pair.rewritten,), pair.target, pair.rank, levels,
                                safe=pair.applicability == "safe", min_length=pair.min_length,
                                allocation=pair.allocation)
            kind = "deletion of a redundant write" if pair.allocation else "fix"
            row.detail = f"{pair.applicability} {kind}; {row.detail}"
            rows.append(row)
        elif pair.code == "H2D002":
            rows.append(verify_h2d002(pair, levels))
        elif pair.code in ("H2D003", "H2D004"):
            from lint_h2d.verify.moves import verify_move

            rows.append(verify_move(pair, levels.fake_cuda is not None))
        else:
            rows.append(Row(pair.label, pair.code, pair.original, pair.rewritten, None, "no verifier for this rule"))
    return rows


def file_pairs(paths: Sequence[str]) -> Tuple[List[StatementPair], List[str]]:
    """Every fix in the files the linter would check (same discovery and settings as `check`)."""
    pairs, notes, _ = file_pairs_and_errors(paths)
    return pairs, notes


def file_pairs_and_errors(paths: Sequence[str]) -> Tuple[List[StatementPair], List[str], bool]:
    """Pairs, notes, and whether anything could not be checked (a missing path, a file that
    cannot be read or decoded, a syntax error): `verify` then exits 2, like `check`.

    The engine is built as `check` builds it, project index included, and the pairs are the
    fixes its fix loop applies with `--unsafe-fixes`.
    """
    from lint_h2d.config import Resolver
    from lint_h2d.discovery import discover
    from lint_h2d.engine import ERROR_CODES, load_sources
    from lint_h2d.plan import Options, units
    from lint_h2d.verify.pairs import pairs_for_source

    resolver = Resolver()
    files, problems = discover(list(paths), resolver)
    sources, errors = load_sources(files)
    notes = [f"cannot check {p.path}: {p.message}" for p in problems] + [e.message for e in errors]
    broken = bool(problems or errors)
    walk = any(os.path.isdir(p) for p in paths)
    planned, _ = units(resolver, sources, Options(walk=walk), findings_cache=False)
    pairs: List[StatementPair] = []
    for unit in planned:
        assert not isinstance(unit.source, str)  # planned from sources already read
        found, skipped = pairs_for_source(unit.engine, unit.source)
        pairs.extend(found)
        for f in skipped:
            if f.code in ERROR_CODES:
                broken = True
                notes.append(f"cannot check {f.path}:{f.location.row}: {f.code} {f.message}")
            else:
                notes.append(f"{f.path}:{f.location.row}: {f.code} has no fix ({f.no_fix_reason or f.message})")
    return pairs, notes, broken


def header(levels: Levels) -> List[str]:
    lines = [f"torch {torch.__version__} (python {platform.python_version()}, {platform.machine()})",
             f"level 1 (bitwise equality): {CPU}; dtypes "
             + ", ".join(str(d).replace("torch.", "") for d in equivalence.DTYPES)
             + "; gate forced to each branch; random non-zero initial contents"]
    if levels.fake_cuda:
        copies = fake_cuda.scalar_setitem_copies()
        lines.append(f"level 2 (host→device copy): {levels.fake_cuda}")
        lines.append("installed torch, `t[0] = 0` on a cuda tensor: "
                     + ("dispatches aten.copy_(cuda, cpu) — still a host→device copy" if copies
                        else "no host→device copy (scalar setitem now uses fill_)"))
    else:
        lines.append(f"level 2 (host→device copy): not measured — {levels.fake_cuda_reason}")
    lines.append(f"level 3 (real GPU): {gpu.backend() if levels.gpu else 'not run — torch.cuda.is_available() is False'}")
    lines.append("level 4 (H2D002 capture sequence): CPU offsets read by a later builder")
    return lines


def run_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.matrix and args.paths:
        err.write("lint-h2d: error: `verify --matrix` takes no paths\n")
        return EXIT_ERROR
    levels = Levels.detect(want_fake=not args.no_fake_cuda, want_gpu=not args.no_gpu)
    if args.matrix:
        rows = matrix_rows(levels)
        notes: List[str] = []
        broken = False
    else:
        pairs, notes, broken = file_pairs_and_errors(args.paths or ["."])
        rows = pair_rows(pairs, levels)
    out.write(render(rows, header(levels)))
    for note in notes:
        err.write(f"note: {note}\n")
    if not rows:
        out.write("No fixes to verify.\n")
    if broken:
        return EXIT_ERROR
    return EXIT_OK if all(r.equivalent is True for r in rows) else EXIT_FAILED
