"""Line length and line breaks of new statements, the way ruff format / black lay them out.

Why: a rewrite is read in review next to code a formatter keeps within the project's line
length.  A rewrite that runs past it, or that copies the odd breaks of the expression it was
built from (``fill_(f(\\n    x\\n))``), makes a formatted file fail ``ruff format --check``
and a reviewer send the diff back.

What is done, in order (each step only when the previous one does not fit):

1. the statement as rendered, when it is one line within the limit;
2. the statement *flattened*: the line breaks inside its brackets become ordinary spacing
   (no break after ``(``/``[``, one space after a comma and around operators) and a call's
   trailing comma goes (it would keep the call exploded); never when a comment or a
   multi-line string lies inside (those lines stay as written);
3. a *right-hand split*, black's first choice: the last bracket pair with something inside
   whose opening line fits gets its contents on a line of their own, one step deeper, and the
   closing bracket (with what follows it and the trailing comment) on the next;
   contents that still do not fit and hold top-level commas get one element per line with a
   trailing comma, a single binary expression that does not fit breaks before each of its
   loosest operators, and another single element that does not fit is split the same way in turn;
   an assignment whose value has no such bracket gets the value in
   parentheses (``x = (`` / value / ``)``).

The line length is the project's: ``[tool.ruff] line-length`` (or ``[tool.black]``) of the
nearest ``pyproject.toml`` / ``ruff.toml`` above the file, else 88 (both tools' default).
"""
from __future__ import annotations

import ast
import io
import keyword
import os
import sys
import tokenize
import unicodedata
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from fixers.arguments import rewrite_segment
from fixers.edits import Position, TextEdit, line_offsets, split_lines, to_offset

if sys.version_info >= (3, 11):  # pragma: no cover - depends on the interpreter
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["DEFAULT_LINE_LENGTH", "project_line_length", "flattened", "is_pragma", "lay_out", "relaid"]

DEFAULT_LINE_LENGTH = 88
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _configured_length(path: str) -> Optional[int]:
    """``line-length`` in one config file, or None (also for a file that does not parse)."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    tables = [data] if os.path.basename(path) in ("ruff.toml", ".ruff.toml") else []
    tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    tables += [tool.get("ruff", {}), tool.get("black", {})]
    for table in tables:
        value = table.get("line-length") if isinstance(table, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1000:
            return value
    return None


def _length_in(folder: str) -> int:
    # Not cached across calls: a long-running server must see an edited pyproject.toml; the
    # rule asks once per file.
    for name in (".ruff.toml", "ruff.toml", "pyproject.toml"):
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            found = _configured_length(candidate)
            if found is not None:
                return found
    parent = os.path.dirname(folder)
    if parent == folder:
        return DEFAULT_LINE_LENGTH
    return _length_in(parent)


def project_line_length(path: str) -> int:
    """The line length ruff/black use for ``path`` (88 when nothing configures one)."""
    if not path or path == "-":
        return _length_in(os.path.abspath(os.getcwd()))
    return _length_in(os.path.dirname(os.path.abspath(path)))


# -- flattening -------------------------------------------------------------------------------

_SPACED_FIELDS = {"whitespace_before", "whitespace_after", "whitespace_between"}


# Nodes whose every whitespace field lies beside a keyword (or `:=`), never beside a bracket.
_KEYWORDED = (cst.IfExp, cst.CompFor, cst.CompIf, cst.Await, cst.From, cst.AsName, cst.NamedExpr)


def _spaced(node: cst.CSTNode, name: str) -> bool:
    """A break in this place becomes one space (after a comma, around an operator)."""
    if isinstance(node, cst.Comma):
        return name == "whitespace_after"
    if isinstance(node, _KEYWORDED):
        return True  # `a\nif c\nelse b`, `x\nfor x in y`, `(y\n:= 1)`: a keyword needs its space
    if isinstance(node, cst.Not):
        return name == "whitespace_after"
    operators = (cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseAugOp,
                 cst.AssignEqual, cst.Colon)
    if isinstance(node, cst.AssignEqual):
        return False
    return isinstance(node, operators) and name in _SPACED_FIELDS


class _Flatten(cst.CSTTransformer):
    def __init__(self) -> None:
        self.blocked = False

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        changes: Dict[str, object] = {}
        for name in getattr(updated_node, "__dataclass_fields__", {}):
            value = getattr(updated_node, name)
            if isinstance(value, cst.ParenthesizedWhitespace):
                if _has_comment(value):
                    self.blocked = True
                changes[name] = cst.SimpleWhitespace(" " if _spaced(updated_node, name) else "")
        if isinstance(updated_node, cst.Call) and updated_node.args:
            args = list(updated_node.args)
            if _was_broken(original_node):
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                changes["args"] = args
        return updated_node.with_changes(**changes) if changes else updated_node


def _has_comment(ws: cst.ParenthesizedWhitespace) -> bool:
    return ws.first_line.comment is not None or any(line.comment is not None for line in ws.empty_lines)


def _was_broken(node: cst.CSTNode) -> bool:
    return "\n" in cst.Module([]).code_for_node(node) or "\r" in cst.Module([]).code_for_node(node)


def _multiline_string(code: str) -> bool:
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING and token.start[0] != token.end[0]:
                return True
            if getattr(tokenize, "FSTRING_MIDDLE", None) == token.type and "\n" in token.string:
                return True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True
    return False


def flattened(statement: cst.SimpleStatementLine) -> Optional[cst.SimpleStatementLine]:
    """The statement on one line, or None when a comment or multi-line string is inside."""
    code = cst.Module([statement]).code
    if _multiline_string(code):
        return None
    flatten = _Flatten()
    body = []
    for small in statement.body:
        try:
            new = small.visit(flatten)
        except cst.CSTValidationError:
            # A break whose place needs a space that `_spaced` does not know of: the statement
            # keeps its lines (an H2D902 for the whole rule before).
            return None
        assert isinstance(new, cst.BaseSmallStatement)
        body.append(new)
    if flatten.blocked:
        return None
    return statement.with_changes(body=body)


# -- splitting --------------------------------------------------------------------------------


_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def _tokens(line: str) -> Optional[List[tokenize.TokenInfo]]:
    """The tokens of ``line``, an f-string as one STRING token as before Python 3.12.

    Why: since 3.12 (PEP 701) the tokenizer yields an f-string's ``{``/``}`` and what is
    between them as OP and NAME tokens; a split there writes ``f"{\n    x\n}"``, which 3.12
    parses to the same tree but 3.11 and older, which the project may support, reject."""
    try:
        raw = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if _FSTRING_START is None:
        return raw
    out: List[tokenize.TokenInfo] = []
    nesting = 0
    start: Optional[tokenize.TokenInfo] = None
    for token in raw:
        if token.type == _FSTRING_START:
            if nesting == 0:
                start = token
            nesting += 1
        elif token.type == _FSTRING_END:
            nesting -= 1
            if nesting == 0 and start is not None:
                text = line[start.start[1]:token.end[1]] if start.start[0] == token.end[0] else token.string
                out.append(tokenize.TokenInfo(tokenize.STRING, text, start.start, token.end, start.line))
        elif nesting == 0:
            out.append(token)
    return out


def _top_pairs(line: str) -> Tuple[List[Tuple[int, int]], Optional[int], Optional[int]]:
    """Bracket pairs at depth 0 of a one-line statement (columns of the brackets), the column of
    the first top-level ``=`` of an assignment, and the column where a trailing comment starts."""
    tokens = _tokens(line)
    if tokens is None:
        return [], None, None
    pairs: List[Tuple[int, int]] = []
    stack: List[int] = []
    equals: Optional[int] = None
    comment: Optional[int] = None
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comment = token.start[1]
        if token.type != tokenize.OP:
            continue
        if token.string in _OPEN:
            stack.append(token.start[1])
        elif token.string in _CLOSE and stack:
            start = stack.pop()
            if not stack:
                pairs.append((start, token.start[1]))
        elif token.string == "=" and not stack and equals is None:
            equals = token.start[1]
    return pairs, equals, comment


def _top_commas(body: str) -> List[str]:
    tokens = _tokens(body)
    if tokens is None:
        return [body]
    parts: List[str] = []
    depth, last = 0, 0
    for token in tokens:
        if token.type != tokenize.OP:
            continue
        if token.string in _OPEN:
            depth += 1
        elif token.string in _CLOSE:
            depth -= 1
        elif token.string == "," and depth == 0:
            parts.append(body[last:token.start[1]].strip())
            last = token.end[1]
    tail = body[last:].strip()
    if tail:
        parts.append(tail)
    return parts


# Binary operators from the loosest to the tightest: ruff breaks a too long binary expression
# before every operator of its loosest level (`if`/`else` of a conditional expression first).
_LEVELS: Tuple[FrozenSet[str], ...] = (
    frozenset({"if", "else"}),
    frozenset({"or"}),
    frozenset({"and"}),
    frozenset({"in", "not in", "is", "is not", "<", ">", "==", ">=", "<=", "!="}),
    frozenset({"|"}),
    frozenset({"^"}),
    frozenset({"&"}),
    frozenset({"<<", ">>"}),
    frozenset({"+", "-"}),
    frozenset({"*", "/", "//", "%", "@"}),
    frozenset({"**"}),
)
_BINARY = frozenset().union(*_LEVELS)
# Tokens at depth 0 after which the body is not one plain expression to break at operators.
_NOT_PLAIN = frozenset({"lambda", "for", "async", "await", "yield", "=", ":", ":=", "*", "**"})


def _operator_split(body: str) -> Optional[List[str]]:
    """``body`` (one expression) broken before each of its loosest top-level binary operators,
    one operand per element (``["a", "+ len(b)"]``), or None when it has none or is not a plain
    expression (a lambda, a comprehension, a keyword argument, a starred or sliced element).
    """
    tokens = _tokens(body)
    if tokens is None:
        return None
    significant = [t for t in tokens if t.type in (tokenize.OP, tokenize.NAME, tokenize.NUMBER,
                                                   tokenize.STRING)]
    depth = 0
    found: List[Tuple[int, str, int]] = []  # (level, operator, column)
    previous: Optional[tokenize.TokenInfo] = None
    for index, token in enumerate(significant):
        text = token.string
        if token.type == tokenize.OP and text in _OPEN:
            depth += 1
        elif token.type == tokenize.OP and text in _CLOSE:
            depth -= 1
        elif depth == 0:
            operand_before = previous is not None and (
                previous.type in (tokenize.NUMBER, tokenize.STRING)
                or previous.type == tokenize.OP and previous.string in _CLOSE
                or previous.type == tokenize.NAME and not keyword.iskeyword(previous.string)
                or previous.string in ("None", "True", "False"))
            after = significant[index + 1].string if index + 1 < len(significant) else ""
            if text in _NOT_PLAIN and not (operand_before and text in ("*", "**")):
                return None
            if text == "not" and operand_before and after == "in":
                found.append((_level("not in"), "not in", token.start[1]))
            elif text == "is":
                found.append((_level("is"), "is not" if after == "not" else "is", token.start[1]))
            elif text in ("in", "not") and previous is not None and previous.string in ("not", "is"):
                pass  # the second word of `not in` / `is not`
            elif text in _BINARY and operand_before:
                found.append((_level(text), text, token.start[1]))
        previous = token
    if not found:
        return None
    loosest = min(level for level, _, _ in found)
    cuts = [column for level, _, column in found if level == loosest]
    pieces = [body[a:b].strip() for a, b in zip([0] + cuts, cuts + [len(body)])]
    return pieces if all(pieces) else None


def _level(operator: str) -> int:
    return next(n for n, level in enumerate(_LEVELS) if operator in level)


def _fits(width: int, text: str, limit: int) -> bool:
    return width + _columns(text) <= limit


def _split(line: str, indent: str, unit: str, limit: int, newline: str) -> Optional[str]:
    """Right-hand split of one flat line (see the module doc), or None when none applies."""
    pairs, equals, comment = _top_pairs(line)
    code_end = comment if comment is not None else len(line)
    comment_text = line[code_end:].strip()
    code = line[:code_end].rstrip()
    inner = indent + unit
    width = len(indent.expandtabs())
    inner_width = len(inner.expandtabs())
    for start, end in reversed(pairs):
        if end > len(code):
            continue
        body = code[start + 1:end].strip()
        head = code[:start + 1]
        if not body or (equals is not None and start < equals) or not _fits(width, head, limit):
            continue
        tail = code[end:] + (f"  {comment_text}" if comment_text else "")
        if _fits(inner_width, body, limit):
            middle = [inner + body]
        else:
            parts = _top_commas(body)
            if len(parts) >= 2:
                middle = [inner + part + "," for part in parts]
            else:
                operands = _operator_split(body)
                if operands is not None:
                    # A binary expression breaks before each of its loosest operators
                    # (`a\n+ len(b)`), as ruff does, never inside an operand's brackets first.
                    middle = [inner + operand for operand in operands]
                else:
                    # One element that is still too long (`[a, b]` inside `f(...)`): split it
                    # in turn, one step deeper, as black's right-hand split recurses.
                    deeper = _split(body, inner, unit, limit, newline)
                    middle = [inner + (deeper if deeper is not None else body)]
        return newline.join([head] + middle + [indent + tail])
    if equals is not None:
        value = code[equals + 1:].strip()
        head = code[:equals].rstrip() + " = ("
        if _fits(width, head, limit):
            tail = ")" + (f"  {comment_text}" if comment_text else "")
            return newline.join([head, inner + value, indent + tail])
    return None


def _columns(line: str) -> int:
    """Columns of one line as ruff counts them: a wide (East Asian) character takes two."""
    line = line.expandtabs()
    if line.isascii():
        return len(line)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in line)


def _width(text: str, indent: str) -> int:
    """The widest line of ``text`` (first line after ``indent``), tabs as 8 columns.  Lines end
    at ``\n``, ``\r\n`` and ``\r`` only: a form feed, ``\x85`` or U+2028 inside a string
    does not end a line (``str.splitlines`` would split there and call a long line short)."""
    lines = split_lines(text) or [""]
    first = _columns(indent + lines[0])
    return max([first] + [_columns(line) for line in lines[1:]])


def is_pragma(comment: str) -> bool:
    """``# noqa``, ``# type: ignore`` and other pragma comments, which ruff leaves out of a
    line's width (``ruff_python_trivia::is_pragma_comment``)."""
    body = comment[1:].lstrip() if comment.startswith("#") else ""
    if not body:
        return False
    if body[:4].lower() == "noqa" or body.startswith("nosec"):
        return True
    head, colon, _ = body.partition(":")
    return bool(colon) and head in ("isort", "type", "pyright", "pyrefly", "pylint", "flake8", "ruff", "ty")


def _trailing_comment(source: str, end: Position) -> str:
    """The comment that follows ``end`` on its line ("" when none)."""
    offsets = line_offsets(source)
    rest = source[to_offset(offsets, end):]
    line = split_lines(rest)[0] if rest else ""
    stripped = line.strip(" \t\f")
    return stripped if stripped.startswith("#") else ""


def lay_out(module: cst.Module, statement: cst.SimpleStatementLine, rendered: str, indent: str,
            limit: int, *, force_flat: bool = False) -> str:
    """``rendered`` (``statement`` as rendered at ``indent``, first line without it) laid out
    within ``limit`` columns as ruff would: unchanged when it already fits on one line (or,
    without ``force_flat``, when it fits as written), else flattened, else split.

    ``force_flat``: a new statement built from pieces of old code must not keep their breaks.
    """
    newline = module.default_newline
    single = "\n" not in rendered and "\r" not in rendered
    if _width(rendered, indent) <= limit and (single or not force_flat):
        return rendered
    flat = flattened(statement)
    if flat is None:
        return rendered
    flat_text = cst.Module([flat], default_newline=newline).code.rstrip("\r\n")
    if "\n" in flat_text or "\r" in flat_text:
        return rendered
    if _fits(len(indent.expandtabs()), flat_text, limit):
        return flat_text
    unit = module.default_indent if "\t" not in indent else "\t"
    split = _split(flat_text, indent, unit, limit, newline)
    if split is None:
        return flat_text if force_flat else rendered
    return split


# -- edits inside an existing statement --------------------------------------------------------


def _magic_trailing_comma(code: str) -> bool:
    """A comma right before a closing bracket: ruff keeps such a bracket exploded (and a
    one-element tuple's comma is not ours to judge), so the statement keeps its lines."""
    tokens = _tokens(code.replace("\r\n", "\n").replace("\r", "\n"))
    if tokens is None:
        return True
    significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                                       tokenize.INDENT, tokenize.DEDENT)]
    return any(a.string == "," and b.string in _CLOSE for a, b in zip(significant, significant[1:]))


def _same_meaning(before: str, after: str) -> bool:
    try:
        return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
    except (SyntaxError, ValueError):
        return False


def _unparenthesized(line: str, newline: str) -> str:
    """A one-line statement without the parentheses around its whole value (``x = (a == b)``
    -> ``x = a == b``), which ruff removes once the value fits on the line: they are there only
    because the statement was split before.  A tuple, ``yield``, walrus or generator keeps them
    (ruff keeps those, or they are part of the syntax)."""
    try:
        statement = cst.parse_statement(line + newline)
    except cst.ParserSyntaxError:
        return line
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return line
    small = statement.body[0]
    field = "msg" if isinstance(small, cst.Assert) else "value"
    if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Assert)):
        return line
    value = getattr(small, field)
    if not isinstance(value, cst.BaseExpression) or len(value.lpar) != 1 or len(value.rpar) != 1 \
            or isinstance(value, (cst.Tuple, cst.Yield, cst.NamedExpr, cst.GeneratorExp)):
        return line
    bare = small.with_changes(**{field: value.with_changes(lpar=[], rpar=[])})
    return cst.Module([statement.with_changes(body=[bare])], default_newline=newline).code.rstrip("\r\n")


def relaid(module: cst.Module, source: str, start: Position, end: Position, edits: Sequence[TextEdit],
           indent: str, limit: int) -> Optional[TextEdit]:
    """One edit that writes the statement between ``start`` and ``end`` (a simple statement
    alone on its line, trailing comment excluded; ``indent`` before it) with ``edits`` applied
    and laid out as ruff would, or None when ``edits`` as they are suit.

    Why: an edit inside a statement (a keyword added, ``.to(...)`` dropped) keeps the
    statement's old line breaks, which the formatter chose for the longer code:
    ``(\n    torch.arange(...).to(\n        device=d\n    )\n    / dim\n)`` becomes
    ``(\n    torch.arange(..., device=d)\n    / dim\n)`` where ruff writes ``(torch.arange(...,
    device=d) / dim)``.  Done only when the edits remove a line break or a line no longer fits
    (with the trailing comment, unless a pragma, as ruff counts it), or when the statement now
    fits on one line (ruff joins it, and drops the parentheses that split its value); another
    edit within one line keeps the author's layout; and only when nothing in the statement pins
    its lines (a comment, a multi-line string, a magic trailing comma), and when the result fits
    the limit everywhere and parses to the same tree.
    """
    after = rewrite_segment(source, start, end, edits)
    if after is None:
        return None
    # The trailing comment stays where it is, but ruff counts it in the last line's width
    # (unless it is a pragma): it is laid out with the statement, then taken off again.
    comment = _trailing_comment(source, end)
    counted = f"  {comment}" if comment and not is_pragma(comment) else ""
    widest = _width(after + counted, indent)
    # Within the limit, an edit that removes no line break keeps the author's lines, unless
    # the statement now fits on one line: ruff joins it then (the only relayout accepted).
    joined_only = widest <= limit and not any(e.start[0] != e.end[0] and "\n" not in e.text for e in edits)
    if joined_only and "\n" not in after and "\r" not in after:
        return None
    if _magic_trailing_comma(after):
        return None
    try:
        statement = cst.parse_statement(after + counted + module.default_newline)
    except cst.ParserSyntaxError:
        return None
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    laid = lay_out(module, statement, after + counted, indent, limit, force_flat=True)
    if _width(laid, indent) > limit or not laid.endswith(counted):
        return None
    laid = laid[:len(laid) - len(counted)]
    single = "\n" not in laid and "\r" not in laid
    if joined_only and not single:
        return None
    if single:
        laid = _unparenthesized(laid, module.default_newline)
    if laid == after or not _same_meaning(after, laid):
        return None
    return TextEdit(start, end, laid)
