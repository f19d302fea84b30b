"""Real-world corpora for the reliability tests: pinned wheels, downloaded once, cached outside
the repository (``~/.cache/lint-h2d``), never modified in place (copy before fixing).

``download_wheel`` and ``extract_py`` skip the calling test cleanly (``pytest.skip``) when the
wheel cannot be fetched, so the suite passes offline; ``scripts/corpus_check.py`` uses the
same helpers with ``skip=False`` semantics (it gets a ``CorpusUnavailable`` instead).

The suite runs in several processes (pytest-xdist): each download and each extraction holds a
lock file under ``CACHE/.locks`` (``_locked``), so two workers asking for the same tree at once
neither fetch it twice nor read a half-written wheel or file.
"""
from __future__ import annotations

import ast
import contextlib
import difflib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

CACHE = Path(os.environ.get("LINT_H2D_CORPUS_CACHE", Path.home() / ".cache" / "lint-h2d"))
WHEELS = CACHE / "wheels"


class CorpusUnavailable(Exception):
    """The wheel could not be downloaded (no network, no such version)."""


def _skip_or_raise(reason: str, skip: bool) -> None:
    if skip:
        import pytest

        pytest.skip(reason)
    raise CorpusUnavailable(reason)


@contextlib.contextmanager
def _locked(key: str) -> Iterator[None]:
    """Hold ``CACHE/.locks/<key>.lock`` exclusively (``fcntl.flock``; released when the process
    dies): one process at a time downloads or extracts a given corpus.  Where ``fcntl`` is
    missing (Windows), no lock: the suite runs there in one process."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    locks = CACHE / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{_normalized(key)}.lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_wheel(name: str, version: str) -> Optional[Path]:
    if not WHEELS.is_dir():
        return None
    prefix = f"{_normalized(name)}-{version}-"
    for wheel in sorted(WHEELS.glob("*.whl")):
        if wheel.name.lower().startswith(prefix) or _normalized(wheel.name).startswith(_normalized(prefix)):
            return wheel
    return None


def download_wheel(name: str, version: str, *, skip: bool = True, timeout: float = 900) -> Path:
    """The wheel ``name==version`` in ``~/.cache/lint-h2d/wheels`` (``pip download`` if absent)."""
    with _locked(f"wheel-{name}-{version}"):
        found = find_wheel(name, version)
        if found is not None:
            return found
        return _pip_download(name, version, ["--only-binary", ":all:"], find_wheel, skip, timeout)


def find_sdist(name: str, version: str) -> Optional[Path]:
    if not WHEELS.is_dir():
        return None
    want = _normalized(f"{name}-{version}")
    for archive in sorted(WHEELS.glob("*.tar.gz")):
        if _normalized(archive.name[: -len(".tar.gz")]) == want:
            return archive
    return None


def download_sdist(name: str, version: str, *, skip: bool = True, timeout: float = 900) -> Path:
    """The source archive ``name==version`` in ``~/.cache/lint-h2d/wheels``, for projects that
    publish no wheel (DeepSpeed); ``pip download --no-binary`` if absent."""
    with _locked(f"sdist-{name}-{version}"):
        return _download_sdist(name, version, skip, timeout)


def _download_sdist(name: str, version: str, skip: bool, timeout: float) -> Path:
    found = find_sdist(name, version)
    if found is not None:
        return found
    # pip may fail after saving the archive (it tries to read its metadata), or before saving
    # it (kvcached 0.1.6: its build backend fails): then fetch the file PyPI lists.
    try:
        return _pip_download(name, version, ["--no-binary", ":all:", "--no-build-isolation"], find_sdist,
                             False, timeout)
    except CorpusUnavailable as pip_failed:
        try:
            return _pypi_sdist(name, version, timeout)
        except (OSError, ValueError, KeyError) as exc:
            _skip_or_raise(f"{pip_failed}; from PyPI's JSON: {exc}", skip)
            raise AssertionError("unreachable")


def _pypi_sdist(name: str, version: str, timeout: float) -> Path:
    """The release's sdist as PyPI's JSON API lists it, checked against its sha256, saved
    atomically under its own file name."""
    import hashlib
    import json
    import tempfile
    import urllib.request

    import urllib.parse

    index = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(index, timeout=timeout) as response:
        files = json.load(response)["releases"][version]
    sdist = next(f for f in files if f["packagetype"] == "sdist" and f["filename"].endswith(".tar.gz"))
    # A mirror may list the file by a relative address.
    with urllib.request.urlopen(urllib.parse.urljoin(index, sdist["url"]), timeout=timeout) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != sdist["digests"]["sha256"]:
        raise ValueError(f"{sdist['filename']}: sha256 differs from PyPI's")
    WHEELS.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=WHEELS, suffix=".part")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    target = WHEELS / os.path.basename(sdist["filename"])
    os.replace(tmp, target)
    found = find_sdist(name, version)
    if found is None:
        raise ValueError(f"{target.name} does not read as {name}-{version}.tar.gz")
    return found


def _pip_download(name: str, version: str, kind: List[str], find: Callable[[str, str], Optional[Path]],
                  skip: bool, timeout: float) -> Path:
    WHEELS.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *kind,
           "--disable-pip-version-check", "-q", f"{name}=={version}", "-d", str(WHEELS)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _skip_or_raise(f"cannot download {name}=={version}: {exc}", skip)
        raise AssertionError("unreachable")
    found = find(name, version)
    if found is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["nothing saved"]
        _skip_or_raise(f"cannot download {name}=={version} (no network?): {tail[0]}", skip)
    assert found is not None
    return found


def extract_sdist_py(archive: Path, prefix: str, dest: Optional[Path] = None) -> Path:
    """Like ``extract_py`` for a ``.tar.gz`` source archive: its single top folder is dropped, so
    paths below ``dest`` read as in a wheel (``PREFIX/...``)."""
    if dest is None:
        dest = CACHE / archive.name[: -len(".tar.gz")]
    with _locked(f"tree-{dest.name}"):
        return _extract_sdist_py(archive, prefix, dest)


def _extract_sdist_py(archive: Path, prefix: str, dest: Path) -> Path:
    import tarfile

    marker = dest / ".extracted"
    if marker.exists():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    want = prefix.rstrip("/") + "/"
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            top, _, inner = member.name.partition("/")
            if not (member.isfile() and inner.startswith(want) and inner.endswith(".py")):
                continue
            target = dest / inner
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None
            target.write_bytes(source.read())
    marker.touch()
    return dest


def extract_py(wheel: Path, prefix: str, dest: Optional[Path] = None) -> Path:
    """Unzip only ``PREFIX/**/*.py`` from ``wheel`` into ``dest`` (default
    ``~/.cache/lint-h2d/<name>-<version>/``), once; returns ``dest``."""
    if dest is None:
        name, version = wheel.name.split("-")[:2]
        dest = CACHE / f"{name}-{version}"
    with _locked(f"tree-{dest.name}"):
        return _extract_py(wheel, prefix, dest)


def _extract_py(wheel: Path, prefix: str, dest: Path) -> Path:
    marker = dest / ".extracted"
    if marker.exists() or (dest / prefix).is_dir() and not (dest / ".partial").exists() and any((dest / prefix).iterdir()):
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    (dest / ".partial").touch()
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.filename.startswith(prefix.rstrip("/") + "/") and info.filename.endswith(".py"):
                archive.extract(info, dest)
    marker.touch()
    (dest / ".partial").unlink()
    return dest


def corpus_tree(name: str, version: str, prefix: str) -> Path:
    """The extracted ``PREFIX/**/*.py`` of wheel ``name==version``: downloaded and extracted on
    first use, from any test, in any order (the one way tests get a real tree)."""
    return extract_py(download_wheel(name, version), prefix)


# -- checking a fixed tree -------------------------------------------------------------------

ERROR_CODES = ("H2D900", "H2D901", "H2D902")


def python_files(root: Path) -> List[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def snapshot(root: Path) -> Dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in python_files(root)}


def parses(data: bytes, path: str) -> Optional[str]:
    """None if ``data`` parses with LibCST and ``ast`` and compiles; else why not."""
    import libcst as cst

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None  # not UTF-8: the linter keeps the encoding; ast handles it below
    try:
        cst.parse_module(text)
    except Exception as exc:
        return f"LibCST: {exc}".splitlines()[0]
    try:
        compile(ast.parse(data, path), path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"ast/compile: {exc}"
    return None


_IMPORT = re.compile(r"^\s*(from\s+[\w.]+\s+import\s+[\w, ()]+|import\s+[\w.]+(\s+as\s+\w+)?)\s*$")
_GATE_IF = re.compile(r"^\s*if\s+.+:\s*$")
_ELSE = re.compile(r"^\s*else:\s*$")
_DEVICE_CALL = re.compile(r"\.(zero_|fill_)\(")
_INPLACE = re.compile(r"\.[a-z]\w*_\(")  # an in-place tensor method (H2D002 removes CPU ones)


def unexpected_changes(before: str, after: str) -> List[str]:
    """Hunks of the diff that are neither a gated fix nor an inserted import nor an H2D002
    removal/redirect.  A gated fix turns ``X`` into ``if G:`` / ``<device call>`` / ``else:`` /
    ``X`` (indented one level), so every inserted line must be an import, the ``if``/``else``
    of a gate, a ``.zero_()``/``.fill_()`` call, or an original line re-indented; every removed
    line must come back re-indented (gated) or be an in-place CPU mutation (H2D002)."""
    a = before.splitlines()
    b = after.splitlines()
    problems: List[str] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed = a[i1:i2]
        added = b[j1:j2]
        added_stripped = [line.strip() for line in added]
        for line in removed:
            s = line.strip()
            if s in added_stripped:  # re-indented into the else branch
                added_stripped.remove(s)
                continue
            if _DEVICE_CALL.search(s) or _INPLACE.search(s) or re.search(r"\[[^\]]*\]\s*[-+*/]?=", s):
                continue  # H2D002: a CPU mutation removed or redirected to the device tensor
            problems.append(f"line {i1 + 1}: removed {line!r}")
        removed_text = " ".join(line.strip() for line in removed)
        for s in added_stripped:
            if not s or s.startswith("#"):
                continue
            if s in removed_text:  # a `;` line's remainder, or a continuation line repeated
                continue           # in the device form of a multi-line statement
            if re.fullmatch(r"[)\]}]+,?", s):  # the device call's closing brackets
                continue
            if s == "pass" or _IMPORT.match(s) or _GATE_IF.match(s) or _ELSE.match(s) or _DEVICE_CALL.search(s):
                continue
            problems.append(f"line {j1 + 1}: added {s!r}")
    return problems


@dataclass
class CorpusReport:
    name: str
    files: int = 0
    changed: int = 0
    findings: int = 0
    fixes: int = 0
    remaining: int = 0
    syntax_errors: List[str] = field(default_factory=list)  # genuine ones, in the corpus itself
    errors: List[str] = field(default_factory=list)  # internal errors and broken guarantees
    seconds: float = 0.0


def run_lint(args: Sequence[str], repo: Path, timeout: float = 3600) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "lint_h2d", *args], cwd=str(repo),
                          capture_output=True, text=True, env=env, timeout=timeout)


# The summary line a full or concise run ends with.
_SUMMARY = re.compile(r"^(Found \d+ errors?|All checks passed!)", re.MULTILINE)
# `path:row:col: CODE message` (a finding left) and `  path:row: CODE message` (after `Fixed:`).
_LEFT = re.compile(r"^(?P<filename>\S.*?):(?P<row>\d+):(?P<column>\d+): (?P<code>H2D\d+) (?P<message>.*)$")
_FIXED = re.compile(r"^  (?P<filename>\S.*?):(?P<row>\d+): (?P<code>H2D\d+) (?P<message>.*)$")


def concise_findings(stdout: str) -> Tuple[List[dict], List[dict]]:
    """(the fixes applied, the findings left) of a `check --fix --show-fixes --output-format
    concise` run's output, each a dict of `filename`, `row`, `code`, `message`."""
    fixed: List[dict] = []
    left: List[dict] = []
    in_fixed = False
    for line in stdout.splitlines():
        if line == "Fixed:":
            in_fixed = True
            continue
        match = (_FIXED if in_fixed else _LEFT).match(line)
        if match is not None:
            (fixed if in_fixed else left).append(match.groupdict())
        elif in_fixed and not line.startswith("  "):
            in_fixed = False
    return fixed, left


def check_corpus(name: str, source_root: Path, work: Path, repo: Path,
                 paths: Optional[Iterable[str]] = None, jobs: int = 0) -> CorpusReport:
    """Copy ``source_root`` (or only ``paths`` under it) to ``work``, fix it with
    ``--unsafe-fixes``, and verify every guarantee; returns counts and every violation."""
    import time

    report = CorpusReport(name)
    if work.exists():
        shutil.rmtree(work)
    if paths is None:
        shutil.copytree(source_root, work, ignore=shutil.ignore_patterns("__pycache__", ".extracted", ".partial"))
    else:
        for rel in paths:
            target = work / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source_root / rel, target)
    # A pyproject.toml at the top keeps the run independent of any config above the temp dir
    # and switches off the default test exclusions: every file of the corpus is checked.  The
    # shape checks below know H2D001's gated rewrites and H2D002's removals; H2D003/H2D004's
    # argument edits are proven by `verify` and their own tests.
    (work / "pyproject.toml").write_text(
        "[tool.lint-h2d]\nselect = [\"H2D001\", \"H2D002\"]\nexclude = []\nrespect-gitignore = false\n")
    before = snapshot(work)
    report.files = len(before)
    common = ["--no-cache", "--config", str(work / "pyproject.toml")]
    if jobs:
        common += ["--jobs", str(jobs)]
    started = time.perf_counter()
    # One run: the fixes it applies (`--show-fixes`) and the findings it leaves are the findings
    # a plain `check` reports (a separate `check` first doubled the time of the largest test).
    fix = run_lint(["check", "--fix", "--unsafe-fixes", "--show-fixes", "--output-format", "concise", *common,
                    str(work)], repo)
    report.seconds = time.perf_counter() - started
    if fix.returncode not in (0, 1, 2) or not _SUMMARY.search(fix.stdout):
        report.errors.append(f"fix run exited {fix.returncode}: {fix.stderr[-2000:]}")
        return report
    fixed, remaining = concise_findings(fix.stdout)
    for f in remaining:
        if f["code"] in ERROR_CODES:
            entry = f"{f['code']} {f['filename']}:{f['row']}: {f['message']}"
            if f["code"] == "H2D901":
                if entry not in report.syntax_errors:
                    report.syntax_errors.append(entry)
            elif entry not in report.errors:
                report.errors.append(entry)
    real = fixed + [f for f in remaining if f["code"] not in ERROR_CODES]
    report.findings = len(real)
    report.remaining = len(real) - len(fixed)
    report.fixes = len(fixed)
    if fix.returncode == 2 and not report.syntax_errors and not report.errors:
        report.errors.append(f"exit 2 without an error finding: {fix.stderr[-2000:]}")

    after = snapshot(work)
    if set(after) != set(before):
        report.errors.append(f"files appeared or vanished: {sorted(set(after) ^ set(before))[:10]}")
    # The paths are as the run printed them: relative to its directory (`repo`) when below it.
    files_with_findings = {(repo / f["filename"]).resolve().relative_to(work.resolve()).as_posix() for f in real}
    for rel, old in before.items():
        new = after.get(rel)
        if new is None or new == old:
            continue
        report.changed += 1
        if rel not in files_with_findings:
            report.errors.append(f"{rel}: changed although it had no finding")
        why = parses(new, rel)
        if why is not None:
            report.errors.append(f"{rel}: fixed file does not parse: {why}")
            continue
        try:
            old_text, new_text = old.decode("utf-8-sig"), new.decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
        for problem in unexpected_changes(old_text, new_text)[:5]:
            report.errors.append(f"{rel}: unexpected change {problem}")
        if old.startswith(b"\xef\xbb\xbf") != new.startswith(b"\xef\xbb\xbf"):
            report.errors.append(f"{rel}: BOM changed")
        if (b"\r\n" in old) != (b"\r\n" in new):
            report.errors.append(f"{rel}: newline style changed")

    # Idempotence: a file the first run left alone gets the same input again, so only the
    # changed files need a second run (a full second run doubles the cost for nothing).
    changed_paths = [str(work / rel) for rel, old in before.items() if after.get(rel) not in (None, old)]
    if not changed_paths:
        return report
    again = run_lint(["check", "--fix", "--unsafe-fixes", "--output-format", "json", *common, *changed_paths], repo)
    third = snapshot(work)
    if third != after:
        changed = [k for k in third if third[k] != after.get(k)]
        report.errors.append(f"second fix run changed {len(changed)} files: {changed[:5]}")
    if again.returncode not in (0, 1, 2):
        report.errors.append(f"second fix run exited {again.returncode}: {again.stderr[-1000:]}")
    return report
