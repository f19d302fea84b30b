"""One file's analysis: read nothing, write nothing; text in, findings out.

prefilter (text, then CPython's tree) → LibCST parse → walk (inference) → rules → noqa.
Failures are contained per file and per rule: a file that cannot be parsed becomes a
diagnostic for that file, a rule that raises becomes an internal-error diagnostic, and the
other rules' findings are kept.
"""
from __future__ import annotations

import ast
import gc
import itertools
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar

import libcst as cst

from fixers.edits import split_lines
from lint_h2d.config import Settings, select_codes
from lint_h2d.diagnostics import ERROR_CODES, INTERNAL_ERROR, SYNTAX_ERROR, describe_exception, error_finding
from lint_h2d.discovery import codes_for_file
from lint_h2d.findings import Finding
from lint_h2d.inference.project import ProjectFacts
from lint_h2d.inference.scope import ModuleWalker, StatementFact
from lint_h2d.parse_chunks import ChunkPlan, chunk_plan, parse_module_in_chunks, parsed_whole
from lint_h2d.parse_units import may_stub, one_of, stubbed_text, unit_tests_for
from lint_h2d.parse_view import ParseView, parse_view
from lint_h2d.prefilter import TreeVerdict, h2d001_may_statements, mentions_hint
from lint_h2d.rules import all_rules
from lint_h2d.rules.base import FileContext, Rule
from lint_h2d.suppression import is_suppressed, noqa_lines
from lint_h2d import triage


def _trim_heap() -> None:
    """Give freed heap memory back to the system (glibc keeps it otherwise: after a 100k-line
    file's parses, about 50 MB that the rules' tables would not reuse)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


DEEP_STACK_BYTES = 512 * 1024 * 1024
DEEP_RECURSION_LIMIT = 200_000
T = TypeVar("T")


def run_with_deep_stack(work: Callable[[], T]) -> T:
    """`work()` on a thread with a 512 MiB stack (virtual memory, touched only as deep as
    it recurses) and a high recursion limit; its exception, if any, is raised here."""
    outcome: List[Any] = []

    def target() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    old_size = threading.stack_size()
    old_limit = sys.getrecursionlimit()
    threading.stack_size(DEEP_STACK_BYTES)
    try:
        sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
        thread = threading.Thread(target=target, name="lint-h2d-deep")
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


#: Texts at least this long get `_TreeOutOfCollections`.  Its one full collection costs the
#: whole heap: worth it where the tree is large (a long file, and every pass of its fix loop),
#: not for the many small files of an in-process run (the editor server, the test suite), where
#: it cost more than the collections it saved.
FREEZE_MIN_CHARS = 256 * 1024


def _libcst_only_error(path: str, text: str, exc: cst.ParserSyntaxError, view: ParseView) -> Finding:
    """H2D901 for a text CPython parses and LibCST does not: said so, not as a "SyntaxError"
    (the file is valid Python, and a maintainer would go looking for an error that is not
    there), with the cause we know of where the text has it: LibCST's tokenizer rejects some
    indentation that mixes tabs and spaces, which CPython accepts."""
    message = split_lines(str(exc.message))[0] if exc.message else "invalid syntax"
    mixed = re.search(r"^[ \f]*\t", text, re.M) and re.search(r"^[\t\f]* ", text, re.M)
    hint = "; its indentation mixes tabs and spaces, which LibCST rejects: re-indent with spaces" if mixed else ""
    return error_finding(SYNTAX_ERROR, path, f"LibCST cannot parse this file, though Python can ({message}), "
                         f"so it was not checked{hint}",
                         exc.raw_line, view.column(exc.raw_line, exc.raw_column) + 1)


class _TreeOutOfCollections:
    """While a file is analyzed with the cyclic collector running (a long file: the pipeline
    pauses it for the others), the collector off during the parse, and the tree, once built,
    moved out of the collections' reach (`gc.freeze`) until the file is done.

    Why: the oldest generation's collections walk every live object, and the tree is most of
    them (over a million objects at 100k lines), so each collection during the parse, the walk
    and the rules cost the size of the file: the time grew faster than the file.  What the walk
    and the rules leave in cycles is still collected on the way (it is young), so memory stays
    bounded.  Only where nothing is frozen yet (`gc.unfreeze` would thaw everything): under the
    pipeline's `frozen_heap` the collector stays as it is."""

    def __init__(self, chars: int) -> None:
        self.active = chars >= FREEZE_MIN_CHARS and gc.isenabled() and gc.get_freeze_count() == 0
        self.frozen = False

    def __enter__(self) -> "_TreeOutOfCollections":
        if self.active:
            gc.disable()
        return self

    def parsed(self) -> None:
        """The tree is built: what it left in cycles goes, the rest is frozen."""
        if self.active and not self.frozen:
            gc.collect()
            gc.freeze()
            self.frozen = True
            gc.enable()

    def __exit__(self, *exc: object) -> None:
        if self.active:
            if self.frozen:
                gc.unfreeze()
            gc.enable()


@dataclass
class Engine:
    """Analyzes text with the selected rules; holds no per-file state."""

    settings: Settings
    project: ProjectFacts
    rules: Sequence[Rule] = field(default_factory=all_rules)
    use_prefilter: bool = True

    def __post_init__(self) -> None:
        codes = select_codes([r.code for r in self.rules], self.settings.select, self.settings.ignore)
        self.selected = [r for r in self.rules if r.code in codes]

    def rules_for(self, path: str) -> List[Rule]:
        kept = set(codes_for_file(self.settings, path, [r.code for r in self.selected]))
        return [r for r in self.selected if r.code in kept]

    def analyze(self, path: str, text: str, verdict: Optional[TreeVerdict] = None) -> List[Finding]:
        """The file's findings.  Deep but valid code (a 350-piece implicit string
        concatenation, 5,000 `and` operands) overflows LibCST's recursion on the default
        stack: such a file is analyzed again on a thread with a large stack, so it keeps
        its findings.

        `verdict`: stage 2's answers from the tree the project's summaries were built from
        (`prefilter.tree_verdict`); used only if it was computed from this very text, it
        spares the file a second parse by CPython."""
        try:
            return self._analyze(path, text, verdict)
        except RecursionError:
            pass
        try:
            return run_with_deep_stack(lambda: self._analyze(path, text, verdict))
        except RecursionError:
            return [error_finding(INTERNAL_ERROR, path, "internal error: nesting too deep to analyze")]

    def _analyze(self, path: str, text: str, verdict: Optional[TreeVerdict] = None) -> List[Finding]:
        kept = triage.triage(self.rules_for(path), path, text, verdict, self.settings, self.project.prefilter_names,
                             self.use_prefilter)
        if not isinstance(kept, triage.Kept):
            return kept
        rules, tree = kept.rules, kept.tree
        del kept  # with `tree` below, CPython's tree goes before LibCST parses
        if self.use_prefilter:
            tree, may_find = self._may_find(path, text, tree, rules)
            if not may_find:
                return []
        # CPython's tree, when the view is the text, says where a long file's parse is cut; the
        # tree (~1.7 KB a line, more than LibCST's) goes before LibCST's is built.
        plan = chunk_plan(text, tree) if isinstance(tree, ast.Module) and parse_view(text).text == text else None
        del tree
        return self._libcst_findings(path, text, plan, rules)

    def _may_find(self, path: str, text: str, tree: Optional[ast.AST],
                  rules: Sequence[Rule]) -> Tuple[Optional[ast.AST], bool]:
        """Whether the file may have a finding, by a first pass over its stubbed text
        (`lint_h2d/parse_units.py`: LibCST on the top-level units that may hold one), and
        CPython's tree of the text when it was parsed for that (the chunk plan reuses it).
        True when the rules or the text call for the whole parse anyway, and for a long file
        (parsed in chunks: a stubbed pass would hold CPython's tree and a whole LibCST tree at
        once, the peak the chunks avoid).  For H2D001 a unit is kept only for a `T[I] = V` that
        stage 2, with the project's facts, says may write a device tensor
        (`prefilter.h2d001_may_statements`)."""
        codes = [r.code for r in rules]
        tests = unit_tests_for(codes)
        if tests is None or any(r.capture_only for r in rules) or not may_stub(text) or not parsed_whole(text):
            return tree, True
        if tree is None:  # the verdict decided stage 2: the text parses
            tree = triage.cpython_parse(path, text)[0]
        if not isinstance(tree, ast.Module):
            return tree, True  # the whole parse reports why
        if "H2D001" in codes and not mentions_hint(text, self.settings.device_hints):
            # Only the `T[I] = V` that stage 2 says may write a device tensor keep their unit.
            may = h2d001_may_statements(tree, self.project.prefilter_names, text)
            tests = unit_tests_for(codes, {"H2D001": one_of(may)})
            assert tests is not None
        stubbed = stubbed_text(text, tree, tests)
        if stubbed is None:
            return tree, True
        # Every finding counts, suppressed or not, errors too: any sends the file to the whole
        # parse, whose findings are the ones reported, so the first one answers (`first`).  (No
        # chunk plan from `tree`: a stub's emptied lines end its statement early, so its cuts
        # are not clean boundaries there.)
        return tree, bool(self._libcst_findings(path, stubbed, None, rules, suppress=False, first=True))

    def _libcst_findings(self, path: str, text: str, plan: Optional[ChunkPlan], rules: Sequence[Rule],
                         suppress: bool = True, first: bool = False) -> List[Finding]:
        """LibCST's parse of `text`, the walk and the rules: the findings, sorted; `# noqa`
        applied unless `suppress` is False.  `plan`: where a long text's parse is cut.
        `first`: only whether there is a finding (the stubbed pass): at most one is returned,
        the rules stopped at the first (what a finding's fix and evidence cost is not paid
        for the others, which the whole parse computes again)."""
        with _TreeOutOfCollections(len(text)) as heap:
            # LibCST drops form feeds in indentation: it parses a view without them, and every
            # finding is moved back onto the file's own columns (lint_h2d/parse_view.py).
            view = parse_view(text)
            # A long file is parsed a few thousand lines at a time (the same tree, a fraction of
            # LibCST's peak memory).
            try:
                module = parse_module_in_chunks(view.text, plan=plan)
                if plan is not None:
                    _trim_heap()  # the parsers' freed memory (CPython's tree, LibCST's tokens) back
                heap.parsed()
            except cst.ParserSyntaxError as exc:
                cpython = triage.cpython_parse(path, text)[1]
                if cpython:
                    return cpython
                return [_libcst_only_error(path, text, exc, view)]
            except RecursionError:
                raise
            except Exception as exc:  # a parser crash must not end the scan
                return [error_finding(SYNTAX_ERROR, path, f"cannot parse: {exc}")]
            try:
                facts = self.statement_facts(path, text, module, rules)
            except RecursionError:
                raise
            except Exception as exc:
                return [error_finding(INTERNAL_ERROR, path, f"internal error in inference: {describe_exception(exc)}")]
            ctx = FileContext(path, module, view.text, self.settings)
            findings: List[Finding] = []
            for rule in rules:
                mine = [f for f in facts if rule.wants(f.small)
                        and (f.capture is not None or not rule.capture_only)]
                if not mine:
                    continue
                findings.extend(_run_rule(rule, mine, ctx, first))
                if first and findings:
                    return findings[:1]
            if suppress:
                noqa = noqa_lines(text)
                findings = [f for f in findings if f.code in ERROR_CODES or not is_suppressed(f, noqa)]
            return sorted((view.restore(f) for f in findings), key=Finding.sort_key)

    def statement_facts(self, path: str, text: str, module: cst.Module, rules: Sequence[Rule]) -> List[StatementFact]:
        """The walk (`ModuleWalker`) of a parsed file: what the inference knows at each statement
        one of `rules` wants, with the project's facts and the settings' hints; `lint-h2d
        explain` reads the same facts as the rules."""
        walker = ModuleWalker(
            module, self.project.module_facts, self.settings.capture_functions,
            wants=lambda s, in_capture: any(
                r.wants(s) and (in_capture or not r.capture_only) for r in rules
            ),
            text=text, hints=(self.settings.device_hints, self.settings.cpu_hints),
            capture=any(r.capture_only for r in rules), path=path,
        )
        return walker.run()

    def fix_text(self, path: str, text: str, unsafe: bool,
                 trace: Optional[List[Tuple[Finding, str]]] = None) -> Tuple[str, List[Finding], List[Finding]]:
        """Apply fixes until none is left (`lint_h2d/fix_loop.py`): the new text, the
        findings that were fixed, and those that remain."""
        from lint_h2d.fix_loop import fix_text

        return fix_text(self.analyze, path, text, unsafe, trace)


def _run_rule(rule: Rule, facts: Sequence[StatementFact], ctx: FileContext, first: bool = False) -> List[Finding]:
    """The rule's findings for these statements.  A rule that fails on one statement must not
    cost the file its other findings: on an error the statements are checked one at a time (in a
    fresh context, as the failed run may have left half-built memos) and the one that fails is
    reported as H2D902 at its own line.  `first`: the rule's first finding only (none, or one;
    after an error, the findings of the retry)."""
    try:
        if first:
            return list(itertools.islice(rule.check(facts, ctx), 1))
        return list(rule.check(facts, ctx))
    except RecursionError:
        raise
    except Exception as exc:
        if len(facts) == 1:
            return [_rule_error(rule, facts[0], ctx, exc)]
    retry = FileContext(ctx.path, ctx.module, ctx.text, ctx.settings)
    found: List[Finding] = []
    for fact in facts:
        try:
            found.extend(rule.check([fact], retry))
        except RecursionError:
            raise
        except Exception as exc:
            found.append(_rule_error(rule, fact, retry, exc))
    return found


def _rule_error(rule: Rule, fact: StatementFact, ctx: FileContext, exc: Exception) -> Finding:
    message = f"internal error in rule {rule.code}: {describe_exception(exc)}"
    try:
        start = ctx.position(fact.owner).start
    except Exception:  # the positions themselves may be what failed
        return error_finding(INTERNAL_ERROR, ctx.path, message)
    return error_finding(INTERNAL_ERROR, ctx.path, message, start.line, start.column + 1)
