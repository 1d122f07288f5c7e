"""Curated memory in the turn: pinned answers (lean policy), background notes the models may not cite,
boosts that never count as evidence — over a real SQLite store with the hash embedder, models at a
scripted OpenAI-compatible server (real HTTP)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from footnote.answer.types import AnswerMode
from footnote.engine import Engine
from footnote.retrieve.types import Verdict
from footnote.testing.openai_server import Reply

from .conftest import FOG_Q, OFF_Q, model_overrides

PINNED = """---
kind: pinned
title: The fog horn rule
triggers: ["When must the keeper start the fog horn?", "fog horn rule", "Когда смотритель включает туманный горн?"]
sources: ["fog.md", "corpus/tuman.ru.md"]
author: Editorial board
---
The keeper starts the fog horn as soon as the Black Skerry beacon can no longer be seen. It gives two blasts
of three seconds each, once every minute.
"""

MEMORY = """---
kind: memory
title: Penhallow framing note
triggers: ["paraffin oil store gallons", "How much paraffin may the oil store hold?"]
author: Editorial board
---
Readers asking about the oil store usually worry about fire; frame the limit as a safety rule. Zanzibar quokka.
"""

BOOST = """---
kind: boost
title: Lamp topic
triggers: ["lamp wicks lens", "How does the lamp burn?"]
sources: ["lamp.md"]
author: Editorial board
---
The lamp, its wicks and its lens.
"""

PARAPHRASES = [
    "When must the keeper start the fog horn?",  # the trigger itself
    "When must the keeper on watch start the fog horn?",
    "fog horn rule: when does the keeper start it?",
]


def write_notes(tmp_path: Path, **notes: str) -> Path:
    d = tmp_path / "notes"
    d.mkdir(exist_ok=True)
    for name, text in notes.items():
        (d / f"{name}.md").write_text(text, encoding="utf-8")
    return d


@pytest.fixture
def with_notes(build_engine: Any, tmp_path: Path) -> Any:
    def build(*, notes: dict[str, str] | None = None, **overrides: Any) -> Engine:
        eng: Engine = build_engine(**overrides)
        d = write_notes(tmp_path, **(notes if notes is not None else {"fog-horn-rule": PINNED, "oil-store": MEMORY}))
        report = eng.import_memory([d])
        assert report.failed == 0, report.to_dict()
        return eng

    return build


@pytest.mark.parametrize("question", PARAPHRASES)
def test_pinned_question_and_paraphrases_get_the_pinned_answer_lean_with_no_model_call(with_notes: Any, question: str) -> None:
    eng = with_notes()
    a = eng.ask(question)
    d = a.to_dict()
    assert a.mode is AnswerMode.CORPUS and not a.corpus_insufficient
    first = d["citations"][0]
    assert first["n"] == 1 and first["kind"] == "pinned"
    assert first["locator"]["note"] == "fog-horn-rule" and first["locator"]["author"] == "Editorial board"
    assert first["locator"]["updated"] > 0 and first["title"] == "The fog horn rule"
    # its named sources are cited beside it (a bare file name resolves to the source id ending in it)
    assert {c["source_id"] for c in d["citations"][1:]} == {"corpus/fog.md", "corpus/tuman.ru.md"}
    assert "Black Skerry beacon can no longer be seen [1]" in a.answer
    assert d["trace"]["policy"] == "lean" and d["trace"]["search"]["rounds"] == 1
    assert a.model_calls == 0
    mem = d["trace"]["memory"]
    assert mem[0]["id"] == "fog-horn-rule" and mem[0]["did"] == "pinned" and mem[0]["score"] >= mem[0]["threshold"]


def test_a_note_in_another_language_yields_to_a_passage_in_the_readers_language(with_notes: Any) -> None:
    """The note serves, it does not override: a Russian question whose best passage is Russian is answered from
    that passage, in Russian; the English note matched but did not pin, and the trace says why."""
    a = with_notes().ask("Когда смотритель включает горн?")
    d = a.to_dict()
    assert a.mode is AnswerMode.CORPUS and d["citations"][0]["kind"] != "pinned"
    assert d["citations"][0]["source_id"] == "corpus/tuman.ru.md" and "горн" in a.answer
    mem = d["trace"]["memory"]
    assert mem[0]["id"] == "fog-horn-rule" and mem[0]["did"] == "not used: a passage in the reader's language ranks first"
    assert d["trace"]["policy"] == "wide"


def test_a_question_naming_another_source_is_answered_from_it(with_notes: Any) -> None:
    """(The test corpus's handbook speaks of paraffin, not the fog horn: the turn answers from it or says it has
    nothing — never the pinned note in its place.)"""
    a = with_notes().ask("According to The Keeper's Handbook, when must the keeper start the fog horn?")
    d = a.to_dict()
    assert all(c["kind"] != "pinned" for c in d["citations"])
    mem = d["trace"]["memory"]
    assert mem[0]["id"] == "fog-horn-rule" and mem[0]["did"].startswith("not used: the question names another source")


def test_a_near_miss_to_the_notes_subject_does_not_pin(with_notes: Any) -> None:
    a = with_notes().ask("When must the keeper trim the wicks of the fog horn lamp?")
    d = a.to_dict()
    assert not d["citations"] or d["citations"][0]["kind"] != "pinned"
    for m in d["trace"]["memory"]:
        if m["id"] == "fog-horn-rule":
            assert m["did"] != "pinned"


def test_the_search_resolves_what_the_pinned_note_names_once_for_the_turn(with_notes: Any) -> None:
    """The search resolved the pinned note's references (a bare file name → the source id ending in it);
    the answer cites what that resolution named, without resolving them again."""
    eng = with_notes()
    r = eng.retriever.search(PARAPHRASES[0])
    assert r.pinned is not None and r.pinned_refs is not None
    assert set(r.pinned_refs.source_ids) == {"corpus/fog.md", "corpus/tuman.ru.md"} and not r.pinned_refs.missing
    a = eng.answer_result(PARAPHRASES[0], r)
    assert {c.fragment.source_id for c in a.citations[1:]} == set(r.pinned_refs.source_ids)
    # what the search resolved is what the answer cites: a resolution naming one source cites one
    one = replace(r, pinned_refs=replace(r.pinned_refs, source_ids=frozenset({"corpus/fog.md"})))
    b = eng.answer_result(PARAPHRASES[0], one)
    assert {c.fragment.source_id for c in b.citations[1:]} == {"corpus/fog.md"}


def test_pinned_answer_makes_no_model_call_even_with_models_configured(with_notes: Any, scripted: Any) -> None:
    srv = scripted({})  # any call would exhaust the empty script
    eng = with_notes(**model_overrides(srv.base_url, "router", "planner", "synthesizer"))
    a = eng.ask(PARAPHRASES[1])
    assert a.citations[0].fragment.kind == "pinned" and a.trace.policy == "lean"
    assert a.model_calls == 0 and srv.requests == [] and srv.unexpected == []


def test_unrelated_question_takes_the_wide_policy_and_no_memory(with_notes: Any) -> None:
    eng = with_notes()
    a = eng.ask(OFF_Q)
    assert a.trace.policy == "wide" and a.trace.memory == ()
    assert all(c.fragment.kind != "pinned" for c in a.citations)
    # an in-corpus question no note is about: answered from the corpus, wide
    b = eng.ask("What is the lens of the lamp like?")
    assert b.trace.policy == "wide" and all(c.to_dict()["kind"] != "pinned" for c in b.citations)


def test_memory_note_cited_by_the_model_is_dropped_and_counted(with_notes: Any, scripted: Any) -> None:
    q = "How much paraffin may the oil store hold?"
    outline = json.dumps({"theses": [{"text": "The oil store holds at most 600 gallons.", "notes": [1]}]})
    # the outline cites one note, so the compacted context has [1] and the background note is shown as [2]
    srv = scripted({"planner-m": [Reply(outline)], "synthesizer-m": [Reply(
        "The oil store holds at most 600 gallons of paraffin [1]. Fire is the worry here [2]. "
        "As the Penhallow framing note says, it is a safety rule [1].")]})
    eng = with_notes(**model_overrides(srv.base_url, "planner", "synthesizer"))
    res = eng.search(q)
    assert any(m.note.id == "oil-store" and m.did == "framed" for m in res.memory)
    a = eng.ask(q)
    synth_prompt = srv.requests_for("synthesizer-m")[0]["messages"][1]["content"]
    assert '<background n="2" citable="no">' in synth_prompt and "Zanzibar quokka" in synth_prompt
    plan_prompt = srv.requests_for("planner-m")[0]["messages"][1]["content"]
    assert 'citable="no"' in plan_prompt
    d = a.to_dict()
    assert all(not c["source_id"].startswith("memory:") for c in d["citations"])
    assert [c["n"] for c in d["citations"]] == [1]
    assert "[2]" not in a.answer and "Penhallow framing note" not in a.answer and "Zanzibar" not in a.answer
    assert d["trace"]["memory_dropped_citations"] == 1 and d["dropped_citations"] >= 1
    assert d["trace"]["memory_removed_mentions"] == 1
    assert {m["id"]: m["did"] for m in d["trace"]["memory"]}["oil-store"] == "framed"


def test_memory_note_never_appears_in_an_extractive_answer(with_notes: Any) -> None:
    eng = with_notes()
    a = eng.ask("How much paraffin may the oil store hold?")
    assert a.mode is AnswerMode.CORPUS and "600 gallons" in a.answer
    assert "Zanzibar" not in a.answer and "safety rule" not in a.answer
    assert all(not c.fragment.source_id.startswith("memory:") for c in a.citations)
    did = {m["id"]: m["did"] for m in a.trace.memory}
    assert did["oil-store"].startswith("not used: extractive")
    assert a.model_calls == 0


def test_boost_moves_its_source_up_within_the_bound_and_is_not_evidence(build_engine: Any, tmp_path: Path) -> None:
    q = "How does the lamp burn?"
    eng: Engine = build_engine(**{"memory.boost_max": 0.07})
    before = eng.search(q)
    assert eng.import_memory([write_notes(tmp_path, **{"lamp-topic": BOOST})]).failed == 0
    after = eng.search(q)
    assert [m.note.id for m in after.memory] == ["lamp-topic"] and after.memory[0].did == "boosted"
    # the gate saw the same evidence: verdict and signal unchanged
    assert after.verdict is before.verdict and after.signal.value == pytest.approx(before.signal.value)
    rank0 = {c.fragment.id: c.rerank for c in before.candidates}
    moved = 0
    for c in after.candidates:
        if c.fragment.id not in rank0 or rank0[c.fragment.id] is None or c.rerank is None:
            continue
        delta = c.rerank - rank0[c.fragment.id]
        assert -1e-9 <= delta <= 0.07 + 1e-9
        if c.fragment.source_id == "corpus/lamp.md":
            assert delta == pytest.approx(0.07)
            moved += 1
        else:
            assert c.fragment.id not in after.boosts or after.boosts[c.fragment.id]
    assert moved >= 1 and all(set(v) == {"lamp-topic"} for v in after.boosts.values())
    assert after.trace[-1].name.startswith("boost") or any(t.name == "boost" for t in after.trace)


def test_a_boost_never_lifts_a_question_over_the_gate(build_engine: Any, tmp_path: Path) -> None:
    """A boost whose trigger is the off-topic question itself, naming a corpus source: it matches, and
    the question still bails out."""
    off = BOOST.replace('["lamp wicks lens", "How does the lamp burn?"]', json.dumps([OFF_Q]))
    eng: Engine = build_engine(**{"memory.boost_max": 5.0})
    assert eng.search(OFF_Q).verdict is Verdict.BAIL_OUT
    assert eng.import_memory([write_notes(tmp_path, **{"football": off})]).failed == 0
    res = eng.search(OFF_Q)
    assert [m.note.id for m in res.memory] == ["football"]
    assert res.verdict is Verdict.BAIL_OUT
    a = eng.ask(OFF_Q)
    assert a.mode is AnswerMode.NOT_FOUND and a.citations == ()


def test_lexical_only_store_matches_by_trigger_terms(build_engine: Any, tmp_path: Path) -> None:
    eng: Engine = build_engine(**{"embedder.name": "none"})
    assert eng.import_memory([write_notes(tmp_path, **{"fog-horn-rule": PINNED})]).to_dict()["embedder"] is None
    a = eng.ask("When must the keeper start the fog horn?")
    assert a.citations[0].fragment.kind == "pinned" and a.trace.policy == "lean"
    b = eng.ask(OFF_Q)
    assert b.trace.policy == "wide"


def test_fog_question_without_notes_is_unchanged(build_engine: Any) -> None:
    a = build_engine().ask(FOG_Q)
    assert a.trace.policy == "wide" and a.trace.memory == () and a.citations[0].fragment.kind != "pinned"


def test_a_pinned_note_whose_sources_were_removed_does_not_answer(with_notes: Any) -> None:
    eng = with_notes()
    assert eng.store.delete_sources(["corpus/fog.md", "corpus/tuman.ru.md"]) == ["corpus/fog.md", "corpus/tuman.ru.md"]
    a = eng.ask(PARAPHRASES[0])
    assert a.trace.policy == "wide" and all(c.fragment.kind != "pinned" for c in a.citations)
    did = {m["id"]: m["did"] for m in a.trace.memory}
    assert did["fog-horn-rule"] == "not used: none of its sources is in the store"


def test_a_better_matching_note_keeps_a_pinned_note_from_answering(with_notes: Any) -> None:
    """The question is the background note's trigger; the pinned note also clears the threshold on shared
    words but scores lower: no pinned answer."""
    pinned_too = PINNED.replace('"fog horn rule",', '"fog horn rule", "paraffin oil store gallons fog",')
    eng = with_notes(notes={"fog-horn-rule": pinned_too, "oil-store": MEMORY})
    res = eng.search("paraffin oil store gallons")
    scores = {m.note.id: m for m in res.memory}
    assert scores["oil-store"].score > scores["fog-horn-rule"].score >= scores["fog-horn-rule"].threshold
    assert res.policy == "wide" and res.pinned is None
    assert scores["fog-horn-rule"].did == "not used: another note matched better"


def test_the_cli_answer_names_the_editors_answer(with_notes: Any, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from footnote.cli import main

    eng = with_notes()
    url = eng.store.url
    eng.close()
    r = CliRunner().invoke(main, ["ask", PARAPHRASES[1], "--store", url, "--embedder", "hash"])
    assert r.exit_code == 0, r.output
    assert "[1] editors' answer “The fog horn rule” (Editorial board, 20" in r.stdout
    assert "lean policy: a pinned note matched" in r.stdout and "model calls: 0" in r.stdout


def test_a_follow_up_to_a_pinned_answer_is_not_answered_by_the_same_note_again(with_notes: Any) -> None:
    """QA: without a model a follow-up carries the previous question's words ("<subject> — <follow-up>"),
    which matched the pinned note again: "And what about at night?" got the fog-horn note verbatim a second
    time. The note that pinned the previous turn does not pin a follow-up to it; the turn searches wide."""
    eng = with_notes()
    first = eng.ask(FOG_Q, remember=True)
    assert first.citations[0].fragment.kind == "pinned" and first.conversation_id
    follow = eng.ask("And what about at night?", conversation_id=first.conversation_id)
    d = follow.to_dict()
    assert d["trace"]["rewritten_question"] != "And what about at night?"  # understood in context
    assert all(c["kind"] != "pinned" for c in d["citations"]), d["citations"]
    assert d["trace"]["policy"] == "wide" and follow.answer != first.answer
    # a question that is not a follow-up still gets the editors' answer, in the same conversation too
    again = eng.ask(PARAPHRASES[1], conversation_id=first.conversation_id)
    assert again.citations[0].fragment.kind == "pinned"
