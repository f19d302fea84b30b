"""Which engine analyzes which file: its settings, its project's facts, its cache.

The invariant (issue 16): the findings for a file depend only on the file, the project it
belongs to, and the configuration that applies to it — never on the current directory, the
other paths of the run or their order, nor how the path is spelled.  So each file gets:

- the settings of its nearest `[tool.lint-h2d]` (`config.Resolver`);
- the cross-file facts of its project (the index of the settings' root, `project_index.py`)
  plus the classes it declares itself — not the classes of the other files named in the run;
- the findings cache of its project (keyed by settings, root and facts; entries by content).

Outside a project (no pyproject.toml or .git above the file) there is no stored index: the
facts are those of the files checked together (`project_index.memory_index`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple, Union

from lint_h2d.cache import DEFAULT_DIR, Cache, cache_key
from lint_h2d.config import Resolver, Settings, absolute_paths, canonical_folder, is_project_marker
from lint_h2d.pipeline import LazyEngine, Unit, facts_from_index, project_facts
from lint_h2d.project_index import ProjectIndex, load_index, memory_index
from lint_h2d.sources import Source, SourceError, read_source

if TYPE_CHECKING:
    from lint_h2d.analysis import Engine
    from lint_h2d.inference.project import ProjectFacts
    from lint_h2d.prefilter import TreeVerdict


@dataclass(frozen=True)
class Options:
    """The run's choices that shape engines and caches (from the command line)."""

    use_cache: bool = True
    cache_dir: Optional[Path] = None  # --cache-dir, already absolute
    walk: bool = False  # the run walks a folder (the index may walk the project too)
    use_prefilter: bool = True


def engine_for(path: str, text: str) -> "Engine":
    """The engine `lint-h2d check PATH` would use for this text of the file: its own
    configuration, its project's cross-file facts (`units`, as the CLI plans a run); for the
    editor server and `lint-h2d explain`."""
    from lint_h2d.sources import decode

    source = decode(path, text.encode("utf-8"))
    planned, _ = units(Resolver(None, lambda settings: settings), [source], Options(walk=False),
                       findings_cache=False)
    return planned[0].engine


def cache_folder(settings: Settings, options: Options) -> Optional[Path]:
    if not options.use_cache:
        return None
    if options.cache_dir is not None:
        return options.cache_dir
    folder = Path(settings.cache_dir) if settings.cache_dir else Path(DEFAULT_DIR)
    return folder if folder.is_absolute() else settings.root / folder


def units(resolver: Resolver, sources: Sequence[Union[Source, str]], options: Options,
          findings_cache: bool = True) -> Tuple[List[Unit], List[Cache]]:
    """One Unit per source (a path: not read yet), and the caches to save after the run.

    In a project whose index remembers the fingerprint of its resolved facts (nothing changed
    since they were last resolved), the engines are built only when a file misses the cache:
    a warm run resolves nothing and imports no parser.
    """
    groups: Dict[Tuple[Settings, bool], List[Union[Source, str]]] = {}
    # Per folder (its first file's): (real folder, its settings, whether it lies in the
    # settings' root).  A file's settings and project are its folder's, so the realpath,
    # the settings lookup and the pathlib test run once per folder, not once per file.
    by_folder: Dict[str, Tuple[Path, Settings, bool]] = {}
    # How the project index names a file: its absolute path, as spelled (not resolved).
    absolute: Dict[str, str] = {}
    realpaths: Dict[str, str] = {}  # `config.real_folder`'s memo, shared with the index's `covers`
    paths = [_path(source) for source in sources]
    for source, path, key in zip(sources, paths, absolute_paths(paths)):
        absolute[path] = key
        parent = os.path.dirname(key)
        if parent not in by_folder:
            real = canonical_folder(path, realpaths)
            settings = resolver.for_folder(real)  # `Resolver.for_path`, its folder already resolved
            by_folder[parent] = (real, settings, _under(real, settings.root))
        real, settings, folder_inside = by_folder[parent]
        inside = folder_inside or _under(real / os.path.basename(path), settings.root)
        groups.setdefault((settings, inside), []).append(source)
    out: List[Unit] = []
    caches: List[Cache] = []
    for (settings, inside), members in groups.items():
        folder = cache_folder(settings, options)
        index = None
        in_memory = False
        if inside and is_project_marker(settings.root):
            # The index's folder stamps tell whether the file set changed: even a run that
            # walks a folder does not walk the project again for it.
            index = load_index(settings, [_path(s) for s in members], folder, walk=False,
                               realpaths=realpaths)
        if index is None and all(isinstance(s, str) for s in members):
            # No project: the files checked together are all we know, indexed in memory
            # (`memory_index`: built and resolved as a project's index is, in less memory).
            index = memory_index([absolute[_path(s)] for s in members], settings.capture_functions)
            in_memory = True
        if index is not None:
            rows = index.rows  # `ProjectIndex.covers`, with each path's absolute spelling known
            # In memory, a file without a row could not be read: its analysis reports why.
            covered = [s for s in members if in_memory or absolute[_path(s)] in rows]
            extra = [s for s in members if not in_memory and absolute[_path(s)] not in rows]
            lazy = LazyEngine(settings, _project_facts(index), options.use_prefilter)
            main: Union[Engine, LazyEngine] = lazy
            fingerprint = index.known
            if fingerprint is None and findings_cache:
                fingerprint = lazy.facts().fingerprint  # the cache key: the resolved facts
        else:  # no project, and a text not read from a file (stdin): as `memory_index`
            covered, extra = list(members), []
            verdicts: Dict[str, TreeVerdict] = {}
            engine = _engine(settings, project_facts([_read(s) for s in members], verdicts=verdicts,
                                                     capture_functions=settings.capture_functions), options)
            main, fingerprint = engine, engine.project.fingerprint
        cache: Optional[Cache] = None
        if folder is not None and findings_cache and fingerprint is not None:
            # Keyed by the project's facts: a file's own facts are part of its content.
            # Facts carried to an edit's moved lines: the old key's entries that name no moved
            # file are still right (`Cache`), so a tree scan after an edit analyses only the
            # edited files and those whose evidence points into them.
            carried = index.carried if index is not None else None
            carry = (cache_key(settings, carried[0]), carried[1]) if carried is not None else None
            cache = Cache(folder, cache_key(settings, fingerprint), carry)
            caches.append(cache)
        if index is not None:
            verdicts = {_path(s): index.verdicts[absolute[_path(s)]] for s in covered
                        if absolute[_path(s)] in index.verdicts}
        out.extend(Unit(source, main, cache, verdicts.get(_path(source))) for source in covered)
        for source in extra:
            # A file the index does not cover (excluded, yet named): the project's facts plus
            # its own, never those of the other files of the run.
            assert index is not None
            out.append(Unit(source, LazyEngine(settings, _extra_facts(index, source), options.use_prefilter), cache))
    return out, caches


def _engine(settings: Settings, facts: "ProjectFacts", options: Options) -> "Engine":
    from lint_h2d.analysis import Engine

    return Engine(settings, facts, use_prefilter=options.use_prefilter)


def _project_facts(index: ProjectIndex) -> Callable[[], "ProjectFacts"]:
    def build() -> "ProjectFacts":
        facts = facts_from_index(index)
        index.remember(facts.fingerprint)
        return facts
    return build


def _extra_facts(index: ProjectIndex, source: Union[Source, str]) -> Callable[[], "ProjectFacts"]:
    def build() -> "ProjectFacts":
        return facts_from_index(index, [_read(source)])
    return build


def _path(source: Union[Source, str]) -> str:
    return source if isinstance(source, str) else source.path


def _read(source: Union[Source, str]) -> Source:
    """The source itself, or the file read now (one that cannot be read adds no facts; its
    analysis reports why)."""
    if not isinstance(source, str):
        return source
    try:
        return read_source(source)
    except SourceError:
        return Source(source, b"", "", "utf-8", False)


def _under(real: Path, root: Path) -> bool:
    """Whether `real` (a resolved path) lies in the project at `root`.

    A file belongs to the project when its real folder joined with its name does
    (`config.canonical_folder`: a file outside it, under the current directory's defaults or
    an explicit --config, has no project index).  Joining a name keeps a path inside the root
    inside, so `units` asks once per folder and per file only where the folder is outside."""
    try:
        real.relative_to(root)
    except ValueError:
        return False
    return True
