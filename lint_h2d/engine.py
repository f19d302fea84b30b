"""One file through the pipeline (read → prefilter → parse → walk → rules → noqa), many files
across worker processes, and the fix loop that rewrites files atomically.

Failures are contained per file and per rule: a file that cannot be read or parsed becomes a
diagnostic for that file, a rule that raises becomes an internal-error diagnostic, and every
other finding of the scan is kept.
"""
from __future__ import annotations

import ast
import gc
import pickle
import os
import re
import sys
import threading
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar

import libcst as cst

from fixers.edits import OverlappingEdits, TextEdit, apply_edits, line_offsets, split_lines, to_offset
from fixers.pipeline import Rewrite, group_edit, runs
from lint_h2d.cache import Cache
from lint_h2d.config import Settings
from lint_h2d.discovery import per_file_ignored
from lint_h2d.findings import Finding, Location
from lint_h2d.inference.project import ProjectFacts, class_fields_of, from_classes, resolve, wanted_callees
from lint_h2d.inference.resolved import Resolved
from lint_h2d.inference.summary import FileSummary, summarize
from lint_h2d.parse_view import parse_view
from lint_h2d.prefilter import tree_filter
from lint_h2d.inference.scope import ModuleWalker
from lint_h2d.rules import all_rules, select_codes
from lint_h2d.rules.base import FileContext, Rule
from lint_h2d.sources import Source, SourceError, WriteError, decode, read_source, write_atomic
from lint_h2d.suppression import is_suppressed, noqa_lines

IO_ERROR = "H2D900"
SYNTAX_ERROR = "H2D901"
INTERNAL_ERROR = "H2D902"
ERROR_CODES = (IO_ERROR, SYNTAX_ERROR, INTERNAL_ERROR)
MAX_FIX_ITERATIONS = 10


def cpython_parse(path: str, text: str) -> Tuple[Optional[ast.AST], List[Finding]]:
    """CPython's tree of `text`, or the diagnostic saying why there is none."""
    try:
        return compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True), []
    except SyntaxError as exc:
        return None, [error_finding(SYNTAX_ERROR, path, f"SyntaxError: {exc.msg}",
                                    exc.lineno or 1, exc.offset or 1)]
    except (ValueError, MemoryError) as exc:
        return None, [error_finding(SYNTAX_ERROR, path, f"cannot parse: {exc}")]
    # RecursionError propagates: `Engine.analyze` retries the file on a deep stack.


DEEP_STACK_BYTES = 512 * 1024 * 1024
DEEP_RECURSION_LIMIT = 200_000
T = TypeVar("T")


def run_with_deep_stack(work: Callable[[], T]) -> T:
    """`work()` on a thread with a 512 MiB stack (virtual memory, touched only as deep as
    it recurses) and a high recursion limit; its exception, if any, is raised here."""
    outcome: List[Any] = []

    def target() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    old_size = threading.stack_size()
    old_limit = sys.getrecursionlimit()
    threading.stack_size(DEEP_STACK_BYTES)
    try:
        sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
        thread = threading.Thread(target=target, name="lint-h2d-deep")
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def error_finding(code: str, path: str, message: str, row: int = 1, column: int = 1) -> Finding:
    return Finding(code, message, path, Location(row, column), Location(row, column), noqa_row=None)


@dataclass
class Engine:
    """Analyzes text with the selected rules; holds no per-file state."""

    settings: Settings
    project: ProjectFacts
    rules: Sequence[Rule] = field(default_factory=all_rules)
    use_prefilter: bool = True

    def __post_init__(self) -> None:
        codes = select_codes([r.code for r in self.rules], self.settings.select, self.settings.ignore)
        self.selected = [r for r in self.rules if r.code in codes]

    def rules_for(self, path: str) -> List[Rule]:
        ignored = per_file_ignored(self.settings, path)
        return [r for r in self.selected if not any(r.code.startswith(c) or c == "ALL" for c in ignored)]

    def analyze(self, path: str, text: str) -> List[Finding]:
        """The file's findings.  Deep but valid code (a 350-piece implicit string
        concatenation, 5,000 `and` operands) overflows LibCST's recursion on the default
        stack: such a file is analyzed again on a thread with a large stack, so it keeps
        its findings."""
        try:
            return self._analyze(path, text)
        except RecursionError:
            pass
        try:
            return run_with_deep_stack(lambda: self._analyze(path, text))
        except RecursionError:
            return [error_finding(INTERNAL_ERROR, path, "internal error: nesting too deep to analyze")]

    def _analyze(self, path: str, text: str) -> List[Finding]:
        rules = self.rules_for(path)
        # CPython's parser checks the syntax of every file, so a file that is not Python is
        # reported with or without the prefilter; its tree feeds the prefilter's stage 2
        # (lint_h2d/prefilter.py).  LibCST only sees the files that survive.
        if self.use_prefilter and rules:
            tree, syntax_errors = cpython_parse(path, text)
            fields = self.project.prefilter_names
            rules = [r for r in rules if r.could_match(text, self.settings, device_fields=fields)]
            if tree is not None:
                rules = tree_filter(rules, tree, text, self.settings, fields)
            if not rules or syntax_errors:
                return syntax_errors  # CPython's verdict and position, not LibCST's
        if not rules:
            return cpython_parse(path, text)[1]
        # LibCST drops form feeds in indentation: it parses a view without them, and every
        # finding is moved back onto the file's own columns (lint_h2d/parse_view.py).
        view = parse_view(text)
        try:
            module = cst.parse_module(view.text)
        except cst.ParserSyntaxError as exc:
            cpython = cpython_parse(path, text)[1]
            if cpython:
                return cpython
            message = split_lines(str(exc.message))[0] if exc.message else "invalid syntax"
            return [error_finding(SYNTAX_ERROR, path, f"SyntaxError: {message}",
                                  exc.raw_line, view.column(exc.raw_line, exc.raw_column) + 1)]
        except RecursionError:
            raise
        except Exception as exc:  # a parser crash must not end the scan
            return [error_finding(SYNTAX_ERROR, path, f"cannot parse: {exc}")]
        try:
            walker = ModuleWalker(
                module, self.project.module_facts, self.settings.capture_functions,
                wants=lambda s, in_capture: any(
                    r.wants(s) and (in_capture or not r.capture_only) for r in rules
                ),
                text=text, hints=(self.settings.device_hints, self.settings.cpu_hints),
            )
            facts = walker.run()
        except RecursionError:
            raise
        except Exception as exc:
            return [error_finding(INTERNAL_ERROR, path, f"internal error in inference: {describe_exception(exc)}")]
        ctx = FileContext(path, module, view.text, self.settings)
        findings: List[Finding] = []
        for rule in rules:
            mine = [f for f in facts if rule.wants(f.small)
                    and (f.capture is not None or not rule.capture_only)]
            if not mine:
                continue
            try:
                findings.extend(rule.check(mine, ctx))
            except RecursionError:
                raise
            except Exception as exc:
                findings.append(error_finding(
                    INTERNAL_ERROR, path, f"internal error in rule {rule.code}: {describe_exception(exc)}"
                ))
        noqa = noqa_lines(text)
        findings = [view.restore(f) for f in findings
                    if f.code in ERROR_CODES or not is_suppressed(f, noqa)]
        return sorted(findings, key=Finding.sort_key)

    def fix_text(self, path: str, text: str, unsafe: bool,
                 trace: Optional[List[Tuple[Finding, str]]] = None) -> Tuple[str, List[Finding], List[Finding]]:
        """Apply fixes until none is left (or edits stop converging).

        Returns the new text, the findings that were fixed, and those that remain.
        Fixes whose edits overlap are applied in later passes, after re-analysis, so no edit
        is ever applied to text it was not computed for.  A fix whose rewrite does not parse
        is left out (and reported unfixed, with the reason); the others are still applied.
        ``trace`` receives every applied finding with the text its fix was computed on (what
        `verify` checks: exactly these fixes).
        """
        applied: List[Finding] = []
        broken: Dict[Tuple[str, Tuple[Tuple[str, str], ...]], str] = {}
        findings = self.analyze(path, text)
        for _ in range(MAX_FIX_ITERATIONS):
            fixable = [f for f in findings if f.fix_applies(unsafe) and _fix_key(text, f) not in broken]
            if not fixable:
                break
            chosen, edits = _non_overlapping(text, fixable)
            chosen, edits = _planned(text, chosen, edits)
            try:
                new_text = apply_edits(text, edits)
            except OverlappingEdits:  # pragma: no cover - _non_overlapping prevents it
                break
            if new_text == text:
                break
            after = self.analyze(path, new_text)
            if any(f.code == SYNTAX_ERROR for f in after):
                # A fix must never break a file: find the fixes that break it on their own,
                # set them aside, and apply the rest (one at a time if they only fail together).
                good: List[Finding] = []
                for finding in chosen:
                    assert finding.fix is not None
                    problem = _parse_problem(path, apply_edits(text, finding.fix.edits))
                    if problem is None:
                        good.append(finding)
                    else:
                        broken[_fix_key(text, finding)] = problem
                if not good:
                    continue
                chosen, edits = _non_overlapping(text, good)
                new_text = apply_edits(text, edits)
                after = self.analyze(path, new_text)
                if any(f.code == SYNTAX_ERROR for f in after):
                    chosen = good[:1]
                    assert chosen[0].fix is not None
                    new_text = apply_edits(text, chosen[0].fix.edits)
                    after = self.analyze(path, new_text)
            if trace is not None:
                trace.extend((f, text) for f in chosen)
            text = new_text
            applied.extend(chosen)
            findings = after
        if broken:
            findings = [
                replace(f, fix=None, no_fix_reason=f"the rewrite does not parse ({broken[_fix_key(text, f)]})")
                if f.fix is not None and _fix_key(text, f) in broken else f
                for f in findings
            ]
        return text, applied, findings


def _planned(text: str, chosen: List[Finding], edits: List[TextEdit]) -> Tuple[List[Finding], List[TextEdit]]:
    """The fix pipeline's view of one pass (`fixers/pipeline.py`).

    Deletions go first, in a pass of their own (with fixes that never group): a gated rewrite
    next to a deleted statement becomes adjacent to the next rewrite only once the deletion
    is in the text, and re-analysis then groups them.  Otherwise consecutive gated rewrites
    of one block share one gate: their single edits are replaced by one edit per run.  Each
    finding keeps its own fix (``--diff`` of one finding, the language server, ``verify``);
    only what the loop writes changes.
    """
    def rewrite(f: Finding) -> Optional[Rewrite]:
        return f.fix.rewrite if f.fix is not None else None

    pieces = [rewrite(f) for f in chosen]
    if any(r is not None and r.delete for r in pieces):
        first = [f for f, r in zip(chosen, pieces) if r is None or not r.groups]
        return _non_overlapping(text, first)
    grouped = [run for run in runs(r for r in pieces if r is not None and r.groups) if len(run) > 1]
    if not grouped:
        return chosen, edits
    replaced = {r.single for run in grouped for r in run}
    planned = [e for e in edits if e not in replaced] + [group_edit(run) for run in grouped]
    try:
        apply_edits(text, planned)
    except OverlappingEdits:  # pragma: no cover - runs cover only their own statements and comments
        return chosen, edits
    return chosen, planned


def _fix_key(text: str, finding: Finding) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    """A fix's identity across passes: the text it replaces and the text it writes."""
    assert finding.fix is not None
    offsets = line_offsets(text)
    spans = tuple(
        (text[to_offset(offsets, e.start):to_offset(offsets, e.end)], e.text) for e in finding.fix.edits
    )
    return finding.code, spans


def _parse_problem(path: str, text: str) -> Optional[str]:
    """Why ``text`` would not parse (CPython or LibCST), or None."""
    _, errors = cpython_parse(path, text)
    if errors:
        return f"line {errors[0].location.row}: {errors[0].message}"
    try:
        cst.parse_module(parse_view(text).text)
    except Exception as exc:  # noqa: BLE001 - any parser failure means "does not parse"
        return split_lines(str(exc))[0] if str(exc) else type(exc).__name__
    return None


def _non_overlapping(text: str, fixes: Sequence[Finding]) -> Tuple[List[Finding], List[TextEdit]]:
    offsets = line_offsets(text)
    taken: List[Tuple[int, int]] = []
    chosen: List[Finding] = []
    edits: List[TextEdit] = []
    seen_edits = set()
    for finding in sorted(fixes, key=Finding.sort_key):
        assert finding.fix is not None
        spans = []
        for e in finding.fix.edits:
            if e in seen_edits:
                continue
            spans.append((to_offset(offsets, e.start), to_offset(offsets, e.end)))
        if any(_overlaps(s, t) for s in spans for t in taken):
            continue
        taken.extend(spans)
        chosen.append(finding)
        for e in finding.fix.edits:
            if e not in seen_edits:
                seen_edits.add(e)
                edits.append(e)
    return chosen, edits


def _overlaps(a: Tuple[int, int], b: Tuple[int, int]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # an insertion conflicts only strictly inside a span
        point, span = (a, b) if a[0] == a[1] else (b, a)
        return span[0] < point[0] < span[1]
    return a[0] < b[1] and b[0] < a[1]


def describe_exception(exc: BaseException) -> str:
    """One line: the exception and where it was raised (no traceback for users)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


# -- many files ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileResult:
    path: str
    findings: Tuple[Finding, ...]
    # Set when --fix wrote (or, with --diff, would write) the file.
    original: Optional[str] = None
    fixed: Optional[str] = None
    fixed_count: int = 0


_WORKER_ENGINES: Sequence[Engine] = ()


def _init_worker(engines: Sequence[Engine]) -> None:
    global _WORKER_ENGINES
    _WORKER_ENGINES = engines


def _worker_analyze(job: Tuple[int, str, str]) -> Tuple[str, List[Finding]]:
    index, path, text = job
    return path, _WORKER_ENGINES[index].analyze(path, text)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def load_sources(paths: Sequence[str]) -> Tuple[List[Source], List[Finding]]:
    sources: List[Source] = []
    errors: List[Finding] = []
    for path in paths:
        try:
            sources.append(read_source(path))
        except SourceError as exc:
            errors.append(error_finding(IO_ERROR, path, f"cannot check {path}: {exc}"))
    return sources, errors


# A class with a `*_cpu` field has a line `x_cpu: ...` or `self.x_cpu = ...`; `collect` reads
# nothing else from a file, so files without this text are skipped (0.9 s → 0.05 s on vLLM).
_CPU_FIELD_TEXT = re.compile(r"_cpu[ \t]*[:=]")

Classes = Mapping[str, FrozenSet[str]]


def own_classes(source: Source) -> Dict[str, FrozenSet[str]]:
    """The `x`/`x_cpu` classes a file declares itself."""
    return class_fields_of([source.text]) if _CPU_FIELD_TEXT.search(source.text) else {}


def merge_classes(*parts: Classes) -> Dict[str, FrozenSet[str]]:
    classes: Dict[str, FrozenSet[str]] = {}
    for part in parts:
        for name, fields in part.items():
            classes[name] = classes.get(name, frozenset()) | fields
    return classes


def project_facts(sources: Iterable[Source],
                  project: Optional[Mapping[str, FrozenSet[str]]] = None,
                  summaries: Optional[Mapping[str, FileSummary]] = None) -> ProjectFacts:
    """Facts from the checked files, merged with the project index's (`project_index.py`).

    The checked files' own summaries replace the index's entries for the same files, so the
    facts describe the text being checked (an editor's unsaved buffer on stdin included).
    """
    sources = list(sources)
    classes: Dict[str, FrozenSet[str]] = dict(project or {})
    for name, fields in class_fields_of(s.text for s in sources if _CPU_FIELD_TEXT.search(s.text)).items():
        classes[name] = classes.get(name, frozenset()) | fields
    by_path: Dict[str, FileSummary] = dict(summaries or {})
    todo = [(s.path, s.text) for s in sources if _key(s.path) not in by_path]
    workers = default_jobs()
    if workers > 1 and len(todo) >= 64:
        # Summaries are built in workers and travel pickled; one more process resolves them.
        # The process the analysis workers fork from never holds the ASTs nor the unpickled
        # summaries (both cost far more memory than the resolved facts).
        with ProcessPoolExecutor(max_workers=workers) as pool:
            blobs = list(pool.map(_summarize_job, todo, chunksize=16))
            resolved = pool.submit(_resolve_job, blobs, list(by_path.values())).result()
        del blobs
    else:
        for path, text in todo:
            by_path[_key(path)] = summarize(path, text)
        resolved = resolve(list(by_path.values()))
    del by_path, todo
    gc.collect()
    _trim_heap()  # give the freed pickles back before the analysis workers fork
    return from_classes(classes, resolved)


def _trim_heap() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def _key(path: str) -> str:
    return os.path.abspath(path) if path != "-" else path


def _summarize_job(job: Tuple[str, str]) -> Tuple[bytes, bytes]:
    """A summary, pickled in two parts: its call sites apart (most of its size)."""
    summary = summarize(job[0], job[1])
    calls = pickle.dumps(summary.calls, protocol=pickle.HIGHEST_PROTOCOL)
    rest = pickle.dumps(replace(summary, calls=()), protocol=pickle.HIGHEST_PROTOCOL)
    return rest, calls


def _resolve_job(blobs: Sequence[Tuple[bytes, bytes]], known: Sequence[FileSummary]) -> Resolved:
    """Resolve, unpickling only the call sites of functions whose parameters they can teach
    something (most calls are of library code): the memory of this process stays bounded."""
    summaries = list(known) + [pickle.loads(rest) for rest, _ in blobs]
    wanted = wanted_callees(summaries)
    out = summaries[:len(known)]
    for summary, (_, calls) in zip(summaries[len(known):], blobs):
        sites = tuple(c for c in pickle.loads(calls) if c.callee in wanted)
        out.append(replace(summary, calls=sites))
    return resolve(out)


@dataclass(frozen=True)
class Unit:
    """One file to analyze, with the engine of its settings and facts and its cache."""

    source: Source
    engine: Engine
    cache: Optional[Cache] = None


def analyze_many(units: Sequence[Unit], jobs: int,
                 progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, List[Finding]]:
    """Findings per path; workers get the biggest files first so no large file ends the run alone.

    `progress(done, total)` is called after each file analyzed (cache hits are not counted).
    """
    results: Dict[str, List[Finding]] = {}
    todo: List[Unit] = []
    for unit in units:
        cached = unit.cache.get(unit.source) if unit.cache is not None else None  # corrupt: a miss
        if cached is not None:
            results[unit.source.path] = cached
        else:
            todo.append(unit)
    # Every file goes through `Engine.analyze`: the prefilter inside it decides whether the file
    # is parsed with LibCST or only syntax-checked.
    candidates = list(todo)
    if jobs > 1 and len(candidates) >= 8:
        candidates.sort(key=lambda u: len(u.source.text), reverse=True)
        engines: List[Engine] = []
        index: Dict[int, int] = {}
        for unit in candidates:
            if id(unit.engine) not in index:
                index[id(unit.engine)] = len(engines)
                engines.append(unit.engine)
        work = [(index[id(u.engine)], u.source.path, u.source.text) for u in candidates]
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(engines,)) as pool:
            for done, (path, findings) in enumerate(pool.map(_worker_analyze, work, chunksize=1), 1):
                results[path] = findings
                if progress is not None:
                    progress(done, len(candidates))
    else:
        for done, unit in enumerate(candidates, 1):
            results[unit.source.path] = unit.engine.analyze(unit.source.path, unit.source.text)
            if progress is not None:
                progress(done, len(candidates))
    for unit in todo:
        if unit.cache is not None:
            unit.cache.put(unit.source, results[unit.source.path])
    return results




__all__ = [
    "Engine", "FileResult", "Unit", "analyze_many", "default_jobs", "error_finding", "load_sources",
    "project_facts", "own_classes", "merge_classes", "describe_exception", "run_with_deep_stack",
    # reading and writing sources live in lint_h2d.sources; re-exported for callers
    "Source", "SourceError", "WriteError", "decode", "read_source", "write_atomic",
]
