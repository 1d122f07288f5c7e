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
from footnote.store.text import Analyzer, tokenize


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS: dict[str, frozenset[str]] = {
    "en": _words(
        """a an the and or but if of to in on at by for with from as is are was were be been being do does did
        what which who whom whose when where why how that this these those it its there their they them he she
        his her we our you your i me my not no yes can could would should will shall may might must has have had
        than then so such into about over under after before between during through up down out off also any
        some many much more most other one all each both few own same very just only tell me please name"""
    ),
    "ru": _words(
        """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее её мне было
        вот от меня еще ещё нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь
        опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам
        чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь
        этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец два об другой
        хоть после над больше тот через эти нас про всего них какая много разве три эту моя впрочем хорошо свою
        этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между каком какие какую каких
        сколько почему каким какое каков каково какова"""
    ),
}

_SENT_END = re.compile(r"(?<=[.!?…])[\"'»”)\]]*\s+(?=[\"'«“(\[]?[A-ZА-ЯЁ0-9])|\n{1,}")
_ABBREV = re.compile(r"(?:\b(?:[A-Z]|Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|e\.g|i\.e|No|Vol|pp?|ch|т\.е|т\.д|др|г|гг|им|ст)\.)$")


def _unwrap(text: str) -> str:
    """Join lines wrapped mid-sentence (PDF text layers, hard-wrapped prose); keep real breaks: blank
    lines, lines ending a sentence, short heading-like lines, bullets."""
    paras = re.split(r"\n\s*\n", text)
    out: list[str] = []
    for para in paras:
        lines = [ln.strip() for ln in para.split("\n") if ln.strip()]
        buf = ""
        for ln in lines:
            if not buf:
                buf = ln
                continue
            prev_end = buf[-1]
            heading = len(buf.rsplit("\n", 1)[-1]) < 40 and ln[:1].isupper() and prev_end not in ",;-–"
            bullet = ln[:1] in "-*•|#" or re.match(r"\d+[.)]\s", ln) is not None
            if prev_end in ".!?…:" or heading or bullet:
                buf += "\n" + ln
            elif prev_end == "-" and ln[:1].islower():
                buf = buf[:-1] + ln
            else:
                buf += " " + ln
        if buf:
            out.append(buf)
    return "\n".join(out)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (real line breaks and sentence punctuation), trimmed, non-empty."""
    text = _unwrap(text)
    out: list[str] = []
    start = 0
    for m in _SENT_END.finditer(text):
        head = text[start : m.start()].rstrip()
        if _ABBREV.search(head) and "\n" not in m.group(0):
            continue  # "Dr. Smith", "e.g. this": not a boundary
        if head.strip():
            out.append(" ".join(head.split()))
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(" ".join(tail.split()))
    return out


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
        stop = STOPWORDS.get(lang, frozenset())
        toks = [t for t in tokenize(text) if t not in stop and (len(t) > 1 or t.isdigit())]
        return self.analyzer.stem(toks, lang)

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
