"""`lint-h2d explain PATH:LINE` (or `PATH`, every write of the file): what H2D001 concluded
about the `t[...] = v` writes on a line, and why it flags them or not.

Why: a maintainer who expects a finding that does not come (or doubts one that does) had no way
to see where the inference stopped short: whether the destination was not known to be on the
accelerator, its rank was unknown, an index was not an int, or the value not a host number.
This prints each of those, with the evidence the tool has for it, from the same analysis
`check` runs (the file's own settings and its project's cross-file facts); the decision is the
rule's own (`rules.scalar_write_to_device_tensor.decide`), not a copy of it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Sequence, TextIO

if TYPE_CHECKING:
    from lint_h2d.analysis import Engine
    from lint_h2d.inference.values import Value
    from lint_h2d.rules.base import FileContext

EXIT_OK, EXIT_ERROR = 0, 2


@dataclass(frozen=True)
class Place:
    """A `PATH:LINE` argument, or a `PATH` (`line` None: every write of the file)."""

    path: str
    line: Optional[int]


def parse_place(text: str) -> Place:
    """`pkg/mod.py:42` → Place; `pkg/mod.py` → the whole file; ValueError with a message naming
    the argument otherwise (`pkg/mod.py:x`, `:3`, line 0)."""
    path, sep, line = text.rpartition(":")
    if not sep and text.endswith((".py", ".pyi")):
        return Place(text, None)
    if not sep or not path or not line.strip().isdigit() or int(line) < 1:
        raise ValueError(f"{text}: expected PATH:LINE or a .py PATH (e.g. pkg/model.py:42)")
    return Place(path, int(line))


def _kind(value: "Value") -> str:
    from lint_h2d.inference.values import Kind

    names = {
        Kind.DEVICE: "a tensor on the accelerator",
        Kind.CPU: "a CPU tensor",
        Kind.TENSOR: "a tensor whose place is not known",
        Kind.NUMPY: "a numpy array",
        Kind.SCALAR: "a Python number",
        Kind.OTHER: "a Python object that is no tensor",
    }
    what = names.get(value.kind, "not known")
    if value.kind in (Kind.DEVICE, Kind.CPU, Kind.TENSOR):
        what += f", rank {value.rank}" if value.rank is not None else ", rank unknown"
    return what


def _steps(value: "Value", ctx: "FileContext", path: str) -> List[str]:
    from lint_h2d.report.paths import display_path

    out = []
    for step in ctx.evidence(value.evidence):
        where = display_path(step.path if step.path is not None else path)
        out.append(f"      {where}:{step.row}: {step.message}")
    return out


def explain_text(path: str, text: str, line: Optional[int], engine: "Engine") -> List[str]:
    """The report for the writes on `line` of `text`, or of all of them with `line` None
    (lines of output, without newlines)."""
    import libcst as cst

    from lint_h2d.parse_view import parse_view
    from lint_h2d.rules.base import FileContext
    from lint_h2d.rules.scalar_write_to_device_tensor import ScalarWriteToDeviceTensor, decide

    rule = ScalarWriteToDeviceTensor()
    settings = engine.settings
    view = parse_view(text)
    module = cst.parse_module(view.text)
    facts = engine.statement_facts(path, text, module, [rule])
    ctx = FileContext(path, module, view.text, settings)
    out: List[str] = []
    for fact in facts:
        where = ctx.position(fact.small)
        if line is not None and not where.start.line <= line <= where.end.line:
            continue
        assign = fact.small
        assert isinstance(assign, cst.Assign)
        target = assign.targets[0].target
        assert isinstance(target, cst.Subscript)
        decision = decide(fact, ctx)
        code = " ".join(module.code_for_node(assign).split())
        column = view.column(where.start.line, where.start.column) + 1  # the file's own column
        out.append(f"{path}:{where.start.line}:{column}: `{code}`")
        out.append(f"  destination `{module.code_for_node(target.value)}`: {_kind(decision.tensor)}")
        out.extend(_steps(decision.tensor, ctx, path))
        if decision.effects:
            shown = ", ".join(f"`{module.code_for_node(e.slice)}` {effect}"
                              for e, effect in zip(target.slice, decision.effects))
            out.append(f"  indices: {shown}")
        if decision.value is not None:
            out.append(f"  value `{' '.join(module.code_for_node(assign.value).split())}`: {_kind(decision.value)}")
            out.extend(_steps(decision.value, ctx, path))
        if decision.reason is None:
            out.append("  H2D001: flagged (`lint-h2d check` reports it unless a `# noqa` or the settings say otherwise)")
        else:
            out.append(f"  H2D001: not flagged: {decision.reason}")
    if not out:
        out.append(f"{path}: no `t[...] = v` write in the file" if line is None
                   else f"{path}:{line}: no `t[...] = v` write on this line")
    return out


def run_explain(places: Sequence[str], out: TextIO, err: TextIO) -> int:
    """`lint-h2d explain PATH:LINE...`: exit 0, or 2 when an argument, a file or its syntax is
    bad (each named on stderr; the other arguments are still explained)."""
    import libcst as cst

    from lint_h2d.engine import SourceError, read_source
    from lint_h2d.plan import engine_for

    status = EXIT_OK
    for argument in places:
        try:
            place = parse_place(argument)
        except ValueError as exc:  # its message names the argument
            err.write(f"lint-h2d: error: {exc}\n")
            status = EXIT_ERROR
            continue
        try:
            source = read_source(place.path)
            lines = explain_text(place.path, source.text, place.line, engine_for(place.path, source.text))
        except OSError as exc:
            problem = exc.strerror or str(exc)
        except SourceError as exc:
            problem = str(exc)
        except cst.ParserSyntaxError as exc:
            problem = f"cannot parse: {exc.message}"
        else:
            for text in lines:
                out.write(text + "\n")
            continue
        err.write(f"lint-h2d: error: {place.path}: {problem}\n")
        status = EXIT_ERROR
    return status
