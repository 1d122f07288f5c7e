"""The MCP server driven by the SDK's own client over its real transports: stdio (``footnote mcp`` as a
subprocess) and streamable HTTP (``/mcp`` in the FastAPI app on uvicorn, behind the API key)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from serverkit import start_server, stop_server

pytestmark = pytest.mark.integration

RISOTTO = "How long should I stir a mushroom risotto before adding the parmesan?"
FOG = "When do the Marrowick keepers start the fog horn, and how does it sound?"
KEY = "s3cret-mcp-key"


def _json(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _error_text(result: Any) -> str:
    assert result.is_error, result.content
    return str(result.content[0].text)


async def _exercise(client: Client, secret: Path) -> None:
    """What an agent does: list tools, search, ask (answerable and not), open a citation, page sources."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= {"search", "ask", "get_source", "list_sources"}
    for t in tools.values():
        assert t.description and len(t.description) > 80, t.name  # written for a model
        assert t.input_schema["type"] == "object"
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["search"].input_schema["properties"]["k"]["maximum"] == 32
    assert tools["get_source"].input_schema["required"] == ["source_id"]

    found = _json(await client.call_tool("search", {"query": "What does HB 3.2 say?", "k": 3}))
    assert found["corpus_has_nothing"] is False and len(found["notes"]) == 3 and found["abstention"] is None
    top = found["notes"][0]
    assert top["label"] == "HB 3.2" and top["locator"]["book"] == "HB" and top["source_id"]

    nothing = _json(await client.call_tool("search", {"query": RISOTTO}))
    assert nothing["verdict"] in ("bail_out", "insufficient")
    want = {"bail_out": "no_relevant_content", "insufficient": "insufficient_coverage"}[nothing["verdict"]]
    assert nothing["abstention"] == {"reason": want, "stage": "gate"}

    miss = _json(await client.call_tool("ask", {"question": RISOTTO}))
    assert miss["mode"] == "not_found" and miss["citations"] == [] and miss["corpus_insufficient"] is True
    assert miss["abstention"]["reason"] in ("no_relevant_content", "insufficient_coverage", "answer_not_in_passages")

    hit = _json(await client.call_tool("ask", {"question": FOG}))
    assert hit["mode"] == "corpus" and hit["citations"], hit
    assert "abstention" in hit and hit["abstention"] is None
    cite = hit["citations"][0]
    opened = _json(await client.call_tool("get_source", {"source_id": cite["source_id"], "locator": cite["locator"]}))
    cited = [f for f in opened["fragments"] if f["cited"]]
    assert cite["fragment_id"] in {f["fragment_id"] for f in cited}
    assert opened["source"]["source_id"] == cite["source_id"]

    verse = _json(await client.call_tool("get_source", {"source_id": top["source_id"], "locator": top["locator"]}))
    assert any(f["cited"] and f["label"] == "HB 3.2" for f in verse["fragments"])

    # Traversal: ids are looked up in the store, never opened as paths.
    for bad in ("../../../../" + str(secret).lstrip("/"), str(secret), "verses/../../" + secret.name):
        text = _error_text(await client.call_tool("get_source", {"source_id": bad}))
        assert "NotFound" in text and "no source" in text and "TOP-SECRET" not in text
    with pytest.raises(MCPError):
        await client.read_resource("footnote://source/../../" + secret.name)
    with pytest.raises(MCPError) as info:
        await client.read_resource("footnote://source/no-such-source")
    assert "no source 'no-such-source'" in str(info.value)

    bad_k = await client.call_tool("search", {"query": "fog", "k": 500})
    assert bad_k.is_error
    huge = _error_text(await client.call_tool("search", {"query": "fog " * 3000}))
    assert "InvalidQuestion: the question is 11999 characters long; the limit is 2000" in huge
    empty = _error_text(await client.call_tool("ask", {"question": "   "}))
    assert "InvalidQuestion: the question is empty" in empty
    wrong = _error_text(await client.call_tool("get_source", {"source_id": top["source_id"],
                                                              "locator": {"book": "HB", "loc": "99.99"}}))
    assert "has no passage at HB 99.99" in wrong

    page = _json(await client.call_tool("list_sources", {"kind": "verse"}))
    assert page["total"] >= 1 and all(s["kind"] == "verse" for s in page["sources"])
    everything = _json(await client.call_tool("list_sources", {}))
    ids = [s["source_id"] for s in everything["sources"]]
    assert "demo/lectures/02-fog-and-tides.vtt" in ids

    resources = (await client.list_resources()).resources
    assert {str(r.uri) for r in resources} >= {"footnote://source/" + i for i in ids}
    read = await client.read_resource("footnote://source/demo/lectures/02-fog-and-tides.vtt")
    assert "source_id: demo/lectures/02-fog-and-tides.vtt" in read.contents[0].text  # type: ignore[union-attr]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    p = tmp_path / "secret.txt"
    p.write_text("TOP-SECRET\n", encoding="utf-8")
    return p


def _run(fn: Callable[[], Awaitable[None]]) -> None:
    # On a thread of its own: the browser tests' session-wide playwright (sync API) keeps an asyncio loop
    # running on the main thread, and anyio.run refuses to start inside it ("Already running asyncio").
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(anyio.run, fn).result()


def test_stdio(mcp_store: Settings, secret: Path, tmp_path: Path, demo_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from footnote.cli import main; main()", "mcp", "--store", mcp_store.store.url, "--embedder", "hash",
              "--config", str(demo_dir / "footnote.toml")],
        env=env, cwd=str(tmp_path),
    )

    async def go() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await _exercise(client, secret)

    _run(go)


def test_stdio_bad_store_fails_clearly(tmp_path: Path) -> None:
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    proc = subprocess.run([sys.executable, "-c", "from footnote.cli import main; main()", "mcp", "--store",
                           "postgresql://nobody@127.0.0.1:1/none", "--embedder", "hash"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1 and "error:" in proc.stderr and proc.stdout == ""


@asynccontextmanager
async def _http_client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with (httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
                Client(streamable_http_client(url, http_client=http)) as client):
        yield client


def test_http_behind_the_key(mcp_store: Settings, secret: Path) -> None:
    settings = mcp_store.with_overrides(**{"server.api_key": KEY})
    engine = Engine.from_settings(settings)
    url, server, thread = start_server(create_app(engine, settings))
    try:
        async def go() -> None:
            async with _http_client(url + "/mcp", {"Authorization": f"Bearer {KEY}"}) as client:
                await _exercise(client, secret)
            async with _http_client(url + "/mcp", {"X-API-Key": KEY}) as client:
                assert (await client.list_tools()).tools

        _run(go)
        # Without the key: 401 before the SDK sees the request, the API's error body.
        import httpx

        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            r = httpx.post(url + "/mcp", json=init, headers={**headers, "Accept": "application/json, text/event-stream"})
            assert r.status_code == 401 and r.json()["type"] == "AuthError" and "API key" in r.json()["error"]
        keyed = {"Authorization": f"Bearer {KEY}", "Accept": "application/json, text/event-stream",
                 "Content-Type": "application/json"}
        huge = json.dumps({**init, "params": {**init["params"], "clientInfo": {"name": "x" * 100_000, "version": "0"}}})
        assert httpx.post(url + "/mcp", content=huge, headers=keyed).status_code == 413  # server.max_request_bytes
        broken = httpx.post(url + "/mcp", content=b"{not json", headers=keyed)
        assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
        assert httpx.get(url + "/healthz").status_code == 200
    finally:
        stop_server(server, thread)
        engine.close()


def test_http_can_be_turned_off(mcp_store: Settings) -> None:
    settings = mcp_store.with_overrides(**{"mcp.enabled": False, "server.warm_up": False})
    engine = Engine.from_settings(settings)
    url, server, thread = start_server(create_app(engine, settings))
    try:
        import httpx

        assert httpx.post(url + "/mcp", json={}).status_code == 404
    finally:
        stop_server(server, thread)
        engine.close()
