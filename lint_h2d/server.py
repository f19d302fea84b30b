"""`lint-h2d server`: diagnostics and fixes in the editor, over the Language Server Protocol.

The people who write attention-metadata builders see ruff's squiggles while they type; a
host-sync linter that only speaks at commit time is found too late.  This server speaks LSP
over stdio (built on pygls, the `lint-h2d[server]` extra; `check` itself never imports it):

- diagnostics on open, on change (debounced: typing does not queue one analysis per key) and
  on save, with the rule code, a link to the rule's documentation and the finding's evidence
  chain as related information;
- code actions: each fix (safe ones as preferred quick fixes, unsafe ones labelled), "add
  `# noqa: CODE`", and "fix all safe problems in the file" (`source.fixAll.lint-h2d`).

The analysis is the engine's, with the settings of the file's own `[tool.lint-h2d]` and the
project's cross-file facts, so the editor says what `lint-h2d check` says.  It runs in a worker
thread; an analysis that raises is logged and the previous diagnostics stay, so one bad file
never takes the server down.
"""
from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from fixers.edits import TextEdit, line_offsets
from lint_h2d import __version__
from lint_h2d.add_noqa import line_edit
from lint_h2d.findings import Applicability, Finding
from lint_h2d.suppression import statement_end

if TYPE_CHECKING:
    from lint_h2d.config import Settings
    from lint_h2d.engine import Engine

SOURCE = "lint-h2d"
FIX_ALL_KIND = "source.fixAll.lint-h2d"
# Seconds of quiet after a change before the document is analyzed again.
DEBOUNCE_SECONDS = 0.3
ERROR_CODES = frozenset({"H2D900", "H2D901", "H2D902"})


# -- positions: lint-h2d counts characters, LSP counts UTF-16 code units ------------------------
def _lines(text: str) -> List[str]:
    offsets = line_offsets(text)
    ends = offsets[1:] + [len(text)]
    return [text[start:end].rstrip("\r\n") for start, end in zip(offsets, ends)]


def _utf16(line: str, column: int) -> int:
    prefix = line[:column]
    return len(prefix.encode("utf-16-le")) // 2


def lsp_position(lines: Sequence[str], row: int, column: int) -> types.Position:
    """(1-based row, 0-based character column) → LSP position, clamped to the document."""
    if not lines:
        return types.Position(line=0, character=0)
    index = min(max(row, 1), len(lines)) - 1
    return types.Position(line=index, character=_utf16(lines[index], column))


def lsp_range(lines: Sequence[str], start: Tuple[int, int], end: Tuple[int, int]) -> types.Range:
    return types.Range(start=lsp_position(lines, *start), end=lsp_position(lines, *end))


def lsp_text_edit(lines: Sequence[str], edit: TextEdit) -> types.TextEdit:
    return types.TextEdit(range=lsp_range(lines, edit.start, edit.end), new_text=edit.text)


# -- one document's analysis ---------------------------------------------------------------------
@dataclass(frozen=True)
class Analysis:
    """What the server knows about one version of one document."""

    uri: str
    version: Optional[int]
    text: str
    findings: Tuple[Finding, ...]
    lines: Tuple[str, ...] = field(default=())


def _engine_for(path: str, text: str) -> "Tuple[Engine, Settings]":
    """The engine `lint-h2d check PATH` would use for this file (`plan.engine_for`)."""
    from lint_h2d.plan import engine_for

    engine = engine_for(path, text)
    return engine, engine.settings


def _excluded(path: str, settings: "Settings") -> bool:
    """Files the project excludes (tests by default) get no diagnostics, as with pre-commit."""
    import dataclasses

    from lint_h2d.discovery import discover

    if not os.path.isfile(path):
        return False
    files, _ = discover([path], dataclasses.replace(settings, force_exclude=True))
    return not files


def analyze(uri: str, version: Optional[int], text: str) -> Analysis:
    """Findings for the editor's text of `uri` (the file on disk may be older)."""
    path = to_fs_path(uri) or uri
    engine, settings = _engine_for(path, text)
    findings: Tuple[Finding, ...] = ()
    if not _excluded(path, settings):
        findings = tuple(engine.analyze(path, text))
    return Analysis(uri, version, text, findings, tuple(_lines(text)))


def fix_all(uri: str, text: str) -> str:
    """The text after every safe fix, as `lint-h2d check --fix` would write it."""
    path = to_fs_path(uri) or uri
    engine, settings = _engine_for(path, text)
    if _excluded(path, settings):
        return text
    new_text: str = engine.fix_text(path, text, False)[0]
    return new_text


def rule_url(code: str) -> Optional[str]:
    """A file URL of the rule's documentation (`lint-h2d rule CODE`), written once per version."""
    from lint_h2d.rules import all_rules

    for rule in all_rules():
        if rule.code == code:
            base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
            target = base / "lint-h2d" / "rules" / __version__ / f"{code}.md"
            try:
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(rule.doc.render(rule.code, rule.name), encoding="utf-8")
            except OSError:
                return None
            url: Optional[str] = from_fs_path(str(target))
            return url
    return None


def diagnostic(analysis: Analysis, finding: Finding) -> types.Diagnostic:
    lines = analysis.lines
    start = (finding.location.row, finding.location.column - 1)
    end = (finding.end_location.row, finding.end_location.column - 1)
    related: List[types.DiagnosticRelatedInformation] = []
    for step in finding.evidence:
        if step.row is None:
            continue
        uri = analysis.uri if step.path is None else (from_fs_path(os.path.abspath(step.path)) or step.path)
        column = (step.column or 1) - 1
        where = types.Position(line=step.row - 1, character=column)
        if step.path is None:
            where = lsp_position(lines, step.row, column)
        kind = "" if step.kind.value == "direct" else f" ({step.kind.value})"
        related.append(types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=types.Range(start=where, end=where)),
            message=step.message + kind,
        ))
    url = rule_url(finding.code)
    fixable = finding.fix is not None
    return types.Diagnostic(
        range=lsp_range(lines, start, end),
        message=finding.message,
        severity=types.DiagnosticSeverity.Error if finding.code in ERROR_CODES
        else types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
        related_information=related or None,
        data={"fixable": fixable,
              "safe": fixable and finding.fix.applicability == Applicability.SAFE},  # type: ignore[union-attr]
    )


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> Tuple[int, int]:
        return (p.line, p.character)

    return not (key(a.end) < key(b.start) or key(b.end) < key(a.start))


def code_actions(analysis: Analysis, wanted: types.Range,
                 only: Optional[Sequence[str]] = None) -> List[types.CodeAction]:
    """Quick fixes and noqa comments for the findings under `wanted`, and fix-all."""
    def allowed(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(k + ".") for k in only)

    actions: List[types.CodeAction] = []
    lines = analysis.lines
    for finding in analysis.findings:
        if finding.code in ERROR_CODES:
            continue
        diag = diagnostic(analysis, finding)
        if not _overlaps(diag.range, wanted):
            continue
        if finding.fix is not None and allowed(types.CodeActionKind.QuickFix):
            safe = finding.fix.applicability == Applicability.SAFE
            title = f"{finding.code}: {finding.fix.message}" + ("" if safe else " (unsafe fix)")
            actions.append(types.CodeAction(
                title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                is_preferred=safe,
                edit=types.WorkspaceEdit(changes={
                    analysis.uri: [lsp_text_edit(lines, e) for e in finding.fix.edits]}),
            ))
        row = statement_end(finding) or finding.end_location.row
        noqa = line_edit(analysis.text, row, [finding.code])
        if noqa is not None and allowed(types.CodeActionKind.QuickFix):
            actions.append(types.CodeAction(
                title=f"{finding.code}: add `# noqa: {finding.code}`",
                kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                edit=types.WorkspaceEdit(changes={analysis.uri: [lsp_text_edit(lines, noqa.edit)]}),
            ))
    return actions


def fix_all_action(analysis: Analysis, new_text: str) -> Optional[types.CodeAction]:
    """One edit that replaces the whole document with its fixed text (None if nothing changes)."""
    if new_text == analysis.text:
        return None
    whole = types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                             end=_end_position(analysis.text)),
                           new_text=new_text)
    return types.CodeAction(
        title="lint-h2d: fix all safe problems", kind=FIX_ALL_KIND,
        edit=types.WorkspaceEdit(changes={analysis.uri: [whole]}),
    )


def _end_position(text: str) -> types.Position:
    offsets = line_offsets(text)
    last = text[offsets[-1]:]
    return types.Position(line=len(offsets) - 1, character=len(last.encode("utf-16-le")) // 2)


# -- the server ----------------------------------------------------------------------------------
class H2DServer(LanguageServer):
    """Keeps the latest analysis per document and one pending (debounced) analysis task."""

    def __init__(self) -> None:
        super().__init__("lint-h2d", __version__)
        self.analyses: Dict[str, Analysis] = {}
        self.pending: Dict[str, "asyncio.Task[None]"] = {}

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    async def refresh(self, uri: str, delay: float = 0.0) -> None:
        """Analyze the current text of `uri` (after `delay`) and publish its diagnostics."""
        if delay:
            await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(None, analyze, uri, version, text)
        except Exception as exc:  # one file's failure must not stop the server
            self.log(f"lint-h2d: analysis of {uri} failed: {type(exc).__name__}: {exc}",
                     types.MessageType.Error)
            return
        current = self.workspace.get_text_document(uri)
        if current.version != version:
            return  # superseded by a newer change; its own refresh publishes
        self.analyses[uri] = result
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version,
            diagnostics=[diagnostic(result, f) for f in result.findings],
        ))

    def schedule(self, uri: str, delay: float) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None and not previous.done():
            previous.cancel()
        self.pending[uri] = asyncio.ensure_future(self.refresh(uri, delay))

    async def current(self, uri: str) -> Analysis:
        document = self.workspace.get_text_document(uri)
        known = self.analyses.get(uri)
        if known is not None and known.version == document.version and known.text == document.source:
            return known
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, analyze, uri, document.version, document.source)


def build_server() -> H2DServer:
    server = H2DServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: H2DServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: H2DServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: H2DServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: H2DServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.analyses.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
                                resolve_provider=False),
    )
    async def code_action(ls: H2DServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        only = params.context.only
        try:
            analysis = await ls.current(uri)
            actions = code_actions(analysis, params.range, only)
            if not only or any(FIX_ALL_KIND.startswith(k) for k in only):
                loop = asyncio.get_running_loop()
                new_text = await loop.run_in_executor(None, fix_all, uri, analysis.text)
                action = fix_all_action(analysis, new_text)
                if action is not None:
                    actions.append(action)
        except Exception as exc:
            ls.log(f"lint-h2d: code actions for {uri} failed: {type(exc).__name__}: {exc}",
                   types.MessageType.Error)
            return []
        return actions

    return server


def main() -> int:
    """Serve over stdio until the client sends `exit`."""
    build_server().start_io()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
