"""Platform-gated rewrites: the device form on one platform, the original line elsewhere.

Why: upstream projects accept the faster form on ROCm (where the blocking copy was measured)
while keeping the CUDA path byte-for-byte unchanged.  vLLM's accepted fix reads::

    if current_platform.is_rocm():
        prefill_cu_seqlens_k[:1].zero_()
    else:
        prefill_cu_seqlens_k[0] = 0

This module only builds that ``if``; :mod:`fixers.statements` turns it into text and
:mod:`fixers.imports` adds the import the gate needs.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

import libcst as cst

__all__ = ["Gate", "VLLM_GATE", "TORCH_HIP_GATE", "gated_statement", "parse_gate_test", "matches_gate"]


def parse_gate_test(test: str) -> cst.BaseExpression:
    """Parse a gate condition, turning LibCST's syntax error into a ``ValueError``."""
    try:
        return cst.parse_expression(test)
    except cst.ParserSyntaxError as exc:
        raise ValueError(f"gate test {test!r} is not a Python expression: {exc.message}") from None


def _check_import_line(import_line: str) -> None:
    try:
        statement = cst.parse_statement(import_line)
    except cst.ParserSyntaxError as exc:
        raise ValueError(f"gate import {import_line!r} is not a Python statement: {exc.message}") from None
    if not (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))
        and "\n" not in import_line.strip()
    ):
        raise ValueError(f"gate import {import_line!r} must be a single one-line import statement")


@dataclass(frozen=True)
class Gate:
    """A condition true on the platform that gets the device form, and the import it needs.

    Both strings are validated on construction (``ValueError``), so a bad configured gate
    fails when the configuration is read rather than when the first fix is rendered.
    """

    test: str
    import_line: Optional[str]

    def __post_init__(self) -> None:
        parse_gate_test(self.test)
        if self.import_line is not None:
            _check_import_line(self.import_line)


VLLM_GATE = Gate("current_platform.is_rocm()", "from vllm.platforms import current_platform")
TORCH_HIP_GATE = Gate("torch.version.hip is not None", "import torch")


def gated_statement(original: cst.SimpleStatementLine, device_call: cst.Call, gate: Gate) -> cst.If:
    """``if <gate.test>: <device_call>`` ``else: <original>``.

    The original line goes into ``else`` unchanged (same code, same trailing comment); its
    leading lines (blank lines and comments above it) move onto the ``if`` so they stay above
    the whole construct.
    """
    test = parse_gate_test(gate.test)
    return cst.If(
        test=test,
        body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Expr(value=device_call)])]),
        orelse=cst.Else(body=cst.IndentedBlock(body=[original.with_changes(leading_lines=())])),
        leading_lines=original.leading_lines,
    )


def _normalised(code: str) -> str:
    return ast.dump(ast.parse(code.strip(), mode="eval"))


def matches_gate(test: cst.BaseExpression, gate: Gate) -> bool:
    """Whether an ``if`` test is ``gate.test`` (ignoring spacing, comments and parentheses).

    Why: after a gated fix the original line still sits in the ``else`` branch; a rule uses
    this to recognise the gate and not report (or re-fix) that line.
    """
    try:
        return _normalised(cst.Module([]).code_for_node(test)) == _normalised(gate.test)
    except SyntaxError:
        return False
