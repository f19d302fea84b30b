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

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, TypeVar, Union

import libcst as cst

from fixers.imports import target_names
from lint_h2d.cst_children import recorded_children

ScopeNode = Union[cst.FunctionDef, cst.ClassDef]
LineNode = Union[cst.SimpleStatementLine, cst.SimpleStatementSuite]

# Decorators (and `torch.compile(f)` wrappers) under which Python-level objects such as
# `current_platform` cannot be used: TorchScript compiles the body, Triton is not Python.
_COMPILED = frozenset({
    "torch.jit.script", "jit.script", "script", "torch.jit.script_method", "torch.compile",
    "compile", "triton.jit", "jit", "torch.jit.trace", "torch._dynamo.optimize",
})


def fast_visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that only collects, about three times faster.

    Why: LibCST's ``visit`` rebuilds every node it passes (and validates it), and skips nothing;
    this walk reads the children in place and leaves out whitespace, comments and operators,
    which hold no name.  The visitor's ``on_visit``/``on_leave`` run as under LibCST (pre-order,
    a ``False`` from ``visit_X`` skips the children, ``leave_X`` always runs), but children come in
    field order, not always source order: for visitors that collect sets or maps only.
    """
    stack: List[object] = [node]
    on_visit, on_leave = visitor.on_visit, visitor.on_leave
    while stack:
        item = stack.pop()
        if type(item) is tuple:  # (node,): its children are done
            on_leave(item[0])
            continue
        assert isinstance(item, cst.CSTNode)
        if not on_visit(item):
            on_leave(item)
            continue
        stack.append((item,))
        children = recorded_children(item)
        children.reverse()
        stack.extend(children)


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
            fast_visit(decorator, self)
        return self._nested(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        for decorator in node.decorators:
            fast_visit(decorator, self)
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
        fast_visit(node, visitor)
    return frozenset(visitor.names | visitor.globals | visitor.nonlocals)


def local_names(scope: ScopeNode) -> FrozenSet[str]:
    """Names local to a function (parameters, bindings, ``nonlocal``) or bound in a class body.

    A ``global`` declaration removes the name: it then refers to the module's binding.
    """
    return _own_names(scope)[0]


def _own_names(scope: ScopeNode) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """:func:`local_names` and the names declared ``global``, from one walk of the body."""
    visitor = _Binders(deep=False)
    names: Set[str] = set()
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            names.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
    fast_visit(scope.body, visitor)
    names |= visitor.names | visitor.nonlocals
    return frozenset(names - visitor.globals), frozenset(visitor.globals)


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


T = TypeVar("T")

# `global x` / `nonlocal x` on a line, up to the next `;` or line break (what `rebinds_anywhere`
# has always searched for, one name at a time).
_DECLARATION = re.compile(r"\b(?:global|nonlocal)\b[^\n;]*")
_WORD = re.compile(r"\w+")
_LEN_REBOUND = re.compile(r"\blen\b\s*(?::=|=(?!=))|\bdef\s+len\b|\bas\s+len\b|import\s[^\n]*\blen\b")


@dataclass(frozen=True)
class ScopeMap:
    """For every statement line of a module: the functions and classes around it, outermost first.

    Also the file's per-scope facts the fixes ask for once per finding (a function's local names,
    the names its closures read, where a statement stands in its block, the names declared
    ``global`` anywhere in the text).  Why memoized here: each is a walk of a whole function,
    block or text, and a file with thousands of findings asked for it thousands of times, so
    checking one large file cost time quadratic in its size.  The memo lives as long as this
    object, i.e. one file's check; nothing is kept between files.
    """

    module: cst.Module
    chains: Dict[int, Tuple[ScopeNode, ...]]
    text: str = ""
    _memo: Dict[Tuple[str, int], Tuple[object, object]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, module: cst.Module, text: str = "") -> "ScopeMap":
        """``text``: the source the module was parsed from (for the text-level facts)."""
        visitor = _Chains()
        fast_visit(module, visitor)
        return cls(module, visitor.chains, text)

    def cached(self, kind: str, node: object, compute: Callable[[], T]) -> T:
        """``compute()`` once per (kind, node).  The node is stored with the value, so a key can
        never be answered for another node that happens to reuse a freed object's id."""
        key = (kind, id(node))
        found = self._memo.get(key)
        if found is not None and found[0] is node:
            return found[1]  # type: ignore[return-value]
        value = compute()
        self._memo[key] = (node, value)
        return value

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

    def local_names(self, scope: ScopeNode) -> FrozenSet[str]:
        """:func:`local_names` of ``scope``, walked once per scope."""
        return self.cached("own", scope, lambda: _own_names(scope))[0]

    def declared_global(self, scope: cst.FunctionDef) -> FrozenSet[str]:
        """Names ``scope`` declares ``global`` (at its own level), from the same walk."""
        return self.cached("own", scope, lambda: _own_names(scope))[1]

    def closure_names(self, function: cst.FunctionDef) -> FrozenSet[str]:
        """Every name (``Name`` node) inside a function, lambda or class nested in ``function``:
        what its closures could read.  One walk per function."""
        return self.cached("closures", function, lambda: _closure_names(function))

    def block_index(self, block: Sequence[cst.BaseStatement], statement: cst.CSTNode) -> Optional[int]:
        """Where ``statement`` stands in ``block`` (by identity), or None; one pass per block."""
        where = self.cached("block", block, lambda: _first_indices(block))
        n = where.get(id(statement))
        return n if n is not None and block[n] is statement else None

    def bound_names(self, statement: cst.CSTNode) -> FrozenSet[str]:
        """:func:`bound_names` of one statement, walked once per statement."""
        return self.cached("bound", statement, lambda: bound_names([statement]))

    def latest_binding(self, block: Sequence[cst.BaseStatement], name: str, before: int) -> Optional[int]:
        """Where the last statement of ``block`` that binds ``name`` stands among the first
        ``before`` statements, or None.  One pass per block and name: the walk back from each of
        thousands of writes in one block cost time quadratic in its length."""
        latest = self.cached(f"latest:{name}", block, lambda: _latest_bindings(self, block, name))
        return latest[before] if 0 <= before < len(latest) else None

    def rebinds_anywhere(self, name: str) -> bool:
        """``global``/``nonlocal`` of ``name`` anywhere in the text: another scope could rebind
        it at any call.  The text is searched once for all names."""
        if _WORD.fullmatch(name) is None:  # not one regex word: search for it as before
            return re.search(rf"\b(?:global|nonlocal)\b[^\n;]*\b{re.escape(name)}\b", self.text) is not None
        return name in self.cached("declared", self.text, lambda: _declared_anywhere(self.text))

    def builtin_len_intact(self) -> bool:
        """No binding of ``len`` anywhere in the text (``len(...)`` is the builtin)."""
        return self.cached("len", self.text, lambda: _LEN_REBOUND.search(self.text) is None)

    def shadowing_scope(self, line: LineNode, name: str) -> Optional[ScopeNode]:
        """The function or class whose own ``name`` a read at ``line`` would see, if any."""
        for scope in self.visible_scopes(line):
            if name in self.local_names(scope):
                return scope
            if isinstance(scope, cst.FunctionDef) and name in self.declared_global(scope):
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


def _first_indices(block: Sequence[cst.BaseStatement]) -> Dict[int, int]:
    where: Dict[int, int] = {}
    for n, statement in enumerate(block):
        where.setdefault(id(statement), n)
    return where


def _declared_anywhere(text: str) -> FrozenSet[str]:
    """Every word after ``global``/``nonlocal`` on its line, before a ``;`` or line break.

    ``name`` is in this set exactly when ``\b(?:global|nonlocal)\b[^\n;]*\bname\b`` matches
    (``name`` one regex word): a later keyword on the same segment only sees a suffix of the
    first one's words.
    """
    names: Set[str] = set()
    for match in _DECLARATION.finditer(text):
        tail = match.group()
        keyword = 6 if tail.startswith("global") else 8
        names.update(_WORD.findall(tail, keyword))
    return frozenset(names)


class _NameValues(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


class _Nested(cst.CSTVisitor):
    """The names inside every function, lambda or class nested in the visited node."""

    def __init__(self) -> None:
        self.names = _NameValues()

    def _collect(self, node: cst.CSTNode) -> bool:
        fast_visit(node, self.names)
        return False  # everything below is collected already

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return self._collect(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return self._collect(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return self._collect(node)


def _closure_names(function: cst.FunctionDef) -> FrozenSet[str]:
    visitor = _Nested()
    fast_visit(function.body, visitor)
    return frozenset(visitor.names.names)


def _declared_global(scope: cst.FunctionDef) -> FrozenSet[str]:
    return _own_names(scope)[1]


def describe(scope: ScopeNode) -> str:
    kind = "function" if isinstance(scope, cst.FunctionDef) else "class"
    return f"{kind} `{scope.name.value}`"


def _latest_bindings(scopes: ScopeMap, block: Sequence[cst.BaseStatement], name: str) -> List[Optional[int]]:
    """For each place ``k`` in ``block`` (and one past its end), the last statement before ``k``
    that binds ``name``, or None."""
    out: List[Optional[int]] = []
    latest: Optional[int] = None
    for k, statement in enumerate(block):
        out.append(latest)
        if name in scopes.bound_names(statement):
            latest = k
    out.append(latest)
    return out
