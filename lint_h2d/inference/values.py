"""The abstract value of an expression: what kind of object it is, and its rank if a tensor.

Device inference is deliberately conservative: a value is DEVICE only with positive evidence
(an allocation with a non-CPU ``device=``, ``.cuda()``, ``.to(device)``, a ``.gpu`` buffer, a
field that has a ``_cpu`` sibling, ...).  Anything without evidence stays UNKNOWN, because a
false "device" is a false finding, and a linter with false findings gets switched off.

A few facts rest on how serving code runs (`RUNTIME_NOTES`): a module's output is on the
accelerator where the model's parameters are, vLLM's sampling hooks and `compute_logits`
carry its device logits.  Their evidence steps are conventions; the rule reads the notes to
give such findings no safe fix and to ask a module output for a proven rank.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence, Tuple


class Kind(str, enum.Enum):
    DEVICE = "device tensor"
    CPU = "cpu tensor"
    TENSOR = "tensor (device unknown)"
    NUMPY = "numpy array"
    SCALAR = "python scalar"
    # A device specification (a `device=` argument's value): "cpu" vs anything else.
    CPU_PLACE = "cpu device spec"
    DEVICE_PLACE = "accelerator device spec"
    OTHER = "other python object"
    UNKNOWN = "unknown"

    # A tensor of some place (DEVICE, CPU, TENSOR): set on each member below, a plain
    # attribute rather than a property, as it is asked half a million times in a resolve.
    is_tensor: bool


for _kind in Kind:
    _kind.is_tensor = _kind in (Kind.DEVICE, Kind.CPU, Kind.TENSOR)
del _kind


class Origin(str, enum.Enum):
    """Who owns the object: decides whether mutating it is visible outside the function."""

    PARAM = "parameter"  # reached through a parameter of the enclosing function (shared)
    SELF = "self"  # an attribute of the method's own instance
    LOCAL = "local"  # created inside the function
    GLOBAL = "global"  # a module-level name or an import
    UNKNOWN = "unknown"


# Kind's members as module names, for the hot paths (the project's resolve, `join`): in Python
# 3.11 a read of `Kind.DEVICE` goes through `EnumType.__getattr__`'s slow hook (~0.3 µs, a
# module name ~0.02 µs), and a resolve of vLLM reads them millions of times.
DEVICE_KIND, CPU_KIND, TENSOR_KIND, NUMPY_KIND, SCALAR_KIND = Kind.DEVICE, Kind.CPU, Kind.TENSOR, Kind.NUMPY, Kind.SCALAR
CPU_PLACE_KIND, DEVICE_PLACE_KIND, OTHER_KIND, UNKNOWN_KIND = Kind.CPU_PLACE, Kind.DEVICE_PLACE, Kind.OTHER, Kind.UNKNOWN
_ORIGIN_UNKNOWN = Origin.UNKNOWN


@dataclass(frozen=True, init=False)
class Value:
    kind: Kind
    rank: Optional[int] = None
    origin: Origin = Origin.UNKNOWN
    # Declared class of the object (from a parameter annotation), used to look up the class's
    # fields, e.g. `CommonAttentionMetadata` with `query_start_loc` / `query_start_loc_cpu`.
    type_name: Optional[str] = None
    # Number of elements of a tuple/list display (used for sizes: `torch.empty(shape)`).
    length: Optional[int] = None
    # Name of the parameter this value was reached through (for H2D002 messages).
    root: Optional[str] = None
    # The dotted access path from the root, e.g. "common_attn_metadata.query_start_loc_cpu".
    path: Optional[str] = None
    # What a container's elements hold (`[torch.zeros(n, device=d) for _ in r]`), and the
    # positions of a tuple (`slots.append((slot, t.numel(), x))`); None when unknown.
    element: Optional["Value"] = None
    items: Optional[Tuple["Value", ...]] = None
    # An integer dtype is known (sort indices, `dtype=torch.long`): a 0-dim one indexes.  On a
    # value of unknown kind: ordered against a number in a test that held (`if 0 <= i < n:`,
    # `scope.compared_names`), so an int where it indexes, unless a one-element tensor.
    # False: nothing known.  None (`NON_INTEGER`): a floating or boolean dtype is known
    # (`torch.ones(n)`, `x.float()`, `a > b`), so a 0-dim one is no integer index; falsy like
    # False, so that every reading of "an integer is known" reads it as not one.
    integer: Optional[bool] = False
    # Why the value is what it is: `lint_h2d.findings.EvidenceStep` for facts from the
    # project, `LocalStep` for the file at hand (a node, positioned only when reported).
    evidence: Tuple[Any, ...] = ()
    # Pinned or pageable host memory, for CPU tensors and numpy arrays (H2D003); None unknown.
    memory: Optional["HostMemory"] = None
    # The constant `None`: a path that binds it adds nothing to what a write, a call or an
    # attribute reaches (each raises on None), so joining it with a value gives that value.
    none: bool = False
    # What iterating a dict yields (its keys: `for i in d`, `d.keys()`); `element` is then what
    # `d[k]` gives.  None for other containers (iterating yields `element`).  An empty `{}`
    # has the key NONE: no key yet, grown by `d[k] = v`.
    key: Optional["Value"] = None
    # The field names of a named tuple's positions, e.g. ("values", "indices") for what
    # `torch.sort`, `torch.max(x, dim)`, `torch.topk` return (`torch.return_types.*`): `r.indices`
    # is `r[1]`.  None for any other object (a plain tuple has no such attributes).
    fields: Optional[Tuple[str, ...]] = None
    # A function defined in the body being walked (a nested `def`): what calling it gives, read
    # off its `return`s by a walk of its body where it is defined (`scope._Walker.returned`).
    # None for anything else (a module-level function's returns are the project's).
    returns: Optional["Value"] = None
    # What each constant string key of a dict holds (`{"buf": t, "n": 3}`, `dict(buf=t, n=3)`),
    # so that `d["buf"]` is `t` rather than the join of every value (`element`).  A key a
    # store adds (`d["buf"] = u`) joins in; a key not listed reads `element`.  None unknown.
    entries: Optional[Tuple[Tuple[str, "Value"], ...]] = None

    def __init__(self, kind: Kind, rank: Optional[int] = None, origin: Origin = Origin.UNKNOWN,
                 type_name: Optional[str] = None, length: Optional[int] = None, root: Optional[str] = None,
                 path: Optional[str] = None, element: Optional["Value"] = None,
                 items: Optional[Tuple["Value", ...]] = None, integer: Optional[bool] = False,
                 evidence: Tuple[Any, ...] = (), memory: Optional["HostMemory"] = None, none: bool = False,
                 key: Optional["Value"] = None, fields: Optional[Tuple[str, ...]] = None,
                 returns: Optional["Value"] = None,
                 entries: Optional[Tuple[Tuple[str, "Value"], ...]] = None) -> None:
        """The dataclass's own `__init__`, the fields and defaults as declared above, but each
        field stored in the instance's dict directly: a frozen dataclass's generated one calls
        `object.__setattr__` once per field (17), and the project's resolve and the walk build
        a Value per term they read (a million on vLLM): a third of the cost.  Stored one key
        at a time in the fields' order, so that the dict is the class's key-sharing one (a
        dict built whole and assigned took twice the memory per Value: +34 MB of peak RSS on
        vLLM) and its keys are in the order a pickle of the facts writes them, as before."""
        state = self.__dict__
        state["kind"] = kind
        state["rank"] = rank
        state["origin"] = origin
        state["type_name"] = type_name
        state["length"] = length
        state["root"] = root
        state["path"] = path
        state["element"] = element
        state["items"] = items
        state["integer"] = integer
        state["evidence"] = evidence
        state["memory"] = memory
        state["none"] = none
        state["key"] = key
        state["fields"] = fields
        state["returns"] = returns
        state["entries"] = entries

    def with_kind(self, kind: Kind, rank: Optional[int] = None) -> "Value":
        return replace(self, kind=kind, rank=rank)

    def because(self, *steps: Any) -> "Value":
        """The same value, with `steps` added before its evidence (the outermost reason first).

        A copy of the instance's fields, not `dataclasses.replace`: the same object (fields in
        the same order) at a fifth of the cost, and the project's resolve and the walk add
        evidence to tens of thousands of values."""
        made = object.__new__(self.__class__)
        state = made.__dict__
        state.update(self.__dict__)
        state["evidence"] = steps + self.evidence
        return made

    def with_rank(self, rank: Optional[int]) -> "Value":
        return replace(self, rank=rank)


@dataclass(frozen=True)
class HostMemory:
    """What backs a CPU tensor (or numpy array): page-locked (pinned) or pageable memory.

    A host-to-device copy with `non_blocking=True` is asynchronous only from pinned memory;
    from pageable memory the runtime stages it and the host waits (H2D003).  `empty` records
    a provably zero-element tensor (nothing is copied, nothing blocks).  `node` is the
    allocation when one call made it (H2D003's fix adds `pin_memory=True` there); `evidence`
    says why, as `LocalStep`s.  Kept on :class:`Value` as one optional field so that every
    rule but H2D003 can ignore it.
    """

    pinned: bool
    empty: bool = False
    node: Any = None
    evidence: Tuple[Any, ...] = ()


def join_memory(a: Optional[HostMemory], b: Optional[HostMemory]) -> Optional[HostMemory]:
    """Memory after two paths meet: pageable on one path and not pinned on the other stays
    pageable (the copy may block on that path, as vLLM's script assumes); pinned and pageable
    give unknown (conditional pinning); two different allocations lose `node`."""
    if a == b:
        return a
    if a is None or b is None:
        known = a if a is not None else b
        assert known is not None
        return known if not known.pinned else None
    if a.pinned != b.pinned:
        return None
    node = a.node if a.node is b.node else None
    return HostMemory(a.pinned, a.empty and b.empty, node, a.evidence)


# What every step that puts a module's output on the device says (a convention: serving code
# keeps a model's parameters on the accelerator, and a layer computes where its parameters
# are).  The rule reads it: such a tensor's rank must be proven, and its fix is never safe.
MODULE_OUTPUT_NOTE = "taken to be on the accelerator, where serving code keeps a model's parameters"
# What a step resting on vLLM's sampling interface says: its runner calls a hook that takes
# `(logits, sampling_metadata: SamplingMetadata)` with the logits it computed, on the device.
SAMPLING_HOOK_NOTE = "vLLM's model runner passes its `[num_reqs, vocab]` logits here, on the device"
# What a step resting on vLLM's `compute_logits` interface says (a model's
# `compute_logits(hidden_states)` returns `Tensor | None`, the logits of its language-model head).
COMPUTE_LOGITS_NOTE = "vLLM's `compute_logits` returns the `[num_tokens, vocab]` logits, on the device"
# What a step resting on vLLM's model loader says: `BaseModelLoader.load_model`
# (vllm/model_executor/model_loader/base_loader.py, and tensorizer_loader.py) builds every model
# as `model_class(vllm_config=..., prefix=...)` inside `with torch.device(load_device):`, so a
# plugin's model class is constructed on the accelerator without a line of the plugin saying so.
VLLM_LOADER_NOTE = "under `with torch.device(load_device)` (vllm/model_executor/model_loader/base_loader.py)"
# What a step resting on a module's move says: the project moves the module to an accelerator
# (`m.cuda()`), and a method other than those its construction runs is taken to run after it
# (a write before the first move would be a host write).
MOVED_MODULE_NOTE = "taken to run after that move (a write before it is a host write)"
# What a step resting on a project's own model loader says (a vLLM fork's `initialize_model`
# building `model_class(<x>_config=..., prefix=...)` under `with target_device:`): the class
# is chosen at run time (a registry), so a class whose constructor fits is taken to be one.
PROJECT_LOADER_NOTE = "taken to be one it builds there (its constructor takes those keywords and needs no other)"
# What a step resting on a module's `device` says: `torch.zeros(n, device=self.device)` in an
# `nn.Module` whose class does not say where `device` points (Lightning's and HF's property,
# `next(self.parameters()).device`) allocates where the module's parameters are.  Its step is
# a convention (`[convention]`, no safe fix) but not one of `RUNTIME_NOTES`: the allocation's
# rank is the factory's, not a layer's, so it need not be proven as a module output's is.
MODULE_DEVICE_NOTE = "where its parameters are, and a served model's parameters are on the accelerator"
# What a step resting on a module's inputs says: a tensor parameter of `forward` of a project
# `nn.Module` that no call site places is where the module computes (its layers raise on an
# input of another device), and a served model computes on the accelerator.  Its rank is the
# caller's, unknown: as a module output's, it must be proven before a write counts.
FORWARD_INPUT_NOTE = "taken to be on the module's device, where serving code keeps a model's parameters"
# What a step resting on transformers' generation says: `generate()` calls each
# `LogitsProcessor` / `LogitsWarper` as `processor(input_ids, scores)` with the `[batch, vocab]`
# scores of the model's last position, on the model's device.
LOGITS_PROCESSOR_NOTE = "transformers' `generate()` passes its `[batch, vocab]` scores here, on the model's device"
# Steps that rest on how serving code runs (not on the object at hand): a finding resting on
# one says so (`[convention]`) and gets no safe fix.
RUNTIME_NOTES = (MODULE_OUTPUT_NOTE, SAMPLING_HOOK_NOTE, COMPUTE_LOGITS_NOTE, VLLM_LOADER_NOTE, MOVED_MODULE_NOTE,
                 PROJECT_LOADER_NOTE, FORWARD_INPUT_NOTE, LOGITS_PROCESSOR_NOTE)


def logits_processor_message(class_name: Optional[str]) -> str:
    """The convention's step for the `scores` of a logits processor's `__call__`, read where it
    is (the walk) or passed on from it (the resolver)."""
    return f"`{class_name}` is a transformers logits processor: {LOGITS_PROCESSOR_NOTE}"


def forward_input_only(value: "Value") -> bool:
    """Whether `value` is on the device only by the forward-input convention
    (`FORWARD_INPUT_NOTE`): `device=x.device` of such an `x` is read as before the convention
    (an explicit `device=` not provably the CPU), so an allocation keeps its own evidence."""
    return any(FORWARD_INPUT_NOTE in getattr(s, "message", "") for s in value.evidence)


def runtime_steps(evidence: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """The steps of `evidence` that rest on how serving code runs (`RUNTIME_NOTES`)."""
    return tuple(s for s in evidence if any(n in getattr(s, "message", "") for n in RUNTIME_NOTES))


UNKNOWN = Value(UNKNOWN_KIND)
# `Value.integer` of a tensor whose floating or boolean dtype is known: no integer index.
NON_INTEGER: Optional[bool] = None


# The evidence of a parameter whose default is the CPU (`device=None`, `device="cpu"`), and of a
# field that keeps one (`self.storage_device = storage_device`): `cpu_by_default` reads it.
CPU_DEFAULT_STEP = "defaults to the CPU (None or \"cpu\")"
# What the step of a parameter defaulting to `None` says where every call passing it passes a
# device tensor (`Resolved.passed_given`): the calls that omit it leave `None`.
NONE_DEFAULT_STEP = ("a call that omits `{}` leaves `None`, and `None` cannot be indexed or written: "
                     "where it is, it is what the calls that pass it pass")
# What the step of a defaulted device parameter says that no call in the project passes (the
# function has a parameter every call must pass, so the summaries record every call): each call
# leaves it at its default (`project._Resolver.none_passes`, `Resolved.params`).
DEFAULT_ONLY_STEP = "no call in the project passes this defaulted device parameter: every call leaves it at its default"


def rests_on(evidence: Tuple[Any, ...], *messages: str) -> bool:
    """Whether a step of `evidence` says one of `messages`: the mark a value-making function
    leaves (`json_data`'s `JSON_STEP`, `tokenized`'s `TOKENIZED_STEP`, ...), read back."""
    return any(getattr(step, "message", None) in messages for step in evidence)


def cpu_by_default(value: "Value") -> bool:
    """`value` is a device spec that is the CPU unless a caller says otherwise: a `device=`
    naming it allocates where nothing is known (neither the CPU nor the accelerator)."""
    return rests_on(value.evidence, CPU_DEFAULT_STEP)


# What the step that marks a module's buffer or parameter says (`module_tensor`): the walk
# reads it to move such fields with a module moved to the accelerator (`Resolved.moved`).
MODULE_TENSOR_STEP = "held by the module as a buffer or parameter: it moves with the module's `.to()` / `.cuda()`"
# What the step of a value read out of `json.load`ed data says (`json_data`): JSON holds
# numbers, strings, `None` and containers, never a tensor.
JSON_STEP = "read from data that `json.load` parsed: JSON holds no tensors, so a value is a host object (a number, `None`, ...)"


def sunder(name: str) -> bool:
    """`_ignore_`, `_value_`, `__doc__`: a name an enumeration's class body may bind, or a member
    may be asked for, that is no member (`project.enum_kind`)."""
    return name.startswith("_") and name.endswith("_")


def enum_step_message(enum: str) -> str:
    """What the step behind a member of a project enumeration of numbers says (`project.enum_kind`:
    its `.value`, or the member itself of an `IntEnum`, is a Python number)."""
    return f"`{enum}` is an enumeration each member of which the class body assigns a Python number"


def json_data(step: Any) -> Value:
    """What `json.load(f)` / `json.loads(s)` gives (`step` says where it was parsed): a dict
    or list whose entries are host values.  JSON holds no tensors: what a string key or a
    position of it reads is an int, a float, a bool, `None`, a string or a nested container,
    Python objects that a write into one element of a device tensor copies host-to-device (or
    rejects).  Only the first level is known (`cfg["window"]`: a nested container's contents
    are not followed), and iterating it gives what nothing tells (keys of a dict, entries of a
    list), so no loop over it yields numbers."""
    return Value(OTHER_KIND, origin=Origin.LOCAL, element=Value(SCALAR_KIND, 0, Origin.LOCAL, evidence=(step,)),
                 key=UNKNOWN)


def is_json_data(value: Value) -> bool:
    """A container `json_data` made (its entries read as host values by a JSON step)."""
    element = value.element
    return value.kind == OTHER_KIND and element is not None and element.kind == SCALAR_KIND \
        and read_from_json(element)


# What the step of a value a tokenizer or processor made says (`tokenized`).
TOKENIZED_STEP = ("made by a call with `return_tensors=\"pt\"` (a tokenizer, processor or feature "
                  "extractor): its tensors are allocated on the CPU")


# The keys of a `BatchEncoding` whose tensors are one row per text: `(batch, tokens)` even for
# one text, with `return_tensors="pt"`.
TOKENIZED_ROWS = ("input_ids", "attention_mask", "token_type_ids")


def tokenized(step: Any) -> Value:
    """What `tokenizer(text, return_tensors="pt")` gives (`step` says where it was called): a
    `BatchEncoding`, a dict of tensors the tokenizer allocated on the CPU, whose keys
    (`["input_ids"]`) and attributes (`.input_ids`) read one of them.  `.to(device)` moves every
    one (`expressions._method`).  The token tensors (`TOKENIZED_ROWS`) are 2-D, the others of
    a rank not known (`pixel_values` is 4-D for most processors, 2-D for some); what iterating
    it gives (its keys) is not known either."""
    held = Value(CPU_KIND, None, Origin.LOCAL, evidence=(step,))
    rows = Value(CPU_KIND, 2, Origin.LOCAL, integer=True, evidence=(step,))
    return Value(OTHER_KIND, origin=Origin.LOCAL, element=held, key=UNKNOWN,
                 entries=tuple((k, rows) for k in TOKENIZED_ROWS))


def is_tokenized(value: Value) -> bool:
    """A container `tokenized` made, moved or not (its entries rest on a tokenizer step)."""
    element = value.element
    return value.kind == OTHER_KIND and element is not None and element.kind.is_tensor \
        and rests_on(element.evidence, TOKENIZED_STEP)


def ordered_number(value: Value) -> bool:
    """A value nothing else tells about that a test which held ordered against a number
    (`if 0 <= i < n:`, `scope.compared_names`), kept as `integer` on the unknown kind: where it
    indexes, an int unless a one-element tensor (`expressions.index_effect`)."""
    return value.kind == UNKNOWN_KIND and value.integer is True


def read_from_json(value: Value) -> bool:
    """Whether `value` rests on a JSON step (`json_data`): a host object of unknown type."""
    return rests_on(value.evidence, JSON_STEP)


# What `torch.Tensor` answers without a call (its properties): `out.shape`, `out.device`, ... of
# a module's output read the tensor, not a field of a structured output
# (`resolved.output_field_message`), and of a tensor named like a configuration no field of one
# (`config_field`).
TENSOR_PROPERTIES = frozenset({
    "H", "T", "data", "device", "dtype", "grad", "grad_dtype", "grad_fn", "imag", "is_cpu", "is_cuda", "is_ipu",
    "is_leaf", "is_maia", "is_meta", "is_mkldnn", "is_mps", "is_mtia", "is_nested", "is_quantized", "is_sparse",
    "is_sparse_csr", "is_vulkan", "is_xla", "is_xpu", "itemsize", "layout", "mH", "mT", "name", "names", "nbytes",
    "ndim", "output_nr", "real", "requires_grad", "retains_grad", "shape", "volatile",
})


# What the step of a value read from a configuration object says (`config_value`).
CONFIG_STEP = ("a field of a configuration object (`config.x`, `cfg.x`, `args.x`, `self.hparams.x`): "
               "configurations hold host values (numbers, strings, `None`, containers), not tensors")
# Names that hold a configuration (`config`, `self.model_config`, `training_args`): a naming
# convention of PyTorch code (transformers' `PretrainedConfig`, argparse namespaces, OmegaConf,
# Lightning's `hparams`), kept to the words nothing else is spelled with.
_CONFIG_NAMES = frozenset({"config", "cfg", "hparams", "hps", "args", "opt", "opts"})
_CONFIG_SUFFIXES = ("_config", "_cfg", "_args", "_hparams")
# Fields of a configuration that name a place or a type, not a number: what they hold is read
# by the place rules (`device=cfg.device`), never as a host value.
_PLACE_WORDS = ("device", "dtype", "place", "gpu", "cuda")


def names_config(name: str) -> bool:
    """Whether `name` (a variable, a parameter or a field) is spelled like a configuration."""
    return name in _CONFIG_NAMES or name.endswith(_CONFIG_SUFFIXES)


# The last words of a name that says it holds one length per sequence (`seq_lens`,
# `encoder_out_lens`, `lengths`, `seq_item_len`), and the cumulative form (`cu_seqlens_q`,
# `cu_seqs`): serving and speech code's per-sequence vectors.
_LENGTH_WORDS = frozenset({"len", "lens", "length", "lengths", "seqlen", "seqlens"})

# What the convention's step says (`names_lengths`).
LENGTHS_STEP = "named for per-sequence lengths (convention: one number per sequence, a 1-D tensor)"


def names_lengths(name: str) -> bool:
    """Whether a tensor's name says it holds one length per sequence, a 1-D tensor: its last
    word is `lens`, `lengths`, `len`, ... (`encoder_out_lens`, `seq_item_len`) or it holds
    cumulative sequence lengths (`cu_seqlens_k`, `runtime_cu_seqs`).  Not `lens_mask`,
    `length_penalty`, `max_lens_per_layer`: the last word decides."""
    words = [w for w in name.lower().split("_") if w]
    if not words:
        return False
    if words[-1] in _LENGTH_WORDS:
        return True
    return any(a == "cu" and b.startswith("seq") for a, b in zip(words, words[1:]))


def config_field(attr: str) -> bool:
    """Whether a configuration's field `attr` is read as a host value (`config_value`): any but
    those naming a place or a dtype (`cfg.device`, `args.gpu`, `config.torch_dtype`) and a
    tensor's own attributes (`x.shape` of a tensor named so)."""
    lowered = attr.lower()
    return attr not in TENSOR_PROPERTIES and not any(word in lowered for word in _PLACE_WORDS)


def config_value(step: Any) -> Value:
    """What a field of a configuration object gives (`step` says where it was read): a host
    value of a type nothing shows, as an entry of parsed JSON is (transformers' configs are
    parsed JSON).  A write of one into an element of a device tensor copies it host-to-device
    (or rejects it); read as an index it is no int by evidence (`"eos_token_id": [1, 2]`)."""
    return Value(SCALAR_KIND, 0, Origin.LOCAL, evidence=(step,))


def nothing_known(value: Value) -> bool:
    """A value nothing tells about: of unknown kind, no class, no contents, not a cycle's
    "nothing yet" (where a naming convention may say what it is: `names_config`,
    `resolved.names_model`)."""
    return value.kind == UNKNOWN_KIND and value.type_name is None and value.element is None and not value.none


def from_config(value: Value) -> bool:
    """A `config_value`: a field of a configuration, whose own fields are ones too
    (`config.text_config.vocab_size`)."""
    return value.kind == SCALAR_KIND and rests_on(value.evidence, CONFIG_STEP)


def host_object(value: Value) -> bool:
    """Whether `value` rests on a JSON or a configuration step: a host object whose type
    nothing shows (a number, a string, `None`, a container), not an int by evidence."""
    return rests_on(value.evidence, JSON_STEP, CONFIG_STEP)


def plain_number(value: Value) -> bool:
    """A Python number by evidence, where a number and a sequence differ (a size, a `dim`, an
    operand that keeps a tensor's rank): not a `host_object`, which may be a tuple of sizes."""
    return value.kind == SCALAR_KIND and not host_object(value)


def module_output_items(forward: Value, step: Any) -> Value:
    """What a module gives whose `forward` returns a tuple (`return tokens.long(), lens.long()`,
    or annotated `-> Tuple[torch.Tensor, torch.LongTensor]`): the tuple, each position that is a
    tensor of a place nothing tells (`TENSOR`, or unknown where the annotation says tensors) on
    the accelerator by the module-output convention (`step`, a `MODULE_OUTPUT_NOTE` step), as a
    module's output of one tensor is; a position of a known place, or no tensor, as it is."""
    element = forward.element
    declared = element if element is not None and element.kind == TENSOR_KIND else None  # `-> Tuple[Tensor, ...]`

    def placed(item: Value) -> Value:
        if item.kind == TENSOR_KIND or declared is not None and item.kind == UNKNOWN_KIND:
            why = item.evidence or (declared.evidence if declared is not None else ())
            return Value(DEVICE_KIND, item.rank, integer=item.integer, evidence=(step,) + why)
        return item

    if forward.items is not None:
        items = tuple(placed(item) for item in forward.items)
        return forward if items == forward.items else replace(forward, items=items)
    if declared is not None:
        return replace(forward, element=placed(declared))
    return forward


def module_tensor(data: Value, step: Any) -> Value:
    """What `nn.Buffer(data)` / `nn.Parameter(data)` / `register_buffer(name, data)` holds:
    `data`, but a host one only until the module moves (`module.to(dev)` / `.cuda()` moves
    buffers and parameters, not plain tensor attributes), so a CPU tensor there is a tensor of
    unknown place, marked by `step` (a `MODULE_TENSOR_STEP`)."""
    if data.kind == CPU_KIND:
        return Value(TENSOR_KIND, data.rank, data.origin, integer=data.integer, evidence=(step,) + data.evidence)
    return data


def is_module_tensor(value: Value) -> bool:
    """A tensor of unknown place held as a module's buffer or parameter (`module_tensor`)."""
    return value.kind == TENSOR_KIND and rests_on(value.evidence, MODULE_TENSOR_STEP)
SCALAR = Value(SCALAR_KIND, 0)
OTHER = Value(OTHER_KIND)
NONE = Value(OTHER_KIND, none=True)
# An empty dict (`{}`, `dict()`): no key yet (`key` NONE), and every key known, none (`entries`
# empty), so that `d["buf"] = t; d["n"] = [0] * k` leaves `d["n"]` the list it stored, not the
# join of a tensor and a list.  A store with a key that is not a constant string makes the keys
# unknown again (`scope.track_item_store`).
EMPTY_DICT = Value(OTHER_KIND, length=0, key=NONE, entries=())


def tensor(kind: Kind, rank: Optional[int] = None, origin: Origin = Origin.LOCAL) -> Value:
    return Value(kind, rank, origin)


@dataclass(frozen=True)
class LocalStep:
    """A step of evidence in the file being checked; the node is positioned when reported."""

    message: str
    node: Any
    kind: str = "direct"  # an EvidenceKind value


def derived_step_kind(value: Value) -> str:
    """The kind of a step that says how something was derived from `value` (a row of it): as
    strong as the evidence it rests on.  `direct` where some step of that evidence is direct
    (or there is none), else the first step's (a convention, a hint), so that saying "a row of
    the module's output" never gives a finding that rests on a convention a direct step, which
    would make its fix safe (`scalar_write_to_device_tensor`'s `convention_only`)."""
    kinds = [getattr(kind, "value", kind) for kind in (getattr(step, "kind", "direct") for step in value.evidence)]
    if not kinds or "direct" in kinds:
        return "direct"
    return kinds[0]


def _several_dims(a: Value, b: Value) -> Optional[int]:
    """The rank of two device tensors' join where one path proves several dimensions and the
    other proves none (`buf = torch.empty((0, k), device=d)`, then `buf = grow(buf)` of
    unknown rank): the proven rank, so that `buf[i] = 0` is read as the row fill it is on the
    proven path rather than as a one-element copy on a path nothing says anything about."""
    if a.kind != DEVICE_KIND or b.kind != DEVICE_KIND:
        return None
    known = a.rank if b.rank is None else b.rank if a.rank is None else None
    return known if known is not None and known >= 2 else None


def concatenation_source(inputs: Sequence[Value]) -> Value:
    """The input of `torch.cat((a, b))` / `torch.stack((a, b))` whose place the result has.

    PyTorch requires every input on one device and raises otherwise, so the first input whose
    place is known (on the device, or on the CPU) tells the result's, whatever its position
    (`torch.cat([x, pad])` with `pad` made on the device and `x` a parameter nothing tells
    about); else the first tensor, else the first input.  `inputs` must not be empty.
    """
    for value in inputs:
        if value.kind in (DEVICE_KIND, CPU_KIND):
            return value
    return next((value for value in inputs if value.kind.is_tensor), inputs[0])


def meshgrid_result(inputs: Sequence[Value], origin: Origin = Origin.UNKNOWN) -> Value:
    """`torch.meshgrid(a, b, ...)` of `inputs` (one per tensor it is given): a tuple of as many
    grids, each of rank `len(inputs)` (a 0-dim input counts as one of size 1), where the
    inputs are.  PyTorch raises unless every input is on one device ("meshgrid expects all
    tensors to have the same device"), so any input of a known place tells the grids'
    (`concatenation_source`); of an integer dtype only where every input is.  Unknown unless
    some input is a tensor."""
    if not inputs:
        return UNKNOWN
    source = concatenation_source(inputs)
    if not source.kind.is_tensor:
        return UNKNOWN
    integer = source.integer if all(v.integer == source.integer for v in inputs) else False
    grid = Value(source.kind, len(inputs), origin, integer=integer, evidence=source.evidence)
    return Value(OTHER_KIND, length=len(inputs), items=(grid,) * len(inputs))


def returned_through(argument: Value, keeps_rank: bool, rank: Optional[int]) -> Value:
    """What a call of a function whose return keeps a parameter's place returns, `argument`
    what the call passes there (`Resolved.through`): a tensor where the argument is, of its
    rank where the function keeps it, else of `rank`; unknown for anything but a tensor."""
    if not argument.kind.is_tensor:
        return UNKNOWN
    return Value(argument.kind, argument.rank if keeps_rank else rank, evidence=argument.evidence)


def join(a: Value, b: Value) -> Value:
    """The value of a name after two control-flow paths meet (if/else, loop back-edges)."""
    if a is b or a.kind is b.kind and a == b:  # values of two kinds differ: no field tuples built
        return a
    if a.none or b.none:
        # `buf = None` on one path, a tensor on the other: `buf[0] = 0` raises on None, so a
        # write that runs writes into the tensor (as `x if c else None` reads, and the
        # project summaries' `("none",)` term).
        return b if a.none else a
    for ordered, number in ((a, b), (b, a)) if a.integer is True or b.integer is True else ():
        if ordered_number(ordered) and plain_number(number):
            # `start = 0` on one path, `start = i - self.unroll` (ordered against a number) on
            # the other: an int where it indexes on both, unless a one-element tensor.
            return replace(ordered, evidence=ordered.evidence + tuple(
                s for s in number.evidence if s not in ordered.evidence))
    rank = a.rank if a.rank == b.rank else _several_dims(a, b)
    origin = a.origin if a.origin == b.origin else _ORIGIN_UNKNOWN
    type_name = a.type_name if a.type_name == b.type_name else None
    root = a.root if a.root == b.root else None
    path = a.path if a.path == b.path else None
    if a.kind == b.kind:
        kind = a.kind
    elif a.kind.is_tensor and b.kind.is_tensor:
        kind = TENSOR_KIND
    else:
        kind = UNKNOWN_KIND
    length = a.length if a.length == b.length else None
    if a.element is not None and b.element is not None:
        element: Optional[Value] = join(a.element, b.element)
    elif a.kind == b.kind == OTHER_KIND and (a.length == 0 or b.length == 0):
        # An empty list on one path, a list built by `append` on the other (a loop).
        element = a.element if a.element is not None else b.element
    elif _number_or_many(a, b) or _number_or_many(b, a):
        # `int | list[int]` ("one or many"): a number cannot be iterated or indexed, so a loop
        # or an index that runs reads the container's element.
        element = a.element if a.element is not None else b.element
    else:
        element = None
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    evidence = a.evidence if kind == a.kind else (b.evidence if kind == b.kind else ())
    if evidence and (kind is UNKNOWN_KIND or kind is OTHER_KIND) and cpu_by_default(a) != cpu_by_default(b):
        # A device spec that is the CPU by default on one path only (`self.dev = device` under
        # `elif isinstance(device, torch.device):`, `torch.device("cuda")` on the other): no
        # longer the CPU unless a caller says otherwise, whichever path is joined first.
        evidence = tuple(s for s in evidence if getattr(s, "message", None) != CPU_DEFAULT_STEP)
    if kind == SCALAR_KIND and a.kind == b.kind:
        # A number on every path: for every path's reasons (`off = 0` then `off += size`).
        evidence = a.evidence + tuple(s for s in b.evidence if s not in a.evidence)
    if kind == DEVICE_KIND and a.kind == b.kind and a.evidence != b.evidence:
        # One path's device tensor is a module's output (a convention): the joined value
        # rests on it too, whichever path's reasons are shown first.
        missing = tuple(s for s in runtime_steps(b.evidence) if s not in evidence)
        evidence = evidence + missing if missing else evidence
    key = join(a.key, b.key) if a.key is not None and b.key is not None else (
        a.key if _number_or_many(a, b) else b.key if _number_or_many(b, a) else None)
    fields = a.fields if a.fields == b.fields and items is not None else None
    return Value(kind, rank, origin, type_name, length, root, path, element, items,
                 a.integer if a.integer is b.integer else False, evidence, join_memory(a.memory, b.memory), key=key,
                 fields=fields, entries=join_entries(a.entries, b.entries))


def _number_or_many(container: Value, number: Value) -> bool:
    """`container` holds elements (a list, a dict) and `number` is a Python number: their join
    iterates and indexes as the container does (iterating or indexing a number raises)."""
    return container.kind in (OTHER_KIND, UNKNOWN_KIND) and container.element is not None \
        and number.kind == SCALAR_KIND and not number.none


def augmented_number(current: Value, added: Value) -> Optional[Value]:
    """What `x op= v` may leave in `x` where `v` is a tensor and `x` may be a Python number
    (it holds one, or nothing tells what it holds); None where that adds nothing to what `x`
    may hold (`v` no tensor; `x` a tensor, which an in-place op keeps; `x` a container).

    A number with a tensor is a tensor of that tensor's place and rank (`0 + lens[i]`, `lens` on
    the device, is a 0-dim device tensor); with an unknown `x` the rank is open (broadcasting).
    Recorded, not joined: the join with the field's other values is the caller's, and the
    tensor kind keeps such a field from being assumed a number by induction (`x = 0`, then
    `x += v` read while `x` was still unknown)."""
    if not added.kind.is_tensor:
        return None
    if current.kind == SCALAR_KIND:
        return Value(added.kind, added.rank, Origin.LOCAL, evidence=added.evidence)
    if current.kind == UNKNOWN_KIND and current.type_name is None and current.element is None \
            and current.items is None:
        return Value(added.kind, None, Origin.LOCAL, evidence=added.evidence)
    return None


def join_all(values: Sequence[Value]) -> Value:
    """The join of several paths' values (every `return` of a function, a tuple's positions);
    unknown when there are none."""
    if not values:
        return UNKNOWN
    found = values[0]
    for other in values[1:]:
        found = join(found, other)
    return found


def join_entries(a: Optional[Tuple[Tuple[str, Value], ...]],
                 b: Optional[Tuple[Tuple[str, Value], ...]]) -> Optional[Tuple[Tuple[str, Value], ...]]:
    """The keys of two dicts whose keys are known, after two paths meet or a store adds one
    (`d["buf"] = u`): a key both hold, the join of its values; a key one holds, that value (on
    the other path reading it raises, so a read that returns reads this one).  Unknown when
    either is unknown (a dict from elsewhere may hold anything at any key)."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    theirs = dict(b)
    out = [(k, join(v, theirs[k]) if k in theirs else v) for k, v in a]
    mine = {k for k, _ in a}
    out.extend((k, v) for k, v in b if k not in mine)
    return tuple(out)


def entry(value: Value, key: str) -> Optional[Value]:
    """What `value[key]` holds where `value` is a dict whose constant string keys are known
    and `key` is one of them; None else (the caller reads `element`)."""
    if value.entries is None:
        return None
    return next((v for k, v in value.entries if k == key), None)
