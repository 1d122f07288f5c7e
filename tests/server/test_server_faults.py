"""Issue 10 §2 against a live server (uvicorn on loopback, real SQLite store of the demo, models at the
scripted OpenAI-compatible server): dropped streams stop their turns, secrets stay in, and the small
faults get their 4xx/5xx before anything is streamed."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from serverkit import free_socket, stop_server

from footnote.engine import Engine
from footnote.server.app import app_state, create_app
from footnote.server.slowclients import protocol_class
from footnote.settings import Settings
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

FOG = "When do the Marrowick keepers start the fog horn, and how does it sound?"
OFF = "Which football club won the league in 2018?"
AUDIO_ID = "demo/lectures/02-fog-and-tides.vtt"  # collection "demo", then the path in it
SECRET_KEY = "sk-test-SECRET-key-0123456789"
SECRET_PW = "hunter2-very-secret"


def _serve(settings: Settings, **overrides: Any) -> tuple[str, Any, Any, Engine, Any]:
    settings = settings.with_overrides(**overrides) if overrides else settings
    engine = Engine.from_settings(settings)
    app = create_app(engine, settings)
    sock = free_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2,
                            http=protocol_class(settings.server.header_timeout_s))
    server = uvicorn.Server(config)
    import threading

    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread, engine, app


@pytest.fixture
def serve(served_store: tuple[Path, Settings]) -> Iterator[Any]:
    started: list[tuple[Any, Any, Engine]] = []

    def start(**overrides: Any) -> tuple[str, Engine, Any]:
        url, server, thread, engine, app = _serve(served_store[1], **overrides)
        started.append((server, thread, engine))
        return url, engine, app

    yield start
    for server, thread, engine in started:
        stop_server(server, thread)
        engine.close()


def _models(base_url: str, *roles: str, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for role in roles:
        out |= {f"models.{role}.base_url": base_url, f"models.{role}.model": f"{role}-m",
                f"models.{role}.api_key": SECRET_KEY, f"models.{role}.timeout_s": 30.0,
                f"models.{role}.retries": 0, f"models.{role}.retry_backoff_s": 0.0}
    return out | extra


def _first_event_then_hang_up(url: str, question: str) -> None:
    with httpx.Client(timeout=30) as client, client.stream("POST", url + "/api/ask", json={"question": question}) as r:
        assert r.status_code == 200
        next(r.iter_bytes())


def test_dropped_streams_stop_their_turns_and_the_server_stays_responsive(serve: Any) -> None:
    drops = 12
    drip = Reply(chunks=("The ",) * 2000, chunk_delay_s=0.5)  # a slow model: one token every 0.5 s, for 1000 s
    with ScriptedOpenAIServer({"synthesizer-m": [drip] * drops}) as model:
        url, _, app = serve(**_models(model.base_url, "synthesizer"), **{"server.stream_workers": drops + 2})
        pump = app_state(app).pump
        t0 = time.monotonic()
        r = httpx.post(url + "/api/ask", json={"question": OFF}, timeout=30)  # no model call: the usual time
        usual = time.monotonic() - t0
        assert r.status_code == 200
        for _ in range(drops):
            _first_event_then_hang_up(url, FOG)
        deadline = time.monotonic() + 5
        while pump.active and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pump.active == 0, f"{pump.active} turns still running after their clients left"
        t0 = time.monotonic()
        r = httpx.post(url + "/api/ask", json={"question": OFF}, timeout=30)
        after = time.monotonic() - t0
        assert r.status_code == 200 and "event: done" in r.text
        assert after < max(3 * usual, usual + 1.0), (usual, after)


def test_secrets_never_leave_the_process(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    echo = '{"error": {"message": "invalid key ' + SECRET_KEY + ' for ' + SECRET_PW + '"}}'
    with ScriptedOpenAIServer({"planner-m": [Reply(status=401, raw=echo)] * 2}) as model:
        base = model.base_url.replace("http://", f"http://keeper:{SECRET_PW}@")
        overrides = _models(base, "planner")
        caplog.set_level(logging.INFO)
        url, _, _ = serve(**overrides)
        status = httpx.get(url + "/api/status").text
        assert "planner-m@http://keeper:***@" in status
        done = httpx.post(url + "/api/ask", json={"question": FOG, "stream": False}, timeout=60).json()
        degraded = " ".join(done["trace"]["degraded"])
        assert "HTTP 401" in degraded and "keeper:***@" in degraded
        url2, _, _ = serve(**overrides, **{"answer.on_model_failure": "error"})
        err = httpx.post(url2 + "/api/ask", json={"question": FOG, "stream": False}, timeout=60)
        assert err.status_code == 502 and "HTTP 401" in err.json()["error"]
        streamed = httpx.post(url2 + "/api/ask", json={"question": FOG}, timeout=60).text
        assert "event: error" in streamed
        logged = "\n".join(r.getMessage() for r in caplog.records)
        for text in (status, str(done), err.text, streamed, logged):
            assert SECRET_KEY not in text and SECRET_PW not in text


def test_lone_surrogate_question_is_422(live: Any) -> None:
    for stream in (True, False):
        body = '{"question": "fog \\ud800 horn", "stream": %s}' % ("true" if stream else "false")
        r = httpx.post(live.url + "/api/ask", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and "surrogate" in r.json()["error"], r.text
    r = httpx.get(live.url + "/api/search?q=fog%ED%A0%80")  # not UTF-8 at all
    assert r.status_code < 500


def test_range_with_thousands_of_digits_is_416(live: Any) -> None:
    url = live.url + "/api/sources/" + AUDIO_ID
    r = httpx.get(url, headers={"Range": "bytes=" + "9" * 5000 + "-"})
    assert r.status_code == 416
    r = httpx.get(url, headers={"Range": "bytes=0-" + "9" * 5000})
    assert r.status_code == 206


def test_streamed_ask_with_the_store_down_is_503_before_the_stream(serve: Any) -> None:
    url, engine, _ = serve()
    engine.store.close()
    for stream in (True, False):
        r = httpx.post(url + "/api/ask", json={"question": FOG, "stream": stream}, timeout=30)
        assert r.status_code == 503, (stream, r.status_code, r.text[:200])
        assert r.headers["content-type"].startswith("application/json") and r.json()["type"] == "StoreError"


def test_host_header_is_checked_without_an_api_key(serve: Any) -> None:
    url, _, _ = serve()
    port = url.rsplit(":", 1)[1]
    assert httpx.get(url + "/api/status", headers={"Host": f"attacker.example:{port}"}).status_code == 400
    r = httpx.post(url + "/api/ask", json={"question": FOG}, headers={"Host": "rebind.attacker.example"})
    assert r.status_code == 400 and "DNS-rebinding" in r.json()["error"]
    for ok in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]", "127.0.0.1"):
        assert httpx.get(url + "/healthz", headers={"Host": ok}).status_code == 200, ok
    url2, _, _ = serve(**{"server.allowed_hosts": ("footnote.lan",)})
    assert httpx.get(url2 + "/healthz", headers={"Host": "footnote.lan:8000"}).status_code == 200
    url3, _, _ = serve(**{"server.api_key": "k" * 12})  # with a key, the key is the guard
    assert httpx.get(url3 + "/api/status", headers={"Host": "any.example"}).status_code == 401
    assert httpx.get(url3 + "/api/status", headers={"Host": "any.example", "X-API-Key": "k" * 12}).status_code == 200


def test_slow_headers_are_cut_off(serve: Any) -> None:
    url, _, _ = serve(**{"server.header_timeout_s": 1.0})
    host, port = url[len("http://"):].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finishes its headers
        t0 = time.monotonic()
        assert s.recv(100) == b""  # the server closed the connection
        assert time.monotonic() - t0 < 5
    with socket.create_connection((host, int(port)), timeout=10) as s:  # a complete request is served
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 200")


def test_done_event_counts_removed_sentences(serve: Any) -> None:
    import json

    outline = json.dumps({"theses": [{"text": "The horn starts in fog.", "notes": [1]}]})
    synth = "The keepers start the fog horn when the beacon is lost [1]. The horn was invented by aliens in 1999."
    with ScriptedOpenAIServer({"planner-m": [Reply(outline)], "synthesizer-m": [Reply(synth)]}) as model:
        url, _, _ = serve(**_models(model.base_url, "planner", "synthesizer"))
        text = httpx.post(url + "/api/ask", json={"question": FOG}, timeout=60).text
    frames = [f for f in text.split("\n\n") if f.startswith("event: done")]
    done = json.loads(frames[0].split("data: ", 1)[1])
    assert done["mode"] == "corpus" and done["removed_sentences"] == 1 and "aliens" not in text
    assert done["trace"]["removed_sentences"] == 1


@pytest.mark.parametrize("role", ["planner", "fallback"])
def test_a_dropped_stream_closes_a_blocking_model_request_promptly(serve: Any, role: str) -> None:
    """A planner (or fallback) completion is one blocking request: the model sends nothing until it is
    done. A client that hangs up meanwhile stops the turn, and the model request's connection is closed
    at once (the scripted model records the hang-up), not after the model's 30 s."""
    slow = Reply('{"theses": []}', delay_s=30)
    question = FOG if role == "planner" else OFF
    extra = {"answer.enable_corpus_fallback": True, "answer.fallback_on_bail_out": True} if role == "fallback" else {}
    with ScriptedOpenAIServer({f"{role}-m": [slow]}) as model:
        url, _, app = serve(**_models(model.base_url, role), **extra)
        pump = app_state(app).pump
        with httpx.Client(timeout=30) as client, client.stream("POST", url + "/api/ask", json={"question": question}) as r:
            assert r.status_code == 200
            chunks = r.iter_bytes()
            seen = [next(chunks)]
            deadline = time.monotonic() + 60  # a loaded CI machine: the search before the call takes a while
            while not model.requests and time.monotonic() < deadline:
                time.sleep(0.02)
            if not model.requests:  # say what the turn did instead
                seen += list(chunks)
            assert model.requests, f"the model was never asked: {b''.join(seen)[-3000:]!r}"
            dropped = time.monotonic()
        deadline = time.monotonic() + 5
        while not model.hangups and time.monotonic() < deadline:
            time.sleep(0.02)
        assert model.hangups, "the model request was still open 5 s after the client left"
        assert model.hangups[0][0] == f"{role}-m"
        assert time.monotonic() - dropped < 3.0
        deadline = time.monotonic() + 3
        while pump.active and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pump.active == 0
