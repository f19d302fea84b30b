"""bench/accuracy.py: label files, matching by (path, statement line) and the arithmetic of
precision and recall, on a tiny synthetic corpus (no network)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import accuracy

HEADER = "path\tline\tlabel\tconfidence\tnote\n"

# A tiny package: two real blocking writes (one spread over two lines), a list write, a
# device write the tool does not see (a parameter), and one it sees that nobody labelled.
MOD = (
    "import torch\n"                                           # 1
    "\n"                                                       # 2
    "\n"                                                       # 3
    "def build(n, device):\n"                                  # 4
    "    t = torch.zeros(n, dtype=torch.int32, device=device)\n"  # 5
    "    t[0] = 1\n"                                           # 6
    "    t[\n"                                                 # 7
    "        1] = 2\n"                                         # 8
    "    xs = [0] * n\n"                                       # 9
    "    xs[0] = 3\n"                                          # 10
    "    return t, xs\n"                                       # 11
    "\n"                                                       # 12
    "\n"                                                       # 13
    "def fill(buf):\n"                                         # 14
    "    buf[0] = 1\n"                                         # 15
)
OTHER = (
    "import torch\n\n\ndef f(device):\n"
    "    u = torch.empty(4, device=device)\n"
    "    u[2] = 0.5\n"                                         # 6
)


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text(MOD)
    (root / "pkg" / "other.py").write_text(OTHER)
    (root / "pkg" / "tests").mkdir()
    (root / "pkg" / "tests" / "helper.py").write_text(OTHER)  # default exclude: not scanned
    return root


def _labels(tmp_path: Path) -> Path:
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "corpora.toml").write_text(
        '["synth-1.0"]\npypi = "synth"\nversion = "1.0"\npackage = "pkg/"\n'
        '["synth-1.0.1"]\npypi = "synth"\nversion = "1.0.1"\npackage = "pkg/"\n'
    )
    (labels / "synth-1.0.a.tsv").write_text(
        HEADER
        + "pkg/mod.py\t6\tH2D\thigh\tlocal device tensor, int index, literal\n"
        + "pkg/mod.py\t7\tH2D\tmed\tsame, the statement starts on 7\n"
        + "pkg/mod.py\t10\tPY\thigh\ta list\n"
    )
    (labels / "synth-1.0.b.tsv").write_text(
        HEADER
        + "pkg/mod.py\t15\tH2D\thigh\tevery caller passes a device tensor\n"
        + "\n"
        + "pkg/gone.py\t3\tCPU\tlow\tno finding here\n"
    )
    # Another corpus whose name extends this one's: not a part of synth-1.0.
    (labels / "synth-1.0.1.tsv").write_text(HEADER + "pkg/mod.py\t10\tH2D\thigh\twrong on purpose\n")
    return labels


def test_label_files_by_corpus_and_part(tmp_path: Path) -> None:
    labels = _labels(tmp_path)
    corpora = accuracy.load_corpora(labels / "corpora.toml")
    assert corpora["synth-1.0"] == accuracy.Corpus("synth-1.0", "synth", "1.0", "pkg/")
    names = [p.name for p in accuracy.label_files(labels, "synth-1.0", corpora)]
    assert names == ["synth-1.0.a.tsv", "synth-1.0.b.tsv"]
    assert [p.name for p in accuracy.label_files(labels, "synth-1.0.1", corpora)] == ["synth-1.0.1.tsv"]


def test_score_arithmetic() -> None:
    L = accuracy.Label
    F = accuracy.Finding
    labels = [
        L("a.py", 1, "H2D", "high", "n1", "x:2"), L("a.py", 2, "H2D", "high", "n2", "x:3"),
        L("a.py", 3, "H2D", "low", "n3", "x:4"), L("a.py", 4, "PY", "high", "n4", "x:5"),
        L("b.py", 1, "CPU", "med", "n5", "x:6"), L("b.py", 9, "H2D", "med", "n6", "x:7"),
    ]
    findings = [
        F("a.py", 1, "m"), F("a.py", 1, "m again"),  # two findings on one statement: once
        F("a.py", 3, "m"), F("a.py", 4, "m"), F("c.py", 7, "unlabelled"),
    ]
    s = accuracy.score("c", labels, findings)
    assert (s.labelled, s.positives, s.positives_high) == (6, 4, 2)
    assert (s.findings, s.on_labelled, s.true, s.found_high) == (4, 3, 2, 1)
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(1 / 2)
    assert [(f.path, f.line, lab.label) for f, lab in s.false_positives] == [("a.py", 4, "PY")]
    assert [(lab.path, lab.line, lab.confidence) for lab in s.false_negatives] == [
        ("a.py", 2, "high"), ("b.py", 9, "med")]
    assert [(f.path, f.line) for f in s.unlabelled] == [("c.py", 7)]
    empty = accuracy.score("e", [], [])
    assert empty.precision is None and empty.recall is None
    assert "n/a (0/0)" in accuracy.markdown([empty])
    total = accuracy.pooled([s, s, empty], "all")
    assert (total.labelled, total.positives_high, total.on_labelled, total.true, total.found_high) == (12, 4, 6, 4, 2)
    assert total.precision == pytest.approx(2 / 3) and total.recall == pytest.approx(1 / 2)
    assert accuracy.markdown([s, empty]).splitlines()[-1].startswith("| **pooled** | 6 | 4 | 2 | 4 | 3 | 2 |")
    assert "pooled" not in accuracy.markdown([s])


def test_labels_in_files_the_default_exclude_skips_are_set_apart() -> None:
    """`list_candidates.py` lists `pkg/process_group_test.py`; lint-h2d's default exclude skips
    it, so its label can be neither found nor missed: it is set apart, shown, not scored."""
    L = accuracy.Label
    F = accuracy.Finding
    assert accuracy.default_excluded("pkg/process_group_test.py")
    assert accuracy.default_excluded("pkg/tests/a.py") and accuracy.default_excluded("pkg/test_a.py")
    assert not accuracy.default_excluded("pkg/contest.py") and not accuracy.default_excluded("pkg/testing/a.py")
    labels = [L("pkg/process_group_test.py", 3, "H2D", "high", "n", "c.tsv:2"),
              L("pkg/a.py", 1, "H2D", "high", "n", "c.tsv:3")]
    s = accuracy.score("c", labels, [F("pkg/a.py", 1, "m")], skipped=accuracy.default_excluded)
    assert (s.labelled, s.positives_high, s.found_high, s.recall) == (1, 1, 1, 1.0)
    assert [lab.path for lab in s.excluded] == ["pkg/process_group_test.py"]
    assert "labels in files the default exclude skips (1; not scored):" in accuracy.details(s)
    unscoped = accuracy.score("c", labels, [F("pkg/a.py", 1, "m")])
    assert (unscoped.positives_high, unscoped.found_high) == (2, 1)  # without it, a miss


def test_a_scope_limits_what_is_scored(tmp_path: Path) -> None:
    """A corpus labelled within `<corpus>.scope`: findings outside it are counted, not scored;
    a label outside it is an error naming the file."""
    L = accuracy.Label
    F = accuracy.Finding
    (tmp_path / "c.scope").write_text("# runtime folders\npkg/worker\n\npkg/sample/\npkg/cache.py\n")
    scope = accuracy.read_scope(tmp_path, "c")
    assert scope == ("pkg/worker/", "pkg/sample/", "pkg/cache.py") and accuracy.read_scope(tmp_path, "other") is None
    # A file line scopes that file, not a folder of its name.
    assert accuracy.in_scope("pkg/cache.py", scope) and not accuracy.in_scope("pkg/cache/x.py", scope)
    labels = [L("pkg/worker/a.py", 1, "H2D", "high", "n", "c.tsv:2"), L("pkg/sample/b.py", 2, "PY", "high", "n", "c.tsv:3")]
    findings = [F("pkg/worker/a.py", 1, "m"), F("pkg/models/x.py", 5, "m"), F("pkg/workers/y.py", 1, "m"),
                F("pkg/sample/b.py", 9, "m")]
    s = accuracy.score("c", labels, findings, scope)
    assert (s.findings, s.on_labelled, s.true, s.outside) == (2, 1, 1, 2)
    assert [(f.path, f.line) for f in s.unlabelled] == [("pkg/sample/b.py", 9)]
    assert "findings outside the labelled scope: 2 (not scored)" in accuracy.details(s)
    assert accuracy.score("c", labels, findings).outside == 0  # no scope: everything is scored
    accuracy.check_scope(labels, scope, "c")
    with pytest.raises(accuracy.LabelError, match="c.tsv:9: pkg/models/x.py is outside c.scope"):
        accuracy.check_scope([L("pkg/models/x.py", 5, "H2D", "high", "n", "c.tsv:9")], scope, "c")
    (tmp_path / "e.scope").write_text("# nothing\n")
    with pytest.raises(accuracy.LabelError, match="names no folder"):
        accuracy.read_scope(tmp_path, "e")


def test_bad_label_files_name_file_and_line(tmp_path: Path) -> None:
    cases = {
        "path\tline\tlabel\n": ":1: the header",
        HEADER + "a.py\tx\tH2D\thigh\tn\n": ":2: line must be a positive integer",
        HEADER + "a.py\t3\tGPU\thigh\tn\n": ":2: unknown label 'GPU'",
        HEADER + "a.py\t3\tH2D\tsure\tn\n": ":2: confidence must be",
        HEADER + "a.py\t3\tH2D\thigh\tn\na.py\t3\tPY\tlow\tn\n": ":3: a.py:3 is already labelled at",
    }
    for i, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"c{i}.tsv"
        path.write_text(text)
        with pytest.raises(accuracy.LabelError, match=message):
            accuracy.read_labels([path])
        assert str(path) in str(pytest.raises(accuracy.LabelError, accuracy.read_labels, [path]).value)


def test_end_to_end_on_a_synthetic_corpus(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:  # type: ignore[type-arg]
    root, labels = _corpus(tmp_path), _labels(tmp_path)
    assert accuracy.main(["--labels", str(labels), "--corpus", "synth-1.0", "--root", f"synth-1.0={root}",
                          "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    # The tool finds mod.py:6, mod.py:7 (a two-line statement: its first line) and other.py:6;
    # it misses the parameter write mod.py:15 and is silent on the list.
    assert "  findings: 3\n" in out and "  on labelled rows: 2\n" in out and "  true findings: 2\n" in out
    assert "  precision: 1.00\n" in out and "  recall (high): 0.50 (1/2)\n" in out
    assert "    pkg/mod.py:15  H2D/high  every caller passes a device tensor\n" in out
    assert "  findings on no labelled row (1; read them):\n    pkg/other.py:6  " in out
    assert "helper.py" not in out
    assert accuracy.main(["--labels", str(labels), "--corpus", "synth-1.0", "--root", f"synth-1.0={root}",
                          "--markdown", "--jobs", "1"]) == 0
    table = capsys.readouterr().out
    assert "| synth-1.0 | 5 | 3 | 2 | 3 | 2 | 2 | 1.00 | 0.50 (1/2) |" in table
    (labels / "synth-1.0.b.tsv").write_text(HEADER + "pkg/mod.py\t15\tH2D\tmaybe\tx\n")
    assert accuracy.main(["--labels", str(labels), "--corpus", "synth-1.0", "--root", f"synth-1.0={root}"]) == 2
    assert "synth-1.0.b.tsv:2: confidence" in capsys.readouterr().err


def test_shipped_labels_are_valid() -> None:
    """Every labels file in bench/labels parses and belongs to a corpus in corpora.toml."""
    labels = REPO / "bench" / "labels"
    corpora = accuracy.load_corpora(labels / "corpora.toml")
    owned = {p for name in corpora for p in accuracy.label_files(labels, name, corpora)}
    assert owned == set(labels.glob("*.tsv"))
    for name in corpora:
        rows = accuracy.read_labels(accuracy.label_files(labels, name, corpora))
        accuracy.check_scope(rows, accuracy.read_scope(labels, name), name)
    assert {p.name[: -len(".scope")] for p in labels.glob("*.scope")} <= set(corpora)
    vllm = accuracy.read_labels(accuracy.label_files(labels, "vllm-0.33.0", corpora))
    assert len(vllm) == 33 and {lab.label for lab in vllm} == {"H2D"}


def test_source_archives_extract_like_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus published only as a source archive (DeepSpeed) reads as a wheel would: the
    archive's top folder is dropped, only PREFIX/**/*.py is extracted, and corpora.toml says
    which kind it is (anything but wheel/sdist is refused)."""
    import io
    import tarfile

    from tests import corpus

    monkeypatch.setattr(corpus, "WHEELS", tmp_path / "wheels")
    corpus.WHEELS.mkdir()
    with tarfile.open(corpus.WHEELS / "Deep_Pkg-1.2.tar.gz", "w:gz") as tar:
        for name, data in [("deep_pkg-1.2/deep/a.py", b"x = 1\n"), ("deep_pkg-1.2/deep/sub/b.py", b"y = 2\n"),
                           ("deep_pkg-1.2/deep/c.txt", b"no"), ("deep_pkg-1.2/setup.py", b"z = 3\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive = corpus.download_sdist("deep-pkg", "1.2", skip=False)  # found in the cache, no download
    root = corpus.extract_sdist_py(archive, "deep/", tmp_path / "out")
    found = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert found == [".extracted", "deep/a.py", "deep/sub/b.py"]
    (tmp_path / "corpora.toml").write_text('["a-1"]\npypi = "a"\nversion = "1"\npackage = "a/"\nsource = "sdist"\n'
                                           '["b-1"]\npypi = "b"\nversion = "1"\npackage = "b/"\n')
    loaded = accuracy.load_corpora(tmp_path / "corpora.toml")
    assert (loaded["a-1"].source, loaded["b-1"].source) == ("sdist", "wheel")
    (tmp_path / "bad.toml").write_text('["a-1"]\npypi = "a"\nversion = "1"\npackage = "a/"\nsource = "git"\n')
    with pytest.raises(accuracy.LabelError, match="source must be"):
        accuracy.load_corpora(tmp_path / "bad.toml")
