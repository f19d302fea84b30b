"""The vocabulary shared by rules, the engine, reporters, fixers' callers and the verifier."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Tuple

if TYPE_CHECKING:  # fixers.pipeline imports LibCST; reading findings from the cache must not
    from fixers.edits import TextEdit
    from fixers.pipeline import Rewrite


class Applicability(str, enum.Enum):
    """ruff's meaning: a safe fix keeps behaviour for every input; an unsafe one may not."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: Tuple[TextEdit, ...]
    # The statement rewrite as the fix pipeline sees it (`fixers/pipeline.py`): the fix loop
    # groups adjacent ones under one gate.  None for fixes that do not take part (H2D002).
    rewrite: Optional[Rewrite] = None


@dataclass(frozen=True)
class Location:
    """1-based row, 1-based column (ruff's JSON convention)."""

    row: int
    column: int


class EvidenceKind(str, enum.Enum):
    """How strong one step of a finding's evidence is.

    Direct evidence about the object at hand (an allocation with `device=`, a move, a typed
    field whose `__init__` allocates on the device) beats a convention (`.gpu` buffers, fields
    with a `_cpu` sibling); a project's own `device-hints` / `cpu-hints` are hints.  A finding
    that rests on a convention or a hint alone gets an unsafe fix at most.
    """

    DIRECT = "direct"
    CONVENTION = "convention"
    HINT = "hint"


def evidence_file_name(path: str) -> str:
    """How evidence words name a file: its last path component (`utils.py` in `utils.py:12`),
    either slash.  One function, because `moved_lines` finds these words by this name to carry
    them to an edited file's new lines: a writer that spelled it otherwise would leave stale
    lines in evidence unnoticed."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class EvidenceStep:
    """One step of the chain that convinced a rule, with where it was seen.

    `path` is None for the finding's own file.  Reporters show the chain as notes (full),
    a field (JSON) and related locations / code flows (SARIF), so that a reviewer can check a
    cross-file finding without opening every file it rests on.
    """

    message: str
    path: Optional[str] = None
    row: Optional[int] = None
    column: Optional[int] = None
    kind: EvidenceKind = EvidenceKind.DIRECT


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    path: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    # Why no fix is offered (shown as a hint); None when a fix exists or none is meant to.
    no_fix_reason: Optional[str] = None
    # The row a `# noqa` for this finding must sit on (first row of the statement).
    noqa_row: Optional[int] = None
    # Extra facts a rule records for downstream consumers (e.g. the verifier): kept small.
    details: Tuple[Tuple[str, str], ...] = field(default_factory=tuple)
    # Why the rule believes it (where the tensor was put on the device, how it reached the
    # statement, why the index is an integer and the value a host scalar), in order.
    evidence: Tuple[EvidenceStep, ...] = field(default_factory=tuple)

    def fix_applies(self, unsafe_fixes: bool) -> bool:
        """Whether `--fix` (with `--unsafe-fixes` or not) would apply this finding's fix."""
        return self.fix is not None and (
            self.fix.applicability == Applicability.SAFE or unsafe_fixes
        )

    def sort_key(self) -> Tuple[str, int, int, str]:
        return (self.path, self.location.row, self.location.column, self.code)
