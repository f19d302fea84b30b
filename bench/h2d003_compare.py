#!/usr/bin/env python3
"""H2D003 against the logic of vLLM's `tools/pre_commit/check_gpu_sync_patterns.py`.

For each corpus: the sites the reference re-implementation (`bench/gpu_sync_reference.py`)
reports, the sites lint-h2d's H2D003 reports, and every difference with its judgement:
the hand labels of `bench/labels/h2d003/<corpus>.tsv` (made by reading the code, one row per
`.to/.cuda/.copy_` call passing `non_blocking`, before and independently of the tool), and for
findings on lines those labels do not cover, `bench/labels/h2d003/judged_extra.tsv` (written by
reading each such finding's code).  A site is *real* when its label is `PAGEABLE_H2D`.

Acceptance (issue 11): lint-h2d reports every script site that is real, and its own extra
findings are at least 95 % real.

Usage:  python bench/h2d003_compare.py [--markdown bench/H2D003.md] [--cached] [CORPUS ...]
(`--cached` re-renders from the sites of the last scan, kept in `bench/h2d003_sites.json`,
after a label or judgement changed.)
Corpora: vllm-0.33.0, transformers-5.24.0, megatron-core-0.16.1, flashinfer-python-0.7.2.post1
(trees from `tests/corpus.py`'s `corpus_tree`, or /work/corpora/src/... when present).
Tests are excluded on both sides the same way (`tests`/`test` folders, `test_*.py`, `*_test.py`).
"""
from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LABELS = HERE / "labels" / "h2d003"

Site = Tuple[str, int]

# Corpus name → (extracted tree candidates, package folder inside it).
CORPORA: Dict[str, Tuple[Tuple[str, ...], str]] = {
    "vllm-0.33.0": (("/root/.cache/lint-h2d/vllm-0.33.0",), "vllm"),
    "transformers-5.24.0": (("/root/.cache/lint-h2d/transformers-5.24.0",), "transformers"),
    "megatron-core-0.16.1": (("/work/corpora/src/megatron_core",), "megatron"),
    "flashinfer-python-0.7.2.post1": (("/work/corpora/src/flashinfer_python",), "flashinfer"),
}


def _bench_module(name: str):  # type: ignore[no-untyped-def]
    """The bench script `bench/<name>.py`, loaded as a module (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


def _reference_module():  # type: ignore[no-untyped-def]
    return _bench_module("gpu_sync_reference")


def corpus_root(name: str) -> Path:
    candidates, _ = CORPORA[name]
    for candidate in candidates:
        if Path(candidate).is_dir():
            return Path(candidate)
    # The pinned wheel of bench/labels/corpora.toml, as bench/accuracy.py gets every corpus
    # (downloaded once, cached outside the repository).
    accuracy = _bench_module("accuracy")
    return Path(accuracy.corpus_root(accuracy.load_corpora(LABELS.parent / "corpora.toml")[name]))


def python_files(root: Path) -> List[str]:
    ref = _reference_module()
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, fn), root)
                if not ref.is_test_path(rel):
                    out.append(rel)
    return out


def reference_sites(root: Path, files: Sequence[str]) -> Set[Site]:
    ref = _reference_module()
    found: Set[Site] = set()
    for rel in files:
        for line, _ in ref.scan_file(str(root / rel)):
            found.add((rel.replace(os.sep, "/"), line))
    return found


def lint_h2d_sites(root: Path, code: str = "H2D003") -> Tuple[Set[Site], Dict[Site, str]]:
    """Run the CLI (this checkout) on the tree, every file walked, tests dropped afterwards."""
    ref = _reference_module()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "lint-h2d.toml"
        config.write_text('exclude = []\nrespect-gitignore = false\n', encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run(
            [sys.executable, "-m", "lint_h2d.cli", "check", "--config", str(config), "--no-cache",
             "--select", code, "--output-format", "json", str(root)],
            capture_output=True, text=True, env=env, cwd=str(root),
        )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"lint-h2d failed ({proc.returncode}): {proc.stderr[-2000:]}")
    found: Set[Site] = set()
    messages: Dict[Site, str] = {}
    for item in json.loads(proc.stdout or "[]"):
        if item["code"] != code:
            continue
        rel = os.path.relpath(item["filename"], root).replace(os.sep, "/")
        if ref.is_test_path(rel):
            continue
        site = (rel, item["location"]["row"])
        found.add(site)
        messages[site] = item["message"]
    return found, messages


@dataclass(frozen=True)
class Label:
    label: str
    confidence: str
    note: str
    source: str  # "labels" or "judged"


def load_labels(corpus: str) -> Dict[Site, Label]:
    out: Dict[Site, Label] = {}
    path = LABELS / f"{corpus}.tsv"
    if path.exists():
        with path.open(encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                out[(row["path"], int(row["line"]))] = Label(row["label"], row["confidence"], row["note"], "labels")
    judged = LABELS / "judged_extra.tsv"
    if judged.exists():
        with judged.open(encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row["corpus"] == corpus:
                    # A judgement written by reading the code wins over a low-confidence label
                    # (its note says what the label was and why it changed).
                    site = (row["path"], int(row["line"]))
                    out[site] = Label(row["label"], row["confidence"], row["note"], "judged")
    return out


@dataclass
class Result:
    corpus: str
    files: int
    script: Set[Site]
    ours: Set[Site]
    labels: Dict[Site, Label]
    messages: Dict[Site, str] = field(default_factory=dict)

    def real(self, site: Site) -> Optional[bool]:
        label = self.labels.get(site)
        return None if label is None else label.label == "PAGEABLE_H2D"

    def row(self) -> Dict[str, object]:
        both = self.script & self.ours
        script_only = self.script - self.ours
        ours_only = self.ours - self.script
        script_real = {s for s in self.script if self.real(s)}
        missed_real = script_real - self.ours
        extra_real = [s for s in ours_only if self.real(s)]
        extra_unjudged = [s for s in ours_only if self.real(s) is None]
        labelled_real = {s for s, l in self.labels.items() if l.label == "PAGEABLE_H2D" and l.source == "labels"}
        ours_real = {s for s in self.ours if self.real(s)}
        return {
            "corpus": self.corpus, "files": self.files, "script": len(self.script),
            "script_real": len(script_real), "ours": len(self.ours), "both": len(both),
            "script_only": len(script_only), "script_real_missed": len(missed_real),
            "ours_only": len(ours_only), "ours_only_real": len(extra_real),
            "ours_only_unjudged": len(extra_unjudged),
            "labelled_pageable": len(labelled_real),
            "labelled_pageable_found": len(labelled_real & self.ours),
            "ours_real": len(ours_real),
        }


SITES = HERE / "h2d003_sites.json"


def compare(corpus: str, cached: bool = False) -> Result:
    """Scan (or, with `cached`, reuse the sites of the last scan in `bench/h2d003_sites.json`)."""
    store = json.loads(SITES.read_text(encoding="utf-8")) if SITES.exists() else {}
    if cached and corpus in store:
        entry = store[corpus]
        return Result(corpus, entry["files"], {(p, l) for p, l in entry["script"]},
                      {(p, l) for p, l in entry["ours"]}, load_labels(corpus))
    root = corpus_root(corpus)
    files = python_files(root)
    script = reference_sites(root, files)
    ours, messages = lint_h2d_sites(root)
    store[corpus] = {"files": len(files), "script": sorted(script), "ours": sorted(ours)}
    SITES.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return Result(corpus, len(files), script, ours, load_labels(corpus), messages)


def _pct(a: int, b: int) -> str:
    return "–" if b == 0 else f"{a}/{b} = {100 * a / b:.0f} %"


def markdown(results: Sequence[Result]) -> str:
    lines = [
        "| corpus | files | script sites (real) | lint-h2d sites | both | script only (real ones missed) "
        "| lint-h2d only: real / judged | labelled pageable sites found (recall) | lint-h2d precision |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        d = r.row()
        judged = int(d["ours_only"]) - int(d["ours_only_unjudged"])  # type: ignore[call-overload]
        lines.append(
            f"| {d['corpus']} | {d['files']} | {d['script']} ({d['script_real']}) | {d['ours']} | {d['both']} "
            f"| {d['script_only']} ({d['script_real_missed']}) | {_pct(int(d['ours_only_real']), judged)}"  # type: ignore[call-overload]
            f"{' + ' + str(d['ours_only_unjudged']) + ' unjudged' if d['ours_only_unjudged'] else ''} "
            f"| {_pct(int(d['labelled_pageable_found']), int(d['labelled_pageable']))} "  # type: ignore[call-overload]
            f"| {_pct(int(d['ours_real']), int(d['ours']))} |"  # type: ignore[call-overload]
        )
    lines.append("")
    for r in results:
        diffs = sorted((r.script ^ r.ours) | {s for s in r.ours if not r.real(s)})
        if not diffs:
            continue
        lines.append(f"### {r.corpus}: differences and lint-h2d findings that are not real")
        lines.append("")
        lines.append("| site | script | lint-h2d | label | note |")
        lines.append("|---|---|---|---|---|")
        for site in diffs:
            label = r.labels.get(site)
            shown = f"{label.label} ({label.confidence}, {label.source})" if label else "**unjudged**"
            note = (label.note if label else r.messages.get(site, "")).replace("|", "\\|")
            lines.append(f"| `{site[0]}:{site[1]}` | {'yes' if site in r.script else '–'} "
                         f"| {'yes' if site in r.ours else '–'} | {shown} | {note} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    out_path: Optional[str] = None
    args = list(argv)
    if "--markdown" in args:
        i = args.index("--markdown")
        out_path = args[i + 1]
        del args[i:i + 2]
    cached = "--cached" in args
    args = [a for a in args if a != "--cached"]
    corpora = args or list(CORPORA)
    results = [compare(c, cached) for c in corpora]
    for r in results:
        print(json.dumps(r.row()))
    text = markdown(results)
    if out_path:
        Path(out_path).write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
