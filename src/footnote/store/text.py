"""Tokenising, folding and stemming shared by every store backend.

Rules (the same at indexing and at query time, so both sides always agree):

1. **Normalise**: lower-case, Unicode NFC.
2. **Fold**: Latin letters lose their diacritics (IAST ``karmaṇy evādhikāras`` → ``karmany evadhikaras``),
   stray combining marks are dropped (Russian stress accents, IAST ``l̥``), ``ё`` → ``е``. Cyrillic
   letters such as ``й`` keep their identity.
3. **Tokenise**: maximal runs of letters and digits (``[^\\W_]+``) with the combining marks inside
   them (Devanagari vowel signs and viramas); everything else separates.
4. **Stem** (the stemmed column only): Snowball via PyStemmer by language (:data:`SNOWBALL`: ``ru`` →
   ``russian``, ``de`` → ``german``, … 28 languages); any other language is left unstemmed.

The unstemmed ("plain") column holds the folded tokens, so IAST matches typed with or without
diacritics; the stemmed column holds the stems. A query for the stemmed column is expanded to the
query's own tokens plus their stems in ``lang`` (or in both Russian and English when ``lang`` is None).
Query terms are always emitted as quoted phrases, so user text can never inject FTS syntax.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence

import Stemmer

#: Fragment/query language (ISO 639-1) → Snowball algorithm. The algorithm's name is also the name of
#: PostgreSQL's text search configuration (``to_tsvector('german', …)``), so both backends stem a
#: language alike. Only languages that PyStemmer *and* PostgreSQL (16+) both stem are listed; any
#: other language (Polish, Czech, Ukrainian, Sanskrit…) is left unstemmed by both.
SNOWBALL: dict[str, str] = {
    "ar": "arabic", "ca": "catalan", "da": "danish", "de": "german", "el": "greek", "en": "english",
    "es": "spanish", "eu": "basque", "fi": "finnish", "fr": "french", "ga": "irish", "hi": "hindi",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}

#: Languages a query is stemmed in when its own language is unknown.
DEFAULT_QUERY_LANGS: tuple[str, ...] = ("ru", "en")



def _mark_class() -> str:
    """A regex character class of the BMP's combining marks (Mn, Mc, Me): Devanagari vowel signs and
    viramas stay inside their word (``धर्मक्षेत्रे`` is one token, not five)."""
    ranges: list[tuple[int, int]] = []
    for cp in range(0x0300, 0x10000):
        if unicodedata.category(chr(cp)).startswith("M"):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "[" + "".join(f"\\u{a:04x}-\\u{b:04x}" if a != b else f"\\u{a:04x}" for a, b in ranges) + "]"


# Word characters plus combining marks; "_" is turned into a space before matching (see tokenize).
_TOKEN = re.compile(r"[\w" + _mark_class()[1:-1] + "]+", re.UNICODE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def _build_fold_table() -> dict[int, str | None]:
    table: dict[int, str | None] = {}
    # Latin-1 Supplement, Latin Extended-A/B, IPA-free Latin Extended Additional (IAST lives here).
    ranges = [(0x00C0, 0x024F), (0x1E00, 0x1EFF)]
    for lo, hi in ranges:
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            base = "".join(c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
            if base and base != ch and all(ord(c) < 0x250 for c in base):
                table[cp] = base
    for cp in range(0x0300, 0x0370):  # combining diacritical marks left after NFC
        table[cp] = None
    for cp in range(0x1AB0, 0x1B00):
        table[cp] = None
    for cp in range(0x1DC0, 0x1E00):
        table[cp] = None
    table[ord("ё")] = "е"
    table[ord("Ё")] = "Е"
    return table


_FOLD = _build_fold_table()


_NEEDS_FOLD = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_FOLD)) + "]")


def fold(text: str) -> str:
    """Lower-case, NFC, and fold diacritics as described in the module docstring."""
    s = text.lower()
    if s.isascii():
        return s
    s = unicodedata.normalize("NFC", s)
    return s.translate(_FOLD) if _NEEDS_FOLD.search(s) else s


def tokenize(text: str) -> list[str]:
    """Folded tokens of ``text`` (letters and digits)."""
    return _TOKEN.findall(fold(text).replace("_", " "))


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


class Analyzer:
    """Stems tokens by language. Stemmer instances are cached per language *and per thread*
    (PyStemmer objects are not thread-safe). Cheap to create; one per store."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _stemmer(self, lang: str) -> Stemmer.Stemmer | None:
        algo = SNOWBALL.get(lang)
        if algo is None:
            return None
        cache: dict[str, Stemmer.Stemmer] | None = getattr(self._local, "stemmers", None)
        if cache is None:
            cache = {}
            self._local.stemmers = cache
        st = cache.get(algo)
        if st is None:
            st = Stemmer.Stemmer(algo)
            cache[algo] = st
        return st

    def stem(self, tokens: Sequence[str], lang: str) -> list[str]:
        """Stems of ``tokens`` in ``lang`` (the tokens themselves for an unstemmed language)."""
        st = self._stemmer(lang)
        if st is None:
            return list(tokens)
        return list(st.stemWords(tokens))

    def query_terms(self, query: str, *, stemmed: bool, lang: str | None = None) -> list[str]:
        """Distinct query terms, in first-seen order. Unstemmed: the folded tokens. Stemmed: each
        token and its stems in ``lang`` (or in Russian and English when ``lang`` is None)."""
        toks = tokenize(query)
        if not stemmed:
            return list(dict.fromkeys(toks))
        langs = (lang,) if lang else DEFAULT_QUERY_LANGS
        out: dict[str, None] = {}
        stems = [self.stem(toks, lg) for lg in langs]
        for i, t in enumerate(toks):
            out[t] = None
            for s in stems:
                out[s[i]] = None
        return list(out)
