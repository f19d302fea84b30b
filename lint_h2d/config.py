"""`[tool.lint-h2d]` in pyproject.toml: discovery, defaults and validation with clear errors."""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from lint_h2d.capture import DEFAULT_CAPTURE_FUNCTIONS

if TYPE_CHECKING:  # fixers.platform_gate imports LibCST: only a fix needs a gate
    from fixers.platform_gate import Gate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

DEFAULT_EXCLUDE: Tuple[str, ...] = (
    # tests
    "tests/", "test_*.py", "*_test.py", "conftest.py",
    # build, caches and virtual environments
    ".git/", ".hg/", ".svn/", ".venv/", "venv/", ".env/", "env/", ".tox/", ".nox/",
    "build/", "dist/", "__pycache__/", "*.egg-info/", ".eggs/", "node_modules/",
    "site-packages/", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".lint_h2d_cache/",
)
GATE_NAMES = ("auto", "vllm", "torch-hip", "none")
# Context managers inside which a project allows host-device syncs (vLLM's own).
DEFAULT_SYNC_ALLOWED: Tuple[str, ...] = ("gpu_sync_allowed",)
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# A module-level import of vLLM that always runs: at column 0, so under no `if`, `try` or `def`.
# (`if is_vllm_available(): from vllm ...` says vLLM may be absent: a fix that imports
# `vllm.platforms` at module level would make such a module fail to import without it.)
_VLLM_IMPORT = re.compile(r"^(?:from|import)[ \t]+vllm\b", re.M)


class ConfigError(Exception):
    """A bad configuration: the CLI prints it and exits 2."""


@dataclass(frozen=True)
class Settings:
    root: Path = field(default_factory=Path.cwd)
    config_path: Optional[Path] = None
    select: Tuple[str, ...] = ("H2D",)
    ignore: Tuple[str, ...] = ()
    include: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    capture_functions: Tuple[str, ...] = DEFAULT_CAPTURE_FUNCTIONS
    fix_gate: str = "auto"
    custom_gate: Optional[Gate] = None
    cache_dir: Optional[str] = None
    respect_gitignore: bool = True
    # Apply excludes to files named on the command line too (for pre-commit, as in ruff).
    force_exclude: bool = False
    # Name or attribute globs (`logits`, `*.gpu_buf`) the project asserts are device / CPU
    # tensors; a finding that rests on one says so.
    device_hints: Tuple[str, ...] = ()
    cpu_hints: Tuple[str, ...] = ()
    # Context managers (bare or dotted callee names) whose `with` block the project declares
    # sync-allowed: a write there is still reported, but gets no fix.
    sync_allowed: Tuple[str, ...] = DEFAULT_SYNC_ALLOWED

    def gate_for(self, path: str, text: str) -> Optional[Gate]:
        """The platform gate a fix is wrapped in; None means the bare device form."""
        from fixers.platform_gate import TORCH_HIP_GATE, VLLM_GATE

        if self.custom_gate is not None:
            return self.custom_gate
        if self.fix_gate == "none":
            return None
        if self.fix_gate == "vllm":
            return VLLM_GATE
        if self.fix_gate == "torch-hip":
            return TORCH_HIP_GATE
        # auto: vLLM's gate where the file imports vLLM unconditionally at module level, or the
        # file belongs to vLLM itself (the project's own package name).  A folder named `vllm`
        # above an unrelated project proves nothing, and neither does an import under an `if`,
        # a `try` or a `def` (vLLM may be absent where the file runs: `torch.version.hip` then).
        if _VLLM_IMPORT.search(text) or (_project_package(self.root) == "vllm" and _inside(path, self.root)):
            return VLLM_GATE
        return TORCH_HIP_GATE

    def fingerprint(self) -> str:
        """What changes findings: part of the cache key."""
        return repr(
            (str(self.root), self.select, self.ignore, self.per_file_ignores,
             self.capture_functions, self.fix_gate, self.custom_gate, self.device_hints,
             self.cpu_hints, self.sync_allowed)
        )


@lru_cache(maxsize=64)
def _project_package(root: Path) -> Optional[str]:
    """The project's distribution name from `pyproject.toml` (`[project] name`), normalised."""
    try:
        with open(root / "pyproject.toml", "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return None
    name = data.get("project", {}).get("name") if isinstance(data.get("project"), dict) else None
    return re.sub(r"[-_.]+", "_", name).lower() if isinstance(name, str) else None


def _inside(path: str, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def _strings(value: Any, key: str, path: Path) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.lint-h2d] `{key}` must be a list of strings")
    return tuple(value)


def _string(value: Any, key: str, path: Path) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{path}: [tool.lint-h2d] `{key}` must be a string")
    return value


def _gate(value: Any, path: Path) -> Tuple[str, Optional[Gate]]:
    if isinstance(value, str):
        if value not in GATE_NAMES:
            raise ConfigError(
                f"{path}: [tool.lint-h2d] `fix-gate` must be one of {', '.join(GATE_NAMES)} "
                f"or a table {{test = \"...\", import = \"...\"}}; got {value!r}"
            )
        return value, None
    if isinstance(value, dict):
        unknown = set(value) - {"test", "import"}
        if unknown:
            raise ConfigError(
                f"{path}: [tool.lint-h2d.fix-gate] unknown key `{sorted(unknown)[0]}` "
                "(expected `test` and `import`)"
            )
        test = value.get("test")
        if not isinstance(test, str) or not test.strip():
            raise ConfigError(f"{path}: [tool.lint-h2d.fix-gate] `test` must be a non-empty string")
        import_line = value.get("import")
        if import_line is not None and not isinstance(import_line, str):
            raise ConfigError(f"{path}: [tool.lint-h2d.fix-gate] `import` must be a string")
        return "custom", _custom_gate(test, import_line or None, path)
    raise ConfigError(f"{path}: [tool.lint-h2d] `fix-gate` must be a string or a table")


def _custom_gate(test: str, import_line: Optional[str], path: Path) -> Gate:
    """A configured gate, checked now: a bad one is a config error (exit 2), never a traceback
    later, and never an import that would break every fixed file (`from x import *`)."""
    import libcst as cst

    from fixers.platform_gate import Gate

    try:
        cst.parse_expression(test)
    except Exception as exc:  # libcst raises ParserSyntaxError
        raise ConfigError(
            f"{path}: [tool.lint-h2d.fix-gate] `test` is not a Python expression: {exc}".splitlines()[0]
        ) from None
    try:
        gate = Gate(test, import_line)
    except ValueError as exc:
        raise ConfigError(f"{path}: [tool.lint-h2d.fix-gate] `import`: {exc}".splitlines()[0]) from None
    if import_line is not None:
        statement = cst.parse_statement(import_line)
        node = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            raise ConfigError(
                f"{path}: [tool.lint-h2d.fix-gate] `import` must name what it imports, "
                f"not `*`; got {import_line!r}"
            )
    return gate


def _dotted_names(value: Any, key: str, path: Path) -> Tuple[str, ...]:
    """A list of callee names (`gpu_sync_allowed`, `vllm.utils.gpu_sync_debug.gpu_sync_allowed`)."""
    names = _strings(value, key, path)
    for name in names:
        if not _DOTTED.fullmatch(name):
            raise ConfigError(
                f"{path}: [tool.lint-h2d] `{key}` entries must be names or dotted names "
                f"(`gpu_sync_allowed`, `mod.allow_syncs`); got {name!r}"
            )
    return names


def _per_file_ignores(value: Any, path: Path) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [tool.lint-h2d] `per-file-ignores` must be a table of glob = [codes]")
    out = []
    for glob, codes in value.items():
        out.append((glob, _strings(codes, f"per-file-ignores.{glob}", path)))
    return tuple(out)


_KEYS = {
    "select", "ignore", "include", "exclude", "extend-exclude", "per-file-ignores",
    "capture-functions", "fix-gate", "cache-dir", "respect-gitignore", "force-exclude",
    "device-hints", "cpu-hints", "sync-allowed",
}


def from_table(table: Mapping[str, Any], path: Path, root: Path) -> Settings:
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key `{unknown[0]}` in [tool.lint-h2d] "
            f"(known keys: {', '.join(sorted(_KEYS))})"
        )
    settings = Settings(root=root, config_path=path)
    changes: Dict[str, Any] = {}
    for key, value in table.items():
        if key in ("select", "ignore", "include", "exclude", "extend-exclude", "capture-functions",
                   "device-hints", "cpu-hints"):
            changes[key.replace("-", "_")] = _strings(value, key, path)
        elif key == "sync-allowed":
            changes["sync_allowed"] = _dotted_names(value, key, path)
        elif key == "per-file-ignores":
            changes["per_file_ignores"] = _per_file_ignores(value, path)
        elif key == "fix-gate":
            mode, custom = _gate(value, path)
            changes["fix_gate"] = mode
            changes["custom_gate"] = custom
        elif key == "cache-dir":
            changes["cache_dir"] = _string(value, key, path)
        elif key in ("respect-gitignore", "force-exclude"):
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: [tool.lint-h2d] `{key}` must be true or false")
            changes[key.replace("-", "_")] = value
    for key in ("select", "ignore"):
        for code in changes.get(key, ()):
            if not re.fullmatch(r"ALL|H(2(D\d{0,3})?)?", code.upper()):
                raise ConfigError(f"{path}: [tool.lint-h2d] `{key}` has an unknown rule code {code!r}")
    return replace(settings, **changes)


def _read_toml(path: Path) -> Dict[str, Any]:
    try:
        data: Dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        return data
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: malformed TOML: {exc}") from None


def _table_of(path: Path, data: Mapping[str, Any]) -> Optional[Any]:
    """The lint-h2d table of parsed TOML, however it is spelled (`[tool.lint-h2d]`,
    `[tool."lint-h2d"]`, `[tool]` + `lint-h2d.ignore = ...`: TOML makes them one table)."""
    tool = data.get("tool")
    table = tool.get("lint-h2d") if isinstance(tool, dict) else None
    if table is None and path.name != "pyproject.toml":
        return data  # a standalone lint-h2d.toml holds the keys at top level
    return table


def load_file(path: Path) -> Settings:
    """Read settings from a pyproject.toml (its [tool.lint-h2d]) or a standalone lint-h2d.toml."""
    table = _table_of(path, _read_toml(path))
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.lint-h2d] must be a table")
    return from_table(table, path, path.parent.resolve())


def has_table(pyproject: Path) -> bool:
    """Whether a pyproject.toml configures lint-h2d: parsed, not searched as text.

    A pyproject.toml that does not parse is an error only if it mentions lint-h2d; any other
    broken one (a parent folder's, another tool's) is not ours to judge.
    """
    try:
        data = _read_toml(pyproject)
    except ConfigError:
        try:
            mentions = "lint-h2d" in pyproject.read_text(encoding="utf-8", errors="replace")
        except OSError:
            mentions = False
        if mentions:
            raise
        return False
    return _table_of(pyproject, data) is not None


def find_config(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.lint-h2d] table, at or above `start`."""
    here = start.resolve()
    if here.is_file() or not here.exists():
        here = here.parent
    for folder in [here, *here.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and has_table(candidate):
            return candidate
    return None


def is_project_marker(folder: Path) -> bool:
    """A project root: a folder with pyproject.toml or .git (a file, for worktrees)."""
    return (folder / "pyproject.toml").is_file() or (folder / ".git").exists()


def absolute_paths(paths: Iterable[str]) -> List[str]:
    """`os.path.abspath` of each path, the current directory read once (`abspath` asks the
    system for it on every call: a warm scan of vLLM asked 28,000 times)."""
    cwd = os.getcwd()
    return [os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path)) for path in paths]


def canonical_folder(path: str, realpaths: Optional[Dict[str, str]] = None) -> Path:
    """The real folder a path lives in (symlinked folders resolved; a symlinked file stays
    where it is named), so every spelling of a path finds the same configuration.

    `realpaths` memoizes `os.path.realpath` by folder for a caller that asks about many
    files of the same folders (`plan.units` and `project_index.covers` share one)."""
    absolute = os.path.abspath(path)
    folder = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
    return Path(real_folder(folder, realpaths))


def real_folder(folder: str, realpaths: Optional[Dict[str, str]] = None) -> str:
    """`os.path.realpath(folder)`, memoized in `realpaths` when given."""
    if realpaths is None:
        return os.path.realpath(folder)
    real = realpaths.get(folder)
    if real is None:
        real = realpaths[folder] = os.path.realpath(folder)
    return real


class Resolver:
    """Each file's settings: those of the nearest pyproject.toml with a lint-h2d table at or
    above its folder (ruff's hierarchical rule), or `--config` for every file.

    Without a table the defaults apply, rooted at the nearest folder with pyproject.toml or
    .git (the project root), else at the current directory (no project: no cross-file index).
    The answer depends on the file alone, never on the other paths of the run nor their order.
    """

    def __init__(self, explicit: Optional[Path] = None,
                 adjust: Callable[[Settings], Settings] = lambda s: s) -> None:
        self._adjust = adjust
        self._explicit = adjust(load_file(explicit)) if explicit is not None else None
        self._by_folder: Dict[Path, Tuple[Optional[Path], Optional[Path]]] = {}
        self._by_config: Dict[Optional[Path], Settings] = {}
        self._defaults: Dict[Path, Settings] = {}

    @classmethod
    def fixed(cls, settings: Settings) -> "Resolver":
        """One settings object for every file (the project index's walk, API callers)."""
        resolver = cls()
        resolver._explicit = settings
        return resolver

    def for_path(self, path: str) -> Settings:
        if self._explicit is not None:
            return self._explicit
        return self.for_folder(canonical_folder(path))

    def for_folder(self, folder: Path) -> Settings:
        if self._explicit is not None:
            return self._explicit
        config, marker = self._lookup(folder)
        if config is not None:
            if config not in self._by_config:
                self._by_config[config] = self._adjust(load_file(config))
            return self._by_config[config]
        root = marker if marker is not None else Path(os.path.realpath(os.getcwd()))
        if root not in self._defaults:
            self._defaults[root] = self._adjust(Settings(root=root))
        return self._defaults[root]

    def _lookup(self, folder: Path) -> Tuple[Optional[Path], Optional[Path]]:
        """(nearest config, nearest project marker folder) at or above `folder`; memoized so a
        walk costs two stats per folder."""
        known = self._by_folder.get(folder)
        if known is not None:
            return known
        pyproject = folder / "pyproject.toml"
        has_pyproject = pyproject.is_file()
        config = pyproject if has_pyproject and has_table(pyproject) else None
        marker = folder if has_pyproject or (folder / ".git").exists() else None
        if config is None or marker is None:
            parent = folder.parent
            up = self._lookup(parent) if parent != folder else (None, None)
            config = config or up[0]
            marker = marker or up[1]
        self._by_folder[folder] = (config, marker)
        return config, marker


def resolve(paths: Sequence[str], config: Optional[str]) -> Settings:
    """The settings of the first path (for callers that handle one project, like `verify`)."""
    resolver = Resolver(Path(config) if config is not None else None)
    first = paths[0] if paths and paths[0] != "-" else os.getcwd()
    return resolver.for_path(first)


def cli_overrides(settings: Settings, select: Optional[List[str]], ignore: Optional[List[str]],
                  extend_select: Optional[List[str]] = None) -> Settings:
    changes: Dict[str, Any] = {}
    if select:
        changes["select"] = tuple(select)
    if extend_select:
        changes["select"] = tuple(changes.get("select", settings.select)) + tuple(extend_select)
    if ignore:
        changes["ignore"] = tuple(settings.ignore) + tuple(ignore)
    return replace(settings, **changes) if changes else settings


def select_codes(codes: Sequence[str], select: Sequence[str], ignore: Sequence[str]) -> List[str]:
    """ruff's prefix semantics: `H2D` selects every rule, `H2D00` a group, `ALL` everything."""

    def matches(code: str, prefixes: Sequence[str]) -> bool:
        return any(p == "ALL" or code.startswith(p.upper()) for p in prefixes)

    return [c for c in codes if matches(c, select) and not matches(c, ignore)]
