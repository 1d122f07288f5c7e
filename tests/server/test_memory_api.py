"""``/api/memory`` over real HTTP (httpx → uvicorn on loopback), on its own copy of the demo store (the
shared live server's answers must not change), with the demo's curated notes imported."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serverkit import build_store, start_server, stop_server

from footnote.engine import Engine
from footnote.server.app import create_app

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FOG = "When do the keepers start the fog horn?"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("memory-api")
    settings = build_store(root, demo_dir).with_overrides(**{"server.api_key": "k3y"})
    engine = Engine.from_settings(settings)
    assert engine.import_memory([REPO / "demo-memory"]).failed == 0
    url, server, thread = start_server(create_app(engine, settings))
    try:
        with httpx.Client(base_url=url, timeout=30, headers={"X-API-Key": "k3y"}) as c:
            yield c
    finally:
        stop_server(server, thread)
        engine.close()


def test_list_get_and_the_key(client: httpx.Client) -> None:
    r = client.get("/api/memory")
    assert r.status_code == 200
    notes = {n["id"]: n for n in r.json()["notes"]}
    assert notes["fog-horn-rule"]["kind"] == "pinned" and notes["tides-and-bar"]["kind"] == "boost"
    assert set(notes["fog-horn-rule"]) >= {"id", "kind", "triggers", "sources", "author", "updated"}
    one = client.get("/api/memory/fog-horn-rule").json()
    assert one["body"].startswith("The keepers start the fog horn") and one["author"].startswith("Editorial board")
    assert client.get("/api/memory/nope").status_code == 404
    assert client.get("/api/memory/..%2F..%2Fetc").status_code == 404
    assert httpx.get(f"{client.base_url}/api/memory").status_code == 401  # no key
    assert httpx.post(f"{client.base_url}/api/memory", json={}).status_code == 401


@pytest.mark.parametrize(("body", "reason"), [
    ({"id": "x", "kind": "sticky", "body": "b"}, "unknown kind 'sticky'"),
    ({"id": "x", "kind": "pinned", "body": "b", "triggers": ["q"]}, "must name the sources"),
    ({"id": "x", "kind": "memory", "body": "   "}, "no body"),
    ({"id": "x", "kind": "pinned", "body": "b", "triggers": ["q"], "sources": ["lectures/99-nowhere.srt"]},
     "source(s) not in the store: 'lectures/99-nowhere.srt'"),
    ({"id": "../x", "kind": "memory", "body": "b"}, "not valid"),
    ({"kind": "memory", "body": "b"}, "id: Field required"),
    ({"id": "x", "kind": "memory", "body": "b", "triggers": "not a list"}, "triggers"),
])
def test_a_bad_note_is_a_422_with_the_reason(client: httpx.Client, body: dict[str, object], reason: str) -> None:
    r = client.post("/api/memory", json=body)
    assert r.status_code == 422, r.text
    assert reason in r.json()["error"]
    assert client.get("/api/memory/x").status_code == 404  # nothing written


def test_add_ask_edit_remove(client: httpx.Client) -> None:
    note = {"id": "paraffin-limit", "kind": "pinned", "title": "The oil store limit", "author": "Curator Q",
            "triggers": ["How much paraffin may the oil store hold?"], "sources": ["pdf/keepers-handbook.pdf"],
            "body": "The oil store may hold no more than the Handbook allows; see its page on stores."}
    r = client.post("/api/memory", json=note)
    assert r.status_code == 200 and r.json()["changed"] is True and r.json()["note"]["updated"] > 0
    assert client.post("/api/memory", json=note).json()["changed"] is False  # idempotent
    a = client.post("/api/ask", json={"question": "How much paraffin may the oil store hold?", "stream": False}).json()
    assert a["citations"][0]["kind"] == "pinned" and a["citations"][0]["locator"]["note"] == "paraffin-limit"
    assert a["citations"][0]["locator"]["author"] == "Curator Q" and a["trace"]["policy"] == "lean"
    assert a["citations"][1]["source_id"] == "demo/pdf/keepers-handbook.pdf"

    edited = {**note, "body": "Edited: the oil store's limit is on the Handbook's stores page."}
    r = client.put("/api/memory/paraffin-limit", json=edited)
    assert r.status_code == 200 and r.json()["changed"] is True
    assert client.get("/api/memory/paraffin-limit").json()["body"].startswith("Edited:")
    assert client.put("/api/memory/other", json=edited).status_code == 422  # ids disagree
    assert client.put("/api/memory/ghost", json={**edited, "id": "ghost"}).status_code == 404

    assert client.delete("/api/memory/paraffin-limit").json() == {"removed": "paraffin-limit"}
    assert client.delete("/api/memory/paraffin-limit").status_code == 404
    b = client.post("/api/ask", json={"question": "How much paraffin may the oil store hold?", "stream": False}).json()
    assert all(c["kind"] != "pinned" for c in b["citations"]) and b["trace"]["policy"] == "wide"


def test_pinned_answer_streams_the_pinned_citation_first(client: httpx.Client) -> None:
    with client.stream("POST", "/api/ask", json={"question": FOG}, headers={"Accept": "text/event-stream"}) as r:
        body = "".join(r.iter_text())
    frames = [f for f in body.split("\n\n") if f.strip()]
    cites = [json.loads(f.split("data:", 1)[1]) for f in frames if f.startswith("event: citation")]
    assert cites and cites[0]["kind"] == "pinned" and cites[0]["locator"]["note"] == "fog-horn-rule", body[:800]
    assert [c["n"] for c in cites] == list(range(1, len(cites) + 1)) and len(cites) >= 2


def test_writes_need_the_key_in_a_header(client: httpx.Client) -> None:
    """Reading is open to whoever holds the key in any form; writing needs it in a header (the browser sends
    the session cookie on its own, so a cookie alone could be a forged cross-site request)."""
    note = {"id": "cookie-note", "kind": "memory", "body": "Written with a cookie only."}
    with httpx.Client(base_url=str(client.base_url), timeout=30) as browser:
        assert browser.post("/api/session", headers={"X-API-Key": "k3y"}).status_code == 200  # sets the cookie
        assert browser.get("/api/memory").status_code == 200
        r = browser.post("/api/memory", json=note)
        assert r.status_code == 401 and "in a header" in r.json()["error"]
        assert browser.delete("/api/memory/fog-horn-rule").status_code == 401
    assert client.get("/api/memory/cookie-note").status_code == 404
    assert client.get("/api/memory/fog-horn-rule").status_code == 200
    assert client.get("/api/memory").json()["writable"] is True


def test_a_server_without_a_key_changes_no_notes(tmp_path: Path, demo_dir: Path) -> None:
    settings = build_store(tmp_path, demo_dir)
    engine = Engine.from_settings(settings)
    assert engine.import_memory([REPO / "demo-memory"]).failed == 0
    url, server, thread = start_server(create_app(engine, settings))
    try:
        with httpx.Client(base_url=url, timeout=30) as c:
            listed = c.get("/api/memory").json()
            assert listed["writable"] is False and len(listed["notes"]) == 6
            r = c.post("/api/memory", json={"id": "n", "kind": "memory", "body": "b"})
            assert r.status_code == 403 and "footnote memory import" in r.json()["error"]
            assert c.delete("/api/memory/fog-horn-rule").status_code == 403
            assert c.put("/api/memory/fog-horn-rule", json={"id": "fog-horn-rule", "kind": "memory",
                                                            "body": "b"}).status_code == 403
        assert engine.store.get_memory_note("fog-horn-rule") is not None
        assert engine.store.get_memory_note("n") is None
    finally:
        stop_server(server, thread)
        engine.close()
