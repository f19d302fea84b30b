"""Level 1: bitwise equality of the written tensor after the original vs the rewrite (CPU).

Why on the CPU: the value a statement writes does not depend on the device; ``zero_``/``fill_``
cast the scalar exactly as the assignment's copy does.  The copy/sync difference is what
levels 2 and 3 observe.

The core is :func:`compare_pair`: it runs two statement texts on clones of the same tensor
(random, non-zero contents) in a synthesized namespace and compares the bytes.  It knows
nothing about the fixer, so a test can hand it a deliberately wrong rewrite.
"""
from __future__ import annotations

import ast
import itertools
import random
import types
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import torch

from lint_h2d.verify.pairs import BUILTIN_CALLS, PROVIDED, attribute_chain, free_names

DTYPES: Tuple[torch.dtype, ...] = (
    torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32,
)
SIZE = 5  # elements per dimension: room for 0, k, -1, -k and a distinct last index
VALUE_VARIANTS: Tuple[Any, ...] = (0, 7, -3, 2.5, -0.0, True, False)
TARGET_PLACEHOLDER = "__lint_h2d_target__"
GATE_PLACEHOLDER = "__lint_h2d_gate__"
KNOWN_GATE_TESTS = ("current_platform.is_rocm()", "torch.version.hip is not None")
MAX_BINDINGS = 48
STANDARD, BOUNDS, INDEX_KIND, DTYPE_LIMIT, ORDER = (
    "standard", "bounds", "index kind", "dtype limit", "evaluation order")
EQUIVALENT, RAISES, DIFFERS = "equivalent", "raises", "differs"
VALUE_PLACEHOLDER = "__lint_h2d_value__"
# Values at the dtypes' limits: int64's ends, just past them, and floating extremes.
LIMIT_VALUES: Tuple[Any, ...] = (2**63 - 1, -(2**63), 2**63, -(2**63) - 1, float("inf"), float("nan"), 1e300, 65536)


class Effect:
    """A value that is a call with side effects: it moves every bound integer index on by one and
    replaces the written tensor by a fresh one, then returns 7.

    Why: ``t[i] = v`` evaluates ``v`` before ``t`` and ``i``; a rewrite that evaluates them first
    writes elsewhere when ``v`` calls something that changes them (``t[pos] = advance()``).
    """

    def __repr__(self) -> str:
        return "<call with side effects>"

    def bind(self, ns: Dict[str, Any], target: str, index_names: Sequence[str]) -> Any:
        def effect() -> int:
            for name in index_names:
                if type(ns.get(name)) is int:
                    ns[name] += 1
            chain = attribute_chain(target)
            if chain is None:
                ns[TARGET_PLACEHOLDER] = ns[TARGET_PLACEHOLDER].clone()
            elif len(chain) == 1:
                ns[chain[0]] = ns[chain[0]].clone()
            else:
                holder = ns[chain[0]]
                for attr in chain[1:-1]:
                    holder = getattr(holder, attr)
                setattr(holder, chain[-1], getattr(holder, chain[-1]).clone())
            return 7
        return effect


# -- namespace --------------------------------------------------------------------------------


class FakePlatform:
    """Stands in for vLLM's ``current_platform`` with the gate forced to one branch."""

    def __init__(self, rocm: bool) -> None:
        self._rocm = rocm

    def is_rocm(self) -> bool:
        return self._rocm

    def is_cuda(self) -> bool:
        return not self._rocm


class TorchProxy(types.ModuleType):
    """``torch`` with ``torch.version.hip`` forced, so ``torch.version.hip is not None`` picks a branch."""

    def __init__(self, hip: Optional[str]) -> None:
        super().__init__("torch")
        self.version = types.SimpleNamespace(**{k: getattr(torch.version, k) for k in dir(torch.version)
                                                 if not k.startswith("_")})
        self.version.hip = hip

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


def build_namespace(target: str, tensor: Any, bindings: Mapping[str, Any], gate: Optional[bool]) -> Dict[str, Any]:
    """Globals for ``exec``: the target reachable by its own expression, fakes for the gates."""
    ns: Dict[str, Any] = {"__builtins__": __builtins__}
    hip = None if gate is None else ("6.0.lint-h2d-fake" if gate else None)
    ns["torch"] = TorchProxy(hip) if gate is not None else torch
    ns["current_platform"] = FakePlatform(bool(gate))
    ns[GATE_PLACEHOLDER] = bool(gate)
    chain = attribute_chain(target)
    if chain is None:
        ns[TARGET_PLACEHOLDER] = tensor
    else:
        ns.update(_chain(chain, tensor))
    ns.update(bindings)
    for name, value in bindings.items():
        if isinstance(value, Effect):
            ns[name] = value.bind(ns, target, [n for n, v in bindings.items() if type(v) is int])
        elif name == VALUE_PLACEHOLDER:
            ns[name] = lambda value=value: value
    return ns


def _chain(chain: Sequence[str], leaf: Any) -> Dict[str, Any]:
    """``["self", "a", "buf"]`` → ``{"self": SimpleNamespace(a=SimpleNamespace(buf=leaf))}``.

    A ``__class__`` link (``self.__class__.table``) is the class of the object before it: that
    object is an instance of a class made to hold what follows (an instance's ``__class__`` is
    its type, which no namespace entry can stand for)."""
    value = leaf
    for attr in reversed(chain[1:]):
        if attr == "__class__":
            value = type("Bound", (), dict(vars(value)))()
        else:
            value = types.SimpleNamespace(**{attr: value})
    return {chain[0]: value}


# -- one comparison ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One concrete run: dtype, shape, name bindings and the forced gate branch."""

    dtype: torch.dtype
    shape: Tuple[int, ...]
    bindings: Mapping[str, Any] = field(default_factory=dict)
    gate: Optional[bool] = None  # True: the ROCm (device-form) branch; None: no gate forced
    # "standard" (integer indices in range, ordinary values) or the adversarial family:
    # "bounds", "index kind", "dtype limit", "evaluation order".
    kind: str = STANDARD
    # The allocating call of a deleted redundant write: the tensor starts as it leaves it
    # (zeros, ones, full of its value) instead of random contents.
    allocation: Optional[str] = None

    def describe(self) -> str:
        names = ", ".join(f"{k}={v!r}" for k, v in self.bindings.items())
        gate = "" if self.gate is None else f", gate={'rocm' if self.gate else 'cuda'}"
        return f"{str(self.dtype).replace('torch.', '')}{list(self.shape)}{', ' + names if names else ''}{gate}"


@dataclass(frozen=True)
class Outcome:
    equivalent: bool
    ran: bool  # both statements ran without raising
    detail: str = ""

    @property
    def category(self) -> str:
        """"equivalent"; "raises" (one side raised, or another exception); "differs" (both ran)."""
        if self.equivalent:
            return EQUIVALENT
        return DIFFERS if self.ran else RAISES


def initial_tensor(dtype: torch.dtype, shape: Tuple[int, ...], seed: int = 0) -> torch.Tensor:
    """Random non-zero contents (a zero write must show), with a NaN for float types."""
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype)
    if dtype.is_floating_point:
        mag = torch.rand(shape, generator=gen) * 9 + 0.5
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        t = (mag * sign).to(dtype)
        if t.numel():
            t.view(-1)[len(t.view(-1)) // 2] = float("nan")
        return t
    return torch.randint(1, 100, shape, generator=gen, dtype=dtype)


def allocated(call: str, dtype: torch.dtype, shape: Tuple[int, ...]) -> torch.Tensor:
    """What ``torch.zeros|ones|full(...)`` (``*_like``, ``new_*``) leaves in a tensor of this
    dtype and shape: the fill value is read off the call itself, not taken from the rule."""
    node = ast.parse(call, mode="eval").body
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        raise ValueError(f"not an allocating call: {call}")
    kind = node.func.attr
    if kind in ("zeros", "zeros_like", "new_zeros"):
        return torch.zeros(shape, dtype=dtype)
    if kind in ("ones", "ones_like", "new_ones"):
        return torch.ones(shape, dtype=dtype)
    if kind in ("full", "full_like", "new_full"):
        fill = next((k.value for k in node.keywords if k.arg == "fill_value"), None)
        if fill is None:
            fill = node.args[1] if kind in ("full", "full_like", "new_full") and len(node.args) > 1 else None
        if fill is None:
            raise ValueError(f"no fill value in {call}")
        return torch.full(shape, ast.literal_eval(fill), dtype=dtype)
    raise ValueError(f"not an allocating call: {call}")


def bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes: a NaN-safe, sign-of-zero-aware comparison key."""
    return t.contiguous().view(-1).view(torch.uint8)


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def _run(code: Any, ns: Dict[str, Any]) -> Optional[BaseException]:
    try:
        exec(code, ns)
    except Exception as exc:  # the statement's own failure is a result, not our error
        return exc
    return None


def compare_pair(original: str, rewritten: str, target: str, case: Case, seed: int = 0) -> Outcome:
    """Run ``original`` and ``rewritten`` on clones of one tensor; equal bytes → equivalent.

    ``target`` is the written tensor's base expression (``t``, ``self.buf``); anything that is
    not a name/attribute chain must already be spelled ``__lint_h2d_target__`` in both texts.
    Both raising the same exception type counts as equivalent but not as a run.
    """
    base = (allocated(case.allocation, case.dtype, case.shape) if case.allocation
            else initial_tensor(case.dtype, case.shape, seed))
    a, b = base.clone(), base.clone()
    err_a = _run(compile_statement(original), build_namespace(target, a, case.bindings, case.gate))
    err_b = _run(compile_statement(rewritten), build_namespace(target, b, case.bindings, case.gate))
    if err_a is not None or err_b is not None:
        if err_a is not None and err_b is not None and type(err_a) is type(err_b):
            return Outcome(True, False, f"both raise {type(err_a).__name__}")
        return Outcome(False, False, f"{case.describe()}: original {_what(err_a)}, rewrite {_what(err_b)}")
    if bitwise_equal(a, b):
        return Outcome(True, True)
    return Outcome(False, True, f"{case.describe()}: original gives {a.tolist()}, rewrite gives {b.tolist()}")


def _what(err: Optional[BaseException]) -> str:
    return "ran" if err is None else f"raised {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


_COMPILED: Dict[str, Any] = {}


def compile_statement(code: str) -> Any:
    if code not in _COMPILED:
        _COMPILED[code] = compile(code, "<lint-h2d verify>", "exec")
    return _COMPILED[code]


# -- preparing a pair for execution -----------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A pair made executable: sub-expressions we cannot evaluate replaced by placeholders."""

    original: str
    rewritten: str
    target: str
    index_count: int  # integer index elements of the write (the minimum rank)
    index_names: Tuple[str, ...]
    value_names: Tuple[str, ...]
    gated: bool
    problem: Optional[str] = None
    # The index elements as executable expressions (None for `...`), to size tensors from.
    index_exprs: Tuple[Optional[str], ...] = ()
    # Literal index and literal value: what the rule calls a safe fix.
    literal: bool = False

    @property
    def calls_in_value(self) -> bool:
        """The value was abstracted into a call: its evaluation order can be tested."""
        return VALUE_PLACEHOLDER in self.value_names


def _is_int_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool))


def _is_simple(node: ast.expr) -> bool:
    """Names, numbers, arithmetic and builtin conversions: evaluable once names are bound."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, bool))
    if isinstance(node, ast.UnaryOp):
        return _is_simple(node.operand)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Div, ast.Mod)) and \
            _is_simple(node.left) and _is_simple(node.right)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in BUILTIN_CALLS and not node.keywords and \
            all(_is_simple(a) for a in node.args)
    return False


class _Replace(ast.NodeTransformer):
    def __init__(self, mapping: Mapping[str, str]) -> None:
        self.mapping = mapping

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.expr) and not isinstance(node, ast.Name):
            name = self.mapping.get(ast.dump(node))
            if name is not None and isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                new: ast.expr = ast.Name(id=name, ctx=ast.Load())
                if name == VALUE_PLACEHOLDER:  # a call, evaluated where the value was
                    new = ast.Call(func=new, args=[], keywords=[])
                return ast.copy_location(new, node)
        return super().visit(node)


class _ForceGate(ast.NodeTransformer):
    """An ``if`` with a gate we have no fake for: its test becomes a bound boolean."""

    def visit_If(self, node: ast.If) -> Any:
        if ast.unparse(node.test) not in KNOWN_GATE_TESTS:
            node.test = ast.Name(id=GATE_PLACEHOLDER, ctx=ast.Load())
        return self.generic_visit(node)


def _rewrite(code: str, mapping: Mapping[str, str], force_gate: bool) -> str:
    tree = ast.parse(code)
    tree = _Replace(mapping).visit(tree)
    if force_gate:
        tree = _ForceGate().visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))


def prepare(original: str, rewritten: str, target: str) -> Prepared:
    """Bind what can be bound, abstract what cannot (calls, attributes) into placeholders.

    The same sub-expression gets the same placeholder in both statements, so an abstracted
    value is still the same value on both sides; a rewrite that changed it keeps free names
    and is reported as unverifiable rather than silently passing.
    """
    try:
        tree = ast.parse(original)
    except SyntaxError as exc:
        return Prepared(original, rewritten, target, 0, (), (), False, f"original does not parse: {exc}")
    stmt = tree.body[0] if len(tree.body) == 1 else None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript)):
        return Prepared(original, rewritten, target, 0, (), (), False, "original is not `T[I] = V`")
    sub = stmt.targets[0]
    mapping: Dict[str, str] = {}
    if attribute_chain(target) is None:
        mapping[ast.dump(sub.value)] = TARGET_PLACEHOLDER
        target = TARGET_PLACEHOLDER
    elements = list(sub.slice.elts) if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    index_names: List[str] = []
    index_exprs: List[Optional[str]] = []
    for k, element in enumerate(elements):
        if isinstance(element, ast.Constant) and element.value is Ellipsis:
            index_exprs.append(None)
            continue
        if _is_int_literal(element):
            index_exprs.append(ast.unparse(element))
            continue
        if _is_simple(element):
            index_names += [n for n in free_names(ast.unparse(element)) if n not in PROVIDED]
            index_exprs.append(ast.unparse(element))
        else:
            mapping.setdefault(ast.dump(element), f"__lint_h2d_index{k}__")
            index_names.append(mapping[ast.dump(element)])
            index_exprs.append(mapping[ast.dump(element)])
    value_names: List[str] = []
    if not _is_literal(stmt.value):
        if _is_simple(stmt.value):
            value_names = [n for n in free_names(ast.unparse(stmt.value)) if n not in PROVIDED]
        else:
            mapping[ast.dump(stmt.value)] = VALUE_PLACEHOLDER
            value_names = [VALUE_PLACEHOLDER]
    integer_count = sum(1 for e in elements if not (isinstance(e, ast.Constant) and e.value is Ellipsis))
    try:
        rewritten_tree = ast.parse(rewritten)
    except SyntaxError as exc:
        return Prepared(original, rewritten, target, integer_count, (), (), False, f"rewrite does not parse: {exc}")
    gated = any(isinstance(n, ast.If) for n in rewritten_tree.body)
    force = gated and any(isinstance(n, ast.If) and ast.unparse(n.test) not in KNOWN_GATE_TESTS
                          for n in rewritten_tree.body)
    orig_code, new_code = _rewrite(original, mapping, False), _rewrite(rewritten, mapping, force)
    index_names = list(dict.fromkeys(index_names))
    value_names = [n for n in dict.fromkeys(value_names) if n not in index_names]
    chain = attribute_chain(target)
    known = set(PROVIDED) | set(index_names) | set(value_names) | {GATE_PLACEHOLDER, TARGET_PLACEHOLDER}
    if chain:
        known.add(chain[0])
    unknown = [n for n in free_names(orig_code) + free_names(new_code) if n not in known]
    problem = f"cannot bind {', '.join(dict.fromkeys(unknown))}" if unknown else None
    literal = not index_names and _is_literal(stmt.value)
    return Prepared(orig_code, new_code, target, integer_count, tuple(index_names), tuple(value_names), gated,
                    problem, tuple(index_exprs), literal)


# -- many cases -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """All cases of one pair: equivalent when every case agreed and at least one ran."""

    equivalent: bool
    cases: int
    ran: int
    detail: str
    dtypes: Tuple[torch.dtype, ...] = ()
    # Per family of cases, how many were equivalent / raise / differ.
    summary: str = ""

    @property
    def verified(self) -> bool:
        return self.equivalent and self.ran > 0


def index_values(size: int = SIZE) -> Tuple[int, ...]:
    return (-size, -1, 0, 1, size - 1)


def bindings_for(index_names: Sequence[str], value_names: Sequence[str], size: int = SIZE,
                 limit: int = MAX_BINDINGS) -> List[Dict[str, Any]]:
    """Index names get in-range integers (negatives included); value names get every scalar kind."""
    names = list(index_names) + list(value_names)
    pools = [index_values(size)] * len(index_names) + [VALUE_VARIANTS] * len(value_names)
    combos = list(itertools.product(*pools))
    if len(combos) > limit:
        combos = random.Random(0).sample(combos, limit)
    return [dict(zip(names, combo)) for combo in combos]


def ranks_for(rank: Optional[int], index_count: int) -> Tuple[int, ...]:
    """The finding's rank when known, else the ranks the index allows (try 1 and 2 first)."""
    if rank is not None and rank >= 1:
        return (rank,)
    low = max(1, index_count)
    return (low, low + 1)


def _index_ints(prepared: Prepared, binding: Mapping[str, Any]) -> Optional[List[Optional[int]]]:
    """The integer each index element has under ``binding`` (None for `...`); None if not ints."""
    out: List[Optional[int]] = []
    for expr in prepared.index_exprs:
        if expr is None:
            out.append(None)
            continue
        try:
            value = eval(expr, {"__builtins__": __builtins__}, dict(binding))  # noqa: S307 - our own text
        except Exception:  # noqa: BLE001 - a binding the expression does not accept
            return None
        if type(value) is not int:
            return None
        out.append(value)
    return out


def _shape_for(prepared: Prepared, rank: int, binding: Mapping[str, Any], min_length: int,
               past: bool = False) -> Tuple[int, ...]:
    """Sizes chosen from the index (issue #16: `t[start + 16]` needs more than 5 elements).

    Each indexed dimension gets the smallest size that holds the index (``past``: the largest
    that does not, so the write is out of range), at least ``SIZE``/``min_length`` otherwise.
    """
    shape = [max(SIZE, min_length)] * rank
    ints = _index_ints(prepared, binding)
    if ints is None or None in ints or len(ints) > rank:
        return tuple(shape)
    for dim, k in enumerate(ints):
        assert k is not None
        need = k + 1 if k >= 0 else -k  # the smallest size that holds index k
        shape[dim] = need - 1 if past else max(shape[dim], need)
    return tuple(shape)


def run_cases(prepared: Prepared, cases: Iterable[Case], safe: Optional[bool] = None) -> Verdict:
    """Every case; standard cases must agree, adversarial ones must agree for a safe fix.

    ``safe`` defaults to ``prepared.literal`` (literal index and value: what the rule calls safe).
    """
    safe = prepared.literal if safe is None else safe
    total = ran = 0
    dtypes: List[torch.dtype] = []
    by_kind: Dict[str, Dict[str, List[str]]] = {}
    failure: Optional[str] = None
    for case in cases:
        outcome = compare_pair(prepared.original, prepared.rewritten, prepared.target, case, seed=total)
        total += 1
        by_kind.setdefault(case.kind, {}).setdefault(outcome.category, []).append(outcome.detail)
        if not outcome.equivalent and failure is None and (case.kind == STANDARD or safe):
            failure = outcome.detail if case.kind == STANDARD else f"{case.kind}: {outcome.category}: {outcome.detail}"
        if outcome.ran and case.kind == STANDARD:
            ran += 1
            if case.dtype not in dtypes:
                dtypes.append(case.dtype)
    summary = "; ".join(
        f"{kind}: " + ", ".join(f"{len(v)} {cat}" for cat, v in sorted(cats.items()))
        for kind, cats in by_kind.items()
    )
    if failure is not None:
        return Verdict(False, total, ran, failure, tuple(dtypes), summary)
    if ran == 0:
        return Verdict(False, total, 0, "no case ran (every binding raised in both statements)", (), summary)
    return Verdict(True, total, ran, f"{ran}/{by_kind_total(by_kind, STANDARD)} cases bitwise equal; {summary}",
                   tuple(dtypes), summary)


def by_kind_total(by_kind: Mapping[str, Mapping[str, List[str]]], kind: str) -> int:
    return sum(len(v) for v in by_kind.get(kind, {}).values())


def cases_for(prepared: Prepared, rank: Optional[int], dtypes: Sequence[torch.dtype] = DTYPES,
              min_length: int = 0, allocation: Optional[str] = None) -> List[Case]:
    """Standard cases, then the adversarial families (issue #15, "verify must be able to catch these").

    ``min_length``: the length the fixer proved for the tensor (slice spelling); no case uses a
    shorter tensor, since the code cannot produce one.
    """
    gates: Tuple[Optional[bool], ...] = (True, False) if prepared.gated else (None,)
    out: List[Case] = []
    for r in ranks_for(rank, prepared.index_count):
        for binding in bindings_for(prepared.index_names, prepared.value_names):
            shape = _shape_for(prepared, r, binding, min_length)
            for dtype in dtypes:
                for gate in gates:
                    out.append(Case(dtype, shape, binding, gate, allocation=allocation))
        out.extend(replace(c, allocation=allocation)
                   for c in _adversarial(prepared, r, dtypes, gates, min_length))
    return out


def _adversarial(prepared: Prepared, rank: int, dtypes: Sequence[torch.dtype],
                 gates: Tuple[Optional[bool], ...], min_length: int) -> List[Case]:
    base: Dict[str, Any] = {n: 1 for n in prepared.index_names}
    base.update({n: 7 for n in prepared.value_names})
    few = (torch.int64, torch.float32)
    out: List[Case] = []

    def add(kind: str, binding: Mapping[str, Any], shape: Tuple[int, ...], kinds: Sequence[torch.dtype] = few) -> None:
        for dtype in kinds:
            for gate in gates:
                out.append(Case(dtype, shape, dict(binding), gate, kind))

    # Bounds: the smallest tensor the index does not fit, and names bound to n and -n-1.
    past = _shape_for(prepared, rank, base, min_length, past=True)
    if past != _shape_for(prepared, rank, base, min_length) and min(past) >= min_length:
        add(BOUNDS, base, past)
    for name in prepared.index_names:
        n = max(SIZE, min_length)
        for k in (n, -n - 1):
            add(BOUNDS, {**base, name: k}, (n,) * rank)
    # Index kinds the assignment accepts but a select does not (or treats differently).
    for name in prepared.index_names:
        for value in ([1], torch.tensor([1, 2]), torch.tensor(1), torch.tensor([1]), True):
            add(INDEX_KIND, {**base, name: value}, (max(SIZE, min_length),) * rank)
    # Values at the dtypes' limits.
    for name in prepared.value_names:
        for value in LIMIT_VALUES:
            add(DTYPE_LIMIT, {**base, name: value}, _shape_for(prepared, rank, base, min_length), DTYPES)
    # Evaluation order: a value that calls something with side effects.
    if prepared.calls_in_value:
        add(ORDER, {**base, VALUE_PLACEHOLDER: Effect()}, _shape_for(prepared, rank, base, min_length))
    return out


def verify_statements(original: str, rewritten: str, target: str, rank: Optional[int] = None,
                      dtypes: Sequence[torch.dtype] = DTYPES, safe: Optional[bool] = None,
                      min_length: int = 0, allocation: Optional[str] = None) -> Verdict:
    """Level 1 for one H2D001 pair: every dtype, rank, binding and gate branch, plus the
    adversarial families; a safe fix (default: literal index and value) must agree on all."""
    prepared = prepare(original, rewritten, target)
    if prepared.problem:
        return Verdict(False, 0, 0, prepared.problem)
    return run_cases(prepared, cases_for(prepared, rank, dtypes, min_length, allocation), safe)
