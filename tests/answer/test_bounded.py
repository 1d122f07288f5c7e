"""Issue 10 §2: every turn ends by its deadline, whatever the models do, and a turn whose client went
away stops within one model read. The models are the scripted OpenAI-compatible server (real HTTP,
real SSE); the store is a real SQLite file."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from footnote.answer.types import Done, Error, Token
from footnote.errors import Cancelled
from footnote.testing.openai_server import Reply

from .conftest import FOG_Q, model_overrides

OUTLINE_1 = json.dumps({"theses": [{"text": "The keeper starts the horn when the beacon is lost.", "notes": [1]}]})
DEADLINE = 3.0
SLACK = 1.5  # loaded CI machines: the turn must end by the deadline plus scheduling noise, not by a read timeout


def _models(srv: Any, *roles: str, timeout_s: float = 20.0, **extra: Any) -> dict[str, Any]:
    out = model_overrides(srv.base_url, *roles, timeout_s=timeout_s, retries=0)
    out["answer.turn_timeout_s"] = DEADLINE
    out.update(extra)
    return out


def _timed(eng: Any, q: str = FOG_Q) -> tuple[Any, float]:
    t0 = time.monotonic()
    a = eng.ask(q)
    return a, time.monotonic() - t0


def test_endless_stream_ends_by_the_deadline_with_the_extractive_answer(build_engine: Any, scripted: Any) -> None:
    endless = Reply(chunks=("la ",) * 100_000, chunk_delay_s=0.005)  # never cites, never stops
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [endless]})
    eng = build_engine(**_models(srv, "planner", "synthesizer", **{"models.synthesizer.max_tokens": 1_000_000}))
    a, took = _timed(eng)
    assert took < DEADLINE + SLACK
    assert a.mode.value == "corpus" and "Black Skerry beacon" in a.answer and "la la" not in a.answer
    assert a.trace.deadline_reached is True and a.trace.turn_timeout_s == DEADLINE
    assert any("deadline" in d and "extractive answer used" in d for d in a.trace.degraded), a.trace.degraded


def test_local_token_cap_cuts_a_stream_the_endpoint_does_not_stop(build_engine: Any, scripted: Any) -> None:
    endless = Reply(chunks=("The keeper starts the horn [1]. ",) + ("La ",) * 100_000)
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [endless]})
    eng = build_engine(**_models(srv, "planner", "synthesizer", **{
        "models.synthesizer.max_tokens": 200, "answer.turn_timeout_s": 60.0}))
    a, took = _timed(eng)
    assert took < 10
    assert a.answer.startswith("The keeper starts the horn [1].") and "La La" not in a.answer
    assert any("max_tokens = 200" in d and "cut short" in d for d in a.trace.degraded), a.trace.degraded
    assert a.trace.deadline_reached is False


def test_drip_stream_under_the_read_timeout_ends_by_the_deadline(build_engine: Any, scripted: Any) -> None:
    # one token every 2 s: each read is well under the 20 s per-read timeout, so only the deadline stops it
    drip = Reply(chunks=("The ", "keeper ", "starts ", "the ", "horn ", "[1]."), chunk_delay_s=2.0)
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [drip]})
    eng = build_engine(**_models(srv, "planner", "synthesizer"))
    a, took = _timed(eng)
    assert took < DEADLINE + SLACK
    assert "Black Skerry beacon" in a.answer and a.trace.deadline_reached is True


def test_three_slow_roles_in_a_row_end_by_the_deadline(build_engine: Any, scripted: Any) -> None:
    # router (round two of the search), planner and synthesizer each take 1.4 s, under their own timeouts
    router_reply = json.dumps({"subquestions": [{"text": FOG_Q, "paraphrases": []}]})
    srv = scripted({
        "router-m": [Reply(router_reply, delay_s=1.4)],
        "planner-m": [Reply(OUTLINE_1, delay_s=1.4)],
        "synthesizer-m": [Reply("The keeper starts the horn [1].", delay_s=1.4)],
    })
    gate = {"gate.by_embedder.hash.default.bail_out": -1.0, "gate.by_embedder.hash.default.sufficient": 5.0,
            "gate.by_embedder.hash.default.good_enough": 5.0}
    eng = build_engine(**_models(srv, "router", "planner", "synthesizer", **gate))
    a, took = _timed(eng)
    assert a.trace.search.rounds == 2 and a.trace.model_calls_by_role["planner"] == 1
    assert took < DEADLINE + SLACK
    assert a.trace.deadline_reached is True
    assert a.mode.value == "corpus" and "Black Skerry beacon" in a.answer  # the extractive answer
    assert any(d.startswith("synthesizer:") and "deadline" in d for d in a.trace.degraded), a.trace.degraded


def test_deadline_overrides_the_error_policy(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(OUTLINE_1, delay_s=10)]})
    eng = build_engine(**_models(srv, "planner", **{"answer.on_model_failure": "error"}))
    a, took = _timed(eng)
    assert took < DEADLINE + SLACK and a.mode.value == "corpus"
    assert any(d.startswith("planner:") and "deadline" in d for d in a.trace.degraded)


@pytest.mark.parametrize("stall", [False, True])
def test_stop_flag_ends_the_turn_within_one_model_read(build_engine: Any, scripted: Any, stall: bool) -> None:
    # a slow model: one token every 0.3 s (or one long stall); the client "hangs up" after the first token
    chunks = ("The keeper starts the horn [1]. ",) + (("X ",) * 400 if not stall else ())
    slow = Reply(chunks=(*chunks, "end [1]."), chunk_delay_s=0.3 if not stall else 30.0)
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [slow]})
    eng = build_engine(**_models(srv, "planner", "synthesizer", **{"answer.turn_timeout_s": 120.0}))
    stop = threading.Event()
    events: list[Any] = []
    t0 = time.monotonic()
    for ev in eng.ask_stream(FOG_Q, stop=stop):
        events.append(ev)
        if isinstance(ev, Token) and not stop.is_set():
            threading.Timer(0.2, stop.set).start()  # set from another thread, as the server's pump does
    took = time.monotonic() - t0
    assert took < 0.2 + 0.3 + SLACK  # one read (0.3 s apart), not the stream's 120 s nor the 30 s stall
    assert isinstance(events[-1], Error) and isinstance(events[-1].exc, Cancelled)
    assert not any(isinstance(e, Done) for e in events)


def test_a_router_slower_than_the_deadline_is_cut_by_it(build_engine: Any, scripted: Any) -> None:
    router_reply = json.dumps({"subquestions": [{"text": FOG_Q, "paraphrases": []}]})
    srv = scripted({"router-m": [Reply(router_reply, delay_s=8)], "synthesizer-m": [Reply("x [1].", delay_s=8)]})
    gate = {"gate.by_embedder.hash.default.bail_out": -1.0, "gate.by_embedder.hash.default.sufficient": 5.0,
            "gate.by_embedder.hash.default.good_enough": 5.0}
    eng = build_engine(**_models(srv, "router", "synthesizer", **gate))
    a, took = _timed(eng)
    assert took < DEADLINE + SLACK  # the router's own timeout is 20 s: the turn's deadline cut it
    assert a.trace.deadline_reached is True and "Black Skerry beacon" in a.answer
    assert a.trace.search.rounds == 2
