"""Near misses on the demo as `make run` serves it (EmbeddingGemma, extractive): the topic is in the corpus,
the fact is not — declined as ``answer_not_in_passages`` in English, Russian and German, naming where the
closest passages come from; the questions the corpus does answer, in the same languages, are still answered.
(CI installs the model with `make models`; elsewhere these skip when it is missing.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.answer.types import AbstentionReason, AnswerMode
from footnote.engine import Engine
from footnote.settings import Settings, load_settings
from footnote.store import open_store

from .conftest import copy_store


@pytest.fixture(scope="module")
def engine(gemma_settings: Settings, gemma_embedder: object, demo_dir: Path, gemma_demo_store: tuple[Path, str],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    db, _ = gemma_demo_store
    copy = copy_store(db, tmp_path_factory.mktemp("near-miss-gemma"))
    s = load_settings(demo_dir / "footnote.toml", **{"store.url": str(copy),
                                                     "models.dir": str(gemma_settings.models.dir_path)})
    eng = Engine(s, open_store(s.store.url, s.store), gemma_embedder)  # type: ignore[arg-type]
    yield eng
    eng.close()


@pytest.mark.parametrize(("question", "start"), [
    ("What is the diameter of the Marrowick lens?", "The closest passages in the corpus come from"),
    ("Кто построил маяк Марровик?", "Ближе всего к вопросу отрывки из"),
    ("Wie hoch war das Jahresgehalt von Ada Penhallow?", "Am nächsten kommen der Frage Abschnitte aus"),
])
def test_a_near_miss_is_declined_in_three_languages(engine: Engine, question: str, start: str) -> None:
    a = engine.ask(question)
    assert a.mode is AnswerMode.NOT_FOUND, a.answer
    assert a.abstention is not None and a.abstention.reason is AbstentionReason.ANSWER_NOT_IN_PASSAGES
    assert a.answer.startswith(start)
    assert a.trace is not None and a.trace.near_miss_titles


@pytest.mark.parametrize(("question", "gold"), [
    ("How many gallons of paraffin may the oil store hold?", "600"),
    ("Каким узлом крепят трос часового груза?", "марровикск"),
    ("Was bedeutet die rote Lampe auf der Galerie?", "bar"),
])
def test_what_the_corpus_answers_is_still_answered(engine: Engine, question: str, gold: str) -> None:
    a = engine.ask(question)
    assert a.mode is AnswerMode.CORPUS and gold in a.answer.lower(), a.answer


def test_the_collections_subject_in_another_script_need_not_be_written(engine: Engine) -> None:
    """"Марровик" is the demo's subject, written "Marrowick" in its English passages: a Russian reader's question
    naming it is answered as the English one is (it was declined: no English sentence writes the Cyrillic name)."""
    a = engine.ask("Какой высоты башня маяка Марровик?")
    assert a.mode is AnswerMode.CORPUS and "31 metres" in a.answer, a.answer


def test_a_letters_author_inflected_in_its_heading_need_not_be_in_the_sentence(engine: Engine) -> None:
    """«Карпов» is the author of the ice letter: its heading writes «Ильи Карпова» (a stemmer reads «Карпов» and
    «Карпова» as two words), its sentences never. The question was declined as a near miss; the name inflected in
    the heading carries it. Not a name a letter of one edit (the helper's «Карлов»), nor the addressee its title
    names («Илья Карпов — Аде Пенхеллоу»: the title is not read for this)."""
    a = engine.ask("Что Карпов писал про лёд на стёклах фонаря?")
    assert a.mode is AnswerMode.CORPUS and "тёплой солёной водой" in a.answer, a.answer
    assert all("karpov-ice" in c.fragment.source_id for c in a.citations)
    for near in ("Что Карлов писал про лёд на стёклах фонаря?", "Что Пенхеллоу писала про лёд на стёклах фонаря?"):
        assert engine.ask(near).mode is AnswerMode.NOT_FOUND, near


def test_an_english_question_whose_answer_only_a_russian_letter_holds(engine: Engine) -> None:
    """``gate.other_languages`` (on in the demo's settings): an English handbook page led the slate and the English
    pair's thresholds found nothing close; the Russian letter, judged by the English–Russian pair's, answers."""
    q = "Why won't Karpov use a knife to get ice off the lantern panes?"
    a = engine.ask(q)
    assert a.mode is AnswerMode.CORPUS and "нож оставляет царапины" in a.answer, a.answer
    gate = [st for st in a.trace.search.stages if st["name"] == "gate"][-1]  # type: ignore[union-attr]
    assert gate["info"]["other_languages"]["carried_by"] == "ru"
    off = Engine(engine.settings.with_overrides(**{"gate.other_languages": False}), engine.store, engine.embedder)
    assert off.ask(q).mode is AnswerMode.NOT_FOUND


@pytest.mark.parametrize("question", [
    "How tall is the Storozhevoy lighthouse?",  # only the Russian letters, brought by the name, write «Сторожевом»
    "Какой высоты башня маяка Морвик?",  # a consonant skeleton would take it for Marrowick (mrvk)
    "Какого цвета маяк Мервик?",
])
def test_another_lighthouse_is_not_the_collections_subject(engine: Engine, question: str) -> None:
    """The attack on the first version: a name the notes of one script write, or one spelled nearly like the
    subject, was taken for the subject, and "How tall is the Storozhevoy lighthouse?" got the Marrowick Light's
    31 metres."""
    a = engine.ask(question)
    assert a.mode is AnswerMode.NOT_FOUND, a.answer


def test_an_answer_is_not_padded_with_the_subjects_other_sentences(engine: Engine) -> None:
    """The stranger's "How tall is the Marrowick Light?" quoted where it stands and "This is the first rule every
    keeper … learns" beside the height: sentences that name only the collection's subject are left out."""
    a = engine.ask("How tall is the Marrowick Light?")
    assert a.mode is AnswerMode.CORPUS and "31 metres tall" in a.answer, a.answer
    assert "first rule" not in a.answer and "Gannet Head" not in a.answer, a.answer


def test_a_sentence_without_the_kind_asked_does_not_pad_the_answer(engine: Engine) -> None:
    """The stranger's «Какой высоты башня маяка Марровик?» opened with the knots lecture («Сегодня мы поговорим об
    узлах, которыми пользуются смотрители маяка Марровик», sharing «маяка») before "31 metres": the question asks
    for a length, and a sentence in its language that holds none only pads the answer
    (``answerable.trim_padding_by_kind``); with the switch off it is back."""
    q = "Какой высоты башня маяка Марровик?"
    a = engine.ask(q)
    assert a.mode is AnswerMode.CORPUS and a.answer.startswith("The tower was built in 1839; it is 31 metres"), a.answer
    assert "узл" not in a.answer
    off = Engine(engine.settings.with_overrides(**{"answer.extractive.answerable.trim_padding_by_kind": False}),
                 engine.store, engine.embedder)
    assert "узл" in off.ask(q).answer


@pytest.mark.parametrize(("question", "floor"), [
    # "Two nautical miles off Gannet Head stands the Black Skerry beacon, a black iron pole on a bare rock."
    ("How tall is the iron pole of the Black Skerry beacon?", "kind_window_min"),
    # "At Marrowick the range of a spring tide is 5.2 metres…": a Russian question, English sentences
    ("Сколько масла в час сжигает машина туманного горна в Марровике?", "kind_window_min_other_language"),
])
def test_a_number_about_something_else_is_no_answer(engine: Engine, question: str, floor: str) -> None:
    """Held-out near misses (``scripts/demo/held_out.jsonl``): a chosen sentence holds a number and, in it or its
    passage, the question's words, but the number is not the number *of* what is asked — the few words around it
    are unlike the question (``answerable.kind_window_min``; for a sentence in another language
    ``kind_window_min_other_language``; the trace's ``near`` and ``bound``). Without the rule they were answered."""
    a = engine.ask(question)
    assert a.mode is AnswerMode.NOT_FOUND, a.answer
    assert a.abstention is not None and a.abstention.reason is AbstentionReason.ANSWER_NOT_IN_PASSAGES
    judged = a.trace.answerable() if a.trace is not None else None
    limit = getattr(engine.settings.answer.extractive.answerable, floor)["embeddinggemma"]
    assert judged is not None and judged["near"] < limit and judged["bound"] is False, judged
    off = Engine(engine.settings.with_overrides(**{"answer.extractive.answerable.kind_window_min": {},
                                                   "answer.extractive.answerable.kind_window_min_other_language": {}}),
                 engine.store, engine.embedder)
    assert off.ask(question).mode is AnswerMode.CORPUS


def test_a_number_among_the_question_s_words_still_answers(engine: Engine) -> None:
    a = engine.ask("Wie viele Kurbelumdrehungen braucht man, um das Gewicht wieder hochzuziehen?")
    assert a.mode is AnswerMode.CORPUS and "one hundred and twenty turns" in a.answer, a.answer
    judged = a.trace.answerable() if a.trace is not None else None
    floor = engine.settings.answer.extractive.answerable.kind_window_min_other_language["embeddinggemma"]
    assert judged is not None and judged["near"] >= floor, judged


@pytest.mark.parametrize(("question", "gold"), [
    ("Какого цвета вспышка маяка Марровик?", "white flash"),
    ("Сколько стёкол выбил шторм в Марровике?", "two panes"),
])
def test_an_answer_in_another_language_is_held_to_its_own_floor(engine: Engine, question: str, gold: str) -> None:
    """The attack on the first version: one floor for every sentence declined these (the stretches' cosines 0.29,
    0.27 — cross-lingual cosines run lower); a sentence in another language is held to
    ``kind_window_min_other_language``."""
    a = engine.ask(question)
    assert a.mode is AnswerMode.CORPUS and gold in a.answer, a.answer


@pytest.mark.parametrize("question", [
    # "At Marrowick the range of a spring tide is 5.2 metres…", "…within two hours of high water" had answered them
    "How many steps does a keeper climb to reach the lantern room at Marrowick?",
    "Wie viele Fischerboote hatte der Hafen von Marrowick?",
])
def test_a_measure_is_no_count_of_the_things_asked(engine: Engine, question: str) -> None:
    """Held-out near misses (``scripts/demo/held_out.jsonl``) that count a named thing: a length, a time or a year in
    the sentence is no number of steps or boats, so no chosen sentence carries the kind asked."""
    a = engine.ask(question)
    assert a.mode is AnswerMode.NOT_FOUND, a.answer
    assert a.abstention is not None and a.abstention.reason is AbstentionReason.ANSWER_NOT_IN_PASSAGES
    judged = a.trace.answerable() if a.trace is not None else None
    assert judged is not None and judged["carries"] is False, judged


def test_a_count_of_the_things_asked_still_answers(engine: Engine) -> None:
    a = engine.ask("How many keepers lived at the Marrowick Light?")
    assert a.mode is AnswerMode.CORPUS and "Three keepers" in a.answer, a.answer
