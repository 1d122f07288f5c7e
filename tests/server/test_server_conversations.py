"""Conversations over HTTP: ask saves the turn, a follow-up is understood, list/get/delete, bad ids."""

from __future__ import annotations

import httpx
from serverkit import LiveServer
from test_server_api import FOG, parse_sse

from footnote.store.conversations import new_conversation_id


def _ask(live: LiveServer, question: str, cid: str | None = None) -> list[tuple[str, dict]]:
    body: dict = {"question": question}
    if cid is not None:
        body["conversation_id"] = cid
    r = httpx.post(live.url + "/api/ask", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return parse_sse(r.text)


def test_conversation_over_http(live: LiveServer) -> None:
    first = _ask(live, FOG)
    done = dict(first)["done"]
    cid = done["conversation_id"]
    assert cid and done["turn"] == 1
    assert "understood" not in dict(first)
    second = _ask(live, "What about at night?", cid)
    names = [n for n, _ in second]
    assert names[0] == "understood"  # "Searching for: …" before the search
    understood = second[0][1]
    assert understood["original"] == "What about at night?" and understood["how"] == "rule"
    assert understood["question"].startswith(FOG) and understood["question"].endswith("What about at night?")
    done2 = dict(second)["done"]
    assert done2["conversation_id"] == cid and done2["turn"] == 2
    assert done2["trace"]["rewritten_question"] == understood["question"]
    assert "night" in done2["answer"].lower()  # the follow-up's own term chose the sentences

    got = httpx.get(f"{live.url}/api/conversations/{cid}", timeout=10).json()
    assert got["id"] == cid and got["title"] == FOG
    assert [t["question"] for t in got["turns"]] == [FOG, "What about at night?"]
    assert got["turns"][1]["rewritten_question"] == understood["question"]
    assert got["turns"][1]["answer"]["answer"] == done2["answer"]
    assert got["turns"][1]["answer"]["citations"] == done2["citations"]

    listed = httpx.get(f"{live.url}/api/conversations", params={"limit": 200}, timeout=10).json()
    row = next(c for c in listed["conversations"] if c["id"] == cid)
    assert row["turns"] == 2 and row["title"] == FOG

    assert httpx.delete(f"{live.url}/api/conversations/{cid}", timeout=10).json() == {"deleted": cid}
    assert httpx.get(f"{live.url}/api/conversations/{cid}", timeout=10).status_code == 404
    assert httpx.delete(f"{live.url}/api/conversations/{cid}", timeout=10).status_code == 404
    r = httpx.post(live.url + "/api/ask", json={"question": "And then?", "conversation_id": cid}, timeout=60)
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


def test_list_pages(live: LiveServer) -> None:
    ids = [dict(_ask(live, f"{FOG} ({i})"))["done"]["conversation_id"] for i in range(3)]
    page1 = httpx.get(f"{live.url}/api/conversations", params={"limit": 2}, timeout=10).json()
    assert [c["id"] for c in page1["conversations"]] == ids[::-1][:2] and page1["next_offset"] == 2
    page2 = httpx.get(f"{live.url}/api/conversations", params={"limit": 2, "offset": 2}, timeout=10).json()
    assert page2["conversations"][0]["id"] == ids[0]
