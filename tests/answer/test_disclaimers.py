"""Texts the server paints: the note over quotes in other languages names the languages in words; every text is
written in the same languages, and a reader in one of them gets it in theirs."""

from __future__ import annotations

import pytest

from footnote.answer import disclaimers
from footnote.answer.disclaimers import quotes_language_note


def test_quotes_note_names_languages_not_codes() -> None:
    # a Russian or English question over a German PDF printed "на языке источников: de"
    assert quotes_language_note("ru", ["de", "en", "de"]) == "Цитаты приведены на языке источников: немецкий и английский."
    assert quotes_language_note("en", ["de", "sa"]) == "The quoted passages are in German and Sanskrit."
    assert quotes_language_note("en", ["en", "en"]) is None
    assert quotes_language_note("en", ["xx"]) == "The quoted passages are in xx."  # unknown: as it is
    # the stranger's «Как часто звучит туманный горн?»: three Russian quotes and one English were introduced as
    # "Цитаты приведены на языке источников: английский", as if all were English
    assert quotes_language_note("ru", ["ru", "ru", "en", "ru"]) == "Часть цитат приведена на языке источников: английский."
    assert quotes_language_note("en", ["de", "en"]) == "Some of the quoted passages are in German."


TABLES = ["_FALLBACK", "_DECLINE", "_NOT_FOUND", "_NEAR_MISS", "_SEARCHED", "_NO_CORPUS", "_KIND_NAMES", "_QUOTES", "_AND",
          "_MINUTES", "_INDEX_INCOMPLETE", "_ASK_AGAIN", "_QUOTES_IN", "_SOME_QUOTES_IN", "_MODEL_IN", "_LANG_NAMES_IN"]


def test_every_text_is_written_in_the_same_languages() -> None:
    langs = set(disclaimers._FALLBACK)
    assert {"en", "ru", "de", "fr", "es", "pt"} <= langs
    for name in TABLES:
        assert set(getattr(disclaimers, name)) == langs, name
    for lg in langs:  # every kind of material has its name, every language named in each
        assert set(disclaimers._KIND_NAMES[lg]) == set(disclaimers._KIND_NAMES["en"]), lg
        assert {"en", "ru", "de", "fr", "es", "pt"} <= set(disclaimers._LANG_NAMES_IN[lg]), lg


@pytest.mark.parametrize(("lang", "head", "searched"), [
    ("de", "Am nächsten kommen der Frage Abschnitte aus „Brief“", "Gesucht nach „Q“ in Briefen und Versen."),
    ("fr", "Les passages les plus proches du corpus viennent de «\u00a0Brief\u00a0»",
     "Recherche de «\u00a0Q\u00a0» dans les lettres et les vers."),
    ("es", "Los pasajes más cercanos del corpus proceden de «Brief»", "Busqué «Q» en cartas y versos."),
    ("pt", "As passagens mais próximas do corpus vêm de «Brief»", "Procurei «Q» em cartas e versos."),
])
def test_a_near_miss_and_an_unfinished_index_are_said_in_the_readers_language(lang: str, head: str, searched: str) -> None:
    text = disclaimers.near_miss_text(lang, ["Brief"], ["Q"], ["letter", "verse"])
    assert text.startswith(head) and text.endswith(searched)
    assert str(27) in disclaimers.index_incomplete_text(lang, 27.4, 150.0)
    assert disclaimers.index_incomplete_text(lang, 27.4, 150.0) != disclaimers.index_incomplete_text("en", 27.4, 150.0)


def test_a_language_without_texts_gets_english() -> None:
    assert disclaimers.not_found_text("hi", ["Q"], ["letter"]) == disclaimers.not_found_text("en", ["Q"], ["letter"])
