"""Cheap cross-file facts: which classes declare both `x` and `x_cpu`.

vLLM keeps device tensors and their host copies side by side (`query_start_loc` and
`query_start_loc_cpu` in `CommonAttentionMetadata`).  Knowing the pair tells us `x` is the
device one wherever the object is used, in any file.  Parsing the whole tree to learn this
would cost more than the scan itself, so it is read off the text with a line scanner; it only
needs to be right about field names, never about code structure.
"""
from __future__ import annotations

import hashlib
import re
from functools import cached_property, lru_cache
from dataclasses import dataclass, replace
from typing import AbstractSet, Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from fixers.edits import split_lines
from lint_h2d.inference.resolved import ModuleFacts

_CLASS = re.compile(r"^([ \t]*)class[ \t]+([A-Za-z_]\w*)")
_FIELD = re.compile(r"^([ \t]+)([A-Za-z_]\w*)[ \t]*:[^=\n]")
_SELF_ATTR = re.compile(r"^[ \t]+self\.([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")


def class_fields_in(text: str) -> Dict[str, FrozenSet[str]]:
    """Field names of every class in `text` that has at least one `*_cpu` field."""
    if "_cpu" not in text:
        return {}
    found: Dict[str, Set[str]] = {}
    stack: list[Tuple[int, str]] = []  # (indent of the class line, class name)
    for line in split_lines(text):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        while stack and indent <= stack[-1][0]:
            stack.pop()
        m = _CLASS.match(line)
        if m:
            stack.append((indent, m.group(2)))
            found.setdefault(m.group(2), set())
            continue
        if not stack:
            continue
        owner = stack[-1][1]
        f = _FIELD.match(line)
        if f and not stripped.startswith(("def ", "return", "lambda")):
            found[owner].add(f.group(2))
            continue
        s = _SELF_ATTR.match(line)
        if s:
            found[owner].add(s.group(1))
    return {
        name: frozenset(fields)
        for name, fields in found.items()
        if any(f.endswith("_cpu") for f in fields)
    }


@dataclass(frozen=True)
class ProjectFacts:
    module_facts: ModuleFacts
    fingerprint: str

    @cached_property
    def prefilter_names(self) -> FrozenSet[str]:
        """Names the prefilter must treat as possible device tensors (cross-file facts); once
        per project, not once per file (a union of thousands of names)."""
        return self.module_facts.device_fields | self.module_facts.resolved.device_names


def class_fields_of(texts: Iterable[str]) -> Dict[str, FrozenSet[str]]:
    classes: Dict[str, FrozenSet[str]] = {}
    for text in texts:
        for name, fields in class_fields_in(text).items():
            classes[name] = classes.get(name, frozenset()) | fields
    return classes


def collect(texts: Iterable[str]) -> ProjectFacts:
    """Facts of a few in-memory files (tests, `verify`): the field pairs and the summaries."""
    from lint_h2d.inference.summary import summarize

    texts = list(texts)
    summaries = [summarize(f"<text {i}>", t) for i, t in enumerate(texts)]
    return from_classes(class_fields_of(texts), resolve(summaries))


def from_classes(classes: Mapping[str, FrozenSet[str]],
                 resolved: Optional["Resolved"] = None) -> ProjectFacts:
    device_fields = frozenset(
        f for fields in classes.values() for f in fields if f + "_cpu" in fields
    )
    digest = hashlib.sha256()
    for name in sorted(classes):
        digest.update(name.encode())
        digest.update(",".join(sorted(classes[name])).encode())
    if resolved is not None:
        digest.update(fingerprint_of(resolved).encode())
    return ProjectFacts(ModuleFacts(dict(classes), device_fields,
                                    resolved if resolved is not None else Resolved()),
                        digest.hexdigest()[:16])


# -- facts resolved across the project's summaries ---------------------------------------------

from lint_h2d.findings import evidence_file_name, EvidenceKind, EvidenceStep  # noqa: E402
from lint_h2d.inference.torch_api import advanced_index_dims, advanced_indexed_rank, concatenated_rank, NEW_METHODS, PAIR_FIELDS  # noqa: E402
from lint_h2d.inference.summary import (  # noqa: E402
    EMPTY_DISPLAY,
    EMPTY_LIST,
    TORCH_MODULE_BASE,
    CallSite,
    ClassSummary,
    decode_integer,
    DeviceContext,
    FileSummary,
    FunctionSummary,
    ModuleMove,
    NUMBER_LIST_INDEX,
    ObjectStore,
    Term,
)
from lint_h2d.inference.summary import OTHER as OTHER_TERM  # noqa: E402
from lint_h2d.inference.summary import SCALAR as SCALAR_TERM  # noqa: E402
from lint_h2d.inference.summary import UNK as UNK_TERM  # noqa: E402
from lint_h2d.inference.resolved import (  # noqa: E402
    DEFAULT_DEVICE_STEP,
    HOST_DEFAULT_STEP,
    host_by_default,
    INT_ENUM,
    VALUE_ENUM,
    forward_input_message,
    forward_input_param,
    OWNED_BY_CLASS,
    param_key,
    NN_CONTAINERS,
    NN_TENSOR_MODULES,
    Resolved,
    absolute_module,
    module_dotted,
    module_step_message,
    named_model_message,
    names_model,
    output_field_message,
    LOADER_METHODS,
    PRETRAINED,
    pretrained_loader,
    pretrained_step_message,
    compute_logits_message,
    empty_list_message,
    held_module_message,
    lightning_module_message,
    sampling_hook_message,
    vllm_loader_message,
)
from lint_h2d.inference.values import (  # noqa: E402
    augmented_number,
    concatenation_source,
    config_field,
    config_value,
    CONFIG_STEP,
    host_object,
    logits_processor_message,
    CPU_DEFAULT_STEP,
    DEFAULT_ONLY_STEP,
    cpu_by_default,
    entry,
    forward_input_only,
    from_config,
    is_json_data,
    meshgrid_result,
    json_data,
    JSON_STEP,
    join_all,
    MODULE_DEVICE_NOTE,
    MODULE_TENSOR_STEP,
    enum_step_message,
    sunder,
    MOVED_MODULE_NOTE,
    names_config,
    NONE,
    nothing_known,
    plain_number,
    module_output_items,
    PROJECT_LOADER_NOTE,
    OTHER,
    SCALAR,
    UNKNOWN,
    Kind,
    Value,
    join,
    module_tensor,
    CPU_KIND,
    NUMPY_KIND,
    CPU_PLACE_KIND,
    DEVICE_KIND,
    DEVICE_PLACE_KIND,
    OTHER_KIND,
    SCALAR_KIND,
    TENSOR_KIND,
    UNKNOWN_KIND,
)



_PLACE_KINDS = (DEVICE_KIND, CPU_KIND, TENSOR_KIND)
# Annotations that leave a parameter's place open: none, or `torch.Tensor` (call sites tell).
_OPEN_ANNOTATIONS = (("unk",), ("tensor", None))
# A container of tensors (`Dict[str, torch.Tensor]`, `List[Tensor]`): the annotation says what
# the elements are, not where; what every call passes may (torchrec's metadata dicts of buffers).
_TENSOR_CONTAINER = ("list", ("tensor", None))
# Calls too common to be worth a call-site fact.
_MAX_DEPTH = 30
# Extra passes for facts that depend on themselves (`_Resolver._fixpoint`), per project.
_MAX_PASSES = 2000
# Facts a project's resolve may compute and then drop because they read a cycle's guess that
# did not hold (`_Resolver._fixpoint`), past which, when each fact dropped was dropped
# `_DROPS_PER_FACT` times on average, every cycle reads unknown at once (as when the passes
# are spent).  vLLM's resolve drops 48,000 facts, 1,438 distinct ones (33 times each on
# average, 796 at most); ExecuTorch's generated flatbuffer classes (hundreds of
# `InitFromObj(cls, obj)` / `_UnPack(self, obj)` calling each other by name) dropped the same
# 38 facts 2,000 times each in 30 s, and went on for over 15 minutes: each fact asked computed
# the whole cycle again.
_DROP_FLOOR = 100_000
_DROPS_PER_FACT = 200
# Calls followed from a device context to the constructions they make (`_Resolver._mark_called`).
_CALL_HOPS = 4


class _Resolver:
    """Resolves summary terms to values, memoized; a cycle resolves to unknown."""

    def __init__(self, summaries: Sequence[FileSummary]) -> None:
        self._moved: Optional[Dict[str, EvidenceStep]] = None  # `moved_modules`, once made
        self.classes: Dict[str, List[Tuple[str, ClassSummary]]] = {}
        self.functions: Dict[str, List[Tuple[str, FunctionSummary]]] = {}
        self.methods: Dict[Tuple[str, str], List[Tuple[str, FunctionSummary]]] = {}
        # Call sites by callee name.  The parallel resolve keeps only `wanted_callees`' sites:
        # a reader asking about any other name answers otherwise there (keep it in step).  A
        # project's index reads only `read_callees`' sites: every reader must ask one of those.
        self.calls: Dict[str, List[Tuple[str, CallSite]]] = {}
        # `cls(...)` in the classmethods of project classes (`CallSite.self_owner`), in order.
        self.class_calls: List[Tuple[str, CallSite]] = []
        # (class of a `self.m(...)` call, `m`): whether that class (or a project base) has an
        # `m` of its own, which answers the call, or its family can give `self.m` no other
        # value than one of its methods (`_elsewhere`).
        self._unrelated: Dict[Tuple[str, str], bool] = {}
        # An autograd `Function` class → its `cls.apply(...)` calls, as calls of `forward`
        # (`_applied_sites`).
        self._applied: Dict[str, List[Tuple[str, CallSite]]] = {}
        # A class → its bases and its subclasses, each with itself (`_family`).
        self._families: Dict[str, Tuple[FrozenSet[str], FrozenSet[str]]] = {}
        # The receiver term of an `x.m(...)` → the classes whose `m` it may run (`_receiving`).
        self._receivers: Dict[Term, Optional[FrozenSet[str]]] = {}
        # `super().__init__(...)` calls by the class of the method making them (`_super_inits`).
        self._super_init_calls: Optional[Dict[str, List[Tuple[int, Tuple[str, CallSite]]]]] = None
        # A hash of a method's call sites (`_sites`) → each distinct list of them with its number
        # (`_sites_key`).
        self._site_keys: Dict[int, List[Tuple[List[Tuple[str, CallSite]], int]]] = {}
        self._site_count = 0
        self._site_memo: Dict[Tuple[Any, ...], List[Tuple[str, CallSite]]] = {}
        # `self.head(x)` calls of project modules, by the class whose `forward` runs
        # (`_module_calls`), and for each such site (by `id`) the field and its class.
        self._forward_calls: Optional[Dict[str, List[Tuple[str, CallSite]]]] = None
        self.forward_calls: Dict[int, Tuple[str, str]] = {}
        # `self.step(x)` calls of instances of project classes that define `__call__`, by the
        # class whose `__call__` runs (`_instance_calls`), and for each site the field and class.
        self._dunder_calls: Optional[Dict[str, List[Tuple[str, CallSite]]]] = None
        self.instance_calls: Dict[int, Tuple[str, str]] = {}
        # The same lookups by the function object itself (its `id`: every summary outlives the
        # resolver), asked for each parameter term the walk of the terms meets (hundreds of
        # thousands on vLLM): hashing the signature each time cost more than the rest.
        self._fn_sites: Dict[int, List[Tuple[str, CallSite]]] = {}
        # By function, each parameter's two keys (`param`, `passed`) at `2 * index (+ 1)`.
        self._fn_keys: Dict[int, List[Optional[Tuple[Any, ...]]]] = {}
        self._param_terms: Dict[Term, Optional[Tuple[str, FunctionSummary, int]]] = {}  # `_param_of`
        self._fields_by_attr: Dict[str, Dict[str, List[Tuple[str, Term]]]] = {}  # `_assignments`
        # `own_definitions` by (function name, file): asked for each call term a walk reads.
        self._own: Dict[Tuple[str, str], Optional[List[Tuple[str, FunctionSummary]]]] = {}
        self.on_device: Dict[str, _BuiltOn] = {}  # class → where it is built on the device
        # Constructions of a class chosen at run time by a function called under a device
        # context (`_loader_built`), marked once the contexts and vLLM's convention are.
        self.loaders: List[Tuple[str, int, str, FunctionSummary, _BuiltOn, int]] = []
        # Each `name.py:N` the evidence words name → the (file, line) pairs it was written for
        # (`_site`): `Resolved.site_words`.
        self.site_words: SiteWords = {}
        for summary in summaries:
            for cls in summary.classes:
                self.classes.setdefault(cls.name, []).append((summary.path, cls))
            for fn in summary.functions:
                located = (summary.path, fn)  # one pair in both tables (~7 MB less on vLLM)
                self.functions.setdefault(fn.name, []).append(located)
                if fn.owner is not None:
                    self.methods.setdefault((fn.owner, fn.name), []).append(located)
            for call in summary.calls:
                self.calls.setdefault(call.callee, []).append((summary.path, call))
                if call.self_owner is not None and not call.bound:
                    self.class_calls.append((summary.path, call))
        # file → its module-level names that its functions bind or fill (`FileSummary.module_values`).
        self.module_values: Dict[str, Dict[str, Term]] = {
            summary.path: dict(summary.module_values) for summary in summaries if summary.module_values}
        self.modules = _module_classes(self.classes)
        self.moves = [(summary.path, move) for summary in summaries for move in summary.moves]
        self.subclasses: Dict[str, Set[str]] = {}  # class → its direct project subclasses
        for name, defined in self.classes.items():
            for _, cls in defined:
                for base in cls.bases:
                    self.subclasses.setdefault(base, set()).add(name)
        for summary in summaries:
            for context in summary.contexts:
                for name in context.constructs:
                    self._mark_on_device(name, _BuiltOn(summary.path, context.line, context.how), 0)
        # Then what the functions and methods the blocks call construct (a class built in the
        # block itself keeps that shorter evidence).
        for summary in summaries:
            for context in summary.contexts:
                self._mark_called(summary.path, context)
        # After the project's own contexts: a model also built under one keeps that evidence.
        for path, name, line in _vllm_models(summaries, self.modules):
            self._mark_on_device(name, _BuiltOn(path, line, "", vllm_root=name), 0)
        for variable, line, fn_path, fn, where, depth in self.loaders:
            for built, words in self._loader_built(variable, line, fn_path, fn):
                self._mark_on_device(built, replace(where, loader=(built, words)), depth)
        # Every name a call of the project names, with or without arguments (a call site of
        # none is not kept): what builds a class (`_mark_bases_of_built`, `_run_where_models_run`).
        self.named: Set[str] = set(self.calls)
        # Classes constructed under a device context of the project (`with torch.device(...)`).
        self.context_built: Set[str] = {n for summary in summaries for c in summary.contexts for n in c.constructs}
        # Functions the project hands on by name (`loss = rnnt.tdt_loss`): called where no call names them.
        self.references: FrozenSet[str] = frozenset(n for summary in summaries for n in summary.references)
        for summary in summaries:
            self.named.update(n for c in summary.contexts for n in c.constructs)
            self.named.update(n for c in summary.classes for n in c.constructs)
            self.named.update(n for f in summary.functions for n, _ in f.called)
        self._mark_bases_of_built(summaries)
        # `obj.attr = v` outside the class (`summary.ObjectStore`), by the class whose field it
        # sets (the one of `obj`'s classes, or a base, that has the field) and the attribute.
        self.object_stores: Dict[Tuple[str, str], List[Tuple[str, ObjectStore, str]]] = {}
        self.stored_attrs: Dict[str, Set[str]] = {}
        for summary in summaries:
            for store in summary.stores:
                for target in sorted(self._instance_classes(store.receiver)):
                    holder = self._declaring(target, store.attr)
                    self.object_stores.setdefault((holder, store.attr), []).append((summary.path, store, target))
                    self.stored_attrs.setdefault(holder, set()).add(store.attr)
        self.memo: Dict[Tuple[Any, ...], Value] = {}
        self.order: List[Tuple[Any, ...]] = []  # memo keys in the order they were settled
        self.pending: Set[Tuple[Any, ...]] = set()
        self.cyclic: Set[Tuple[Any, ...]] = set()
        self.passes = _MAX_PASSES  # the extra passes cycles may take, for the whole project
        self.dropped = 0  # facts dropped because they read a guess that did not hold
        self.dropped_keys: Set[Tuple[Any, ...]] = set()  # the distinct ones
        self.steps: Dict[Tuple[str, str, int], EvidenceStep] = {}
        self._enums: Dict[str, Optional[str]] = {}  # `enum`, once per class
        self.depth = 0

    def step(self, message: str, path: str, line: int) -> EvidenceStep:
        """One shared object per distinct step (thousands of values repeat the same ones)."""
        key = (message, path, line)
        found = self.steps.get(key)
        if found is None:
            found = self.steps[key] = EvidenceStep(message, path, line)
        return found

    def enum(self, cls: str) -> Optional[str]:
        """`enum_kind` of `cls` (`resolved.INT_ENUM`, `resolved.VALUE_ENUM` or None)."""
        if cls not in self._enums:
            self._enums[cls] = enum_kind(cls, self.classes, self.functions)
        return self._enums[cls]

    def _enum_read(self, cls: str, enum: str, attr: str) -> Optional[Value]:
        """`x.attr` where `x` is `cls`, an enumeration of numbers (`enum`), or one of its members:
        `.value` is a number; a member's name (`Kind.A`; a member reads the others by name too)
        is a member, an int itself of an `IntEnum`; None for anything else (a method, a property)."""
        defined_in, summary = self.classes[cls][0]
        step = self.step(enum_step_message(cls), defined_in, summary.line)
        if attr in ("value", "_value_"):
            return Value(SCALAR_KIND, 0, evidence=(step,))
        if sunder(attr) or not any(a == attr for _, c in self.classes[cls] for a, _ in c.fields):
            return None
        return Value(SCALAR_KIND, 0, evidence=(step,)) if enum == INT_ENUM else Value(OTHER_KIND, type_name=cls)

    def moved_modules(self) -> Dict[str, EvidenceStep]:
        """Project module classes whose instances some call moves to an accelerator it names
        (`summary.ModuleMove`), and the modules their `__init__` builds (moved with them); then
        those the project neither builds nor moves (`_run_where_models_run`, a convention).
        Made once (`_moved`); while it is being made (its receivers' values may ask what a call
        passes, `_moved_buffer`), the answer is that nothing is moved yet."""
        if self._moved is None:
            self._moved = {}
            self._moved = self._moved_modules()
        return self._moved

    def _moved_modules(self) -> Dict[str, EvidenceStep]:
        moved: Dict[str, EvidenceStep] = {}
        for path, move in self.moves:
            if move.device is not None:
                self._mark_moved_to_place(path, move, moved)
                continue
            cls = self.eval(move.receiver, path, None).type_name
            if cls is None or cls not in self.modules:
                continue
            message = f"an instance of `{cls}` is moved to the accelerator here (`{move.how}`): " \
                f"its buffers and parameters move with it; a method its construction does not run is {MOVED_MODULE_NOTE}"
            self._mark_moved(cls, EvidenceStep(message, path, move.line, kind=EvidenceKind.CONVENTION), cls, moved, 0)
        self._run_where_models_run(moved)
        return moved

    def _run_where_models_run(self, moved: Dict[str, EvidenceStep]) -> None:
        """Add to `moved` the classes holding buffers or parameters (`register_buffer`,
        `nn.Buffer`, `nn.Parameter`: a `wrap` field of theirs or a project base's) that the
        project neither builds nor moves: taken to run where serving code keeps a model, on the
        accelerator, as a module's `forward` inputs are (`resolved.forward_input_message`).  What
        builds such a module (a registry, a config) and runs it (a trainer, an engine,
        mmengine's runner) moves it, outside the project: a MoCo queue pointer written every
        training step is then a device write.  Construction still runs on the host (a method
        it runs comes before any move: `MOVED_MODULE_NOTE`).

        Left as they are: a class that a call of the project names, or a project subclass of
        it (where the project builds one, its moves and device contexts are the evidence:
        `_HOST = Base(4)` stays on the host); a class some move of the project may move,
        whatever the place (`_named_by_moves`: `.to("cpu")`, `.to(torch.float16)` say what
        they say); and a class that allocates some of its buffers with `device=` (it places
        them itself: one it leaves without is meant for the host, fbgemm's `max_counter`)."""
        held: List[Tuple[str, bool]] = []  # each class, and whether it is a `LightningModule`
        factories = self._uncalled_factories() if self.modules else {}
        for name in sorted(self.classes):
            if name in moved:
                continue
            lightning = self._lightning_module(name)
            if not lightning and any(sub in self.named and not self._built_by_factories_only(sub, factories)
                                     for sub in (name, *self._descendants(name))):
                continue
            wrapped = [w for base in self._with_bases(name) for w in _wrapped(self.classes[base])]
            if wrapped and not any(isinstance(w, tuple) and w[:1] == ("dev",) for w in wrapped):
                held.append((name, lightning))
        named = self._named_by_moves() if held else set()
        for name, lightning in held:
            if name not in named:
                path, summary = self.classes[name][0]
                message = lightning_module_message(name) if lightning else held_module_message(name)
                step = EvidenceStep(message, path, summary.line, kind=EvidenceKind.CONVENTION)
                moved[name] = step
                # Its submodules move with it (`nn.Module.to` is recursive): fastreid's registry-built
                # `MoCo` holds `self.memory = Memory(dim, size)`, whose queue pointer moves too.
                for _, cls in self.classes[name]:
                    for sub in cls.constructs:
                        if sub in self.modules:
                            self._mark_moved(sub, step, name, moved, 1)

    def _lightning_module(self, cls: str) -> bool:
        """Whether `cls` or a project base derives from Lightning's `LightningModule` (one the
        project does not define): Lightning's `Trainer` moves it to the accelerator before it
        runs the module's steps, wherever the project builds it (`Moco_v2(**args)`, then
        `trainer.fit(model)`)."""
        return any(b == "LightningModule" and _library_module(b, self.classes)
                   for base in self._with_bases(cls) for _, c in self.classes[base] for b in c.bases)

    def _uncalled_factories(self) -> Dict[Tuple[str, str, int], str]:
        """(file, class, line) → the factory: each first construction of a project class in a
        module-level function that no call of the project names and the project does not hand
        on (`FileSummary.references`), and that returns what it builds (`blip_pretrain(**kw)`
        builds `BLIP_Pretrain(**kw)` and returns it): the user calls it, and what runs the
        model moves it, outside the project."""
        out: Dict[Tuple[str, str, int], str] = {}
        for name, definitions in self.functions.items():
            if name in self.named or name in self.references:
                continue
            for path, fn in definitions:
                if fn.owner is not None:
                    continue
                returned = {built for term in fn.returns for built, _ in _called_names(term)}
                for callee, line in fn.called:
                    if callee in returned and callee in self.classes:
                        out[(path, callee, line)] = name
        return out

    def _built_by_factories_only(self, cls: str, factories: Mapping[Tuple[str, str, int], str]) -> bool:
        """Whether every construction of `cls` in the project is one of `factories`
        (`_uncalled_factories`): then the project builds none it runs, as for a class it never
        names (`_run_where_models_run`).  A second construction in one factory, one at module
        level, in a method, or under a device context (`DeviceContext.constructs`) is not."""
        sites = self.calls.get(cls, [])
        if not sites or cls in self.context_built:
            return False
        return all((path, cls, site.line) in factories and not site.bound for path, site in sites)

    def _named_by_moves(self) -> Set[str]:
        """The project classes some `.to(...)` / `.cuda()` / `.cpu()` of the project may move
        (each move's receiver's classes and their subclasses), whatever the place."""
        named: Set[str] = set()
        for path, move in self.moves:
            named |= self._with_subclasses(self._types_of(move.receiver, path, 0))
            cls = self.eval(move.receiver, path, None).type_name
            if cls is not None:
                named |= self._with_subclasses({cls})
        return named

    def _mark_moved_to_place(self, path: str, move: ModuleMove, moved: Dict[str, EvidenceStep]) -> None:
        """`obj.to(device)` / `obj.to(x.device)` (`summary._device_move`): a place the `device=`
        policy reads as the accelerator (`_accelerator_place`) moves `obj` there.  `obj` may be
        a loop's element (`for m in self.models(): m.to(device)`): every project module class
        its declared types or returned lists name, and their project subclasses (an instance
        declared as a base may be any of them)."""
        assert move.device is not None
        place = self._accelerator_place(move.device, path)
        if place is None:
            return
        declared = self._types_of(move.receiver, path, 0)
        for cls in sorted(self._with_subclasses(declared)):
            kind = "an instance" if cls in declared else \
                f"declared as `{'`/`'.join(sorted(b for b in declared if b in self._with_bases(cls)))}`, an instance"
            message = f"{kind} of `{cls}` is moved here (`{move.how}`), to a place not provably the CPU ({place}), " \
                f"taken for the accelerator as a factory's `device=` is: its buffers and parameters move with it; " \
                f"a method its construction does not run is {MOVED_MODULE_NOTE}"
            self._mark_moved(cls, EvidenceStep(message, path, move.line, kind=EvidenceKind.CONVENTION), cls, moved, 0)

    def _accelerator_place(self, place: Term, path: str) -> Optional[str]:
        """A move's place the `device=` policy reads as the accelerator, said as evidence (what
        it is, the call that passes it): a parameter some call in the project passes (and not every
        one the CPU), or the `.device` of such a parameter that is not a CPU tensor, or of a
        device tensor.  None for a parameter no call names (`use(m, device)` with no caller), a
        CPU place, or anything else (a local, a field: nothing tells)."""
        if place[0] == "attr" and len(place) > 2 and place[2] == "device":
            base = place[1]
            value = self.eval(base, path, base[3] if base[0] == "param" else None)
            if value.kind == DEVICE_KIND:
                return "the `.device` of a device tensor"
            if base[0] == "param" and value.kind != CPU_KIND:
                site = self._call_site(base[1], base[3], path)
                if site is not None:
                    return f"the `.device` of parameter `{base[2]}`, {site}"
            return None
        if place[0] != "param":
            return None
        value = self.eval(place, path, place[3])
        site = self._call_site(place[1], place[3], path)
        if site is None or value.kind in (CPU_PLACE_KIND, CPU_KIND):
            return None
        return f"parameter `{place[2]}`, {site}"

    def _call_site(self, function: str, owner: Optional[str], path: str) -> Optional[str]:
        """Where the first call in the project naming `function` is (its file first), as
        evidence words it; None when nothing calls it.  An `__init__` is called by constructing
        its class (`Owner(...)`), not by a call named `__init__` (`super().__init__(...)`)."""
        callee = owner if function == "__init__" and owner is not None else function
        sites = sorted(self.calls.get(callee, ()), key=lambda s: (s[0] != path, s[0], s[1].line))
        if not sites:
            return None
        site_path, site = sites[0]
        where = f"line {site.line}" if site_path == path else _site(self.site_words, site_path, site.line)
        return f"passed by the call of `{callee}` at {where}"

    def _types_of(self, term: Term, path: str, depth: int, elements: bool = False) -> Set[str]:
        """The project module classes `term` (with `elements`, an element of it) may hold, read
        off the summaries' terms: declarations (`x: Base | None`), constructions, fields, the
        lists a method returns.  Structural, so a list of two classes keeps both (a join of
        their values would name neither)."""
        if depth > 8 or not term:
            return set()
        tag = term[0]
        found: Set[str] = set()
        if tag == "sub" and not elements:
            return self._types_of(term[1], path, depth + 1, elements=True)
        if tag == "list" and elements:
            return self._types_of(term[1], path, depth + 1)
        if tag == "ann" or tag == "same" or tag == "join":
            for side in (term[1:] if tag == "same" else term[1] if tag == "join" else (term[1],)):
                if isinstance(side, tuple):
                    found |= self._types_of(side, path, depth + 1, elements)
            return found
        if tag == "field":
            for cls_name in self._with_bases(term[1]):
                for field_path, summary in self.classes.get(cls_name, []):
                    for name, field_term in summary.fields:
                        if name == term[2]:
                            found |= self._types_of(field_term, field_path, depth + 1, elements)
            return found
        if tag == "ret":
            for fn_path, fn in self.methods.get((term[1], term[2]), []):
                for returned in fn.returns:
                    found |= self._types_of(returned, fn_path, depth + 1, elements)
            return found
        if elements:
            return set()
        if tag in ("inst", "call", "built") and isinstance(term[1], str) and term[1] in self.modules:
            return {term[1]}
        cls = self.eval(term, path, None).type_name
        return {cls} if cls is not None and cls in self.modules else set()

    def _with_bases(self, cls: str) -> List[str]:
        """`cls` and its project base classes (a field declared on a base is the class's)."""
        out: List[str] = []
        todo = [cls]
        while todo and len(out) < 20:
            name = todo.pop()
            if name in out or name not in self.classes:
                continue
            out.append(name)
            todo.extend(b for _, c in self.classes[name] for b in c.bases)
        return out

    def construction_calls(self, cls: str) -> Tuple[Tuple[str, str, str, int], ...]:
        """The methods `cls` defines that the `__init__` of one of its project bases calls on
        `self`, as (method, base, file, line of the call): while an instance of `cls` is built,
        `self` in that `__init__` is the instance, so `self.m()` runs `cls`'s own `m` (the
        template-method habit: a base's `__init__` calling `self._compute_cache()` that each
        subclass overrides).  Whether `cls.__init__` reaches the base's is the walk's to check
        (`scope._runs_base_init`); bases further up are taken as `_mark_on_device` takes them."""
        found: List[Tuple[str, str, str, int]] = []
        for base in self._with_bases(cls)[1:]:
            for path, init in self.methods.get((base, "__init__"), []):
                for name, line in init.self_called:
                    if name != "__init__" and (cls, name) in self.methods \
                            and all(name != f for f, _, _, _ in found):
                        found.append((name, base, path, line))
        return tuple(found)

    def _with_subclasses(self, classes: Set[str]) -> Set[str]:
        """`classes` and the project module classes deriving from them, directly or not."""
        found = set(classes)
        changed = bool(found)
        while changed:
            changed = False
            for name in self.modules:
                if name not in found and any(b in found for _, c in self.classes.get(name, []) for b in c.bases):
                    found.add(name)
                    changed = True
        return found

    def _mark_moved(self, name: str, step: EvidenceStep, root: str, moved: Dict[str, EvidenceStep],
                    depth: int) -> None:
        if depth > 20 or name in moved or name not in self.classes:
            return
        moved[name] = step if name == root else replace(
            step, message=f"`{name}` is built by `{root}.__init__`; {step.message}")
        for _, cls in self.classes[name]:
            for sub in cls.constructs:
                self._mark_moved(sub, step, root, moved, depth + 1)

    def _mark_on_device(self, name: str, where: "_BuiltOn", depth: int) -> None:
        """A class built under a device context, and the classes its `__init__` builds; a
        factory function called there marks the classes it returns (`return Model(cfg)`)."""
        if depth > 20:
            return
        if name not in self.classes:
            for fn_path, fn in self.functions.get(name, []) if depth < 3 else ():
                for term in fn.returns:
                    for returned, line in _called_names(term):
                        if returned in self.classes or returned in self.functions:
                            self._mark_on_device(returned, where, depth + 1)
                        elif where.vllm_root is None and where.loader is None:
                            # Marked after vLLM's convention (`__init__`): a vLLM model keeps its evidence.
                            self.loaders.append((returned, line, fn_path, fn, where, depth + 1))
            return
        if name in self.on_device:
            return
        self.on_device[name] = where
        for _, cls in self.classes[name]:
            for sub in cls.constructs:
                self._mark_on_device(sub, where, depth + 1)
        # What `__init__` (its own, or a base's it runs) calls runs under the same default
        # device: `nn.ModuleList([Layer(...) for _ in ...])`, `self._build()`, `make(cfg)`.
        self._run_under([(p, fn, ()) for base in self._with_bases(name)
                         for p, fn in self.methods.get((base, "__init__"), [])], where, depth + 1, chained=False)

    def _mark_bases_of_built(self, summaries: Sequence[FileSummary]) -> None:
        """A base class that allocates without `device=` in its `__init__`, that the project
        constructs nowhere (no call names it), and whose project subclasses are all built
        under a default device: `self` in its methods is one of theirs, so its buffers are on
        the device there too (`_LoRALayerBase._clear_slot_metadata` writing what
        `_LoRALayerBase.__init__` registered, for the layers a runner builds).  Rests on the
        project being all the code that constructs it, as every construction-site fact does,
        said as a convention.  Bases of bases once their subclasses are marked, a few rounds."""
        named = self.named
        for _ in range(4):
            marked = False
            for base in sorted(self.subclasses):
                subs = self._descendants(base)
                if base in self.on_device or base in named or base not in self.classes or not subs \
                        or any(s not in self.on_device for s in subs):
                    continue
                if not any(_allocates_by_default(t) for _, c in self.classes[base] for _, t in c.fields):
                    continue
                first = sorted(subs)[0]
                self.on_device[base] = replace(self.on_device[first], base_of=(base, tuple(sorted(subs))))
                marked = True
            if not marked:
                return

    def _instance_classes(self, term: Term) -> Set[str]:
        """The project classes an object of `term` may be an instance of, where the term says:
        `Cls(...)`, an annotated instance, `self.attr()` of an attribute holding a class
        (`_held_classes`); a join, each side's.  Empty where it says nothing."""
        tag = term[0]
        if tag == "join":
            return {c for part in term[1] for c in self._instance_classes(part)}
        built = self._built_class(term)
        if built is not None:
            return {built}
        if tag == "ret" and len(term) > 3:
            return self._held_classes(term[1], term[2])
        if tag == "field" and term[1] in self.classes:
            return self._declared_instances(self._declaring(term[1], term[2]), term[2])
        return set()

    def _declared_instances(self, cls: str, attr: str) -> Set[str]:
        """The project classes `cls`'s field `attr` is declared or built as (`accelerator:
        AccCfg = field(...)`, `self.acc = AccCfg()`): a store through it (`acc =
        self.accelerator; acc.dp_size = n`) sets a field of an instance of one of them."""
        found: Set[str] = set()
        for _, term in self._assignments(cls).get(attr, ()):
            built = self._built_class(term[1] if term[0] == "ann" else term)
            if built is not None:
                found.add(built)
        return found

    def _built_class(self, term: Term) -> Optional[str]:
        """The project class a term builds or declares an instance of (`Cls(...)`, an annotated
        instance, a class a parameter's annotation names): `call`, `inst`, `built` terms."""
        return term[1] if term[0] in ("call", "inst", "built") and term[1] in self.classes else None

    def _held_classes(self, cls: str, attr: str) -> Set[str]:
        """The project classes `self.attr` holds as class objects in a method of `cls`, over
        `cls` and its project subclasses (`self` may be any of them, and a subclass's class
        body may bind `attr` anew): calling it builds an instance of one of them.  Empty where
        one of them defines a method `attr` (the call runs it) or nothing binds a class."""
        family = [cls] + sorted(self._descendants(cls))
        if any(self._has_method(c, attr) for c in family):
            return set()
        return {c for member in family for c in self._class_valued(member, attr)}

    def _class_valued(self, cls: str, attr: str) -> Set[str]:
        """The project classes `cls`'s own assignments of `attr` bind (`attr = Cls` in the class
        body, `self.attr = Cls`), else its nearest project base's that assigns it."""
        owner = self._assigning(cls, attr)
        if owner is None:
            return set()
        return {t[1] for _, c in self.classes[owner] for a, t in c.fields
                if a == attr and t[0] == "global" and t[1] in self.classes}

    def _declaring(self, cls: str, attr: str) -> str:
        """The class whose field `attr` an instance of `cls` reads: `cls` where it (or no
        project base) assigns it, else the nearest project base that does."""
        return self._assigning(cls, attr) or cls

    def _assigning(self, cls: str, attr: str) -> Optional[str]:
        """`cls`, or its nearest project base (breadth first), that assigns `attr` outright; an
        augmented assignment (`self.attr += v`, an `aug` term) adds to a field, it declares none."""
        return self._nearest(cls, lambda current: any(
            a == attr and t[0] != "aug" for _, c in self.classes[current] for a, t in c.fields))

    def _nearest(self, cls: str, holds: Callable[[str], bool], limit: Optional[int] = None) -> Optional[str]:
        """`cls`, or its nearest project base (breadth first), for which `holds`; None when none
        does (or, with `limit`, none of the first `limit` classes visited)."""
        seen: Set[str] = set()
        todo = [cls]
        while todo and (limit is None or len(seen) < limit):
            current = todo.pop(0)
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            if holds(current):
                return current
            todo.extend(b for _, c in self.classes[current] for b in c.bases)
        return None

    def _descendants(self, cls: str) -> Set[str]:
        """The project classes deriving from `cls`, directly or not (a bounded walk)."""
        todo: List[str] = [cls]
        found: Set[str] = set()
        while todo and len(found) < 200:
            for sub in sorted(self.subclasses.get(todo.pop(), ())):  # a fixed cut at the bound
                if sub not in found and sub != cls:
                    found.add(sub)
                    todo.append(sub)
        return found

    def _mark_called(self, path: str, context: DeviceContext) -> None:
        """`with torch.device(d):` sets the default device for its whole dynamic extent: the
        project functions and methods the block calls (`self.init_model(...)`, `build(cfg)`) run
        there, so the classes they construct are built on `d` (`_run_under`, with the chain of
        calls as evidence).  `self.m(...)` may run `m` as the object's class has it: the
        owner's own (or inherited) `m` or any override in a project subclass (`_dispatch`)."""
        where = _BuiltOn(path, context.line, context.how)
        start: List[Tuple[str, FunctionSummary, Tuple[str, ...]]] = []
        for name, line in context.methods:
            for fn_path, fn in self._dispatch(context.owner, name):
                start.append((fn_path, fn, (_hop(self.site_words, f"self.{name}", path, line, fn_path, fn),)))
        for name in context.constructs:
            for fn_path, fn in self.functions.get(name, []):
                if fn.owner is None:
                    start.append((fn_path, fn, (_hop(self.site_words, name, path, context.line, fn_path, fn),)))
        self._run_under(start, where, 0, chained=True)

    def _run_under(self, start: List[Tuple[str, FunctionSummary, Tuple[str, ...]]], where: "_BuiltOn",
                   depth: int, chained: bool) -> None:
        """The functions in `start` run under `where`'s default device, and so do the project
        functions and methods they call in turn (`_CALL_HOPS` deep): the classes they construct
        are built there (`_mark_on_device`).  With `chained`, the evidence names the calls from
        the block to the construction.  A call of a parameter or of another object's method
        names nothing; the callee's own `with torch.device(...)` decides there."""
        if depth > 20:
            return
        todo = list(start)
        seen: Set[Tuple[str, str, int]] = set()
        while todo:
            fn_path, fn, hops = todo.pop(0)
            if (fn_path, fn.name, fn.line) in seen:
                continue
            seen.add((fn_path, fn.name, fn.line))
            deeper = len(hops) < _CALL_HOPS
            for name, line in fn.called:
                if name in self.classes:
                    chain = hops + (f"`{name}(...)` at {_site(self.site_words, fn_path, line)}",)
                    self._mark_on_device(name, replace(where, via=(name, chain)) if chained else where, depth + 1)
                elif deeper:
                    todo.extend((p, f, hops + (_hop(self.site_words, name, fn_path, line, p, f),))
                                for p, f in self.functions.get(name, []) if f.owner is None)
            for name, line in fn.self_called if deeper else ():
                todo.extend((p, f, hops + (_hop(self.site_words, f"self.{name}", fn_path, line, p, f),))
                            for p, f in self._dispatch(fn.owner, name))

    def _dispatch(self, owner: Optional[str], name: str) -> List[Tuple[str, FunctionSummary]]:
        """What `self.name(...)` in a method of `owner` may run: `owner`'s own `name` (else the
        one its project bases define), and every override in its project subclasses, since
        `self` may be an instance of any of them (an abstract `init_model` a runner subclass
        fills in)."""
        if owner is None:
            return []
        found = list(self.methods.get((owner, name), []))
        if not found:
            for base in self._with_bases(owner)[1:]:
                found.extend(self.methods.get((base, name), []))
        for sub in sorted(self._descendants(owner)):
            found.extend(self.methods.get((sub, name), []))
        return found

    def _loader_built(self, variable: str, line: int, path: str, fn: FunctionSummary) -> List[Tuple[str, str]]:
        """A loader's construction of a class chosen at run time: `fn` (called under a device
        context) returns `variable(k1=..., k2=...)`, `variable` no project class or function
        (a registry's class).  The project module classes whose `__init__` takes every one of
        those keywords and needs no other argument are what it may build (vLLM's
        `initialize_model` and its forks' builders: `model_class(vllm_config=..., prefix=...)`),
        as `(class, the constructor as evidence words it)`.  Keyword-only calls of at least two
        keywords; positional or starred arguments tell nothing about the constructor."""
        site = next((c for p, c in self.calls.get(variable, ()) if p == path and c.line == line), None)
        if site is None or site.args or site.starred or len(site.keywords) < 2:
            return []
        keywords = {k for k, _ in site.keywords}
        call = f"{variable}({', '.join(f'{k}=...' for k, _ in site.keywords)})"
        words = f"`{fn.name}` builds the class a registry picks (`{call}`, {_site(self.site_words, path, line)})"
        found = []
        for cls in sorted(self.modules):
            for _, init in self.methods.get((cls, "__init__"), []):
                own = init.params[1:]
                if keywords <= set(own) and all(p in keywords or p in init.defaults for p in own):
                    found.append((cls, words))
                    break
        return found

    # -- memoized queries ----------------------------------------------------------------
    def _known(self, key: Tuple[Any, ...]) -> Optional[Value]:
        """The memo's value of `key` (a read while it is being computed marks a cycle), or
        None: `_memo` without its closure, for the queries asked most."""
        found = self.memo.get(key)
        if found is not None and key in self.pending:
            self.cyclic.add(key)  # read while being computed: a cycle
        return found

    def _memo(self, key: Tuple[Any, ...], compute: Any) -> Value:
        found = self._known(key)
        if found is not None:
            return found
        if self.depth > _MAX_DEPTH:
            return UNKNOWN
        self.depth += 1
        try:
            return self._fixpoint(key, compute)
        finally:
            self.depth -= 1

    def _fixpoint(self, key: Tuple[Any, ...], compute: Any) -> Value:
        """The least solution of a fact that depends on itself (`finished = f(finished)` in a
        loop, a function returning its own recursive call).

        A cycle first reads "no value yet" (`NONE`, which a join ignores): what the other
        paths give.  The guess is then checked by one more pass that reads it; when that pass
        agrees, the guess is the fixpoint.  Otherwise (or once `self.passes` is spent) the
        cycle reads unknown, as it always did.  The facts computed during a pass that read a
        guess are dropped before the next pass; a project whose resolve drops the same facts
        over and over (`_DROP_FLOOR`, `_DROPS_PER_FACT`) spends its passes at once, so that it
        ends in seconds, not in hours.
        """
        # Fields keep the first reading: a class's own walk proves its int fields by
        # induction with evidence of its own (`scope._int_fields`).
        guesses = [NONE, None, UNKNOWN] if self.passes > 0 and key[0] != "field" else [UNKNOWN]
        previous: Optional[Value] = None
        value = UNKNOWN
        for guess in guesses:
            start = len(self.order)
            self.memo[key] = guess if guess is not None else (previous or UNKNOWN)
            self.pending.add(key)
            self.cyclic.discard(key)
            try:
                value = compute()
            finally:
                self.pending.discard(key)
            if key not in self.cyclic or guess is UNKNOWN:
                break
            if guess is None and previous is not None and _fact(value) == _fact(previous):
                break  # the guess holds
            for stale in self.order[start:]:
                self.memo.pop(stale, None)
            self.dropped += len(self.order) - start
            self.dropped_keys.update(self.order[start:])
            del self.order[start:]
            if self.dropped > _DROP_FLOOR and self.dropped > _DROPS_PER_FACT * len(self.dropped_keys):
                # The same facts computed and dropped again and again: this cycle, and every
                # one after, reads unknown (what a spent `passes` gives), without computing it
                # again.
                self.passes = 0
                value = UNKNOWN
                break
            if value.kind == UNKNOWN_KIND and value.type_name is None and value.element is None:
                break  # nothing to check: a larger guess gives no less
            self.passes -= 1
            previous = value
        self.memo[key] = value
        self.order.append(key)
        return value

    def field(self, cls: str, attr: str) -> Value:
        key = ("field", cls, attr)
        found = self._known(key)  # most asks are answered: no closure made for them (as `param`)
        if found is not None:
            return found
        return self._memo(key, lambda: self._field(cls, attr, set()))

    def _field(self, cls: str, attr: str, seen: Set[str], instance: Optional[str] = None) -> Value:
        """`attr` of an instance of `cls`, its own assignments first, else its bases'.  A base's
        `__init__` runs while the instance is built: where `instance` (the class constructed)
        is built under a default device, its factories without `device=` are read as
        `instance`'s, with its evidence (`dflt` terms look the owner up in `on_device`)."""
        if cls in seen or cls not in self.classes:
            return UNKNOWN
        seen.add(cls)
        owner = instance if instance is not None and instance in self.on_device else cls
        found: Optional[Value] = None
        declared: Optional[Value] = None
        defaulted = False
        empty: List[Tuple[str, int]] = []  # the lines of `self.x = []` nothing grows
        stores: List[Tuple[str, Term, Optional[str]]] = []  # `self.d[k] = v`: v, and k where a string
        augments: List[Tuple[str, Term]] = []  # `self.x += v`: what each adds
        assigned: List[Tuple[str, Term]] = []
        for path, term in self._assignments(cls).get(attr, ()):
            if term == ("none",):
                defaulted = True  # `= None`: a write through it raises, it adds no value
                continue
            if term[0] == EMPTY_LIST:
                # `= []` that nothing grows: indexing it raises `IndexError`, so it adds
                # no value next to others (`summary._grown_fields`), as `None`.
                empty.append((path, term[1]))
                continue
            if term[0] == "store":
                stores.append((path, term[1], term[2] if len(term) > 2 else None))
                continue
            if term[0] == "aug":
                augments.append((path, term[1]))
                continue
            if term[0] == "ann":
                # A declaration (`buf: Optional[Tensor] = None`): what the values
                # assigned elsewhere do not say (a class for a chain, a scalar).
                value = self.eval(term[1], path, owner)
                declared = value if declared is None else join(declared, value)
                continue
            rest = _without(term, ("field", cls, attr))
            if rest is None:
                continue  # `self.x = self.x`: nothing new
            assigned.append((path, rest))
            value = self.eval(rest, path, owner)
            found = value if found is None else join(found, value)
        for store_path, outside, target in self.object_stores.get((cls, attr), ()):
            # `state.attr = v` outside the class, `state` an instance of it (or a subclass).
            value = self.eval(outside.value, store_path, None)
            if value.kind == DEVICE_KIND:
                value = value.because(self.step(
                    f"`{outside.shown} = ...` stores a device tensor in the `{attr}` of a `{target}`",
                    store_path, outside.line))
            assigned.append((store_path, outside.value))
            found = value if found is None else join(found, value)
        if empty and found is None:
            found = self.eval(EMPTY_DISPLAY, empty[0][0], owner)  # only `[]`: an empty list
        elif empty and found is not None and found.kind == DEVICE_KIND:
            found = found.because(self.step(empty_list_message(attr), *empty[0]))
        if stores and found is not None and found.kind == OTHER_KIND and found.type_name is None \
                and (found.length == 0 or found.element is not None):
            # A dict or list field filled by `self.d[k] = t`: its elements are those values.
            for store_path, store, key in stores:
                added = self.eval(store, store_path, cls)
                if key is not None and is_json_data(found):
                    # `self.config["window"] = n` into parsed JSON: that key holds `n` too, the
                    # others still what the file holds (`entries` over `element`).
                    held = dict(found.entries or ())
                    held[key] = join(held.get(key, found.element or UNKNOWN), added)
                    found = replace(found, entries=tuple(held.items()))
                    continue
                element = added if found.element is None else join(found.element, added)
                # A dict stays one (`obj.d.values()` iterates what is stored), its keys now open.
                found = Value(OTHER_KIND, element=element, key=UNKNOWN if found.key is not None else None)
        if declared is not None and (cls, "__init__") not in self.methods:
            # A dataclass (no `__init__` of its own): what its constructions pass.
            built = self._constructed(cls, attr, defaulted=defaulted or found is not None)
            if built is not None:
                found = built if found is None else join(found, built)
        if declared is not None and _informative(declared) and (found is None or _vague(found)) \
                and not (declared.kind == SCALAR_KIND
                         and any(self._mentions_tensor(t, p, cls) for p, t in assigned)):
            # The annotation fills what the assignments leave open, but never against them:
            # `qscale_max: float` assigned `torch.max(w) * p` holds a tensor (direct evidence
            # about the object beats a declaration).
            found = declared
        if found is None:
            for path, summary in self.classes[cls]:
                for base in summary.bases:
                    inherited = self._field(base, attr, seen, instance or cls)
                    if inherited.kind != UNKNOWN_KIND or inherited.type_name is not None:
                        found = inherited if found is None else join(found, inherited)
        return _augmented(found, [self.eval(added, p, owner) for p, added in augments]) \
            if found is not None else UNKNOWN

    def in_methods(self, cls: str, attr: str, moved: Mapping[str, EvidenceStep]) -> Value:
        """`cls`'s own field `attr` as its methods see it: a buffer or parameter it registers
        (an `nn.Buffer` / `nn.Parameter` / `register_buffer`) is on the device where `cls` is in
        `moved` (`moved_modules`), as `scope._moved_fields` reads it.  A tensor assigned to it
        elsewhere (`self.queue_ptr = torch.zeros(1)` in a reset method) stays one:
        `nn.Module.__setattr__` stores a tensor under a registered buffer's name as that buffer
        (and raises for a parameter's, unless a parameter), so it moves with the module too."""
        value = self.field(cls, attr)
        if cls not in moved or value.kind not in (TENSOR_KIND, CPU_KIND):
            return value
        terms = [(p, t) for p, t in self._assignments(cls).get(attr, ()) if t[0] not in _NOT_SETTING]
        wrapped = [(p, t) for p, t in terms if t[0] == "wrap"]
        if not wrapped:
            return value
        path, term = wrapped[0]
        return Value(DEVICE_KIND, value.rank, integer=value.integer).because(
            moved[cls], self.step(MODULE_TENSOR_STEP, path, term[2]))

    def defined_below(self, cls: str, attr: str, moved: Mapping[str, EvidenceStep]) -> Value:
        """`attr` of `self` in a method of `cls` that neither `cls` nor a project base sets to
        anything but `None`: what the project subclasses that set it hold, joined (a mixin's or
        an abstract base's method reading a buffer each subclass allocates: `self` there is an
        instance of one of them, since an instance of any other class raises at the read).
        A buffer or parameter of a subclass in `moved` (`moved_modules`) is on the device, as in
        that subclass's own methods.  UNKNOWN where no subclass sets it.  A device value or a
        Python number (every subclass holding one) says so, as a convention: a subclass outside
        the project, or code setting the field from outside the class, could hold anything."""
        # A subclass that only stores into it (`self.x[i] = v`) counts too: what it reads then
        # comes from its other bases, and an unknown there keeps the join from claiming a device.
        definers = sorted(sub for sub in self._descendants(cls) if any(
            a == attr and t[0] not in ("aug", "none") for _, c in self.classes[sub] for a, t in c.fields))
        found = join_all([self.in_methods(sub, attr, moved) for sub in definers])
        if found.kind not in (DEVICE_KIND, SCALAR_KIND):
            return found
        path, summary = self.classes[definers[0]][0]
        shown = ", ".join(f"`{s}`" for s in definers[:4]) + (", ..." if len(definers) > 4 else "")
        held = "a device tensor" if found.kind == DEVICE_KIND else "a Python number"
        return found.because(EvidenceStep(
            f"`{cls}` does not set `{attr}`: `self` in its methods is an instance of a project subclass, "
            f"and those that set it ({shown}) hold {held} there", path, summary.line,
            kind=EvidenceKind.CONVENTION))

    def _assignments(self, cls: str) -> Dict[str, List[Tuple[str, Term]]]:
        """The field assignments of `cls`'s definitions (`ClassSummary.fields`, each with its
        file) by attribute, in their order: `_field` asks for one attribute at a time, for
        every attribute of a class, and scanning every assignment each time cost a tenth of
        the resolve on vLLM.  Built once per class name."""
        found = self._fields_by_attr.get(cls)
        if found is None:
            found = self._fields_by_attr[cls] = {}
            for path, summary in self.classes[cls]:
                for name, term in summary.fields:
                    found.setdefault(name, []).append((path, term))
        return found

    def _mentions_tensor(self, term: Term, path: str, owner: Optional[str], budget: int = 64) -> bool:
        """Whether `term` or one of its operands evaluates to a tensor: an expression built
        from a tensor (`torch.max(w) * p`, `t.sum() / n`) is no proven Python number, even
        where a join with an unknown left its own value open."""
        todo: List[Term] = [term]
        while todo and budget > 0:
            budget -= 1
            current = todo.pop()
            if current[0] == "join":
                todo.extend(current[1])
                continue
            if self.eval(current, path, owner).kind.is_tensor:
                return True
            todo.extend(t for t in current[1:] if isinstance(t, tuple) and t and isinstance(t[0], str))
        return False

    def _constructed(self, cls: str, attr: str, defaulted: bool) -> Optional[Value]:
        """The join of what every `Cls(attr=...)` in the project passes; None when a call
        passes it by position or hides it (`**kw`), or passes nothing and there is no default."""
        sites = [site for site in self.calls.get(cls, []) if not site[1].bound]
        if not sites or len(sites) > 200:
            return None
        positional = next((c.positional for _, c in self.classes.get(cls, []) if c.positional), ())
        found: Optional[Value] = None
        for path, site in sites:
            term = next((t for k, t in site.keywords if k == attr), None)
            if term is None and not site.starred and attr in positional \
                    and positional.index(attr) < len(site.args):
                term = site.args[positional.index(attr)]  # the generated `__init__`'s order
            if term is None:
                if site.starred or site.args and attr not in positional or not defaulted:
                    return None
                continue
            value = self.eval(term, path, None)
            if value.kind == DEVICE_KIND:
                message = f"`{cls}({attr}=...)` passes a device tensor" \
                    if any(k == attr for k, _ in site.keywords) else \
                    f"`{cls}(...)` passes a device tensor as `{attr}` (argument {positional.index(attr) + 1})"
                value = value.because(self.step(message, path, site.line))
            found = value if found is None else join(found, value)
        return found

    def returns(self, name: str) -> Value:
        # `name(...)` calls a function, never a method of the same name.
        return self._memo(("returns", name), lambda: self._returns(
            [(p, fn) for p, fn in self.functions.get(name, []) if fn.owner is None]))

    def returns_in(self, name: str, path: str) -> Value:
        """What `name(...)` returns when called in the module at `path`: that module's own
        `def name` where it has one (Python binds the bare name to the module's global),
        else every project function of the name (an import: the name is all a call shows).
        Two modules' `def alloc` must not join: a caller of one sees only its module's."""
        try:
            own = self._own[(name, path)]
        except KeyError:
            own = self._own[(name, path)] = own_definitions(self.functions.get(name, []), path)
        if own is None:
            return self.returns(name)
        return self._memo(("returns", name, path), lambda: self._returns(own))

    def method_returns(self, cls: str, name: str) -> Value:
        return self._memo(("method", cls, name), lambda: self._method_returns(cls, name))

    def _method_returns(self, cls: str, name: str) -> Value:
        own = self.methods.get((cls, name))
        if own:
            return self._returns(own)
        found: Optional[Value] = None
        for _, summary in self.classes.get(cls, []):  # inherited from a project base class
            for base in summary.bases:
                if base in self.classes and base != cls:
                    value = self.method_returns(base, name)
                    if _informative(value):
                        found = value if found is None else join(found, value)
        return found if found is not None else UNKNOWN

    def _returns(self, definitions: Sequence[Tuple[str, FunctionSummary]]) -> Value:
        found: Optional[Value] = None
        for path, fn in definitions:
            value = join_all([self.eval(t, path, fn.owner) for t in fn.returns])
            if fn.return_annotation[0] in ("inst", "tensor", "list") and (
                    value.kind == UNKNOWN_KIND or value.kind == TENSOR_KIND and value.rank is None):
                annotated = self.eval(fn.return_annotation, path, fn.owner)
                value = annotated if value.kind == UNKNOWN_KIND else value
            elif fn.return_annotation[0] == "list" and value.kind == OTHER_KIND and value.type_name is None \
                    and (value.element is None or value.element.kind == UNKNOWN_KIND):
                # `-> tuple[int, ...]` where the body's container says nothing of its
                # elements (`tuple(f(r) for r in rows)`): the declaration fills the gap,
                # unless a returned term is built from a tensor (the body beats it).
                element = self.eval(fn.return_annotation, path, fn.owner).element
                if element is not None and _informative(element) and not (
                        element.kind == SCALAR_KIND
                        and any(self._mentions_tensor(t, path, fn.owner) for t in fn.returns)):
                    value = replace(value, element=element.because(self.step(
                        f"`{_qual(fn)}()` is annotated to return a container of "
                        f"{element.kind.value}s", path, fn.line)))
            elif fn.return_annotation == ("scalar",):
                value = SCALAR
            if value.kind == DEVICE_KIND:
                value = value.because(EvidenceStep(
                    f"`{_qual(fn)}()` returns a device tensor", path, fn.line))
            elif value.type_name is not None and not value.evidence:
                value = value.because(EvidenceStep(
                    f"`{_qual(fn)}()` returns a `{value.type_name}`", path, fn.line))
            items = self._return_items(fn, path)
            if items is not None and value.kind == OTHER_KIND:
                value = replace(value, items=items)
            value = _keyed_steps(value, f"`{_qual(fn)}()` returns a dict", path, fn.line)
            found = value if found is None else join(found, value)
        return found if found is not None else UNKNOWN

    def _return_items(self, fn: FunctionSummary, path: str) -> Optional[Tuple[Value, ...]]:
        """What each position of the tuple `fn` returns (`return buf, n` on every path): a
        caller's `buf, n = fn()` binds each name to its own position.  A device tensor's
        position says so (evidence).  None where the summary holds no positions."""
        if not fn.return_items:
            return None
        positions: List[Value] = []
        for k in range(len(fn.return_items[0])):
            value = self.eval(fn.return_items[0][k], path, fn.owner)
            for display in fn.return_items[1:]:
                value = join(value, self.eval(display[k], path, fn.owner))
            if value.kind == DEVICE_KIND:
                value = value.because(EvidenceStep(
                    f"`{_qual(fn)}()` returns a device tensor as position {k} of its tuple", path, fn.line))
            value = _keyed_steps(value, f"`{_qual(fn)}()` returns a dict as position {k} of its tuple", path, fn.line)
            positions.append(value)
        return tuple(positions)

    def param(self, fn: FunctionSummary, index: int) -> Value:
        """What every call site in the project passes to parameter `index` of `fn`."""
        key = self._call_key_of("param", fn, index)
        found = self._known(key)  # most asks are answered: no closure made for them
        if found is not None:
            return found
        name, position = _at_call(fn, index)
        return self._memo(key, lambda: self._param(fn, position, name))

    def passed(self, fn: FunctionSummary, index: int) -> Value:
        """What every call site that passes parameter `index` of `fn` (one with a default)
        passes: the calls that omit it leave the default, which the walk reads itself."""
        name, position = _at_call(fn, index)
        return self._memo(self._call_key_of("passed", fn, index), lambda: self._param(fn, position, name, omitted=True))

    def every_passes(self, fn: FunctionSummary, index: int) -> Value:
        """What the call sites pass to parameter `index` of `fn`, one with a default, when
        every call passes it (`device=None` that every call points at the accelerator): `fn`
        has a parameter a call must pass, so a call without arguments (which a summary does not
        record) cannot run it; a recorded call that leaves it out takes the default, and then
        nothing is known."""
        if not _required(fn):
            return UNKNOWN
        name, position = _at_call(fn, index)
        return self._memo(self._call_key_of("every", fn, index),
                          lambda: self._param(fn, position, name, every=True))

    def none_passes(self, fn: FunctionSummary, index: int) -> bool:
        """No call of `fn` passes parameter `index` (one with a default): `fn` has a parameter
        a call must pass, so every call is recorded, and none passes this one by position or
        by keyword, nor unpacks `*args` / `**kwargs` that might."""
        if not _required(fn):
            return False
        sites = self._sites(fn)
        if not sites or len(sites) > 200:
            return False
        name, position = _at_call(fn, index)
        return all(_passed(site, name, position) is None and not site.starred for _, site in sites)

    def passed_place(self, fn: FunctionSummary, index: int) -> Value:
        """What parameter `index` of `fn` holds by its call sites: a `device=None` parameter
        (`_device_param`, with a default: the CPU) a place only where every call passes one
        (`every_passes`), any other parameter what every call passes (`param`: nothing, for one
        with a default, since the calls that omit it are not recorded)."""
        if _defaulted_device(fn, index):
            return self.every_passes(fn, index)
        return self.param(fn, index)

    def _call_key_of(self, kind: str, fn: FunctionSummary, index: int) -> Tuple[Any, ...]:
        """The module's `_call_key`, made once per function object and parameter (`_fn_keys`)."""
        keys = self._fn_keys.get(id(fn))
        if keys is None:
            keys = self._fn_keys[id(fn)] = [None] * (3 * len(fn.params))
        slot = 3 * index + _CALL_KINDS[kind]
        found = keys[slot]
        if found is None:
            # A function's sites are those of its name (0); a method's (static or not), those
            # its class decides (`param_key`); a function several modules define, those that
            # bind to its own (`homonym_sites`).
            keyed = fn.owner is not None or len(self.functions.get(fn.name, ())) > 1
            found = keys[slot] = _call_key(kind, fn, index, self._sites_key(fn) if keyed else 0)
        return found

    def _sites_key(self, fn: FunctionSummary) -> int:
        """A number for the very call sites that may run `fn` (`_sites`), the same for two
        methods whose sites are the same: what their calls pass is asked once for both (most
        classes' methods of one name are found by the same calls; those told apart by
        `self.m(...)`, `x.m(...)` on a known instance, or a module's field calls, are not)."""
        sites = self._sites(fn)
        same = self._site_keys.setdefault(hash(tuple(id(site) for _, site in sites)), [])
        for known, number in same:
            if known is sites or len(known) == len(sites) and all(a[1] is b[1] for a, b in zip(known, sites)):
                return number
        self._site_count += 1
        same.append((sites, self._site_count))
        return self._site_count

    def _param(self, fn: FunctionSummary, position: int, name: str, omitted: bool = False,
               every: bool = False) -> Value:
        """`omitted`: the parameter has a default, and the calls that leave it out (or are
        not recorded) are not asked; at least one call must pass it.  `every`: it has a
        default, every call is recorded (`every_passes`), and each must pass it."""
        # `GraphStep.__call__`: its calls name no method, they call an instance of the class.
        callee = f"{fn.owner}.__call__" if fn.name == "__call__" and fn.owner is not None else fn.name
        # What the evidence calls it: a class's construction runs its `__init__` (`Beam(...)`).
        shown = fn.owner if fn.name == "__init__" and fn.owner is not None else callee
        if self._applied_forward(fn):
            shown = f"{fn.owner}.apply"  # an autograd `Function`'s `forward` runs from `apply`
        values: List[Tuple[str, int, Value]] = []
        if name in fn.defaults and not omitted and not every:
            # Calls without arguments are not recorded: some may omit it, and take the default.
            # A default the summary read (`Kind.NORMAL`) stands for them, where it says something.
            default = self._default_value(fn, name)
            if default is None:
                return UNKNOWN
            values.append(default)
            omitted = True
        sites = self._sites(fn)
        if not sites or len(sites) > 200:
            return UNKNOWN
        names_device = _device_param(name, fn.annotations[fn.params.index(name)])
        for path, site in sites:
            term = _passed(site, name, position)
            if term is None and omitted and not site.starred:
                continue  # it takes the default
            if term is None and every and not site.starred:
                return UNKNOWN  # this call takes the default
            if term is None:
                unpacked = self._unpacked(site, name, path, callee)
                if unpacked is None:
                    return UNKNOWN  # a default, or a position hidden by `*args`
                values.append((path, site.line, unpacked))
                continue
            value = self.eval(term, path, None)
            if names_device and value.kind == UNKNOWN_KIND:
                value = self._device_of_unplaced(term, path, site.line) or value
            if value.kind == TENSOR_KIND:
                value = self._moved_buffer(term, path, site.line) or value
            module = self.forward_calls.get(id(site)) if callee == "forward" else None
            if module is not None and value.kind == DEVICE_KIND:
                value = value.because(self.step(
                    f"`self.{module[0]}(...)` calls an `nn.Module` (`{module[1]}`): it runs `forward` with "
                    "the call's arguments", path, site.line))
            instance = self.instance_calls.get(id(site)) if fn.name == "__call__" else None
            if instance is not None and value.kind == DEVICE_KIND:
                value = value.because(self.step(
                    f"`self.{instance[0]}(...)` calls an instance of `{instance[1]}`: Python runs its class's "
                    "`__call__` with the call's arguments", path, site.line))
            values.append((path, site.line, value))
        if omitted and not values:
            return UNKNOWN
        values = [(p, line, v) for p, line, v in values if not v.none]  # a cycle's "nothing yet"
        if not values:
            return NONE
        kinds = {v.kind for _, _, v in values}
        first_path, first_line, _ = values[0]
        if kinds == {DEVICE_KIND}:
            merged = values[0][2]
            for _, _, v in values[1:]:
                merged = join(merged, v)
            return merged.because(EvidenceStep(
                f"every call of `{shown}` passes a device tensor as `{name}` ({_shown_sites(self.site_words, values)})",
                first_path, first_line))
        if kinds == {SCALAR_KIND}:
            # A number only by a caller's int default (`n_ctx=512` passed on) says so too.
            defaults = tuple(dict.fromkeys(step for _, _, v in values for step in v.evidence
                                           if _INT_DEFAULT_STEP in getattr(step, "message", "")))
            return SCALAR.because(EvidenceStep(
                f"every call of `{shown}` passes a Python number as `{name}` ({_shown_sites(self.site_words, values)})",
                first_path, first_line), *defaults)
        if kinds in ({CPU_PLACE_KIND}, {DEVICE_PLACE_KIND}):
            # `f(..., device=torch.device("cpu"))` at every call: `device=device` is the CPU.
            (place,) = kinds
            what = "the CPU" if place == CPU_PLACE_KIND else "an accelerator"
            # A place read by a convention (`_device_of_unplaced`) keeps saying so.
            conventions = tuple(step for _, _, v in values for step in v.evidence
                                if getattr(step, "message", None) == _UNPLACED_DEVICE_STEP)
            return Value(place).because(EvidenceStep(
                f"every call of `{shown}` passes {what} as `{name}` ({_shown_sites(self.site_words, values)})",
                first_path, first_line), *conventions[:1])
        if kinds == {OTHER_KIND} and all(_numbers(v) for _, _, v in values):
            # `f(tuple(slots))` with `slots` built of ints: a container of Python numbers.
            step = EvidenceStep(
                f"every call of `{shown}` passes a container of Python numbers as `{name}` ({_shown_sites(self.site_words, values)})",
                first_path, first_line)
            return Value(OTHER_KIND, element=SCALAR.because(step)).because(step)
        if kinds <= {SCALAR_KIND, OTHER_KIND, UNKNOWN_KIND} and all(_one_or_many(v) for _, _, v in values):
            # `f(ids)` with `ids: int | list[int]`, or some calls an int and some a list of ints:
            # iterating or indexing it (a number cannot be) yields a Python number.
            step = EvidenceStep(
                f"every call of `{shown}` passes a Python number or a container of Python numbers as "
                f"`{name}` ({_shown_sites(self.site_words, values)})", first_path, first_line)
            return Value(UNKNOWN_KIND, element=SCALAR.because(step)).because(step)
        if kinds <= {UNKNOWN_KIND, OTHER_KIND} and all(cpu_by_default(v) for _, _, v in values):
            # `f(n, device)` at every call, `device` a caller's parameter defaulting to the CPU
            # that the caller neither rebinds nor tests and that not every call of the caller
            # points elsewhere (`summary`'s `cpudefault` argument): the CPU unless a caller says
            # otherwise, as in the caller's own body.
            default = next(step for step in values[0][2].evidence
                           if getattr(step, "message", None) == CPU_DEFAULT_STEP)
            return Value(UNKNOWN_KIND, evidence=(EvidenceStep(
                f"every call of `{shown}` hands on a device parameter defaulting to the CPU as `{name}` "
                f"({_shown_sites(self.site_words, values)})", first_path, first_line), default))
        if kinds == {OTHER_KIND} and all(v.entries is not None for _, _, v in values):
            # `f(state)` at every call with a dict of string keys (`{"buf": t, "n": 3}`): each
            # key's value, joined over the calls.
            merged = values[0][2]
            for _, _, v in values[1:]:
                merged = join(merged, v)
            return _keyed_steps(merged, f"every call of `{shown}` passes as `{name}` a dict", first_path, first_line)
        if kinds == {OTHER_KIND} and all(v.element is not None and v.type_name is None for _, _, v in values):
            # `f(meta)` at every call with a container whose elements are where (`self._meta`,
            # a dict of buffers): those elements, joined over the calls, where that is a place.
            element = join_all([v.element for _, _, v in values if v.element is not None])
            if element.kind in (DEVICE_KIND, CPU_KIND):
                step = EvidenceStep(
                    f"every call of `{shown}` passes as `{name}` a container of "
                    f"{'device' if element.kind == DEVICE_KIND else 'CPU'} tensors "
                    f"({_shown_sites(self.site_words, values)})", first_path, first_line)
                return Value(OTHER_KIND, element=element.because(step)).because(step)
        types = {v.type_name for _, _, v in values}
        if kinds == {OTHER_KIND} and len(types) == 1 and None not in types:
            # Every call passes an instance of one project class: its fields and methods apply.
            (type_name,) = types
            return Value(OTHER_KIND, type_name=type_name).because(EvidenceStep(
                f"every call of `{shown}` passes a `{type_name}` as `{name}` ({_shown_sites(self.site_words, values)})",
                first_path, first_line))
        if {CPU_KIND, DEVICE_KIND} <= kinds:
            # Some calls pass a CPU tensor and others a device tensor (a helper shared by a
            # metric on host arrays and a training loss): a tensor whose place each call decides,
            # whichever call comes first (it was the first call's), read as a tensor nothing tells
            # about is: `.to(x.device)` of it follows the device call's path by convention.  With
            # no call passing a device tensor, the CPU calls decide (below).
            cpu = [site for site in values if site[2].kind == CPU_KIND]
            device = [site for site in values if site[2].kind == DEVICE_KIND]
            return Value(TENSOR_KIND, evidence=(EvidenceStep(
                f"calls of `{shown}` pass a device tensor ({_shown_sites(self.site_words, device)}) as `{name}`, "
                f"others a CPU tensor ({_shown_sites(self.site_words, cpu)}): each call decides where it is",
                device[0][0], device[0][1]),))
        for path, line, v in values:
            if _no_number(v):
                # A place among other values is, as a string was, no tensor.
                kind = TENSOR_KIND if v.kind == DEVICE_KIND else OTHER_KIND if v.kind in (
                    CPU_PLACE_KIND, DEVICE_PLACE_KIND) else v.kind
                # A tensor `__init__` built on the host stays so (`host_by_default`).
                host = tuple(step for step in v.evidence if kind == TENSOR_KIND
                             and getattr(step, "message", None) == HOST_DEFAULT_STEP)
                return Value(kind, v.rank, element=v.element, evidence=host).because(EvidenceStep(
                    f"a call of `{shown}` passes a {kind.value} as `{name}`", path, line))
        return UNKNOWN

    def _default_value(self, fn: FunctionSummary, name: str) -> Optional[Tuple[str, int, Value]]:
        """The value of parameter `name`'s default where the summary read it (`default_terms`:
        `kind=Kind.NORMAL`) and it is a member of a project enumeration of numbers (`enum_kind`:
        an object of its class, or an `IntEnum`'s int), with the `def`'s file and line; None for
        any other default (what a call that omits the parameter passes is then not known)."""
        term = dict(fn.default_terms).get(name)
        if term is None:
            return None
        path = _path_of(self.functions[fn.name], fn)
        named = term[1][1]
        enum = self.enum(named) if named not in self.module_values.get(path, {}) else None
        value = self._enum_read(named, enum, term[2]) if enum is not None else None
        return (path, fn.line, value) if value is not None else None

    def _device_of_unplaced(self, term: Term, path: str, line: int) -> Optional[Value]:
        """What a call passes as a device parameter when it passes `x.device` of a tensor whose
        place nothing in the project proves (`Beam(n, self.sos.device)`, a buffer of a module
        no code moves): the accelerator, as `device=x.device` in the caller's own body is read
        (`expressions._placed_by`), so that handing the place on to a helper that allocates
        with it (`torch.zeros(n, device=device)`) reads the same.  A convention, said as one; None
        for anything else (a CPU tensor's device is the CPU by `eval`)."""
        if not (term[0] == "attr" and len(term) > 2 and term[2] == "device"):
            return None
        if self.eval(term[1], path, None).kind != TENSOR_KIND:
            return None
        if term[1][0] == "field" and self._run_by_construction(term[1][1], path, line):
            # `self.buf.device` in a method the constructor runs: the buffer is where the
            # constructor put it (no move has happened yet), which nothing says.
            return None
        return Value(DEVICE_PLACE_KIND).because(EvidenceStep(_UNPLACED_DEVICE_STEP, path, line,
                                                             kind=EvidenceKind.CONVENTION))

    def _moved_buffer(self, term: Term, path: str, line: int) -> Optional[Value]:
        """`self.buf`, a buffer or parameter of the module class `cls` whose method makes the
        call at `line`, passed there (`self._enqueue(keys, queue_ptr=self.queue_ptr)`): on the
        device where `cls` is moved (`moved_modules`) and the method is not one that building an
        instance runs, as that method's own walk reads it (`scope._moved_fields`); None else."""
        if term[0] != "field":
            return None
        cls, attr = term[1], term[2]
        moved = self.moved_modules()
        if cls not in moved or self._run_by_construction(cls, path, line):
            return None
        value = self.in_methods(cls, attr, moved)
        return value if value.kind == DEVICE_KIND else None

    def _run_by_construction(self, cls: str, path: str, line: int) -> bool:
        """Whether `line` of `path` is in a method of `cls` that building an instance runs:
        `__init__` or a method it calls on `self`, directly or through others (`self_called`,
        each resolved as `_dispatch` resolves `self.m(...)`: its own, a base's, an override).
        Transitive, unlike the walk's `scope._run_at_construction` (one level, for a default
        device): here it only withholds a convention, so reading more methods as run at
        construction can only leave a write unflagged.  The enclosing method is the one of
        `cls` in that file whose `def` comes last before the line."""
        here = max(((fn.line, fn.name) for (owner, _), found in self.methods.items() if owner == cls
                    for fn_path, fn in found if fn_path == path and fn.line <= line), default=None)
        if here is None:
            return False
        run: Set[str] = set()
        todo = ["__init__"]
        while todo:
            name = todo.pop()
            if name in run:
                continue
            run.add(name)
            for _, fn in self._dispatch(cls, name):
                todo.extend(called for called, _ in fn.self_called)
        return here[1] in run

    def _unpacked(self, site: CallSite, name: str, path: str, callee: str) -> Optional[Value]:
        """What `f(**d)` passes as parameter `name`: the value of `d`'s key `name`, where `d`
        is a dict whose string keys are known and one of them is `name` (a step says so);
        None else (the parameter's value is not known from this call)."""
        term = next((t for keyword, t in site.keywords if keyword == "**"), None)
        if term is None:
            return None
        held = entry(self.eval(term, path, None), name)
        if held is None:
            return None
        if held.kind == DEVICE_KIND:
            held = held.because(self.step(f"`{callee}(**...)` passes the dict's key \"{name}\" as `{name}`",
                                          path, site.line))
        return held

    def _sites(self, fn: FunctionSummary) -> List[Tuple[str, CallSite]]:
        """The project's calls that may be calls of `fn`: by name (for a method, only the calls
        the summaries mark bound); for `__init__`, the constructions of its class; for a
        `forward` or a `__call__`, also the calls of fields holding its class's instances.  Asked for
        every parameter of every function, many times over: computed once per signature."""
        found = self._fn_sites.get(id(fn))
        if found is None:
            required = _required(fn)
            key = (fn.name, fn.owner, fn.bound, required, fn.arity, fn.params if fn.arity else ())
            found = self._site_memo.get(key)
            if found is None:
                found = self._site_memo[key] = self._find_sites(fn, required)
            if fn.owner is None and len(self.functions.get(fn.name, ())) > 1:
                found = homonym_sites(found, self.functions[fn.name], fn)
            self._fn_sites[id(fn)] = found
        return found

    def _find_sites(self, fn: FunctionSummary, required: Tuple[Tuple[int, str], ...]) -> List[Tuple[str, CallSite]]:
        # `_can_bind`, its first test inline: a call passing `last + 1` arguments by position
        # passes every required one (thousands of `forward` calls per signature on vLLM).
        last = max((position for position, _ in required), default=-1)
        if fn.name == "__init__" and fn.owner is not None:
            found = [site for site in self.calls.get(fn.owner, []) if not (c := site[1]).bound and (
                c.starred or last < len(c.args) or _can_bind(c, required))]
            # `super().__init__(n, "cuda")` in a subclass's method runs a base's `__init__` as a
            # construction does (no `self` among its arguments).
            found += [site for site in self._super_inits(fn) if (c := site[1]).starred
                      or last < len(c.args) or _can_bind(c, required)]
            # `cls(...)` in a classmethod of the class or of a base (`from_config(cfg)` returning
            # `cls(queue_size=cfg.get(...))`): a construction of the class it is called on.
            bases = self._with_bases(fn.owner)
            found += [site for site in self.class_calls if (c := site[1]).self_owner in bases
                      and (c.starred or last < len(c.args) or _can_bind(c, required))]
            # A construction passes no object of its own: `self` takes no argument of it.
            return _binding(found, fn, -1)
        sites = self.calls.get(fn.name, [])
        if self._applied_forward(fn):
            # Run by `Owner.apply(...)` (or `Owner.forward(ctx, ...)`), never by the calls of
            # other objects' `forward` (`x.forward(*inputs)`): its sites are its class's.
            assert fn.owner is not None
            sites = self._applied_sites(fn.owner)
        if not fn.bound:
            # A static method runs only through its class or an instance (`Cls.f(x)`,
            # `self.f(x)`): a bare call `f(x)` elsewhere calls a function of that name.
            static = fn.owner is not None and not self._applied_forward(fn)
            return _binding([site for site in sites if ((c := site[1]).starred or last < len(c.args)
                                                        or _can_bind(c, required))
                             and not (static and not c.bound)
                             and not (self._self_attribute_call(c) if fn.owner is None
                                      else c.self_owner is not None and self._elsewhere(c, fn))],
                            fn, 0)
        found = [site for site in sites if (c := site[1]).bound and (c.starred or last < len(c.args)
                                                                    or _can_bind(c, required))
                 and (c.self_owner is None or not self._elsewhere(c, fn))
                 and (c.receiver is None or self._receives(c.receiver, fn))]
        if fn.name == "forward" and fn.owner in self.modules:
            found += [site for site in self._module_calls().get(fn.owner, [])
                      if (c := site[1]).starred or last < len(c.args) or _can_bind(c, required)]
        elif fn.name == "__call__" and fn.owner is not None and fn.owner not in self.modules:
            found += [site for site in self._instance_calls().get(fn.owner, [])
                      if (c := site[1]).starred or last < len(c.args) or _can_bind(c, required)]
        # `obj.m(x)` passes `obj` as `self`, but `Cls.m(obj, x)` passes it as an argument: a
        # method's own parameter may take one positional argument of the call.
        return _binding(found, fn, 0)

    def _pointed_elsewhere(self, param: Term) -> Optional[Value]:
        """The accelerator, where the parameter `param` (a `param` term of one defaulting to
        the CPU) is pointed there by every call that passes it (`passed`), some others leaving
        the default: a call does say otherwise, so what it is handed on to is no CPU by default
        (`handed_on_devices.py`'s `hodev_left_pre`).  None otherwise."""
        if param[0] != "param":
            return None
        defined = self._param_of(param)
        if defined is None:
            return None
        _, fn, index = defined
        if fn.params[index] not in fn.defaults:
            return None
        passed = self.passed(fn, index)
        return passed if passed.kind == DEVICE_PLACE_KIND else None

    def _applied_forward(self, fn: FunctionSummary) -> bool:
        """`fn` is the static `forward` of a class deriving from `torch.autograd.Function` (a
        base of `_AUTOGRAD_BASES`, directly or through project bases): `Owner.apply(...)`
        runs it (`_applied_sites`)."""
        return fn.name == "forward" and not fn.bound and fn.owner is not None and any(
            b in _AUTOGRAD_BASES for base in self._with_bases(fn.owner) for _, c in self.classes[base] for b in c.bases)

    def _applied_sites(self, cls: str) -> List[Tuple[str, CallSite]]:
        """The calls `cls.apply(...)` of the autograd `Function` `cls`, as calls of its static
        `forward(ctx, ...)`: PyTorch's `Function.apply(*args)` runs `forward(ctx, *args)`, the
        context taking the first position (an argument nothing tells about stands for it); and
        the calls `cls.forward(ctx, ...)` themselves.  Only calls that name the class
        (`summary`'s `("global", cls)` receiver); an alias (`scale = Scale.apply`) is not
        followed."""
        found = self._applied.get(cls)
        if found is None:
            found = self._applied[cls] = [
                (path, replace(site, args=(UNK_TERM,) + site.args))
                for path, site in self.calls.get("apply", []) if site.receiver == ("global", cls)] + [
                (path, site) for path, site in self.calls.get("forward", []) if site.receiver == ("global", cls)]
        return found

    def _self_attribute_call(self, call: CallSite) -> bool:
        """Whether `self.f(...)` (in a method of a project class) runs what the class gives
        `self.f`, never a module-level function `f`: every class `self` may be an instance of
        (the method's class, its project bases and subclasses) either defines a method `f` or
        sets `self.f` only to instances of project classes (`self.step = GraphStep(...)`, run
        through their `__call__` or `forward`), and one of them does.  Python finds `self.f` on
        the instance, else on its class: a module-level `f` only where something puts it
        there, which such a family never does (`self.f = f`, `f = staticmethod(f)` in the class
        body are assignments of another kind).  A family too large to walk whole is not read."""
        caller = call.self_owner
        if not call.bound or caller is None or caller not in self.classes:
            return False
        family = self._whole_family(caller)
        if family is None:
            return False
        given = False
        for cls in family:
            if (cls, call.callee) in self.methods:
                given = True
            for _, summary in self.classes[cls]:
                for attr, term in summary.fields:
                    if attr != call.callee or term[0] in ("none", "ann"):
                        continue
                    if not _constructs_only(term, self.classes.keys()):
                        return False
                    given = True
        return given

    def _super_inits(self, fn: FunctionSummary) -> List[Tuple[str, CallSite]]:
        """The `super().__init__(...)` calls that may run `fn`, an `__init__`: those in methods of its
        project subclasses, found through an index of such calls by the calling class, built once
        (vLLM has thousands of them and of classes).  Every subclass has `fn`'s class among its
        bases, so `_receives` would keep each of them: it is not asked again here."""
        if self._super_init_calls is None:
            self._super_init_calls = {}
            for position, site in enumerate(self.calls.get("__init__", [])):
                receiver = site[1].receiver
                if site[1].bound and receiver is not None and receiver[0] == "super":
                    self._super_init_calls.setdefault(receiver[1], []).append((position, site))
        if not self._super_init_calls:
            return []
        assert fn.owner is not None
        found = sorted(pair for sub in self._descendants(fn.owner) for pair in self._super_init_calls.get(sub, ()))
        return [site for _, site in found]  # in the project's order of calls, as the other sites

    def _module_calls(self) -> Dict[str, List[Tuple[str, CallSite]]]:
        """The calls `self.head(x)` of a field holding an instance of a project `nn.Module`
        (`self.head = Head(...)`), by the class whose `forward` they run: `nn.Module.__call__`
        runs `forward` with the call's arguments, so such a call passes them to its parameters
        as `self.head.forward(x)` would (`forward_call` names the module for the evidence).
        The field is read where `self` is: the class of the calling method or its nearest
        project base that assigns it; a class with a method of the field's name is called
        through the method instead.  Built once, on the first question about a `forward`."""
        if self._forward_calls is not None:
            return self._forward_calls
        self._forward_calls = self._field_calls(self.modules, "forward", self.forward_calls)
        return self._forward_calls

    def _instance_calls(self) -> Dict[str, List[Tuple[str, CallSite]]]:
        """The calls `self.step(x)` of a field holding an instance of a project class that is no
        `nn.Module` (`self.step = GraphStep(...)`), by the class whose `__call__` they run:
        Python looks a call of an instance up on its type, `type(obj).__call__(obj, x)`, so
        such a call passes its arguments to that `__call__`'s parameters (`instance_calls`
        names the field and its class for the evidence).  The field is read as for a module's
        (`_module_calls`): the class of the calling method or its nearest project base that
        assigns it, unless that class has a method of the field's name.  Built once, on the
        first question about a `__call__`."""
        if self._dunder_calls is not None:
            return self._dunder_calls
        plain = frozenset(name for name in self.classes if name not in self.modules)
        self._dunder_calls = self._field_calls(plain, "__call__", self.instance_calls)
        return self._dunder_calls

    def _field_calls(self, held_classes: AbstractSet[str], method: str,
                     marks: Dict[int, Tuple[str, str]]) -> Dict[str, List[Tuple[str, CallSite]]]:
        """The calls `self.f(...)` of fields holding a constructed instance of one of
        `held_classes`, by the class whose `method` the call runs (`_method_owner` of the
        instance's class); `marks` gets, for each such site (by `id`), the field and the instance's class."""
        out: Dict[str, List[Tuple[str, CallSite]]] = {}
        attrs = {a for defined in self.classes.values() for _, c in defined for a, t in c.fields
                 if _constructed_module(t, held_classes)}
        for attr in sorted(attrs):
            for path, site in self.calls.get(attr, []):
                caller = site.self_owner
                if not site.bound or caller is None or self._has_method(caller, attr):
                    continue
                holder = self._assigning(caller, attr)
                if holder is None:
                    continue
                held = {m for _, c in self.classes[holder] for a, t in c.fields if a == attr
                        for m in _constructed_module(t, held_classes)}
                for cls in sorted(held):
                    runner = self._method_owner(cls, method)
                    if runner is not None:
                        out.setdefault(runner, []).append((path, site))
                        marks[id(site)] = (attr, cls)
        return out

    def _method_owner(self, cls: str, method: str) -> Optional[str]:
        """The project class whose `method` (`forward`, `__call__`) an instance of `cls` runs:
        `cls`'s own, else its nearest project base's (breadth first); None where no project
        class defines one."""
        return self._nearest(cls, lambda current: (current, method) in self.methods, limit=20)

    def _receives(self, receiver: Term, fn: FunctionSummary) -> bool:
        """Whether `x.m(...)`, `x` of the term `receiver` (`CallSite.receiver`), may run the
        method `fn`: where every part of the term names project classes, only if `fn`'s class
        is one of them, one of their project bases (an inherited `m`) or one of their
        subclasses (an override, for an instance of a subclass).  Python looks `m` up on
        `type(x)`: a `Sched().step(t)` never runs `Runner.step`.  True where the term names no
        project class, where a class's bases or subclasses are too many to walk whole, or where
        one of them defines `__getattr__` (a method it forwards may be any class's)."""
        if fn.owner is None:
            return True
        if receiver[0] == "super":
            # `super().m(...)` in a method of `C` runs a method of one of `C`'s bases, never of
            # `C` itself or of an unrelated class (pypots' `CustomConv1d` calls `nn.Conv1d`'s
            # `forward`, not the project's other modules').
            if receiver not in self._receivers:
                family = self._with_bases(receiver[1])
                self._receivers[receiver] = None if len(family) >= 20 else frozenset(family) - {receiver[1]}
            bases = self._receivers[receiver]
            return bases is None or fn.owner in bases
        if receiver in self._receivers:
            related = self._receivers[receiver]
        else:
            related = self._receivers[receiver] = self._receiving(receiver)
        return related is None or fn.owner in related

    def _receiving(self, receiver: Term) -> Optional[FrozenSet[str]]:
        """The classes whose methods `x.m(...)` may run, `x` of the term `receiver`: each class
        the term names, its project bases and subclasses; None where that is not known."""
        parts = receiver[1] if receiver[0] == "join" else (receiver,)
        related: Set[str] = set()
        for part in parts:
            classes = self._instance_classes(part)
            if not classes:
                return None
            for cls in classes:
                family = self._whole_family(cls)
                if family is None or any((c, name) in self.methods for c in family
                                         for name in ("__getattr__", "__getattribute__")):
                    return None
                related.update(family)
        return frozenset(related)

    def _elsewhere(self, site: CallSite, fn: FunctionSummary) -> bool:
        """`self.m(...)` in a method of a class X, where `fn`'s class is neither one of X's bases
        nor derived from X (nor a base of a class deriving from X): the call never runs `fn`.
        Where X's own or project bases' `m` answers it, the call runs that `m` (or a subclass's
        override): `forward` of one module is not called by another's `self.forward(x)`.  Where
        none does, Python finds `m` on the instance's class, one deriving from X: a subclass's
        `m` or a library base's (LightGlue's `Extractor.extract` calls `self.forward(...)`, its
        subclasses' `forward`, never an unrelated loss module's).  Not so where X's family may
        set `self.m` on the instance (a field of that name: `self.m = other.m` binds another
        class's method) or is too large to walk whole."""
        own = site.self_owner
        if own is None or fn.owner is None or own == fn.owner:
            return False
        key = (own, fn.name)
        answered = self._unrelated.get(key)
        if answered is None:
            answered = self._unrelated[key] = self._has_method(own, fn.name) or self._closed_family(own, fn.name)
        # A class deriving from both (`class Z(X, Owner)`) may route X's call to `fn`.
        return answered and fn.owner not in self._family(own)[0] \
            and not self._family(own)[1] & self._family(fn.owner)[1]

    def _closed_family(self, cls: str, name: str) -> bool:
        """Whether `self.name` in a method of `cls` can only be a method of `cls`'s family
        (`_family`: its project bases and subclasses): the family is walked whole
        (`_whole_family`) and no class of it assigns a field `name` (`self.name = ...`, which would put something else on the instance)."""
        family = self._whole_family(cls)
        return family is not None and not any(
            attr == name for member in family for _, summary in self.classes.get(member, []) for attr, _ in summary.fields)

    def _whole_family(self, cls: str) -> Optional[FrozenSet[str]]:
        """`cls` with its project bases and subclasses (`_family`), or None where a walk may have
        stopped short (`_with_bases` stops at 20 classes, `_descendants` at 200 besides `cls`):
        an answer that needs the whole family must not rest on part of it."""
        bases, subtree = self._family(cls)
        if len(bases) >= 20 or len(subtree) > 200:
            return None
        return bases | subtree

    def _family(self, cls: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """`cls` and its project bases (`_with_bases`), and `cls` and its project subclasses
        (`_descendants`), made once per class."""
        found = self._families.get(cls)
        if found is None:
            found = self._families[cls] = (frozenset(self._with_bases(cls)),
                                           frozenset(self._descendants(cls)) | {cls})
        return found

    def _int_default(self, path: str, fn: FunctionSummary, index: int) -> Value:
        """A parameter read inside `fn` (`self.f(n_ctx)` passes it on) whose default is an int
        literal (`n_ctx=512`) and that no call overrides with something else: an int by its
        default (evidence, not proof, as the walk reads the parameter itself: `_int_default`)."""
        if self.passes_no_number(fn, index):
            return UNKNOWN
        return SCALAR.because(EvidenceStep(f"`{_qual(fn)}` defaults `{fn.params[index]}{_INT_DEFAULT_STEP}",
                                           path, fn.line))

    def passes_no_number(self, fn: FunctionSummary, index: int) -> bool:
        """Whether some call site in the project passes parameter `index` of `fn` (one with a
        default) a value that is no Python number (`_no_number`).  The calls that leave it out
        take the default; an unknown value refutes nothing."""
        name, position = _at_call(fn, index)
        for path, site in self._sites(fn)[:200]:
            term = _passed(site, name, position)
            if term is not None and _no_number(self.eval(term, path, None)):
                return True
        return False

    # -- terms ---------------------------------------------------------------------------
    def eval(self, term: Term, path: str, owner: Optional[str]) -> Value:
        tag = term[0]
        if tag == "param":
            defined = self._param_of(term)
            if defined is None:
                return UNKNOWN
            fpath, fn, index = defined
            pname = term[2]
            # `device=None` handed on (`if device is None: device = cpu`, then `f(n, device)`):
            # read as the walk reads it in `fn`'s own body.
            value = self.passed_place(fn, index)
            if value.kind == UNKNOWN_KIND and pname in fn.int_defaults \
                    and fn.annotations[index] == ("unk",):
                return self._memo(("int_default", fpath, _qual(fn), pname),
                                  lambda: self._int_default(fpath, fn, index))
            forward = self._forward_input(fpath, fn, index, value)
            if forward is not None:
                return forward
            if fn.annotations[index] == ("tensor", None) and not value.kind.is_tensor \
                    and not value.none:
                return Value(TENSOR_KIND)  # `x: torch.Tensor`, the call sites tell nothing
            if fn.annotations[index] == OTHER_TERM and value.kind not in (CPU_PLACE_KIND, DEVICE_PLACE_KIND) \
                    and not cpu_by_default(value):
                return OTHER  # `device: str`: an object, unless every call names one place
            return value
        if tag == "ranked":
            # A parameter read past `B, T, N = x.size()` (`summary.shape_unpacking`): a tensor
            # of that rank wherever the calls do not say its rank.
            value = self.eval(term[1], path, owner)
            if value.kind.is_tensor and value.rank is None:
                value = replace(value, rank=term[2]).because(EvidenceStep(
                    f"`{term[1][2]}`'s sizes unpack into {term[2]} names: it has {term[2]} dimensions",
                    path, term[3]))
            return value
        if tag == "attr":
            attr = term[2]
            named = term[1][1] if term[1][0] == "global" and isinstance(term[1][1], str) else None
            enum = self.enum(named) if named is not None and named not in self.module_values.get(path, {}) else None
            if named is not None and enum is not None:
                # `Kind.NORMAL`: the enumeration itself, read by its module-level name (`enum_kind`
                # takes a class only where the project defines it once).
                member = self._enum_read(named, enum, attr)
                if member is not None:
                    return member
            base = self.eval(term[1], path, owner)
            if base.type_name is not None and base.type_name in self.classes:
                enum = self.enum(base.type_name) if base.kind == OTHER_KIND else None
                member = self._enum_read(base.type_name, enum, attr) if enum is not None else None
                return member if member is not None else self.field(base.type_name, attr)
            if base.kind.is_tensor and attr in ("data", "T", "mT"):
                return base
            if attr == "device" and base.kind in (DEVICE_KIND, CPU_KIND):
                # `x.device` of a tensor of known place (`Beam(size, self.buf.device)`): that place.
                return Value(DEVICE_PLACE_KIND if base.kind == DEVICE_KIND else CPU_PLACE_KIND,
                             evidence=base.evidence)
            field = output_field_message(base.evidence, attr) if base.kind == DEVICE_KIND and base.rank is None \
                else None
            if field is not None:  # `outputs.last_hidden_state` of a module's output
                return Value(DEVICE_KIND, evidence=base.evidence).because(EvidenceStep(
                    field, path, term[3] if len(term) > 3 and isinstance(term[3], int) else 0,
                    kind=EvidenceKind.CONVENTION))
            if config_field(attr) and _config_term(term[1], base):
                # `config.queue_size`, `self.cfg.pad_id`: a host value (`values.config_value`).
                return config_value(EvidenceStep(CONFIG_STEP, path, term[3] if isinstance(term[3], int) else 0,
                                                 kind=EvidenceKind.CONVENTION))
            return UNKNOWN
        if tag == "inst":
            return Value(OTHER_KIND, type_name=term[1])
        if tag == "built":
            # `cls_param(...)` of `cls_param: Type[C]` (`summary.class_annotation`): a `C` where
            # the project defines it, else what a call of that name gives.
            if term[1] in self.classes:
                return Value(OTHER_KIND, type_name=term[1])
            return self.eval(("call", term[2], term[3]), path, owner)
        if tag == "scalar":
            return SCALAR
        if tag == "same":
            kinds = set()
            sides = [side for side in term[1:] if side is not None]
            for index, side in enumerate(sides):
                value = self.eval(side, path, owner)
                if value.kind.is_tensor:
                    # An operator of one tensor and Python numbers (`x / t`, `x < p`) keeps the
                    # tensor's rank; anything else (a reduction, two tensors) may not.
                    others = sides[:index] + sides[index + 1:]
                    keeps = len(sides) == 2 and all(plain_number(self.eval(o, path, owner)) for o in others)
                    return Value(value.kind, value.rank if keeps else None, evidence=value.evidence)
                kinds.add("none" if value.none else value.kind)
            if kinds <= {SCALAR_KIND}:
                return SCALAR  # also an operator of numbers (`n + 1`, `-n`, `a < b`)
            if kinds == {"none"}:
                return NONE  # only a cycle's "nothing yet"
            if kinds <= {SCALAR_KIND, "none"}:
                return SCALAR
            return UNKNOWN
        if tag == "call":
            name = term[1]
            if name in self.classes:
                return Value(OTHER_KIND, type_name=name)
            if name in self.functions:
                return self.returns_in(name, path)
            return self._named_model(UNKNOWN, name, path, term[2])
        if tag == "get":
            # `d.get(k)`, `d.get(k, v)`, `d.setdefault(k, v)`: a value of a container (`None`, the
            # missing key's, adds nothing: a write into it raises), or `v`; on anything else a
            # method call.
            _, recv, method, _line, default, key = term
            base = self.eval(recv, path, owner)
            if base.kind == OTHER_KIND and base.type_name is None and base.element is not None:
                return base.element if default is None else join(base.element, self.eval(default, path, owner))
            if method == "get" and key is not None and config_field(key) and _config_term(recv, base):
                # `cfg.get("queue_size", 57600)`: a configuration's field by key, a host value
                # (`values.config_value`) as `cfg.queue_size` is, or the default.
                found = config_value(EvidenceStep(CONFIG_STEP, path, _line, kind=EvidenceKind.CONVENTION))
                return found if default is None else join(found, self.eval(default, path, owner))
            term = ("mcall", recv, method, _line)
            tag = "mcall"
        if tag == "mcall":
            _, recv, method, _line = term
            if recv[0] == "global" and recv[1] in self.classes:
                return self.method_returns(recv[1], method)
            receiver = _dotted_term(recv) if method in LOADER_METHODS else None
            loaded = pretrained_loader(receiver, method) if receiver is not None \
                and receiver.split(".")[-1] not in self.classes else None
            if loaded is not None:  # `AutoModel.from_pretrained(name)`: a library's model
                return Value(OTHER_KIND, type_name=loaded)
            base = self.eval(recv, path, owner)
            if base.type_name is not None and base.type_name in self.classes:
                found = self.method_returns(base.type_name, method)
                if found.kind == UNKNOWN_KIND and not self._has_method(base.type_name, method):
                    # `self.model.head(h)`: a field of a project class that holds a module.
                    return self._module_output(self.field(base.type_name, method), method, path, _line)
                return found
            return UNKNOWN
        if tag == "list":
            if term[1] == ("none",):
                return Value(OTHER_KIND, length=0)  # `{}`, `[]`: elements come from stores
            element = self.eval(term[1], path, owner)
            if len(term) > 2:  # a dict with string keys (`summary._keyed`)
                return Value(OTHER_KIND, element=element,
                             entries=tuple((k, self.eval(t, path, owner)) for k, t in term[2]))
            return Value(OTHER_KIND, element=element)
        if tag in ("unk", "none"):
            return UNKNOWN
        if tag == "global":
            held = self.module_values.get(path, {}).get(term[1])
            if held is None:
                return UNKNOWN
            # What the file's functions put in its own module-level name (a cache filled by item
            # stores, a workspace bound under `global`), with its module-level bindings.
            return self._memo(("global", path, term[1]), lambda: self.eval(held, path, None))
        if tag == "field":
            return self.field(term[1], term[2])
        if tag in ("other",):
            return OTHER
        if tag == "join":
            values = [self.eval(t, path, owner) for t in term[1]]
            out = values[0]
            for v in values[1:]:
                out = join(out, v)
            return out
        if tag == "sub":
            base = self.eval(term[1], path, owner)
            held = entry(base, term[3]) if len(term) > 3 and isinstance(term[3], str) else None
            if held is not None:
                return held  # `d["buf"]` of a dict whose string keys are known
            if base.element is not None:
                return base.element
            if len(term) > 3 and isinstance(term[3], str) and config_field(term[3]) and nothing_known(base) \
                    and _config_term(term[1], base):
                # `config["high_order"]`: a configuration's field by key, a host value
                # (`values.config_value`) as `config.high_order` is.  Only of an object spelled
                # like a configuration: a value read from one (`tta = extra_args.get("tta")`) may
                # be a container whose entries an annotation elsewhere declares.
                return config_value(EvidenceStep(CONFIG_STEP, path, 0, kind=EvidenceKind.CONVENTION))
            if base.kind.is_tensor:
                ints = term[2]
                rank = base.rank - ints if base.rank is not None and ints is not None else None
                if rank is not None and rank < 0:
                    rank = None
                if len(term) > 3 and isinstance(term[3], tuple) and base.rank is not None:
                    rank = self._advanced_rank(base.rank, term[3], path, owner)
                return Value(base.kind, rank, integer=base.integer, evidence=base.evidence)
            return UNKNOWN
        if tag == "item":
            # `a, b = f(...)`: position k of the tuple `f` returns, where its positions are known.
            base = self.eval(term[1], path, owner)
            k = term[2]
            if base.items is None and (base.kind.is_tensor and base.rank is not None and base.rank >= 1
                                       or base.kind == DEVICE_KIND and base.rank is None):
                # Unpacking a tensor gives its rows, where it is; a device value of unknown rank
                # may be a tuple taken for a tensor (`logits, *mems = model(ids)`): each element
                # is on the device where it is a tensor, of a rank not known (`scope._unpacked`).
                return Value(base.kind, base.rank - 1 if base.rank else None, evidence=base.evidence)
            return base.items[k] if base.items is not None and 0 <= k < len(base.items) else UNKNOWN
        if tag == "ret":
            found = self.method_returns(term[1], term[2])
            if len(term) > 3 and found.kind == UNKNOWN_KIND and not self._has_method(term[1], term[2]):
                # `self.lm_head(h)`: a field holding a module, not a method.
                return self._module_output(self.field(term[1], term[2]), f"self.{term[2]}", path, term[3])
            return found
        if tag == "tensor":
            return Value(TENSOR_KIND, term[1])
        if tag == "pair":
            # `top, idx = x.topk(k)`, `v, i = x.max(dim=1)`: the named tuple `(values, indices)`,
            # where `x` is, `term[2]` dimensions fewer; the indices int64 (`torch_api.IndexOp`).
            inner = self.eval(term[1], path, owner)
            if not inner.kind.is_tensor:
                return UNKNOWN
            rank = inner.rank - term[2] if inner.rank is not None and inner.rank >= term[2] else None
            pair = (Value(inner.kind, rank, integer=inner.integer, evidence=inner.evidence),
                    Value(inner.kind, rank, integer=True, evidence=inner.evidence))
            return Value(OTHER_KIND, length=2, items=pair, fields=PAIR_FIELDS)
        if tag == "keep":
            # `x.clone()`, `torch.log_softmax(x, dim=0)`: where `x` is, and of its rank.
            inner = self.eval(term[1], path, owner)
            if inner.kind.is_tensor:
                # `x.argsort()`, `x.long()` (a third part): of an integer dtype.
                return Value(inner.kind, inner.rank, integer=len(term) > 2, evidence=inner.evidence)
            return self.eval(("same", term[1], None), path, owner)
        if tag == "on":
            return self._on(term, path, owner)
        if tag == "shape":
            base = self.eval(term[1], path, owner)
            if base.kind.is_tensor:
                return Value(base.kind, term[2], integer=base.integer, evidence=base.evidence)
            return self.eval(("same", term[1], None), path, owner)
        if tag == "dev":
            rank, line, how, integer = term[1:5]
            spec = self.eval(term[5], path, owner) if len(term) > 5 else None
            if spec is not None and spec.kind == CPU_PLACE_KIND:
                return Value(CPU_KIND, rank)  # `device=device` of a name that holds the CPU
            if spec is not None and cpu_by_default(spec):
                # A field that keeps a CPU default: the CPU unless a caller says otherwise.
                return Value(TENSOR_KIND, rank)
            # A parameter defaulting to the CPU (a `cpudefault` spec) is an accelerator only by
            # what every call passes: those calls say why.
            passed = spec.evidence if spec is not None and term[5][0] == "cpudefault" else ()
            return Value(DEVICE_KIND, rank, integer=decode_integer(integer)).because(
                self.step(f"allocated on the device here (`{how}`)", path, line), *passed)
        if tag == "cpudefault":
            # `self.storage_device = storage_device`, the parameter defaulting to the CPU: what
            # every call passes where that is a place, else the CPU unless a caller says
            # otherwise (the walk reads the parameter itself so, `scope`'s `CPU_DEFAULT_STEP`).
            inner = self.eval(term[1], path, owner)
            if inner.kind not in (UNKNOWN_KIND, OTHER_KIND):
                return inner  # a place every call passes (or anything else known)
            pointed = self._pointed_elsewhere(term[1])
            if pointed is not None:
                return pointed
            return Value(inner.kind, evidence=(self.step(CPU_DEFAULT_STEP, path, term[2]),))
        if tag == "wrap":
            # `nn.Buffer(t)`, `nn.Parameter(t)`, `register_buffer(name, t)`
            step = self.step(MODULE_TENSOR_STEP, path, term[2])
            data = self.eval(term[1], path, owner)
            if host_by_default(data):
                # Built on the host in `__init__`, but a buffer or parameter moves with its
                # module (`model.to(dev)`): no host tensor by default (`host_by_default`).
                return Value(TENSOR_KIND, data.rank, integer=data.integer, evidence=(step,) + tuple(
                    s for s in data.evidence if getattr(s, "message", None) != HOST_DEFAULT_STEP))
            return module_tensor(data, step)
        if tag == "to":
            target = self.eval(term[2], path, owner)
            if target.kind in (CPU_KIND, DEVICE_KIND) and not forward_input_only(target):
                return Value(target.kind, evidence=target.evidence)
            return Value(DEVICE_KIND)  # `.to(x.device)` of a tensor nothing tells about
        if tag == "cpu":
            return Value(CPU_KIND, term[1])
        if tag == "invoke":
            _, callee, line, shown = term
            return self._module_output(self.eval(callee, path, owner), shown, path, line)
        if tag == "fold":
            # `min(a, b)`: one of the arguments, a Python number when every one is.
            return self._fold([self.eval(t, path, owner) for t in term[1]])
        if tag == "cat":
            # `torch.cat((a, b), dim)`: where the first input of a known place is
            # (`values.concatenation_source`); of the rank PyTorch requires of the inputs
            # (`torch_api.concatenated_rank`).
            inputs = [self.eval(t, path, owner) for t in term[1]]
            source = concatenation_source(inputs)
            if not source.kind.is_tensor:
                return self.eval(("same", term[1][0], None), path, owner)
            return Value(source.kind, concatenated_rank([v.rank for v in inputs]), evidence=source.evidence)
        if tag == "mesh":
            # `torch.meshgrid(x, y)`: one grid per input, where they are (`values.meshgrid_result`).
            return meshgrid_result([self.eval(t, path, owner) for t in term[1]])
        if tag == "dflt":
            rank, line = term[1], term[2]
            integer = decode_integer(term[3]) if len(term) > 3 else False
            where = self.on_device.get(owner or "")
            if where is not None and owner is not None:
                return Value(DEVICE_KIND, rank, integer=integer).because(
                    EvidenceStep(f"{DEFAULT_DEVICE_STEP}: on the default device", path, line),
                    where.step(owner))
            return Value(TENSOR_KIND, rank).because(EvidenceStep(HOST_DEFAULT_STEP, path, line))
        if tag == "nn":
            _, layer, _line, first = term
            value = Value(OTHER_KIND, type_name=f"nn.{layer}")
            if layer in NN_CONTAINERS:
                held = self.eval(first, path, owner).element
                if held is not None and self._module_class(held) is not None:
                    return replace(value, element=held)
            return value
        if tag == "fold1":
            # `max(xs)`, `sum(d.values())`: an element, or `default=` / `start=`.
            held = self.eval(term[1], path, owner).element
            return self._fold([held or UNKNOWN] + [self.eval(t, path, owner) for t in term[2]])
        if tag == "move":
            _, recv, line, how = term
            inner = self.eval(recv, path, owner)
            rank = inner.rank if inner.kind.is_tensor else None
            return Value(DEVICE_KIND, rank, integer=inner.integer).because(
                self.step(f"moved to the device here (`{how}`)", path, line))
        if tag == "place":  # `"cpu"`, `torch.device("cuda")` (`summary.place_term`)
            return Value(CPU_PLACE_KIND if term[1] == "cpu" else DEVICE_PLACE_KIND) if term[1] != "meta" \
                else UNKNOWN
        if tag == "hook":
            _, function, line = term
            return Value(DEVICE_KIND, 2).because(EvidenceStep(
                sampling_hook_message(function, "logits"), path, line, kind=EvidenceKind.CONVENTION))
        if tag == "proc":  # the `scores` of a logits processor's `__call__` (`summary.processor_scores`)
            return Value(DEVICE_KIND, 2).because(EvidenceStep(
                logits_processor_message(term[1]), path, term[2], kind=EvidenceKind.CONVENTION))
        if tag == "vlogits":
            return Value(DEVICE_KIND, 2).because(EvidenceStep(
                compute_logits_message(), path, term[1], kind=EvidenceKind.CONVENTION))
        if tag == "json":  # `json.load(f)`: a container of host values (`expressions.json_data`)
            return json_data(self.step(JSON_STEP, path, term[1]))
        if tag == "ann":
            return self.eval(term[1], path, owner)
        if tag == "cycle":
            return NONE  # a name read inside its own values: nothing yet (`summary.settle_cycle`)
        return UNKNOWN

    def _forward_input(self, path: str, fn: FunctionSummary, index: int, value: Value) -> Optional[Value]:
        """A parameter of `forward` of a project `nn.Module` that no call site places (`value`
        what they pass says no place): on the module's device by convention, of an unknown rank
        (`resolved.forward_input_message`; the walk's `scope._forward_input`).  None else."""
        # `fn.name` first: of the ~150k parameter reads on vLLM, few are of a `forward`.
        if fn.name != "forward" or value.kind not in (UNKNOWN_KIND, TENSOR_KIND) or value.none \
                or value.element is not None or (fn.bound and index == 0) or fn.params[index] in fn.int_params \
                or not forward_input_param(fn.name, fn.owner, self.modules, fn.params[index] in fn.defaults,
                                           fn.annotations[index] in _OPEN_ANNOTATIONS):
            return None
        assert fn.owner is not None
        return Value(DEVICE_KIND, value.rank if value.kind == TENSOR_KIND else None, integer=value.integer).because(
            EvidenceStep(forward_input_message(fn.owner, fn.params[index]), path, fn.line, kind=EvidenceKind.CONVENTION))

    def _param_of(self, term: Term) -> Optional[Tuple[str, FunctionSummary, int]]:
        """The first definition a `param` term's function may be (its file, its summary, the
        parameter's index), or None: looked up once per term, not once per read (the term of
        a function named as common methods are scanned every method of the name)."""
        try:
            return self._param_terms[term]  # one hash of the term, not two (`in`, then `[]`)
        except KeyError:
            pass
        _, fname, pname, fowner = term
        found: Optional[Tuple[str, FunctionSummary, int]] = None
        for fpath, fn in self.methods.get((fowner, fname), []) if fowner else self.functions.get(fname, []):
            if fn.owner == fowner and pname in fn.params:
                found = (fpath, fn, fn.params.index(pname))
                break
        self._param_terms[term] = found
        return found

    @staticmethod
    def _fold(values: Sequence[Value]) -> Value:
        """What `min`/`max`/`sum` of `values` gives: a Python number when every value that is
        something (a cycle's "nothing yet" is not) is one; otherwise unknown (a tensor among
        them may be the result)."""
        known = [v for v in values if not v.none]
        return SCALAR if known and all(v.kind == SCALAR_KIND for v in known) else UNKNOWN

    def _has_method(self, cls: str, name: str, depth: int = 0) -> bool:
        """Whether `cls` (or a project base) defines a method `name`."""
        if (cls, name) in self.methods:
            return True
        return depth < 10 and any(self._has_method(b, name, depth + 1) for _, c in self.classes.get(cls, [])
                                  for b in c.bases if b in self.classes and b != cls)

    def _advanced_rank(self, rank: int, advanced: Term, path: str, owner: Optional[str]) -> Optional[int]:
        """The rank of `x[...]` with an advanced index (a `sub` term's `advanced` part: the count of
        integer positions, and each other position's term), as the walk's
        `expressions.subscript_rank`: a Python number selects, a tensor of known rank acts as
        `torch_api.advanced_index_dims` says; None where a position is anything else."""
        _, removed, positions = advanced
        dims: List[Tuple[int, int]] = []
        for position in positions:
            if position == NUMBER_LIST_INDEX:
                dims.append((1, 1))
                continue
            index = self.eval(position, path, owner)
            if plain_number(index):
                removed += 1
                continue
            acts = advanced_index_dims(index.rank, index.integer) if index.kind.is_tensor else None
            if acts is None:
                return None
            dims.append(acts)
        return advanced_indexed_rank(rank, removed, 0, dims)

    def _module_class(self, value: Value) -> Optional[str]:
        name = value.type_name
        if value.kind != OTHER_KIND or name is None:
            return None
        return name if name.startswith(("nn.", PRETRAINED)) or name in self.modules else None

    def _module_output(self, callee: Value, shown: str, path: str, line: int) -> Value:
        """What calling `callee` gives when it is an `nn.Module` (the walk's `_called_module`):
        a tensor on the accelerator by convention, or what a project module's `forward`
        returns where the project says."""
        cls = self._module_class(callee)
        if cls is None:
            return self._named_model(callee, shown, path, line)
        if cls.startswith(PRETRAINED):
            return Value(DEVICE_KIND).because(EvidenceStep(pretrained_step_message(shown, cls), path, line,
                                                           kind=EvidenceKind.CONVENTION))
        step = EvidenceStep(module_step_message(shown, cls), path, line, kind=EvidenceKind.CONVENTION)
        if cls.startswith("nn."):
            return Value(DEVICE_KIND).because(step) if cls[3:] in NN_TENSOR_MODULES else UNKNOWN
        forward = self.method_returns(cls, "forward")
        if forward.kind == DEVICE_KIND:
            return forward.because(self.step(f"`{shown}(...)` runs `{cls}.forward`", path, line))
        if forward.kind not in (TENSOR_KIND, UNKNOWN_KIND) or forward.none:
            return module_output_items(forward, step)  # a tuple, a number
        return Value(DEVICE_KIND, forward.rank if forward.kind == TENSOR_KIND else None).because(step)

    def _named_model(self, callee: Value, shown: str, path: str, line: int) -> Value:
        """`model(ids)`, `self.model(ids)` where nothing tells what the callable is: a call of an
        `nn.Module` by its name (`resolved.names_model`, as the walk's `_named_model_call`)."""
        if not nothing_known(callee) or not names_model(shown.rsplit(".", 1)[-1]):
            return UNKNOWN
        return Value(DEVICE_KIND).because(EvidenceStep(named_model_message(shown), path, line,
                                                       kind=EvidenceKind.CONVENTION))

    def _on(self, term: Term, path: str, owner: Optional[str]) -> Value:
        """`torch.zeros(n, device=x.device)`: on `x`'s device (`device=self.device`: `base_term` is
        the class's `device` field itself, a place or unknown).  A parameter or a tensor with
        no evidence of its place is taken to be on the accelerator, as any explicit `device=`
        (the walk's `_device_kwarg_kind` reads it the same way)."""
        _, base_term, rank, line, how, code = term
        base = self.eval(base_term, path, owner)
        like = _LIKE_HOW.search(how) is not None
        if like:
            rank = base.rank if base.kind.is_tensor else None  # `torch.zeros_like(t)`: of `t`'s rank
        # `t.new_zeros(n)` without `dtype=` (code None): of `t`'s dtype.
        integer = base.integer if code is None else decode_integer(code)
        if base.kind in (CPU_KIND, CPU_PLACE_KIND):
            # `x.device` of a CPU tensor, or `self.device` that the class points at the CPU.
            return Value(CPU_KIND, rank)
        if base.kind == DEVICE_KIND and not forward_input_only(base):
            return Value(DEVICE_KIND, rank, integer=integer).because(
                self.step(f"allocated on the device of a device tensor here (`{how}`)", path, line),
                *base.evidence)
        if base.kind == TENSOR_KIND and host_by_default(base):
            # On the device of a tensor `__init__` built on the host: where that is, not known.
            return Value(TENSOR_KIND, rank, integer=integer)
        module: Optional[str] = None
        if base.type_name is not None:
            place = self.field(base.type_name, "device")
            if place.kind == CPU_PLACE_KIND:
                return Value(CPU_KIND, rank)
            module = base.type_name if place.kind != DEVICE_PLACE_KIND else None
        elif base_term[0] == "field" and base_term[2] == "device" and base.kind != DEVICE_PLACE_KIND:
            module = base_term[1]  # `self.device` of a class that does not say where it points
        if module is not None and module in self.modules:
            # As the walk's `_module_device`: where the module's parameters are (a convention).
            return Value(DEVICE_KIND, rank, integer=integer).because(EvidenceStep(
                f"allocated on the device of an `nn.Module` (`{module}`) here (`{how}`), {MODULE_DEVICE_NOTE}",
                path, line, kind=EvidenceKind.CONVENTION))
        if like or _NEW_HOW.search(how):
            # `t.new_zeros(n)` (`summary._new_rank`): `device=t.device` in other words.
            return Value(DEVICE_KIND, rank, integer=integer).because(self.step(
                f"allocated on the device of a tensor here (`{how}`): nothing in the project proves where that "
                f"tensor is, and a tensor's device that a new tensor follows is taken to be the accelerator",
                path, line))
        return Value(DEVICE_KIND, rank, integer=integer).because(
            self.step(f"allocated on the device here (`{how}`): nothing in the project proves where that points, "
                      f"and a `device=` that is not provably the CPU is taken to be the accelerator", path, line))


# The `how` of an `on` term for `t.new_zeros(...)` and its kin (`summary._Builder`, no `device=`).
_NEW_HOW = re.compile(r"\.(?:" + "|".join(sorted(NEW_METHODS)) + r")\(\.\.\.\)$")
# The `how` of an `on` term for `torch.zeros_like(t)` and its kin (`summary._Builder._factory`).
_LIKE_HOW = re.compile(r"^torch\.\w+_like\(\.\.\.\)$")


@dataclass(frozen=True)
class _BuiltOn:
    """Where a class is constructed under an accelerator default device: the `with` (or
    `set_default_device`) at `path:line`, or, with `vllm_root`, vLLM's model loader building
    that model class (`path:line` its `__init__`)."""

    path: str
    line: int
    how: str
    vllm_root: Optional[str] = None
    # The project's own loader: `(root, words)` when a function called under the context
    # builds a class chosen at run time (`model_class(engine_config=..., prefix=...)`) and
    # `root` is taken for one, its constructor taking those keywords (`_loader_built`).
    loader: Optional[Tuple[str, str]] = None
    # Built by a call the block makes (`_Resolver._mark_called`): `(root, hops)`, the class the
    # calls construct and the calls from the block to that construction, as evidence words them.
    via: Optional[Tuple[str, Tuple[str, ...]]] = None
    # A base built only as its subclasses (`_Resolver._mark_bases_of_built`): `(base, subclasses)`,
    # the rest of this `_BuiltOn` saying where the first subclass is built.
    base_of: Optional[Tuple[str, Tuple[str, ...]]] = None

    def step(self, cls: str) -> EvidenceStep:
        """The evidence step that puts `cls`'s default-device allocations on the device."""
        if self.base_of is not None:
            base, subs = self.base_of
            inner = replace(self, base_of=None).step(subs[0])
            shown = ", ".join(f"`{s}`" for s in subs[:4]) + (", ..." if len(subs) > 4 else "")
            return EvidenceStep(f"`{base}` is constructed nowhere in the project, only its subclasses ({shown}), "
                                f"each built under a default device, so `self` in its methods is one of theirs; "
                                f"for `{subs[0]}`: {inner.message}", inner.path, inner.row,
                                kind=EvidenceKind.CONVENTION)
        if self.vllm_root is not None:
            return EvidenceStep(vllm_loader_message(cls, self.vllm_root), self.path, self.line,
                                kind=EvidenceKind.CONVENTION)
        if self.loader is not None:
            root, words = self.loader
            built = f"{words} under `{self.how}`: `{root}` is {PROJECT_LOADER_NOTE}"
            return EvidenceStep(built if cls == root else f"`{cls}` is constructed by `{root}.__init__` (in its body or a function it calls); {built}",
                                self.path, self.line, kind=EvidenceKind.CONVENTION)
        if self.via is not None:
            root, hops = self.via
            built = "" if cls == root else f"`{cls}` is built by `{root}.__init__`; "
            return EvidenceStep(f"{built}`{root}` is constructed under `{self.how}` through the calls the block "
                                f"makes (the default device holds in the functions it calls): {' -> '.join(hops)}",
                                self.path, self.line)
        return EvidenceStep(f"`{cls}` is constructed under `{self.how}`", self.path, self.line)


# The vLLM model constructor's parameters: the loader calls `model_class(vllm_config=..., prefix=...)`.
_VLLM_MODEL_PARAMS = frozenset({"vllm_config", "prefix"})


def _vllm_models(summaries: Sequence[FileSummary], modules: FrozenSet[str]) -> List[Tuple[str, str, int]]:
    """(file, class, `__init__` line) of each `nn.Module` class with the vLLM model constructor
    (`def __init__(self, *, vllm_config, prefix="")`) in a file importing vLLM: what vLLM's
    loader builds under `with torch.device(load_device)` (`VLLM_LOADER_NOTE`).  A class of a
    project that does not import vLLM, or no module, is not one, whatever its parameters."""
    found = []
    for summary in summaries:
        if not summary.vllm:
            continue
        for fn in summary.functions:
            if fn.name == "__init__" and fn.owner is not None and fn.owner in modules \
                    and _VLLM_MODEL_PARAMS <= set(fn.params):
                found.append((summary.path, fn.owner, fn.line))
    return sorted(found)


def through_parameter(fn: FunctionSummary) -> Optional[Tuple[int, bool, Optional[int]]]:
    """How a module-level function's return keeps one parameter's place (`def ifftshift(x):
    return torch.roll(x, shift, dims)`, `return x * 2`): where every returned term holds no
    other value than that parameter and Python numbers, through ops that keep their input's
    place (`keep`, `same`, `shape`), (its index, whether the result has the argument's rank,
    else the rank every return has or None).  A call's own argument then says where that
    call's result is (the walk's `expressions._project_call`), where what the function
    returns joined over every call says nothing (its calls pass tensors of different places).
    The resolver does not read it: the call sites it would keep for that cost the
    resolve-again run 0.2 MB of issue 12's budget, for no labelled row.  None else (a
    method, a return of anything else, a signature a decorator may replace)."""
    if fn.owner is not None or not fn.returns or not fn.arity:
        return None
    found: Optional[Tuple[Term, bool, Optional[int]]] = None
    for term in fn.returns:
        rule = _through(term)
        if rule is None or found is not None and rule[0] != found[0]:
            return None
        found = rule if found is None else (found[0], found[1] and rule[1], found[2] if found[2] == rule[2] else None)
    if found is None or found[0][1] != fn.name or found[0][2] not in fn.params:
        return None
    param, keeps, rank = found
    return fn.params.index(param[2]), keeps, None if keeps else rank


def _through(term: Term) -> Optional[Tuple[Term, bool, Optional[int]]]:
    """The one `param` term whose place `term` keeps, whether `term` keeps its rank too, and
    the rank it has otherwise (`through_parameter`; read as `_Resolver.eval` reads the tags: an
    operator of one tensor and a Python number keeps the tensor's rank, `shape` has its own);
    None where `term` holds anything else."""
    tag = term[0]
    if tag == "param":
        return term, True, None
    if tag == "ranked":  # the parameter past an unpacking of its sizes: of that rank
        return term[1], False, term[2]
    if tag == "keep" or tag == "shape":
        inner = _through(term[1])
        if inner is None:
            return None
        return inner if tag == "keep" else (inner[0], False, term[2])
    if tag != "same":
        return None
    sides = [side for side in term[1:] if side is not None]
    found: Optional[Tuple[Term, bool, Optional[int]]] = None
    for side in sides:
        if side == SCALAR_TERM:
            continue
        inner = _through(side)
        if inner is None or found is not None and inner[0] != found[0]:
            return None
        found = inner
    if found is None:
        return None
    keeps = len(sides) == 2 and SCALAR_TERM in sides and found[1]
    return found[0], keeps, None


def through_functions(functions: Mapping[str, Sequence[Tuple[str, FunctionSummary]]]
                      ) -> Dict[str, Tuple[str, int, bool, Optional[int]]]:
    """The names of one definition in the project, a module-level function whose return keeps
    a parameter's place (`through_parameter`), each with (that parameter, its index, whether
    the result has the argument's rank, the rank it has else): `Resolved.through`."""
    out: Dict[str, Tuple[str, int, bool, Optional[int]]] = {}
    for name, definitions in functions.items():
        if len(definitions) == 1:
            rule = through_parameter(definitions[0][1])
            if rule is not None:
                out[name] = (definitions[0][1].params[rule[0]], *rule)
    return out


def own_definitions(definitions: Sequence[Tuple[str, FunctionSummary]],
                    path: str) -> Optional[List[Tuple[str, FunctionSummary]]]:
    """The module-level `def`s of a function name in the file at `path`, when another file
    defines the name too (a bare call there binds to its own module's global); None where
    the file has none or no other file shares the name (the project's answer is the file's)."""
    functions = [(p, fn) for p, fn in definitions if fn.owner is None]
    own = [(p, fn) for p, fn in functions if p == path]
    return own if own and len(own) < len(functions) else None


def homonym_sites(sites: List[Tuple[str, CallSite]], definitions: Sequence[Tuple[str, FunctionSummary]],
                  fn: FunctionSummary) -> List[Tuple[str, CallSite]]:
    """The calls of a function name that may call `fn`, one of several functions of that name
    (`def alloc` in two modules): a bare call in a module that defines the name itself binds to
    its own module's global (as `returns_in` reads it), so the calls in the other defining
    modules are not `fn`'s; a call in a module that defines none (an import) may be either's.
    Without this, pypots' two `FFT_for_Period` would each take the other's arguments."""
    functions = [(p, other) for p, other in definitions if other.owner is None]
    defining = {p for p, _ in functions}
    if len(defining) < 2:
        return sites
    own = _path_of(functions, fn)
    return [(p, c) for p, c in sites if p == own or p not in defining]


def _constructed_module(term: Term, modules: AbstractSet[str]) -> Set[str]:
    """The project classes of `modules` (`nn.Module`s, or others for `__call__`) a field's term
    constructs (`Head(...)`, `layers.Head(...)`, either side of a join): calling the field runs
    their `forward` (their `__call__`)."""
    tag = term[0]
    if tag == "join":
        return {m for part in term[1] for m in _constructed_module(part, modules)}
    name = term[1] if tag in ("call", "built") else term[2] if tag == "mcall" and len(term) > 2 else None
    return {name} if isinstance(name, str) and name in modules else set()


def _constructs_only(term: Term, classes: AbstractSet[str]) -> bool:
    """A field's term that is, on every side of a join, a construction of a project class
    (`Step(...)`, `layers.Head(...)`): an instance, never a function defined elsewhere."""
    if term[0] == "join":
        return all(_constructs_only(part, classes) for part in term[1])
    return bool(_constructed_module(term, classes))


# Classes of the libraries serving and training code builds its models on that derive from
# `nn.Module`, by the name a base spells them with: Lightning's `LightningModule`, transformers'
# `PreTrainedModel` (and its per-model `BertPreTrainedModel`, ...) and `GradientCheckpointingLayer`,
# diffusers' `ModelMixin`, mmengine's and mmcv's `BaseModule` and `BaseDataPreprocessor`, Megatron's
# `MegatronModule`, tensordict's `TensorDictModuleBase`.  A project that defines a class of one of
# these names itself is read by its own bases instead.
LIBRARY_MODULE_BASES = frozenset({
    "LightningModule", "PreTrainedModel", "GradientCheckpointingLayer", "ModelMixin", "BaseModule",
    "BaseDataPreprocessor", "MegatronModule", "TensorDictModuleBase",
})


def _library_module(base: str, classes: Mapping[str, Any]) -> bool:
    """`base` names a library's `nn.Module` subclass (`LIBRARY_MODULE_BASES`, or a transformers
    model's `...PreTrainedModel`) the project does not define itself."""
    return base not in classes and (base in LIBRARY_MODULE_BASES or base.endswith("PreTrainedModel"))


def _holds_module_tensors(name: str, definitions: List[Tuple[str, ClassSummary]],
                          classes: Mapping[str, List[Tuple[str, ClassSummary]]]) -> bool:
    """A class derived from a library's class the project does not define (`S3Tokenizer` of the
    `s3tokenizer` package's `S3TokenizerV2`) that registers a buffer or holds a parameter
    (`self.register_buffer(...)`, `self.w = nn.Parameter(...)`: a `wrap` field): only an
    `nn.Module` has those, so the library's class is one."""
    bases = [b for _, c in definitions for b in c.bases]
    return bool(bases) and all(b not in classes and b != name for b in bases) and bool(_wrapped(definitions))


def _wrapped(definitions: List[Tuple[str, ClassSummary]]) -> List[Term]:
    """What a class's definitions hold as buffers or parameters (`self.register_buffer(name, t)`,
    `self.w = nn.Parameter(t)`: each `wrap` field's wrapped term)."""
    return [term[1] for _, c in definitions for _, term in c.fields if term[0] == "wrap"]


def _module_classes(classes: Mapping[str, List[Tuple[str, ClassSummary]]]) -> FrozenSet[str]:
    """Project classes deriving from `nn.Module` (a base spelled `nn.Module` or another
    `torch.nn` module class, `summary._base_name`; named `Module`: imported bare, or a project's
    own `Module` such as refiners' `fl.Module`; a library's module class, `_library_module`),
    directly or through other project classes."""
    found: Set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, definitions in classes.items():
            if name not in found and (any(b in (TORCH_MODULE_BASE, "Module") or (b in found and b != name)
                                          or _library_module(b, classes)
                                          for _, c in definitions for b in c.bases)
                                      or _holds_module_tensors(name, definitions, classes)):
                found.add(name)
                changed = True
    return frozenset(found)


def _fact(value: Value) -> Tuple[Any, ...]:
    """What a value says, without the evidence (two passes may word the reasons apart)."""
    return (value.kind, value.rank, value.type_name, value.length, value.integer, value.none,
            _fact(value.element) if value.element is not None else None,
            tuple(_fact(v) for v in value.items) if value.items is not None else None,
            _fact(value.key) if value.key is not None else None)


def _augmented(found: Value, added: Sequence[Value]) -> Value:
    """A field's value joined with what its augmented assignments leave in it (`self.total
    += lens[i]`, `values.augmented_number`): a number with a device element added is no
    proven number, though its plain assignments are all numbers."""
    for value in added:
        more = augmented_number(found, value)
        if more is not None:
            found = join(found, more)
    return found


def _without(term: Term, own: Term) -> Optional[Term]:
    """A field's assigned term without the field itself among its alternatives.

    `state = self._state` or a new `State(...)`, then `self._state = state`: the field is the
    join of itself and `State`, and the least solution of `x = A | x` is `A` (a cycle read as
    unknown would lose the class).  So is an op of the field that keeps its place and rank
    (`self.seqs = self.seqs.index_select(0, order)`: a `keep` term).  None when nothing else
    is left.
    """
    if term == own or term[:2] == ("keep", own):
        return None  # `self.x = self.x.index_select(0, order)`: as wide and where it was
    if term[0] != "join":
        return term
    rest = [t for t in (_without(t, own) for t in term[1]) if t is not None]
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else ("join", tuple(rest))


def _dotted_term(term: Term) -> Optional[str]:
    """The dotted name a module-level name's term spells (`("global", "AutoModel")`, an `attr`
    of one: `transformers.AutoModel`), or None."""
    if term[0] == "global" and isinstance(term[1], str):
        return term[1]
    if term[0] == "attr" and isinstance(term[2], str):
        base = _dotted_term(term[1])
        return f"{base}.{term[2]}" if base is not None else None
    return None


def _called_names(term: Term) -> List[Tuple[str, int]]:
    """Names a return term calls directly, with the call's line (`Model(...)`, either side of
    a conditional, a local bound to a class a registry gives)."""
    if term[0] == "call":
        return [(term[1], term[2] if len(term) > 2 and isinstance(term[2], int) else 0)]
    if term[0] == "built":
        # `model_class(...)` of `model_class: type[Model]`: `Model`, and the parameter's name
        # (a loader's registry class: `_loader_built` reads the call's keywords by that name).
        return [(term[1], term[3]), (term[2], term[3])]
    if term[0] == "invoke" and len(term) > 3 and isinstance(term[3], str):
        return [(term[3], term[2])]  # `cls = REGISTRY[arch]; return cls(...)`: the name called
    if term[0] == "join":
        return [found for t in term[1] for found in _called_names(t)]
    return []


def _qual(fn: FunctionSummary) -> str:
    return f"{fn.owner}.{fn.name}" if fn.owner else fn.name


def _allocates_by_default(term: Term, depth: int = 0) -> bool:
    """Whether a field's term holds a factory without `device=` in `__init__` (a `dflt` term)."""
    if depth > 12 or not term:
        return False
    if term[0] == "dflt":
        return True
    return any(isinstance(t, tuple) and t and (isinstance(t[0], str) and _allocates_by_default(t, depth + 1)
                                                or isinstance(t[0], tuple) and any(
                                                    _allocates_by_default(u, depth + 1) for u in t))
               for t in term[1:])


def _hop(sites: SiteWords, call: str, path: str, line: int, fn_path: str, fn: FunctionSummary) -> str:
    """One call on the way from a device context to a construction, as evidence words it."""
    name = f"{fn.owner}.{fn.name}" if fn.owner else fn.name
    return f"`{call}(...)` at {_site(sites, path, line)} runs `{name}` ({_site(sites, fn_path, fn.line)})"


# `name.py:N` evidence words → the (file, line) pairs each was written for.
SiteWords = Dict[str, Set[Tuple[str, int]]]


def _site(sites: SiteWords, path: str, line: int) -> str:
    """`name.py:N`, the words evidence names line N of the file at `path` with, recorded in
    `sites`: the file's name alone does not say which file they mean (vLLM has 59
    `utils.py`), and a run that carries the facts to moved lines must know (`moved_lines`)."""
    word = f"{evidence_file_name(path)}:{line}"
    sites.setdefault(word, set()).add((path, line))
    return word


def _vague(value: Value) -> bool:
    """A field value that says no more than an annotation would (an unknown, a bare tensor, a
    host object of a type nothing shows: `self.pad_id: int = config.pad_id`, as the walk
    reads an annotated assignment)."""
    return value.kind in (UNKNOWN_KIND, TENSOR_KIND) and value.rank is None \
        and value.type_name is None and value.element is None or host_object(value)


# `_Resolver._device_of_unplaced`'s step: the one convention a passed place carries on.
_UNPLACED_DEVICE_STEP = ("the `.device` of a tensor is passed here: nothing in the project proves where that "
                         "tensor is, and a tensor's `.device` passed as a place is taken to be the accelerator")


def _at_call(fn: FunctionSummary, index: int) -> Tuple[str, int]:
    """Parameter `index` of `fn` as a call site passes it: its name, and its position among the
    call's positional arguments (a bound method's `self` is not one)."""
    return fn.params[index], index - (1 if fn.bound else 0)


# The kinds of `_call_key`: `_Resolver.param`, `passed` and `every_passes`.
_CALL_KINDS = {"param": 0, "passed": 1, "every": 2}


def _call_key(kind: str, fn: FunctionSummary, index: int, sites: int) -> Tuple[Any, ...]:
    """The memo key of what call sites pass parameter `index` of `fn` (`_Resolver.param`,
    `passed`): the name, which call sites may run it (`sites`, `_Resolver._sites_key`, for a
    method called on an instance or its class: its class decides which `self.m(...)`,
    `x.m(...)` and module calls may run it; 0 for a function, whose sites its name decides),
    the owner of an `__init__` or a `__call__` (named in the evidence), and the parameters a
    call must pass (`_required`), which decide the sites that can bind."""
    name, position = _at_call(fn, index)
    return (kind, fn.owner if fn.name in OWNED_BY_CLASS else None, sites, fn.name, fn.bound, position, name,
            _required(fn))


def _required(fn: FunctionSummary) -> Tuple[Tuple[int, str], ...]:
    """The parameters of `fn` a call must pass (no default), each with its position among a
    call's positional arguments (a bound method's own object is not one)."""
    return _required_of(fn.params, fn.defaults, fn.bound)


@lru_cache(maxsize=4096)  # a pure function of its arguments: bounded, shared by every resolve
def _required_of(params: Tuple[str, ...], defaults: Tuple[str, ...], bound: bool) -> Tuple[Tuple[int, str], ...]:
    first = 1 if bound else 0
    return tuple((i - first, p) for i, p in enumerate(params) if i >= first and p not in defaults)


def _can_bind(site: CallSite, required: Tuple[Tuple[int, str], ...]) -> bool:
    """Whether the call `site` may be a call of `fn` by its arguments alone: every parameter
    without a default is passed, by position or by keyword, unless `*args` / `**kwargs` hide
    what is passed.  A call that leaves one out raises `TypeError` before `fn` runs, so it is
    not a call of `fn` (`d.update(other)` is no call of `update(self, tokens, logits, sums)`),
    and what it passes says nothing about `fn`'s parameters.  `required` is `_required(fn)`;
    the summary does not tell keyword-only parameters apart, so one counts as passed by
    position too (that only keeps a site, it never drops a real call)."""
    if site.starred or all(position < len(site.args) for position, _ in required):
        return True
    keywords = {k for k, _ in site.keywords}
    return all(name in keywords or 0 <= position < len(site.args) for position, name in required)


def _binding(sites: List[Tuple[str, CallSite]], fn: FunctionSummary, own: int) -> List[Tuple[str, CallSite]]:
    """The calls of `sites` whose arguments Python could bind to `fn`'s parameters (all of them
    where the summary does not know `fn`'s signature: `FunctionSummary.arity`).  A call that
    passes more positional arguments than `fn` takes, without `*args` there, or a keyword `fn`
    does not name, without `**kwargs` there, raises `TypeError` before `fn` runs: it is a call
    of another function of that name (`scheduler.step(pred, t, x, return_dict=False)` is no
    call of `Runner.step(self, token)`), and what it passes says nothing about `fn`'s
    parameters.  `own` is added to the positional parameters: -1 where the call passes no
    object of its own to the first one (a construction runs `__init__`), else 0; a method
    called on its own instance (`CallSite.instance`) takes one fewer.  A call with `*args`
    passes at least its other positional arguments, one with `**kwargs` at least its named
    keywords."""
    arity = fn.arity
    if not arity:
        return sites
    positional, varargs, varkw = arity
    most = positional + own
    names = frozenset(fn.params) | {"**"}
    # The sites' own pairs, and `sites` itself where every call binds: a resolve keeps one
    # such list per function and parameter position asked (`_fn_sites`), and new pairs for
    # each were ~9 MB of the resolve's peak on vLLM.
    kept = [site for site in sites
            if (varargs or len(site[1].args) <= most - (fn.bound and site[1].instance))
            and (varkw or all(k in names for k, _ in site[1].keywords))]
    return sites if len(kept) == len(sites) else kept


def _keyed_steps(value: Value, what: str, path: str, line: int) -> Value:
    """`value` with a step on each of its dict keys that holds a device tensor (`what`, e.g.
    "`make_state()` returns a dict", then `whose key "buf" is a device tensor`)."""
    if not value.entries or all(v.kind != DEVICE_KIND for _, v in value.entries):
        return value
    return replace(value, entries=tuple(
        (k, v.because(EvidenceStep(f"{what} whose key \"{k}\" is a device tensor", path, line))
         if v.kind == DEVICE_KIND else v) for k, v in value.entries))


def _passed(site: CallSite, name: str, position: int) -> Optional[Term]:
    """What the call `site` passes as parameter `name` (at `position` among the positional
    ones): by keyword, else by position unless a `*args` hides it; None where the call leaves
    it to its default."""
    for keyword, term in site.keywords:  # a loop, not `next(...)`: called ~400k times on vLLM
        if keyword == name:
            if term is not None:
                return term
            break
    if not site.starred and 0 <= position < len(site.args):
        return site.args[position]
    return None


def _shown_sites(sites: SiteWords, values: Sequence[Tuple[str, int, Value]]) -> str:
    """The first three call sites of `values` as a parameter's evidence names them (`a.py:3,
    b.py:9 and 4 more`, recorded in `sites`); made only for the values that keep a step (most
    are unknown)."""
    where = ", ".join(_site(sites, p, line) for p, line, _ in values[:3])
    return where + ("" if len(values) <= 3 else f" and {len(values) - 3} more")


def _no_number(value: Value) -> bool:
    """A value known not to be a Python number (nor a 0-dim tensor, which indexes like one):
    a tensor of another or unknown rank, a numpy array, a device specification, an object or
    container of no project class."""
    return (value.kind.is_tensor and value.rank != 0) or (value.kind == OTHER_KIND and value.type_name is None) \
        or value.kind in (NUMPY_KIND, CPU_PLACE_KIND, DEVICE_PLACE_KIND)


# How the step of a parameter that is an int by its default ends (`_Resolver._int_default`).
_INT_DEFAULT_STEP = "` to an int"


def _config_term(receiver: Term, value: Value) -> bool:
    """Whether `receiver`, the term an attribute is read from, is a configuration (as
    `expressions._reads_config` reads one): a field of one, or a parameter, field or attribute
    spelled like one (`values.names_config`) that evaluates to nothing known."""
    if from_config(value):
        return True
    if not nothing_known(value):
        return False
    tag = receiver[0] if isinstance(receiver, tuple) and receiver else None
    if tag == "param":
        return names_config(receiver[2])
    if tag in ("field", "attr"):
        return isinstance(receiver[2], str) and names_config(receiver[2])
    return False


def _numbers(value: Value) -> bool:
    """A list, tuple or set whose every element is a Python number.  A dict display's term
    looks the same (`{"a": 1}` holds numbers as values, and iterating it gives its keys): read
    as an index, such a key is a number too, or the write raises before any copy."""
    return value.kind == OTHER_KIND and value.type_name is None and value.key is None \
        and value.element is not None and value.element.kind == SCALAR_KIND and value.items is None


def _one_or_many(value: Value) -> bool:
    """A Python number, a container of numbers (`_numbers`), or either (`int | list[int]`,
    a join whose element is a number): what iterating or indexing it yields is a number."""
    if value.kind == SCALAR_KIND or _numbers(value):
        return True
    return value.kind == UNKNOWN_KIND and value.type_name is None and value.items is None \
        and value.element is not None and value.element.kind == SCALAR_KIND


def _informative(value: Value) -> bool:
    return value.kind != UNKNOWN_KIND or value.type_name is not None or value.element is not None


def _device_param(pname: str, annotation: Term) -> bool:
    """A parameter that names a device (`device: torch.device`, `device: str`, `device`), whose
    call sites may say where it points (`f(..., device=torch.device("cpu"))`).  By name, for
    annotated ones: looking up the call sites of every `str`-annotated parameter of a project
    costs more than it finds."""
    return annotation in (("unk",), ("other",)) and (pname == "device" or pname.endswith("_device"))


def _defaulted_device(fn: FunctionSummary, index: int) -> bool:
    """Parameter `index` of `fn` names a device and has a default (`device=None`: the CPU)."""
    return fn.params[index] in fn.defaults and _device_param(fn.params[index], fn.annotations[index])


def wanted_callees(summaries: Sequence[FileSummary]) -> FrozenSet[str]:
    """The names whose call sites the resolver reads: the parallel resolve
    (`pipeline._resolve_blobs`, taken on 2+ cores for 64+ files) keeps only these sites, so a
    reader of `_Resolver.calls` that asks about a name left out answered otherwise than the
    serial resolve, and the findings depended on the project's size and the core count.
    Every reader's names, each from its own helper: parameters (`_parameter_callees`), the
    loader's registry calls (`_loader_callees`), the functions whose parameter a module is
    moved to (`_moved_to_callees`), the bases that may be built only as their subclasses
    (`_base_classes`) and the modules the project may not build (`_held_module_callees`)."""
    out: Set[str] = set()
    for summary in summaries:
        out.update(_parameter_callees(summary))
        out.update(_moved_to_callees(summary))
    out.update(_loader_callees(summaries))
    out.update(_base_classes(summaries))
    out.update(_module_field_callees(summaries))
    out.update(_held_module_callees(summaries))
    out.update(_applied_callees(summaries))
    return frozenset(out)


def read_callees(summaries: Iterable[FileSummary]) -> FrozenSet[str]:
    """Every name under which `_Resolver` may look up call sites (`self.calls`): the project's
    functions and classes (a function's or a method's sites, a class's constructions, whether
    any call names them: `_find_sites`, `_constructed`, `_call_site`, `_mark_bases_of_built`),
    and the names a function's return calls (a loader's registry class, `_loader_built`).  Keeping only these sites resolves to
    the same facts as keeping all (`summary.calls_from_json`, `ProjectIndex.facts`): a site
    of any other name is never read.  Keep it in step with the readers of `self.calls`."""
    out: Set[str] = set()
    summaries = list(summaries)
    for summary in summaries:
        out.update(c.name for c in summary.classes)
        for fn in summary.functions:
            out.add(fn.name)
            for term in fn.returns:
                out.update(name for name, _ in _called_names(term))
    out.update(_module_field_callees(summaries))
    out.update(_applied_callees(summaries))
    return frozenset(out)


# The base names of an autograd `Function` (`torch.autograd.Function`, its `InplaceFunction`).
_AUTOGRAD_BASES = frozenset({"Function", "InplaceFunction"})


def _applied_callees(summaries: Sequence[FileSummary]) -> Set[str]:
    """`apply` and `forward`, where a project class derives from `torch.autograd.Function`
    (`_AUTOGRAD_BASES`): its `cls.apply(...)` and `cls.forward(...)` calls run its `forward`
    (`_Resolver._applied_sites`)."""
    autograd = any(b in _AUTOGRAD_BASES for summary in summaries for c in summary.classes for b in c.bases)
    return {"apply", "forward"} if autograd else set()


def _module_field_callees(summaries: Sequence[FileSummary]) -> Set[str]:
    """The fields that hold a constructed project class (`self.head = Head(...)`): a call
    `self.head(x)` of one that is an `nn.Module` runs its `forward` (`_Resolver._module_calls`),
    of any other its `__call__` (`_Resolver._instance_calls`)."""
    names = {c.name for summary in summaries for c in summary.classes}
    return {a for summary in summaries for c in summary.classes for a, t in c.fields
            if _constructed_module(t, names)}


def _parameter_callees(summary: FileSummary) -> Set[str]:
    """Project functions (and classes and `super().__init__`, for `__init__`) with an un-annotated parameter, or a
    device parameter, or any parameter with a default: `param`, `passed` and
    `passes_no_number` read what their calls pass (`slot=0` overridden with a list is no
    int).  Dataclasses (no `__init__` of their own): their constructions give their fields
    (`_Resolver._constructed`)."""
    out: Set[str] = set()
    for fn in summary.functions:
        for index, (pname, annotation) in enumerate(zip(fn.params, fn.annotations)):
            if (fn.bound and index == 0) or pname not in fn.defaults and (
                    annotation not in _OPEN_ANNOTATIONS and annotation != _TENSOR_CONTAINER
                    and not _device_param(pname, annotation)):
                continue
            out.add(fn.owner if fn.name == "__init__" and fn.owner else fn.name)
            if fn.name == "__init__" and fn.owner:
                out.add("__init__")  # a subclass's `super().__init__(...)` constructs it too
            break
    inits = {fn.owner for fn in summary.functions if fn.name == "__init__"}
    out.update(c.name for c in summary.classes if c.name not in inits
               and any(t[0] == "ann" for _, t in c.fields))
    return out


def _loader_callees(summaries: Sequence[FileSummary]) -> Set[str]:
    """A function returning a call of a name that is no project function or class (a class a
    registry picks, `model_class(cfg=..., prefix=...)`): `_Resolver._loader_built` reads that
    call's keywords."""
    defined = {f.name for summary in summaries for f in summary.functions} \
        | {c.name for summary in summaries for c in summary.classes}
    return {name for summary in summaries for fn in summary.functions for term in fn.returns
            for name, _ in _called_names(term) if name not in defined}


def _moved_to_callees(summary: FileSummary) -> Set[str]:
    """The functions whose parameter a module is moved to (`m.to(dev)`, `m.to(x.device)`):
    `_Resolver._accelerator_place` reads what their calls pass and where the first one is.
    The summary names any parameter the move reads (`summary._device_param`: `dev:
    torch.device`, `device_id: int`), not only those `_parameter_callees` keeps."""
    out: Set[str] = set()
    for move in summary.moves:
        place = move.device
        if place is not None and place[0] == "attr" and len(place) > 2 and place[2] == "device":
            place = place[1]  # `x.device`: what the calls pass as `x`
        if place is not None and place[0] == "param":
            _, function, _, owner = place
            out.add(owner if function == "__init__" and owner is not None else function)
    return out


def _held_module_callees(summaries: Sequence[FileSummary]) -> Set[str]:
    """The classes holding a buffer or parameter (a `wrap` field) and every project class
    deriving from another: `_Resolver._run_where_models_run` asks whether a call names one
    of them (a class or any project subclass of it built by the project)."""
    defined = {c.name for summary in summaries for c in summary.classes}
    return {c.name for summary in summaries for c in summary.classes
            if any(t[0] == "wrap" for _, t in c.fields) or any(b in defined for b in c.bases)}


def _base_classes(summaries: Sequence[FileSummary]) -> Set[str]:
    """The project classes a project class derives from: `_Resolver._mark_bases_of_built`
    marks one only where no call in the project names it (`_HOST = Base(4)` at module level,
    `layers.Base(n)`: calls no function summary's `called` lists)."""
    defined = {c.name for summary in summaries for c in summary.classes}
    return {base for summary in summaries for c in summary.classes for base in c.bases if base in defined}


# Names of PyTorch's own tensor and module API (`.view(`, `.weight`, `.tensor`, `.values`).
# A project class may hold a device tensor under such a name, but the prefilter knows fields
# and methods by name only: one such fact would send every file that calls `x.view()` or
# reads `m.weight` through the full parse and walk (on vLLM, twice the files parsed for no
# finding).  Such facts are not kept, so that the walk and the prefilter agree; a write
# through one is missed (a known gap, the price of the prefilter staying cheap).
API_NAMES = frozenset({
    "view", "view_as", "reshape", "tensor", "data", "weight", "bias", "values", "indices",
    "grad", "T", "mT", "to", "cuda", "cpu", "contiguous", "clone", "detach", "float", "half",
    "int", "long", "bool", "flatten", "squeeze", "unsqueeze", "expand", "permute",
    "transpose", "sum", "mean", "max", "min", "get", "items", "keys", "copy", "shape", "size",
    "device", "dtype", "forward", "__call__", "item", "numpy", "new_empty", "new_zeros",
    "new_ones", "new_full", "empty", "zeros", "ones", "full", "arange", "cat", "stack",
})


def resolve(summaries: Sequence[FileSummary]) -> Resolved:
    """Every class field, return and parameter fact of the project, resolved together.

    The summaries are taken in the order of their paths, whatever order they come in: where
    two files define the same name, which definition comes first decides some facts, and the
    order a cold run's workers hand the summaries back in is not the project index's (nor one
    command line's the next's)."""
    summaries = sorted(summaries, key=lambda s: s.path)
    resolver = _Resolver(summaries)
    fields: Dict[str, Dict[str, Value]] = {}
    classes: Dict[str, Tuple[str, int]] = {}
    bases: Dict[str, Tuple[str, ...]] = {}
    device_names: Set[str] = set()
    own_attrs: Dict[str, Set[str]] = {}
    # Sorted: a cycle resolves to unknown on first sight, so the order must not vary by run.
    for name, class_definitions in sorted(resolver.classes.items()):
        classes[name] = (class_definitions[0][0], class_definitions[0][1].line)
        bases[name] = tuple(b for _, c in class_definitions for b in c.bases if b in resolver.classes)
        attrs = {a for _, c in class_definitions for a, _ in c.fields}
        attrs |= resolver.stored_attrs.get(name, set())
        if name in resolver.on_device:
            # Built under a default device: the buffers its bases' `__init__` registers are its own.
            attrs |= {a for base in resolver._with_bases(name)[1:] for _, c in resolver.classes[base]
                      for a, t in c.fields if _allocates_by_default(t)}
        own_attrs[name] = attrs
        for attr in sorted(attrs):
            _keep_field(fields, device_names, name, attr, resolver.field(name, attr), attrs)
    moved = resolver.moved_modules()
    for name in sorted(n for n in resolver.subclasses if n in resolver.classes):
        # A device or number field its subclasses set and it does not (`_Resolver.defined_below`):
        # not set, or set only to `None` (a store `self.x[i] = v` or `self.x += v` sets nothing).
        assigned_here = own_attrs[name]
        setting = {a for _, c in resolver.classes[name] for a, t in c.fields if t[0] not in _NOT_SETTING}
        # In a fixed order: the fields' evaluation order decides where a cycle is cut.
        below = {a for sub in sorted(resolver._descendants(name)) for a in sorted(own_attrs.get(sub, ()))
                 if a not in setting and resolver.in_methods(sub, a, moved).kind in (DEVICE_KIND, SCALAR_KIND)}
        for attr in sorted(below):
            if resolver.field(name, attr).kind == UNKNOWN_KIND:
                value = resolver.defined_below(name, attr, moved)
                if value.kind in (DEVICE_KIND, SCALAR_KIND):
                    _keep_field(fields, device_names, name, attr, value, assigned_here)
    returns: Dict[str, Value] = {}
    params: Dict[Tuple[str, str], Value] = {}
    # Defaulted device parameters no call passes (`_Resolver.none_passes`), by `params`' key.
    defaults_only: Dict[Tuple[str, str], List[Value]] = {}
    int_params: Dict[Tuple[str, str], Value] = {}
    passed_non_numbers: Set[Tuple[str, str]] = set()
    passed_given: Dict[Tuple[str, str], Value] = {}
    own_returns: Dict[str, Value] = {}
    split_returns: Dict[str, FrozenSet[str]] = {}
    for name, definitions in sorted(resolver.functions.items()):
        value = resolver.returns(name)
        if name in API_NAMES and _may_hold_device(value):
            value = UNKNOWN  # see API_NAMES
        if _informative(value) and _worth_keeping(value):
            returns[name] = value
            if _may_hold_device(value):
                device_names.add(f"call:{name}")  # read as `name(`
        defining = sorted({p for p, fn in definitions if fn.owner is None})
        if len(defining) > 1 and name not in API_NAMES:
            # Several modules define `name`: each module's own calls see only its own.
            split_returns[name] = frozenset(module_dotted(p) for p in defining)
            for path in defining:
                own = resolver.returns_in(name, path)
                if _informative(own) and _worth_keeping(own):
                    own_returns[f"{module_dotted(path)}:{name}"] = own
                    if _may_hold_device(own):
                        device_names.add(f"call:{name}")
        for fpath, fn in definitions:
            # Whatever facts of `fn` are kept below (none for an API name's), the walk places
            # these inputs by convention.
            device_names.update(_forward_input_names(fn, resolver.modules))
            if fn.owner is not None:
                method = resolver.method_returns(fn.owner, fn.name)
                if fn.name in API_NAMES and _may_hold_device(method):
                    if fn.name not in OWNED_BY_CLASS and (fn.bound or fn.name != "forward"):
                        continue  # see API_NAMES
                    # Not its return; but the call sites of `Owner.__call__` (and of a static
                    # `forward`, `Owner.apply(...)`) are found by its class, so what its calls
                    # pass reaches no other class's method (`param_key`).
                elif _informative(method) and _worth_keeping(method):
                    returns[f"{fn.owner}.{fn.name}"] = method
                    if _may_hold_device(method):
                        device_names.add(f"call:{fn.name}")
            for pname in fn.int_params:
                # Only for this function (a method of the same name elsewhere may differ).
                int_params[(_qual(fn), pname)] = SCALAR.because(EvidenceStep(
                    f"`{_qual(fn)}` passes `{pname}` to `range()`: an int",
                    _path_of(definitions, fn), fn.line))
            for index, pname in enumerate(fn.params):
                if fn.bound and index == 0:
                    continue
                if pname in fn.defaults and resolver.passes_no_number(fn, index):
                    passed_non_numbers.add((_qual(fn), pname))
                annotation = fn.annotations[index]
                if pname in fn.defaults and annotation == ("unk",) and not _device_param(pname, annotation):
                    given = resolver.passed(fn, index)
                    if _numbers(given) or given.kind == DEVICE_KIND:
                        passed_given[(_qual(fn), pname)] = given
                        if given.kind == DEVICE_KIND:
                            # Only inside `def <fn>(...)`: the file must define it (the prefilter).
                            device_names.update((f"param:{fn.name}.{pname}", f"def:{fn.name}"))
                is_open = annotation in _OPEN_ANNOTATIONS
                container = annotation == _TENSOR_CONTAINER
                if not is_open and not container and not _device_param(pname, annotation):
                    continue
                key = (param_key(fn.name, fn.owner), pname)
                if fn.owner is None and name in split_returns:
                    # Its own calls only (`homonym_sites`): `Resolved.param` reads it so.
                    key = (f"{module_dotted(fpath)}:{fn.name}", pname)
                if _defaulted_device(fn, index) and resolver.none_passes(fn, index):
                    # `computing_device=OBSERVER_KL_COMPUTING_DEVICE` that no call passes: the
                    # walk reads the default (`scope`: a string naming the CPU is the CPU).
                    step = EvidenceStep(DEFAULT_ONLY_STEP, _path_of(definitions, fn), fn.line)
                    defaults_only.setdefault(key, []).append(Value(UNKNOWN_KIND, evidence=(step,)))
                    continue
                # `device=None`: a place only where every call passes one (the default is the
                # CPU, `scope`'s `CPU_DEFAULT_STEP`).
                pvalue = resolver.passed_place(fn, index)
                if container:
                    # `meta: Dict[str, Tensor]`: only elements of a known place add to it.
                    if pvalue.kind != OTHER_KIND or pvalue.element is None \
                            or pvalue.element.kind not in (DEVICE_KIND, CPU_KIND):
                        continue
                elif not is_open or _defaulted_device(fn, index):
                    # `device: torch.device`: only where the calls point adds to it, or where
                    # they hand on a device parameter defaulting to the CPU (the walk reads a
                    # parameter with a default of its own so, whatever is kept).
                    if pvalue.kind not in (CPU_PLACE_KIND, DEVICE_PLACE_KIND) and not (
                            cpu_by_default(pvalue) and pname not in fn.defaults):
                        continue
                elif annotation != ("unk",) and pvalue.kind not in (DEVICE_KIND, CPU_KIND):
                    # `x: torch.Tensor`: only a place adds to the annotation (on the CPU too:
                    # the body's `device=x.device` is no accelerator then).
                    continue
                if _informative(pvalue) or cpu_by_default(pvalue):
                    params[key] = join(params[key], pvalue) if key in params else pvalue
                    if _may_hold_device(pvalue):
                        # Only inside `def <fn>(...)`: the file must define it.
                        device_names.update((f"param:{fn.name}.{pname}", f"def:{fn.name}"))
    for key, found in defaults_only.items():
        if len(found) == 1 and key not in params:
            params[key] = found[0]  # one definition, no other facts under its key
    # A project module class called later (`self.head = Head(...)`, `self.head(h)`): its
    # construction is what the prefilter can see in a file without other device sources.
    device_names.update(f"module:{name}" for name in resolver.modules)
    forwards: Dict[str, Value] = {}
    for name in sorted(resolver.modules):
        if (name, "forward") in resolver.methods:
            value = resolver.method_returns(name, "forward")
            if _informative(value) and _worth_keeping(value):
                forwards[name] = value
    built = {name: where.step(name) for name, where in sorted(resolver.on_device.items())}
    construction_calls = {name: calls for name in sorted(resolver.on_device)
                          if (calls := resolver.construction_calls(name))}
    # A file defining one: its factories without `device=` may be on the device (prefilter),
    # and a moved module's buffers and parameters, read as `.attr`, may be.
    device_names.update(f"built:{name}" for name in built)
    for name in moved:
        device_names.update(a for _, c in resolver.classes[name] for a, t in c.fields if t[0] == "wrap")
    constants, module_names = _constants(summaries)
    reexports = _reexports(summaries)
    return Resolved(fields, bases, classes, returns, params, int_params, frozenset(passed_non_numbers),
                    frozenset(device_names),
                    resolver.modules, forwards, through=through_functions(resolver.functions),
                    built_on_device=built, moved=moved, constants=constants, module_names=module_names,
                    reexports=reexports,
                    passed_given=passed_given, construction_calls=construction_calls,
                    own_returns=own_returns, split_returns=split_returns,
                    empty_lists=_empty_lists(resolver.classes),
                    enums={name: kind for name in sorted(resolver.classes) if (kind := resolver.enum(name)) is not None},
                    site_words={word: frozenset(pairs) for word, pairs in sorted(resolver.site_words.items())},
                    read_callees=read_callees(summaries))


# The standard library's enumeration bases whose members' values are what the class body
# assigns (`StrEnum` makes strings of them; a mixin other than `int` converts them).
_ENUM_BASES = frozenset({"Enum", "IntEnum", "IntFlag", "Flag"})
# Of those and the mixins, the ones that make each member an `int` itself.
_INT_ENUM_BASES = frozenset({"IntEnum", "IntFlag", "int"})
# Methods that may give a member another value than the one the class body assigns (a custom
# `__new__` or `__init__` setting `_value_`, `auto()`'s generator, a `value` property of its own).
_ENUM_VALUE_METHODS = frozenset({"__new__", "__init__", "_generate_next_value_", "_missing_", "value", "_value_"})


def enum_kind(cls: str, classes: Mapping[str, List[Tuple[str, ClassSummary]]],
              functions: Mapping[str, List[Tuple[str, FunctionSummary]]]) -> Optional[str]:
    """`resolved.INT_ENUM` / `resolved.VALUE_ENUM` where `cls` is an enumeration of the
    standard library's (`class Kind(Enum)`, `class Op(int, Enum)`, `class Mode(IntEnum)`)
    whose every member the class body assigns a Python number (`NORMAL = 1`, `SCALE = 0.5`):
    then `member.value` is that number, and an `IntEnum` member is an `int` itself (a write of
    either into one element of a device tensor copies it host-to-device).  None for anything
    else: one definition only, no project base (a base defining `__new__` could remap the
    values), no member that is no number (a tuple, `auto()`, a string), no method that may
    change a member's value (`__new__`, `__init__`, `_generate_next_value_`, `_missing_`, a
    `value` property)."""
    definitions = classes.get(cls, ())
    if len(definitions) != 1:
        return None
    summary = definitions[0][1]
    if not summary.bases or any(b in classes or b not in _ENUM_BASES | {"int"} for b in summary.bases) \
            or not any(b in _ENUM_BASES for b in summary.bases):
        return None
    if any(fn.owner == cls for name in _ENUM_VALUE_METHODS for _, fn in functions.get(name, ())):
        return None
    members = [term for attr, term in summary.fields if not sunder(attr)]
    if not members or any(term != SCALAR_TERM for term in members):
        return None
    return INT_ENUM if any(b in _INT_ENUM_BASES for b in summary.bases) else VALUE_ENUM


def _empty_lists(classes: Mapping[str, List[Tuple[str, ClassSummary]]]) -> FrozenSet[Tuple[str, str]]:
    """`Resolved.empty_lists`: the fields a class sets to `[]` that it never grows, unless
    another definition of the class's name grows its own."""
    empty = {(name, a) for name, defined in classes.items() for _, c in defined for a, t in c.fields
             if t[0] == EMPTY_LIST}
    grown = {(name, a) for name, defined in classes.items() for _, c in defined for a, t in c.fields
             if t == EMPTY_DISPLAY}
    return frozenset(empty - grown)


def _by_module(summaries: Sequence[FileSummary]) -> Tuple[Dict[str, FileSummary], FrozenSet[str]]:
    """Each dotted module's summary (`module_dotted`), and every dotted module; a module two
    files name (`m.py` and `m/__init__.py`) has no summary here."""
    found: Dict[str, Optional[FileSummary]] = {}
    for summary in summaries:
        module = module_dotted(summary.path)
        found[module] = None if module in found else summary
    return {module: summary for module, summary in found.items() if summary is not None}, frozenset(found)


def _reexports(summaries: Sequence[FileSummary]) -> Dict[str, Tuple[Tuple[str, str, str], ...]]:
    """`Resolved.reexports`: each module's re-exports with the modules they import from made
    absolute (`absolute_module`; a star import of a module not told keeps `""`)."""
    out: Dict[str, Tuple[Tuple[str, str, str], ...]] = {}
    for module, summary in _by_module(summaries)[0].items():
        entries = []
        for bound, spec, name in summary.reexports:
            level = len(spec) - len(spec.lstrip("."))
            entries.append((bound, absolute_module(level, spec[level:], summary.path) or "" if spec else "", name))
        if entries:
            out[module] = tuple(entries)
    return out


# How evidence tells a `FileSummary.constants` shape other than a display of numbers.
_CONSTANT_SHAPES = {"number": "Python numbers", "cpu": "a string naming the CPU", "accel": "a string naming an accelerator"}
# The place a constant of a device string's shape is (`_constants`).
_PLACE_CONSTANTS = {"cpu": CPU_PLACE_KIND, "accel": DEVICE_PLACE_KIND}


def _constants(summaries: Sequence[FileSummary]) -> Tuple[Dict[str, Dict[str, Value]], FrozenSet[str]]:
    """`Resolved.constants` and `Resolved.module_names`: each module's names bound to numbers
    (or displays of numbers) at module level, as values whose evidence names the binding."""
    constants: Dict[str, Dict[str, Value]] = {}
    by_module, names = _by_module(summaries)
    for module, summary in by_module.items():
        for name, line, shape in summary.constants:
            step = EvidenceStep(f"`{name}` is bound at module level only to " + _CONSTANT_SHAPES.get(
                shape, f"a {shape} display of numbers"), summary.path, line)
            if shape in _PLACE_CONSTANTS:
                constants.setdefault(module, {})[name] = Value(_PLACE_CONSTANTS[shape]).because(step)
                continue
            value = SCALAR if shape == "number" else Value(
                OTHER_KIND, element=SCALAR.because(step), key=UNKNOWN if shape == "dict" else None)
            constants.setdefault(module, {})[name] = value.because(step)
    return constants, names


def _forward_input_names(fn: FunctionSummary, modules: AbstractSet[str]) -> Set[str]:
    """The prefilter names of `fn`'s parameters that the walk places on the device by the
    forward-input convention (`scope._forward_input`), in the file defining `forward`: wherever
    the resolve keeps or drops `fn`'s own facts (an API name's), the prefilter must read them as
    possible device tensors, or a file with no other device name is dropped before the walk."""
    names: Set[str] = set()
    for index, pname in enumerate(fn.params):
        if fn.bound and index == 0:
            continue
        if forward_input_param(fn.name, fn.owner, modules, pname in fn.defaults,
                               fn.annotations[index] in _OPEN_ANNOTATIONS):
            names.update((f"param:{fn.name}.{pname}", f"def:{fn.name}"))
    return names


# Field terms that set nothing: `= None` (a write through it raises), `self.x += v` and
# `self.x[k] = v` (they change what is there).
_NOT_SETTING = frozenset({"none", "aug", "store"})


def _keep_field(fields: Dict[str, Dict[str, Value]], device_names: Set[str], cls: str, attr: str,
                value: Value, attrs: AbstractSet[str]) -> None:
    """Keep `cls.attr`'s resolved `value` in `fields` where a walk can use it (and its name in
    `device_names`, for the prefilter), given `attrs`, the fields `cls` sets."""
    # A field that is not a device tensor matters only where a convention would
    # say otherwise (`.gpu`, a `_cpu` sibling, a `_cpu` name): direct evidence wins.
    convention = attr == "gpu" or attr + "_cpu" in attrs or attr.endswith(("_cpu", "_host"))
    if attr in API_NAMES and _may_hold_device(value):
        return  # see API_NAMES
    # A `device` that is a place: `device=self.device` / `device=obj.device` is there.
    place = attr == "device" and value.kind in (CPU_PLACE_KIND, DEVICE_PLACE_KIND)
    if _informative(value) and (convention or place or _worth_keeping(value)):
        fields.setdefault(cls, {})[attr] = value
        if _may_hold_device(value):
            device_names.add(attr)  # read as `.attr`


def _path_of(definitions: Sequence[Tuple[str, FunctionSummary]], fn: FunctionSummary) -> str:
    return next(path for path, other in definitions if other is fn)


def _worth_keeping(value: Value) -> bool:
    """What the walk can use from a field or a return: a device tensor, a typed object (for
    chains), a container of those, a Python number (an index), a CPU tensor (a one-element one
    is a value; any one is a place, that of `device=x.device`), or a tensor whose place nothing
    says: that it is a tensor (and its rank) still tells the walk what its methods give
    (`genstep(...)`'s flags joined with a field's device allocation are a tensor, whose
    `nonzero().squeeze(-1).tolist()` holds ints; read as unknown, the join was unknown).  On
    vLLM the resolved facts grew by 9% (11.1 to 12.1 MB pickled) and the resolving child's peak
    by 0.2 MB for the unplaced tensors."""
    # A CPU tensor left out was unknown, and `device=lons.device` of a CPU `lons = grid(n)` read as
    # the accelerator's (`expressions._device_kwarg_kind`).
    if value.kind in (DEVICE_KIND, SCALAR_KIND, TENSOR_KIND, CPU_KIND) or value.type_name is not None:
        return True
    if value.element is not None and _worth_keeping(value.element):
        return True
    if value.entries is not None and any(_worth_keeping(v) for _, v in value.entries):
        return True
    return value.items is not None and any(_worth_keeping(v) for v in value.items)


def _may_hold_device(value: Value) -> bool:
    if value.kind == DEVICE_KIND:
        return True
    if value.element is not None and _may_hold_device(value.element):
        return True
    if value.entries is not None and any(_may_hold_device(v) for _, v in value.entries):
        return True
    return value.items is not None and any(_may_hold_device(v) for v in value.items)


def fingerprint_of(resolved: Resolved) -> str:
    """A digest of what the walk can learn from the project (the findings cache's key).

    Computed again by every run that carries the stored facts to an edit's new lines
    (`moved_lines.remap_facts`), over ~45,000 values on vLLM: the lines are hashed in
    chunks (`_Lines`: the same digest as hashing them one by one), and each value is
    described once (`_describer`)."""
    digest = _Lines()
    _describe = _describer()
    for cls in sorted(resolved.fields):
        for attr, value in sorted(resolved.fields[cls].items()):
            digest.update(f"{cls}.{attr}={_describe(value)}\n")
    for name, value in sorted(resolved.returns.items()):
        digest.update(f"{name}()={_describe(value)}\n")
    for name, value in sorted(resolved.own_returns.items()):
        digest.update(f"{name}()={_describe(value)}\n")
    for name, modules in sorted(resolved.split_returns.items()):
        digest.update(f"split:{name}<{','.join(sorted(modules))}\n")
    for (fn, pname), value in sorted(resolved.params.items()):
        digest.update(f"{fn}({pname})={_describe(value)}\n")
    for (fn, pname), value in sorted(resolved.int_params.items()):
        digest.update(f"{fn}({pname}:int)={_describe(value)}\n")
    for cls, base in sorted(resolved.bases.items()):
        digest.update(f"{cls}<{','.join(base)}\n")
    digest.update("modules:" + ",".join(sorted(resolved.modules)))
    digest.update("keeps:" + ",".join(f"{f}{rule!r}" for f, rule in sorted(resolved.through.items())))
    digest.update("passed:" + ",".join(sorted(f"{fn}({p})" for fn, p in resolved.passed_non_numbers)))
    for name, value in sorted(resolved.forwards.items()):
        digest.update(f"{name}.forward()={_describe(value)}\n")
    for name, step in sorted(resolved.built_on_device.items()):
        digest.update(f"built:{name}={step.path}:{step.row}:{step.message}\n")
    for name, step in sorted(resolved.moved.items()):
        digest.update(f"moved:{name}={step.path}:{step.row}:{step.message}\n")
    for name, calls in sorted(resolved.construction_calls.items()):
        digest.update(f"init-calls:{name}={calls!r}\n")
    for (fn, pname), value in sorted(resolved.passed_given.items()):
        digest.update(f"{fn}({pname}=)={_describe(value)}\n")
    for module, bound in sorted(resolved.constants.items()):
        for name, value in sorted(bound.items()):
            digest.update(f"const:{module}.{name}={_describe(value)}\n")
    for module, entries in sorted(resolved.reexports.items()):
        digest.update(f"reexports:{module}={entries!r}\n")
    digest.update("empty:" + ",".join(f"{c}.{a}" for c, a in sorted(resolved.empty_lists)))
    digest.update("enums:" + ",".join(f"{c}={k}" for c, k in sorted(resolved.enums.items())))
    # Module names come from file paths, which may hold undecodable bytes (surrogates).
    digest.update("module_names:" + ",".join(sorted(resolved.module_names)))
    # Where each class is defined: evidence names it (`x` is a field of `C`, file:line), so
    # a class moved by an edit that moved no fact of it still starts a new findings cache.
    for name, (path, line) in sorted(resolved.classes.items()):
        digest.update(f"class:{name}={path}:{line}\n")
    # What the prefilter reads as possible device tensors: which files are analysed at all.
    digest.update("device_names:" + ",".join(sorted(resolved.device_names)))
    return digest.hexdigest()[:16]


class _Lines:
    """What `fingerprint_of` hashes: its lines, hashed a few thousand at a time as one text
    (the digest of hashing them one by one, without a call and an encoding per line, and
    without holding all ~45,000 of vLLM's at once)."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.lines: List[str] = []

    def update(self, line: str) -> None:
        self.lines.append(line)
        if len(self.lines) >= 2048:
            self._flush()

    def _flush(self) -> None:
        self.digest.update("".join(self.lines).encode("utf-8", "surrogateescape"))
        self.lines = []

    def hexdigest(self) -> str:
        self._flush()
        return self.digest.hexdigest()


def _describer() -> Callable[[Value], str]:
    """`_describe` for one `fingerprint_of`: a value met again as a part of another (the
    resolver shares them) is described once, by its id (every value stays alive while the
    digest is made).  Only parts are kept: the table's own values are met once."""
    memo: Dict[int, str] = {}

    def part(value: Value) -> str:
        found = memo.get(id(value))
        if found is None:
            found = memo[id(value)] = _describe(value, part)
        return found

    def describe(value: Value) -> str:
        found = memo.get(id(value))
        return found if found is not None else _describe(value, part)

    return describe


def _describe(value: Value, describe: Optional[Callable[[Value], str]] = None) -> str:
    """The value's part of `fingerprint_of` (`describe`: how its parts are described)."""
    inner = describe or _describe
    parts = [_KIND_NAMES[value.kind], str(value.rank), str(value.type_name), str(value.integer)]
    if value.element is not None:
        parts.append("[" + inner(value.element) + "]")
    if value.items is not None:
        parts.append("(" + ",".join([inner(v) for v in value.items]) + ")")
    if value.entries is not None:
        parts.append("{" + ",".join([f"{k}:{inner(v)}" for k, v in value.entries]) + "}")
    if value.evidence:
        parts.extend([f"{s.path}:{s.row}:{s.message}" for s in value.evidence if isinstance(s, EvidenceStep)])
    return "|".join(parts)


# `Kind.X.name` by member: the enum's `name` property is a descriptor call per value.
_KIND_NAMES = {kind: kind.name for kind in Kind}
