#!/usr/bin/env python3
"""H2D001 precision and recall against hand-made labels (issue 17).

    python bench/accuracy.py                      # every corpus in bench/labels/corpora.toml
    python bench/accuracy.py --corpus vllm-0.33.0 # one
    python bench/accuracy.py --markdown           # the table for bench/ACCURACY.md

For each corpus: the pinned wheel is downloaded and its package extracted through the shared
fixture code (`tests/corpus.py`: `download_wheel`, `extract_py`; cached in ~/.cache/lint-h2d,
outside the repository), lint-h2d runs on the extracted root as a user would (`python -m
lint_h2d check --output-format json --no-cache --select H2D001 PACKAGE`, from the root; the
default `exclude` skips tests, as `list_candidates.py` does; it also skips `*_test.py` beside the
code, which `list_candidates.py` lists: labels there are set apart, not scored), and each finding is matched to
the labelled rows by (path, line): a finding's line is its statement's first line
(`noqa_row`), which is the line `list_candidates.py` prints.

Labels (`bench/labels/README.md`): `bench/labels/<corpus>.tsv`, or several
`<corpus>.<part>.tsv`, with the header `path, line, label, confidence, note` (tab-separated);
paths relative to the extracted root.  Figures (as /work/shared/LABELS.md defines them):

- precision = true findings / findings on labelled rows (a true finding is on an `H2D` row);
- recall = `high`-confidence `H2D` rows found / all `high`-confidence `H2D` rows.

A corpus too large to label whole may be labelled within a scope: `<corpus>.scope` lists the
folder prefixes (one per line, `#` comments; a line ending in `.py` names one file) whose every
candidate is labelled.  Its figures
then cover those folders only: findings outside them are counted apart ("outside the labelled
scope"), and a label outside them is an error.

Findings on no labelled row are listed for reading (they are neither true nor false until
someone labels them), with the false positives and the false negatives.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "bench" / "labels"
HEADER = ["path", "line", "label", "confidence", "note"]
LABEL_NAMES = ("H2D", "DEV_NON0D", "DEV_VALUE", "ADV", "CPU", "NP", "PY", "DEVICE_UNKNOWN", "OTHER")
CONFIDENCES = ("high", "med", "low")
RULE = "H2D001"


class LabelError(Exception):
    """A labels file that cannot be read as labels: the message names the file and line."""


@dataclass(frozen=True)
class Corpus:
    name: str
    pypi: str
    version: str
    package: str  # the top-level folder inside the wheel, e.g. "vllm/"
    source: str = "wheel"  # or "sdist" for a project that publishes no wheel


@dataclass(frozen=True)
class Label:
    path: str
    line: int
    label: str
    confidence: str
    note: str
    source: str  # "file.tsv:LINE", for messages


@dataclass(frozen=True)
class Finding:
    path: str  # relative to the corpus root, posix
    line: int  # the statement's first line
    message: str


@dataclass
class Score:
    corpus: str
    labelled: int
    positives: int
    positives_high: int
    findings: int
    on_labelled: int
    true: int
    found_high: int
    false_positives: List[Tuple[Finding, Label]] = field(default_factory=list)
    false_negatives: List[Label] = field(default_factory=list)
    unlabelled: List[Finding] = field(default_factory=list)
    outside: int = 0  # findings outside the corpus's labelled scope (`<corpus>.scope`)
    # Labels in files lint-h2d's default `exclude` skips (`*_test.py` beside the code, which
    # `list_candidates.py` lists): no finding can be made there, so they are not scored.
    excluded: List[Label] = field(default_factory=list)

    @property
    def precision(self) -> Optional[float]:
        return self.true / self.on_labelled if self.on_labelled else None

    @property
    def recall(self) -> Optional[float]:
        return self.found_high / self.positives_high if self.positives_high else None


# -- labels and corpora ---------------------------------------------------------------------------


def load_corpora(path: Path) -> Dict[str, Corpus]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for name, table in data.items():
        try:
            out[name] = Corpus(name, table["pypi"], table["version"], table["package"], table.get("source", "wheel"))
        except (KeyError, TypeError):
            raise LabelError(f"{path}: [{name}] needs pypi, version and package") from None
        if out[name].source not in ("wheel", "sdist"):
            raise LabelError(f"{path}: [{name}] source must be \"wheel\" or \"sdist\"")
    return out


def label_files(labels_dir: Path, corpus: str, corpora: Iterable[str] = ()) -> List[Path]:
    """`<corpus>.tsv` and `<corpus>.<part>.tsv`.  Corpus names contain dots (`vllm-0.33.0`),
    so a file belongs to the longest corpus name it starts with: `vllm-0.33.0.tsv` is not a
    part of a corpus `vllm-0.33`."""
    others = [c for c in corpora if c != corpus and len(c) > len(corpus)]
    found = []
    for path in sorted(labels_dir.glob("*.tsv")):
        stem = path.name[: -len(".tsv")]
        if not (stem == corpus or (stem.startswith(corpus + ".") and "." not in stem[len(corpus) + 1:])):
            continue
        if any(stem == o or stem.startswith(o + ".") for o in others):
            continue
        found.append(path)
    return found


def read_scope(labels_dir: Path, corpus: str) -> Optional[Tuple[str, ...]]:
    """The folder prefixes of `<corpus>.scope` (None: the corpus is labelled whole).  A line
    naming a `.py` file scopes that one file (`transformers/cache_utils.py`), not a folder."""
    path = labels_dir / f"{corpus}.scope"
    if not path.is_file():
        return None
    prefixes = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            prefixes.append(line if line.endswith(".py") else line.rstrip("/") + "/")
    if not prefixes:
        raise LabelError(f"{path}: names no folder")
    return tuple(prefixes)


def in_scope(path: str, scope: Optional[Tuple[str, ...]]) -> bool:
    return scope is None or path.startswith(scope)


def check_scope(labels: Sequence["Label"], scope: Optional[Tuple[str, ...]], corpus: str) -> None:
    for lab in labels:
        if not in_scope(lab.path, scope):
            raise LabelError(f"{lab.source}: {lab.path} is outside {corpus}.scope")


def read_labels(paths: Iterable[Path]) -> List[Label]:
    """Every row of the files, validated; a (path, line) labelled twice is an error."""
    labels: List[Label] = []
    seen: Dict[Tuple[str, int], str] = {}
    for path in paths:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
        if not rows or [c.strip() for c in rows[0][: len(HEADER)]] != HEADER:
            raise LabelError(f"{path}:1: the header must be {chr(9).join(HEADER)!r}")
        for number, row in enumerate(rows[1:], 2):
            if not any(cell.strip() for cell in row):
                continue
            where = f"{path.name}:{number}"
            if len(row) < 4:
                raise LabelError(f"{path}:{number}: expected path, line, label, confidence, note")
            rel, line, label, confidence = (c.strip() for c in row[:4])
            note = "\t".join(row[4:]).strip()
            if not line.isdigit() or int(line) < 1:
                raise LabelError(f"{path}:{number}: line must be a positive integer, got {line!r}")
            if label not in LABEL_NAMES:
                raise LabelError(f"{path}:{number}: unknown label {label!r} (one of {', '.join(LABEL_NAMES)})")
            if confidence not in CONFIDENCES:
                raise LabelError(f"{path}:{number}: confidence must be high, med or low, got {confidence!r}")
            key = (rel, int(line))
            if key in seen:
                raise LabelError(f"{path}:{number}: {rel}:{line} is already labelled at {seen[key]}")
            seen[key] = where
            labels.append(Label(rel, int(line), label, confidence, note, where))
    return labels


# -- the tool -------------------------------------------------------------------------------------


def run_lint(root: Path, package: str, jobs: int = 0) -> Tuple[List[Finding], List[str]]:
    """H2D001 findings on `root/package` (paths relative to root) and the error diagnostics
    (H2D9xx: files that could not be checked), from a real `lint-h2d check` process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "lint_h2d", "check", "--output-format", "json", "--no-cache",
           "--select", RULE, package.rstrip("/") or "."]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    proc = subprocess.run(cmd, cwd=str(root), capture_output=True, text=True, env=env, check=False)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise RuntimeError(f"lint-h2d failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}") from None
    return findings_from_json(data, root)


def findings_from_json(data: Sequence[dict], root: Path) -> Tuple[List[Finding], List[str]]:  # type: ignore[type-arg]
    findings, errors = [], []
    real_root = Path(os.path.realpath(root))
    for item in data:
        path = Path(os.path.realpath(item["filename"]))
        try:
            rel = path.relative_to(real_root).as_posix()
        except ValueError:
            rel = path.as_posix()
        if item["code"] != RULE:
            errors.append(f"{rel}:{item['location']['row']}: {item['code']} {item['message']}")
            continue
        line = item.get("noqa_row") or item["location"]["row"]
        findings.append(Finding(rel, int(line), item["message"]))
    return findings, errors


# -- the figures ----------------------------------------------------------------------------------


def default_excluded(path: str) -> bool:
    """Whether lint-h2d's default `exclude` skips `path` (relative to the corpus root): the
    file's name or any folder above it matches (`tests/`, `test_*.py`, `*_test.py`)."""
    sys.path.insert(0, str(REPO))
    from lint_h2d.config import Settings
    from lint_h2d.discovery import excluded

    settings = Settings(root=Path("."))
    parts = path.split("/")
    return any(excluded(settings, "/".join(parts[: i + 1]), i < len(parts) - 1) for i in range(len(parts)))


def score(corpus: str, labels: Sequence[Label], findings: Sequence[Finding],
          scope: Optional[Tuple[str, ...]] = None,
          skipped: Callable[[str], bool] = lambda path: False) -> Score:
    """Match findings to labelled rows by (path, line).  Two findings on one statement count
    once: labels are per statement.  With a `scope`, findings outside it are only counted.
    Labels in files `skipped` names (those the tool's default exclude skips) are set apart."""
    set_apart = [lab for lab in labels if skipped(lab.path)]
    labels = [lab for lab in labels if not skipped(lab.path)]
    by_key = {(lab.path, lab.line): lab for lab in labels}
    unique: Dict[Tuple[str, int], Finding] = {}
    outside = set()
    for f in findings:
        if not in_scope(f.path, scope):
            outside.add((f.path, f.line))
            continue
        unique.setdefault((f.path, f.line), f)
    result = Score(
        corpus=corpus, labelled=len(labels),
        positives=sum(lab.label == "H2D" for lab in labels),
        positives_high=sum(lab.label == "H2D" and lab.confidence == "high" for lab in labels),
        findings=len(unique), on_labelled=0, true=0, found_high=0, outside=len(outside),
        excluded=set_apart,
    )
    for key, f in sorted(unique.items()):
        lab = by_key.get(key)
        if lab is None:
            result.unlabelled.append(f)
            continue
        result.on_labelled += 1
        if lab.label == "H2D":
            result.true += 1
            result.found_high += lab.confidence == "high"
        else:
            result.false_positives.append((f, lab))
    result.false_negatives = [
        lab for lab in sorted(labels, key=lambda lab: (lab.path, lab.line))
        if lab.label == "H2D" and (lab.path, lab.line) not in unique
    ]
    return result


def _ratio(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.2f}"


COLUMNS = ["corpus", "labelled rows", "H2D rows", "H2D high", "findings", "on labelled rows",
           "true findings", "precision", "recall (high)"]


def _cells(s: Score) -> List[str]:
    return [s.corpus, str(s.labelled), str(s.positives), str(s.positives_high), str(s.findings),
            str(s.on_labelled), str(s.true), _ratio(s.precision),
            f"{_ratio(s.recall)} ({s.found_high}/{s.positives_high})"]


def pooled(scores: Sequence[Score], name: str) -> Score:
    """The scores added up: precision and recall over every row of every corpus."""
    return Score(name, *(sum(getattr(s, f) for s in scores) for f in (
        "labelled", "positives", "positives_high", "findings", "on_labelled", "true", "found_high")))


def markdown(scores: Sequence[Score]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" + "---:|" * (len(COLUMNS) - 1)]
    lines += ["| " + " | ".join(_cells(s)) + " |" for s in scores]
    if len(scores) > 1:
        lines.append("| " + " | ".join(_cells(pooled(scores, "**pooled**"))) + " |")
    return "\n".join(lines) + "\n"


def details(s: Score) -> str:
    out = [f"== {s.corpus}"]
    for name, cell in zip(COLUMNS[1:], _cells(s)[1:]):
        out.append(f"  {name}: {cell}")
    out.append(f"  false positives ({len(s.false_positives)}):")
    out += [f"    {f.path}:{f.line}  {lab.label}/{lab.confidence}  {lab.note}" for f, lab in s.false_positives]
    out.append(f"  false negatives ({len(s.false_negatives)}; H2D rows not found):")
    out += [f"    {lab.path}:{lab.line}  {lab.label}/{lab.confidence}  {lab.note}" for lab in s.false_negatives]
    out.append(f"  findings on no labelled row ({len(s.unlabelled)}; read them):")
    out += [f"    {f.path}:{f.line}  {f.message}" for f in s.unlabelled]
    if s.outside:
        out.append(f"  findings outside the labelled scope: {s.outside} (not scored)")
    if s.excluded:
        out.append(f"  labels in files the default exclude skips ({len(s.excluded)}; not scored):")
        out += [f"    {lab.path}:{lab.line}  {lab.label}/{lab.confidence}" for lab in s.excluded]
    return "\n".join(out) + "\n"


# -- main -----------------------------------------------------------------------------------------


def corpus_root(corpus: Corpus) -> Path:
    sys.path.insert(0, str(REPO))
    from tests.corpus import download_sdist, download_wheel, extract_py, extract_sdist_py

    prefix = corpus.package.rstrip("/") + "/"
    if corpus.source == "sdist":
        return extract_sdist_py(download_sdist(corpus.pypi, corpus.version, skip=False), prefix)
    return extract_py(download_wheel(corpus.pypi, corpus.version, skip=False), prefix)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", help="a corpus name (repeatable; default: all)")
    parser.add_argument("--markdown", action="store_true", help="print the table for bench/ACCURACY.md")
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labels folder")
    parser.add_argument("--corpora", type=Path, default=None, help="corpora.toml (default: LABELS/corpora.toml)")
    parser.add_argument("--root", action="append", default=[], metavar="NAME=PATH",
                        help="use an extracted tree instead of downloading NAME's wheel")
    parser.add_argument("--jobs", type=int, default=0, help="lint-h2d --jobs (default: its own)")
    args = parser.parse_args(argv)
    try:
        corpora = load_corpora(args.corpora or args.labels / "corpora.toml")
        roots = dict(r.split("=", 1) for r in args.root)
        names = args.corpus or list(corpora)
        unknown = [n for n in names if n not in corpora]
        if unknown:
            parser.error(f"unknown corpus {unknown[0]!r} (known: {', '.join(corpora)})")
        scores = []
        for name in names:
            corpus = corpora[name]
            files = label_files(args.labels, name, corpora)
            if not files:
                print(f"{name}: no labels in {args.labels} ({name}.tsv or {name}.<part>.tsv); skipped",
                      file=sys.stderr)
                continue
            labels = read_labels(files)
            scope = read_scope(args.labels, name)
            check_scope(labels, scope, name)
            root = Path(roots[name]) if name in roots else corpus_root(corpus)
            findings, errors = run_lint(root, corpus.package, args.jobs)
            for error in errors:
                print(f"{name}: could not check {error}", file=sys.stderr)
            scores.append(score(name, labels, findings, scope, default_excluded))
    except LabelError as exc:
        print(f"accuracy: error: {exc}", file=sys.stderr)
        return 2
    if args.markdown:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=False).stdout.strip() or "unknown"
        print(f"Measured {datetime.date.today().isoformat()}, lint-h2d at {commit} "
              f"(`python bench/accuracy.py --markdown`).\n")
        print(markdown(scores), end="")
    else:
        for s in scores:
            print(details(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
