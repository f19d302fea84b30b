"""Where a project declares host-device syncs allowed (setting ``sync-allowed``).

Why: vLLM wraps code that runs once (a worker's setup) in ``with gpu_sync_allowed():``.  A
write there really blocks, so it is still reported (the finding is true, and labels count it),
but a maintainer would send back a diff that rewrites code they explicitly allowed to sync:
such a write gets no fix, and its finding says where the project allows it.

A statement is in such a region when it is

* lexically inside ``with NAME():`` (no arguments: vLLM's ``first_only=True`` allows only the
  first pass, so later ones are still meant to be reported), in the same function: a ``def``,
  ``lambda``, class body or generator expression inside the block may run after it; or
* in the body of a private function (``_name``, not a dunder) of the file whose every
  same-file call site (``_f(...)``, ``self._f(...)``, ``obj._f(...)``) lies in such a region,
  directly or inside another function proven so.  Any other mention of the name (``self._f``
  passed around, ``getattr(self, "_f")``, an import, a decorator other than ``staticmethod``,
  ``classmethod``, ``torch.no_grad()`` or ``torch.inference_mode()``) or no call site at all
  keeps the normal finding with its fix, and so does a name defined more than once in the file
  (``Worker._reset`` and ``Runner._reset``: a call cannot be tied to one of them, and the other
  may never run in the region).  Call sites in other files are not seen: a private name is
  taken to be called from its own file only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lint_h2d.capture_flow import chain_of

# Decorators that only wrap the function (its calls stay its calls).
_WRAPPERS = frozenset({("staticmethod",), ("classmethod",), ("torch", "no_grad"), ("torch", "inference_mode")})


@dataclass(frozen=True)
class AllowedRegion:
    """Why a statement may sync: ``reason`` reads "`with gpu_sync_allowed()` at f.py:974 around
    the only call of `_populate_metadata`"; ``row`` is the first ``with``'s row."""

    reason: str
    row: int


@dataclass(frozen=True)
class _Site:
    """One call of a private name: the function it stands in (None at module level or in an
    opaque frame) and the lexical region around it."""

    name: str
    function: Optional[cst.FunctionDef]
    region: Optional[AllowedRegion]


def callee_matches(dotted: str, names: Sequence[str]) -> bool:
    """``x.gpu_sync_allowed`` matches ``gpu_sync_allowed``; ``gpu_sync_allowed`` matches
    ``vllm.utils.gpu_sync_debug.gpu_sync_allowed`` (either is a dotted suffix of the other)."""
    return any(dotted == n or dotted.endswith("." + n) or n.endswith("." + dotted) for n in names)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass
class _Frame:
    function: Optional[cst.FunctionDef]
    opaque: bool  # a lambda, class body or generator expression: may run later or elsewhere
    region: Optional[AllowedRegion] = None


class _Walk(cst.CSTVisitor):
    """One pass: allowed ``with`` blocks, statements inside them, private defs, their calls and
    every other mention of a private name."""

    def __init__(self, names: Sequence[str], row_of: Callable[[cst.CSTNode], int], base: str) -> None:
        self.names = names
        self.row_of = row_of
        self.base = base
        self.frames: List[_Frame] = [_Frame(None, False)]
        self.lines: Dict[int, AllowedRegion] = {}
        self.defs: Dict[str, List[cst.FunctionDef]] = {}
        self.sites: Dict[str, List[_Site]] = {}
        self.mentioned: Set[str] = set()
        self._call_funcs: Set[int] = set()

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def _inside(self, frame: _Frame, body: cst.CSTNode) -> None:
        self.frames.append(frame)
        body.visit(self)
        self.frames.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            decorator.visit(self)
        node.params.visit(self)
        if node.returns is not None:
            node.returns.visit(self)
        self.defs.setdefault(node.name.value, []).append(node)
        self._inside(_Frame(node, False), node.body)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        node.params.visit(self)
        self._inside(_Frame(None, True), node.body)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for part in (*node.decorators, *node.bases, *node.keywords):
            part.visit(self)
        self._inside(_Frame(None, True), node.body)
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        self.frames.append(_Frame(None, True))  # consumed whenever the caller iterates it
        node.elt.visit(self)
        node.for_in.visit(self)
        self.frames.pop()
        return False

    def visit_With(self, node: cst.With) -> bool:
        for item in node.items:
            item.visit(self)
        region = None if node.asynchronous is not None else self._allowing(node)
        frame = self.frame
        saved = frame.region
        if region is not None and not frame.opaque:
            frame.region = region
        node.body.visit(self)
        frame.region = saved
        return False

    def _allowing(self, node: cst.With) -> Optional[AllowedRegion]:
        for item in node.items:
            call = item.item
            if not isinstance(call, cst.Call) or call.args:
                continue
            chain = chain_of(call.func)
            if chain is not None and callee_matches(".".join(chain), self.names):
                spelled = ".".join(chain)
                row = self.row_of(node)
                return AllowedRegion(f"`with {spelled}()` at {self.base}:{row}", row)
        return None

    def _line(self, node: cst.CSTNode) -> None:
        if self.frame.region is not None:
            self.lines[id(node)] = self.frame.region

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line(node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._line(node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.value if isinstance(func, cst.Name) else (
            func.attr.value if isinstance(func, cst.Attribute) else None)
        if name is not None and _private(name):
            self._call_funcs.add(id(func))
            frame = self.frame
            self.sites.setdefault(name, []).append(
                _Site(name, None if frame.opaque else frame.function, frame.region))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _private(node.attr.value) and id(node) not in self._call_funcs:
            self.mentioned.add(node.attr.value)
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if _private(node.value) and id(node) not in self._call_funcs:
            self.mentioned.add(node.value)


def _wrapper_only(function: cst.FunctionDef) -> bool:
    for decorator in function.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call) and not expr.args:
            expr = expr.func
        chain = chain_of(expr)
        if chain is None or chain not in _WRAPPERS:
            return False
    return True


@dataclass(frozen=True)
class SyncAllowed:
    """The file's sync-allowed statements (by ``id`` of their line) and functions."""

    lines: Dict[int, AllowedRegion]
    functions: Dict[int, AllowedRegion]

    @classmethod
    def empty(cls) -> "SyncAllowed":
        return cls({}, {})

    @classmethod
    def of(cls, module: cst.Module, text: str, names: Sequence[str],
           row_of: Callable[[cst.CSTNode], int], base: str) -> "SyncAllowed":
        if not names or not any(n.rsplit(".", 1)[-1] in text for n in names):
            return cls.empty()
        walk = _Walk(names, row_of, base)
        module.visit(walk)
        return cls(walk.lines, _allowed_functions(walk, text))

    def region(self, line: cst.CSTNode, function: Optional[cst.CSTNode]) -> Optional[AllowedRegion]:
        """The region ``line`` runs in; ``function`` is its innermost scope when that is a
        function (None otherwise)."""
        found = self.lines.get(id(line))
        if found is None and function is not None:
            found = self.functions.get(id(function))
        return found


def _allowed_functions(walk: _Walk, text: str) -> Dict[int, AllowedRegion]:
    """Private functions every call of which runs in a region (a least fixpoint: a function
    that calls itself needs another allowed call site first)."""
    candidates = [
        name for name, defs in walk.defs.items()
        if _private(name) and name not in walk.mentioned and walk.sites.get(name)
        and len(defs) == 1 and _wrapper_only(defs[0])
        and not re.search(rf"""['"]{re.escape(name)}['"]""", text)
    ]
    allowed: Dict[int, AllowedRegion] = {}
    done: Set[str] = set()
    changed = True
    while changed:
        changed = False
        for name in candidates:
            if name in done:
                continue
            found = _every_call_allowed(name, walk.sites[name], allowed)
            if found is None:
                continue
            for function in walk.defs[name]:
                allowed[id(function)] = found
            done.add(name)
            changed = True
    return allowed


def _every_call_allowed(name: str, sites: Sequence[_Site],
                        allowed: Dict[int, AllowedRegion]) -> Optional[AllowedRegion]:
    """Why every call of ``name`` runs in a region, or None when one may not."""
    lexical: List[AllowedRegion] = []
    callers: Dict[str, AllowedRegion] = {}
    for site in sites:
        if site.region is not None:
            if site.region not in lexical:
                lexical.append(site.region)
        elif site.function is not None and id(site.function) in allowed:
            callers.setdefault(site.function.name.value, allowed[id(site.function)])
        else:
            return None
    wheres = " and ".join(r.reason for r in lexical)
    through = "; ".join(r.reason for r in callers.values())
    named = ", ".join(f"`{caller}`" for caller in callers)
    row = (lexical or list(callers.values()))[0].row
    if not callers:
        calls = "the only call" if len(sites) == 1 else f"all {len(sites)} calls"
        return AllowedRegion(f"{wheres} around {calls} of `{name}`", row)
    if not lexical:
        return AllowedRegion(f"`{name}` is called only from {named}; {through}", row)
    return AllowedRegion(f"{wheres} around the other calls of `{name}`, the rest from {named}; {through}", row)


def describe(region: AllowedRegion) -> str:
    return f"the project allows syncs here: {region.reason}"


__all__: Tuple[str, ...] = ("AllowedRegion", "SyncAllowed", "callee_matches", "describe")
