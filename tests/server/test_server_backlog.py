"""A server started on a half-embedded store finishes the job in the background; /api/status shows it."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from serverkit import start_server, stop_server

from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.settings import load_settings


def test_server_embeds_backlog_in_background_and_reports_progress(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    for i in range(30):
        (corpus / f"n{i:02d}.txt").write_text(f"Note {i} about lighthouses and keeper{i}.\n", encoding="utf-8")
    settings = load_settings(None, **{
        "store.url": str(tmp_path / "s.db"), "embedder.name": "hash", "server.warm_up": False,
        "backlog.serve_poll_s": 0.2, "backlog.batch_fragments": 5,
    })
    with Engine.from_settings(settings) as eng:
        eng.ingest([corpus], wait=False)
        assert eng.store.backlog().pending == 30
    engine = Engine.from_settings(settings)
    app = create_app(engine, settings)
    url, server, thread = start_server(app)
    try:
        deadline = time.monotonic() + 30
        states = []
        while time.monotonic() < deadline:
            st = httpx.get(f"{url}/api/status", timeout=10).json()
            states.append(st["embedding"]["state"])
            if st["embedding"]["state"] == "embedded":
                break
            time.sleep(0.1)
        assert states[-1] == "embedded", states
        assert st["embedded"] == 30 and st["embedding"]["pending"] == 0 and st["lexical_only"] is False
        doc = httpx.get(f"{url}/api/search", params={"q": "keeper7 lighthouses"}, timeout=10).json()
        assert doc["embedding"]["state"] == "embedded" and doc["notes"][0]["embedded"] is True
    finally:
        stop_server(server, thread)
        engine.close()


def test_server_without_worker_reports_paused(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.txt").write_text("A note about harbours.\n", encoding="utf-8")
    settings = load_settings(None, **{
        "store.url": str(tmp_path / "s.db"), "embedder.name": "hash", "server.warm_up": False,
        "backlog.serve_worker": False,
    })
    engine = Engine.from_settings(settings)
    engine.ingest([corpus], wait=False)
    url, server, thread = start_server(create_app(engine, settings))
    try:
        st = httpx.get(f"{url}/api/status", timeout=10).json()
        assert st["embedding"]["state"] == "paused" and st["embedding"]["pending"] == 1
        assert "footnote reembed" in st["embedding"]["message"]
    finally:
        stop_server(server, thread)
        engine.close()


def test_server_warms_a_small_stores_sentence_vectors_after_start(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    for i in range(6):
        (corpus / f"n{i}.txt").write_text(f"The keeper{i} winds the clock. The lamp{i} burns oil.\n", encoding="utf-8")
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"})
    with Engine.from_settings(settings) as eng:
        eng.ingest([corpus])
    engine = Engine.from_settings(settings)
    _url, server, thread = start_server(create_app(engine, settings))
    try:
        from footnote.answer.extractive import sentence_key

        keys = [sentence_key(f"The keeper{i} winds the clock.") for i in range(6)]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(engine.store.get_sentence_vectors("hash", keys)) < 6:
            time.sleep(0.1)
        assert len(engine.store.get_sentence_vectors("hash", keys)) == 6  # made after start, kept in the store
    finally:
        stop_server(server, thread)
        engine.close()
