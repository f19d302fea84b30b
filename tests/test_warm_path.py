"""The warm path (issue 12): a file unchanged since the cache recorded it is answered by its stat,
unread; a run answered from the cache imports no parser; and every way of running gives the
same findings (cold, warm, stat-answered, with and without the prefilter, one file and tree).

A stamp is trusted only when it is older than the recording run by the racy window, so these
tests set the clock ahead (as tests/test_project_index.py does) to reach the stat path.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import pytest

from lint_h2d import cli
from tests.conftest import REPO

META = (
    "import torch\n\n\nclass CommonAttentionMetadata:\n    query_start_loc: torch.Tensor\n"
    "    query_start_loc_cpu: torch.Tensor\n"
)
BUILDER = "def build(meta):\n    meta.query_start_loc[0] = 0\n    meta.seq_lens[0] = 0\n"
LOOKALIKE = "def build(meta):\n    meta.seq_lens[0] = 0\n"  # no device fact: silent
FLAGGED = (
    "import torch\n\n\ndef build(n, device):\n"
    "    t = torch.empty(n + 1, dtype=torch.int32, device=device)\n    t[0] = 0\n    return t\n"
)
Row = Tuple[str, int, int, str]


def project(root: Path) -> Path:
    for name, text in {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "pkg/meta.py": META, "pkg/builder.py": BUILDER, "pkg/look.py": LOOKALIKE, "z.py": FLAGGED,
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def json_report(capsys: pytest.CaptureFixture, root: Path, *args: str) -> List[Dict[str, Any]]:
    """`lint-h2d check --output-format json ARGS` run in `root`, parsed."""
    old = os.getcwd()
    os.chdir(root)
    try:
        cli.main(["check", "--jobs", "1", "--output-format", "json", "--exit-zero", *args])
    finally:
        os.chdir(old)
    found: List[Dict[str, Any]] = json.loads(capsys.readouterr().out)
    return found


def rows(capsys: pytest.CaptureFixture, root: Path, *args: str) -> Set[Row]:
    return {(os.path.realpath(d["filename"]), d["location"]["row"], d["location"]["column"], d["code"])
            for d in json_report(capsys, root, *args)}


def set_clock_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stamp is old enough to trust (the racy window lies behind the files' stamps)."""
    from lint_h2d import cache, project_index

    ahead = time.time_ns() + 3600 * 10**9
    monkeypatch.setattr(cache.time, "time_ns", lambda: ahead)
    monkeypatch.setattr(project_index.time, "time_ns", lambda: ahead)


@pytest.fixture
def clock_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    set_clock_ahead(monkeypatch)


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    from lint_h2d import pipeline

    reads: List[str] = []
    real = pipeline.read_source
    monkeypatch.setattr(pipeline, "read_source", lambda p: reads.append(os.path.basename(p)) or real(p))
    return reads


def test_every_way_agrees_with_the_cold_scan(tmp_path: Path, capsys: pytest.CaptureFixture,
                                             monkeypatch: pytest.MonkeyPatch, clock_ahead: None) -> None:
    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    cold = rows(capsys, root, "--no-cache", ".")
    assert {(os.path.basename(r[0]), r[1], r[3]) for r in cold} == {("builder.py", 2, "H2D001"), ("z.py", 6, "H2D001")}
    assert rows(capsys, root, "--no-cache", "--no-prefilter", ".") == cold
    assert rows(capsys, root, *cache, ".") == cold  # primes the cache and the index
    reads = _count_reads(monkeypatch)
    assert rows(capsys, root, *cache, ".") == cold
    assert reads == []  # every file answered by its stat
    one = set().union(*(rows(capsys, root, *cache, name) for name in ("pkg/builder.py", "pkg/look.py", "z.py")))
    assert one == cold and reads == []
    one_cold = set().union(*(rows(capsys, root, "--no-cache", name) for name in ("pkg/builder.py", "z.py")))
    assert one_cold == cold


def test_a_change_the_stat_cannot_hide(tmp_path: Path, capsys: pytest.CaptureFixture,
                                       monkeypatch: pytest.MonkeyPatch, clock_ahead: None) -> None:
    """`touch -r` (size and mtime kept) still changes ctime: the file is read and re-checked;
    a plain `touch` (same bytes) is read once, compared by hash, and trusted again."""
    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    before = rows(capsys, root, *cache, ".")
    z = root / "z.py"
    st = z.stat()
    z.write_text(FLAGGED.replace("t[0] = 0", "t += 0  "), encoding="utf-8")  # same size
    os.utime(z, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert z.stat().st_size == st.st_size and z.stat().st_mtime_ns == st.st_mtime_ns
    reads = _count_reads(monkeypatch)
    after = rows(capsys, root, *cache, ".")
    assert after == {r for r in before if not r[0].endswith("z.py")}
    assert "z.py" in reads
    reads.clear()
    os.utime(z, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert rows(capsys, root, *cache, ".") == after and reads == ["z.py"]
    reads.clear()
    assert rows(capsys, root, *cache, ".") == after and reads == []


def test_racy_stamps_are_compared_by_hash(tmp_path: Path, capsys: pytest.CaptureFixture,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the clock ahead every stamp is as recent as the run that recorded it: no stat
    is trusted, and a write that kept the stat is still seen."""
    root = project(tmp_path / "p")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    before = rows(capsys, root, *cache, ".")
    z = root / "z.py"
    st = z.stat()
    z.write_text(FLAGGED.replace("t[0] = 0", "t += 0  "), encoding="utf-8")
    os.utime(z, ns=(st.st_atime_ns, st.st_mtime_ns))
    # Forge the recorded stat to the new one: only the hash can tell.
    (findings_cache,) = [f for f in (tmp_path / "cache").glob("*.json") if not f.name.startswith("project-")]
    data = json.loads(findings_cache.read_text())
    entry = data["files"][str(z)]
    now = z.stat()
    entry["stat"] = [now.st_size, now.st_mtime_ns, now.st_ctime_ns, now.st_ino]
    findings_cache.write_text(json.dumps(data))
    reads = _count_reads(monkeypatch)
    assert rows(capsys, root, *cache, ".") == {r for r in before if not r[0].endswith("z.py")}
    assert "z.py" in reads


def test_a_run_answered_from_the_cache_imports_no_parser(tmp_path: Path) -> None:
    """`import lint_h2d.cli` and a warm one-file run load neither LibCST nor the rules nor
    torch (what a pre-commit run pays for on every commit)."""
    root = project(tmp_path / "p")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    probe = (
        "import sys\nfrom lint_h2d.cli import main\n"
        "heavy = lambda: sorted(m for m in ('libcst', 'torch', 'lint_h2d.rules', 'lint_h2d.analysis') if m in sys.modules)\n"
        "print(heavy())\nmain(sys.argv[1:])\nprint(heavy())\n"
    )

    def run(*args: str) -> List[str]:
        done = subprocess.run([sys.executable, "-c", probe, "check", "--cache-dir", str(tmp_path / "cache"),
                               "--output-format", "concise", "--exit-zero", *args],
                              cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    first = run(".")
    assert first[0] == "[]" and first[-1] != "[]"  # a cold run does analyze
    time.sleep(3.2)  # out of the racy window of the recording run
    run(".")  # hashes the racy entries and records them again, now trusted
    (findings_cache,) = [f for f in (tmp_path / "cache").glob("*.json") if not f.name.startswith("project-")]
    from lint_h2d.cache import _trusted

    assert all(_trusted(e) for e in json.loads(findings_cache.read_text())["files"].values())
    warm = run("z.py")
    assert warm[0] == "[]" and warm[-1] == "[]", warm
    assert any("z.py:6:" in line for line in warm)


def test_an_analyzing_run_does_not_import_libcst_matchers(tmp_path: Path) -> None:
    """A run that parses and checks files with LibCST still leaves out `libcst.matchers`, whose
    import alone (its generated matcher classes) costs a pre-commit run after an edit more than
    the analysis of the edited file; the H2D002 proof uses plain isinstance tests instead."""
    root = project(tmp_path / "p")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    probe = ("import sys\nfrom lint_h2d.cli import main\nmain(sys.argv[1:])\n"
             "print(sorted(m for m in ('libcst', 'lint_h2d.rules._redundant', 'libcst.matchers') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", probe, "check", "--no-cache", "--output-format", "concise",
                           "--exit-zero", "."], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert any("z.py:6:" in line for line in done.stdout.splitlines())  # it did analyze
    assert done.stdout.splitlines()[-1] == "['libcst', 'lint_h2d.rules._redundant']"


def test_summaries_verdicts_and_the_resolve_import_no_libcst() -> None:
    """What an index worker and the resolving child run (CPython's parse, stage 2's verdict,
    the summary, the resolve) and the stored facts' classes load no LibCST: a cold scan's
    workers do not pay for its import, and a pre-commit run that only resolves imports it
    only if a file reaches the analysis (`inference/torch_api.py`, `resolved.ModuleFacts`)."""
    probe = (
        "import ast, sys\n"
        "from lint_h2d.inference.project import resolve\n"
        "from lint_h2d.inference.summary import summarize\n"
        "from lint_h2d.prefilter import tree_verdict\n"
        "from lint_h2d.project_index import _resolved_classes\n"
        f"text = {FLAGGED!r}\n"
        "tree_verdict(ast.parse(text), text, ())\n"
        "resolve([summarize('z.py', text)])\n"
        "_resolved_classes()\n"
        "print('libcst' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


def test_an_edited_file_the_prefilter_drops_imports_no_libcst(tmp_path: Path) -> None:
    """A pre-commit run after an edit resolves the project's facts again (or carries them),
    and decides a file without candidates from them alone (`pipeline.LazyEngine.decide`):
    LibCST and the rules are imported only for a file the prefilter keeps.  Both runs give
    what `--no-cache` gives."""
    root = project(tmp_path / "p")
    plain = root / "pkg" / "plain.py"
    plain.write_text("def step(n):\n    return [0] * n\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    probe = ("import sys\nfrom lint_h2d.cli import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
             "    print(sorted(m for m in ('libcst', 'lint_h2d.rules', 'lint_h2d.analysis') if m in sys.modules))\n")

    def run(*args: str) -> List[str]:
        done = subprocess.run([sys.executable, "-c", probe, "check", "--output-format", "concise", *args],
                              cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode in (0, 1), done.stderr
        return done.stdout.splitlines()

    cache = ["--cache-dir", str(tmp_path / "cache")]
    run(*cache, ".")  # the project's index, facts and findings recorded
    plain.write_text("# edited\ndef step(n):\n    return [0] * n\n", encoding="utf-8")
    edited = run(*cache, "pkg/plain.py")
    assert edited[-1] == "[]", edited  # decided without the engine
    assert edited[:-1] == run("--no-cache", "pkg/plain.py")[:-1]
    (root / "z.py").write_text("# edited\n" + FLAGGED, encoding="utf-8")
    flagged = run(*cache, "z.py")
    assert flagged[-1] == "['libcst', 'lint_h2d.analysis', 'lint_h2d.rules']", flagged  # kept: analyzed
    assert any("z.py:7:" in line for line in flagged), flagged
    assert flagged[:-1] == run("--no-cache", "z.py")[:-1]
