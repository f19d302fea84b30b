"""The built-in matrix: every index form × value × rank, rewritten by the real fixer.

Why call the fixer here: the matrix must test what users get.  Each statement is parsed with
LibCST and handed to ``fixers.device_zero.device_zero_form`` and
``fixers.platform_gate.gated_statement``; nothing re-spells the rewrite.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

import libcst as cst

from fixers.device_zero import DeviceZero, device_zero_form
from fixers.platform_gate import TORCH_HIP_GATE, VLLM_GATE, gated_statement

INDEX_FORMS_1D: Tuple[str, ...] = ("0", "2", "-1", "-2", "i")
INDEX_FORMS_2D: Tuple[str, ...] = INDEX_FORMS_1D + ("i, j",)
VALUES: Tuple[str, ...] = ("0", "7", "2.5", "-0.0", "True", "False")


@dataclass(frozen=True)
class MatrixEntry:
    rank: int
    original: str
    bare: str  # the fixer's un-gated device form
    gated: Tuple[str, ...]  # the same inside each platform gate

    @property
    def label(self) -> str:
        return f"matrix rank {self.rank}"


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip("\n")


def fixer_forms(statement: str) -> Tuple[str, Tuple[str, ...]]:
    """``T[I] = V`` → (bare device form, gated forms) as the fixer writes them."""
    line = cst.parse_statement(statement)
    assert isinstance(line, cst.SimpleStatementLine)
    assign = line.body[0]
    assert isinstance(assign, cst.Assign)
    form = device_zero_form(assign.targets[0].target, assign.value)
    if not isinstance(form, DeviceZero):
        raise ValueError(f"the fixer declines {statement!r}: {form.reason}")
    bare = _code(cst.SimpleStatementLine(body=[cst.Expr(value=form.call)]))
    gated = tuple(_code(gated_statement(line, form.call, gate)) for gate in (VLLM_GATE, TORCH_HIP_GATE))
    return bare, gated


def entries() -> List[MatrixEntry]:
    out: List[MatrixEntry] = []
    for rank, forms in ((1, INDEX_FORMS_1D), (2, INDEX_FORMS_2D)):
        for index in forms:
            for value in VALUES:
                statement = f"t[{index}] = {value}"
                bare, gated = fixer_forms(statement)
                out.append(MatrixEntry(rank, statement, bare, gated))
    return out
