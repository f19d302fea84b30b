"""Facts the project offers every file's walk, resolved across files before the rules run.

Built by `lint_h2d.inference.project.resolve` from the per-file summaries; kept in a module of
its own so that the walk (`scope.py`, `expressions.py`) can name it without importing the
resolver.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field as _field
from functools import cached_property
from typing import AbstractSet, Callable, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from lint_h2d.findings import EvidenceStep
from lint_h2d.inference.values import (rests_on, TENSOR_PROPERTIES, COMPUTE_LOGITS_NOTE, FORWARD_INPUT_NOTE, MODULE_OUTPUT_NOTE, MOVED_MODULE_NOTE, SAMPLING_HOOK_NOTE, VLLM_LOADER_NOTE, UNKNOWN, Value,
                                       runtime_steps)

# How the evidence of a field on the default device begins (issue 17, item 8c).
DEFAULT_DEVICE_STEP = "allocated without `device=` in `__init__`"
# What the step of such an allocation says where nothing puts the class under a device context
# (`project._Resolver`'s `dflt` term): the host, unless something the project cannot see builds
# it under one.  A tensor that follows its device (`x.new_zeros(n)`, `torch.zeros_like(x)`,
# `device=x.device`) is then no accelerator by convention (`host_by_default`).
HOST_DEFAULT_STEP = "built in `__init__` without `device=`: on the host unless a device context builds the class"


def host_by_default(value: Value) -> bool:
    """A tensor `__init__` allocated without `device=` in a class nothing builds under a
    device context (`HOST_DEFAULT_STEP`)."""
    return rests_on(value.evidence, HOST_DEFAULT_STEP)


# `torch.nn` layers whose output has the input's rank (`Linear` maps the last dimension,
# norms, dropout, activations and convolutions keep every dimension), and `Embedding`, whose
# output adds one (the embedding dimension).  Calling one returns one tensor.
NN_RANK_KEEPING = frozenset({
    "Linear", "LazyLinear", "LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Dropout", "Dropout1d",
    "Dropout2d", "Dropout3d", "Identity", "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh",
    "Sigmoid", "Softmax", "LogSoftmax", "Softplus", "LeakyReLU", "ELU", "SELU", "Hardswish",
    "Hardtanh", "PReLU", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d",
})
NN_RANK_PLUS_ONE = frozenset({"Embedding"})
# `torch.nn` modules that return one tensor of a rank this table does not know.
NN_TENSOR_MODULES = NN_RANK_KEEPING | NN_RANK_PLUS_ONE | frozenset({"Sequential"})
# `torch.nn` containers: indexing or iterating one gives its modules.
NN_CONTAINERS = frozenset({"ModuleList", "ModuleDict"})


# The words of a module call's step (`module_step_message`): `output_field_message` reads them.
MODULE_CALL_WORDS = "calls an `nn.Module`"


def module_step_message(callee: str, module: str) -> str:
    """The evidence step of a module call's output (`MODULE_OUTPUT_NOTE` marks it)."""
    return f"`{callee}(...)` {MODULE_CALL_WORDS} (`{module}`): its output is {MODULE_OUTPUT_NOTE}"


# The first words of a function that makes, loads or handles a model (`load_model(path)`,
# `build_model(cfg)`, `_init_model()`): a verb, so the name is no model's.
_MODEL_VERBS = frozenset({
    "apply", "build", "check", "compile", "configure", "construct", "convert", "copy", "create", "download",
    "dump", "eval", "evaluate", "export", "fit", "freeze", "get", "has", "import", "init", "initialize",
    "instantiate", "is", "load", "log", "make", "merge", "move", "new", "patch", "prepare", "print",
    "quantize", "register", "reload", "reset", "restore", "resume", "run", "save", "serialize", "set",
    "setup", "shard", "test", "to", "train", "unwrap", "update", "upload", "validate", "wrap",
})


def names_model(name: str) -> bool:
    """Whether a callable's own name (a parameter, a local, a field) says a model: `model`,
    `self.model`, `draft_model`, not a verb's (`load_model`, `_init_model`).  PyTorch code
    calls its `nn.Module` so by convention."""
    words = name.lstrip("_").split("_")  # `self._model` too
    return words[-1] == "model" and (len(words) == 1 or words[0].lower() not in _MODEL_VERBS)


def named_model_message(callee: str) -> str:
    """The evidence step of a call of something named a model that nothing else tells about
    (`names_model`): a module call by convention, whose fields are its output's
    (`output_field_message`)."""
    return (f"`{callee}(...)` {MODULE_CALL_WORDS} by its name (nothing says what `{callee}` holds): "
            f"its output is {MODULE_OUTPUT_NOTE}")


# The `type_name` prefix of a model a library loads (`pretrained_loader`): an `nn.Module` of a
# class outside the project (`pretrained:AutoModel`).
PRETRAINED = "pretrained:"
# The methods that load a library's model (`pretrained_loader`), by name.
LOADER_METHODS = frozenset({"from_pretrained", "from_config", "create_model"})
# Words in a class name that say it loads no model (`AutoTokenizer.from_pretrained`).
_NOT_MODELS = ("Tokenizer", "Processor", "Config", "Extractor", "Pipeline", "Scheduler")


def pretrained_loader(receiver: str, method: str) -> Optional[str]:
    """The `type_name` of what `receiver.method(...)` loads when it is a model outside the project
    (None otherwise): transformers' and diffusers' `from_pretrained` / `from_config` of a model
    class (a name ending in `Model`, holding `For` as in `LlamaForCausalLM`, or an `AutoModel*`;
    not a tokenizer, processor, config, feature extractor, pipeline or scheduler, nor a
    TensorFlow or Flax class), and timm's `create_model`.  An `nn.Module` by those libraries'
    conventions: what calling it gives is its output (`MODULE_OUTPUT_NOTE`).  The caller checks
    that `receiver` is no project class (a project's own `from_pretrained` says what it returns)."""
    last = receiver.split(".")[-1]
    if method == "create_model" and receiver == "timm":
        return PRETRAINED + "timm.create_model"
    if method not in ("from_pretrained", "from_config") or last.startswith(("TF", "Flax")) \
            or any(w in last for w in _NOT_MODELS):
        return None
    if last.endswith("Model") or last.startswith("AutoModel") or re.search(r"[a-z0-9]For[A-Z]", last):
        return f"{PRETRAINED}{last}.{method}"
    return None


def pretrained_step_message(callee: str, type_name: str) -> str:
    """The evidence step of calling a model a library loads (`pretrained_loader`): a module
    call's step (`MODULE_CALL_WORDS`, `MODULE_OUTPUT_NOTE`) that names the loader."""
    return (f"`{callee}(...)` {MODULE_CALL_WORDS} that `{type_name[len(PRETRAINED):]}(...)` loads (a model class "
            f"of that library): its output is {MODULE_OUTPUT_NOTE}")


def output_field_message(evidence: Tuple[object, ...], attr: str) -> Optional[str]:
    """The step of `out.attr` where `out` is what a call of an `nn.Module` gives by convention
    (its outermost step `module_step_message`'s: not a project `forward` known to return a
    tensor) and `attr` is no tensor property: a field of the
    structured output its `forward` returns (transformers' `ModelOutput`: `out.logits`,
    `out.last_hidden_state`), computed where the module is, as the output is taken to be.
    None otherwise: a tensor's own property, or an output known by other evidence."""
    if attr in TENSOR_PROPERTIES or attr.startswith("_") or not evidence \
            or MODULE_CALL_WORDS not in getattr(evidence[0], "message", ""):
        return None
    return (f"`.{attr}` of that output, which is then no tensor (a tensor has no `{attr}`): a field of the "
            f"structured output the module returns (a `ModelOutput`), {MODULE_OUTPUT_NOTE}")


def forward_input_message(module: str, param: str) -> str:
    """The evidence step of a parameter of a project module's `forward` that no call site
    places (`FORWARD_INPUT_NOTE` marks it)."""
    return (f"`{param}` is an input of `{module}.forward` (an `nn.Module`), and no call in the project says "
            f"where it is: {FORWARD_INPUT_NOTE}")


def held_module_message(module: str) -> str:
    """The evidence step of a module class that the project neither builds nor moves and whose
    buffers and parameters it allocates without `device=` (`project._Resolver._run_where_models_run`):
    a `MOVED_MODULE_NOTE` step."""
    return (f"`{module}` holds buffers or parameters (an `nn.Module`), and nothing in the project builds it or "
            f"moves it: {MODULE_OUTPUT_NOTE} (what builds and runs it, a registry and a trainer or an engine, "
            f"moves it); a method its construction does not run is {MOVED_MODULE_NOTE}")


def lightning_module_message(module: str) -> str:
    """The evidence step of a project `LightningModule` the project does not move itself
    (`project._Resolver._lightning_module`): a `MOVED_MODULE_NOTE` step."""
    return (f"`{module}` is a Lightning `LightningModule` (an `nn.Module`): Lightning's `Trainer` moves it to the "
            f"accelerator before it runs its steps; {MODULE_OUTPUT_NOTE}; a method its construction does not run is "
            f"{MOVED_MODULE_NOTE}")


def forward_input_param(function: str, owner: Optional[str], modules: AbstractSet[str], has_default: bool,
                        annotation_open: bool) -> bool:
    """Whether a parameter may be placed by the forward-input convention: one of `forward` of
    a project `nn.Module` subclass (`modules`), without a default (an optional argument is as
    often a flag or a CPU-side option as a tensor), unannotated or annotated a tensor."""
    return function == "forward" and owner is not None and owner in modules and not has_default \
        and annotation_open


def sampling_hook_message(function: str, param: str) -> str:
    """The evidence step of a vLLM sampling hook's logits (`SAMPLING_HOOK_NOTE` marks it)."""
    return f"`{function}` takes `{param}` with a vLLM `SamplingMetadata`: {SAMPLING_HOOK_NOTE}"


def through_message(function: str, param: str) -> str:
    """The step of a call of a function whose return keeps a parameter's place
    (`Resolved.through`)."""
    return f"`{function}(...)` returns a tensor where its argument `{param}` is"


def compute_logits_message() -> str:
    """The evidence step of `super().compute_logits(...)` in vLLM code."""
    return f"`super().compute_logits(...)`: {COMPUTE_LOGITS_NOTE}"


def empty_list_message(attr: str) -> str:
    """The evidence step of a field set to `[]` that its class never grows (`Resolved.empty_lists`),
    worded once for the walk and the resolver."""
    return (f"`self.{attr} = []` is never grown: an item store into it raises `IndexError`, "
            "so one that copies writes into the field's other values")


def vllm_loader_message(cls: str, root: str) -> str:
    """The evidence step of a class vLLM's model loader builds on the accelerator: the model
    class `root` itself (its `__init__` takes `vllm_config`), or a class its `__init__` builds."""
    built = f"vLLM's model loader constructs `{root}` (keyword `vllm_config`) {VLLM_LOADER_NOTE}"
    return built if cls == root else f"`{cls}` is constructed by `{root}.__init__` (in its body or a function it calls); {built}"


def rests_on_module_output(evidence: Tuple[object, ...]) -> bool:
    """Whether a value's device evidence includes a step resting on how serving code runs (a
    module call's output, a sampling hook's logits): a convention."""
    return bool(runtime_steps(evidence))


def module_dotted(path: str) -> str:
    """The dotted module a file's path names (`pkg/sub/prompt.py` → `pkg.sub.prompt`,
    `pkg/__init__.py` → `pkg`), relative to wherever the path starts."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if parts and parts[-1].endswith((".py", ".pyi")):
        parts[-1] = parts[-1].rsplit(".", 1)[0]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# How many re-exports `Resolved.constant` follows (`a` re-exports `b`'s, which re-exports `c`'s).
_REEXPORT_DEPTH = 4


def absolute_module(level: int, module: str, path: str) -> Optional[str]:
    """The dotted module `from <level dots><module> import ...` names in the file at `path`: the
    module itself for an absolute import (`level` 0), else resolved against the file's package
    (`from ..x import N` in `a/b/c.py`: `a.x`; a package's `__init__.py` is the package).  None
    where it cannot be told (no path, more dots than packages)."""
    if not level:
        return module or None
    if not path:
        return None
    package = module_dotted(path).split(".")
    if not path.replace("\\", "/").endswith("/__init__.py"):
        package = package[:-1]
    up = level - 1
    if up > len(package):
        return None
    return ".".join(package[:len(package) - up] + ([module] if module else []))


def param_key(function: str, owner: Optional[str]) -> str:
    """The name `Resolved.params` keys a function's parameters by: `Owner.name` for a method
    (`owner`: a `def` in a class body, static or not), whose call sites are those that may run
    that class's method (`_Resolver._sites`: a `self.m(...)` of an unrelated class, an
    `x.m(...)` on an instance of one, a construction of another class, a bare call `m(...)`,
    reach no other class's `m`); its plain name for any other function (a module-level
    function, a nested `def`), whose call sites are found by name.  Two classes' `forward(self,
    x)` keep what their own calls pass."""
    return f"{owner}.{function}" if owner is not None else function


# The methods whose call sites are found by their class, not by their name: a construction
# runs `Owner.__init__`, a call of an instance `Owner.__call__` (`_Resolver._sites`).
OWNED_BY_CLASS = frozenset({"__init__", "__call__"})


# What `Resolved.enums` says of an enumeration: its members are Python ints (`IntEnum`), or
# only their `.value` is a Python number (`Enum`: a member is an object of its own class).
INT_ENUM = "int"
VALUE_ENUM = "value"


@dataclass(frozen=True)
class Resolved:
    """What the project knows, resolved across files; the walk asks it, never another tree.

    Only informative entries are kept (an unknown is the default).  Every value carries the
    evidence that made it, with the file and line of each step.
    """

    # class → field → value
    fields: Mapping[str, Mapping[str, Value]] = _field(default_factory=dict)
    # class → its bases (project classes only), for inherited fields
    bases: Mapping[str, Tuple[str, ...]] = _field(default_factory=dict)
    # class → (file, line) where it is defined
    classes: Mapping[str, Tuple[str, int]] = _field(default_factory=dict)
    # function name (or `Class.method`) → value of a call
    returns: Mapping[str, Value] = _field(default_factory=dict)
    # (function name, parameter) → value every call site passes
    params: Mapping[Tuple[str, str], Value] = _field(default_factory=dict)
    # (`Class.method` or function, parameter) → an int by how the body uses it (`range(p)`).
    int_params: Mapping[Tuple[str, str], Value] = _field(default_factory=dict)
    # (`Class.method` or function, parameter) with a default that some call site overrides
    # with a value that is no Python number (a list, a tensor that is not 0-dim, an object):
    # its int default (`slot=0`) says nothing about the calls that pass it.
    passed_non_numbers: FrozenSet[Tuple[str, str]] = frozenset()
    # What may hold a device tensor, for the prefilter: `attr` (a field, read as `.attr`),
    # `call:f` (a function or method returning one), `param:f.p` with `def:f` (a parameter
    # every call site of `f` passes one), `module:C` (a project `nn.Module` class: calling
    # an instance gives one).
    device_names: FrozenSet[str] = frozenset()
    # Project classes deriving from `torch.nn.Module` (directly or through project classes):
    # calling an instance runs its `forward` on the module's parameters.
    modules: FrozenSet[str] = frozenset()
    # module class → what its `forward` returns, for calls of an instance (`self.head(h)`).
    # Kept apart from `returns`: `forward` is an API name (`project.API_NAMES`), and the
    # prefilter sees a module call through the class's construction, not through `.forward(`.
    forwards: Mapping[str, Value] = _field(default_factory=dict)
    # The function names of one module-level definition whose every return keeps where one
    # parameter is (`return torch.roll(x, 1, 0)`, `return x * 2`; `project.through_parameter`):
    # name → (that parameter, its position, whether the result has the argument's rank, the
    # rank it has else).  A call's result is where its own argument is (`values.returned_through`).
    through: Mapping[str, Tuple[str, int, bool, Optional[int]]] = _field(default_factory=dict)
    # class → the step saying it is constructed under an accelerator default device (a
    # `with torch.device(...)` elsewhere in the project, or vLLM's model loader): a factory
    # without `device=` in its `__init__`, or in a method `__init__` calls, lands there.
    built_on_device: Mapping[str, EvidenceStep] = _field(default_factory=dict)
    # class built on the device → the methods it defines that a project base's `__init__`
    # calls on `self` (`self._build_cache()`), each with that base and the call's file and
    # line: run through `super().__init__()` while the object is built, `self` is the
    # subclass, so its override runs there, under the same default device.
    construction_calls: Mapping[str, Tuple[Tuple[str, str, str, int], ...]] = _field(default_factory=dict)
    # module class → the step saying the project moves its instances to an accelerator the
    # call names (`m.cuda()`, `m.to("cuda")`), or that nothing in the project builds or moves
    # it (`held_module_message`, a convention): its buffers and parameters are there after.
    moved: Mapping[str, EvidenceStep] = _field(default_factory=dict)
    # dotted module (`pkg.sub.prompt`, from the file's path) → its module-level names bound only
    # to numbers or displays of them (`summary.FileSummary.constants`), as values with evidence.
    constants: Mapping[str, Mapping[str, Value]] = _field(default_factory=dict)
    # Every dotted module of the project, constants or not: an import matching one without
    # the name among its constants is unknown (`constant`).
    module_names: FrozenSet[str] = frozenset()
    # dotted module → what it re-exports (`summary.FileSummary.reexports`): (bound name, the
    # dotted module imported from, the name imported), `("*", module, "*")` for a star import,
    # `(name, "", "")` for a name a module with a star import binds otherwise.
    # `constant` follows them: `from ppq.core import KL_DEVICE` where `ppq/core/__init__.py`
    # does `from .common import *`.
    reexports: Mapping[str, Tuple[Tuple[str, str, str], ...]] = _field(default_factory=dict)
    # (`Class.method` or function, parameter) with a default, un-annotated, that every call
    # passing it passes a list or tuple of Python numbers (`f(..., slots=tuple(free))`) or a
    # device tensor (`f(x, weight=mask)`): where the default is `None`, iterating or indexing it
    # is iterating or indexing those (`enumerate(None)` and `None[0] = 0.0` raise).  Not for a
    # parameter annotated a tensor: vLLM's hundred `x: Optional[torch.Tensor] = None` held
    # 2 MB more at the resolve's peak (issue 12's 250 MB) and moved no finding of 688 corpora.
    passed_given: Mapping[Tuple[str, str], Value] = _field(default_factory=dict)
    # A function name several modules define at module level → those modules (dotted), and
    # `module:name` → what that module's own `def` returns (informative ones only): a bare call
    # in one of them binds to its own global, not to the join `returns` holds (`own_return`).
    split_returns: Mapping[str, FrozenSet[str]] = _field(default_factory=dict)
    own_returns: Mapping[str, Value] = _field(default_factory=dict)
    # (class, field) whose `self.x = []` no method of the class grows (`summary._grown_fields`):
    # an item store into that empty list raises, so the walk reads the assignment as it reads
    # `self.x = None`, adding no value next to the field's others.
    empty_lists: FrozenSet[Tuple[str, str]] = frozenset()
    # Project enumerations whose every member is a Python number (`class Kind(Enum): A = 1`,
    # `project.enum_kind`) → `INT_ENUM` where the members are ints themselves (`IntEnum`,
    # `IntFlag`, an `int` mixin), `VALUE_ENUM` where only their `.value` is a number.
    enums: Mapping[str, str] = _field(default_factory=dict)
    # `name.py:N` in the evidence words → the (file, line) pairs the resolver wrote it for
    # (`project._site`).  Not read by the walk: a run that carries the stored facts to an
    # edited file's moved lines (`moved_lines`) maps such words only where they name that file
    # (vLLM has 59 `utils.py`: the name alone does not say which file is meant).
    site_words: Mapping[str, FrozenSet[Tuple[str, int]]] = _field(default_factory=dict)
    # Every name the resolve may look call sites up under, or called names (`project.
    # read_callees`: the project's functions and classes, the names its returns call, the
    # fields holding a project class).  Not read by the walk: a call of any other name, added
    # or removed by an edit, changes no fact (`summary.without_calls`), so a run after such an
    # edit carries the stored facts rather than resolving the project again.
    read_callees: FrozenSet[str] = frozenset()

    def _inherited(self, cls: str, own: Callable[[str], Optional[Value]]) -> Optional[Value]:
        """`own(name)` of `cls` or, breadth-first, of its project base classes (a class
        inherits a field or a method it does not define)."""
        seen: Set[str] = set()
        todo = [cls]
        while todo:
            name = todo.pop(0)
            if name in seen:
                continue
            seen.add(name)
            found = own(name)
            if found is not None:
                return found
            todo.extend(self.bases.get(name, ()))
        return None

    def field(self, cls: str, attr: str) -> Optional[Value]:
        return self._inherited(cls, lambda name: self.fields.get(name, {}).get(attr))

    def method_return(self, cls: str, method: str) -> Optional[Value]:
        """What `obj.method()` returns for an instance of `cls`, its own or inherited."""
        return self._inherited(cls, lambda name: self.returns.get(f"{name}.{method}"))

    def own_return(self, name: str, path: str) -> Optional[Value]:
        """What a bare `name(...)` in the file at `path` returns when several project modules
        define `name` and this file is one of them: its own `def`'s value (UNKNOWN when that
        says nothing), not the join of all of them.  None when the file is not one of them (an
        import: the project-wide `returns` answers).  The file may be checked from above or
        below the package root, so its dotted path and a module's match by dotted suffix."""
        module = self._own_module(name, path)
        if module is None:
            return None
        return self.own_returns.get(f"{module}:{name}", UNKNOWN)

    def _own_module(self, name: str, path: str) -> Optional[str]:
        """The dotted module, of those defining the function `name` (`split_returns`), that the
        file at `path` is; None when it is none of them or `name` is defined once."""
        modules = self.split_returns.get(name)
        if not modules or not path:
            return None
        own = module_dotted(path)
        matching = [m for m in modules if m == own or own.endswith("." + m) or m.endswith("." + own)]
        return matching[0] if len(matching) == 1 else None

    def param(self, function: str, owner: Optional[str], pname: str, path: str) -> Optional[Value]:
        """What the calls of `function` (keyed by `owner`, `param_key`) pass as `pname`, for
        the definition in the file at `path`: a function several modules define takes only the
        calls that bind to it (`project.homonym_sites`), kept under `module:name`."""
        if owner is None:
            module = self._own_module(function, path)
            if module is not None:
                return self.params.get((f"{module}:{function}", pname))
        return self.params.get((param_key(function, owner), pname))

    def module_forward(self, cls: str) -> Optional[Value]:
        """What calling an instance of the project module `cls` returns, own or inherited."""
        return self._inherited(cls, lambda name: self.forwards.get(name))

    def constant(self, module: str, name: str, depth: int = 0) -> Optional[Value]:
        """What `from module import name` binds, when the project's modules that `module` may
        name all bind `name` to a number (or a display of numbers) at module level.  `module`
        is the imported module's dotted path (a relative import resolved against the file's
        own); the project may be checked from above or below its package root, so a module
        whose dotted path ends with it, or that it ends with, matches (all of them must agree).
        None when no project module matches.  A name the module imports is followed to where
        it is bound (`reexports`), a few modules deep."""
        matching = self._matching(module)
        if not matching:
            return None
        found = [self.constants.get(m, {}).get(name) for m in sorted(matching)]
        if all(v is None for v in found) and self.reexports and depth < _REEXPORT_DEPTH:
            found = [self._reexported(m, name, depth) for m in sorted(matching)]
        first = found[0]
        if first is None or any(v is None or v.kind != first.kind or (v.element is None) != (first.element is None)
                                or (v.key is None) != (first.key is None) for v in found):
            return None
        return first

    def _matching(self, module: str) -> Set[str]:
        """The project modules an import of the dotted `module` may name (`constant`)."""
        if not module:
            return set()
        # `m == module` or `m` ends with `.module`: the modules whose dotted suffixes hold it;
        # `module` ends with `.m` (a dotted `m`): its own proper suffixes that are modules.
        matching = set(self._by_suffix.get(module, ()))
        parts = module.split(".")
        matching.update(s for s in (".".join(parts[i:]) for i in range(1, len(parts) - 1))
                        if s in self.module_names)
        return matching

    def _reexported(self, module: str, name: str, depth: int) -> Optional[Value]:
        """The constant `name` that `module` (no constant of its own by that name) binds by an
        import of it: an explicit `from m import name` (`as name`) first, else every star
        import of a module that has it, all agreeing (`constant`)."""
        entries = self.reexports.get(module, ())
        explicit = [(src, orig) for bound, src, orig in entries if bound == name]
        if explicit:
            return self.constant(*explicit[0], depth + 1) if len(explicit) == 1 and explicit[0][0] else None
        if name.startswith("_") or any(bound == "*" and not self._matching(src) for bound, src, _ in entries):
            return None  # a star import binds no private name; one of a module not the project's may bind it
        stars = [found for bound, src, _ in entries if bound == "*"
                 if (found := self.constant(src, name, depth + 1)) is not None]
        return stars[0] if stars and all(v.kind == stars[0].kind for v in stars) else None

    @cached_property
    def _by_suffix(self) -> Dict[str, List[str]]:
        """Each dotted suffix of a project module (`c`, `b.c`, `a.b.c` of `a.b.c`) → the modules
        ending with it, for `constant` (a scan of every module per import cost seconds on vLLM)."""
        out: Dict[str, List[str]] = {}
        for name in self.module_names:
            parts = name.split(".")
            for i in range(len(parts)):
                out.setdefault(".".join(parts[i:]), []).append(name)
        return out

    def knows_class(self, cls: str) -> bool:
        return cls in self.classes


EMPTY_RESOLVED = Resolved()


@dataclass(frozen=True)
class ModuleFacts:
    """Cross-file knowledge handed to every file's walk: the classes with `*_cpu` fields, the
    names the prefilter reads as possible device tensors, and the resolved facts.

    Here, not in `scope.py` (the walk), so that reading stored facts, resolving and the
    prefilter import no LibCST: a pre-commit run on a file with nothing to parse never pays
    for it."""

    class_fields: Mapping[str, FrozenSet[str]]
    device_fields: FrozenSet[str]
    resolved: Resolved = _field(default_factory=Resolved)


EMPTY_MODULE_FACTS = ModuleFacts({}, frozenset())
