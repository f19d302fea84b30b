"""The `check` command as a user runs it: real processes, real exit codes, real files."""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli

FLAGGED = textwrap.dedent(
    """\
    import torch


    def build(n, device):
        cu = torch.empty(n + 1, dtype=torch.int32, device=device)
        cu[0] = 0
        return cu
    """
)
CLEAN = "import torch\n\nx = torch.zeros(3)\nx[0] = 1\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_exit_codes(tmp_path: Path) -> None:
    write(tmp_path, "clean.py", CLEAN)
    assert run_cli("check", "--no-cache", "clean.py", cwd=tmp_path).returncode == 0
    write(tmp_path, "bad.py", FLAGGED)
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert run_cli("check", "--no-cache", "--exit-zero", ".", cwd=tmp_path).returncode == 0
    usage = run_cli("check", "--output-format", "nope", cwd=tmp_path)
    assert usage.returncode == 2 and "invalid choice" in usage.stderr


def test_full_output_has_location_source_caret_and_fix_hint(tmp_path: Path) -> None:
    write(tmp_path, "pkg/bad.py", FLAGGED)
    out = run_cli("check", "--no-cache", "pkg", cwd=tmp_path).stdout
    lines = out.splitlines()
    assert lines[0].startswith("pkg/bad.py:6:5: H2D001 [*] Scalar write into one element of device tensor `cu`")
    assert lines[1] == "6 |     cu[0] = 0"
    assert lines[2] == "        ^^^^^^^^^"
    # The evidence chain comes as notes, then the fix hint.
    assert lines[3] == "  note: evidence:"
    assert lines[4] == ("    1. pkg/bad.py:5:10: allocated on `device` here (`torch.empty(..., device=...)`): nothing in "
                        "the project proves where `device` points, and a `device=` that is not provably the CPU is "
                        "taken to be the accelerator")
    assert "help: Use `cu[0].zero_()` under `if torch.version.hip is not None:` [safe fix]" in lines[6]
    assert "Found 1 error." in out


def test_concise_output(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", FLAGGED)
    out = run_cli("check", "--no-cache", "--output-format", "concise", "-q", ".", cwd=tmp_path).stdout
    assert out.splitlines() == [
        "bad.py:6:5: H2D001 [*] Scalar write into one element of device tensor `cu` (`cu[0] = ...`): "
        "a host-to-device copy that blocks the host until the stream drains; use `cu[0].zero_()`"
    ]


def test_json_output_uses_ruff_field_names(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.py", FLAGGED)
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert len(data) == 1
    item = data[0]
    assert set(item) == {"code", "message", "filename", "location", "end_location", "fix", "noqa_row", "url",
                         "evidence"}
    assert item["evidence"][0]["location"] == {"row": 5, "column": 10}
    assert item["filename"] == str(path.resolve())
    assert item["location"] == {"row": 6, "column": 5}
    assert item["end_location"] == {"row": 6, "column": 14}
    assert item["noqa_row"] == 6
    assert item["fix"]["applicability"] == "safe"
    edits = item["fix"]["edits"]
    assert any("cu[0].zero_()" in e["content"] for e in edits)
    assert any(e["content"] == "import torch\n" for e in edits) is False  # torch already imported


def test_select_and_ignore(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", FLAGGED)
    assert run_cli("check", "--no-cache", "--select", "H2D002", ".", cwd=tmp_path).returncode == 0
    assert run_cli("check", "--no-cache", "--ignore", "H2D001", ".", cwd=tmp_path).returncode == 0
    assert run_cli("check", "--no-cache", "--select", "H2D", ".", cwd=tmp_path).returncode == 1


def test_statistics(tmp_path: Path) -> None:
    write(tmp_path, "a.py", FLAGGED)
    write(tmp_path, "b.py", FLAGGED)
    out = run_cli("check", "--no-cache", "--statistics", ".", cwd=tmp_path).stdout
    assert "    2\tH2D001\t[*] scalar-write-to-device-tensor" in out


def test_rule_command_prints_ruff_sections() -> None:
    out = run_cli("rule", "H2D001").stdout
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert section in out
    listing = run_cli("rule", "--all").stdout.splitlines()
    assert [line.split()[0] for line in listing] == ["H2D001", "H2D002", "H2D003", "H2D004"]
    assert run_cli("rule", "H2D999").returncode == 2


def test_rule_command_explains_the_diagnostic_codes(tmp_path: Path) -> None:
    """H2D900-H2D902 name no rule but appear in the output like findings: `lint-h2d rule CODE`
    says what each means (it answered "unknown rule"); the listing of rules is unchanged."""
    write(tmp_path, "bad.py", "def f(:\n")
    seen = run_cli("check", "--no-cache", "--output-format", "concise", "bad.py", cwd=tmp_path).stdout
    assert "H2D901" in seen
    for code, words in (("H2D900", "could not be read"), ("h2d901", "does not parse"),
                        ("H2D902", "a bug in lint-h2d")):
        done = run_cli("rule", code)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"# {code.upper()} (") and words in done.stdout
        assert "exits 2" in done.stdout
    assert run_cli("rule", "H2D903").returncode == 2


def test_config_from_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\nignore = ["H2D001"]\n')
    write(tmp_path, "src/bad.py", FLAGGED)
    assert run_cli("check", "--no-cache", "src", cwd=tmp_path).returncode == 0


def test_per_file_ignores(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\nper-file-ignores = { "legacy/*" = ["H2D001"] }\n')
    write(tmp_path, "legacy/old.py", FLAGGED)
    write(tmp_path, "new/bad.py", FLAGGED)
    out = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout
    assert "new/bad.py:6:5" in out and "legacy" not in out


@pytest.mark.parametrize(
    "toml,needle",
    [
        ('[tool.lint-h2d]\nselekt = ["H2D"]\n', "unknown key `selekt`"),
        ('[tool.lint-h2d]\nselect = "H2D"\n', "`select` must be a list of strings"),
        ('[tool.lint-h2d]\nfix-gate = "rocm"\n', "`fix-gate` must be one of"),
        ('[tool.lint-h2d\nselect = []\n', "malformed TOML"),
        # A bad gate import is a config error when the config is read (issue 15 item 15), not a
        # traceback, nor an H2D902 in every file.
        ('[tool.lint-h2d]\nfix-gate = { test = "is_hip()", import = "x = 1" }\n', "fix-gate] `import`"),
        ('[tool.lint-h2d]\nfix-gate = { test = "is_hip()", import = "import os; import sys" }\n',
         "fix-gate] `import`"),
        ('[tool.lint-h2d]\nfix-gate = { test = "is_hip()", import = "from x import *" }\n',
         "fix-gate] `import` must name what it imports"),
        ('[tool.lint-h2d]\nfix-gate = { test = "is_hip(", import = "import x" }\n', "fix-gate] `test`"),
    ],
)
def test_bad_config_exits_2_naming_file_and_key(tmp_path: Path, toml: str, needle: str) -> None:
    write(tmp_path, "pyproject.toml", toml)
    write(tmp_path, "bad.py", FLAGGED)
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert needle in result.stderr and "pyproject.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_internal_error_exits_2_without_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    """Exit 1 means "findings"; a crash of lint-h2d itself must not look like that (ruff: 2)."""
    from lint_h2d import cli

    write(tmp_path, "bad.py", FLAGGED)

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "discover", boom)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "."]) == 2
    err = capsys.readouterr().err
    assert "internal error" in err and "RuntimeError: boom" in err and "Traceback" not in err


def test_default_excludes_tests_but_explicit_files_are_checked(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_x.py", FLAGGED)
    write(tmp_path, "pkg/test_y.py", FLAGGED)
    write(tmp_path, "pkg/conftest.py", FLAGGED)
    write(tmp_path, ".venv/lib/z.py", FLAGGED)
    write(tmp_path, "build/lib/w.py", FLAGGED)
    assert run_cli("check", "--no-cache", ".", cwd=tmp_path).returncode == 0
    assert run_cli("check", "--no-cache", "tests/test_x.py", cwd=tmp_path).returncode == 1


def test_gitignore_and_extend_exclude(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "generated/\n*_pb2.py\n")
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\nextend-exclude = ["third_party"]\n')
    write(tmp_path, "generated/a.py", FLAGGED)
    write(tmp_path, "pkg/x_pb2.py", FLAGGED)
    write(tmp_path, "third_party/lib.py", FLAGGED)
    write(tmp_path, "pkg/sub/.gitignore", "local.py\n")
    write(tmp_path, "pkg/sub/local.py", FLAGGED)
    write(tmp_path, "pkg/real.py", FLAGGED)
    out = run_cli("check", "--no-cache", "--output-format", "concise", "-q", ".", cwd=tmp_path).stdout
    assert [line.split(":")[0] for line in out.splitlines()] == ["pkg/real.py"]


def test_include_narrows_the_scan(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\ninclude = ["*attention*"]\n')
    write(tmp_path, "pkg/attention_backend.py", FLAGGED)
    write(tmp_path, "pkg/other.py", FLAGGED)
    out = run_cli("check", "--no-cache", "--output-format", "concise", "-q", ".", cwd=tmp_path).stdout
    assert [line.split(":")[0] for line in out.splitlines()] == ["pkg/attention_backend.py"]


def test_syntax_error_is_a_diagnostic_and_scan_continues(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "def f(:\n    pass\n")
    write(tmp_path, "bad.py", FLAGGED)
    result = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "broken.py:1:" in result.stdout and "H2D901" in result.stdout
    assert "bad.py:6:5: H2D001" in result.stdout


def test_missing_path_is_reported_and_scan_continues(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", FLAGGED)
    result = run_cli("check", "--no-cache", "--output-format", "concise", "nope.py", "bad.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "nope.py" in result.stdout and "No such file" in result.stdout
    assert "bad.py:6:5: H2D001" in result.stdout


def test_rule_crash_is_isolated(tmp_path: Path) -> None:
    """A rule raising on one file is an internal error for that file; other findings stay."""
    from lint_h2d.config import Settings
    from lint_h2d.engine import INTERNAL_ERROR, Engine
    from lint_h2d.inference.project import collect
    from lint_h2d.rules import all_rules
    from lint_h2d.rules.base import Rule

    class Exploding(Rule):
        code = "H2D099"
        name = "exploding"
        summary = "raises"
        doc = all_rules()[0].doc

        def wants(self, small):  # type: ignore[no-untyped-def]
            return True

        def check(self, facts, ctx):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    engine = Engine(Settings(root=tmp_path), collect([FLAGGED]), rules=[*all_rules(), Exploding()])
    findings = engine.analyze("x.py", FLAGGED)
    codes = [f.code for f in findings]
    assert "H2D001" in codes and INTERNAL_ERROR in codes
    crash = next(f for f in findings if f.code == INTERNAL_ERROR)
    assert "H2D099" in crash.message and "boom" in crash.message


def test_noqa_on_any_line_of_a_multiline_statement(tmp_path: Path) -> None:
    text = FLAGGED.replace("cu[0] = 0", "cu[\n        0\n    ] = 0  # noqa: H2D001")
    write(tmp_path, "a.py", text)
    assert run_cli("check", "--no-cache", ".", cwd=tmp_path).returncode == 0
    write(tmp_path, "a.py", FLAGGED.replace("cu[0] = 0", "cu[0] = 0  # noqa: H2D002"))
    assert run_cli("check", "--no-cache", ".", cwd=tmp_path).returncode == 1


def test_python_m_entry_point(tmp_path: Path) -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("lint-h2d ")


def test_paths_relative_to_cwd(tmp_path: Path) -> None:
    write(tmp_path, "a/b/bad.py", FLAGGED)
    out = run_cli("check", "--no-cache", "--output-format", "concise", "-q", str(tmp_path / "a"), cwd=tmp_path / "a").stdout
    assert out.startswith("b/bad.py:6:5:"), out
    assert os.path.isabs(json.loads(run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path / "a").stdout)[0]["filename"])


def test_force_exclude_applies_excludes_to_named_files(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_x.py", FLAGGED)
    write(tmp_path, "pkg/bad.py", FLAGGED)
    assert run_cli("check", "--no-cache", "tests/test_x.py", cwd=tmp_path).returncode == 1
    assert run_cli("check", "--no-cache", "--force-exclude", "tests/test_x.py", cwd=tmp_path).returncode == 0
    assert run_cli("check", "--no-cache", "--force-exclude", "tests/test_x.py", "pkg/bad.py", cwd=tmp_path).returncode == 1


def test_the_repository_checks_itself_clean() -> None:
    """Dogfood: lint-h2d's own code (fixtures, examples and benchmarks excluded by its
    pyproject) has nothing to report and nothing it cannot check."""
    result = run_cli("check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_capture_functions_setting(tmp_path: Path) -> None:
    body = (
        "def warmup_graphs(meta):\n    meta.seq_lens_cpu.zero_()\n\n\n"
        "def build_for_cudagraph_capture(meta):\n    meta.seq_lens_cpu.zero_()\n"
    )
    write(tmp_path, "a.py", body)
    default = run_cli("check", "--no-cache", "--output-format", "concise", "-q", "a.py", cwd=tmp_path).stdout
    assert [line.split(":")[1] for line in default.splitlines()] == ["6"]
    write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\ncapture-functions = ["warmup_*"]\n')
    custom = run_cli("check", "--no-cache", "--output-format", "concise", "-q", "a.py", cwd=tmp_path).stdout
    assert [line.split(":")[1] for line in custom.splitlines()] == ["2"]


@pytest.mark.parametrize("command", [["check", "--no-cache", "--output-format", "full", "big.py"],
                                     ["explain", "big.py"]])
def test_a_reader_that_goes_away_stops_the_output_quietly(tmp_path: Path, command: list) -> None:
    """`lint-h2d explain big.py | head`: once the reader closes the pipe, the process stops with
    the shell's SIGPIPE status (141) and no traceback or error line, rather than a
    `BrokenPipeError` traceback (or `error: None: Broken pipe`)."""
    import subprocess
    import sys

    from tests.conftest import REPO

    lines = ["import torch", "", "", "def f(n: int) -> None:", "    t = torch.zeros(n, device='cuda')"]
    lines += [f"    t[{i}] = {i}" for i in range(1500)]  # far more output than a pipe holds
    (tmp_path / "big.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "lint_h2d", *command], cwd=str(tmp_path), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(200)  # some output came, then the reader goes away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == 141, err
    assert "Traceback" not in err and "Broken pipe" not in err, err
