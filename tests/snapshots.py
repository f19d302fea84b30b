"""Snapshot comparison: expected output lives next to the fixture; `--update-snapshots` rewrites it."""
from __future__ import annotations

from pathlib import Path


def compare(actual: str, expected_file: Path, update: bool) -> None:
    if update:
        expected_file.write_text(actual, encoding="utf-8", newline="")
        return
    assert expected_file.exists(), f"{expected_file} is missing: run pytest --update-snapshots and review it"
    expected = expected_file.read_text(encoding="utf-8")
    assert actual == expected, (
        f"output differs from {expected_file.name}; if the change is intended, run "
        "`pytest --update-snapshots` and review the diff"
    )
