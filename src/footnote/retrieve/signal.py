"""Cheap inputs of the "do we know this?" signal that are not cosines."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence

import numpy as np

from footnote.models.protocols import Embedder
from footnote.records.fragments import Fragment
from footnote.retrieve.sentence_vectors import SentenceVectorCache
from footnote.text import Analyzer, content_terms, split_sentences, text_stems

__all__ = ["address_only", "best_sentence_cosine", "content_terms", "gate_sentences", "lexical_overlap"]

log = logging.getLogger(__name__)


def lexical_overlap(question: str, qlang: str, fragments: Sequence[Fragment], analyzer: Analyzer) -> float:
    """The largest share of the question's content terms that one fragment carries (0 with none)."""
    q = content_terms(question, qlang, analyzer)
    if not q:
        return 0.0
    best = 0.0
    for f in fragments:
        terms = text_stems(f.text, f.lang)
        best = max(best, len(q & terms) / len(q))
    return best


_ADDRESS_BITS = re.compile(r"\d+(?:[.:]\d+)*")


def address_only(question: str, lang: str, aliases: Mapping[str, str], analyzer: Analyzer) -> bool:
    """True when the question asks for nothing but an address ("BG 19.5", "What does HB 3.2 say?"):
    no content word is left once book names and location numbers are taken out."""
    text = question.lower()
    for alias in sorted({*aliases, *(v.lower() for v in aliases.values())}, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(alias)}(?!\w)", " ", text)
    text = _ADDRESS_BITS.sub(" ", text)
    return not content_terms(text, lang, analyzer)


def gate_sentences(fragments: Sequence[Fragment], limit: int) -> list[str]:
    """The sentences whose vectors :func:`best_sentence_cosine` compares, in the fragments' order, at most ``limit``
    (what warming the store makes ahead of the readers: ``Answerer.warm_sentences``)."""
    seen: dict[str, None] = {}
    for f in fragments:
        for s in split_sentences(f.text):
            seen.setdefault(s, None)
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


def best_sentence_cosine(qvec: np.ndarray, fragments: Sequence[Fragment], embedder: Embedder,
                         vectors: SentenceVectorCache, limit: int) -> float:
    """The best cosine between the question and one sentence of ``fragments`` (at most ``limit`` sentences,
    in the fragments' order). Sentence vectors come from the one cache the gate and the extractive answer
    share (:class:`~footnote.retrieve.sentence_vectors.SentenceVectorCache`: memory, then the store's kept
    ones, else embedded as passages and kept). 0 with none."""
    texts = gate_sentences(fragments, limit)
    if not texts:
        return 0.0
    mat = vectors.vectors(embedder, texts)
    return float(np.max(mat @ np.asarray(qvec, dtype=np.float32)))
