"""Answer-level scoring (CRAG-style) and its runner hook."""

from __future__ import annotations

from typing import Any

from footnote.answer.trace import NoteRef, SearchTrace, Trace
from footnote.answer.types import Answer, AnswerMode, Citation
from footnote.eval.answers import answer_report, make_scorer, normalise, score_answer, summary_lines
from footnote.eval.questions import Question
from footnote.eval.runner import run_questions
from footnote.records.fragments import FileLocator, Fragment
from footnote.retrieve.types import Verdict

from .conftest import FOG_Q, OFF_Q

FRAG = Fragment("doc#0", "doc", 0, "prose_chapter", "en", "The Panthers defense gave up just 308 points.",
                FileLocator("doc.md"), "h")


def _answer(text: str, mode: AnswerMode = AnswerMode.CORPUS, cite: bool = True, in_turn: bool = True) -> Answer:
    cits = (Citation(1, FRAG, "Doc"),) if cite else ()
    notes = (NoteRef(1, FRAG.id if in_turn else "other#0", 0.9),)
    search = SearchTrace(Verdict.SUFFICIENT, 1, False, 0, {}, {}, 1)
    return Answer(text, cits, Verdict.SUFFICIENT, mode is not AnswerMode.CORPUS, mode,
                  trace=Trace("en", search, notes=notes))


def test_normalise() -> None:
    assert normalise("The  Rhine, Élan!") == "rhine elan"
    assert normalise("Ёлка") == "елка"


def test_gold_only_in_a_cited_note_is_not_correct_by_string_but_is_by_source() -> None:
    s = score_answer(_answer("They conceded few points [1]."), ["308"], ["doc"])
    assert not s.correct and s.points == -1 and s.matched == "note:308" and s.in_notes
    assert s.cites_gold and s.points_by_source == 1


def test_gold_missing_is_wrong() -> None:
    s = score_answer(_answer("They conceded few points [1]."), ["412"])
    assert s.points == -1 and not s.correct


def test_abstention_scores_zero() -> None:
    s = score_answer(_answer("Not in the corpus.", AnswerMode.NOT_FOUND, cite=False), ["308"])
    assert s.points == 0 and s.abstained


def test_invalid_citation_is_never_correct() -> None:
    s = score_answer(_answer("308 points [1].", in_turn=False), ["308"])
    assert not s.citations_valid and s.points == -1
    s2 = score_answer(_answer("308 points.", cite=True), ["308"])  # cited note not shown in the text
    assert not s2.citations_valid and s2.points == -1


def test_substring_inside_a_word_does_not_count() -> None:
    s = score_answer(_answer("In 13080 years [1].", cite=False), ["308"])
    assert s.points == -1


def test_runner_hook_scores_real_turns(build_engine: Any) -> None:
    eng = build_engine()
    qs = [Question("q1", FOG_Q, "en", True, "in_corpus", ("fog.md",), ("Black Skerry beacon",)),
          Question("q2", OFF_Q, "en", False, "off_topic")]
    outcomes = run_questions(lambda q: eng.search(q), qs, progress=False, on_result=make_scorer(eng))
    assert [o.extra["answer"]["points"] for o in outcomes] == [1, 0]
    rep = answer_report(outcomes)
    assert rep["overall"]["n"] == 2 and rep["overall"]["crag"] == 0.5
    assert rep["by_category_lang"]["off_topic/en"]["abstain_rate"] == 1.0
    assert any(line.startswith("in_corpus/en") for line in summary_lines(rep))
    # every abstention is counted by its reason, per category and language
    assert [o.extra["answer"]["abstention"] for o in outcomes] == [None, "no_relevant_content"]
    assert rep["abstentions"] == {"overall": {"no_relevant_content": 1},
                                  "by_category_lang": {"in_corpus/en": {}, "off_topic/en": {"no_relevant_content": 1}}}
    lines = summary_lines(rep)
    assert any(line.startswith("off_topic/en") and line.endswith("no_relevant_content 1") for line in lines)
    assert any(line.startswith("in_corpus/en") and line.endswith("–") for line in lines)


def test_answering_an_unanswerable_question_is_wrong_even_with_a_plausible_string() -> None:
    s = score_answer(_answer("They gave up 308 points [1]."), ["308"], ["doc"], answerable=False)
    assert s.points == -1 and not s.correct and s.points_by_source == -1


def test_the_report_gives_the_answer_level_signals_auroc(build_engine: Any) -> None:
    """`footnote eval --answers` reports the answer-level check's AUROC beside the gate's: here an answered
    question scores above a near miss (the oil store is there, its colour is not)."""
    eng = build_engine(**{"answer.extractive.answerable.ablation_drop": {"hash": 0.0}})
    qs = [Question("q1", "How many gallons of paraffin may the oil store hold?", "en", True, "in_corpus",
                   ("handbook.md",), ("600",)),
          Question("q2", "What colour is the door of the oil store of paraffin?", "en", False, "near_miss")]
    outcomes = run_questions(lambda q: eng.search(q), qs, progress=False, on_result=make_scorer(eng))
    scores = [o.extra["answer"]["answer_level"] for o in outcomes]
    assert scores[0] is not None and scores[1] is not None and scores[0] > scores[1], scores
    rep = answer_report(outcomes)
    assert rep["answer_level_auroc"]["en"] == {"n": 2, "auroc": 1.0, "by_negative": {"near_miss": 1.0}}
    assert any(line.startswith("en     n 2 auroc 1.000") for line in summary_lines(rep))


def test_the_report_gives_the_answer_check_models_auroc(build_engine: Any) -> None:
    """With models.answer_check configured, each judged turn records the model's probability of "yes" and the
    report gives its AUROC beside the rules' (here the model, at the scripted server, says "no" to the second)."""
    import math

    from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

    def said(p: float) -> Reply:
        return Reply("yes", top_logprobs=(("yes", math.log(p)), ("no", math.log(1 - p))))

    with ScriptedOpenAIServer([said(0.8), said(0.2)]) as srv:
        eng = build_engine(**{"models.answer_check.base_url": srv.base_url, "models.answer_check.model": "m",
                              "models.answer_check.retries": 0})
        qs = [Question("q1", FOG_Q, "en", True, "in_corpus", ("fog.md",), ("Black Skerry beacon",)),
              Question("q2", "When does the keeper on watch start the fog horn?", "en", False, "near_miss")]
        outcomes = run_questions(lambda q: eng.search(q), qs, progress=False, on_result=make_scorer(eng))
    assert [o.extra["answer"]["answer_model"] for o in outcomes] == [0.8, 0.2]
    assert [o.extra["answer"]["mode"] for o in outcomes] == ["corpus", "not_found"]  # 0.2 < 0.5: declined
    rep = answer_report(outcomes)
    assert rep["answer_model_auroc"]["en"] == {"n": 2, "auroc": 1.0, "by_negative": {"near_miss": 1.0}}
    assert any(line.startswith("answer-check model: AUROC") for line in summary_lines(rep))
