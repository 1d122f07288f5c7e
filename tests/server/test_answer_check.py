"""Issue 43 §1, the model step of the answer-level check, over real HTTP (httpx → uvicorn on loopback, the demo in a
real SQLite store, ``models.answer_check`` at the scripted OpenAI-compatible server): once the rules pass a near
miss, the model's probability of "yes" below ``model_min_yes`` declines it as ``answer_not_in_passages``, on the
JSON answer and the SSE stream alike, before a model writes and in the extractive answer; its "yes" keeps the
answer; a model that fails leaves the rules' verdict and the trace says why; the rules' own "no" never asks it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from serverkit import ask_twice, build_store

from footnote.answer.model_check import QUESTION, SYSTEM
from footnote.engine import Engine
from footnote.settings import Settings
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.integration

#: the topic is in the demo, the fact is not: the rules (hash embedder) answer it with where the light stands
BUILT = "Who built the Marrowick Light?"
FOG = "When do the Marrowick keepers start the fog horn?"


def _yes(p: float) -> Reply:
    return Reply("yes" if p >= 0.5 else "no", top_logprobs=(("yes", math.log(p)), ("no", math.log(1 - p))))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Settings:
    return build_store(tmp_path_factory.mktemp("answer-check"), demo_dir)


def _ask(settings: Settings, question: str, replies: list[Reply], **overrides: Any) -> tuple[dict[str, Any], ScriptedOpenAIServer]:
    """The JSON answer and the streamed one (under ``"events"``) of a live server whose answer-check model replies
    ``replies`` in turn."""
    with ScriptedOpenAIServer({"check-m": replies}) as model:
        data = ask_twice(settings.with_overrides(**{
            "models.answer_check.base_url": model.base_url, "models.answer_check.model": "check-m",
            "models.answer_check.retries": 0, "models.answer_check.timeout_s": 10.0, **overrides}), question)
    return data, model


def _done(data: dict[str, Any]) -> dict[str, Any]:
    return next(e for name, e in data["events"] if name == "done")


def _judged(data: dict[str, Any]) -> dict[str, Any]:
    outline = next(s for s in data["trace"]["stages"] if s["name"] == "outline")
    judged: dict[str, Any] = outline["info"]["answerable"]
    return judged


def test_without_the_model_the_rules_answer_the_near_miss(store: Settings) -> None:
    """The case the model step is for: the rules alone show where the light stands as who built it."""
    with Engine.from_settings(store) as engine:
        assert engine.ask(BUILT).mode.value == "corpus"


def test_the_models_no_declines_a_near_miss_the_rules_passed(store: Settings) -> None:
    data, model = _ask(store, BUILT, [_yes(0.1), _yes(0.1)])
    for shown in (data, _done(data)):
        assert shown["mode"] == "not_found", shown["answer"]
        assert shown["abstention"] == {"reason": "answer_not_in_passages", "stage": "answer"}
        assert "none of them answers this question" in shown["answer"] and "Gannet Head" not in shown["answer"]
    judged = _judged(data)
    assert judged["answers"] is False
    assert judged["model"] == {"model": judged["model"]["model"], "p_yes": 0.1, "min_yes": 0.5, "declines": True}
    assert data["model_calls"] == 1
    # the CLI's lines under the answer say what the model decided
    from footnote.answer.types import Answer
    from footnote.commands.ask import render_done

    lines = render_done(Answer.from_dict(data))
    assert any(x.startswith("answer check: check-m@") and x.endswith("gave 'yes' 0.10 (floor 0.50): declined: no "
                                                                     "answer in the chosen sentences") for x in lines), lines
    # the model was shown the question and the chosen sentences as quoted data, never their [n] marks
    sent = model.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": SYSTEM}
    assert sent[1]["content"].startswith(f"Question: {BUILT}\n\nText:\n\"\"\"\n") and sent[1]["content"].endswith(QUESTION)
    assert "Gannet Head" in sent[1]["content"] and "[1]" not in sent[1]["content"]


def test_the_models_yes_keeps_the_answer_and_its_floor_is_per_model(store: Settings) -> None:
    data, _ = _ask(store, FOG, [_yes(0.4), _yes(0.4)],
                   **{"answer.extractive.answerable.model_min_yes": {"check-m": 0.3}})
    assert data["mode"] == "corpus" and _done(data)["mode"] == "corpus"
    assert "Black Skerry" in data["answer"]
    assert _judged(data)["model"]["p_yes"] == 0.4 and _judged(data)["model"]["min_yes"] == 0.3


def test_the_floor_may_be_set_per_language_of_the_question(store: Settings) -> None:
    """``model_min_yes_by_language``: a small model's "yes" runs lower for some readers' languages; the floor for the
    question's language is taken where one is set, the model's own elsewhere."""
    floors = {"answer.extractive.answerable.model_min_yes": {"check-m": 0.3}}
    own, _ = _ask(store, FOG, [_yes(0.25), _yes(0.25)], **floors,
                  **{"answer.extractive.answerable.model_min_yes_by_language": {"check-m": {"de": 0.2}}})
    assert own["mode"] == "not_found" and _judged(own)["model"]["min_yes"] == 0.3
    english, _ = _ask(store, FOG, [_yes(0.25), _yes(0.25)], **floors,
                      **{"answer.extractive.answerable.model_min_yes_by_language": {"check-m": {"en": 0.2}}})
    assert english["mode"] == "corpus" and "Black Skerry" in english["answer"]
    assert _judged(english)["model"] == {"model": _judged(english)["model"]["model"], "p_yes": 0.25, "min_yes": 0.2,
                                         "declines": False}


def test_a_failing_model_leaves_the_rules_verdict(store: Settings) -> None:
    data, _ = _ask(store, FOG, [Reply(status=503), Reply(status=503)])
    assert data["mode"] == "corpus" and "Black Skerry" in data["answer"]
    model = _judged(data)["model"]
    assert model["p_yes"] is None and model["declines"] is False and "HTTP 503" in model["error"]
    # a degradation the answer lists, as a failed writer is
    assert any(d.startswith("answer check (") and "HTTP 503" in d and "the rules' verdict stands" in d
               for d in data["trace"]["degraded"]), data["trace"]["degraded"]


def test_a_model_that_replies_neither_word_decides_nothing(store: Settings) -> None:
    data, _ = _ask(store, BUILT, [Reply("Gannet"), Reply("Gannet")])
    assert data["mode"] == "corpus"
    assert _judged(data)["model"]["error"] == "the reply was neither yes nor no"


def test_the_rules_no_never_asks_the_model(store: Settings) -> None:
    data, model = _ask(store, "How many gallons of paraffin does the lamp burn in one night?", [])
    assert data["mode"] == "not_found" and not model.requests and data["model_calls"] == 0


def test_the_chats_examples_are_checked_by_the_rules_with_only_the_answer_check_configured(store: Settings) -> None:
    """A helper's attack: with models.answer_check alone, the example questions went unchecked (the chat then
    suggested questions the engine declined); they are checked by the rules, without asking the model."""
    with ScriptedOpenAIServer({"check-m": [_yes(0.01)] * 50}) as model:
        live = store.with_overrides(**{"models.answer_check.base_url": model.base_url,
                                       "models.answer_check.model": "check-m", "models.answer_check.retries": 0})
        with Engine.from_settings(live) as engine, Engine.from_settings(store) as plain:
            assert engine.example_questions() == plain.example_questions()
        assert not model.requests
