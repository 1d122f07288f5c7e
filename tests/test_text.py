"""The one text module: folding, invisible characters, stop words, content words, sentences."""

from __future__ import annotations

import pytest

from footnote.retrieve.signal import content_terms as gate_terms
from footnote.text import (
    STOP_WORDS,
    Analyzer,
    clean_text,
    content_terms,
    detect_lang,
    fold,
    is_stop,
    keywords,
    no_break_after,
    split_sentences,
    starts_sentence,
    tokenize,
    unmix_letters,
)


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u200e", "\u034f"])
def test_invisible_characters_inside_a_word_are_removed(invisible: str) -> None:
    word = f"clock{invisible}work"
    assert tokenize(word) == ["clockwork"]
    assert keywords(f"How often must the {word} be wound?") == ["clockwork", "wound"]
    assert clean_text(word) == "clockwork"


def test_fold_is_stable_for_what_the_store_already_indexed() -> None:
    # the store's tokens for ordinary text are unchanged: lower-case, diacritics folded, ё → е
    assert tokenize("Karmaṇy evādhikāras te") == ["karmany", "evadhikaras", "te"]
    assert tokenize("Ёлка, ЙОД") == ["елка", "йод"]
    assert tokenize("धर्मक्षेत्रे कुरुक्षेत्रे") == ["धर्मक्षेत्रे", "कुरुक्षेत्रे"]
    assert tokenize("snake_case 2.47") == ["snake", "case", "2", "47"]
    # compatibility forms fold to their plain letters (PDF ligatures, full-width text)
    assert fold("ﬁnd ＡＢＣ") == "find abc"
    # a decomposed letter folds like the composed one
    assert tokenize("cafe\u0301") == tokenize("café") == ["cafe"]


def test_control_characters_become_spaces() -> None:
    assert clean_text("light\x04house\x00") == "light house "
    assert split_sentences("The lamp\x04 is lit. It turns.") == ["The lamp is lit.", "It turns."]


def test_one_stop_word_list_and_content_words() -> None:
    assert is_stop("What") and is_stop("какой") and not is_stop("lamp")
    assert is_stop("what", "en") and not is_stop("what", "ru")
    assert "often" in STOP_WORDS["en"]
    assert keywords("What is the population of Warsaw?") == ["population", "Warsaw"]
    assert keywords("Какое население у Варшавы?") == ["население", "Варшавы"]
    assert keywords("In 1891 the fog lasted") == ["fog", "lasted"]  # numbers are not content words


def test_gate_and_extractive_agree_on_content_words() -> None:
    from footnote.answer.extractive import TermScorer

    q = "How often must the clockwork be wound?"
    a = Analyzer()
    assert gate_terms(q, "en", a) == content_terms(q, "en") == {"clockwork", "wound"}
    assert set(TermScorer().terms(q, "en")) == content_terms(q, "en")


def test_sentences() -> None:
    text = "Dr. Smith lit the lamp. It turns once every ten seconds!\nHeading\nThe horn sounds twice"
    assert split_sentences(text) == ["Dr. Smith lit the lamp.", "It turns once every ten seconds!", "Heading",
                                     "The horn sounds twice"]
    # a line wrapped mid-sentence is joined
    assert split_sentences("The keeper must wind the\nclockwork every two hours.") == [
        "The keeper must wind the clockwork every two hours."
    ]


def test_language_detection_is_reachable_from_the_text_module() -> None:
    assert detect_lang("Что означает красный фонарь?") == "ru"
    assert detect_lang("What does the red lamp mean?") == "en"


def test_sentences_keep_abbreviations_initials_and_closing_brackets() -> None:
    text = ("The U.S. Supreme Court ruled in 1977. A crew would fly (each launched on a separate Saturn IB.) "
            'He said "Go." J. R. R. Tolkien wrote, e.g. this. See No. 5 and p. 3 here.\n1. First item\n'
            "Т.е. всё. Это было в 1999 г. Потом ушёл.")
    assert split_sentences(text) == [
        "The U.S. Supreme Court ruled in 1977.", "A crew would fly (each launched on a separate Saturn IB.)",
        'He said "Go."', "J. R. R. Tolkien wrote, e.g. this.", "See No. 5 and p. 3 here.", "1. First item",
        "Т.е. всё.", "Это было в 1999 г. Потом ушёл.",
    ]


def test_no_break_after_is_the_one_abbreviation_rule() -> None:
    assert no_break_after("The U.S.") and no_break_after("Mr.") and no_break_after("see e.g.")
    assert no_break_after("by J.") and no_break_after("т.е.") and no_break_after("intro\n2.")
    assert not no_break_after("ruled in 1977.") and not no_break_after("a Saturn IB.")
    assert not no_break_after("he left.") and not no_break_after("in 1977 [1].")
    assert starts_sentence("The") and starts_sentence('"Go') and starts_sentence("1978")
    assert not starts_sentence("and") and not starts_sentence("[2]") and not starts_sentence(")")


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Hоw оftеn dоеs thе Mаrrоwick Light flаsh?", "How often does the Marrowick Light flash?"),  # Cyrillic о, е, а
        ("Ｈｏｗ ｏｆｔｅｎ ｄｏｅｓ ｉｔ ｆｌａｓｈ?", "How often does it flash?"),  # full-width letters
        ("Как чаcто мигает маяк?", "Как часто мигает маяк?"),  # a Latin c inside a Russian word
        ("Что случилось сo смотрителем?", "Что случилось со смотрителем?"),  # a tie goes to the question's script
        ("ＧＰＳ是什么？", "GPS是什么？"),  # full-width letters, the question's own punctuation kept
    ],
)
def test_look_alike_letters_in_a_question_are_read_as_meant(typed: str, meant: str) -> None:
    assert unmix_letters(typed) == meant


@pytest.mark.parametrize(
    "kept",
    [
        "Ада Пенхеллоу встретила меня", "iPhone и Android", "Dukeом", "Hinduизма", "καλημέρα", "東京タワー", "x² ½",
        "What does TNFα trigger, and NF-κB?",  # Greek letters in notation are not a disguise
        "Как открыть файл в Excelе на iPhoneа?",  # a Russian ending on a Latin name: "l", "i" have no twin
        "什么是灯塔？",  # full-width punctuation is the question's own
    ],
)
def test_words_of_one_script_and_garbles_without_a_twin_are_left_alone(kept: str) -> None:
    assert unmix_letters(kept) == kept
