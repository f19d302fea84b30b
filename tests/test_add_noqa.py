"""`check --add-noqa`: how a large repository adopts lint-h2d (ruff's habit).

After it, `check` is clean; a second run adds nothing; existing noqa lists are merged; a
multi-line statement gets its comment on its last line; nothing else in the file changes.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

from lint_h2d.add_noqa import line_edit
from fixers.edits import apply_edits
from tests.conftest import run_cli

SOURCE = textwrap.dedent(
    """\
    import torch

    buf = torch.zeros(8, device="cuda")


    def step(i: int):
        buf[0] = 0
        buf[1] = 1  # keep: warm-up value
        buf[2] = 2  # noqa: E501
        buf[
            3
        ] = 4
        buf[5] = 5  # noqa
    """
)


def test_add_noqa_silences_everything_once(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(SOURCE.encode())
    before = run_cli("check", "--no-cache", "--output-format", "concise", "mod.py", cwd=tmp_path)
    assert before.returncode == 1
    flagged = before.stdout.count("H2D001")
    assert flagged == 4, before.stdout  # buf[5] is already silenced by its bare noqa

    first = run_cli("check", "--no-cache", "--add-noqa", "mod.py", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "Added 4 noqa directives." in first.stderr
    text = path.read_text()
    assert "    buf[0] = 0  # noqa: H2D001\n" in text
    assert "    buf[1] = 1  # keep: warm-up value  # noqa: H2D001\n" in text
    assert "    buf[2] = 2  # noqa: E501, H2D001\n" in text
    assert "    ] = 4  # noqa: H2D001\n" in text  # the statement's last line
    assert "    buf[5] = 5  # noqa\n" in text
    # Only those lines changed.
    changed = [a for a, b in zip(SOURCE.splitlines(), text.splitlines()) if a != b]
    assert len(changed) == 4 and len(text.splitlines()) == len(SOURCE.splitlines())

    assert run_cli("check", "--no-cache", "mod.py", cwd=tmp_path).returncode == 0
    second = run_cli("check", "--no-cache", "--add-noqa", "mod.py", cwd=tmp_path)
    assert second.returncode == 0 and "Added 0 noqa directives." in second.stderr
    assert path.read_text() == text


def test_add_noqa_refuses_fix(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(SOURCE)
    result = run_cli("check", "--no-cache", "--add-noqa", "--fix", "mod.py", cwd=tmp_path)
    assert result.returncode == 2 and "--add-noqa" in result.stderr
    assert (tmp_path / "mod.py").read_text() == SOURCE


def test_line_edit_keeps_line_endings_and_strings() -> None:
    text = "a = 1\r\nb = '#'\r\nc = 3\r\n"
    edit = line_edit(text, 2, ["H2D001"])
    assert edit is not None
    assert apply_edits(text, [edit.edit]) == "a = 1\r\nb = '#'  # noqa: H2D001\r\nc = 3\r\n"
    # A form feed is not a line break for Python: row 2 is the line after `\n`.
    ff = "x = 1\x0c\ny = 2\n"
    edit = line_edit(ff, 2, ["H2D002"])
    assert edit is not None
    assert apply_edits(ff, [edit.edit]) == "x = 1\x0c\ny = 2  # noqa: H2D002\n"
    assert line_edit("t[0] = 0  # NOQA\n", 1, ["H2D001"]) is None
    assert line_edit("t[0] = 0  # noqa: H2D001\n", 1, ["H2D001"]) is None
