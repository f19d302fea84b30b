"""The session-41 inference rules as pure functions: which calls load a library's model
(`resolved.pretrained_loader`), when an attribute of a module's output is a field of a
structured output (`resolved.output_field_message`), how a module spells scipy.sparse's
predicates (`scope.sparse_checks`), which classes are transformers logits processors
(`scope.logits_processor_classes`), and the ranks chains of subscripts prove
(`usage.rank_floor`, `usage.region_rank_floor`) and, from session 52, the ranks subscripts
spell by convention (`usage.spelled_rank`, `usage.spelled_rank_of_copy`); from session 44, what a tokenizer's
`return_tensors="pt"` call gives (`expressions._tokenizer_call`) and which bases make a class
a module (`summary._base_name`, `project._library_module`); from session 45, which classes are
enumerations of numbers (`project.enum_kind`), what a typing qualifier declares
(`summary.annotation_term`) and which parameter defaults are numbers (`scope._number_default`).
The fixtures under
`tests/fixtures/projects/python` (`pretrained_outputs.py`, `non_tensor_branches.py`,
`logits_processors.py`, `chained_subscripts.py`, `tokenizer_outputs.py`, `library_modules.py`,
`enum_values.py`, `number_defaults.py`)
show each on whole programs.
"""
from __future__ import annotations

from typing import Optional

import ast

import libcst as cst
import pytest

from lint_h2d.findings import EvidenceStep
from lint_h2d.inference.resolved import (MODULE_CALL_WORDS, module_step_message, output_field_message,
                                         pretrained_loader)
from lint_h2d.inference.expressions import _tokenizer_call
from lint_h2d.inference.project import _library_module
from lint_h2d.inference.scope import logits_processor_classes, sparse_checks
from lint_h2d.inference.summary import TORCH_MODULE_BASE, _base_name, _Builder, summarize
from lint_h2d.inference.values import TOKENIZED_STEP, Kind, entry, is_tokenized
from lint_h2d.inference.usage import rank_floor, region_rank_floor, spelled_rank, spelled_rank_of_copy
from lint_h2d.cst_children import own_scope_nodes


@pytest.mark.parametrize("receiver, method, loaded", [
    ("AutoModel", "from_pretrained", "pretrained:AutoModel.from_pretrained"),
    ("transformers.LlamaForCausalLM", "from_pretrained", "pretrained:LlamaForCausalLM.from_pretrained"),
    ("AutoModelForSeq2SeqLM", "from_config", "pretrained:AutoModelForSeq2SeqLM.from_config"),
    ("UNet2DConditionModel", "from_pretrained", "pretrained:UNet2DConditionModel.from_pretrained"),
    ("timm", "create_model", "pretrained:timm.create_model"),
    ("AutoTokenizer", "from_pretrained", None),
    ("AutoConfig", "from_pretrained", None),
    ("AutoImageProcessor", "from_pretrained", None),
    ("StableDiffusionPipeline", "from_pretrained", None),
    ("DDIMScheduler", "from_pretrained", None),
    ("TFAutoModel", "from_pretrained", None),
    ("FlaxBertModel", "from_pretrained", None),
    ("Formatter", "from_pretrained", None),
    ("AutoModel", "load", None),
    ("models.timm", "create_model", None),
])
def test_which_calls_load_a_library_model(receiver: str, method: str, loaded: Optional[str]) -> None:
    assert pretrained_loader(receiver, method) == loaded


def _module_output() -> tuple:
    return (EvidenceStep(module_step_message("self.model", "Encoder"), "m.py", 3),)


@pytest.mark.parametrize("attr", ["logits", "last_hidden_state", "pooler_output"])
def test_a_field_of_a_module_output_is_one_of_its_tensors(attr: str) -> None:
    message = output_field_message(_module_output(), attr)
    assert message is not None and f"`.{attr}`" in message


@pytest.mark.parametrize("attr", ["shape", "device", "dtype", "T", "data", "grad", "_private"])
def test_a_tensor_property_is_no_field(attr: str) -> None:
    assert output_field_message(_module_output(), attr) is None


def test_only_an_output_the_convention_places_has_fields() -> None:
    # The outermost step must be the module call's: a project `forward` known to return a
    # tensor (`runs Cls.forward` outermost) has no `.logits`.
    known = (EvidenceStep("`self.head(...)` runs `Head.forward`", "m.py", 4),) + _module_output()
    assert output_field_message(known, "logits") is None
    assert output_field_message((), "logits") is None
    assert MODULE_CALL_WORDS in module_step_message("f", "M")


@pytest.mark.parametrize("imports, spelled", [
    ("import scipy.sparse as sp", "sp.issparse"),
    ("from scipy.sparse import issparse", "issparse"),
    ("from scipy.sparse import isspmatrix_csr as is_csr", "is_csr"),
    ("from scipy import sparse", "sparse.issparse"),
    ("from scipy import sparse as sps", "sps.isspmatrix"),
    ("import scipy", "scipy.sparse.issparse"),
    ("import scipy as sc", "sc.sparse.issparse"),
])
def test_scipy_sparse_predicates_by_the_modules_own_imports(imports: str, spelled: str) -> None:
    assert spelled in sparse_checks(cst.parse_module(imports + "\n"))


@pytest.mark.parametrize("imports", ["import numpy as np", "from mylib import issparse", "from .sparse import issparse"])
def test_no_scipy_import_spells_no_predicate(imports: str) -> None:
    assert sparse_checks(cst.parse_module(imports + "\n")) == frozenset()


def test_logits_processor_classes_follow_the_modules_bases() -> None:
    module = cst.parse_module(
        "from transformers import LogitsProcessor, generation\n"
        "class Stop(LogitsProcessor):\n    pass\n"
        "class Ban(Stop):\n    pass\n"
        "class Warp(generation.TopPLogitsWarper):\n    pass\n"
        "class Other:\n    class Inner(LogitsProcessor):\n        pass\n"
        "class Mine(BaseLogitsProcessor):\n    pass\n"
        "class Plain(object):\n    pass\n")
    assert logits_processor_classes(module) == {"Stop", "Ban", "Warp", "Inner"}


def test_another_frameworks_logits_processor_is_none() -> None:
    # vLLM's `LogitsProcessor` is called per sequence with 1-D logits: not transformers' convention.
    module = cst.parse_module("from vllm.v1.sample.logits_processor import LogitsProcessor\n"
                              "class MinP(LogitsProcessor):\n    pass\n")
    assert logits_processor_classes(module) == frozenset()
    aliased = cst.parse_module("import transformers as tf\nclass Stop(tf.LogitsProcessor):\n    pass\n")
    assert logits_processor_classes(aliased) == {"Stop"}


_PROCESSOR_SOURCES = [
    "from transformers import LogitsProcessor, generation\n"
    "class Stop(LogitsProcessor):\n    pass\n"
    "class Ban(Stop):\n    pass\n"
    "class Warp(generation.TopPLogitsWarper):\n    pass\n"
    "class Other:\n    class Inner(LogitsProcessor):\n        pass\n"
    "def f():\n    class Local(LogitsProcessor):\n        pass\n"
    "class Mine(BaseLogitsProcessor):\n    pass\n",
    "from vllm.v1.sample.logits_processor import LogitsProcessor\nclass MinP(LogitsProcessor):\n    pass\n",
    "import transformers as tf\nclass Stop(tf.LogitsProcessor):\n    pass\n",
    "import transformers.generation.logits_process\n"
    "class Stop(transformers.generation.logits_process.LogitsProcessor):\n    pass\n",
    "from .transformers import LogitsProcessor\nclass Stop(LogitsProcessor):\n    pass\n",
]


@pytest.mark.parametrize("source", _PROCESSOR_SOURCES)
def test_the_summary_reads_the_logits_processors_the_walk_reads(source: str) -> None:
    """The summary (ast) and the walk (libcst) find the same processor classes: the walk reads
    `scores` in `__call__` by the convention, the summary passes it on to the calls."""
    builder = _Builder()
    builder.module(ast.parse(source))
    assert builder.processors == logits_processor_classes(cst.parse_module(source))


def test_a_processors_scores_are_a_convention_term_its_calls_pass_on() -> None:
    source = ("from transformers import LogitsProcessor\n"
              "class Stop(LogitsProcessor):\n"
              "    def __call__(self, input_ids, scores, extra=None):\n"
              "        return mask(scores, extra)\n"
              "class Plain:\n"
              "    def __call__(self, input_ids, scores):\n"
              "        return mask(scores, None)\n"
              "class Defaulted(LogitsProcessor):\n"
              "    def __call__(self, input_ids, scores=None):\n"
              "        return mask(scores, None)\n")
    calls = [c for c in summarize("m.py", source).calls if c.callee == "mask"]
    first = calls[0].args[0]
    assert first[0] == "proc" and first[1] == "Stop"
    assert calls[1].args[0][0] == "param"
    assert calls[2].args[0][0] == "param"


def _function(body: str) -> cst.FunctionDef:
    node = cst.parse_module("def f(x, i, j):\n" + "".join(f"    {line}\n" for line in body.splitlines())).body[0]
    assert isinstance(node, cst.FunctionDef)
    return node


@pytest.mark.parametrize("use, floor", [
    ("m[i][:, j] = 1", 2),   # the inner name may be an int, a slice or an index tensor
    ("m[0][:, j] = 1", 3),   # a literal int removes a dimension first
    ("m[1:][0] = 1", 1),     # a slice keeps it
    ("m[None][:, 0] = 1", 1),  # `None` adds one
    ("m[...][0] = 1", 0),    # an ellipsis says nothing
    ("m[i, j] = 1", 2),
])
def test_chained_subscripts_prove_a_rank(use: str, floor: int) -> None:
    assert rank_floor(_function(f"m = x.clone()\n{use}"), "m") == floor


def test_a_region_between_bindings_proves_its_own_rank() -> None:
    fn = _function("if i:\n    m = x.clone()\n    m[i][:, j] = 1\n    m[i] = 0\n"
                   "else:\n    m = x.sum(0)\n    m[i] = 0\n")
    assert rank_floor(fn, "m") == 0  # two bindings: the function-wide floor proves nothing
    first, second = _writes(fn, "m[i] = 0")
    assert region_rank_floor(fn, "m", first) == 2
    assert region_rank_floor(fn, "m", second) == 1


def test_a_rebinding_inside_the_region_proves_nothing() -> None:
    fn = _function("m = x.clone()\nm[0][:, j] = 1\nif i:\n    m = m.flatten()\nm[i] = 0\n")
    (write,) = _writes(fn, "m[i] = 0")
    assert region_rank_floor(fn, "m", write) == 0


def _writes(fn: cst.FunctionDef, code: str) -> list:
    found = []

    class Lines(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            if cst.Module([]).code_for_node(node).strip() == code:
                found.append(node)

    fn.visit(Lines())
    return found


def _call_of(code: str) -> cst.Call:
    node = cst.parse_expression(code)
    assert isinstance(node, cst.Call)
    return node


@pytest.mark.parametrize("code", [
    'tokenizer(text, return_tensors="pt")',
    'self.processor(text=[t], images=imgs, padding=True, return_tensors="pt")',
    'tok.pad(features, return_tensors="pt")',
    'processor.apply_chat_template(c, tokenize=True, return_tensors="pt", return_dict=True, **extra)',
    'feature_extractor(audio, sampling_rate=16000, return_tensors="pt", **kw)',
])
def test_a_return_tensors_call_gives_a_batch_of_cpu_tensors(code: str) -> None:
    found = _tokenizer_call(_call_of(code))
    assert found is not None and is_tokenized(found)
    assert found.element is not None and found.element.kind == Kind.CPU and found.element.rank is None
    ids = entry(found, "input_ids")
    assert ids is not None and ids.kind == Kind.CPU and ids.rank == 2
    assert [s.message for s in ids.evidence] == [TOKENIZED_STEP]


@pytest.mark.parametrize("code, rank", [
    ('tok.encode(text, return_tensors="pt")', 2),
    ('tok.apply_chat_template(messages, return_tensors="pt")', None),
    ('tok.apply_chat_template(messages, return_tensors="pt", return_dict=False, **kw)', None),
])
def test_encode_gives_the_ids_tensor_itself(code: str, rank: Optional[int]) -> None:
    found = _tokenizer_call(_call_of(code))
    assert found is not None and found.kind == Kind.CPU and found.rank == rank and found.integer is True


@pytest.mark.parametrize("code", [
    'tokenizer(text)',
    'tokenizer(text, return_tensors="np")',
    'tokenizer(text, return_tensors=kind)',
    'tok.apply_chat_template(messages, return_tensors="pt", **kw)',  # `kw` may ask for a dict
    'tok.apply_chat_template(messages, return_tensors="pt", return_dict=flag)',
])
def test_no_pt_tensors_or_an_unknown_form_says_nothing(code: str) -> None:
    assert _tokenizer_call(_call_of(code)) is None


def test_a_chat_template_as_text_is_no_tensor() -> None:
    found = _tokenizer_call(_call_of('tok.apply_chat_template(m, tokenize=False, return_tensors="pt")'))
    assert found is not None and found.kind == Kind.OTHER and not is_tokenized(found)


def _base(code: str) -> str:
    import ast
    (cls,) = ast.parse(f"class C({code}): pass").body
    assert isinstance(cls, ast.ClassDef)
    return _base_name(cls.bases[0])


@pytest.mark.parametrize("code", ["nn.Module", "torch.nn.Module", "nn.Linear", "torch.nn.Sequential",
                                  "nn.modules.loss._Loss", "nn.ModuleList", "torch.jit.ScriptModule"])
def test_torch_nn_module_classes_are_modules(code: str) -> None:
    assert _base(code) == TORCH_MODULE_BASE


@pytest.mark.parametrize("code, name", [
    ("nn.Parameter", "Parameter"), ("torch.nn.Buffer", "Buffer"), ("fl.Module", "Module"),
    ("Linear", "Linear"), ("qnn.QuantLinear", "QuantLinear"), ("nn.functional", "functional"),
])
def test_other_bases_keep_their_last_name(code: str, name: str) -> None:
    assert _base(code) == name


@pytest.mark.parametrize("base, module", [
    ("LightningModule", True), ("PreTrainedModel", True), ("BertPreTrainedModel", True), ("ModelMixin", True),
    ("BaseModule", True), ("MegatronModule", True), ("ConfigMixin", False), ("GenerationMixin", False),
    ("BaseModel", False), ("Module", False),
])
def test_library_module_bases(base: str, module: bool) -> None:
    assert _library_module(base, {}) is module
    assert _library_module(base, {base: []}) is False  # the project's own class of that name


def _enum_kind(code: str, cls: str = "E") -> Optional[str]:
    from lint_h2d.inference.project import enum_kind
    from lint_h2d.inference.summary import summarize

    summary = summarize("m.py", code)
    classes = {c.name: [("m.py", c)] for c in summary.classes}
    functions: dict = {}
    for fn in summary.functions:
        functions.setdefault(fn.name, []).append(("m.py", fn))
    return enum_kind(cls, classes, functions)


@pytest.mark.parametrize("code, kind", [
    ("class E(Enum):\n    A = 1\n    B = 2.5\n", "value"),
    ("class E(enum.Enum):\n    A = 1\n    _ignore_ = []\n", "value"),
    ("class E(IntEnum):\n    A = 1\n", "int"),
    ("class E(int, Enum):\n    A = 1\n", "int"),
    ("class E(IntFlag):\n    A = 1\n    B = 2\n", "int"),
    ("class E(Flag):\n    A = 1\n", "value"),
    ("class E(Enum):\n    A = 'a'\n", None),  # a string
    ("class E(Enum):\n    A = (1, 2)\n", None),  # a tuple
    ("class E(Enum):\n    A = auto()\n", None),  # `auto()`: what the generator gives
    ("class E(StrEnum):\n    A = 1\n", None),  # strings
    ("class E(str, Enum):\n    A = 1\n", None),  # a `str` mixin converts the value
    ("class E(Enum):\n    pass\n", None),  # no member
    ("class E(Enum):\n    A = 1\n    def __new__(cls, v):\n        return object.__new__(cls)\n", None),
    ("class E(IntEnum):\n    A = 1\n    def __init__(self, v):\n        self._value_ = v * 0.5\n", None),
    ("class E(Enum):\n    A = 1\n    @property\n    def value(self):\n        return 2\n", None),
    ("class Base(Enum):\n    pass\nclass E(Base):\n    A = 1\n", None),  # a project base
    ("class E:\n    A = 1\n", None),  # no enumeration
])
def test_which_classes_are_enumerations_of_numbers(code: str, kind: Optional[str]) -> None:
    assert _enum_kind(code) == kind


@pytest.mark.parametrize("annotation", ["ClassVar[int]", "Final[int]", "Annotated[int, 'rank']",
                                        "ClassVar[Optional[int]]", "typing.ClassVar[int]", "'ClassVar[int]'"])
def test_a_typing_qualifier_declares_its_argument(annotation: str) -> None:
    import ast
    from lint_h2d.inference.summary import SCALAR, annotation_term

    node = ast.parse(annotation, mode="eval").body
    assert annotation_term(node) == SCALAR


@pytest.mark.parametrize("default, message", [
    ("0", "defaults to an int"), ("-1", "defaults to an int"), ("0.0", "defaults to a number"),
    ("-1e9", "defaults to a number"), ("True", "defaults to a number"), ("-float('inf')", "defaults to a number"),
    ("None", None), ("'cpu'", None), ("(0, 1)", None), ("float(x)", None), ("1j", None), ("x", None),
])
def test_which_parameter_defaults_are_numbers(default: str, message: Optional[str]) -> None:
    from lint_h2d.inference.scope import _number_default

    (param,) = cst.ensure_type(cst.parse_statement(f"def f(p={default}): pass"), cst.FunctionDef).params.params
    value = _number_default(param)
    if message is None:
        assert value is None
    else:
        assert value is not None and value.kind == Kind.SCALAR
        assert value.evidence[-1].message == f"`p` {message}"


@pytest.mark.parametrize("source, shown, sizes", [
    ("torch.zeros((a, b // 2, self.k))", "torch.zeros", ["a", "b // 2", "self.k"]),
    ("torch.empty(n, m, device=d)", "torch.empty", ["n", "m"]),
    ("torch.full((n, m), 0.5)", "torch.full", ["n", "m"]),
    ("torch.ones(size=[n, *rest])", "torch.ones", ["n"]),
    ("torch.zeros(n, m).to(dev).long()", "torch.zeros", ["n", "m"]),
    ("x.new_zeros((n, m))", ".new_zeros", ["n", "m"]),
    ("x.new_ones(n, m)", ".new_ones", ["n", "m"]),
    # a lone argument may be a shape; `full`'s second argument is its value; not an allocation
    ("torch.zeros(shape)", None, None),
    ("torch.full(n, v)", None, None),
    ("torch.zeros(*shape)", None, None),
    ("torch.arange(n, m)", None, None),
    ("torch.zeros_like(x)", None, None),
    ("np.zeros((n, m))", None, None),
])
def test_the_sizes_of_an_allocation(source: str, shown: Optional[str], sizes: Optional[list]) -> None:
    """`scope.factory_sizes`: the arguments PyTorch takes as ints, each one (a size past which
    the walk takes a name nothing told about to be an int, `_Walker.narrow_sizes`)."""
    from lint_h2d.inference.scope import factory_sizes

    found = factory_sizes(cst.parse_expression(source), frozenset({"torch"}), {})
    if shown is None:
        assert found is None
    else:
        assert found is not None and found[0] == shown
        assert [cst.Module([]).code_for_node(s) for s in found[1]] == sizes


@pytest.mark.parametrize("uses, rank", [
    ("m[:, :, i:, :] = 0", 4),            # a bare `:` last names every dimension
    ("m[i, :] = 0", 2),
    ("y = m[0, :, j, :]", 4),             # a read spells it too
    ("m[:, i:] = 0", None),               # a bounded slice last: no bare `:`
    ("m[:] = 0", None),                   # one position says nothing
    ("m[..., :] = 0", None),              # `...` stands for any number of dimensions
    ("m[None, :] = 0", None),             # `None` adds one
    ("m[:, :] = 0\nm[:, :, :] = 0", None),  # two ranks spelled
    ("m[:, :] = 0\nm[i, j, 0] = 1", None),   # three positions elsewhere prove more than two
    ("m[:, :] = 0\nm.unsqueeze_(0)", None),  # the rank changes in place
])
def test_a_trailing_bare_colon_spells_the_rank(uses: str, rank: Optional[int]) -> None:
    found = spelled_rank(_function(f"m = x.clone()\n{uses}"), "m")
    assert (found.rank if found is not None else None) == rank


def _write(fn: cst.FunctionDef, code: str) -> cst.CSTNode:
    """The statement of `fn` whose code is `code` (the `statement` `spelled_rank` reads at)."""
    found = [node for node in own_scope_nodes(fn.body)
             if isinstance(node, cst.SimpleStatementLine) and cst.Module([]).code_for_node(node).strip() == code]
    assert len(found) == 1, code
    return found[0]


@pytest.mark.parametrize("body, at, rank", [
    # a part of literal positions carries the rank spelled before it: 3 less the one `-1` drops
    ("m = m[:, -1, :]\nm[0, j] = 1", "m[0, j] = 1", 2),  # its own value spells the 3
    ("m[:, :, :] = 0\nm = m[:, -1]\nm[0, j] = 1", "m[0, j] = 1", 2),
    ("m[:, :, :] = 0\nm = m[None, 0]\nm[0, j, k] = 1", "m[0, j, k] = 1", 3),  # `None` adds one
    ("y = m[0, :, :]\nm = m[:, -1, :]\nm[0, j] = 1", "m[0, j] = 1", 2),  # a read spells it too
    ("m = m[:, -1, :]\nm[0, :] = 0\nm[0, j] = 1", "m[0, j] = 1", 2),  # the part's own spelling
    ("m[:, :, :] = 0\nm = m[:, -1, :]\nm[:, :, :] = 0\nm[0, j] = 1", "m[0, j] = 1", None),  # 2 against 3
    # before the rebinding, the rank spelled before it; the part's own spelling says nothing there
    ("m[:, :, :] = 0\nm[0, j, 1] = 1\nm = m[0]\nm[j, :] = 0", "m[0, j, 1] = 1", 3),
    ("m[0, j] = 1\nm = m[0]\nm[j, :] = 0", "m[0, j] = 1", None),
    ("m[:, :, :] = 0\nm = m[i]\nm[0, j] = 1", "m[0, j] = 1", None),  # `i` may be an index tensor
    ("m[:, :, :] = 0\nm = m.sum(0)\nm[0, j] = 1", "m[0, j] = 1", None),  # a reduction: unknown
    ("m[:, :, :] = 0\nm = m.cuda()\nm[0, j, 1] = 1", "m[0, j, 1] = 1", 3),  # a move keeps it
    # a loop runs the rebinding again before its next pass reads the name
    ("m[:, :, :] = 0\nfor _ in r:\n    m[0, j, 1] = 1\n    m = m[0]", "m[0, j, 1] = 1", None),
    ("m[:, :, :] = 0\nfor _ in r:\n    m = m[0]\n    m[0, j] = 1", "m[0, j] = 1", None),
    ("m[:, :, :] = 0\nfor _ in r:\n    m = m[0]\n    m[j, :] = 0\n    m[0, j] = 1", "m[0, j] = 1", 2),
    # a rebinding in one branch: after the branch, either object
    ("m[:, :, :] = 0\nif c:\n    m = m[0]\nm[0, j] = 1", "m[0, j] = 1", None),
    ("m[:, :, :] = 0\nif c:\n    m = m[0]\n    m[0, j] = 1", "m[0, j] = 1", 2),
    ("m[:, :, :] = 0\nm = y = m[0]\nm[0, j] = 1", "m[0, j] = 1", None),  # not alone: not read
])
def test_a_part_of_the_name_opens_an_epoch_of_its_own(body: str, at: str, rank: Optional[int]) -> None:
    fn = _function(f"m = x.cuda()\n{body}")
    found = spelled_rank(fn, "m", _write(fn, at))
    assert (found.rank if found is not None else None) == rank
    if any(part in body for part in ("m = m[", "m = m.sum", "m = y = m")):
        assert spelled_rank(fn, "m") is None  # where the rank is read must be given


def test_a_rank_carried_through_a_part_names_the_part() -> None:
    fn = _function("m = x.cuda()\ny = m[0, :, :]\nm = m[:, -1, :]\nm[0, j] = 1")
    found = spelled_rank(fn, "m", _write(fn, "m[0, j] = 1"))
    assert found is not None and (found.rank, found.spelled_as) == (2, 3)
    assert [(cst.Module([]).code_for_node(line).strip(), rank) for line, rank in found.through] == \
        [("m = m[:, -1, :]", 2)]


def test_a_copy_takes_the_rank_its_source_spells() -> None:
    fn = _function("m = x.cuda()\nm[:, :, i:, :] = 0\nt = m.clone()\nt[0, 0, i, j] = 1\n"
                   "u = m.detach().to(i)\nv = m.clone()\nv = x.clone()\nw = m[0]\n")
    found = spelled_rank_of_copy(fn, "t")
    assert found is not None and found[0] == 4 and found[2] == "m"
    assert spelled_rank_of_copy(fn, "u") is not None        # a chain of shape-keeping calls
    assert spelled_rank_of_copy(fn, "v") is None            # one binding copies another name
    assert spelled_rank_of_copy(fn, "w") is None            # a subscript is no copy
    assert spelled_rank_of_copy(fn, "x") is None            # a parameter
    fn = _function("m = x.cuda()\nm[:, :, i:, :] = 0\nt = m.clone()\nm = m[0]\nt[0, 0, i, j] = 1\n")
    assert spelled_rank_of_copy(fn, "t") is None  # the source is rebound to a part: epochs unread


def test_a_copy_that_spells_its_own_rank_keeps_it() -> None:
    fn = _function("m = x.cuda()\nm[:, :, i:, :] = 0\nt = m.clone()\nt[:, :] = 0\n")
    assert spelled_rank_of_copy(fn, "t") is None  # `spelled_rank` of `t` itself answers
    found = spelled_rank(fn, "t")
    assert found is not None and found.rank == 2
