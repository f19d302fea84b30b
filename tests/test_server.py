"""`lint-h2d server` driven over stdio by a real LSP client (pygls'), as an editor would.

The session: initialize → didOpen → diagnostics → codeAction → apply the fix → didChange →
diagnostics cleared → shutdown/exit with status 0.  The JSON-RPC messages exchanged are kept
as a transcript (`LINT_H2D_LSP_TRANSCRIPT=FILE` writes it out).
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from lint_h2d.server import _utf16, lsp_position  # noqa: E402

BAD = (
    "import torch\n"
    "\n"
    "def reset(n):\n"
    "    t = torch.empty(n, device='cuda')\n"
    "    t[0] = 0  # first slot\n"
    "    return t\n"
)
TIMEOUT = 60.0


def _apply(text: str, edits: List[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to `text`, last first."""
    lines = text.splitlines(keepends=True) or [""]

    def offset(pos: types.Position) -> int:
        before = sum(len(line) for line in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return before + i
            units += len(ch.encode("utf-16-le")) // 2
        return before + len(line.rstrip("\r\n")) if pos.line < len(lines) else before

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


class Session:
    """A client with a transcript and a queue of published diagnostics."""

    def __init__(self) -> None:
        self.client = LanguageClient("lint-h2d-test", "1")
        self.transcript: List[Dict[str, Any]] = []
        self.diagnostics: "asyncio.Queue[types.PublishDiagnosticsParams]" = asyncio.Queue()
        protocol = self.client.protocol
        send, handle = protocol._send_data, protocol.handle_message

        def send_data(data: Any) -> None:
            self.transcript.append({"dir": "client→server", "msg": data if isinstance(data, dict)
                                    else protocol._serialize_message(data)})
            send(data)

        def handle_message(message: Any) -> None:
            self.transcript.append({"dir": "server→client", "msg": protocol._serialize_message(message)})
            handle(message)

        protocol._send_data = send_data  # type: ignore[method-assign]
        protocol.handle_message = handle_message  # type: ignore[method-assign]

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics.put_nowait(params)

    async def next_diagnostics(self, uri: str) -> types.PublishDiagnosticsParams:
        while True:
            params = await asyncio.wait_for(self.diagnostics.get(), TIMEOUT)
            if params.uri == uri:
                return params

    def dump(self) -> str:
        def plain(obj: Any) -> Any:
            try:
                return json.loads(json.dumps(obj, default=lambda o: getattr(o, "__dict__", str(o))))
            except (TypeError, ValueError):
                return str(obj)

        return "\n".join(json.dumps({"dir": t["dir"], "msg": plain(t["msg"])}) for t in self.transcript)


async def _session(project: Path) -> Dict[str, Any]:
    session = Session()
    client = session.client
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    await client.start_io(sys.executable, "-m", "lint_h2d", "server", cwd=str(project), env=env)
    out: Dict[str, Any] = {}
    try:
        result = await asyncio.wait_for(client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=from_fs_path(str(project)),
        )), TIMEOUT)
        out["server"] = result.server_info.name if result.server_info else None
        out["code_action_kinds"] = result.capabilities.code_action_provider.code_action_kinds  # type: ignore[union-attr]
        client.initialized(types.InitializedParams())
        path = project / "pkg" / "builder.py"
        uri = from_fs_path(str(path))
        assert uri is not None
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=BAD)))
        first = await session.next_diagnostics(uri)
        out["first"] = first
        diag = first.diagnostics[0]
        actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )), TIMEOUT)
        out["actions"] = actions
        fix = next(a for a in actions or [] if isinstance(a, types.CodeAction)
                   and a.kind == types.CodeActionKind.QuickFix and a.is_preferred)
        assert fix.edit is not None and fix.edit.changes is not None
        fixed = _apply(BAD, fix.edit.changes[uri])
        out["fixed"] = fixed
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        out["second"] = await session.next_diagnostics(uri)
        await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        client.exit(None)
        server = client._server
        assert server is not None
        out["returncode"] = await asyncio.wait_for(server.wait(), TIMEOUT)
    finally:
        out["transcript"] = session.dump()
        target = os.environ.get("LINT_H2D_LSP_TRANSCRIPT")
        if target:
            Path(target).write_text(out["transcript"] + "\n", encoding="utf-8")
        await client.stop()
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.lint-h2d]\nfix-gate = \"none\"\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "builder.py").write_text(BAD)
    return tmp_path


def test_lsp_session_over_stdio(project: Path) -> None:
    out = asyncio.run(_session(project))
    assert out["server"] == "lint-h2d"
    assert "source.fixAll.lint-h2d" in out["code_action_kinds"]
    first: types.PublishDiagnosticsParams = out["first"]
    assert [d.code for d in first.diagnostics] == ["H2D001"]
    diag = first.diagnostics[0]
    assert diag.source == "lint-h2d"
    assert (diag.range.start.line, diag.range.start.character) == (4, 4)
    assert diag.code_description is not None and diag.code_description.href.startswith("file://")
    # The evidence chain travels as related information, located in the document.
    related = diag.related_information or []
    assert related and "allocated on `'cuda'` here" in related[0].message
    assert related[0].location.range.start.line == 3
    titles = [a.title for a in out["actions"]]
    assert any("noqa: H2D001" in t for t in titles), titles
    assert any(a.kind == "source.fixAll.lint-h2d" for a in out["actions"]), titles
    # The applied quick fix is the safe device-side form; the comment stays.
    fixed_line = out["fixed"].splitlines()[4]
    assert ".zero_()" in fixed_line and fixed_line.endswith("  # first slot"), out["fixed"]
    assert list(out["second"].diagnostics) == []
    assert out["returncode"] == 0
    methods = [t for t in out["transcript"].splitlines() if '"initialize"' in t]
    assert methods, "the transcript records the exchange"


def test_utf16_positions() -> None:
    # LSP columns count UTF-16 code units: an astral character before the column counts 2.
    assert _utf16("x = '😀'; t[0] = 0", 9) == 10
    pos = lsp_position(["a", "é😀b"], 2, 2)
    assert (pos.line, pos.character) == (1, 3)


def test_code_actions_offer_noqa_and_respect_only(project: Path) -> None:
    from lint_h2d.server import analyze, code_actions

    uri = from_fs_path(str(project / "pkg" / "builder.py"))
    assert uri is not None
    analysis = analyze(uri, 1, BAD)
    assert [f.code for f in analysis.findings] == ["H2D001"]
    everywhere = types.Range(start=types.Position(line=0, character=0),
                             end=types.Position(line=10, character=0))
    actions = code_actions(analysis, everywhere)
    noqa = [a for a in actions if "noqa" in a.title]
    assert len(noqa) == 1
    assert noqa[0].edit is not None and noqa[0].edit.changes is not None
    edit = noqa[0].edit.changes[uri][0]
    assert edit.new_text == "  # noqa: H2D001"
    assert (edit.range.start.line, edit.range.start.character) == (4, len("    t[0] = 0  # first slot"))
    assert code_actions(analysis, everywhere, only=["source.organizeImports"]) == []
    elsewhere = types.Range(start=types.Position(line=0, character=0),
                            end=types.Position(line=1, character=0))
    assert code_actions(analysis, elsewhere) == []


def test_analysis_failure_is_logged_not_fatal(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash in one analysis leaves the server serving: the next request is answered."""
    import lint_h2d.server as server_module

    server = server_module.build_server()
    logged: List[str] = []
    monkeypatch.setattr(server, "log", lambda message, kind=None: logged.append(message))

    def boom(uri: str, version: Optional[int], text: str) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(server_module, "analyze", boom)

    class Doc:
        version = 1
        source = BAD

    class Workspace:
        def get_text_document(self, uri: str) -> Doc:
            return Doc()

    monkeypatch.setattr(type(server), "workspace", property(lambda self: Workspace()))
    asyncio.run(server.refresh("file:///x.py"))
    assert logged and "boom" in logged[0]
