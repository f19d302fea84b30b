"""The shapes a function's docstring gives its tensor parameters, read as their ranks.

Why: research and serving code documents a tensor parameter's shape where Python cannot say it,
in the docstring's argument list (LoFTR's loss: ``conf_gt (torch.Tensor): (N, HW0, HW1)``,
``expec_f (torch.Tensor): [M, 3] <x, y, std>``).  A write ``mask[0, 0, 0] = True`` into a
device tensor copies one element only when the tensor has exactly as many dimensions as there
are integer indices; where no allocation or call in the project says the rank, the author's own
words are the evidence there is (each fact says so in its message, with the docstring's line).

Read, on one line of the docstring: the parameter's name, an optional parenthesised type
(``(torch.Tensor)``, ``(Tensor, optional)``), a colon, then right after it (optionally after
``shape``, ``of shape``, ``tensor of shape``, ``a torch.Tensor of size``) one bracketed group
``(N, C, H)`` / ``[B, T]`` of comma-separated dimensions: names, integers, or arithmetic of them
(``HW0+1``, ``2*C``; ``...`` nowhere).  Or, anywhere in the argument's description (that line
and the more indented lines after it, numpy's ``overlaps : Tensor`` style included), the word
``shape`` right before such a group: mmdet's ``Overlaps between k gt_bboxes and n bboxes,
shape(k, n).``.  Nothing else counts: a group of one dimension only with a trailing comma
(``(N,)``) or after ``shape``/``size`` (``(optional)`` is no shape), a group holding ``...`` or
words with spaces is no shape, and a parameter the docstring gives two different ranks gets none.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Tuple

# One line of an argument list: the name, an optional `(type)`, a colon, the description.
_ARGUMENT = re.compile(r"^\s*\**(?P<name>[A-Za-z_]\w*)\s*(?:\((?P<type>[^()]*)\))?\s*:\s*(?P<rest>.*)$")
# What may stand between the colon and the group: "shape", "a tensor of shape", "Tensor of size".
_LEAD = re.compile(
    r"^(?:(?:an?\s+)?(?:torch\.)?(?:tensor|Tensor|FloatTensor|LongTensor|BoolTensor|IntTensor)\s+)?"
    r"(?:(?:of|with)\s+)?(?P<said>(?:shape|size)\s*[:=]?\s*)?")
# A bracketed group with no nested brackets of its kind.
_GROUP = re.compile(r"^(?:\((?P<round>[^()]*)\)|\[(?P<square>[^\[\]]*)\])")
# One dimension: a name or an integer, or arithmetic of them (`HW0+1`, `2*C`, `L // 2`).
_OPERAND = r"(?:[A-Za-z_]\w*|\d+)"
_DIMENSION = re.compile(rf"^\s*{_OPERAND}(?:\s*(?:[-+*]|//|/)\s*{_OPERAND})*\s*$")


@dataclass(frozen=True)
class DocumentedRank:
    """A parameter's rank as its function's docstring gives it."""

    rank: int
    shape: str  # the group as written (`(N, HW0, HW1)`)
    line: int  # the docstring's line (0-based) that says it
    # The parenthesised type names a tensor (`(torch.Tensor)`, `(Tensor, optional)`,
    # `(torch.LongTensor)`): the docstring says the parameter is one, not only its shape.
    tensor: bool = False


def _rank_of(rest: str) -> Optional[Tuple[int, str]]:
    """(rank, group as written) of the shape group that opens ``rest``, or None."""
    lead = _LEAD.match(rest)
    assert lead is not None  # every part of it is optional
    tail = rest[lead.end():]
    group = _GROUP.match(tail)
    if group is None:
        return None
    inner = group.group("round") if group.group("round") is not None else group.group("square")
    parts = inner.split(",")
    trailing_comma = len(parts) > 1 and parts[-1].strip() == ""
    if trailing_comma:
        parts = parts[:-1]
    if not parts or not all(_DIMENSION.match(p) for p in parts):
        return None
    if len(parts) == 1 and not trailing_comma and not lead.group("said"):
        return None  # `(optional)`, `[default]`: one word is no shape unless said to be one
    return len(parts), group.group(0)


# `shape` right before a group, anywhere in a description (`..., shape(k, n).`, `with shape [B, T]`).
_SHAPE_WORD = re.compile(r"\bshape\b\s*[:=]?\s*(?=[(\[])")


# A parenthesised type naming a tensor: `Tensor`, `torch.Tensor`, `torch.FloatTensor`, `LongTensor`.
_TENSOR_TYPE = re.compile(r"^\s*(?:torch\.)?(?:Float|Long|Bool|Int|Byte|Half|Double)?Tensor\b")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def documented_ranks(docstring: Optional[str], params: Iterable[str]) -> Dict[str, DocumentedRank]:
    """The ranks ``docstring`` gives the parameters named ``params`` (see the module doc)."""
    if not docstring:
        return {}
    wanted = set(params)
    lines = docstring.splitlines()
    found: Dict[str, DocumentedRank] = {}
    clashing = set()
    for number, line in enumerate(lines):
        match = _ARGUMENT.match(line)
        if match is None or match.group("name") not in wanted:
            continue
        name = match.group("name")
        ranks = []
        opening = _rank_of(match.group("rest"))
        if opening is not None:
            ranks.append(opening)
        description = [match.group("rest")]
        for more in lines[number + 1:]:
            if not more.strip() or _indent(more) <= _indent(line):
                break
            description.append(more.strip())
        text = " ".join(description)
        for word in _SHAPE_WORD.finditer(text):
            said = _rank_of("shape " + text[word.end():])
            if said is not None:
                ranks.append(said)
        typed = _TENSOR_TYPE.search(match.group("type") or "") is not None
        for rank, shape in ranks:
            known = found.get(name)
            if known is not None and known.rank != rank:
                clashing.add(name)
            found.setdefault(name, DocumentedRank(rank, shape, number, typed))
    return {name: rank for name, rank in found.items() if name not in clashing}
