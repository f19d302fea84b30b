"""SARIF 2.1.0, the format GitHub code scanning and most SAST dashboards ingest.

One run; the driver lists every rule with its documentation (`lint-h2d rule CODE`), each
finding is a result with a physical location relative to the current directory
(`%SRCROOT%`), and a finding's fix becomes a SARIF fix (replacements of regions).  Its
evidence becomes `relatedLocations` (the steps with a location), a `codeFlows` thread flow
ending at the finding (when two or more steps have one: a path a viewer can step through),
and, whole, the result's `properties.evidence` (the JSON report's objects, so that steps
without a location are not lost).
Columns count Unicode code points (`columnKind`), as Python's string indices do.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence
from urllib.parse import quote

from lint_h2d import __version__
from lint_h2d.findings import EvidenceKind, EvidenceStep, Finding
from lint_h2d.serialize import RULE_URL, evidence_to_dict

if TYPE_CHECKING:
    from lint_h2d.report import ReportContext

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/lint-h2d/lint-h2d"
SRCROOT = "%SRCROOT%"


def artifact_location(path: str) -> Dict[str, Any]:
    """Relative to the current directory when below it (uriBaseId %SRCROOT%), else absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        rel = absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        try:
            rel = absolute.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return {"uri": absolute.as_uri()}  # percent-encodes the name's bytes
    # The name's bytes, percent-encoded: undecodable ones too (`%FF`), so the URI is exact.
    return {"uri": quote(os.fsencode(rel)), "uriBaseId": SRCROOT}


def _rule_descriptor(rule: Any) -> Dict[str, Any]:
    doc = rule.doc.render(rule.code, rule.name)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc.what.strip()},
        "help": {"text": doc, "markdown": doc},
        "helpUri": RULE_URL.format(code=rule.code),
        "defaultConfiguration": {"level": "error"},
    }


def _region(row: int, column: int, end_row: int, end_column: int) -> Dict[str, int]:
    return {"startLine": row, "startColumn": column, "endLine": end_row, "endColumn": end_column}


def _step_location(step: EvidenceStep, finding: Finding) -> Optional[Dict[str, Any]]:
    """A SARIF location for a step that has one (a row; a step without a path is in the
    finding's file), with the step's message; None for a step without a row."""
    if step.row is None:
        return None
    region: Dict[str, int] = {"startLine": step.row}
    if step.column is not None:
        region["startColumn"] = step.column
    text = step.message if step.kind == EvidenceKind.DIRECT else f"{step.message} [{step.kind.value}]"
    return {
        "physicalLocation": {
            "artifactLocation": artifact_location(step.path if step.path is not None else finding.path),
            "region": region,
        },
        "message": {"text": text},
    }


def _same_start(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    pa, pb = a["physicalLocation"], b["physicalLocation"]
    return bool(pa["artifactLocation"] == pb["artifactLocation"]
                and pa["region"]["startLine"] == pb["region"]["startLine"]
                and pa["region"].get("startColumn") in (None, pb["region"].get("startColumn")))


def _evidence(finding: Finding, result: Dict[str, Any]) -> None:
    """Steps with a location → relatedLocations; two or more → a code flow; all → properties."""
    located = [loc for loc in (_step_location(s, finding) for s in finding.evidence) if loc is not None]
    if located:
        result["relatedLocations"] = [dict(loc, id=i) for i, loc in enumerate(located)]
    if len(located) > 1:
        # The path ends where the finding is, with its message.
        end = {"physicalLocation": result["locations"][0]["physicalLocation"],
               "message": {"text": finding.message}}
        steps = located if _same_start(located[-1], end) else [*located, end]
        result["codeFlows"] = [{"threadFlows": [{"locations": [{"location": loc} for loc in steps]}]}]
    if finding.evidence:
        result["properties"] = {"evidence": [evidence_to_dict(s, finding.path) for s in finding.evidence]}


def _result(finding: Finding, index: Dict[str, int]) -> Dict[str, Any]:
    where = artifact_location(finding.path)
    result: Dict[str, Any] = {
        "ruleId": finding.code,
        "level": "error",
        "message": {"text": finding.message},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": where,
                "region": _region(finding.location.row, finding.location.column,
                                  finding.end_location.row, finding.end_location.column),
            }
        }],
    }
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    if finding.fix is not None:
        result["fixes"] = [{
            "description": {"text": finding.fix.message},
            "artifactChanges": [{
                "artifactLocation": dict(where),
                "replacements": [
                    {
                        # TextEdit columns are 0-based; SARIF's are 1-based.
                        "deletedRegion": _region(e.start[0], e.start[1] + 1, e.end[0], e.end[1] + 1),
                        "insertedContent": {"text": e.text},
                    }
                    for e in finding.fix.edits
                ],
            }],
            "properties": {"applicability": finding.fix.applicability.value},
        }]
    _evidence(finding, result)
    return result


def sarif_log(findings: Sequence[Finding]) -> Dict[str, Any]:
    from lint_h2d.rules import all_rules  # the rules import LibCST: only SARIF needs their docs

    rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    cwd_uri = Path.cwd().resolve().as_uri().rstrip("/") + "/"
    run: Dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "lint-h2d",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_descriptor(r) for r in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": cwd_uri}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index) for f in findings],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(findings: Sequence[Finding], ctx: "ReportContext") -> str:
    return json.dumps(sarif_log(findings), indent=2) + "\n"


__all__: List[str] = ["render", "sarif_log", "artifact_location"]
