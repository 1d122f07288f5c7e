"""What the extractive answer shows: the chosen sentences (:class:`Pick`) as an outline and as stream
pieces, each quoted verbatim with its ``[n]`` before its closing punctuation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.answer.types import Outline, Thesis


@dataclass(frozen=True)
class Pick:
    """A sentence chosen from note ``note`` (its number in this turn)."""

    note: int
    sentence: str
    score: float
    overlap: float
    position: int
    similarity: float | None = None


def outline_from_picks(picks: Sequence[Pick]) -> Outline:
    """The extractive planner's outline: one thesis per chosen sentence."""
    return Outline(tuple(Thesis(p.sentence, (p.note,)) for p in picks))


def extractive_pieces(picks: Sequence[Pick], renumber: dict[int, int]) -> list[str]:
    """The answer as stream pieces: each chosen sentence followed by its (renumbered) ``[n]``. A unit with
    no closing punctuation of its own (a heading-like line, a transcript span cut at a cue) is closed with a
    full stop after its marker, so two quoted units never run together into one sentence."""
    pieces: list[str] = []
    for i, p in enumerate(picks):
        sep = "" if i == 0 else " "
        cited = cite_quote(p.sentence, renumber[p.note])
        if cited.endswith("]"):
            cited += "."
        pieces.append(sep + cited)
    return pieces


_TRAIL = re.compile(r"([.!?…;:,]+[\"'»”)]*)$")


def cite_sentence(sentence: str, n: int) -> str:
    """``sentence`` with ``[n]`` before its closing punctuation: ``It is so [2].``"""
    return _cited(sentence, n, cut=False)


def cite_quote(sentence: str, n: int) -> str:
    """:func:`cite_sentence` for a sentence quoted from a longer source: one that stops at a comma, colon or
    semicolon (a verse's line, a transcript's cue: the sentence goes on in the source) ends in an ellipsis,
    so it does not read as cut short: ``might bear his memory [1]…``. (A curated note's own text keeps its
    punctuation: :func:`cite_sentence`.)"""
    return _cited(sentence, n, cut=True)


def _cited(sentence: str, n: int, *, cut: bool) -> str:
    m = _TRAIL.search(sentence)
    if m is None:
        return f"{sentence} [{n}]"
    trail = m.group(1)
    if cut and trail[0] in ",:;":
        trail = trail.lstrip(",:;") + "…"
    return f"{sentence[: m.start()].rstrip()} [{n}]{trail}"
