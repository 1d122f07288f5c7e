"""The extractive answer's candidate sentences (:class:`Cand`), their terms (:class:`TermScorer`), and the
rules that add a neighbour to a chosen sentence (its antecedent, its continuation) or tell a repeat."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from footnote.answer.sentences import answer_type, carries_answer_type, continues
from footnote.answer.types import Note
from footnote.text import Analyzer, content_terms, numbers, tokenize


class TermScorer:
    """Content terms by language: the gate's definition (:func:`footnote.text.content_terms`) plus numbers."""

    def __init__(self, analyzer: Analyzer | None = None) -> None:
        self.analyzer = analyzer or Analyzer()

    def terms(self, text: str, lang: str) -> list[str]:
        """The content terms of ``text`` (stemmed in ``lang``) plus its numbers, sorted."""
        return sorted(content_terms(text, lang, self.analyzer) | numbers(text))

    @staticmethod
    def neutral(text: str) -> set[str]:
        """Language-neutral tokens: numbers and Latin-script words of 3+ letters."""
        return {t for t in tokenize(text) if t.isdigit() or (len(t) > 2 and t.isascii() and t.isalpha())}


def focus_in(focus: str, c: Cand, scorer: TermScorer) -> bool:
    """Whether the candidate carries the question's focus word (stemmed in the candidate's language)."""
    return bool(set(scorer.terms(focus, c.lang)) & c.terms)


Prepared = tuple[str, frozenset[str], frozenset[str], bool, str]


@dataclass
class Cand:
    note: Note
    rank: int
    position: int
    text: str
    terms: frozenset[str]
    nums: frozenset[str]
    lang: str
    context: frozenset[str] = frozenset()  # terms of the sentence (or heading) before it in its note
    before: Cand | None = None  # the candidate just before it in its note (an antecedent for "He…")
    after: Cand | None = None  # the candidate just after it in its note (a continuation)
    sim: float | None = None
    row: int = -1  # the candidate's row among this turn's sentence vectors
    overlap: float = 0.0
    shared: int = 0
    names: float = 0.0  # share of the question's names (cross-script skeletons) the sentence carries
    score: float = 0.0


PRONOUN = re.compile(r"(?i)^(?:he|she|it|they|his|her|its|their|this|these|он|она|оно|они|его|её|ее|их|это|эти)\b")


def with_antecedents(chosen: list[Cand], cap: int) -> list[Cand]:
    """A chosen sentence that opens with a pronoun ("He is also the oldest quarterback…") is preceded
    by the sentence before it in its note (its antecedent) — added when it was not chosen, moved up when it was
    chosen further down; the total stays within ``cap`` (the lowest-ranked picks give way, never leaving an
    antecedent alone)."""
    out: list[Cand] = []
    ids = {id(c) for c in chosen}
    added: set[int] = set()
    shown: set[int] = set()
    for c in chosen:
        if id(c) in shown:
            continue  # an antecedent already pulled ahead of the sentence that needs it
        if c.before is not None and id(c.before) not in shown and PRONOUN.match(c.text):
            if id(c.before) not in ids:
                added.add(id(c.before))
            out.append(c.before)  # chosen or not, it goes right before: "It must be wound…" after "The clockwork…"
            shown.add(id(c.before))
        out.append(c)
        shown.add(id(c))
    keep = out[:cap]
    while keep and id(keep[-1]) in added:
        keep.pop()
    return keep


def with_continuation(
    chosen: list[Cand], best: Cand, question: str, qterms: Sequence[str], cap: int
) -> tuple[list[Cand], str | None]:
    """The best sentence quoted with the one after it in its note when the answer is likely there: the
    best lacks what the question asks for (a name, a new number) and the next one has it, or the next one
    continues the best ("As such, it…", "Usually, …") and shares a question term. The continuation
    goes right after the best; the total stays within ``cap`` (the lowest-ranked picks give way)."""
    nxt = best.after
    if nxt is None or any(c is nxt for c in chosen) or not any(c is best for c in chosen):
        return chosen, None
    kind = answer_type(question)
    why: str | None = None
    if not carries_answer_type(best.text, question, kind) and carries_answer_type(nxt.text, question, kind):
        why = f"the best sentence lacks the asked-for {kind}; the next one has it"
    elif continues(nxt.text) and set(qterms) & nxt.terms:
        why = "the next sentence continues the best one"
    if why is None:
        return chosen, None
    at = next(i for i, c in enumerate(chosen) if c is best) + 1
    out = [*chosen[:at], nxt, *chosen[at:]][:cap]
    kept = {id(c) for c in out}
    while out and out[-1] is not nxt and out[-1] is not best:
        follower = out[-1].after  # an antecedent added for a sentence that no longer fits
        if follower is None or id(follower) in kept or not any(c is follower for c in chosen):
            break
        kept.discard(id(out.pop()))
    return out, why


def redundancy(c: Cand, s: Cand, vecs: np.ndarray | None) -> tuple[float | None, float]:
    """How much ``c`` repeats ``s``: their cosine (None without vectors) and the Jaccard of their terms
    (the same fact in other words: "the range of a spring tide is 5.2 metres" / "5.2 metres at springs")."""
    cos = float(vecs[c.row] @ vecs[s.row]) if vecs is not None and c.row >= 0 and s.row >= 0 else None
    jac = len(c.terms & s.terms) / len(c.terms | s.terms) if c.terms and s.terms else 0.0
    return cos, jac
