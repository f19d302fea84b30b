"""Which names a fix may read at a statement: scopes, bindings and the enclosing functions.

Why: a fix that writes ``torch.version.hip`` or ``current_platform.is_rocm()`` reads those names
where the statement stands.  A parameter, a local or a class attribute of the same name between
the statement and the module makes the gate read something else (or raise
``UnboundLocalError``), and a decorator such as ``@torch.jit.script`` forbids
``current_platform`` altogether.  Python's rules, as used here: a function's names are local
when bound anywhere in it (unless declared ``global``); a class body's names are seen only by
the class body itself, never by functions nested in it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from fixers.imports import target_names

ScopeNode = Union[cst.FunctionDef, cst.ClassDef]
LineNode = Union[cst.SimpleStatementLine, cst.SimpleStatementSuite]

# Decorators (and `torch.compile(f)` wrappers) under which Python-level objects such as
# `current_platform` cannot be used: TorchScript compiles the body, Triton is not Python.
_COMPILED = frozenset({
    "torch.jit.script", "jit.script", "script", "torch.jit.script_method", "torch.compile",
    "compile", "triton.jit", "jit", "torch.jit.trace", "torch._dynamo.optimize",
})


class _Binders(cst.CSTVisitor):
    """Every name bound in a subtree; nested function/class/lambda bodies only when ``deep``."""

    def __init__(self, deep: bool) -> None:
        self.deep = deep
        self.names: Set[str] = set()
        self.globals: Set[str] = set()
        self.nonlocals: Set[str] = set()

    def _nested(self, node: cst.CSTNode) -> bool:
        return self.deep

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        for decorator in node.decorators:
            decorator.visit(self)
        return self._nested(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        for decorator in node.decorators:
            decorator.visit(self)
        return self._nested(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return self._nested(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.names.update(target_names(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.names.update(target_names(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.names.update(target_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.names.update(target_names(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        # A comprehension's own scope; counted anyway (conservative: it costs a fix at most).
        self.names.update(target_names(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.names.update(target_names(node.target))

    def visit_AsName(self, node: cst.AsName) -> None:
        self.names.update(target_names(node.name))

    def visit_Del(self, node: cst.Del) -> None:
        self.names.update(target_names(node.target))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is None:
                self.names.add(_dotted(alias.name).split(".")[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.names.add("*")
            return
        for alias in node.names:
            if alias.asname is None:
                self.names.add(_dotted(alias.name))

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self.names.add(node.rest.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.globals.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.nonlocals.update(item.name.value for item in node.names)


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def bound_names(nodes: Sequence[cst.CSTNode]) -> FrozenSet[str]:
    """Names bound anywhere in ``nodes``, nested scopes included (``global``/``nonlocal`` too).

    For "is this name rebound between two statements": conservative on purpose.
    """
    visitor = _Binders(deep=True)
    for node in nodes:
        node.visit(visitor)
    return frozenset(visitor.names | visitor.globals | visitor.nonlocals)


def local_names(scope: ScopeNode) -> FrozenSet[str]:
    """Names local to a function (parameters, bindings, ``nonlocal``) or bound in a class body.

    A ``global`` declaration removes the name: it then refers to the module's binding.
    """
    visitor = _Binders(deep=False)
    names: Set[str] = set()
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            names.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
    scope.body.visit(visitor)
    names |= visitor.names | visitor.nonlocals
    return frozenset(names - visitor.globals)


class _Chains(cst.CSTVisitor):
    def __init__(self) -> None:
        self.stack: List[ScopeNode] = []
        self.chains: Dict[int, Tuple[ScopeNode, ...]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self.chains[id(node)] = tuple(self.stack)
        return False

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        self.chains[id(node)] = tuple(self.stack)
        return False


@dataclass(frozen=True)
class ScopeMap:
    """For every statement line of a module: the functions and classes around it, outermost first."""

    module: cst.Module
    chains: Dict[int, Tuple[ScopeNode, ...]]

    @classmethod
    def of(cls, module: cst.Module) -> "ScopeMap":
        visitor = _Chains()
        module.visit(visitor)
        return cls(module, visitor.chains)

    def chain(self, line: LineNode) -> Tuple[ScopeNode, ...]:
        return self.chains.get(id(line), ())

    def visible_scopes(self, line: LineNode) -> List[ScopeNode]:
        """The scopes a name read at ``line`` is looked up in before the module, innermost first."""
        chain = self.chain(line)
        out: List[ScopeNode] = []
        for depth, scope in enumerate(reversed(chain)):
            if isinstance(scope, cst.ClassDef) and depth > 0:
                continue  # a class body is not visible from functions nested in it
            out.append(scope)
        return out

    def shadowing_scope(self, line: LineNode, name: str) -> Optional[ScopeNode]:
        """The function or class whose own ``name`` a read at ``line`` would see, if any."""
        for scope in self.visible_scopes(line):
            if name in local_names(scope):
                return scope
            if isinstance(scope, cst.FunctionDef) and name in _declared_global(scope):
                return None
        return None

    def compiled_function(self, line: LineNode) -> Optional[cst.FunctionDef]:
        """The enclosing function compiled by TorchScript, ``torch.compile`` or Triton, if any."""
        code = self.module.code_for_node
        for scope in self.chain(line):
            if not isinstance(scope, cst.FunctionDef):
                continue
            for decorator in scope.decorators:
                expr = decorator.decorator
                if isinstance(expr, cst.Call):
                    expr = expr.func
                if " ".join(code(expr).split()) in _COMPILED:
                    return scope
        return None


def _declared_global(scope: cst.FunctionDef) -> FrozenSet[str]:
    visitor = _Binders(deep=False)
    scope.body.visit(visitor)
    return frozenset(visitor.globals)


def describe(scope: ScopeNode) -> str:
    kind = "function" if isinstance(scope, cst.FunctionDef) else "class"
    return f"{kind} `{scope.name.value}`"
