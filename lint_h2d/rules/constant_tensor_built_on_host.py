"""H2D004: a tensor of constant contents built on the host only to be copied to the device."""
from __future__ import annotations

import io
import tokenize
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, AbstractSet, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodeRange

from fixers.arguments import argument_removal, keyword_insertion, rewrite_segment
from fixers._text import source_of
from fixers.edits import TextEdit
from fixers.layout import project_line_length, relaid
from lint_h2d import prefilter
from lint_h2d.cst_children import recorded_children, type_test
from lint_h2d.findings import Applicability, Finding, Fix
from lint_h2d.inference.expressions import (
    Facts,
    _is_dtype,
    _names_a_device,
    built_field,
    dotted_name,
    infer,
    place_of,
)
from lint_h2d.inference.torch_api import INTEGER_DTYPES
from lint_h2d.inference.memory import positional_args
from lint_h2d.inference.scope import StatementFact
from lint_h2d.inference.values import Kind
from lint_h2d.rules.base import FileContext, Rule, RuleDoc

if TYPE_CHECKING:
    import ast

    from lint_h2d.config import Settings

FACTORIES = prefilter.H2D004_FACTORIES
# Constant contents the device kernels write bit for bit like the host ones.
_EXACT = frozenset({"zeros", "ones", "empty", "eye", "full"})
# `.to(...)` keywords the rewrite understands (the rest: no fix).
_TO_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "copy"})
# Factory keywords the rewrite keeps or replaces (the rest: no fix).
_FACTORY_KEYWORDS = frozenset({"dtype", "device", "pin_memory", "size", "out", "fill_value",
                               "start", "end", "step", "n", "m"})


@dataclass(frozen=True)
class Move:
    """`torch.<factory>(...).to(...)` / `.cuda()`: the parts a finding and its fix need."""

    outer: cst.Call
    factory: cst.Call
    name: str
    device: Optional[cst.BaseExpression]  # None: `.cuda()` (the current CUDA device)
    dtype: Optional[cst.BaseExpression]
    how: str  # "`.to(...)`" / "`.cuda()`"


def _keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def _is_device_spec(node: cst.BaseExpression, facts: Facts) -> bool:
    """A device in any form `device=` accepts: a string, `torch.device(...)`, a name typed or
    named as a device (`device`, `self.device`, `x.device`)."""
    if place_of(node, facts) == Kind.DEVICE_PLACE:
        return True
    if isinstance(node, cst.Attribute) and node.attr.value == "device":
        owner = infer(node.value, facts)
        if built_field(owner, facts) and owner.kind != Kind.DEVICE:
            # `.to(self.w.device)` in a method building the class runs: the field is where the
            # constructor made it, the host unless something says otherwise (a move there
            # copies nothing to a device).
            return False
    value = infer(node, facts)
    if value.kind.is_tensor or value.kind in (Kind.NUMPY, Kind.SCALAR, Kind.CPU_PLACE):
        return False
    return isinstance(node, (cst.Name, cst.Attribute)) and _names_a_device(node)


def move_of(call: cst.Call, facts: Facts) -> Optional[Move]:
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda")
            and isinstance(func.value, cst.Call)):
        return None
    factory = func.value
    inner = factory.func
    if not (isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name)
            and inner.value.value in facts.torch_names and inner.value.value not in facts.names
            and inner.attr.value in FACTORIES):
        return None
    if infer(factory, facts).kind != Kind.CPU:
        return None  # placed on a device (or the default device) already
    name = inner.attr.value
    if func.attr.value == "cuda":
        if any(a.star for a in call.args):
            return None
        positional = positional_args(call)
        device_arg = _keyword(call, "device")
        target = device_arg.value if device_arg is not None else (positional[0] if positional else None)
        return Move(call, factory, name, target, None, "`.cuda()`")
    if any(a.star for a in call.args):
        return None
    positional = positional_args(call)
    device_kw = _keyword(call, "device")
    dtype_kw = _keyword(call, "dtype")
    device: Optional[cst.BaseExpression] = device_kw.value if device_kw is not None else None
    dtype: Optional[cst.BaseExpression] = dtype_kw.value if dtype_kw is not None else None
    if device is None:
        if not positional or _is_dtype(positional[0], facts):
            return None
        device = positional[0]
        if len(positional) > 1:
            dtype = positional[1]
    if not _is_device_spec(device, facts):
        return None
    return Move(call, factory, name, device, dtype, "`.to(...)`")


def _simple(node: cst.BaseExpression) -> bool:
    """Evaluating it has no effect and its value cannot change in between (names, attributes,
    literals, `torch.device("cuda")`): moving it inside the factory call is invisible."""
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer)):
        return True
    if isinstance(node, cst.Attribute):
        return dotted_name(node) is not None
    if isinstance(node, cst.Call) and (dotted_name(node.func) or "").endswith("device"):
        return all(isinstance(a.value, (cst.SimpleString, cst.Integer)) and a.keyword is None
                   for a in node.args)
    return False


def _int_valued(node: cst.BaseExpression, facts: Facts) -> bool:
    """An integer for sure: an int literal, `len(...)`, `.numel()`, `.size(i)`, `.shape[i]`, `int(...)`."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _int_valued(node.expression, facts)
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name) and func.value in ("len", "int"):
            return True
        if isinstance(func, cst.Attribute) and func.attr.value in ("numel", "size", "dim", "nelement"):
            return True
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
            and node.value.attr.value == "shape":
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)):
        return _int_valued(node.left, facts) and _int_valued(node.right, facts)
    return False


def _integer_dtype(node: Optional[cst.BaseExpression]) -> Optional[bool]:
    if node is None:
        return None
    return (dotted_name(node) or "").split(".")[-1] in INTEGER_DTYPES


def _comments(code: str) -> Counter[str]:
    """The comments of an expression's source, as tokens (a `#` inside a string is not one).
    A fix that would drop one is unsafe, as in ruff: nobody asked for their comment to go."""
    found: Counter[str] = Counter()
    try:
        for token in tokenize.generate_tokens(io.StringIO("(" + code + "\n)").readline):
            if token.type == tokenize.COMMENT:
                found[token.string] += 1
    except (tokenize.TokenError, SyntaxError):
        found["<unreadable>"] += 1  # cannot tell: count it as a comment that may be lost
    return found


class ConstantTensorBuiltOnHost(Rule):
    code = "H2D004"
    name = "constant-tensor-built-on-host"
    summary = "Constant tensor built on the host only to be copied to the device"
    has_tree_check = True
    doc = RuleDoc(
        what="""
Flags `torch.zeros/ones/full/empty/eye/arange/linspace(...)` built on the CPU and moved to the
device at once, `torch.zeros(n, dtype=d).to(device)` or `.cuda()`, with or without
`non_blocking=True`. A move to `self.w.device` in a method that building the class runs
(`__init__`, a method it calls or hands to `self.apply(...)`) is not flagged: the field is still
where the constructor made it, the host unless something says otherwise, so nothing is copied.
""",
        why="""
The contents are known without any host data: the device can write them itself. Building
them on the host costs an allocation, a fill and a host-to-device copy from pageable memory,
which the runtime performs synchronously: the host waits for the stream, every time the line
runs. `torch.zeros(n, dtype=d, device=device)` launches one fill kernel and returns at once.
""",
        example="""
mask = torch.zeros(num_tokens, dtype=torch.bool).to(device)
""",
        use_instead="""
mask = torch.zeros(num_tokens, dtype=torch.bool, device=device)
""",
        fix_safety="""
The fix passes the move's target as `device=` (and `.to(..., dtype=...)` as `dtype=`) to the
factory and drops the move (and `pin_memory=`, meaningless on the device). It is **safe** for
`zeros`, `ones`, `empty`, `eye` and `full` with a literal fill value, and for `arange` whose
bounds are integers: the device writes the same values, dtype and shape, and the result is a
new tensor on the same device as before. It is **unsafe** for `linspace`, for `arange` with
bounds that may be floats (host and device kernels may differ in the last bit), for `full`
with a computed fill value or a dtype change (the fill value would be cast once instead of
twice), and when the target or dtype is an expression whose evaluation would move. No fix is
offered for `.to(other_tensor)`, `.cuda(device)` with a non-literal device, `requires_grad=`,
`out=`, `**kwargs`, or other keywords.
It is also unsafe when the move holds a comment (`.to(  # why\n    device)`) that the rewrite
would drop.
""",
    )
    invalid_examples = (
        "import torch\ndef f(device, n):\n    return torch.zeros(n, dtype=torch.int32).to(device)\n",
        "import torch\ndef f(n):\n    return torch.arange(n).cuda()\n",
        "import torch\ndef f(n):\n    return torch.ones(2, 3).to('cuda', non_blocking=True)\n",
    )
    valid_examples = (
        "import torch\ndef f(device, n):\n    return torch.zeros(n, dtype=torch.int32, device=device)\n",
        "import torch\ndef f(n):\n    return torch.zeros(n).to(torch.float16)\n",  # a dtype change
        "import torch\ndef f(n):\n    return torch.zeros(n).to('cpu')\n",
        "import torch\ndef f(values, device):\n    return torch.tensor(values).to(device)\n",  # host data
        "import torch\ndef f(n, other):\n    return torch.zeros(n).to(other)\n",  # not known to be a device
        # built in `__init__`: the weight is still on the host
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.w = torch.nn.Parameter(torch.zeros(n))\n        self.b = torch.ones(n).to(self.w.device)\n",
    )

    def could_match(self, text: str, settings: "Settings",
                    device_fields: AbstractSet[str] = frozenset()) -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match(text, settings, device_fields)

    def could_match_tree(self, tree: "ast.AST", settings: "Settings",
                         device_fields: AbstractSet[str] = frozenset(), text: str = "") -> bool:
        return prefilter.RULE_FILTERS[self.code].could_match_tree(tree, settings, device_fields, text)

    def wants(self, small: cst.BaseSmallStatement) -> bool:
        return _has_moves_shape(small)

    def check(self, facts: Sequence[StatementFact], ctx: FileContext) -> Iterable[Finding]:
        for fact in facts:
            for call in _moves_shape(fact.small):
                move = move_of(call, fact.facts)
                if move is not None:
                    yield self._finding(fact, move, ctx)

    def _finding(self, fact: StatementFact, move: Move, ctx: FileContext) -> Finding:
        code = " ".join(ctx.module.code_for_node(move.outer).split())
        fix, reason, suggestion = self._fix(move, fact.facts, ctx)
        message = (
            f"`torch.{move.name}(...)` is built on the host only to be copied to the device by "
            f"{move.how} (`{code if len(code) <= 80 else code[:77] + '...'}`): a blocking copy "
            f"from pageable memory; allocate it on the device instead"
            + (f" (`{suggestion}`)" if suggestion else "")
        )
        details: Tuple[Tuple[str, str], ...] = ()
        if fix is not None:
            # The expression before and after, for `lint-h2d verify` (lint_h2d/verify/moves.py).
            where = ctx.position(move.outer)
            after = rewrite_segment(ctx.text, (where.start.line, where.start.column),
                                    (where.end.line, where.end.column), fix.edits)
            before = ctx.module.code_for_node(move.outer)
            if after is not None:
                details = (("expression", before), ("replacement", after))
            if after is None or not _comments(before) <= _comments(after):
                fix = replace(fix, applicability=Applicability.UNSAFE,
                              message=fix.message + " (unsafe: it would delete a comment)")
            fix = _laid_out(fix, fact, ctx)
        return ctx.finding(self.code, move.outer, message, fix=fix, no_fix_reason=reason,
                           statement=fact.owner, details=details)

    def _fix(self, move: Move, facts: Facts,
             ctx: FileContext) -> Tuple[Optional[Fix], Optional[str], Optional[str]]:
        factory = move.factory
        outer = move.outer
        if outer.rpar or factory.rpar or outer.lpar or factory.lpar:
            return None, "parenthesized call", None
        for arg in factory.args:
            if arg.star == "**":
                return None, "the factory passes `**kwargs`", None
            if arg.keyword is not None and arg.keyword.value not in _FACTORY_KEYWORDS:
                return None, f"the factory passes `{arg.keyword.value}=`", None
            if arg.keyword is not None and arg.keyword.value == "out":
                return None, "the factory writes into `out=`", None
        for arg in outer.args:
            if arg.keyword is not None and arg.keyword.value not in _TO_KEYWORDS:
                return None, f"the move passes `{arg.keyword.value}=`", None
        if move.how == "`.cuda()`":
            if move.device is None:
                device_text = '"cuda"'
            elif isinstance(move.device, cst.Integer):
                device_text = f'"cuda:{move.device.value}"'
            else:
                return None, "`.cuda(device)` with a computed device", None
        else:
            assert move.device is not None
            device_text = ctx.module.code_for_node(move.device)
        dtype_text = ctx.module.code_for_node(move.dtype) if move.dtype is not None else None
        if "\n" in device_text or (dtype_text is not None and "\n" in dtype_text):
            return None, "the target spans lines", None
        safe, why_unsafe = self._safety(move, facts)
        if move.device is not None and not _simple(move.device) or \
                move.dtype is not None and not _simple(move.dtype):
            safe, why_unsafe = False, "the target is computed: its evaluation would move"
        position = ctx.position
        edits: List[TextEdit] = []
        factory_dtype = _keyword(factory, "dtype")
        factory_device = _keyword(factory, "device")
        pin = _keyword(factory, "pin_memory")
        added: List[str] = []
        if factory_device is not None:
            edits.append(_replaced(factory_device.value, device_text, position))
        else:
            added.append(f"device={device_text}")
        if dtype_text is not None:
            if factory_dtype is not None:
                if not _simple(factory_dtype.value):
                    return None, "the factory's dtype is computed", None
                edits.append(_replaced(factory_dtype.value, dtype_text, position))
            else:
                added.append(f"dtype={dtype_text}")
        if pin is not None:
            if not _simple(pin.value):
                return None, "`pin_memory=` is computed", None
            removal = argument_removal(factory, pin, position)
            if removal is None:
                return None, "cannot drop `pin_memory=` here", None
            edits.append(removal)
        if added:
            insertion = keyword_insertion(factory, ", ".join(added), position, ctx.text)
            if insertion is None:
                return None, "cannot place a keyword in this call's layout", None
            edits.append(insertion)
        factory_end = position(factory).end
        outer_end = position(outer).end
        edits.append(TextEdit((factory_end.line, factory_end.column), (outer_end.line, outer_end.column), ""))
        suggestion = _preview(ctx.module.code_for_node(factory), added, device_text, dtype_text,
                              factory_device is not None, factory_dtype is not None)
        applicability = Applicability.SAFE if safe else Applicability.UNSAFE
        message = f"Allocate on the device: `{suggestion}`"
        if why_unsafe and not safe:
            message += f" ({why_unsafe})"
        return Fix(applicability, message, tuple(sorted(edits))), None, suggestion

    @staticmethod
    def _safety(move: Move, facts: Facts) -> Tuple[bool, Optional[str]]:
        factory = move.factory
        changes_dtype = move.dtype is not None
        if move.name == "linspace":
            return False, "host and device `linspace` may differ in the last bit"
        if move.name == "arange":
            bounds = [a.value for a in factory.args if a.keyword is None or a.keyword.value in ("start", "end", "step")]
            dtype_kw = _keyword(factory, "dtype")
            integer = all(_int_valued(b, facts) for b in bounds) and (
                dtype_kw is None or _integer_dtype(dtype_kw.value)) and (
                not changes_dtype or _integer_dtype(move.dtype))
            if not integer:
                return False, "`arange` with bounds or a dtype that may be floating point"
            return True, None
        if move.name == "full":
            fill = _keyword(factory, "fill_value")
            positional = positional_args(factory)
            value = fill.value if fill is not None else (positional[1] if len(positional) > 1 else None)
            literal = value is not None and (
                isinstance(value, (cst.Integer, cst.Float)) or
                isinstance(value, cst.Name) and value.value in ("True", "False") or
                isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)))
            if not literal:
                return False, "`full` with a computed fill value"
            if changes_dtype:
                return False, "`full` then a dtype change casts the fill value twice"
        return True, None


def _laid_out(fix: Fix, fact: StatementFact, ctx: FileContext) -> Fix:
    """The fix as one edit of its whole statement when the argument edits would leave the
    statement's old line breaks behind (`fixers.layout.relaid`): the file stays as ruff
    formats it."""
    owner = fact.owner
    if not (isinstance(owner, cst.SimpleStatementLine) and len(owner.body) == 1):
        return fix
    where = ctx.position(fact.small)
    indent = source_of(ctx.module, ctx.text).text(where.start.line)[:where.start.column]
    if indent.strip(" \t"):
        return fix  # a form feed or other odd space before it: left as it is
    limit = ctx.memo.get("line_length")
    if not isinstance(limit, int):
        limit = project_line_length(ctx.path)
        ctx.memo["line_length"] = limit
    edit = relaid(ctx.module, ctx.text, (where.start.line, where.start.column),
                  (where.end.line, where.end.column), fix.edits, indent, limit)
    return fix if edit is None else replace(fix, edits=(edit,))


def _replaced(node: cst.CSTNode, text: str, position: Callable[[cst.CSTNode], CodeRange]) -> TextEdit:
    """The edit that writes ``text`` in place of an argument's value."""
    where = position(node)
    return TextEdit((where.start.line, where.start.column), (where.end.line, where.end.column), text)


def _preview(factory_code: str, added: List[str], device: str, dtype: Optional[str],
             replaced_device: bool, replaced_dtype: bool) -> str:
    """The rewritten factory call as the message shows it (on one line)."""
    text = " ".join(factory_code.split())
    if replaced_device or replaced_dtype or not text.endswith(")"):
        name = text.split("(", 1)[0]
        return f"{name}(..., device={device}" + (f", dtype={dtype}" if dtype else "") + ")"
    if added:
        text = text[:-1].rstrip().rstrip(",") + ", " + ", ".join(added) + ")"
    return text


def _is_move_shape(call: cst.Call) -> bool:
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda") \
        and isinstance(func.value, cst.Call) \
        and isinstance(func.value.func, cst.Attribute) \
        and isinstance(func.value.func.value, cst.Name) \
        and func.value.func.attr.value in FACTORIES


_is_call = type_test(cst.Call)
_is_leaf = type_test(cst.Name, cst.SimpleString, cst.Integer, cst.Float)


def _has_moves_shape(node: cst.CSTNode) -> bool:
    """Whether `_moves_shape(node)` yields anything (`wants`, on every statement): the same
    nodes, read in place (`recorded_children`; the whitespace and operator nodes it leaves out
    hold no call), in another order."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if _is_call(current) and _is_move_shape(current):  # type: ignore[arg-type]
            return True
        if not _is_leaf(current):
            stack.extend(recorded_children(current))
    return False


def _moves_shape(node: cst.CSTNode) -> Iterator[cst.Call]:
    """`<name>.<factory>(...).to(...)` / `.cuda(...)` calls in a statement (cheap)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and _is_move_shape(current):
            yield current
        if isinstance(current, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
            continue
        stack.extend(current.children)
