"""Which bindings of a name may reach a use of it in a function body (CPython `ast`).

Why: the per-file summary read a name as the join of every value the body ever binds to it,
so `lens = []`, a loop of `lens.append(n)`, then `lens = torch.tensor(lens, device="cuda")`
read as "a list or a tensor" wherever `lens` is used, and the device fact was lost.  Python
replaces a name's value at each assignment: a use that an unconditional rebinding precedes on
every path sees that binding and what follows it, never what came before it.

Bodies here are structured (no `goto`): a statement runs before a use on every path exactly
when it sits earlier in a block that holds the use (a loop body, an `if` branch, a `try` body
are blocks; a use inside a nested block of a later statement is held too).  A binding
textually before such a statement reaches the use only through it (a loop's back edge enters
its body from the top), so it is hidden.  A binding textually after the use reaches it only
through a loop around both, so without one it is hidden too.  Anything else is kept.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Site:
    """Where a statement sits in a function body: its textual order, the chain of (block,
    index in that block) from the body down to it, and the loops whose repetition runs it again
    (by their order; a loop statement is in its own: its test and target run every time).
    `straight`, shared by the sites of one body: the blocks run from any statement to their
    end, or leave the function (`_visit`)."""

    order: int
    chain: Tuple[Tuple[int, int], ...]
    loops: FrozenSet[int] = frozenset()
    straight: Mapping[int, bool] = field(default_factory=dict, compare=False, hash=False, repr=False)


def statement_sites(body: Sequence[ast.stmt]) -> Dict[int, Site]:
    """The site of every statement of `body` by `id`, nested blocks included; nested
    definitions (and so their statements) are scopes of their own and left out."""
    sites: Dict[int, Site] = {}
    _visit(body, (), frozenset(), sites, [0], {}, False)
    return sites


# Statements whose blocks may be left part-way and the code after them still run: an exception
# caught by a handler (or a `finally`), or one a context manager suppresses.
_SHIELDING = (ast.Try, ast.With, ast.AsyncWith) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _visit(statements: Sequence[ast.stmt], chain: Tuple[Tuple[int, int], ...], loops: FrozenSet[int],
           sites: Dict[int, Site], blocks: List[int], straight: Dict[int, bool], shielded: bool) -> bool:
    """`statement_sites`' walk of one block (`blocks[0]`: the next block number); whether the
    block holds a `break` or `continue` (at any depth).  `straight[block]`: it holds none and
    no `try` or `with` encloses it: from any of its statements, control reaches its end or
    leaves the function (a `return`, an exception nothing in the function catches).

    A module-level function, not a closure: a recursive closure holds its own cell, a
    reference cycle that kept `sites` alive until the collector ran, and that collection
    walked every object of the file's burst (`pipeline.gc_paused`)."""
    block = blocks[0]
    blocks[0] += 1
    jumps = False
    for index, stmt in enumerate(statements):
        here = chain + ((block, index),)
        order = len(sites)
        loop = isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        sites[id(stmt)] = Site(order, here, loops | {order} if loop else loops, straight)
        if type(stmt) in _NO_BLOCKS:
            jumps = jumps or type(stmt) in (ast.Break, ast.Continue)
            continue
        inner_shielded = shielded or isinstance(stmt, _SHIELDING)
        for inner in _blocks(stmt):
            # A loop repeats its body, not its `else` (which runs once, after it).
            repeated = loop and inner is getattr(stmt, "body", None)
            jumps = _visit(inner, here, loops | {order} if repeated else loops, sites, blocks, straight,
                           inner_shielded) or jumps
    straight[block] = not jumps and not shielded
    return jumps


#: The statements that hold no statement of their own (no block, no clause): most of a body.
SIMPLE_STATEMENTS = frozenset({
    ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Pass, ast.Break,
    ast.Continue, ast.Raise, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Delete,
    ast.Assert,
})
# Statements without a block of this body inside: definitions (their bodies are scopes of
# their own) and simple statements, for which `_blocks`' look-ups found nothing.
_NO_BLOCKS = SIMPLE_STATEMENTS | {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}


def every_statement(tree: ast.AST) -> Iterable[ast.stmt]:
    """Every statement, nested ones included (no expressions: much cheaper than ast.walk)."""
    return statements_in(getattr(tree, "body", ()), into_definitions=True)


def statements_in(body: Sequence[ast.stmt], into_definitions: bool) -> Iterable[ast.stmt]:
    """Every statement of `body`, nested blocks included (`into_definitions`: the bodies of
    nested functions and classes too), last first: a walk of statements only, no expressions."""
    stack: List[ast.stmt] = list(body)
    simple = SIMPLE_STATEMENTS
    while stack:
        stmt = stack.pop()
        if type(stmt) in simple:  # no nested blocks: most statements
            yield stmt
            continue
        if not into_definitions and isinstance(
            stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            continue
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, name, ()) or ())
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(case.body)


def _blocks(stmt: ast.stmt) -> List[Sequence[ast.stmt]]:
    """The statement lists nested directly in `stmt`, in textual order."""
    out: List[Sequence[ast.stmt]] = []
    body = getattr(stmt, "body", None)
    if isinstance(body, list):
        out.append(body)
    for handler in getattr(stmt, "handlers", ()) or ():
        out.append(handler.body)
    for case in getattr(stmt, "cases", ()) or ():
        out.append(case.body)
    for name in ("orelse", "finalbody"):
        inner = getattr(stmt, name, None)
        if isinstance(inner, list) and inner:
            out.append(inner)
    return out


def rebinds(stmt: ast.stmt, name: str) -> bool:
    """`stmt` binds `name` outright (`x = v`, `x, n = f()`, `x: T = v`), or to what an operator
    makes of its old value (`x /= t`: the summary's value there is `x / t` of the value that
    reaches the statement, so a later read needs nothing from before it).  A loop or `with`
    target and an item store are not counted: a loop may not run, and a store keeps the
    object."""
    if isinstance(stmt, ast.Assign):
        return any(_names_target(t, name) for t in stmt.targets)
    if isinstance(stmt, ast.AnnAssign):
        return stmt.value is not None and isinstance(stmt.target, ast.Name) and stmt.target.id == name
    if isinstance(stmt, ast.AugAssign):
        return isinstance(stmt.target, ast.Name) and stmt.target.id == name
    return False


def _names_target(target: ast.expr, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Starred):
        return _names_target(target.value, name)
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_names_target(t, name) for t in target.elts)
    return False


def dominates(binding: Site, use: Site) -> bool:
    """`binding` runs before `use` on every path: it sits earlier in a block holding `use`."""
    depth = len(binding.chain) - 1
    if len(use.chain) <= depth or use.chain[:depth] != binding.chain[:depth]:
        return False
    block, index = binding.chain[depth]
    use_block, use_index = use.chain[depth]
    return block == use_block and index < use_index


def reaching(use: Site, bindings: Sequence[Tuple[Optional[Site], bool]],
             branched: Sequence[Site] = ()) -> Optional[Tuple[int, ...]]:
    """Of `bindings` (each: its statement's site, or None where unknown, and whether it rebinds
    the name outright), the indices of those that may reach `use`; None where every one may.
    `branched`: the sites of `if` statements each branch of which rebinds the name outright
    (`branch_rebindings`), which hide earlier bindings as one rebinding does."""
    outright_sites = [site for site, outright in bindings if outright and site is not None] + list(branched)
    cut: Optional[Site] = None
    for site in outright_sites:
        if dominates(site, use) and (cut is None or site.order > cut.order):
            cut = site
    rebinding = [site for site in outright_sites if site.order < use.order]
    kept = tuple(i for i, (site, _) in enumerate(bindings) if site is None or (
        _may_reach(site, use, cut) and not any(kills(later, site) for later in rebinding)))
    return kept if len(kept) < len(bindings) else None


def kills(rebinding: Site, binding: Site) -> bool:
    """Every path from `binding` to a statement after `rebinding` runs `rebinding` (an outright
    rebinding of the same name): it sits later in a block that holds `binding` (at any depth),
    a straight one (`_visit`): no `break` or `continue` leaves it between the two, no handler
    or context manager resumes after it.  (`tokens = tokenizer(xs)`, then `tokens = {k: ...
    for k in tokens}` in one branch of an `if`: a read after the `if` sees the second only,
    where `dominates` finds no rebinding before the read on every path.)"""
    depth = len(rebinding.chain) - 1
    if len(binding.chain) <= depth or binding.chain[:depth] != rebinding.chain[:depth]:
        return False
    block, index = rebinding.chain[depth]
    binding_block, binding_index = binding.chain[depth]
    return block == binding_block and binding_index < index and rebinding.straight.get(block, False)


def _may_reach(binding: Site, use: Site, cut: Optional[Site]) -> bool:
    """Not hidden by the rebinding at `cut` (the last outright rebinding that runs before the use
    on every path), and textually before the use or in a loop with it.

    A binding at or after the use reaches it only through the back edge of a loop around both,
    which re-enters that loop's body from the top: when `cut` is inside that loop too, the
    path runs `cut` again before the use, so only a loop that holds both but not `cut` lets it
    through (`for ...: a = x.cpu(); a = a.to(dev); use(a)`: the second line's `a` is the first
    line's, never the one the second line bound in the iteration before)."""
    if cut is not None and binding.order < cut.order:
        return False
    if binding.order < use.order:
        return True
    return bool((binding.loops & use.loops) - (cut.loops if cut is not None else frozenset()))


def branch_rebindings(rebindings: Sequence[Tuple[Site, ast.stmt]], parents: Mapping[Tuple[Tuple[int, int], ...], ast.stmt],
                      sites: Mapping[int, Site]) -> Tuple[Site, ...]:
    """The `if` statements with an `else` each branch of which rebinds a name outright at its own
    top level (`rebindings`: those statements and their sites), in a straight block (no `break`
    or `continue`, no handler resuming part-way): past such an `if`, the name holds what one of
    them bound, as after one rebinding (`if c: x = f() else: x = g()`, then `x = x[:, -1]` in a
    loop: the value the loop's last line bound in the previous iteration never reaches it).
    An `elif` chain counts where every branch of the inner `if` does.  `parents`: each compound
    statement by its site's chain; `sites`: each statement's site by `id`."""
    found: Dict[int, Site] = {}
    known = list(rebindings)
    grew = True
    while grew:
        by_parent: Dict[Tuple[Tuple[int, int], ...], List[ast.stmt]] = {}
        for site, stmt in known:
            if site.chain[:-1] and site.straight.get(site.chain[-1][0], False):
                by_parent.setdefault(site.chain[:-1], []).append(stmt)
        grew = False
        for chain, inner in by_parent.items():
            parent = parents.get(chain)
            if not isinstance(parent, ast.If) or not parent.orelse or id(parent) in found:
                continue
            if any(any(s is stmt for s in parent.body) for stmt in inner) \
                    and any(any(s is stmt for s in parent.orelse) for stmt in inner):
                site = found[id(parent)] = sites[id(parent)]
                known.append((site, parent))  # it rebinds, for an outer `if` of which it is an `elif`
                grew = True
    return tuple(found.values())
