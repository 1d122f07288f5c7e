"""The no-model path: an extractive planner (choose the notes and sentences that answer the question)
and the pieces of an extractive answer (the chosen sentences, each followed by its ``[n]``).

Sentence score = weighted share of the question's terms the sentence carries (Snowball stems, stop
words dropped, each term weighted by how rare it is among this turn's notes — a term every note has,
such as the article's subject, says little) + ``extractive_score_weight`` × the note's cosine −
``extractive_rank_decay`` × the note's rank. Sentences below ``extractive_min_overlap`` are never
chosen; an empty choice means ``corpus_insufficient``.

A question in another language than the notes shares no terms with them; then, when the gate has
admitted the notes, the top ``extractive_crosslingual_notes`` notes answer with their sentences that
share the most language-neutral tokens (numbers, Latin names) with the question, else their first ones.
Every sentence is verbatim from a note: faithful by construction; the notes are data, never instructions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from footnote.answer.types import Note, Outline, Thesis
from footnote.settings import AnswerSettings
from footnote.text import Analyzer, content_terms, numbers, split_sentences, tokenize

__all__ = ["Pick", "TermScorer", "cite_sentence", "extractive_pieces", "outline_from_picks", "select_sentences",
           "split_sentences"]


@dataclass(frozen=True)
class Pick:
    """A sentence chosen from note ``note`` (its number in this turn)."""

    note: int
    sentence: str
    score: float
    overlap: float
    position: int


class TermScorer:
    """Question terms → stems by language, without stop words."""

    def __init__(self, analyzer: Analyzer | None = None) -> None:
        self.analyzer = analyzer or Analyzer()

    def terms(self, text: str, lang: str) -> list[str]:
        """The question's content terms (as the gate counts them) plus its numbers."""
        return sorted(content_terms(text, lang, self.analyzer) | numbers(text))

    @staticmethod
    def neutral(text: str) -> set[str]:
        """Language-neutral tokens: numbers and Latin-script words of 3+ letters."""
        return {t for t in tokenize(text) if t.isdigit() or (len(t) > 2 and t.isascii() and t.isalpha())}


def select_sentences(
    question: str, qlang: str, notes: Sequence[Note], settings: AnswerSettings, scorer: TermScorer,
    *, crosslingual: bool = True, addressed: Collection[int] = (),
) -> tuple[list[Pick], dict[str, object]]:
    """The sentences an extractive answer is made of, best first, and what the choice looked at.
    ``addressed``: notes whose address the question names (``What does HB 3.2 say?``) — they answer
    with their leading sentences, first."""
    info: dict[str, object] = {"notes": len(notes)}
    if not notes:
        return [], info
    if addressed:
        by_address = [
            Pick(n.n, sent, 2.0 - 0.01 * pos, 1.0, pos)
            for n in notes if n.n in addressed
            for pos, sent in enumerate(split_sentences(n.fragment.text)[: settings.extractive_max_per_note])
        ]
        if by_address:
            info["addressed"] = len(addressed)
            chosen = by_address[: settings.extractive_max_sentences]
            info["chosen"] = len(chosen)
            return chosen, info
    qterms_by_lang: dict[str, list[str]] = {}
    note_sents: list[list[tuple[str, set[str]]]] = []
    for note in notes:
        lang = note.fragment.lang or qlang
        if lang not in qterms_by_lang:
            qterms_by_lang[lang] = list(dict.fromkeys(scorer.terms(question, lang)))
        note_sents.append([(s, set(scorer.terms(s, lang))) for s in split_sentences(note.fragment.text)])
    # rarity of each term among this turn's notes
    df: dict[str, int] = {}
    for sents in note_sents:
        seen: set[str] = set()
        for _, terms in sents:
            seen |= terms
        for t in seen:
            df[t] = df.get(t, 0) + 1
    n_notes = len(notes)

    def weight(t: str) -> float:
        return math.log(1.0 + (n_notes + 1) / (df.get(t, 0) + 0.5))

    picks: list[Pick] = []
    for rank, (note, sents) in enumerate(zip(notes, note_sents, strict=True)):
        qterms = qterms_by_lang[note.fragment.lang or qlang]
        total = sum(weight(t) for t in qterms)
        if total <= 0:
            continue
        for pos, (sent, terms) in enumerate(sents):
            if len(sent.split()) < 3:
                continue  # a heading or a fragment, not an answer
            shared = [t for t in qterms if t in terms]
            share = sum(weight(t) for t in shared) / total
            if share < settings.extractive_min_overlap or len(shared) < min(settings.extractive_min_terms, len(qterms)):
                continue
            score = share + settings.extractive_score_weight * note.score - settings.extractive_rank_decay * rank
            picks.append(Pick(note.n, sent, score, share, pos))
    if picks:
        best = max(p.score for p in picks)
        picks = [p for p in picks if p.score >= best * settings.extractive_min_relative]
    chosen = _cap(picks, settings)
    info["candidates"] = len(picks)
    if not chosen and crosslingual:
        chosen = _crosslingual(question, qlang, notes, settings, scorer)
        info["crosslingual"] = bool(chosen)
    info["chosen"] = len(chosen)
    return chosen, info


def _cap(picks: list[Pick], settings: AnswerSettings) -> list[Pick]:
    out: list[Pick] = []
    per_note: dict[int, int] = {}
    seen: set[str] = set()
    for p in sorted(picks, key=lambda p: (-p.score, p.note, p.position)):
        if len(out) >= settings.extractive_max_sentences:
            break
        if per_note.get(p.note, 0) >= settings.extractive_max_per_note or p.sentence in seen:
            continue
        per_note[p.note] = per_note.get(p.note, 0) + 1
        seen.add(p.sentence)
        out.append(p)
    return out


def _crosslingual(
    question: str, qlang: str, notes: Sequence[Note], settings: AnswerSettings, scorer: TermScorer
) -> list[Pick]:
    others = [n for n in notes if n.fragment.lang and n.fragment.lang != qlang]
    if not others or others[0] is not notes[0]:
        return []  # the top note speaks the question's language and shares nothing with it
    qneutral = scorer.neutral(question)
    out: list[Pick] = []
    for note in others[: settings.extractive_crosslingual_notes]:
        sents = split_sentences(note.fragment.text)
        ranked = sorted(
            enumerate(sents), key=lambda ps: (-len(qneutral & scorer.neutral(ps[1])), ps[0])
        )[: settings.extractive_crosslingual_sentences]
        for pos, sent in sorted(ranked):
            out.append(Pick(note.n, sent, note.score, 0.0, pos))
    return out[: settings.extractive_max_sentences]


def outline_from_picks(picks: Sequence[Pick]) -> Outline:
    """The extractive planner's outline: one thesis per chosen sentence."""
    return Outline(tuple(Thesis(p.sentence, (p.note,)) for p in picks))


def extractive_pieces(picks: Sequence[Pick], renumber: dict[int, int]) -> list[str]:
    """The answer as stream pieces: each chosen sentence followed by its (renumbered) ``[n]``."""
    pieces: list[str] = []
    for i, p in enumerate(picks):
        sep = "" if i == 0 else " "
        pieces.append(sep + cite_sentence(p.sentence, renumber[p.note]))
    return pieces


_TRAIL = re.compile(r"([.!?…]+[\"'»”)]*)$")


def cite_sentence(sentence: str, n: int) -> str:
    """``sentence`` with ``[n]`` before its closing punctuation: ``It is so [2].``"""
    m = _TRAIL.search(sentence)
    if m is None:
        return f"{sentence} [{n}]"
    return f"{sentence[: m.start()].rstrip()} [{n}]{m.group(1)}"
