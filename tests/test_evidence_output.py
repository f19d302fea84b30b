"""A finding's evidence (issue 17) in every output format and through the findings cache.

Findings are built by hand here, so these tests pin the renderers, not the inference: `full`
shows the chain as numbered notes, JSON / json-lines carry an `evidence` list, SARIF has
`relatedLocations`, a `codeFlows` path and the whole chain in `properties`, and still
validates against the 2.1.0 schema; `concise` and `github` stay one line.  A finding without
evidence renders exactly as before.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from fixers.edits import TextEdit
from lint_h2d.cache import Cache
from lint_h2d.engine import decode
from lint_h2d.findings import (
    Applicability,
    EvidenceKind,
    EvidenceStep,
    Finding,
    Fix,
    Location,
)
from lint_h2d.report import FORMATS, ReportContext, sarif
from lint_h2d.serialize import finding_from_cache, finding_to_cache
from tests.test_report_formats import RUFF_JSON_SCHEMA, _validate_sarif, _validator

SOURCE = "import torch\n\n\ndef build(meta):\n    meta.query_start_loc[0] = 0\n"


def _finding(evidence: tuple = ()) -> Finding:  # type: ignore[type-arg]
    return Finding(
        "H2D001", "Scalar write into one element of device tensor `meta.query_start_loc`",
        "pkg/builder.py", Location(5, 5), Location(5, 32),
        fix=Fix(Applicability.UNSAFE, "Use `meta.query_start_loc[0:1].zero_()`",
                (TextEdit((5, 4), (5, 31), "meta.query_start_loc[0:1].zero_()"),)),
        noqa_row=5, evidence=evidence,
    )


def _chain(meta: str) -> tuple:  # type: ignore[type-arg]
    return (
        EvidenceStep("`Pool.__init__` allocates `self.write_pos` with `device=device`", meta, 12, 9),
        EvidenceStep("`meta` is a parameter of type `Pool`", None, 4, 11),
        EvidenceStep("`query_start_loc` has a `_cpu` sibling in `CommonAttentionMetadata`",
                     meta, 20, None, EvidenceKind.CONVENTION),
        EvidenceStep("`*.query_start_loc` is in `device-hints`", kind=EvidenceKind.HINT),
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/builder.py").write_text(SOURCE)
    return tmp_path


def _render(fmt: str, findings: list) -> str:  # type: ignore[type-arg]
    return FORMATS[fmt](findings, ReportContext({"pkg/builder.py": SOURCE}, unsafe_fixes=True))


def test_full_shows_the_chain_as_notes(project: Path) -> None:
    plain = _render("full", [_finding()])
    shown = _render("full", [_finding(_chain("pkg/meta.py"))])
    head, caret_end = plain.split("\n  help: ")
    assert shown == head + "\n" + "\n".join([
        "  note: evidence:",
        "    1. pkg/meta.py:12:9: `Pool.__init__` allocates `self.write_pos` with `device=device`",
        "    2. pkg/builder.py:4:11: `meta` is a parameter of type `Pool`",
        "    3. pkg/meta.py:20: `query_start_loc` has a `_cpu` sibling in `CommonAttentionMetadata` [convention]",
        "    4. `*.query_start_loc` is in `device-hints` [hint]",
    ]) + "\n  help: " + caret_end
    # An absolute path below the current folder is shown relative, as the finding's is.
    absolute = _render("full", [_finding(_chain(str(project / "pkg/meta.py")))])
    assert absolute == shown
    # A message with a line break stays on its step's line.
    broken = _finding((EvidenceStep("allocated by\n    torch.zeros(...)", "pkg/meta.py", 3, 1),))
    assert "    1. pkg/meta.py:3:1: allocated by torch.zeros(...)\n" in _render("full", [broken])


def test_empty_chain_changes_nothing(project: Path) -> None:
    plain = _finding()
    assert _render("full", [plain]) == (
        "pkg/builder.py:5:5: H2D001 [*] Scalar write into one element of device tensor "
        "`meta.query_start_loc`\n"
        "5 |     meta.query_start_loc[0] = 0\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "  help: Use `meta.query_start_loc[0:1].zero_()` [unsafe fix (--unsafe-fixes)]\n\n"
    )
    assert set(json.loads(_render("json", [plain]))[0]) == set(RUFF_JSON_SCHEMA["required"])
    result = sarif.sarif_log([plain])["runs"][0]["results"][0]
    assert not {"relatedLocations", "codeFlows", "properties"} & set(result)
    # The one-line formats do not change with evidence either.
    for fmt in ("concise", "github"):
        assert _render(fmt, [_finding(_chain("pkg/meta.py"))]) == _render(fmt, [plain])


def test_json_and_json_lines_carry_the_chain(project: Path) -> None:
    finding = _finding(_chain("pkg/meta.py"))
    (data,) = json.loads(_render("json", [finding]))
    assert not list(_validator(RUFF_JSON_SCHEMA).iter_errors(data))
    meta, builder = str(project / "pkg/meta.py"), str(project / "pkg/builder.py")
    assert data["evidence"] == [
        {"message": "`Pool.__init__` allocates `self.write_pos` with `device=device`",
         "filename": meta, "location": {"row": 12, "column": 9}, "kind": "direct"},
        {"message": "`meta` is a parameter of type `Pool`",
         "filename": builder, "location": {"row": 4, "column": 11}, "kind": "direct"},
        {"message": "`query_start_loc` has a `_cpu` sibling in `CommonAttentionMetadata`",
         "filename": meta, "location": {"row": 20, "column": None}, "kind": "convention"},
        {"message": "`*.query_start_loc` is in `device-hints`",
         "filename": builder, "location": None, "kind": "hint"},
    ]
    lines = _render("json-lines", [finding, _finding()]).splitlines()
    assert [json.loads(line) for line in lines] == [data, json.loads(_render("json", [_finding()]))[0]]


def test_sarif_related_locations_and_code_flow(project: Path) -> None:
    finding = _finding(_chain("pkg/meta.py"))
    log = sarif.sarif_log([finding, _finding((_chain("pkg/meta.py")[0],))])
    assert _validate_sarif(log) == []
    chained, single = log["runs"][0]["results"]
    meta = {"uri": "pkg/meta.py", "uriBaseId": "%SRCROOT%"}
    builder = {"uri": "pkg/builder.py", "uriBaseId": "%SRCROOT%"}
    assert chained["relatedLocations"] == [
        {"id": 0, "physicalLocation": {"artifactLocation": meta, "region": {"startLine": 12, "startColumn": 9}},
         "message": {"text": "`Pool.__init__` allocates `self.write_pos` with `device=device`"}},
        {"id": 1, "physicalLocation": {"artifactLocation": builder, "region": {"startLine": 4, "startColumn": 11}},
         "message": {"text": "`meta` is a parameter of type `Pool`"}},
        {"id": 2, "physicalLocation": {"artifactLocation": meta, "region": {"startLine": 20}},
         "message": {"text": "`query_start_loc` has a `_cpu` sibling in `CommonAttentionMetadata` [convention]"}},
    ]
    (flow,) = chained["codeFlows"]
    steps = [loc["location"] for loc in flow["threadFlows"][0]["locations"]]
    assert [s["physicalLocation"]["region"]["startLine"] for s in steps] == [12, 4, 20, 5]
    assert steps[-1] == {"physicalLocation": chained["locations"][0]["physicalLocation"],
                         "message": chained["message"]}
    assert [e["kind"] for e in chained["properties"]["evidence"]] == ["direct", "direct", "convention", "hint"]
    # One located step is a related location, not a path.
    assert len(single["relatedLocations"]) == 1 and "codeFlows" not in single
    # A chain that ends at the finding itself does not repeat it.
    at_finding = _finding((*_chain("pkg/meta.py")[:1], EvidenceStep("written here", None, 5, 5)))
    (result,) = sarif.sarif_log([at_finding])["runs"][0]["results"]
    assert len(result["codeFlows"][0]["threadFlows"][0]["locations"]) == 2
    # Only a hint, no location: nothing located, the chain still in properties.
    (hint_only,) = sarif.sarif_log([_finding(_chain("pkg/meta.py")[3:])])["runs"][0]["results"]
    assert "relatedLocations" not in hint_only and len(hint_only["properties"]["evidence"]) == 1
    assert _validate_sarif(sarif.sarif_log([at_finding, _finding(_chain("pkg/meta.py")[3:])])) == []


def test_cache_round_trips_evidence(tmp_path: Path) -> None:
    finding = _finding(_chain(str(tmp_path / "pkg/meta.py")))
    assert finding_from_cache(json.loads(json.dumps(finding_to_cache(finding)))) == finding
    plain = _finding()
    assert finding_from_cache(json.loads(json.dumps(finding_to_cache(plain)))) == plain
    # A relative step path is stored absolute: another working folder reads the same file.
    relative = _finding(_chain("pkg/meta.py"))
    back = finding_from_cache(json.loads(json.dumps(finding_to_cache(relative))))
    assert back.evidence[0].path == os.path.abspath("pkg/meta.py")
    assert back == replace(relative, evidence=tuple(
        replace(s, path=None if s.path is None else os.path.abspath(s.path)) for s in relative.evidence
    ))
    # Through the cache file, as a warm run reads it.
    source = decode(str(tmp_path / "pkg/builder.py"), SOURCE.encode())
    cache = Cache(tmp_path / "c", "key")
    cache.put(source, [finding])
    cache.save()
    # Cached findings take the path spelling of the run that reads them (issue 16 item 6).
    assert Cache(tmp_path / "c", "key").get(source) == [replace(finding, path=source.path)]


def test_cache_written_before_evidence_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache written by the format before evidence would hand back findings without their
    chains: the format is part of the key, and it changed."""
    from lint_h2d import cache as cache_module

    source = decode(str(tmp_path / "builder.py"), SOURCE.encode())
    monkeypatch.setattr(cache_module, "FORMAT", 1)
    old = Cache(tmp_path / "c", "key")
    old.put(source, [_finding()])
    old.save()
    assert Cache(tmp_path / "c", "key").get(source) == [replace(_finding(), path=source.path)]
    monkeypatch.undo()
    assert Cache(tmp_path / "c", "key").get(source) is None


def test_local_steps_positioned_once_and_foreign_nodes_left_out() -> None:
    """`FileContext.evidence` (both rules and `explain` report through it): a local step is
    placed at its node's line and column in this file, a repeated step is shown once, and a
    step whose node this module does not hold is left out instead of failing the file (H2D001
    had its own copy that raised KeyError there, losing the file's findings)."""
    import libcst as cst

    from lint_h2d.config import Settings
    from lint_h2d.inference.values import LocalStep
    from lint_h2d.rules.base import FileContext

    module = cst.parse_module(SOURCE)
    statement = module.body[1].body.body[0]  # type: ignore[attr-defined]
    foreign = cst.parse_module("x = 1\n").body[0]
    earlier = EvidenceStep("allocated on the device here", "pkg/other.py", 3, 1, EvidenceKind.DIRECT)
    ctx = FileContext("pkg/builder.py", module, SOURCE, Settings())
    steps = ctx.evidence([earlier, LocalStep("written here", statement), foreign,
                          LocalStep("nowhere in this file", foreign), earlier,
                          LocalStep("written here", statement)])
    assert steps == (earlier, EvidenceStep("written here", None, 5, 5, EvidenceKind.DIRECT))
