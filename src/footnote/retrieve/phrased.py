"""Addresses written in words: "verse 2.1 of the Harbour Book", "Bhagavad-gita chapter 2 verse 47",
"second chapter, verse 47", "Гита, глава 2, стих 47", "вторая глава, стих 47", "глава 2".

The chapter and verse words come from settings (``corpus.chapter_words``, ``corpus.verse_words``); book
names from :func:`footnote.retrieve.books.address_aliases` (settings plus the corpus's own books). Which
book: the one named anywhere in the question, else the corpus's only book; with neither, nothing is
read (a bare "chapter 2" of an unknown book is not an address). Ordinal words (first…twentieth,
первая…двадцатая) are language data, kept here like the stop words in :mod:`footnote.retrieve.plan`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from footnote.records.fragments import AddressLocator

_EN_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"]
_EN_CARDINALS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
# Russian ordinals by stem (every case and gender: вторая, второй, вторую …); longer stems first.
_RU_ORDINAL_STEMS = (("двадцат", 20), ("девятнадцат", 19), ("восемнадцат", 18), ("семнадцат", 17),
                     ("шестнадцат", 16), ("пятнадцат", 15), ("четырнадцат", 14), ("тринадцат", 13),
                     ("двенадцат", 12), ("одиннадцат", 11), ("десят", 10), ("девят", 9), ("восьм", 8),
                     ("седьм", 7), ("шест", 6), ("пят", 5), ("четв", 4), ("трет", 3), ("втор", 2), ("перв", 1))
_NUM = r"\d{1,4}(?:-?(?:st|nd|rd|th|я|й|ая|ой|ую))?"
_ORD_WORD = r"[^\W\d_]{3,14}"


def ordinal_value(word: str) -> int | None:
    """"second" → 2, "two" → 2, "вторая" → 2, "12th" → 12, "12" → 12; None for anything else."""
    w = word.lower()
    m = re.match(r"(\d{1,4})", w)
    if m:
        return int(m.group(1))
    if w in _EN_ORDINALS:
        return _EN_ORDINALS.index(w) + 1
    if w in _EN_CARDINALS:
        return _EN_CARDINALS.index(w) + 1
    for stem, n in _RU_ORDINAL_STEMS:
        if w.startswith(stem) and len(w) - len(stem) <= 4:
            return n
    return None


def _first_number(matches: list[re.Match[str]]) -> int | None:
    """The number of the earliest match whose ``n`` group reads as one ("chapter about" does not)."""
    for m in sorted(matches, key=lambda m: m.start()):
        n = ordinal_value(m.group("n"))
        if n is not None:
            return n
    return None


def _words(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted({w.lower() for w in words if w}, key=len, reverse=True))


def _book_in(text: str, aliases: Mapping[str, str]) -> str | None:
    """The first book named anywhere in ``text`` (whole words, separators optional), as its code."""
    best: tuple[int, str] | None = None
    low = text.lower()
    for alias, code in aliases.items():
        parts = [re.escape(p) for p in re.split(r"[\s\-‐‑–—_.]+", alias.lower()) if p]
        if not parts:
            continue
        # Russian names decline ("Гита" → "Гиты", "Гите"): a Cyrillic name of 4+ letters matches by its stem
        ending = ""
        if len(alias) >= 4 and re.search(r"[а-яё]$", alias.lower()):
            if parts[-1][-1] in "аяоеьйиы" and len(parts[-1]) > 2:
                parts[-1] = parts[-1][:-1]
            ending = r"[а-яё]{0,3}"
        pat = r"(?<![^\W_])" + r"[\s\-‐‑–—_.]*".join(parts) + ending + r"(?![^\W_])"
        m = re.search(pat, low)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), code)
    return best[1] if best else None


def parse_phrased_addresses(
    text: str,
    aliases: Mapping[str, str],
    chapter_words: Sequence[str],
    verse_words: Sequence[str],
    only_book: str | None = None,
) -> list[AddressLocator]:
    """The address a question spells out in words (at most one), or []."""
    ch, vs = _words(chapter_words), _words(verse_words)
    if not ch or not vs:
        return []
    num_or_ord = rf"(?:{_NUM}|{_ORD_WORD})"
    loc_re = r"\d{1,4}(?:[.:]\d{1,4}){1,3}(?:\s?[-–—‒]\s?\d{1,4}(?:[.:]\d{1,4}){0,3})?"
    verse_loc = re.search(rf"(?<![^\W_])(?:{vs})(?![^\W_])\.?\s*(?P<loc>{loc_re})(?!\d)", text, re.IGNORECASE)
    chapter_n = _first_number([
        *re.finditer(rf"(?<![^\W_])(?:{ch})(?![^\W_])\.?\s*(?P<n>{num_or_ord})(?![^\W_])", text, re.IGNORECASE),
        *re.finditer(rf"(?<![^\W_])(?P<n>{num_or_ord})\s+(?:{ch})(?![^\W_])", text, re.IGNORECASE),
    ])
    verse = (re.search(rf"(?<![^\W_])(?:{vs})(?![^\W_])\.?\s*(?P<n>\d{{1,4}}(?:\s?[-–—‒]\s?\d{{1,4}})?)(?![\d.:])", text,
                       re.IGNORECASE)
             or re.search(rf"(?<![^\W_])(?P<n>{_NUM})\s+(?:{vs})(?![^\W_])", text, re.IGNORECASE))
    if verse_loc is None and chapter_n is None:
        return []
    code = _book_in(text, aliases)
    if code is None and (verse_loc is not None or verse is not None):
        code = only_book  # "chapter 2, verse 47" in a one-book corpus; a bare "first chapter" is not enough
    if code is None:
        return []
    if verse_loc is not None:
        loc = re.sub(r"\s+", "", verse_loc.group("loc")).replace(":", ".")
        loc = re.sub(r"[–—‒]", "-", loc)
        return [AddressLocator(code, loc, f"{code} {loc}")]
    assert chapter_n is not None
    n = chapter_n
    if verse is not None:
        v = re.sub(r"\s+", "", verse.group("n"))
        first = ordinal_value(v.split("-")[0].rstrip("-"))
        if first is None:
            return []
        rest = re.sub(r"[–—‒]", "-", v)
        tail = rest.split("-", 1)[1] if "-" in rest else None
        loc = f"{n}.{first}" + (f"-{tail}" if tail else "")
        return [AddressLocator(code, loc, f"{code} {loc}")]
    return [AddressLocator(code, str(n), f"{code} {n}")]
