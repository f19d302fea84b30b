"""Cross-file facts for the whole project, not only for the files being checked.

A pre-commit run names one changed file, but the class that pairs `query_start_loc` with
`query_start_loc_cpu` lives in another file; without it the one-file run and the repo-wide
scan would disagree about the same line.  So the project's files are indexed too, and the
index (kept in the cache folder) is reused only while everything it was built from is
unchanged.  It is keyed by:

- the project root: one index file per resolved root (`project-index-<hash>.json`), so a
  cache folder shared by several projects never mixes their facts;
- the settings that decide which files are walked (`include`, `exclude`, `extend-exclude`,
  `respect-gitignore`), the index format, the tool version and its build (`code_id`: the
  stat of its own sources): any change rebuilds it;
- the file set: the stat (mtime, ctime, inode) of every folder the walk listed, of its
  `.gitignore`, and a digest of its Python files' and sub-folders' names.  A file added,
  removed or renamed changes its folder's stat; a one-file run then lists that folder again
  and walks the project only if those names changed (walking vLLM costs more than checking
  one file; stat'ing its 442 folders a few milliseconds);
- each file's stat (size, mtime_ns, ctime_ns, inode) and a hash of its bytes (BLAKE2b-128).
  ctime and inode catch `touch -r`, `cp -p` and `rsync -a`, which keep size and mtime.  A stat
  taken within `RACY_NS` of the run that recorded it may not show a later write in the same
  clock tick (coarse timestamps, git's "racy" case), so such files are re-read and compared
  by hash, and such folders listed again.

The index only speeds things up: without a cache folder every file is read.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import re
import shutil
import tempfile
import time
from contextlib import nullcontext
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Any, BinaryIO, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from lint_h2d import __version__
from lint_h2d.cache import RACY_NS, STALE_TEMP_S, save_json
from lint_h2d.code_id import code_id
from lint_h2d.config import Settings, absolute_paths, real_folder
from lint_h2d.discovery import PYTHON_SUFFIXES, discover
from lint_h2d.findings import evidence_file_name
from lint_h2d.moved_lines import FileMove, Unmappable, line_map, remap_facts, shifted_summary
from lint_h2d.trace import span

if TYPE_CHECKING:
    from lint_h2d.inference.project import ProjectFacts
    from lint_h2d.inference.summary import FileSummary
    from lint_h2d.pipeline import RowReader
    from lint_h2d.prefilter import TreeVerdict

INDEX_FORMAT = 73  # 3: entries hold the file's summary (inference/summary.py); 4: facts stored apart; 5: summary terms changed (issue 17); 6: dataclass positional fields; 7: long operator terms kept in part; a `torch.Tensor` parameter is a param term; 8: calls in the branches of a conditional expression are call sites; 9: module calls (`nn`, `invoke`, `shape` terms, `ret` with a line); 10: factories inside `with torch.device(...)` are on its device, `meta` is no device; 11: a file's summary says whether it imports vLLM (its model classes are built under the loader's device context); 12: string and `torch.device(...)` arguments are places (`place` terms); 13: a name read in its own values is a `cycle` (settled: `n += k`), `min`/`max`/`sum` are `fold`/`fold1` terms; 14: elementwise and softmax-family torch functions and methods keep their input's place (`same`, `keep` terms), a call of an import alias names the imported function (the 13th's terms and these merged); 15: a module moved with `.to(device)` / `.to(x.device)` records the place (`ModuleMove.device`), a loop element as its iterable; 16: `index_select`, `cumsum` and `cumprod` keep their input's rank (`keep` terms), `torch.cat` is a `cat` term; a function says what it calls (`called`, `self_called`), a device context the methods of its object it calls (`owner`, `methods`); a file's module-level names bound only to numbers or displays of them (`constants`); `device=self.device` is an `on` term of the class's `device` field, a `device: str` parameter a `param` term (its call sites may name the CPU); 17: a function whose every return is a tuple display of one length says each position's term (`FunctionSummary.return_items`); 18: a dict display (or `dict(k=v)`) with constant string keys and values of different terms keeps each key's term (a third part of its `list` term), `d["k"]` says the key read (a fourth part of `sub`), `a, b = f(...)` binds each name to an `item` term, and `f(**d)` records `d`'s term as the keyword `**`; a method's own instance passed as an argument (`Helper(self)`) is an `inst` term of its class, and `self.m(...)` says its class (`CallSite.self_owner`); 19: an argument's `on` / `shape` term too deep keeps its own facts around a cut of its base; 20: a name read in a function body is what reaches that statement (an outright rebinding hides the values before it), and `obj.attr = v` stores into an instance of a project class a term names are kept (`FileSummary.stores`); 21: an allocation's `how` names its `device=` (`torch.zeros(..., device=self.dev)`); 22: `self.x += v` in a method is a field term (`aug`: what is added); 23: `t.new(...)`, the legacy constructor, is a `same` term of `t` like `t.new_zeros(...)`, and `torch.nan_to_num(x)` / `x.nan_to_num()` a `keep` term of `x`; 24: `self.x = []` that no method of the class grows is an `emptylist` term (an item store into it raises); 25: `json.load(f)` / `json.loads(s)` is a `json` term (a container of host values); 26: a union of numbers and containers (`int | list[int]`) annotates as the join of its members, not unknown; 27: the parameters of `Owner.__call__` are keyed by its class (`resolved.param_key`); 28: a function says how calls may bind to it (`FunctionSummary.arity`: positional parameters, `*args`, `**kwargs`); 29: a call of a parameter annotated as a class (`Type[C]`, `summary.class_annotation`) is a `built` term of `C` and the parameter's name; 30: a binding at or after a read in a loop reaches it only where the loop's back edge skips the last rebinding before the read (`reaching._may_reach`); 31: a display with a starred element (`(t, *rest)`) holds what the starred iterable's display holds, else something not known (it held only the plain elements); 32: `x.m(...)` where `x`'s term may name project classes records it (`CallSite.receiver`): the call runs only their own, inherited or overriding `m`; 33: a file's module-level names its functions bind under `global` or store items into, with the terms put there (`FileSummary.module_values`), and `d.get(k)` / `d.get(k, v)` / `d.setdefault(k, v)` are a value of `d` (`sub`), or `v`; 34: `t.new_zeros(sizes)` and the other `new_*` methods are an `on` term of `t` with the rank of their sizes (as `device=t.device`), `x.repeat(...)` / `x.expand(...)` a `shape` term of as many dimensions as sizes, `tril` / `triu` `keep` terms; 35: `torch.gather(x, ...)` / `x.gather(...)` are `keep` terms, `torch.outer` / `torch.ger` `same` terms; 36: `x.cpu()`, `x.to("cpu")` and `x.to(<torch dtype>)` are module moves of the CPU place or `OTHER` (`summary._other_move`: the project moves `x` itself); 37: `x if isinstance(x, C) else ...` is an `inst` term of `C` on the side the test selects (`summary._checked_instance`), and a file's summary names the functions it hands on (`FileSummary.references`); 38: an allocation's integer slot says a floating or boolean dtype too (`summary.dtype_code`: `"f"`, `torch.zeros(n)` without `dtype=` one); 39: an allocation's `device=<name>` keeps the name's term, a small one (a sixth part of `dev`: a name that holds the CPU is the CPU; `_small` drops it first; 40: the stage-2 verdicts kept here seed the names whose `.device` a call takes as a place (`prefilter.device_named_text`: `device=x.device`, `.to(x.device)`); 41: and the names `x` of a bare name `x_cpu` (`usage.DeviceNamed.sibling`: the device half of a CPU/device pair); 42: `torch.cat(chunks)` of a name is a `cat` term of an element of it (`sub`), `x = x[i]` in a loop settles to `same` of the other values, and an empty display beside a list grown by `append` is dropped from a join; 43: a buffer registered under a local bound once to a string (`NAME = "enabled"`, `register_buffer(NAME, t)`) is a field, and a single size made with `-`, `//`, `%`, `**`, `<<`, `>>`, `/` or a unary sign (`torch.zeros(n - k)`) is one dimension; 44: a rebinding later in a straight block that holds an earlier binding hides it from reads after the rebinding (`reaching.kills`: `x = f()` then `x = g(x)` in one branch of an `if`); 45: `F.softmax(x)` and the other `torch.nn.functional` functions of `torch_api.FUNCTIONAL_RANK_KEEPING` are `keep` terms of `x`; 46: a single size `n + 1` (an int literal added) is one dimension, as the walk reads it; 47: `rows[k].append(v)` on a list of list displays grows every row by `v` (`summary._list_growth`); 48: `Cls.apply(...)` of a module-level or imported name records it as the call's receiver (a `global` term: an autograd `Function`'s `forward` runs); 49: `Cls.forward(...)` records its receiver too, and a call argument that is a device parameter defaulting to the CPU, never rebound nor tested, is a `cpudefault` term; 50: `torch.meshgrid(...)` is a `mesh` term (one grid per input), and an allocation with `device=<a parameter defaulting to the CPU>`, never rebound nor tested, a `dev` term of a `cpudefault` term; 51: `getattr(self, name)` in a method that registers a buffer under the local `name` is that buffer's term (`summary._named_buffers`); 52: `torch.fft.<f>(x)` is a `keep` term of `x`, `torch.linalg.vector_norm(x)` / `torch.linalg.norm(x)` a `same` term; 53: a parameter read after a top-level `B, T, N = x.size()` (or `= x.shape`) is a `ranked` term of that many dimensions (`summary.shape_unpacking`); 54: `super().m(...)` in a method of `C` records a `super` receiver of `C` (it runs a method of a base of `C` only); 55: a class's base spelled `nn.Module` / `torch.nn.Module` is `nn.Module` (`summary.TORCH_MODULE_BASE`), not `Module`: a project class `Module` of its own is no base of it; 56: `dist.get_rank()` / `dist.get_world_size()` of a name the module's imports bind to `torch.distributed` is a Python int (`summary.distributed_aliases`); 57: `a, *rest = f(...)` binds the names before the starred one to positions of the call's value (`item` terms), the starred one and those after it to something not known, and a parameter read after a top-level `assert x.dim() == N` (or `x.ndim`, `len(x.shape)`) is a `ranked` term of N dimensions; a read past an `if` / `else` each branch of which rebinds the name, or past `x op= v`, reaches only those bindings (`reaching.branch_rebindings`, `reaching.rebinds`); `x.t()`, `x.movedim(...)` and the other view methods of `torch_api.VIEW_METHODS` the walk reads are `same` terms, and `t`, `transpose`, `permute`, `movedim`, `swapaxes`, `narrow` `keep` terms (of `x`'s rank); 58: `d.get(k)` / `d.get(k, v)` / `d.setdefault(k, v)` say the key where it is a constant string (a sixth part of `get`: a configuration's `cfg.get("queue_size", n)` is a host value); 59: a class's base spelled through `torch.nn` (`nn.Linear`, `nn.Sequential`, `nn.modules.loss._Loss`) or `torch.jit.ScriptModule` is `nn.Module` too (`summary._base_name`); 60: a class-level annotation's qualifier is looked through (`ClassVar[Optional[int]]`, `Final[int]`, `Annotated[int, ...]`: `summary.annotation_term`); 61: a function says the terms of its parameters' defaults that read an attribute of a module-level name (`FunctionSummary.default_terms`: `kind=Kind.NORMAL`); 62: a call of a function of the `math` module the file imports is a Python number (`summary._Builder.math`), and `obj.attr = v` through a field of a project class (`acc = self.accelerator`) is an object store (`summary._STORE_RECEIVER_TAGS`); 63: a subscript with an advanced index says each position's term (a fourth part of `sub`: `sequences[order, 1:]` keeps the rank `torch_api.advanced_indexed_rank` gives); 64: the `scores` of a transformers logits processor's `__call__` is a `proc` term (`summary.processor_scores`: its calls pass the model's device scores on); 65: a module-level name bound only to a string naming the CPU or an accelerator is a constant (`cpu` / `accel` shapes of `FileSummary.constants`), and a file says what it re-exports (`FileSummary.reexports`: star imports, a package's `from m import name`); 66: the counter of `for i, x in enumerate(xs)` is a Python int (`summary._enumerate_counter`), and a call of a name a module-level `from torch import zeros` binds once is `torch.zeros(...)`'s term (`summary._Builder.torch_functions`); 67: a call argument's `move` term too deep keeps the move around a cut of its receiver (`summary._small`: `.to(device)` puts it on the accelerator whatever the receiver); 68: `torch.any(x)` / `x.all(dim=1)` and `torch.quantile(x, q)` are `same` terms of `x`; 69: an argument's term is again at most 20 parts (68 allowed 28); 70: `self.apply(self.m)` says it calls `m` on its object (`self_called`: `nn.Module.apply` runs `m` there and then); 71: `torch.zeros_like(t)` without `device=` is an `on` term of `t` (`t.new_zeros(...)`'s reading, of `t`'s rank); 72: a name bound to `None` on one path and to something else on another reads as the other (`summary.NONE_TERM`: `w = None`, then `w = mask.float()` under an `if`); 73: a join keeps one of the values equal but for the lines of their calls and attribute reads (`summary._unlined`), and `cls(...)` in a classmethod records its class (`CallSite.self_owner`: a construction))
# A folder this large is not a project root someone meant (a home folder): skip the index.
MAX_FILES = 50_000
# Stamps this close to (or after) the recording run are not trusted (RACY_NS, `cache.py`): file
# systems with 1 s or 2 s timestamps (and writes racing the run) can change a file without
# changing its stat.

Classes = Dict[str, FrozenSet[str]]
Stat = List[int]


def is_project_root(root: Path) -> bool:
    return (root / "pyproject.toml").is_file() or (root / ".git").exists()


def covers(root: Path, paths: Iterable[str], realpaths: Optional[Dict[str, str]] = None) -> bool:
    """Every checked path lies inside `root` (facts of one project never leak into another).

    A path is where it is named, its folders resolved (`config.canonical_folder`), not where a
    symlinked file points: a link to a shared file outside the project is still the
    project's file, and resolving it cost every file of the run its project index.
    `realpaths`: `config.real_folder`'s memo, shared with the caller."""
    resolved = root.resolve()
    # `config.canonical_folder`, one `realpath` per folder, and whether that lies in the root:
    # a name joined to a folder inside the root is inside too, so pathlib runs once per folder.
    real: Dict[str, Tuple[Path, bool]] = {}
    named = list(paths)
    for path, absolute in zip(named, absolute_paths(named)):
        folder = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        if folder not in real:
            folder_real = Path(real_folder(folder, realpaths))
            real[folder] = (folder_real, _under(folder_real, resolved))
        folder_real, inside = real[folder]
        if not inside and not _under(folder_real / os.path.basename(path), resolved):
            return False
    return True


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


# -- what an entry holds (the one place that reads a file's facts) -----------------------------


def file_facts(path: str, data: bytes, verdicts: Optional[List["TreeVerdict"]] = None,
               capture_functions: Sequence[str] = ()) -> Dict[str, Any]:
    """The facts the index keeps about one file, from its bytes (JSON-able; `merge_facts`
    reads them back): its classes with a `*_cpu` field, and its summary (classes, fields,
    returns, call sites, device contexts: `inference/summary.py`).  Bump INDEX_FORMAT when
    their shape changes.

    With `verdicts`, the tree the summary is built from also answers the prefilter's stage 2
    (`prefilter.tree_verdict`, appended there when the text parses): the analysis then need
    not parse the file again.  Not part of the facts: it depends on the settings."""
    from lint_h2d.inference.project import class_fields_in
    from lint_h2d.pipeline import gc_paused, summary_and_verdict

    text = data.decode("utf-8", errors="replace")
    classes = {} if b"_cpu" not in data else {
        name: sorted(fields) for name, fields in class_fields_in(text).items()}
    with gc_paused():  # a tree's worth of objects, all alive until the summary is built
        summary, verdict = summary_and_verdict(path, text, capture_functions if verdicts is not None else None)
        if verdict is not None and verdicts is not None:
            verdicts.append(verdict)
        return {"classes": classes, "summary": summary.to_json()}


def merge_facts(classes: Dict[str, FrozenSet[str]], summaries: Dict[str, "FileSummary"],
                path: str, facts: Dict[str, Any], memo: Optional[Dict[Any, Any]] = None
                ) -> Dict[str, FrozenSet[str]]:
    """Add one entry's facts to the project's (all or nothing: a corrupt entry raises), and
    return its own `_cpu` classes.  `memo`: `summary.from_json`'s, one for all the entries of
    a project."""
    from lint_h2d.inference.summary import from_json

    summary = from_json(path, facts["summary"], memo)
    found = {str(name): frozenset(str(f) for f in fields) for name, fields in facts["classes"].items()}
    _add_classes(classes, found)
    summaries[path] = summary
    return found


def _add_classes(classes: Dict[str, FrozenSet[str]], found: Mapping[str, FrozenSet[str]]) -> None:
    """One file's `_cpu` classes into the project's (a class of one name in several files:
    the union of their fields)."""
    for name, fields in found.items():
        classes[name] = classes.get(name, frozenset()) | fields


# -- keys ---------------------------------------------------------------------------------------


def index_path(cache_folder: Path, root: Path) -> Path:
    """One index per project root, so a shared `--cache-dir` never mixes projects."""
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()
    return cache_folder / f"project-index-{digest[:16]}.json"


def index_key(settings: Settings) -> Dict[str, Any]:
    """Everything besides the files themselves that the index content depends on."""
    return {
        "format": INDEX_FORMAT,
        "version": __version__,
        "code": code_id(),  # a source checkout's edits change summaries without a bump
        "root": str(settings.root.resolve()),
        "include": list(settings.include),
        "exclude": list(settings.exclude),
        "extend_exclude": list(settings.extend_exclude),
        "respect_gitignore": settings.respect_gitignore,
        "max_files": MAX_FILES,
    }


def _stat(path: str) -> Optional[Stat]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _racy(stat: Optional[Stat], trusted_before: int) -> bool:
    """A stamp too close to the run that recorded it to prove the content unchanged since."""
    return stat is not None and max(stat[1], stat[2]) >= trusted_before


def _names(folder: str) -> Optional[str]:
    """A digest of the entries of `folder` that the walk can yield or enter (Python files and
    sub-folders): an editor's swap file or a checkout that rewrites files in place changes the
    folder's stat but not these."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                e.name + "/" if e.is_dir(follow_symlinks=False) else e.name
                for e in entries
                if e.name.endswith(PYTHON_SUFFIXES) or e.is_dir(follow_symlinks=False)
            )
    except OSError:
        return None
    return hashlib.blake2b("\0".join(names).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def _folder_stamp(folder: str) -> List[Any]:
    """A folder's stat, its `.gitignore`'s (the walk reads it; an edit in place does not
    change the folder's stat) and the digest of its entries (`_names`)."""
    return [_stat(folder), _stat(os.path.join(folder, ".gitignore")), _names(folder)]


def _same_file_set(folders: Dict[str, Any], trusted_before: int) -> Optional[Dict[str, Any]]:
    """The folders' stamps brought up to date if the walk would list the same files, else None.

    A folder whose stat is unchanged and old enough to trust is not read; one whose stat
    moved is listed again (one `scandir`) and compared by `_names`.  A changed `.gitignore`
    means walking again."""
    updated: Dict[str, Any] = {}
    for folder, stamp in folders.items():
        if not (isinstance(stamp, list) and len(stamp) == 3):
            return None
        stat, ignore = _stat(folder), _stat(os.path.join(folder, ".gitignore"))
        if ignore != stamp[1] or _racy(ignore, trusted_before):
            return None
        if stat == stamp[0] and not _racy(stat, trusted_before):
            updated[folder] = stamp
            continue
        names = _names(folder)
        if stat is None or names is None or names != stamp[2]:
            return None
        updated[folder] = [stat, ignore, names]
    return updated


# -- the index ----------------------------------------------------------------------------------
#
# The stored index is {"key": index_key(...), "built_ns": when the run that wrote it started,
# "folders": {folder: _folder_stamp(folder)}, "files": {path: [size, mtime_ns, ctime_ns, inode,
# blake2b-128 of the bytes]}, "resolved": [fingerprint, fingerprint of the resolved facts]}.
# Rows are lists, not objects, and the facts live in files of their own (`facts_folder`): a
# one-file run loads every row, and on vLLM (3,200 files) the JSON parse is a good part of it.


def project_classes(settings: Settings, checked: Sequence[str], cache_folder: Optional[Path],
                    walk: bool = True) -> Classes:
    """Classes with a `*_cpu` field anywhere in the project of the checked paths ({} if none)."""
    return project_index(settings, checked, cache_folder, walk)[0]


def project_index(settings: Settings, checked: Sequence[str], cache_folder: Optional[Path],
                  walk: bool = True) -> Tuple[Classes, Dict[str, "FileSummary"]]:
    """The project's `_cpu` field pairs and every file's summary, by absolute path ({} and {}
    outside a project)."""
    index = load_index(settings, checked, cache_folder, walk)
    return index.facts() if index is not None else ({}, {})


class RowsRead:
    """What `ProjectIndex._facts` has read of the rows so far, in the rows' order.

    Why a state of its own: on a cold scan the rows are read as the index workers build them
    (`pipeline.RowReader`, in the process that then resolves them), while the other core
    still builds, rather than all after the build; reading them one by one in the same order
    with the same `memo` gives the same summaries, classes and call sites."""

    def __init__(self) -> None:
        self.paths: List[str] = []
        self.classes: Dict[str, FrozenSet[str]] = {}
        self.summaries: Dict[str, FileSummary] = {}
        # Equal terms and names of all the summaries as one object each (`from_json`); let go
        # with the reading, before the summaries are resolved.
        self.memo: Dict[Any, Any] = {}
        # The call sites of the facts this run built, read last: only those of the names the
        # resolver may ask (`project.read_callees`, known once every summary is): most calls
        # are of library code, and building their sites was most of the reading's CPU.
        self.deferred: Dict[str, bytes] = {}
        # What a new snapshot would hold: the rows' decoded facts, read whole (not this run's
        # `fresh` rows: their call sites are only those the resolver asks now).
        self.complete: Dict[str, SnapshotEntry] = {}
        self.misses = 0
        self.used = 0


def read_row(read: RowsRead, path: str, row: List[Any], facts: Any, index_file: Optional[Path],
             snapshot: Mapping[str, SnapshotEntry]) -> None:
    """Read one row's facts into `read`: `facts` are this run's (`_packed_row`) or None (from
    the snapshot, else the facts file; a missing or corrupt one is built again from the file)."""
    read.paths.append(path)
    classes, summaries, memo = read.classes, read.summaries, read.memo
    fresh_here = facts is not None
    if facts is None:
        known = snapshot.get(path)
        if _usable(known, row[4]):
            assert known is not None
            _add_classes(classes, known[1])
            summaries[path] = known[2]
            read.complete[path] = known
            read.used += 1
            return
        read.misses += 1
    if isinstance(facts, list):  # `_packed_row`: the facts, and the call sites apart
        read.deferred[path] = facts[1]
        facts = pickle.loads(facts[0])
    if facts is None:
        facts = _read_facts(index_file, path, row[4])
    try:
        found = merge_facts(classes, summaries, path, facts, memo)
        if not fresh_here:
            read.complete[path] = (row[4], found, summaries[path])
        return
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):  # corrupt: read it again
        pass
    fresh = _fresh_row(path)
    if fresh is None:
        return
    merge_facts(classes, summaries, path, fresh[5], memo)
    if fresh[4] == row[4]:
        _write_facts(index_file, path, fresh[4], fresh[5])


class ProjectIndex:
    """The project's files as indexed, and what is known about the facts they resolve to.

    The index file holds one row per file (stat and hash); each file's facts are a JSON file
    of their own in `facts_folder`, named by the file's path and hash, read back (`facts`)
    only when a file must be analyzed.  A run whose findings all come from the cache needs
    only `fingerprint` and the fingerprint of the resolved facts remembered for it (`known`)
    to find its cache: on vLLM the facts are 34 MB of JSON, the rows 0.4 MB.
    """

    def __init__(self, rows: Dict[str, List[Any]], fresh: Dict[str, Any], index_file: Optional[Path],
                 stored: Dict[str, Any], resolved_from: Optional[Dict[str, Any]] = None) -> None:
        self.rows = rows
        self.fresh = fresh  # facts built by this run, by path (pickled: `_packed_row`)
        # The prefilter's verdicts on the files this run read (`file_facts`), by path.
        self.verdicts: Dict[str, TreeVerdict] = {}
        self.index_file = index_file
        self.stored = stored
        # The entries of a snapshot to write (`facts` found the stored one out of date).
        self.snapshot: Optional[Dict[str, SnapshotEntry]] = None
        # The digest of each file's facts this run built (`facts_digest`), by path.
        self.facts_digests: Dict[str, str] = {}
        # What the stored resolved facts were resolved from (`reused_facts`), once read: by
        # `load_index` when a file changed (its prune keeps their facts files), so a run read
        # the header (3,231 paths and digests on vLLM) once, not twice.
        self._resolved_from: Optional[Dict[str, Any]] = resolved_from
        # The rows already read by the process that resolves them (`RowsRead`), there only.
        self.read: Optional[RowsRead] = None
        # Set by `reused_facts` when it carried the stored facts to an edit's moved lines, and by
        # `carry_resolved` when a resolve gave the stored facts but for the edited files'
        # lines: the fingerprint of the facts before, and the names of
        # those files (`findings.evidence_file_name`); the findings cache takes over the old
        # key's entries that name none of them (`cache.Cache`).
        self.carried: Optional[Tuple[str, FrozenSet[str]]] = None
        # This run's facts, sent as they were built to the process that will resolve them
        # (`pipeline.RowReader`), if it was started; `pipeline.facts_from_index` uses it.
        self.reader: Optional[RowReader] = None
        digest = hashlib.blake2b(json.dumps(stored.get("key")).encode(), digest_size=16)
        for path in sorted(rows):
            digest.update(f"{path}\0{rows[path][4]}\0".encode("utf-8", "surrogateescape"))
        # The content of every file of the project (and the index's key): equal fingerprints,
        # equal facts.
        self.fingerprint = digest.hexdigest()
        memo = stored.get("resolved")
        self.known: Optional[str] = (
            memo[1] if isinstance(memo, list) and len(memo) == 2 and memo[0] == self.fingerprint
            and isinstance(memo[1], str) else None)

    def covers(self, path: str) -> bool:
        return os.path.abspath(path) in self.rows

    def facts(self) -> Tuple[Classes, Dict[str, "FileSummary"]]:
        """The `_cpu` field pairs and the summary of every file (a missing or corrupt facts
        file is built again from the file)."""
        from lint_h2d.pipeline import gc_paused

        with gc_paused():  # every summary stays alive: collections on the way find nothing
            return self._facts()

    def _facts(self) -> Tuple[Classes, Dict[str, "FileSummary"]]:
        # The rows read so far: none, or every row, read as the index was built
        # (`pipeline.RowReader`, in the process that resolves them).
        read = self.read if self.read is not None and self.read.paths == list(self.rows) else RowsRead()
        self.read = None
        # The decoded facts of the files whose bytes are unchanged, in one pickle (`_snapshot`);
        # what it lacks (or holds for other bytes) is read from the facts files.
        snapshot = _load_snapshot(self.index_file, self.stored.get("key"))
        for path, row in list(self.rows.items())[len(read.paths):]:
            read_row(read, path, row, self.fresh.get(path), self.index_file, snapshot)
        classes, summaries, memo, deferred = read.classes, read.summaries, read.memo, read.deferred
        complete, misses, used = read.complete, read.misses, read.used
        if misses + len(snapshot) - used > SNAPSHOT_SLACK:
            # Many rows read from the facts files, or many snapshot entries no row wants:
            # written by `save_snapshot`, once the facts are resolved.
            self.snapshot = complete
        if deferred:
            from lint_h2d.inference.project import read_callees
            from lint_h2d.inference.summary import calls_from_json

            callees = read_callees(summaries.values())
            for path, calls in deferred.items():
                summary = summaries.get(path)
                if summary is not None and not summary.calls:
                    summaries[path] = replace(summary, calls=calls_from_json(pickle.loads(calls), memo, callees))
        # The JSON facts cost more memory than the summaries; the analysis workers fork from
        # this process, so they are let go (a later call reads them back, or the files).
        self.fresh = {}
        return classes, summaries

    def save_snapshot(self) -> None:
        """Write the snapshot `facts` found out of date, if it did.

        Apart from `facts`, and called after the resolving: pickling holds a table of every
        object pickled, which on vLLM took the resolving child's peak from 161 to 283 MB when
        written while the JSON facts' garbage was still there; after the resolver's objects are
        gone it stays below the resolving's peak."""
        if self.snapshot is not None:
            _save_snapshot(self.index_file, self.stored.get("key"), self.snapshot)
            self.snapshot = None

    def reused_facts(self) -> Optional["ProjectFacts"]:
        """The project's facts as stored by the last run that resolved them, if every file's
        facts (summary and `_cpu` classes) are the same now as then; else None.

        Why: after an edit the whole project's facts were resolved again (8 s of CPU on vLLM)
        even where the edit changed no file's facts, e.g. one that keeps every line where it
        was and changes nothing a summary records.  The resolved facts are a function of the
        files' facts alone (`project.resolve` sorts them by path), so equal facts files,
        compared by digest (`facts_digest`), mean equal resolved facts.

        An edit that moved lines (almost every edit) changes its file's facts only in their
        line numbers: up to `MAX_MOVED_FILES` such files, each proven so against the facts it
        had when they were resolved (`_moved_lines`), and the stored facts are carried to the
        new lines (`moved_lines.remap_facts`: what resolving again would give) and stored
        again.  Anything else, or any doubt, is None: the caller resolves."""
        stored = self._stored_resolution()
        changed = self._edited_since(stored)
        if changed is None:
            return None
        current, edited = changed
        facts = _load_resolved(self.index_file, self.stored.get("key"), stored)
        if facts is None or not edited:
            return facts
        moves: Dict[str, FileMove] = {}
        kept = facts.module_facts.resolved.read_callees
        for path in edited:
            move = self._moved_lines(path, stored[path], kept)
            if move is None:
                return None
            moves[path] = move
        try:
            remapped = remap_facts(facts, moves)
        except Unmappable:
            return None
        if remapped.fingerprint != facts.fingerprint:
            self.carried = (facts.fingerprint, frozenset(m.short for m in moves.values() if m.moved()))
        facts = remapped
        # The next run compares its files with these: the old facts files are not needed.
        self._store_resolved(current, io.BytesIO(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)))
        return facts

    def _edited_since(self, stored: Mapping[str, Any]) -> Optional[Tuple[Dict[str, List[str]], List[str]]]:
        """Every file's [bytes digest, facts digest] now (`_facts_digests`) and the files whose
        facts differ from those the stored resolved facts were resolved from (`stored`), when
        the file set is the same and at most `MAX_MOVED_FILES` differ (the bytes may differ
        where the facts do not: an edit that changed no fact); else None."""
        if not stored:
            return None
        current = self._facts_digests(stored)
        if current is None or len(current) != len(stored):
            return None
        edited: List[str] = []
        for path, (_, digest) in current.items():
            known = stored.get(path)
            if not (isinstance(known, list) and len(known) == 2):
                return None
            if known[1] != digest:
                edited.append(path)
        return (current, edited) if len(edited) <= MAX_MOVED_FILES else None

    def _moved_lines(self, path: str, known: List[str], kept: AbstractSet[str]) -> Optional[FileMove]:
        """How an edit of `path` moved the lines of its facts, if it changed nothing else in
        them (`moved_lines.line_map`) but calls of names the resolve never reads (not in
        `kept`: `summary.without_calls`); else None.  `known`: [digest of its bytes, digest of
        its facts] when the stored facts were resolved; the facts file of those bytes is kept
        for this (`prune_facts`)."""
        from lint_h2d.inference.summary import without_calls

        row = self.rows[path]
        old = _read_facts(self.index_file, path, known[0], known[1])
        packed = self.fresh.get(path)
        new = unpacked_facts(packed) if isinstance(packed, list) else _read_facts(self.index_file, path, row[4])
        if not (isinstance(old, dict) and isinstance(new, dict)) or old.get("classes") != new.get("classes"):
            return None
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        if hashlib.blake2b(data, digest_size=16).hexdigest() != row[4]:
            return None  # written again since it was indexed
        try:
            shifted = shifted_summary(path, data)
            lines, texts = line_map(*(without_calls(summary, kept) for summary in (
                old["summary"], new["summary"], new["summary"] if shifted is None else shifted)))
        except (Unmappable, KeyError, TypeError, IndexError):
            return None
        return FileMove(path, lines, evidence_file_name(path), texts)

    def save_resolved(self, pickled: BinaryIO) -> None:
        """Store the pickled facts just resolved from these files (`reused_facts`), read from
        `pickled` as a stream, with the digest of every file's facts; nothing when one is not
        known (a facts file missing)."""
        current = self._facts_digests(self._stored_resolution())
        if current is not None:
            self._store_resolved(current, pickled)

    def previous_facts(self, held: Optional[BinaryIO] = None) -> Optional[Tuple["ProjectFacts", List[str]]]:
        """The stored resolved facts and the files whose facts changed since (1 to
        `MAX_MOVED_FILES` of them, no file added or removed), read before the project is
        resolved again (`carry_resolved`); else None.

        Read by the process that runs the analysis, after the resolving child was forked and
        while it resolves: that child's peak memory is the run's.  The child stores the facts
        it resolved in the same file, replacing it (atomically): read from `held`, the file
        as `hold_resolved` opened it before the fork, whichever process is first.  (Opened
        after, the child, when first, had replaced it, the header check failed, and the
        findings cache was not carried: a test failing on a busy machine.)"""
        stored = self._stored_resolution()
        changed = self._edited_since(stored)
        if changed is None or not changed[1]:
            return None
        edited = changed[1]
        with span("facts.previous"):
            old = _load_resolved(self.index_file, self.stored.get("key"), stored, held)
        return None if old is None else (old, edited)

    def hold_resolved(self) -> Optional[BinaryIO]:
        """The stored resolved facts' file, open (for `previous_facts`), or None if none."""
        if self.index_file is None:
            return None
        try:
            return open(resolved_path(self.index_file), "rb")
        except OSError:
            return None

    def carry_resolved(self, previous: Optional[Tuple["ProjectFacts", List[str]]], facts: "ProjectFacts") -> None:
        """Set `carried` when the facts just resolved are the `previous` ones but for the
        edited files' lines (`moved_lines.same_but_lines`): a call added of a function the
        project does not define changes a summary, not what the resolve gives."""
        from lint_h2d.moved_lines import same_but_lines

        if previous is None:
            return
        old, edited = previous
        if old.fingerprint == facts.fingerprint:
            return
        with span("facts.compare"):
            if same_but_lines(old, facts, edited):
                self.carried = (old.fingerprint, frozenset(evidence_file_name(path) for path in edited))

    def _store_resolved(self, files: Mapping[str, Any], pickled: BinaryIO) -> None:
        """Write the resolved facts with the digests of the files they come from, then delete
        the facts files kept for the ones stored before (`prune_facts`)."""
        _save_resolved(self.index_file, self.stored.get("key"), files, pickled)
        if self.index_file is not None:
            prune_facts(self.index_file, self.rows, files)

    def _stored_resolution(self) -> Dict[str, Any]:
        """The file digests the stored resolved facts were resolved from ({} if none)."""
        if self._resolved_from is None:
            self._resolved_from = _load_resolved_files(self.index_file, self.stored.get("key"))
        return self._resolved_from

    def _facts_digests(self, stored: Mapping[str, Any]) -> Optional[Dict[str, List[str]]]:
        """[bytes digest, facts digest] of every row, by path, or None when one is not
        known.  A file's facts are this run's if it built them, else the stored digest's when
        the file's bytes are the same (facts are a function of the bytes under the index's
        key), else the digest of its facts file."""
        out: Dict[str, List[str]] = {}
        for path, row in self.rows.items():
            digest = self.facts_digests.get(path)
            if digest is None:
                known = stored.get(path)
                if isinstance(known, list) and len(known) == 2 and known[0] == row[4]:
                    digest = known[1]
                else:
                    digest = _stored_facts_digest(self.index_file, path, row[4])
            if not isinstance(digest, str):
                return None
            out[path] = [row[4], digest]
        return out

    def remember(self, facts_fingerprint: str) -> None:
        """Keep the resolved facts' fingerprint for this file set: the next run with the same
        files finds its cache without resolving anything."""
        if self.known == facts_fingerprint:
            return
        self.known = facts_fingerprint
        self.stored["resolved"] = [self.fingerprint, facts_fingerprint]
        if self.index_file is not None and self.stored:
            save_json(self.index_file, self.stored)


# -- the snapshot: every row's decoded facts in one pickle -------------------------------------
#
# A run after an edit needs the summary of every file of the project, and reading 3,200 JSON
# facts files back (`json.loads` and `summary.from_json`) cost it 2.2 s on vLLM; one pickle of
# the decoded summaries loads in a third of that.  The snapshot is only a faster copy of the
# facts files: an entry is used only for a row whose bytes have its digest, under the index's
# own key (format, tool build, settings); anything unreadable, foreign or malformed is ignored
# and the facts files are read instead.  It is rewritten when more than `SNAPSHOT_SLACK` rows
# had to be read from the facts files (or that many entries are no longer wanted), so an edit
# or two costs a few JSON reads, not a rewrite of the whole snapshot per run.

SNAPSHOT_FORMAT = 1
SNAPSHOT_SLACK = 32
# Entries per pickle of the snapshot (a header, then pickles of this many entries each): a
# pickler keeps a table of every object it wrote, and one pickle of vLLM's 3,227 summaries
# took the resolving child's peak from 220 to 257 MB; parts share fewer equal terms, a little
# more memory once loaded.
SNAPSHOT_PART = 400
# (digest of the file's bytes, its `_cpu` classes, its summary)
SnapshotEntry = Tuple[str, Dict[str, FrozenSet[str]], "FileSummary"]


def snapshot_path(index_file: Path) -> Path:
    """Named like the index's temp files, so the findings cache's prune leaves it alone and
    removes a killed run's temp file of it (`cache._TEMP_FILE`)."""
    return index_file.with_name(index_file.stem + "-snapshot.pickle")


def _load_snapshot(index_file: Optional[Path], key: Any) -> Dict[str, SnapshotEntry]:
    """The snapshot's entries by path, if it was written under `key`; else {} (missing,
    corrupt, another build's)."""
    if index_file is None or key is None:
        return {}
    entries: Dict[str, SnapshotEntry] = {}
    try:
        with open(snapshot_path(index_file), "rb") as handle:
            head = _snapshot_unpickler(handle).load()
            if not (isinstance(head, dict) and head.get("format") == SNAPSHOT_FORMAT and head.get("key") == key
                    and isinstance(head.get("parts"), int)):
                return {}
            for _ in range(head["parts"]):
                entries.update(_snapshot_unpickler(handle).load())
    except Exception:  # noqa: BLE001 - a truncated or foreign pickle raises anything
        return {}
    return entries


def _usable(entry: Any, digest: str) -> bool:
    """A snapshot entry of the row's bytes, of the expected shape (else the facts file is read)."""
    from lint_h2d.inference.summary import FileSummary

    return (isinstance(entry, tuple) and len(entry) == 3 and entry[0] == digest
            and isinstance(entry[1], dict) and isinstance(entry[2], FileSummary))


def _save_snapshot(index_file: Optional[Path], key: Any, entries: Mapping[str, SnapshotEntry]) -> None:
    """Write the snapshot atomically (failing only makes a later run slower)."""
    if index_file is None or key is None:
        return
    paths = list(entries)
    parts = [paths[i:i + SNAPSHOT_PART] for i in range(0, len(paths), SNAPSHOT_PART)]

    def write(handle: BinaryIO) -> None:
        pickle.dump({"format": SNAPSHOT_FORMAT, "key": key, "parts": len(parts)}, handle)
        for part in parts:
            _SnapshotPickler(handle, protocol=pickle.HIGHEST_PROTOCOL).dump({p: entries[p] for p in part})

    _write_atomically(snapshot_path(index_file), write)


class _SnapshotPickler(pickle.Pickler):
    """Pickles the summaries' dataclasses as a call of their constructor with their fields.

    Why: unpickled the default way (`object.__new__`, then the saved `__dict__` set into it),
    each instance got a full dict of its own instead of the compact one its `__init__` makes:
    vLLM's 210,000 call sites and functions cost the resolving child 170 MB instead of 114 MB
    (the JSON facts decoded: 85 MB; what is left is mostly line numbers, which a pickle never
    shares), and loading took 0.78 s instead of 0.41 s."""

    def reducer_override(self, obj: Any) -> Any:
        fields = _summary_fields().get(type(obj))
        if fields is None:
            return NotImplemented
        return type(obj), tuple(getattr(obj, name) for name in fields)


class _RestrictedUnpickler(pickle.Unpickler):
    """Loads a pickle from the cache folder, constructing nothing but the classes it is given
    (a snapshot: the summaries' dataclasses; the resolved facts: their own classes).

    Why: a pickle can name any callable, and the cache folder is not a trusted place (CI
    restores it from a cache that another branch's job may have written; anyone who can write
    to it would otherwise run code in every later lint-h2d run).  What lint-h2d writes there
    needs only those classes (and containers, which pickle builds without a global); any other
    global makes the file unreadable, and its caller falls back to what it would do without
    it (the facts files are read, the project is resolved)."""

    def __init__(self, handle: BinaryIO, allowed: Iterable[type], what: str) -> None:
        super().__init__(handle)
        self._allowed = {(cls.__module__, cls.__qualname__): cls for cls in allowed}
        self._what = what

    def find_class(self, module: str, name: str) -> Any:
        cls = self._allowed.get((module, name))
        if cls is None:
            raise pickle.UnpicklingError(f"{self._what} names {module}.{name}, which it may not construct")
        return cls


def _snapshot_unpickler(handle: BinaryIO) -> _RestrictedUnpickler:
    return _RestrictedUnpickler(handle, _summary_fields(), "snapshot")


@lru_cache(maxsize=1)
def _summary_fields() -> Dict[type, Tuple[str, ...]]:
    """The summary dataclasses and their fields in constructor order (every one is `init`)."""
    from dataclasses import fields

    from lint_h2d.inference import summary

    return {cls: tuple(f.name for f in fields(cls) if f.init)
            for cls in (summary.FileSummary, summary.ClassSummary, summary.FunctionSummary, summary.CallSite,
                        summary.DeviceContext, summary.ModuleMove, summary.ObjectStore)}


# -- the resolved facts: reused while no file's facts changed ---------------------------------
#
# `project-index-<hash>-resolved.pickle`: a header {"format", "key": the index's key, "files":
# {path: [digest of its bytes, digest of its facts]}}, then the pickled `ProjectFacts` as the
# resolving child sent them.  Used only under the same key and when every file's facts have
# the same digest (`ProjectIndex.reused_facts`); loaded by an unpickler that constructs only
# the resolved facts' own classes (the snapshot's reason: the cache folder is not trusted);
# anything else is ignored and the facts are resolved again.

# 2: `Resolved.site_words` (which file each `name.py:N` of the evidence names); 3: `ModuleFacts`
# pickled from `inference.resolved` (it was `inference.scope`'s); 4: `Resolved.read_callees` (the
# names whose calls an edit may not add or remove without a resolve); 5: `Resolved.params` keys a
# method's parameters by its class (`resolved.param_key`); 6: a resolved `Value.integer` may be
# `values.NON_INTEGER` (a floating or boolean dtype known); 7: `Resolved.through` (functions whose
# return keeps a parameter's place); 8: a function several modules define keeps its parameters'
# values under `module:name` (`Resolved.param`: each module's own calls only); 9: `Resolved.enums`
# (the project's enumerations of numbers: `project.enum_kind`); 10: a static method's parameters
# are keyed by its class too (`resolved.param_key`: only `Cls.f(...)` / `x.f(...)` run it); 11:
# `Resolved.reexports` (what each module re-exports, for `Resolved.constant`); 12: `Resolved.params`
# says where no call passes a defaulted device parameter (`values.DEFAULT_ONLY_STEP`); 13: no
# `Resolved.uncalled` / `Resolved.passed_through` (the uncalled-function exception is gone); 14:
# a tensor `__init__` allocates without `device=`, off any device context, carries
# `resolved.HOST_DEFAULT_STEP` (into fields and parameters); 15: not into a buffer or parameter
# (`register_buffer`, `nn.Parameter`: it moves with its module); 16: a tensor a method assigns to
# a registered buffer's name is that buffer still (`_Resolver.in_methods`); 17: `Resolved.passed_numbers`
# is `Resolved.passed_given` and holds device tensors too (`weight=None` every passing call fills).
RESOLVED_FORMAT = 17
# More edited files than this: resolve the project rather than map each one's lines.
MAX_MOVED_FILES = 16


def resolved_path(index_file: Path) -> Path:
    """Named like the index's temp files (see `snapshot_path`)."""
    return index_file.with_name(index_file.stem + "-resolved.pickle")


def _resolved_files(head: Any, key: Any) -> Optional[Dict[str, Any]]:
    """The file digests of a resolved-facts header written under `key` in this format; else
    None."""
    if isinstance(head, dict) and head.get("format") == RESOLVED_FORMAT and head.get("key") == key \
            and isinstance(head.get("files"), dict):
        return head["files"]  # type: ignore[no-any-return]
    return None


def _load_resolved_files(index_file: Optional[Path], key: Any) -> Dict[str, Any]:
    """The header's file digests, if written under `key`; else {}."""
    if index_file is None or key is None:
        return {}
    try:
        with open(resolved_path(index_file), "rb") as handle:
            head = _resolved_unpickler(handle).load()
    except Exception:  # noqa: BLE001 - a truncated or foreign pickle raises anything
        return {}
    return _resolved_files(head, key) or {}


def _load_resolved(index_file: Optional[Path], key: Any, files: Mapping[str, Any],
                   held: Optional[BinaryIO] = None) -> Optional["ProjectFacts"]:
    """The stored facts, if the file still holds them for `key` and `files` (a concurrent
    run may have replaced it since its header was read); else None.  Read from `held` (at
    its start) when given: the file as it was when opened."""
    from lint_h2d.inference.project import ProjectFacts

    if index_file is None:
        return None
    try:
        with (open(resolved_path(index_file), "rb") if held is None else nullcontext(held)) as handle:
            handle.seek(0)
            if _resolved_files(_resolved_unpickler(handle).load(), key) != files:
                return None
            facts = _resolved_unpickler(handle).load()
    except Exception:  # noqa: BLE001 - a truncated or foreign pickle raises anything
        return None
    return facts if isinstance(facts, ProjectFacts) else None


def _save_resolved(index_file: Optional[Path], key: Any, files: Mapping[str, Any], pickled: BinaryIO) -> None:
    """Write the header and the pickled facts (copied from `pickled`, a stream) atomically
    (failing only makes a later run slower)."""
    if index_file is None or key is None:
        return
    def write(handle: BinaryIO) -> None:
        pickle.dump({"format": RESOLVED_FORMAT, "key": key, "files": dict(files)}, handle,
                    protocol=pickle.HIGHEST_PROTOCOL)
        shutil.copyfileobj(pickled, handle)

    _write_atomically(resolved_path(index_file), write)


def _resolved_unpickler(handle: BinaryIO) -> _RestrictedUnpickler:
    """Constructs nothing but the classes the resolved facts are made of (`_resolved_classes`)."""
    return _RestrictedUnpickler(handle, _resolved_classes(), "resolved facts")


@lru_cache(maxsize=1)
def _resolved_classes() -> Tuple[type, ...]:
    """`ProjectFacts` and the classes of what it holds: frozen dataclasses of data, and the
    enums of their fields."""
    from lint_h2d.findings import EvidenceKind, EvidenceStep
    from lint_h2d.inference.project import ProjectFacts
    from lint_h2d.inference.resolved import Resolved
    from lint_h2d.inference.resolved import ModuleFacts
    from lint_h2d.inference.values import HostMemory, Kind, Origin, Value

    return (ProjectFacts, ModuleFacts, Resolved, Value, HostMemory, Kind, Origin, EvidenceStep, EvidenceKind)


def facts_folder(index_file: Path) -> Path:
    return index_file.with_name(index_file.stem + "-facts")


def _facts_file(index_file: Path, path: str, digest: str) -> Path:
    return facts_folder(index_file) / _facts_name(path, digest)


def _facts_name(path: str, digest: str) -> str:
    """The name of the facts file of `path` with these bytes in `facts_folder`.  A string, not
    a `Path`: `prune_facts` names every row's (6,500 on vLLM, twice in an edited file's run),
    and building a `Path` for each cost more than the rest of the prune."""
    return hashlib.blake2b(f"{path}\0{digest}".encode("utf-8", "surrogateescape"), digest_size=16).hexdigest() + ".json"


def prune_facts(index_file: Path, rows: Mapping[str, Sequence[Any]],
                resolved_from: Optional[Mapping[str, Any]] = None) -> None:
    """Delete the facts files that no row of the index names (earlier contents of its files,
    files since removed) and temp files left by a killed run: without this the folder grew by
    a file per edit of every file, for as long as the cache folder lived.  Kept too: those of
    the contents the stored resolved facts were resolved from (`resolved_from`: the header's
    files), which tell how an edit moved a file's lines (`ProjectIndex._moved_lines`).

    A concurrent run that still wanted a deleted file finds it missing and builds the facts
    again from the file (`ProjectIndex.facts`): slower, never wrong."""
    folder = facts_folder(index_file)
    wanted = {_facts_name(path, row[4]) for path, row in rows.items() if len(row) > 4}
    wanted.update(_facts_name(path, known[0]) for path, known in (resolved_from or {}).items()
                  if isinstance(path, str) and isinstance(known, list) and known and isinstance(known[0], str))
    stale_before = time.time() - STALE_TEMP_S
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name in wanted:
            continue
        target = folder / name
        try:  # only our names (`_facts_file`, `_write_facts`' temp files)
            if _FACTS_NAME.fullmatch(name) or (_FACTS_TEMP.fullmatch(name) and target.stat().st_mtime < stale_before):
                target.unlink()
        except OSError:
            pass


_FACTS_NAME = re.compile(r"[0-9a-f]{32}\.json")  # `_facts_file`
_FACTS_TEMP_PREFIX = ".facts-"  # `_write_facts`' temp files
_FACTS_TEMP = re.compile(re.escape(_FACTS_TEMP_PREFIX) + r"[^/\\]+\.tmp")


def _read_facts(index_file: Optional[Path], path: str, digest: str, checked: Optional[str] = None) -> Any:
    """The stored facts of `path` with these bytes, or None (missing or unreadable; with
    `checked`, also when the file's digest, `facts_digest`, is not it)."""
    if index_file is None:
        return None
    try:
        data = _facts_file(index_file, path, digest).read_bytes()
        if checked is not None and facts_digest(data) != checked:
            return None
        return json.loads(data)
    except (OSError, ValueError):
        return None


def _write_facts(index_file: Optional[Path], path: str, digest: str, facts: Any) -> Optional[str]:
    """Store one file's facts atomically (failing only makes a later run slower), and return
    their digest (`facts_digest` of the text written; None without an index file)."""
    if index_file is None:
        return None
    text = json.dumps(facts)
    data = text.encode("utf-8")  # (ASCII: `json.dumps` escapes the rest)
    _write_atomically(_facts_file(index_file, path, digest), lambda handle: handle.write(data),
                      prefix=_FACTS_TEMP_PREFIX, make_folder=True)
    return facts_digest(text.encode("utf-8", "surrogateescape"))


def _write_atomically(target: Path, write: Callable[[BinaryIO], object], prefix: Optional[str] = None,
                      make_folder: bool = False) -> None:
    """Write a file of the cache folder atomically: `write` fills a temp file beside `target`
    (named `prefix`..., by default like the index's temp files, which the cache's prune
    removes when a killed run leaves one), then `os.replace`.  Failing only makes a later run
    slower: the snapshot, the resolved facts and the facts files are all rebuilt from the
    project's files."""
    try:
        if make_folder:
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=prefix or f".{target.stem}-", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, target)
    except OSError:
        pass


def facts_digest(data: bytes) -> str:
    """The digest of one file's facts as their facts file holds them (JSON text): equal
    digests, equal summaries and classes (`reused_facts`)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _stored_facts_digest(index_file: Optional[Path], path: str, digest: str) -> Optional[str]:
    """`facts_digest` of the facts file of `path` with these bytes (None when missing)."""
    if index_file is None:
        return None
    try:
        return facts_digest(_facts_file(index_file, path, digest).read_bytes())
    except OSError:
        return None


def load_index(settings: Settings, checked: Sequence[str], cache_folder: Optional[Path],
               walk: bool = True, realpaths: Optional[Dict[str, str]] = None) -> Optional[ProjectIndex]:
    """The index of the project of the checked paths, brought up to date (None outside a
    project).

    With `walk=False` (a run that names files, as pre-commit does) the index's file list is
    reused while no walked folder changed: walking the project costs more than the whole check
    of one file, stat'ing its folders a few milliseconds.  `realpaths`: see `covers`.
    """
    root = settings.root
    if not checked or not is_project_root(root) or not covers(root, checked, realpaths):
        return None
    started = time.time_ns()
    index_file = index_path(cache_folder, root) if cache_folder is not None else None
    key = index_key(settings)
    old = _load(index_file, key)
    old_files: Dict[str, Any] = old.get("files", {})
    trusted_before = old.get("built_ns", 0) - RACY_NS
    same = None if walk or not old else _same_file_set(old.get("folders", {}), trusted_before)
    if same is None:
        listed: List[str] = []
        found, _ = discover([str(root)], settings, listed)
        files = [os.path.abspath(f) for f in found]
        # The cache folder may lie in the project and be walked (its `.gitignore` hides its
        # files): our own writes there must not look like a change of the file set.
        mine = os.path.abspath(cache_folder) if cache_folder is not None else None
        folders = {os.path.abspath(f): _folder_stamp(f) for f in listed
                   if mine is None or not _inside(os.path.abspath(f), mine)}
    else:
        files, folders = list(old_files), same
    if len(files) > MAX_FILES:
        return None
    new: Dict[str, List[Any]] = {}
    changed = folders != old.get("folders") or len(files) != len(old_files)
    unread: List[str] = []
    for path in files:
        old_row = old_files.get(path)
        row = _row(path, old_row, trusted_before, build=False)
        if row is None:
            changed = True
        elif len(row) > 5:  # new bytes: their facts are built below, in workers if many
            unread.append(path)
        else:
            changed = changed or row is not old_row
            new[path] = row
    # The files this run analyzes get the prefilter's verdict too (`file_facts`).
    checked_files = {os.path.abspath(c) for c in checked} if unread else set()
    capture = tuple(settings.capture_functions)
    # Every row new (a cold scan): they may be read as they are built (`pipeline.RowReader`).
    built, fresh, verdicts, digests, reader = _build(
        [(p, capture if p in checked_files else None) for p in unread], index_file, stream=not new)
    new.update(built)
    changed = changed or bool(unread)
    stored = {"key": key, "built_ns": started, "folders": folders, "files": new}
    if isinstance(old.get("resolved"), list):  # still valid if the fingerprint is the same
        stored["resolved"] = old["resolved"]
    resolved_from = None
    if index_file is not None and changed:
        save_json(index_file, stored)
        resolved_from = _load_resolved_files(index_file, key)
        prune_facts(index_file, new, resolved_from)
    index = ProjectIndex(new, fresh, index_file, stored, resolved_from)
    index.verdicts = verdicts
    index.facts_digests = digests
    index.reader = reader
    return index


def memory_index(paths: Sequence[str], capture_functions: Sequence[str]) -> ProjectIndex:
    """An index of just these files (absolute paths, in the run's order), kept in memory: what
    a run outside a project knows (the files checked together), built and resolved the way a
    project's index is.

    Why: the facts are built by workers that read the files themselves and hand back pickled
    JSON facts, and `pipeline.facts_from_index` resolves them in a child process, so the
    process the analysis workers fork from never holds the texts, the summaries nor the
    resolver's objects.  Built with `pipeline.project_facts` instead, vLLM's 3,227 files
    outside a project peaked at 391 MB (the resolving pool worker) against 234 MB inside one.
    Every file is checked, so every row carries the prefilter's verdict (`file_facts`)."""
    capture = tuple(capture_functions)
    rows, fresh, verdicts, _, reader = _build([(path, capture) for path in dict.fromkeys(paths)], None, stream=True)
    index = ProjectIndex(rows, fresh, None, {})
    index.verdicts = verdicts
    index.reader = reader
    return index


# Below this many files to read, building their facts in the main process is cheaper than
# starting workers.
PARALLEL_FACTS = 64


def _build(jobs: Sequence[Tuple[str, Optional[Tuple[str, ...]]]], index_file: Optional[Path], stream: bool = False,
           ) -> Tuple[Dict[str, List[Any]], Dict[str, Any], Dict[str, TreeVerdict], Dict[str, str], Optional["RowReader"]]:
    """The rows, packed facts (`_packed_row`) and prefilter verdicts of the files of `jobs`
    (see `_built_rows`), the facts also written beside `index_file` when there is one (with
    the digest of each file's facts written: `facts_digest`).  A file that cannot be read has
    none of them: its analysis reports why.

    With `stream` (the jobs are every row of the index) and workers building the rows, the
    process that will resolve them is started first and reads each row as it comes
    (`pipeline.RowReader`, returned): on the core the build leaves idle at its end."""
    with span("index.build"):
        return _build_rows(jobs, index_file, stream)


def _build_rows(jobs: Sequence[Tuple[str, Optional[Tuple[str, ...]]]], index_file: Optional[Path], stream: bool,
                ) -> Tuple[Dict[str, List[Any]], Dict[str, Any], Dict[str, TreeVerdict], Dict[str, str], Optional["RowReader"]]:
    """`_build`, untimed."""
    rows: Dict[str, List[Any]] = {}
    fresh: Dict[str, Any] = {}
    verdicts: Dict[str, TreeVerdict] = {}
    digests: Dict[str, str] = {}
    reader: Optional[RowReader] = None
    if stream and _in_workers(jobs):
        from lint_h2d.pipeline import RowReader, preload_for_workers

        preload_for_workers()
        reader = RowReader.start(index_file)
    for path, built in _built_rows(jobs):
        if built is None:
            continue
        rows[path], fresh[path] = built[:5], built[5]
        if reader is not None:
            reader.send(path, rows[path], fresh[path])
        if len(built) > 6:
            verdicts[path] = built[6]
        if index_file is not None:
            written = _write_facts(index_file, path, built[4], unpacked_facts(built[5]))
            if written is not None:
                digests[path] = written
    if reader is not None:
        reader.built()
    return rows, fresh, verdicts, digests, reader


def _in_workers(jobs: Sequence[Any]) -> bool:
    """Whether `_built_rows` builds these rows in worker processes."""
    from lint_h2d.pipeline import default_jobs

    return default_jobs() > 1 and len(jobs) >= PARALLEL_FACTS


def _built_rows(jobs: Sequence[Tuple[str, Optional[Tuple[str, ...]]]]) -> Iterator[Tuple[str, Optional[List[Any]]]]:
    """Rows with facts for files whose bytes are new, in worker processes when there are
    many (each worker reads its files: paths travel, not texts), in the jobs' order as they
    come.  A job is a path and, for a file the run analyzes, the settings' capture
    functions: its row also carries the prefilter's verdict on it (`_row`)."""
    paths = [path for path, _ in jobs]
    if _in_workers(jobs):
        from concurrent.futures import ProcessPoolExecutor

        from lint_h2d.pipeline import default_jobs, preload_for_workers

        preload_for_workers()
        with ProcessPoolExecutor(max_workers=default_jobs()) as pool:
            yield from zip(paths, pool.map(_packed_row, paths, [c for _, c in jobs], chunksize=16))
        return
    for path, capture in jobs:
        yield path, _packed_row(path, capture)


def _packed_row(path: str, capture_functions: Optional[Tuple[str, ...]] = None) -> Optional[List[Any]]:
    """`_fresh_row` with its facts pickled: as bytes they cost this process (and every worker
    forked from it) a tenth of the memory of the JSON-able objects, until resolved.  Two
    pickles, the summary's call sites apart (`[facts without them, call sites]`): `facts`
    reads every other part first, then only the sites the resolver may ask for."""
    with span("row"):
        row = _fresh_row(path, capture_functions)
    if row is not None and len(row) > 5:
        facts = row[5]
        summary = dict(facts["summary"])
        calls = summary.pop("calls", [])
        row[5] = [pickle.dumps({**facts, "summary": summary}, protocol=pickle.HIGHEST_PROTOCOL),
                  pickle.dumps(calls, protocol=pickle.HIGHEST_PROTOCOL)]
    return row


def unpacked_facts(packed: List[bytes]) -> Dict[str, Any]:
    """The facts `_packed_row` packed, whole again (as `file_facts` gave them)."""
    facts: Dict[str, Any] = pickle.loads(packed[0])
    facts["summary"]["calls"] = pickle.loads(packed[1])
    return facts


def _fresh_row(path: str, capture_functions: Optional[Tuple[str, ...]] = None) -> Optional[List[Any]]:
    return _row(path, None, 0, capture_functions=capture_functions)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _row(path: str, old: Any, trusted_before: int, build: bool = True,
         capture_functions: Optional[Tuple[str, ...]] = None) -> Optional[List[Any]]:
    """The index row of `path`: [size, mtime_ns, ctime_ns, inode, blake2b] (None if it cannot
    be read).

    The old row itself is returned when its stat matches and is old enough to trust; a row
    with the new stat when the bytes are the same (a `touch`: the stored facts hold); else a
    row with a sixth element, the facts built from the bytes (None when not `build`: the
    caller builds them, perhaps in a worker), and with `capture_functions` a seventh when the
    file parses: the prefilter's verdict on it (`file_facts`)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stat = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    valid = isinstance(old, list) and len(old) == 5 and isinstance(old[4], str)
    if valid and old[:4] == stat and max(stat[1], stat[2]) < trusted_before:
        return old  # type: ignore[no-any-return]
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if valid and old[4] == digest:
        return [*stat, digest]  # the stored facts still hold
    if not build:
        return [*stat, digest, None]
    if capture_functions is None:
        return [*stat, digest, file_facts(path, data)]
    verdicts: List[TreeVerdict] = []
    facts = file_facts(path, data, verdicts, capture_functions)
    return [*stat, digest, facts, *verdicts]  # a seventh element: the prefilter's verdict


def _load(index_file: Optional[Path], key: Dict[str, Any]) -> Dict[str, Any]:
    """The stored index if it was built under `key`, else {} (missing, corrupt, foreign)."""
    if index_file is None:
        return {}
    try:
        data = json.loads(index_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if (not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("files"), dict)
            or not isinstance(data.get("folders"), dict) or not isinstance(data.get("built_ns"), int)):
        return {}
    return data
