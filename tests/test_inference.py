"""Device inference, one test per fact it relies on.

Each case is a small function body; `value_of(code, name)` walks it and returns what the
inference knows about `name` right before the final `probe(name)` line.
"""
from __future__ import annotations


import libcst as cst
import pytest

from lint_h2d.inference.expressions import Facts, infer
from lint_h2d.inference.project import class_fields_in, collect
from lint_h2d.inference.scope import ModuleWalker, StatementFact
from lint_h2d.inference.values import Kind, Origin, Value, join

CPU, DEV, NP, T, UNK, SC, OTH = (
    Kind.CPU, Kind.DEVICE, Kind.NUMPY, Kind.TENSOR, Kind.UNKNOWN, Kind.SCALAR, Kind.OTHER,
)


def value_of(body: str, expr: str, header: str = "import torch\nimport numpy as np\n", extra: str = "") -> Value:
    """Infer `expr` at the end of `body` (indented into a function `f(n: int, device, p)`)."""
    code = header + extra + "def f(n: int, device: torch.device, p, *args):\n"
    code += "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    code += f"    probe = {expr}\n"
    module = cst.parse_module(code)
    project = collect([code]).module_facts
    facts = ModuleWalker(module, project, wants=lambda s, c: isinstance(s, cst.Assign)
                         and isinstance(s.targets[0].target, cst.Name)
                         and s.targets[0].target.value == "probe").run()
    assert facts, "probe statement not reached"
    fact: StatementFact = facts[-1]
    assert isinstance(fact.small, cst.Assign)
    return infer(fact.small.value, fact.facts)


def kind_rank(v: Value) -> tuple:
    return (v.kind, v.rank)


# -- torch factories -------------------------------------------------------------------------

@pytest.mark.parametrize("factory", ["empty", "zeros", "ones", "rand", "randn"])
def test_factory_with_device_is_device(factory: str) -> None:
    assert kind_rank(value_of(f"t = torch.{factory}(n, device=device)", "t")) == (DEV, 1)


def test_factory_without_device_is_cpu() -> None:
    assert kind_rank(value_of("t = torch.zeros(n, 4)", "t")) == (CPU, 2)


def test_factory_device_cpu_string_is_cpu() -> None:
    assert value_of("t = torch.zeros(n, device='cpu')", "t").kind == CPU


def test_factory_torch_device_cpu_is_cpu() -> None:
    assert value_of("d = torch.device('cpu')\nt = torch.zeros(n, device=d)", "t").kind == CPU


def test_factory_device_cuda_string_is_device() -> None:
    assert value_of("t = torch.zeros(n, device='cuda:0')", "t").kind == DEV


def test_pin_memory_is_cpu_even_with_device_kwarg_order() -> None:
    assert value_of("t = torch.empty(n, pin_memory=True)", "t").kind == CPU


def test_rank_from_tuple_size() -> None:
    assert value_of("t = torch.empty((n, 3, 2), device=device)", "t").rank == 3


def test_rank_from_named_tuple_size() -> None:
    assert value_of("shape = (n, 2)\nt = torch.empty(shape, device=device)", "t").rank == 2


def test_rank_unknown_for_unknown_size_name() -> None:
    assert kind_rank(value_of("t = torch.empty(p, device=device)", "t")) == (DEV, None)


def test_full_rank_from_size() -> None:
    assert kind_rank(value_of("t = torch.full((n,), 7, device=device)", "t")) == (DEV, 1)


def test_arange_is_one_d() -> None:
    assert kind_rank(value_of("t = torch.arange(n, device=device)", "t")) == (DEV, 1)


def test_tensor_rank_from_nested_lists() -> None:
    assert kind_rank(value_of("t = torch.tensor([[1, 2], [3, 4]], device=device)", "t")) == (DEV, 2)


def test_empty_strided() -> None:
    assert kind_rank(value_of("t = torch.empty_strided((n, 2), (2, 1), device=device)", "t")) == (DEV, 2)


def test_like_of_device_is_device_with_same_rank() -> None:
    v = value_of("a = torch.zeros(n, 2, device=device)\nb = torch.empty_like(a)", "b")
    assert kind_rank(v) == (DEV, 2)


def test_like_of_cpu_is_cpu() -> None:
    assert value_of("a = torch.zeros(n)\nb = torch.zeros_like(a)", "b").kind == CPU


def test_like_with_explicit_device() -> None:
    assert value_of("a = torch.zeros(n)\nb = torch.zeros_like(a, device='cuda')", "b").kind == DEV


def test_torch_alias() -> None:
    v = value_of("t = th.zeros(n, device=device)", "t", header="import torch as th\nimport torch\n")
    assert v.kind == DEV


# -- conversions -----------------------------------------------------------------------------

def test_to_device_name_is_device() -> None:
    assert kind_rank(value_of("t = torch.zeros(n).to(device)", "t")) == (DEV, 1)


def test_to_string_cuda_is_device() -> None:
    assert value_of("t = torch.zeros(n).to('cuda', non_blocking=True)", "t").kind == DEV


def test_to_dtype_keeps_cpu() -> None:
    assert value_of("t = torch.zeros(n).to(torch.int32)", "t").kind == CPU


def test_to_device_keyword() -> None:
    assert value_of("t = torch.zeros(n).to(device=device, dtype=torch.int32)", "t").kind == DEV


def test_cuda_is_device() -> None:
    assert value_of("t = torch.zeros(n).cuda()", "t").kind == DEV


def test_cpu_is_cpu() -> None:
    assert value_of("t = torch.zeros(n, device=device).cpu()", "t").kind == CPU


def test_from_numpy_is_cpu() -> None:
    assert value_of("a = np.zeros(n)\nt = torch.from_numpy(a)", "t").kind == CPU


def test_numpy_method_is_numpy() -> None:
    assert value_of("t = torch.zeros(n).numpy()", "t").kind == NP


def test_np_call_is_numpy() -> None:
    assert value_of("a = np.empty(n, dtype=np.int32)", "a").kind == NP


@pytest.mark.parametrize("display", ["[0] * n", "{}", "{1: 2}", "(1, 2)", "[x for x in range(n)]", "list(p)", "dict()"])
def test_displays_and_containers_are_other(display: str) -> None:
    assert value_of(f"a = {display}", "a").kind == OTH


# -- views, in-place ops, arithmetic ---------------------------------------------------------

def test_slice_keeps_device_and_rank() -> None:
    assert kind_rank(value_of("t = torch.zeros(n, device=device)\nv = t[1:]", "v")) == (DEV, 1)


def test_integer_index_lowers_rank() -> None:
    assert kind_rank(value_of("t = torch.zeros(n, 3, device=device)\nv = t[0]", "v")) == (DEV, 1)


def test_none_index_adds_rank() -> None:
    assert value_of("t = torch.zeros(n, device=device)\nv = t[None, :]", "v").rank == 2


@pytest.mark.parametrize("view", ["view(n, 2)", "reshape(n, 2)"])
def test_view_sets_rank(view: str) -> None:
    assert kind_rank(value_of(f"t = torch.zeros(2 * n, device=device)\nv = t.{view}", "v")) == (DEV, 2)


def test_flatten_is_one_d() -> None:
    assert kind_rank(value_of("t = torch.zeros(n, 2, device=device)\nv = t.flatten()", "v")) == (DEV, 1)


@pytest.mark.parametrize("method", ["narrow(0, 1, 2)", "transpose(0, 1)", "clone()", "contiguous()", "int()"])
def test_views_and_copies_keep_device_and_rank(method: str) -> None:
    assert kind_rank(value_of(f"t = torch.zeros(n, 2, device=device)\nv = t.{method}", "v")) == (DEV, 2)


def test_in_place_op_returns_self() -> None:
    assert value_of("t = torch.zeros(n, device=device)\nv = t.zero_()", "v").kind == DEV


def test_arithmetic_between_tensors_keeps_device() -> None:
    v = value_of("a = torch.zeros(n, device=device)\nb = torch.ones(n, device=device)\nc = a + b * 2", "c")
    assert kind_rank(v) == (DEV, 1)


def test_cumsum_out_is_the_out_tensor() -> None:
    v = value_of("a = torch.zeros(n, device=device)\nc = torch.cumsum(p, dim=0, out=a[1:])", "c")
    assert v.kind == DEV


def test_torch_function_follows_first_tensor_argument() -> None:
    assert value_of("a = torch.zeros(n, device=device)\nc = torch.cat([a, a])", "c").kind == DEV


# -- names, reassignment, control flow -------------------------------------------------------

def test_reassignment_replaces_value() -> None:
    assert value_of("t = torch.zeros(n, device=device)\nt = t.cpu()", "t").kind == CPU


def test_branches_join_to_unknown_when_kinds_differ() -> None:
    v = value_of("t = np.zeros(n)\nif n:\n    t = torch.zeros(n, device=device)", "t")
    assert v.kind == UNK


def test_branches_agree() -> None:
    v = value_of("if n:\n    t = torch.zeros(n, device=device)\nelse:\n    t = torch.ones(n, device='cuda')", "t")
    assert kind_rank(v) == (DEV, 1)


def test_loop_variable_of_range_is_scalar() -> None:
    assert value_of("for i in range(n):\n    pass", "i").kind == SC


def test_tuple_unpacking() -> None:
    v = value_of("a, b = torch.zeros(n, device=device), np.zeros(n)", "b")
    assert v.kind == NP


def test_bare_parameter_stays_unknown() -> None:
    v = value_of("", "p")
    assert v.kind == UNK and v.origin == Origin.PARAM


def test_tensor_annotation_is_tensor_of_unknown_device() -> None:
    v = value_of("", "x", extra="", header="import torch\n").kind  # x is unbound: unknown
    assert v == UNK
    code = "import torch\ndef f(x: torch.Tensor):\n    probe = x\n"
    module = cst.parse_module(code)
    fact = ModuleWalker(module).run()[-1]
    assert isinstance(fact.small, cst.Assign)
    assert infer(fact.small.value, fact.facts).kind == T


@pytest.mark.parametrize("value", ["len(p)", "int(p)", "p.item()", "p.size(0)", "p.shape[0]", "p.numel()", "n + 1", "-1", "True"])
def test_scalars(value: str) -> None:
    assert value_of(f"v = {value}", "v").kind == SC


# -- naming conventions and vLLM buffer pairs ------------------------------------------------

@pytest.mark.parametrize("name", ["seq_lens_cpu", "positions_host"])
def test_cpu_suffix(name: str) -> None:
    assert value_of("", f"p.{name}").kind == CPU
    assert value_of("", name).kind == CPU


def test_np_suffix() -> None:
    assert value_of("", "p.tokens_np").kind == NP


@pytest.mark.parametrize("attr,kind", [("gpu", DEV), ("cpu", CPU), ("np", NP)])
def test_cpu_gpu_buffer_pairs(attr: str, kind: Kind) -> None:
    assert value_of("", f"p.input_ids.{attr}").kind == kind


def test_field_pair_makes_device_field() -> None:
    extra = (
        "class Meta:\n    query_start_loc: torch.Tensor\n    query_start_loc_cpu: torch.Tensor\n\n"
    )
    assert value_of("", "p.query_start_loc", extra=extra).kind == DEV
    assert value_of("", "p.query_start_loc_cpu", extra=extra).kind == CPU
    assert value_of("", "p.other_field", extra=extra).kind == UNK


def test_class_fields_scanner_reads_dataclass_and_init_fields() -> None:
    text = (
        "@dataclass\nclass A:\n    x: torch.Tensor\n    x_cpu: torch.Tensor\n"
        "class B:\n    def __init__(self):\n        self.y = 1\n        self.y_cpu = 2\n"
        "class C:\n    z: int\n"
    )
    fields = class_fields_in(text)
    assert fields["A"] == {"x", "x_cpu"}
    assert {"y", "y_cpu"} <= fields["B"]
    assert "C" not in fields


def test_self_attributes_collected_from_all_methods() -> None:
    code = (
        "import torch\n"
        "class B:\n"
        "    def __init__(self, n, device):\n"
        "        self.buf = torch.zeros(n, device=device)\n"
        "        self.host = torch.zeros(n, pin_memory=True)\n"
        "    def use(self):\n"
        "        probe = self.buf\n"
        "        probe = self.host\n"
        "        probe = self.missing\n"
    )
    facts = [f for f in ModuleWalker(cst.parse_module(code)).run() if isinstance(f.small, cst.Assign) and f.scope.name == "use"]
    kinds = []
    for f in facts:
        assert isinstance(f.small, cst.Assign)
        kinds.append(infer(f.small.value, f.facts))
    assert [k.kind for k in kinds] == [DEV, CPU, UNK]
    assert all(k.origin == Origin.SELF for k in kinds)


def test_parameter_origin_and_path() -> None:
    v = value_of("m = p", "m.query_start_loc_cpu")
    assert v.origin == Origin.PARAM and v.path == "p.query_start_loc_cpu" and v.root == "p"


def test_local_allocation_origin() -> None:
    assert value_of("t = torch.zeros(n)", "t").origin == Origin.LOCAL


def test_join_is_symmetric_and_widens() -> None:
    a, b = Value(DEV, 1), Value(CPU, 1)
    assert join(a, b) == join(b, a) == Value(T, 1)
    assert join(a, Value(NP)).kind == UNK


def test_facts_default() -> None:
    assert infer(cst.parse_expression("torch.zeros(3, device='cuda')"), Facts()).kind == DEV


@pytest.mark.parametrize("expr,kind", [
    ("p.grad is None", SC), ("n in p", SC), ("n == 1", SC), ("n < 2 < 3", SC),
    ("p[0] == 1", UNK),  # may be a tensor: a boolean mask, not a scalar
    ("torch.zeros(n, device=device) > 0", DEV),
])
def test_comparisons(expr: str, kind: Kind) -> None:
    assert value_of("", expr).kind == kind


@pytest.mark.parametrize("ranks, cat, stack", [
    ([1, 1], 1, 2),
    ([2, None], 2, 3),      # the other input is 2-D, or a legacy empty 1-D one cat skips
    ([1, 2], 2, None),      # the 1-D one can only be empty (cat); stack raises
    ([None, 1], None, 2),   # a 2-D `None` beside an empty 1-D makes a 2-D result
    ([2, 3], None, None),   # PyTorch raises
    ([None], None, None),
    ([3], 3, 4),
])
def test_concatenation_and_stack_ranks(ranks: list, cat: object, stack: object) -> None:
    """`torch.cat` has the rank of any input of 2 or more dimensions (only a legacy empty 1-D
    input may differ), else of inputs all known to agree; `torch.stack` one more than any
    input's (every input has the same shape)."""
    from lint_h2d.inference.torch_api import concatenated_rank, stacked_rank

    assert concatenated_rank(ranks) == cat
    assert stacked_rank(ranks) == stack


def test_concatenation_takes_the_place_of_an_input_whose_place_is_known() -> None:
    """Every input of `torch.cat` is on one device (PyTorch raises otherwise): the first of a
    known place tells it, whatever its position; else the first tensor."""
    from lint_h2d.inference.values import concatenation_source

    unknown, tensor = Value(Kind.UNKNOWN), Value(Kind.TENSOR, 1)
    device, cpu = Value(Kind.DEVICE, 2), Value(Kind.CPU, 1)
    assert concatenation_source([unknown, device]) is device
    assert concatenation_source([tensor, cpu, device]) is cpu
    assert concatenation_source([unknown, tensor]) is tensor
    assert concatenation_source([unknown]) is unknown


@pytest.mark.parametrize("code, kind, rank", [
    ("torch.cat([p, torch.zeros(2, 3, device='cuda')])", Kind.DEVICE, 2),
    ("torch.cat([torch.zeros(3), p])", Kind.CPU, None),
    ("torch.stack([p, torch.zeros(3, device='cuda')])", Kind.DEVICE, 2),
    ("torch.cat(parts)", Kind.DEVICE, 1),
    ("torch.stack(parts)", Kind.DEVICE, 2),
    ("torch.cat([q.cpu() for q in parts])", Kind.CPU, 1),
])
def test_concatenations_in_a_function(code: str, kind: Kind, rank: object) -> None:
    """Where a concatenation's inputs say it is (any of them, a list's appended elements),
    of the rank PyTorch requires of them."""
    body = "parts = []\nfor _ in range(n):\n    parts.append(torch.zeros(4, device='cuda'))"
    assert kind_rank(value_of(body, code)) == (kind, rank)


@pytest.mark.parametrize("body, expr", [
    ("_, m, k = p.size()", "k"),
    ("b, m = p.shape[:2]", "m"),
    ("a, m, k = p.shape", "a"),
])
def test_dimensions_unpacked_from_size_or_shape_are_numbers(body: str, expr: str) -> None:
    """`p.size()` / `p.shape` of a `p` nothing tells about is a tuple of dimensions, as
    `p.size(1)` and `p.shape[1]` are dimensions."""
    assert value_of(body, expr).kind == Kind.SCALAR


def test_size_without_a_dimension_is_a_tuple_of_ints() -> None:
    value = value_of("", "p.size()")
    assert value.kind == Kind.OTHER and value.element is not None and value.element.kind == Kind.SCALAR


@pytest.mark.parametrize("size, rank", [
    ("p - 1", 1), ("p // 2 + 1 - n // 2", 1), ("2 ** p", 1), ("p % 7", 1), ("-p", 1), ("p >> 1", 1),
    ("p + 1", 1),  # a sequence plus a number raises
    ("p + q", None),  # `shape + (3,)` is a longer shape
    ("p * 2", None),  # `shape * 2` repeats one
])
def test_a_size_made_by_arithmetic_no_sequence_defines_is_one_dimension(size: str, rank: object) -> None:
    """`torch.zeros(size)` with one size argument makes one dimension of a number or a
    one-element integer tensor and raises on anything else but a sequence; `-`, `//`, `%`,
    `**`, shifts and a sign make no sequence, `+` with a number neither."""
    assert kind_rank(value_of(f"q = p\nt = torch.zeros({size}, device=device)", "t")) == (DEV, rank)


def test_string_bound_once_reads_only_a_lone_literal_binding() -> None:
    from lint_h2d.inference.scope import string_bound_once

    def bound(body: str, name: str = "key") -> object:
        fn = cst.parse_module("def f(self, arg):\n" + "".join(f"    {line}\n" for line in body.splitlines()))
        found = string_bound_once(fn.body[0], name)  # type: ignore[arg-type]
        return None if found is None else found.evaluated_value

    assert bound('key = "enabled"\nself.register_buffer(key, t)') == "enabled"
    assert bound('key = "a"\nif arg:\n    key = "b"') is None  # two bindings
    assert bound('key = "a"\nfor key in arg:\n    pass') is None  # a loop rebinds it
    assert bound('key = "a"\nwith arg as key:\n    pass') is None
    assert bound('key = "a"\nkey, other = arg') is None  # an unpacking
    assert bound('key = "a"\ndef key():\n    pass') is None  # a nested definition
    assert bound('key = "a"\nglobal key') is None
    assert bound('key = name()') is None  # no literal
    assert bound('arg = "a"', "arg") is None  # a parameter: the caller's value reaches too
    assert bound('key = "a"\ndef g():\n    key = "b"') == "a"  # the nested scope's own name


def test_a_cpu_default_survives_a_join_only_where_every_path_keeps_it() -> None:
    """A device spec that is the CPU unless a caller says otherwise stays so after a join of
    two such paths; joined with a path that binds something else (a test ruled the default
    out), it does not, whichever path comes first."""
    from lint_h2d.findings import EvidenceStep
    from lint_h2d.inference.values import CPU_DEFAULT_STEP, cpu_by_default
    default = Value(Kind.OTHER, evidence=(EvidenceStep(CPU_DEFAULT_STEP, "k.py", 3),))
    other = Value(Kind.OTHER)
    assert cpu_by_default(join(default, default))
    assert not cpu_by_default(join(default, other)) and not cpu_by_default(join(other, default))


@pytest.mark.parametrize("expr, kind, rank", [
    ("F.softmax(t, dim=-1)", DEV, 2),
    ("torch.nn.functional.log_softmax(t, dim=-1)", DEV, 2),
    ("nn.functional.gelu(t)", DEV, 2),
    ("G.pad(t, (0, 1))", DEV, 2),
    ("F.one_hot(torch.zeros(n, dtype=torch.long, device=device))", DEV, 2),
    ("F.relu(torch.zeros(n))", CPU, 1),
    ("F.linear(t, p)", UNK, None),  # not in the table
])
def test_torch_nn_functional_keeps_its_inputs_place_and_rank(expr: str, kind: Kind, rank: object) -> None:
    """`torch.nn.functional`'s activations, dropouts, normalizations and `pad` give a tensor of
    their input's rank where it is; `one_hot` one more dimension."""
    header = ("import torch\nimport numpy as np\nimport torch.nn.functional as F\nfrom torch import nn\n"
              "from torch.nn import functional as G\n")
    assert kind_rank(value_of("t = torch.zeros(n, 4, device=device)", expr, header=header)) == (kind, rank)


def test_a_local_named_like_the_functional_module_is_not_it() -> None:
    header = "import torch\nimport numpy as np\nimport torch.nn.functional as F\n"
    assert value_of("F = p\nt = torch.zeros(n, device=device)", "F.softmax(t)", header=header).kind == UNK
