"""The store's side of text handling: the FTS column contents and query syntax.

Folding, tokenising and stemming are :mod:`footnote.text`'s (the same at indexing and at query time,
and the same as retrieval's and the answer layer's); re-exported here for the store backends. The
unstemmed ("plain") column holds the folded tokens, so IAST matches typed with or without
diacritics; the stemmed column holds the stems. A query for the stemmed column is expanded to the
query's own tokens plus their stems in ``lang`` (or in both Russian and English when ``lang`` is None).
Query terms are always emitted as quoted phrases, so user text can never inject FTS syntax.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from footnote.text import DEFAULT_QUERY_LANGS, SNOWBALL, Analyzer, fold, tokenize

__all__ = [
    "DEFAULT_QUERY_LANGS", "SNOWBALL", "Analyzer", "fold", "fts_or", "fts_phrase", "plain_text", "tokenize",
    "trigrams",
]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def plain_text(text: str) -> str:
    """The unstemmed column's content: folded tokens joined by spaces."""
    return " ".join(tokenize(text))


def fts_phrase(term: str) -> str:
    """``term`` as a quoted FTS5 phrase (double quotes doubled)."""
    return '"' + term.replace('"', '""') + '"'


def fts_or(terms: Iterable[str]) -> str:
    """Quoted terms joined by OR; empty string when there are none."""
    return " OR ".join(fts_phrase(t) for t in terms)


def trigrams(text: str) -> set[str]:
    """Character trigrams of the folded text with whitespace runs collapsed to one space."""
    s = " ".join(_CONTROL.sub(" ", fold(text)).split())
    return {s[i : i + 3] for i in range(len(s) - 2)}
