"""`inference.docstrings`: the ranks a docstring's argument list gives tensor parameters."""
from typing import Dict, Optional

import pytest

from lint_h2d.inference.docstrings import documented_ranks


def _ranks(doc: str, *params: str) -> Dict[str, int]:
    return {name: found.rank for name, found in documented_ranks(doc, params).items()}


@pytest.mark.parametrize("line, rank", [
    ("conf_gt (torch.Tensor): (N, HW0, HW1)", 3),
    ("conf_gt (torch.Tensor): (N, HW0, HW1) / (N, HW0+1, HW1+1)", 3),
    ("conf_gt (torch.Tensor): [M, 3] <x, y, std>", 2),
    ("conf_gt (Tensor, optional): [N, L]", 2),
    ("conf_gt: (B, 2*C, L // 2)", 3),
    ("conf_gt: tensor of shape (M, 2)", 2),
    ("conf_gt: a torch.Tensor of size [B, T, D]", 3),
    ("conf_gt (Tensor): shape (N,)", 1),
    ("conf_gt: (N,)", 1),
    ("conf_gt: shape [N]", 1),
    ("  *conf_gt: (N, D)", 2),
])
def test_a_shape_after_the_colon_gives_the_rank(line: str, rank: int) -> None:
    assert _ranks(f"Loss.\n\nArgs:\n    {line}\n", "conf_gt") == {"conf_gt": rank}


@pytest.mark.parametrize("line", [
    "conf_gt (optional): (default) the mask",  # one word in brackets is no shape
    "conf_gt: (optional)",
    "conf_gt: [default]",
    "conf_gt (torch.Tensor): the ground truth, (N, HW0, HW1)",  # not right after the colon
    "conf_gt (torch.Tensor): (N, ..., D)",  # an ellipsis: any number of dimensions
    "conf_gt (torch.Tensor): (batch size, length)",  # words with spaces: prose
    "conf_gt (torch.Tensor): ()",
    "conf_gt (torch.Tensor)",  # no colon
    "other (torch.Tensor): (N, HW0, HW1)",  # not the parameter asked for
])
def test_anything_else_gives_no_rank(line: str) -> None:
    assert _ranks(f"Args:\n    {line}\n", "conf_gt") == {}


def test_two_different_shapes_give_none_and_two_equal_ones_give_it() -> None:
    clash = "Args:\n    x (Tensor): (N, L)\n    x (Tensor): (N, L, D) when batched\n"
    assert _ranks(clash, "x") == {}
    same = "Args:\n    x (Tensor): (N, L)\nReturns:\n    x: [N, L] the same\n"
    assert _ranks(same, "x") == {"x": 2}


def test_the_fact_says_where_and_what() -> None:
    found = documented_ranks("Loss.\n\nArgs:\n    w (Tensor): [N, HW0, HW1]\n", ["w"])["w"]
    assert (found.rank, found.shape, found.line) == (3, "[N, HW0, HW1]", 3)


@pytest.mark.parametrize("doc", [None, ""])
def test_no_docstring_gives_nothing(doc: Optional[str]) -> None:
    assert documented_ranks(doc, ["x"]) == {}


@pytest.mark.parametrize("doc, rank", [
    # mmdet: the shape at the end of a description that runs on to the next line
    ("Args:\n    overlaps (Tensor): Overlaps between k gt_bboxes and n bboxes,\n        shape(k, n).\n"
     "    gt_labels (Tensor): Labels of k gt_bboxes, shape (k, ).\n", 2),
    # numpy style: the type on the name's line, the shape below it
    ("Parameters\n----------\noverlaps : Tensor\n    The overlaps, with shape [K, N, 2]\n", 3),
    ("Args:\n    overlaps: the scores of shape: (B, T)\n", 2),
])
def test_shape_said_anywhere_in_the_description(doc: str, rank: int) -> None:
    assert _ranks(doc, "overlaps", "gt_labels")["overlaps"] == rank


def test_the_description_ends_where_the_indentation_does() -> None:
    doc = "Args:\n    overlaps (Tensor): the overlaps.\n    other (Tensor): shape (N, 4).\nshape (N, 4, 2)\n"
    assert _ranks(doc, "overlaps") == {}
    assert _ranks("Args:\n    overlaps (Tensor): the overlaps.\n\n        shape (N, 4)\n", "overlaps") == {}


@pytest.mark.parametrize("line", [
    "overlaps (Tensor): the batch size (B) of the overlaps",  # `size` anywhere is no shape
    "overlaps (Tensor): reshaped (N, 4) later",  # `reshaped` is not the word `shape`
    "overlaps (Tensor): shape depends on the mode (optional)",
])
def test_no_shape_word_before_a_group_gives_nothing(line: str) -> None:
    assert _ranks(f"Args:\n    {line}\n", "overlaps") == {}


@pytest.mark.parametrize("kind, tensor", [
    ("Tensor", True), ("torch.Tensor", True), ("torch.LongTensor, optional", True), ("Tensor, optional", True),
    ("np.ndarray", False), ("list", False), ("int", False), ("TensorList", False), ("", False),
])
def test_a_tensor_type_is_said_apart(kind: str, tensor: bool) -> None:
    """The parenthesised type says whether the docstring calls the parameter a tensor, which
    the walk reads for a parameter nothing else tells about (`scope._rank_documented`)."""
    typed = f"({kind})" if kind else ""
    found = documented_ranks(f"Args:\n    x {typed}: shape (N, L)\n", ["x"])["x"]
    assert found.tensor is tensor
