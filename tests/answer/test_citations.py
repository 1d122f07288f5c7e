"""Server-side citation resolution, the prose check and the streaming cleaner."""

from __future__ import annotations

import re

import pytest

from footnote.answer.citations import Carried, KnownNames, ProseChecker, StreamCleaner, clean_citations
from footnote.answer.prose import names_pattern
from footnote.answer.types import Note
from footnote.answer.units import is_introducer, split_units
from footnote.records.fragments import AddressLocator, FileLocator, Fragment


def _note(n: int, sid: str, text: str, loc: object) -> Note:
    return Note(n, Fragment(f"{sid}#0", sid, 0, "verse", "en", text, loc, "h"), 0.8)  # type: ignore[arg-type]


NOTES = [
    _note(1, "harbour-book.md", "When fog comes the horn is sounded.", AddressLocator("HB", "2.1", "HB 2.1")),
    _note(2, "fog.pdf", "Two blasts every minute.", FileLocator("fog.pdf", 4)),
]
TITLES = {"harbour-book.md": "The Harbour Book", "fog.pdf": "Fog Signals"}
FILES = {"harbour-book.md": "harbour-book.md", "fog.pdf": "fog.pdf"}
KNOWN = KnownNames(
    titles=("the keeper's handbook", "the harbour book", "fog signals"),
    files=frozenset({"handbook.pdf", "harbour-book.md", "fog.pdf"}),
    kinds=("verse",),
    title_re=re.compile(r"(?<!\w)(?:the keeper's handbook|the harbour book|fog signals)(?!\w)"),
)


def checker() -> ProseChecker:
    return ProseChecker(KNOWN, Carried.of(NOTES, TITLES, FILES))


def test_forged_numbers_are_dropped_and_counted() -> None:
    text, used, dropped = clean_citations("Fog means the horn [1][99]. Blasts [2, 7].", {1, 2})
    assert text == "Fog means the horn [1]. Blasts [2]."
    assert used == [1, 2] and dropped == 2


def test_unretrieved_title_file_and_address_are_removed() -> None:
    r = checker().check(
        "According to The Keeper's Handbook, the horn is sounded [1]. See handbook.pdf and HB 3.4 for more [2]."
    )
    assert r.mentions == 3
    low = r.text.lower()
    assert "handbook" not in low and "3.4" not in r.text
    # the lead-in clause goes with the title; a sentence left with nothing to say goes whole
    assert r.text.strip() == "The horn is sounded [1]."
    assert r.sentences == 1
    assert set(r.names) == {"The Keeper's Handbook", "handbook.pdf", "HB 3.4"}


def test_carried_mentions_stay() -> None:
    src = "The Harbour Book at HB 2.1 and fog.pdf say so [1][2]."
    r = checker().check(src)
    assert r.mentions == 0 and r.text == src


def test_stream_cleaner_never_shows_a_forged_number_split_across_deltas() -> None:
    c = StreamCleaner({1, 2}, checker(), flush_chars=200)
    shown: list[str] = []
    for delta in ["The horn is sounded [", "9", "9]. Two bla", "sts a minute [2", "]. From handbook", ".pdf too."]:
        shown += c.feed(delta)
    shown += c.finish()
    out = "".join(shown)
    assert "[99]" not in out and "99" not in out and "handbook" not in out
    assert "[2]" in out
    assert c.dropped == 1 and c.removed == 1
    assert all("[9" not in s for s in shown)


def test_stream_cleaner_flushes_long_text_without_cutting_a_bracket() -> None:
    c = StreamCleaner({1}, checker(), flush_chars=20)
    pieces = c.feed("word " * 10 + "tail [1")
    assert pieces and all("[" not in p for p in pieces)
    rest = c.feed("] end") + c.finish()
    assert "[1]" in "".join(rest)


# -- forged markers in other shapes (issue 10 §1) ------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown", "dropped"),
    [
        ("It sounds like a cow [1,\n77].", "It sounds like a cow [1].", 1),
        ("It sounds like a cow 【99】.", "It sounds like a cow.", 1),
        ("It sounds like a cow 【2】.", "It sounds like a cow [2].", 0),
        ("It sounds like a cow⁽⁹⁹⁾.", "It sounds like a cow.", 1),
        ("It sounds like a cow⁽²⁾.", "It sounds like a cow[2].", 0),
        ("It sounds like a cow [^99].", "It sounds like a cow.", 1),
        ("It sounds like a cow [^1].", "It sounds like a cow [1].", 0),
        ("It sounds like a cow (99).", "It sounds like a cow.", 1),
        ("It sounds like a cow (2).", "It sounds like a cow [2].", 0),
        ("It sounds like a cow.⁹⁹ Then", "It sounds like a cow. Then", 1),
        ("It sounds like a cow [note 2].", "It sounds like a cow [2].", 0),
        ("It sounds like a cow [1-3].", "It sounds like a cow.", 1),
        ("Built in 1887 (1887). Steps (1) one, (2) two [1].", "Built in 1887 (1887). Steps (1) one, (2) two [1].", 0),
    ],
)
def test_forged_marker_shapes_are_normalised_or_dropped(raw: str, shown: str, dropped: int) -> None:
    text, _, n = clean_citations(raw, {1, 2})
    assert text == shown and n == dropped


def test_forged_marker_split_across_a_line_break_never_shows() -> None:
    c = StreamCleaner({1}, checker(), flush_chars=200, require_cited=True)
    shown: list[str] = []
    for delta in ["The horn is sounded [1,", "\n", "77]. It sounds like a cow 【9", "9】. Two blasts [1]."]:
        shown += c.feed(delta)
    shown += c.finish()
    out = "".join(shown)
    assert "77" not in out and "99" not in out and "【" not in out and "cow" not in out
    assert out.strip() == "The horn is sounded [1]. Two blasts [1]."
    assert c.dropped == 2 and c.removed_sentences == 1


# -- every sentence shown carries a citation ----------------------------------------------------


def test_uncited_sentences_are_removed_and_counted() -> None:
    c = StreamCleaner({1, 2}, checker(), flush_chars=200, require_cited=True)
    shown: list[str] = []
    for delta in ["The horn is sounded [1]. It sounds like a cow [", "99]. The horn was invented by aliens ",
                  "in 1999. Two blasts", " a minute.", " [2]", " Done."]:
        shown += c.feed(delta)
    shown += c.finish()
    out = "".join(shown)
    # a citation after the full stop still belongs to its sentence (held until it arrives)
    assert out.strip() == "The horn is sounded [1]. Two blasts a minute. [2]"
    assert c.removed_sentences == 3 and c.dropped == 1
    assert all("aliens" not in p and "cow" not in p for p in shown)


def test_headings_and_lead_ins_introduce_cited_items_and_are_not_sentences() -> None:
    c = StreamCleaner({1, 2}, checker(), flush_chars=200, require_cited=True)
    text = ("## Fog rules\n"
            "The keeper watches the beacon:\n"
            "- Start the horn when the beacon is lost [1].\n"
            "- Two blasts every minute [2].\n"
            "## Aliens\n"
            "They built it.\n"
            "**Summary**\n")
    shown = c.feed(text) + c.finish()
    out = "".join(shown)
    assert out == ("## Fog rules\nThe keeper watches the beacon:\n- Start the horn when the beacon is lost [1].\n"
                   "- Two blasts every minute [2].\n")
    assert c.removed_sentences == 1  # "They built it." — the headings are not sentences


def test_what_counts_as_a_sentence() -> None:
    units = split_units("Mr. Smith starts the horn, e.g. at dusk [1].\n1. First [1].\n2. Second [2]. Then [2].")
    assert units == ["Mr. Smith starts the horn, e.g. at dusk [1].\n", "1. First [1].\n", "2. Second [2]. ", "Then [2]."]
    assert is_introducer("## Fog\n") and is_introducer("Steps:\n") and is_introducer("- \n")
    assert is_introducer("**Fog rules**\n") and not is_introducer("It is loud.")


# -- the prose check against spelling tricks -----------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "The horn sounds twice, as HB 3.4 says, every minute [1].",
        "The horn sounds twice, as Н​B 3.4 says, every minute [1].",  # Cyrillic Н and a zero-width space
        "The horn sounds twice, as HB‍ 3.4 says, every minute [1].",
        "The horn sounds twice, as The Keeper’s Hand​book says, every minute [1].",
        "The horn sounds twice, as The Keеper's Handbook says, every minute [1].",  # Cyrillic е
        "Café rules: the horn sounds twice, as The Keeper's Handbook says, every minute [1].",  # decomposed é
        "The horn sounds twice, as The Keepér's Handbook says, every minute [1].",
        "The horn sounds twice, as hand­book.pdf says, every minute [1].",  # soft hyphen
    ],
)
def test_prose_check_holds_against_spelling_tricks(sentence: str) -> None:
    r = checker().check(sentence)
    assert r.mentions == 1, r
    assert r.text.endswith(("the horn sounds twice every minute [1].", "The horn sounds twice every minute [1].")), r.text
    assert "3.4" not in r.text and "andbook" not in r.text


def test_a_title_with_a_full_stop_inside_is_checked_whole() -> None:
    title = "notes. on the fog"
    known = KnownNames(titles=(title,), files=frozenset(), kinds=("prose",), title_re=names_pattern([title]))
    chk = ProseChecker(known, Carried.of(NOTES, TITLES, FILES))
    r = chk.check("The horn sounds twice, as Notes. On the Fog explains, every minute [1].")
    assert r.mentions == 1 and r.text == "The horn sounds twice every minute [1]."
    # streamed: never cut between "Notes." and "On the Fog"
    c = StreamCleaner({1}, chk, flush_chars=200, require_cited=True)
    shown: list[str] = []
    for delta in ["The horn sounds twice [1]. See Notes", ". On the", " Fog for more [1]. Bye [1]."]:
        shown += c.feed(delta)
    shown += c.finish()
    out = "".join(shown)
    assert "Notes" not in out and "Fog for" not in out and out.strip() == "The horn sounds twice [1]. Bye [1]."


def test_removing_a_mention_leaves_no_dangling_punctuation() -> None:
    moby = "moby dick"
    known = KnownNames(titles=(moby,), files=frozenset(), kinds=("prose",), title_re=names_pattern([moby]))
    chk = ProseChecker(known, Carried.of(NOTES, TITLES, FILES))
    r = chk.check("The horn blows and the Moby Dick novel, the engine drives it [1].")
    assert r.text == "The engine drives it [1]."
    r = chk.check("The horn, like in Moby Dick, blows twice [1].")
    assert r.text == "The horn blows twice [1]."
    r = chk.check("The horn blows twice (see Moby Dick) [1].")
    assert r.text == "The horn blows twice [1]."
    r = chk.check("Read Moby Dick [1]. The horn blows twice [1].")
    assert r.text.strip() == "The horn blows twice [1]." and r.sentences == 1


# -- the cleaner's units and the notes' sentences agree ------------------------------------------


QUOTES = [
    "The U.S. Supreme Court ruled in 1977 [1].",
    "A crew would fly (each launched on a separate Saturn IB [1].)",
    "Dr. J. Smith lit the lamp, e.g. at dusk [1].",
    "Т.е. лампа горит с 1999 г. до сих пор [1].",
]


@pytest.mark.parametrize("quote", QUOTES)
def test_a_cited_sentence_with_abbreviations_is_one_unit(quote: str) -> None:
    text = quote + " The horn blows twice [1]."
    assert split_units(text) == [quote + " ", "The horn blows twice [1]."]
    c = StreamCleaner({1}, checker(), flush_chars=200, require_cited=True)
    out = "".join(c.feed(text) + c.finish())
    assert out == text and c.removed_sentences == 0


@pytest.mark.parametrize("quote", QUOTES)
def test_streamed_tokens_split_mid_abbreviation_keep_the_sentence_whole(quote: str) -> None:
    text = quote + " It sounds like a cow. The horn blows twice [1]."
    for size in (1, 2, 3, 5):
        c = StreamCleaner({1}, checker(), flush_chars=200, require_cited=True)
        shown: list[str] = []
        for i in range(0, len(text), size):
            shown += c.feed(text[i : i + size])
        shown += c.finish()
        assert "".join(shown) == quote + " The horn blows twice [1].", size
        assert c.removed_sentences == 1  # only the uncited cow sentence


def test_the_ascii_skeleton_fast_path_matches_the_general_loop() -> None:
    from footnote.answer.prose import skeleton

    text = "The\tKeeper's\x1cHandbook\nPage 3 — x"  # the last part forces the general loop
    fast_part = text[: text.index(" —")]
    got, idx = skeleton(fast_part)
    full, fidx = skeleton(text)
    assert got == full[: len(got)] and idx == fidx[: len(idx)]
    assert got == "the keeper's handbook page 3" and skeleton("AbC", lower=False) == ("AbC", [0, 1, 2])
