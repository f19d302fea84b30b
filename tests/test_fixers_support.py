"""Shared helpers for the ``fixers`` tests (plus a check of the package's import boundary).

The helpers locate a statement the way a rule does (LibCST metadata over the parsed module)
so the tests drive the fixers with exactly the inputs the engine will give them.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Tuple, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from fixers.edits import Position, TextEdit, apply_edits

FIXERS_DIR = Path(__file__).resolve().parent.parent / "fixers"


@dataclass(frozen=True)
class Located:
    """A small statement and everything a fixer needs to know about where it stands."""

    module: cst.Module
    source: str
    parent: Union[cst.SimpleStatementLine, cst.SimpleStatementSuite]
    small: cst.BaseSmallStatement
    parent_start: Position
    parent_end: Position
    small_start: Position
    small_end: Position
    block: Union[cst.IndentedBlock, cst.Module, None]


def locate(source: str, line: int, index: int = 0) -> Located:
    """The ``index``-th small statement of the statement line/suite that starts on ``line``."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    for node, span in positions.items():
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and span.start.line == line:
            small = node.body[index]
            parent_block = parents[node] if isinstance(node, cst.SimpleStatementLine) else None
            assert parent_block is None or isinstance(parent_block, (cst.IndentedBlock, cst.Module))
            small_span = positions[small]
            return Located(
                module=wrapper.module,
                source=source,
                parent=node,
                small=small,
                parent_start=(span.start.line, span.start.column),
                parent_end=(span.end.line, span.end.column),
                small_start=(small_span.start.line, small_span.start.column),
                small_end=(small_span.end.line, small_span.end.column),
                block=parent_block,
            )
    raise AssertionError(f"no simple statement starts on line {line}")


def assign_parts(located: Located) -> Tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]:
    assert isinstance(located.small, cst.Assign)
    return located.small.targets[0].target, located.small.value


def apply(source: str, edits: Iterable[TextEdit]) -> str:
    out = apply_edits(source, edits)
    compile(out, "<fixed>", "exec")  # every fix must leave valid Python
    return out


def vllm_file(relative: str) -> str:
    """A file of the vLLM 0.33.0 tree (`vllm/RELATIVE`), read byte-exact.

    The wheel is downloaded and extracted on demand by the one shared corpus helper, so the
    result does not depend on which test ran first; without network the test is skipped.
    """
    from tests.corpus import corpus_tree

    return (corpus_tree("vllm", "0.33.0", "vllm") / "vllm" / relative).read_bytes().decode("utf-8")


def _imported_roots(path: Path) -> Iterable[Tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                continue  # relative: inside fixers
            assert node.module is not None
            yield node.module.split(".")[0], node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            raise AssertionError(f"{path}:{node.lineno}: dynamic import")


def _is_stdlib(root: str) -> bool:
    names = getattr(sys, "stdlib_module_names", None)  # 3.10+
    if names is not None:
        return root in names
    spec = importlib.util.find_spec(root)
    if spec is None:
        return False
    if spec.origin in ("built-in", "frozen"):
        return True
    stdlib_dir = sysconfig.get_paths()["stdlib"]
    return spec.origin is not None and spec.origin.startswith(stdlib_dir) and "site-packages" not in spec.origin


def test_fixers_import_only_libcst_and_stdlib() -> None:
    """``fixers`` is reusable without the linter: it imports libcst, the stdlib and itself."""
    sources = sorted(FIXERS_DIR.glob("*.py"))
    assert sources, "fixers package not found"
    for path in sources:
        for root, line in _imported_roots(path):
            assert root != "lint_h2d", f"{path.name}:{line} imports lint_h2d"
            # tomli: the stdlib's tomllib before Python 3.11 (a declared dependency there).
            allowed = root in ("libcst", "fixers", "__future__", "tomli") or _is_stdlib(root)
            assert allowed, f"{path.name}:{line} imports {root!r}, which is neither libcst nor stdlib"


def test_import_scan_sees_lint_h2d(tmp_path: Path) -> None:
    """The boundary check above would notice a forbidden import (absolute or from-import)."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nfrom lint_h2d.rules import x\ndef f():\n    import lint_h2d\n", encoding="utf-8")
    assert [root for root, _ in _imported_roots(probe)] == ["os", "lint_h2d", "lint_h2d"]
