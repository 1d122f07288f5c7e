"""A pinned note yields to a source the question names by its title — the whole title or its head before a
subtitle ("The Keeper's Handbook — Marrowick Light"), less a leading "The" — unless that source is the note's own."""

from __future__ import annotations

from footnote.records.memory import MemoryNote, NoteKind
from footnote.retrieve.memory import pin_veto
from footnote.settings import Settings
from footnote.text import Analyzer

NOTE = MemoryNote("fog-horn-rule", NoteKind.PINNED, "The keepers start the fog horn when the beacon is lost.",
                  triggers=("When do the keepers start the fog horn?",), title="The fog horn rule")
TITLES = {"demo/pdf/keepers-handbook.pdf": "The Keeper's Handbook — Marrowick Light",
          "demo/verses/harbour-book.md": "The Harbour Book"}


def _veto(question: str) -> str | None:
    return pin_veto(question, "en", NOTE, None, [], TITLES, Settings(), Analyzer())


def test_a_title_named_without_its_subtitle_is_a_named_source() -> None:
    # on the real demo this question was pinned: the handbook's title has a subtitle the question leaves out
    why = _veto("According to The Keeper's Handbook, when must the keeper start the fog horn?")
    assert why == "the question names another source (The Keeper's Handbook — Marrowick Light)"
    assert _veto("What does the keeper's handbook — marrowick light say about the fog horn?") is not None
    assert _veto("When do the keepers start the fog horn?") is None  # no title named: the note pins


def test_a_head_under_six_characters_does_not_count() -> None:
    short = {"x.md": "Fog: a history"}  # "fog" is under six characters: not a title named
    assert pin_veto("When do the keepers start the fog horn?", "en", NOTE, None, [], short, Settings(), Analyzer()) is None


def test_a_title_is_named_only_as_whole_words() -> None:
    from footnote.text import names_title

    assert names_title("What does The Station say about the log?", "The Station")
    assert not names_title("Why is the engine stationary?", "Station")  # inside a longer word: not named
    assert not names_title("What about the Rhineland?", "Rhine valley: a history")


def test_a_common_word_is_not_a_title_named_and_apostrophes_do_not_matter() -> None:
    from footnote.text import names_title

    # a stranger's attack: a source titled with a common word was "named" by every question using the word
    assert not names_title("How was the weather?", "Weather")
    assert not names_title("What happened at the station at night?", "The Station")
    assert not names_title("What about the harbour?", "Harbour: a history")
    assert names_title("Who were the Normans?", "Normans")  # one word, written as the title writes it
    assert names_title("What is in chapter 1?", "Chapter 1")  # two words name it whatever their case
    # typographic apostrophes (a phone's default) and none at all
    hb = "The Keeper's Handbook — Marrowick Light"
    assert names_title("According to the Keeper\u2019s Handbook, when?", hb)
    assert names_title("According to the Keepers Handbook, when?", hb)
    # a label before a full stop is a head; a number is whole ("1.5" is not "1")
    assert names_title("What does Lecture 1 say?", "Lecture 1. The lamp and the lens")
    assert not names_title("What does lecture 1.5 say?", "Lecture 1. The lamp and the lens")


BILINGUAL = MemoryNote("fog-horn-rule", NoteKind.PINNED, "The keepers start the fog horn when the beacon is lost.",
                       triggers=("When do the keepers start the fog horn?", "Когда смотрители запускают туманный горн?"),
                       title="The fog horn rule")


def test_a_question_in_another_language_pins_only_through_a_trigger_in_that_language() -> None:
    """The stranger's "Wie oft blinkt das Leuchtfeuer von Marrowick?" was pinned to the English fog-horn note:
    the near-miss rule compared words only in the note's own language. In another language the note's triggers
    in the reader's language are compared; a note with none does not pin (the search answers instead)."""
    def veto(question: str, qlang: str, note: MemoryNote = BILINGUAL, **overrides: object) -> str | None:
        return pin_veto(question, qlang, note, None, [], {}, Settings().with_overrides(**overrides), Analyzer())

    assert veto("Когда смотрители запускают туманный горн?", "ru") is None  # its own Russian trigger: pins
    assert veto("Как часто звучит туманный горн на маяке Марровик?", "ru") == (
        "the question's words are not the note's (a near miss to its subject)")
    assert veto("Wie oft blinkt das Leuchtfeuer von Marrowick?", "de") == (
        "the note has no trigger in the reader's language to tell a near miss by")
    assert veto("Когда смотрители запускают туманный горн?", "ru", NOTE) == (
        "the note has no trigger in the reader's language to tell a near miss by")
    off = {"memory.pin_across_languages_by_triggers": False}
    assert veto("Wie oft blinkt das Leuchtfeuer von Marrowick?", "de", **off) is None  # the switch
