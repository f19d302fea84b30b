"""Adding the import a fix needs, once, where a person would put it.

Why: a gated fix refers to ``current_platform`` or ``torch``; the edit must not duplicate an
import the module already has, must not silently rebind a name the module uses for something
else, and should land where the project's import sorter (isort/ruff) would keep it, so the
fixed file passes the project's own lint.

Placement mimics isort/ruff's default layout (sections separated by blank lines; in a section
``import x`` lines first, then ``from x import`` lines, each sorted by lower-cased module):

1. the package is already imported: among its lines, at the sorted position;
2. a new package: a stdlib module joins the stdlib section; a well-known third-party package
   (``torch``...) joins the third-party section or opens one after the stdlib section; any
   other package is taken as first-party (``vllm`` inside vLLM) and opens a section after the
   last absolute-import section, before relative imports;
3. no import lines: after the docstring and ``from __future__`` imports, separated by a blank
   line; else at the top, after the leading licence/shebang/coding comment block.

Checked against vLLM 0.33.0: deleting ``from vllm.platforms import current_platform`` from
each of the 527 files that have it as a line of its own and re-inserting it restores 523 byte
for byte (2 use the name in an ``if`` above where it sorts, 1 imports it mid-file).

The header is the module's leading run of docstring, import lines, ``if TYPE_CHECKING:`` blocks
and other ``if``/``try`` blocks that only import; it ends at the first other statement.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from fixers._text import Statement
from fixers.edits import TextEdit, Unfixable, line_offsets

__all__ = ["import_insertion", "ImportInsertion", "import_satisfies", "import_alias"]

ImportInsertion = Union[TextEdit, Unfixable, None]

# ``sys.stdlib_module_names`` is 3.10+; on 3.9 the common ones suffice for placement.
_STDLIB_FALLBACK = frozenset(
    "__future__ abc argparse ast asyncio base64 bisect builtins collections contextlib copy "
    "csv dataclasses datetime enum functools gc glob hashlib heapq importlib inspect io "
    "itertools json logging math multiprocessing operator os pathlib pickle platform queue "
    "random re shutil signal socket string struct subprocess sys tempfile textwrap threading "
    "time traceback types typing unittest uuid warnings weakref".split()
)

# Packages that are third-party wherever lint-h2d runs; they decide which section is which.
_KNOWN_THIRD_PARTY = frozenset(
    "torch torchvision torchaudio numpy triton transformers tokenizers safetensors "
    "huggingface_hub pil cv2 scipy pandas einops pydantic msgspec zmq psutil ray tqdm "
    "requests aiohttp fastapi uvicorn openai yaml regex jinja2 pytest sentencepiece "
    "tiktoken xformers flashinfer cupy numba".split()
)

_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


@dataclass(frozen=True)
class _Binding:
    """One name an import binds and what it binds it to.

    ``kind`` is ``"chain"`` for ``import a.b`` (binds ``a``, loads ``a.b``), ``"module"`` for
    ``import a.b as x`` and ``"from"`` for ``from m import n [as x]``.
    """

    name: str
    kind: str
    target: str


def _dotted(node: Union[cst.Attribute, cst.Name]) -> str:
    if isinstance(node, cst.Name):
        return node.value
    assert isinstance(node.value, (cst.Attribute, cst.Name))
    return f"{_dotted(node.value)}.{node.attr.value}"


def _from_module(node: cst.ImportFrom) -> str:
    dots = "." * len(node.relative)
    if node.module is None:
        return dots
    return dots + _dotted(node.module)


def _alias_name(alias: cst.ImportAlias) -> Optional[str]:
    if alias.asname is None:
        return None
    assert isinstance(alias.asname.name, cst.Name)
    return alias.asname.name.value


def _bindings(node: Union[cst.Import, cst.ImportFrom]) -> List[_Binding]:
    found: List[_Binding] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            dotted = _dotted(alias.name)
            asname = _alias_name(alias)
            if asname is None:
                found.append(_Binding(dotted.split(".")[0], "chain", dotted))
            else:
                found.append(_Binding(asname, "module", dotted))
        return found
    if isinstance(node.names, cst.ImportStar):
        return found
    module = _from_module(node)
    for alias in node.names:
        name = _dotted(alias.name)
        found.append(_Binding(_alias_name(alias) or name, "from", f"{module}:{name}"))
    return found


def _satisfies(have: _Binding, want: _Binding) -> bool:
    """Whether an existing binding makes the wanted import redundant."""
    if have.name != want.name:
        return False
    if want.kind == "chain":
        if have.kind == "chain":
            return have.target == want.target or have.target.startswith(want.target + ".")
        return have.kind == "module" and have.target == want.target == want.name
    if want.kind == "module" and have.kind == "chain":
        return have.target == want.target == want.name
    return have.kind == want.kind and have.target == want.target


def import_satisfies(node: Union[cst.Import, cst.ImportFrom], import_line: str) -> bool:
    """Whether ``node`` binds every name ``import_line`` binds, to the same thing."""
    have = _bindings(node)
    return all(any(_satisfies(h, w) for h in have) for w in _bindings(_parse_import(import_line)))


def import_alias(node: Union[cst.Import, cst.ImportFrom], import_line: str) -> Optional[Tuple[str, str]]:
    """``(name, alias)`` when ``node`` binds what ``import_line`` binds as ``name``, under ``alias``.

    ``import torch as th`` for ``import torch`` gives ``("torch", "th")``; ``from m import x as
    y`` for ``from m import x`` gives ``("x", "y")``.  Why: when a local name shadows ``torch``
    at a fix site, the module's own alias still reaches the module.
    """
    wanted = _bindings(_parse_import(import_line))
    if len(wanted) != 1:
        return None
    want = wanted[0]
    for have in _bindings(node):
        if have.name == want.name:
            continue
        if want.kind == "chain" and want.target == want.name and have.kind == "module" and have.target == want.target:
            return want.name, have.name
        if want.kind == "from" and have.kind == "from" and have.target == want.target:
            return want.name, have.name
    return None


def _import_line(statement: cst.BaseStatement) -> Optional[Sequence[Union[cst.Import, cst.ImportFrom]]]:
    if isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    ):
        return [s for s in statement.body if isinstance(s, (cst.Import, cst.ImportFrom))]
    return None


def _is_future(statement: cst.BaseStatement) -> bool:
    imports = _import_line(statement)
    return bool(imports) and all(
        isinstance(s, cst.ImportFrom) and _from_module(s) == "__future__" for s in imports or ()
    )


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_type_checking(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.Name):
        return test.value == "TYPE_CHECKING"
    return isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING"


def _only_imports(suite: cst.BaseSuite) -> bool:
    body: Sequence[cst.BaseStatement]
    if isinstance(suite, cst.SimpleStatementSuite):
        return all(isinstance(s, (cst.Import, cst.ImportFrom, cst.Pass)) for s in suite.body)
    assert isinstance(suite, cst.IndentedBlock)
    body = suite.body
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            if not all(isinstance(s, (cst.Import, cst.ImportFrom, cst.Pass)) for s in statement.body):
                return False
        elif isinstance(statement, cst.If):
            if not _is_import_block(statement):
                return False
        else:
            return False
    return True


def _is_import_block(statement: cst.BaseStatement) -> bool:
    """``if TYPE_CHECKING:``, ``if ...:`` and ``try:`` blocks whose bodies only import."""
    if isinstance(statement, cst.If):
        if _is_type_checking(statement.test):
            return True
        if not _only_imports(statement.body):
            return False
        orelse = statement.orelse
        if orelse is None:
            return True
        if isinstance(orelse, cst.If):
            return _is_import_block(orelse)
        return _only_imports(orelse.body)
    if isinstance(statement, cst.Try):
        return _only_imports(statement.body)
    return False


def _runtime_imports(body: Sequence[cst.BaseStatement]) -> Iterator[Union[cst.Import, cst.ImportFrom]]:
    """Imports that certainly run at module level: top-level lines and ``try:`` bodies."""
    for statement in body:
        imports = _import_line(statement)
        if imports is not None:
            yield from imports
        elif isinstance(statement, cst.Try) and isinstance(statement.body, cst.IndentedBlock):
            yield from _runtime_imports(statement.body.body)


def target_names(node: cst.CSTNode) -> Iterator[str]:
    """Names an assignment target binds (`a`, `a, *b`, `[a, (b, c)]`); not `a.x` / `a[i]`."""
    return (name.value for name in target_name_nodes(node))


def target_name_nodes(node: cst.CSTNode) -> Iterator[cst.Name]:
    """`target_names`, as the `Name` nodes (for evidence that points at the binding)."""
    if isinstance(node, cst.Name):
        yield node
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            yield from target_name_nodes(element.value)
    elif isinstance(node, cst.StarredElement):
        yield from target_name_nodes(node.value)


class _ModuleBindings(cst.CSTVisitor):
    """Every (name, binding-or-None) bound at module scope; None for non-import bindings.

    Function and class bodies are skipped (their names are local); ``if TYPE_CHECKING:``
    bodies are skipped (they do not run).
    """

    def __init__(self) -> None:
        self.found: List[Tuple[str, Optional[_Binding]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.found.append((node.name.value, None))
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.found.append((node.name.value, None))
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_If(self, node: cst.If) -> Optional[bool]:
        if _is_type_checking(node.test):
            if node.orelse is not None:
                node.orelse.visit(self)
            return False
        return None

    def visit_Import(self, node: cst.Import) -> None:
        self.found.extend((b.name, b) for b in _bindings(node))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found.extend((b.name, b) for b in _bindings(node))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.found.extend((n, None) for n in target_names(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.found.extend((n, None) for n in target_names(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.found.extend((n, None) for n in target_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.found.extend((n, None) for n in target_names(node.target))

    def visit_AsName(self, node: cst.AsName) -> None:
        # ``with ... as x`` / ``except ... as x``; import aliases are handled above.
        if isinstance(node.name, cst.BaseExpression):
            self.found.extend((n, None) for n in target_names(node.name))

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.found.extend((n, None) for n in target_names(node.target))


def module_level_names(module: cst.Module) -> List[str]:
    """Every name the module binds at module scope, once per binding (imports, assignments,
    `def`s, classes, `for` / `with` / `except` targets, `:=`), as `_ModuleBindings` finds
    them: a name listed twice may hold either binding where it is read.  `import a.b` and
    `import a.c` bind `a` to the one package: listed once."""
    visitor = _ModuleBindings()
    for statement in module.body:
        statement.visit(visitor)
    chains: Set[str] = set()
    names: List[str] = []
    for name, binding in visitor.found:
        if binding is not None and binding.kind == "chain":
            if name in chains:
                continue
            chains.add(name)
        names.append(name)
    return names


def _parse_import(import_line: str) -> Union[cst.Import, cst.ImportFrom]:
    try:
        statement = cst.parse_statement(import_line)
    except cst.ParserSyntaxError as exc:
        raise ValueError(f"{import_line!r} is not a Python statement: {exc.message}") from None
    if (
        not isinstance(statement, cst.SimpleStatementLine)
        or len(statement.body) != 1
        or not isinstance(statement.body[0], (cst.Import, cst.ImportFrom))
    ):
        raise ValueError(f"{import_line!r} is not a single import statement")
    node = statement.body[0]
    if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
        raise ValueError(f"{import_line!r}: star imports cannot be checked for presence")
    return node


def _sort_key(node: Union[cst.Import, cst.ImportFrom]) -> Tuple[str, str]:
    """(style, lower-cased module), the order isort/ruff keep within a package."""
    if isinstance(node, cst.Import):
        return ("import", _dotted(node.names[0].name).lower())
    return ("from", _from_module(node).lower())


def _root(module_name: str) -> str:
    return module_name.split(".")[0]


@dataclass(frozen=True)
class _Placed:
    """A top-level statement and the lines it occupies."""

    index: int
    node: Statement
    first_line: int  # first of its leading lines
    own_line: int  # the statement itself
    next_line: int  # the line after it


def _placements(module: cst.Module, count: int) -> List[_Placed]:
    """Line numbers of the first ``count`` top-level statements, from their rendered code."""
    line = 1 + len(module.header)
    placed: List[_Placed] = []
    for index, node in enumerate(module.body[:count]):
        height = len(line_offsets(module.code_for_node(node))) - 1
        placed.append(_Placed(index, node, line, line + len(node.leading_lines), line + height))
        line += height
    return placed


def _line_after(module: cst.Module, placed: _Placed) -> Tuple[Tuple[int, int], bool]:
    """Where text goes to follow ``placed``; True when it must start with a newline (EOF)."""
    last = placed.index == len(module.body) - 1
    if last and not module.has_trailing_newline and not module.footer:
        code = module.code_for_node(placed.node)
        code = code[: len(code) - len(module.default_newline)]
        last_line = code[line_offsets(code)[-1] :]
        return (placed.next_line - 1, len(last_line)), True
    return (placed.next_line, 0), False


def _next_line_blank(module: cst.Module, index: int) -> Optional[bool]:
    """Whether the line that starts top-level statement ``index`` (with its leading lines) is
    blank; None at the end of the module."""
    if index < len(module.body):
        node = module.body[index]
        if node.leading_lines:
            return node.leading_lines[0].comment is None
        return False
    if module.footer:
        return module.footer[0].comment is None
    return None


def _comment_block_start(placed: _Placed) -> int:
    """First line of the comments directly above a statement (they belong to it)."""
    lines = placed.node.leading_lines
    count = 0
    for empty in reversed(lines):
        if empty.comment is None:
            break
        count += 1
    return placed.own_line - count


def _line_imports(placed: _Placed) -> Sequence[Union[cst.Import, cst.ImportFrom]]:
    imports = _import_line(placed.node)
    assert imports
    return imports


def _line_root(placed: _Placed) -> str:
    """Top-level package of an import line (``"."`` for a relative import)."""
    key = _sort_key(_line_imports(placed)[0])[1]
    return "." if key.startswith(".") else _root(key)


def _insert_after(module: cst.Module, placed: _Placed, text: str, separate: bool) -> TextEdit:
    """Insert ``text`` (ending in a newline) on the lines after ``placed``.

    ``separate``: start a new group of imports, blank lines around it.
    """
    newline = module.default_newline
    position, at_eof = _line_after(module, placed)
    if at_eof:
        return TextEdit(position, position, (newline * 2 if separate else newline) + text[: -len(newline)])
    if separate:
        text = newline + text
        if _next_line_blank(module, placed.index + 1) is False:
            text += newline
    return TextEdit(position, position, text)


def _among_imports(
    module: cst.Module, plain: Sequence[_Placed], node: Union[cst.Import, cst.ImportFrom], import_line: str
) -> TextEdit:
    """Placement rules 1-3 of the module docstring, for a header that has import lines."""
    newline = module.default_newline
    text = import_line + newline
    style, key = _sort_key(node)
    root = "." if key.startswith(".") else _root(key)
    same_package = [line for g in _groups(plain) if any(_line_root(p) == root for p in g) for line in g]
    if same_package:
        return _join_sorted(module, same_package, style, key, text)
    if root == ".":
        return _insert_after(module, plain[-1], text, separate=True)
    return _new_package(module, plain, style, key, text)


def _groups(plain: Sequence[_Placed]) -> List[List[_Placed]]:
    """Import lines split where a blank line or other statement separates them (isort sections)."""
    groups: List[List[_Placed]] = []
    for placed in plain:
        blank_above = any(empty.comment is None for empty in placed.node.leading_lines)
        if groups and placed.index == groups[-1][-1].index + 1 and not blank_above:
            groups[-1].append(placed)
        else:
            groups.append([placed])
    return groups


def _is_stdlib(root: str) -> bool:
    return root in getattr(sys, "stdlib_module_names", _STDLIB_FALLBACK)


def _join_sorted(module: cst.Module, group: Sequence[_Placed], style: str, key: str, text: str) -> TextEdit:
    """Within a section isort keeps ``import x`` lines first, then ``from x import`` lines."""
    ours = (style != "import", key)
    for placed in group:
        theirs_style, theirs_key = _sort_key(_line_imports(placed)[0])
        if (theirs_style != "import", theirs_key) > ours:
            line = _comment_block_start(placed)
            return TextEdit((line, 0), (line, 0), text)
    return _insert_after(module, group[-1], text, separate=False)


def _new_package(module: cst.Module, plain: Sequence[_Placed], style: str, key: str, text: str) -> TextEdit:
    """Rule 3: a package the module does not import yet, placed by isort's sections.

    Sections are runs of import lines without blank lines between.  A stdlib module joins the
    stdlib section.  A well-known third-party package joins the third-party section (one with
    a well-known package, of several packages, or sharing none with the last non-stdlib section:
    first-party sections are usually one package), else opens one
    right after the stdlib section.  Any other package (``vllm`` in vLLM: first-party) joins a
    section whose packages sort around it, else opens a section before the first that sorts
    after it, else after the last absolute section.
    """
    newline = module.default_newline
    root = _root(key)
    groups = [g for g in _groups(plain) if any(_line_root(p) != "." for p in g)]
    if not groups:  # only relative imports: absolute ones go above them
        line = _comment_block_start(plain[0])
        return TextEdit((line, 0), (line, 0), text + newline)
    roots = [sorted({_line_root(p) for p in g if _line_root(p) != "."}) for g in groups]
    stdlib = [all(_is_stdlib(r) for r in rs) for rs in roots]
    non_std = [n for n, is_std in enumerate(stdlib) if not is_std]
    last_roots = set(roots[non_std[-1]]) if non_std else set()
    third = [
        n
        for n in non_std
        if any(r in _KNOWN_THIRD_PARTY for r in roots[n])
        or not last_roots.intersection(roots[n])
        or len(roots[n]) > 1
    ]

    def before(group: Sequence[_Placed]) -> TextEdit:
        line = _comment_block_start(group[0])
        return TextEdit((line, 0), (line, 0), text + newline)

    if _is_stdlib(root):
        for group, is_std in zip(groups, stdlib):
            if is_std:
                return _join_sorted(module, group, style, key, text)
        return before(groups[0])
    if root in _KNOWN_THIRD_PARTY:
        if third:
            return _join_sorted(module, groups[third[0]], style, key, text)
        std = [n for n, is_std in enumerate(stdlib) if is_std]
        if std:
            return _insert_after(module, groups[std[-1]][-1], text, separate=True)
        return before(groups[0])
    for n in non_std:
        if n not in third and roots[n][0] < root < roots[n][-1]:
            return _join_sorted(module, groups[n], style, key, text)
    for n in non_std:
        if n not in third and roots[n][0] > root:
            return before(groups[n])
    return _insert_after(module, groups[-1][-1], text, separate=True)

def import_insertion(module: cst.Module, import_line: str) -> ImportInsertion:
    """The edit that adds ``import_line`` (see :func:`_import_insertion`), with two blank lines
    before a ``def``/``class`` that follows it (pycodestyle E302, isort's default)."""
    edit = _import_insertion(module, import_line)
    if not isinstance(edit, TextEdit) or not edit.is_insertion or edit.start[1] != 0:
        return edit
    return _two_blank_lines_before_definitions(module, edit)


_DEFINITION = re.compile(r"(?:async[ \t]+def|def|class)\b|@")


def _two_blank_lines_before_definitions(module: cst.Module, edit: TextEdit) -> TextEdit:
    newline = module.default_newline
    lines = module.code.split(newline)
    row = edit.start[0] - 1
    blank = 0
    while row < len(lines) and not lines[row].strip():
        blank += 1
        row += 1
    while row < len(lines) and lines[row].lstrip().startswith("#"):
        row += 1
    if row >= len(lines) or lines[row][:1].isspace() or not _DEFINITION.match(lines[row]):
        return edit
    text = edit.text
    trailing = len(text) - len(text.rstrip(newline)) if text.endswith(newline) else 0
    have = trailing // len(newline) - 1 + blank  # blank lines between the import and the code
    if have >= 2:
        return edit
    return TextEdit(edit.start, edit.end, text + newline * (2 - have))


def _import_insertion(module: cst.Module, import_line: str) -> ImportInsertion:
    """The edit that adds ``import_line`` to ``module``, or None when it is already there.

    "Already there": every name ``import_line`` binds is bound the same way by a top-level
    import (or one in a top-level ``try:`` body); ``import torch.nn`` counts for
    ``import torch``.  Returns :class:`Unfixable` when a name it binds is already bound at
    module level by something else (an assignment, a def, another import), because adding the
    import would change what that name means.  Raises ``ValueError`` if ``import_line`` is not
    a single import statement.
    """
    node = _parse_import(import_line)
    wanted = _bindings(node)
    existing = [_binding for imp in _runtime_imports(module.body) for _binding in _bindings(imp)]
    if all(any(_satisfies(have, want) for have in existing) for want in wanted):
        return None
    visitor = _ModuleBindings()
    for statement in module.body:
        statement.visit(visitor)
    for want in wanted:
        for name, have in visitor.found:
            if name == want.name and (have is None or not (_satisfies(have, want) or _satisfies(want, have))):
                return Unfixable(
                    f"`{want.name}` is already bound at module level by something other than "
                    f"`{import_line.strip()}`; adding the import would rebind it"
                )

    newline = module.default_newline
    text = import_line.strip() + newline

    header_end = 0
    for index, statement in enumerate(module.body):
        if (index == 0 and _is_docstring(statement)) or _import_line(statement) is not None:
            header_end = index + 1
        elif _is_import_block(statement):
            header_end = index + 1
        else:
            break
    placed = _placements(module, min(header_end + 1, len(module.body)))
    header = placed[:header_end]
    plain = [p for p in header if _import_line(p.node) is not None and not _is_future(p.node)]

    if plain:
        return _among_imports(module, plain, node, import_line.strip())

    preamble = [p for p in header if _is_docstring(p.node) and p.index == 0 or _is_future(p.node)]
    if preamble:
        anchor = preamble[-1]
        position, at_eof = _line_after(module, anchor)
        if at_eof:
            return TextEdit(position, position, newline + newline + import_line.strip())
        blank_after = _next_line_blank(module, anchor.index + 1)
        text = newline + text + (newline if blank_after is False else "")
        return TextEdit(position, position, text)

    # Top of the file: after the leading comment block (licence, shebang) and the blank line
    # closing it; if comments run straight into the first statement, after shebang/coding.
    header_lines = list(module.header)
    comments = 0
    while comments < len(header_lines) and header_lines[comments].comment is not None:
        comments += 1
    line = 1
    if 0 < comments < len(header_lines):
        line = comments + 2
    else:
        for i, empty in enumerate(header_lines[:2]):
            comment = empty.comment.value if empty.comment is not None else ""
            if (i == 0 and comment.startswith("#!")) or _CODING.match(comment):
                line = i + 2
            else:
                break
    if line - 1 < len(header_lines):
        following_blank: Optional[bool] = header_lines[line - 1].comment is None
    else:
        following_blank = _next_line_blank(module, 0)
    if not module.body and not module.has_trailing_newline and line - 1 >= len(header_lines) and header_lines:
        # Only comments, the last without a newline: append after it.
        code = module.code
        offsets = line_offsets(code)
        last = code[offsets[-1] :]
        position = (len(offsets), len(last))
        return TextEdit(position, position, newline + import_line.strip())
    return TextEdit((line, 0), (line, 0), text + (newline if following_blank is False else ""))
