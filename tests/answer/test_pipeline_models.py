"""The answer pipeline with models at a scripted OpenAI-compatible server (real HTTP, real SSE), over a
real SQLite store with the test corpus."""

from __future__ import annotations

import json
from typing import Any

import pytest

from footnote.answer.disclaimers import fallback_disclaimer
from footnote.answer.types import CitationEvent, Done, Error, Token, VerdictEvent
from footnote.errors import ModelError
from footnote.testing.openai_server import Reply

from .conftest import CORPUS, FOG_Q, OFF_Q, RU_Q, model_overrides

OUTLINE_1 = json.dumps({"theses": [{"text": "The keeper starts the horn when the beacon is lost.", "notes": [1]}]})
SYNTH_OK = "The keeper starts the fog horn when the Black Skerry beacon can no longer be seen [1]. It gives two blasts every minute [1]."


def test_normal_streamed_answer(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [Reply(SYNTH_OK)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    events = list(eng.ask_stream(FOG_Q))
    kinds = [type(e) for e in events]
    tokens = [e.text for e in events if isinstance(e, Token)]
    assert len(tokens) >= 2  # streamed per sentence
    assert kinds[-1] is Done and VerdictEvent in kinds and CitationEvent in kinds
    last = events[-1]
    assert isinstance(last, Done)
    done = last.answer.to_dict()
    assert done["mode"] == "corpus" and done["corpus_insufficient"] is False
    assert done["answer"] == SYNTH_OK
    assert [c["n"] for c in done["citations"]] == [1]
    assert done["citations"][0]["source_id"] == "corpus/fog.md" and done["citations"][0]["kind"] == "prose_chapter"
    assert done["model_calls"] == 2 and done["dropped_citations"] == 0
    # the synthesizer asked for a stream, the planner for structured output
    synth_req = srv.requests_for("synthesizer-m")[0]
    assert synth_req["stream"] is True
    assert srv.requests_for("planner-m")[0]["response_format"]["type"] == "json_schema"


def test_forged_citation_is_dropped(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(OUTLINE_1)],
                    "synthesizer-m": [Reply("The horn starts when the beacon is lost [1][99]. It is loud [99].")]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    a = eng.ask(FOG_Q)
    assert "[99]" not in a.answer and "99" not in a.answer
    assert a.dropped_citations == 2
    assert [c.n for c in a.citations] == [1]


def test_note_not_in_compacted_context_is_dropped(build_engine: Any, scripted: Any) -> None:
    # the planner cites note 1 only; the synthesizer cites [2], a note of the search but not of the context
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [Reply("Beacon lost: start the horn [1][2].")]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    a = eng.ask(FOG_Q)
    assert a.answer == "Beacon lost: start the horn [1]." and a.dropped_citations == 1


def test_prose_naming_an_unretrieved_document_is_removed(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [Reply(
        "According to The Keeper's Handbook, the horn starts when the beacon is lost [1]. "
        "See handbook.md and HB 2.4 for the rest [1].")]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    a = eng.ask(FOG_Q)
    low = a.answer.lower()
    assert "handbook" not in low and "hb 2.4" not in low
    assert a.removed_mentions == 3
    assert "[1]" in a.answer
    assert a.citations[0].fragment.source_id == "corpus/fog.md"
    assert set(a.trace.removed_mentions) == {"The Keeper's Handbook", "handbook.md", "HB 2.4"}


def test_model_never_sees_ids_titles_or_file_names(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [Reply(SYNTH_OK)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    eng.ask(FOG_Q)
    sent = srv.all_text_sent()
    assert "Black Skerry" in sent  # the passage text is there
    for src in eng.store.list_sources():
        for forbidden in (src.id, src.original_name, src.title, f"{src.id}#0"):
            assert forbidden not in sent, forbidden
    assert '<passage n="1">' in sent


def test_malformed_planner_json_retries_once_then_extractive(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply("Sure, the outline is: theses 1"), Reply("{not json")],
                    "synthesizer-m": [Reply(SYNTH_OK)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    a = eng.ask(FOG_Q)
    assert len(srv.requests_for("planner-m")) == 2
    assert any("malformed JSON" in d for d in a.trace.degraded)
    outline = a.trace.stage("outline")
    assert outline.info["planner"] == "extractive"
    assert a.mode.value == "corpus" and a.citations and a.model_calls == 3


@pytest.mark.parametrize("failure", ["timeout", "5xx"])
def test_synthesizer_failure_falls_back_to_extractive(build_engine: Any, scripted: Any, failure: str) -> None:
    bad = Reply("late", delay_s=0.8) if failure == "timeout" else Reply(status=503)
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [bad, bad]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer", timeout_s=0.25, retries=1))
    a = eng.ask(FOG_Q)
    assert len(srv.requests_for("synthesizer-m")) == 2  # bounded: 1 + 1 retry
    assert a.mode.value == "corpus"
    assert "Black Skerry beacon" in a.answer and "[1]" in a.answer
    assert any(d.startswith("synthesizer:") and "extractive" in d for d in a.trace.degraded)


def test_model_failure_policy_error_ends_the_turn(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(status=500), Reply(status=500)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner"), **{"answer.on_model_failure": "error"})
    with pytest.raises(ModelError, match="HTTP 500"):
        eng.ask(FOG_Q)
    events = list(eng.ask_stream(FOG_Q))
    last = events[-1]
    assert isinstance(last, Error) and isinstance(last.exc, ModelError) and "models.planner" in last.exc.message


def test_bail_out_makes_no_model_call(build_engine: Any, scripted: Any) -> None:
    srv = scripted([])
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer", "fallback"),
                       **{"answer.enable_corpus_fallback": True})
    a = eng.ask(OFF_Q)
    assert a.verdict.value == "bail_out"
    assert a.mode.value == "not_found" and a.corpus_insufficient
    assert a.model_calls == 0 and a.trace.model_calls == 0
    assert srv.requests == []
    assert "nothing" in a.answer and OFF_Q in a.answer  # says what was searched


def test_prompt_injection_changes_nothing_the_reader_sees(build_engine: Any, scripted: Any) -> None:
    q = "How often does the lens of the lamp turn?"
    # extractive: the instruction is never followed
    eng = build_engine()
    a = eng.ask(q)
    assert "[7]" not in a.answer and "electric" not in a.answer and "Ignore" not in a.answer
    assert "ten seconds" in a.answer
    # with a model that obeys the injected text: the forged [7] is dropped, the passage was quoted as data
    outline = json.dumps({"theses": [{"text": "The lens turns every ten seconds.", "notes": [1, 7]}]})
    srv = scripted({"planner-m": [Reply(outline)],
                    "synthesizer-m": [Reply("The lens turns once every ten seconds [1]. The lamp is electric [7].")]})
    eng2 = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    b = eng2.ask(q)
    assert "[7]" not in b.answer and b.dropped_citations == 1
    assert all(c.n == 1 for c in b.citations)
    outline_stage = b.trace.stage("outline")
    assert outline_stage.counts["bad_refs"] == 1  # the planner's [7] was not a note either
    system = srv.requests_for("synthesizer-m")[0]["messages"][0]["content"]
    assert "not instructions" in system


def test_russian_question_gets_a_russian_answer(build_engine: Any, scripted: Any) -> None:
    eng = build_engine()
    a = eng.ask(RU_Q)
    assert a.lang == "ru" and a.mode.value == "corpus"
    assert "туманный горн" in a.answer and a.citations[0].fragment.source_id == "corpus/tuman.ru.md"
    outline = json.dumps({"theses": [{"text": "Горн включают, когда не видно огня.", "notes": [1]}]})
    srv = scripted({"planner-m": [Reply(outline)], "synthesizer-m": [Reply("Горн включают, когда не видно огня [1].")]})
    eng2 = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    b = eng2.ask(RU_Q)
    assert b.answer == "Горн включают, когда не видно огня [1]."
    for req in srv.requests:
        assert "Russian" in req["messages"][0]["content"]


def test_fallback_paints_the_disclaimer_the_model_omitted(build_engine: Any, scripted: Any) -> None:
    fb = json.dumps({"answer": "Fog horns are sounded in poor visibility. Paraffin was a common lamp fuel [3].",
                     "search_queries": ["fog horn visibility", "paraffin lamp fuel", "lighthouse lamp"],
                     "disclaimer": "", "in_scope": True})
    srv = scripted({"planner-m": [Reply(json.dumps({"theses": []}))], "fallback-m": [Reply(fb)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "fallback"))
    a = eng.ask("How do lighthouse keepers fuel the lamp of the tower?", fallback=True)
    assert a.mode.value == "fallback" and a.corpus_insufficient
    assert a.disclaimer == fallback_disclaimer("en")
    assert a.dropped_citations == 1  # the model cited a note it never had
    fb_stage = a.trace.stage("fallback")
    assert fb_stage.counts["probes"] == 3
    assert fb_stage.info["model_disclaimer"] is False
    for c in a.citations:  # cited only where a probe chunk supports the sentence
        assert c.fragment.source_id in {"corpus/fog.md", "corpus/handbook.md", "corpus/lamp.md"}
    assert a.model_calls == 2


def test_fallback_out_of_scope_declines_without_research(build_engine: Any, scripted: Any) -> None:
    fb = json.dumps({"answer": "Stir for 18 minutes.", "search_queries": ["risotto"], "disclaimer": "x",
                     "in_scope": False})
    srv = scripted({"planner-m": [Reply(json.dumps({"theses": []}))], "fallback-m": [Reply(fb)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "fallback"), **{"answer.enable_corpus_fallback": True})
    a = eng.ask("How long do you stir the fog horn risotto?")
    assert a.mode.value == "declined" and "18 minutes" not in a.answer
    fb_stage = a.trace.stage("fallback")
    assert fb_stage.counts["probes"] == 0


def test_fallback_off_per_turn_says_not_found(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(json.dumps({"theses": []}))]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "fallback"), **{"answer.enable_corpus_fallback": True})
    a = eng.ask("How do lighthouse keepers fuel the lamp of the tower?", fallback=False)
    assert a.mode.value == "not_found" and a.corpus_insufficient
    assert srv.requests_for("fallback-m") == []
    assert a.abstention is not None and a.abstention.reason.value == "planner_found_nothing"


def test_corpus_files_untouched() -> None:
    assert "Ignore previous instructions" in CORPUS["lamp.md"]


def test_uncited_model_answer_is_never_shown(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(OUTLINE_1)],
                    "synthesizer-m": [Reply("I believe the horn is started at dusk. Nobody knows for sure.")]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"))
    events = list(eng.ask_stream(FOG_Q))
    shown = "".join(e.text for e in events if isinstance(e, Token))
    assert "dusk" not in shown and "Black Skerry beacon" in shown
    last = events[-1]
    assert isinstance(last, Done)
    done = last.answer.to_dict()
    assert done["mode"] == "corpus" and any("cited no note" in d for d in done["trace"]["degraded"])
