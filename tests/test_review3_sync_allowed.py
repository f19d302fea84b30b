"""Adversarial review of `sync-allowed` (issue 14): a fix is withheld only where the write
provably runs in an allowed region.  A private name is matched to its calls by name, so a name
defined twice in one file (two classes with `_reset`) cannot be tied to its calls: both keep
their fixes (the second, never called in the file, was said to run "around the only call")."""
from __future__ import annotations

import textwrap
from typing import Dict, Optional, Tuple

from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.inference.project import collect

HEAD = textwrap.dedent('''\
    import functools
    import torch
    from vllm.utils.gpu_sync_debug import gpu_sync_allowed

    buf = torch.zeros(4, device="cuda")
    ''')


def fixes(body: str) -> Dict[str, Tuple[bool, Optional[str]]]:
    """``buf[k] = ...`` statement -> (has a fix, why not)."""
    text = HEAD + textwrap.dedent(body)
    lines = text.split("\n")
    out = {}
    for f in Engine(Settings(), collect([text])).analyze("m.py", text):
        if f.code == "H2D001":
            out[lines[f.location.row - 1].strip()] = (f.fix is not None, f.no_fix_reason)
    return out


def test_a_name_defined_in_two_classes_keeps_both_fixes() -> None:
    found = fixes('''
        class Worker:
            def setup(self):
                with gpu_sync_allowed():
                    self._reset()

            def _reset(self):
                buf[0] = 1


        class Runner:
            def _reset(self):  # never called in this file
                buf[1] = 1
        ''')
    assert found["buf[0] = 1"][0] and found["buf[1] = 1"][0], found


def test_a_single_definition_is_still_proven() -> None:
    found = fixes('''
        class Worker:
            def setup(self):
                with gpu_sync_allowed():
                    self._reset()

            def _reset(self):
                buf[0] = 1
        ''')
    assert found["buf[0] = 1"][0] is False
    assert "around the only call of `_reset`" in (found["buf[0] = 1"][1] or "")


def test_calls_that_may_run_later_or_elsewhere_keep_the_fix() -> None:
    """Held before this review too: a lambda, a generator, `functools.partial`, a nested
    function run later, an alias; and `with a() as x, gpu_sync_allowed():` does allow."""
    found = fixes('''
        def _by_lambda():
            buf[0] = 1


        def _by_generator():
            buf[1] = 1


        def _by_partial():
            buf[2] = 1


        def _by_alias():
            buf[3] = 1


        def setup(hooks):
            with gpu_sync_allowed():
                _by_lambda()
                hooks.append(lambda: _by_lambda())
                _by_generator()
                g = (_by_generator() for _ in range(2))
                _by_partial()
                hooks.append(functools.partial(_by_partial))
                f = _by_alias
                f()

                def later():
                    buf[-1] = 1
            with open("f") as x, gpu_sync_allowed():
                buf[-2] = 1
        ''')
    for statement in ("buf[0] = 1", "buf[1] = 1", "buf[2] = 1", "buf[3] = 1"):
        assert found[statement][0], statement
    assert found["buf[-1] = 1"][0]  # in a function defined in the block, run later
    assert found["buf[-2] = 1"][0] is False  # the second item of the `with` allows
