"""Two ``footnote serve`` processes over one PostgreSQL, as behind a load balancer (issue 41 item 2;
docs/postgres.md, "Several servers, one database"): requests alternate between them and a reader cannot tell —
a conversation started on one continues on the other, each reader still sees only their own, a curated note
added, edited or removed on one is what the other answers with at once, and a source ingested by a third
process (the CLI) is found by both."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serverkit import free_socket
from test_server_api import FOG

from footnote.engine import Engine
from footnote.server.readers import READER_HEADER
from footnote.settings import load_settings
from footnote.testing.loopback import wait_until_serving

pytestmark = pytest.mark.integration

KEY = "two-servers-test-key"
PARAFFIN_Q = "How much paraffin may the oil store hold?"


def _serve(store: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    env = {**os.environ, "FOOTNOTE_STORE": store, "FOOTNOTE_API_KEY": KEY, "HOME": str(home)}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("footnote")), "serve", "--no-demo", "--embedder", "hash",
                             "--port", str(port), "--log-level", "warning"], env=env, cwd=home,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    why = wait_until_serving(proc, url, 60)
    assert why is None, why
    return proc, url


@pytest.fixture
def two(pg_url: str, demo_dir: Path, tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    settings = load_settings(None, **{"store.url": pg_url, "embedder.name": "hash"})
    with Engine.from_settings(settings) as engine:
        assert engine.ingest([demo_dir]).ok
    procs = []
    try:
        for name in ("a", "b"):
            home = tmp_path / name
            home.mkdir()
            procs.append(_serve(pg_url, home))
        yield procs[0][1], procs[1][1], pg_url
    finally:
        for proc, _ in procs:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _ask(url: str, question: str, reader: str | None, cid: str | None = None) -> tuple[dict, str]:
    headers = {"X-API-Key": KEY, **({READER_HEADER: reader} if reader else {})}
    body = {"question": question, "stream": False, **({"conversation_id": cid} if cid else {})}
    r = httpx.post(url + "/api/ask", json=body, headers=headers, timeout=120)
    assert r.status_code == 200, r.text
    return r.json(), reader or r.headers[READER_HEADER]


def test_requests_alternate_between_two_servers(two: tuple[str, str, str], tmp_path: Path) -> None:
    a, b, store = two
    key = {"X-API-Key": KEY}
    # a conversation begun on A goes on on B, and is the same on both
    first, reader = _ask(a, FOG, None)
    cid = first["conversation_id"]
    assert cid and first["mode"] == "corpus"
    second, _ = _ask(b, "What about at night?", reader, cid)
    assert second["conversation_id"] == cid and second["turn"] == 2
    third, _ = _ask(a, "And how often?", reader, cid)
    assert third["turn"] == 3
    for url in (a, b):
        got = httpx.get(f"{url}/api/conversations/{cid}", headers={**key, READER_HEADER: reader}, timeout=30).json()
        assert [t["n"] for t in got["turns"]] == [1, 2, 3]
        listed = httpx.get(f"{url}/api/conversations", headers={**key, READER_HEADER: reader}, timeout=30).json()
        assert cid in [c["id"] for c in listed["conversations"]]
    # another reader, on either server, does not see it
    _, stranger = _ask(b, FOG, None)
    assert httpx.get(f"{a}/api/conversations/{cid}", headers={**key, READER_HEADER: stranger}, timeout=30).status_code == 404

    # curated memory: added on B, answered with on A; edited on A, read on B; removed on B, gone on A
    note = {"id": "paraffin-limit", "kind": "pinned", "title": "The oil store limit", "author": "Curator Q",
            "triggers": [PARAFFIN_Q], "sources": ["pdf/keepers-handbook.pdf"],
            "body": "The oil store may hold no more than the Handbook allows; see its page on stores."}
    assert httpx.post(b + "/api/memory", json=note, headers=key, timeout=30).status_code == 200
    on_a, _ = _ask(a, PARAFFIN_Q, reader)
    assert on_a["citations"][0]["kind"] == "pinned" and on_a["citations"][0]["locator"]["note"] == "paraffin-limit"
    edited = {**note, "body": "Edited on A: the limit is on the Handbook's stores page."}
    assert httpx.put(a + "/api/memory/paraffin-limit", json=edited, headers=key, timeout=30).status_code == 200
    assert httpx.get(b + "/api/memory/paraffin-limit", headers=key, timeout=30).json()["body"].startswith("Edited on A")
    on_b, _ = _ask(b, PARAFFIN_Q, reader)
    assert on_b["citations"][0]["text"].startswith("Edited on A")
    assert httpx.delete(b + "/api/memory/paraffin-limit", headers=key, timeout=30).status_code == 200
    after, _ = _ask(a, PARAFFIN_Q, reader)
    assert all(c["kind"] != "pinned" for c in after["citations"])

    # a source ingested by a third process is found by both servers
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "cormorants.md").write_text("# Cormorants\n\nThe cormorants of Gannet Head nest on the north ledge "
                                         "every spring, and the keepers count forty-two nests.\n", encoding="utf-8")
    done = subprocess.run([str(Path(sys.executable).with_name("footnote")), "ingest", str(extra), "--store", store, "--embedder", "hash"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    for url in (a, b):
        hits = httpx.get(url + "/api/search", params={"q": "cormorants nests on the north ledge"}, headers=key,
                         timeout=30).json()
        assert hits["notes"] and hits["notes"][0]["source_id"].endswith("cormorants.md"), (url, hits)

    # removed on A: the conversation is gone on B
    assert httpx.delete(f"{a}/api/conversations/{cid}", headers={**key, READER_HEADER: reader}, timeout=30).status_code == 200
    assert httpx.get(f"{b}/api/conversations/{cid}", headers={**key, READER_HEADER: reader}, timeout=30).status_code == 404
