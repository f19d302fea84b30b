"""Walk a module statement by statement, tracking what each name holds at each point.

The walk is flow-sensitive in the cheap way: statements in order, both branches of an `if`
joined afterwards, loop bodies joined with the state before the loop.  `self.x` attributes are
collected from every method of a class first, so a buffer allocated in `__init__` is known in
`forward`.  Rules receive one :class:`StatementFact` per statement they asked for.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import AbstractSet, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Protocol, Sequence, Set, Tuple, Type, TypeVar, Union

import libcst as cst

from fixers.imports import module_level_names, target_names
from lint_h2d.capture import DEFAULT_CAPTURE_FUNCTIONS
from lint_h2d.capture_flow import CaptureRegions, capture_regions
from lint_h2d.cst_children import any_node, every_param, own_scope_nodes, recorded_children, type_test
from lint_h2d.inference.expressions import (
    progress_bar,
    string_key,
    Facts,
    annotation_value,
    annotated_value,
    ANNOTATED_DEVICE_STEP,
    isinstance_checks,
    SPARSE_MATRIX,
    surely_evaluated,
    dotted_name,
    element_of,
    infer,
    tensor_row,
    is_device_context,
    is_torch_device_call,
    is_bool_literal,
    literal_int,
    place_of,
    gpu_side,
    gpu_test,
)
from lint_h2d.findings import EvidenceKind, EvidenceStep, evidence_file_name
from lint_h2d.inference.numpy_values import ASSIGNMENT_MODULES, ASSIGNMENT_SOLVERS
from lint_h2d.inference.names import LayeredNames, Names, copy_names, join_names, layer
from lint_h2d.inference.resolved import (DEFAULT_DEVICE_STEP, EMPTY_MODULE_FACTS, ModuleFacts, Resolved, absolute_module, forward_input_message, forward_input_param, empty_list_message,
                                        sampling_hook_message)
from lint_h2d.inference.summary import processor_classes, sampling_hook
from lint_h2d.inference.gpu_mode import gpu_flag_fields, one_line
from lint_h2d.inference.torch_api import SIZE_FACTORIES
from lint_h2d.inference.usage import DeviceNamed, RangeBounds, SliceBounds
from lint_h2d.inference.docstrings import documented_ranks
from lint_h2d.inference.values import (logits_processor_message, augmented_number, CPU_DEFAULT_STEP, DEFAULT_ONLY_STEP, NONE_DEFAULT_STEP, cpu_by_default, rests_on, derived_step_kind, join_all, join_entries, MODULE_TENSOR_STEP, NONE, OTHER, SCALAR, UNKNOWN, Kind, LocalStep, Origin, Value,
                                       is_json_data, is_module_tensor, join, module_tensor, ordered_number,
                                       host_object)


Statement = Union[cst.SimpleStatementLine, cst.SimpleStatementSuite]


@dataclass(frozen=True)
class Scope:
    """The function (or module) a statement belongs to."""

    name: str
    qualname: str
    params: Tuple[str, ...]
    node: Optional[cst.FunctionDef]


@dataclass(frozen=True)
class StatementFact:
    small: cst.BaseSmallStatement
    # The line holding it; a SimpleStatementSuite is the one-line body of a compound statement.
    owner: Statement
    facts: Facts
    scope: Scope
    # Why this statement runs during CUDA-graph capture ("build_for_cudagraph_capture", "with
    # torch.cuda.graph"), or None.
    capture: Optional[str]
    # Enclosing `if` statements, innermost last, with the branch taken ("body" / "orelse").
    gates: Tuple[Tuple[cst.If, str], ...]
    # The statement list that holds `owner` (to know if it is alone in its block).
    block: Tuple[cst.BaseStatement, ...]
    # The node whose body is `block` (IndentedBlock or Module); None for one-line suites.
    container: Optional[Union[cst.IndentedBlock, cst.Module]] = None


def _module_imports(module: cst.Module) -> Iterator[Union[cst.Import, cst.ImportFrom]]:
    """The module-level `import` and `from ... import` statements, in order."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small


def module_aliases(module: cst.Module) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """Names bound to the torch and numpy modules (`import torch as th`, `import numpy as np`)."""
    torch_names = {"torch"}
    numpy_names = {"np", "numpy"}
    for small in _module_imports(module):
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted_name(alias.name) or ""
                bound = (
                    alias.asname.name.value
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                    else full.split(".")[0]
                )
                if full == "torch" or (alias.asname is None and full.startswith("torch.")):
                    torch_names.add(bound)
                if full == "numpy":
                    numpy_names.add(bound)
    return frozenset(torch_names), frozenset(numpy_names)


def torch_function_aliases(module: cst.Module) -> Dict[str, str]:
    """The names the module-level imports bind to attributes of `torch` itself (`from torch
    import zeros`, `from torch import tensor as T`), by spelling, to the attribute's name: a call
    of one runs that function, as `torch.zeros(...)` does (`expressions._torch_function`).  A
    name the module binds more than once at its top level (`zeros = partial(...)`, a second
    import, `fixers.imports.module_level_names`) is left out: which binding a call reads is then
    a matter of order."""
    found: Dict[str, str] = {}
    for small in _module_imports(module):
        if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                and not isinstance(small.names, cst.ImportStar) and dotted_name(small.module) == "torch":
            for alias in small.names:
                if isinstance(alias.name, cst.Name):
                    shown = alias.asname.name.value if alias.asname is not None \
                        and isinstance(alias.asname.name, cst.Name) else alias.name.value
                    found[shown] = alias.name.value
    if not found:
        return found
    counts = Counter(module_level_names(module))
    return {shown: full for shown, full in found.items() if counts[shown] == 1}


def imported_module(small: cst.ImportFrom, path: str) -> Optional[str]:
    """The dotted module `from <module> import ...` names, a relative one resolved against the
    file's own path (`from ..x import N` in `a/b/c.py`: `a.x`; a package's `__init__.py` is the
    package); None where it cannot be told (`from . import x` in a file of no path)."""
    module = dotted_name(small.module) if small.module is not None else ""
    if module is None:
        return None
    return absolute_module(len(small.relative), module, path)


def module_imports(module: cst.Module, path: str, text: Optional[str] = None) -> Dict[str, str]:
    """The module-level names that an import binds to a module, by how code spells them, to
    the module's dotted name: `import pkg.consts as C` (`C`), `import pkg.consts`
    (`pkg.consts`), `from pkg import consts` and `from . import consts` (`consts`: a module or
    a name; `Resolved.constant` tells).  `C.SOS_ID` then reads the project module's constant
    (`expressions._attribute`), as `from pkg.consts import SOS_ID` does.  A name the module
    binds twice at module level (another import, an assignment, a `def`, a `class`), or that
    a function rebinds under `global`, is left out: which binding a read sees is not known."""
    found: Dict[str, str] = {}
    for small in _module_imports(module):
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted_name(alias.name)
                if not full:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    found[alias.asname.name.value] = full
                else:
                    found[full] = full
        elif not isinstance(small.names, cst.ImportStar):
            source = imported_module(small, path)
            if source is None:
                continue
            for alias in small.names:
                if not isinstance(alias.name, cst.Name):
                    continue
                shown = alias.asname.name.value if alias.asname is not None \
                    and isinstance(alias.asname.name, cst.Name) else alias.name.value
                found[shown] = f"{source}.{alias.name.value}" if source else alias.name.value
    if not found:
        return found
    bound = Counter(module_level_names(module))
    rebound = _global_names(module, text)
    return {shown: full for shown, full in found.items()
            if bound[shown.split(".")[0]] <= 1 and shown.split(".")[0] not in rebound}


_GLOBAL_WORDS = re.compile(r"\bglobal[ \t]+([\w \t,]+)")


def _global_names(module: cst.Module, text: Optional[str]) -> FrozenSet[str]:
    """The names some `global` statement of the module's functions may declare (and rebind):
    read off the text where there is one (a `global` in a comment or a string counts too,
    which only leaves more names out), else off the tree."""
    if text is not None:
        return frozenset(word for words in _GLOBAL_WORDS.findall(text) for word in re.split(r"[ \t,]+", words) if word) \
            if "global" in text else frozenset()
    names: Set[str] = set()

    class _Finder(cst.CSTVisitor):
        def visit_Global(self, node: cst.Global) -> None:
            names.update(item.name.value for item in node.names)

    module.visit(_Finder())
    return frozenset(names)


_STDLIB_NUMBER_MODULES = frozenset({"random", "bisect"})


def stdlib_number_modules(module: cst.Module) -> FrozenSet[str]:
    """`random` and `bisect` where only `import random` / `import bisect` bind them at module
    level: there `random.randint(*bounds)` is the standard library's, a Python number or an
    error, whatever the star holds (`expressions._stdlib_number`).  Not where another import
    binds the name too (`from numpy import random`: numpy's `randint(..., size)` is an array)."""
    stdlib: Set[str] = set()
    others: Set[str] = set()
    for small in _module_imports(module):
        if isinstance(small.names, cst.ImportStar):
            return frozenset()  # `from m import *` may bind either
        for alias in small.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                others.add(alias.asname.name.value)
            elif isinstance(small, cst.Import) and full in _STDLIB_NUMBER_MODULES:
                stdlib.add(full)
            else:
                others.add(full.split(".")[0])
    return frozenset(stdlib - others)


def _import_aliases(imports: Iterable[Union[cst.Import, cst.ImportFrom]]
                    ) -> Iterator[Tuple[Optional[str], str, Optional[str], bool]]:
    """Each name `imports` bind (`_module_imports(module)`, or `_shallow_imports`), as (the
    `from` module or None, the imported dotted name, its `as` alias or None, whether the statement
    is `import x`): relative modules are None, `*` imports are left out."""
    for small in imports:
        if isinstance(small.names, cst.ImportStar):
            continue
        source = dotted_name(small.module) if isinstance(small, cst.ImportFrom) and small.module is not None \
            and not small.relative else None
        for alias in small.names:
            bound = alias.asname.name.value if alias.asname is not None \
                and isinstance(alias.asname.name, cst.Name) else None
            yield source, dotted_name(alias.name) or "", bound, isinstance(small, cst.Import)


def _shallow_imports(module: cst.Module) -> Iterator[Union[cst.Import, cst.ImportFrom]]:
    """The module-level imports (`_module_imports`) and those directly in the body of a
    module-level `try:` or `if` (`try: import torch.distributed as dist`)."""
    yield from _module_imports(module)
    for block in module.body:
        if isinstance(block, (cst.Try, cst.If)) and isinstance(block.body, cst.IndentedBlock):
            for line in block.body.body:
                if isinstance(line, cst.SimpleStatementLine):
                    yield from (small for small in line.body if isinstance(small, (cst.Import, cst.ImportFrom)))


def _scipy_spellings(module: cst.Module, submodule: str, functions: AbstractSet[str],
                     sources: AbstractSet[str], through_scipy: bool) -> FrozenSet[str]:
    """How the module's own imports let it call `functions` of `scipy.<submodule>`: the bare
    name (or its alias) of `from <source> import f` for a module of `sources`, or a dotted
    spelling through the module (`<submodule>.f` / `alias.f` after `from scipy import
    <submodule> [as alias]`, `x.f` after `import <source> [as x]`, and with `through_scipy`
    `scipy.<submodule>.f` / `alias.<submodule>.f` after `import scipy [as alias]`)."""
    found: Set[str] = set()
    # `_shallow_imports`: trackers import the solver under `try:` (`except ImportError:` leaves
    # the name unbound or None, and calling that raises before any index is used).
    for source, full, bound, plain in _import_aliases(_shallow_imports(module)):
        if source in sources and full in functions:
            found.add(bound or full)
        elif source == "scipy" and full == submodule:
            found.update(f"{bound or full}.{n}" for n in functions)
        elif plain and full in sources:
            found.update(f"{bound or full}.{n}" for n in functions)
        elif through_scipy and plain and full == "scipy":
            found.update(f"{bound or full}.{submodule}.{n}" for n in functions)
    return frozenset(found)


def assignment_solvers(module: cst.Module) -> FrozenSet[str]:
    """How the module's own imports let it call scipy's `linear_sum_assignment`: the bare name
    (or its alias) of `from scipy.optimize import linear_sum_assignment`, or a dotted spelling
    through the module (`scipy.optimize.linear_sum_assignment`, `optimize.` / `opt.` after
    `from scipy import optimize` / `import scipy.optimize as opt`)."""
    return _scipy_spellings(module, "optimize", ASSIGNMENT_SOLVERS, ASSIGNMENT_MODULES, False)


# scipy.sparse's predicates that are true only for its sparse matrices and arrays (never a
# tensor): `if sp.issparse(adj):` guards code that treats `adj` as one.
SPARSE_PREDICATES = frozenset({"issparse", "isspmatrix", "isspmatrix_csr", "isspmatrix_csc", "isspmatrix_coo",
                               "isspmatrix_lil", "isspmatrix_dok", "isspmatrix_dia", "isspmatrix_bsr"})


def sparse_checks(module: cst.Module) -> FrozenSet[str]:
    """How the module's own imports spell scipy.sparse's predicates (`SPARSE_PREDICATES`): the
    bare name (or its alias) of `from scipy.sparse import issparse`, or a dotted spelling through
    the module (`sp.issparse` after `import scipy.sparse as sp`, `sparse.issparse` after `from
    scipy import sparse`, `scipy.sparse.issparse` after `import scipy` or `import scipy.sparse`).
    A project function of the same name (one that tests for sparse torch tensors) is not one."""
    return _scipy_spellings(module, "sparse", SPARSE_PREDICATES, frozenset({"scipy.sparse"}), True)


def _submodule_aliases(module: cst.Module, parent: str, child: str) -> Set[str]:
    """Names bound to `parent.child` at module level (`import parent.child as x`, `from parent
    import child`, `from parent import child as x`; a relative import names another module)."""
    out: Set[str] = set()
    for small in _module_imports(module):
        if isinstance(small, cst.Import):
            for alias in small.names:
                if dotted_name(alias.name) == f"{parent}.{child}" and alias.asname is not None \
                        and isinstance(alias.asname.name, cst.Name):
                    out.add(alias.asname.name.value)
        elif small.module is not None and not small.relative and dotted_name(small.module) == parent \
                and not isinstance(small.names, cst.ImportStar):
            for alias in small.names:
                if dotted_name(alias.name) == child:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(bound, cst.Name):
                        out.add(bound.value)
    return out


def distributed_names(module: cst.Module) -> FrozenSet[str]:
    """Names the module's imports bind to `torch.distributed` (`import torch.distributed as
    dist`, `from torch import distributed as dist`), at module level or in a module-level
    `try:` / `if` block (`_shallow_imports`; the summary's `distributed_aliases` reads every depth; a
    function's own import there binds a local the walk of that function reads as it reads any
    import)."""
    out: Set[str] = set()
    for source, full, bound, plain in _import_aliases(_shallow_imports(module)):
        if plain and full == "torch.distributed" and bound is not None:
            out.add(bound)
        elif source == "torch" and full == "distributed":
            out.add(bound or full)
    return frozenset(out)


def nn_aliases(module: cst.Module) -> FrozenSet[str]:
    """Names bound to `torch.nn` at module level (`import torch.nn as nn`, `from torch import nn`)."""
    # Only names the prefilter recognises (`nn`, `torch_nn`: `prefilter._MayDevice._call`).
    return frozenset(name for name in _submodule_aliases(module, "torch", "nn") if name.endswith("nn"))


def functional_aliases(module: cst.Module) -> FrozenSet[str]:
    """Names bound to `torch.nn.functional` at module level (`import torch.nn.functional as F`,
    `from torch.nn import functional as F`, `from torch.nn import functional`)."""
    return frozenset(_submodule_aliases(module, "torch.nn", "functional"))


def imports_vllm(module: cst.Module) -> bool:
    """Whether the module imports from vLLM (or vLLM-Omni) at module level."""
    return any(isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative
               and (dotted_name(small.module) or "").split(".")[0] in ("vllm", "vllm_omni")
               for small in _module_imports(module))


_SCALAR_RETURNS = frozenset({"int", "float", "bool"})


def scalar_functions(module: cst.Module) -> FrozenSet[str]:
    """Module-level functions whose return annotation is a Python scalar type."""
    out = set()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.returns is not None:
            if dotted_name(stmt.returns.annotation) in _SCALAR_RETURNS:
                out.add(stmt.name.value)
    return frozenset(out)


# Statements and nodes that bind a name otherwise than `name = value` (`string_bound_once`).
_OTHER_BINDERS = (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.WithItem, cst.NamedExpr,
                  cst.ExceptHandler, cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal, cst.Del,
                  cst.MatchAs, cst.MatchStar, cst.MatchMapping)


def string_bound_once(fn: cst.FunctionDef, name: str) -> Optional[cst.SimpleString]:
    """The string literal `fn` binds `name` to, where that is the only binding of `name` in
    `fn`'s own scope (`name = "enabled"`) and `name` is no parameter: what every read of it
    reads.  None where anything else may bind it (a loop, a `with`, an import, a nested `def`,
    an unpacking, `global`), whatever the order."""
    if any(p.name.value == name for p in every_param(fn.params)):
        return None
    found: List[cst.BaseExpression] = []
    stack: List[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if node.name.value == name:
                return None
            continue
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    found.append(node.value)
                elif any_node(target.target, lambda n: isinstance(n, cst.Name) and n.value == name):
                    return None
        elif isinstance(node, _OTHER_BINDERS):
            # Where the statement binds: a loop's target, a `with` item's `as`, else anywhere in
            # it (a read of `name` there counts too: fewer literals read, never a wrong one).
            bound = node.target if isinstance(node, (cst.For, cst.CompFor)) else (
                node.asname if isinstance(node, cst.WithItem) else node)
            if bound is not None and any_node(bound, lambda n: isinstance(n, cst.Name) and n.value == name):
                return None
        stack.extend(recorded_children(node))
    return found[0] if len(found) == 1 and isinstance(found[0], cst.SimpleString) else None


def factory_sizes(value: cst.BaseExpression, torch_names: AbstractSet[str],
                  names: Mapping[str, Value]) -> Optional[Tuple[str, List[cst.BaseExpression]]]:
    """The sizes of the allocation `value` makes first (`torch.zeros((a, b), ...)`, `torch.empty(a,
    b)`, `torch.full((a, b), v)`, `x.new_zeros((a, b))`, also under `.to(...)` and other methods
    called on it), with the factory as shown; None where `value` is no such call or its sizes
    are one argument that may be a sequence (`torch.zeros(shape)`).  `torch_names` spell the
    module where `names`, the scope's bindings, do not rebind them."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and isinstance(value.func.value, cst.Call):
        value = value.func.value  # `torch.zeros(n, m).to(dev)`: the allocation runs first
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
        return None
    method = value.func.attr.value
    receiver = value.func.value
    if isinstance(receiver, cst.Name) and receiver.value in torch_names and receiver.value not in names:
        if method not in SIZE_FACTORIES:
            return None
        shown = f"{receiver.value}.{method}"
    elif method in ("new_empty", "new_zeros", "new_ones", "new_full"):
        shown = f".{method}"
    else:
        return None
    positional = [a for a in value.args if a.keyword is None]
    if any(a.star for a in positional):
        return None
    keyword = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "size"), None)
    first = keyword if keyword is not None else positional[0].value if positional else None
    if isinstance(first, (cst.Tuple, cst.List)):
        return shown, [e.value for e in first.elements if not isinstance(e, cst.StarredElement)]
    if keyword is None and len(positional) > 1 and method not in ("full", "new_full", "empty_strided"):
        return shown, [a.value for a in positional]  # `torch.zeros(a, b)`: each an int
    return None


class OnSelf(Protocol):
    """What a method's walk calls for each field of `self` it sets, while its class's fields
    are collected (`ModuleWalker.walk_class`): the field, the value, and whether the statement
    only declares it (`self.x: T` with no value assigns nothing: its annotation counts only
    for a field no statement assigns)."""

    def __call__(self, attr: str, value: Value, declaration: bool = False) -> None: ...


class _Walker:
    """One pass over a body; `emit` receives the statements a rule asked for."""

    def __init__(
        self,
        base: Facts,
        scope: Scope,
        capture: Optional[str],
        wants: Callable[[cst.BaseSmallStatement, bool], bool],
        emit: Callable[[StatementFact], None],
        on_self_assign: Optional[OnSelf],
        walk_function: Callable[[cst.FunctionDef, Facts, Optional[str]], None],
        walk_class: Callable[[cst.ClassDef, Facts], None],
    ) -> None:
        self.base = base
        self.scope = scope
        self.capture = capture
        self.wants = wants
        self.emit = emit
        self.on_self_assign = on_self_assign
        self.walk_function = walk_function
        self.walk_class = walk_class
        self.gates: List[Tuple[cst.If, str]] = []
        self.container: Optional[Union[cst.IndentedBlock, cst.Module]] = None
        # Names that construct the class being collected (`cls`, the class name): their
        # keyword arguments are the instance's fields (dataclasses built in `create()`).
        self.constructors: FrozenSet[str] = frozenset()
        # Statements and suites that run during graph capture (`CaptureRegions.bodies`).
        self.regions: Mapping[int, str] = {}
        # A silent pass computes what a loop body rebinds (its back-edge) without emitting.
        self.silent = False
        # Whether `names` may hold dotted keys (`args.gpu`), dropped when the root rebinds.
        self.dotted = False
        # Whether `names` may hold a field of the instance a method assigned (`bind_own_field`).
        self.own_fields = False
        # Whether the module may hold a walrus (`:=`): binding them costs a traversal.
        self.walrus = True
        # The nodes with a walrus below them (`walrus_holders`), when known.
        self.walrus_holders: Optional[AbstractSet[int]] = None
        # What the `return`s of the function being walked give, when a caller asked
        # (`ModuleWalker.returns_of`, for a nested `def`); None: not collected.
        self.returned: Optional[List[Value]] = None
        # Walks a nested `def` for what calling it returns (`ModuleWalker.returns_of`).
        self.returns_of: Optional[Callable[[cst.FunctionDef, Facts], Optional[Value]]] = None
        # The names the function being walked declares `global`, and what its bindings of
        # them bind (`ModuleWalker.assigned_globals`); None: not collected.
        self.global_sink: Optional[Tuple[FrozenSet[str], Dict[str, Value]]] = None
        # At module level: what the file's functions bind to a module-level name they declare
        # `global` (`ModuleWalker.assigned_globals`), joined into every binding of the name.
        self.module_globals: Mapping[str, Value] = {}

    def facts(self, names: Names) -> Facts:
        return self.base.with_names(names)

    # -- statements ---------------------------------------------------------------------
    def body(self, statements: Sequence[cst.BaseStatement], names: Names,
             container: Optional[Union[cst.IndentedBlock, cst.Module]] = None) -> Names:
        block = tuple(statements)
        saved = self.container
        self.container = container
        for stmt in statements:
            if self.regions and self.capture is None and id(stmt) in self.regions:
                names = self.in_region(stmt, lambda n, s=stmt: self.statement(s, n, block), names)  # type: ignore[misc]
            else:
                names = self.statement(stmt, names, block)
        self.container = saved
        return names

    def in_region(self, node: cst.CSTNode, walk: Callable[[Names], Names],
                  names: Names) -> Names:
        """Walk `node` as capture code when the capture pre-pass marked it (`CaptureRegions`)."""
        reason = self.regions.get(id(node)) if self.capture is None else None
        if reason is None:
            return walk(names)
        self.capture = reason
        try:
            return walk(names)
        finally:
            self.capture = None

    def statement(self, stmt: cst.BaseStatement, names: Names, block: Tuple[cst.BaseStatement, ...]) -> Names:
        if isinstance(stmt, cst.SimpleStatementLine):
            return self.line(stmt, stmt.body, names, block)
        if isinstance(stmt, cst.If):
            return self.if_(stmt, names)
        if isinstance(stmt, (cst.For, cst.While)):
            return self.loop(stmt, names)
        if isinstance(stmt, cst.With):
            return self.with_(stmt, names)
        if isinstance(stmt, cst.Try):
            return self.try_(stmt, names)
        if isinstance(stmt, cst.FunctionDef):
            returned: Optional[Value] = None
            if not self.silent:
                # A body runs when called, not inside an enclosing `with torch.device(...)`.
                inner = replace(self.facts(names), default_device=None)
                self.walk_function(stmt, inner, None)
                if self.scope.node is not None and self.returns_of is not None:
                    returned = self.returns_of(stmt, inner)
            self.bind_name(stmt.name.value, self.definition() if returned is None
                           else replace(OTHER, returns=returned), names)
            return names
        if isinstance(stmt, cst.ClassDef):
            if not self.silent:
                self.walk_class(stmt, replace(self.facts(names), default_device=None))
            self.bind_name(stmt.name.value, self.definition(), names)
            return names
        if isinstance(stmt, cst.Match):
            self.walrus_in(stmt.subject, names)
            result: Optional[Names] = None
            for case in stmt.cases:
                branch = copy_names(names)
                for captured in _captures(case.pattern):
                    self.bind_name(captured, UNKNOWN, branch)  # `case [t, *_]:` rebinds `t`
                branch = self.suite(case.body, branch)
                result = branch if result is None else _join_names(result, branch)
            return _join_names(names, result) if result is not None else names
        if hasattr(cst, "TryStar") and isinstance(stmt, getattr(cst, "TryStar")):
            return self.try_(stmt, names)
        return names

    def definition(self) -> Value:
        """What a `def`/`class` binds: at module level, the project's function or class of that
        name (its resolved facts apply); nested, a local object."""
        return Value(Kind.OTHER, origin=Origin.GLOBAL) if self.scope.node is None \
            and self.scope.name == "<module>" else OTHER

    def suite(self, suite: cst.BaseSuite, names: Names) -> Names:
        if isinstance(suite, cst.IndentedBlock):
            return self.in_region(suite, lambda n: self.body(suite.body, n, suite), names)
        if isinstance(suite, cst.SimpleStatementSuite):
            return self.in_region(suite, lambda n: self.line(suite, suite.body, n, ()), names)
        return names

    def line(self, owner: Statement, smalls: Sequence[cst.BaseSmallStatement], names: Names, block: Tuple[cst.BaseStatement, ...]) -> Names:
        for small in smalls:
            if self.own_fields:
                self.forget_own_fields(small, names)
            if self.walrus and not (isinstance(small, cst.Expr) and isinstance(small.value, cst.NamedExpr)):
                value = getattr(small, "value", None)
                if isinstance(value, cst.BaseExpression):
                    self.walrus_in(value, names)
            if isinstance(small, cst.Return) and self.returned is not None and not self.silent:
                self.returned.append(NONE if small.value is None else infer(small.value, self.facts(names)))
            if not self.silent and self.wants(small, self.capture is not None):
                self.emit(
                    StatementFact(small, owner, self.facts(_snapshot(small, names)), self.scope,
                                  self.capture, tuple(self.gates), block,
                                  self.container if block else None)
                )
            if self.on_self_assign is not None and self.constructors:
                self.record_constructor(small, names)
            if self.on_self_assign is not None:
                self.record_buffer(small, names)
            names = self.bind_small(small, names)
            self.track_container(small, names)
            self.track_item_store(small, names)
        return names

    def walrus_in(self, expression: cst.BaseExpression, names: Names) -> None:
        """Bind every `(x := ...)` inside an expression (an `if` test, a value): the walk
        must see the rebinding before the body runs."""
        if not self.walrus:
            return
        for target, value in _walruses(expression, self.walrus_holders):
            self.bind_name(target, infer(value, self.facts(names)), names)

    def track_item_store(self, small: cst.BaseSmallStatement, names: Names) -> None:
        """`d[k] = t` into a dict (or list) built in this scope from displays and stores, or
        `self.d[k] = t`: its element type grows (`d[k][0] = 0` is then a write into `t`)."""
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Subscript)):
            return
        target = small.targets[0].target
        assert isinstance(target, cst.Subscript)
        base = target.value
        if isinstance(base, cst.Name):
            current = names.get(base.value)
            if current is None or current.kind != Kind.OTHER or (current.element is None and current.length != 0):
                return
            added = infer(small.value, self.facts(names))
            if is_declared(current) and _vague(added):
                return  # `d: Dict[int, Tuple[int, int]] = {}`: a store nothing tells about adds nothing
            element = added if current.element is None else join(current.element, added)
            key = current.key
            entries = None
            if key is not None and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                key = join(key, infer(target.slice[0].slice.value, self.facts(names)))  # a dict
                name = string_key(target.slice[0].slice.value)
                # `d["buf"] = u`: that key may now hold `u` too; any other key: any key may.
                entries = join_entries(current.entries, ((name, added),)) if name is not None else None
            names[base.value] = replace(current, element=element, items=None, length=None, key=key, entries=entries)
        elif isinstance(base, cst.Attribute) and isinstance(base.value, cst.Name) \
                and base.value.value == self.base.self_name and self.on_self_assign is not None:
            # Only into a field known (from the previous pass) to be a dict or list: a store
            # into a tensor field is what the rules look at, not a new value of the field.
            current = self.base.self_attributes.get(base.attr.value)
            if current is not None and current.kind == Kind.OTHER and current.type_name is None \
                    and (current.length == 0 or current.element is not None):
                added = infer(small.value, self.facts(names))
                if is_declared(current) and _vague(added):
                    return  # `self.d: Dict[K, Tuple[int, int]] = {}`: a store nothing tells about adds nothing
                stored_key: Optional[Value] = None
                if current.key is not None and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                    # Into a dict: it stays one (`self.d.values()`, `.items()` iterate what is stored).
                    stored_key = infer(target.slice[0].slice.value, self.facts(names))
                self.on_self_assign(base.attr.value, Value(Kind.OTHER, element=added, key=stored_key))

    def track_container(self, small: cst.BaseSmallStatement, names: Names) -> None:
        """`xs.append(v)` / `xs.insert(i, v)` / `xs.extend(ys)` on a list whose every element is
        known (built from displays and appends in this scope): its element type grows."""
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return
        call = small.value
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.attr.value in ("update", "setdefault", "__setitem__"):
            held = names.get(func.value.value)
            if held is not None and held.entries is not None:
                # `d.update(...)`: any key may now hold anything it brings.
                names[func.value.value] = replace(held, entries=None)
            return
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("append", "insert", "extend")):
            return
        if isinstance(func.value, cst.Subscript):
            self.track_inner_list(call, func.value, names)
            return
        if not isinstance(func.value, cst.Name):
            return
        name = func.value.value
        current = names.get(name)
        if current is None or current.kind != Kind.OTHER or (current.element is None and current.length != 0):
            return
        argument = self._list_argument(call, names)
        if argument is None:
            names[name] = OTHER
            return
        if is_declared(current) and _vague(argument):
            return  # `xs: List[int] = []`: an append nothing tells about adds nothing
        added = _added_by(func.attr.value, argument)
        names[name] = OTHER if added is None else _grown_list(current, added)

    def track_inner_list(self, call: cst.Call, held: cst.Subscript, names: Names) -> None:
        """`rows[k].append(v)` (`insert`, `extend`) on a list of lists this scope builds
        (`rows.append([])`, `[[] for _ in r]`): whichever row `k` picks, it holds `v` too, so
        every row's element grows by it (`for b in rows[a]` then reads `v`).  Only a plain
        list of plain lists: a dict's values, a tuple display's positions, a declared list or
        rows of unknown contents are left as they are (what they hold stays unknown)."""
        if not (isinstance(held.value, cst.Name) and len(held.slice) == 1
                and isinstance(held.slice[0].slice, cst.Index)):
            return
        name = held.value.value
        current = names.get(name)
        if current is None or not _plain_list(current) or current.element is None \
                or not _plain_list(current.element) or is_declared(current):
            return
        assert isinstance(call.func, cst.Attribute)
        argument = self._list_argument(call, names)
        added = None if argument is None else _added_by(call.func.attr.value, argument)
        row = OTHER if added is None else _grown_list(current.element, added)
        names[name] = replace(current, element=row)

    def _list_argument(self, call: cst.Call, names: Names) -> Optional[Value]:
        """The value `xs.append(v)` / `xs.insert(i, v)` / `xs.extend(ys)` is given (`v`, `ys`);
        None for a call of another shape (keywords, `*args`, another count)."""
        func = call.func
        assert isinstance(func, cst.Attribute)
        args = [a for a in call.args if a.keyword is None and not a.star]
        if len(args) != (2 if func.attr.value == "insert" else 1) or len(args) != len(call.args):
            return None
        return infer(args[-1].value, self.facts(names))

    def bind_name(self, name: str, value: Value, names: Names) -> None:
        if self.global_sink is not None and name in self.global_sink[0]:
            sink = self.global_sink[1]
            sink[name] = join(sink[name], value) if name in sink else value
        elif self.module_globals and name in self.module_globals:
            # `_WS = None` here, `global _WS; _WS = torch.empty(...)` in a function: a function
            # reads whichever ran last (a write into `None` raises, `join` drops it).
            value = join(value, self.module_globals[name])
        names[name] = value
        prefix = name + "."
        stale = [k for k in names if k.startswith(prefix)] if self.dotted else ()
        for key in stale:
            del names[key]

    def bind_own_field(self, dotted: str, attr: str, value: Value, names: Names) -> None:
        """`self.buf = torch.ones(n, device=x.device)` in a method: a later `self.buf[i] = 1`
        on that path writes into that tensor, whatever the class's other methods put in the
        field (`[]` in `reset()`, `None` in `__init__`): their join is what a method that did
        not assign the field sees.  Only a tensor of known place is bound.  Where paths meet,
        a field bound on one of them only is dropped (`_join_names`: on the other path it
        holds the class's values), and a call that may assign the field again (a method of
        the instance, the instance passed along) ends it (`forget_own_fields`)."""
        node = self.scope.node
        if node is not None and value.kind in (Kind.DEVICE, Kind.CPU):
            names[dotted] = replace(value, origin=Origin.SELF, root=self.base.self_name, path=f"self.{attr}")
            self.dotted = self.own_fields = True
        elif dotted in names:
            del names[dotted]

    def forget_own_fields(self, small: cst.BaseSmallStatement, names: Names) -> None:
        """Drop what `bind_own_field` bound when `small` calls a method of the instance or
        passes the instance along: the call may assign the field again."""
        self_name = self.base.self_name
        if self_name is None or not any_node(small, lambda n: _passes_instance(n, self_name)):
            return
        prefix = self_name + "."
        for key in [k for k in names if k.startswith(prefix) and k.count(".") == 1]:
            del names[key]
        self.own_fields = False

    def record_buffer(self, small: cst.BaseSmallStatement, names: Names) -> None:
        """`self.register_buffer("name", tensor)`: `self.name` is that tensor (nn.Module)."""
        call = small.value if isinstance(small, cst.Expr) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "register_buffer" and isinstance(call.func.value, cst.Name)
                and call.func.value.value == self.base.self_name and len(call.args) >= 2
                and all(a.keyword is None and not a.star for a in call.args[:2])):
            return
        name = call.args[0].value
        if isinstance(name, cst.Name) and self.scope.node is not None:
            # `NAME = "enabled"`, then `register_buffer(NAME, t)` (as `summary._registered_buffer`).
            name = string_bound_once(self.scope.node, name.value) or name
        if not isinstance(name, cst.SimpleString) or (isinstance(call.args[1].value, cst.Name)
                                                       and call.args[1].value.value == "None"):
            return
        try:
            attr = ast.literal_eval(name.value)
        except (ValueError, SyntaxError):
            return
        if isinstance(attr, str):
            assert self.on_self_assign is not None
            self.on_self_assign(attr, module_tensor(infer(call.args[1].value, self.facts(names)),
                                                    LocalStep(MODULE_TENSOR_STEP, call)))

    def record_constructor(self, small: cst.BaseSmallStatement, names: Names) -> None:
        value = getattr(small, "value", None)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                and value.func.value in self.constructors):
            return
        assert self.on_self_assign is not None
        for arg in value.args:
            if arg.keyword is not None:
                self.on_self_assign(arg.keyword.value, infer(arg.value, self.facts(names)))

    def if_(self, stmt: cst.If, names: Names) -> Names:
        self.walrus_in(stmt.test, names)
        taken = self.gpu_branch(stmt, names)
        if taken is not None:
            return taken
        self.gates.append((stmt, "body"))
        then = self.branch(stmt.body, self.narrowed(copy_names(names), stmt.test, True), stmt.test, True)
        self.gates.pop()
        orelse = stmt.orelse
        if orelse is None:
            joined = _join_names(names, then)
            if _always_leaves(stmt.body):
                # `if not isinstance(x, int): raise ...`: only the paths where the test is false
                # go on, so `x` is an int after the statement.
                return self.narrowed(joined, stmt.test, False)
            return joined
        self.gates.append((stmt, "orelse"))
        # An `elif` or `else:` runs where the test was false: what that proves holds there.
        if isinstance(orelse, cst.If):
            other = self.if_(orelse, self.narrowed(copy_names(names), stmt.test, False))
        else:
            other = self.branch(orelse.body, self.narrowed(copy_names(names), stmt.test, False), stmt.test, False)
        self.gates.pop()
        return _join_names(then, other)

    def gpu_branch(self, stmt: cst.If, names: Names) -> Optional[Names]:
        """`if use_gpu: ... else: ...` (`gpu_mode.gpu_mode`): the names after the branch the
        test selects where the accelerator is in use, the other branch walked silently (it runs
        only on a machine without one, where no write copies to a device).  A name the chosen
        branch binds to a device tensor that the other binds otherwise says so, as a
        convention.  None where the test is no such switch, or a branch leaves the block (what
        follows then runs on one kind of machine only, which the walk does not track)."""
        holds = gpu_test(stmt.test, self.base)  # (the test reads no local name: `self.facts` not needed)
        orelse = stmt.orelse
        if holds is None or _always_leaves(stmt.body) or isinstance(orelse, cst.Else) and _always_leaves(orelse.body):
            return None
        self.gates.append((stmt, "body"))
        then = self.quiet(not holds, lambda: self.suite(
            stmt.body, self.narrowed(copy_names(names), stmt.test, True)))
        self.gates.pop()
        if orelse is None:
            other = names if holds else copy_names(names)
        else:
            self.gates.append((stmt, "orelse"))
            other_names = self.narrowed(copy_names(names), stmt.test, False)
            other = self.quiet(holds, lambda: self.if_(orelse, other_names) if isinstance(orelse, cst.If)
                               else self.suite(orelse.body, other_names))
            self.gates.pop()
        chosen, dropped = (then, other) if holds else (other, then)
        for key in _touched(chosen):
            value, before = chosen.get(key), dropped.get(key)
            if value is not None and before is not None:
                chosen[key] = gpu_side(value, before, stmt.test)
        return chosen

    def quiet(self, silent: bool, walk: Callable[[], Names]) -> Names:
        """`walk()`, emitting nothing where `silent` (a branch only a machine without an
        accelerator or another backend than CUDA takes, a loop's first pass)."""
        if not silent or self.silent:
            return walk()
        self.silent = True
        try:
            return walk()
        finally:
            self.silent = False

    def branch(self, body: cst.BaseSuite, names: Names, test: cst.BaseExpression,
               holds: bool) -> Names:
        """Walk a branch of an `if` taken where `test` is `holds`.  Where that proves a tensor is
        on another backend than CUDA (`other_backend`: `if boxes.device.type == "npu":`), the
        branch is walked for what it binds but reports nothing: it runs only off CUDA, where no
        write is a CUDA host-to-device copy (and for a CUDA tensor the test is false)."""
        found = other_backend(test, holds) if not self.silent else None
        if found is None:
            return self.suite(body, names)
        current = names.get(found[0])
        silent = current is not None and (current.kind.is_tensor or current.kind == Kind.UNKNOWN)
        return self.quiet(silent, lambda: self.suite(body, names))

    def narrowed(self, names: Names, test: cst.BaseExpression, holds: bool) -> Names:
        """`names` where `test` is known to be `holds`, with what that proves about numbers:
        a name `isinstance` proves to be a Python `int`/`float`/`bool` is a host scalar, and one
        it proves to be an instance of a project class is one (its fields are the class's).
        (`python -O` drops `assert`s; serving code does not run so, and the check documents
        what the author relies on.)"""
        for name, type_name in number_checks(test, holds):
            if names.get(type_name) is None:  # the builtin, not a name the module rebinds
                self.bind_name(name, SCALAR.because(LocalStep(
                    f"`{name}` is a Python `{type_name}` here (`isinstance` check)", test)), names)
        for name, class_name in class_checks(test, holds):
            # A name of unknown kind, or an object (of a declared base class, `md:
            # AttentionMetadata`, or a container the check narrows), is an instance of the
            # project class the check names; a tensor or a number stays what it is.
            current = names.get(name)
            short = class_name.split(".")[-1]
            if current is not None and (current.kind not in (Kind.UNKNOWN, Kind.OTHER) or current.type_name == short):
                continue
            if not self.facts(names).project.knows_class(short):
                continue  # not a project class: nothing more is known of its instances
            self.bind_name(name, Value(Kind.OTHER, type_name=short).because(LocalStep(
                f"`{name}` is a `{short}` here (`isinstance` check)", test)), names)
        for name, value in non_tensor_checks(test, holds, self.facts(names)):
            self.bind_name(name, value, names)
        for name, rank in rank_checks(test, holds):
            # `assert logits.dim() == 1`: a tensor of unknown rank has that many dimensions here
            # (the summary reads a parameter's top-level `assert` the same, `summary.shape_unpacking`).
            current = names.get(name)
            if current is not None and current.kind.is_tensor and current.rank is None:
                self.bind_name(name, replace(current, rank=rank).because(LocalStep(
                    f"`{name}` has {rank} dimensions here (its rank is tested)", test,
                    derived_step_kind(current))), names)
        self_name = self.base.self_name
        for node, other in compared_names(test, holds, self_name):
            facts = self.facts(names)
            current = infer(node, facts)
            if current.kind != Kind.UNKNOWN or ordered_number(current) or current.element is not None \
                    or current.items is not None or current.key is not None:
                continue  # known otherwise (a tensor, a number, a container): that stays
            if literal_int(other) is None and infer(other, facts).kind != Kind.SCALAR:
                continue  # ordered against a tensor or an object: nothing follows
            key = node.value if isinstance(node, cst.Name) else f"{self_name}.{node.attr.value}"
            step = LocalStep(f"`{key}` is ordered against a number in this test: an integer when it indexes"
                             " (a list, `None` or a tensor of several elements would raise there; a float"
                             " index raises), unless it is a one-element tensor (a convention)",
                             test, EvidenceKind.CONVENTION.value)
            ordered = replace(current, integer=True, evidence=current.evidence + (step,))
            if isinstance(node, cst.Name):
                self.bind_name(key, ordered, names)
            else:
                # A field of the instance (`if i < self.edge_unroll:`), on this path until a call
                # that may assign it again (`forget_own_fields`), as `narrow_sizes` binds one.
                names[key] = ordered
                self.dotted = self.own_fields = True
        return names

    def loop(self, stmt: Union[cst.For, cst.While], names: Names) -> Names:
        self.walrus_in(stmt.iter if isinstance(stmt, cst.For) else stmt.test, names)
        if not self.silent:
            # The second iteration starts from what the first one left (`t[0] = 0` then
            # `t = [0] * 4`): a silent pass finds it, the real pass starts from the join.
            first = self.quiet(True, lambda: self._loop_once(stmt, copy_names(names)))
            names = _join_names(names, first)
        after = self._loop_once(stmt, copy_names(names))
        merged = _join_names(names, after)
        if stmt.orelse is not None:
            merged = self.suite(stmt.orelse.body, merged)
        return merged

    def _loop_once(self, stmt: Union[cst.For, cst.While], names: Names) -> Names:
        if isinstance(stmt, cst.For):
            self.bind_target(stmt.target, self.iteration_value(stmt.iter, names), names)
        if isinstance(stmt, cst.While):
            self.walrus_in(stmt.test, names)
        return self.suite(stmt.body, names)

    def with_(self, stmt: cst.With, names: Names) -> Names:
        # Graph blocks are capture code through `self.regions` (the pre-pass resolves imports
        # and shadowed names; a suffix match here took `self.cuda.graph(g)` for one).
        names = copy_names(names)
        context: Optional[LocalStep] = None
        other_place = False  # `with torch.device("cpu")` inside a device context undoes it
        for item in stmt.items:
            self.walrus_in(item.item, names)
            if context is None and is_device_context(item.item, self.facts(names)):
                context = LocalStep("inside `with torch.device(...)`: a factory without `device=`"
                                    " allocates on that device", item.item)
            elif isinstance(item.item, cst.Call) and is_torch_device_call(item.item, self.base):
                other_place = True  # the call's name is all it reads: no per-path names needed
            if item.asname is not None:
                # `with tqdm(xs) as bar:` binds the bar itself (its `__enter__` returns it).
                entered = progress_bar(item.item, self.facts(names))
                self.bind_target(item.asname.name, entered if entered is not None else UNKNOWN, names)
        if context is None and not (other_place and self.base.default_device is not None):
            return self.suite(stmt.body, names)
        saved = self.base
        self.base = replace(saved, default_device=context)
        try:
            return self.suite(stmt.body, names)
        finally:
            self.base = saved

    def try_(self, stmt: cst.BaseCompoundStatement, names: Names) -> Names:
        body = self.suite(stmt.body, copy_names(names))
        merged = _join_names(names, body)
        for handler in getattr(stmt, "handlers", ()):
            branch = copy_names(names)
            if handler.name is not None:
                self.bind_target(handler.name.name, OTHER, branch)
            merged = _join_names(merged, self.suite(handler.body, branch))
        orelse = getattr(stmt, "orelse", None)
        if orelse is not None:
            merged = _join_names(merged, self.suite(orelse.body, copy_names(body)))
        final = getattr(stmt, "finalbody", None)
        if final is not None:
            merged = self.suite(final.body, merged)
        return merged

    # -- bindings -----------------------------------------------------------------------
    def iteration_value(self, iterable: cst.BaseExpression, names: Names) -> Value:
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
            if iterable.func.value == "range":
                return SCALAR
            if iterable.func.value == "enumerate":
                inner = _enumerated(iterable, self.facts(names))
                return Value(Kind.OTHER, length=2, items=(SCALAR, inner))
        if isinstance(iterable, (cst.Tuple, cst.List)) and iterable.elements and not any(
                isinstance(e, cst.StarredElement) for e in iterable.elements):
            # `for t in (m.a_cpu, m.b_cpu):` binds each CPU tensor in turn (only CPU ones: no
            # rule reads a joined CPU value as a device tensor).
            items = [infer(e.value, self.facts(names)) for e in iterable.elements]
            if all(v.kind == Kind.CPU for v in items):
                joined = items[0]
                for v in items[1:]:
                    joined = join(joined, v)
                return joined
        value = infer(iterable, self.facts(names))
        if value.kind.is_tensor:
            row = tensor_row(value)
            if value.kind == Kind.DEVICE and row.rank is not None:
                # `for row in buf:` says why `row` has one dimension fewer (as unpacking does).
                shown = dotted_name(iterable) or "the tensor"
                row = row.because(LocalStep(f"one row of `{shown}` (a {value.rank}-D tensor) per iteration", iterable,
                                            derived_step_kind(value)))
            return row
        if value.key is not None:
            return value.key if not value.key.none else UNKNOWN  # a dict: its keys
        if value.element is not None:
            return value.element
        return element_of(value) or UNKNOWN  # `for c in cols:` of a numpy array: its rows

    def bind_small(self, small: cst.BaseSmallStatement, names: Names) -> Names:
        """Bind in place: `names` belongs to the current path (branches get copies), and
        copying it per statement made long modules quadratic."""
        if isinstance(small, cst.Assign):
            value = infer(small.value, self.facts(names))
            out = names
            for target in small.targets:
                self.bind_target(target.target, value, out, small.value)
            unpacked = shape_unpacked(small)
            if unpacked is not None:
                _ranked_by_unpacking(small, unpacked, out)
            self.narrow_sizes(small.value, out, {n for t in small.targets for n in target_names(t.target)})
            return out
        if isinstance(small, cst.AnnAssign):
            out = names
            if small.value is not None:
                value = infer(small.value, self.facts(names))
                if (value.kind == Kind.UNKNOWN and value.type_name is None and value.element is None) \
                        or _unfilled(value) or host_object(value) or is_json_data(value):
                    # A value nothing tells about, an empty container, or parsed JSON or a
                    # configuration's field (a host object of a type nothing shows): what the
                    # annotation declares.
                    value = _declared(small, value, self.facts(names))
            else:
                value = annotated_value(small.annotation, self.facts(names))
                if isinstance(small.target, cst.Attribute) and isinstance(small.target.value, cst.Name) \
                        and small.target.value.value == self.base.self_name:
                    # `self.queue_ptr: Tensor` with no value assigns nothing: the field keeps
                    # what `register_buffer` put there; the class collection takes the
                    # annotation only for a field nothing assigns (`OnSelf`).
                    if self.on_self_assign is not None:
                        self.on_self_assign(small.target.attr.value, value, True)
                    return out
            self.bind_target(small.target, value, out, small.value)
            return out
        if isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name):
                out = names
                current = out.get(small.target.value, UNKNOWN)
                value = infer(small.value, self.facts(names))
                if current.kind == Kind.SCALAR and value.kind == Kind.SCALAR:
                    added = tuple(s for s in value.evidence if s not in current.evidence)
                    if added:
                        out[small.target.value] = current.because(*added)
                    return names
                if not current.kind.is_tensor:
                    out[small.target.value] = UNKNOWN
                return out
            self.augment_field(small, names)
            return names
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            out = names
            aliases = small.names
            if isinstance(aliases, cst.ImportStar):
                return names
            for alias in aliases:
                constant = self.imported_constant(small, alias)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bound = alias.asname.name.value
                    if bound not in self.base.torch_names and bound not in self.base.numpy_names:
                        out[bound] = constant or Value(Kind.OTHER, origin=Origin.GLOBAL)
                elif constant is not None and isinstance(alias.name, cst.Name):
                    out[alias.name.value] = constant
                else:
                    bound = (dotted_name(alias.name) or "").split(".")[0]
                    if bound and bound not in self.base.torch_names and bound not in self.base.numpy_names:
                        out[bound] = Value(Kind.OTHER, origin=Origin.GLOBAL)
            return out
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.NamedExpr):
            out = names
            self.bind_target(small.value.target, infer(small.value.value, self.facts(names)), out)
            return out
        if isinstance(small, cst.Assert):
            return self.narrowed(names, small.test, True)  # past it, the test held
        return names

    def augment_field(self, small: cst.AugAssign, names: Names) -> None:
        """`self.total += v` in a method whose fields are being collected: the field may hold
        what the operator leaves (`augmented_number`: a tensor `v` added to a number).

        Why: the field pass recorded plain assignments only, so `self.total = 0` and, in a loop,
        `self.total += lens[i]` (a 0-dim device tensor) read as "only ever a Python number", and
        `loc[i] = self.total` before that line was reported as a host scalar write, though from
        the second iteration on it writes a device tensor (lightllm's mistral infer_struct)."""
        target = small.target
        if self.on_self_assign is None or not (
                isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == self.base.self_name):
            return
        facts = self.facts(names)
        result = augmented_number(infer(target, facts), infer(small.value, facts))
        if result is not None:
            self.on_self_assign(target.attr.value, result)

    def imported_constant(self, small: Union[cst.Import, cst.ImportFrom], alias: cst.ImportAlias) -> Optional[Value]:
        """What `from m import NAME` binds where the project's module `m` binds `NAME` at module
        level only to numbers or displays of them (`Resolved.constant`); None otherwise."""
        if not isinstance(small, cst.ImportFrom) or small.module is None or not isinstance(alias.name, cst.Name):
            return None
        module = dotted_name(small.module)
        if module is None:
            return None
        if small.relative:
            module = imported_module(small, self.base.path)
            if module is None:
                return None
        return self.base.project.constant(module, alias.name.value)

    def narrow_sizes(self, value: cst.BaseExpression, names: Names, bound: AbstractSet[str]) -> None:
        """Past `kernel = torch.zeros((c, c // g, k, k), ...)` (a size factory or `x.new_zeros`,
        `factory_sizes`), which raises unless each size is an int (a numpy int, or an integer
        tensor of one element), a size that is a name or a field of `self` nothing told about is
        taken to be an int on this path: `kernel[i, i % (c // g), k // 2, k // 2] = 1` then writes
        one element (evidence, not proof: a one-element 1-D integer tensor is a size too, and
        an index that takes it is advanced).  Not a name the statement binds."""
        # Asked of every assignment: the syntax first, the scope's facts only for an allocation.
        found = factory_sizes(value, self.base.torch_names, names)
        if found is None:
            return
        factory, sizes = found
        facts = self.facts(names)  # holds `names` itself: it sees the bindings made below
        self_name = self.base.self_name
        for size in sizes:
            if isinstance(size, cst.Name) and size.value not in bound:
                key = size.value
            elif isinstance(size, cst.Attribute) and _own_field(size, self_name):
                key = f"{self_name}.{size.attr.value}"
            else:
                continue
            current = infer(size, facts)
            if current.kind != Kind.UNKNOWN or current.type_name is not None or current.element is not None:
                continue
            names[key] = SCALAR.because(LocalStep(
                f"`{key}` is a size of `{factory}(...)` here, which raises unless it is an int", size))
            if "." in key:
                self.dotted = self.own_fields = True

    def bind_target(self, target: cst.BaseExpression, value: Value, names: Names, source: Optional[cst.BaseExpression] = None) -> None:
        if isinstance(target, cst.Name):
            self.bind_name(target.value, value, names)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            source_elements = (
                source.elements if isinstance(source, (cst.Tuple, cst.List)) else None
            )
            # Evaluate every right-hand element before binding any (`a, b = b, a`).
            pairs: List[Tuple[cst.BaseExpression, Value, Optional[cst.BaseExpression]]] = []
            unpacked = _unpacked(value)  # what every position gets, when the elements are alike
            starred = any(isinstance(e, cst.StarredElement) for e in elements)
            for i, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    # `first, *rest = bufs`: a list of what the other positions get, when the
                    # elements are alike (of a tuple display's positions, nothing is said).
                    rest = Value(Kind.OTHER, element=unpacked) if unpacked is not None and source_elements is None \
                        else OTHER
                    pairs.append((element.value, rest, None))
                    continue
                item_value = UNKNOWN
                item_source: Optional[cst.BaseExpression] = None
                if source_elements is not None and len(source_elements) == len(elements):
                    item_source = source_elements[i].value
                    item_value = infer(item_source, self.facts(names))
                elif value.items is not None and len(value.items) == len(elements) and not starred:
                    item_value = value.items[i]  # `for slot, n, _ in slots`, `a, b = pair`
                elif value.kind == Kind.OTHER and value.length == 2 and i == 0:
                    item_value = SCALAR  # enumerate()
                elif unpacked is not None and (not starred or source_elements is None):
                    # `a, b = make_pair()`, `for r, c in pairs`, `first, *rest = bufs`
                    item_value = unpacked
                    if value.kind.is_tensor and item_value.rank is not None:
                        shown = dotted_name(element.value) or "the target"
                        item_value = item_value.because(LocalStep(
                            f"`{shown}` is a row of a {value.rank}-D tensor, unpacked by position",
                            element.value, derived_step_kind(value)))
                    elif item_value.kind == Kind.SCALAR:
                        shown = dotted_name(element.value) or "the target"
                        item_value = item_value.because(LocalStep(
                            f"`{shown}` is unpacked from a container whose every element is a Python number",
                            element.value))
                pairs.append((element.value, item_value, item_source))
            for element_target, item_value, item_source in pairs:
                self.bind_target(element_target, item_value, names, item_source)
        elif isinstance(target, cst.Attribute):
            if (
                self.on_self_assign is not None
                and isinstance(target.value, cst.Name)
                and target.value.value == self.base.self_name
                # `self.buf = None` before `allocate()` sets it: writing into None raises,
                # so a write into the field is a write into what the other methods put there.
                and not (isinstance(source, cst.Name) and source.value == "None")
            ):
                recorded = value
                if isinstance(source, cst.List) and not source.elements \
                        and (self.base.self_class, target.attr.value) in self.base.project.empty_lists:
                    # `self.counts = []` that the class never grows: an item store into it
                    # raises `IndexError` as one into None does (`Resolved.empty_lists`); `None`
                    # with the step, which the class's collection keeps apart (`empties`).
                    recorded = NONE.because(LocalStep(empty_list_message(target.attr.value), target))
                self.on_self_assign(target.attr.value, recorded)
            dotted = dotted_name(target)
            if dotted is not None and not dotted.startswith(f"{self.base.self_name}."):
                # `args.gpu = [0, 1]`: direct evidence about this object on this path.
                self.dotted = True
                names[dotted] = value
            elif dotted is not None and dotted.count(".") == 1:
                self.bind_own_field(dotted, target.attr.value, value, names)
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value, OTHER, names)


def _passes_instance(node: cst.CSTNode, self_name: str) -> bool:
    """`self.m(...)`, `super().m(...)`, `f(self)`, `f(x=self)`: a call that may assign the
    instance's fields."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self_name:
        return True
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) \
            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
        return True
    return any(isinstance(a.value, cst.Name) and a.value.value == self_name for a in node.args)


def shape_unpacked(small: cst.Assign) -> Optional[Tuple[str, int]]:
    """`B, T, N = x.shape` (or `x.size()`): the name whose sizes are unpacked and how many
    targets take them, where no target is starred and `x` is not one of them.  Unpacking
    raises unless the sizes are exactly that many, so past the statement `x` has that many
    dimensions (`_ranked_by_unpacking`; the summary reads the same, `summary.shape_unpacking`)."""
    if len(small.targets) != 1:
        return None
    target = small.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or not target.elements \
            or any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    value = _sized(small.value)
    if not isinstance(value, cst.Name):
        return None
    if any(isinstance(e.value, cst.Name) and e.value.value == value.value for e in target.elements):
        return None
    return value.value, len(target.elements)


def _ranked_by_unpacking(small: cst.Assign, unpacked: Tuple[str, int], names: "Names") -> None:
    """A tensor of unknown rank whose sizes `small` unpacks (`shape_unpacked`) has that many
    dimensions from here on: `B, T, N = x.size()` in a module's `forward` says `x` is 3-D,
    which a write into `x.mean(0).mean(-1)` needs to be read as one element."""
    name, rank = unpacked
    current = names.get(name)
    if current is None or not current.kind.is_tensor or current.rank is not None:
        return
    names[name] = replace(current, rank=rank).because(LocalStep(
        f"`{name}`'s sizes unpack into {rank} names: it has {rank} dimensions", small, derived_step_kind(current)))


def _unpacked(value: Value) -> Optional[Value]:
    """What each target gets when `value` is unpacked by position (`a, b = v`) and its elements
    are alike: a tensor every element is (`a, b = make_pair()`), or a Python number every element
    is (`for r, c in pairs` with `pairs: list[tuple[int, int]]`, a row of `zip` of int lists).
    Unpacking a dict binds its keys (`a, b = {1: x, 2: y}`), so there the keys count.  Unpacking
    a tensor binds its rows (`total, count = stats` with `stats` of shape `(2, n)`: each a 1-D
    tensor on `stats`' device, a view of its memory), where its rank is known; a device value of
    unknown rank may be a tuple taken for a tensor (`out, state = self.block(x)`, a module's
    output by the convention), whose elements are on the device where they are tensors, of a
    rank not known (a write into one needs its rank proven later); a numpy array's likewise
    (`rows, cols = np.nonzero(m)` unpacks a tuple of arrays).  None when the elements are not
    known to be alike."""
    if value.kind == Kind.DEVICE and value.rank is None:
        # A device value of unknown rank: a tensor's rows, or the elements of a tuple taken for
        # a tensor (`logits, *mems = model(ids)`), each on the device where it is a tensor, of a
        # rank not known (`project._Resolver`'s `item` terms read the same).
        return element_of(value)
    if value.kind.is_tensor or value.kind == Kind.NUMPY:
        return element_of(value) if value.rank is not None and value.rank >= 1 else None
    if value.kind != Kind.OTHER:
        return None
    if value.key is not None:
        return value.key if value.key.kind == Kind.SCALAR and not value.key.none else None
    element = value.element
    if element is not None and (element.kind.is_tensor or element.kind in (Kind.SCALAR, Kind.NUMPY)):
        return element
    return None


def _plain_list(value: Value) -> bool:
    """A list (or set) this scope builds from displays and appends, of known elements (or
    empty): no dict (`key`), no tuple display's positions (`items`), no class instance."""
    return value.kind == Kind.OTHER and value.type_name is None and value.key is None and value.items is None \
        and value.entries is None and (value.element is not None or value.length == 0)


def _added_by(method: str, argument: Value) -> Optional[Value]:
    """What a list's `method` (`append`, `insert`, `extend`) given `argument` adds to its
    elements: the argument, or for `extend` its element; None where that is not known."""
    if method != "extend":
        return argument
    return _display_element(argument) if argument.key is None else None


def _grown_list(current: Value, added: Value) -> Value:
    """The list `current` once `added` is appended: its element joins `added` (its length,
    positions and origin of display no longer known)."""
    element = added if current.element is None else join(current.element, added)
    return Value(Kind.OTHER, origin=current.origin, element=element)


def _display_element(value: Value) -> Optional[Value]:
    """What `xs.extend(v)` adds: the element of a container, or, for a tuple or list display
    (`xs.extend((i, row, col))`), the join of its positions."""
    if value.element is not None:
        return value.element
    if value.items:
        joined = value.items[0]
        for item in value.items[1:]:
            joined = join(joined, item)
        return joined
    return None


def _captures(pattern: cst.CSTNode) -> List[str]:
    """Names a `case` pattern binds (`case [t, *rest]:`, `case {"k": v, **kw}:`, `case X() as y`)."""
    out: List[str] = []
    stack: List[cst.CSTNode] = [pattern]
    while stack:
        node = stack.pop()
        name = getattr(node, "name", None) if isinstance(node, (cst.MatchAs, cst.MatchStar)) else None
        if isinstance(name, cst.Name):
            out.append(name.value)
        if isinstance(node, cst.MatchMapping) and isinstance(node.rest, cst.Name):
            out.append(node.rest.value)
        if isinstance(node, (cst.MatchValue, cst.MatchSingleton)):
            continue
        stack.extend(node.children)
    return out


def _walruses(expression: cst.BaseExpression,
              holders: Optional[AbstractSet[int]] = None) -> List[Tuple[str, cst.BaseExpression]]:
    """`(x := value)` bindings inside an expression, in evaluation order (lambdas aside).

    With `holders` (`walrus_holders` of the module), only the nodes with a walrus below them
    are entered: LibCST's `children` rebuilds a node's child list on every call, and taking it
    for every node of every statement, on every pass of the walk, was most of the walk's time
    in files with one `:=`.  The walk's order is the full walk's, restricted to those nodes."""
    out: List[Tuple[str, cst.BaseExpression]] = []
    if holders is not None and id(expression) not in holders:
        return out
    stack: List[cst.CSTNode] = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
            out.append((node.target.value, node.value))
        children = node.children
        stack.extend(reversed(children) if holders is None else
                     [c for c in reversed(children) if id(c) in holders])
    return list(reversed(out)) if len(out) > 1 else out


_is_named_expr = type_test(cst.NamedExpr)


def walrus_holders(root: cst.CSTNode) -> FrozenSet[int]:
    """The ids of the nodes with a `NamedExpr` at or below them: one pass over the tree by
    the nodes' fields (order does not matter here, so LibCST's costly `children` is not
    needed: `recorded_children`), so that `_walruses` enters only them."""
    holders: Set[int] = set()
    path: List[cst.CSTNode] = []
    stack: List[Tuple[cst.CSTNode, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if _is_named_expr(node):
            for above in reversed(path):
                if id(above) in holders:
                    break
                holders.add(id(above))
        # The whitespace and operator nodes `recorded_children` leaves out hold no walrus.
        stack.extend((child, depth + 1) for child in recorded_children(node))
    return frozenset(holders)


#: The fields through which statements hold statements (blocks, clauses, cases), in LibCST's
#: child order (`Try`: body, handlers, orelse, finalbody): `_own_annotated` lists in that order.
_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")


def _statement_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """What `node` holds through `_STATEMENT_FIELDS`, in that order: the walks of statement
    structure below (`wanted_statements`, `_global_writers`, `_own_statements`,
    `_may_record`) all step down this way."""
    children: List[cst.CSTNode] = []
    for name in _STATEMENT_FIELDS:
        value = getattr(node, name, None)
        if isinstance(value, cst.CSTNode):
            children.append(value)
        elif isinstance(value, (tuple, list)):
            children.extend(v for v in value if isinstance(v, cst.CSTNode))
    return children


def wanted_statements(module: cst.Module, wants: Callable[[cst.BaseSmallStatement, bool], bool],
                      regions: CaptureRegions) -> Tuple[Dict[Tuple[int, bool], bool], Set[int]]:
    """`wants` asked once for every small statement of the module, and the definitions the walk
    must enter.

    Returns the answers by (statement id, in capture) and the ids of the `def`s and `class`es
    with a statement asked for at or below them.  "In capture" is taken as wide as it can be
    (below a capture function or a capture region, nested definitions included); `wants` only
    grows with it, so a definition left out holds no statement any walk of it would emit."""
    asked: Dict[Tuple[int, bool], bool] = {}
    needed: Set[int] = set()
    functions, bodies = regions.functions, regions.bodies
    # (node, in capture, the enclosing definitions' ids)
    stack: List[Tuple[cst.CSTNode, bool, Tuple[int, ...]]] = [(module, False, ())]
    while stack:
        node, capture, path = stack.pop()
        if isinstance(node, cst.BaseSmallStatement):
            answer = asked[(id(node), capture)] = wants(node, capture)
            if capture and not answer:
                asked[(id(node), False)] = False
            if answer:
                for above in reversed(path):
                    if above in needed:
                        break
                    needed.add(above)
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            path = path + (id(node),)
        if not capture and (id(node) in bodies or id(node) in functions):
            capture = True
        stack.extend((child, capture, path) for child in _statement_children(node))
    return asked, needed


# How a parameter annotated as a number or a container (`ids: int | list[int]`) is remembered:
# iterating or indexing it, which a number does not survive, reads the container.
ONE_OR_MANY_STEP = ("`{}` is annotated as a number or a container: a loop over it or an index into "
                    "it runs only on the container, and reads what the container holds")


def _enumerated(call: cst.Call, facts: Facts) -> Value:
    """The element of `enumerate(xs)`'s second position."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return UNKNOWN
    return element_of(infer(call.args[0].value, facts)) or UNKNOWN


def _global_writers(module: cst.Module) -> Iterator[Tuple[cst.FunctionDef, FrozenSet[str]]]:
    """Each function (at any depth: a method, a nested `def`) whose own body declares names
    `global`, with those names, in the module's order."""
    todo: List[cst.CSTNode] = [module]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.FunctionDef):
            declared = frozenset(name.name.value for found in _own_statements(node.body, cst.Global)
                                 for name in found.names)
            if declared:
                yield node, declared
        todo.extend(reversed(_statement_children(node)))


def _statements_of(body: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    return body.body if isinstance(body, cst.IndentedBlock) else ()


def _snapshot(node: cst.CSTNode, names: Mapping[str, Value]) -> Dict[str, Value]:
    """The part of `names` a statement can look up: the names that occur in it.

    Rules infer only sub-expressions of their statement, so this is all they can see, and it
    costs the statement's size instead of the scope's (a full copy per statement made long
    modules quadratic).
    """
    out: Dict[str, Value] = {}
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            value = names.get(current.value)
            if value is not None:
                out[current.value] = value
        else:
            if isinstance(current, cst.Attribute):
                dotted = dotted_name(current)
                if dotted is not None and dotted in names:
                    out[dotted] = names[dotted]
            stack.extend(current.children)
    return out


def _touched(names: Names) -> AbstractSet[str]:
    """The names a path may have bound: a layer's own ones, every name of a plain map."""
    return names.touched() if isinstance(names, LayeredNames) else names.keys()


def _classes_by_name(module: cst.Module) -> Dict[str, List[cst.ClassDef]]:
    """Every class the module defines, at any depth, by name (only the statement structure is
    followed, as `_own_statements` does: a class statement is never inside an expression)."""
    found: Dict[str, List[cst.ClassDef]] = {}
    todo: List[cst.CSTNode] = [module]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.ClassDef):
            found.setdefault(node.name.value, []).append(node)
        todo.extend(_statement_children(node))
    return found


def _field_assignments(cls: cst.ClassDef) -> List[Tuple[str, List[cst.BaseSmallStatement]]]:
    """Each method of `cls` (its own body, not nested classes'), as its first parameter's name
    and the assignments of its body (`=`, annotated, augmented; nested definitions left out),
    for `gpu_mode.gpu_flag_fields`."""
    out: List[Tuple[str, List[cst.BaseSmallStatement]]] = []
    for stmt in _statements_of(cls.body):
        if isinstance(stmt, cst.FunctionDef) and stmt.params.params:
            smalls: List[cst.BaseSmallStatement] = []
            for kind in (cst.Assign, cst.AnnAssign, cst.AugAssign):
                smalls.extend(_own_statements(stmt.body, kind))
            out.append((stmt.params.params[0].name.value, smalls))
    return out


def _join_names(a: Mapping[str, Value], b: Mapping[str, Value]) -> Names:
    """The names after two paths meet.  A name bound on one path only keeps what that path
    knows (it may be the only one taken).  Why only the touched names are visited: every
    function's map reads through to the module's names, and a branch rebinds few of them;
    `join(v, v)` is `v`, so only the rebound names need joining (`names.join_names`), which
    keeps the walk linear in the size of a long file.

    Not so for a field of the instance a method assigned (`_Walker.bind_own_field`): on the
    other path the field holds what the class's other methods put there, so a field bound on
    one path only is dropped (a read falls back to the class's facts)."""
    out = join_names(a, b, join)
    for key in _own_fields_of(a) | _own_fields_of(b):
        if (key in a) != (key in b) and key in out:
            del out[key]
    return out


def _own_fields_of(names: Mapping[str, Value]) -> FrozenSet[str]:
    """The keys `_Walker.bind_own_field` bound in `names` (in its own layer, for a layered map:
    a field is bound in a method's scope, never in the module's)."""
    keys = names.own.keys() if isinstance(names, LayeredNames) else names.keys()
    return frozenset(k for k in keys if k.count(".") == 1 and names[k].origin == Origin.SELF
                     and names[k].path == "self." + k.split(".", 1)[1])


def _params(fn: cst.FunctionDef) -> List[cst.Param]:
    return every_param(fn.params)


def _rank_documented(fn: cst.FunctionDef, params: Sequence[cst.Param], names: Names) -> None:
    """Give a tensor parameter of unknown rank the rank ``fn``'s docstring gives its shape
    (``conf_gt (torch.Tensor): (N, HW0, HW1)``: `docstrings`), said as a convention.  So too a
    parameter nothing tells about that the docstring types as a tensor (``overlaps
    (torch.Tensor): ..., shape(k, n).``): a tensor of that rank, its place not known (mmdet's
    assigners index with `gt_argmax_overlaps[i]` of `overlaps.max(dim=1)`, one element).  The
    docstring is read only where some parameter needs it."""
    unranked = [p for p in params if p.star == "" and (_unranked_tensor(value := names.get(p.name.value))
                                                       or _untold(value))]
    if not unranked:
        return
    documented = documented_ranks(fn.get_docstring(clean=True), [p.name.value for p in unranked])
    for param in unranked:
        found = documented.get(param.name.value)
        if found is None:
            continue
        value = names[param.name.value]
        if not value.kind.is_tensor:
            if not found.tensor:
                continue
            value = replace(value, kind=Kind.TENSOR)
        names[param.name.value] = replace(value, rank=found.rank).because(LocalStep(
            f"the docstring of `{fn.name.value}` gives `{param.name.value}` the shape `{found.shape}`: "
            f"{found.rank} dimension{'s' if found.rank != 1 else ''}", param, "convention"))


def _untold(value: Optional[Value]) -> bool:
    """A parameter's value that nothing tells about (no element, no `None`, no evidence)."""
    return value is not None and value.kind == Kind.UNKNOWN and value.element is None and not value.none \
        and not value.evidence


def _unranked_tensor(value: Optional[Value]) -> bool:
    """A tensor (on a known place or not) whose rank nothing has said."""
    return value is not None and value.kind in (Kind.DEVICE, Kind.CPU, Kind.TENSOR) and value.rank is None \
        and not value.none


def _forward_input(value: Value, module: str, param: cst.Param, facts: Facts) -> Value:
    """A parameter of `forward` of the project `nn.Module` `module` that nothing places (no
    call site, no annotation but `torch.Tensor`): on the module's device by convention
    (`resolved.forward_input_message`), of the caller's rank, unknown.  The resolver reads
    the same parameter alike (`project._Resolver._forward_input`)."""
    if value.kind not in (Kind.UNKNOWN, Kind.TENSOR) or value.element is not None or value.none \
            or param.star != "" or not forward_input_param(
                "forward", module, facts.project.modules, param.default is not None,
                param.annotation is None or value.kind == Kind.TENSOR):
        return value
    return replace(value, kind=Kind.DEVICE, rank=value.rank if value.kind == Kind.TENSOR else None,
                   evidence=()).because(LocalStep(forward_input_message(module, param.name.value), param, "convention"))


def _number_default(param: cst.Param) -> Optional[Value]:
    """`slot=0`: a parameter whose default is an int literal is taken to be an int (evidence,
    not proof: a caller may pass anything, so an index resting on it gets an unsafe fix); one
    whose default is another number (`fill=0.0`, `flag=True`, `floor=-1e9`, `mask=-float("inf")`)
    a Python number the same way, as a value written (the caller's check that no call passes
    anything else holds for it too: `Resolved.passed_non_numbers`)."""
    default = param.default
    if default is None:
        return None
    if literal_int(default) is not None:
        return SCALAR.because(LocalStep(f"`{param.name.value}` defaults to an int", param))
    if _number_literal(default):
        return SCALAR.because(LocalStep(f"`{param.name.value}` defaults to a number", param))
    return None


def _number_literal(node: cst.BaseExpression) -> bool:
    """A number literal, signed or not, `True` / `False`, or `float("inf")` of a string literal
    (`float` taken to be the builtin): a Python number wherever the `def` is."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    if isinstance(node, (cst.Float, cst.Integer)) or is_bool_literal(node):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "float" \
        and len(node.args) == 1 and isinstance(node.args[0].value, cst.SimpleString) and not node.args[0].keyword


def _is_classmethod(fn: cst.FunctionDef) -> bool:
    return any(dotted_name(d.decorator) == "classmethod" for d in fn.decorators)


def _is_staticmethod(fn: cst.FunctionDef) -> bool:
    return any(dotted_name(d.decorator) in ("staticmethod", "classmethod") for d in fn.decorators)


class ModuleWalker:
    """Runs the walk over a module and returns the statement facts rules asked for."""

    def __init__(
        self,
        module: cst.Module,
        module_facts: ModuleFacts = EMPTY_MODULE_FACTS,
        capture_patterns: Sequence[str] = DEFAULT_CAPTURE_FUNCTIONS,
        wants: Callable[[cst.BaseSmallStatement, bool], bool] = lambda s, in_capture: True,
        text: Optional[str] = None,
        hints: Tuple[Tuple[str, ...], Tuple[str, ...]] = ((), ()),
        capture: bool = True,
        path: str = "",
    ) -> None:
        """`capture=False`: no rule reads whether a statement runs during graph capture (none
        is `capture_only`, and `wants` does not depend on it): the capture regions are not
        computed, and every fact's `capture` is None."""
        self.module = module
        self.text = text
        self.capture_patterns = tuple(capture_patterns)
        self.wants = wants
        self.regions: CaptureRegions = capture_regions(module, self.capture_patterns) if capture \
            else CaptureRegions()
        # What the rules ask for, once per statement (`wanted_statements`): the walk reads the
        # answers back, and skips the definitions that hold no statement asked for.
        self.asked, self.needed = wanted_statements(module, wants, self.regions)
        self.processors = logits_processor_classes(module)
        # `gpu_flag_fields`, by class name, and the module's classes by name (made when asked).
        self._gpu_fields: Dict[str, FrozenSet[str]] = {}
        self._classes_by_name: Optional[Dict[str, List[cst.ClassDef]]] = None
        self.walrus = text is None or ":=" in text
        self.walrus_holders = frozenset().union(*(
            walrus_holders(stmt) for stmt in module.body
            if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or id(stmt) in self.needed
        )) if self.walrus else frozenset()
        torch_names, numpy_names = module_aliases(module)
        self.root = Facts(
            {}, {}, module_facts.class_fields, module_facts.device_fields, torch_names,
            numpy_names, None, scalar_functions(module), module_facts.resolved,
            None, hints[0], hints[1], nn_aliases(module), imports_vllm(module),
        )
        # The file's path: a relative import (`from .prompt import X`) names a module next to it.
        self.root = replace(self.root, path=path, stdlib_names=stdlib_number_modules(module),
                            functional_names=functional_aliases(module),
                            assignment_solvers=assignment_solvers(module),
                            sparse_checks=sparse_checks(module),
                            distributed_names=distributed_names(module),
                            torch_functions=torch_function_aliases(module),
                            module_imports={shown: full for shown, full in module_imports(module, path, text).items()
                                            if shown not in torch_names and shown not in numpy_names}
                            if module_facts.resolved.constants else {},
                            gpu_flag_fields=self.gpu_flag_fields)
        self.facts_out: List[StatementFact] = []
        self.usage_tables: Dict[int, Tuple[RangeBounds, DeviceNamed, SliceBounds]] = {}

    def _usage_tables(self, fn: cst.FunctionDef) -> Tuple[RangeBounds, DeviceNamed, SliceBounds]:
        """`usage.RangeBounds`, `usage.DeviceNamed` and `usage.SliceBounds` of `fn`, made once
        per function (a class's passes walk it again); each reads the function lazily, the
        first time the walk asks it."""
        found = self.usage_tables.get(id(fn))
        if found is None:
            found = self.usage_tables[id(fn)] = (RangeBounds(fn), DeviceNamed(fn), SliceBounds(fn))
        return found

    def run(self) -> List[StatementFact]:
        scope = Scope("<module>", "<module>", (), None)
        walker = self._walker(self.root, scope, None, None)
        assigned = self.assigned_globals()
        walker.module_globals = assigned
        walker.body(self.module.body, dict(assigned), self.module)
        return self.facts_out

    def assigned_globals(self) -> Dict[str, Value]:
        """What the file's functions bind to the module-level names they declare `global`
        (`global _WS` then `_WS = torch.empty(..., device=d)`), by a walk of each such function
        that emits nothing, joined per name (a binding to `None` drops out: a write into it
        raises), each with a step naming the function.  Every function of the file reads the
        module's name, so it may hold what any of them bound (a lazily built workspace).  The
        functions are walked in the module's root facts: module-level names they read are not
        known there.  Empty where the text has no `global` statement."""
        if self.text is not None and "global" not in self.text:
            return {}
        found: Dict[str, Value] = {}
        for fn, declared in _global_writers(self.module):
            sink: Dict[str, Value] = {}
            self.walk_function(fn, self.root, "<module>", emit=False, returned=[], global_sink=(declared, sink))
            for name, value in sorted(sink.items()):
                if value.none or not _tells(value):
                    continue
                step = LocalStep(f"`{name}` is a module-level name `{fn.name.value}()` binds (`global {name}`)",
                                 fn.name)
                value = value.because(step)
                found[name] = join(found[name], value) if name in found else value
        return found

    def _wants(self, small: cst.BaseSmallStatement, in_capture: bool) -> bool:
        asked = self.asked.get((id(small), in_capture))
        return self.wants(small, in_capture) if asked is None else asked

    def _walker(self, base: Facts, scope: Scope, capture: Optional[str], on_self: Optional[OnSelf], emit: bool = True) -> _Walker:
        walker = _Walker(
            base, scope, capture, self._wants if emit else (lambda s, c: False),
            self.facts_out.append, on_self,
            lambda fn, facts, cls: self.walk_function(fn, facts, scope.qualname, emit),
            lambda c, facts: self.walk_class(c, facts, scope.qualname, emit),
        )
        walker.regions = self.regions.bodies
        walker.returns_of = self.returns_of
        walker.walrus = self.walrus
        walker.walrus_holders = self.walrus_holders
        return walker

    def gpu_flag_fields(self, cls: Optional[str]) -> FrozenSet[str]:
        """The fields of the module's class `cls` that hold an accelerator switch
        (`gpu_mode.gpu_flag_fields`; where the module defines several classes of that name, the
        fields every one of them sets so).  Read once per class, when a test asks."""
        if cls is None:
            return frozenset()
        found = self._gpu_fields.get(cls)
        if found is None:
            if self._classes_by_name is None:
                self._classes_by_name = _classes_by_name(self.module)
            definitions = self._classes_by_name.get(cls, [])
            found = frozenset.intersection(*(gpu_flag_fields(_field_assignments(c)) for c in definitions)) \
                if definitions else frozenset()
            self._gpu_fields[cls] = found
        return found

    def returns_of(self, fn: cst.FunctionDef, outer: Facts) -> Optional[Value]:
        """What calling the nested `def fn` gives: the join of what its own `return`s give, by
        a walk of its body that emits nothing, in the names of the body that defines it (a
        closure reads them: `device` of `def resize(t): return torch.empty(n, device=device)`).
        None when it returns nothing known (no `return` of a value, or only unknowns)."""
        returned: List[Value] = []
        self.walk_function(fn, outer, "<local>", emit=False, returned=returned)
        if not returned:
            return None
        value = join_all(returned)
        if not _tells(value):
            # `return a.offset, a.end` of unknowns: a tuple that says nothing would join into
            # what the caller stores it in and drown a declaration there (a field annotated
            # `Dict[K, Tuple[int, int]]`), where the opaque call it was before added nothing.
            return None
        return value.because(LocalStep(f"`{fn.name.value}(...)` returns what the `def` here returns", fn.name))

    def walk_function(self, fn: cst.FunctionDef, outer: Facts, parent: str, emit: bool = True,
                      on_self: Optional[OnSelf] = None, self_name: Optional[str] = None,
                      self_attributes: Optional[Mapping[str, Value]] = None,
                      constructors: FrozenSet[str] = frozenset(),
                      self_class: Optional[str] = None, returned: Optional[List[Value]] = None,
                      global_sink: Optional[Tuple[FrozenSet[str], Dict[str, Value]]] = None) -> None:
        if on_self is None and returned is None and (not emit or id(fn) not in self.needed):
            # Nothing to emit and nothing to record: the walk of `fn` could not be seen (it
            # binds into its own scope only; its name is bound by the caller).
            return
        name = fn.name.value
        qualname = name if parent == "<module>" else f"{parent}.{name}"
        params = _params(fn)
        # The enclosing scope's names are read through, not copied (`LayeredNames`).
        names: Names = layer(outer.names)
        # A classmethod of a class being walked: its first parameter is the class.
        cls_name = params[0].name.value if self_name is None and self_class is not None and params \
            and _is_classmethod(fn) else None
        range_ints, device_named, slice_bounds = self._usage_tables(fn)
        base = replace(
            outer, names=names,
            self_attributes=self_attributes if self_attributes is not None else outer.self_attributes,
            self_name=self_name if self_name is not None else outer.self_name,
            self_class=self_class if self_name is not None or cls_name is not None else outer.self_class,
            cls_name=cls_name if cls_name is not None or self_name is not None else outer.cls_name,
            range_ints=range_ints,
            device_named=device_named,
            slice_bounds=slice_bounds,
        )
        # `__call__(self, input_ids, scores)` of a transformers logits processor (`processors`).
        processor = name == "__call__" and self_name is not None and base.self_class in self.processors
        hook = base.vllm and sampling_hook([(p.name.value, (dotted_name(p.annotation.annotation) or "?").split(".")[-1]
                                              if p.annotation is not None else None) for p in params])
        # The class `fn` is a method of, static or not: its parameters are keyed by it
        # (`param_key`); a nested `def` is keyed by name.
        method_of = base.self_class if self_name is not None or cls_name is not None else self_class
        # `forward` of a project `nn.Module`: its tensor inputs are where the module computes.
        forward_of = base.self_class if name == "forward" and self_name is not None \
            and base.self_class in base.project.modules else None
        for i, param in enumerate(params):
            pname = param.name.value
            if self_name is not None and i == 0 and pname == self_name:
                names.pop(pname, None)
                continue
            if processor and i == 2 and param.star == "" and param.default is None:
                # transformers' `generate()` calls the processor with its device scores (a convention).
                names[pname] = Value(Kind.DEVICE, 2, Origin.PARAM, None, None, pname, pname, evidence=(
                    LocalStep(logits_processor_message(base.self_class), param, "convention"),))
                continue
            if hook and pname == "logits" and param.star == "":
                # vLLM's runner calls a sampling hook with its device logits (a convention).
                names[pname] = Value(Kind.DEVICE, 2, Origin.PARAM, None, None, pname, pname, evidence=(
                    LocalStep(sampling_hook_message(name, pname), param, "convention"),))
                continue
            kind, type_name = annotation_value(param.annotation, base)
            value = Value(kind, None, Origin.PARAM, type_name, None, pname, pname)
            if kind in (Kind.OTHER, Kind.UNKNOWN) and type_name is None and param.star == "" \
                    and param.annotation is not None:
                # `frames: list[Frame]`, `items: dict[int, bool]`, `ids: int | list[int]`: what
                # the container holds.
                declared = annotated_value(param.annotation, base)
                returns = declared.returns
                if returns is not None and returns.kind == Kind.SCALAR:
                    returns = returns.because(LocalStep(
                        f"`{pname}` is annotated `{one_line(param.annotation.annotation)}`: calling it gives a Python number",
                        param))
                value = replace(value, element=declared.element, key=declared.key,
                                items=declared.items, length=declared.length, returns=returns)
                if kind == Kind.UNKNOWN and declared.element is not None:
                    step = LocalStep(ONE_OR_MANY_STEP.format(pname), param)
                    value = replace(value, element=declared.element.because(step)).because(step)
            given = base.project.passed_given.get((qualname, pname)) \
                if isinstance(param.default, cst.Name) and param.default.value == "None" and param.star == "" else None
            if given is not None and param.annotation is None:
                # `slots=None`, and every call passing it passes ints; `weight=None`, and every
                # call passing it passes a device tensor: the calls that omit it leave `None`,
                # which no iteration, index or element write survives, so whatever uses it so
                # uses what the calls pass.
                if given.kind == Kind.DEVICE:
                    given = given.because(LocalStep(NONE_DEFAULT_STEP.format(pname), param))
                names[pname] = replace(given, origin=Origin.PARAM, root=pname, path=pname)
                continue
            if param.default is not None and kind != Kind.SCALAR and value.element is None \
                    and place_of(param.default, base) == Kind.CPU_PLACE:
                # `device=None` / `device="cpu"`: the place a call leaves it at is the CPU, and
                # what callers pass is not known (calls without it are not recorded), unless
                # every call passes a place (`_Resolver.every_passes`).
                passed = base.project.param(name, method_of, pname, base.path)
                if passed is not None and passed.kind in (Kind.DEVICE_PLACE, Kind.CPU_PLACE):
                    names[pname] = replace(passed, origin=Origin.PARAM, root=pname, path=pname)
                    continue
                if passed is not None and rests_on(passed.evidence, DEFAULT_ONLY_STEP) \
                        and not (isinstance(param.default, cst.Name) and param.default.value == "None"):
                    # `computing_device="cpu"` (or a constant naming it) that no call passes: the
                    # CPU, for `x.to(computing_device)` too (`x.to(None)` would keep `x` where it is).
                    names[pname] = Value(Kind.CPU_PLACE, None, Origin.PARAM, None, None, pname, pname, evidence=(
                        *passed.evidence, LocalStep(f"`{pname}` defaults to a place naming the CPU", param)))
                    continue
                names[pname] = Value(Kind.UNKNOWN, None, Origin.PARAM, None, None, pname, pname,
                                     evidence=(LocalStep(CPU_DEFAULT_STEP, param),))
                continue
            if kind == Kind.TENSOR and param.star == "" and param.default is None:
                # `buf: torch.Tensor` says a tensor, not where: every call site may tell.
                known = base.project.param(name, method_of, pname, base.path)
                if known is not None and known.kind.is_tensor:
                    value = replace(known, origin=Origin.PARAM, root=pname, path=pname)
            elif kind == Kind.OTHER and type_name is None and value.element is not None and value.element.kind.is_tensor \
                    and param.star == "" and param.default is None:
                # `meta: Dict[str, torch.Tensor]` says tensors, not where: every call site may
                # tell (`project._TENSOR_CONTAINER`); the annotation keeps saying the rest.
                known = base.project.param(name, method_of, pname, base.path)
                if known is not None and known.element is not None and known.element.kind in (Kind.DEVICE, Kind.CPU):
                    value = replace(value, element=known.element, evidence=known.evidence)
            elif type_name is not None:
                value = value.because(LocalStep(f"`{pname}` is annotated `{type_name}`", param))
            elif param.annotation is None and param.star == "":
                # What every call site in the project passes (`lint_h2d.inference.project`),
                # else what the body (`range(p)`) or an int default says.
                known = base.project.param(name, method_of, pname, base.path) or base.project.int_params.get(
                    (qualname, pname)) or (None if (qualname, pname) in base.project.passed_non_numbers
                                           else _number_default(param))
                if known is not None:
                    value = replace(known, origin=Origin.PARAM, root=pname, path=pname)
            elif kind in (Kind.OTHER, Kind.DEVICE_PLACE) and param.star == "" and param.default is None:
                # `device: torch.device`: where every call site points it, when they agree.
                known = base.project.param(name, method_of, pname, base.path)
                if known is not None and (known.kind in (Kind.CPU_PLACE, Kind.DEVICE_PLACE) or cpu_by_default(known)):
                    # A place, or a caller's device parameter defaulting to the CPU handed on.
                    value = replace(known, origin=Origin.PARAM, root=pname, path=pname)
                elif kind == Kind.DEVICE_PLACE and not value.evidence:
                    # Said, so that a finding resting on it shows what it rests on.
                    value = value.because(LocalStep(ANNOTATED_DEVICE_STEP.format(pname), param))
            if forward_of is not None:
                value = _forward_input(value, forward_of, param, base)
            names[pname] = value
        _rank_documented(fn, params, names)
        for pname in (p.name.value for p in params):
            if pname in base.torch_names or pname in base.numpy_names:
                base = replace(base, torch_names=base.torch_names - {pname},
                               numpy_names=base.numpy_names - {pname})
        capture = self.regions.functions.get(id(fn))
        scope = Scope(name, qualname, tuple(p.name.value for p in params), fn)
        walker = self._walker(base, scope, capture, on_self, emit)
        walker.constructors = constructors
        walker.returned = returned
        walker.global_sink = global_sink
        if isinstance(fn.body, cst.IndentedBlock):
            walker.body(fn.body.body, names, fn.body)
        elif isinstance(fn.body, cst.SimpleStatementSuite):
            walker.line(fn.body, fn.body.body, names, ())

    def walk_class(self, cls: cst.ClassDef, outer: Facts, parent: str, emit: bool = True) -> None:
        if not emit or id(cls) not in self.needed:
            # Its fields reach only its own methods' walks, which would emit nothing.
            return
        qualname = cls.name.value if parent == "<module>" else f"{parent}.{cls.name.value}"
        if not outer.data_loading and is_dataset_class(cls):
            outer = replace(outer, data_loading=True)
        methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)] if isinstance(cls.body, cst.IndentedBlock) else []
        attributes: Dict[str, Value] = {}
        # Class-level annotations (dataclass fields, declared buffers).
        if isinstance(cls.body, cst.IndentedBlock):
            for stmt in cls.body.body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                            attributes[small.target.value] = annotated_value(small.annotation, outer)
        # Two passes: the second sees attributes assigned from other attributes.  The second
        # also assumes that a field assigned ints and values that were unknown in the first
        # (`self.count = self.count + n`) holds an int, and keeps the assumption only when the
        # pass confirms it (`_int_fields`); a refuted one is dropped and the pass rerun.
        first: Dict[str, Value] = {}
        assumed: Dict[str, Value] = {}
        # The methods whose walk may record a field (`_may_record`): the others' walks in these
        # passes emit nothing and record nothing.
        recording: List[Tuple[cst.FunctionDef, Optional[str], FrozenSet[str]]] = []
        for method in methods:
            self_name = self._self_name(method)
            params = list(method.params.posonly_params) + list(method.params.params)
            constructors = {cls.name.value}
            if self_name is None and params and _is_classmethod(method):
                constructors.add(params[0].name.value)
            if _may_record(method, constructors):
                recording.append((method, self_name, frozenset(constructors)))
        # Built under an accelerator default device elsewhere (a project `with torch.device`,
        # vLLM's model loader): `__init__`, and the methods it calls, run inside that context.
        built = outer.project.built_on_device.get(cls.name.value)
        moved = outer.project.moved.get(cls.name.value)
        own_build = _run_at_construction(methods) if built is not None or moved is not None else frozenset()
        # The overrides a base's `__init__` calls on `self`, run through `super().__init__()`.
        inherited = _inherited_at_construction(cls.name.value, methods, outer.project) if built is not None else {}
        at_build = own_build | frozenset(inherited)
        built_facts: Dict[int, Facts] = {}
        for method in methods:
            if built is not None and id(method) in at_build:
                how = inherited.get(id(method)) if id(method) not in own_build else None
                step = built if method.name.value == "__init__" else replace(
                    built, message=f"`{method.name.value}` is called by "
                                   f"{how or f'`{cls.name.value}.__init__`'}; {built.message}")
                built_facts[id(method)] = replace(outer, default_device=step)

        if built is None:
            # Built by no device context: what construction runs sees the fields where the
            # constructor put them (`Facts.constructing`).
            constructing = replace(outer, constructing=True)
            for method_id in _run_at_construction(methods):
                built_facts[method_id] = constructing

        def facts_of(method: cst.FunctionDef) -> Facts:
            return built_facts.get(id(method), outer)

        # Fields set to an empty list the class never grows: the step saying so, added to a
        # device value the other assignments give (an item store into `[]` raises).
        empties: Dict[str, Tuple[Any, ...]] = {}
        # What `self.x: T` (no value) declares, for a field no method assigns (`record`).
        declared: Dict[str, Value] = {}
        for round_ in range(5):
            collected: Dict[str, Value] = {}
            seen: Dict[str, Set[Kind]] = {}
            # The join of each field's device-tensor assignments (`_device_fields`).
            devices: Dict[str, Value] = {}

            def record(attr: str, value: Value, declaration: bool = False, collected: Dict[str, Value] = collected,
                       seen: Dict[str, Set[Kind]] = seen, devices: Dict[str, Value] = devices) -> None:
                if declaration:
                    declared.setdefault(attr, replace(value, origin=Origin.SELF, root=None, path=None))
                    return
                if value.none:
                    empties.setdefault(attr, value.evidence)  # `self.x = []` never grown
                    return
                value = replace(value, origin=Origin.SELF, root=None, path=None)
                collected[attr] = join(collected[attr], value) if attr in collected else value
                seen.setdefault(attr, set()).add(value.kind)
                if value.kind == Kind.DEVICE:
                    devices[attr] = join(devices[attr], value) if attr in devices else value

            visible = {**attributes, **assumed} if assumed else attributes
            for method, method_self, makers in recording:
                self.walk_function(method, facts_of(method), qualname, emit=False, on_self=record,
                                   self_name=method_self, self_attributes=visible,
                                   constructors=makers, self_class=cls.name.value)
            merged = dict(attributes)
            for attr, value in declared.items():
                if attr not in collected and attr not in attributes:
                    merged[attr] = value
            for attr, value in collected.items():
                merged[attr] = value
            if round_ == 0:
                first = attributes = merged
                assumed = {**_int_fields(collected, seen, cls), **_device_fields(collected, seen, devices, cls)}
                continue
            refuted = [a for a in assumed if collected.get(a, UNKNOWN).kind != assumed[a].kind]
            if not refuted:
                # An int assumption holds as assumed; a device one holds with what the pass
                # that read it computed (an op of the field may not keep its rank).
                attributes = {**merged, **{a: v if v.kind == Kind.SCALAR else _confirmed(merged[a], v)
                                           for a, v in assumed.items() if a in merged}}
                break
            # Rerun from the first pass's facts without the refuted assumptions (the last
            # round assumes nothing: the plain second pass).
            assumed = {} if round_ >= 3 else {a: v for a, v in assumed.items() if a not in refuted}
            attributes = first
        for attr, steps in empties.items():
            if attr in attributes and attributes[attr].kind == Kind.DEVICE:
                attributes[attr] = attributes[attr].because(*steps)
        attributes.update(_declared_numbers(methods, attributes, seen, outer))
        attributes.update(_default_device_fields(cls.name.value, attributes, outer))
        # Moved to the accelerator after construction: its buffers and parameters are there
        # in every method but those that run while it is built (before any move).
        after_move = {**attributes, **_moved_fields(attributes, moved)} if moved is not None else attributes
        class_scope = Scope(cls.name.value, qualname, (), None)
        walker = self._walker(outer, class_scope, None, None, emit)
        walker.container = cls.body if isinstance(cls.body, cst.IndentedBlock) else None
        # The class body is a scope of its own, run top to bottom: `t = [1, 2, 3]` there
        # rebinds `t` for the next statements (methods do not see it).
        class_names: Names = layer(outer.names)
        for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.FunctionDef):
                self_name = self._self_name(stmt)
                self.walk_function(stmt, facts_of(stmt), qualname, emit, None, self_name,
                                   attributes if id(stmt) in at_build else after_move,
                                   self_class=cls.name.value)
                walker.bind_name(stmt.name.value, OTHER, class_names)
            else:
                class_names = walker.statement(stmt, class_names, tuple(_statements_of(cls.body)))

    @staticmethod
    def _self_name(fn: cst.FunctionDef) -> Optional[str]:
        if _is_staticmethod(fn):
            return None
        params = list(fn.params.posonly_params) + list(fn.params.params)
        return params[0].name.value if params else None


def _run_at_construction(methods: Sequence[cst.FunctionDef]) -> FrozenSet[int]:
    """The ids of `__init__` and of the methods its own statements call as `self.m(...)`: what
    runs while the object is constructed (under the constructor's default device).  Nested
    definitions and lambdas run later; a method called elsewhere too still runs here once."""
    init = next((m for m in methods if m.name.value == "__init__"), None)
    self_name = ModuleWalker._self_name(init) if init is not None else None
    if init is None or self_name is None:
        return frozenset()
    called: Set[str] = set()
    for node in own_scope_nodes(init.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == self_name:
            called.add(node.func.attr.value)
            # `self.apply(self._init_weights)`: `nn.Module.apply` calls the method there and then.
            if node.func.attr.value == "apply" and len(node.args) == 1 and node.args[0].keyword is None \
                    and node.args[0].star == "" and isinstance(handed := node.args[0].value, cst.Attribute) \
                    and isinstance(handed.value, cst.Name) and handed.value.value == self_name:
                called.add(handed.attr.value)
    return frozenset(id(m) for m in methods if m is init or m.name.value in called)


def _inherited_at_construction(cls: str, methods: Sequence[cst.FunctionDef], project: Resolved) -> Dict[int, str]:
    """The ids of the methods of `cls` that a project base's `__init__` calls on `self`
    (`Resolved.construction_calls`), each with how evidence says so, where `cls`'s construction
    runs that `__init__`: `cls` defines none (it inherits one) or its own calls
    `super().__init__(...)` (`_runs_base_init`).  While the object is built, `self` there is
    the instance of `cls`, so the override runs under the constructor's default device."""
    calls = project.construction_calls.get(cls, ())
    if not calls or not _runs_base_init(methods):
        return {}
    by_name = {m.name.value: m for m in methods}
    found: Dict[int, str] = {}
    for name, base, path, line in calls:
        method = by_name.get(name)
        if method is not None and name != "__init__":
            where = evidence_file_name(path)
            found[id(method)] = (f"`{base}.__init__` ({where}:{line}), which building `{cls}` runs "
                                 f"(its `__init__` calls the base's, or it has none) with `self` an "
                                 f"instance of `{cls}`")
    return found


def _runs_base_init(methods: Sequence[cst.FunctionDef]) -> bool:
    """Whether constructing the class runs its base's `__init__`: it defines no `__init__`, or
    the statements of its own (not of nested definitions) call `super().__init__(...)`,
    `super(C, self).__init__(...)` or `Base.__init__(self, ...)`."""
    init = next((m for m in methods if m.name.value == "__init__"), None)
    if init is None:
        return True
    self_name = ModuleWalker._self_name(init)
    for node in own_scope_nodes(init.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "__init__":
            receiver = node.func.value
            if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
                return True
            first = node.args[0].value if node.args else None
            if isinstance(receiver, cst.Name) and isinstance(first, cst.Name) and first.value == self_name:
                return True  # `Base.__init__(self, ...)`
    return False


def _may_record(fn: cst.FunctionDef, constructors: AbstractSet[str]) -> bool:
    """Whether walking `fn` as a method (`on_self`) may record a field: its own statements (not
    those of nested definitions, walked without `on_self`) bind an attribute (`self.x = ...`,
    `self.d[k] = ...`, a `for`/`with` target), call `register_buffer`, or call a constructor
    (`_Walker.record_constructor`).  Syntax only, and wider than the walk's tests (any
    attribute in a target, whatever its root)."""
    stack: List[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.BaseSmallStatement):
            targets: List[cst.CSTNode] = []
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                targets = [node.target]
            if any(_holds_attribute(t) for t in targets):
                return True
            value = getattr(node, "value", None)
            if isinstance(value, cst.Call):
                func = value.func
                if isinstance(func, cst.Name) and func.value in constructors:
                    return True
                if isinstance(func, cst.Attribute) and func.attr.value == "register_buffer":
                    return True
            continue
        if isinstance(node, cst.For) and _holds_attribute(node.target):
            return True
        if isinstance(node, cst.With) and any(
                item.asname is not None and _holds_attribute(item.asname.name) for item in node.items):
            return True
        stack.extend(_statement_children(node))
    return False


def _holds_attribute(target: cst.CSTNode) -> bool:
    return any_node(target, lambda node: isinstance(node, cst.Attribute))


# What the step of a declared value says (`_declared`), after the target and the annotation.
DECLARED_NOTE = "where it is assigned"


def _unfilled(value: Value) -> bool:
    """A container whose content nothing shows yet: `dict()`, `{}`, `[]`, `list()`."""
    return value.kind == Kind.OTHER and value.type_name is None and value.element is None \
        and value.items is None and (value.key is None or value.key.none) and not value.none


def _vague(value: Value) -> bool:
    """A value that shows nothing (unknown kind, no class, no content)."""
    return value.kind == Kind.UNKNOWN and value.type_name is None and value.element is None \
        and value.items is None


def is_declared(value: Value) -> bool:
    """A value that an annotation declares where it was assigned (`_declared`)."""
    return any(isinstance(s, LocalStep) and s.message.endswith(DECLARED_NOTE) for s in value.evidence)


def _declared(small: cst.AnnAssign, value: Value, facts: Facts) -> Value:
    """`x: int = tokenizer.eos_token_id`: where the assigned value is unknown, what the
    annotation declares (an int, a project class, a list of ints), as for an annotated
    parameter; never against what the value shows (a tensor stays a tensor).  An empty
    container (`self.ranges: Dict[str, Tuple[int, int]] = dict()`) shows no content: a
    container annotation says what it holds."""
    declared = annotated_value(small.annotation, facts)
    if declared.kind == Kind.UNKNOWN and declared.type_name is None and declared.element is None:
        return value
    if _unfilled(value) and (declared.kind != Kind.OTHER or declared.element is None):
        return value  # an empty container is no int, no instance: only a container type adds
    shown = dotted_name(small.annotation.annotation) or " ".join(
        cst.Module([]).code_for_node(small.annotation.annotation).split())
    what = f"annotated `{shown}`" if len(shown) <= 60 else "annotated"
    target = dotted_name(small.target) or "the target"
    return declared.because(LocalStep(f"`{target}` is {what} {DECLARED_NOTE}", small))


def _tells(value: Value) -> bool:
    """Whether a value says all it holds: a kind or a class, or a container each of whose
    elements, positions and keys does.  A tuple with an unknown position joins into the
    container it is stored in (`self.ranges[k] = span(c)`) and leaves that container's
    elements unknown, drowning a declaration there (`Dict[K, Tuple[int, int]]`), where the
    opaque call it was before added nothing."""
    if value.kind == Kind.UNKNOWN:
        return value.type_name is not None or value.element is not None and _tells(value.element)
    if value.kind != Kind.OTHER or value.type_name is not None:
        return True
    parts = [v for v in (value.element, value.key) if v is not None] + list(value.items or ()) \
        + [v for _, v in value.entries or ()]
    return bool(parts) and all(_tells(v) for v in parts)


def _declared_numbers(methods: Sequence[cst.FunctionDef], attributes: Mapping[str, Value],
                      seen: Mapping[str, Set[Kind]], facts: Facts) -> Dict[str, Value]:
    """Fields a method declares a Python number (`self.end: int | None = None`) whose assigned
    values the walk cannot tell (`self.end = spec["end"]`): the declaration fills them, as the
    project's resolver reads another class's field (`project._Resolver._field`) and as
    `_declared` reads an annotated local; never against a tensor an assignment shows."""
    out: Dict[str, Value] = {}
    for method in methods:
        self_name = ModuleWalker._self_name(method)
        if self_name is None:
            continue
        for small in _own_annotated(method.body):
            target = small.target
            if not (isinstance(target, cst.Attribute) and _own_field(target, self_name)):
                continue
            attr = target.attr.value
            current = attributes.get(attr)
            if current is None or current.kind != Kind.UNKNOWN or current.type_name is not None \
                    or current.element is not None or not seen.get(attr, set()) <= {Kind.UNKNOWN, Kind.SCALAR}:
                continue
            declared = _declared(small, UNKNOWN, facts)
            if declared.kind == Kind.SCALAR:
                out[attr] = replace(declared, origin=Origin.SELF)
    return out


def _own_annotated(body: cst.BaseSuite) -> List[cst.AnnAssign]:
    """The annotated assignments of a function body (`_own_statements`)."""
    return _own_statements(body, cst.AnnAssign)


_Small = TypeVar("_Small", bound=cst.BaseSmallStatement)


def _own_statements(body: cst.BaseSuite, kind: Type[_Small]) -> List[_Small]:
    """The small statements of type `kind` of a function body, nested blocks included, not
    those of nested definitions (last statement first): its annotated assignments, its
    `global` declarations.

    Only the statement structure is followed: a small statement is never inside an
    expression, so the blocks and clauses hold them all.  Walking every child instead
    (`node.children`, and an ABC `isinstance` per node) cost the walk of a class about a
    third of its time."""
    found: List[_Small] = []
    todo: List[cst.CSTNode] = [body]
    definitions = (cst.FunctionDef, cst.ClassDef)
    while todo:
        node = todo.pop()
        if type(node) is kind:
            found.append(node)
            continue
        if isinstance(node, definitions):
            continue
        todo.extend(_statement_children(node))
    return found


def _int_fields(collected: Mapping[str, Value], seen: Mapping[str, Set[Kind]],
               cls: cst.ClassDef) -> Dict[str, Value]:
    """Fields to assume ints in the second pass: assigned Python numbers and values the first
    pass could not tell (`self.total = start + n` with `start = self.total`).

    An induction over the assignments: when every assignment gives an int on the assumption
    that the field holds one, the field only ever holds ints (a read before the first
    assignment raises).  The second pass checks it; the caller drops refuted assumptions.
    """
    out: Dict[str, Value] = {}
    for attr, value in collected.items():
        kinds = seen.get(attr, set())
        if value.kind == Kind.UNKNOWN and Kind.SCALAR in kinds and kinds <= {Kind.SCALAR, Kind.UNKNOWN}:
            out[attr] = replace(SCALAR, origin=Origin.SELF).because(LocalStep(
                f"`{attr}` is only ever assigned Python numbers (and arithmetic on itself)", cls.name))
    return out


# What the step of a field assumed and confirmed on the device says (`_device_fields`).
DEVICE_FIELD_NOTE = "is only ever assigned device tensors and ops of itself that keep its place"


def _device_fields(collected: Mapping[str, Value], seen: Mapping[str, Set[Kind]],
                   devices: Mapping[str, Value], cls: cst.ClassDef) -> Dict[str, Value]:
    """Fields to assume on the device in the second pass: assigned device tensors and values
    the first pass could not tell (`self.seqs = self.seqs.index_select(0, order)`, read before
    the field was known).

    The least solution of `x = A | f(x)`, as `_int_fields` for numbers: when every assignment
    gives a device tensor on the assumption that the field holds one (`f` keeps a tensor's
    place: `index_select`, `clone`, `torch.cat([x, y])`, ...), the field only ever holds
    device tensors.  The second pass checks it; the caller drops refuted assumptions and keeps
    the checked value (its rank is what `f` keeps, not the assumption's).
    """
    out: Dict[str, Value] = {}
    for attr, value in collected.items():
        kinds = seen.get(attr, set())
        if value.kind == Kind.UNKNOWN and attr in devices and kinds <= {Kind.DEVICE, Kind.UNKNOWN}:
            out[attr] = devices[attr].because(LocalStep(f"`{attr}` {DEVICE_FIELD_NOTE}", cls.name))
    return out


def _confirmed(checked: Value, assumed: Value) -> Value:
    """A device field the second pass confirmed (`_device_fields`): its value there, with the
    assumption's step (the assignments' device evidence first, then why the field keeps it)."""
    if any(DEVICE_FIELD_NOTE in getattr(s, "message", "") for s in checked.evidence):
        return checked
    step = next(s for s in assumed.evidence if DEVICE_FIELD_NOTE in getattr(s, "message", ""))
    return replace(checked, evidence=checked.evidence + (step,))


def _moved_fields(attributes: Mapping[str, Value], moved: EvidenceStep) -> Dict[str, Value]:
    """The buffers and parameters (`is_module_tensor`) of a module the project moves to the
    accelerator (`Resolved.moved`), on the device: `moved` names the move."""
    return {attr: replace(value, kind=Kind.DEVICE).because(moved)
            for attr, value in attributes.items() if is_module_tensor(value)}


def _default_device_fields(cls: str, attributes: Mapping[str, Value], facts: Facts) -> Dict[str, Value]:
    """Fields the project puts on the device through a default-device context (issue 17, 8c).

    `torch.zeros(n)` in `__init__` is a CPU tensor to this file's walk; when the project
    constructs the class under `with torch.device(...)`, the resolved field says DEVICE and
    names the loader.  Only those fields are taken over; every other walk fact stands.
    """
    out: Dict[str, Value] = {}
    for attr, value in facts.project.fields.get(cls, {}).items():
        if value.kind != Kind.DEVICE or not any(
                getattr(step, "message", "").startswith(DEFAULT_DEVICE_STEP) for step in value.evidence):
            continue
        current = attributes.get(attr)
        if current is None or current.kind in (Kind.CPU, Kind.TENSOR, Kind.UNKNOWN):
            out[attr] = replace(value, origin=Origin.SELF)
    return out


def logits_processor_classes(module: cst.Module) -> FrozenSet[str]:
    """The module's classes deriving from a transformers logits processor or warper, at any
    depth of classes (`summary.processor_classes`, which the summary reads too): `generate()`
    calls their `__call__(input_ids, scores)` with the model's 2-D scores on the device."""
    from_transformers: Set[str] = set()
    for source, full, bound, plain in _import_aliases(_module_imports(module)):
        if source is not None and source.split(".")[0] == "transformers":
            from_transformers.add(bound or full)
        elif plain and full.split(".")[0] == "transformers":
            from_transformers.add(bound or "transformers")
    if not from_transformers:
        return frozenset()
    classes: List[Tuple[str, List[str]]] = []
    todo: List[cst.CSTNode] = [module]
    while todo:
        node = todo.pop()
        body = node.body.body if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock) \
            else node.body if isinstance(node, cst.Module) else ()
        for stmt in body:
            if isinstance(stmt, cst.ClassDef):
                classes.append((stmt.name.value, [dotted_name(b.value) or "" for b in stmt.bases]))
                todo.append(stmt)
    return processor_classes(from_transformers, classes)


def is_dataset_class(cls: cst.ClassDef) -> bool:
    """A class one of whose bases is named like a dataset (`torch.utils.data.Dataset`,
    `IterableDataset`, a project's `BaseDataset`): its methods run where a `DataLoader` reads
    samples, in host processes (`Facts.data_loading`)."""
    return any((dotted_name(base.value) or "").split(".")[-1].endswith("Dataset") for base in cls.bases)


# `isinstance(x, int)` is true for ints and bools, `isinstance(x, float)` for floats (numpy's
# float64 subclasses float): Python numbers, never tensors (no tensor type derives from them).
NUMBER_TYPES = frozenset({"int", "float", "bool"})


def _number_types(node: cst.BaseExpression) -> Optional[str]:
    """The builtin named by `int`, `float`, `bool`, or by a tuple of only those (the first)."""
    if isinstance(node, cst.Name) and node.value in NUMBER_TYPES:
        return node.value
    if isinstance(node, cst.Tuple) and node.elements:
        found = [_number_types(e.value) if not isinstance(e, cst.StarredElement) else None
                 for e in node.elements]
        if all(found):
            return found[0]
    return None


def number_checks(test: cst.BaseExpression, holds: bool) -> Tuple[Tuple[str, str], ...]:
    """The (name, builtin) pairs that `test` evaluating to `holds` proves are Python numbers
    (`isinstance_checks` of `int`, `float`, `bool` or a tuple of them)."""
    found: List[Tuple[str, str]] = []
    for name, types in isinstance_checks(test, holds):
        number = _number_types(types)
        if number is not None:
            found.append((name, number))
    return tuple(found)


def class_checks(test: cst.BaseExpression, holds: bool) -> Tuple[Tuple[str, str], ...]:
    """The (name, class) pairs that `test` evaluating to `holds` proves are instances of one
    class (`isinstance_checks` of a name or `module.Name` that is no number type; a tuple of
    classes proves none), the class by its last name as annotations give it."""
    found: List[Tuple[str, str]] = []
    for name, types in isinstance_checks(test, holds):
        dotted = dotted_name(types)
        if dotted is not None and dotted not in NUMBER_TYPES:
            found.append((name, dotted))
    return tuple(found)


def non_tensor_checks(test: cst.BaseExpression, holds: bool, facts: Facts) -> Tuple[Tuple[str, Value], ...]:
    """The names that `test` evaluating to `holds` proves are no tensor, each with what it is
    then: a numpy array where `isinstance(x, np.ndarray)` holds, a scipy sparse matrix where
    scipy's `issparse(x)` does (`Facts.sparse_checks`, through the module's own imports and not
    rebound).  A branch such a test guards handles the other kind of input: cogdl's
    `if sp.issparse(adj): ... adj.data[i] = 1 else: ... torch.eye(n).to(adj.device)` writes into
    a numpy array there, though the other branch proves `adj` can be a tensor."""
    found: List[Tuple[str, Value]] = []
    for name, types in isinstance_checks(test, holds):
        dotted = dotted_name(types)
        if dotted is not None and "." in dotted and dotted.split(".")[-1] == "ndarray" \
                and dotted.rsplit(".", 1)[0] in facts.numpy_names and _imported(dotted, facts):
            found.append((name, Value(Kind.NUMPY).because(LocalStep(
                f"`{name}` is a numpy array here (`isinstance` check)", test))))
    for part, truth in surely_evaluated(test, holds):
        if not truth or not isinstance(part, cst.Call) or len(part.args) != 1 or part.args[0].keyword is not None \
                or part.args[0].star or not isinstance(part.args[0].value, cst.Name):
            continue
        dotted = dotted_name(part.func)
        if dotted is not None and dotted in facts.sparse_checks and _imported(dotted, facts):
            name = part.args[0].value.value
            found.append((name, Value(Kind.OTHER, type_name=SPARSE_MATRIX).because(LocalStep(
                f"`{name}` is a scipy sparse matrix here (`{dotted}` check)", test))))
    return tuple(found)


def _imported(dotted: str, facts: Facts) -> bool:
    """The first name of `dotted` still holds what the module's import bound there."""
    bound = facts.names.get(dotted.split(".")[0])
    return bound is None or (bound.kind == Kind.OTHER and bound.origin == Origin.GLOBAL)


def other_backend(test: cst.BaseExpression, holds: bool) -> Optional[Tuple[str, str]]:
    """A tensor name and the backend that `test` evaluating to `holds` proves it is on, when
    that is not CUDA: `x.device.type == "npu"` true, `x.device.type != "npu"` false, or
    `x.device.type == "cuda"` false (then the backend said is "not cuda").  Only comparisons
    surely evaluated (`surely_evaluated`).  The statements such a test guards run only where
    `x` is not a CUDA tensor (mmcv's NPU-only scaling of rotated boxes)."""
    for part, truth in surely_evaluated(test, holds):
        if not isinstance(part, cst.Comparison) or len(part.comparisons) != 1:
            continue
        operator = part.comparisons[0].operator
        if not isinstance(operator, (cst.Equal, cst.NotEqual)):
            continue
        same = truth == isinstance(operator, cst.Equal)  # the type is the literal
        right = part.comparisons[0].comparator
        for mine, other in ((part.left, right), (right, part.left)):
            if isinstance(mine, cst.Attribute) and mine.attr.value == "type" \
                    and isinstance(mine.value, cst.Attribute) and mine.value.attr.value == "device" \
                    and isinstance(mine.value.value, cst.Name) and isinstance(other, cst.SimpleString):
                backend = other.evaluated_value
                if not isinstance(backend, str):
                    continue
                if same and backend != "cuda":
                    return mine.value.value.value, backend
                if not same and backend == "cuda":
                    return mine.value.value.value, "not cuda"
    return None


_ORDERINGS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def rank_checks(test: cst.BaseExpression, holds: bool) -> Tuple[Tuple[str, int], ...]:
    """The (name, rank) pairs whose number of dimensions `test` evaluating to `holds` proves:
    `x.dim() == 1`, `x.ndim == 2`, `x.ndimension() == 1`, `len(x.shape) == 3` (either side)
    that surely ran and held, or such a `!=` that did not (`assert logits.dim() == 1`, the
    conv-AI top-k filter's).  A name that is no tensor has no `dim()`, and the check raises."""
    found: List[Tuple[str, int]] = []
    for part, truth in surely_evaluated(test, holds):
        if not isinstance(part, cst.Comparison) or len(part.comparisons) != 1:
            continue
        operator = part.comparisons[0].operator
        if not (isinstance(operator, cst.Equal) and truth or isinstance(operator, cst.NotEqual) and not truth):
            continue
        comparator = part.comparisons[0].comparator
        for measured, other in ((part.left, comparator), (comparator, part.left)):
            name, rank = _rank_measured(measured), literal_int(other)
            if name is not None and rank is not None and rank >= 0:
                found.append((name, rank))
    return tuple(found)


def _rank_measured(node: cst.BaseExpression) -> Optional[str]:
    """The name whose number of dimensions `node` reads: `x.dim()`, `x.ndimension()`, `x.ndim`,
    `len(x.shape)`, `len(x.size())`; None otherwise."""
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in ("dim", "ndimension") and isinstance(node.func.value, cst.Name):
        return node.func.value.value
    if isinstance(node, cst.Attribute) and node.attr.value == "ndim" and isinstance(node.value, cst.Name):
        return node.value.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" \
            and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
        sized = _sized(node.args[0].value)
        return sized.value if isinstance(sized, cst.Name) else None
    return None


def _sized(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x` of `x.size()` or `x.shape` (the sizes of `x`), else None."""
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value == "size":
        return node.func.value
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return node.value
    return None


def compared_names(test: cst.BaseExpression, holds: bool,
                   self_name: Optional[str] = None) -> Tuple[Tuple[Union[cst.Name, cst.Attribute], cst.BaseExpression], ...]:
    """The names (and, given `self_name`, the instance's fields `self.n`) that `test` evaluating
    to `holds` orders against another operand, each with that operand (`0 <= i < n`: `(i, 0)`
    and `(i, n)`).  Such an ordering was evaluated and its
    truth taken: for a list or `None` against a number Python raises `TypeError`, and for a
    tensor of several elements `bool()` raises, so a name that then indexes a tensor is a
    number (an int, or a float that raises there) or a one-element tensor.  The orderings that
    surely ran (`_surely_evaluated`), and of a false chain (`0 <= i < n`) only its first pair,
    the one surely evaluated.  `==` and `!=` prove nothing (a list compares equal or not
    without raising)."""
    found: List[Tuple[Union[cst.Name, cst.Attribute], cst.BaseExpression]] = []
    for part, truth in surely_evaluated(test, holds):
        if not isinstance(part, cst.Comparison):
            continue
        pairs: List[Tuple[cst.BaseExpression, cst.BaseCompOp, cst.BaseExpression]] = []
        left = part.left
        for target in part.comparisons:
            pairs.append((left, target.operator, target.comparator))
            left = target.comparator
        for first, operator, second in pairs if truth else pairs[:1]:
            if isinstance(operator, _ORDERINGS):
                for mine, other in ((first, second), (second, first)):
                    if isinstance(mine, cst.Name) or isinstance(mine, cst.Attribute) and _own_field(mine, self_name):
                        found.append((mine, other))
    return tuple(found)


def _own_field(node: cst.Attribute, self_name: Optional[str]) -> bool:
    """`node` is `self.n`, a field of the method's own instance (`self_name`)."""
    return self_name is not None and isinstance(node.value, cst.Name) and node.value.value == self_name


def _always_leaves(suite: cst.BaseSuite) -> bool:
    """The block's last statement leaves it (`raise`, `return`, `continue`, `break`)."""
    smalls: Sequence[cst.BaseSmallStatement] = ()
    if isinstance(suite, cst.IndentedBlock):
        last = suite.body[-1] if suite.body else None
        if isinstance(last, cst.SimpleStatementLine):
            smalls = last.body
    elif isinstance(suite, cst.SimpleStatementSuite):
        smalls = suite.body
    return bool(smalls) and isinstance(smalls[-1], (cst.Raise, cst.Return, cst.Continue, cst.Break))
