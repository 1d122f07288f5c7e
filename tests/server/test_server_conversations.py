"""Conversations over HTTP: ask saves the turn, a follow-up is understood, list/get/delete, bad ids, and
each reader sees only their own (the reader cookie / X-Footnote-Reader header)."""

from __future__ import annotations

import httpx
import pytest
from serverkit import LiveServer
from test_server_api import FOG, parse_sse

from footnote.server.readers import READER_HEADER
from footnote.store.conversations import new_conversation_id

pytestmark = pytest.mark.integration


def _ask(http: httpx.Client, question: str, cid: str | None = None) -> list[tuple[str, dict]]:
    body: dict = {"question": question}
    if cid is not None:
        body["conversation_id"] = cid
    r = http.post("/api/ask", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return parse_sse(r.text)


@pytest.fixture
def http(live: LiveServer) -> httpx.Client:
    """One reader: a client that keeps the cookies the server hands out (as a browser does)."""
    with httpx.Client(base_url=live.url, timeout=60) as c:
        yield c  # type: ignore[misc]


def test_conversation_over_http(http: httpx.Client) -> None:
    first = _ask(http, FOG)
    done = dict(first)["done"]
    cid = done["conversation_id"]
    assert cid and done["turn"] == 1
    assert "understood" not in dict(first)
    second = _ask(http, "What about at night?", cid)
    names = [n for n, _ in second]
    assert names[0] == "understood"  # "Searching for: …" before the search
    understood = second[0][1]
    assert understood["original"] == "What about at night?" and understood["how"] == "rule"
    assert understood["question"].startswith(FOG) and understood["question"].endswith("What about at night?")
    done2 = dict(second)["done"]
    assert done2["conversation_id"] == cid and done2["turn"] == 2
    assert done2["trace"]["rewritten_question"] == understood["question"]
    assert "night" in done2["answer"].lower()  # the follow-up's own term chose the sentences

    got = http.get(f"/api/conversations/{cid}").json()
    assert got["id"] == cid and got["title"] == FOG
    assert [t["question"] for t in got["turns"]] == [FOG, "What about at night?"]
    assert got["turns"][1]["rewritten_question"] == understood["question"]
    assert got["turns"][1]["answer"]["answer"] == done2["answer"]
    assert got["turns"][1]["answer"]["citations"] == done2["citations"]

    listed = http.get("/api/conversations", params={"limit": 200}).json()
    row = next(c for c in listed["conversations"] if c["id"] == cid)
    assert row["turns"] == 2 and row["title"] == FOG

    assert http.delete(f"/api/conversations/{cid}").json() == {"deleted": cid}
    assert http.get(f"/api/conversations/{cid}").status_code == 404
    assert http.delete(f"/api/conversations/{cid}").status_code == 404
    r = http.post("/api/ask", json={"question": "And then?", "conversation_id": cid})
    assert r.status_code == 404 and "no conversation" in r.json()["error"]


def test_bad_conversation_ids(live: LiveServer) -> None:
    for bad in ["nope", "../../etc/passwd", "A" * 32, "0" * 31]:
        r = httpx.get(f"{live.url}/api/conversations/{bad}", timeout=10)
        assert r.status_code == 404, bad
        r = httpx.post(live.url + "/api/ask", json={"question": FOG, "conversation_id": bad, "stream": False}, timeout=60)
        assert r.status_code == 404, bad
    r = httpx.post(live.url + "/api/ask", json={"question": FOG, "conversation_id": new_conversation_id()}, timeout=60)
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/json")
    assert httpx.get(f"{live.url}/api/conversations", params={"limit": 0}, timeout=10).status_code == 422
    assert httpx.get(f"{live.url}/api/conversations", params={"offset": -1}, timeout=10).status_code == 422


def test_list_pages(http: httpx.Client) -> None:
    ids = [dict(_ask(http, f"{FOG} ({i})"))["done"]["conversation_id"] for i in range(3)]
    page1 = http.get("/api/conversations", params={"limit": 2}).json()
    assert [c["id"] for c in page1["conversations"]] == ids[::-1][:2] and page1["next_offset"] == 2
    page2 = http.get("/api/conversations", params={"limit": 2, "offset": 2}).json()
    assert [c["id"] for c in page2["conversations"]] == [ids[0]] and page2["next_offset"] is None  # this reader's only


def test_each_reader_sees_only_their_own(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url, timeout=60) as alice, httpx.Client(base_url=live.url, timeout=60) as bob:
        r = alice.post("/api/ask", json={"question": FOG, "stream": False})
        cid = r.json()["conversation_id"]
        token = r.headers[READER_HEADER]  # a new reader's token comes back in the header and the cookie
        assert len(token) >= 22 and alice.cookies.get(live.settings.server.reader_cookie_name) == token
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie and token.lower() not in r.text.lower()
        # the same token, later: no new one is handed out
        again = alice.post("/api/ask", json={"question": "What about at night?", "conversation_id": cid, "stream": False})
        assert again.status_code == 200 and READER_HEADER not in again.headers and again.json()["turn"] == 2

        bob.get("/")  # the chat's page gives Bob his own reader cookie
        assert bob.cookies.get(live.settings.server.reader_cookie_name) not in (None, token)
        assert bob.get(f"/api/conversations/{cid}").status_code == 404  # as if it never existed
        assert "no conversation" in bob.get(f"/api/conversations/{cid}").json()["error"]
        assert cid not in [c["id"] for c in bob.get("/api/conversations").json()["conversations"]]
        r = bob.post("/api/ask", json={"question": "And then?", "conversation_id": cid})
        assert r.status_code == 404 and r.headers["content-type"].startswith("application/json")
        assert bob.delete(f"/api/conversations/{cid}").status_code == 404
        assert [c["id"] for c in alice.get("/api/conversations").json()["conversations"]] == [cid]
        assert len(alice.get(f"/api/conversations/{cid}").json()["turns"]) == 2  # Bob changed nothing

    # an API client with no cookie jar: the header works as the cookie does
    hdr = {READER_HEADER: token}
    assert httpx.get(f"{live.url}/api/conversations/{cid}", headers=hdr, timeout=10).status_code == 200
    # no token at all: no conversations, and an id is a 404 (a follow-up too)
    assert httpx.get(f"{live.url}/api/conversations", timeout=10).json()["conversations"] == []
    assert httpx.get(f"{live.url}/api/conversations/{cid}", timeout=10).status_code == 404
    r = httpx.post(f"{live.url}/api/ask", json={"question": "And then?", "conversation_id": cid}, timeout=60)
    assert r.status_code == 404
    # a malformed token is a 400 with the reason (never a silent new reader)
    for bad in ["short", "x" * 200, "bad token with spaces!!!!!!"]:
        r = httpx.get(f"{live.url}/api/conversations", headers={READER_HEADER: bad}, timeout=10)
        assert r.status_code == 400 and READER_HEADER in r.json()["error"], bad
    # the store keeps the token's hash, never the token
    conv = live.engine.store.get_conversation(cid)
    assert conv is not None
    with live.engine.store._read() as conn:  # type: ignore[attr-defined]
        owner = conn.execute("SELECT owner FROM conversations WHERE id = ?", (cid,)).fetchone()[0]
    assert owner and owner != token and len(owner) == 64
