"""The HTTP API over real HTTP (httpx → uvicorn on loopback) and the demo corpus."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, cast

import httpx
import pytest
from serverkit import LiveServer, start_server, stop_server

from footnote.answer.types import Event
from footnote.engine import Engine
from footnote.server.app import app_state, create_app

pytestmark = pytest.mark.integration

FOG = "When do the Marrowick keepers start the fog horn, and how does it sound?"
RISOTTO = "How long should I stir a mushroom risotto before adding the parmesan?"
AUDIO_ID = "demo/lectures/02-fog-and-tides.vtt"
PDF_ID = "demo/pdf/keepers-handbook.pdf"


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for frame in text.replace("\r\n", "\n").split("\n\n"):
        if not frame.strip():
            continue
        name, data = "message", []
        for line in frame.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        events.append((name, json.loads("\n".join(data))))
    return events


def test_health_and_status(live: LiveServer) -> None:
    assert httpx.get(live.url + "/healthz").json() == {"status": "ok"}
    st = httpx.get(live.url + "/api/status").json()
    assert st["sources"] >= 12 and st["fragments"] > 0
    assert st["embedder"] == "hash" and st["lexical_only"] is False


def test_ask_stream_event_order(live: LiveServer) -> None:
    r = httpx.post(live.url + "/api/ask", json={"question": FOG}, timeout=60)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(r.text)
    names = [n for n, _ in events]
    assert names[0] == "stage" and names[-1] == "done"
    assert "token" in names and "citation" in names and names.count("verdict") == 1
    # stages before the first token; every citation and the verdict after the last token
    first_token = names.index("token")
    last_token = len(names) - 1 - names[::-1].index("token")
    assert all(n == "stage" for n in names[:first_token])
    assert names.index("verdict") > last_token
    done = events[-1][1]
    assert done["mode"] == "corpus"
    streamed = "".join(d["text"] for n, d in events if n == "token")
    assert streamed.strip()
    cited = sorted(d["n"] for n, d in events if n == "citation")
    assert cited == sorted(c["n"] for c in done["citations"])
    for c in done["citations"]:
        assert f"[{c['n']}]" in done["answer"]
    # citation support of the answer's sentences rides in the done event's trace
    sup = done["trace"]["support"]
    assert sup["n_sentences"] >= 1 and len(sup["sentences"]) == sup["n_sentences"]
    assert 0.0 <= sup["supported_share"] <= 1.0 and isinstance(sup["unsupported"], list)


def test_ask_json_equals_answer_contract(live: LiveServer) -> None:
    r = httpx.post(live.url + "/api/ask", json={"question": FOG, "stream": False}, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    got = r.json()
    keys = {"answer", "citations", "verdict", "corpus_insufficient", "mode", "disclaimer",
            "dropped_citations", "removed_mentions", "model_calls", "trace"}
    assert keys <= set(got)
    for c in got["citations"]:
        assert {"n", "source_id", "kind", "locator", "text"} <= set(c)
    # the same object footnote ask --json prints (the engine's Answer.to_dict), trace aside (timings)
    want = json.loads(json.dumps(live.engine.ask(FOG).to_dict(), ensure_ascii=False, default=str))
    skip = ("trace", "conversation_id", "turn")  # the server saved its turn in a conversation of its own
    assert {k: v for k, v in got.items() if k not in skip} == {k: v for k, v in want.items() if k not in skip}
    assert got["conversation_id"] and got["turn"] == 1 and want["conversation_id"] is None
    # Accept: application/json asks for the same
    r2 = httpx.post(live.url + "/api/ask", json={"question": FOG}, headers={"Accept": "application/json"}, timeout=60)
    assert r2.json()["answer"] == got["answer"]


def test_off_topic_is_not_found(live: LiveServer) -> None:
    got = httpx.post(live.url + "/api/ask", json={"question": RISOTTO, "stream": False}, timeout=60).json()
    assert got["mode"] == "not_found" and got["citations"] == [] and got["corpus_insufficient"] is True


def test_search_mirrors_search_json(live: LiveServer) -> None:
    r = httpx.get(live.url + "/api/search", params={"q": "fog horn blasts"})
    assert r.status_code == 200
    doc = r.json()
    assert {"notes", "verdict", "signal", "trace", "lexical_only"} <= set(doc)
    assert doc["notes"] and doc["notes"][0]["n"] == 1
    assert {"source_id", "fragment_id", "kind", "locator", "label", "text", "score"} <= set(doc["notes"][0])
    assert httpx.get(live.url + "/api/search", params={"q": "  "}).status_code == 422


def test_sources_list_and_original(live: LiveServer, demo_dir: Path) -> None:
    listing = httpx.get(live.url + "/api/sources").json()
    ids = {s["id"] for s in listing["sources"]}
    assert AUDIO_ID in ids and PDF_ID in ids
    r = httpx.get(live.url + "/api/sources/" + AUDIO_ID)
    assert r.status_code == 200 and r.headers["content-type"] == "audio/mpeg"
    assert r.content == (demo_dir / "lectures" / "02-fog-and-tides.mp3").read_bytes()
    assert r.headers["accept-ranges"] == "bytes"
    pdf = httpx.get(live.url + "/api/sources/" + PDF_ID)
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.content == (demo_dir / "pdf" / "keepers-handbook.pdf").read_bytes()
    head = httpx.head(live.url + "/api/sources/" + AUDIO_ID)
    assert head.status_code == 200 and int(head.headers["content-length"]) == len(r.content)


def test_range_requests(live: LiveServer, demo_dir: Path) -> None:
    data = (demo_dir / "lectures" / "02-fog-and-tides.mp3").read_bytes()
    size = len(data)
    url = live.url + "/api/sources/" + AUDIO_ID
    r = httpx.get(url, headers={"Range": "bytes=100-199"})
    assert r.status_code == 206 and r.content == data[100:200]
    assert r.headers["content-range"] == f"bytes 100-199/{size}" and r.headers["content-length"] == "100"
    r = httpx.get(url, headers={"Range": "bytes=-50"})
    assert r.status_code == 206 and r.content == data[-50:]
    r = httpx.get(url, headers={"Range": f"bytes={size - 10}-"})
    assert r.status_code == 206 and r.content == data[-10:]
    r = httpx.get(url, headers={"Range": f"bytes={size}-"})
    assert r.status_code == 416 and r.headers["content-range"] == f"bytes */{size}"
    assert "outside" in r.json()["error"]
    r = httpx.get(url, headers={"Range": f"bytes=0-{size * 2}"})  # clipped to the end
    assert r.status_code == 206 and r.content == data


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "%2e%2e/%2e%2e/etc/passwd",
        "..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "/etc/passwd",
        "lectures/../../../etc/passwd",
        "no-such-source.md",
        "lectures/02-fog-and-tides.mp3",  # a real file on disk, but not a stored source id
    ],
)
def test_sources_never_leave_the_store(live: LiveServer, path: str) -> None:
    with httpx.Client(base_url=live.url) as client:
        # send the path as written (httpx would otherwise normalise dot segments)
        req = client.build_request("GET", "/api/sources/x")
        req.url = req.url.copy_with(raw_path=("/api/sources/" + path).encode())
        r = client.send(req)
    assert r.status_code == 404, (path, r.status_code)
    assert "root:" not in r.text


def test_symlinked_file_is_not_served(live: LiveServer, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    link = live.root / "extra" / "link.md"
    if link.exists() or link.is_symlink():
        link.unlink()
    os.symlink(secret, link)  # beside an ingested source, never ingested itself
    try:
        for p in ("link.md", str(link), "extra/link.md", str(secret)):
            r = httpx.get(live.url + "/api/sources/" + p.lstrip("/"))
            assert r.status_code == 404 and "TOP SECRET" not in r.text
    finally:
        link.unlink()


def test_pdf_page_with_highlight(live: LiveServer) -> None:
    frags = [f for f in live.engine.store.fragments_of(PDF_ID) if getattr(f.locator, "page", None) == 4]
    assert frags
    r = httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/4", params={"fragment": frags[0].id})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert r.headers["x-footnote-page"] == "4" and int(r.headers["x-footnote-highlights"]) > 0
    plain = httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/4")
    assert plain.headers["x-footnote-highlights"] == "0" and plain.content != r.content
    assert httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/99").status_code == 404
    assert httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/0").status_code == 404
    other = live.engine.store.fragments_of(AUDIO_ID)[0].id
    assert httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/4", params={"fragment": other}).status_code == 404
    assert httpx.get(live.url + f"/api/sources/{AUDIO_ID}/pages/1").status_code == 404


def test_track_cues_by_window(live: LiveServer) -> None:
    every = httpx.get(live.url + f"/api/sources/{AUDIO_ID}/cues").json()["cues"]
    assert len(every) > 5 and all(c["start_ms"] < c["end_ms"] for c in every)
    frag = live.engine.store.fragments_of(AUDIO_ID)[0]
    loc = frag.locator
    window = httpx.get(live.url + f"/api/sources/{AUDIO_ID}/cues",
                       params={"start_ms": loc.start_ms, "end_ms": loc.end_ms}).json()["cues"]  # type: ignore[union-attr]
    assert 0 < len(window) < len(every)
    assert " ".join(c["text"] for c in window) == frag.text  # the window's text is its cues, in order
    # the list of sources does not carry the cue list; a non-track has no cues
    listed = {x["id"]: x for x in httpx.get(live.url + "/api/sources").json()["sources"]}
    assert "cues" not in listed[AUDIO_ID]["meta"]
    assert httpx.get(live.url + f"/api/sources/{PDF_ID}/cues").status_code == 404
    assert httpx.get(live.url + "/api/sources/no-such-track/cues").status_code == 404


def test_pdf_page_highlights_the_quoted_sentence_only(live: LiveServer) -> None:
    frag = next(f for f in live.engine.store.fragments_of(PDF_ID) if getattr(f.locator, "page", None) == 4)
    whole = httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/4", params={"fragment": frag.id})
    sentence = next(s for s in re.split(r"(?<=[.!?])\s+", frag.text) if len(s.split()) >= 6)
    one = httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/4", params={"fragment": frag.id, "q": sentence})
    assert one.status_code == 200, one.text
    n_whole, n_one = int(whole.headers["x-footnote-highlights"]), int(one.headers["x-footnote-highlights"])
    assert 0 < n_one < n_whole  # the cited sentence, not the whole page
    # a claim the fragment does not quote (a model's paraphrase) highlights the whole fragment
    para = httpx.get(live.url + f"/api/sources/{PDF_ID}/pages/4",
                     params={"fragment": frag.id, "q": "entirely unrelated words about cooking risotto"})
    assert int(para.headers["x-footnote-highlights"]) == n_whole


def test_bounds_on_body_and_question(live: LiveServer) -> None:
    limit = live.settings.server.max_request_bytes
    body = json.dumps({"question": "fog " * (limit // 4 + 10)})
    r = httpx.post(live.url + "/api/ask", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "limit" in r.json()["error"]
    max_chars = live.settings.answer.max_question_chars
    r = httpx.post(live.url + "/api/ask", json={"question": "x" * (max_chars + 1)})
    assert r.status_code == 422 and str(max_chars) in r.json()["error"]
    r = httpx.post(live.url + "/api/ask", json={"question": "   "})
    assert r.status_code == 422 and "empty" in r.json()["error"]
    r = httpx.post(live.url + "/api/ask", json={"nope": 1})
    assert r.status_code == 422 and "question" in r.json()["error"]


def test_chunked_body_over_the_limit_is_refused(live: LiveServer) -> None:
    limit = live.settings.server.max_request_bytes

    def chunks() -> Any:
        yield b'{"question": "'
        for _ in range(limit // 1000 + 2):
            yield b"a" * 1000
        yield b'"}'

    r = httpx.post(live.url + "/api/ask", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413


def test_client_disconnect_releases_the_worker(live: LiveServer) -> None:
    pump = app_state(live.app).pump
    with httpx.Client(timeout=30) as client, client.stream("POST", live.url + "/api/ask", json={"question": FOG}) as r:
        assert r.status_code == 200
        next(r.iter_bytes())  # the first event arrived; now hang up
    deadline = time.monotonic() + 10
    while pump.active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pump.active == 0


class SlowEngine(Engine):
    """The real engine, its events paced out, so a client can hang up mid-turn."""

    closed: ClassVar[threading.Event] = threading.Event()
    yielded: ClassVar[list[str]] = []

    def ask_stream(
        self, question: str, *, fallback: bool | None = None, stop: threading.Event | None = None, **kw: Any
    ) -> Iterator[Event]:
        events = list(super().ask_stream(question, fallback=fallback, **kw))
        try:
            for ev in events:
                time.sleep(0.2)
                self.yielded.append(type(ev).__name__)
                yield ev
        finally:
            self.closed.set()


def test_hanging_up_mid_stream_stops_the_turn(served_store: tuple[Path, Any]) -> None:
    _, settings = served_store
    engine = cast(SlowEngine, SlowEngine.from_settings(settings))
    app = create_app(engine, settings)
    url, server, thread = start_server(app)
    try:
        total = len(list(Engine.ask_stream(engine, FOG)))
        with httpx.Client(timeout=30) as client, client.stream("POST", url + "/api/ask", json={"question": FOG}) as r:
            assert r.status_code == 200
            next(r.iter_bytes())  # the first event arrived; now hang up
        assert engine.closed.wait(10), "the turn's generator was never closed"
        deadline = time.monotonic() + 10
        while app_state(app).pump.active and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app_state(app).pump.active == 0
        assert len(engine.yielded) < total  # it stopped early, not after running to the end
    finally:
        stop_server(server, thread)
        engine.close()


def test_api_key_enforced(served_store: tuple[Path, Any]) -> None:
    _, settings = served_store
    keyed = settings.with_overrides(**{"server.api_key": "s3cret-key"})
    with Engine.from_settings(keyed) as engine:
        url, server, thread = start_server(create_app(engine, keyed))
        try:
            with httpx.Client(base_url=url, timeout=30) as c:
                check_key(c)
        finally:
            stop_server(server, thread)


def check_key(c: httpx.Client) -> None:
    assert c.get("/healthz").status_code == 200
    assert c.get("/").status_code == 200  # the page shell asks for the key itself
    assert c.get("/docs").status_code == 200  # so does the API page (it loads /openapi.json with the key)
    for method, path in [("GET", "/api/status"), ("GET", "/api/sources"), ("GET", "/api/search?q=fog"),
                         ("GET", f"/api/sources/{AUDIO_ID}"), ("GET", f"/api/sources/{PDF_ID}/pages/1"),
                         ("POST", "/api/ask"), ("GET", "/openapi.json"), ("GET", "/api/memory"),
                         ("POST", "/api/memory"), ("DELETE", "/api/memory/x")]:
        r = c.request(method, path, json={"question": "fog"} if method == "POST" else None)
        assert r.status_code == 401, path
        assert r.headers.get("www-authenticate") == "Bearer" and "API key" in r.json()["error"]
    assert c.get("/api/status", headers={"X-API-Key": "wrong"}).status_code == 401
    assert c.get("/api/status", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert c.get("/api/status", headers={"Authorization": "Bearer s3cret-key"}).status_code == 200
    assert c.get("/api/status", headers={"X-API-Key": "s3cret-key"}).status_code == 200
    # the browser's session: the header once, then an HttpOnly cookie that audio and images carry
    r = c.post("/api/session", headers={"X-API-Key": "s3cret-key"})
    assert r.status_code == 200 and "httponly" in r.headers["set-cookie"].lower()
    assert c.get(f"/api/sources/{AUDIO_ID}", headers={"Range": "bytes=0-9"}).status_code == 206


def test_citations_carry_the_commentator(live: LiveServer) -> None:
    """A commentary's citation names its commentator (the verse book's front matter) in the answer
    contract, streamed or not; a source without one carries an empty source_meta."""
    question = "What does HB 2.2 say about the horn?"
    got = httpx.post(live.url + "/api/ask", json={"question": question, "stream": False}, timeout=60).json()
    comm = [c for c in got["citations"] if c["kind"] == "commentary"]
    assert comm and all(c["source_meta"] == {"commentator": "Ada Penhallow"} for c in comm), got["citations"]
    events = parse_sse(httpx.post(live.url + "/api/ask", json={"question": question}, timeout=60).text)
    done = next(d for name, d in events if name == "done")
    streamed = [c for name, c in events if name == "citation"]
    assert [c["source_meta"] for c in done["citations"]] == [c["source_meta"] for c in streamed]
    assert any(c["source_meta"].get("commentator") == "Ada Penhallow" for c in done["citations"])
    fog = httpx.post(live.url + "/api/ask", json={"question": FOG, "stream": False}, timeout=60).json()
    tracks = [c for c in fog["citations"] if c["kind"] == "track_transcript"]
    assert tracks and all(c["source_meta"] == {} for c in tracks)  # a lecture has no commentator


VERSES_ID = "demo/verses/harbour-book.md"


def test_source_view_anchors_every_address(live: LiveServer) -> None:
    """A verse book as a page: one anchor per address holding the verse and its commentary (the
    commentator named), no front matter, no script; ?f marks the cited passage."""
    frags = sorted(live.engine.store.fragments_of(VERSES_ID), key=lambda f: f.ordinal)
    comm = next(f for f in frags if f.kind == "commentary" and f.locator.label == "HB 2.2")  # type: ignore[union-attr]
    r = httpx.get(f"{live.url}/api/sources/{VERSES_ID}/view", params={"f": comm.id}, timeout=10)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp  # nothing may run
    page = r.text
    labels = {f.locator.label for f in frags}  # type: ignore[union-attr]
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert sorted(ids) == sorted("-".join(lb.split()) for lb in labels) and len(ids) == len(set(ids))
    section = page.split('<section id="HB-2.2"', 1)[1].split("</section>", 1)[0]
    assert "Two voices in every minute" in section and "Commentary — Ada Penhallow" in section
    assert f'class="commentary cited" data-fragment="{comm.id}"' in section  # the cited passage marked
    assert page.count(" cited") == 1
    assert "commentator:" in page and "kind: verse" not in page and "---" not in page  # no front matter
    assert "<script" not in page.lower()


def test_source_view_escapes_the_source(live: LiveServer) -> None:
    sid = next(s["id"] for s in httpx.get(f"{live.url}/api/sources", timeout=10).json()["sources"]
               if s["id"].endswith("lighthouse-cat.md"))
    frag = live.engine.store.fragments_of(sid)[0]
    page = httpx.get(f"{live.url}/api/sources/{sid}/view", params={"f": frag.id}, timeout=10).text
    assert "&lt;script&gt;window.__footnoteXss = 1&lt;/script&gt;" in page
    assert "<script" not in page.lower()
    assert f'<section id="p-{frag.ordinal}"' in page


def test_source_view_of_a_transcript_and_errors(live: LiveServer) -> None:
    page = httpx.get(f"{live.url}/api/sources/{AUDIO_ID}/view", timeout=10).text
    assert '<section id="t-0"' in page and "00:00–" in page
    assert httpx.get(f"{live.url}/api/sources/nope/view", timeout=10).status_code == 404
    r = httpx.get(f"{live.url}/api/sources/{VERSES_ID}/view", params={"f": "x" * 2000}, timeout=10)
    assert r.status_code == 422
