"""`tests.corpus`'s reading of a `check --fix --show-fixes --output-format concise` run: the
corpus test counts findings and picks the files that may change from it, so it must read the
CLI's real output, fixes applied and findings left alike."""
from pathlib import Path

from tests.conftest import REPO
from tests.corpus import concise_findings, run_lint
from tests.test_cli import FLAGGED, write
from tests.test_fix_cli import UNSAFE


def test_the_fixes_applied_and_the_findings_left_are_read_off_a_real_run(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.lint-h2d]\n")
    write(tmp_path, "fixed.py", FLAGGED)
    write(tmp_path, "left.py", UNSAFE)
    write(tmp_path, "broken.py", "def f(:\n")
    done = run_lint(["check", "--fix", "--show-fixes", "--output-format", "concise", "--no-cache", str(tmp_path)], REPO)
    assert done.returncode == 2, done.stdout + done.stderr
    fixed, left = concise_findings(done.stdout)
    assert [(Path(f["filename"]).name, f["code"]) for f in fixed] == [("fixed.py", "H2D001")]
    assert sorted((Path(f["filename"]).name, f["code"]) for f in left) == [("broken.py", "H2D901"), ("left.py", "H2D001")]
    assert all(Path(f["filename"]).is_absolute() for f in fixed + left)  # below no cwd of the run


def test_lines_of_neither_kind_are_skipped() -> None:
    out = ("a.py:6:15: H2D001 [*] Scalar write\n\nFixed:\n  a.py:12: H2D001 Use `t[:1].zero_()`\n"
           "Found 2 errors (1 fixed, 1 remaining).\nsomething else: 3\n")
    fixed, left = concise_findings(out)
    assert [(f["row"], f["code"]) for f in fixed] == [("12", "H2D001")]
    assert [(f["row"], f["column"], f["message"]) for f in left] == [("6", "15", "[*] Scalar write")]


def test_an_extraction_waits_for_another_process_holding_the_tree(tmp_path: Path) -> None:
    """The suite runs in several processes: while one extracts (or downloads) a corpus, another
    asking for the same tree waits for it instead of reading half-written files."""
    import os
    import subprocess
    import sys
    import time
    import zipfile

    from tests import corpus

    cache = tmp_path / "cache"
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("demo/__init__.py", "X = 1\n")
    script = ("import sys; from pathlib import Path; from tests import corpus; "
              "print(corpus.extract_py(Path(sys.argv[1]), 'demo/'))")
    env = {**os.environ, "LINT_H2D_CORPUS_CACHE": str(cache), "PYTHONPATH": str(REPO)}
    original = corpus.CACHE
    corpus.CACHE = cache
    try:
        with corpus._locked("tree-demo-1.0"):
            child = subprocess.Popen([sys.executable, "-c", script, str(wheel)], env=env, cwd=str(REPO),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            assert child.poll() is None, child.communicate()  # still waiting for the lock
            assert not (cache / "demo-1.0" / "demo").exists()
        out, err = child.communicate(timeout=120)
    finally:
        corpus.CACHE = original
    assert child.returncode == 0, err
    assert Path(out.strip()) == cache / "demo-1.0"
    assert (cache / "demo-1.0" / "demo" / "__init__.py").read_text() == "X = 1\n"
