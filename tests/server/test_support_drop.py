"""Issue 39 §1 over real HTTP (httpx → uvicorn on loopback, the demo in a real SQLite store, the models at the
scripted OpenAI-compatible server): a model-written sentence is shown only when the passages it cites support it —
the support check's score at the embedder's thresholds, and every number, date and proper name of it carried by a
cited passage, in any script. An unsupported sentence is removed like an uncited one (``removed_sentences``, the
reason ``unsupported`` in the trace), on the JSON answer and the SSE stream alike; with nothing left the turn is
the extractive answer is shown instead (or, ``support.none_supported = "not_found"``, the turn is
``weakly_grounded``); ``support.on_unsupported = "flag"`` shows it and lists it instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from serverkit import ask_twice, build_store

from footnote.settings import Settings
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FOG = "When do the Marrowick keepers start the fog horn, and how does it sound?"
OUTLINE = json.dumps({"theses": [{"text": "The horn.", "notes": [1, 2, 3, 4]}, {"text": "More.", "notes": [5, 6, 7, 8]}]})
ALL = "[1][2][3][4][5][6][7][8]"
LEAD = f"The keeper on watch starts the fog horn when the Black Skerry beacon can no longer be seen {ALL}."
ATLANTIS = f"The lens was smuggled from Atlantis by pirates in 1492 {ALL}."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Settings:
    return build_store(tmp_path_factory.mktemp("support-drop"), demo_dir)


def _ask(settings: Settings, synth: str | tuple[str, ...], question: str = FOG, **overrides: Any) -> dict[str, Any]:
    """The non-streamed answer of a live server whose synthesizer writes ``synth`` (chunks when a tuple), with the
    streamed one's events under ``"events"`` and its token text under ``"streamed"``."""
    reply = Reply(chunks=synth) if isinstance(synth, tuple) else Reply(synth)
    with ScriptedOpenAIServer({"planner-m": [Reply(OUTLINE)] * 2, "synthesizer-m": [reply] * 2}) as model:
        models: dict[str, Any] = {}
        for role in ("planner", "synthesizer"):
            models |= {f"models.{role}.base_url": model.base_url, f"models.{role}.model": f"{role}-m",
                       f"models.{role}.retries": 0, f"models.{role}.timeout_s": 30.0}
        return ask_twice(settings.with_overrides(**models, **overrides), question)


def _done(data: dict[str, Any]) -> dict[str, Any]:
    return next(e for name, e in data["events"] if name == "done")


def test_an_unsupported_sentence_is_removed_before_the_reader_sees_it(store: Settings) -> None:
    data = _ask(store, f"{LEAD} {ATLANTIS} The horn gives two blasts every minute {ALL}.")
    assert data["mode"] == "corpus", data["answer"]
    for shown in (data["answer"], data["streamed"], _done(data)["answer"]):
        assert "Atlantis" not in shown and "1492" not in shown and "pirates" not in shown, shown
        assert "Black Skerry beacon" in shown and "two blasts every minute" in shown  # the supported ones stay
    assert data["removed_sentences"] == 1
    trace = data["trace"]
    assert trace["removed_by_reason"] == {"unsupported": 1}
    [bad] = trace["unsupported_sentences"]
    assert bad["action"] == "removed" and {"number", "name"} <= set(bad["why"]) and bad["cites"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert "sentence" not in bad  # the trace never repeats what the reader was not shown
    assert "Atlantis" not in json.dumps(data)
    # what is shown is what citation support calls supported
    assert trace["support"]["supported_share"] == 1.0 and trace["support"]["unsupported"] == []
    assert trace["stages"][-2]["counts"]["removed_unsupported"] == 1 or any(
        s["name"] == "synthesize" and s["counts"]["removed_unsupported"] == 1 for s in trace["stages"])


@pytest.mark.parametrize(("claim", "why"), [
    ("The keeper starts the fog horn in the year 1774 {all}.", "number"),  # a date no passage carries
    ("The keeper starts the fog horn every 14 February {all}.", "date"),  # a month no passage names
    ("The keeper starts the fog horn on the orders of Admiral Quenby {all}.", "name"),
    ("Смотритель Квенби включает туманный горн {all}.", "name"),  # a name in Cyrillic, in no script of the passages
])
def test_a_number_date_or_name_no_cited_passage_carries_is_unsupported(store: Settings, claim: str, why: str) -> None:
    data = _ask(store, f"{LEAD} {claim.format(all=ALL)}")
    bad = claim.split()[-2]
    for shown in (data["answer"], data["streamed"]):
        assert "Quenby" not in shown and "Квенби" not in shown and "1774" not in shown and "February" not in shown, shown
    assert data["trace"]["removed_by_reason"].get("unsupported") == 1, (bad, data["trace"]["unsupported_sentences"])
    assert why in data["trace"]["unsupported_sentences"][0]["why"]


@pytest.mark.parametrize("echo", [
    f"When do the Marrowick keepers start the fog horn {ALL}?",
    f"Когда смотрители Марровика включают туманный горн? {ALL}",
])
def test_a_question_the_model_writes_is_no_claim_and_is_removed(store: Settings, echo: str) -> None:
    """A small local model echoed the reader's question with a citation in 4 of 34 answers (bench/local_model.py):
    it states nothing a passage supports, however like the passage it reads."""
    data = _ask(store, f"{echo} {LEAD}")
    assert data["mode"] == "corpus", data["answer"]
    for shown in (data["answer"], data["streamed"]):
        assert "?" not in shown and "Black Skerry beacon" in shown, shown
    [bad] = data["trace"]["unsupported_sentences"]
    assert "question" in bad["why"]


@pytest.mark.parametrize("garbled", [
    f"The keeper on watch starts the fog hоrn when the Black Skerry beacon can no longer be seen {ALL}.",  # Cyrillic о
    f"Смотритель включает Fogгорн, когда маяк Black Skerry не виден {ALL}.",
])
def test_a_word_mixing_latin_and_cyrillic_letters_is_garbled_and_removed(store: Settings, garbled: str) -> None:
    """A small local model wrote "Граф Мелфи был … proclaimed д Dukeом Апulia" (bench/local_model.py): a word of two
    scripts is no word of any language, and a homoglyph in an otherwise faithful sentence is a disguise."""
    data = _ask(store, f"{garbled} The horn gives two blasts every minute {ALL}.")
    assert data["mode"] == "corpus", data["answer"]
    for shown in (data["answer"], data["streamed"]):
        assert "hоrn" not in shown and "Fogгорн" not in shown and "two blasts every minute" in shown, shown
    [bad] = data["trace"]["unsupported_sentences"]
    assert "garbled" in bad["why"]


def test_mixed_script_words() -> None:
    from footnote.text import mixed_script_words

    assert mixed_script_words("proclaimed д Dukeом Апulia и Калабрии") == ["Dukeом", "Апulia"]
    assert mixed_script_words("Ögedei в Каракоруме, ударе\u0301ние, 日本語のテキスト, ΑΒΓ alpha") == []


def test_a_model_answer_in_its_sources_language_says_so_in_the_readers() -> None:
    """Five of 14 Russian answers of the local model came back in English (bench/local_model.py): the reader is
    told, in Russian; an answer in the reader's own language gets no such note."""
    from footnote.answer.disclaimers import model_language_note
    from footnote.answer.pipeline import _written_in

    english = LEAD.replace(ALL, "[1]")
    assert _written_in(english, "ru", ["en", "en"]) == "en"
    assert model_language_note("ru", "en") == "Модель ответила не на языке вопроса, а на языке: английский."
    russian = "Смотритель на вахте включает туманный горн, когда огонь Чёрной Шхеры больше не виден [1]."
    assert _written_in(russian, "ru", ["en"]) is None and model_language_note("ru", None) is None
    assert _written_in("Yes [1].", "ru", ["en"]) is None  # too little to tell


def test_numbers_the_passages_write_in_words_and_names_they_carry_are_kept(store: Settings) -> None:
    # the passages say "two blasts of three seconds", "twenty minutes", "the Black Skerry beacon"
    said = (f"The horn gives 2 blasts of 3 seconds each, once every minute {ALL}. The engine needs 20 minutes to raise "
            f"pressure, so the keepers start it when haze gathers over the Skerry {ALL}.")
    data = _ask(store, f"{LEAD} {said}")
    assert data["mode"] == "corpus", data
    assert data["trace"]["removed_by_reason"].get("unsupported", 0) == 0, data["trace"]["unsupported_sentences"]
    assert "2 blasts of 3 seconds" in data["streamed"] and "20 minutes" in data["streamed"]


def test_a_lead_in_with_a_marker_is_read_with_its_sentence(store: Settings) -> None:
    """The local model wrote "Ответ: [1] <a verbatim sentence of the passage>": the lead-in was judged as a sentence
    of its own, failed, and took the verbatim quote down with it."""
    data = _ask(store, f"Ответ: [1] {LEAD}")
    assert data["mode"] == "corpus", data["answer"]
    assert "Black Skerry beacon can no longer be seen" in data["streamed"]
    assert data["trace"]["removed_by_reason"].get("unsupported", 0) == 0, data["trace"]["unsupported_sentences"]
    # any other lead-in is a claim, judged alone (a helper's attack: merged with a true sentence, it was carried)
    for lead_in in ("The lens came from Atlantis in 1492: [1]", "The keepers earn gold coins for every storm: [1]",
                    "The horn sounds twice [4] and the keepers earn gold coins for every storm: [1]"):
        data = _ask(store, f"{lead_in} {LEAD}")
        shown = data["streamed"] + data["answer"]
        assert "Atlantis" not in shown and "gold" not in shown, shown
        assert len(data["trace"]["unsupported_sentences"]) == 1, data["trace"]


@pytest.mark.parametrize("intro", [
    "The lens was smuggled from Atlantis by pirates in 1492:\n",  # a lead-in on a line of its own, no marker
    "## The lens smuggled from Atlantis in 1492\n",  # a heading
    "**Pirates brought the lens from Atlantis**\n",  # a bold line
])
def test_an_introducer_is_a_claim_judged_with_the_sentence_it_introduces(store: Settings, intro: str) -> None:
    """A helper's attack: a line without a marker before a cited sentence (a lead-in, a heading, a bold line) was
    shown unjudged. It is judged with the citations of the sentence it introduces, and removed when they do not
    support it; the sentence itself stays."""
    data = _ask(store, (intro, f"{LEAD} The horn gives two blasts every minute {ALL}."))
    for shown in (data["answer"], data["streamed"]):
        assert "Atlantis" not in shown, shown
        assert "no longer be seen" in shown and "two blasts every minute" in shown, shown
    assert data["trace"]["removed_by_reason"] == {"unsupported": 1}


def test_an_answers_label_on_its_own_line_stays(store: Settings) -> None:
    data = _ask(store, ("**Ответ:**\n", LEAD))
    assert data["streamed"].startswith("**Ответ:**") and "no longer be seen" in data["streamed"]
    assert not data["trace"]["removed_by_reason"]


def test_streamed_sentence_by_sentence_a_split_unsupported_sentence_never_shows(store: Settings) -> None:
    chunks = (LEAD[:40], LEAD[40:] + " The lens was smuggled from Atl", "antis by pir", "ates in 14", f"92 {ALL}.",
              f" The horn gives two blasts every minute {ALL}.")
    data = _ask(store, chunks)
    tokens = [e["text"] for name, e in data["events"] if name == "token"]
    assert not any("Atl" in t or "pir" in t or "14" in t for t in tokens), tokens
    assert "two blasts every minute" in data["streamed"] and data["trace"]["removed_by_reason"] == {"unsupported": 1}


def test_nothing_supported_left_shows_the_extractive_answer_and_says_why(store: Settings) -> None:
    """Nothing the model wrote is supported: the passages' own sentences are shown instead (supported by
    construction), and the trace says why (the local 1.5B model lost every sentence of 18 of 40 answers on xquad)."""
    data = _ask(store, ATLANTIS)
    assert data["mode"] == "corpus" and data["citations"], data["answer"]
    for shown in (data["answer"], data["streamed"]):
        assert "Atlantis" not in shown and "Black Skerry" in shown, shown
    stage = next(s for s in data["trace"]["stages"] if s["name"] == "synthesize")
    assert stage["info"]["synthesizer"] == "extractive"
    assert ("synthesizer: no sentence of the model's answer is supported by the passages it cites; extractive answer "
            "used") in data["trace"]["degraded"], data["trace"]["degraded"]
    [bad] = data["trace"]["unsupported_sentences"]  # what the model wrote and was not shown
    assert bad["action"] == "removed" and "sentence" not in bad


def test_nothing_supported_left_ends_weakly_grounded_when_asked(store: Settings) -> None:
    data = _ask(store, ATLANTIS, **{"support.none_supported": "not_found"})
    assert data["mode"] == "not_found" and data["abstention"] == {"reason": "weakly_grounded", "stage": "support"}
    assert "Atlantis" not in data["answer"] and "Atlantis" not in data["streamed"]
    assert data["removed_sentences"] == 1 and data["trace"]["removed_by_reason"] == {"unsupported": 1}
    assert not data["citations"]


def test_flag_instead_of_drop_shows_it_and_lists_it(store: Settings) -> None:
    data = _ask(store, f"{LEAD} {ATLANTIS}", **{"support.on_unsupported": "flag"})
    assert "Atlantis" in data["answer"] and "Atlantis" in data["streamed"]
    assert data["removed_sentences"] == 0
    [flagged] = data["trace"]["unsupported_sentences"]
    assert flagged["action"] == "flagged"
    assert data["trace"]["support"]["unsupported"] == ["The lens was smuggled from Atlantis by pirates in 1492."]


def test_the_chat_names_unsupported_sentences_in_its_removed_line() -> None:
    """The chat's "Removed before you saw it" line names the sentences the passages did not support apart from the
    uncited ones (``trace.removed_by_reason.unsupported``), in every language the chat paints an answer in."""
    app = (REPO / "src/footnote/server/static/app.js").read_text(encoding="utf-8")
    i18n = (REPO / "src/footnote/server/static/i18n.js").read_text(encoding="utf-8")
    assert "removed_by_reason" in app and '"removed_unsupported"' in app
    assert i18n.count("removed_removed_unsupported:") == 6  # en, ru, de, fr, es, pt
    assert "the passages they cite do not support" in i18n
