"""Many files: reading them, the project's facts, and the worker pool that analyzes them.

Importing this module imports no parser: a run whose files all come from the cache never
loads LibCST (the engines are built by `plan.py` only for files that must be analyzed).
"""
from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import re
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from lint_h2d.cache import Cache
from lint_h2d.diagnostics import IO_ERROR, error_finding
from lint_h2d.findings import Finding
from lint_h2d.sources import Source, SourceError, Stamp, read_source
from lint_h2d.trace import span

if TYPE_CHECKING:
    import multiprocessing.process
    from multiprocessing.connection import Connection
    from pathlib import Path

    from lint_h2d.analysis import Engine
    from lint_h2d.config import Settings
    from lint_h2d.inference.project import ProjectFacts
    from lint_h2d.inference.resolved import Resolved
    from lint_h2d.inference.summary import FileSummary
    from lint_h2d.prefilter import TreeVerdict
    from lint_h2d.project_index import ProjectIndex


@dataclass(frozen=True)
class FileResult:
    path: str
    findings: Tuple[Finding, ...]
    # Set when --fix wrote (or, with --diff, would write) the file.
    original: Optional[str] = None
    fixed: Optional[str] = None
    fixed_count: int = 0


_WORKER_ENGINES: Sequence[Engine] = ()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a burst of allocation runs (a file's trees,
    the summaries, the resolved facts), back on after.

    Why: a collection is triggered by the count of allocations, and the oldest generation's
    walks every live object; building an AST, a LibCST tree or the project's facts allocates
    millions of objects that all stay alive until the burst ends, so about a third of a cold
    scan's CPU went to collections that found nothing.  What the burst leaves in cycles is
    collected by the next collection after it; reference counting frees the rest as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive now (the engines, the resolved facts) moved out of the collector's
    reach while the workers forked from this process run: collections in a worker then walk
    only what the worker allocates, and no collection writes to (and so copies) the pages
    the workers share with this process."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def preload_for_workers() -> None:
    """Import here, before workers fork, what every summary or resolving worker would import
    for itself: the summaries, the resolver and the prefilter (no parser but CPython's: none
    of them imports LibCST, which only the analysis needs).

    Why: each forked worker inherits this process's modules; imported in each of them, the
    same CPU was paid once per worker (two index workers and the resolving child on a cold
    scan).  Called only where workers are about to build summaries or resolve them, so a run
    answered from the cache imports none of it."""
    import lint_h2d.inference.project  # noqa: F401  (summary, resolved, values)
    import lint_h2d.prefilter  # noqa: F401


def _init_worker(engines: Sequence[Engine]) -> None:
    global _WORKER_ENGINES
    _WORKER_ENGINES = engines


# Files up to this size are analyzed with the collector paused (`gc_paused`); a longer file's
# burst leaves enough cyclic garbage (LibCST's trees and code generation) that collecting on the
# way keeps its peak bounded: a 100k-line file peaked at 406 MB paused, 318 MB not.
GC_PAUSE_MAX_CHARS = 512 * 1024


def _analyze(engine: "Engine", path: str, text: str, verdict: Optional["TreeVerdict"] = None) -> List[Finding]:
    if len(text) > GC_PAUSE_MAX_CHARS:
        findings = engine.analyze(path, text, verdict)
        gc.collect()  # the trees' cycles go now, not while the report is built
        _trim_heap()
        return findings
    with gc_paused():
        return engine.analyze(path, text, verdict)


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
    from lint_h2d.inference.project import class_fields_of

    return class_fields_of([source.text]) if _CPU_FIELD_TEXT.search(source.text) else {}


def merge_classes(*parts: Classes) -> Dict[str, FrozenSet[str]]:
    classes: Dict[str, FrozenSet[str]] = {}
    for part in parts:
        for name, fields in part.items():
            classes[name] = classes.get(name, frozenset()) | fields
    return classes


def project_facts(sources: Iterable[Source],
                  project: Optional[Mapping[str, FrozenSet[str]]] = None,
                  summaries: Optional[Mapping[str, FileSummary]] = None,
                  verdicts: Optional[Dict[str, TreeVerdict]] = None,
                  capture_functions: Sequence[str] = (), collect: bool = True) -> ProjectFacts:
    """Facts from the checked files, merged with the project index's (`project_index.py`).

    The checked files' own summaries replace the index's entries for the same files, so the
    facts describe the text being checked (an editor's unsaved buffer on stdin included).
    With `verdicts`, the trees the summaries are built from also answer the prefilter's
    stage 2 (`capture_functions`: the settings'), by each source's path, for `Engine.analyze`.
    `collect`: afterwards, a full collection and the heap trimmed, for the process the
    analysis workers fork from; a resolving child that only pickles the facts and exits
    skips both (`_resolved_from`).
    """
    from lint_h2d.inference.project import class_fields_of, from_classes, resolve

    sources = list(sources)
    classes: Dict[str, FrozenSet[str]] = dict(project or {})
    for name, fields in class_fields_of(s.text for s in sources if _CPU_FIELD_TEXT.search(s.text)).items():
        classes[name] = classes.get(name, frozenset()) | fields
    by_path: Dict[str, FileSummary] = dict(summaries or {})
    capture = tuple(capture_functions) if verdicts is not None else None
    todo = [(s.path, s.text, capture) for s in sources if _key(s.path) not in by_path]
    workers = default_jobs()
    if workers > 1 and len(todo) >= 64:
        from concurrent.futures import ProcessPoolExecutor

        preload_for_workers()
        # Summaries are built in workers and travel pickled; one more process resolves them.
        # The process the analysis workers fork from never holds the ASTs nor the unpickled
        # summaries (both cost far more memory than the resolved facts).
        with ProcessPoolExecutor(max_workers=workers) as pool:
            blobs = list(pool.map(_summarize_job, todo, chunksize=16))
            for (path, _, _), (_, _, verdict) in zip(todo, blobs):
                if verdict is not None and verdicts is not None:
                    verdicts[path] = verdict
            resolved = pool.submit(_resolve_job, [b[:2] for b in blobs], list(by_path.values())).result()
        del blobs
    else:
        with gc_paused():
            for path, text, _ in todo:
                by_path[_key(path)], verdict = summary_and_verdict(path, text, capture)
                if verdict is not None and verdicts is not None:
                    verdicts[path] = verdict
            with span("resolve"):
                resolved = resolve(list(by_path.values()))
    with span("resolve.free"):
        del by_path, todo
    if collect:
        with span("resolve.collect"):
            gc.collect()
            _trim_heap()  # give the freed pickles back before the analysis workers fork
    return from_classes(classes, resolved)


# The index being resolved by `facts_from_index`'s child process (inherited through fork).
_PENDING: Optional[Tuple["ProjectIndex", Sequence[Source]]] = None
# Below this many files, the project's facts are resolved in this process.
RESOLVE_APART = 64


def facts_from_index(index: "ProjectIndex", sources: Sequence[Source] = ()) -> ProjectFacts:
    """`project_facts(sources, *index.facts())`, in a child process for a large project, or
    for the project's own files (no `sources`) the facts stored when they were last resolved,
    if no file's facts changed since but for the lines an edit moved (`ProjectIndex.reused_facts`;
    stored by `save_resolved`).

    Why: the summaries and the resolver's intermediate objects cost this process ~200 MB on
    vLLM, and freed, they stay in its heap (fragmented) when the analysis workers fork from it:
    every worker's peak memory started there.  The child returns the resolved facts (a few MB,
    pickled); this process never holds the rest.
    """
    global _PENDING
    import multiprocessing

    # The process that read the rows as they were built (`RowReader`), for the project's own
    # facts: it resolves them, unless they are answered otherwise.
    reader = None
    if not sources:
        reader, index.reader = index.reader, None
        # The files' facts as when they were last resolved (an edit that changed no summary,
        # or only the lines it records): those resolved facts again, at the new lines,
        # without resolving (`ProjectIndex.reused_facts`).
        with gc_paused():
            reused = index.reused_facts()
        if reused is not None:
            if reader is not None:
                reader.close()
            index.fresh = {}  # as below
            return reused
    # The facts stored before this resolve, when an edit changed some files' facts: if the
    # resolve gives them back but for those files' lines, the findings cache is carried
    # (`ProjectIndex.carry_resolved`).  Read here, not in the resolving child (its peak).
    previous = None
    if reader is not None:
        previous = index.previous_facts()  # (the reader was forked before: it does not hold them)
        with span("facts.wait"):
            handed = reader.resolved(index)  # None when it could not: resolved as without it
        if handed is not None:
            index.fresh = {}  # as below
            streamed = _load_facts_file(handed)
            index.carry_resolved(previous, streamed)
            return streamed
    if len(index.rows) < RESOLVE_APART or "fork" not in multiprocessing.get_all_start_methods():
        if not sources and previous is None:
            previous = index.previous_facts()
        facts = _resolved_from(index, sources)
        if not sources:
            index.save_resolved(io.BytesIO(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)))
            index.carry_resolved(previous, facts)
        return facts
    from concurrent.futures import ProcessPoolExecutor

    preload_for_workers()  # this process builds its engine from the facts next, with them
    _PENDING = (index, sources)
    # Opened before the fork: the child replaces the file when it stores its facts.
    held = index.hold_resolved() if not sources and previous is None else None
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
            pending = pool.submit(_index_facts_job)  # the child is forked here
            _import_engine()
            if held is not None:
                previous = index.previous_facts(held)  # while the child resolves
            with span("facts.wait"):
                handed = pending.result()
    finally:
        _PENDING = None
        if held is not None:
            held.close()
    index.fresh = {}  # as `index.facts()` does: a later call reads them back
    resolved = _load_facts_file(handed)
    index.carry_resolved(previous, resolved)
    return resolved


def _load_facts_file(path: str) -> ProjectFacts:
    """The facts a resolving child pickled into `path` (`_index_facts_file`), read as a
    stream (no copy of the whole pickle in memory), the file removed."""
    try:
        with gc_paused(), open(path, "rb") as handle:
            facts: ProjectFacts = pickle.load(handle)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return facts


def _import_engine() -> None:
    """Import the analysis and its rules (~0.25 s), which the engine built from the facts
    needs next: done while the child resolves, this process idle on another core, rather
    than after it (the cold scan's wall clock paid both).  After the fork, so the child's
    memory does not carry them."""
    with span("engine.import"):
        import lint_h2d.analysis  # noqa: F401
        from lint_h2d.rules import all_rules

        all_rules()


def _index_facts_job() -> str:
    assert _PENDING is not None
    return _index_facts_file(*_PENDING)


def _index_facts_file(index: "ProjectIndex", sources: Sequence[Source]) -> str:
    """The resolved facts, pickled into a new file whose path is returned (the caller reads
    and removes it: `_load_facts_file`), and stored for the project's own files: in a
    resolving child (`_index_facts_job`, `_read_rows`), which exits next, so without the
    collector (`_resolved_from`'s `apart`).

    Why a file: pickled to bytes, the output (~19 MB on vLLM, grown by reallocation) and then
    its copy in the pool's pickled result were held beside the pickler's table, so the
    child's peak, the run's on vLLM's resolve-again edit, sat at the 250 MB goal of issue 12
    (246-251 MB); streamed to a file, and from it into the stored facts, neither is held.
    The file lies beside the index (same disk), else in the system's temporary folder."""
    with gc_paused():
        facts = _resolved_from(index, sources, apart=True)
        # The resolver's tables are freed now, but their memory stays in the heap, where the
        # pickler's table (one large block) cannot reuse it: given back first.
        _trim_heap()
        folder = str(index.index_file.parent) if index.index_file is not None else None
        try:
            handle, path = tempfile.mkstemp(prefix=".lint-h2d-facts-", suffix=".pickle", dir=folder)
        except OSError:  # the index's folder is not writable (its index was not written)
            handle, path = tempfile.mkstemp(prefix=".lint-h2d-facts-", suffix=".pickle")
        try:
            with span("facts.pickle"), os.fdopen(handle, "wb") as out:
                pickle.dump(facts, out, protocol=pickle.HIGHEST_PROTOCOL)
            del facts
            if not sources:  # the project's own facts, without a file the index does not cover
                with open(path, "rb") as pickled:
                    index.save_resolved(pickled)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
    return path


class RowReader:
    """A cold scan's resolving process, started before the index's rows are built: it reads
    (unpickles and decodes, `project_index.read_row`) each row as the index workers hand it
    over, then resolves them all as `facts_from_index`'s child would.

    Why: the rows' reading was ~3.7 s of the resolving child's CPU on vLLM, after the build,
    with the other core idle; read while the workers build, it takes its share of both
    cores.  Same rows, same order, same `memo`: the same summaries (`ProjectIndex._facts`
    checks the rows read are every row of the index, in its order; else they are read as
    without it).  The parent keeps its packed rows: without the reader's answer (it died, or
    the facts came from elsewhere) everything goes as before."""

    def __init__(self, process: "multiprocessing.process.BaseProcess", conn: "Connection") -> None:
        self._process = process
        self._conn: Optional[Connection] = conn
        self._sent: List[str] = []

    @staticmethod
    def start(index_file: Optional["Path"]) -> Optional["RowReader"]:
        """A reader forked now (None without fork), writing beside `index_file` as the
        resolving child does (snapshot, resolved facts, a corrupt row's facts)."""
        import multiprocessing

        if "fork" not in multiprocessing.get_all_start_methods():
            return None
        context = multiprocessing.get_context("fork")
        mine, theirs = context.Pipe()
        process = context.Process(target=_read_rows, args=(theirs, index_file), daemon=True)
        process.start()
        theirs.close()
        return RowReader(process, mine)

    def send(self, path: str, row: List[Any], packed: Any) -> None:
        if self._conn is None:
            return
        try:
            self._conn.send((path, row, packed))
            self._sent.append(path)
        except OSError:  # it died: resolved as without it
            self.close()

    def built(self) -> None:
        """Every row sent."""
        if self._conn is not None:
            try:
                self._conn.send(None)
            except OSError:
                self.close()

    def resolved(self, index: "ProjectIndex") -> Optional[str]:
        """The file the index's facts were resolved and pickled into (`_index_facts_file`;
        None if the reader did not read exactly the index's rows, or failed); the engine
        imported here meanwhile (`_import_engine`)."""
        path: Optional[str] = None
        if self._conn is not None and self._sent == list(index.rows):
            try:
                self._conn.send((index.rows, index.index_file, index.stored, index.facts_digests))
                _import_engine()
                path = self._conn.recv()
            except (OSError, EOFError):
                path = None
        self.close(finished=path is not None)
        return path

    def close(self, finished: bool = False) -> None:
        """End the reader (it is told to stop unless it just `finished`)."""
        if self._conn is None:
            return
        self._conn.close()
        self._conn = None
        if not finished:
            self._process.terminate()
        self._process.join()


def _read_rows(conn: "Connection", index_file: Optional["Path"]) -> None:
    """`RowReader`'s process: read the rows as they come, then resolve them when told."""
    from lint_h2d.project_index import ProjectIndex, RowsRead, read_row

    read = RowsRead()
    try:
        with gc_paused():  # every summary stays alive (as `ProjectIndex.facts`)
            while True:
                message = conn.recv()
                if message is None:
                    break
                path, row, packed = message
                with span("read_row"):
                    read_row(read, path, row, packed, index_file, {})
        rows, index_file, stored, digests = conn.recv()
    except EOFError:  # not wanted
        return
    index = ProjectIndex(rows, {}, index_file, stored)
    index.facts_digests = digests
    index.read = read
    del read
    conn.send(_index_facts_file(index, ()))


def _resolved_from(index: "ProjectIndex", sources: Sequence[Source], apart: bool = False) -> ProjectFacts:
    """The project's facts resolved from the index's summaries, then the index's snapshot
    written where `index.facts()` found it out of date: after the resolver's objects are
    freed, for a lower peak.

    `apart`: in a resolving child, which pickles the facts and exits (its collector paused by
    `_index_facts_file`).  The full collection after the resolve (a walk of every summary
    still alive: ~0.1-0.3 s of the serial part of a cold vLLM scan, while the other core
    waits for the facts) and the heap trim serve only a snapshot written next (its
    pickling's peak); without one they are skipped.  Skipped with the collector on, the same
    walk would come back as an automatic collection (measured: a generation-1 collection of
    ~0.1 s during `from_classes`), hence the pause."""
    with span("facts.read"):
        classes, summaries = index.facts()
    with span("facts.resolve"):
        facts = project_facts(sources, classes, summaries, collect=not apart or index.snapshot is not None)
    del classes, summaries
    with span("facts.snapshot"):
        index.save_snapshot()
    return facts


def _trim_heap() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def _key(path: str) -> str:
    return os.path.abspath(path) if path != "-" else path


def summary_and_verdict(path: str, text: str, capture_functions: Optional[Sequence[str]] = None
                        ) -> Tuple[FileSummary, Optional[TreeVerdict]]:
    """The file's summary and, with `capture_functions`, the prefilter's stage-2 verdict from
    the same tree (`prefilter.tree_verdict`; None when the text does not parse): every file is
    parsed by CPython once, not once for its summary and again for its analysis."""
    from lint_h2d.inference.summary import FileSummary, summarize_tree
    from lint_h2d.parse_chunks import parse_python  # in chunks: a fraction of a long file's peak

    # The summary is named by the absolute path, as the index names it: the resolved facts
    # (their evidence, and so the findings cache's key) must not depend on how the command
    # line spelled the path, nor on whether the facts came from this run or from the index.
    key = _key(path)
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return FileSummary(key), None  # as `summary.summarize`; the analysis reports it
    verdict = None
    if capture_functions is not None:
        from lint_h2d.prefilter import tree_verdict

        verdict = tree_verdict(tree, text, capture_functions)
    return summarize_tree(key, tree), verdict


def _summarize_job(job: Tuple[str, str, Optional[Sequence[str]]]) -> Tuple[bytes, bytes, Optional[TreeVerdict]]:
    """A summary, pickled in two parts: its call sites apart (most of its size); and the
    prefilter's verdict on the text when asked for."""
    with gc_paused():
        summary, verdict = summary_and_verdict(*job)
    calls = pickle.dumps(summary.calls, protocol=pickle.HIGHEST_PROTOCOL)
    rest = pickle.dumps(replace(summary, calls=()), protocol=pickle.HIGHEST_PROTOCOL)
    return rest, calls, verdict


def _resolve_job(blobs: Sequence[Tuple[bytes, bytes]], known: Sequence[FileSummary]) -> Resolved:
    """Resolve, unpickling only the call sites of functions whose parameters they can teach
    something (most calls are of library code): the memory of this process stays bounded."""
    with gc_paused():
        return _resolve_blobs(blobs, known)


def _resolve_blobs(blobs: Sequence[Tuple[bytes, bytes]], known: Sequence[FileSummary]) -> Resolved:
    from lint_h2d.inference.project import resolve, wanted_callees

    summaries = list(known) + [pickle.loads(rest) for rest, _ in blobs]
    wanted = wanted_callees(summaries)
    out = summaries[:len(known)]
    for summary, (_, calls) in zip(summaries[len(known):], blobs):
        sites = tuple(c for c in pickle.loads(calls) if c.callee in wanted)
        out.append(replace(summary, calls=sites))
    return resolve(out)


class LazyEngine:
    """An engine built on first use, from project facts also made on first use.

    Building one means resolving the project's facts and importing LibCST and the rules; a run
    whose files all come from the cache needs neither, so `plan.py` hands out this instead
    when it already knows the facts' fingerprint (the cache key).  A run that needs the facts
    (a file changed) still imports LibCST only for a file the prefilter keeps: `decide`
    answers the others from the facts alone (`triage.py`, the rules' `prefilter.RULE_FILTERS`).
    """

    def __init__(self, settings: "Settings", facts: Callable[[], "ProjectFacts"], use_prefilter: bool = True) -> None:
        self.settings = settings
        self.use_prefilter = use_prefilter
        self._make_facts: Optional[Callable[[], ProjectFacts]] = facts
        self._facts: Optional[ProjectFacts] = None
        self._engine: Optional[Engine] = None

    def facts(self) -> "ProjectFacts":
        if self._facts is None:
            assert self._make_facts is not None
            self._facts, self._make_facts = self._make_facts(), None
        return self._facts

    def get(self) -> "Engine":
        if self._engine is None:
            from lint_h2d.analysis import Engine

            self._engine = Engine(self.settings, self.facts(), use_prefilter=self.use_prefilter)
        return self._engine

    def decide(self, path: str, text: str, verdict: Optional["TreeVerdict"]) -> Optional[List[Finding]]:
        """The file's findings when the prefilter alone decides them (no rule survives it),
        without building the engine; None when the engine must analyze the file (or is built
        already: it decides the same, `Engine._analyze` runs `triage` first)."""
        if self._engine is not None or not self.use_prefilter:
            return None
        from lint_h2d.config import select_codes
        from lint_h2d.discovery import codes_for_file
        from lint_h2d.prefilter import RULE_FILTERS
        from lint_h2d.triage import Kept, triage

        selected = select_codes(list(RULE_FILTERS), self.settings.select, self.settings.ignore)
        filters = [RULE_FILTERS[c] for c in codes_for_file(self.settings, path, selected)]
        try:
            kept = triage(filters, path, text, verdict, self.settings, self.facts().prefilter_names)
        except RecursionError:
            return None  # the engine retries it on a deep stack
        return None if isinstance(kept, Kept) else kept


@dataclass(frozen=True)
class Unit:
    """One file to analyze, with the engine of its settings and facts and its cache.

    `source` is a path when the file has not been read yet: the cache answers it by stat, or
    it is read when it must be hashed or analyzed (a worker reads it itself)."""

    source: Union[Source, str]
    engine_or_lazy: Union["Engine", LazyEngine]
    cache: Optional[Cache] = None
    # The prefilter's stage 2 from the tree the file's summary was built from, when this run
    # built it (`prefilter.tree_verdict`): the analysis need not parse the file again.
    verdict: Optional["TreeVerdict"] = None

    @property
    def path(self) -> str:
        return self.source if isinstance(self.source, str) else self.source.path

    @property
    def engine(self) -> "Engine":
        return self.engine_or_lazy.get() if isinstance(self.engine_or_lazy, LazyEngine) else self.engine_or_lazy

    @property
    def settings(self) -> "Settings":
        return self.engine_or_lazy.settings


# What a worker sends back: the path, its findings, and the digest and stat of the bytes it
# read (None when the main process handed it the text).
Outcome = Tuple[str, List[Finding], Optional[str], Optional[Stamp]]


def _worker_analyze(job: Tuple[int, str, Optional[str], Optional["TreeVerdict"]]) -> Outcome:
    """Analyze one file in a worker; the worker reads it itself (paths travel, not texts)."""
    index, path, text, verdict = job
    with span("analyze"):
        if text is not None:
            return path, _analyze(_WORKER_ENGINES[index], path, text, verdict), None, None
        try:
            source = read_source(path)
        except SourceError as exc:
            return path, [error_finding(IO_ERROR, path, f"cannot check {path}: {exc}")], None, None
        return path, _analyze(_WORKER_ENGINES[index], path, source.text, verdict), source.digest, source.stamp


def _size(unit: Unit) -> int:
    if not isinstance(unit.source, str):
        return len(unit.source.raw)
    try:
        return os.stat(unit.source).st_size
    except OSError:
        return 0


def _analyze_unit(unit: Unit, text: str) -> List[Finding]:
    """`_analyze` of the unit's file with its engine, unless the prefilter decides the file
    before the engine is built (`LazyEngine.decide`): then neither LibCST nor the rules are
    imported for it."""
    if isinstance(unit.engine_or_lazy, LazyEngine):
        with gc_paused():
            decided = unit.engine_or_lazy.decide(unit.path, text, unit.verdict)
        if decided is not None:
            return decided
    return _analyze(unit.engine, unit.path, text, unit.verdict)


def _analyze_here(todo: Sequence[Unit], progress: Optional[Callable[[int, int], None]]) -> List[Outcome]:
    """`_worker_analyze` for each unit, in this process."""
    outcomes: List[Outcome] = []
    for done, unit in enumerate(todo, 1):
        if isinstance(unit.source, str):
            try:
                source = read_source(unit.source)
            except SourceError as exc:
                outcomes.append((unit.path, [error_finding(IO_ERROR, unit.path, f"cannot check {unit.path}: {exc}")],
                                 None, None))
                continue
            outcomes.append((unit.path, _analyze_unit(unit, source.text), source.digest, source.stamp))
        else:
            outcomes.append((unit.path, _analyze_unit(unit, unit.source.text), None, None))
        if progress is not None:
            progress(done, len(todo))
    return outcomes


def analyze_many(units: Sequence[Unit], jobs: int,
                 progress: Optional[Callable[[int, int], None]] = None,
                 read: Optional[Dict[str, Source]] = None) -> Dict[str, List[Finding]]:
    """Findings per path; workers get the biggest files first so no large file ends the run alone.

    A unit given as a path is answered from the cache by stat when it can be, else read here
    when the cache has an entry to compare its hash with (`read` receives it), else read by the
    worker that analyzes it.  A file that cannot be read gets an IO error.
    `progress(done, total)` is called after each file analyzed (cache hits are not counted).
    """
    results: Dict[str, List[Finding]] = {}
    todo: List[Unit] = []
    for unit in units:
        path = unit.path
        cached: Optional[List[Finding]] = None
        if isinstance(unit.source, str):
            if unit.cache is not None:
                cached = unit.cache.lookup(path)
                if cached is None and unit.cache.knows(path):
                    try:
                        unit = replace(unit, source=read_source(path))
                    except SourceError as exc:
                        results[path] = [error_finding(IO_ERROR, path, f"cannot check {path}: {exc}")]
                        continue
        if cached is None and unit.cache is not None and not isinstance(unit.source, str):
            cached = unit.cache.get(unit.source)  # corrupt: a miss
        if read is not None and not isinstance(unit.source, str):
            read[path] = unit.source
        if cached is not None:
            results[path] = cached
        else:
            todo.append(unit)
    # Every file goes through `Engine.analyze`: the prefilter inside it decides whether the file
    # is parsed at all.
    outcomes: List[Outcome] = []
    if jobs > 1 and len(todo) >= 8:
        from concurrent.futures import ProcessPoolExecutor

        todo.sort(key=_size, reverse=True)
        engines: List[Engine] = []
        index: Dict[int, int] = {}
        for unit in todo:
            engine = unit.engine
            if id(engine) not in index:
                index[id(engine)] = len(engines)
                engines.append(engine)
        work = [(index[id(u.engine)], u.path, None if isinstance(u.source, str) else u.source.text, u.verdict)
                for u in todo]
        # Chunks amortize the round trips; small enough that the biggest files, sent first,
        # still spread over the workers.
        chunk = max(1, min(16, len(work) // (jobs * 16)))
        with span("analysis.pool"), frozen_heap(), ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker,
                                                 initargs=(engines,)) as pool:
            for done, outcome in enumerate(pool.map(_worker_analyze, work, chunksize=chunk), 1):
                outcomes.append(outcome)
                if progress is not None:
                    progress(done, len(todo))
    elif len(todo) >= 8:
        for unit in todo:
            unit.engine  # built before the heap is frozen (a lazy engine resolves the facts)
        with frozen_heap():
            outcomes = _analyze_here(todo, progress)
    else:  # a few files: a full collection to freeze the heap would cost more than it saves
        outcomes = _analyze_here(todo, progress)
    caches = {u.path: u for u in todo}
    for path, findings, digest, stamp in outcomes:
        results[path] = findings
        unit = caches[path]
        if unit.cache is None:
            continue
        if isinstance(unit.source, str):
            if digest is not None:
                unit.cache.record(path, digest, stamp, findings)
        else:
            unit.cache.put(unit.source, findings)
    return results
