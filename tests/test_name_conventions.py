"""The session-42 naming conventions as pure functions: which names hold a configuration
(`values.names_config`, `values.config_field`) and what a field of one is (`values.config_value`:
a host value, no number where a number and a sequence differ), and which callables are models
(`resolved.names_model`); and which tests prove a tensor's number of dimensions
(`scope.rank_checks`, `summary.shape_unpacking`'s `assert`).  The fixtures `config_fields.py`,
`named_models.py` and `rank_checks.py` under `tests/fixtures/projects/python` show them on whole
programs.
"""
from __future__ import annotations

import ast
from typing import Tuple

import libcst as cst
import pytest

from lint_h2d.inference.scope import rank_checks
from lint_h2d.inference.summary import shape_unpacking

from lint_h2d.inference.resolved import MODULE_CALL_WORDS, named_model_message, names_model, output_field_message
from lint_h2d.findings import EvidenceStep
from lint_h2d.inference.values import (CONFIG_STEP, SCALAR, Kind, config_field, config_value, from_config, host_object,
                                       json_data, JSON_STEP, names_config, names_lengths, plain_number)


@pytest.mark.parametrize("name, config", [
    ("config", True), ("cfg", True), ("hparams", True), ("args", True), ("opt", True),
    ("loss_config", True), ("model_cfg", True), ("training_args", True), ("model_hparams", True),
    ("conf", False), ("box_conf", False), ("configs", False), ("configure", False), ("params", False), ("kwargs", False), ("optimizer", False),
    ("model", False), ("config_path", False), ("argsort", False),
])
def test_which_names_hold_a_configuration(name: str, config: bool) -> None:
    assert names_config(name) is config


@pytest.mark.parametrize("attr, host", [
    ("queue_size", True), ("eos_token_id", True), ("temperature", True), ("text_config", True),
    ("device", False), ("torch_dtype", False), ("dtype", False), ("gpu_ids", False), ("use_cuda", False),
    ("local_device_id", False), ("place", False), ("shape", False), ("T", False), ("data", False),
])
def test_a_configuration_field_naming_a_place_is_no_host_value(attr: str, host: bool) -> None:
    assert config_field(attr) is host


def test_a_configuration_field_is_a_host_value_but_no_plain_number() -> None:
    value = config_value(EvidenceStep(CONFIG_STEP, "m.py", 3))
    assert value.kind == Kind.SCALAR and from_config(value) and host_object(value)
    assert not plain_number(value)  # `torch.zeros(cfg.shape)`: the field may be a tuple of sizes
    assert plain_number(SCALAR)
    entry = json_data(EvidenceStep(JSON_STEP, "m.py", 4)).element
    assert entry is not None and host_object(entry) and not from_config(entry) and not plain_number(entry)


@pytest.mark.parametrize("name, model", [
    ("model", True), ("_model", True), ("draft_model", True), ("teacher_model", True), ("text_model", True),
    ("load_model", False), ("build_model", False), ("_init_model", False), ("get_model", False),
    ("create_model", False), ("Model", False), ("mymodel", False), ("model_fn", False), ("models", False),
])
def test_which_callables_are_named_models(name: str, model: bool) -> None:
    assert names_model(name) is model


def test_a_named_model_output_has_fields() -> None:
    message = named_model_message("self.model")
    assert MODULE_CALL_WORDS in message
    assert output_field_message((EvidenceStep(message, "m.py", 5),), "logits") is not None


@pytest.mark.parametrize("test, holds, found", [
    ("x.dim() == 1", True, (("x", 1),)),
    ("x.ndim == 2", True, (("x", 2),)),
    ("1 == x.ndimension()", True, (("x", 1),)),
    ("len(x.shape) == 3", True, (("x", 3),)),
    ("len(x.size()) == 3", True, (("x", 3),)),
    ("x.dim() != 1", False, (("x", 1),)),
    ("x.dim() == 1 and y.ndim == 2", True, (("x", 1), ("y", 2))),
    ("x.dim() == 1", False, ()),  # the test failed: any other rank
    ("x.dim() != 1", True, ()),
    ("x.dim() == 1 or y.ndim == 2", True, ()),  # either may have decided
    ("x.dim() > 1", True, ()),
    ("x.dim() == n", True, ()),
    ("x.size(0) == 1", True, ()),
    ("len(x) == 1", True, ()),
    ("self.x.ndim == 1", True, ()),
])
def test_which_tests_prove_a_rank(test: str, holds: bool, found: Tuple[Tuple[str, int], ...]) -> None:
    assert rank_checks(cst.parse_expression(test), holds) == found


def test_a_parameter_asserted_at_the_top_level_has_that_rank() -> None:
    body = ast.parse("assert logits.dim() == 1\nassert mask.ndim == 2 or True\nassert n.dim() == 1\n").body
    params = {"logits": ("param", "f", "logits", None), "mask": ("param", "f", "mask", None)}
    assert shape_unpacking(body, params) == {"logits": (1, 1)}



@pytest.mark.parametrize("name, lengths", [
    ("lens", True), ("encoder_out_lens", True), ("seq_lens", True), ("lengths", True), ("seq_item_len", True),
    ("source_token_lens", True), ("cu_seqlens_q", True), ("runtime_cu_seqs", True), ("seqlens", True),
    ("Lengths", True), ("lens_mask", False), ("length_penalty", False), ("max_lens_per_layer", False),
    ("lense", False), ("cumsum", False), ("cuda_seq", False), ("", False), ("_", False),
])
def test_which_names_say_per_sequence_lengths(name: str, lengths: bool) -> None:
    assert names_lengths(name) is lengths
