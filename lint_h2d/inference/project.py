"""Cheap cross-file facts: which classes declare both `x` and `x_cpu`.

vLLM keeps device tensors and their host copies side by side (`query_start_loc` and
`query_start_loc_cpu` in `CommonAttentionMetadata`).  Knowing the pair tells us `x` is the
device one wherever the object is used, in any file.  Parsing the whole tree to learn this
would cost more than the scan itself, so it is read off the text with a line scanner; it only
needs to be right about field names, never about code structure.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, Mapping, Set, Tuple

from fixers.edits import split_lines
from lint_h2d.inference.scope import ModuleFacts

_CLASS = re.compile(r"^([ \t]*)class[ \t]+([A-Za-z_]\w*)")
_FIELD = re.compile(r"^([ \t]+)([A-Za-z_]\w*)[ \t]*:[^=\n]")
_SELF_ATTR = re.compile(r"^[ \t]+self\.([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")


def class_fields_in(text: str) -> Dict[str, FrozenSet[str]]:
    """Field names of every class in `text` that has at least one `*_cpu` field."""
    if "_cpu" not in text:
        return {}
    found: Dict[str, Set[str]] = {}
    stack: list[Tuple[int, str]] = []  # (indent of the class line, class name)
    for line in split_lines(text):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        while stack and indent <= stack[-1][0]:
            stack.pop()
        m = _CLASS.match(line)
        if m:
            stack.append((indent, m.group(2)))
            found.setdefault(m.group(2), set())
            continue
        if not stack:
            continue
        owner = stack[-1][1]
        f = _FIELD.match(line)
        if f and not stripped.startswith(("def ", "return", "lambda")):
            found[owner].add(f.group(2))
            continue
        s = _SELF_ATTR.match(line)
        if s:
            found[owner].add(s.group(1))
    return {
        name: frozenset(fields)
        for name, fields in found.items()
        if any(f.endswith("_cpu") for f in fields)
    }


@dataclass(frozen=True)
class ProjectFacts:
    module_facts: ModuleFacts
    fingerprint: str


def class_fields_of(texts: Iterable[str]) -> Dict[str, FrozenSet[str]]:
    classes: Dict[str, FrozenSet[str]] = {}
    for text in texts:
        for name, fields in class_fields_in(text).items():
            classes[name] = classes.get(name, frozenset()) | fields
    return classes


def collect(texts: Iterable[str]) -> ProjectFacts:
    return from_classes(class_fields_of(texts))


def from_classes(classes: Mapping[str, FrozenSet[str]]) -> ProjectFacts:
    device_fields = frozenset(
        f for fields in classes.values() for f in fields if f + "_cpu" in fields
    )
    digest = hashlib.sha256()
    for name in sorted(classes):
        digest.update(name.encode())
        digest.update(",".join(sorted(classes[name])).encode())
    return ProjectFacts(ModuleFacts(dict(classes), device_fields), digest.hexdigest()[:16])
