"""Cheap inputs of the "do we know this?" signal that are not cosines."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from footnote.corpus.records import Fragment
from footnote.text import Analyzer, content_terms, tokenize

__all__ = ["address_only", "content_terms", "lexical_overlap"]


def lexical_overlap(question: str, qlang: str, fragments: Sequence[Fragment], analyzer: Analyzer) -> float:
    """The largest share of the question's content terms that one fragment carries (0 with none)."""
    q = content_terms(question, qlang, analyzer)
    if not q:
        return 0.0
    best = 0.0
    for f in fragments:
        terms = set(analyzer.stem(tokenize(f.text), f.lang))
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
