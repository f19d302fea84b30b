"""What one file tells the others: a per-file summary built on CPython's `ast` (cheap).

A summary holds, for one file, the facts another file may need, as symbolic *terms* that
still mention other files' names (`Pool(...)`, `make_buf(...)`, a parameter):

* classes: bases, and every field with each value assigned to it (`self.x = ...` in any
  method, class-level annotations and assignments, keywords of `cls(...)` constructors);
* functions: parameters with their annotations, return annotation, the returned
  expressions, and which parameters the body uses as integers or as sequences;
* call sites: what each call passes to each parameter;
* device contexts: `with torch.device(...)` / `torch.set_default_device(...)` and the
  classes constructed under them (models built on the accelerator by the default device).

`lint_h2d.inference.project` resolves the terms of every summary of the project together.
Terms are nested tuples (tag first), so that a summary is plain JSON for the project index;
every term that introduces a fact carries its line, so that evidence can name it.
"""
from __future__ import annotations

import ast
import builtins
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import AbstractSet, Any, Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

from lint_h2d.inference.reaching import SIMPLE_STATEMENTS, Site, branch_rebindings, every_statement, reaching, rebinds, statement_sites
from lint_h2d.inference.torch_api import (dtype_integer, FFT_FACTORIES, FFT_FUNCTIONS, LINALG_NORMS, FLOAT_DEFAULT_FACTORIES, FUNCTIONAL_RANK_KEEPING, INDEX_OPS, LEGACY_TENSOR_TYPES, NEW_METHODS, SAME_DEVICE_METHODS, SCALAR_METHODS,
                                         TORCH_DTYPE_NAMES, VIEW_METHODS)

Term = Tuple[Any, ...]

UNK: Term = ("unk",)
# An index that is a list display of int literals (`t[[0, 2]]`): one dimension, as PyTorch makes
# a 1-D tensor of it (a position of an `advanced` part of a `sub` term).
NUMBER_LIST_INDEX: Term = ("numlist",)
_TENSOR: Term = ("tensor", None)  # an annotation `torch.Tensor`
SCALAR: Term = ("scalar",)
OTHER: Term = ("other",)
# `self.x = []` where no method of the class may grow the list (`_grown_fields`): the tag of
# an `(EMPTY_LIST, line)` term.  An item store into it raises `IndexError`, so a store that
# copies writes into another value of the field (`project._Resolver._field` reads it as `None`
# is read).  A grown one is the term of any empty display, `EMPTY_DISPLAY`.
EMPTY_LIST = "emptylist"
# The constant `None` among a name's bindings: `_join` drops it beside any other term.
NONE_TERM: Term = ("none",)
EMPTY_DISPLAY: Term = ("list", NONE_TERM)
# Device types that name an accelerator (ROCm tensors report `cuda`).
_ACCELERATOR_TYPES = frozenset({"cuda", "xpu", "hpu", "npu", "mps"})
# A device specification (`"cpu"`, `"cuda:0"`, `torch.device("cpu")`): ("place", "cpu" |
# "accel" | "meta").  Call sites that pass one say where a `device` parameter points, and a
# `.to()` naming an accelerator moves a module there (`_accelerator_move`).
_DEVICE_SPEC = re.compile(r"(cpu|meta|" + "|".join(sorted(_ACCELERATOR_TYPES)) + r")(:[0-9]+)?")
ACCELERATOR_PLACE: Term = ("place", "accel")
CPU_PLACE: Term = ("place", "cpu")


def place_term(text: str) -> Optional[Term]:
    """The place a device string names, or None for a string that is no device spec."""
    m = _DEVICE_SPEC.fullmatch(text)
    if m is None:
        return None
    kind = m.group(1)
    return ("place", kind) if kind in ("cpu", "meta") else ACCELERATOR_PLACE

# The summary's own tables of torch's factories and device-keeping calls: close to `torch_api`'s
# (the walk's) but not equal to them, so a term records no more than it always did; a change
# here changes every stored summary (bump `project_index.INDEX_FORMAT`).
_SIZE_FACTORIES = frozenset({"empty", "zeros", "ones", "rand", "randn"})
_ONE_D = frozenset({"arange", "linspace", "logspace", "randperm"})
_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                   "randn_like", "randint_like"})
_DATA = frozenset({"tensor", "as_tensor", "asarray"})
_FACTORIES = _SIZE_FACTORIES | _ONE_D | _LIKE | _DATA | {"full", "eye", "randint", "empty_strided"}
_SAME_DEVICE_FUNCTIONS = frozenset({
    "cumsum", "cat", "concat", "stack", "where", "clamp", "abs", "add", "sub", "mul", "div",
    "maximum", "minimum", "sum", "argsort", "argmax", "argmin", "flatten", "reshape",
    "index_select", "gather", "repeat_interleave", "nonzero", "searchsorted", "diff",
    "exp", "log", "sqrt", "sigmoid", "softmax", "log_softmax", "logsumexp", "neg", "mean",
    "prod", "cumprod", "clip", "remainder", "floor_divide", "masked_select", "bucketize",
    "logical_and", "logical_or", "logical_not", "eq", "ne", "lt", "le", "gt", "ge", "nan_to_num",
    "outer", "ger", "any", "all", "quantile", "nanquantile",
})
# Tensor methods whose result is a tensor where the receiver is: the walk's tables
# (`torch_api`), but `max` / `min` (with a `dim`, a pair of values and indices), `type` (a string
# without arguments) and `data_ptr_view` (no method of `torch.Tensor`).
_SAME_DEVICE_METHODS = (SAME_DEVICE_METHODS | VIEW_METHODS) - {"max", "min", "type", "data_ptr_view"}
# Of those, the ones whose result also has the input's rank (elementwise, `softmax` along a
# dimension, a copy or a cast): a `keep` term, so a rank known at a call site survives them.
_RANK_KEEPING = frozenset({
    "clone", "contiguous", "detach", "int", "long", "float", "half", "bfloat16", "bool", "byte",
    "short", "char", "double", "exp", "log", "sqrt", "sigmoid", "softmax", "log_softmax", "abs",
    "neg", "masked_fill", "flip", "roll", "clamp", "clip", "type_as", "index_select", "cumsum", "cumprod",
    "nan_to_num", "tril", "triu", "gather", "t", "transpose", "permute", "movedim", "swapaxes", "narrow",
    "argsort",
})
# Of those, the ones whose result has an integer dtype whatever the input's (`x.argsort()`,
# `x.long()`): a third part of their `keep` term says so, as the walk's `_INTEGER_RESULTS` does
# (`x[order]` with `order` an integer 1-D index keeps `x`'s rank; one element of it indexes).
_INTEGER_KEEPING = frozenset({"argsort", "int", "long", "short", "char"})
# `torch.cat((a, b), dim)` and its aliases: a `cat` term, where its first input is, of the
# inputs' rank when every one has it (the walk reads the same table: `expressions`; PyTorch
# requires every input to have that rank).
CONCATENATIONS = frozenset({"cat", "concat", "concatenate"})
# `torch.nn` classes that wrap a tensor rather than compute: the value is the wrapped tensor
# (the walk reads the same table: `expressions`).
NN_TENSOR_WRAPPERS = frozenset({"Parameter", "Buffer"})
# Builtins that return a Python number (the walk reads the same table: `expressions`).
SCALAR_BUILTINS = frozenset({"len", "int", "float", "bool", "round", "abs", "ord", "hash"})
_PROPERTIES = frozenset({"property", "cached_property"})


# The summaries' dataclasses keep their fields in `__slots__` where Python can (3.10+): vLLM's
# resolve holds some 160,000 call sites and 40,000 functions, and an instance dict each cost
# more than the fields themselves (issue 12's peak).  Pickled by their fields either way
# (`project_index._SnapshotPickler`; a frozen slotted dataclass pickles its fields since 3.10).
_SLOTTED: Dict[str, bool] = {"slots": True} if sys.version_info >= (3, 10) else {}


@dataclass(frozen=True, **_SLOTTED)
class ClassSummary:
    name: str
    line: int
    bases: Tuple[str, ...]
    # (attribute, term) for each assignment; several for one attribute are joined.
    fields: Tuple[Tuple[str, Term], ...]
    # Classes constructed in `__init__` (`self.sub = Sub(...)`): built where this one is.
    constructs: Tuple[str, ...] = ()
    # The generated `__init__`'s positional parameters, in order, of a dataclass or a
    # NamedTuple without bases of its own: `State(a, b)` passes `a` to the first.
    positional: Tuple[str, ...] = ()


@dataclass(frozen=True, **_SLOTTED)
class FunctionSummary:
    name: str
    owner: Optional[str]  # the class of a method
    line: int
    params: Tuple[str, ...]
    annotations: Tuple[Term, ...]  # one per parameter; UNK when absent
    # Called as `obj.name(...)` with the object as first parameter (a method, a classmethod).
    bound: bool
    returns: Tuple[Term, ...]
    return_annotation: Term
    # Parameters the body proves integer-like (`range(p)`, a slice bound) or sequence-like
    # (`len(p)`, `p.tolist()`, `for x in p`, `p.shape`): evidence for or against an index.
    int_params: Tuple[str, ...] = ()
    seq_params: Tuple[str, ...] = ()
    # Parameters with a default value (a call may omit them).
    defaults: Tuple[str, ...] = ()
    # Of those, the ones whose default is an int literal (`n_ctx=512`).
    int_defaults: Tuple[str, ...] = ()
    # What the body calls, each name once with its first line: plain names (`Model(cfg)`,
    # `build(cfg)`) and methods of its own object (`self.init_model(...)`).  Called inside
    # `with torch.device(...)`, the classes it constructs are built there (`_Resolver._mark_calls`).
    # Calls under the body's own `with torch.device(...)` are left out: that block decides.
    called: Tuple[Tuple[str, int], ...] = ()
    self_called: Tuple[Tuple[str, int], ...] = ()
    # Where every returned value is a tuple display of one length (`return buf, n`): each
    # display's positions, so that `buf, n = f()` at a caller binds each name to its own
    # position rather than to what all positions share (`returns` joins them).  () else.
    return_items: Tuple[Tuple[Term, ...], ...] = ()
    # The parameters whose default reads an attribute of a module-level name (`kind=Kind.NORMAL`),
    # each with that read's term (`_default_terms`): a call that omits one passes that value, so
    # the resolver may join it with what the other calls pass (`_Resolver._param`).
    default_terms: Tuple[Tuple[str, Term], ...] = ()
    # How a call can bind to the function, where Python decides it from the `def` alone:
    # (parameters that take a positional argument, 1 with `*args` else 0, 1 with `**kwargs`
    # else 0).  A call passing more positional arguments, or a keyword it does not name,
    # raises `TypeError` before the body runs (`project._binding`).  () where a decorator
    # may stand another signature in its place (`_SIGNATURE_KEEPING` lists those that do not).
    arity: Tuple[int, ...] = ()


@dataclass(frozen=True, **_SLOTTED)
class CallSite:
    callee: str
    bound: bool  # `x.callee(...)` rather than `callee(...)`
    line: int
    args: Tuple[Term, ...]
    keywords: Tuple[Tuple[str, Term], ...]
    starred: bool  # `*args` / `**kwargs`: positions unknown
    # `self.callee(...)` in a method of this class (not a classmethod): the call reaches the
    # class's own `callee` (or a subclass's), not a method of that name of an unrelated class.
    # `cls(...)` in a classmethod of this class (callee `cls`, not bound): a construction of
    # the class or of a subclass.
    self_owner: Optional[str] = None
    # `x.callee(...)` where `x` is the calling method's own instance or reached through its
    # attributes (`self.m(...)`, `self.sched.m(...)`): `x` is passed as the method's first
    # parameter, not as a class whose method then takes an instance as an argument
    # (`Cls.m(obj, t)`), so the call's positional arguments start at the second parameter
    # (`project._binding`).  A class object kept in an attribute and called that way
    # (`self.cls.m(obj, t)`) is taken not to happen.  Stored as `bound` 2 in the JSON form.
    instance: bool = False
    # `x.callee(...)` where `x` is no part of the method's own instance and its term may name
    # the project classes it is an instance of (`Runner(dev)`, a parameter annotated `Runner`,
    # a join of those; `_INSTANCE_TAGS`): Python looks `callee` up on `type(x)`, so the call
    # reaches that class's `callee` (or a subclass's), not a method of that name of an
    # unrelated class (`project._Resolver._receives`).  None where the term says nothing.
    receiver: Optional[Term] = None


@dataclass(frozen=True, **_SLOTTED)
class DeviceContext:
    """Model construction under an accelerator default device."""

    line: int
    how: str
    constructs: Tuple[str, ...]  # names called inside (classes or factory functions)
    # The class of the method the block is in, and the methods of its own object the block
    # calls (`self.init_model(...)`, with the line): they run under the default device too.
    owner: Optional[str] = None
    methods: Tuple[Tuple[str, int], ...] = ()


@dataclass(frozen=True, **_SLOTTED)
class ModuleMove:
    """`obj.cuda()` / `obj.to("cuda")`: an object moved to an accelerator named in the call
    itself; where `obj` is a project `nn.Module`, its buffers and parameters move with it.  Also
    `obj.cpu()` / `obj.to("cpu")` / `obj.to(torch.float16)` (`device` the CPU place or `OTHER`):
    no move to the accelerator, but the project moves `obj` itself (`_other_move`)."""

    line: int
    how: str  # the call, as shown in evidence
    receiver: Term  # what is moved
    # `obj.to(device)` / `obj.to(x.device)`: the place the call names, read by the resolver
    # (`_Resolver._accelerator_place`: the accelerator where a factory's `device=` of it would
    # be, for a parameter some call passes); None when the call itself names an accelerator;
    # `CPU_PLACE` or `OTHER` for `_other_move`'s.
    device: Optional[Term] = None


@dataclass(frozen=True, **_SLOTTED)
class ObjectStore:
    """`obj.attr = value` in a function body, `obj` other than the method's own instance and
    an instance of a class its term may name: a constructor call (`State()`), a class held by
    an attribute and called (`self.state_class()`), an annotated instance.  The field `attr`
    of those classes holds `value` too (`project._Resolver` joins it in, naming this line)."""

    line: int
    receiver: Term
    attr: str
    value: Term
    shown: str  # `obj.attr`, as evidence shows it


# The receiver terms an `ObjectStore` is kept for: those that may name a class (the resolver
# reads which, `project._instance_classes`); any other store says nothing about a class.
_INSTANCE_TAGS = frozenset({"call", "ret", "inst", "built"})
# An object store's receiver may also be a field of a project class (`acc = self.accelerator;
# acc.dp_size = n`): the classes it is declared as (`project._Resolver._declared_instances`).
_STORE_RECEIVER_TAGS = _INSTANCE_TAGS | {"field"}


@dataclass(frozen=True, **_SLOTTED)
class FileSummary:
    path: str
    classes: Tuple[ClassSummary, ...] = ()
    functions: Tuple[FunctionSummary, ...] = ()
    calls: Tuple[CallSite, ...] = ()
    contexts: Tuple[DeviceContext, ...] = ()
    # The file imports vLLM (or vLLM-Omni): its classes with the vLLM model constructor are
    # what vLLM's model loader builds under its device context (`project._vllm_models`).
    vllm: bool = False
    moves: Tuple[ModuleMove, ...] = ()
    # Module-level names bound only to Python numbers, or to a list/tuple ("list") or a dict
    # ("dict") display of them that nothing in the file mutates, or only to a string naming the
    # CPU ("cpu") or an accelerator ("accel"): (name, line, shape).  `from m import NAME`
    # elsewhere reads them (`Resolved.constant`).
    constants: Tuple[Tuple[str, int, str], ...] = ()
    stores: Tuple[ObjectStore, ...] = ()
    # Module-level names a function of the file binds (declared `global`) or stores items
    # into (`_CACHE[key] = buf`, the name not bound in the function): (name, term), the term
    # joining the module-level bindings, those bindings and a container (`list` term) of the
    # stored items.  A function's `("global", name)` term reads it (`_Resolver.eval`): an
    # accessor `return _CACHE[key]` returns what the file stores there.
    module_values: Tuple[Tuple[str, Term], ...] = ()
    # Names of functions the file may hand on rather than call: a name or `module.name` that is
    # an argument, an assigned or returned value, or an element of a display there
    # (`loss_func = rnnt.tdt_loss_gpu`, `Thread(target=work)`), neither bound in its scope nor a
    # builtin.  A function so referenced is called where the project cannot see (through the
    # name it was handed to), so `project.uncalled_functions` does not count it uncalled.
    references: Tuple[str, ...] = ()
    # What the module re-exports for `Resolved.constant`: (bound name, module as written with
    # its leading dots, name) for a star import (`("*", ".common", "*")`) anywhere and for a
    # package `__init__.py`'s `from m import name` bound by nothing else; where the file has a
    # star import, `(name, "", "")` for each module-level name it binds otherwise (that
    # binding, not the star's, may be the one a reader gets).
    reexports: Tuple[Tuple[str, str, str], ...] = ()

    def to_json(self) -> Dict[str, Any]:
        return {
            **({"reexports": [list(r) for r in self.reexports]} if self.reexports else {}),
            **({"globals": [[n, t] for n, t in self.module_values]} if self.module_values else {}),
            **({"refs": list(self.references)} if self.references else {}),
            **({"stores": [[o.line, o.receiver, o.attr, o.value, o.shown] for o in self.stores]}
               if self.stores else {}),
            **({"vllm": True} if self.vllm else {}),
            **({"constants": [list(c) for c in self.constants]} if self.constants else {}),
            **({"moves": [[m.line, m.how, m.receiver] + ([m.device] if m.device is not None else [])
                          for m in self.moves]} if self.moves else {}),
            "classes": [[c.name, c.line, list(c.bases), [[a, t] for a, t in c.fields], list(c.constructs),
                         list(c.positional)]
                        for c in self.classes],
            "functions": [[f.name, f.owner, f.line, list(f.params), list(f.annotations), f.bound,
                           list(f.returns), f.return_annotation, list(f.int_params), list(f.seq_params),
                           list(f.defaults), list(f.int_defaults), list(f.arity)]
                          + ([[list(c) for c in f.called], [list(c) for c in f.self_called]]
                             if f.called or f.self_called or f.return_items or f.default_terms else [])
                          + ([[list(r) for r in f.return_items]] if f.return_items or f.default_terms else [])
                          + ([[[name, term] for name, term in f.default_terms]] if f.default_terms else [])
                          for f in self.functions],
            "calls": [[c.callee, 2 if c.instance else c.bound, c.line, list(c.args), [[k, t] for k, t in c.keywords],
                       c.starred]
                      + ([c.self_owner] if c.self_owner is not None or c.receiver is not None else [])
                      + ([c.receiver] if c.receiver is not None else [])
                      for c in self.calls],
            "contexts": [[d.line, d.how, list(d.constructs)]
                         + ([d.owner, [list(m) for m in d.methods]] if d.methods else [])
                         for d in self.contexts],
        }


def from_json(path: str, data: Dict[str, Any], memo: Optional[Dict[Any, Any]] = None) -> FileSummary:
    """The inverse of `FileSummary.to_json` (JSON lists become tuples again).

    Equal terms, names and line numbers become one object (`_Shared`), across every file
    loaded with the same `memo`: the project's summaries are all alive at once while they
    are resolved (on vLLM the resolving process's peak: its summaries 123 -> 77 MB), and most
    of their terms, names and lines repeat (`("unk",)`, `("scalar",)`, a parameter `self`).
    Equal values of the same types, so the summaries compare, resolve and pickle to the same
    values as before."""
    c = _Shared({} if memo is None else memo)
    return FileSummary(
        path,
        tuple(ClassSummary(c(n), c(ln), c.seq(b), tuple(c((a, t)) for a, t in fs), c.seq(cs),
                           c.seq(rest[0]) if rest else ())
              for n, ln, b, fs, cs, *rest in data.get("classes", ())),
        tuple(_function_from_json(c, row) for row in data.get("functions", ())),
        _calls(c, data.get("calls", ()), None),
        tuple(DeviceContext(ln, how, c.seq(cs), *(rest[:1]), *(tuple((m, ml) for m, ml in ms) for ms in rest[1:2]))
              for ln, how, cs, *rest in data.get("contexts", ())),
        bool(data.get("vllm", False)),
        tuple(ModuleMove(m[0], m[1], c(m[2]), c(m[3]) if len(m) > 3 else None)
              for m in data.get("moves", ())),
        tuple((n, ln, shape) for n, ln, shape in data.get("constants", ())),
        tuple(ObjectStore(c(ln), c(r), c(a), c(v), shown) for ln, r, a, v, shown in data.get("stores", ())),
        tuple((c(n), c(t)) for n, t in data.get("globals", ())),
        tuple(c(n) for n in data.get("refs", ())),
        tuple((c(b), m, n) for b, m, n in data.get("reexports", ())),
    )


def without_calls(data: Dict[str, Any], kept: AbstractSet[str]) -> Dict[str, Any]:
    """The JSON form of a summary (`FileSummary.to_json`) without the call sites of names not
    in `kept`, and without those names in what each function calls (`called`, `self_called`),
    as if the file made no such calls.

    Why: `kept` is `project.read_callees` (`Resolved.read_callees`), every name the resolve
    looks call sites up under (the project's index keeps no other site: `ProjectIndex.facts`)
    or reads a called name against (a project function, method or class).  A call of any
    other name is read by nothing, so two summaries equal without such calls resolve to the
    same facts: an edit that adds `probe(x)` of a function the project does not define keeps
    the stored facts (`ProjectIndex._moved_lines`).  The rest of the form is left as it is:
    anything else the edit changed (a move `x.cuda()` in the arguments, a device context's
    constructions, a return that reads the call) still differs."""
    out = dict(data)
    if "calls" in out:
        out["calls"] = [row for row in out["calls"] if row[0] in kept]
    if "refs" in out:
        refs = [name for name in out["refs"] if name in kept]
        if refs:
            out["refs"] = refs
        else:
            del out["refs"]
    if "functions" in out:
        out["functions"] = [_without_called(row, kept) for row in out["functions"]]
    return out


def _without_called(row: List[Any], kept: AbstractSet[str]) -> List[Any]:
    """A function row of `to_json` without the called names not in `kept`, in the form
    `to_json` gives a function that calls none of them (the two lists left out when both end
    up empty and no return positions follow)."""
    if len(row) <= _CALLED_AT:
        return row
    called, self_called = ([entry for entry in row[i] if entry[0] in kept] for i in (_CALLED_AT, _CALLED_AT + 1))
    rest = row[_CALLED_AT + 2:]
    return row[:_CALLED_AT] + ([called, self_called] if called or self_called or rest else []) + rest


# Where a function row of `FileSummary.to_json` holds `called` (then `self_called`, then
# `return_items`, then `default_terms`), when it holds them.
_CALLED_AT = 13


def _function_from_json(c: "_Shared", row: Sequence[Any]) -> FunctionSummary:
    """One function row of `FileSummary.to_json`: its fixed parts, then `called`,
    `self_called`, `return_items` and `default_terms` where the row holds them (() where it
    leaves them out)."""
    n, o, ln, p, an, bd, rs, ra, ip, sp, df, idf, ar, *rest = row
    called, self_called = (tuple(c((name, line)) for name, line in calls) for calls in (rest[:2] or [(), ()]))
    items = tuple(c.seq(r) for r in rest[2]) if len(rest) > 2 else ()
    default_terms = tuple(c((name, term)) for name, term in rest[3]) if len(rest) > 3 else ()
    return FunctionSummary(c(n), c(o), c(ln), c.seq(p), c.seq(an), bd, c.seq(rs), c(ra), c.seq(ip), c.seq(sp),
                           c.seq(df), c.seq(idf), called, self_called, items, default_terms, c.seq(ar))


def calls_from_json(data: Sequence[Any], memo: Dict[Any, Any],
                    callees: Optional[AbstractSet[str]] = None) -> Tuple[CallSite, ...]:
    """The call sites of a summary's JSON form (`FileSummary.to_json()["calls"]`), read back
    as `from_json` reads them (sharing through `memo`); with `callees`, only the sites of those
    names, in their order: the others are never built (`project.read_callees`: the names the
    resolver may look up; on vLLM 96,000 of 166,000 sites)."""
    return _calls(_Shared(memo), data, callees)


def _calls(c: "_Shared", data: Sequence[Any], callees: Optional[AbstractSet[str]]) -> Tuple[CallSite, ...]:
    return tuple(CallSite(c(callee), bool(bd), c(ln), c.seq(args), tuple(c((k, t)) for k, t in kws), st,
                          rest[0] if rest else None, bd == 2, c(rest[1]) if len(rest) > 1 else None)
                 for callee, bd, ln, args, kws, st, *rest in data if callees is None or callee in callees)


class _Shared:
    """One object for each value equal to one seen before (`from_json`), lists as tuples.

    Only strings, ints, None and tuples of those are shared: `1 == True == 1.0` (with equal
    hashes), so a tuple holding a bool or a float (or anything else, at any depth) is built
    as it is but never looked up nor remembered, and the values read back keep their exact
    types."""

    def __init__(self, memo: Dict[Any, Any]) -> None:
        self.memo = memo

    def __call__(self, value: Any) -> Any:
        kind = value.__class__
        if kind is str or kind is int:
            return self.memo.setdefault(value, value)
        return self._shared(value)[0] if kind is list or kind is tuple else value

    def seq(self, value: Any) -> Tuple[Any, ...]:
        """`tuple(value)`, shared (and raising on what is no sequence, as `tuple` does)."""
        kind = value.__class__
        return self._shared(value if kind is list or kind is tuple else tuple(value))[0]

    def _shared(self, value: Sequence[Any]) -> Tuple[Tuple[Any, ...], bool]:
        """The sequence as a shared tuple, and whether it may be shared (nothing but strings,
        ints, None and such tuples inside); one loop per level, the leaves inline (the
        summaries of a project hold millions)."""
        memo = self.memo
        items = []
        shareable = True
        for item in value:
            kind = item.__class__
            if kind is str or kind is int:
                item = memo.setdefault(item, item)
            elif kind is tuple or kind is list:
                item, ok = self._shared(item)
                shareable = shareable and ok
            elif item is not None:
                shareable = False
            items.append(item)
        made = tuple(items)
        return (memo.setdefault(made, made) if shareable else made), shareable


# -- building ----------------------------------------------------------------------------------


# `torch.distributed`'s functions that return a Python int.
DISTRIBUTED_INTS = frozenset({"get_rank", "get_world_size", "get_local_rank", "get_node_local_rank"})


def distributed_aliases(tree: ast.Module) -> FrozenSet[str]:
    """The names the module's imports bind to `torch.distributed` (`import torch.distributed as
    dist`, `from torch import distributed as dist`), at any depth of its statements (a `try:`
    around the import is common): `dist.get_rank()` is a Python int (`DISTRIBUTED_INTS`)."""
    found: Set[str] = set()
    for node in every_statement(tree):  # imports are statements: no expression need be walked
        if isinstance(node, ast.Import):
            found.update(a.asname for a in node.names if a.name == "torch.distributed" and a.asname)
        elif isinstance(node, ast.ImportFrom) and node.module == "torch" and node.level == 0:
            found.update(a.asname or a.name for a in node.names if a.name == "distributed")
    return frozenset(found)


def summarize(path: str, text: str) -> FileSummary:
    """The summary of one file ({} of everything when it does not parse)."""
    from lint_h2d.parse_chunks import parse_python  # in chunks: a fraction of the peak

    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return FileSummary(path)
    return summarize_tree(path, tree)


def summarize_tree(path: str, tree: ast.Module) -> FileSummary:
    builder = _Builder()
    try:
        builder.module(tree)
    except RecursionError:
        return FileSummary(path)
    reexports = _reexports(tree, builder.imported, builder.module_env,
                           path.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py")
    return FileSummary(path, tuple(builder.classes), tuple(builder.functions),
                       tuple(builder.calls), tuple(builder.contexts), builder.vllm, tuple(builder.moves),
                       tuple(builder.constants), tuple(builder.stores), tuple(builder.module_values),
                       tuple(sorted(builder.references)), reexports)


def _reexports(tree: ast.Module, imported: AbstractSet[str], env: Mapping[str, Sequence[ast.expr]],
               package: bool) -> Tuple[Tuple[str, str, str], ...]:
    """`FileSummary.reexports`: the module-level star imports, a package's `from m import
    name` bound by nothing else (`imported`), and, beside a star import, every other name the
    module binds (`env`: an assignment, a `def`, another import), which hides the star's."""
    found: List[Tuple[str, str, str]] = []
    star = False
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                star = True
                found.append(("*", module, "*"))
            elif package and (alias.asname or alias.name) in imported:
                found.append((alias.asname or alias.name, module, alias.name))
    if star:
        named = {bound for bound, _, _ in found}
        found.extend((name, "", "") for name in sorted(env) if not name.startswith("_") and name not in named)
    return tuple(found)


@dataclass
class _Scope:
    """What a function body binds, flow-insensitively (every assignment of a name joined)."""

    function: Optional[str]
    owner: Optional[str]  # class name when a method
    self_name: Optional[str]
    params: Dict[str, Term] = field(default_factory=dict)
    env: Dict[str, List[ast.expr]] = field(default_factory=dict)
    # Each name's term, computed once (a long function's names are looked up many times).
    terms: Dict[str, Term] = field(default_factory=dict)
    in_init: bool = False
    # `self_name` names an instance of `owner` (a method, not a classmethod): a call that
    # passes it (`Helper(self)`) passes an `owner` (`_Builder._argument`).
    instance: bool = False
    torch: FrozenSet[str] = frozenset({"torch"})
    # Names a module-level `from torch import device` binds once (`_Builder.torch_functions`):
    # `device("cuda")` is `torch.device("cuda")`, as a context too (`_is_torch_device`).
    devices: FrozenSet[str] = frozenset()
    # Parameters the body passes to `range()` (an int, or it raises): evidence for an index.
    ints: Set[str] = field(default_factory=set)
    # Parameters whose default is `None` or `"cpu"`: a `device=` of theirs may be the CPU.
    cpu_defaults: FrozenSet[str] = frozenset()
    # Of those, the ones a test of the body reads (`if device is None:`, `assert device`,
    # `device or "cuda"`): past the test the default may be ruled out (`_tested_names`).
    tested: FrozenSet[str] = frozenset()
    # The statements of the function's own body (by id), not nested in an `if`, a loop, a
    # `with` or a `try`: they run whenever the function does, before any later one.
    top_level: FrozenSet[int] = frozenset()
    # Calls lexically inside `with torch.device(<accelerator>):` (by id), with what names the
    # context: a factory there without `device=` allocates on that device.
    device_calls: Dict[int, str] = field(default_factory=dict)
    # The names whose values are being evaluated, outermost first (`_Builder._name`): a read of
    # one of them inside its own values is a cycle (`n += k`), not an unknown.
    active: List[str] = field(default_factory=list)
    # Terms that read an active name other than their own (`d = min(d, n - k)` while `n` is
    # evaluated): valid only until that name is settled, so kept apart from `terms`.
    pending: Dict[str, Tuple[Term, FrozenSet[str]]] = field(default_factory=dict)
    # Where each statement of a function body sits (`reaching.statement_sites`), by id, and
    # the statement each value in `env` was bound by (value id -> statement): a name read at
    # `here` (the statement whose terms are being built) is what reaches it there, not the
    # join of every binding (`_Builder._reaching`).  Empty outside function bodies.
    sites: Dict[int, Site] = field(default_factory=dict)
    statements: Dict[int, ast.stmt] = field(default_factory=dict)
    bound_at: Dict[int, int] = field(default_factory=dict)
    here: Optional[Site] = None
    # The body's compound statements by their site's chain (`reaching.branch_rebindings`),
    # made on first need.
    parents: Dict[Tuple[Tuple[int, int], ...], ast.stmt] = field(default_factory=dict)
    # `_Builder._reaching`'s answers, by (name, order of the reading statement).
    reached: Dict[Tuple[str, int], Optional[Tuple[int, ...]]] = field(default_factory=dict)
    # Names the body declares `global` / `nonlocal`: another scope may rebind them between
    # two statements, so every binding is kept.
    shared: FrozenSet[str] = frozenset()
    # Of those, the names declared `global` (the module's own).
    declared_global: FrozenSet[str] = frozenset()
    # Names the enclosing functions bind (their parameters and locals): a nested `def`'s read
    # or item store of one is the closure's, not the module-level name's.
    enclosing: FrozenSet[str] = frozenset()
    # Parameters annotated as a class (`metric_class: Type[Metrics]`): calling one builds an
    # instance of that class or of a subclass (`class_annotation`).
    class_params: Dict[str, str] = field(default_factory=dict)
    # Buffers a method registers under a local name (`self.register_buffer(name, t)`, `name`
    # bound once in the body and registered once): `getattr(self, name)` is `t`
    # (`_named_buffers`).
    named_buffers: Dict[str, ast.expr] = field(default_factory=dict)
    # Parameters whose sizes a statement of the body's own top level unpacks (`B, T, N =
    # x.size()`), with the rank that proves and that statement's line: a read on a later line
    # is of a tensor of that rank (`shape_unpacking`; the walk reads the same).
    ranked: Dict[str, Tuple[int, int]] = field(default_factory=dict)
    # The line of the statement (or bound value) whose terms are being built (`_placed_at`).
    line: int = 0


class _Builder:
    def __init__(self) -> None:
        self.classes: List[ClassSummary] = []
        self.functions: List[FunctionSummary] = []
        self.calls: List[CallSite] = []
        self.contexts: List[DeviceContext] = []
        self.moves: List[ModuleMove] = []
        self.stores: List[ObjectStore] = []
        self.torch: Set[str] = {"torch"}
        # Names bound to `torch.nn` (mirrors `scope.nn_aliases`: only names ending in `nn`).
        self.nn: Set[str] = set()
        # Names bound to `torch.nn.functional` (`import torch.nn.functional as F`): `F.gelu(x)` is a
        # `keep` term of `x` (`torch_api.FUNCTIONAL_RANK_KEEPING`, as the walk's `_functional`).
        self.functional: Set[str] = set()
        # The file imports vLLM (its sampling hooks' convention applies: `sampling_hook`).
        self.vllm = False
        # The file's transformers logits processors (`processor_classes`).
        self.processors: FrozenSet[str] = frozenset()
        self.distributed: FrozenSet[str] = frozenset()  # `distributed_aliases`
        # `from m import f as g` at module level: a call `g(...)` is a call of `f` (its call
        # sites tell `f`'s parameters, and `f` is no function nothing calls).
        self.aliases: Dict[str, str] = {}
        self.depth = 0
        # `for NAME in ITER:` loops the statement being read is inside: NAME -> ITER (what a
        # `NAME.to(device)` moves: an element of ITER, `_device_move`).
        self.loops: Dict[str, ast.expr] = {}
        # Module-level names bound to numbers or displays of them (`FileSummary.constants`).
        self.constants: List[Tuple[str, int, str]] = []
        # The module's own names, and what functions bind to them or store into them
        # (`FileSummary.module_values`, `_module_stores`).
        self.module_env: Dict[str, List[ast.expr]] = {}
        self.module_stores: Dict[str, List[Term]] = {}
        self.module_values: List[Tuple[str, Term]] = []
        self.references: Set[str] = set()  # `FileSummary.references`
        # Module-level names bound by an import and nothing else (`_unbound_here`).
        self.imported: FrozenSet[str] = frozenset()
        # The names the module binds to the standard `math` module, once (`import math`): every
        # function of it returns a Python number (`math.ceil(n / b)`), as the walk reads it.
        self.math: FrozenSet[str] = frozenset()
        # The names `from torch import zeros` (or `... as z`) binds at module level, once, to the
        # function of `torch` they name: `zeros(n)` is read as `torch.zeros(n)` (`_torch_function`).
        self.torch_functions: Dict[str, str] = {}
        self.devices: FrozenSet[str] = frozenset()  # those naming `torch.device` (`_Scope.devices`)
        # A statement's own calls (`_calls_in_statement`), by the statement's id: its call sites
        # and what the function calls (`_invoked`) both read them (the tree outlives the build).
        self._calls: Dict[int, List[ast.Call]] = {}
        # How many reads of a name inside its own values (`("cycle", name)`, or a term still
        # holding one) `_name` has answered: where none was answered while a name's values were
        # built, no term of them holds a cycle, and `_name` does not search them for one.
        self.cycle_reads = 0

    # -- structure ---------------------------------------------------------------------
    def module(self, tree: ast.Module) -> None:
        imports: Set[str] = set()  # the names the module's imports bind (`self.imported`)
        math_names: Set[str] = set()  # `import math` (`self.math`)
        torch_functions: Dict[str, str] = {}  # `from torch import zeros` (`self.torch_functions`)
        self.distributed = distributed_aliases(tree)
        transformers = _transformers_names(tree)
        if transformers:  # (the classes are read only where the module imports transformers)
            self.processors = processor_classes(transformers, _nested_class_bases(tree))
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "math":
                        math_names.add(alias.asname or "math")
                    if alias.name == "torch" and alias.asname:
                        self.torch.add(alias.asname)
                    if alias.name == "torch.nn" and alias.asname and alias.asname.endswith("nn"):
                        self.nn.add(alias.asname)
                    if alias.name == "torch.nn.functional" and alias.asname:
                        self.functional.add(alias.asname)
            if isinstance(node, ast.ImportFrom) and node.module == "torch.nn" and node.level == 0:
                self.functional.update(alias.asname or alias.name for alias in node.names if alias.name == "functional")
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] \
                    in ("vllm", "vllm_omni"):
                self.vllm = True
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.asname and alias.asname != alias.name and alias.name != "*":
                        self.aliases[alias.asname] = alias.name
            if isinstance(node, ast.ImportFrom) and node.module == "torch" and node.level == 0:
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if alias.name == "nn" and bound.endswith("nn"):
                        self.nn.add(bound)
                    if alias.name != "*":
                        torch_functions[bound] = alias.name
        scope = _Scope(None, None, None, torch=frozenset(self.torch))
        own = _own_statements(tree.body)
        _collect_env(tree.body, scope.env, own)
        # An alias the module binds again (`g = other`) is not the import's.
        self.aliases = {a: n for a, n in self.aliases.items() if len(scope.env.get(a, ())) == 1}
        self.imported = frozenset(n for n in imports if len(scope.env.get(n, ())) == 1)
        self.math = frozenset(n for n in math_names if n in self.imported)
        # As the walk reads them (`scope.torch_function_aliases`): bound once, by the import.
        self.torch_functions = {a: n for a, n in torch_functions.items() if a in self.imported}
        self.devices = frozenset(a for a, n in self.torch_functions.items() if n == "device")
        scope.devices = self.devices
        self.constants = _module_constants(tree, own, scope.env, lambda node: self.term(node, scope))
        self.module_env = scope.env
        self.body(tree.body, scope)
        self.module_values = self._module_values(scope)

    def _functional(self, receiver: ast.expr, scope: _Scope) -> bool:
        """`receiver` is `torch.nn.functional`: a name the module's imports bind to it (`F`), or
        `torch.nn.functional` / `nn.functional` spelled out; none a local or parameter hides."""
        def module_name(name: str, names: Set[str]) -> bool:
            return name in names and name not in scope.params and (scope.function is None or not scope.env.get(name))

        if isinstance(receiver, ast.Name):
            return module_name(receiver.id, self.functional)
        if not (isinstance(receiver, ast.Attribute) and receiver.attr == "functional"):
            return False
        holder = receiver.value
        if isinstance(holder, ast.Name):
            return module_name(holder.id, self.nn)
        return isinstance(holder, ast.Attribute) and holder.attr == "nn" and isinstance(holder.value, ast.Name) \
            and module_name(holder.value.id, set(scope.torch))

    def _module_values(self, scope: _Scope) -> List[Tuple[str, Term]]:
        """`FileSummary.module_values`: each name a function binds or stores into, its
        module-level bindings joined in (read at the module's end: a function runs after the
        module body has bound them)."""
        out: List[Tuple[str, Term]] = []
        for name in sorted(self.module_stores):
            terms = list(self.module_stores[name])
            if scope.env.get(name):
                terms.insert(0, self.term(ast.Name(name, ast.Load()), scope))
            out.append((name, _small(_join(terms))))
        return out

    def body(self, statements: Sequence[ast.stmt], scope: _Scope) -> None:
        for i, stmt in enumerate(statements):
            self.statement(stmt, scope)
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                how = self._set_default_device(stmt.value, scope)
                if how is not None:
                    # What the rest of this body constructs lands on that device.
                    self.contexts.append(_context(stmt.lineno, how, statements[i + 1:], scope))

    def statement(self, stmt: ast.stmt, scope: _Scope) -> None:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return)) and stmt.value is not None:
            self._reference(stmt.value, scope)
        if type(stmt) in _SIMPLE_STATEMENTS:  # most statements: only their calls to read
            calls = self.calls_of(stmt)
            if calls:  # (about half of them call nothing: no place to set)
                with _at(scope, stmt):
                    self.calls_in(calls, scope)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(stmt, None, scope)
            return
        if isinstance(stmt, ast.ClassDef):
            self.klass(stmt)
            return
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                how = self._device_context(item.context_expr, scope)
                if how is not None:
                    self.contexts.append(_context(stmt.lineno, how, stmt.body, scope))
        calls = self.calls_of(stmt)
        if calls:
            with _at(scope, stmt):
                self.calls_in(calls, scope)
        if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
            saved = dict(self.loops)
            self.loops[stmt.target.id] = stmt.iter
            try:
                self.body(stmt.body, scope)
            finally:
                self.loops = saved
            self.body(stmt.orelse, scope)
            return
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                self.body(inner, scope)
        for handler in getattr(stmt, "handlers", ()) or ():
            self.body(handler.body, scope)
        for case in getattr(stmt, "cases", ()) or ():
            self.body(case.body, scope)

    def klass(self, node: ast.ClassDef) -> None:
        fields: List[Tuple[str, Term]] = []
        constructs: List[str] = []
        scope = _Scope(None, node.name, None, torch=frozenset(self.torch), devices=self.devices)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                fields.append((stmt.target.id, ("ann", annotation_term(stmt.annotation))))
                if stmt.value is not None:
                    # `x: Optional[T] = None` is a default (kept apart: it is no value to join).
                    fields.append((stmt.target.id, ("none",) if _is_none(stmt.value) else self.term(stmt.value, scope)))
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and not _is_none(stmt.value):
                        fields.append((target.id, self.term(stmt.value, scope)))
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(stmt, node, scope, fields, constructs)
                if _PROPERTIES & {_last_name(d) for d in stmt.decorator_list}:
                    # `obj.name` of a `@property` is what the method returns.
                    fields.append((stmt.name, ("ret", node.name, stmt.name)))
        empty = {a for a, t in fields if t[0] == EMPTY_LIST}
        if empty:
            grown = _grown_fields(node, empty)
            fields = [(a, EMPTY_DISPLAY if t[0] == EMPTY_LIST and a in grown else t) for a, t in fields]
        bases = tuple(_base_name(b) for b in node.bases if _last_name(b))
        self.classes.append(ClassSummary(node.name, node.lineno, bases, tuple(fields), tuple(constructs),
                                         _positional_fields(node)))

    def function(self, node: Any, cls: Optional[ast.ClassDef], outer: _Scope,
                 fields: Optional[List[Tuple[str, Term]]] = None,
                 constructs: Optional[List[str]] = None) -> None:
        decorators = {_last_name(d) for d in node.decorator_list}
        args = node.args
        positional = list(args.posonlyargs) + list(args.args)
        everything = positional + ([args.vararg] if args.vararg else []) + list(args.kwonlyargs) \
            + ([args.kwarg] if args.kwarg else [])
        bound = cls is not None and "staticmethod" not in decorators and bool(positional)
        self_name = positional[0].arg if bound else None
        owner = cls.name if cls is not None else None
        scope = _Scope(node.name, owner, self_name, in_init=node.name == "__init__",
                       instance=bound and "classmethod" not in decorators, torch=frozenset(self.torch),
                       devices=self.devices)
        annotations: List[Term] = []
        for arg in positional + list(args.kwonlyargs):
            term = annotation_term(arg.annotation) if arg.annotation is not None else UNK
            annotations.append(term)
            if arg.arg != self_name:
                # `x: torch.Tensor` names no place: the call sites may (the resolver falls
                # back to the annotation), as for an un-annotated parameter.
                # So does `device: str` (or `torch.device`): its call sites may name the CPU.
                open_term = term in (UNK, _TENSOR) or term == OTHER and _names_device(arg.arg)
                scope.params[arg.arg] = ("param", node.name, arg.arg, owner) if open_term else term
                declared_class = class_annotation(arg.annotation)
                if declared_class is not None:
                    scope.class_params[arg.arg] = declared_class
        for arg in everything:
            if arg.arg not in scope.params and arg.arg != self_name:
                scope.params[arg.arg] = OTHER  # *args / **kwargs: a tuple / a dict
        if self.vllm and sampling_hook(
                [(a.arg, _last_name(a.annotation) if a.annotation is not None else None)
                 for a in positional + list(args.kwonlyargs)]):
            scope.params["logits"] = ("hook", node.name, node.lineno)
        scores = processor_scores(node.name, owner, self_name, positional, len(args.defaults), self.processors)
        if scores is not None:
            # transformers' `generate()` calls a logits processor with its device scores (a
            # convention, as the walk reads `__call__`): its calls pass them on as such.
            scope.params[scores.arg] = ("proc", owner, scores.lineno)
        scope.cpu_defaults = _cpu_defaults(args)
        scope.top_level = frozenset(id(stmt) for stmt in node.body)
        own = _own_statements(node.body)
        scope.ranked = shape_unpacking(node.body, scope.params)
        if scope.cpu_defaults:
            scope.tested = _tested_names(node.body, scope.cpu_defaults)
        _collect_env(node.body, scope.env, own, scope.bound_at)
        if self_name is not None:
            scope.named_buffers = _named_buffers(own, self_name, scope.env)
        if any(len(values) > 1 for values in scope.env.values()):
            # Only a name bound more than once has a binding another may hide (`_name` asks
            # which reach a read only then): without one, no read needs to know where it is.
            scope.sites = statement_sites(node.body)
            scope.statements = {id(stmt): stmt for stmt in own}
        scope.shared = frozenset(n for stmt in own if isinstance(stmt, (ast.Global, ast.Nonlocal)) for n in stmt.names)
        scope.declared_global = frozenset(n for stmt in own if isinstance(stmt, ast.Global) for n in stmt.names)
        if outer.function is not None:
            scope.enclosing = outer.enclosing | frozenset(outer.params) | frozenset(outer.env)
        self._device_calls(own, scope)
        returns: List[Term] = []
        displays: List[Tuple[Optional[Site], ast.Tuple]] = []
        seqs: Set[str] = set()
        # A classmethod's `cls(x=...)` may sit in any statement's header (`if cls(...).ok:`).
        headers = fields is not None and "classmethod" in decorators
        for stmt in own:
            if not headers and type(stmt) not in _FACT_STATEMENTS:
                continue  # no return, field or store here (`if`, `for`, `with`, `try`, `pass`)
            with _at(scope, stmt):
                if isinstance(stmt, ast.Return) and stmt.value is not None and not _is_none(stmt.value):
                    returns.append(self.term(stmt.value, scope))
                    if isinstance(stmt.value, ast.Tuple):
                        displays.append((scope.here, stmt.value))
                if fields is not None and self_name is not None:
                    self._self_fields(stmt, scope, self_name, "classmethod" in decorators, fields,
                                      constructs if constructs is not None else [], cls)
                self._object_stores(stmt, scope)
                self._module_stores(stmt, scope)
        self.body(node.body, scope)
        params = tuple(a.arg for a in positional + list(args.kwonlyargs))
        ret = annotation_term(node.returns) if node.returns is not None else UNK
        called, self_called = self._invoked(node.body, scope)
        self.functions.append(FunctionSummary(
            node.name, owner, node.lineno, params, tuple(annotations),
            bound and "staticmethod" not in decorators, tuple(returns), ret,
            tuple(sorted(scope.ints)), tuple(sorted(seqs)), _with_defaults(args), _with_defaults(args, ints=True),
            called, self_called, self._return_items(displays, len(returns), scope),
            _default_terms(args), _arity(args, decorators),
        ))

    def _return_items(self, displays: Sequence[Tuple[Optional[Site], ast.Tuple]], returned: int,
                      scope: _Scope) -> Tuple[Tuple[Term, ...], ...]:
        """Each tuple display's position terms (each read where its `return` is), where every
        returned value is a display of one length without `*` (`return buf, n`): a caller's
        `buf, n = f()` reads its position.  A function that also returns anything else (a
        name, a call) says nothing by position."""
        if not displays or len(displays) != returned or len({len(d.elts) for _, d in displays}) != 1 \
                or any(isinstance(e, ast.Starred) for _, d in displays for e in d.elts) or len(displays[0][1].elts) < 2:
            return ()
        out: List[Tuple[Term, ...]] = []
        for site, display in displays:
            with _placed_at(scope, site):
                out.append(tuple(self.term(e, scope) for e in display.elts))
        return tuple(out)

    def _self_fields(self, stmt: ast.stmt, scope: _Scope, self_name: str, classmethod: bool,
                     fields: List[Tuple[str, Term]], constructs: List[str],
                     cls: Optional[ast.ClassDef]) -> None:
        targets: List[ast.expr] = []
        value: Optional[ast.expr] = None
        if isinstance(stmt, ast.Assign):
            targets, value = list(stmt.targets), stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            targets, value = [stmt.target], stmt.value
            if isinstance(stmt.target, ast.Attribute) and _is_name(stmt.target.value, self_name):
                fields.append((stmt.target.attr, ("ann", annotation_term(stmt.annotation))))
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript) \
                and isinstance(stmt.targets[0].value, ast.Attribute) and _is_name(stmt.targets[0].value.value, self_name):
            # `self.table[key] = t`: the container holds such values.
            # Kept apart: `self.buf[i] = 0` into a tensor field is no container store.
            # A constant string key is kept (`self.config["window"] = n`): a store into parsed
            # JSON data changes that key only (`project._Resolver._field`).
            index = stmt.targets[0].slice
            key = index.value if isinstance(index, ast.Constant) and isinstance(index.value, str) else None
            stored = self.term(stmt.value, scope)
            fields.append((stmt.targets[0].value.attr, ("store", stored) if key is None else ("store", stored, key)))
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Attribute) \
                and _is_name(stmt.target.value, self_name):
            # `self.total += lens[i]`: what is added (a tensor added to a number makes a tensor;
            # `project._Resolver._field` reads it against the field's other values).
            fields.append((stmt.target.attr, ("aug", self.term(stmt.value, scope))))
        buffer = _registered_buffer(stmt, self_name, scope)
        if buffer is not None:
            fields.append((buffer[0], ("wrap", self.term(buffer[1], scope), stmt.lineno)))
        for target in targets:
            pairs = _pairs(target, value)
            for t, v in pairs:
                if isinstance(t, ast.Attribute) and _is_name(t.value, self_name) and v is not None \
                        and not _is_none(v):
                    term = (EMPTY_LIST, v.lineno) if isinstance(v, ast.List) and not v.elts else self.term(v, scope)
                    if isinstance(v, ast.Name) and v.id in scope.cpu_defaults and _names_device(v.id) \
                            and v.id in scope.params and not scope.env.get(v.id) and id(stmt) in scope.top_level:
                        # `self.storage_device = storage_device` of `storage_device="cpu"`, in the
                        # body itself, the parameter never rebound: the CPU unless a caller says
                        # otherwise (`_Resolver`'s `cpudefault`).  Under an `if` (`elif
                        # isinstance(device, torch.device):`) a test may have ruled the default out.
                        term = ("cpudefault", term, v.lineno)
                    fields.append((t.attr, term))
                    if scope.in_init and term[0] in ("call", "built"):
                        constructs.append(term[1])
        # `return cls(x=...)` / `cls(...)` in a classmethod: the keywords are fields.
        if classmethod and cls is not None:
            for call in self.calls_of(stmt):
                if isinstance(call.func, ast.Name) and call.func.id in (self_name, cls.name):
                    for kw in call.keywords:
                        if kw.arg is not None:
                            fields.append((kw.arg, self.term(kw.value, scope)))

    def _module_stores(self, stmt: ast.stmt, scope: _Scope) -> None:
        """What a function puts in a module-level name (`FileSummary.module_values`): a binding
        of a name it declares `global` (`None` adds nothing: a write into it raises), or an item
        store `NAME[k] = v` into a module-level name the function does not bind (the container
        then holds `v`)."""
        assigned = _assignment(stmt)
        if assigned is None:
            return
        targets, value = assigned
        for target in targets:
            if isinstance(target, ast.Name) and target.id in scope.declared_global and not _is_none(value):
                self.module_stores.setdefault(target.id, []).append(self.term(value, scope))
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                name = target.value.id
                if name in self.module_env and (name in scope.declared_global or (
                        name not in scope.params and not scope.env.get(name) and name not in scope.enclosing
                        and name not in scope.shared)):
                    self.module_stores.setdefault(name, []).append(("list", self.term(value, scope)))

    def _object_stores(self, stmt: ast.stmt, scope: _Scope) -> None:
        """`obj.attr = v` with `obj` not the method's own instance (`ObjectStore`), where
        `obj`'s term may name a class; a store of `None` adds nothing (a read through it raises)."""
        assigned = _assignment(stmt)
        if assigned is None:
            return
        targets, value = assigned
        for target in targets:
            for t, v in _pairs(target, value):
                if not isinstance(t, ast.Attribute) or v is None or _is_none(v) \
                        or scope.self_name is not None and _is_name(t.value, scope.self_name):
                    continue
                receiver = _small(self.term(t.value, scope))
                parts = receiver[1] if receiver[0] == "join" else (receiver,)
                if not all(p[0] in _STORE_RECEIVER_TAGS for p in parts):
                    continue
                shown = f"{ast_dotted(t.value) or '...'}.{t.attr}"
                self.stores.append(ObjectStore(stmt.lineno, receiver, t.attr, _small(self.term(v, scope), _STORE_SMALL), shown))

    # -- call sites and contexts --------------------------------------------------------
    def calls_of(self, stmt: ast.stmt) -> List[ast.Call]:
        """`_calls_in_statement(stmt)`, computed once per statement."""
        found = self._calls.get(id(stmt))
        if found is None:
            found = self._calls[id(stmt)] = _calls_in_statement(stmt)
        return found

    def calls_in(self, calls: Sequence[ast.Call], scope: _Scope) -> None:
        """The call sites, moves and `range()` parameters of a statement's calls (`calls_of`),
        read where the statement is (the caller's `_at`)."""
        for call in calls:
            func = call.func
            for a in call.args:
                self._reference(a.value if isinstance(a, ast.Starred) else a, scope)
            for k in call.keywords:
                self._reference(k.value, scope)
            if isinstance(func, ast.Attribute) and func.attr in _MOVING_METHODS:
                self._moves(call, func, scope)
            if isinstance(func, ast.Name):
                callee, bound = func.id, False
                if callee in self.aliases and (scope.function is None or (
                        callee not in scope.params and not scope.env.get(callee))):
                    callee = self.aliases[callee]  # `g(...)` of `from m import f as g`
            elif isinstance(func, ast.Attribute):
                callee, bound = func.attr, True
            else:
                continue
            if callee == "range" and not bound:
                scope.ints.update(a.id for a in call.args if isinstance(a, ast.Name) and a.id in scope.params)
                continue
            if callee in scope.torch or callee in _UNINTERESTING_CALLEES or not (call.args or call.keywords):
                continue
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                    and (func.value.id in _LIBRARY_MODULES or func.value.id in scope.torch):
                continue  # (two look-ups: the union of the sets was built for every call)
            # One loop each over the arguments and keywords, in their order (`*`/`**` mark the
            # positions unknown); `_unpacked` only where there is a `**`.
            starred = False
            terms: List[Term] = []
            for a in call.args:
                if isinstance(a, ast.Starred):
                    starred = True
                else:
                    terms.append(self._argument(a, scope))
            named: List[Tuple[str, Term]] = []
            for k in call.keywords:
                if k.arg:
                    named.append((k.arg, self._argument(k.value, scope)))
                elif k.arg is None:
                    starred = True
            args = tuple(terms)
            keywords = tuple(named) + self._unpacked(call, scope) if starred else tuple(named)
            own, instance = None, False
            if isinstance(func, ast.Attribute) and scope.instance and not scope.env.get(scope.self_name or ""):
                own = scope.owner if _is_name(func.value, scope.self_name or "") else None
                instance = _rooted_at(func.value, scope.self_name or "")
            elif isinstance(func, ast.Name) and scope.owner is not None and not scope.instance \
                    and scope.self_name == func.id and not scope.env.get(func.id):
                # `cls(...)` in a classmethod (`from_config`): a construction of the class or of
                # the subclass it is called on (`project._Resolver._find_sites` of `__init__`).
                own = scope.owner
            receiver = self._receiver(func.value, scope) if bound and not instance else None
            applied = func.value if callee in ("apply", "forward") and isinstance(func, ast.Attribute) else None
            if isinstance(applied, ast.Name) and _unbound_here(applied.id, scope, self.imported):
                # `Scale.apply(x, 2)` of a class the module defines or imports: an autograd
                # `Function` runs its `forward(ctx, x, 2)`, as `Scale.forward(ctx, x, 2)` does
                # (`_Resolver._applied_sites`).
                receiver = ("global", applied.id)
            self.calls.append(CallSite(callee, bound, call.lineno, args, keywords, starred, own, instance,
                                       receiver))

    def _reference(self, value: ast.expr, scope: _Scope) -> None:
        """Record the function `value` may hand on (`FileSummary.references`): a name not bound
        in the scope (a module-level or imported one; not a builtin), `module.name` of such a
        name, or one of those as an element of a display (`{"tdt": tdt_loss}`)."""
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            for element in value.elts:
                self._reference(element.value if isinstance(element, ast.Starred) else element, scope)
            return
        if isinstance(value, ast.Dict):
            for element in value.values:
                self._reference(element, scope)
            return
        if isinstance(value, ast.Attribute):
            name, base = value.attr, value.value
            if not isinstance(base, ast.Name) or not _unbound_here(base.id, scope, self.imported):
                return
        elif isinstance(value, ast.Name):
            name = value.id
            if not _unbound_here(name, scope, self.imported) or name in _BUILTIN_NAMES:
                return
        else:
            return
        self.references.add(name)

    def _receiver(self, value: ast.expr, scope: _Scope) -> Optional[Term]:
        """The term of `x` in a call `x.m(...)`, where it may name a class (`CallSite.receiver`):
        an instance term, or a join of nothing else; `super()` in a method of a class, a
        `super` term of that class (the call runs a method of one of its bases).  Module names
        and anything else give None."""
        if isinstance(value, ast.Call) and _is_name(value.func, "super") and scope.owner is not None \
                and scope.function is not None and not value.keywords and (
                    not value.args or _is_name(value.args[0], scope.owner)):
            return ("super", scope.owner)
        if not isinstance(value, (ast.Name, ast.Call)) or isinstance(value, ast.Name) and (
                value.id not in scope.params and not scope.env.get(value.id)):
            return None
        term = self.term(value, scope)
        parts = term[1] if term[0] == "join" else (term,)
        return _small(term) if parts and all(p[0] in _INSTANCE_TAGS for p in parts) else None

    def _moves(self, call: ast.Call, func: ast.Attribute, scope: _Scope) -> None:
        """`obj.cuda()` / `obj.to(...)`: the module move it may be (`ModuleMove`)."""
        how = _accelerator_move(call, scope)
        if how is not None:
            self.moves.append(ModuleMove(call.lineno, how, _small(self.term(func.value, scope))))
        spec = _device_move(call, scope) if how is None else None
        stay = _other_move(call, scope) if how is None and spec is None else None
        if stay is not None:
            # `.cpu()`, `.to("cpu")`, `.to(torch.float16)`: no move to the accelerator, but a move
            # of what may be a project module, which its place then rests on (the resolver reads
            # it: `_Resolver._named_by_moves`).
            self.moves.append(ModuleMove(call.lineno, stay[0], _small(self.term(func.value, scope)), stay[1]))
        if spec is not None:
            moved = func.value
            receiver = ("sub", self.term(self.loops[moved.id], scope), 0) \
                if isinstance(moved, ast.Name) and moved.id in self.loops else self.term(moved, scope)
            self.moves.append(ModuleMove(call.lineno, f".to({ast_dotted(spec) or 'device'})",
                                         _small(receiver), _small(_device_param(spec, scope) or self.term(spec, scope))))

    def _argument(self, node: ast.expr, scope: _Scope) -> Term:
        """A call's argument's term, cut to size; a method's own instance (`Helper(self)`,
        `register(self)`) is an instance of the method's class (`inst`), so the callee's
        parameter is one, where the body never rebinds `self`."""
        if scope.instance and scope.owner and isinstance(node, ast.Name) and node.id == scope.self_name \
                and not scope.env.get(node.id):
            return ("inst", scope.owner)
        if isinstance(node, ast.Name) and _handed_cpu_default(node.id, scope) and _names_device(node.id):
            # `_helper(n, device=device)` of `device=None` the body neither rebinds nor tests:
            # what the caller's calls pass, else the CPU unless a caller says otherwise
            # (`_Resolver`'s `cpudefault`, as for a field that keeps such a parameter).
            return ("cpudefault", _small(self.term(node, scope)), node.lineno)
        return _small(self.term(node, scope))

    def _unpacked(self, call: ast.Call, scope: _Scope) -> Tuple[Tuple[str, Term], ...]:
        """`f(**d)` with one `**`: the keyword `**` with `d`'s term (a dict with string keys,
        `_keyed`, each key's term cut to size): the callee's parameter of a key's name gets
        that key's value where `d` is such a dict (`project._Resolver._param`).  () else."""
        stars = [k.value for k in call.keywords if k.arg is None]
        if len(stars) != 1:
            return ()
        term = self.term(stars[0], scope)
        parts = term[1] if term[0] == "join" else (term,)
        if all(p[0] == "list" and len(p) > 2 for p in parts):
            return (("**", _join([("list", _small(p[1]), tuple((k, _small(t)) for k, t in p[2])) for p in parts])),)
        term = _small(term)  # `kwargs, n = f(...)`: what `f` returns may have string keys
        return (("**", term),) if term != UNK else ()

    def _device_calls(self, own: Sequence[ast.stmt], scope: _Scope) -> None:
        """Record the calls inside the function's device contexts (`_Scope.device_calls`); a
        nested definition's or lambda's body runs later, outside the context."""
        for stmt in own:  # outer blocks first: an inner `with torch.device("cpu")` undoes
            if not isinstance(stmt, ast.With):
                continue
            how = next((h for h in (self._device_context(i.context_expr, scope) for i in stmt.items)
                        if h is not None), None)
            if how is None and not any(isinstance(i.context_expr, ast.Call)
                                       and _is_torch_device(i.context_expr.func, scope) for i in stmt.items):
                continue
            label = f"inside {how} at line {stmt.lineno}"
            for inner in _own_statements(stmt.body):
                for call in _calls_outside_lambdas(inner):
                    if how is None:
                        scope.device_calls.pop(id(call), None)
                    else:
                        scope.device_calls[id(call)] = label

    def _invoked(self, body: Sequence[ast.stmt], scope: _Scope) -> Tuple[Tuple[Tuple[str, int], ...],
                                                                         Tuple[Tuple[str, int], ...]]:
        """What a function's body calls (`FunctionSummary.called` / `self_called`): plain names,
        and methods of its own object, each once with its first line.  Left out: nested
        definitions (they run later), calls of a parameter (no name tells what it is), the
        body of its own `with torch.device(...)` (that block decides the device), and the
        statements after its own `torch.set_default_device(...)` (so does that call)."""
        plain: Dict[str, int] = {}
        methods: Dict[str, int] = {}
        self._walk_invoked(body, scope, plain, methods)
        return tuple(plain.items()), tuple(methods.items())

    def _walk_invoked(self, statements: Sequence[ast.stmt], scope: _Scope,
                      plain: Dict[str, int], methods: Dict[str, int]) -> None:
        """`_invoked`'s walk of one block (nested blocks by recursion).

        A method, not a closure of `_invoked`: a recursive closure holds its own cell, a
        reference cycle that kept the scope (and the AST it holds) alive until the collector
        ran, and that collection walked every object of the file's burst (`gc_paused`)."""
        for stmt in statements:
            if isinstance(stmt, _DEFINITIONS):
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and _is_torch(stmt.value.func, "set_default_device", scope):
                return
            if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(
                    self._names_device(i.context_expr, scope) for i in stmt.items):
                continue
            for call in self.calls_of(stmt):
                func = call.func
                if isinstance(func, ast.Name):
                    name = self.aliases.get(func.id, func.id) if not scope.env.get(func.id) else func.id
                    if name not in _UNINTERESTING_CALLEES and name not in scope.torch \
                            and name not in scope.params:
                        plain.setdefault(name, call.lineno)
                elif isinstance(func, ast.Attribute) and scope.self_name is not None \
                        and _is_name(func.value, scope.self_name):
                    methods.setdefault(func.attr, call.lineno)
                    handed = _applied_method(call, scope.self_name)
                    if handed is not None:
                        methods.setdefault(handed, call.lineno)
            if type(stmt) in _SIMPLE_STATEMENTS:
                continue  # no block inside (most statements; the look-ups below cost)
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if isinstance(inner, list):
                    self._walk_invoked(inner, scope, plain, methods)
            for handler in getattr(stmt, "handlers", ()) or ():
                self._walk_invoked(handler.body, scope, plain, methods)
            for case in getattr(stmt, "cases", ()) or ():
                self._walk_invoked(case.body, scope, plain, methods)

    def _names_device(self, expr: ast.expr, scope: _Scope) -> bool:
        """`torch.device(...)` (any place) or a name bound only to such calls, as a `with` item."""
        if isinstance(expr, ast.Call):
            return _is_torch_device(expr.func, scope)
        if isinstance(expr, ast.Name) and expr.id not in scope.params:
            values = scope.env.get(expr.id) or []
            return bool(values) and all(isinstance(v, ast.Call) and _is_torch_device(v.func, scope) for v in values)
        return False

    def _device_context(self, expr: ast.expr, scope: _Scope) -> Optional[str]:
        if isinstance(expr, ast.Call) and _is_torch_device(expr.func, scope) and expr.args:
            if not _is_cpu(expr.args[0]) and not _is_meta(expr.args[0]):
                return "with torch.device(...)"
        if isinstance(expr, ast.Name) and expr.id not in scope.params:
            # `target_device = torch.device(...)` then `with target_device:` (model loaders).
            values = scope.env.get(expr.id) or []
            if values and all(self._device_context(v, scope) is not None for v in values):
                return f"with {expr.id}"
        return None

    def _set_default_device(self, call: ast.Call, scope: _Scope) -> Optional[str]:
        if _is_torch(call.func, "set_default_device", scope) and call.args and not _is_cpu(call.args[0]):
            return "torch.set_default_device(...)"
        return None

    # -- terms ---------------------------------------------------------------------------
    def term(self, node: ast.expr, scope: _Scope) -> Term:
        self.depth += 1
        try:
            if self.depth > 40:
                return UNK
            return self._term(node, scope)
        finally:
            self.depth -= 1

    def _term(self, node: ast.expr, scope: _Scope) -> Term:
        if isinstance(node, ast.Constant):
            if node.value is ...:
                return UNK  # what `_collect_env` binds for an unknown value
            if isinstance(node.value, (bool, int, float, complex)):
                return SCALAR
            if isinstance(node.value, str):
                return place_term(node.value) or OTHER
            return OTHER
        if isinstance(node, ast.Name):
            return self._name(node.id, scope)
        if isinstance(node, ast.Attribute):
            if scope.self_name is not None and _is_name(node.value, scope.self_name) and scope.owner:
                return ("field", scope.owner, node.attr)
            return ("attr", self.term(node.value, scope), node.attr, node.lineno)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, ast.IfExp):
            sides = [s for s in (node.body, node.orelse) if not _is_none(s)]
            return _join([_checked_instance(node, s) or self.term(s, scope) for s in sides])
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            displayed = [self.term(e, scope) for e in node.elts if not isinstance(e, ast.Starred)]
            for starred in (e for e in node.elts if isinstance(e, ast.Starred)):
                # `(t, *rest)`: what `rest` holds joins in (a display's elements), else nothing known.
                inner = self.term(starred.value, scope)
                displayed.append(inner[1] if inner[0] == "list" else UNK)
            return ("list", _join(displayed) if displayed else ("none",))
        if isinstance(node, ast.Dict):
            values = [self.term(v, scope) for v in node.values]
            held = ("list", _join(values)) if node.values else ("list", ("none",))
            keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None for k in node.keys]
            return _keyed(held, keys, values, stored=getattr(node, _STORED_KEY, False))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return ("list", self._comprehended(node, scope))
        if isinstance(node, ast.DictComp):
            return ("list", self.term(node.value, scope))
        if isinstance(node, ast.BinOp):
            left, right = self.term(node.left, scope), self.term(node.right, scope)
            if left[0] == "list" or right[0] == "list":  # `[t] + [...]`, `[t] * k`
                return ("list", _join([x[1] for x in (left, right) if x[0] == "list"]))
            if left == SCALAR and right == SCALAR:
                return SCALAR
            return ("same", left, right)
        if isinstance(node, ast.UnaryOp):
            inner = self.term(node.operand, scope)
            if isinstance(node.op, ast.Not):
                return SCALAR if inner == SCALAR else UNK
            return ("same", inner, None) if inner != SCALAR else SCALAR
        if isinstance(node, ast.Compare):
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return SCALAR
            return ("same", self.term(node.left, scope), self.term(node.comparators[0], scope))
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
                    and not isinstance(node.slice, ast.Slice):
                return SCALAR  # `x.shape[1]`: a dimension (the walk reads it the same way)
            base = self.term(node.value, scope)
            index = node.slice
            elements = index.elts if isinstance(index, ast.Tuple) else [index]
            ints = 0
            advanced: List[Term] = []
            for element in elements:
                if isinstance(element, ast.Slice):
                    continue
                if _int_literal(element) or isinstance(element, ast.Name) and self.term(element, scope) == SCALAR:
                    ints += 1  # `t[0]`, `t[-1]`, `t[i]` with `i` a Python number: one dimension less
                elif isinstance(element, ast.List):
                    numbers = element.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, int)
                                                   for e in element.elts)
                    advanced.append(NUMBER_LIST_INDEX if numbers else UNK)  # `t[[0, 2]]`: a 1-D index
                elif isinstance(element, (ast.Starred, ast.Constant)):
                    advanced.append(UNK)  # `t[..., 0]`, `t[None]`, `t[*idx]`: not read here
                else:
                    advanced.append(self.term(element, scope))  # `t[order, 1:]`: the project reads `order`
            if isinstance(index, ast.Constant) and isinstance(index.value, str):
                # `d["buf"]`: the key read (a dict's entry, where its string keys are known).
                return ("sub", base, ints if not advanced else None, index.value)
            if advanced and all(t != UNK for t in advanced):
                # An advanced index (`project._Resolver` reads each: a tensor of known rank acts
                # as `torch_api.advanced_index_dims` says, a Python number selects).
                return ("sub", base, None, ("advanced", ints, tuple(advanced)))
            return ("sub", base, ints if not advanced else None)
        if isinstance(node, ast.NamedExpr):
            return self.term(node.value, scope)
        if isinstance(node, ast.Await):
            return self.term(node.value, scope)
        return UNK

    def _iterated(self, source: ast.expr, scope: _Scope) -> Optional[Term]:
        """What iterating `source` yields, where known: `range(...)` ints, a list term's element."""
        if isinstance(source, ast.Call) and _is_name(source.func, "range") and "range" not in scope.env:
            return SCALAR
        return _list_element(self.term(source, scope))

    def _comprehended(self, node: Union[ast.ListComp, ast.SetComp, ast.GeneratorExp], scope: _Scope) -> Term:
        """The element of `[x for x in xs if ...]`: where the element is a generator's own
        target, what that generator iterates yields (`range(...)`: ints; a list term: its
        element), not a name of the enclosing body that happens to share it."""
        elt = node.elt
        if isinstance(elt, ast.Name):
            for generator in reversed(node.generators):  # the innermost binding wins
                if isinstance(generator.target, ast.Name) and generator.target.id == elt.id:
                    element = self._iterated(generator.iter, scope)
                    return element if element is not None else UNK
        return self.term(elt, scope)

    def _name(self, name: str, scope: _Scope) -> Term:
        if name in scope.params:
            if name in scope.ranked and not scope.env.get(name):
                rank, line = scope.ranked[name]
                if scope.line > line:
                    return ("ranked", scope.params[name], rank, line)
            return scope.params[name]
        values = scope.env.get(name)
        key = name
        if values and len(values) > 1 and scope.here is not None and name not in scope.shared:
            kept = self._reaching(name, values, scope)
            if kept is not None:
                # Only the bindings that reach this read (`lens = []`, then `lens =
                # torch.tensor(lens, device=d)`: the tensor), under a key of their own.
                key = f"{name}@{','.join(map(str, kept))}"
                values = [values[i] for i in kept]
        known = scope.terms.get(key)
        if known is not None:
            return known
        provisional = scope.pending.get(key)
        if provisional is not None:
            self.cycle_reads += 1
            return provisional[0]
        if values and key in scope.active:
            self.cycle_reads += 1
            return ("cycle", key)  # a version read inside its own values (the plain name empties `env`)
        if values:
            if key == name:
                scope.env[name] = []  # a name defined by itself: a cycle
            scope.active.append(key)
            before = self.cycle_reads
            try:
                # `w = None` on one path and a tensor on another: the join is the tensor (`None`
                # adds nothing a write, call or attribute reaches; the walk's `values.join`).
                terms = [NONE_TERM if len(values) > 1 and _is_none(v) else self._bound_term(v, scope)
                         for v in values]
                # No cycle read while they were built (most names): none of them holds one.
                cyclic = self.cycle_reads != before
                reading = [_mentions_cycle(t, key) for t in terms] if cyclic else [False]
                if all(reading):
                    term = UNK  # no value but through itself: bound before (`global`, `nonlocal`)
                elif any(reading):
                    term = collapse(settle_cycle(_join(terms), key))
                else:  # nothing to settle (most names): `settle_cycle` would give the join back
                    term = collapse(_join(terms))
                if term == NONE_TERM:
                    term = OTHER  # only `None` reaches: what a lone `x = None` reads as
            finally:
                if key == name:
                    scope.env[name] = values
                scope.active.pop()
            if _larger_than(term, 200):
                # A value too complex to be worth carrying across files; a dict with string
                # keys keeps its keys' values cut to size (`_shrunk_keyed`).
                term = _shrunk_keyed(term)
            # Terms that read this name as "nothing yet" are settled now: drop them.
            for other in [n for n, (_, reads) in scope.pending.items() if key in reads]:
                del scope.pending[other]
            reads = _cycles_in(term) if cyclic else frozenset()
            if reads:
                scope.pending[key] = (term, reads)
            else:
                scope.terms[key] = term
            return term
        if values is not None:
            # Read inside its own values: the cycle's "nothing yet" (`settle_cycle` keeps it
            # only where a fixpoint of number arithmetic is sound, else it is unknown).
            if name in scope.active:
                self.cycle_reads += 1
                return ("cycle", name)
            return UNK
        if name in ("True", "False"):
            return SCALAR
        if name in scope.enclosing and name in self.module_env:
            return UNK  # an enclosing function's name, not the module-level one of that name
        return ("global", name)

    def _bound_term(self, value: ast.expr, scope: _Scope) -> Term:
        """The term of a value bound to a name, read where its statement is (the names it
        reads are those reaching that statement)."""
        saved = scope.here  # (`_placed_at`, inline: this runs for every value of every name read)
        saved_line = scope.line
        scope.here = scope.sites.get(scope.bound_at.get(id(value), -1))
        scope.line = getattr(value, "lineno", saved_line)  # (synthesized values have none)
        try:
            return self.term(value, scope)
        finally:
            scope.here = saved
            scope.line = saved_line

    def _reaching(self, name: str, values: Sequence[ast.expr], scope: _Scope) -> Optional[Tuple[int, ...]]:
        """`reaching.reaching` for `name` read at `scope.here`: the indices of the values that
        may reach it (None: all of them)."""
        assert scope.here is not None
        memo = (name, scope.here.order)
        if memo in scope.reached:
            return scope.reached[memo]
        bindings: List[Tuple[Optional[Site], bool]] = []
        outright: List[Tuple[Site, ast.stmt]] = []
        for value in values:
            stmt_id = scope.bound_at.get(id(value))
            stmt = scope.statements.get(stmt_id) if stmt_id is not None else None
            site = scope.sites.get(stmt_id) if stmt_id is not None else None
            rebound = stmt is not None and rebinds(stmt, name)
            bindings.append((site, rebound))
            if rebound and site is not None and stmt is not None:
                outright.append((site, stmt))
        branched: Tuple[Site, ...] = ()
        if len(outright) > 1:
            if not scope.parents:
                scope.parents = {scope.sites[i].chain: stmt for i, stmt in scope.statements.items()
                                 if i in scope.sites and type(stmt) not in _SIMPLE_STATEMENTS}
            branched = branch_rebindings(outright, scope.parents, scope.sites)
        found = scope.reached[memo] = reaching(scope.here, bindings, branched)
        return found

    def _call(self, node: ast.Call, scope: _Scope) -> Term:
        func = node.func
        line = node.lineno
        if isinstance(func, ast.Name):
            imported = self.torch_functions.get(func.id)
            if imported is not None and _unbound_here(func.id, scope, self.imported):
                return self._torch_function(imported, node, scope)  # `zeros(n)` of `from torch import zeros`
            if func.id == _ITEM_OF:
                # `a, b = f(...)`: position k of the tuple `f` returns (`_pairs`).
                assert isinstance(node.args[1], ast.Constant)
                return ("item", self.term(node.args[0], scope), node.args[1].value)
            if func.id == "getattr" and len(node.args) == 2 and not node.keywords and scope.self_name is not None \
                    and _is_name(node.args[0], scope.self_name) and isinstance(node.args[1], ast.Name) \
                    and node.args[1].id in scope.named_buffers and "getattr" not in scope.env \
                    and "getattr" not in scope.params:
                # `getattr(self, name)` of a buffer the body registers under `name`: that tensor.
                return self.term(scope.named_buffers[node.args[1].id], scope)
            if func.id == _ELEMENT_OF:
                # A `for` target: a number where the iterable holds numbers, else unknown.
                return SCALAR if self._iterated(node.args[0], scope) == SCALAR else UNK
            if func.id in PROGRESS_BARS and func.id not in scope.env and func.id not in scope.params:
                held = self._iterated(node.args[0], scope) if func.id == "tqdm" and node.args \
                    and not isinstance(node.args[0], ast.Starred) else SCALAR if func.id == "trange" else None
                return ("list", held if held is not None else UNK)
            if func.id in SCALAR_BUILTINS:
                return SCALAR
            if func.id in _FOLDS and func.id not in scope.params and func.id not in scope.env:
                folded = self._fold(node, scope)
                if folded is not None:
                    return folded
            if func.id in ("list", "tuple", "sorted", "reversed") and func.id not in scope.env \
                    and len(node.args) == 1 and not isinstance(node.args[0], ast.Starred):
                # `tuple(xs)`, `sorted(xs, key=...)`: xs's elements; `list(range(n))`: ints.
                element = self._iterated(node.args[0], scope)
                return ("list", element if element is not None else UNK)
            if func.id == "dict" and func.id not in scope.env and func.id not in scope.params and not node.args \
                    and node.keywords and all(k.arg for k in node.keywords):
                # `dict(buf=t, n=3)`: a dict display by keywords.
                values = [self.term(k.value, scope) for k in node.keywords]
                return _keyed(("list", _join(values)), [k.arg for k in node.keywords], values)
            if func.id in ("zip", "enumerate", "list", "tuple", "sorted", "reversed"):
                return ("list", UNK)
            if func.id in scope.class_params:
                # `metric_class(...)` of `metric_class: Type[Metrics]`: an instance of `Metrics`
                # (or of a subclass), where `Metrics` is a project class; otherwise the call of
                # the name it was (a loader's `model_class: type[nn.Module]`, `_loader_built`).
                return ("built", scope.class_params[func.id], func.id, line)
            if scope.function is not None and func.id not in scope.params and scope.env.get(func.id) \
                    and not any(isinstance(v, ast.Constant) and v.value is ... for v in scope.env[func.id]):
                return ("invoke", self._name(func.id, scope), line, func.id)  # `head(x)`: a local
            return ("call", func.id, line)
        if isinstance(func, ast.Subscript):
            return ("invoke", self.term(func, scope), line, (ast_dotted(func.value) or "...") + "[...]")
        if not isinstance(func, ast.Attribute):
            return UNK
        method = func.attr
        receiver = func.value
        if method == "compute_logits" and self.vllm and isinstance(receiver, ast.Call) \
                and _is_name(receiver.func, "super"):
            return ("vlogits", line)  # a vLLM model's parent `compute_logits` (`expressions._call`)
        if method[:1].isupper() and (isinstance(receiver, ast.Name) and receiver.id in self.nn or (
                isinstance(receiver, ast.Attribute) and receiver.attr == "nn"
                and isinstance(receiver.value, ast.Name) and receiver.value.id in scope.torch)):
            # `nn.Linear(...)`: a `torch.nn` module; a `ModuleList([...])` knows its modules.
            first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
            if method in NN_TENSOR_WRAPPERS:
                # `nn.Buffer(t)` / `nn.Parameter(t)`: the tensor `t`.
                data = first if first is not None else next((k.value for k in node.keywords if k.arg == "data"), None)
                return ("wrap", self.term(data, scope), line) if data is not None else UNK
            return ("nn", method, line, self.term(first, scope) if first is not None else UNK)
        if method in FUNCTIONAL_RANK_KEEPING and node.args and not isinstance(node.args[0], ast.Starred) \
                and self._functional(receiver, scope):
            return ("keep", self.term(node.args[0], scope))  # `F.gelu(x)`: where `x` is, of its rank
        if isinstance(receiver, ast.Attribute) and receiver.attr in ("fft", "linalg") and node.args \
                and not isinstance(node.args[0], ast.Starred) and isinstance(receiver.value, ast.Name) \
                and receiver.value.id in scope.torch and receiver.value.id not in scope.params:
            # `torch.fft.rfft(x, dim=1)`: where `x` is, of its rank; `torch.linalg.vector_norm(x)`:
            # where `x` is (the walk's `expressions._submodule_call` reads the norm's rank too).
            if f"{receiver.attr}.{method}" in FFT_FACTORIES:
                return self._factory(node, f"{receiver.attr}.{method}", scope)  # `torch.fft.fftfreq(n, device=d)`
            if receiver.attr == "fft" and method in FFT_FUNCTIONS:
                return ("keep", self.term(node.args[0], scope))
            if receiver.attr == "linalg" and method in LINALG_NORMS:
                return ("same", self.term(node.args[0], scope), None)
            return UNK
        if isinstance(receiver, ast.Name) and receiver.id in scope.torch and receiver.id not in scope.params:
            return self._torch_function(method, node, scope)
        dotted = ast_dotted(func) or ""
        if dotted in ("json.load", "json.loads") and "json" not in scope.env and "json" not in scope.params:
            return ("json", line)  # parsed JSON: host values only (`expressions.json_data`)
        if dotted.endswith(("distributed.get_rank", "distributed.get_world_size",
                            "cuda.current_device", "cuda.device_count")):
            return SCALAR
        if dotted.count(".") == 1 and dotted.split(".")[1] in DISTRIBUTED_INTS and dotted.split(".")[0] \
                in self.distributed and dotted.split(".")[0] not in scope.env and dotted.split(".")[0] not in scope.params:
            return SCALAR  # `dist.get_rank()` after `import torch.distributed as dist`
        if method in SCALAR_METHODS:
            return SCALAR
        if isinstance(receiver, ast.Name) and receiver.id in self.math and _unbound_here(receiver.id, scope, self.imported):
            return SCALAR  # `math.ceil(n / b)`, `math.prod(sizes)`: a Python number
        if method in ("size", "stride") and node.args:
            return SCALAR
        if method == "tolist":
            return ("list", UNK)
        if scope.self_name is not None and scope.owner and _is_name(receiver, scope.self_name):
            # `self.make(...)`: what the class's method returns (the walk reads it the same way).
            return ("ret", scope.owner, method, line)
        recv = self.term(receiver, scope)
        if method == "pop" and not node.keywords and len(node.args) <= 1:
            popped = _list_element(recv)  # `free.pop(0)`: an element of the list (of a dict: a value)
            if popped is not None:
                return popped
        if method in ("get", "setdefault") and 1 <= len(node.args) <= 2 and not node.keywords \
                and not any(isinstance(a, ast.Starred) for a in node.args):
            # `d.get(k)`: a value of the dict (or `None`, which adds nothing: a write into it
            # raises); with a default (`d.get(k, buf)`, `d.setdefault(k, buf)`), or that.
            # A project class's own `get` is its method: `("mcall", ...)` read as the resolver
            # reads one, where the receiver is no container (`_Resolver.eval`).
            # The key, where it is a constant string: a configuration's `cfg.get("queue_size", n)`
            # is a host value (`project._config_term`) unless the key names a place.
            key = node.args[0].value if isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) else None
            return ("get", recv, method, line, self.term(node.args[1], scope) if len(node.args) == 2 else None, key)
        drop = _pair_drop(method, node.args, node.keywords)
        if drop is not None:
            return ("pair", recv, drop)  # `top, idx = x.topk(k)`, `v, i = x.max(dim=1)`
        if method in ("view", "reshape") and node.args and not node.keywords:
            rank = _size_rank(node.args[0]) if len(node.args) == 1 else (
                None if any(isinstance(a, ast.Starred) for a in node.args) else len(node.args))
            if len(node.args) == 1 and rank is None and isinstance(node.args[0], ast.UnaryOp) \
                    and isinstance(node.args[0].operand, ast.Constant):
                rank = 1  # `.view(-1)`
            if rank is not None:
                return ("shape", recv, rank)
        if method in ("repeat", "expand") and node.args and not node.keywords:
            # `x.repeat(bs, 1, 1)`, `x.expand(n, -1)`: as many dimensions as sizes (PyTorch
            # raises where they are fewer than `x` has).
            rank = _size_rank(node.args[0]) if len(node.args) == 1 else (
                None if any(isinstance(a, ast.Starred) for a in node.args) else len(node.args))
            if rank is not None:
                return ("shape", recv, rank)
        if method == "flatten" and not node.args and not node.keywords:
            return ("shape", recv, 1)
        if method == "cuda":
            return ("move", recv, line, ".cuda()")
        if method == "to":
            target = _keyword(node, "device") or (node.args[0] if node.args else None)
            if target is None:
                return ("same", recv, None)
            if _is_cpu(target):
                return ("cpu", None, line)
            if _is_dtype(target, scope):
                return ("same", recv, None)
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                return ("move", recv, line, ".to(...)")
            if isinstance(target, ast.Attribute) and target.attr == "device" \
                    and not (scope.self_name is not None and _is_name(target.value, scope.self_name)):
                return ("to", recv, self.term(target.value, scope), line)  # where that tensor is
            if _names_a_device(target):
                return ("move", recv, line, ".to(...)")
            return ("to", recv, self.term(target, scope), line)
        if method in ("cpu", "pin_memory", "numpy"):
            return ("cpu", None, line) if method != "numpy" else OTHER
        if method in NEW_METHODS:
            device = _keyword(node, "device")
            rank = _new_rank(node, method)
            dtype = _keyword(node, "dtype")
            integer = dtype_code(dtype, "")
            if device is None:
                # `t.new_zeros(n)` is `torch.zeros(n, device=t.device)`: read as that `device=`
                # is (`_Resolver._on`; the walk's `_new_tensor`).
                shown = ast_dotted(receiver)
                how = f"{shown}.{method}(...)" if shown is not None and len(shown) <= 48 else f".{method}(...)"
                return ("on", recv, rank, line, how, integer if dtype is not None else None)
            return ("cpu", rank, line) if _is_cpu(device) else self._placed(device, rank, line, f"{method}(..., device=...)", integer, scope)
        if method in _RANK_KEEPING:
            if method in _INTEGER_KEEPING:
                return ("keep", recv, True)  # `x.argsort()`, `x.long()`: of an integer dtype too
            return ("keep", recv)  # `x.clone()`, `x.softmax(dim=0)`: where and as wide as `x`
        if method in _SAME_DEVICE_METHODS or (method.endswith("_") and not method.startswith("_")):
            return ("same", recv, None)
        return ("mcall", recv, method, line)

    def _fold(self, node: ast.Call, scope: _Scope) -> Optional[Term]:
        """`min(a, b)` / `max(a, b, c)`: one of the arguments (`("fold", args)`); `min(xs)`,
        `max(d.values())`, `sum(xs[1:], start)`: an element of the iterable, or what
        `default=`/`start=` gives (`("fold1", iterable, extras)`).  The resolver reads a
        Python number where every one of those is one (a tensor argument gives a tensor)."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg not in ("key", "default", "start") for k in node.keywords):
            return None
        extras = tuple(self.term(k.value, scope) for k in node.keywords if k.arg in ("default", "start"))
        if len(node.args) >= 2 and not extras and isinstance(node.func, ast.Name) and node.func.id != "sum":
            return collapse(("fold", tuple(self.term(a, scope) for a in node.args)))
        if len(node.args) == 2 and isinstance(node.func, ast.Name) and node.func.id == "sum" and not extras:
            extras = (self.term(node.args[1], scope),)  # `sum(xs, start)`
        elif len(node.args) != 1:
            return None
        iterable = node.args[0]
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
                and iterable.func.attr == "values" and not iterable.args and not iterable.keywords:
            iterable = iterable.func.value  # `d.values()`: the dict's values (a dict's term)
        elif isinstance(iterable, ast.Subscript) and isinstance(iterable.slice, ast.Slice):
            iterable = iterable.value  # `xs[:n]`: some of the same elements
        return collapse(("fold1", self.term(iterable, scope), extras))

    def _torch_function(self, method: str, node: ast.Call, scope: _Scope) -> Term:
        """`torch.<method>(...)`, spelled through the module (`torch.zeros(n)`) or through a name
        `from torch import zeros` binds (`_Builder.torch_functions`): the same function."""
        line = node.lineno
        if method in _FACTORIES:
            return self._factory(node, method, scope)
        if method in LEGACY_TENSOR_TYPES and not node.keywords:
            # `torch.LongTensor([1])`: the legacy typed constructor allocates on the CPU (of
            # the data's rank; several int sizes are as many dimensions).
            return ("cpu", _legacy_rank(node.args), line)
        if method == "device" and len(node.args) == 1 and not node.keywords:
            # `torch.device("cpu")`: the place its argument names (an index alone is an
            # accelerator's ordinal).
            inner = self.term(node.args[0], scope)
            return inner if inner[0] == "place" else ACCELERATOR_PLACE if inner == SCALAR else UNK
        if method in CONCATENATIONS and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)) \
                and node.args[0].elts and not any(isinstance(e, ast.Starred) for e in node.args[0].elts):
            # `torch.cat((a, b), dim)`: where `a` is, of the inputs' rank when they agree.
            return ("cat", tuple(self.term(e, scope) for e in node.args[0].elts))
        if method in CONCATENATIONS and node.args and not isinstance(node.args[0], (ast.List, ast.Tuple, ast.Starred)):
            # `torch.cat(chunks)`: of the inputs `chunks` holds (`chunks.append(x.cpu())`).
            return ("cat", (("sub", self.term(node.args[0], scope), None),))
        if method == "meshgrid" and node.args:
            # `torch.meshgrid(x, y, indexing="ij")`: one grid per input, where they are.
            inputs = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)) \
                else node.args
            if inputs and not any(isinstance(e, ast.Starred) for e in inputs):
                return ("mesh", tuple(self.term(e, scope) for e in inputs))
            return UNK
        drop = _pair_drop(method, node.args[1:], node.keywords) if node.args else None
        if drop is not None and not isinstance(node.args[0], ast.Starred):
            return ("pair", self.term(node.args[0], scope), drop)  # `torch.topk(x, k)`
        if method in _RANK_KEEPING and node.args and not isinstance(node.args[0], ast.Starred):
            if method in _INTEGER_KEEPING:
                return ("keep", self.term(node.args[0], scope), True)  # `torch.argsort(x)`
            return ("keep", self.term(node.args[0], scope))  # `torch.log_softmax(x, dim=0)`
        if method in _SAME_DEVICE_FUNCTIONS and node.args:
            first = node.args[0]
            if isinstance(first, (ast.List, ast.Tuple)) and first.elts:
                first = first.elts[0]
            return ("same", self.term(first, scope), None)
        return UNK

    def _factory(self, node: ast.Call, name: str, scope: _Scope) -> Term:
        line = node.lineno
        pin = _keyword(node, "pin_memory")
        if isinstance(pin, ast.Constant) and pin.value is True:
            return ("cpu", None, line)
        device = _keyword(node, "device")
        dtype = _keyword(node, "dtype")
        integer = dtype_code(dtype, name)
        if name in _LIKE:
            source = self.term(node.args[0], scope) if node.args else UNK
            if device is None and node.args:
                # `torch.zeros_like(t)` is `t.new_zeros(t.shape)`: an `on` term as that is, of
                # `t`'s rank (`_Resolver._on` reads `_LIKE_HOW`; the walk's `_factory_value`).
                return ("on", source, None, line, f"torch.{name}(...)", integer if dtype is not None else None)
            if device is None:
                return ("same", source, None)
        rank = _factory_rank(node, name)
        if device is None and id(node) in scope.device_calls:
            # Inside `with torch.device(d):` a factory without `device=` allocates on `d`.
            return ("dev", rank, line, f"torch.{name}(...) {scope.device_calls[id(node)]}", integer)
        if device is None:
            if name in ("tensor", "as_tensor", "asarray") and node.args:
                return ("cpu", rank, line) if not scope.in_init else ("dflt", rank, line)
            return ("dflt", rank, line, integer) if scope.in_init else ("cpu", rank, line)
        if _is_cpu(device):
            return ("cpu", rank, line)
        if _is_meta(device):
            return ("tensor", rank)  # a meta tensor: no storage, setitem copies nothing
        return self._placed(device, rank, line, f"torch.{name}(..., device=...)", integer, scope)

    def _placed(self, device: ast.expr, rank: Optional[int], line: int, how: str, integer: IntegerCode,
                scope: _Scope) -> Term:
        """An allocation with a `device=` that is not the CPU.  `device=x.device` is where `x`
        is (resolved later: a parameter nothing tells about may be a CPU tensor); any other
        spec is an explicit request for an accelerator.  `how` names the spec when it is short
        (`torch.zeros(..., device=self.dev)`), so that the evidence shows what it rests on."""
        how = how.replace("device=...", f"device={_device_text(device)}")
        if isinstance(device, ast.Name) and device.id in scope.cpu_defaults:
            if _handed_cpu_default(device.id, scope):
                # `def f(n, device=None)`, the parameter neither rebound nor tested: where every
                # call puts it, else the CPU unless a caller says otherwise (`_Resolver`'s
                # `cpudefault`; `_without_dev_names` cuts it to an allocation of unknown place).
                return ("dev", rank, line, how, integer, ("cpudefault", _small(self.term(device, scope)), line))
            return ("tensor", rank)  # callers may leave it on the CPU
        if isinstance(device, ast.Attribute) and device.attr == "device" \
                and not (scope.self_name is not None and _is_name(device.value, scope.self_name)):
            return ("on", self.term(device.value, scope), rank, line, how, integer)
        if isinstance(device, ast.Attribute) and device.attr == "device" and scope.owner:
            # `device=self.device`: where the class's `device` points (a place it assigns),
            # else an explicit request for an accelerator (`_Resolver._on`).
            return ("on", self.term(device, scope), rank, line, how, integer)
        if isinstance(device, ast.Name) or isinstance(device, ast.Attribute) and scope.self_name is not None \
                and _is_name(device.value, scope.self_name):
            # `device=device`: also what the name holds (a sixth part, `_Resolver`'s `dev`): a
            # parameter every call points at the CPU, or a local bound to it, is the CPU; anything
            # else keeps the explicit request for an accelerator.  `_small` drops the part first.
            # `device=self.storage_device`: what the field holds (a place, or a parameter that
            # defaults to the CPU: a `cpudefault` term).
            named = self.term(device, scope)
            if not _larger_than(named, _DEVICE_NAME_LIMIT):
                return ("dev", rank, line, how, integer, named)
        return ("dev", rank, line, how, integer)


# -- small helpers -------------------------------------------------------------------------------


# What a term's integer slot holds (`("dev", rank, line, how, integer)` and the like): True for an
# integer dtype, False for one not known, NON_INTEGER_CODE for a floating or boolean one
# (`decode_integer` reads it back as `Value.integer`).
IntegerCode = Union[bool, str]
NON_INTEGER_CODE = "f"


def dtype_code(dtype: Optional[ast.expr], factory: str) -> IntegerCode:
    """The integer slot of an allocation's term: what `dtype=` names, else what `torch.<factory>`
    makes without one (`torch.zeros(n)`: the default floating dtype; "" for a method)."""
    if dtype is not None:
        known = dtype_integer(ast_dotted(dtype))
        return NON_INTEGER_CODE if known is None else known
    return NON_INTEGER_CODE if factory in FLOAT_DEFAULT_FACTORIES else False


def decode_integer(code: IntegerCode) -> Optional[bool]:
    """`Value.integer` from a term's integer slot (`dtype_code`): None is `values.NON_INTEGER`."""
    return None if code == NON_INTEGER_CODE else bool(code)


def _device_text(device: ast.expr) -> str:
    """How a `device=` reads in evidence: a dotted name or a string as written, else `...`
    (a call or an expression would make summaries long for little)."""
    if isinstance(device, ast.Constant) and isinstance(device.value, str) and len(device.value) <= 16:
        return repr(device.value).replace("'", '"')
    text = ast_dotted(device)
    return text if text is not None and len(text) <= 48 else "..."


def _at(scope: _Scope, stmt: ast.stmt) -> "_placed_at":
    """Terms built inside read names where `stmt` is (`_Scope.here`); outside a function body
    (no sites) names read every binding, as before."""
    return _placed_at(scope, scope.sites.get(id(stmt)), stmt.lineno)


class _placed_at:  # noqa: N801 (used as `with _placed_at(...)`, like a context-manager function)
    """`scope.here` is `site` inside the `with`, and what it was after.  A class, not a
    `@contextmanager` generator: it is entered for every statement of every function of the
    project (a generator's set-up cost the summaries of vLLM about 1 s of CPU)."""

    __slots__ = ("scope", "site", "saved", "line", "saved_line")

    def __init__(self, scope: _Scope, site: Optional[Site], line: int = 0) -> None:
        self.scope = scope
        self.site = site
        self.saved: Optional[Site] = None
        self.line = line
        self.saved_line = 0

    def __enter__(self) -> None:
        self.saved = self.scope.here
        self.saved_line = self.scope.line
        self.scope.here = self.site
        self.scope.line = self.line

    def __exit__(self, *exc: object) -> None:
        self.scope.here = self.saved
        self.scope.line = self.saved_line


# The methods `_accelerator_move`, `_device_move` and `_other_move` read (`calls_in` asks them of no other call).
_MOVING_METHODS = frozenset({"cuda", "to", "cpu"})
# Builtins that return one of their arguments or elements (or, `sum`, adds them to `start`).
_FOLDS = frozenset({"min", "max", "sum"})


def collapse(term: Term) -> Term:
    """`term`, with what is a Python number without the project's help folded to `SCALAR`:
    operators, `min`/`max`/`sum` and joins of numbers, an element of a list of numbers
    (`max(d.values())` of `{k: int(v) ...}`), so that a name built by them stays small
    enough to travel as a call-site argument (`_small`)."""
    if not isinstance(term, tuple) or not term:
        return term
    tag = term[0]
    if tag == "same":
        sides = tuple(collapse(t) if t is not None else None for t in term[1:])
        if all(t is None or t == SCALAR for t in sides) and sides and sides[0] is not None:
            return SCALAR
        return ("same", *sides)
    if tag == "fold":
        args = tuple(collapse(t) for t in term[1])
        return SCALAR if args and all(a == SCALAR for a in args) else ("fold", args)
    if tag == "fold1":
        iterable, extras = collapse(term[1]), tuple(collapse(t) for t in term[2])
        if iterable == ("list", SCALAR) and all(e == SCALAR for e in extras):
            return SCALAR
        return ("fold1", iterable, extras)
    if tag == "join":
        return _join([collapse(t) for t in term[1]])
    if tag == "list" and isinstance(term[1], tuple):
        if len(term) > 2:  # a dict's string keys (`_keyed`)
            return ("list", collapse(term[1]), tuple((k, collapse(t)) for k, t in term[2]))
        return ("list", collapse(term[1]))
    if tag == "sub" and term[2] != 0:
        base = collapse(term[1])
        return SCALAR if base == ("list", SCALAR) else ("sub", base, term[2]) + tuple(term[3:])
    return term


# Ops giving a named tuple `(values, indices)` of the input's rank (`sort`, `topk`, `cummax`,
# `cummin`: the walk's table, `torch_api.INDEX_OPS`).
_PAIR_KEEPING = frozenset(name for name, op in INDEX_OPS.items() if op.pair and op.keeps_rank)


def _pair_drop(method: str, args: Sequence[ast.expr], keywords: Sequence[ast.keyword]) -> Optional[int]:
    """How many dimensions the `(values, indices)` pair of `x.<method>(args)` (or
    `torch.<method>(x, args)`) has fewer than `x` (a `pair` term; `torch_api.IndexOp`): none for
    `sort` / `topk` / `cummax` / `cummin`; one for `max` / `min` along a `dim` written as an int
    literal, none with `keepdim=True`.  None for anything else: `x.max()` is one 0-dim tensor,
    `torch.max(a, b)` elementwise, a `dim` not written out may be a tensor."""
    if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None or k.arg == "out" for k in keywords):
        return None
    if method in _PAIR_KEEPING:
        return 0
    if method not in ("max", "min"):
        return None
    given = {k.arg: k.value for k in keywords}
    dim = args[0] if args else given.get("dim")
    keep = args[1] if len(args) > 1 else given.get("keepdim")
    if len(args) > 2 or set(given) - {"dim", "keepdim"} or dim is None or not _int_literal(dim):
        return None
    if keep is None or isinstance(keep, ast.Constant) and keep.value is False:
        return 1
    return 0 if isinstance(keep, ast.Constant) and keep.value is True else None


def settle_cycle(term: Term, name: str) -> Term:
    """The term of `name` once its own reads (`("cycle", name)`) are settled.

    `n = base; n += k; n = min(n, m)` binds `n` to the join of `base`, `n + k` and
    `min(n, m)`.  Its least fixpoint, for operators and `min`/`max`, is what the
    non-cyclic values give: a read of `n` there adds nothing new (`n + k` is a number
    when `n` and `k` are, a tensor when `k` is one).  So `("same", cycle, k)` becomes
    `("same", k, None)`, a cycle operand of a fold or a join is dropped, and a cycle anywhere
    else (`n = n.sum()`, `n = [n]`, `n = n[0]`: a rank or a kind the other values do not
    show) is unknown, as before.  (`_Builder._name` gives a name whose every value reads
    itself no value: it was bound before the function, by a `global` or `nonlocal`.)
    """
    settled = _settle(term, name)
    return UNK if settled is None else settled


def _settle(term: Any, name: str) -> Any:
    """`term` with `name`'s cycle reads settled; None where only the cycle is left."""
    if not isinstance(term, tuple) or not term:
        return term
    if term == ("cycle", name):
        return None
    if not _mentions_cycle(term, name):
        return term
    tag = term[0]
    if tag == "same" and len(term) == 3 and term[2] is not None:
        left, right = _settle(term[1], name), _settle(term[2], name)
        if left is None and right is None:
            return None
        if left is None or right is None:
            # `n + k` with `n` nothing yet: what `k` is (a number, a tensor).  Where `k` still
            # reads another name's cycle, a number stands beside it so that the other name's
            # settling reads an operator (its "nothing yet" plus a number is a number).
            other = right if left is None else left
            if other == SCALAR:
                return SCALAR
            return ("same", other, SCALAR if _cycles_in(other) else None)
        return ("same", left, right)
    if tag == "fold":
        args = tuple(a for a in (_settle(a, name) for a in term[1]) if a is not None)
        if not args:
            return None
        return SCALAR if all(a == SCALAR for a in args) else ("fold", args)
    if tag == "join":
        own = ("cycle", name)
        rest = [p for p in term[1] if not _own_element(p, own)]
        parts = [p for p in (_settle(p, name) for p in rest) if p is not None]
        if parts and len(rest) < len(term[1]):
            # `x = x[mask]` beside `x = torch.cat(chunks)`: indexing a tensor keeps its place,
            # not its rank, so `x` is where the other values are, of a rank not known (a
            # container's element is not what the container is: unknown).
            return ("same", _join(parts), None)
        return _join(parts) if parts else None
    if tag == "sub" and isinstance(term[1], tuple):
        # `slot = free.pop(0)`, `by_request[r] = slot`, `slot = by_request[r]`: an element of
        # a container that holds `slot` itself adds nothing new (what else it holds does; an
        # empty display, nothing).
        bases: Tuple[Any, ...] = term[1][1] if term[1][:1] == ("join",) else (term[1],)
        if all(isinstance(p, tuple) and p[:1] == ("list",) and len(p) == 2 for p in bases):
            held = [h for h in (_settle(p[1], name) for p in bases) if h is not None and h != ("none",)]
            return ("sub", ("list", _join(held)), term[2]) if held else None
    return _uncycled(term, name)


def _own_element(term: Any, own: Tuple[str, str]) -> bool:
    """`("sub", ("cycle", name), ints)`: a subscript of the name's own value (`x = x[mask]`)."""
    return isinstance(term, tuple) and len(term) >= 3 and term[0] == "sub" and term[1] == own


def _uncycled(term: Any, name: str) -> Any:
    """`term` with every read of `name` unknown (what a read of a name inside its own values
    gave before cycles were settled)."""
    if term == ("cycle", name):
        return UNK
    if isinstance(term, tuple):
        return tuple(_uncycled(t, name) for t in term)
    return term


def _mentions_cycle(term: Any, name: str) -> bool:
    """Whether `term` holds `("cycle", name)` at any depth (itself included).  A loop over a
    stack, not a recursion of generators: every value of every name a body reads is asked
    (over a million terms on vLLM)."""
    if not isinstance(term, tuple):
        return False
    target = ("cycle", name)
    stack = [term]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        if item == target:
            return True
        for part in item:
            if isinstance(part, tuple):
                push(part)
    return False


def _cycles_in(term: Any) -> FrozenSet[str]:
    """The names whose cycle reads `term` still holds (names being evaluated around it)."""
    found: Set[str] = set()
    stack = [term]
    while stack:
        item = stack.pop()
        if type(item) is tuple:
            if len(item) == 2 and item[0] == "cycle" and isinstance(item[1], str):
                found.add(item[1])
            else:
                stack.extend(item)
    return frozenset(found)


# Call sites worth no fact (they would cost most of a summary's memory): builtins and the
# methods of str/list/dict/logging that every file calls.  Every call of such a name is
# dropped, so a project function of that name has no call sites and no call-site facts:
# a missing fact, never a false one.  Calls without arguments teach nothing about
# parameters; a parameter with a default is therefore never concluded from call sites.
_UNINTERESTING_CALLEES = frozenset({
    "print", "len", "isinstance", "issubclass", "getattr", "setattr", "hasattr", "super",
    "str", "repr", "format", "join", "split", "rsplit", "startswith", "endswith", "replace",
    "strip", "lstrip", "rstrip", "items", "keys", "values", "debug", "info", "warning",
    "warning_once", "info_once", "error", "exception", "assert_", "dict", "list", "tuple",
    "set", "frozenset", "type", "id", "sorted", "min", "max", "sum", "any", "all", "map",
    "filter", "iter", "next", "encode", "decode", "lower", "upper", "sub", "match",
    "fullmatch", "search", "findall", "compile", "dumps", "loads", "exists", "open",
})
_LIBRARY_MODULES = frozenset({"np", "numpy", "math", "os", "sys", "re", "json", "logger",
                              "logging", "time", "itertools", "functools", "dataclasses",
                              "typing", "inspect", "copy", "warnings", "pickle", "triton", "tl"})


_BASELESS = frozenset({"object", "Generic", "Protocol"})


def sampling_hook(params: Sequence[Tuple[str, Optional[str]]]) -> bool:
    """A vLLM sampling hook: a function taking `logits` (a tensor, or unannotated) and a
    parameter annotated `SamplingMetadata` (`sample(self, logits, sampling_metadata)`,
    `Sampler.forward`, vLLM-Omni's `prepare_duplex_sampling`).  vLLM's model runner calls them
    with the `[num_reqs, vocab]` logits it computed on the device (a convention of the
    framework, not evidence about the object: the finding says so)."""
    annotations = dict(params)
    return "logits" in annotations and annotations["logits"] in (None, "Tensor") \
        and "SamplingMetadata" in annotations.values()


# The last names of transformers' generation hooks a class may derive from.
PROCESSOR_BASES = ("LogitsProcessor", "LogitsWarper")


def processor_classes(from_transformers: AbstractSet[str],
                      classes: Sequence[Tuple[str, Sequence[str]]]) -> FrozenSet[str]:
    """The names of `classes` (each a name and its bases' dotted names) that derive from a
    transformers logits processor or warper: a base whose last name ends in `PROCESSOR_BASES`
    spelled through a name of `from_transformers` (what the module's imports from
    `transformers` bind), or one of `classes` that is one.  `generate()` calls their
    `__call__(input_ids, scores)` with the model's 2-D scores on the device
    (`values.LOGITS_PROCESSOR_NOTE`).  Other frameworks' processors of the same names (vLLM's
    `LogitsProcessor`, called per sequence with 1-D logits) are not: their import says so.
    The walk (`scope.logits_processor_classes`) and the summary read the same classes."""
    if not from_transformers:
        return frozenset()
    found: Set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, bases in classes:
            if name not in found and any(
                    b in found or b.endswith(PROCESSOR_BASES) and b.split(".")[0] in from_transformers
                    for b in bases):
                found.add(name)
                changed = True
    return frozenset(found)


def processor_scores(function: str, owner: Optional[str], self_name: Optional[str],
                     positional: Sequence[ast.arg], defaults: int,
                     processors: AbstractSet[str]) -> Optional[ast.arg]:
    """The `scores` parameter of `__call__(self, input_ids, scores)` of a logits processor
    (`processor_classes`): the third positional one, without a default; None elsewhere."""
    if function != "__call__" or owner not in processors or self_name is None or len(positional) < 3:
        return None
    return positional[2] if len(positional) - defaults > 2 else None


def _transformers_names(tree: ast.Module) -> FrozenSet[str]:
    """The names the module-level imports bind to `transformers` or to something of it
    (`from transformers import LogitsProcessor`, `import transformers as tf`)."""
    names: Set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 \
                and (node.module or "").split(".")[0] == "transformers":
            names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Import):
            names.update(alias.asname or "transformers" for alias in node.names
                         if alias.name.split(".")[0] == "transformers")
    return frozenset(names)


def _nested_class_bases(tree: ast.Module) -> List[Tuple[str, List[str]]]:
    """The classes of the module and of its classes, at any depth, each with its bases' dotted
    names (`processor_classes`)."""
    out: List[Tuple[str, List[str]]] = []
    todo: List[Sequence[ast.stmt]] = [tree.body]
    while todo:
        for stmt in todo.pop():
            if isinstance(stmt, ast.ClassDef):
                out.append((stmt.name, [ast_dotted(b) or "" for b in stmt.bases]))
                todo.append(stmt.body)
    return out


def _positional_fields(node: ast.ClassDef) -> Tuple[str, ...]:
    """The positional parameters of the `__init__` that `@dataclass` (or `NamedTuple`)
    generates: the annotated class-level names in order, without `ClassVar`s, fields with
    `init=False` or `kw_only=True`, and those after a `KW_ONLY` marker.  Empty when the class
    defines `__init__`, is `kw_only=True`, or has bases whose fields would come first."""
    decorators = [d for d in node.decorator_list if _last_name(d) == "dataclass"]
    bases = [_last_name(b) for b in node.bases]
    named_tuple = bases == ["NamedTuple"]
    if not (decorators or named_tuple) or any(b not in _BASELESS for b in bases if not named_tuple):
        return ()
    if any(isinstance(d, ast.Call) and any(k.arg == "kw_only" and not (isinstance(k.value, ast.Constant)
                                                                          and k.value.value is False)
                                           for k in d.keywords) for d in decorators):
        return ()
    out: List[str] = []
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "__init__":
            return ()
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        head = _last_name(stmt.annotation.value if isinstance(stmt.annotation, ast.Subscript) else stmt.annotation)
        if head == "ClassVar":
            continue
        if head == "KW_ONLY":
            break
        value = stmt.value
        if isinstance(value, ast.Call) and _last_name(value.func) == "field" and any(
                k.arg in ("init", "kw_only") and not (isinstance(k.value, ast.Constant)
                                                      and k.value.value is (k.arg == "init"))
                for k in value.keywords):
            continue  # `field(init=False)`, `field(kw_only=True)`: not a positional parameter
        out.append(stmt.target.id)
    return tuple(out)


def _names_device(name: str) -> bool:
    """A parameter named for a device (`device`, `target_device`): what its call sites pass
    (`"cpu"`, `torch.device("cuda")`) says where `device=device` allocates."""
    return name == "device" or name.endswith("_device")


def _handed_cpu_default(name: str, scope: _Scope) -> bool:
    """`name` is a parameter defaulting to the CPU that the body neither rebinds nor tests
    (`_tested_names`): wherever it is read, it holds what the call passed, or the default
    (`_Builder._argument` hands it on, `_Builder._placed` allocates on it: `cpudefault` terms)."""
    return name in scope.cpu_defaults and name not in scope.tested and name in scope.params \
        and not scope.env.get(name)


def _tested_names(body: Sequence[ast.stmt], names: FrozenSet[str]) -> FrozenSet[str]:
    """Of `names`, those a test in `body` reads (an `if`, `while` or conditional expression's
    test, an `assert`, a `match` subject, a comprehension's `if`, an operand of `and`/`or`),
    nested functions included: code past such a test may run only for some of its values."""
    found: Set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                tests: List[ast.expr] = [node.test]
            elif isinstance(node, ast.comprehension):
                tests = list(node.ifs)
            elif isinstance(node, ast.BoolOp):
                tests = list(node.values)
            elif type(node).__name__ == "Match":
                tests = [getattr(node, "subject")]
            else:
                continue
            for test in tests:
                found.update(n.id for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in names)
    return frozenset(found)


def shape_unpacking(body: Sequence[ast.stmt], params: Mapping[str, Term]) -> Dict[str, Tuple[int, int]]:
    """The parameters (of an open `param` term) whose sizes a statement of the body's own top
    level unpacks, `B, T, N = x.size()` or `= x.shape` with no starred target and `x` not
    among the targets, with the rank that proves and the statement's last line (the first such
    statement of each).  Unpacking raises unless there are exactly that many sizes, and a
    top-level statement runs before every later line of the body, so a read of `x` there is of
    a tensor of that rank wherever the caller's rank is not known (the walk's
    `scope.shape_unpacked`).  `_Builder._name` reads only parameters the body never rebinds."""
    found: Dict[str, Tuple[int, int]] = {}
    for stmt in body:
        asserted = _asserted_rank(stmt.test) if isinstance(stmt, ast.Assert) else None
        if asserted is not None:
            # `assert logits.dim() == 1`: past it, the parameter has that many dimensions (the
            # walk's `scope.rank_checks`).
            name, rank = asserted
            term = params.get(name)
            if term is not None and term[0] == "param" and name not in found:
                found[name] = (rank, stmt.end_lineno or stmt.lineno)
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], (ast.Tuple, ast.List))):
            continue
        elements = stmt.targets[0].elts
        if not elements or any(isinstance(e, ast.Starred) for e in elements):
            continue
        value = _sized(stmt.value)
        if not isinstance(value, ast.Name) or value.id in found:
            continue
        term = params.get(value.id)
        if term is None or term[0] != "param" or any(_is_name(e, value.id) for e in elements):
            continue
        found[value.id] = (len(elements), stmt.end_lineno or stmt.lineno)
    return found


def _asserted_rank(test: ast.expr) -> Optional[Tuple[str, int]]:
    """`x.dim() == 1`, `x.ndimension() == 1`, `x.ndim == 1`, `len(x.shape) == 1` (either side):
    the name and the rank an `assert` of it proves (one comparison only; the walk's
    `scope.rank_checks` reads `and`s and branches too)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    for measured, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if not (isinstance(other, ast.Constant) and type(other.value) is int and other.value >= 0):
            continue
        if isinstance(measured, ast.Call) and not measured.args and not measured.keywords \
                and isinstance(measured.func, ast.Attribute) and measured.func.attr in ("dim", "ndimension"):
            measured = measured.func.value
        elif isinstance(measured, ast.Attribute) and measured.attr == "ndim":
            measured = measured.value
        elif isinstance(measured, ast.Call) and _is_name(measured.func, "len") and len(measured.args) == 1 \
                and not measured.keywords:
            sized = _sized(measured.args[0])
            if sized is None:
                continue
            measured = sized
        else:
            continue
        if isinstance(measured, ast.Name):
            return measured.id, other.value
    return None


def _sized(node: ast.expr) -> Optional[ast.expr]:
    """`x` of `x.size()` or `x.shape` (the sizes of `x`), else None."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords \
            and isinstance(node.func, ast.Attribute) and node.func.attr == "size":
        return node.func.value
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    return None


def _cpu_defaults(args: ast.arguments) -> FrozenSet[str]:
    """Parameters defaulting to the CPU (`None` is the default device, the CPU unless set)."""
    positional = list(args.posonlyargs) + list(args.args)
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) if args.defaults else []
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return frozenset(a.arg for a, d in pairs if _is_cpu(d))


def _named_buffers(own: Sequence[ast.stmt], self_name: str, env: Dict[str, List[ast.expr]]) -> Dict[str, ast.expr]:
    """`_Scope.named_buffers`: of the body's own statements `self.register_buffer(name, t)`
    (positional) whose `name` is a local the body binds once (torchrec's `buffer_name = "_mch_"
    + metadata_name` in a loop) and registers under once, each name's `t`: `getattr(self,
    name)` then reads the buffer just registered (a name bound twice, or registered twice,
    may name another)."""
    found: Dict[str, List[ast.expr]] = {}
    for stmt in own:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "register_buffer" \
                and _is_name(call.func.value, self_name) and len(call.args) >= 2 and not call.keywords \
                and isinstance(call.args[0], ast.Name) and not _is_none(call.args[1]):
            found.setdefault(call.args[0].id, []).append(call.args[1])
    return {name: values[0] for name, values in found.items() if len(values) == 1 and len(env.get(name, ())) == 1}


def _registered_buffer(stmt: ast.stmt, self_name: str, scope: "_Scope") -> Optional[Tuple[str, ast.expr]]:
    """`self.register_buffer("name", value)`: `self.name` is that tensor.  The name may be a
    local bound once, to a string literal (`NAME = "enabled"`, then `register_buffer(NAME, t)`);
    a parameter's value is the caller's."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "register_buffer" and _is_name(call.func.value, self_name)):
        return None
    args = list(call.args) + [k.value for k in call.keywords if k.arg in ("name", "tensor")]
    if len(call.args) < 2 or _is_none(args[1]):
        return None
    name = args[0]
    if isinstance(name, ast.Name) and name.id not in scope.params:
        bound = scope.env.get(name.id) or ()
        name = bound[0] if len(bound) == 1 else name
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return name.value, args[1]
    return None


# Decorators that hand back the function itself, or a wrapper that calls it with the call's own
# arguments: a call of the decorated name binds as a call of the `def` would.  By last name
# (`functools.lru_cache`, `torch.no_grad()`, `torch.inference_mode()`); any other decorator
# (`triton.jit`, `click.option`, a project's own) may change what a call may pass.
_SIGNATURE_KEEPING = frozenset({
    "staticmethod", "classmethod", "abstractmethod", "lru_cache", "cache", "wraps",
    "no_grad", "inference_mode", "enable_grad", "contextmanager", "asynccontextmanager",
    "override", "final",
})


def _arity(args: ast.arguments, decorators: AbstractSet[str]) -> Tuple[int, ...]:
    """`FunctionSummary.arity`: how many positional arguments a call may pass (positional-only
    and ordinary parameters, the bound object's included) and whether `*args` / `**kwargs`
    take more; () when a decorator may change that."""
    if not decorators <= _SIGNATURE_KEEPING:
        return ()
    return (len(args.posonlyargs) + len(args.args), int(args.vararg is not None), int(args.kwarg is not None))


def _default_terms(args: ast.arguments) -> Tuple[Tuple[str, Term], ...]:
    """`FunctionSummary.default_terms`: each parameter whose default is `Name.attr`, with the term
    of that read (`("attr", ("global", "Kind"), "NORMAL", line)`, as a body reads a module-level
    name's attribute).  The default is evaluated where the `def` is; a module-level name there is
    what the resolver looks up (it takes only a class the project defines once)."""
    return tuple((a.arg, ("attr", ("global", d.value.id), d.attr, d.lineno)) for a, d in _default_pairs(args)
                 if isinstance(d, ast.Attribute) and isinstance(d.value, ast.Name))


def _with_defaults(args: ast.arguments, ints: bool = False) -> Tuple[str, ...]:
    """The parameters with a default (`ints`: an int literal one, `n_ctx=512`)."""
    return tuple(a.arg for a, d in _default_pairs(args) if not ints or _int_literal(d))


def _default_pairs(args: ast.arguments) -> List[Tuple[ast.arg, ast.expr]]:
    """Each parameter with a default, and the default: the last positional ones, then the
    keyword-only ones that have one."""
    positional = list(args.posonlyargs) + list(args.args)
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) if args.defaults else []
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]


def _int_literal(node: Optional[ast.expr]) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


# The largest term of a `device=<name>` a `dev` term keeps (a parameter, a place, a join of two).
_DEVICE_NAME_LIMIT = 10
# An object store's value (`acc.dp_size = self.world_size // (acc.pp_size * acc.cp_size)`): stores
# are few (`obj.attr = v` outside `obj`'s class), and configuration arithmetic over several
# fields is what they hold; at `_SMALL` the fourth operand of such a product was cut.
_STORE_SMALL = 48
_SMALL = 20  # 16 lost `x = join(alloc, self.obj.f(x))` in loops; 20 keeps it for ~2% more index (28 kept FlagAI's three-branch model outputs, but took the resolve-again peak past 250 MB and let a config product's store unknown veomni's step count)


def _small(term: Term, limit: int = _SMALL) -> Term:
    """An argument's term, or unknown when it is too deep to be worth carrying; an operator's
    term keeps the operands that fit (`_shrunk_same`), and an allocation on another tensor's
    device (`on`) or a reshape (`shape`) keeps its own facts around a cut of what it is built
    on (a cut that leaves nothing is unknown, as a term too deep always was): `torch.zeros(...,
    device=x.device)` where `x` came out of a returned tuple's position is still an allocation,
    not an unknown, when `x`'s term is deep."""
    if not _larger_than(term, limit):
        return term
    if _holds(term, _dev_name_part):
        # An allocation's `device=<name>` (`dev`'s sixth part) refines it: dropped before
        # anything else is cut, so that a term carries what it carried without it.
        term = _without_dev_names(term)
        if not _larger_than(term, limit):
            return term
    if _holds(term, _advanced_part):
        # Likewise an advanced index's positions (a fourth part of `sub`): a rank not known.
        term = _without_advanced(term)
        if not _larger_than(term, limit):
            return term
    if term[0] == "keep":
        term = ("same", term[1], None)  # cut to size, it keeps the place and loses the rank
    if term[0] == "cat":
        term = ("same", term[1][0], None)  # likewise: where its first input is
    if term[0] == "same":
        return _shrunk_same(term, limit)
    if term[0] in ("on", "shape"):
        # ("on", base, rank, line, how, integer) / ("shape", base, rank): the base cut to what
        # is left once the term's own parts are counted.
        base = _small(term[1], limit - _size(term) + _size(term[1]))
        return UNK if base == UNK else (term[0], base, *term[2:])
    if term[0] == "move" and _size(term) - _size(term[1]) + _size(UNK) <= limit:
        # ("move", receiver, line, how): `.to("cuda")`, `.cuda()` put the result on the
        # accelerator whatever the receiver is, which only gives its rank and dtype: a receiver
        # cut to nothing leaves a device tensor of a rank not known, not an unknown.
        base = _small(term[1], limit - _size(term) + _size(term[1]))
        return (term[0], base, *term[2:])
    return UNK


def _shrunk_same(term: Term, limit: int = _SMALL) -> Term:
    """A `same` term (an operator or a device-keeping op: the result is where its first tensor
    operand is) cut to `_SMALL`: nested operators flattened in order, Python numbers dropped
    (they decide nothing where another operand is open), the first operands kept while they
    fit and the rest replaced by one unknown.  Dropping an operand only loses a tensor the
    resolver might have found, and the unknown keeps the rest from reading as a number."""
    sides: List[Term] = []
    stack: List[Any] = list(reversed(term[1:]))
    while stack:
        side = stack.pop()
        if side is None or side == SCALAR:
            continue
        if side[0] == "same":
            stack.extend(reversed(side[1:]))
        elif side[0] == "keep":
            stack.append(side[1])  # its third part, where present, is a flag
        elif side not in sides:
            sides.append(side)
    kept: List[Term] = []
    used = 1 + _size(UNK)  # the tag, and room for the unknown that stands for the rest
    for side in sides:
        cost = _size(side)
        if side != UNK and used + cost <= limit:
            kept.append(side)
            used += cost
    if not kept:
        return UNK
    if len(kept) < len(sides):
        kept.append(UNK)
    return ("same", *kept)


def _size(term: Any) -> int:
    if isinstance(term, tuple):
        return 1 + sum(_size(t) for t in term)
    return 1


def _holds(term: Any, part: Callable[[Tuple[Any, ...]], bool]) -> bool:
    """Whether `term` or a term inside it is a `part` (`_dev_name_part`, `_advanced_part`)."""
    if type(term) is not tuple:
        return False
    return part(term) or any(_holds(t, part) for t in term if type(t) is tuple)


def _dev_name_part(term: Tuple[Any, ...]) -> bool:
    """A `dev` term with its sixth part (the `device=<name>`'s term)."""
    return len(term) == 6 and term[0] == "dev"


def _advanced_part(term: Tuple[Any, ...]) -> bool:
    """A `sub` term with an `advanced` part (`_Builder.term`'s subscripts)."""
    return len(term) == 4 and term[0] == "sub" and type(term[3]) is tuple


def _without_advanced(term: Any) -> Any:
    """`term` with every `sub` term's `advanced` part dropped (`_small`)."""
    if type(term) is not tuple:
        return term
    if _advanced_part(term):
        return ("sub", _without_advanced(term[1]), term[2])
    return tuple(_without_advanced(t) for t in term)


def _without_dev_names(term: Any) -> Any:
    """`term` with every `dev` term cut to its first five parts (`_small`)."""
    if type(term) is not tuple:
        return term
    if _dev_name_part(term):
        # A parameter defaulting to the CPU (`_Builder._placed`) is no request for an
        # accelerator: without it, an allocation of unknown place.
        return ("tensor", term[1]) if term[5][0] == "cpudefault" else term[:5]
    return tuple(_without_dev_names(t) for t in term)


def _larger_than(term: Any, limit: int) -> bool:
    """`_size(term) > limit`, counting no further than the limit (terms are often large)."""
    if type(term) is tuple and tuple not in map(type, term):
        return len(term) + 1 > limit  # a flat term (most): its size, counted in C
    count = 0
    stack = [term]
    pop, extend = stack.pop, stack.extend
    while stack:
        count += 1
        if count > limit:
            return True
        item = pop()
        if type(item) is tuple:  # terms are built of plain tuples
            extend(item)
    return False


# At most this many string keys of one dict display are kept by key (`_keyed`).
_MAX_KEYS = 32


# Marks the one-key display `_stored` binds for `d["buf"] = v` (kept by key: `_keyed`).
_STORED_KEY = "_h2d_stored_key"


def _keyed(held: Term, keys: Sequence[Optional[str]], values: Sequence[Term], stored: bool = False) -> Term:
    """A dict display's list term (`held`: what any key holds), with each constant string
    key's own term where every key is one and the values differ (`{"buf": t, "n": 3}`): a
    caller's `d["buf"]` reads `t`, not the join of `t` and a number.  A display of one kind
    of value (`{"a": 1}`), or with another key, stays a plain list term; a `stored` one-key
    display (`d["buf"] = v`) is kept by key, so that only that key's value joins `v`."""
    if not keys or None in keys or len(keys) > _MAX_KEYS or (len(set(values)) < 2 and not stored):
        return held
    return held + (tuple((k, t) for k, t in zip(keys, values)),)


def _shrunk_keyed(term: Term) -> Term:
    """A dict term with string keys too large to carry (`_keyed`): each key's term cut to
    size (`_small`), what any other key holds unknown; any other term: unknown."""
    if term[0] != "list" or len(term) < 3:
        return UNK
    shrunk = ("list", UNK, tuple((k, _small(t)) for k, t in term[2]))
    return UNK if _larger_than(shrunk, 200) else shrunk


def _list_element(term: Term) -> Optional[Term]:
    """What a list term holds (`("list", e)`), also across the joined bindings of one name
    (`xs = []` then `xs.append(i)`: the empty display adds nothing); None when not a list or
    nothing is known to be in it."""
    parts = term[1] if term[0] == "join" else (term,)
    if not all(isinstance(p, tuple) and p and p[0] == "list" for p in parts):
        return None
    held = _join([p[1] for p in parts])
    return None if held == ("none",) else held


# Terms whose last part is the line of a call or of an attribute read (evidence only), and
# terms that hold one in their second part and keep everything else (`_unlined`).
_LINED_LAST = frozenset({"attr", "mcall"})
_HOLDING = frozenset({"sub", "keep", "item", "pair", "shape", "same"})


def _unlined(term: Term) -> Term:
    """`term` less the lines of its calls and attribute reads: two terms equal but for those
    are one value to the resolver (`_join`).  `("call", f, line)` → `("call", f)`, a method's
    return `("ret", owner, m, line)` → `("ret", owner, m)`; `attr` and `mcall` lose their last
    part, and a subscript, a kept place, a tuple's item, a pair, a reshape or an operator is
    read through (their other parts are ranks, positions and keys, kept)."""
    if not isinstance(term, tuple) or not term:
        return term
    tag = term[0]
    if tag == "call" and len(term) == 3:
        return ("call", term[1])
    if tag == "ret" and len(term) > 3:
        return ("ret", term[1], term[2])
    if tag in _LINED_LAST and len(term) == 4:
        return (tag, _unlined(term[1]), term[2])
    if tag in _HOLDING:
        return (tag,) + tuple(_unlined(part) if isinstance(part, tuple) else part for part in term[1:])
    return term


def _join(terms: Sequence[Term]) -> Term:
    unique: List[Term] = []
    seen: Set[Term] = set()
    for t in terms:
        # `self.f(a)` at two lines, or `out = model(...)` then `out.logits` in each of two
        # branches: one value (the lines of the first name it in evidence; the resolver reads
        # a call's or a field's line for nothing else), so that the join stays small enough to
        # travel as a call's argument (`_small`).
        key = _unlined(t)
        if key in seen or t == ("none",):
            continue
        seen.add(key)
        unique.append(t)
    if not unique:
        return ("none",)
    if EMPTY_DISPLAY in unique and any(len(t) == 2 and t[0] == "list" and t != EMPTY_DISPLAY for t in unique):
        # `xs = []`, then `xs.append(x)`: what the list holds is what was appended; the empty
        # display beside it adds nothing the resolver reads (a join keeps the other's
        # elements), and a term too large to carry into a call's argument loses them all.
        unique.remove(EMPTY_DISPLAY)
    if len(unique) == 1:
        return unique[0]
    return ("join", tuple(unique))


# Typing's qualifiers: `ClassVar[X]`, `Final[X]`, `Annotated[X, meta]` declare an X (the
# qualifier says how it may be bound or what metadata rides along, not another type).
ANNOTATION_QUALIFIERS = frozenset({"ClassVar", "Final", "Annotated"})


def annotation_term(node: Optional[ast.expr]) -> Term:
    """What an annotation declares: a tensor, a scalar, a container of X, an instance of X."""
    if node is None:
        return UNK
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parsed = _unquoted(node)
        return annotation_term(parsed) if parsed is not None else UNK
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not _is_none(s)]
        return annotation_term(sides[0]) if len(sides) == 1 else _one_or_many(sides)
    if isinstance(node, ast.Subscript):
        head = _last_name(node.value)
        inner = node.slice
        args = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if (head == "Optional" or head in ANNOTATION_QUALIFIERS) and args:
            return annotation_term(args[0])  # (`ClassVar[Optional[int]]`: an int)
        if head == "Union":
            rest = [a for a in args if not _is_none(a)]
            return annotation_term(rest[0]) if len(rest) == 1 else _one_or_many(rest)
        if head in ("list", "List", "Sequence", "tuple", "Tuple", "MutableSequence", "Iterable"):
            if head in ("tuple", "Tuple") and len(args) == 2 and isinstance(args[1], ast.Constant) \
                    and args[1].value is Ellipsis:
                return ("list", annotation_term(args[0]))
            if head in ("tuple", "Tuple"):
                return ("list", _join([annotation_term(a) for a in args]))
            return ("list", annotation_term(args[0]))
        if head in ("dict", "Dict", "Mapping", "MutableMapping") and len(args) == 2:
            return ("list", annotation_term(args[1]))
        return OTHER
    name = ast_dotted(node)
    if name is None:
        return UNK
    last = name.split(".")[-1]
    if name in ("int", "float", "bool"):
        return SCALAR
    if last in ("Tensor", "Parameter") or last in LEGACY_TENSOR_TYPES:
        return ("tensor", None)
    if name in ("str", "bytes", "list", "dict", "tuple", "set", "None", "Any", "object"):
        return OTHER if name != "Any" else UNK
    if last == "device":
        return OTHER
    return ("inst", last)


def _legacy_rank(args: Sequence[ast.expr]) -> Optional[int]:
    """The rank of `torch.LongTensor(*args)`: a list or tuple display's nesting (the data),
    several arguments' count (sizes); else unknown (one name may be a size or data)."""
    if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        return _data_rank(args[0])
    if len(args) > 1 and not any(isinstance(a, ast.Starred) for a in args):
        return len(args)
    return None


def _checked_instance(choice: ast.IfExp, side: ast.expr) -> Optional[Term]:
    """`x if isinstance(x, Pool) else Pool.load(x)`: the side the test's truth selects is the
    name the test checked, so an instance of that class (`("inst", "Pool")`), or a number for
    `int` / `float` / `bool`; None for any other side or test (a tuple of classes, another
    name, `Tensor`: the name's own term says more about a tensor)."""
    test, holds = choice.test, side is choice.body
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, holds = test.operand, not holds
    if not (holds and isinstance(side, ast.Name) and isinstance(test, ast.Call) and _is_name(test.func, "isinstance")
            and len(test.args) == 2 and not test.keywords and _is_name(test.args[0], side.id)):
        return None
    term = annotation_term(test.args[1])
    return term if term[0] == "inst" or term == SCALAR else None


def _unquoted(node: ast.Constant) -> Optional[ast.expr]:
    """The expression a string annotation holds (`"Pool"`, `"Optional[Pool]"`), or None where
    it holds none (a string that does not parse, or nests past the parser's limit)."""
    try:
        return ast.parse(str(node.value), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def class_annotation(node: Optional[ast.expr]) -> Optional[str]:
    """The class an annotation declares a class object of: `Type[C]`, `type[C]`, `Type["C"]`,
    also under `Optional[...]` or `... | None` (a call of None raises, so a call of the
    parameter builds a `C`).  None for anything else, `Type[Any]`, `type[nn.Module]` and `type`
    alone included."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return class_annotation(_unquoted(node))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not _is_none(s)]
        return class_annotation(sides[0]) if len(sides) == 1 else None
    if not isinstance(node, ast.Subscript):
        return None
    head = _last_name(node.value)
    inner = node.slice
    if head in ("Optional", "Union"):
        args = [a for a in (inner.elts if isinstance(inner, ast.Tuple) else [inner]) if not _is_none(a)]
        return class_annotation(args[0]) if len(args) == 1 else None
    if head not in ("Type", "type"):
        return None
    if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
        unquoted = _unquoted(inner)
        if unquoted is None:
            return None
        inner = unquoted
    name = ast_dotted(inner)
    if name is None or name.startswith(("nn.", "torch.")):
        return None  # `type[nn.Module]`: any module class, none the project defines by that name
    last = name.split(".")[-1]
    return None if last in ("Any", "object", "type") else last


def _one_or_many(members: Sequence[ast.expr]) -> Term:
    """A union of numbers and containers (`int | list[int]`, "one or many"): the join of its
    members, so that what iterating or indexing it yields is known (a number cannot be
    iterated or indexed: a loop or index that runs reads a container's element).  Any other
    union (`Tensor | int`) declares nothing (UNK), as before."""
    terms = [annotation_term(m) for m in members]
    if all(t == SCALAR or t[0] == "list" for t in terms) and any(t[0] == "list" for t in terms):
        return _join(terms)
    return UNK


def _factory_rank(node: ast.Call, name: str) -> Optional[int]:
    if name in _ONE_D or name in FFT_FACTORIES:
        return 1
    if name == "eye":
        return 2
    if name in ("randint", "full", "empty_strided") or name in _LIKE or name in _DATA:
        if name == "full" and node.args:
            return _size_rank(node.args[0])
        if name in _DATA and node.args:
            return _data_rank(node.args[0])
        return None
    size = _keyword(node, "size")
    if size is not None:
        return _size_rank(size)
    positional = node.args
    if any(isinstance(a, ast.Starred) for a in positional) or not positional:
        return None
    if len(positional) == 1:
        return _size_rank(positional[0])
    # Several positional sizes: each is an int (`zeros(*size: int)`), whatever its value.
    return len(positional)


# Operators no sequence defines (`expressions._NUMBER_ONLY_OPERATORS`): a size made with one is
# a number or a one-element tensor (or `torch.zeros` raises), one dimension.
_NUMBER_ONLY_OPERATORS = (ast.Sub, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift, ast.Div)


def _size_rank(node: ast.expr) -> Optional[int]:
    if isinstance(node, (ast.Tuple, ast.List)):
        return None if any(isinstance(e, ast.Starred) for e in node.elts) else len(node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return 1
    if isinstance(node, ast.BinOp) and isinstance(node.op, _NUMBER_ONLY_OPERATORS) \
            or isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        return 1
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and any(
            isinstance(side, ast.Constant) and type(side.value) is int for side in (node.left, node.right)):
        return 1  # `n + 1`: a sequence plus a number raises (the walk also reads a name known a number)
    return None


def _new_rank(node: ast.Call, method: str) -> Optional[int]:
    """The rank of `t.new_zeros(sizes)` and its kin (the walk's `_new_tensor`): from the sizes,
    `new_full`'s first argument, `new_tensor`'s data; the legacy `t.new(...)` takes several
    sizes, one int (1-D) or data."""
    if any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if method == "new_tensor":
        return _data_rank(node.args[0]) if node.args else None
    if method == "new_full":
        first = node.args[0] if node.args else _keyword(node, "size")
        return _size_rank(first) if isinstance(first, (ast.Tuple, ast.List)) else None
    if method == "new":
        if len(node.args) > 1:
            return len(node.args)
        if len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
            return _data_rank(node.args[0])
        return _size_rank(node.args[0]) if node.args else None
    return _factory_rank(node, "zeros")


def _data_rank(node: ast.expr) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return 0
    if isinstance(node, (ast.List, ast.Tuple)):
        if not node.elts:
            return 1
        inner = _data_rank(node.elts[0])
        return None if inner is None else inner + 1
    return None


def _keyword(call: ast.Call, name: str) -> Optional[ast.expr]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _applied_method(call: ast.Call, self_name: str) -> Optional[str]:
    """`m` of `self.apply(self.m)`: `nn.Module.apply` calls `m` on every submodule and on the
    module itself, there and then, so the method runs where the call does (a constructor's
    `self.apply(self._init_weights)` runs it while the module is built)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "apply" and len(call.args) == 1
            and not call.keywords):
        return None
    handed = call.args[0]
    if isinstance(handed, ast.Attribute) and _is_name(handed.value, self_name):
        return handed.attr
    return None


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_cpu(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or (isinstance(node.value, str) and node.value.split(":")[0] == "cpu")
    if isinstance(node, ast.Call) and _last_name(node.func) == "device" and node.args:
        return _is_cpu(node.args[0])
    return False


def _is_dtype(node: ast.expr, scope: _Scope) -> bool:
    name = ast_dotted(node) or ""
    last = name.split(".")[-1]
    return last.endswith("dtype") or (name.split(".")[0] in scope.torch and "." in name
                                      and last not in ("device",) and not last.startswith("device"))


def _names_a_device(node: ast.expr) -> bool:
    name = (ast_dotted(node) or "").split(".")[-1]
    return "device" in name or name == "dev" or name.endswith("_dev")


def _accelerator_move(call: ast.Call, scope: _Scope) -> Optional[str]:
    """`x.cuda(...)`, or `x.to(d)` / `x.to(device=d)` with `d` an accelerator the call itself
    names (`"cuda"`, `"cuda:0"`, `torch.device("cuda")`, `torch.cuda.current_device()`): the call
    as evidence shows it, else None.  A `.to(dev)` of a parameter or name proves nothing."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr == "cuda":
        return ".cuda()"
    if func.attr != "to":
        return None
    target = _to_target(call, scope, ("device",))
    if target is None:
        return None
    if isinstance(target, ast.Constant) and isinstance(target.value, str) \
            and place_term(target.value) == ACCELERATOR_PLACE:
        return f'.to("{target.value}")'
    if isinstance(target, ast.Call) and _is_torch(target.func, "current_device", scope) \
            and (ast_dotted(target.func) or "").split(".")[-2:-1] == ["cuda"]:
        return ".to(torch.cuda.current_device())"
    return None


def _to_target(call: ast.Call, scope: _Scope, keywords: Tuple[str, ...]) -> Optional[ast.expr]:
    """What `x.to(...)` names: its first argument, else the first of `keywords` given; the
    string inside `torch.device("...")`."""
    target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in keywords), None)
    if isinstance(target, ast.Call) and _is_torch_device(target.func, scope) and target.args:
        target = target.args[0]
    return target


def _other_move(call: ast.Call, scope: _Scope) -> Optional[Tuple[str, Term]]:
    """`x.cpu()`, `x.to("cpu")` / `x.to(device="cpu")` / `x.to(torch.device("cpu"))` (the CPU
    place), `x.to(torch.float16)` (a dtype: `OTHER`): the call as evidence shows it and the
    place it names, else None.  A `ModuleMove` of such a place moves nothing to the
    accelerator; it says that the project moves `x` itself (`_Resolver._named_by_moves`)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr == "cpu":
        return (".cpu()", CPU_PLACE) if not call.args and not call.keywords else None
    if func.attr != "to" or len(call.args) > 1:
        return None
    target = _to_target(call, scope, ("device", "dtype"))
    if target is None:
        return None
    if isinstance(target, ast.Constant) and isinstance(target.value, str) and place_term(target.value) == CPU_PLACE:
        return f'.to("{target.value}")', CPU_PLACE
    dotted = (ast_dotted(target) or "").split(".")
    if len(dotted) == 2 and dotted[0] in scope.torch and dotted[1] in TORCH_DTYPE_NAMES:
        return f".to({'.'.join(dotted)})", OTHER
    return None


def _device_param(spec: ast.expr, scope: _Scope) -> Optional[Term]:
    """The parameter term of `spec` when it names a parameter of the function being read
    (the resolver joins what its call sites pass), else None."""
    if isinstance(spec, ast.Name) and spec.id in scope.params and scope.function is not None \
            and spec.id not in scope.env:
        return ("param", scope.function, spec.id, scope.owner)
    return None


def _device_move(call: ast.Call, scope: _Scope) -> Optional[ast.expr]:
    """`obj.to(device)` / `obj.to(x.device)` / `obj.to(device=d)` with `d` a name (or attribute)
    named like a device, or a tensor's `.device`, and no CPU default (`def f(device=None)`): the
    place expression, else None.  Where that place is, the resolver reads (a module moved there
    carries its buffers and parameters, as a factory's `device=d` allocates there); a dtype, a
    string or a call is no such move."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "to" or len(call.args) > 1:
        return None
    target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    if not isinstance(target, (ast.Name, ast.Attribute)) or isinstance(target, ast.Name) and target.id in scope.cpu_defaults:
        return None
    if isinstance(target, ast.Attribute) and target.attr == "device" or _names_a_device(target):
        return target
    return None


def _is_meta(node: ast.expr) -> bool:
    """`"meta"` or `torch.device("meta")`: shapes without storage."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.split(":")[0] == "meta"
    if isinstance(node, ast.Call) and _last_name(node.func) == "device" and node.args:
        return _is_meta(node.args[0])
    return False


def _is_torch_device(func: ast.expr, scope: _Scope) -> bool:
    """`torch.device` itself (`torch.cuda.device(i)` picks a GPU, it sets no default device),
    or a name `from torch import device` binds (`_Scope.devices`) that the function does not."""
    if isinstance(func, ast.Name):
        return func.id in scope.devices and func.id not in scope.params \
            and not (scope.function is not None and scope.env.get(func.id))
    parts = (ast_dotted(func) or "").split(".")
    return len(parts) == 2 and parts[0] in scope.torch and parts[1] == "device"


def _calls_outside_lambdas(stmt: ast.stmt) -> Iterator[ast.Call]:
    """The calls in a simple statement's expressions (or a compound one's header), lambdas'
    bodies excluded."""
    stack: List[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Lambda, ast.stmt)) and child is not stmt:
                continue  # a lambda runs later; nested statements are listed on their own
            stack.append(child)


def _is_torch(func: ast.expr, name: str, scope: _Scope) -> bool:
    """`torch.NAME` / `torch.x.NAME` (an alias of `torch` first).  Asked of every call
    statement (`torch.set_default_device`): anything but an attribute `NAME` is answered
    before the dotted name is built."""
    if not (isinstance(func, ast.Attribute) and func.attr == name):
        return False
    dotted = ast_dotted(func) or ""
    parts = dotted.split(".")
    return len(parts) >= 2 and parts[0] in scope.torch and parts[-1] == name


def ast_dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for an ast Name/Attribute chain, None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = ast_dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _rooted_at(node: ast.expr, name: str) -> bool:
    """`node` is the name `name` or an attribute chain of it (`self`, `self.a.b`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return _is_name(node, name)


# How a class's bases name `torch.nn.Module` when spelled through `nn` (`TORCH_MODULE_BASE`).
TORCH_MODULE_BASE = "nn.Module"

# The classes of `torch.nn` that are no `nn.Module`: a subclass of any other class spelled
# through `torch.nn` (`nn.Linear`, `nn.Sequential`, `nn.modules.loss._Loss`) is a module.
_NN_NON_MODULES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"})


def _base_name(node: ast.expr) -> str:
    """A base class by its last name (`layers.Head` → `Head`, as annotations name classes), but
    a class of `torch.nn` spelled through `nn` or `torch.nn` (`nn.Module`, `nn.Linear`,
    `torch.nn.Sequential`, `nn.modules.loss._Loss`) or `torch.jit.ScriptModule` as
    `TORCH_MODULE_BASE`: each of them is an `nn.Module` (PyTorch's own class hierarchy), and a
    project that defines a class `Module` or `Linear` of its own (refiners' `fl.Module`) is not
    every subclass's base."""
    dotted = ast_dotted(node.func if isinstance(node, ast.Call) else node) or ""
    parts = dotted.split(".")
    last = parts[-1]
    in_nn = len(parts) >= 2 and (parts[0] == "nn" or parts[:2] == ["torch", "nn"])
    if in_nn and (last[:1].isupper() or last.startswith("_")) and last not in _NN_NON_MODULES:
        return TORCH_MODULE_BASE
    if parts[-2:] == ["jit", "ScriptModule"]:
        return TORCH_MODULE_BASE
    return _last_name(node)


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    name = ast_dotted(node) or ""
    return name.split(".")[-1]


_BUILTIN_NAMES = frozenset(dir(builtins))


def _unbound_here(name: str, scope: _Scope, imported: AbstractSet[str]) -> bool:
    """`name` is not a parameter or a local of the function being read, nor of one that
    encloses it: a module-level or imported name (at module level, a name the module binds
    by an import only: `imported`)."""
    if name in scope.params or name in scope.enclosing or name == scope.self_name:
        return False
    return not scope.env.get(name) or scope.function is None and name in imported


def _assignment(stmt: ast.stmt) -> Optional[Tuple[List[ast.expr], ast.expr]]:
    """The targets and the value of an assignment that binds a value (`x = y = v`, `x: T = v`);
    None for any other statement (an annotation without a value binds nothing)."""
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets), stmt.value
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [stmt.target], stmt.value
    return None


def _pairs(target: ast.expr, value: Optional[ast.expr],
           positions: bool = False) -> List[Tuple[ast.expr, Optional[ast.expr]]]:
    """(target, value) pairs of an assignment, element-wise for displays of the same length;
    with `positions`, `a, b = f(...)` pairs each name with its position of what the call
    returns (`_ITEM_OF`: read only where the callee returns tuple displays)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts):
            out: List[Tuple[ast.expr, Optional[ast.expr]]] = []
            for t, v in zip(target.elts, value.elts):
                out.extend(_pairs(t, v))
            return out
        if positions and isinstance(value, ast.Call) and len(target.elts) > 1 \
                and all(isinstance(t, ast.Name) or isinstance(t, ast.Starred) and isinstance(t.value, ast.Name)
                        for t in target.elts):
            # `a, *rest = f(...)`: the names before a starred one are positions of the value too;
            # the starred name and those after it are not known.
            starred = next((i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)), len(target.elts))
            return [(t, ast.copy_location(ast.Call(func=ast.Name(id=_ITEM_OF, ctx=ast.Load()),
                                                   args=[value, ast.Constant(value=i)], keywords=[]), value))
                    if i < starred else (t.value if isinstance(t, ast.Starred) else t, None)
                    for i, t in enumerate(target.elts)]
        return [(t, None) for t in target.elts]
    return [(target, value)]


# Statements without nested blocks (no `body`, `orelse`, `finalbody`, `handlers`, `cases`).
_SIMPLE_STATEMENTS = SIMPLE_STATEMENTS
# The statements in which `_Builder.function` may find a returned value (`return`), a field
# of the method's class (`self.x = v`, `self.x += v`, `self.register_buffer(...)`) or a store
# into another object (`obj.x = v`); a compound statement's header holds none of them (but
# for a classmethod's `cls(...)`, `_Builder._self_fields`).  Skipping the others without
# asking saved `_at` and the two look-ups for about a third of a body's statements.
_FACT_STATEMENTS = frozenset({ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _own_statements(body: Sequence[ast.stmt]) -> List[ast.stmt]:
    """Statements of a body, nested blocks included, nested definitions excluded."""
    out: List[ast.stmt] = []
    stack = list(reversed(body))
    simple = _SIMPLE_STATEMENTS
    while stack:
        stmt = stack.pop()
        if type(stmt) in simple:
            out.append(stmt)
            continue
        if isinstance(stmt, _DEFINITIONS):
            continue
        out.append(stmt)
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                stack.extend(reversed(inner))
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(reversed(case.body))
    return out


def _collect_env(body: Sequence[ast.stmt], env: Dict[str, List[ast.expr]],
                 own: Optional[Sequence[ast.stmt]] = None, bound_at: Optional[Dict[int, int]] = None) -> None:
    """Every value bound to a plain name in this body (not nested definitions); `own`: the
    body's `_own_statements` when the caller has them; `bound_at`, where given, gets the
    statement (by id) that bound each value (by id), so that a read can tell which reach it."""
    declared: Set[str] = set()  # annotated names: what they hold is what they declare
    inert = _BINDS_NOTHING
    binder = _Binder(env, bound_at)
    for stmt in _own_statements(body) if own is None else own:
        if type(stmt) in inert:
            continue
        binder.stmt_id = id(stmt)
        _collect_statement(stmt, env, declared, binder)


class _Binder:
    """Where `_collect_statement` adds a value bound to a name: `env`, and with `bound_at`
    the statement that bound it (by id), noted as the value is added.  (It was found after
    the statement, by the names `_bound_names` said it might bind and their lists' lengths
    before and after: a walk of every `self.x = ...` target and two dicts a statement, ~5 %
    of the summaries' CPU.)"""

    __slots__ = ("bound_at", "env", "stmt_id")

    def __init__(self, env: Dict[str, List[ast.expr]], bound_at: Optional[Dict[int, int]]) -> None:
        self.env = env
        self.bound_at = bound_at
        self.stmt_id = 0  # the statement being collected (`_collect_env` sets it)

    def add(self, name: str, value: ast.expr) -> None:
        """`value` is one more value of `name` (bound by this statement)."""
        self.env.setdefault(name, []).append(value)
        if self.bound_at is not None:
            self.bound_at[id(value)] = self.stmt_id


# Statements that bind no name (`_collect_statement` adds nothing for them): `_collect_env`
# skips them without asking (most statements of a body are these or calls; asking cost ~5 %
# of the summaries' CPU).
_BINDS_NOTHING = frozenset({
    ast.Return, ast.If, ast.While, ast.Raise, ast.Pass, ast.Break, ast.Continue, ast.Global,
    ast.Nonlocal, ast.Delete, ast.Assert,
})


def _collect_statement(stmt: ast.stmt, env: Dict[str, List[ast.expr]], declared: Set[str],
                       binder: _Binder) -> None:
    """What one statement binds (`_collect_env`): each value added through `binder`."""
    bind = binder.add
    if isinstance(stmt, ast.Assign):
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
            _stored(stmt.targets[0], stmt.value, env, declared, binder)
        for target in stmt.targets:
            for t, v in _pairs(target, stmt.value, positions=True):
                if isinstance(t, ast.Name):
                    bind(t.id, v if v is not None else ast.Constant(value=...))  # (unknown element)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
        env.setdefault(stmt.target.id, [])  # `x: int` alone: bound, to nothing known
        if isinstance(stmt, ast.AnnAssign):
            declared.add(stmt.target.id)
        if stmt.value is not None and isinstance(stmt, ast.AnnAssign):
            bind(stmt.target.id, stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            bind(stmt.target.id, ast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value))
    elif isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
        # `for i in range(n)`, `for i in tqdm(range(n))`, `for i in bar` (`with tqdm(...) as
        # bar`), `for s in slots` of a list of ints: a number where what it iterates holds
        # numbers (`_ELEMENT_OF`); any other element is unknown, as before.
        bind(stmt.target.id, ast.copy_location(
            ast.Call(func=ast.Name(id=_ELEMENT_OF, ctx=ast.Load()), args=[stmt.iter], keywords=[]), stmt.iter))
    elif isinstance(stmt, (ast.With, ast.AsyncWith)) and any(_progress_bar(i.context_expr) for i in stmt.items):
        for item in stmt.items:
            bar = isinstance(item.optional_vars, ast.Name) and _progress_bar(item.context_expr)
            for name in _names_in(item.optional_vars) if item.optional_vars is not None else ():
                bind(name, item.context_expr if bar else ast.Constant(value=...))
    elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try)) or \
            type(stmt).__name__ in ("Match", "TryStar"):
        for loop_target in _loop_targets(stmt):
            # `for i in range(n)`: `i` is an int (the walk reads it the same way); any
            # other loop, `with` or `except` target is unknown.
            counter = isinstance(loop_target, ast.Name) and isinstance(stmt, ast.For) \
                and isinstance(stmt.iter, ast.Call) and _is_name(stmt.iter.func, "range")
            numbered = _enumerate_counter(stmt, loop_target)
            for name in _names_in(loop_target):
                bind(name, ast.Constant(value=0 if counter or name == numbered else ...))
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            bound = alias.asname or alias.name.split(".")[0]
            bind(bound, ast.Constant(value=...))
    elif isinstance(stmt, ast.Expr):
        _grown(stmt.value, env, declared, binder)
    # The Ellipsis constant stands for "unknown": it is not a number.


# The name of the synthetic call `_collect_env` binds a `for` loop's target to: an element of
# the loop's iterable (no identifier can spell it).
_ELEMENT_OF = "<element of>"
# The name of the synthetic call `_collect_env` binds each name of `a, b = f(...)` to: the
# position of what the call returns (an `item` term).
_ITEM_OF = "<item of>"
# `tqdm(xs)` yields what `xs` yields (a progress bar around the iteration); `trange(n)` is
# `tqdm(range(n))` (the walk reads the same table: `expressions.progress_bar`).
PROGRESS_BARS = frozenset({"tqdm", "trange"})


def _progress_bar(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PROGRESS_BARS


_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)


def _display_bound(name: str, env: Dict[str, List[ast.expr]], declared: Set[str]) -> bool:
    """`name` is bound in this body, without an annotation, and only to displays (`[]`, `{}`,
    a comprehension, what `_grown`/`_stored` added): a list or dict this body fills."""
    values = env.get(name)
    return bool(values) and name not in declared and all(isinstance(v, _DISPLAYS) for v in values or ())


def _stored(target: ast.Subscript, value: ast.expr, env: Dict[str, List[ast.expr]], declared: Set[str],
            binder: _Binder) -> None:
    """`d[k] = v` into a dict or list this body builds from displays: it holds `v` too; with
    a string key (`d["buf"] = v`), a one-key display, so that key's value joins `v`."""
    if isinstance(target.value, ast.Name) and not isinstance(target.slice, ast.Slice) \
            and _display_bound(target.value.id, env, declared):
        if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
            added: ast.expr = ast.Dict(keys=[target.slice], values=[value])
            setattr(added, _STORED_KEY, True)
        else:
            added = ast.List(elts=[value], ctx=ast.Load())
        binder.add(target.value.id, ast.copy_location(added, value))


def _grown(expr: ast.expr, env: Dict[str, List[ast.expr]], declared: Set[str], binder: _Binder) -> None:
    """`xs.append(v)` / `xs.insert(i, v)` / `xs.extend(ys)` on a list this body binds: what
    it holds grows by `v` (a one-element display joins in) or by `ys`'s elements (`ys` joins
    in: a list term's element is what both hold).  A name the body does not bind is left
    alone (a global or a parameter: its other elements are not known here), and so is one
    bound with an annotation (`xs: list[int] = []`: the walk reads the declaration).
    `rows[k].append(v)` on a list of lists this body binds: every row holds `v` too (as the
    walk's `track_inner_list`)."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("append", "insert", "extend")):
        return
    held = expr.func.value
    if isinstance(held, ast.Subscript) and isinstance(held.value, ast.Name) and not isinstance(held.slice, ast.Slice) \
            and _list_bound(held.value.id, env, declared):
        # Any row may be the one `[k]` picks; a call of another shape adds a row not known.
        row = _list_growth(expr) or ast.Constant(value=...)
        binder.add(held.value.id, ast.copy_location(ast.List(elts=[row], ctx=ast.Load()), expr))
    elif isinstance(held, ast.Name) and _display_bound(held.id, env, declared):
        grown = _list_growth(expr)
        if grown is not None:
            binder.add(held.id, grown)


def _list_bound(name: str, env: Dict[str, List[ast.expr]], declared: Set[str]) -> bool:
    """`name` is bound in this body, without an annotation, only to list displays and list
    comprehensions (what `_grown` added among them): a list of rows `rows[k].append(v)` grows."""
    values = env.get(name) or []
    return bool(values) and name not in declared and all(isinstance(v, (ast.List, ast.ListComp)) for v in values)


def _list_growth(call: ast.Call) -> Optional[ast.expr]:
    """What `xs.append(v)` / `xs.insert(i, v)` / `xs.extend(ys)` adds to what `xs` holds: a
    one-element display of `v`, the display `ys` (its elements join in), or something not
    known (an `extend` by anything else); None for a call of another shape (keywords, `*args`,
    another count), which Python rejects."""
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    args = call.args
    if call.keywords or any(isinstance(a, ast.Starred) for a in args) \
            or len(args) != (2 if method == "insert" else 1):
        return None
    if method == "extend":
        return args[0] if isinstance(args[0], (ast.List, ast.Tuple)) else ast.Constant(value=...)
    return ast.copy_location(ast.List(elts=[args[-1]], ctx=ast.Load()), call)


# What may make `self.x = []` hold elements (`_grown_fields`): the list methods that add
# some, and the builtins that only read their argument (`len(self.x)` grows nothing).
_LIST_GROWERS = frozenset({"append", "extend", "insert", "__setitem__", "__iadd__", "__imul__"})
_READING_BUILTINS = frozenset({"len", "isinstance", "print", "str", "repr", "bool", "enumerate", "zip",
                               "any", "all", "iter", "reversed"})
# Parents under which `self.x` is only read (compared, combined into a new value, tested).
_READING_PARENTS = (ast.Compare, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.If, ast.While, ast.Assert,
                    ast.FormattedValue, ast.Delete)


def _grown_fields(node: ast.ClassDef, attrs: AbstractSet[str]) -> Set[str]:
    """Of `attrs`, the fields a method of the class `node` may add elements to: `self.x.append(v)`
    (`extend`, `insert`, ...), `self.x += ys`, `self.x[a:b] = ys`, or any use that hands the
    list itself on (`ys = self.x`, `f(self.x)`, `return self.x`), after which other code may
    grow it.  Reading it (`self.x[i]`, `len(self.x)`, `for v in self.x`, `self.x == []`) and
    rebinding it (`self.x = t`) grow nothing."""
    grown: Set[str] = set()
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        positional = method.args.posonlyargs + method.args.args
        if not positional:
            continue
        for parent, child in _self_attributes(method, positional[0].arg, attrs):
            if child.attr not in grown and _grows(parent, child):
                grown.add(child.attr)
    return grown


def _self_attributes(method: ast.AST, self_name: str,
                     attrs: AbstractSet[str]) -> List[Tuple[ast.AST, ast.Attribute]]:
    """Every `self.x` under `method` (itself included) with `x` in `attrs`, and the node it
    hangs from: what `_grown_fields` asks `_grows` about.

    One walk by an explicit stack over `_walked_fields` (the fields that may hold nodes),
    each child looked at once as it is pushed: `ast.walk` with `ast.iter_child_nodes` of every
    node it yields built two generators per node, and cost 4-20 ms a class on vLLM (classes
    of thousands of lines, with an `x = []` field)."""
    found: List[Tuple[ast.AST, ast.Attribute]] = []
    stack: List[Any] = [method]
    pop, push = stack.pop, stack.append
    attribute, name = ast.Attribute, ast.Name
    while stack:
        parent = pop()
        parent_kind: Any = type(parent)  # Any: a `type[Any]` is no `Hashable` to mypy
        for field_name in _walked_fields(parent_kind):
            value: Any = getattr(parent, field_name, None)
            for child in value if type(value) is list else (value,):
                kind = type(child)
                if kind is attribute and child.attr in attrs and type(child.value) is name \
                        and child.value.id == self_name:
                    found.append((parent, child))
                if kind not in _UNWALKED_TYPES:
                    push(child)
    return found


def _grows(parent: ast.AST, child: ast.Attribute) -> bool:
    """Whether `child` (`self.x`) under `parent` may add elements to the list it holds."""
    if isinstance(parent, ast.Attribute):
        return parent.attr in _LIST_GROWERS  # `self.x.append`; `self.x.shape` reads
    if isinstance(parent, ast.Subscript):
        return isinstance(parent.ctx, ast.Store) and isinstance(parent.slice, ast.Slice)
    if isinstance(parent, ast.AugAssign):
        return parent.target is child
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        return parent.value is child  # a target is rebound; the value is handed on
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)):
        return parent.iter is not child
    if isinstance(parent, ast.Call):
        return not (isinstance(parent.func, ast.Name) and parent.func.id in _READING_BUILTINS
                    and child in parent.args)
    return not isinstance(parent, _READING_PARENTS)


# Methods that change a list or a dict in place: a display one of them is called on is no
# constant (`IDS.update(other)`).
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear",
                       "remove", "sort", "reverse", "__setitem__"})


def _mutated_names(tree: ast.Module, names: AbstractSet[str]) -> FrozenSet[str]:
    """Of `names`, those the file may rebind from a function (`global X`), change in place
    (`X[k] = v`, `del X[k]`, `X.update(...)`, `X += [...]` on a list) or define (`def X`,
    `class X`): their module-level value is no constant.

    One pass over the tree's nodes, by an explicit stack (`ast.walk`'s generators cost three
    times as much: this ran for every file of the project).  Each node's child fields come
    from `_walked_fields` (no `ctx`, operators or strings), and whatever is pushed is kept
    unfiltered: a name, a constant, None or a string popped off the stack is skipped by one
    set lookup of its type, cheaper than a generator filtering every list (this walk was
    ~7 % of the summaries' CPU)."""
    out: Set[str] = set()
    stack: List[Any] = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    skipped = _UNWALKED_TYPES
    while stack:
        node = pop()
        kind: Any = type(node)  # Any: to mypy a `type[Any]` is no `Hashable` (`_walked_fields`)
        if kind in skipped:
            continue
        if kind is ast.Global:
            out.update(n for n in node.names if n in names)
        elif kind is ast.Subscript:
            value = node.value
            if isinstance(value, ast.Name) and value.id in names and isinstance(node.ctx, (ast.Store, ast.Del)):
                out.add(value.id)
        elif kind is ast.Call:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _MUTATORS and isinstance(func.value, ast.Name) \
                    and func.value.id in names:
                out.add(func.value.id)
        elif kind in _DEFINITION_TYPES and node.name in names:
            out.add(node.name)
        for field_name in _walked_fields(kind):
            child = getattr(node, field_name, None)
            if type(child) is list:
                extend(child)
            else:
                push(child)
    return frozenset(out)


# What `_mutated_names` pops and skips (`_self_attributes` does not push): leaves (nothing
# below them either looks for) and the values of fields that hold no node (a `**` entry's
# None key, `global`'s strings).
_UNWALKED_TYPES = frozenset({ast.Name, ast.Constant, type(None), str, int})
_DEFINITION_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
# Fields whose values are never nodes `_mutated_names` or `_self_attributes` looks below
# (nor a `self.x`): contexts, operators, identifiers, flags.
_UNWALKED_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "asname", "module",
                              "level", "kind", "type_comment", "conversion", "simple", "is_async",
                              "kwd_attrs", "rest"})


@lru_cache(maxsize=None)
def _walked_fields(kind: Any) -> Tuple[str, ...]:
    """The fields of an AST type `_mutated_names` and `_self_attributes` walk into (cached:
    the hot path); none for anything that is no AST node."""
    return tuple(f for f in getattr(kind, "_fields", ()) if f not in _UNWALKED_FIELDS)


def _constant_shape(values: Sequence[ast.expr], term_of: Any) -> Optional[str]:
    """The shape of a module-level name every binding of which is a number ("number"), a
    list/tuple ("list") or dict ("dict") display of numbers (`IDS = {"eos": 2}`), or a string
    naming the CPU ("cpu": `KL_DEVICE = "cpu"`) or an accelerator ("accel": `"cuda:0"`);
    None else."""
    shapes = set()
    for value in values:
        if isinstance(value, ast.Constant) and value.value is ...:
            return None  # a loop target, an import: unknown
        term = term_of(value)
        if term == SCALAR:
            shapes.add("number")
        elif isinstance(value, ast.Constant) and term in (CPU_PLACE, ACCELERATOR_PLACE):
            shapes.add("cpu" if term == CPU_PLACE else "accel")
        elif isinstance(value, (ast.List, ast.Tuple)) and value.elts and term == ("list", SCALAR):
            shapes.add("list")
        elif isinstance(value, ast.Dict) and value.values and None not in value.keys \
                and term == ("list", SCALAR):
            shapes.add("dict")
        else:
            return None
    return shapes.pop() if len(shapes) == 1 else None


def _module_constants(tree: ast.Module, own: Sequence[ast.stmt], env: Dict[str, List[ast.expr]],
                      term_of: Any) -> List[Tuple[str, int, str]]:
    """`FileSummary.constants`: the module-level names bound only to Python numbers or to
    displays of them, with the line of their first binding.  What another file imports by
    name is then a number there (`from .prompt import AUDIO_CODE_OFFSET`)."""
    lines: Dict[str, int] = {}
    for stmt in own:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            if isinstance(target, ast.Name):
                lines.setdefault(target.id, stmt.lineno)
    found: List[Tuple[str, int, str]] = []
    for name, line in sorted(lines.items(), key=lambda item: item[1]):
        values = env.get(name)
        shape = _constant_shape(values, term_of) if values else None
        if shape is not None:
            found.append((name, line, shape))
    if not found:
        return []  # most files: no walk of the whole tree
    excluded = _mutated_names(tree, {name for name, _, _ in found})
    return [entry for entry in found if entry[0] not in excluded]


def _enumerate_counter(stmt: ast.stmt, target: ast.AST) -> Optional[str]:
    """The counter of `for i, x in enumerate(xs)` (`i`): an int whatever `xs` holds, since
    `enumerate` counts from `start=`, which must itself be an int (Python raises otherwise).
    None for any other loop or target."""
    if not isinstance(stmt, ast.For) or not isinstance(target, ast.Tuple) or len(target.elts) != 2 \
            or not isinstance(target.elts[0], ast.Name):
        return None
    source = stmt.iter
    if not isinstance(source, ast.Call) or not _is_name(source.func, "enumerate") \
            or any(isinstance(a, ast.Starred) for a in source.args) or any(k.arg is None for k in source.keywords):
        return None
    return target.elts[0].id


def _loop_targets(stmt: ast.stmt) -> List[ast.AST]:
    out: List[ast.AST] = []
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        out.append(stmt.target)
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        out.extend(i.optional_vars for i in stmt.items if i.optional_vars is not None)
    elif isinstance(stmt, ast.Try):
        out.extend(ast.Name(id=h.name) for h in stmt.handlers if h.name)
    else:
        for case in getattr(stmt, "cases", ()):
            out.append(case.pattern)
    return out


def _names_in(node: ast.AST) -> List[str]:
    """The names a target binds, in `ast.walk` order.  A plain name (most targets) and a
    tuple or list of plain names (`a, b = f()`, `for i, x in ...`: the walk yields them in
    order) are answered without the walk: its generators cost more than the rest of the
    lookup."""
    if type(node) is ast.Name:
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)) and all(type(e) is ast.Name for e in node.elts):
        return [e.id for e in node.elts if isinstance(e, ast.Name)]  # (all are)
    out: List[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.append(sub.id)
        elif type(sub).__name__ in ("MatchAs", "MatchStar") and getattr(sub, "name", None):
            out.append(sub.name)  # type: ignore[attr-defined]
        elif type(sub).__name__ == "MatchMapping" and getattr(sub, "rest", None):
            out.append(sub.rest)  # type: ignore[attr-defined]
    return out


_SKIPPED_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases",
                             "decorator_list", "ctx", "type_comment"})
_LEAVES = (ast.Name, ast.Constant, ast.Lambda)


@lru_cache(maxsize=None)
def _fields_of(kind: str) -> Tuple[str, ...]:
    """An AST type's child fields, minus statement bodies and `ctx` (cached: the hot path)."""
    return tuple(f for f in getattr(ast, kind)._fields if f not in _SKIPPED_FIELDS)


# The fields of each expression type that may hold a call (`_calls_in_statement`'s hot path):
# in `_fields` order, without operators, `ctx` and names.  A `list` field may hold None (a
# `**` entry's key, an absent default).  Leaves (no call below them, a lambda's body being
# another scope) have none.  Any type missing here takes the generic path.  A conditional
# expression's `body` and `orelse` share their names with statement blocks (`_SKIPPED_FIELDS`)
# but hold expressions: they are searched (a call site there is still a call site; missing one
# let the other call sites decide a parameter alone).
_CALL_FIELDS: Dict[type, Tuple[str, ...]] = {
    ast.BoolOp: ("values",), ast.NamedExpr: ("target", "value"), ast.BinOp: ("left", "right"),
    ast.UnaryOp: ("operand",), ast.Lambda: (), ast.IfExp: ("test", "body", "orelse"),
    ast.Dict: ("keys", "values"), ast.Set: ("elts",), ast.ListComp: ("elt", "generators"),
    ast.SetComp: ("elt", "generators"), ast.DictComp: ("key", "value", "generators"),
    ast.GeneratorExp: ("elt", "generators"), ast.Await: ("value",), ast.Yield: ("value",),
    ast.YieldFrom: ("value",), ast.Compare: ("left", "comparators"),
    ast.Call: ("func", "args", "keywords"), ast.FormattedValue: ("value", "format_spec"),
    ast.JoinedStr: ("values",), ast.Constant: (), ast.Attribute: ("value",),
    ast.Subscript: ("value", "slice"), ast.Starred: ("value",), ast.Name: (),
    ast.List: ("elts",), ast.Tuple: ("elts",), ast.Slice: ("lower", "upper", "step"),
    ast.comprehension: ("target", "iter", "ifs"), ast.keyword: ("value",),
    type(None): (),
    # Statements: their own expressions (blocks, decorators, imports' names hold none).
    ast.Expr: ("value",), ast.Assign: ("targets", "value"), ast.AugAssign: ("target", "value"),
    ast.AnnAssign: ("target", "annotation", "value"), ast.Return: ("value",),
    ast.Delete: ("targets",), ast.Raise: ("exc", "cause"), ast.Assert: ("test", "msg"),
    ast.Import: (), ast.ImportFrom: (), ast.Global: (), ast.Nonlocal: (), ast.Pass: (),
    ast.Break: (), ast.Continue: (), ast.If: ("test",), ast.While: ("test",),
    ast.For: ("target", "iter"), ast.AsyncFor: ("target", "iter"), ast.With: ("items",),
    ast.AsyncWith: ("items",), ast.withitem: ("context_expr", "optional_vars"), ast.Try: (),
}


def _calls_in_statement(stmt: ast.stmt) -> List[ast.Call]:
    """Calls in a statement's own expressions (not in nested statements' bodies).

    Depth first, each node's fields pushed in `_fields` order (the order of the call sites in
    a summary); expressions through `_CALL_FIELDS`, anything else through `_fields_of`.
    Skipping nodes that hold no call (operators, `ctx`) leaves the order of the others."""
    out: List[ast.Call] = []
    stack: List[Any] = [stmt]
    pop, push, extend = stack.pop, stack.append, stack.extend
    table = _CALL_FIELDS
    call = ast.Call
    while stack:
        node = pop()
        kind = type(node)
        fields = table.get(kind)
        if fields is not None:
            if kind is call:
                out.append(node)
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    extend(value)
                elif value is not None:
                    push(value)
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        elif isinstance(node, _LEAVES):
            continue
        for name in _fields_of(type(node).__name__):
            value = getattr(node, name, None)
            if isinstance(value, list):
                extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, ast.stmt))
            elif isinstance(value, ast.AST) and not isinstance(value, ast.stmt):
                push(value)
    return out


def _context(line: int, how: str, body: Sequence[ast.stmt], scope: _Scope) -> DeviceContext:
    """A device context over `body`: what it constructs, and the methods of its own object it
    calls with the class they are looked up in (none: no owner kept)."""
    methods = _self_calls(body, scope.self_name)
    return DeviceContext(line, how, _called_names(body), scope.owner if methods else None, methods)


def _self_calls(body: Sequence[ast.stmt], self_name: Optional[str]) -> Tuple[Tuple[str, int], ...]:
    """The methods of its own object a block calls (`self.init_model(...)`), each once with its
    first line (`DeviceContext.methods`); none outside a method."""
    found: Dict[str, int] = {}
    if self_name is None:
        return ()
    for stmt in _own_statements(body):
        for call in _calls_in_statement(stmt):
            if isinstance(call.func, ast.Attribute) and _is_name(call.func.value, self_name):
                found.setdefault(call.func.attr, call.lineno)
    return tuple(found.items())


def _called_names(body: Sequence[ast.stmt]) -> Tuple[str, ...]:
    names: List[str] = []
    for stmt in _own_statements(body):
        for call in _calls_in_statement(stmt):
            if isinstance(call.func, ast.Name) and call.func.id not in names:
                names.append(call.func.id)
    return tuple(names)
