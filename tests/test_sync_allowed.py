"""`sync-allowed` (issue 14): a write inside a region the project declares sync-allowed
(`with gpu_sync_allowed():`, or a private function called only there) is still reported, but
gets no fix, and says why and where.  The fix pairs `H2D001_sync_allowed*.in.py` show what
keeps its fix; these tests check the messages, the evidence and the setting itself."""
from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Dict, List

import pytest

from lint_h2d import config
from lint_h2d.cache import cache_key
from lint_h2d.config import Settings
from lint_h2d.engine import Engine
from lint_h2d.findings import Finding
from lint_h2d.inference.project import collect
from lint_h2d.rules import all_rules
from tests.conftest import FIXTURES, REPO, run_cli
from tests.test_cli import write

SOURCE = (FIXTURES / "H2D001_sync_allowed.in.py").read_text(encoding="utf-8")


def findings(text: str, settings: Settings) -> Dict[int, Finding]:
    found = Engine(settings, collect([text])).analyze("mamba_like.py", text)
    return {f.location.row: f for f in found if f.code == "H2D001"}


def row_of(text: str, marker: str) -> int:
    rows: List[int] = [n for n, line in enumerate(text.splitlines(), 1) if marker in line]
    assert len(rows) == 1, marker
    return rows[0]


def test_writes_in_allowed_regions_are_reported_without_a_fix_and_say_where() -> None:
    by_row = findings(SOURCE, Settings(root=FIXTURES))
    with_row = row_of(SOURCE, "# This only runs once per worker.") + 1
    where = f"`with gpu_sync_allowed()` at mamba_like.py:{with_row}"
    expected = {
        "buf[0] = 1": where,
        "buf[1] = 2": f"{where} around the only call of `_populate`",
        "buf[2] = 3": f"`_nested` is called only from `_populate`; {where} around the only call of `_populate`",
    }
    for statement, reason in expected.items():
        finding = by_row[row_of(SOURCE, statement)]
        assert finding.fix is None
        assert finding.no_fix_reason == f"the project allows syncs here: {reason}"
        assert f"the project allows syncs here: {reason}, so no fix is offered" in finding.message
        last = finding.evidence[-1]
        assert last.row == with_row and last.message == finding.no_fix_reason
    # Every look-alike keeps its fix (and says nothing about syncs being allowed).
    lookalikes = [f for f in by_row.values() if f.fix is None]
    assert len(lookalikes) == 3
    for row, finding in by_row.items():
        if finding.fix is not None:
            assert "allows syncs" not in finding.message, row


def test_an_empty_setting_keeps_every_fix() -> None:
    by_row = findings(SOURCE, Settings(root=FIXTURES, sync_allowed=()))
    assert by_row and all(f.fix is not None for f in by_row.values())


def test_a_bare_name_matches_a_dotted_callee_and_the_reverse() -> None:
    text = textwrap.dedent("""\
        import torch
        from vllm.utils import gpu_sync_debug

        buf = torch.zeros(4, device="cuda")


        def setup():
            with gpu_sync_debug.gpu_sync_allowed():
                buf[0] = 1
        """)
    assert findings(text, Settings(root=FIXTURES))[9].fix is None
    dotted = Settings(root=FIXTURES, sync_allowed=("vllm.utils.gpu_sync_debug.gpu_sync_allowed",))
    assert findings(text, dotted)[9].fix is None
    other = Settings(root=FIXTURES, sync_allowed=("other.gpu_sync_allowed_not",))
    assert findings(text, other)[9].fix is not None


def test_recursion_alone_does_not_prove_a_function_allowed() -> None:
    text = textwrap.dedent("""\
        import torch
        from vllm.utils.gpu_sync_debug import gpu_sync_allowed

        buf = torch.zeros(4, device="cuda")


        def _walk(n):
            buf[0] = 1
            if n:
                _walk(n - 1)


        def _only_inside():
            buf[1] = 1
            _only_inside()


        def setup():
            with gpu_sync_allowed():
                _walk(3)
            _walk(2)


        def setup_once():
            with gpu_sync_allowed():
                _only_inside()
        """)
    by_row = findings(text, Settings(root=FIXTURES))
    assert by_row[8].fix is not None  # `_walk` is also called outside
    # `_only_inside` calls itself: that call runs inside too (its only other call is inside),
    # but a least fixpoint never proves a function from its own calls: it keeps its fix.
    assert by_row[14].fix is not None


def test_a_write_in_a_class_body_or_async_with_keeps_its_fix() -> None:
    text = textwrap.dedent("""\
        import torch
        from vllm.utils.gpu_sync_debug import gpu_sync_allowed

        buf = torch.zeros(4, device="cuda")


        async def setup():
            async with gpu_sync_allowed():
                buf[0] = 1
            with gpu_sync_allowed():
                class Later:
                    buf[1] = 2
        """)
    by_row = findings(text, Settings(root=FIXTURES))
    assert by_row[9].fix is not None and by_row[12].fix is not None


@pytest.mark.parametrize("value,message", [
    ('"gpu_sync_allowed"', "`sync-allowed` must be a list of strings"),
    ("[1]", "`sync-allowed` must be a list of strings"),
    ('["gpu sync"]', "`sync-allowed` entries must be names or dotted names"),
    ('["mod.", "x"]', "`sync-allowed` entries must be names or dotted names"),
])
def test_bad_values_exit_2_naming_file_and_key(tmp_path: Path, value: str, message: str) -> None:
    write(tmp_path, "pyproject.toml", f"[tool.lint-h2d]\nsync-allowed = {value}\n")
    write(tmp_path, "a.py", "x = 1\n")
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and str(tmp_path / "pyproject.toml") in result.stderr
    assert "Traceback" not in result.stderr


def test_setting_is_read_defaults_to_vllms_and_changes_the_cache_key(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", '[tool.lint-h2d]\nsync-allowed = ["a.allow", "allow_syncs"]\n')
    settings = config.load_file(path)
    assert settings.sync_allowed == ("a.allow", "allow_syncs")
    assert Settings().sync_allowed == ("gpu_sync_allowed",)
    assert config.load_file(write(tmp_path, "pyproject.toml", "[tool.lint-h2d]\nsync-allowed = []\n")
                            ).sync_allowed == ()
    assert cache_key(settings, "f") != cache_key(replace(settings, sync_allowed=()), "f")


def test_documented_in_readme_and_rule_doc() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert '| `sync-allowed` | `["gpu_sync_allowed"]` |' in readme
    rule = next(r for r in all_rules() if r.code == "H2D001")
    assert "sync-allowed" in rule.doc.fix_safety and "gpu_sync_allowed" in rule.doc.fix_safety
