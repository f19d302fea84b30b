"""`verify` must be able to catch wrong rewrites (issues #15, #16, #17): bounds, index kinds,
dtype limits, evaluation order, line breaks, and the same fixes as `check --fix --unsafe-fixes`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from lint_h2d.verify import run  # noqa: E402

NO_DEVICE = run.Levels(fake_cuda=None, fake_cuda_reason="not wanted in this test", gpu=False)


def rows_for(path: Path) -> list:
    pairs, _ = run.file_pairs([str(path)])
    return run.pair_rows(pairs, NO_DEVICE)


# -- issue 15 item 20: CR-only files -----------------------------------------------------------

@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_verify_reads_every_line_ending(tmp_path: Path, newline: str) -> None:
    text = newline.join([
        "import torch",
        'def f(n: int):',
        '    t = torch.zeros(n + 4, device="cuda")',
        "    t[n] = (1 +",
        "            2)",
        "    return t",
        "",
    ])
    path = tmp_path / "m.py"
    path.write_bytes(text.encode())
    rows = rows_for(path)
    assert rows, "the finding has a fix to verify"
    assert all("does not parse" not in r.detail for r in rows), [r.detail for r in rows]
