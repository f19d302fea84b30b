"""Scan benchmark: lint-h2d vs ruff (and the bare parsers) on vLLM 0.33.0's sources.

    python bench/scan_bench.py [--rounds 3] [--parser-rounds 1] [--json out.json] [--skip-no-prefilter]

Downloads the vLLM wheel once into ~/.cache/lint-h2d/wheels (pip download --no-deps
--only-binary :all: vllm==0.33.0), extracts `vllm/**/*.py` next to it, copies the tree into a
temporary project root (a `pyproject.toml` beside `vllm/`, so the project-wide inference and
its index run as in a real checkout), byte-compiles lint-h2d (as an installed package is), then
times, each in its own process (wall time, CPU time of the process tree, peak RSS from wait4):

* lint-h2d cold (`--no-cache`: the whole project index and inference, every file analyzed),
  warm (cache and index primed, nothing changed), one file with cache and index warm
  (pre-commit, the file unchanged), and one file just edited (pre-commit as it really runs: a
  comment line inserted at the top of the staged file, which moves every line below it: the
  stored resolved facts are carried to the new lines where `moved_lines` can prove the map,
  else the project is resolved again; and the same edit of SECOND_FILE; the file is restored
  and the cache primed again, untimed, after each such run), the whole tree scanned again
  right after SECOND_FILE's one-file run, before it is restored (what a developer's next
  `lint-h2d check .` costs after an edit), ONE_FILE edited so that a fact changes (a call of a
  function vLLM does not define added: the project is resolved again) and the tree scanned
  right after it (checked against a cold scan of that tree), one file edited in place (the text of its first line, a
  comment, changed: no file's facts change, so the stored resolved facts are reused), and CI's fresh checkout with the cache folder restored (the
  tree copied anew in place: every file with a new mtime, ctime and inode, the same bytes);
* `ruff check --no-cache --isolated` on the same tree (needs `pip install .[bench]`);
* `python -c pass` (the floor of any one-file run);
* CPython's `ast.parse` of every file in as many processes as the machine has cores, and
  nothing else (the floor of a cold scan by a Python tool whose project-wide inference reads
  every file: what issue 12's cold goal is up against);
* `libcst.parse_module` and `ast.parse` of every file (one process, sequential; optional).

Medians over the rounds, ratios against ruff, and identity checks: findings identical cold,
warm and primed; the one file's findings the same alone as in the whole-tree run; with and
without the prefilter (`--no-prefilter`, slow: skip with --skip-no-prefilter).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

CACHE = Path(os.environ.get("LINT_H2D_BENCH_CACHE", Path.home() / ".cache" / "lint-h2d"))
VERSION = "0.33.0"
REPO = Path(__file__).resolve().parent.parent
ONE_FILE = "vllm/v1/attention/backends/utils.py"  # a typical edited file
# A second edited file, with no finding of its own (the first has some): the stored resolved
# facts are carried to the moved lines of each (`moved_lines`); the bench shows both.
SECOND_FILE = "vllm/v1/worker/block_table.py"

# The floor of a cold scan that parses every file with CPython: the files dealt round-robin to
# one process per core, each reading and parsing its share; no analysis, no results sent back.
PARSE_FLOOR = r"""
import ast, os, sys
from concurrent.futures import ProcessPoolExecutor

def parse_all(paths):
    for path in paths:
        with open(path, "rb") as handle:
            ast.parse(handle.read())
    return len(paths)

if __name__ == "__main__":
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk("vllm") for f in fs if f.endswith(".py"))
    workers = os.cpu_count() or 1
    with ProcessPoolExecutor(workers) as pool:
        print(sum(pool.map(parse_all, [files[i::4 * workers] for i in range(4 * workers)])))
"""


def _moved_by_one(line: str) -> str:
    """A concise finding line (`path:row:col: CODE message`) one row further down."""
    path, row, rest = line.split(":", 2)
    return f"{path}:{int(row) + 1}:{rest}"


# The fact-changing edits, in ONE_FILE's first function: a call of a vLLM function (`cdiv`: the
# resolve reads the call sites of every project function, so the project is resolved again), and
# a call of a function vLLM does not define (nothing reads it: the stored facts are carried).
CALL_ANCHOR = b"    for variant in impl.get_impl_variants():\n"
READ_CALL = b"    _probe = cdiv(7, 2)\n"
UNREAD_CALL = b"    _probe = compute_probe(1)\n"


def _with_call(original: bytes, call: bytes = READ_CALL) -> bytes:
    assert CALL_ANCHOR in original, f"{ONE_FILE} changed: pick another anchor for the call"
    return original.replace(CALL_ANCHOR, call + CALL_ANCHOR, 1)


def ensure_tree() -> Path:
    """~/.cache/lint-h2d/vllm-0.33.0 (holding `vllm/`), downloading the wheel if needed."""
    root = CACHE / f"vllm-{VERSION}"
    if (root / "vllm").is_dir():
        return root
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(f"vllm-{VERSION}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        f"vllm=={VERSION}", "-d", str(wheels)], check=True)
        found = sorted(wheels.glob(f"vllm-{VERSION}-*.whl"))
    tmp = Path(tempfile.mkdtemp(dir=CACHE))
    with zipfile.ZipFile(found[0]) as wheel:
        for name in wheel.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                wheel.extract(name, tmp)
    os.replace(tmp, root)
    return root


def run(cmd: Sequence[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> Dict[str, object]:
    """Wall, CPU (user+sys of the whole process tree) and peak RSS (largest process), via wait4."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    out_chunks: List[bytes] = []
    # Read before waiting so a full pipe cannot block the child.
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    del out_chunks
    return {
        "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_mb": usage.ru_maxrss / 1024,
        "rc": proc.returncode, "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
    }


def lint(*args: str) -> List[str]:
    return [sys.executable, "-m", "lint_h2d", "check", *args]


PARSE_ALL = r"""
import os, sys, time
which = sys.argv[1]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk("vllm") for f in fs if f.endswith(".py"))
texts = [open(p, encoding="utf-8").read() for p in files]
if which == "libcst":
    import libcst
    parse = libcst.parse_module
else:
    import ast
    parse = ast.parse
t = time.perf_counter()
for text in texts:
    parse(text)
print(time.perf_counter() - t)
"""


def project_copy(tree: Path) -> Path:
    """A temporary project root holding a copy of `tree/vllm` and a `pyproject.toml`."""
    root = Path(tempfile.mkdtemp(prefix="lint-h2d-bench-project-"))
    shutil.copytree(tree / "vllm", root / "vllm")
    (root / "pyproject.toml").write_text('[project]\nname = "vllm-bench"\n')
    return root


def load() -> List[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parser-rounds", type=int, default=0, help="rounds of the bare-parser runs (slow; 0: none)")
    ap.add_argument("--json", default=str(REPO / "bench" / "results.json"))
    ap.add_argument("--skip-no-prefilter", action="store_true", help="skip the (slow) prefilter identity check")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--repo", default=str(REPO), help="the lint-h2d checkout to time (e.g. a baseline worktree)")
    args = ap.parse_args(argv)

    repo = Path(args.repo).resolve()
    root = project_copy(ensure_tree())
    env = dict(os.environ)
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # An installed package has its bytecode: compile it once, so no run pays for it.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "lint_h2d"), str(repo / "fixers")],
                   check=False, env=env, stdout=subprocess.DEVNULL)
    ruff = shutil.which("ruff")
    cache_dir = Path(tempfile.mkdtemp(prefix="lint-h2d-bench-cache-"))
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    common = ["-q", "--output-format", "concise", "--exit-zero", *jobs]

    cases: Dict[str, List[str]] = {
        "lint-h2d cold (--no-cache)": lint("vllm", "--no-cache", *common),
        "lint-h2d warm (cache primed)": lint("vllm", "--cache-dir", str(cache_dir), *common),
        "lint-h2d one file (pre-commit, warm)": lint(ONE_FILE, "--cache-dir", str(cache_dir), *common),
        "python -c pass": [sys.executable, "-c", "pass"],
        "ast.parse floor (every file, 1 process per core)": [sys.executable, "-c", PARSE_FLOOR],
    }
    if ruff:
        cases["ruff --no-cache (same tree)"] = [ruff, "check", "--no-cache", "--isolated", "--quiet", "--exit-zero", "vllm"]
    edited = "lint-h2d one file edited (pre-commit)"
    second = "lint-h2d another file edited, lines carried (pre-commit)"
    in_place = "lint-h2d one file edited in place, no fact changed (pre-commit)"
    after_edit = "lint-h2d tree after another file's edit (warm)"
    call_edit = "lint-h2d one file edited, a call of a project function added: resolved again (pre-commit)"
    after_call = "lint-h2d tree after that edit (warm)"
    unread_edit = "lint-h2d one file edited, a call of a name vLLM does not define added (pre-commit)"
    checkout = "lint-h2d fresh checkout, cache restored (CI)"
    results: Dict[str, List[Dict[str, object]]] = {
        name: [] for name in [*cases, edited, second, after_edit, call_edit, after_call, unread_edit, in_place, checkout]}
    one_path = root / ONE_FILE
    original = one_path.read_bytes()
    second_path = root / SECOND_FILE
    second_original = second_path.read_bytes()
    load_before = load()
    # Prime the cache and the project index (not timed); the stamps must be older than the
    # racy window (3 s) of the run that records them, as they are in a real checkout.
    time.sleep(3.5)
    primed = run(cases["lint-h2d warm (cache primed)"], root, env)

    def timed(r: int, name: str, cmd: Sequence[str]) -> None:
        results[name].append(run(cmd, root, env))
        print(f"round {r + 1}: {name}: {results[name][-1]['wall']:.2f} s wall, "
              f"{results[name][-1]['cpu']:.2f} s CPU (load {load()[0]})", file=sys.stderr)

    def restored(path: Path, data: bytes) -> None:
        """Put an edited file back and prime the cache again, untimed (the stamps older than
        the racy window first): the next case starts warm."""
        path.write_bytes(data)
        time.sleep(3.5)
        run(cases["lint-h2d warm (cache primed)"], root, env)

    for r in range(args.rounds):
        for name, cmd in cases.items():
            timed(r, name, cmd)
        one_path.write_bytes(f"# edited in round {r + 1}\n".encode() + original)
        timed(r, edited, cases["lint-h2d one file (pre-commit, warm)"])
        restored(one_path, original)
        second_path.write_bytes(f"# edited in round {r + 1}\n".encode() + second_original)
        timed(r, second, lint(SECOND_FILE, "--cache-dir", str(cache_dir), *common))
        timed(r, after_edit, cases["lint-h2d warm (cache primed)"])
        restored(second_path, second_original)
        one_path.write_bytes(_with_call(original))
        timed(r, call_edit, cases["lint-h2d one file (pre-commit, warm)"])
        timed(r, after_call, cases["lint-h2d warm (cache primed)"])
        restored(one_path, original)
        one_path.write_bytes(_with_call(original, UNREAD_CALL))
        timed(r, unread_edit, cases["lint-h2d one file (pre-commit, warm)"])
        restored(one_path, original)
        first, _, rest = original.partition(b"\n")
        assert first.startswith(b"#"), f"{ONE_FILE} no longer starts with a comment"
        one_path.write_bytes(first + f" (edited in round {r + 1})\n".encode() + rest)
        timed(r, in_place, cases["lint-h2d one file (pre-commit, warm)"])
        restored(one_path, original)
        shutil.copytree(root / "vllm", root / "vllm.checkout")
        shutil.rmtree(root / "vllm")
        os.rename(root / "vllm.checkout", root / "vllm")
        time.sleep(3.5)  # as a checkout made seconds before the job's step
        timed(r, checkout, cases["lint-h2d warm (cache primed)"])
        time.sleep(3.5)
    for which in ("ast", "libcst") if args.parser_rounds else ():
        name = f"{which}.parse of every file (1 process)"
        results[name] = []
        for _ in range(args.parser_rounds):
            results[name].append(run([sys.executable, "-c", PARSE_ALL, which], root, env))
            print(f"{name}: {results[name][-1]['wall']:.2f} s", file=sys.stderr)

    cold_out = str(results["lint-h2d cold (--no-cache)"][0]["stdout"])
    one_out = str(results["lint-h2d one file (pre-commit, warm)"][0]["stdout"])
    one_cold = run(lint(ONE_FILE, "--no-cache", *common), root, env)
    one_path.write_bytes(_with_call(original))  # the tree with the fact-changing edit, cold
    call_cold = run(lint("vllm", "--no-cache", *common), root, env)
    one_path.write_bytes(_with_call(original, UNREAD_CALL))
    unread_cold = run(lint(ONE_FILE, "--no-cache", *common), root, env)
    one_path.write_bytes(original)
    moved_down = "".join(_moved_by_one(line) + "\n" for line in cold_out.splitlines() if line.startswith(SECOND_FILE + ":"))
    checks: Dict[str, object] = {
        "cold == warm == primed": cold_out == results["lint-h2d warm (cache primed)"][0]["stdout"] == primed["stdout"],
        "fresh checkout == cold": all(x["stdout"] == cold_out for x in results[checkout]),
        "one file == its lines of the whole tree (warm and cold)":
            one_out == one_cold["stdout"] == "".join(
                line + "\n" for line in cold_out.splitlines() if line.startswith(ONE_FILE + ":")),
        # Its first line's comment changed in place: the stored resolved facts, the same findings.
        "one file edited in place == unchanged": all(x["stdout"] == one_out for x in results[in_place]),
        # A line inserted at its top: the whole tree's findings for it, one line further down.
        "another file edited == its lines of the whole tree, moved by one": all(x["stdout"] == moved_down for x in results[second]),
        # The tree scanned right after: the cold findings, that file's one line further down.
        "tree after another file's edit == cold, its lines moved by one": all(x["stdout"] == "".join(
            (_moved_by_one(line) if line.startswith(SECOND_FILE + ":") else line) + "\n"
            for line in cold_out.splitlines()) for x in results[after_edit]),
        # A call of a vLLM function added to ONE_FILE: its facts changed, the project resolved
        # again; the tree scanned right after equals a cold scan of that tree.
        "tree after a fact-changing edit == its cold scan": all(
            x["stdout"] == call_cold["stdout"] for x in results[after_call]),
        # A call of a name vLLM does not define: the stored facts carried, the file's findings
        # those of a run without any cache.
        "one file with a call nothing reads == its cold run": all(
            x["stdout"] == unread_cold["stdout"] for x in results[unread_edit]),
        "findings": sum(1 for line in cold_out.splitlines() if ": H2D" in line),
    }
    if not args.skip_no_prefilter:
        nopre = run(lint("vllm", "--no-cache", "--no-prefilter", *common), root, env)
        checks["prefilter == no prefilter"] = nopre["stdout"] == cold_out
        checks["no-prefilter wall"] = nopre["wall"]
    shutil.rmtree(cache_dir, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)

    summary = {}
    ruff_runs = results.get("ruff --no-cache (same tree)", [{"wall": float("nan"), "cpu": float("nan")}])
    ruff_wall = statistics.median(float(str(x["wall"])) for x in ruff_runs)
    ruff_cpu = statistics.median(float(str(x["cpu"])) for x in ruff_runs)
    for name, runs in results.items():
        wall = statistics.median(x["wall"] for x in runs)
        summary[name] = {
            "wall_median_s": round(wall, 3), "cpu_median_s": round(statistics.median(x["cpu"] for x in runs), 3),
            "peak_rss_mb": round(max(x["maxrss_mb"] for x in runs), 1), "rounds": len(runs),
            "x_ruff": round(wall / ruff_wall, 2) if ruff else None,
            "x_ruff_cpu": round(statistics.median(x["cpu"] for x in runs) / ruff_cpu, 2) if ruff else None,
            "walls": [round(x["wall"], 3) for x in runs],
        }
    cpu_model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), platform.processor())
    meta = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"), "nproc": os.cpu_count(),
        "cpu": cpu_model, "python": platform.python_version(), "load_before": load_before,
        "load_after": load(), "repo": str(repo),
        "ruff": subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout.strip() if ruff else None,
        "files": sum(1 for _ in ensure_tree().glob("vllm/**/*.py")),
    }
    print(f"\n{'case':40} {'wall s':>8} {'cpu s':>8} {'x ruff':>7} {'x cpu':>7} {'RSS MB':>7}")
    for name, row in summary.items():
        print(f"{name:40} {row['wall_median_s']:>8.2f} {row['cpu_median_s']:>8.2f} "
              f"{row['x_ruff'] if row['x_ruff'] is not None else '-':>7} "
              f"{row['x_ruff_cpu'] if row['x_ruff_cpu'] is not None else '-':>7} {row['peak_rss_mb']:>7.0f}")
    print("checks:", checks)
    print("machine:", meta)
    Path(args.json).write_text(json.dumps({"meta": meta, "summary": summary, "checks": checks}, indent=2))
    ok = bool(checks["cold == warm == primed"]) and bool(checks["one file == its lines of the whole tree (warm and cold)"]) \
        and bool(checks["fresh checkout == cold"]) and bool(checks["one file edited in place == unchanged"]) \
        and bool(checks["another file edited == its lines of the whole tree, moved by one"]) \
        and bool(checks["tree after another file's edit == cold, its lines moved by one"]) \
        and bool(checks["tree after a fact-changing edit == its cold scan"]) \
        and bool(checks["one file with a call nothing reads == its cold run"]) \
        and bool(checks.get("prefilter == no prefilter", True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
