"""Findings ⇄ plain dicts (the JSON report's shape, reused by the cache)."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from fixers.edits import TextEdit
from lint_h2d.findings import Applicability, EvidenceKind, EvidenceStep, Finding, Fix, Location

RULE_URL = "https://github.com/lint-h2d/lint-h2d#{code}"


def _edit_to_dict(edit: TextEdit) -> Dict[str, Any]:
    # ruff's edit shape: 1-based row, 1-based column.
    return {
        "content": edit.text,
        "location": {"row": edit.start[0], "column": edit.start[1] + 1},
        "end_location": {"row": edit.end[0], "column": edit.end[1] + 1},
    }


def _edit_from_dict(data: Dict[str, Any]) -> TextEdit:
    return TextEdit(
        (data["location"]["row"], data["location"]["column"] - 1),
        (data["end_location"]["row"], data["end_location"]["column"] - 1),
        data["content"],
    )


def evidence_to_dict(step: EvidenceStep, finding_path: str) -> Dict[str, Any]:
    """One step of a finding's evidence for JSON, json-lines and SARIF's property bag.

    `filename` is absolute like the finding's (a step without a path is in the finding's own
    file); `location` is null when the step has no row (a fact about a name, a setting)."""
    location = None if step.row is None else {"row": step.row, "column": step.column}
    return {
        "message": step.message,
        "filename": os.path.abspath(step.path if step.path is not None else finding_path),
        "location": location,
        "kind": step.kind.value,
    }


def finding_to_dict(finding: Finding, url: Optional[str] = None) -> Dict[str, Any]:
    """ruff's JSON object, plus `evidence` (a list of `evidence_to_dict`) when the rule
    recorded why it believes the finding; a finding without evidence keeps ruff's shape."""
    fix = None
    if finding.fix is not None:
        fix = {
            "applicability": finding.fix.applicability.value,
            "message": finding.fix.message,
            "edits": [_edit_to_dict(e) for e in finding.fix.edits],
        }
    data: Dict[str, Any] = {
        "code": finding.code,
        "message": finding.message,
        "filename": os.path.abspath(finding.path),
        "location": {"row": finding.location.row, "column": finding.location.column},
        "end_location": {"row": finding.end_location.row, "column": finding.end_location.column},
        "fix": fix,
        "noqa_row": finding.noqa_row,
        "url": url,
    }
    if finding.evidence:
        data["evidence"] = [evidence_to_dict(e, finding.path) for e in finding.evidence]
    return data


def finding_to_cache(finding: Finding) -> Dict[str, Any]:
    data = finding_to_dict(finding)
    data["filename"] = finding.path
    data["no_fix_reason"] = finding.no_fix_reason
    data["details"] = [list(pair) for pair in finding.details]
    # Exactly what the rule recorded (a step's path stays None for the finding's own file),
    # made absolute so that a run from another folder reads the same file.
    data["evidence"] = [
        [e.message, None if e.path is None else os.path.abspath(e.path), e.row, e.column, e.kind.value]
        for e in finding.evidence
    ]
    return data


def finding_from_cache(data: Dict[str, Any]) -> Finding:
    fix = None
    if data["fix"] is not None:
        fix = Fix(
            Applicability(data["fix"]["applicability"]),
            data["fix"]["message"],
            tuple(_edit_from_dict(e) for e in data["fix"]["edits"]),
        )
    return Finding(
        code=data["code"],
        message=data["message"],
        path=data["filename"],
        location=Location(**data["location"]),
        end_location=Location(**data["end_location"]),
        fix=fix,
        no_fix_reason=data.get("no_fix_reason"),
        noqa_row=data.get("noqa_row"),
        details=tuple((k, v) for k, v in data.get("details", [])),
        evidence=tuple(
            EvidenceStep(message, path, row, column, EvidenceKind(kind))
            for message, path, row, column, kind in data.get("evidence", [])
        ),
    )


def findings_from_cache(items: List[Dict[str, Any]]) -> List[Finding]:
    return [finding_from_cache(item) for item in items]
