"""Bad input (issue #8): every file that cannot be checked gets a clear message naming its
path, the rest of the scan goes on, the exit code is 2, and nothing is written to that file.

The CLI runs in-process (``cli.main``) with ``--jobs 1`` so faults can be injected where the
operating system cannot produce them: tests run as root here, and root reads and writes files
whatever their permission bits say.  As root the unreadable/unwritable cases inject the
``PermissionError`` the kernel would raise for a normal user (at the same call the engine
makes); as a normal user they use real ``chmod``.
"""
from __future__ import annotations

import codecs
import errno
import os
from pathlib import Path
from typing import Tuple

import pytest

from lint_h2d import cli
from lint_h2d import sources as sources_module
from lint_h2d.config import Settings
from lint_h2d.engine import Engine, SourceError, WriteError, decode, read_source, write_atomic
from lint_h2d.inference.project import collect

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

DEVICE_WRITE = (
    "import torch\n"
    "\n"
    "\n"
    "def build(n):\n"
    "    t = torch.zeros(n, device=\"cuda\")\n"
    "    t[0] = 0\n"
    "    return t\n"
)
FIXED_TAIL = "    if torch.version.hip is not None:\n        t[0].zero_()\n    else:\n        t[0] = 0\n"


def lint(capsys: pytest.CaptureFixture, *args: str) -> Tuple[int, str, str]:
    code = cli.main([*args, "--no-cache", "--jobs", "1", "--output-format", "concise"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project folder with one good file (a fixable finding) next to the bad ones."""
    (tmp_path / "pyproject.toml").write_text("[tool.lint-h2d]\nselect = [\"H2D\"]\n")
    (tmp_path / "good.py").write_text(DEVICE_WRITE)
    return tmp_path


def assert_good_file_checked(out: str, tree: Path, fixed: bool = False) -> None:
    good = tree / "good.py"
    if fixed:
        assert FIXED_TAIL in good.read_text(), "the rest of the scan must go on and fix good.py"
    else:
        assert f"{good}:6:5: H2D001" in out, f"the rest of the scan must go on:\n{out}"


def line_for(out: str, path: Path) -> str:
    lines = [line for line in out.splitlines() if line.startswith(str(path))]
    assert lines, f"no message names {path}:\n{out}"
    return lines[0]


# -- unreadable, undecodable, unparsable files --------------------------------------------

def test_syntax_error_has_location(tree: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tree / "broken.py"
    bad.write_text("import torch\n\ndef f(n):\n    t = torch.zeros(n, device='cuda')\n    t[0] = (0\n")
    before = bad.read_bytes()
    code, out, _ = lint(capsys, "check", "--fix", str(tree))
    assert code == 2
    line = line_for(out, bad)
    assert "H2D901" in line and "SyntaxError" in line
    row = int(line.split(":")[1])
    assert row >= 5, line  # points at the unclosed parenthesis, not at line 1
    assert bad.read_bytes() == before
    assert_good_file_checked(out, tree, fixed=True)


def test_valid_python_libcst_cannot_read_is_not_called_a_syntax_error(tree: Path, capsys: pytest.CaptureFixture) -> None:
    """Indentation that mixes tabs and spaces the way CPython accepts and LibCST's tokenizer
    does not (seen in funasr 1.4.16): the file is valid Python, so H2D901 says LibCST could not
    read it, why, and that it went unchecked, not "SyntaxError"; the rest of the scan goes on."""
    import ast

    bad = tree / "mixed.py"
    bad.write_text("class M:\n    def a(self):\n\t\t    return 1\n\n" + DEVICE_WRITE.replace("def build", "def b"))
    ast.parse(bad.read_text())  # valid Python
    before = bad.read_bytes()
    code, out, _ = lint(capsys, "check", "--fix", str(tree))
    assert code == 2
    line = line_for(out, bad)
    assert "H2D901 LibCST cannot parse this file, though Python can" in line, line
    assert "SyntaxError" not in line and "mixes tabs and spaces" in line and "not checked" in line, line
    assert bad.read_bytes() == before
    assert_good_file_checked(out, tree, fixed=True)


def test_python2_file(tree: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tree / "legacy.py"
    bad.write_text("import torch\nt = torch.zeros(3, device='cuda')\nt[0] = 0\nprint \"done\"\n")
    before = bad.read_bytes()
    code, out, _ = lint(capsys, "check", "--fix", str(tree))
    assert code == 2
    line = line_for(out, bad)
    assert "H2D901" in line and ":4:" in line, line
    assert bad.read_bytes() == before
    assert_good_file_checked(out, tree, fixed=True)


def test_latin1_with_coding_cookie_is_checked_and_fixed(tree: Path, capsys: pytest.CaptureFixture) -> None:
    path = tree / "latin.py"
    original = ("# -*- coding: latin-1 -*-\n" + DEVICE_WRITE.replace("    t[0] = 0\n", "    t[0] = 0  # café\n")
                + "NAME = \"señor\"\n")
    path.write_bytes(original.encode("latin-1"))
    code, out, _ = lint(capsys, "check", str(path))
    assert code == 1 and f"{path}:7:5: H2D001" in out
    code, out, _ = lint(capsys, "fix", str(path))
    assert code == 0, out
    data = path.read_bytes()
    assert b"caf\xe9" in data and b"se\xf1or" in data  # still latin-1, not re-encoded
    assert "café".encode("utf-8") not in data
    # The trailing comment stays on the original and is repeated on the rewrite (issue 14).
    expected = original.replace("    t[0] = 0  # café\n", FIXED_TAIL.replace("t[0] = 0\n", "t[0] = 0  # café\n")
                                .replace("t[0].zero_()\n", "t[0].zero_()  # café\n"))
    assert data == expected.encode("latin-1")


def test_undecodable_bytes(tree: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tree / "bytes.py"
    bad.write_bytes(b"import torch\nx = '\xff\xfe not utf-8'\n")
    code, out, _ = lint(capsys, "check", "--fix", str(tree))
    assert code == 2
    line = line_for(out, bad)
    assert "H2D900" in line and "decode" in line.lower() or "encoding" in line.lower(), line
    assert bad.read_bytes() == b"import torch\nx = '\xff\xfe not utf-8'\n"
    assert_good_file_checked(out, tree, fixed=True)


def test_utf8_bom_is_kept(tree: Path, capsys: pytest.CaptureFixture) -> None:
    path = tree / "bom.py"
    path.write_bytes(codecs.BOM_UTF8 + DEVICE_WRITE.encode("utf-8"))
    code, out, _ = lint(capsys, "check", str(path))
    assert code == 1 and f"{path}:6:5: H2D001" in out  # the BOM does not shift columns
    code, out, _ = lint(capsys, "fix", str(path))
    assert code == 0
    data = path.read_bytes()
    assert data.startswith(codecs.BOM_UTF8) and not data.startswith(codecs.BOM_UTF8 * 2)
    assert data[3:].decode("utf-8").endswith(FIXED_TAIL + "    return t\n")


def test_binary_file_named_py(tree: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tree / "blob.py"
    payload = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4
    bad.write_bytes(payload)
    code, out, _ = lint(capsys, "check", "--fix", str(tree))
    assert code == 2
    line = line_for(out, bad)
    assert "H2D900" in line and ("binary" in line or "NUL" in line or "decode" in line), line
    assert bad.read_bytes() == payload
    assert_good_file_checked(out, tree, fixed=True)


def test_empty_file(tree: Path, capsys: pytest.CaptureFixture) -> None:
    (tree / "empty.py").write_bytes(b"")
    (tree / "blank.py").write_bytes(b"\n\n")
    code, out, _ = lint(capsys, "check", str(tree))
    assert code == 1  # only good.py's finding: an empty file is fine
    assert "empty.py" not in out and "blank.py" not in out
    assert_good_file_checked(out, tree)
    src = decode("empty.py", b"")
    assert src.text == "" and src.encode("") == b""
    engine = Engine(Settings(root=tree), collect([""]), use_prefilter=False)
    assert engine.analyze("empty.py", "") == []


def test_fifty_thousand_line_file(tree: Path, capsys: pytest.CaptureFixture) -> None:
    # 50k lines, most of them a data docstring and comments: LibCST needs ~1-2 ms per line of
    # *code* (parse + positions), so 50k lines of statements take minutes per pass (reported
    # in issue #8); this keeps the size test to seconds while still parsing 50k lines.
    body = ["import torch", '"""']
    body += [f"row {i}: generated table, kept verbatim" for i in range(25_000)]
    body += ['"""']
    body += [f"# comment line {i}" for i in range(24_000)]
    body += [f"x{i} = {i}" for i in range(1_000)]
    body += ["def build(n):", "    t = torch.zeros(n, device=\"cuda\")", "    t[0] = 0", "    return t", ""]
    path = tree / "huge.py"
    path.write_text("\n".join(body))
    assert len(body) > 50_000
    code, out, _ = lint(capsys, "check", str(path))
    assert code == 1
    assert f"{path}:{len(body) - 2}:5: H2D001" in out
    code, out, _ = lint(capsys, "fix", str(path))
    assert code == 0
    text = path.read_text()
    assert text.endswith(FIXED_TAIL + "    return t\n")
    assert text.count("\n") == len(body) - 1 + 3


def test_missing_path(tree: Path, capsys: pytest.CaptureFixture) -> None:
    missing = tree / "nowhere" / "gone.py"
    code, out, _ = lint(capsys, "check", str(missing), str(tree))
    assert code == 2
    line = line_for(out, missing)
    assert "No such file" in line
    assert_good_file_checked(out, tree)


def test_path_given_twice(tree: Path, capsys: pytest.CaptureFixture) -> None:
    good = tree / "good.py"
    code, out, _ = lint(capsys, "check", str(good), str(good), str(tree), os.path.relpath(good))
    assert code == 1
    assert out.count("H2D001") == 1, out
    code, out, _ = lint(capsys, "fix", str(good), str(tree), str(good))
    assert code == 0
    assert good.read_text().count("torch.version.hip") == 1  # fixed once, not twice


def test_symlink_loop(tree: Path, capsys: pytest.CaptureFixture) -> None:
    (tree / "pkg").mkdir()
    os.symlink("..", tree / "pkg" / "up")  # a directory loop: never followed
    os.symlink(tree / "pkg", tree / "pkg" / "again")
    os.symlink("b.py", tree / "a.py")  # a file loop: a.py -> b.py -> a.py
    os.symlink("a.py", tree / "b.py")
    code, out, _ = lint(capsys, "check", str(tree), str(tree / "pkg" / "up"))
    assert code == 2
    assert "symbolic links" in line_for(out, tree / "a.py")
    assert out.count(f"{tree / 'good.py'}:6:5: H2D001") == 1


# -- permissions ---------------------------------------------------------------------------

def _deny_open(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """As root, raise the PermissionError a normal user would get reading ``denied``."""
    real_open = os.open

    def fake_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(file, (str, os.PathLike)) and os.path.abspath(file) == str(denied):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(sources_module.os, "open", fake_open)


def test_file_without_read_permission(tree: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tree / "secret.py"
    bad.write_text(DEVICE_WRITE)
    if IS_ROOT:
        _deny_open(monkeypatch, bad)
    else:
        bad.chmod(0o000)
    try:
        code, out, _ = lint(capsys, "check", "--fix", str(tree))
    finally:
        bad.chmod(0o644)
    assert code == 2
    assert "Permission denied" in line_for(out, bad)
    assert bad.read_text() == DEVICE_WRITE
    assert_good_file_checked(out, tree, fixed=True)


def test_directory_without_read_permission(tree: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tree / "locked"
    locked.mkdir()
    (locked / "inner.py").write_text(DEVICE_WRITE)
    if IS_ROOT:
        real_scandir = os.scandir

        def fake_scandir(path=".", *a, **k):  # type: ignore[no-untyped-def]
            if os.path.abspath(os.fspath(path)) == str(locked):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return real_scandir(path, *a, **k)

        monkeypatch.setattr(os, "scandir", fake_scandir)
    else:
        locked.chmod(0o000)
    try:
        code, out, _ = lint(capsys, "check", str(tree))
    finally:
        locked.chmod(0o755)
    assert code == 2
    assert "Permission denied" in line_for(out, locked)
    assert_good_file_checked(out, tree)


def test_file_without_write_permission(tree: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    ro = tree / "readonly.py"
    ro.write_text(DEVICE_WRITE)
    ro.chmod(0o444)
    if IS_ROOT:  # root may write anything; make the engine see what a normal user would
        real_access = os.access

        def fake_access(path, mode, *a, **k):  # type: ignore[no-untyped-def]
            if os.path.abspath(os.fspath(path)) == str(ro) and mode & os.W_OK:
                return False
            return real_access(path, mode, *a, **k)

        monkeypatch.setattr(os, "access", fake_access)
    code, out, _ = lint(capsys, "check", str(ro))
    assert code == 1 and f"{ro}:6:5: H2D001" in out  # checking works
    code, out, _ = lint(capsys, "fix", str(tree))
    assert code == 2
    line = line_for(out, ro)
    assert "H2D900" in line and "cannot fix" in line and "writable" in line, line
    assert ro.read_text() == DEVICE_WRITE
    assert oct(ro.stat().st_mode & 0o777) == oct(0o444)
    assert not [p for p in tree.iterdir() if p.name.startswith(".lint-h2d-")], "temp file left behind"
    assert_good_file_checked(out, tree, fixed=True)


# -- writing -------------------------------------------------------------------------------

def test_write_atomic_refuses_a_file_changed_since_read(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(DEVICE_WRITE)
    source = read_source(str(path))
    path.write_text(DEVICE_WRITE + "# edited by someone else\n")
    with pytest.raises(WriteError, match="changed on disk"):
        write_atomic(source, "x = 1\n")
    assert path.read_text() == DEVICE_WRITE + "# edited by someone else\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]
    # Same size, same mtime granularity, different bytes: still detected (content compare).
    path.write_text(DEVICE_WRITE)
    source = read_source(str(path))
    path.write_text(DEVICE_WRITE.replace("n", "m"))
    with pytest.raises(WriteError):
        write_atomic(source, "x = 1\n")
    # Deleted since read: not recreated.
    path.unlink()
    with pytest.raises(WriteError):
        write_atomic(source, "x = 1\n")
    assert not path.exists()


def test_write_atomic_keeps_mode_encoding_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(codecs.BOM_UTF8 + "x = 'é'\r\n".encode())
    path.chmod(0o750)
    source = read_source(str(path))
    write_atomic(source, source.text.replace("x", "y"))
    assert path.read_bytes() == codecs.BOM_UTF8 + "y = 'é'\r\n".encode()
    assert path.stat().st_mode & 0o777 == 0o750


def test_crlf_kept(tree: Path, capsys: pytest.CaptureFixture) -> None:
    path = tree / "dos.py"
    path.write_bytes(DEVICE_WRITE.replace("\n", "\r\n").encode())
    code, out, _ = lint(capsys, "fix", str(path))
    assert code == 0
    data = path.read_bytes()
    assert data == (DEVICE_WRITE.replace("    t[0] = 0\n", FIXED_TAIL)).replace("\n", "\r\n").encode()
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_decode_errors_are_source_errors() -> None:
    with pytest.raises(SourceError, match="binary|NUL"):
        decode("b.py", b"import os\n\x00\x01")
    with pytest.raises(SourceError):
        decode("c.py", b"# -*- coding: no-such-codec -*-\nx = 1\n")
    with pytest.raises(SourceError):
        decode("d.py", b"x = '\xff'\n")


# -- bad configuration ---------------------------------------------------------------------

@pytest.mark.parametrize(
    "body, key",
    [
        ("[tool.lint-h2d\nselect = [\"H2D\"]\n", None),  # malformed TOML
        ("[tool.lint-h2d]\nselect = [\"H2D\"\n", None),
        ("[tool.lint-h2d]\nfrobnicate = true\n", "frobnicate"),  # unknown key
        ("[tool.lint-h2d]\nselect = \"H2D001\"\n", "select"),  # wrong types
        ("[tool.lint-h2d]\nexclude = [1, 2]\n", "exclude"),
        ("[tool.lint-h2d]\nrespect-gitignore = \"yes\"\n", "respect-gitignore"),
        ("[tool.lint-h2d]\nfix-gate = 3\n", "fix-gate"),
        ("[tool.lint-h2d]\nfix-gate = \"sometimes\"\n", "fix-gate"),
        ("[tool.lint-h2d]\nper-file-ignores = [\"a\"]\n", "per-file-ignores"),
        ("[tool.lint-h2d]\nper-file-ignores = { \"a/*\" = \"H2D001\" }\n", "per-file-ignores"),
        ("[tool.lint-h2d]\ncache-dir = false\n", "cache-dir"),
        ("[tool.lint-h2d]\nselect = [\"E501\"]\n", "select"),
        ("[tool.lint-h2d.fix-gate]\ntest = \"is rocm(\"\n", "fix-gate"),
        ("[tool.lint-h2d.fix-gate]\ntest = \"x\"\nwhen = \"y\"\n", "when"),
    ],
)
def test_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture, body: str, key: str) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(body)
    (tmp_path / "good.py").write_text(DEVICE_WRITE)
    code, out, err = lint(capsys, "check", str(tmp_path))
    assert code == 2, (out, err)
    assert str(config) in err, err
    code, _, err2 = lint(capsys, "check", "--config", str(config), str(tmp_path))
    assert code == 2 and err2 == err
    if key is None:
        assert "TOML" in err, err
    else:
        assert key in err, err
    assert "Traceback" not in err
    assert (tmp_path / "good.py").read_text() == DEVICE_WRITE


def test_bad_config_given_with_option(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "none.toml"
    code, _, err = lint(capsys, "check", "--config", str(missing), str(tmp_path))
    assert code == 2 and str(missing) in err and "Traceback" not in err
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    code, _, err = lint(capsys, "check", "--config", str(binary), str(tmp_path))
    assert code == 2 and str(binary) in err
    not_table = tmp_path / "lint-h2d.toml"
    not_table.write_text("[tool]\nlint-h2d = 3\n")
    code, _, err = lint(capsys, "check", "--config", str(not_table), str(tmp_path))
    assert code == 2 and str(not_table) in err and "table" in err


@pytest.mark.parametrize("body", ["[tool.lint-h2d]\nfrobnicate = true\n", "[tool.lint-h2d\nselect = []\n"])
def test_bad_nested_config_skips_its_folder_only(tree: Path, capsys: pytest.CaptureFixture, body: str) -> None:
    # One broken sub-project must not cost the findings (and fixes) of the rest of the tree.
    nested = tree / "sub" / "pyproject.toml"
    nested.parent.mkdir()
    nested.write_text(body)
    (tree / "sub" / "bad.py").write_text(DEVICE_WRITE)
    for args in ([str(tree)], [str(tree / "good.py"), str(tree / "sub" / "bad.py")]):
        code, out, err = lint(capsys, "check", *args)
        assert code == 2, (out, err)
        assert str(nested) in err and "Traceback" not in err
        assert_good_file_checked(out, tree)
        assert f"{tree / 'sub' / 'bad.py'}:6:5: H2D001" not in out
    code, out, err = lint(capsys, "check", "--fix", str(tree))
    assert code == 2
    assert_good_file_checked(out, tree, fixed=True)
    assert (tree / "sub" / "bad.py").read_text() == DEVICE_WRITE
