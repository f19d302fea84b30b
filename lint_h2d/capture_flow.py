"""What H2D002 must prove before deleting a CPU mutation (LibCST, one function at a time).

A removal is a safe fix only when the program cannot tell it happened, apart from the CPU
tensor's contents seen by the caller (the point of the fix).  Three things could tell:

* the statement's own evaluation: a call in an argument or the receiver (`fill_(lens.pop())`),
  an index that may be out of range, a value the tensor's dtype rejects (`fill_(1e40)`);
* code after it in the same function that reads the tensor, or hands the object holding it to
  a call (`int(m.query_start_loc_cpu[-1])`, `self.build(0, m)`), directly or through an alias;
* nothing else: attribute reads are taken to be plain field reads (no properties with effects).

The device twin's write (`m.query_start_loc.zero_()`) makes the removal the *device-only zero
form* only when it runs before the CPU write on every path (dominates it) and covers at least
the same elements; `dominates` and `covers` decide that.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from fixers.imports import target_names

from lint_h2d.capture import is_capture_name, is_graph_context_in
from lint_h2d.cst_children import any_node, every_param, recorded_children

# A `fill_` literal every dtype accepts: int8/uint8 take -128..255 (uint8 wraps -1), float8 and
# bool take any of these.  Larger ones raise "value cannot be converted ... without overflow".
FILL_LIMIT = 127

Chain = Tuple[str, ...]


def chain_of(node: cst.BaseExpression) -> Optional[Chain]:
    """`a.b.c` → ("a", "b", "c"); None for anything that is not a name/attribute chain."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return tuple(reversed(parts))


# -- the statement's own evaluation ---------------------------------------------------------------


def _literal_number(node: cst.BaseExpression) -> Optional[float]:
    negative = False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        negative = isinstance(node.operator, cst.Minus)
        node = node.expression
    if isinstance(node, cst.Name) and node.value in ("True", "False") and not negative:
        return float(node.value == "True")
    if isinstance(node, (cst.Integer, cst.Float)):
        value = float(node.evaluated_value)
        return -value if negative else value
    return None


def _safe_fill_value(node: cst.BaseExpression) -> bool:
    value = _literal_number(node)
    return value is not None and math.isfinite(value) and abs(value) <= FILL_LIMIT


def evaluation_risk(call: cst.Call, receiver: cst.BaseExpression, method: str,
                    receiver_is_first_arg: bool) -> Optional[str]:
    """Why deleting `call` (a `zero_`/`fill_` of `receiver`) could change what the program does
    through the call's own evaluation; None when it cannot."""
    if chain_of(receiver) is None:
        return (f"evaluating `{_code(receiver)}` may have effects or raise (only a plain "
                "attribute path is known to be inert)")
    args = list(call.args)
    if receiver_is_first_arg:
        args = args[1:]
    if any(a.star for a in args):
        return "the call unpacks arguments"
    if method == "zero_":
        return None if not args else "`zero_` takes no arguments: the original raises TypeError"
    if len(args) != 1 or (args[0].keyword is not None and args[0].keyword.value != "value"):
        return "the fill value is not one plain argument"
    value = args[0].value
    if not _safe_fill_value(value):
        if _has_call(value):
            return f"the argument `{_code(value)}` calls something, which would no longer run"
        return (f"the fill value `{_code(value)}` is not a small number literal: the original "
                "may raise (dtype overflow, a tensor value)")
    return None


def _has_call(node: cst.CSTNode) -> bool:
    return any_node(node, lambda current: isinstance(current, cst.Call))


def _code(node: cst.CSTNode) -> str:
    return " ".join(cst.Module(body=[]).code_for_node(node).split())


# -- later code that observes the tensor ------------------------------------------------------------


def _touches(chain: Chain, tracked: Mapping[str, Chain], aliases: Set[str]) -> bool:
    """Does using the object `chain` use (part of) the tracked tensor or an object holding it?"""
    root = chain[0]
    if root in tracked:
        path = tracked[root]
        n = min(len(chain), len(path))
        return chain[:n] == path[:n]
    return root in aliases


def observations(node: cst.CSTNode, tracked: Mapping[str, Chain], aliases: Set[str]) -> Iterator[cst.CSTNode]:
    """Sub-expressions of `node` that read the tracked tensor or pass an object holding it."""
    if isinstance(node, cst.Call):
        chain = chain_of(node.func)
        if chain is not None:
            used = chain[:-1] if len(chain) > 1 else chain  # a method gets its object as `self`
            if _touches(used, tracked, aliases):
                yield node
                return
        else:
            yield from observations(node.func, tracked, aliases)
        for arg in node.args:
            yield from observations(arg.value, tracked, aliases)
        return
    if isinstance(node, (cst.Name, cst.Attribute)):
        chain = chain_of(node)
        if chain is not None:
            if _touches(chain, tracked, aliases):
                yield node
            return
        if isinstance(node, cst.Attribute):
            yield from observations(node.value, tracked, aliases)
            return
    if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        # A closure may run at any later point: any mention counts.
        if _mentions(node, tracked, aliases):
            yield node
        return
    for child in node.children:
        if isinstance(child, cst.Arg):
            yield from observations(child.value, tracked, aliases)
        else:
            yield from observations(child, tracked, aliases)


def _mentions(node: cst.CSTNode, tracked: Mapping[str, Chain], aliases: Set[str]) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and (current.value in tracked or current.value in aliases):
            return True
        stack.extend(current.children)
    return False


def _bindings(root: cst.CSTNode) -> Iterator[Tuple[Sequence[cst.BaseExpression], cst.CSTNode]]:
    """(targets, value) of every binding under `root`, nested definitions included."""
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign):
            yield [t.target for t in node.targets], node.value
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
            yield [node.target], node.value
        elif isinstance(node, cst.NamedExpr):
            yield [node.target], node.value
        elif isinstance(node, (cst.For, cst.CompFor)):
            yield [node.target], node.iter
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            yield [node.asname.name], node.item
        stack.extend(node.children)


def _bound_roots(target: cst.BaseExpression) -> Iterator[str]:
    """The names a binding changes: `a`, `a, b`, and the object written by `a.x = ` / `a[i] =`."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _bound_roots(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _bound_roots(target.value)
    elif isinstance(target, (cst.Attribute, cst.Subscript)):
        node: cst.BaseExpression = target
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        if isinstance(node, cst.Name):
            yield node.value


def aliases_of(scope: cst.CSTNode, tracked: Mapping[str, Chain]) -> Set[str]:
    """Names that may hold the tracked tensor or an object holding it (a fixpoint over every
    binding in the scope, ignoring order: a superset)."""
    aliases: Set[str] = set()
    bindings = list(_bindings(scope))
    changed = True
    while changed:
        changed = False
        for targets, value in bindings:
            if next(observations(value, tracked, aliases), None) is None:
                continue
            for target in targets:
                for name in _bound_roots(target):
                    if name not in tracked and name not in aliases:
                        aliases.add(name)
                        changed = True
    return aliases


def _path_to(root: cst.CSTNode, target: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
    """The nodes from `root` down to `target` (both included)."""
    stack: List[Tuple[cst.CSTNode, int]] = [(root, 0)]
    path: List[cst.CSTNode] = []
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node is target:
            return path
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return None


def _passes_out(node: cst.CSTNode) -> bool:
    """`return x` / `yield a.b`: hands the object to the caller, which the fix means to change."""
    value = getattr(node, "value", None)
    if not isinstance(node, (cst.Return, cst.Yield)) or value is None:
        return False
    items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    return all(chain_of(item) is not None for item in items)


def observed_after(scope: cst.CSTNode, statement: cst.CSTNode, tracked: Mapping[str, Chain],
                   code: Callable[[cst.CSTNode], str]) -> Optional[str]:
    """Why code of `scope` that runs after `statement` could see the tracked tensor's contents
    (its read, or a call given the object holding it); None when nothing can."""
    ancestors = _path_to(scope, statement)
    if ancestors is None:
        return "the statement was not found in its function"
    loops = {id(n) for n in ancestors if isinstance(n, (cst.For, cst.While))}
    aliases = aliases_of(scope, tracked)
    state = {"after": False}

    def visit(node: cst.CSTNode, counting: bool) -> Optional[cst.CSTNode]:
        if node is statement:
            state["after"] = True
            return None
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not scope:
            return next(observations(node, tracked, aliases), None)
        if id(node) in loops:
            counting = True  # the next iteration runs it after the write
        if _passes_out(node):
            return None
        if isinstance(node, cst.BaseExpression):
            if counting or state["after"]:
                return next(observations(node, tracked, aliases), None)
            return None
        for child in node.children:
            found = visit(child, counting)
            if found is not None:
                return found
        return None

    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    found = visit(body, False)
    if found is None:
        return None
    return f"`{' '.join(code(found).split())}` may observe it afterwards"


# -- names the removal's proof depends on ----------------------------------------------------------

# Calls that read a frame's variables by name: `locals()['m'].x_cpu`, `eval("m.x_cpu")` read the
# tensor without mentioning it, so no analysis of names can rule them out.
_DYNAMIC_NAMES = frozenset({"locals", "vars", "eval", "exec", "breakpoint"})
_DYNAMIC_ATTRIBUTES = frozenset({"_getframe", "currentframe", "stack", "f_locals"})


def dynamic_access(scope: cst.CSTNode) -> Optional[str]:
    """A call in `scope` that can read its variables by name (`locals()`, `eval`, a frame)."""
    stack: List[cst.CSTNode] = [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value in _DYNAMIC_NAMES:
            return f"`{node.value}` can read the function's variables by name"
        if isinstance(node, cst.Attribute) and node.attr.value in _DYNAMIC_ATTRIBUTES:
            return f"`{_code(node)}` can read the function's variables by name"
        stack.extend(node.children)
    return None


def _binding_names(node: cst.CSTNode) -> Iterator[str]:
    """Names that `node` (one node, not its children) binds or unbinds in its scope."""
    targets: List[cst.CSTNode] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, (cst.For, cst.CompFor)):
        targets = [node.target]
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        targets = [node.asname.name]
    elif isinstance(node, cst.ExceptHandler) and node.name is not None:
        targets = [node.name.name]
    elif isinstance(node, cst.Del):
        targets = [node.target]
    elif isinstance(node, (cst.Global, cst.Nonlocal)):
        yield from (n.name.value for n in node.names)
    elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
        for alias in node.names:
            if alias.asname is not None:
                targets.append(alias.asname.name)
            else:
                dotted = _dotted(alias.name)
                if dotted:
                    yield dotted.split(".")[0]
    elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        yield node.name.value
    elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
        yield node.name.value
    elif isinstance(node, cst.MatchMapping) and node.rest is not None:
        yield node.rest.value
    for target in targets:
        for leaf in target_names(target):
            yield leaf


def binding_count(scope: cst.CSTNode, name: str) -> int:
    """How many places in `scope`'s body (nested definitions included: `nonlocal`, shadowing
    parameters) bind `name`.  A parameter counts 0 in its own function."""
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    count = 0
    stack: List[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        count += sum(1 for bound in _binding_names(node) if bound == name)
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            count += sum(1 for p in every_param(node.params) if p.name.value == name)
        stack.extend(node.children)
    return count


# -- the device twin's write ----------------------------------------------------------------------


# (id of a statement list's owner, index in it, whether the owner is a simple statement line).
Place = List[Tuple[int, int, bool]]


def place_of(scope: cst.CSTNode, small: cst.BaseSmallStatement) -> Optional[Place]:
    """Where `small` sits: one entry per statement list from the scope down to it."""
    path = _path_to(scope, small)
    if path is None:
        return None
    out: Place = []
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, (cst.IndentedBlock, cst.Module, cst.SimpleStatementLine,
                               cst.SimpleStatementSuite)):
            index = next(i for i, s in enumerate(parent.body) if s is child)
            out.append((id(parent), index, isinstance(parent, cst.SimpleStatementLine)))
    return out


def dominates(first: Place, second: Place) -> bool:
    """`first` runs before `second` on every path that reaches `second` (same function): they
    share their statement lists down to one where `first` comes earlier, and `first` is a plain
    statement there (not inside an `if`, loop, `with`, ... that might skip it)."""
    k = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), None)
    if k is None:
        return False
    if first[k][0] != second[k][0] or first[k][1] >= second[k][1]:
        return False
    return all(is_line for _, _, is_line in first[k + 1:])


def twin_of(receiver: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`a_cpu.b_cpu[:n]` → `a_cpu.b[:n]`: only the written field's own `_cpu` goes."""
    if isinstance(receiver, cst.Subscript):
        inner = twin_of(receiver.value)
        return receiver.with_changes(value=inner) if inner is not None else None
    if isinstance(receiver, cst.Attribute) and receiver.attr.value.endswith("_cpu") \
            and len(receiver.attr.value) > len("_cpu"):
        return receiver.with_changes(attr=cst.Name(receiver.attr.value[: -len("_cpu")]))
    return None


def covers(twin_write: cst.BaseExpression, cpu_receiver: cst.BaseExpression) -> bool:
    """The device write reaches every element the CPU write does: the whole twin, or the same
    subscript of it."""
    if not isinstance(twin_write, cst.Subscript):
        return True
    expected = twin_of(cpu_receiver)
    return expected is not None and twin_write.deep_equals(expected)




# -- which code runs during CUDA-graph capture -----------------------------------------------------


@dataclass(frozen=True)
class CaptureRegions:
    """Capture code found from evidence in one module, by node identity.

    ``functions``: capture functions (configured names; functions called from a graph-capture
    region of the same file; functions nested in a capture function) → why.
    ``bodies``: statements and one-line suites that run during capture (the body of
    ``with torch.cuda.graph(g):`` under any import alias, the statements between
    ``g.capture_begin()`` and ``g.capture_end()``) → why.
    """

    functions: Mapping[int, str] = field(default_factory=dict)
    bodies: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Def:
    node: cst.FunctionDef
    cls: Optional[cst.ClassDef]  # the class it is a method of
    outer: Optional[cst.FunctionDef]  # the function it is nested in


def import_aliases(module: cst.Module) -> Dict[str, str]:
    """Bound name → the dotted module path it stands for (`tc` → `torch.cuda`, `graph` →
    `torch.cuda.graph`), from every import in the module."""
    out: Dict[str, str] = {}
    for node in _all_statements(module.body):
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        for small in node.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = _dotted(alias.name) or ""
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        out[alias.asname.name.value] = full
                    else:
                        head = full.split(".")[0]
                        out.setdefault(head, head)
            elif isinstance(small, cst.ImportFrom) and not small.relative \
                    and small.module is not None and not isinstance(small.names, cst.ImportStar):
                base = _dotted(small.module) or ""
                for alias in small.names:
                    name = _dotted(alias.name) or ""
                    bound = (alias.asname.name.value if alias.asname is not None
                             and isinstance(alias.asname.name, cst.Name) else name)
                    out[bound] = f"{base}.{name}"
    return out


def _dotted(node: cst.CSTNode) -> Optional[str]:
    chain = chain_of(node) if isinstance(node, cst.BaseExpression) else None
    return ".".join(chain) if chain is not None else None


def _all_statements(body: Sequence[cst.BaseStatement]) -> Iterator[cst.CSTNode]:
    """Every statement line and compound statement, nested ones included (no expressions)."""
    stack: List[cst.CSTNode] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, cst.SimpleStatementLine):
            continue
        stack.extend(reversed(_child_statements(node)))


def _child_statements(node: cst.CSTNode) -> List[cst.CSTNode]:
    # Children read in place (`recorded_children`): LibCST's `children` runs a visitor per node
    # and was most of `capture_regions`' cost; statement-holding fields come in source order.
    out: List[cst.CSTNode] = []
    for child in recorded_children(node):
        if isinstance(child, cst.IndentedBlock):
            out.extend(child.body)
        elif isinstance(child, (cst.BaseStatement, cst.BaseSuite)):
            out.append(child)
        elif isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally, cst.MatchCase)) \
                or type(child).__name__ == "ExceptStarHandler":
            out.extend(_child_statements(child))
    return out


def graph_context_name(item: cst.WithItem, aliases: Mapping[str, str]) -> Optional[str]:
    """`with tc.graph(g):` → "tc.graph" when it resolves to `torch.cuda.graph` (or vLLM's
    `graph_capture`); None for any other context manager."""
    node = item.item.func if isinstance(item.item, cst.Call) else item.item
    written = _dotted(node)
    return written if written is not None and is_graph_context_in(written, aliases) else None


def _is_call_to(small: cst.BaseSmallStatement, method: str) -> Optional[str]:
    """`g.capture_begin(...)` as a statement → "g"."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
            and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == method:
        return _dotted(small.value.func.value) or "graph"
    return None


def _line_calls(stmt: cst.CSTNode, method: str) -> Optional[str]:
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            found = _is_call_to(small, method)
            if found is not None:
                return found
    return None


class _Collector:
    """One pass over the statements: definitions, graph blocks, capture_begin regions."""

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = aliases
        self.defs: List[_Def] = []
        # (region statements or suite, why, the function holding it, its class)
        self.regions: List[Tuple[cst.CSTNode, str, Optional[cst.FunctionDef], Optional[cst.ClassDef]]] = []

    def block(self, body: Sequence[cst.CSTNode], cls: Optional[cst.ClassDef],
              fn: Optional[cst.FunctionDef]) -> None:
        region: Optional[str] = None
        for stmt in body:
            if region is not None:
                self.regions.append((stmt, region, fn, cls))
                if _line_calls(stmt, "capture_end") is not None:
                    region = None
            else:
                begin = _line_calls(stmt, "capture_begin")
                if begin is not None:
                    region = f"between `{begin}.capture_begin()` and `{begin}.capture_end()`"
            self.statement(stmt, cls, fn)

    def statement(self, stmt: cst.CSTNode, cls: Optional[cst.ClassDef], fn: Optional[cst.FunctionDef]) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            return
        if isinstance(stmt, cst.FunctionDef):
            self.defs.append(_Def(stmt, cls if fn is None else None, fn))
            self.suite(stmt.body, None, stmt)
            return
        if isinstance(stmt, cst.ClassDef):
            self.suite(stmt.body, stmt, None)
            return
        if isinstance(stmt, cst.With):
            names = [n for n in (graph_context_name(i, self.aliases) for i in stmt.items)
                     if n and not self.shadowed(n.split(".")[0], fn)]
            if names:
                self.regions.append((stmt.body, f"with {names[0]}(...)", fn, cls))
        for child in stmt.children:
            if isinstance(child, cst.BaseSuite):
                self.suite(child, cls if fn is None else None, fn)
            elif isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally, cst.MatchCase)) \
                    or type(child).__name__ == "ExceptStarHandler":
                self.statement(child, cls, fn)

    def shadowed(self, name: str, fn: Optional[cst.FunctionDef]) -> bool:
        """`name` is a parameter or a (non-import) local of `fn` or a function around it: a
        `torch` parameter, `tc = contextlib` are not the module's imports."""
        outer = {id(d.node): d.outer for d in self.defs}
        while fn is not None:
            if shadows(fn, name):
                return True
            fn = outer.get(id(fn))
        return False

    def suite(self, suite: cst.CSTNode, cls: Optional[cst.ClassDef], fn: Optional[cst.FunctionDef]) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.block(suite.body, cls, fn)


def shadows(fn: cst.FunctionDef, name: str) -> bool:
    """`fn` binds `name` itself: as a parameter, or by a binding in its own body other than an
    import (nested definitions are their own scopes)."""
    if any(p.name.value == name for p in every_param(fn.params)):
        return True
    stack: List[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name:
                return True
            continue
        if not isinstance(node, (cst.Import, cst.ImportFrom)) and name in _binding_names(node):
            return True
        stack.extend(recorded_children(node))
    return False


def _self_name(fn: cst.FunctionDef) -> Optional[str]:
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if not params or any(_dotted(d.decorator) == "staticmethod" for d in fn.decorators):
        return None
    return params[0].name.value


def _calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            yield current
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # defined here, not run here
        stack.extend(recorded_children(current))


def capture_regions(module: cst.Module, patterns: Sequence[str]) -> CaptureRegions:
    """Decide capture code from evidence (see :class:`CaptureRegions`), never from a name
    fragment alone: a method that happens to be called `capture` is not one."""
    collector = _Collector(import_aliases(module))
    collector.block(module.body, None, None)
    functions: Dict[int, str] = {}
    for d in collector.defs:
        if is_capture_name(d.node.name.value, patterns):
            functions[id(d.node)] = d.node.name.value
    bodies: Dict[int, str] = {}
    for node, why, fn, cls in collector.regions:
        bodies.setdefault(id(node), why)
        caller = fn.name.value if fn is not None else "the module"
        for call in _calls(node):
            for target in _resolve(call, fn, cls, collector.defs):
                functions.setdefault(
                    id(target.node), f"`{target.node.name.value}` (called {_called_where(why)} in `{caller}`)"
                )
    # Functions nested in a capture function run when it calls them: capture code too.
    changed = True
    while changed:
        changed = False
        for d in collector.defs:
            if d.outer is not None and id(d.outer) in functions and id(d.node) not in functions:
                functions[id(d.node)] = (f"`{d.node.name.value}` (nested in capture function "
                                         f"`{d.outer.name.value}`)")
                changed = True
    return CaptureRegions(functions, bodies)


def _called_where(why: str) -> str:
    return f"under `{why}`" if why.startswith("with ") else why


def _resolve(call: cst.Call, fn: Optional[cst.FunctionDef], cls: Optional[cst.ClassDef],
             defs: Sequence[_Def]) -> List[_Def]:
    """The functions of this file a call may run: `helper(...)` (a function nested in the
    caller, else a module-level one) and `self.method(...)` (a method of the caller's class)."""
    func = call.func
    if isinstance(func, cst.Name):
        name = func.value
        nested = [d for d in defs if d.outer is fn and fn is not None and d.node.name.value == name]
        if nested:
            return nested
        outer = {id(d.node): d.outer for d in defs}
        scope = fn
        while scope is not None:
            if shadows(scope, name):
                return []  # a parameter or local of that name, not the module's function
            scope = outer.get(id(scope))
        return [d for d in defs if d.outer is None and d.cls is None and d.node.name.value == name]
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and fn is not None:
        owner = next((d for d in defs if d.node is fn), None)
        if owner is not None and owner.cls is not None and func.value.value == _self_name(fn):
            return [d for d in defs if d.cls is owner.cls and d.node.name.value == func.attr.value]
    return []
