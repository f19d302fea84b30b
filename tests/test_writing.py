"""`--fix` writes the real file and keeps what the user set up around it (issue 15 item 12)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lint_h2d import cli
from tests.test_bad_input import DEVICE_WRITE, FIXED_TAIL

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def fix(path: Path) -> int:
    return cli.main(["fix", "--no-cache", "--jobs", "1", "-q", str(path)])


def test_symlinked_file_is_written_through(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    real = tmp_path / "real" / "mod.py"
    real.parent.mkdir()
    real.write_text(DEVICE_WRITE)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert fix(link) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert FIXED_TAIL in real.read_text()


def test_hard_link_is_not_split(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a = tmp_path / "a.py"
    a.write_text(DEVICE_WRITE)
    b = tmp_path / "b.py"
    os.link(a, b)
    inode = a.stat().st_ino
    assert fix(a) == 0
    assert a.stat().st_ino == b.stat().st_ino == inode and a.stat().st_nlink == 2
    assert FIXED_TAIL in b.read_text()


def test_mode_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a = tmp_path / "a.py"
    a.write_text(DEVICE_WRITE)
    a.chmod(0o640)
    assert fix(a) == 0
    assert stat.S_IMODE(a.stat().st_mode) == 0o640 and FIXED_TAIL in a.read_text()


@pytest.mark.skipif(not IS_ROOT, reason="only root can give a file to another user")
def test_owner_is_kept_when_root_fixes_another_users_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a = tmp_path / "a.py"
    a.write_text(DEVICE_WRITE)
    os.chown(a, 12345, 23456)
    assert fix(a) == 0
    st = a.stat()
    assert (st.st_uid, st.st_gid) == (12345, 23456) and FIXED_TAIL in a.read_text()
