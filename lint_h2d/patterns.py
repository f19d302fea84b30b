"""gitignore patterns, read the way git reads them (`git help gitignore`, git's wildmatch).

Every glob lint-h2d reads — `.gitignore` lines, `exclude`, `extend-exclude`, `include` and
`per-file-ignores` keys — means what it means to git, so a pattern copied from a
`.gitignore` selects the same files in the configuration:

- a pattern without a slash (a trailing one aside) matches a name at any depth; with one it is
  relative to the folder it belongs to (the `.gitignore`'s, or the project root's);
- `*`, `?` and `[...]` never match `/`; `**` matches across folders only as a whole path
  component (`**/x`, `x/**`, `a/**/b`); elsewhere it is `*`;
- `[!...]` and `[^...]` negate a class; `]` right after `[` (or `[!`) is a literal;
  `[:alpha:]` and git's other POSIX classes work; `\\` escapes the next character;
- a trailing `/` matches folders only; a leading `!` re-includes.

A pattern git would never match (an unterminated `[`, an unknown `[:class:]`) or one with an
empty range (`[z-a]`) is reported as bad: the caller says which file and line, and the scan
goes on without it (git, too, ignores it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Pattern, Sequence, Tuple

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9A-Fa-f",
}
_NEVER = "(?!)"


class BadPattern(ValueError):
    """A glob git would not match anything with; the message says why."""


def _class_char(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else c


def _bracket(pattern: str, i: int) -> Tuple[str, int]:
    """Translate the class starting at `pattern[i] == '['`; returns (regex, index after `]`)."""
    j = i + 1
    negated = j < len(pattern) and pattern[j] in "!^"
    if negated:
        j += 1
    items: List[str] = []
    empty_range = False
    first = True
    while True:
        if j >= len(pattern):
            raise BadPattern("unterminated character class `[`")
        c = pattern[j]
        if c == "]" and not first:
            j += 1
            break
        first = False
        if c == "[" and pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            if end == -1:
                raise BadPattern("unterminated character class `[:`")
            name = pattern[j + 2 : end]
            if name not in _POSIX_CLASSES:
                raise BadPattern(f"unknown character class `[:{name}:]`")
            items.append(_POSIX_CLASSES[name])
            j = end + 2
            continue
        if c == "\\":
            j += 1
            if j >= len(pattern):
                raise BadPattern("unterminated character class `[`")
            c = pattern[j]
        lo = c
        j += 1
        if j + 1 < len(pattern) and pattern[j] == "-" and pattern[j + 1] != "]":
            hi = pattern[j + 1]
            j += 2
            if hi == "\\":
                if j >= len(pattern):
                    raise BadPattern("unterminated character class `[`")
                hi = pattern[j]
                j += 1
            if hi < lo:
                empty_range = True  # git: matches nothing; reported, since it is surely a mistake
                continue
            items.append(f"{_class_char(lo)}-{_class_char(hi)}")
        else:
            items.append(_class_char(lo))
    if empty_range:
        raise BadPattern(f"empty range in character class `{pattern[i:j]}`")
    body = "".join(items)
    if negated:
        return f"[^/{body}]", j
    return (f"(?!/)[{body}]" if body else _NEVER), j


def _regex(glob: str) -> str:
    """The body of a regex for a git wildmatch glob with WM_PATHNAME."""
    out: List[str] = []
    i = 0
    n = len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            whole_component = (i == 0 or glob[i - 1] == "/") and (j == n or glob[j] == "/")
            if j - i >= 2 and whole_component:
                if j == n:
                    out.append(".*")
                    i = j
                else:  # `**/`: zero or more folders
                    out.append("(?:.*/)?")
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            part, i = _bracket(glob, i)
            out.append(part)
        elif c == "\\":
            if i + 1 >= n:
                raise BadPattern("trailing backslash")
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class GitPattern:
    """One gitignore line, relative to `base` (a posix path inside the root, '' = the root)."""

    regex: Pattern[str]
    base: str
    anchored: bool
    directory_only: bool
    negated: bool
    text: str

    @classmethod
    def parse(cls, line: str, base: str = "") -> Optional["GitPattern"]:
        """None for blank lines and comments; `BadPattern` for what git could never match."""
        text = _strip_trailing_spaces(line.rstrip("\r\n"))
        if not text or text.startswith("#"):
            return None
        negated = text.startswith("!")
        if negated:
            text = text[1:]
        directory_only = text.endswith("/") and not text.endswith("\\/")
        body = text.rstrip("/") if directory_only else text
        if not body:
            return None
        anchored = "/" in body
        body = body[1:] if body.startswith("/") else body
        return cls(re.compile(_regex(body) + r"\Z", re.S), base, anchored, directory_only, negated, line)

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Whether the pattern names `rel` itself (a posix path relative to the root)."""
        if self.directory_only and not is_dir:
            return False
        if self.base:
            if not rel.startswith(self.base + "/"):
                return False
            rel = rel[len(self.base) + 1 :]
        if self.anchored:
            return self.regex.match(rel) is not None
        return self.regex.match(rel.rsplit("/", 1)[-1]) is not None


def _strip_trailing_spaces(text: str) -> str:
    """git drops trailing spaces unless the last one is escaped with a backslash."""
    end = len(text)
    while end > 0 and text[end - 1] == " ":
        backslashes = 0
        k = end - 2
        while k >= 0 and text[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2 == 1:
            break
        end -= 1
    return text[:end]


def last_match(patterns: Sequence[GitPattern], rel: str, is_dir: bool) -> Optional[bool]:
    """git's rule: the last pattern that matches decides (True: ignored); None: no match."""
    for p in reversed(patterns):
        if p.matches(rel, is_dir):
            return not p.negated
    return None


def ignored(patterns: Sequence[GitPattern], rel: str, is_dir: bool) -> bool:
    """`rel` or one of its folders is ignored: what git would not show, without walking."""
    parts = rel.split("/")
    for k in range(1, len(parts)):
        if last_match(patterns, "/".join(parts[:k]), True):
            return True
    return bool(last_match(patterns, rel, is_dir))


def parse_lines(text: str, base: str) -> Tuple[List[GitPattern], List[Tuple[int, str, str]]]:
    """A .gitignore's patterns, and (line number, line, reason) for each bad one."""
    if text.startswith("\ufeff"):
        text = text[1:]
    patterns: List[GitPattern] = []
    bad: List[Tuple[int, str, str]] = []
    for number, line in enumerate(text.split("\n"), 1):
        try:
            pattern = GitPattern.parse(line, base)
        except BadPattern as exc:
            bad.append((number, line.rstrip("\r"), str(exc)))
            continue
        if pattern is not None:
            patterns.append(pattern)
    return patterns, bad
