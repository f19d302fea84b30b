"""Resolved facts reused after an edit that only moved lines (issue 12).

Almost every edit moves lines: a comment or blank line added, a body changed in a way no
summary records.  Summaries record each fact's line, so such an edit changed the file's facts
and the whole project was resolved again (8 s of CPU on vLLM) although nothing but line
numbers differed.  This module proves that an edited file's new summary is its old one with
its lines renumbered (`line_map`), and carries the stored resolved facts over to the new
lines (`remap_facts`).

Why that is the facts a full resolve would give.  `project.resolve` uses a summary's lines
only as data: it copies them into its output (an `EvidenceStep`'s row, `Resolved.classes`,
`Resolved.construction_calls`, and evidence words naming `file.py:N` or `line N`), compares
them for equality (memo keys, `seen` sets, a loader's call looked up by its line) and sorts
call sites by (path, line) within the project.  It does no arithmetic on them and never
orders the lines of two files against each other.  So when the new summary is the old one
under a bijection of the file's lines that keeps their order, resolving the new summaries
gives the old output with that bijection applied wherever the file's lines occur.

Which numbers of a summary are lines is found, not listed: the new text's tree is summarized
a second time with every line shifted by `SHIFT` (`ast.increment_lineno`); the numbers (and
the digit runs of strings: `... at line 12`) that moved by exactly `SHIFT` are lines, every
other part must equal the old summary's.  Anything else, and anything in the resolved facts
this module cannot attribute to a file for sure, raises `Unmappable`: the caller resolves the
project instead (correctness over speed).
"""
from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Set, Tuple

from lint_h2d.findings import EvidenceStep, evidence_file_name
from lint_h2d.inference.values import HostMemory, Value

if TYPE_CHECKING:
    from lint_h2d.inference.project import ProjectFacts

# Added to every line of the second summary: more lines than any source file has, so a number
# that moved by exactly this much is a line.
SHIFT = 10_000_000
_DIGITS = re.compile(r"(\d+)")
# `line 12` in evidence words: a line of the step's own file (`project._Resolver._call_site`,
# the `inside with torch.device(...) at line 12` of a summary's allocation).
_LINE_WORDS = re.compile(r"\bline (\d+)")


class Unmappable(Exception):
    """The edit changed more than line numbers, or the resolved facts hold a line this module
    cannot attribute: the project must be resolved again."""


@dataclass(frozen=True)
class FileMove:
    """One edited file's old lines → new lines (every line its old summary holds), and its name
    as evidence words show it (`findings.evidence_file_name`).  `texts`: the old summary's
    strings that hold a line (`... at line 12`)."""

    path: str
    lines: Mapping[int, int]
    short: str
    texts: FrozenSet[str] = frozenset()

    def moved(self) -> FrozenSet[int]:
        """The old lines that changed."""
        return frozenset(old for old, new in self.lines.items() if old != new)


def shifted_summary(path: str, data: bytes) -> Any:
    """The JSON of the summary of `data` (a file's bytes) with every line `SHIFT` further
    down, or None when the text does not parse (its summary is empty: no lines to map)."""
    from lint_h2d.inference.summary import summarize_tree
    from lint_h2d.parse_chunks import parse_python

    text = data.decode("utf-8", errors="replace")  # as `project_index.file_facts`
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    ast.increment_lineno(tree, SHIFT)
    return summarize_tree(path, tree).to_json()


def line_map(old: Any, new: Any, shifted: Any) -> Tuple[Dict[int, int], FrozenSet[str]]:
    """The bijection of lines that turns the `old` summary JSON into `new`, where `shifted` is
    `new`'s text summarized with its lines moved by `SHIFT` (`shifted_summary`): old line →
    new line, and the old strings that hold lines.  Raises `Unmappable` unless the two are
    equal but for lines, the map is one-to-one, and it keeps the lines' order."""
    pairs: Dict[int, int] = {}
    texts: List[str] = []
    _walk(old, new, shifted, pairs, texts)
    ordered = sorted(pairs.items())
    if any(a[1] >= b[1] for a, b in zip(ordered, ordered[1:])):
        raise Unmappable("the edit reorders or merges lines")
    return pairs, frozenset(texts)


def _walk(old: Any, new: Any, shifted: Any, pairs: Dict[int, int], texts: List[str]) -> None:
    if isinstance(new, (list, tuple)):
        if not (isinstance(old, (list, tuple)) and isinstance(shifted, (list, tuple))
                and len(old) == len(new) == len(shifted)):
            raise Unmappable("shape")
        for a, b, c in zip(old, new, shifted):
            _walk(a, b, c, pairs, texts)
    elif isinstance(new, dict):
        if not (isinstance(old, dict) and isinstance(shifted, dict) and old.keys() == new.keys() == shifted.keys()):
            raise Unmappable("keys")
        for key in new:
            _walk(old[key], new[key], shifted[key], pairs, texts)
    elif type(new) is int:
        if type(old) is not int or type(shifted) is not int:
            raise Unmappable("type")
        if shifted == new:
            if old != new:
                raise Unmappable("a number other than a line changed")
        elif shifted - new == SHIFT:
            _pair(pairs, old, new)
        else:
            raise Unmappable("a number moved by other than the shift")
    elif isinstance(new, str):
        if not (isinstance(old, str) and isinstance(shifted, str)):
            raise Unmappable("type")
        if shifted == new:
            if old != new:
                raise Unmappable("a string changed")
            if "line " in new and _LINE_WORDS.search(new):
                raise Unmappable("`line N` words that are no line")  # (`_Remap._words` would map them)
            return
        parts = [_DIGITS.split(s) for s in (old, new, shifted)]
        if not len(parts[0]) == len(parts[1]) == len(parts[2]):
            raise Unmappable("a string changed")
        for i, (a, b, c) in enumerate(zip(*parts)):
            if i % 2 == 0 or b == c:  # text between digit runs, or a number that is no line
                if not a == b == c or i % 2 and parts[1][i - 1].endswith("line "):
                    raise Unmappable("a string changed, or `line N` words that are no line")
            elif int(c) - int(b) == SHIFT and parts[1][i - 1].endswith("line ") and b[0] != "0" != a[0]:
                _pair(pairs, int(a), int(b))
            else:
                raise Unmappable("a line in a string not said as `line N`")
        texts.append(old)
    elif old != new or shifted != new or type(old) is not type(new):
        raise Unmappable("a value changed")


def _pair(pairs: Dict[int, int], old: int, new: int) -> None:
    if pairs.setdefault(old, new) != new:
        raise Unmappable("one old line became two")


# -- the resolved facts, carried over to the new lines ------------------------------------------


def remap_facts(facts: "ProjectFacts", moves: Mapping[str, FileMove]) -> "ProjectFacts":
    """`facts` (a `ProjectFacts`) with every line of each moved file replaced by its new line.
    Raises `Unmappable` where a line of a moved file cannot be told for sure.

    The fingerprint (the findings cache's key) is `carried_fingerprint`'s, not made again
    from every value (`project.fingerprint_of`, ~0.2 s on vLLM, a sixth of the pre-commit run
    of an edited file): the new facts are a function of the old ones and the moves."""
    from lint_h2d.inference.project import ProjectFacts

    if not isinstance(facts, ProjectFacts):
        raise Unmappable("not resolved facts")
    module = facts.module_facts
    resolved = _Remap(moves, module.resolved.site_words).resolved(module.resolved)
    if resolved is module.resolved:
        return facts  # no line of a moved file is in them: the same facts, the same key
    return ProjectFacts(replace(module, resolved=resolved), carried_fingerprint(facts.fingerprint, moves))


class _EveryLine(Mapping[int, int]):
    """Every line of a file to 0, as a `FileMove.lines`: the facts with that file's lines
    erased (`same_but_lines`).  Iterates one line that moved, so the move counts
    (`FileMove.moved`)."""

    def __getitem__(self, line: int) -> int:
        return 0

    def __contains__(self, line: object) -> bool:
        return True

    def __iter__(self) -> Iterator[int]:
        return iter((1,))

    def __len__(self) -> int:
        return 1


def same_but_lines(old: "ProjectFacts", new: "ProjectFacts", paths: Iterable[str]) -> bool:
    """Whether `new` (facts just resolved after an edit of `paths`) says what `old` (the facts
    resolved before it) says, but for lines of those files: equal once every line of theirs
    is erased (rows, class definitions, `name.py:N` and `line N` words), every other part of
    every value compared.

    Why: an edit that adds a call of a function the project does not define (or any change a
    summary records and the resolve then ignores) changes the file's facts, so the project is
    resolved again; the result is the old facts with the file's lines moved.  A file whose
    findings name none of `paths` has the same findings under both (the analysis copies
    facts' lines into evidence, nothing more: `cache.Cache`), so its cached findings are
    still right.  Anything this cannot erase for sure (`Unmappable`) is False."""
    if old.module_facts.class_fields != new.module_facts.class_fields:
        return False
    moves = {path: FileMove(path, _EveryLine(), evidence_file_name(path)) for path in paths}
    try:
        before = _Remap(moves, old.module_facts.resolved.site_words).resolved(old.module_facts.resolved)
        after = _Remap(moves, new.module_facts.resolved.site_words).resolved(new.module_facts.resolved)
    except Unmappable:
        return False
    return bool(before == after)


def carried_fingerprint(fingerprint: str, moves: Mapping[str, FileMove]) -> str:
    """The fingerprint of facts carried from the facts of `fingerprint` by `moves`: a digest
    of both, so different facts never share one (equal facts reached by another way, a
    resolve, get another one: a findings cache of their own, never a wrong one)."""
    described = repr(sorted((path, sorted(move.lines.items()), move.short, sorted(move.texts))
                            for path, move in moves.items() if move.moved()))
    digest = hashlib.sha256(f"{fingerprint}|{described}".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


class _Remap:
    """One pass over the resolved facts' objects, each shared object rebuilt once (`memo`)."""

    def __init__(self, moves: Mapping[str, FileMove], sites: Mapping[str, FrozenSet[Tuple[str, int]]]) -> None:
        self.moves = {path: move for path, move in moves.items() if move.moved()}
        # By the id of an object of the stored facts (all alive while they are remapped).
        self.memo: Dict[int, Any] = {}
        # Which files' lines the words `name.py:N` were written for (`Resolved.site_words`).
        self.sites = sites
        # Evidence naming a moved file by its short name (`name.py:12`): one pattern for all
        # of them, so words already made new are not read again (two moved `utils.py`).
        shorts = sorted({m.short for m in self.moves.values()})
        self.shorts = shorts
        self.named = re.compile(r"(?<![\w./\\-])(" + "|".join(map(re.escape, shorts)) + r"):(\d+)")
        # What a step's words must hold to be made new or refused (`_words`): a moved file's
        # short name or one of its old summary strings.  Tested on each of the ~20,000 steps.
        self.probes = tuple(sorted({*shorts, *(text for m in self.moves.values() for text in m.texts)}))

    def resolved(self, resolved: Any) -> Any:
        from lint_h2d.inference.resolved import Resolved

        if not isinstance(resolved, Resolved):
            raise Unmappable("not resolved facts")
        if not self.moves:
            return resolved
        changes: Dict[str, Any] = {}
        for field in fields(resolved):
            value = getattr(resolved, field.name)
            new: Any
            if field.name == "classes":
                new = {name: self._where(where) for name, where in value.items()}
            elif field.name == "construction_calls":
                new = {name: tuple((m, b, *self._where((p, line))) for m, b, p, line in calls)
                       for name, calls in value.items()}
            elif field.name in _WITH_STEPS:
                new = self.value(value)
            elif field.name == "site_words":
                new = self._sites(value)
            elif field.name in _NAMES_ONLY:
                continue
            else:
                raise Unmappable(f"a field this module does not know: {field.name}")
            if new is not value and new != value:
                changes[field.name] = new
        return _rebuilt(resolved, changes) if changes else resolved

    def _where(self, where: Tuple[str, int]) -> Tuple[str, int]:
        path, line = where
        move = self.moves.get(path)
        if move is None:
            return where
        if line not in move.lines:
            raise Unmappable("a line the summary does not hold")
        return (path, move.lines[line])

    def value(self, obj: Any) -> Any:
        """`obj` with its evidence steps remapped (the same object when nothing changed).

        Every value of the resolved facts is visited (30,000 on vLLM, with 18,000 steps), so
        the common classes are tested by exact type and a value's parts read from its
        `__dict__`: only those that can hold a step (`_VALUE_PARTS`)."""
        cls = type(obj)
        if obj is None or cls is str or cls is int or cls is bool or cls is float:
            return obj
        key = id(obj)
        found = self.memo.get(key)
        if found is not None:
            return found
        made: Any
        if cls is Value:
            state = obj.__dict__
            changes = None
            for name in _VALUE_PARTS:
                part = state[name]
                if part is None or part == ():
                    continue
                new = self.value(part)
                if new is not part:
                    if changes is None:
                        changes = {}
                    changes[name] = new
            made = _rebuilt(obj, changes) if changes else obj
        elif cls is EvidenceStep:
            made = self._step(obj)
        elif cls is tuple:
            made = self._tuple(obj)
        elif cls is dict:
            made = self._dict(obj)
        elif isinstance(obj, Enum):
            return obj
        elif cls is frozenset:
            if any(not isinstance(o, (str, tuple)) for o in obj):
                raise Unmappable("a set of objects")
            made = obj  # names (and pairs of names)
        elif cls is HostMemory:
            if obj.node is not None:
                raise Unmappable("a host memory with a node")
            evidence = self.value(obj.evidence)
            made = obj if evidence is obj.evidence else _rebuilt(obj, {"evidence": evidence})
        else:
            raise Unmappable(f"an object of {cls.__name__}")
        self.memo[key] = made
        return made

    def _tuple(self, obj: Tuple[Any, ...]) -> Tuple[Any, ...]:
        """`obj` with its items remapped, or `obj` itself when none changed (built only from
        the first item that did: most tuples, evidence included, hold no moved line)."""
        value = self.value
        for i, item in enumerate(obj):
            new = value(item)
            if new is not item:
                return (*obj[:i], new, *[value(o) for o in obj[i + 1:]])
        return obj

    def _dict(self, obj: Dict[Any, Any]) -> Dict[Any, Any]:
        """`obj` with its values remapped, or `obj` itself when none changed."""
        value = self.value
        changed: Optional[Dict[Any, Any]] = None
        for key, item in obj.items():
            new = value(item)
            if new is not item:
                if changed is None:
                    changed = {}
                changed[key] = new
        if changed is None:
            return obj
        return {key: changed.get(key, item) for key, item in obj.items()}

    def _sites(self, sites: Mapping[str, FrozenSet[Tuple[str, int]]]) -> Mapping[str, FrozenSet[Tuple[str, int]]]:
        """The word table as resolving the new summaries writes it: each pair of a moved file
        at its new line, under the words that name that line."""
        if not any(p in self.moves for pairs in sites.values() for p, _ in pairs):
            return sites
        out: Dict[str, Set[Tuple[str, int]]] = {}
        for word, pairs in sites.items():
            for path, line in pairs:
                move = self.moves.get(path)
                if move is None:
                    out.setdefault(word, set()).add((path, line))
                else:
                    new = _new_line(move, line)
                    out.setdefault(f"{move.short}:{new}", set()).add((path, new))
        return {word: frozenset(pairs) for word, pairs in sorted(out.items())}

    def _named_line(self, match: "re.Match[str]") -> str:
        """`name.py:N` as resolving the new summaries writes it: the words name the lines the
        resolver wrote them for (`Resolved.site_words`), each of a moved file now at its new
        line.  Where these differ (one words for a moved line of the edited file and for line
        N of another file of its name), or no pair is known for a moved line, raises
        `Unmappable`."""
        word, short, line = match.group(0), match.group(1), int(match.group(2))
        pairs = self.sites.get(word)
        if pairs is None:
            if any(m.short == short and m.lines.get(line, line) != line for m in self.moves.values()):
                raise Unmappable(f"`{word}`, a moved line, in words the resolver did not record")
            return word  # no line of a moved file: words of the summaries (the same after the edit)
        new = {line if path not in self.moves else _new_line(self.moves[path], line) for path, _ in pairs}
        if len(new) != 1:
            raise Unmappable(f"`{word}` names a moved line and a line of another file of that name")
        (found,) = new
        return word if found == line else f"{short}:{found}"

    def _step(self, step: EvidenceStep) -> EvidenceStep:
        own = self.moves.get(step.path) if step.path is not None else None
        if own is None and not self._may_name(step.message):
            return step  # (`_words` would leave it as it is: nothing of a moved file in it)
        row = step.row
        if own is not None and row is not None:
            if step.column is not None or row not in own.lines:
                raise Unmappable("a step's row the summary does not hold")
            row = own.lines[row]
        message = self._words(step.message, own, step.path)
        if row == step.row and message == step.message:
            return step
        return EvidenceStep(message, step.path, row, step.column, step.kind)

    def _may_name(self, message: str) -> bool:
        """Whether `message` holds a moved file's short name or an old summary string of one
        (`probes`): else `_words` of another file's step gives it back unchanged."""
        for probe in self.probes:
            if probe in message:
                return True
        return False

    def _words(self, message: str, own: Optional[FileMove], path: Optional[str]) -> str:
        """Evidence words with the moved files' lines they name made new: `line N` in a step
        of a moved file (its own line), and `name.py:N` written for a moved file's line
        (`_named_line`).  Words written for a moved line and another file's line alike, or an
        old summary string with a line in another file's step, raise `Unmappable`."""
        if own is not None and "line " in message:
            message = _LINE_WORDS.sub(lambda m: "line " + str(_new_line(own, int(m.group(1)))), message)
        if any(short in message for short in self.shorts):
            message = self.named.sub(self._named_line, message)
        for move in self.moves.values():
            if move is not own and any(text in message for text in move.texts):
                raise Unmappable("a moved file's words in another file's step")
        return message


def _new_line(move: FileMove, line: int) -> int:
    new = move.lines.get(line)
    if new is None:
        raise Unmappable("a line the summary does not hold")
    return new


def _rebuilt(obj: Any, changes: Mapping[str, Any]) -> Any:
    """A copy of the frozen dataclass `obj` with `changes`, its other state as it is (as
    `Value.because` copies: no `__init__` to run again)."""
    made = object.__new__(type(obj))
    made.__dict__.update(obj.__dict__)
    made.__dict__.update(changes)
    return made


# The fields of a `Value` that may hold an evidence step (the others are numbers, names and
# enums: `test_moved_lines` checks the split against the dataclass).
_VALUE_PARTS = ("evidence", "element", "items", "memory", "key", "returns", "entries")
# `Resolved` fields that hold only names (no value, no step, no line): left as they are.
_NAMES_ONLY = frozenset({"bases", "passed_non_numbers", "device_names", "modules", "through", "module_names",
                         "split_returns", "empty_lists", "read_callees", "enums", "reexports"})
# `Resolved` fields of values and steps (walked by `_Remap.value`).
_WITH_STEPS = frozenset({"fields", "returns", "params", "int_params", "forwards", "built_on_device", "moved",
                         "constants", "passed_given", "own_returns"})
