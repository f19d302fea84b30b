"""Level 4: H2D002's device-only zero form, on a simulated capture sequence.

Why a simulation: the bug (vLLM PR #51585) is not about bits written by one statement but about
what a *later* reader sees.  A metadata object holds ``query_start_loc`` (the device tensor,
simulated on the CPU when there is no GPU) and ``query_start_loc_cpu``; the capture body runs
with and without the CPU mutation, then a builder that runs after capture computes query
lengths from the CPU offsets.  The fix must leave the device tensor exactly as before and the
CPU offsets intact (lengths > 0, where the original gives 0).

A removal is judged on the capture function it came from, not on the statement alone: the
device twin's zero must run before the removed CPU write on every path (same block or an
enclosing one) and cover it (the whole twin, or the same subscript).  A twin zeroed after the
write, only in another branch or only in part is a failure, and the simulation runs the real
twin statement from the function.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch

from lint_h2d.rules.capture_mutates_shared_cpu_metadata import device_sibling_path
from lint_h2d.verify.equivalence import bitwise_equal, compile_statement
from lint_h2d.verify.pairs import PROVIDED, StatementPair, attribute_chain, free_names

OFFSETS: Tuple[int, ...] = (0, 3, 4, 9, 11)  # query_start_loc of 4 requests: lengths 3, 1, 5, 2


@dataclass(frozen=True)
class CaptureVerdict:
    verified: bool
    device_equal: bool
    original_lengths: Tuple[int, ...]
    fixed_lengths: Tuple[int, ...]
    detail: str


def _metadata(chain: Sequence[str], device: torch.device) -> Tuple[Dict[str, Any], Any]:
    """Namespace with ``root.….x_cpu`` and ``root.….x`` holding the same offsets."""
    holder = types.SimpleNamespace()
    setattr(holder, chain[-1], torch.tensor(OFFSETS, dtype=torch.int32))
    setattr(holder, chain[-1][: -len("_cpu")], torch.tensor(OFFSETS, dtype=torch.int32, device=device))
    value: Any = holder
    for attr in reversed(chain[1:-1]):
        value = types.SimpleNamespace(**{attr: value})
    return {"__builtins__": __builtins__, "torch": torch, chain[0]: value}, holder


def query_lens(cpu_offsets: torch.Tensor) -> Tuple[int, ...]:
    """What the builders after capture compute (``decode_query_len`` etc.)."""
    return tuple(int(x) for x in (cpu_offsets[1:] - cpu_offsets[:-1]).tolist())


def _is_removal(rewritten: str) -> bool:
    return rewritten.strip() in ("", "pass")


def statement_text(code: str) -> str:
    """A statement's text made parseable on its own: the first line's indentation is removed
    from every line that has it.  `textwrap.dedent` keeps it when a comment line inside the
    call sits at column 0 (the indentation of comment lines does not matter to Python)."""
    lines = code.split("\n")
    first = lines[0]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if not indent:
        return code
    return "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines)


def run_body(statements: Sequence[str], chain: Sequence[str], device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
    """Execute a capture body; returns (device tensor, CPU tensor) afterwards."""
    ns, holder = _metadata(chain, device)
    for code in statements:
        if code.strip():
            exec(compile_statement(statement_text(code)), ns)
    return getattr(holder, chain[-1][: -len("_cpu")]), getattr(holder, chain[-1])


# -- the capture function around a removal ------------------------------------------------------

_Body = List[ast.stmt]
# (id of a statement list, index in it) from the function down to a statement.
_Place = List[Tuple[int, int]]


@dataclass(frozen=True)
class TwinWrite:
    """The device twin's zero/fill in the capture function, and how it relates to the write."""

    code: str
    before: bool  # it runs before the CPU write on every path
    covers: bool  # it reaches every element the CPU write does


def _lists(node: ast.AST) -> List[_Body]:
    out: List[_Body] = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            out.append(value)
    for handler in getattr(node, "handlers", ()) or ():
        out.append(handler.body)
    for case in getattr(node, "cases", ()) or ():
        out.append(case.body)
    return out


def _places(body: _Body, prefix: _Place, out: Dict[int, _Place], into_defs: bool) -> None:
    for index, stmt in enumerate(body):
        place = prefix + [(id(body), index)]
        out[id(stmt)] = place
        if not into_defs and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for inner in _lists(stmt):
            _places(inner, place, out, into_defs)


def _dominates(first: _Place, second: _Place) -> bool:
    k = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), None)
    return k is not None and k == len(first) - 1 and first[k][0] == second[k][0] \
        and first[k][1] < second[k][1]


def _scope_at(tree: ast.Module, row: int) -> Union[ast.Module, ast.FunctionDef, ast.AsyncFunctionDef]:
    """The innermost function whose lines hold `row` (the module when none does)."""
    best: Union[ast.Module, ast.FunctionDef, ast.AsyncFunctionDef] = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.lineno <= row <= (node.end_lineno or node.lineno):
            if best is tree or node.lineno >= getattr(best, "lineno", 0):
                best = node
    return best


def _written(stmt: ast.stmt) -> Optional[ast.expr]:
    """The tensor a `x.zero_()` / `x.fill_(v)` / `torch.zero_(x)` statement writes."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    func = stmt.value.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("zero_", "fill_")):
        return None
    if isinstance(func.value, ast.Name) and func.value.id == "torch" and stmt.value.args:
        return stmt.value.args[0]
    return func.value


def _base(node: ast.expr) -> Tuple[str, Optional[str]]:
    """`a.b[:1]` → ("a.b", ":1"): the dotted path and the subscript text, if any."""
    subscript = None
    if isinstance(node, ast.Subscript):
        subscript = ast.unparse(node.slice)
        node = node.value
    return ast.unparse(node), subscript


def twin_writes(source: str, row: int, cpu_path: str) -> Tuple[List[TwinWrite], Optional[str]]:
    """The device twin's zero/fill statements in the function that holds the CPU write at
    `row`; the second item says why none could be looked for."""
    twin = device_sibling_path(cpu_path)
    if twin is None:
        return [], f"`{cpu_path}` has no device twin"
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [], f"the file does not parse: {exc.msg}"
    scope = _scope_at(tree, row)
    places: Dict[int, _Place] = {}
    _places(scope.body, [], places, into_defs=False)
    statements = [s for s in ast.walk(scope) if isinstance(s, ast.stmt) and id(s) in places]
    write = next((s for s in statements if s.lineno == row and not _lists(s)), None)
    if write is None:
        return [], f"no statement at line {row}"
    cpu_written = _written(write)
    cpu_subscript = _base(cpu_written)[1] if cpu_written is not None else None
    out: List[TwinWrite] = []
    for stmt in sorted(statements, key=lambda s: (s.lineno, s.col_offset)):
        target = _written(stmt)
        if target is None or stmt is write:
            continue
        path, subscript = _base(target)
        if path != twin:
            continue
        code = ast.get_source_segment(source, stmt) or ast.unparse(stmt)
        out.append(TwinWrite(code, _dominates(places[id(stmt)], places[id(write)]),
                             subscript is None or subscript == cpu_subscript))
    return out, None


def _read_source(pair: StatementPair) -> Optional[str]:
    if pair.path == SEED_PATH:
        return CAPTURE_SOURCE
    try:
        return Path(pair.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _free_names(code: str) -> Optional[List[str]]:
    try:
        return free_names(statement_text(code))
    except SyntaxError:
        return None


def simulate(pair: StatementPair, device: Optional[torch.device] = None,
             source: Optional[str] = None) -> CaptureVerdict:
    """Original body (device zero + CPU mutation) vs fixed body; then the later reader.

    For a removal, `source` is the file the pair comes from (read from `pair.path` when not
    given): the device twin's write is taken from the capture function, and must dominate and
    cover the removed write."""
    device = device or torch.device("cpu")
    chain = attribute_chain(pair.target)
    if not chain or len(chain) < 2 or device_sibling_path(pair.target) is None:
        return CaptureVerdict(False, False, (), (), f"cannot simulate target `{pair.target}` (needs `obj.x_cpu`)")
    names = [_free_names(pair.original), _free_names(pair.rewritten or "pass")]
    if names[0] is None or names[1] is None:
        return CaptureVerdict(False, False, (), (), "the statement or its rewrite does not parse on its own")
    unknown = [n for n in names[0] + names[1] if n not in PROVIDED and n != chain[0]]
    if unknown:
        return CaptureVerdict(False, False, (), (), f"cannot bind {', '.join(dict.fromkeys(unknown))}")
    problem: Optional[str] = None
    try:
        if _is_removal(pair.rewritten):
            text = source if source is not None else _read_source(pair)
            if text is None:
                return CaptureVerdict(False, False, (), (), f"cannot read `{pair.path}` for its capture function")
            twins, why = twin_writes(text, pair.row, pair.target)
            good = [t for t in twins if t.before and t.covers]
            sibling = device_sibling_path(pair.target)
            if why is not None:
                problem = why
            elif not twins:
                problem = f"the capture function never writes the device twin `{sibling}`"
            elif not any(t.before for t in twins):
                problem = f"the device twin `{sibling}` is not written before the CPU write on every path"
            elif not good:
                problem = f"the device twin `{sibling}` is written only in part"
            keep = good[0].code if good else (twins[0].code if twins else "")
            if good or not twins or twins[0].before:
                body_a, body_b = [keep, pair.original], [keep, pair.rewritten]
            else:
                body_a, body_b = [pair.original, keep], [pair.rewritten, keep]
            dev_a, cpu_a = run_body(body_a, chain, device)
            dev_b, cpu_b = run_body(body_b, chain, device)
            device_ok = bitwise_equal(dev_a.cpu(), dev_b.cpu())
        else:  # the unsafe fix: the same mutation moved onto the device sibling
            dev_a, cpu_a = run_body([pair.original], chain, device)
            dev_b, cpu_b = run_body([pair.rewritten], chain, device)
            device_ok = bitwise_equal(cpu_a.cpu(), dev_b.cpu())
    except Exception as exc:
        return CaptureVerdict(False, False, (), (), f"raised {type(exc).__name__}: {exc}")
    true = query_lens(torch.tensor(OFFSETS))
    before, after = query_lens(cpu_a), query_lens(cpu_b)
    ok = problem is None and device_ok and after == true and all(x > 0 for x in after)
    detail = (f"device tensor {'identical' if device_ok else 'DIFFERS'}; query lengths from CPU offsets: "
              f"original {list(before)}, fixed {list(after)}")
    if problem is not None:
        detail = f"{problem}; {detail}"
    return CaptureVerdict(ok, device_ok, before, after, detail)


SEED_PATH = "<capture seed>"
CAPTURE_SOURCE = '''\
class RocmAttentionMetadataBuilder:
    def build_for_cudagraph_capture(self, common_attn_metadata):
        attn_metadata = self.build(0, common_attn_metadata)
        common_attn_metadata.query_start_loc.zero_()
        common_attn_metadata.query_start_loc_cpu.zero_()
        return attn_metadata
'''


def matrix_pairs() -> List[StatementPair]:
    """The seed capture function through the real engine and fixer (no rewrite re-implemented)."""
    from lint_h2d.config import Settings
    from lint_h2d.engine import Engine, project_facts, decode
    from lint_h2d.verify.pairs import pairs_for_source

    source = decode(SEED_PATH, CAPTURE_SOURCE.encode())
    engine = Engine(Settings(), project_facts([source]))
    pairs, _ = pairs_for_source(engine, source)
    return [p for p in pairs if p.code == "H2D002"]
