"""One table for every verify run: a row per finding or matrix entry, with where each fact was measured."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from fixers.edits import split_lines


@dataclass
class Row:
    label: str  # path:row, or the matrix entry's rank
    code: str
    original: str
    rewritten: str
    equivalent: Optional[bool] = None  # None: could not be verified
    detail: str = ""
    copy_before: Optional[bool] = None  # host→device copy; None: not measured
    copy_after: Optional[bool] = None
    capture_safe: str = "n/a (needs GPU)"
    measured_on: List[str] = field(default_factory=list)
    gpu: Dict[str, str] = field(default_factory=dict)


def _one_line(code: str) -> str:
    return " ⏎ ".join(line.strip() for line in split_lines(code.strip())) or "(removed)"


def _yes_no(value: Optional[bool]) -> str:
    return "—" if value is None else ("yes" if value else "no")


def render(rows: Sequence[Row], header: Sequence[str]) -> str:
    """A markdown table (pasteable into bench/*.md), header facts first, failures explained last."""
    out = [f"- {line}" for line in header]
    out.append("")
    gpu_cols = any(r.gpu for r in rows)
    cols = ["where", "rule", "original", "rewrite", "equivalent", "copy before", "copy after", "capture safe", "measured on"]
    if gpu_cols:
        cols += ["syncs (orig/new)", "Memcpy HtoD", "sync debug", "host submit"]
    out.append("| " + " | ".join(cols) + " |")
    out.append("|" + "---|" * len(cols))
    for r in rows:
        eq = "unverified" if r.equivalent is None else _yes_no(r.equivalent)
        cells = [r.label, r.code, f"`{_one_line(r.original)}`", f"`{_one_line(r.rewritten)}`", eq,
                 _yes_no(r.copy_before), _yes_no(r.copy_after), r.capture_safe, "; ".join(r.measured_on)]
        if gpu_cols:
            cells += [r.gpu.get(k, "—") for k in ("syncs", "htod", "sync_debug", "submit")]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    bad = [r for r in rows if r.equivalent is not True]
    out.append("")
    cases = [r for r in rows if r.equivalent is True and r.detail]
    if cases:
        out.append("Cases per fix (bounds, index kinds, dtype limits, evaluation order: "
                   "equivalent / raises / differs; only a safe fix must be equivalent in all):")
        out.extend(f"  {r.label} {r.code}: {r.detail}" for r in cases)
        out.append("")
    out.append(f"{len(rows) - len(bad)}/{len(rows)} verified equivalent.")
    for r in bad:
        out.append(f"NOT VERIFIED {r.label} {r.code}: {r.detail}")
    return "\n".join(out) + "\n"
