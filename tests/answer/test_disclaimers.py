"""Texts the server paints: the note over quotes in other languages names the languages in words."""

from __future__ import annotations

from footnote.answer.disclaimers import quotes_language_note


def test_quotes_note_names_languages_not_codes() -> None:
    # a Russian or English question over a German PDF printed "на языке источников: de"
    assert quotes_language_note("ru", ["de", "en", "de"]) == "Цитаты приведены на языке источников: немецкий и английский."
    assert quotes_language_note("en", ["de", "sa"]) == "The quoted passages are in German and Sanskrit."
    assert quotes_language_note("en", ["en", "en"]) is None
    assert quotes_language_note("en", ["xx"]) == "The quoted passages are in xx."  # unknown: as it is
