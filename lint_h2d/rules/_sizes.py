"""A proven lower bound on a tensor's length at a write, from the code just above it.

Why: ``t[:1].zero_()`` (the spelling vLLM ships) equals ``t[0] = 0`` only when ``t`` is not
empty; on an empty tensor the slice is empty and the write silently does nothing where the
assignment raises ``IndexError``.  The fixer uses the slice only when this module proves the
length; otherwise it keeps ``t[0].zero_()``, which raises the same way.

What counts as proof (anything else is no proof):

* ``t`` is a local name of a function, allocated in the same block as the write, with no
  statement in between that binds ``t`` (and no ``global``/``nonlocal t`` anywhere), by
  ``t = torch.empty(SIZE, ...)`` / ``torch.zeros`` / ``torch.ones`` with one positional size;
* ``SIZE`` is an integer literal, a guarded name ``E`` (below), or ``E + c`` with ``c`` an integer literal and ``E`` either
  ``len(...)`` (never negative) or a name guarded by an enclosing ``if E > c0:`` /
  ``if E >= c0:`` (possibly one operand of ``and``) whose body never rebinds ``E``.  A
  successful allocation means ``E + c`` is an integer, so ``E > c0`` gives ``E >= c0 + 1``.

vLLM 0.33.0's MiniMax M3 builder is the motivating case: ``if num_prefills > 0:`` ...
``prefill_cu_seqlens_k = torch.empty(num_prefills + 1, ...)`` ... ``prefill_cu_seqlens_k[0] = 0``.
"""
from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from lint_h2d.inference.scope import StatementFact
from lint_h2d.rules._scopes import ScopeMap, bound_names

_ALLOCATORS = frozenset({"empty", "zeros", "ones"})


def _int(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, cst.Integer):
        value = int(node.evaluated_value)
        return value
    return None


def _allocated_size(statement: cst.BaseStatement, name: str) -> Optional[cst.BaseExpression]:
    """``SIZE`` when ``statement`` is ``name = torch.empty|zeros|ones(SIZE, <keywords>)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    target = assign.targets[0].target
    call = assign.value
    if not (isinstance(target, cst.Name) and target.value == name and isinstance(call, cst.Call)):
        return None
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value == "torch" and func.attr.value in _ALLOCATORS):
        return None
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) != 1 or positional[0].star or any(
        a.keyword is not None and a.keyword.value in ("size", "out") for a in call.args
    ):
        return None
    size = positional[0].value
    if bound_names([size]):  # a walrus in the size: keep it simple
        return None
    return size


def _guard_bound(name: str, fact: StatementFact, scopes: ScopeMap) -> Optional[int]:
    """Lower bound of ``name`` from an enclosing ``if name > c0`` whose body keeps ``name``."""
    if scopes.rebinds_anywhere(name):
        return None
    best: Optional[int] = None
    for if_node, branch in fact.gates:
        if branch != "body" or name in scopes.bound_names(if_node.body):
            continue
        for test in _conjuncts(if_node.test):
            bound = _comparison_bound(test, name)
            if bound is not None and (best is None or bound > best):
                best = bound
    return best


def _conjuncts(test: cst.BaseExpression) -> Sequence[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_conjuncts(test.left), *_conjuncts(test.right)]
    return [test]


def _comparison_bound(test: cst.BaseExpression, name: str) -> Optional[int]:
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    left, target = test.left, test.comparisons[0]
    right, op = target.comparator, target.operator
    if isinstance(left, cst.Name) and left.value == name and _int(right) is not None:
        c0 = _int(right)
        assert c0 is not None
        if isinstance(op, cst.GreaterThan):
            return c0 + 1
        if isinstance(op, cst.GreaterThanEqual):
            return c0
    if isinstance(right, cst.Name) and right.value == name and _int(left) is not None:
        c0 = _int(left)
        assert c0 is not None
        if isinstance(op, cst.LessThan):
            return c0 + 1
        if isinstance(op, cst.LessThanEqual):
            return c0
    return None


def _size_bound(size: cst.BaseExpression, fact: StatementFact, scopes: ScopeMap) -> Optional[int]:
    literal = _int(size)
    if literal is not None:
        return literal
    if isinstance(size, cst.Name):
        return _guard_bound(size.value, fact, scopes)
    if not (isinstance(size, cst.BinaryOperation) and isinstance(size.operator, cst.Add)):
        return None
    for term, other in ((size.left, size.right), (size.right, size.left)):
        c = _int(other)
        if c is None:
            continue
        if (isinstance(term, cst.Call) and isinstance(term.func, cst.Name) and term.func.value == "len"
                and scopes.builtin_len_intact()):
            return c
        if isinstance(term, cst.Name):
            bound = _guard_bound(term.value, fact, scopes)
            if bound is not None:
                return bound + c
    return None


def proven_length(fact: StatementFact, target: cst.BaseExpression, scopes: ScopeMap) -> Optional[int]:
    """A lower bound on ``len(target)`` where ``fact``'s statement runs, or None without proof.

    ``scopes`` answers the per-function and per-text questions (memoized for the file)."""
    if not isinstance(target, cst.Name) or fact.scope.node is None:
        return None
    name = target.value
    chain = scopes.chain(fact.owner)
    if not chain or not isinstance(chain[-1], cst.FunctionDef) or scopes.rebinds_anywhere(name):
        return None
    block = fact.block
    index = scopes.block_index(block, fact.owner)
    if index is None:
        return None
    k = scopes.latest_binding(block, name, index)
    if k is None:
        return None
    size = _allocated_size(block[k], name)
    if size is None:
        return None
    bound = _size_bound(size, fact, scopes)
    return bound if bound is not None and bound >= 1 else None
