"""Which engine analyzes which file: its settings, its project's facts, its cache.

The invariant (issue 16): the findings for a file depend only on the file, the project it
belongs to, and the configuration that applies to it — never on the current directory, the
other paths of the run or their order, nor how the path is spelled.  So each file gets:

- the settings of its nearest `[tool.lint-h2d]` (`config.Resolver`);
- the cross-file facts of its project (the index of the settings' root, `project_index.py`)
  plus the classes it declares itself — not the classes of the other files named in the run;
- the findings cache of its project (keyed by settings, root and facts; entries by content).

Outside a project (no pyproject.toml or .git above the file) there is no index: the facts
are the classes of the files checked together, as before.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from lint_h2d.cache import DEFAULT_DIR, Cache, cache_key
from lint_h2d.config import Resolver, Settings, canonical_folder, is_project_marker
from lint_h2d.engine import Engine, Source, Unit, project_facts
from lint_h2d.project_index import project_index


@dataclass(frozen=True)
class Options:
    """The run's choices that shape engines and caches (from the command line)."""

    use_cache: bool = True
    cache_dir: Optional[Path] = None  # --cache-dir, already absolute
    walk: bool = False  # the run walks a folder (the index may walk the project too)
    use_prefilter: bool = True


def cache_folder(settings: Settings, options: Options) -> Optional[Path]:
    if not options.use_cache:
        return None
    if options.cache_dir is not None:
        return options.cache_dir
    folder = Path(settings.cache_dir) if settings.cache_dir else Path(DEFAULT_DIR)
    return folder if folder.is_absolute() else settings.root / folder


def units(resolver: Resolver, sources: Sequence[Source], options: Options,
          findings_cache: bool = True) -> Tuple[List[Unit], List[Cache]]:
    """One Unit per source, and the caches to save after the run."""
    groups: Dict[Tuple[Settings, bool], List[Source]] = {}
    for source in sources:
        settings = resolver.for_path(source.path)
        groups.setdefault((settings, _inside(source.path, settings.root)), []).append(source)
    out: List[Unit] = []
    caches: List[Cache] = []
    for (settings, inside), members in groups.items():
        folder = cache_folder(settings, options)
        if inside and is_project_marker(settings.root):
            base, summaries = project_index(settings, [s.path for s in members], folder, options.walk)
            covered = [s for s in members if _key(s.path) in summaries]
            extra = [s for s in members if _key(s.path) not in summaries]
            main = Engine(settings, project_facts([], base, summaries), use_prefilter=options.use_prefilter)
        else:  # no project: the files checked together are all we know
            base, summaries, covered, extra = {}, {}, list(members), []
            main = Engine(settings, project_facts(members), use_prefilter=options.use_prefilter)
        cache: Optional[Cache] = None
        if folder is not None and findings_cache:
            # Keyed by the project's facts: a file's own facts are part of its content.
            cache = Cache(folder, cache_key(settings, main.project.fingerprint))
            caches.append(cache)
        out.extend(Unit(source, main, cache) for source in covered)
        for source in extra:
            # A file the index does not cover (excluded, yet named): the project's facts plus
            # its own, never those of the other files of the run.
            engine = Engine(settings, project_facts([source], base, summaries),
                            use_prefilter=options.use_prefilter)
            out.append(Unit(source, engine, cache))
    return out, caches


def _key(path: str) -> str:
    """How the project index names a file: its absolute path, as spelled (not resolved)."""
    return os.path.abspath(path)


def _inside(path: str, root: Path) -> bool:
    """Whether the file belongs to the project at `root` (a file outside it, under the
    current directory's defaults or an explicit --config, has no project index)."""
    try:
        (canonical_folder(path) / os.path.basename(path)).relative_to(root)
    except ValueError:
        return False
    return True
