"""A reader in a language nobody calibrated (German, Greek) over the demo with EmbeddingGemma: the question's
language is found, its pair gets the derived thresholds (said in the trace and by `footnote status`), an
answerable question is answered with a citation of the passage that holds it, an off-topic one abstains with
its typed reason. Runs when embeddinggemma is installed; under CI (which installs it) a missing model fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.answer.types import AnswerMode
from footnote.engine import Engine
from footnote.retrieve.types import SearchResult
from footnote.settings import Settings, load_settings
from footnote.store import open_store

from .conftest import copy_store

FOG = ("1887-08-penhallow-to-karpov", "harbour-book", "02-fog-and-tides")


@pytest.fixture(scope="module")
def engine(gemma_settings: Settings, gemma_embedder: object, demo_dir: Path, gemma_demo_store: tuple[Path, str],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    # the session's demo store (tests/answer/conftest.py), without its curated notes: the corpus alone answers
    copy = copy_store(gemma_demo_store[0], tmp_path_factory.mktemp("fresh-lang"))
    s = load_settings(demo_dir / "footnote.toml", **{"store.url": str(copy), "embedder.name": "embeddinggemma",
                                                     "models.dir": str(gemma_settings.models.dir_path)})
    store = open_store(s.store.url, s.store)
    for note in store.list_memory_notes():
        store.delete_memory_note(note.id)
    assert store.list_memory_notes() == [] and store.stats().sources > 0
    eng = Engine(s, store, gemma_embedder)  # type: ignore[arg-type]
    yield eng
    eng.close()


def _gate(result: SearchResult) -> dict[str, Any]:
    return next(st.info for st in result.trace if st.name == "gate")


@pytest.mark.parametrize(("question", "lang"), [
    ("Wann starten die Wärter von Marrowick das Nebelhorn, und wie klingt es?", "de"),
    ("Πότε ξεκινούν οι φύλακες του Marrowick την κόρνα ομίχλης και πώς ακούγεται;", "el"),
])
def test_an_answerable_question_in_a_fresh_language_is_answered_and_cited(engine: Engine, question: str,
                                                                           lang: str) -> None:
    result = engine.search(question)
    assert result.plan.lang == lang
    gate = _gate(result)
    assert gate["thresholds"] == "derived" and str(gate["pair"]).startswith(f"{lang}-"), gate
    answer = engine.ask(question)
    assert answer.mode is AnswerMode.CORPUS, answer.answer
    assert any(c.fragment.source_id.split("/")[-1].startswith(FOG) for c in answer.citations), \
        [c.fragment.source_id for c in answer.citations]


def test_an_off_topic_question_in_a_fresh_language_abstains_with_its_reason(engine: Engine) -> None:
    answer = engine.ask("Wie lange sollte ich ein Pilzrisotto rühren, bevor ich den Parmesan hinzufüge?")
    assert answer.mode is AnswerMode.NOT_FOUND and not answer.citations
    assert answer.abstention is not None and answer.abstention.reason.value in (
        "no_relevant_content", "answer_not_in_passages")


def test_calibrated_pairs_keep_their_own_thresholds(engine: Engine) -> None:
    gate = _gate(engine.search("When do the Marrowick keepers start the fog horn?"))
    assert gate["thresholds"] == "calibrated" and gate["pair"] == "en-en"
    st = engine.status()["gate_pairs"]
    assert st["calibrated"] == ["en-en", "en-ru", "ru-en", "ru-ru"] and st["other_pairs"] == "derived"
