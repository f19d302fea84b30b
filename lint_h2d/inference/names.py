"""The walk's map from names to values, layered so that a scope costs its own size.

Why: a function's map starts as everything the enclosing scope knows (every module-level name
of a long file), and the walk copies it for each branch and joins the copies where paths meet.
Copying and joining the whole map made one long module quadratic: each of its N functions paid
for the N names above it.  A :class:`LayeredNames` reads through to the enclosing scope's map
(``base``) and holds only what its own scope bound (``own``) or deleted (``hidden``); copies
share the base, and two maps over the same base are joined over the names either one touched.

The base must not change while a layer over it is in use: the walk reads an enclosing map only
while it walks a nested `def`/`class` (synchronously, at that statement), and a branch's layer
lives inside the statement that made it.
"""
from __future__ import annotations

from typing import (
    AbstractSet,
    Callable,
    Dict,
    Iterator,
    Mapping,
    MutableMapping,
    Optional,
    Set,
)

from lint_h2d.inference.values import Value

Names = MutableMapping[str, Value]


class LayeredNames(MutableMapping[str, Value]):
    """``base`` seen through this scope's own bindings and deletions."""

    __slots__ = ("base", "hidden", "own")

    def __init__(self, base: Mapping[str, Value], own: Optional[Dict[str, Value]] = None,
                 hidden: Optional[Set[str]] = None) -> None:
        self.base = base
        self.own: Dict[str, Value] = own if own is not None else {}
        # Names of `base` deleted here (a name in `own` is never hidden).
        self.hidden: Set[str] = hidden if hidden is not None else set()

    def __getitem__(self, key: str) -> Value:
        own = self.own
        if key in own:
            return own[key]
        if key in self.hidden:
            raise KeyError(key)
        return self.base[key]

    def get(self, key: str, default: Optional[Value] = None) -> Optional[Value]:  # type: ignore[override]
        value = self.own.get(key)
        if value is not None or key in self.own:
            return value
        if self.hidden and key in self.hidden:
            return default
        return self.base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.own or (key not in self.hidden and key in self.base)

    def __setitem__(self, key: str, value: Value) -> None:
        self.own[key] = value
        if self.hidden:
            self.hidden.discard(key)

    def __delitem__(self, key: str) -> None:
        if key in self.own:
            del self.own[key]
            if key in self.base:
                self.hidden.add(key)
        elif key in self.base and key not in self.hidden:
            self.hidden.add(key)
        else:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        own, hidden = self.own, self.hidden
        yield from own
        for key in self.base:
            if key not in own and key not in hidden:
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def copy(self) -> LayeredNames:
        """A copy for one path: the base is shared, not copied."""
        return LayeredNames(self.base, dict(self.own), set(self.hidden))

    def touched(self) -> AbstractSet[str]:
        """The names whose value here may differ from the base's."""
        return self.own.keys() | self.hidden


def layer(base: Mapping[str, Value]) -> LayeredNames:
    """A map for a nested scope (or a copy of one), reading through to ``base``."""
    return LayeredNames(base)


def copy_names(names: Mapping[str, Value]) -> Names:
    """A copy of ``names`` that a path may bind into: a layer's own part, or the whole dict."""
    if isinstance(names, LayeredNames):
        return names.copy()
    return dict(names)


def join_names(a: Mapping[str, Value], b: Mapping[str, Value],
               join: Callable[[Value, Value], Value]) -> Names:
    """The names after two paths meet: a name bound on one path only keeps what that path knows
    (it may be the only one taken); a name bound on both to the very same value keeps it
    (``join(v, v)`` is ``v``); otherwise ``join(a's, b's)``.

    Two layers over the same base differ only in the names either one touched, so only those
    are visited (the others hold the base's value, the same object, on both paths)."""
    if isinstance(a, LayeredNames) and isinstance(b, LayeredNames) and a.base is b.base:
        out = a.copy()
        b_own = b.own
        for key, vb in b_own.items():
            va = a.get(key)
            if va is None:
                out[key] = vb
            elif va is not vb:
                out[key] = join(va, vb)
        for key in a.touched():
            if key in b_own:
                continue
            vbase = b.get(key)  # the base's value, or None where `b` deleted it
            if vbase is None:
                continue  # bound on `a`'s path only (or deleted on both): as `a` has it
            va = a.get(key)
            if va is None:
                out[key] = vbase
            elif va is not vbase:
                out[key] = join(va, vbase)
        return out
    plain: Dict[str, Value] = dict(a)
    for key, vb in b.items():
        va = plain.get(key)
        if va is None:
            plain[key] = vb
        elif va is not vb:
            plain[key] = join(va, vb)
    return plain
