"""Helpers shared by the server tests: a live uvicorn server on a free loopback port, the test store."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.settings import Settings, load_settings

XSS_DOC = """# The lighthouse cat

The lighthouse cat Pepperpot sleeps on the warm brass beside the gallery lamps every winter night <script>window.__footnoteXss = 1</script> and keeps the oil store free of mice.
"""
XSS_QUESTION = "Where does the lighthouse cat Pepperpot sleep on winter nights?"

# demo/README.md describes the demo; walking the folder skips it (settings.corpus.skip_stems).
DEMO_NOT_CORPUS = ("README.md",)


@dataclass
class LiveServer:
    url: str
    app: FastAPI
    engine: Engine
    settings: Settings
    root: Path


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def start_server(app: FastAPI) -> tuple[str, uvicorn.Server, threading.Thread]:
    sock = free_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="footnote-test-server")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


def stop_server(server: uvicorn.Server, thread: threading.Thread) -> None:
    server.should_exit = True
    thread.join(timeout=10)


def build_store(root: Path, demo_dir: Path) -> Settings:
    settings = load_settings(None, **{"store.url": str(root / "store.db"), "embedder.name": "hash"})
    extra = root / "extra"
    extra.mkdir()
    (extra / "lighthouse-cat.md").write_text(XSS_DOC, encoding="utf-8")
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([demo_dir, extra])
        assert report.ok, report.summary()
        for sid in DEMO_NOT_CORPUS:  # the loader skips README files when it walks a folder
            assert engine.store.get_source(sid) is None
    return settings


@contextmanager
def serving(settings: Settings, root: Path) -> Iterator[LiveServer]:
    """A real server on a free loopback port over an engine of ``settings``, stopped and closed after."""
    engine = Engine.from_settings(settings)
    app = create_app(engine, settings)
    url, server, thread = start_server(app)
    try:
        yield LiveServer(url, app, engine, settings, root)
    finally:
        stop_server(server, thread)
        engine.close()


def ask_twice(settings: Settings, question: str) -> dict[str, Any]:
    """A live server over an engine of ``settings`` asked ``question`` twice, as JSON and streamed: the JSON answer,
    with the stream's events under ``"events"`` and its token text under ``"streamed"``."""
    import httpx
    from test_server_api import parse_sse

    engine = Engine.from_settings(settings)
    url, server, thread = start_server(create_app(engine, settings))
    try:
        r = httpx.post(url + "/api/ask", json={"question": question, "stream": False}, timeout=60)
        sse = httpx.post(url + "/api/ask", json={"question": question}, timeout=60)
    finally:
        stop_server(server, thread)
        engine.close()
    assert r.status_code == 200 and sse.status_code == 200, (r.text, sse.text)
    data: dict[str, Any] = r.json()
    data["events"] = parse_sse(sse.text)
    data["streamed"] = "".join(e["text"] for name, e in data["events"] if name == "token")
    return data
