"""The sound prefilter: skip files (and rules) that cannot produce a finding, before LibCST.

Parsing with LibCST is the expensive part of a scan (~8x `ast.parse`, ~40x a regex pass), and
almost no file of a real tree has a finding.  Two stages, each a *necessary* condition for a
finding (never a sufficient one: a wrong condition hides findings, and the tests compare the
results with and without the prefilter on fixtures and look-alike files):

1. text (`could_match`): regular expressions over the raw text.  Matches inside strings or
   comments only let more files through, which is safe.
2. tree (`could_match_tree`): one `ast.parse` (about 8x cheaper than LibCST) shared by the
   rules that passed stage 1, and a flow- and scope-insensitive over-approximation of the
   inference in `lint_h2d/inference/expressions.py`.

H2D001 needs `T[I] = V` with `infer(T).kind == DEVICE`.  The inference makes a value DEVICE
only from these sources (keep this list in step with `expressions.py`):

* a torch factory call with a `device=` keyword that is not provably the CPU (`_factory`),
  or without one inside `with torch.device(...)` (`_factory_value`, `scope.with_`);
* `.cuda(...)` (`_method`), and the legacy typed constructors of `torch.cuda`
  (`torch.cuda.ByteTensor(n)`: `_legacy_cuda_tensor`);
* `t.new_zeros(...)` and the other `new_*` methods, on `t`'s device, the accelerator unless
  `t` is proven on the CPU (`_new_tensor`);
* `torch.zeros_like(t)` and the other `*_like` factories without `device=`, read as
  `t.new_zeros(t.shape)` (`_factory_value`);
* `.to(...)` whose target is not provably the CPU or a dtype (`_to_result`);
* `.gpu` (vLLM's CpuGpuBuffer) and a project device field, one with a `_cpu` sibling
  (`_attribute`);
* the `logits` parameter of a vLLM sampling hook (a parameter annotated `SamplingMetadata`
  beside it, in a file importing vLLM: `summary.sampling_hook`);
* the scores (third parameter, here any `scores`) of `__call__` of a transformers logits
  processor or warper (`scope.logits_processor_classes`);
* `super().compute_logits(...)` in a file importing vLLM (the parent model's logits);
* calling an `nn.Module`: a `torch.nn` class (`nn.Linear(...)`) or a project class deriving
  from `nn.Module` (`Resolved.modules`, read here as `module:<Class>`), or a model a library
  loads (`from_pretrained`, `from_config`, `timm.create_model`: `resolved.pretrained_loader`),
  bound to a name or a field and called later (`_called_module`); stage 2 treats the module
  object itself as a possible device value and a call of a possible device value as one; a
  field of its output (`out.logits`, any attribute but a tensor property) is one too; so is
  calling something named a model (`model(ids)`, `self.draft_model(x)`: `resolved.names_model`);

* `x[idx]` of an `x` nothing tells about, indexed by a device tensor of one dimension or more
  (`_selected_by_device_indices`: advanced indexing runs only on the indices' device);

and it propagates DEVICE through names, `self.<attr>` assignments and constructor keywords,
subscripts, views, in-place/same-device methods, `*_like`/`as_tensor`, same-device torch
functions, arithmetic, comparisons and conditional expressions.  Stage 1 asks for a candidate
statement and for the text of at least one source; stage 2 computes the set of names and
attributes that may hold a device tensor (a fixpoint over every binding in the file, ignoring
order; a name counts in its function and the functions inside it, an attribute everywhere:
a superset of what the walk can prove) and asks whether some candidate
statement's target may be one.

H2D002 needs a statement inside capture code that mutates a tensor.  Capture code is a
function whose name matches `capture-functions` (and the functions nested in it), a
`with torch.cuda.graph(...)` block under any import alias, the code between
`g.capture_begin()` and `g.capture_end()`, and the functions of the file those regions call
(`lint_h2d/capture_flow.py`).  Stage 1 asks for `graph`, `capture_begin` or a configured
name in the text; stage 2 for a mutating statement in a capture-named function, or, when the
file has a graph block or `capture_begin()`, anywhere in the file.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import AbstractSet, Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Pattern, Protocol, Sequence, Set, TYPE_CHECKING, Tuple, TypeVar

from lint_h2d.capture import is_capture_name, is_graph_context_in
from lint_h2d.inference.resolved import LOADER_METHODS, names_model
from lint_h2d.inference.reaching import every_statement, statements_in as _statements_in
from lint_h2d.inference.summary import _SIMPLE_STATEMENTS, ast_dotted as _dotted
from lint_h2d.inference.values import TENSOR_PROPERTIES
from lint_h2d.inference.torch_api import (ALL_FACTORIES, FFT_FACTORIES, FFT_FUNCTIONS, LEGACY_TENSOR_TYPES, LINALG_NORMS, FUNCTIONAL_RANK_ADDING, FUNCTIONAL_RANK_KEEPING, INDEX_OPS, NEW_METHODS, NONZERO_OPS, SAME_DEVICE_FUNCTIONS, SAME_DEVICE_METHODS, SPLIT_OPS,
                                         TORCH_DTYPE_NAMES, VIEW_METHODS)

if TYPE_CHECKING:
    from lint_h2d.config import Settings

# What may separate two tokens of one expression: spaces, line breaks (inside brackets),
# backslash continuations and comments (inside brackets, before a line break).
# A comment must run to its line break: written so, the pattern cannot backtrack into
# `#####` separator lines (catastrophically slow otherwise).
GAP = r"(?:[ \t\r\n\f\\]|#[^\r\n]*[\r\n])*"

# `]` then `=` (not `==`): the end of a subscript target.  A parenthesized target puts `)`
# in between: `(t[0]) = 1`.
CANDIDATE = re.compile(r"\](?:[ \t\r\n\f\\)]|#[^\r\n]*[\r\n])*=(?!=)")
# `torch.device(` (any alias): as a context manager it is the default device of factories.
DEVICE_CALL = re.compile(r"\." + GAP + r"device" + GAP + r"\(")
# Separate patterns that start with a literal: `re` then scans with a fast literal search
# (an alternation, or a leading `\b`, makes it try every position: 30x slower).
DEVICE_SOURCES = (
    re.compile(r"device" + GAP + r"=(?!=)"),  # device= keyword
    re.compile(r"\." + GAP + r"(?:cuda|to)" + GAP + r"\("),  # .cuda(  .to(
    re.compile(r"\." + GAP + r"gpu\b"),  # CpuGpuBuffer.gpu
    # `t.new_zeros(n)`: on `t`'s device, where nothing proves `t` is on the CPU (`_new_tensor`)
    re.compile(r"\." + GAP + r"(?:" + "|".join(sorted(NEW_METHODS)) + r")" + GAP + r"\("),
    # `torch.zeros_like(t)`: as `t.new_zeros(t.shape)` (`expressions._factory_value`)
    re.compile(r"_like" + GAP + r"\("),
    DEVICE_CALL,  # torch.device( : a `with` of it puts factories on the device
    re.compile(r"nn" + GAP + r"\." + GAP + r"[A-Z]"),  # nn.Linear(: a module, called later
    re.compile(r"SamplingMetadata"),  # a vLLM sampling hook's `logits`
    re.compile(r"compute_logits"),  # `super().compute_logits(...)` in a vLLM model
    # A library's model (`resolved.pretrained_loader`): `AutoModel*` / `*Model` / `*For*`
    # `.from_pretrained(` or `.from_config(`, and `timm.create_model(`.
    re.compile(r"Model\w*" + GAP + r"\." + GAP + r"from_(?:pretrained|config)\b"),
    re.compile(r"For[A-Z]\w*" + GAP + r"\." + GAP + r"from_(?:pretrained|config)\b"),
    re.compile(r"timm" + GAP + r"\." + GAP + r"create_model\b"),
    re.compile(r"Logits(?:Processor|Warper)"),  # a transformers logits processor's `scores`
    # `model(ids)`, `self.draft_model(x)`: a call of something named a model (`resolved.names_model`)
    re.compile(r"model" + GAP + r"\("),
    # `torch.cuda.ByteTensor(n)`: the legacy typed constructors allocate on the CUDA device
    re.compile(r"cuda" + GAP + r"\." + GAP + r"(?:" + "|".join(sorted(LEGACY_TENSOR_TYPES)) + r")\b"),
    re.compile(r"(?<![\w.])\w+_cpu\b"),  # `x` beside a bound `x_cpu` (`usage.DeviceNamed.sibling`)
)


# A word followed by a call's `(`: `\b(?:a|b|...)GAP\(` searched with hundreds of names tried
# every name at every position of the text (most of stage 1's time on vLLM); a name that is all
# word characters and is followed by GAP and `(` is the whole word there, so the same answer is
# whether one of the words this finds is a name.
_CALLED_WORD = re.compile(r"\b(\w+)" + GAP + r"\(")
# Up to this many called names, the alternation is searched (it is cheaper than finding words).
CALLED_WORDS_MIN = 64
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=32)
def _field_patterns(fields: FrozenSet[str]) -> Tuple[Tuple[Pattern[str], ...], FrozenSet[str]]:
    """The patterns of which any match means a device field is mentioned, and the names of
    which any called word (`_CALLED_WORD`) means so too."""
    # Cross-file facts (`lint_h2d.inference.resolved.Resolved.device_names`): a field read
    # as `.x`, a function returning a device tensor called as `make(`, the definition of a
    # function whose parameter every call site passes one.
    def alternatives(names: Iterable[str]) -> str:
        return "|".join(re.escape(f) for f in sorted(names, key=len, reverse=True))

    attrs = [f for f in fields if ":" not in f]
    calls = [f[5:] for f in fields if f.startswith("call:")]
    defs = [f[4:] for f in fields if f.startswith("def:")]
    patterns = []
    if attrs:
        patterns.append(re.compile(r"\." + GAP + r"(?:" + alternatives(attrs) + r")\b"))
    if defs:
        patterns.append(re.compile(r"\bdef[ \t]+(?:" + alternatives(defs) + r")\b"))
    words = [c for c in calls if _WORD.fullmatch(c)]
    others = [c for c in calls if not _WORD.fullmatch(c)]
    if len(words) <= CALLED_WORDS_MIN:  # few names: the alternation is the cheaper search
        others, words = calls, []
    if others:
        patterns.append(re.compile(r"\b(?:" + alternatives(others) + r")" + GAP + r"\("))
    return tuple(patterns), frozenset(words)


_CLASS_NAME = re.compile(r"^[ \t]*class[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


def defines_built_class(text: str, device_fields: AbstractSet[str]) -> bool:
    """The text defines a class the project (or vLLM's model loader) builds under an
    accelerator default device (`built:<C>`, `Resolved.built_on_device`): its factories without
    `device=` may be on the device.  Asked by membership, so a recording set sees the names."""
    return any(f"built:{name}" in device_fields for name in _CLASS_NAME.findall(text))


def _built_class_lines(tree: ast.AST, device_fields: AbstractSet[str]) -> Tuple[Tuple[int, int], ...]:
    """The line spans of the classes `defines_built_class` names (their methods run, or may
    run, under the constructor's default device): only the factories there may allocate on
    it, not every factory of the file.  Classes at any depth of the module's statements and
    class bodies (a class in a function is built when the function runs: spans it too)."""
    spans: List[Tuple[int, int]] = []
    todo: List[ast.AST] = list(getattr(tree, "body", ()))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.ClassDef):
            if f"built:{node.name}" in device_fields:
                spans.append((node.lineno, getattr(node, "end_lineno", None) or 10 ** 9))
            todo.extend(node.body)
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(getattr(node, "body", ()))
            todo.extend(getattr(node, "orelse", ()))
            for handler in getattr(node, "handlers", ()):
                todo.extend(handler.body)
            todo.extend(getattr(node, "finalbody", ()))
    return tuple(spans)


def h2d001_text(text: str, device_fields: AbstractSet[str] = frozenset()) -> bool:
    """Stage 1 for H2D001: a candidate `...] = ...` and the text of some device source."""
    if not CANDIDATE.search(text):
        return False
    if any(p.search(text) for p in DEVICE_SOURCES):
        return True
    if not device_fields:
        return False
    patterns, called = _field_patterns(frozenset(device_fields))
    if any(p.search(text) for p in patterns) or defines_built_class(text, device_fields):
        return True
    if called and not called.isdisjoint(_CALLED_WORD.findall(text)):
        return True
    modules = _module_names(frozenset(device_fields))
    # A project module class constructed here (`Head(`): a set lookup per capitalised call,
    # not an alternation of every class name (thousands in a large project: seconds a file).
    return bool(modules) and any(m in modules for m in _CAPITALISED_CALL.findall(text))


_CAPITALISED_CALL = re.compile(r"\b([A-Z]\w*)" + GAP + r"\(")


@lru_cache(maxsize=8)
def _module_names(fields: FrozenSet[str]) -> FrozenSet[str]:
    """`module:<Class>` entries: project classes deriving from `nn.Module`."""
    return frozenset(f[7:] for f in fields if f.startswith("module:"))


def mentions_hint(text: str, device_hints: Sequence[str]) -> bool:
    """Some name the `device-hints` globs may match occurs in `text` (both stages: a hinted
    name is a device source the tables above cannot know)."""
    return bool(device_hints) and _hint_pattern(tuple(device_hints)).search(text) is not None


@lru_cache(maxsize=8)
def _hint_pattern(device_hints: Tuple[str, ...]) -> Pattern[str]:
    import fnmatch

    parts = []
    for glob in device_hints:
        last = glob.rsplit(".", 1)[-1] or "*"
        # fnmatch's translation, anchored to one identifier instead of the whole string.
        body = fnmatch.translate(last)[4:-3].replace(".*", r"\w*").replace(".", r"\w")
        parts.append(body)
    return re.compile(r"\b(?:" + "|".join(parts) + r")\b")


# -- H2D001, stage 2 ---------------------------------------------------------------------------
# The tables are the walk's (`inference/torch_api.py`, which imports no LibCST).

_LIKE_OR_DATA = frozenset(
    {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
     "randint_like", "as_tensor", "asarray"}
)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# `t.T`, `t.data`: `t`'s device; `r.values` / `r.indices` of what `t.max(dim)`, `t.topk(k)`
# return (`expressions.PAIR_FIELDS`): on `t`'s device too.
_KEEP_ATTRS = frozenset({"T", "mT", "data", "real", "imag", "values", "indices"})


# `t.new_zeros(n)`, `t.new(n)`: on `t`'s device, as the ops that keep it (`_new_tensor`);
# `t.topk(k)`, `t.median(dim)`, `t.nonzero()`: results on `t`'s device (`_index_result`).
# `t.chunk(n)`, `torch.split(t, k)`: pieces on `t`'s device (`expressions._pieces`).
# `d.values()`, `d.items()`, `xs.pop()`, `d.get(k)`: what a container holds
# (`expressions._container_method`).
_CONTAINER_METHODS = frozenset({"values", "items", "copy", "get", "pop", "setdefault"})
_KEEP_METHODS = VIEW_METHODS | SAME_DEVICE_METHODS | NEW_METHODS | frozenset(INDEX_OPS) | NONZERO_OPS | SPLIT_OPS \
    | _CONTAINER_METHODS
# `torch.meshgrid(a, b)`, `torch.fft.rfft(x)`, `torch.linalg.vector_norm(x, dim=1)`: where their
# inputs are (`expressions._meshgrid`, `_submodule_call`).
_KEEP_FUNCTIONS = SAME_DEVICE_FUNCTIONS | SPLIT_OPS | FUNCTIONAL_RANK_KEEPING | FUNCTIONAL_RANK_ADDING \
    | FFT_FUNCTIONS | LINALG_NORMS | {"meshgrid"}


# The factories a call names by its method (`torch.fft.fftfreq(n, device=d)`: `fftfreq`).
_FACTORY_NAMES = ALL_FACTORIES | frozenset(f.split(".")[-1] for f in FFT_FACTORIES)


_SIMPLE_CPU_STRING = re.compile(r"""[rRuU]?(['"])cpu(?::[^'"\\\r\n]*)?\1""")


def _is_cpu_string(node: ast.AST, segment: Callable[[ast.AST], Optional[str]]) -> bool:
    """A device spec that `place_of` proves is the CPU: `"cpu"`, `'cpu:0'`, `None`.

    Only a single plain string literal counts (LibCST's `SimpleString`): `"cp" "u"` or an
    f-string is not a string to `place_of`, which then treats it as an accelerator.
    """
    if not isinstance(node, ast.Constant):
        return False
    if node.value is None:
        return True
    if not (isinstance(node.value, str) and node.value.split(":")[0] == "cpu"):
        return False
    source = segment(node)
    return source is not None and _SIMPLE_CPU_STRING.fullmatch(source) is not None


def _keyword(call: ast.Call, name: str) -> Optional[ast.expr]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


@lru_cache(maxsize=8)
def _param_index(fields: FrozenSet[str]) -> Tuple[Optional[Pattern[str]], Dict[str, FrozenSet[str]]]:
    """`param:f.p` entries: the parameters of each function, and a pattern for `def f`."""
    by_function: Dict[str, Set[str]] = {}
    for entry in fields:
        if entry.startswith("param:") and "." in entry:
            function, name = entry[6:].split(".", 1)
            by_function.setdefault(function, set()).add(name)
    if not by_function:
        return None, {}
    return _DEF_NAME, {f: frozenset(p) for f, p in by_function.items()}


# `def NAME` (the name read ahead, so a match takes only `def`): a pattern that starts with a
# literal is searched for that literal, ~6x faster on vLLM than `\bdef[ \t]+(f1|f2|...)\b`
# over the project's hundreds of function names, which tried the alternation at every word
# boundary.  `\b` before `def` is checked on the match (`_WORD` at the character before); the
# name is a whole word.
_DEF_NAME = re.compile(r"def(?=[ \t]+(\w+))")


def _params_defined_here(fields: FrozenSet[str], text: str) -> FrozenSet[str]:
    """Parameter names every call site fills with a device tensor, for the functions this
    file defines (a common name like `out` elsewhere must not make every file a candidate)."""
    pattern, by_function = _param_index(fields)
    if pattern is None:
        return frozenset()
    if not text:
        defined: Iterable[str] = by_function
    else:
        defined = {m.group(1) for m in pattern.finditer(text) if m.group(1) in by_function
                   and not (m.start() and _WORD.match(text, m.start() - 1))}
    return frozenset(p for f in defined for p in by_function.get(f, ()))


# The scope `_MayDevice` evaluates in when it cannot tell (a walrus, a full `ast.walk`): a
# name is looked up in every scope of the file.
ANY_SCOPE = -1


@dataclass(frozen=True)
class ScopedStatements:
    """Every statement of a tree (`every_statement`'s order), the scope each one runs in, and the
    scopes' nesting: scope 0 is the module, each `def` (or `async def`) opens the next number;
    `parents[s]` encloses `s` (-1 for the module).  Class bodies, lambdas and comprehensions
    open no scope here (their bindings count for the enclosing function: a superset).
    `functions`: each `def`'s name and the scope it opens (where its parameters are names)."""

    statements: Tuple[ast.stmt, ...]
    scopes: Tuple[int, ...]
    parents: Tuple[int, ...]
    functions: Tuple[Tuple[str, int], ...] = ()


def scoped_statements(tree: ast.AST) -> ScopedStatements:
    """The statements of `tree` with their scopes (`ScopedStatements`), in one pass."""
    statements: List[ast.stmt] = []
    scopes: List[int] = []
    parents: List[int] = [-1]
    functions: List[Tuple[str, int]] = []
    stack: List[Tuple[ast.stmt, int]] = [(s, 0) for s in getattr(tree, "body", ())]
    simple = _SIMPLE_STATEMENTS
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef)
    while stack:
        stmt, scope = stack.pop()
        statements.append(stmt)
        scopes.append(scope)
        kind = type(stmt)
        if kind in simple:  # no nested blocks: most statements
            continue
        inner = scope
        if kind in definitions:
            inner = len(parents)
            parents.append(scope)
            functions.append((stmt.name, inner))  # type: ignore[attr-defined]
        for name in ("body", "orelse", "finalbody"):
            stack.extend((s, inner) for s in getattr(stmt, name, ()) or ())
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend((s, inner) for s in handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend((s, inner) for s in case.body)
    return ScopedStatements(tuple(statements), tuple(scopes), tuple(parents), tuple(functions))


# `device=x.device` and `.to(x.device)` (`usage.DeviceNamed`): the name before `.device`.
# A parenthesized name (`(x).device`) is still the name.
_NAMED = r"(?:\(" + GAP + r")*(\w+)" + GAP + r"(?:\)" + GAP + r")*\." + GAP + r"device\b"
# A bare name `x_cpu` (not an attribute `.x_cpu`): `x` is the device half of a CPU/device pair.
CPU_SIBLING_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*?)_cpu\b")
_DEVICE_NAMED = (
    re.compile(r"device" + GAP + r"=(?!=)" + GAP + _NAMED),
    re.compile(r"\." + GAP + r"to" + GAP + r"\(" + GAP + _NAMED),
)


def device_named_text(text: str) -> Set[str]:
    """The names `x` of `device=x.device` and `.to(x.device)` in the text, and those of a name
    `x_cpu` (`usage.DeviceNamed`: the device half of a CPU/device pair; strings and comments
    too: more names only let more through)."""
    found = {m.group(1) for m in CPU_SIBLING_NAME.finditer(text)} if "_cpu" in text else set()
    if "device" not in text:
        return found
    return found | {m.group(1) for pattern in _DEVICE_NAMED for m in pattern.finditer(text)}


def device_named_tree(tree: ast.AST) -> Set[str]:
    """`device_named_text` read off a tree (where no text is at hand)."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        # A name `x_cpu`, bound or read (a superset of the walk's bindings): `x` beside it.
        sibling = node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg) else ""
        if len(sibling) > 4 and sibling.endswith("_cpu"):
            found.add(sibling[:-4])
        if not isinstance(node, ast.Call):
            continue
        places = [kw.value for kw in node.keywords if kw.arg == "device"]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and node.args:
            places.append(node.args[0])
        for place in places:
            if isinstance(place, ast.Attribute) and place.attr == "device" and isinstance(place.value, ast.Name):
                found.add(place.value.id)
    return found


class _MayDevice:
    """Names and attributes that may hold a device tensor somewhere in one module.

    Names are kept per scope (`ScopedStatements`): the walk (`inference/scope.py`) gives a
    function its own bindings and those of the enclosing scopes bound before its `def`, never
    a sibling function's, so `out[0] = 0` in one function is no candidate because another
    function binds `out` to a device tensor.  A name is looked up in the scope of the
    expression and every scope around it (any order: a superset); a name some `global` or
    `nonlocal` declares is bound in the module's scope (visible everywhere).  Attributes and
    the project's facts are not scoped.
    """

    def __init__(self, tree: ast.AST, device_fields: AbstractSet[str], text: str = "") -> None:
        self.factories: FrozenSet[str] = _FACTORY_NAMES
        self.torch_functions: Dict[str, str] = torch_function_names(tree)
        self.same_device_functions: FrozenSet[str] = _KEEP_FUNCTIONS
        self.keep_methods: FrozenSet[str] = _KEEP_METHODS
        self.dtype_names: FrozenSet[str] = TORCH_DTYPE_NAMES
        self.device_fields = device_fields
        # `param:f.p` facts: `p` is a name of each `def f`'s scope (`collect` seeds them there),
        # not of the whole file: a forward input's name (`x`, `hidden_states`) written in
        # another function is no device tensor (issue 12).  `params`: names read in every
        # scope (the recording run of `_h2d001_without_facts` sets them; `_needs_facts`
        # answers for the whole file).
        self.param_functions: Dict[str, FrozenSet[str]] = _param_index(frozenset(device_fields))[1]
        self.params: AbstractSet[str] = frozenset()
        self.text = text
        # Some `with` may make `torch.device(...)` the factories' default (any factory then
        # may allocate on the device: scopes and order are not looked at).
        self.device_context = not text or DEVICE_CALL.search(text) is not None and "with" in text
        # The calls inside a class built under a default device elsewhere
        # (`Resolved.built_on_device`): a factory there without `device=` may be on it.
        self.built_lines: Tuple[Tuple[int, int], ...] = ()
        if not self.device_context and defines_built_class(text, device_fields):
            self.built_lines = _built_class_lines(tree, device_fields)
        self._lines: Optional[List[bytes]] = None
        # Names bound in each scope (`ScopedStatements`; [0]: the module's), the scopes'
        # parents, the scope being evaluated, and the names declared global or nonlocal.
        # A vLLM sampling hook's `logits` parameter (`summary.sampling_hook`): any scope.
        self.scoped: List[Set[str]] = [{"logits"} if "SamplingMetadata" in text or not text else set()]
        # A transformers logits processor's `scores` (`scope.logits_processor_classes`): any scope.
        if not text or "transformers" in text and ("LogitsProcessor" in text or "LogitsWarper" in text):
            self.scoped[0].add("scores")
        # A name whose `.device` a call takes as a place (`device=x.device`, `.to(x.device)`),
        # or beside its host sibling `x_cpu`: the walk reads a tensor of unknown place bound to
        # it as on the accelerator (`usage.DeviceNamed`), in its function; here in every scope
        # (a superset).
        self.scoped[0].update(device_named_text(text) if text else device_named_tree(tree))
        self.parents: Tuple[int, ...] = (-1,)
        self.scope = 0
        self.shared: Set[str] = set()
        self.attrs: Set[str] = set()
        # Names and attributes bound to a call that may give a device value (a module's output,
        # any scope): a field of such an output (`out.logits`) may be one too.
        self.outputs: Set[str] = set()
        self.bindings: List[Tuple[Any, ast.AST, str, int]] = []  # (target, value, how, scope)
        self.assigned_attrs: Set[str] = set()
        self.tested: Set[str] = set()  # attribute names `may` looked at
        self.tree = tree

    def collect(self, statements: Sequence[ast.AST], scopes: Sequence[int],
                parents: Tuple[int, ...], functions: Sequence[Tuple[str, int]] = ()) -> None:
        """The bindings of the module (any order), each with the scope it binds in.

        Only the nodes' own bindings (assignments, loops, a call's keywords and appends, a
        walrus): `_binding_nodes` hands the statements and the few expressions the walk binds
        from.  `scopes[i]` is the scope of `statements[i]` (`ScopedStatements`; `parents`
        their nesting); a node past them (a walrus found anywhere) is evaluated in every
        scope and binds in the module's.  `functions`: each `def`'s name and scope
        (`ScopedStatements.functions`); a parameter every call fills with a device tensor
        (`param:f.p`) is bound in the scope of each `def f`, so seen there and in the functions
        nested in it (`bound`), as the walk binds a parameter in its function.
        """
        self.bindings = []
        self.parents = parents
        self.scoped = [self.scoped[0]] + [set() for _ in parents[1:]]
        by_function = self.param_functions
        if by_function:
            for name, inner in functions:
                params = by_function.get(name)
                if params is not None and 0 < inner < len(self.scoped):
                    self.scoped[inner].update(params)
        known = len(scopes)
        for i, node in enumerate(statements):
            scope = scopes[i] if i < known else ANY_SCOPE
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                self.shared.update(node.names)  # bound in the module's scope (`_bind_all`)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self.bindings.append((target, node.value, "assign", scope))
                    self._note_attrs(target)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    self.bindings.append((node.target, node.value, "assign", scope))
                self._note_attrs(node.target)
            elif isinstance(node, ast.NamedExpr):
                self.bindings.append((node.target, node.value, "assign", scope))
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                self.bindings.append((node.target, node.iter, "iterate", scope))
            elif isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg is not None:  # constructor keywords become `self.<kw>` fields
                        self.bindings.append((kw.arg, kw.value, "field", scope))
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in ("append", "insert", "extend") \
                        and isinstance(func.value, ast.Name) and node.args:
                    # `xs.append(v)`: the walk gives `xs` the elements appended to it.
                    self.bindings.append((func.value, node.args[-1], "assign", scope))

    def bound(self, name: str) -> bool:
        """`name` may hold a device tensor in the scope being evaluated (or one around it)."""
        scope = self.scope
        if scope == ANY_SCOPE:
            return any(name in names for names in self.scoped)
        scoped, parents = self.scoped, self.parents
        while scope >= 0:
            if name in scoped[scope]:
                return True
            scope = parents[scope]
        return False

    def segment(self, node: ast.AST) -> Optional[str]:
        """The source of a one-line node (ast columns are UTF-8 byte offsets)."""
        lineno, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if lineno is None or lineno != end:
            return None
        if self._lines is None:
            self._lines = [m.group().encode("utf-8") for m in _LINE.finditer(self.text)]
        if lineno > len(self._lines):
            return None
        line = self._lines[lineno - 1]
        try:
            start, stop = getattr(node, "col_offset", 0), getattr(node, "end_col_offset", None)
            return str(line[start:stop].decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def _note_attrs(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            self.assigned_attrs.add(target.attr)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._note_attrs(element)
        elif isinstance(target, ast.Starred):
            self._note_attrs(target.value)

    def solve(self, done: Callable[[], bool] = lambda: False) -> bool:
        """Least fixpoint; a binding that fired never needs another look.  Stops early (and
        returns True) as soon as `done()` holds: the sets only grow."""
        pending = self.bindings
        while True:
            fired = False
            rest = []
            for binding in pending:
                target, value, how, scope = binding
                self.scope = scope
                if how == "field":
                    if target in self.attrs:
                        continue
                    if self.may(value):
                        self.attrs.add(target)
                        fired = True
                        continue
                elif isinstance(target, (ast.Tuple, ast.List)):
                    # Elements get values from a display of the same shape, or from a value
                    # whose parts the walk knows (a tuple of tensors, zip(), appended tuples).
                    if self._deep(value) or self.may(value):
                        self._bind_all(target)
                        self._note_output(target, value)
                        fired = True
                        continue
                elif self.may(value):
                    self._bind_all(target)
                    self._note_output(target, value)
                    fired = True
                    continue
                rest.append(binding)
            if not fired:
                return False
            if done():
                return True
            pending = rest

    def _note_output(self, target: ast.AST, value: ast.AST) -> None:
        """`out = self.model(x)`: `out` may be a module's output, whose fields may be device
        tensors (`resolved.output_field_message`), and so may a name bound to one of those
        (`h = out`, `h = out[0]`); a flat set, every scope (a superset)."""
        if not self._output(value):
            return
        if isinstance(target, ast.Name):
            self.outputs.add(target.id)
        elif isinstance(target, ast.Attribute):
            self.outputs.add("." + target.attr)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._note_output(element.value if isinstance(element, ast.Starred) else element, value)

    def _output(self, node: ast.AST) -> bool:
        """`node` may be a module's output: a call that may give a device value, or a name or
        attribute bound to one (`_note_output`), a subscript or either side of a conditional of
        one."""
        if isinstance(node, ast.Call):
            return self.may(node)
        if isinstance(node, ast.IfExp):
            return self._output(node.body) or self._output(node.orelse)
        if isinstance(node, ast.Name):
            return node.id in self.outputs
        if isinstance(node, ast.Attribute):
            return "." + node.attr in self.outputs
        return isinstance(node, ast.Subscript) and self._output(node.value)

    def _deep(self, value: ast.AST) -> bool:
        """Some element of a (nested) display may be a device tensor."""
        if isinstance(value, (ast.Tuple, ast.List)):
            return any(self._deep(e) for e in value.elts)
        return self.may(value)

    def _bind_all(self, target: ast.AST) -> bool:
        changed = False
        if isinstance(target, ast.Name):
            name = target.id
            names = self.scoped[0 if self.scope == ANY_SCOPE or name in self.shared else self.scope]
            if name not in names:
                names.add(name)
                changed = True
        elif isinstance(target, ast.Attribute):
            if target.attr not in self.attrs:
                self.attrs.add(target.attr)
                changed = True
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                changed |= self._bind_all(element)
        elif isinstance(target, ast.Starred):
            changed |= self._bind_all(target.value)
        return changed

    def may(self, node: ast.AST) -> bool:
        """True unless `infer(node)` certainly is not a DEVICE tensor (nor a container of one)."""
        if isinstance(node, ast.Name):
            return self.bound(node.id) or node.id in self.params
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return any(self.may(e.value if isinstance(e, ast.Starred) else e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.may(v) for v in node.values)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for generator in node.generators:
                if self.may(generator.iter):
                    self._bind_all(generator.target)
            return self.may(node.value if isinstance(node, ast.DictComp) else node.elt)
        if isinstance(node, ast.Attribute):
            attr = node.attr
            self.tested.add(attr)
            if attr == "gpu" or attr in self.device_fields or attr in self.attrs:
                return True
            if attr in _KEEP_ATTRS:
                return self.may(node.value)  # a view (`.data`, `.T`)
            # A field of a module's structured output (`out.logits`: any name but a tensor
            # property, `resolved.output_field_message`) of a call's value or a name bound to one.
            return attr not in TENSOR_PROPERTIES and self._output(node.value)
        if isinstance(node, ast.Subscript):
            # `x[idx]` of a device `idx` is on the device (`_selected_by_device_indices`).
            return self.may(node.value) or self.may(node.slice)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp):
            return self.may(node.left) or self.may(node.right)
        if isinstance(node, ast.UnaryOp):
            return not isinstance(node.op, ast.Not) and self.may(node.operand)
        if isinstance(node, ast.Compare):
            return self.may(node.left)
        if isinstance(node, ast.IfExp):
            return self.may(node.body) and self.may(node.orelse)
        if isinstance(node, ast.NamedExpr):
            return self.may(node.value)
        return False

    def _any_argument(self, call: ast.Call) -> bool:
        for arg in call.args:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            if self.may(value):
                return True
            if isinstance(value, (ast.List, ast.Tuple)) and any(self.may(e) for e in value.elts):
                return True
        return any(self.may(kw.value) for kw in call.keywords)

    def _in_built_class(self, call: ast.Call) -> bool:
        line = getattr(call, "lineno", 0)
        return any(start <= line <= end for start, end in self.built_lines)

    def _call(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in _CONTAINER_CALLS:
                return self._any_argument(call)
            imported = self.torch_functions.get(func.id)
            if imported is not None and self._torch_function(imported, call):
                return True  # `zeros(n, device=d)` of `from torch import zeros`
            # A project function that returns a device tensor, or a project module class
            # (cross-file facts); a name that may hold a module (`head(x)`).
            return "call:" + func.id in self.device_fields or "module:" + func.id in self.device_fields \
                or self.bound(func.id) or names_model(func.id)  # `model(ids)`: by its name
        if isinstance(func, ast.Subscript):
            return self.may(func.value)  # `self.heads[i](x)`: a module of a ModuleList
        if not isinstance(func, ast.Attribute):
            return False
        method = func.attr
        if "call:" + method in self.device_fields or method == "compute_logits":
            return True  # a project method that returns a device tensor; vLLM's logits
        if method[:1].isupper() and (isinstance(func.value, ast.Name) and func.value.id.endswith("nn")
                                     or isinstance(func.value, ast.Attribute) and func.value.attr == "nn"):
            return True  # `nn.Linear(...)`: a module (its calls give device tensors)
        if method in self.attrs:
            return True  # `self.lm_head(h)`: a field that may hold a module
        if names_model(method) and isinstance(func.value, ast.Name):
            return True  # `self.model(ids)`: a field named a model (`resolved.names_model`)
        if method in LOADER_METHODS:
            return True  # `AutoModel.from_pretrained(name)`: a model (`resolved.pretrained_loader`)
        if self._torch_function(method, call):
            return True
        # <tensor>.<method>(...)
        if method == "cuda":
            return True
        if method in LEGACY_TENSOR_TYPES and isinstance(func.value, ast.Attribute) and func.value.attr == "cuda":
            return True  # `torch.cuda.LongTensor(n)`: on the current CUDA device (`_legacy_cuda_tensor`)
        if method in NEW_METHODS:
            # `t.new_zeros(n)`: on `t`'s device, the accelerator unless `t` is proven on the
            # CPU (`_new_tensor`); `device=` other than a CPU string asks for one.
            device = _keyword(call, "device")
            return device is None or not _is_cpu_string(device, self.segment)
        if method == "to":
            return self._to(call, func.value)
        if (method.endswith("_") and not method.startswith("_")) or method in self.keep_methods:
            return self.may(func.value)
        return False

    def _torch_function(self, method: str, call: ast.Call) -> bool:
        """`torch.<factory>(...)` / `torch.<function>(...)` (any receiver: a superset), or a
        bare name `from torch import <method>` binds (`torch_function_names`)."""
        if method in self.factories:
            device = _keyword(call, "device")
            pin = _keyword(call, "pin_memory")
            pinned = isinstance(pin, ast.Constant) and pin.value is True
            if device is not None and not pinned and not _is_cpu_string(device, self.segment):
                return True
            if device is None and not pinned and (self.device_context or self._in_built_class(call)):
                return True
            if method in _LIKE_OR_DATA and self._any_argument(call):
                return True
            if device is None and method.endswith("_like"):
                # `torch.zeros_like(t)`: on `t`'s device, the accelerator unless `t` is proven
                # on the CPU (`expressions._factory_value`, as `t.new_zeros(n)`).
                return True
        return method in self.same_device_functions and self._any_argument(call)

    def _to(self, call: ast.Call, receiver: ast.expr) -> bool:
        device = _keyword(call, "device")
        if device is not None:
            target: Optional[ast.expr] = device
        else:
            positional = list(call.args)
            target = positional[0] if positional else None
        if target is None:
            return self.may(receiver)
        if isinstance(target, ast.Starred):
            return True
        if _is_cpu_string(target, self.segment):
            return False
        if self._is_dtype(target):
            return self.may(receiver)
        return True

    def _is_dtype(self, node: ast.expr) -> bool:
        """`torch.float32`, `x.dtype`, `dtype`: `.to` keeps the receiver's device.

        Mirrors `_is_dtype`: a dotted name ending in `dtype` is one by its spelling alone;
        `torch.<dtype>` only while `torch` is the module, so not when the attribute could be
        something else (a field the file assigns, a device field).
        """
        parts: List[str] = []
        cur: ast.expr = node
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name):
            return False
        parts.append(cur.id)
        last = parts[0]
        if last.endswith("dtype"):
            return True
        return (len(parts) == 2 and cur.id == "torch" and last in self.dtype_names
                and last not in self.assigned_attrs and last not in self.device_fields
                and last not in self.attrs and last != "gpu")

    def shape_may_match(self, assign: ast.Assign) -> bool:
        """The index selects one element and the value may be a scalar (target aside)."""
        target = assign.targets[0]
        assert isinstance(target, ast.Subscript)
        index = target.slice
        elements = index.elts if isinstance(index, ast.Tuple) else [index]
        for element in elements:
            if isinstance(element, (ast.Slice, ast.Starred)):
                return False  # a slice keeps a dimension; `*idx` is advanced indexing
            if isinstance(element, ast.Constant) and (
                    element.value is None or isinstance(element.value, (bool, str, bytes))):
                return False  # `None` adds a dimension; a bool, a string: not an integer
            if isinstance(element, (ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.ListComp)):
                return False  # advanced (or a dict key)
            if isinstance(element, (ast.Compare, ast.BoolOp)) or (
                    isinstance(element, ast.UnaryOp) and isinstance(element.op, ast.Not)):
                return False  # a bool index (`t[x > 0]`): advanced (`_is_boolean_expression`)
        value = assign.value
        if isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp,
                              ast.SetComp, ast.GeneratorExp, ast.Lambda, ast.JoinedStr)):
            return False  # never a Python scalar
        if isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes, type(None))):
            return False
        return True


def h2d001_tree(tree: ast.AST, device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
    """Stage 2 for H2D001: some candidate statement's target may be a device tensor."""
    prepared = _prepared(tree, device_fields, text)
    if prepared is None:
        return False
    analysis, candidates = prepared

    def done() -> bool:
        return _some_target_may(analysis, candidates)

    return done() or analysis.solve(done)


def _prepared(tree: ast.AST, device_fields: AbstractSet[str], text: str
              ) -> Optional[Tuple[_MayDevice, List[Tuple[ast.Assign, int]]]]:
    """Stage 2's analysis of `tree` with its bindings collected, and the candidate statements
    with their scopes; None when there is no candidate (nothing to collect)."""
    analysis = _MayDevice(tree, device_fields, text)
    scoped = scoped_statements(tree)
    candidates = _candidates(analysis, scoped)
    if not candidates:
        return None
    nodes, scopes = _binding_nodes(scoped, tree if ":=" in text or not text else None)
    analysis.collect(nodes, scopes, scoped.parents, scoped.functions)
    return analysis, candidates


def h2d001_may_statements(tree: ast.AST, device_fields: AbstractSet[str] = frozenset(),
                          text: str = "") -> FrozenSet[int]:
    """The `id`s of the `T[I] = V` statements of `tree` that H2D001 may flag: the candidates
    (`shape_may_match`) whose target may be a device tensor once `_MayDevice`'s fixpoint is
    complete.  `h2d001_tree` asks whether there is one; this says which, so the stubbed pass
    (`parse_units.stubbed_text`) keeps only the units holding one (on vLLM most `T[I] = V`
    writes of a file that passes stage 2 are on host lists and tensors).

    Why it is exact for that use: stage 2's argument is per statement (a candidate whose target
    cannot be a device tensor is never flagged, whatever the other statements are), and the
    sets only grow while solving, so the complete fixpoint holds every statement any earlier
    stop (`h2d001_tree`'s `done`) would have taken.  Not with the settings' device hints (`mentions_hint`), which stage 2
    does not model: the caller then keeps every `T[I] = V`."""
    prepared = _prepared(tree, device_fields, text)
    if prepared is None:
        return frozenset()
    analysis, candidates = prepared

    def size() -> int:
        return sum(map(len, analysis.scoped)) + len(analysis.attrs)

    while True:
        # Looking at a target binds the names of its comprehensions (`may`): solved again
        # until that adds nothing, so no order of looking could have found more.
        analysis.solve()
        before = size()
        found: Set[int] = set()
        for candidate, scope in candidates:
            analysis.scope = scope
            target = candidate.targets[0]
            assert isinstance(target, ast.Subscript)
            if analysis.may(target.value):
                found.add(id(candidate))
        if size() == before:
            return frozenset(found)


def _candidates(analysis: _MayDevice, scoped: ScopedStatements) -> List[Tuple[ast.Assign, int]]:
    """`T[I] = V` statements whose index and value may make a finding, with their scopes."""
    return [(c, scope) for c, scope in zip(scoped.statements, scoped.scopes)
            if isinstance(c, ast.Assign) and len(c.targets) == 1
            and isinstance(c.targets[0], ast.Subscript) and analysis.shape_may_match(c)]


def _some_target_may(analysis: _MayDevice, candidates: Sequence[Tuple[ast.Assign, int]]) -> bool:
    for candidate, scope in candidates:
        analysis.scope = scope
        target = candidate.targets[0]
        assert isinstance(target, ast.Subscript)
        if analysis.may(target.value):
            return True
    return False


def _binding_nodes(scoped: ScopedStatements, walrus_tree: Optional[ast.AST] = None,
                   walruses: Optional[Sequence[ast.NamedExpr]] = None) -> Tuple[List[ast.AST], List[int]]:
    """The statements plus the only expression-level bindings the walk honours, and the scope
    of each but the walruses found anywhere (those come last, and have none: `collect`).

    `ModuleWalker` binds a walrus only as a whole expression statement, and reads constructor
    keywords only from a call that is a statement's whole value (`return cls(x=...)`), so
    these nodes are a superset of its sources, found without a costly full `ast.walk`.
    """
    out: List[ast.AST] = list(scoped.statements)
    scopes: List[int] = list(scoped.scopes)
    for stmt, scope in zip(scoped.statements, scoped.scopes):
        value = getattr(stmt, "value", None)
        if isinstance(value, ast.Call) and isinstance(
            stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr)
        ):
            out.append(value)
            scopes.append(scope)
        elif isinstance(stmt, ast.Expr) and isinstance(value, ast.NamedExpr):
            out.append(value)
            scopes.append(scope)
    if walruses is not None:
        out.extend(walruses)  # `scan_tree(walrus_tree, walruses=True).walruses`
    elif walrus_tree is not None:
        # The walk binds a walrus anywhere (`if (t := ...) is not None:`).
        out.extend(scan_tree(walrus_tree, walruses=True).walruses)
    return out, scopes


# Builtins whose result holds (or is) what their arguments hold: containers, `dict(buf=t)`, and
# `abs(t)` / `round(t)` of a tensor, a tensor where `t` is (`Tensor.__abs__`, as the walk reads it).
_CONTAINER_CALLS = frozenset({"zip", "enumerate", "list", "tuple", "sorted", "reversed", "iter", "next", "dict",
                              "abs", "round"})


# -- H2D002 ------------------------------------------------------------------------------------

_CPU_TEXT = re.compile(r"cpu|_host")


def h2d002_text(text: str, capture_functions: Sequence[str]) -> bool:
    """Stage 1 for H2D002: CPU metadata and a capture context are mentioned."""
    if not _CPU_TEXT.search(text):
        return False
    if "graph" in text or "capture_begin" in text:
        return True
    fragments = [f for p in capture_functions for f in re.split(r"[*?\[\]]+", p) if f]
    return any(f in text for f in fragments) or any(
        not re.sub(r"[*?\[\]]", "", p) for p in capture_functions
    )


def _is_mutation(stmt: ast.stmt) -> bool:
    """A statement `mutation_of` may accept (a superset)."""
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Call)
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Subscript) for t in stmt.targets)
    return isinstance(stmt, ast.AugAssign)


def _h2d002_import_aliases(statements: Sequence[ast.stmt]) -> Dict[str, Set[str]]:
    """Bound name → every dotted module path an import binds it to (`capture_flow.
    import_aliases` keeps the last one; any of them may be it, so the prefilter tries all)."""
    out: Dict[str, Set[str]] = {}
    for stmt in statements:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    out.setdefault(alias.asname, set()).add(alias.name)
                else:
                    head = alias.name.split(".")[0]
                    out.setdefault(head, set()).add(head)
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            for alias in stmt.names:
                if alias.name != "*":
                    out.setdefault(alias.asname or alias.name, set()).add(f"{stmt.module}.{alias.name}")
    return out


def _h2d002_region(stmt: ast.stmt, aliases: Dict[str, Set[str]]) -> bool:
    """A graph block (`with torch.cuda.graph(...)` under any alias) or `x.capture_begin()`."""
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            expr = item.context_expr
            if isinstance(expr, ast.Call):
                expr = expr.func
            written = _dotted(expr) or ""
            head = written.split(".")[0]
            if is_graph_context_in(written, {}) or any(
                is_graph_context_in(written, {head: target}) for target in aliases.get(head, ())
            ):
                return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return isinstance(func, ast.Attribute) and func.attr == "capture_begin"
    return False


def h2d002_tree(tree: ast.AST, capture_functions: Sequence[str],
                statements: Optional[Sequence[ast.stmt]] = None) -> bool:
    """Stage 2 for H2D002: a capture function holds a mutating statement (nested functions
    included), or the file has a graph-capture region and a mutating statement anywhere (the
    functions a region calls are capture functions too: a superset).  `statements`: the
    tree's `every_statement` when the caller has them."""
    if statements is None:
        statements = list(every_statement(tree))
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and is_capture_name(node.name, capture_functions) \
                and any(_is_mutation(s) for s in _statements_in(node.body, into_definitions=True)):
            return True
    aliases = _h2d002_import_aliases(statements)
    if not any(_h2d002_region(s, aliases) for s in statements):
        return False
    return any(_is_mutation(s) for s in statements)


# -- H2D003 / H2D004 ----------------------------------------------------------------------------

# H2D003 needs `.to/.cuda/.copy_(...)` with a non-blocking flag: the `non_blocking` keyword, or
# the flag in second position of `copy_` / `cuda` (`dst.copy_(src, True)`).
_H2D003_TEXT = (re.compile(r"non_blocking"), re.compile(r"copy_" + GAP + r"\("),
                re.compile(r"cuda" + GAP + r"\("))
_FALSY_CONSTANTS = (False, None, 0, 0.0, "")


def h2d003_text(text: str) -> bool:
    """Stage 1 for H2D003: a non-blocking flag may be passed to a copy."""
    return any(p.search(text) for p in _H2D003_TEXT)


def _falsy(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not node.value


def _non_blocking_call(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("to", "cuda", "copy_")):
        return False
    for keyword in node.keywords:
        if keyword.arg == "non_blocking":
            return not _falsy(keyword.value)
    if node.func.attr in ("cuda", "copy_"):
        positional = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                break
            positional.append(arg)
        return len(positional) > 1 and not _falsy(positional[1])
    return False


def h2d003_tree(tree: ast.AST) -> bool:
    """Stage 2 for H2D003: some `.to/.cuda/.copy_` call passes a flag that is not off."""
    return scan_tree(tree, h2d003=True).h2d003


# The factories H2D004 looks at (constant contents).
H2D004_FACTORIES = frozenset({"zeros", "ones", "full", "empty", "eye", "arange", "linspace"})
_H2D004_TEXT = re.compile(r"\." + GAP + r"(?:to|cuda)" + GAP + r"\(")


def h2d004_text(text: str) -> bool:
    """Stage 1 for H2D004: a move and a factory's name."""
    return bool(_H2D004_TEXT.search(text)) and any(f in text for f in H2D004_FACTORIES)


def _factory_moved(node: ast.Call, torch_names: Optional[AbstractSet[str]] = None) -> bool:
    """`<module>.<factory>(...).to(...)` / `.cuda(...)`; with `torch_names`, only where the
    module's name is one of them (`torch_aliases`: `move_of` asks for a torch alias)."""
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cuda"):
        inner = node.func.value
        return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
            and isinstance(inner.func.value, ast.Name) and inner.func.attr in H2D004_FACTORIES \
            and (torch_names is None or inner.func.value.id in torch_names)
    return False


def torch_aliases(statements: Iterable[ast.stmt]) -> FrozenSet[str]:
    """Every name an `import` among `statements` binds to the torch module, and `torch`.

    The walk's `torch_names` (`scope.module_aliases`) come from the module-level imports and
    only shrink below (a parameter shadowing one); H2D004's `move_of` flags a factory only on
    one of them, so `tl.arange(0, n).to(tl.int64)` (Triton) or `jnp.zeros(3).to(d)` cannot
    be one.  The same test on every import of the file: a superset."""
    names = {"torch"}
    for stmt in statements:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name == "torch" or (alias.asname is None and alias.name.startswith("torch.")):
                    names.add(alias.asname or alias.name.split(".")[0])
    return frozenset(names)


def torch_function_names(tree: ast.AST) -> Dict[str, str]:
    """Every name a `from torch import f` (or `... as g`) anywhere in `tree` binds, to `f`:
    the walk reads a call of one as `torch.f(...)` where the module-level import binds it once
    (`scope.torch_function_aliases`); every such import, at any depth, is a superset."""
    found: Dict[str, str] = {}
    for node in every_statement(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "torch" and node.level == 0:
            found.update((alias.asname or alias.name, alias.name) for alias in node.names if alias.name != "*")
    return found


def h2d004_tree(tree: ast.AST) -> bool:
    """Stage 2 for H2D004: `<torch alias>.<factory>(...).to(...)` / `.cuda(...)` somewhere."""
    return scan_tree(tree, h2d004=True, torch_names=torch_aliases(every_statement(tree))).h2d004


@dataclass(frozen=True)
class TreeScan:
    """What one pass over every node of a tree found (`scan_tree`)."""

    h2d003: bool = False  # H2D003's stage 2 (`_non_blocking_call` somewhere)
    h2d004: bool = False  # H2D004's stage 2 (`_factory_moved` somewhere)
    walruses: Tuple[ast.NamedExpr, ...] = ()  # every `:=`, in `ast.walk`'s order


# Fields that hold no node (names, flags, operators, `ctx`): the scan does not look at them.
_NO_NODES = frozenset({"ctx", "op", "ops", "type_comment", "id", "attr", "arg", "name", "asname",
                       "module", "level", "is_async", "simple", "conversion", "kind", "rest",
                       "kwd_attrs"})
_NODE_FIELDS: Dict[type, Tuple[str, ...]] = {
    ast.Constant: (), ast.Global: (), ast.Nonlocal: (), ast.Import: (), ast.ImportFrom: (),
    type(None): (), str: (),
}


def node_fields(kind: type) -> Tuple[str, ...]:
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        fields = _NODE_FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _NO_NODES)
    return fields


def scan_tree(tree: ast.AST, h2d003: bool = False, h2d004: bool = False, walruses: bool = False,
              torch_names: Optional[AbstractSet[str]] = None) -> TreeScan:
    """H2D003's and H2D004's stage 2 and the walruses of a tree, in one pass over its nodes
    (each `ast.walk` cost a file as much as its summary); `torch_names`: `_factory_moved`'s.  Breadth first like `ast.walk`,
    children in field order, so the walruses come in its order; nodes without children
    (names, constants, operators) are not queued, which leaves the order of the others.
    Stops early when only the stage-2 answers are asked for and both are known."""
    found003 = found004 = False
    named: List[ast.NamedExpr] = []
    queue: List[Any] = [tree]
    append, extend = queue.append, queue.extend
    table, call, walrus = _NODE_FIELDS, ast.Call, ast.NamedExpr
    for node in queue:
        kind = type(node)
        if kind is call:
            if h2d003 and not found003 and _non_blocking_call(node):
                found003 = True
            if h2d004 and not found004 and _factory_moved(node, torch_names):
                found004 = True
            if (found003 or not h2d003) and (found004 or not h2d004) and not walruses:
                break
        elif kind is walrus:
            named.append(node)
        fields = table.get(kind)
        if fields is None:
            fields = node_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(value)
            elif value is not None:
                append(value)
    return TreeScan(found003, found004, tuple(named) if walruses else ())


# -- both stages for a file ---------------------------------------------------------------------


class Prefiltered(Protocol):
    """What the prefilter reads of a rule: a `rules.base.Rule` or a `prefilter.RuleFilter`."""

    @property
    def code(self) -> str: ...

    @property
    def has_tree_check(self) -> bool: ...

    def could_match(self, text: str, settings: "Settings", device_fields: AbstractSet[str] = ...) -> bool: ...

    def could_match_tree(self, tree: ast.AST, settings: "Settings", device_fields: AbstractSet[str] = ...,
                         text: str = ...) -> bool: ...


R = TypeVar("R", bound=Prefiltered)


def tree_filter(rules: Sequence[R], tree: ast.AST, text: str, settings: "Settings",
                device_fields: AbstractSet[str] = frozenset()) -> List[R]:
    """Stage 2: the rules (already past stage 1) whose tree check passes; [] means skip."""
    out = []
    for rule in rules:
        if not rule.has_tree_check:
            out.append(rule)
            continue
        try:
            keep = rule.could_match_tree(tree, settings, device_fields=device_fields, text=text)
        except Exception:  # RecursionError on a deep expression, ...: keep, LibCST decides
            keep = True
        if keep:
            out.append(rule)
    return out


# -- stage 2 where the text is already parsed ---------------------------------------------------
#
# A project scan parses every file once for its summary (`project_index.py`, `pipeline.py`),
# before the project's facts are known, and the analysis parsed it again for stage 2.  The
# summary's tree now also answers stage 2 (`tree_verdict`), and the analysis uses the answers
# (`apply_verdict`) instead of parsing again.  Only H2D001's check reads the project's facts;
# it runs there without them, recording every fact it looks up: if the project's facts hold
# none of those, the run with them takes the same path to the same answer.


def text_hash(text: str) -> str:
    """What a verdict is keyed by: the exact text it was computed from."""
    import hashlib

    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class TreeVerdict:
    """Stage 2's answers for one text, from a tree parsed without a syntax error.

    `fixed`: rule code → the answer of a check that needs no project facts (H2D001's too, when
    it holds without them; a rule whose text stage fails on this text is left out).
    `looked_up`: H2D001 failed without facts: the facts its run asked about, `\0`-joined, and
    `param_names` the names it asked the parameter facts about."""

    text_hash: str
    fixed: Tuple[Tuple[str, bool], ...]
    looked_up: Optional[str] = None
    param_names: Optional[str] = None


class _Recording(frozenset):  # type: ignore[type-arg]
    """An empty set of facts that remembers what it was asked."""

    asked: Set[str]

    def __new__(cls) -> "_Recording":
        made = super().__new__(cls)
        made.asked = set()
        return made

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.asked.add(key)
        return False


class _RecordingParams(set):  # type: ignore[type-arg]
    def __init__(self) -> None:
        super().__init__()
        self.asked: Set[str] = set()

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.asked.add(key)
        return False


def _h2d001_without_facts(tree: ast.AST, text: str, scoped: Optional[ScopedStatements] = None,
                          walruses: Optional[Sequence[ast.NamedExpr]] = None
                          ) -> Tuple[bool, Set[str], Set[str]]:
    """`h2d001_tree(tree, frozenset(), text)`, and the facts and parameter names it asked about.
    `scoped` and `walruses`: the tree's `scoped_statements` and `scan_tree(...).walruses` when
    the caller has them."""
    facts = _Recording()
    analysis = _MayDevice(tree, facts, text)
    params = _RecordingParams()
    analysis.params = params
    if scoped is None:
        scoped = scoped_statements(tree)
    candidates = _candidates(analysis, scoped)
    if not candidates:
        return False, set(), set()

    def done() -> bool:
        return _some_target_may(analysis, candidates)

    walrus_tree = tree if ":=" in text or not text else None
    nodes, scopes = _binding_nodes(scoped, walrus_tree, walruses if walrus_tree is not None else None)
    analysis.collect(nodes, scopes, scoped.parents, scoped.functions)
    return done() or analysis.solve(done), facts.asked, params.asked


def tree_verdict(tree: ast.AST, text: str, capture_functions: Sequence[str]) -> TreeVerdict:
    """Stage 2 of every built-in rule whose text stage can pass on `text` (`apply_verdict`
    reads it back).  A check that raises is left out: the analysis parses and decides."""
    fixed: List[Tuple[str, bool]] = []
    looked_up = param_names = None
    scoped = scoped_statements(tree)
    statements = scoped.statements
    need003, need004 = h2d003_text(text), h2d004_text(text)
    scan: Optional[TreeScan] = TreeScan()
    if need003 or need004 or ":=" in text or not text:
        try:  # one pass for both checks and the walruses H2D001's check binds
            scan = scan_tree(tree, need003, need004, walruses=":=" in text or not text,
                             torch_names=torch_aliases(statements) if need004 else None)
        except Exception:  # MemoryError, ...: the checks below raise, and are left out
            scan = None

    def scanned() -> TreeScan:
        assert scan is not None, "the scan failed"
        return scan

    checks: List[Tuple[str, bool, Callable[[], bool]]] = [
        ("H2D002", h2d002_text(text, capture_functions),
         lambda: h2d002_tree(tree, capture_functions, statements)),
        ("H2D003", need003, lambda: scanned().h2d003),
        ("H2D004", need004, lambda: scanned().h2d004),
    ]
    for code, possible, check in checks:
        if possible:
            try:
                fixed.append((code, check()))
            except Exception:  # RecursionError on a deep expression, ...
                pass
    try:  # without a candidate statement it returns before the costly part
        found, asked, names = _h2d001_without_facts(tree, text, scoped,
                                                    scan.walruses if scan is not None else None)
    except Exception:
        pass
    else:
        if found:
            fixed.append(("H2D001", True))
        else:
            looked_up, param_names = "\0".join(sorted(asked)), "\0".join(sorted(names))
    return TreeVerdict(text_hash(text), tuple(fixed), looked_up, param_names)


def _needs_facts(verdict: TreeVerdict, text: str, device_fields: AbstractSet[str]) -> bool:
    """H2D001 asked about a fact the project holds: its answer may differ with the facts."""
    if verdict.looked_up is None or verdict.param_names is None:
        return True
    if any(key in device_fields for key in verdict.looked_up.split("\0") if key):
        return True
    if not verdict.param_names:
        return False
    params = _params_defined_here(frozenset(device_fields), text)
    return any(name in params for name in verdict.param_names.split("\0"))


def apply_verdict(verdict: TreeVerdict, rules: Sequence[R], text: str, settings: "Settings",
                  device_fields: AbstractSet[str] = frozenset()) -> Optional[List[R]]:
    """`tree_filter(rules, tree, text, ...)` from a verdict on this text, without the tree;
    None when the verdict cannot answer for some rule (the caller parses and runs stage 2)."""
    fixed = dict(verdict.fixed)
    out = []
    for rule in rules:
        if not rule.has_tree_check:
            out.append(rule)
            continue
        if rule.code == "H2D001":
            keep = fixed.get("H2D001")
            if keep is None:
                if _needs_facts(verdict, text, device_fields):
                    return None
                keep = False
            keep = keep or mentions_hint(text, settings.device_hints)
        elif rule.code in _VERDICT_CODES and rule.code in fixed:
            keep = fixed[rule.code]
        else:
            return None
        if keep:
            out.append(rule)
    return out


def verdict_excludes(verdict: TreeVerdict, rule: Prefiltered, text: str, settings: "Settings",
                     device_fields: AbstractSet[str] = frozenset()) -> bool:
    """The verdict alone drops `rule` (`apply_verdict` would, whatever its text stage says).

    Why: the text stage (`could_match`) of H2D001 searches for every project field and called
    name; for most files the verdict already says no candidate can be a device tensor, so the
    engine asks this first and runs the text stage only for the rules left."""
    if not rule.has_tree_check or rule.code not in _VERDICT_CODES:
        return False
    fixed = dict(verdict.fixed)
    if rule.code != "H2D001":
        return fixed.get(rule.code) is False
    return "H2D001" not in fixed and not _needs_facts(verdict, text, device_fields) \
        and not mentions_hint(text, settings.device_hints)


# The rules whose stage 2 `tree_verdict` computes (their `could_match_tree` is the function
# named there; tests/test_prefilter.py compares both on every fixture).
_VERDICT_CODES = frozenset({"H2D001", "H2D002", "H2D003", "H2D004"})


def select_rules(rules: Sequence[R], text: str, settings: "Settings",
                 device_fields: AbstractSet[str] = frozenset()) -> List[R]:
    """Both stages for one file: the rules that may report something in `text`."""
    survivors = [r for r in rules if r.could_match(text, settings, device_fields=device_fields)]
    if not survivors or not any(r.has_tree_check for r in survivors):
        return survivors
    try:
        tree = ast.parse(text)
    except Exception:  # SyntaxError, RecursionError, ...: let LibCST decide and report
        return survivors
    return tree_filter(survivors, tree, text, settings, device_fields)


# -- the built-in rules' two stages, by code -----------------------------------------------------
#
# Each rule's `could_match` / `could_match_tree` is the `RuleFilter` of its code: the stages
# live here, without the rule, whose module imports LibCST.  So a run can decide that a file
# has nothing to report (`triage.py`) before it imports any of LibCST or the rules: what a
# pre-commit run after an edit of a file without candidates no longer pays for.


@dataclass(frozen=True)
class RuleFilter:
    """One rule's prefilter stages (the duck type `tree_filter`, `apply_verdict` and
    `verdict_excludes` read: `code`, `has_tree_check`, `could_match`, `could_match_tree`)."""

    code: str
    text_check: Callable[[str, "Settings", AbstractSet[str]], bool]
    tree_check: Callable[[ast.AST, "Settings", AbstractSet[str], str], bool]
    has_tree_check: bool = True

    def could_match(self, text: str, settings: "Settings", device_fields: AbstractSet[str] = frozenset()) -> bool:
        return self.text_check(text, settings, device_fields)

    def could_match_tree(self, tree: ast.AST, settings: "Settings", device_fields: AbstractSet[str] = frozenset(),
                         text: str = "") -> bool:
        return self.tree_check(tree, settings, device_fields, text)


def _h2d001_text(text: str, settings: "Settings", device_fields: AbstractSet[str]) -> bool:
    return h2d001_text(text, device_fields) or mentions_hint(text, settings.device_hints)


def _h2d001_tree(tree: ast.AST, settings: "Settings", device_fields: AbstractSet[str], text: str) -> bool:
    return h2d001_tree(tree, device_fields, text) or mentions_hint(text, settings.device_hints)


def _h2d002_text(text: str, settings: "Settings", device_fields: AbstractSet[str]) -> bool:
    return h2d002_text(text, settings.capture_functions)


def _h2d002_tree(tree: ast.AST, settings: "Settings", device_fields: AbstractSet[str], text: str) -> bool:
    return h2d002_tree(tree, settings.capture_functions)


def _h2d003_text(text: str, settings: "Settings", device_fields: AbstractSet[str]) -> bool:
    return h2d003_text(text)


def _h2d003_tree(tree: ast.AST, settings: "Settings", device_fields: AbstractSet[str], text: str) -> bool:
    return h2d003_tree(tree)


def _h2d004_text(text: str, settings: "Settings", device_fields: AbstractSet[str]) -> bool:
    return h2d004_text(text)


def _h2d004_tree(tree: ast.AST, settings: "Settings", device_fields: AbstractSet[str], text: str) -> bool:
    return h2d004_tree(tree)


# Every built-in rule's code, in order (`rules.all_rules()`'s; tests/test_prefilter.py checks).
RULE_FILTERS: Mapping[str, RuleFilter] = {
    "H2D001": RuleFilter("H2D001", _h2d001_text, _h2d001_tree),
    "H2D002": RuleFilter("H2D002", _h2d002_text, _h2d002_tree),
    "H2D003": RuleFilter("H2D003", _h2d003_text, _h2d003_tree),
    "H2D004": RuleFilter("H2D004", _h2d004_text, _h2d004_tree),
}
