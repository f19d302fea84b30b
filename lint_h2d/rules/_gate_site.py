"""The platform gate as it must be spelled at one statement, and where its import goes.

Why: the configured gate (``current_platform.is_rocm()``, ``torch.version.hip is not None``) is
text; where it is pasted decides what it reads.  Three things can break it there:

* a name of the gate is bound between the statement and the module (a parameter or local
  ``torch``, a class attribute ``current_platform``): the module's own alias of the same import
  (``import torch as th``) is used instead, or there is no fix;
* the module imports the gate's module only inside functions (vLLM modules do this for
  ``vllm.platforms`` to avoid an import cycle): a module-level import would bring the cycle
  back, so the import goes inside the function, just above the gate, as the file does it;
* the function is compiled (``@torch.jit.script``, ``@torch.compile``, ``@triton.jit``), where
  ``current_platform`` cannot be called: ``torch.version.hip is not None`` is used there, and a
  configured custom gate is not offered.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from fixers.imports import import_alias, import_satisfies
from fixers.platform_gate import TORCH_HIP_GATE, VLLM_GATE, Gate
from lint_h2d.rules._scopes import LineNode, ScopeMap, _Binders, describe, fast_visit, local_names

ImportNode = Union[cst.Import, cst.ImportFrom]


@dataclass(frozen=True)
class GateSite:
    """The gate to write at a statement, and where its import goes.

    ``import_at``: ``"module"`` (the usual place, if the module lacks it), ``"lazy"`` (right above
    the gate, inside the function) or ``"none"`` (the function already imports it above).
    """

    gate: Gate
    import_at: str = "module"

    @property
    def lazy_import(self) -> bool:
        return self.import_at == "lazy"


class _Reads(cst.CSTVisitor):
    """Names an expression reads (the roots of attribute chains, call targets...)."""

    def __init__(self) -> None:
        self.names: List[str] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.names:
            self.names.append(node.value)


def _reads(test: str) -> List[str]:
    visitor = _Reads()
    cst.parse_expression(test).visit(visitor)
    return [n for n in visitor.names if n not in ("None", "True", "False")]


class _Imports(cst.CSTVisitor):
    """Import statements at module level and inside functions, with their enclosing function."""

    def __init__(self) -> None:
        self.stack: List[cst.FunctionDef] = []
        self.top: List[ImportNode] = []
        self.nested: List[Tuple[cst.FunctionDef, ImportNode]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def _add(self, node: ImportNode) -> None:
        if self.stack:
            self.nested.append((self.stack[-1], node))
        else:
            self.top.append(node)

    def visit_Import(self, node: cst.Import) -> None:
        self._add(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not isinstance(node.names, cst.ImportStar):
            self._add(node)


@dataclass(frozen=True)
class ModuleImports:
    top: Tuple[ImportNode, ...]
    nested: Tuple[Tuple[cst.FunctionDef, ImportNode], ...]

    @classmethod
    def of(cls, module: cst.Module) -> "ModuleImports":
        visitor = _Imports()
        fast_visit(module, visitor)  # statements come in source order (fields body, orelse...)
        return cls(tuple(visitor.top), tuple(visitor.nested))


def _with_name(test: str, old: str, new: str) -> str:
    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            return updated_node.with_changes(value=new) if updated_node.value == old else updated_node

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return True

        def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
            return updated_node.with_changes(attr=original_node.attr)

    expr = cst.parse_expression(test).visit(Rename())
    assert isinstance(expr, cst.BaseExpression)
    return cst.Module([]).code_for_node(expr)


def _module_alias(name: str, gate: Gate, imports: ModuleImports, scopes: ScopeMap,
                  line: LineNode) -> Optional[str]:
    """A module-level alias of the gate's import for ``name``, visible and unshadowed at ``line``."""
    if gate.import_line is None:
        return None
    for node in imports.top:
        found = import_alias(node, gate.import_line)
        if found is not None and found[0] == name and scopes.shadowing_scope(line, found[1]) is None:
            return found[1]
    return None


def _imported_in_function(function: cst.FunctionDef, gate: Gate, before_line: int,
                          row_of: Callable[[cst.CSTNode], int]) -> bool:
    """The function's own body imports the gate's names before ``before_line`` (at its top level)."""
    assert gate.import_line is not None
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if row_of(statement) >= before_line:
            break
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Import, cst.ImportFrom)) and import_satisfies(s, gate.import_line)
            for s in statement.body
        ):
            return True
    return False


def _only_imports_bind(function: cst.FunctionDef, name: str, gate: Gate, imports: ModuleImports) -> bool:
    """Whether every binding of ``name`` in ``function`` is an import equal to the gate's."""
    assert gate.import_line is not None
    own = [node for fn, node in imports.nested if fn is function]
    if not any(import_satisfies(node, gate.import_line) for node in own):
        return False
    stripped = function.visit(_DropImports(gate.import_line))
    assert isinstance(stripped, cst.FunctionDef)
    return name not in local_names(stripped)


class _DropImports(cst.CSTTransformer):
    def __init__(self, import_line: str) -> None:
        self.import_line = import_line

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> Union[cst.SimpleStatementLine, cst.RemovalSentinel]:
        body = [s for s in updated_node.body
                if not (isinstance(s, (cst.Import, cst.ImportFrom)) and import_satisfies(s, self.import_line))]
        if not body:
            return cst.RemoveFromParent()
        return updated_node.with_changes(body=body)


# What a module's own platform flag may hold (its value, spaces and parentheses aside).
_FLAG_VALUES = frozenset({
    "current_platform.is_rocm()", "torch.version.hip is not None", "bool(torch.version.hip)",
    "is_hip()", "current_platform.is_rocm() is True",
})


@dataclass(frozen=True)
class ModuleFlag:
    """``NAME = <ROCm test>`` at module level, bound nowhere else: the module's own gate."""

    name: str
    statement: cst.SimpleStatementLine


def module_flags(module: cst.Module, text: str) -> Tuple[ModuleFlag, ...]:
    """The module's platform flags (``_is_hip = current_platform.is_rocm()``,
    ``_IS_ROCM = torch.version.hip is not None``, ``IS_HIP = is_hip()``).

    Why so strict: a gate that reads the flag must mean "on ROCm" wherever it stands, so the
    flag is a top-level statement (not under an ``if``), its name says ROCm/HIP, it is bound
    exactly once in the module and never declared ``global`` anywhere (no function can
    rebind it).
    """
    import re

    found: List[ModuleFlag] = []
    for statement in module.body:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            continue
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target, value = small.targets[0].target, small.value
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            target, value = small.target, small.value
        else:
            continue
        if not isinstance(target, cst.Name):
            continue
        name = target.value
        lowered = name.lower()
        if "is_rocm" not in lowered and "is_hip" not in lowered:
            continue
        spelled = " ".join(cst.Module([]).code_for_node(value).split()).replace("( ", "(").replace(" )", ")")
        if spelled not in _FLAG_VALUES:
            continue
        if re.search(rf"\b(?:global|nonlocal)\b[^\n;]*\b{re.escape(name)}\b", text):
            continue
        bindings = 0
        for other in module.body:
            visitor = _Binders(deep=False)
            other.visit(visitor)
            bindings += name in visitor.names
        if bindings == 1:
            found.append(ModuleFlag(name, statement))
    return tuple(found)


def _flag_site(flags: Sequence[ModuleFlag], line: LineNode, line_start: int, scopes: ScopeMap,
               row_of: Callable[[cst.CSTNode], int]) -> Optional[GateSite]:
    """The module's own flag as the gate at ``line``, when one is visible there."""
    in_function = any(isinstance(s, cst.FunctionDef) for s in scopes.chain(line))
    for flag in flags:
        if scopes.shadowing_scope(line, flag.name) is not None:
            continue
        if not in_function and row_of(flag.statement) >= line_start:
            continue  # module or class level: the flag must already be bound
        return GateSite(Gate(flag.name, None), "none")
    return None


def gate_site(gate: Gate, line: LineNode, line_start: int, module: cst.Module, scopes: ScopeMap,
              imports: ModuleImports, row_of: Callable[[cst.CSTNode], int],
              module_has_import: bool, flags: Sequence[ModuleFlag] = ()) -> Union[GateSite, str]:
    """The gate spelled for ``line`` (which starts at row ``line_start``), or why there is none.

    ``module_has_import``: the gate's import already runs at module level.
    ``row_of``: the row a statement starts on.
    ``flags``: the module's own platform flags (:func:`module_flags`); with one of the built-in
    gates, a visible, unshadowed flag is read instead of a new call per gate.
    """
    compiled = scopes.compiled_function(line)
    if compiled is not None:
        if gate.test not in (VLLM_GATE.test, TORCH_HIP_GATE.test):
            return (f"the statement is in compiled function `{compiled.name.value}`, where the "
                    f"configured gate `{gate.test}` cannot run")
        gate = TORCH_HIP_GATE
    elif gate.test in (VLLM_GATE.test, TORCH_HIP_GATE.test):
        site = _flag_site(flags, line, line_start, scopes, row_of)
        if site is not None:
            return site
    chain = scopes.chain(line)
    function = chain[-1] if chain and isinstance(chain[-1], cst.FunctionDef) else None
    lazy = (
        gate.import_line is not None
        and not module_has_import
        and any(import_satisfies(node, gate.import_line) for _, node in imports.nested)
    )
    if lazy and function is None:
        return (f"the file imports `{gate.import_line}` only inside functions (an import "
                "cycle?), and this statement is not in a function")
    placement = "module"
    for name in _reads(gate.test):
        shadow = scopes.shadowing_scope(line, name)
        if shadow is None:
            continue
        if (gate.import_line is not None and shadow is function and function is not None
                and _only_imports_bind(function, name, gate, imports)):
            if _imported_in_function(function, gate, line_start, row_of):
                placement = "none"  # already imported above the statement, in the same function
                continue
            lazy = True
            continue
        alias = _module_alias(name, gate, imports, scopes, line)
        if alias is not None:
            gate = Gate(_with_name(gate.test, name, alias), None)
            placement = "none"
            continue
        return (f"`{name}` is bound by {describe(shadow)}, so the gate `{gate.test}` would read "
                "that instead of the module's")
    if placement == "module" and lazy:
        placement = "lazy"
    return GateSite(gate, placement)
