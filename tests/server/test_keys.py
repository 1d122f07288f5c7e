"""Access by collection over real HTTP (docs/server.md, "Keys and collections").

One real server over a SQLite store holding the demo corpus (collection ``demo``) and a closed collection
``internal`` (a PDF, a transcript, a Markdown letter and a curated note, every one carrying the words in
``MARKERS``). A key that reads only ``demo`` walks every route of the server's own OpenAPI document — and every
MCP tool and resource — with the ids, fragments, conversations and notes of ``internal`` in its parameters:
no marker may come back in any body or header, and what it may not change stays as it was. The same walk with
a key for ``internal`` finds the markers (the check can fail). Then: public collections with no key, revoked
keys, conversations per key, and a writing key held to its collections.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from serverkit import LiveServer, serving

from footnote.engine import Engine
from footnote.records.memory import MemoryNote, NoteKind
from footnote.settings import Settings, load_settings
from footnote.store.keys import ApiKey, key_hash

ADMIN = "admin-key-for-the-walk"
DEMO_KEY = "fn_demo-reader-key-0000000000000000000000"
INTERNAL_KEY = "fn_internal-writer-key-00000000000000000000"
REVOKED_KEY = "fn_soon-revoked-key-000000000000000000000"
MARKERS = ("quillfeather", "zorvath")  # in every internal text, title and note; never sent in a request
READER = "r" * 32  # one reader token, used with every key

LETTER = """---
title: Quillfeather to the Board
---
The brass oil key of the north cupboard is kept by Quillfeather. The password of the night watch is Zorvath.
"""
SRT = """1
00:00:01,000 --> 00:00:04,000
The Quillfeather watch begins at the ninth bell.

2
00:00:04,500 --> 00:00:08,000
Zorvath is the word the night keeper gives at the brass door.
"""


def _internal(folder: Path) -> None:
    from reportlab.pdfgen import canvas

    folder.mkdir()
    (folder / "letter.md").write_text(LETTER, encoding="utf-8")
    (folder / "watch.srt").write_text(SRT, encoding="utf-8")
    pdf = canvas.Canvas(str(folder / "ledger.pdf"))
    pdf.setTitle("Quillfeather ledger")
    pdf.drawString(72, 720, "The Quillfeather ledger: the brass oil key hangs in the north cupboard. Zorvath.")
    pdf.save()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("keys")
    _internal(root / "internal")
    settings = load_settings(None, **{"store.url": str(root / "store.db"), "embedder.name": "hash",
                                      "server.api_key": ADMIN, "server.keys_refresh_s": 0.2})
    with Engine.from_settings(settings) as engine:
        for folder in (demo_dir, root / "internal"):
            assert engine.ingest([folder]).ok
        assert engine.import_memory([demo_dir.parent / "demo-memory"]).failed == 0
        engine.put_memory_note(MemoryNote("internal-note", NoteKind.BOOST, "Zorvath opens the brass door.",
                                          triggers=("brass door",), sources=("internal/letter.md",)))
        store = engine.store
        assert store.collections().keys() == {"demo", "internal"}
        store.put_api_key(ApiKey("demo-reader", "k1", ("demo",), False, time.time()), key_hash(DEMO_KEY))
        store.put_api_key(ApiKey("internal-writer", "k2", ("internal",), True, time.time()), key_hash(INTERNAL_KEY))
        store.put_api_key(ApiKey("soon-revoked", "k3", ("demo",), False, time.time()), key_hash(REVOKED_KEY))
    with serving(settings, root) as server:
        yield server


def _headers(key: str | None) -> dict[str, str]:
    out = {"X-Footnote-Reader": READER}
    if key:
        out["Authorization"] = f"Bearer {key}"
    return out


def _leaks(resp: httpx.Response) -> list[str]:
    text = (resp.text + json.dumps(dict(resp.headers))).lower()
    return [m for m in MARKERS if m in text]


def _ask(url: str, key: str, question: str) -> dict[str, Any]:
    r = httpx.post(url + "/api/ask", json={"question": question, "stream": False}, headers=_headers(key), timeout=60)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


NOTE_BODY = {"id": "internal-note", "kind": "boost", "body": "Replaced.", "triggers": ["brass"],
             "sources": ["internal/letter.md"]}


def _walk(url: str, key: str, conversation: str, only: str | None = None) -> dict[tuple[str, str], httpx.Response]:
    """Every operation of the server's OpenAPI document (``only``: of that method), its parameters naming the
    internal collection."""
    doc = httpx.get(url + "/openapi.json", headers=_headers(key)).json()
    path_values = {"source_id": "internal/ledger.pdf", "page": "1", "conversation_id": conversation,
                   "note_id": "internal-note"}
    query_values = {"q": "Where does the brass oil key hang in the north cupboard?", "lang": "en",
                    "collection": "internal", "kind": "prose_chapter", "limit": "50", "offset": "0",
                    "start_ms": "0", "end_ms": "9000", "f": "internal/ledger.pdf#0", "fragment": "internal/ledger.pdf#0",
                    "format": "md", "turn": "1"}
    bodies = {("POST", "/api/ask"): {"question": "Who keeps the brass oil key of the north cupboard?", "stream": False},
              ("POST", "/api/memory"): NOTE_BODY, ("PUT", "/api/memory/{note_id}"): NOTE_BODY}
    out: dict[tuple[str, str], httpx.Response] = {}
    for template, ops in doc["paths"].items():
        for method, op in ops.items():
            if only is not None and method.upper() != only:
                continue
            path = template
            query: dict[str, str] = {}
            path_values["source_id"] = "internal/watch.srt" if template.endswith("/cues") else "internal/ledger.pdf"
            for p in op.get("parameters", []):
                values = path_values if p["in"] == "path" else query_values
                assert p["name"] in values, f"{method.upper()} {template}: no value for parameter {p['name']!r}"
                if p["in"] == "path":
                    path = path.replace("{" + p["name"] + "}", quote(values[p["name"]], safe=""))
                else:
                    query[p["name"]] = values[p["name"]]
            body = bodies.get((method.upper(), template))
            assert ("requestBody" in op) == (body is not None), f"{method.upper()} {template}: body?"
            out[(method.upper(), template)] = httpx.request(method.upper(), url + path, params=query, json=body,
                                                            headers=_headers(key), timeout=60)
    return out


def test_a_key_for_one_collection_reaches_nothing_of_another(keyed: LiveServer) -> None:
    url = keyed.url
    # a conversation of the same reader under the internal key: its answer carries the markers
    made = _ask(url, INTERNAL_KEY, "Who keeps the brass oil key of the north cupboard?")
    assert any(m in json.dumps(made).lower() for m in MARKERS)
    seen = _walk(url, DEMO_KEY, made["conversation_id"])  # writes too: it may change nothing
    assert len(seen) >= 20  # every operation of the document was called
    leaked = {f"{m} {p}": _leaks(r) for (m, p), r in seen.items() if _leaks(r)}
    assert not leaked
    statuses = {k: r.status_code for k, r in seen.items()}
    for op in [("GET", "/api/sources/{source_id}"), ("GET", "/api/sources/{source_id}/view"),
               ("GET", "/api/sources/{source_id}/cues"), ("GET", "/api/sources/{source_id}/pages/{page}"),
               ("GET", "/api/conversations/{conversation_id}"), ("GET", "/api/conversations/{conversation_id}/export"),
               ("GET", "/api/memory/{note_id}")]:
        assert statuses[op] == 404, (op, seen[op].text)  # as if it were not there
    for op in [("DELETE", "/api/sources/{source_id}"), ("POST", "/api/memory"), ("PUT", "/api/memory/{note_id}"),
               ("DELETE", "/api/memory/{note_id}")]:
        assert statuses[op] == 403, (op, seen[op].text)  # a reading key changes nothing
    assert statuses[("DELETE", "/api/conversations/{conversation_id}")] == 404
    assert seen[("GET", "/api/sources")].json()["total"] == 0  # ?collection=internal
    assert statuses[("POST", "/api/ask")] == 200 and statuses[("GET", "/api/search")] == 200
    assert seen[("GET", "/api/status")].json()["access"] == {"key": "demo-reader", "collections": ["demo"], "write": False}
    # nothing was changed: the internal key still reads its source, note and conversation
    own = _headers(INTERNAL_KEY)
    assert httpx.get(url + "/api/sources/internal/letter.md", headers=own).status_code == 200
    assert httpx.get(url + "/api/memory/internal-note", headers=own).json()["body"] == "Zorvath opens the brass door."
    assert httpx.get(url + f"/api/conversations/{made['conversation_id']}", headers=own).status_code == 200


def test_the_walk_finds_the_markers_with_the_key_that_reads_them(keyed: LiveServer) -> None:
    made = _ask(keyed.url, INTERNAL_KEY, "Who gives the word at the brass door?")
    seen = _walk(keyed.url, INTERNAL_KEY, made["conversation_id"], only="GET")  # reads only: the fixture stays
    found = {p for (_, p), r in seen.items() if _leaks(r)}
    assert {"/api/search", "/api/sources/{source_id}/view", "/api/sources/{source_id}/cues", "/api/memory/{note_id}",
            "/api/conversations/{conversation_id}", "/api/conversations/{conversation_id}/export"} <= found


def test_the_demo_key_reads_the_demo(keyed: LiveServer) -> None:
    url = keyed.url
    got = httpx.get(url + "/api/sources", headers=_headers(DEMO_KEY)).json()
    assert got["total"] > 5 and {s["collection"] for s in got["sources"]} == {"demo"}
    answer = _ask(url, DEMO_KEY, "How often is the clockwork weight wound?")
    assert answer["citations"] and all(c["source_id"].startswith("demo/") for c in answer["citations"])
    notes = httpx.get(url + "/api/memory", headers=_headers(DEMO_KEY)).json()
    ids = {n["id"] for n in notes["notes"]}
    assert "fog-horn-rule" in ids and "internal-note" not in ids and notes["writable"] is False
    assert "invented-collection" not in ids  # a note naming no source belongs to no collection: admin only
    admin = {n["id"] for n in httpx.get(url + "/api/memory", headers=_headers(ADMIN)).json()["notes"]}
    assert {"internal-note", "invented-collection", "fog-horn-rule"} <= admin


def test_conversations_belong_to_the_reader_and_the_key(keyed: LiveServer) -> None:
    url = keyed.url
    mine = _ask(url, DEMO_KEY, "What does the red lamp on the gallery mean?")["conversation_id"]
    listed = {c["id"] for c in httpx.get(url + "/api/conversations", headers=_headers(DEMO_KEY)).json()["conversations"]}
    assert mine in listed
    for other in (INTERNAL_KEY, ADMIN):
        theirs = {c["id"] for c in httpx.get(url + "/api/conversations", headers=_headers(other)).json()["conversations"]}
        assert mine not in theirs
        assert httpx.get(url + f"/api/conversations/{mine}", headers=_headers(other)).status_code == 404
    follow = httpx.post(url + "/api/ask", json={"question": "And when is it lit?", "stream": False,
                                                "conversation_id": mine}, headers=_headers(INTERNAL_KEY))
    assert follow.status_code == 404  # another key cannot continue it either


def test_a_writing_key_changes_only_its_own_collections(keyed: LiveServer) -> None:
    url = keyed.url
    h = _headers(INTERNAL_KEY)
    note = {"id": "internal-2", "kind": "boost", "body": "The ledger's cupboard.", "triggers": ["cupboard"],
            "sources": ["internal/ledger.pdf"]}
    assert httpx.post(url + "/api/memory", json=note, headers=h).status_code == 200
    foreign = {**note, "id": "sneaky", "sources": ["demo/letters/1886-02-penhallow-to-harbour-board.md"]}
    r = httpx.post(url + "/api/memory", json=foreign, headers=h)
    assert r.status_code in (403, 422) and "sneaky" not in {n["id"] for n in httpx.get(
        url + "/api/memory", headers=_headers(ADMIN)).json()["notes"]}
    taken = httpx.post(url + "/api/memory", json={**note, "id": "fog-horn-rule"}, headers=h)  # the demo's pinned note
    assert taken.status_code == 403 and "taken" in taken.json()["error"]
    kept = httpx.get(url + "/api/memory/fog-horn-rule", headers=_headers(ADMIN)).json()
    assert kept["kind"] == "pinned" and "internal/ledger.pdf" not in kept["sources"]
    assert httpx.delete(url + "/api/memory/fog-horn-rule", headers=h).status_code == 404
    assert httpx.delete(url + "/api/sources/demo/letters/1886-02-penhallow-to-harbour-board.md", headers=h).status_code == 404
    cookie_only = httpx.delete(url + "/api/memory/internal-2", cookies={"footnote_key": INTERNAL_KEY})
    assert cookie_only.status_code == 401  # a write needs the key in a header, not the browser's cookie
    nameless = httpx.delete(url + "/api/memory/internal-2", headers={"Cookie": f"footnote_key={INTERNAL_KEY}; junk"})
    assert nameless.status_code == 401  # a cookie fragment without a name is not a header either
    assert httpx.delete(url + "/api/memory/internal-2", headers=h).status_code == 200


def test_unknown_and_revoked_keys_are_refused(keyed: LiveServer) -> None:
    url = keyed.url
    assert httpx.get(url + "/api/sources", headers=_headers(REVOKED_KEY)).status_code == 200
    assert keyed.engine.store.revoke_api_key("soon-revoked")
    time.sleep(0.4)  # server.keys_refresh_s is 0.2 here
    r = httpx.get(url + "/api/sources", headers=_headers(REVOKED_KEY))
    assert r.status_code == 401 and "revoked" in r.json()["error"]
    assert httpx.get(url + "/api/sources", headers=_headers("fn_never-made")).status_code == 401
    assert httpx.get(url + "/api/sources", headers=_headers(None)).status_code == 401  # no public collections here
    session = httpx.post(url + "/api/session", headers=_headers(DEMO_KEY))
    assert session.json() == {"ok": True, "auth": True, "key": "demo-reader", "collections": ["demo"], "write": False}
    assert session.cookies.get("footnote_key") == DEMO_KEY


def test_mcp_with_a_key_for_one_collection(keyed: LiveServer) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def texts(key: str) -> str:
        headers = {"Authorization": f"Bearer {key}"}
        async with (httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
                    Client(streamable_http_client(keyed.url + "/mcp", http_client=http)) as client):
            out = []
            for name, args in (("search", {"query": "Who keeps the brass oil key of the north cupboard?"}),
                               ("ask", {"question": "Who keeps the brass oil key of the north cupboard?"}),
                               ("get_source", {"source_id": "internal/letter.md"}),
                               ("get_source", {"source_id": "internal/watch.srt",
                                               "locator": {"track_id": "internal/watch.srt", "start_ms": 0, "end_ms": 9000}}),
                               ("list_sources", {}), ("list_sources", {"kind": "track_transcript"})):
                got = await client.call_tool(name, args)
                out.append(json.dumps(got.model_dump(mode="json")))
            out.append(json.dumps((await client.list_resources()).model_dump(mode="json")))
            try:
                out.append(json.dumps((await client.read_resource("footnote://source/internal/letter.md")).model_dump(mode="json")))
            except Exception as e:  # the SDK raises the server's error: not found
                out.append(str(e))
            return "\n".join(out).lower()

    def run(key: str) -> str:  # a thread of its own: the browser tests' playwright keeps a loop on the main thread
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, texts(key)).result()

    demo = run(DEMO_KEY)
    assert not [m for m in MARKERS if m in demo]
    assert "demo/" in demo  # the demo key's tools work
    internal = run(INTERNAL_KEY)
    assert all(m in internal for m in MARKERS)  # the control: the same calls with the internal key find them


def test_public_collections_open_with_no_key(tmp_path: Path, keyed: LiveServer) -> None:
    settings: Settings = keyed.settings.with_overrides(**{"server.public_collections": ("demo",)})
    with serving(settings, tmp_path) as public:
        url = public.url
        listed = httpx.get(url + "/api/sources", headers=_headers(None))
        assert listed.status_code == 200 and {s["collection"] for s in listed.json()["sources"]} == {"demo"}
        answer = _ask(url, "", "Who keeps the brass oil key of the north cupboard?")
        assert not [m for m in MARKERS if m in json.dumps(answer).lower()]
        assert httpx.get(url + "/api/sources/internal/letter.md", headers=_headers(None)).status_code == 404
        keyless = httpx.delete(url + "/api/memory/fog-horn-rule", headers=_headers(None))
        assert keyless.status_code == 401 and "no key was sent" in keyless.json()["error"]
        assert httpx.get(url + "/api/sources/internal/letter.md", headers=_headers(ADMIN)).status_code == 200
        assert httpx.get(url + "/api/sources", headers=_headers("fn_wrong")).status_code == 401


def test_revoking_every_key_never_opens_the_store(tmp_path: Path) -> None:
    """No admin key, no public collection, one named key: revoked, the server stays closed (it does not fall back
    to the open server it was before any key), and the key is refused as revoked."""
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntitle: A\n---\nThe Quillfeather keeps the lamp.\n", encoding="utf-8")
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash",
                                      "server.keys_refresh_s": 0.2, "server.warm_up": False})
    with Engine.from_settings(settings) as engine:
        assert engine.ingest([folder]).ok
        engine.store.put_api_key(ApiKey("only", "k1", ("c",), False, time.time()), key_hash(DEMO_KEY))
    with serving(settings, tmp_path) as server:
        url = server.url
        assert httpx.get(url + "/api/sources/c/a.md", headers=_headers(DEMO_KEY)).status_code == 200
        assert httpx.get(url + "/api/sources/c/a.md", headers=_headers(None)).status_code == 401
        assert server.engine.store.revoke_api_key("only") and server.engine.store.api_keys() == []
        time.sleep(0.4)
        for key in (None, DEMO_KEY):
            r = httpx.get(url + "/api/sources/c/a.md", headers=_headers(key))
            assert r.status_code == 401, (key, r.text)
        assert "revoked" in httpx.get(url + "/api/status", headers=_headers(DEMO_KEY)).json()["error"]
        server.engine.store.put_api_key(ApiKey("only", "k2", ("c",), False, time.time()), key_hash(REVOKED_KEY))
        time.sleep(0.4)  # the name is free again; the old key stays refused, by the name it was made with
        assert httpx.get(url + "/api/sources/c/a.md", headers=_headers(REVOKED_KEY)).status_code == 200
        old = httpx.get(url + "/api/sources/c/a.md", headers=_headers(DEMO_KEY))
        assert old.status_code == 401 and old.json()["error"] == "the key 'only' was revoked"
        bare = httpx.get(url + "/api/sources/c/a.md", headers={"Authorization": REVOKED_KEY})  # no "Bearer"
        assert bare.status_code == 401 and "must be 'Bearer KEY'" in bare.json()["error"]


def test_a_server_without_keys_ignores_another_authorization_scheme(tmp_path: Path) -> None:
    """A proxy's Basic auth passes its Authorization header on: a server with no key of its own serves the request."""
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntitle: A\n---\nThe lamp is lit at dusk.\n", encoding="utf-8")
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash",
                                      "server.warm_up": False})
    with Engine.from_settings(settings) as engine:
        assert engine.ingest([folder]).ok
    with serving(settings, tmp_path) as server:
        r = httpx.get(server.url + "/api/sources", headers={"Authorization": "Basic dXNlcjpwYXNz"})
        assert r.status_code == 200 and r.json()["total"] == 1
