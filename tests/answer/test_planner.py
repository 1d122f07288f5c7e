"""Parsing the outline planner's reply: foreign numbers dropped, citation dumps trimmed to the best notes."""

from __future__ import annotations

import json

import pytest

from footnote.answer.planner import MalformedOutline, parse_outline


def test_foreign_numbers_are_dropped_and_counted() -> None:
    reply = json.dumps({"theses": [{"text": "a", "notes": [2, 99, "x", 2]}, {"text": "b", "notes": [42]}]})
    outline, bad = parse_outline(reply, {1, 2, 3})
    assert [t.notes for t in outline.theses] == [(2,)]  # a thesis left with no note of this turn goes
    assert bad == 3


def test_a_thesis_citing_every_note_keeps_the_best_ranked_few() -> None:
    reply = json.dumps({"theses": [{"text": "all of them", "notes": list(range(15, 0, -1))}]})
    outline, bad = parse_outline(reply, set(range(1, 16)), max_notes=4)
    assert outline.theses[0].notes == (1, 2, 3, 4)
    assert bad == 11


def test_at_most_max_theses() -> None:
    reply = json.dumps({"theses": [{"text": str(i), "notes": [i]} for i in range(1, 8)]})
    outline, bad = parse_outline(reply, set(range(1, 8)), max_theses=5)
    assert len(outline.theses) == 5 and bad == 2


def test_empty_outline_and_malformed_replies() -> None:
    outline, _ = parse_outline('```json\n{"theses": []}\n```', {1})
    assert outline.empty
    with pytest.raises(MalformedOutline):
        parse_outline('{"outline": "nope"}', {1})
