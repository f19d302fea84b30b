"""One file through the pipeline (read → prefilter → parse → walk → rules → noqa), many files
across worker processes, and the fix loop that rewrites files atomically.

Failures are contained per file and per rule: a file that cannot be read or parsed becomes a
diagnostic for that file, a rule that raises becomes an internal-error diagnostic, and every
other finding of the scan is kept.
"""
from __future__ import annotations

import ast
import codecs
import gc
import pickle
import hashlib
import io
import os
import re
import tempfile
import tokenize
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from fixers.edits import OverlappingEdits, TextEdit, apply_edits, line_offsets, to_offset
from lint_h2d.cache import Cache
from lint_h2d.config import Settings
from lint_h2d.discovery import PathPattern
from lint_h2d.findings import Finding, Location
from lint_h2d.inference.project import ProjectFacts, class_fields_of, from_classes, resolve, wanted_callees
from lint_h2d.inference.resolved import Resolved
from lint_h2d.inference.summary import FileSummary, summarize
from lint_h2d.prefilter import tree_filter
from lint_h2d.inference.scope import ModuleWalker
from lint_h2d.rules import all_rules, select_codes
from lint_h2d.rules.base import FileContext, Rule
from lint_h2d.suppression import is_suppressed, noqa_lines

IO_ERROR = "H2D900"
SYNTAX_ERROR = "H2D901"
INTERNAL_ERROR = "H2D902"
ERROR_CODES = (IO_ERROR, SYNTAX_ERROR, INTERNAL_ERROR)
MAX_FIX_ITERATIONS = 10


@dataclass(frozen=True)
class Source:
    """A file's text and how to write it back exactly as it was encoded."""

    path: str
    raw: bytes
    text: str
    encoding: str
    bom: bool

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


class SourceError(Exception):
    """The file could not be read or decoded; the message names the reason."""


def decode(path: str, raw: bytes) -> Source:
    bom = raw.startswith(codecs.BOM_UTF8)
    if b"\x00" in raw:
        raise SourceError("file contains NUL bytes (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        if "invalid or missing" in exc.msg:  # no cookie, and the first lines are not UTF-8
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise SourceError(f"cannot decode as utf-8 (no coding cookie): {err}") from None
        raise SourceError(f"invalid encoding declaration: {exc.msg}") from None
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = raw[len(codecs.BOM_UTF8):] if bom else raw
    if b"\x00" in body:
        raise SourceError("file contains NUL bytes (binary file?)")
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    return Source(path, raw, text, encoding, bom)


def read_source(path: str) -> Source:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None
    return decode(path, raw)


def cpython_parse(path: str, text: str) -> Tuple[Optional[ast.AST], List[Finding]]:
    """CPython's tree of `text`, or the diagnostic saying why there is none."""
    try:
        return compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True), []
    except SyntaxError as exc:
        return None, [error_finding(SYNTAX_ERROR, path, f"SyntaxError: {exc.msg}",
                                    exc.lineno or 1, exc.offset or 1)]
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, [error_finding(SYNTAX_ERROR, path, f"cannot parse: {exc}")]


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
        ignored: Set[str] = set()
        if self.settings.per_file_ignores:
            rel = _relative(path, self.settings.root)
            for glob, codes in self.settings.per_file_ignores:
                p = PathPattern.parse(glob)
                if p.matches(rel, False) or (p.anchored and _fnmatch(rel, glob)):
                    ignored.update(c.upper() for c in codes)
        return [r for r in self.selected if not any(r.code.startswith(c) or c == "ALL" for c in ignored)]

    def analyze(self, path: str, text: str) -> List[Finding]:
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
            if not rules:
                return syntax_errors
        if not rules:
            return cpython_parse(path, text)[1]
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as exc:
            message = str(exc.message).splitlines()[0] if exc.message else "invalid syntax"
            return [error_finding(SYNTAX_ERROR, path, f"SyntaxError: {message}",
                                  exc.raw_line, exc.raw_column + 1)]
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
            return [error_finding(INTERNAL_ERROR, path, "internal error: nesting too deep to analyze")]
        except Exception as exc:
            return [error_finding(INTERNAL_ERROR, path, f"internal error in inference: {_describe(exc)}")]
        ctx = FileContext(path, module, text, self.settings)
        findings: List[Finding] = []
        for rule in rules:
            mine = [f for f in facts if rule.wants(f.small)
                    and (f.capture is not None or not rule.capture_only)]
            if not mine:
                continue
            try:
                findings.extend(rule.check(mine, ctx))
            except Exception as exc:
                findings.append(error_finding(
                    INTERNAL_ERROR, path, f"internal error in rule {rule.code}: {_describe(exc)}"
                ))
        noqa = noqa_lines(text)
        findings = [f for f in findings if f.code in ERROR_CODES or not is_suppressed(f, noqa)]
        return sorted(findings, key=Finding.sort_key)

    def fix_text(self, path: str, text: str, unsafe: bool) -> Tuple[str, List[Finding], List[Finding]]:
        """Apply fixes until none is left (or edits stop converging).

        Returns the new text, the findings that were fixed, and those that remain.
        Fixes whose edits overlap are applied in later passes, after re-analysis, so no edit
        is ever applied to text it was not computed for.
        """
        applied: List[Finding] = []
        findings = self.analyze(path, text)
        for _ in range(MAX_FIX_ITERATIONS):
            fixable = [f for f in findings if f.fix_applies(unsafe)]
            if not fixable:
                break
            chosen, edits = _non_overlapping(text, fixable)
            try:
                new_text = apply_edits(text, edits)
            except OverlappingEdits:  # pragma: no cover - _non_overlapping prevents it
                break
            if new_text == text:
                break
            after = self.analyze(path, new_text)
            if any(f.code == SYNTAX_ERROR for f in after):
                # A fix must never break a file: drop this pass and report the findings unfixed.
                findings = [
                    replace(f, fix=None, no_fix_reason="internal: the rewrite did not parse")
                    if f in chosen else f for f in findings
                ]
                break
            text = new_text
            applied.extend(chosen)
            findings = after
        return text, applied, findings


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


def _describe(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _fnmatch(rel: str, glob: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(rel, glob)


# -- many files ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileResult:
    path: str
    findings: Tuple[Finding, ...]
    # Set when --fix wrote (or, with --diff, would write) the file.
    original: Optional[str] = None
    fixed: Optional[str] = None
    fixed_count: int = 0


_WORKER_ENGINE: Optional[Engine] = None


def _init_worker(engine: Engine) -> None:
    global _WORKER_ENGINE
    _WORKER_ENGINE = engine


def _worker_analyze(job: Tuple[str, str]) -> Tuple[str, List[Finding]]:
    assert _WORKER_ENGINE is not None
    path, text = job
    return path, _WORKER_ENGINE.analyze(path, text)


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


def analyze_many(engine: Engine, sources: Sequence[Source], jobs: int,
                 cache: Optional[Cache] = None,
                 progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, List[Finding]]:
    """Findings per path; workers get the biggest files first so no large file ends the run alone.

    `progress(done, total)` is called after each file analyzed (cache hits are not counted).
    """
    results: Dict[str, List[Finding]] = {}
    todo: List[Source] = []
    for source in sources:
        cached = cache.get(source) if cache is not None else None  # corrupt entries: a miss
        if cached is not None:
            results[source.path] = cached
        else:
            todo.append(source)
    # Every file goes through `Engine.analyze`: the prefilter inside it decides whether the file
    # is parsed with LibCST or only syntax-checked.
    candidates = list(todo)
    if jobs > 1 and len(candidates) >= 8:
        candidates.sort(key=lambda s: len(s.text), reverse=True)
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(engine,)) as pool:
            for done, (path, findings) in enumerate(pool.map(_worker_analyze, [(s.path, s.text) for s in candidates], chunksize=1), 1):
                results[path] = findings
                if progress is not None:
                    progress(done, len(candidates))
    else:
        for done, source in enumerate(candidates, 1):
            results[source.path] = engine.analyze(source.path, source.text)
            if progress is not None:
                progress(done, len(candidates))
    if cache is not None:
        for source in todo:
            cache.put(source, results[source.path])
    return results


# -- writing ---------------------------------------------------------------------------------


class WriteError(Exception):
    pass


def write_atomic(source: Source, new_text: str) -> None:
    """Replace the file only if it still holds the bytes we read; keep mode, encoding, BOM."""
    data = source.encode(new_text)
    path = source.path
    try:
        with open(path, "rb") as handle:
            current = handle.read()
    except OSError as exc:
        raise WriteError(f"cannot re-read before writing: {exc.strerror or exc}") from None
    if current != source.raw:
        raise WriteError("file changed on disk since it was read; not written")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o7777
        fd, tmp = tempfile.mkstemp(prefix=".lint-h2d-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if not os.access(path, os.W_OK):
            raise WriteError("file is not writable; not written")
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, WriteError):
            raise
        if isinstance(exc, OSError):
            raise WriteError(f"cannot write: {exc.strerror or exc}") from None
        raise

