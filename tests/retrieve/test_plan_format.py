"""Locator and note formatting shared by search, ask, the HTTP API and the report."""

from __future__ import annotations

from footnote.records.fragments import AddressLocator, FileLocator, Fragment, TranscriptLocator
from footnote.retrieve.format import format_locator, format_ms, lane_scores, note_dict, snippet
from footnote.retrieve.types import Candidate, Lane, LaneHit


def test_format_ms_and_locators() -> None:
    assert format_ms(252_000) == "04:12"
    assert format_ms(295_999) == "04:55"
    assert format_ms(3_725_000) == "1:02:05"
    assert format_locator(TranscriptLocator("t1", 252_000, 295_000), "Lecture title") == "Lecture title 04:12–04:55"
    assert format_locator(TranscriptLocator("t1", 0, 45_000)) == "t1 00:00–00:45"
    assert format_locator(AddressLocator("HB", "2.4", "HB 2.4")) == "HB 2.4"
    assert format_locator(FileLocator("handbook.pdf", 7)) == "handbook.pdf p. 7"
    assert format_locator(FileLocator("notes.md", None, "Intro")) == "notes.md § Intro"


def test_note_dict_and_lane_scores() -> None:
    f = Fragment("s#0", "s", 0, "verse", "en", "text " * 10, AddressLocator("BG", "2.13", "BG 2.13"), "h")
    c = Candidate(f, 0.8123456789, (
        LaneHit(Lane.DENSE_VERSES, "q", 0, 0.81),
        LaneHit(Lane.LEXICAL_STEMMED, "q", 3, 2.0),
        LaneHit(Lane.LEXICAL_STEMMED, "q2", 0, 5.0),
        LaneHit(Lane.ADDRESS, "q", 0, 1.0),
    ), rerank=1.5, forced=True)
    assert lane_scores(c) == {"address": 1.0, "dense_verses": 0.81, "lexical_stemmed": 5.0}
    d = note_dict(1, c, {"s": "Gita"})
    assert d["locator"] == {"book": "BG", "loc": "2.13", "label": "BG 2.13"}
    assert d["label"] == "BG 2.13" and d["score"] == 0.812346 and d["rerank"] == 1.5 and d["forced"] is True
    assert snippet("a  b\n c", 100) == "a b c"
    assert snippet("word " * 100, 20).endswith(" …") and len(snippet("word " * 100, 20)) <= 22
