"""`inference.gpu_mode`: which tests say the accelerator is in use, and which fields hold such a
switch.  The walk takes the branch such a test selects there (`gpu_mode_branches.py` shows the
flagged writes and the silent look-alikes on whole files)."""
from typing import FrozenSet, Optional

import libcst as cst
import pytest

from lint_h2d.inference.gpu_mode import gpu_flag_fields, gpu_mode
from lint_h2d.inference.scope import _field_assignments


def _mode(test: str, fields: FrozenSet[str] = frozenset()) -> Optional[bool]:
    return gpu_mode(cst.parse_expression(test), "self", lambda: fields)


@pytest.mark.parametrize("test, holds", [
    ("torch.cuda.is_available()", True),
    ("cuda.is_available()", True),
    ("use_gpu", True),
    ("args.cuda", True),
    ("cfg.use_cuda", True),
    ('conf["use_gpu"]', True),
    ("not use_gpu", False),
    ("not (args.cuda and torch.cuda.is_available())", False),
    ("use_gpu or args.cuda", True),
    ("self.use_gpu", True),
    ("self.dp", True),
])
def test_a_switch_of_the_accelerator_has_a_truth_there(test: str, holds: bool) -> None:
    assert _mode(test, frozenset({"dp"})) is holds


@pytest.mark.parametrize("test", [
    "args.gpu",  # a device index: 0 is the first GPU
    "gpus",
    "self.cuda",  # `nn.Module.cuda`, a method
    "self.dp",  # not a field known to hold a switch
    "use_gpu and large",
    "use_gpu or large",
    "device == 'cuda'",
    "torch.cuda.is_available(0)",
    "x.is_cuda",
    'conf[key]',
])
def test_anything_else_has_no_truth_there(test: str) -> None:
    assert _mode(test) is None


def test_a_field_holds_a_switch_when_every_assignment_sets_one() -> None:
    cls = cst.parse_module(
        "class G:\n"
        "    def __init__(self, conf, flag):\n"
        "        self.dp = conf['use_gpu']\n"
        "        self.on = flag.use_cuda and torch.cuda.is_available()\n"
        "        self.mixed = conf['use_gpu']\n"
        "        self.count = 0\n"
        "        self.pair, self.other = conf['use_gpu'], 1\n"
        "        self.grown = conf['use_gpu']\n"
        "    def reset(self, flag):\n"
        "        self.mixed = flag\n"
        "        self.grown += 1\n"
        "        def inner(other):\n"
        "            other.dp = 0\n").body[0]
    assert isinstance(cls, cst.ClassDef)
    assert gpu_flag_fields(_field_assignments(cls)) == {"dp", "on"}
