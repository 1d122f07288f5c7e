"""The typed turn: ``Answer.trace`` is a :class:`Trace`, its JSON is the one ``ask --json`` and the HTTP API
send, and an answer (with or without its trace, as a conversation stores it) reads back from that JSON."""

from __future__ import annotations

import json
from typing import Any

from footnote.answer.trace import StageRecord, Trace
from footnote.answer.types import Answer, AnswerMode
from footnote.retrieve.types import Verdict
from footnote.store.conversations import stored_answer

from .conftest import FOG_Q, OFF_Q


def test_a_corpus_answer_and_a_not_found_round_trip_through_their_json(build_engine: Any) -> None:
    eng = build_engine()
    for q in (FOG_Q, OFF_Q):
        a = eng.ask(q)
        assert isinstance(a.trace, Trace)
        d = json.loads(json.dumps(a.to_dict()))  # what a client receives
        back = Answer.from_dict(d)
        assert back.to_dict() == d
        assert back.trace is not None and back.trace.search.verdict is a.trace.search.verdict
        assert [c.fragment.id for c in back.citations] == [c.fragment.id for c in a.citations]
        assert [c.fragment.locator for c in back.citations] == [c.fragment.locator for c in a.citations]
        assert [c.fragment.ordinal for c in back.citations] == [c.fragment.ordinal for c in a.citations]
        assert back.abstention == a.abstention and back.mode is a.mode


def test_a_stored_turn_reads_back_as_an_answer_without_its_trace(build_engine: Any) -> None:
    eng = build_engine()
    a = eng.ask(FOG_Q)
    assert a.mode is AnswerMode.CORPUS and a.citations
    kept = stored_answer(a.to_dict())
    back = Answer.from_dict(kept)
    assert back.trace is None and back.answer == a.answer and back.verdict is a.verdict
    assert {k: v for k, v in back.to_dict().items() if k not in ("trace", "conversation_id", "turn")} == kept


def test_the_trace_is_typed_where_the_pipeline_wrote_it(build_engine: Any) -> None:
    a = build_engine().ask(OFF_Q)
    t = a.trace
    assert t is not None
    assert t.search.verdict is Verdict.BAIL_OUT and t.abstention == a.abstention
    assert a.abstention is not None and a.abstention.to_dict() == {"reason": "no_relevant_content", "stage": "gate"}
    assert all(isinstance(s, StageRecord) for s in t.stages) and t.stage("citations") is not None
    assert t.stage("no such stage") is None
    # the JSON keeps the shape clients read: optional keys only when they say something
    d = t.to_dict()
    assert d["abstention"] == {"reason": "no_relevant_content", "stage": "gate"} and "near_miss_titles" not in d
    assert "insufficient_reason" not in d and "insufficient_stage" not in d  # one vocabulary: the typed abstention
    assert Trace.from_dict(d) == t
    # a turn stored before (with the old strings beside the abstention) still reads, the same
    assert Trace.from_dict({**d, "insufficient_reason": "bail_out", "insufficient_stage": "gate"}) == t


def test_a_turn_reads_each_source_once(build_engine: Any) -> None:
    """The prose check, the citations and a near miss's titles ask for the same sources: the turn reads each
    one from the store once (``TurnState.sources``)."""
    from collections import Counter

    eng = build_engine()
    eng.ask(FOG_Q)  # warm: the corpus-wide names the prose check keeps are read here
    asked: Counter[str] = Counter()
    real = eng.store.get_source

    def counting(source_id: str) -> Any:
        asked[source_id] += 1
        return real(source_id)

    eng.store.get_source = counting
    a = eng.ask(FOG_Q)
    assert a.citations and asked and max(asked.values()) == 1, asked
