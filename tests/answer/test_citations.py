"""Server-side citation resolution, the prose check and the streaming cleaner."""

from __future__ import annotations

import re

from footnote.answer.citations import Carried, KnownNames, ProseChecker, StreamCleaner, clean_citations
from footnote.answer.types import Note
from footnote.corpus.records import AddressLocator, FileLocator, Fragment


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
    text, removed, names = checker().check(
        "According to The Keeper's Handbook, the horn is sounded [1]. See handbook.pdf and HB 3.4 for more [2]."
    )
    assert removed == 3
    low = text.lower()
    assert "handbook" not in low and "3.4" not in text
    assert "[1]" in text and "[2]" in text
    assert set(names) == {"The Keeper's Handbook", "handbook.pdf", "HB 3.4"}


def test_carried_mentions_stay() -> None:
    src = "The Harbour Book at HB 2.1 and fog.pdf say so [1][2]."
    text, removed, _ = checker().check(src)
    assert removed == 0 and text == src


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
