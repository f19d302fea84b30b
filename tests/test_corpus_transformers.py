"""Real corpus (issue #8): a pinned `transformers` wheel, fixed with `--unsafe-fixes`.

The wheel is downloaded once to ~/.cache/lint-h2d (skips cleanly without network), its
sources are copied to a temp dir, and `lint-h2d check --fix --unsafe-fixes --show-fixes
--no-cache` runs on the copy as a subprocess (the fixes it lists and the findings it leaves are
the findings).  Asserted: no internal error (a genuine syntax error of the corpus is reported in
the failure text, not hidden); every written file parses (LibCST, `ast`) and
compiles; a second run changes nothing; files without findings are byte-identical; in fixed
files only the fix sites and inserted imports differ (see `tests.corpus.unexpected_changes`).

Scope: the full tree (2,912 files) takes ~7 minutes on 2 cores with the current engine (LibCST
parse + positions dominate), so CI checks `transformers/models/*/modeling_*.py` plus the
top-level modules (~600 files, the torch-heaviest code, ~2-3 minutes).
`scripts/corpus_check.py --transformers-full` runs the whole tree.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.corpus import check_corpus, corpus_tree

TRANSFORMERS_VERSION = "5.24.0"

pytestmark = [pytest.mark.network, pytest.mark.slow]


def transformers_subset(root: Path) -> list:
    package = root / "transformers"
    paths = sorted(package.glob("models/*/modeling_*.py")) + sorted(package.glob("*.py"))
    return [p.relative_to(root).as_posix() for p in paths]


def test_transformers_fix_is_safe(tmp_path: Path) -> None:
    root = corpus_tree("transformers", TRANSFORMERS_VERSION, "transformers")
    paths = transformers_subset(root)
    assert len(paths) > 400, f"unexpected wheel layout: {len(paths)} files"
    report = check_corpus("transformers", root, tmp_path / "corpus", REPO, paths=paths, jobs=2)
    assert report.files == len(paths)
    assert not report.errors, "\n".join(report.errors[:40])
    # Genuine syntax errors in the corpus would show up here; transformers has none.
    assert not report.syntax_errors, "syntax errors in the corpus:\n" + "\n".join(report.syntax_errors)
    assert report.fixes <= report.findings
    # Some fixes were applied and checked (14 findings, all fixed, in 7 files at 5.24.0): a run
    # whose output nothing here could read would otherwise pass having checked nothing.
    assert report.fixes > 0 and report.changed > 0, (report.findings, report.fixes, report.changed)
