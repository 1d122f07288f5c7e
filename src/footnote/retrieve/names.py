"""Cross-script name evidence for the offline fusion: a Russian question names "Джаред Аллен", the
English passage says "Jared Allen" (or the other way round). Both sides are reduced to a consonant
skeleton (Cyrillic transliterated first; vowels dropped, doubled letters collapsed, similar consonants
merged), so an inflected Russian name ("Аллена") still meets its English spelling ("Allen" → "ln").

Capitalised words of 4+ letters in either script count as the question's names (sentence-initial
words are skipped); the evidence is the share of them found among a passage's capitalised-word
skeletons (a prefix match of 3+ letters counts, for inflection). Used only when the question and
the passage are in different languages.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_CAPWORD = re.compile(r"\b[A-ZА-ЯЁ][^\W\d_]{2,}", re.UNICODE)
_MULTI = (("дж", "j"), ("кс", "x"), ("кв", "q"), ("щ", "sh"), ("ч", "ch"), ("ш", "sh"), ("ж", "j"), ("х", "h"),
          ("ц", "c"))
_SINGLE = dict(zip("абвгдеёзийклмнопрстуфыьъэюя", [*"abvgdeeziyklmnoprstufy", "", "", "e", "u", "a"], strict=True))
_LATIN_FOLD = (("ph", "f"), ("th", "t"), ("ck", "k"), ("sch", "sh"), ("x", "ks"), ("qu", "kv"), ("w", "v"), ("c", "k"),
               ("q", "k"), ("z", "s"), ("j", "g"), ("h", ""))
_VOWELS = re.compile(r"[aeiouy]")
_DOUBLE = re.compile(r"(.)\1+")


def translit(word: str) -> str:
    w = word.lower()
    for a, b in _MULTI:
        w = w.replace(a, b)
    return "".join(_SINGLE.get(ch, ch) for ch in w)


@lru_cache(maxsize=65536)
def skeleton(word: str) -> str:
    """Consonant skeleton of a Latin-script word (transliterate Cyrillic first)."""
    w = word.lower()
    for a, b in _LATIN_FOLD:
        w = w.replace(a, b)
    return _DOUBLE.sub(r"\1", _VOWELS.sub("", w))


def question_names(question: str) -> list[str]:
    """Skeletons of the capitalised words (4+ letters, not sentence-initial) of ``question``."""
    out: list[str] = []
    words = _WORD.findall(question)
    for i, w in enumerate(words):
        if i == 0 or len(w) < 4 or not w[0].isupper():
            continue
        sk = skeleton(translit(w))
        if len(sk) >= 2 and sk not in out:
            out.append(sk)
    return out


@lru_cache(maxsize=8192)
def passage_skeletons(text: str) -> frozenset[str]:
    """Skeletons of a passage's capitalised words, either script (names are capitalised). Cached per
    text: the same passages come back search after search, and transliterating them was most of the
    fusion stage's time."""
    return frozenset(skeleton(translit(w)) for w in _CAPWORD.findall(text))


@lru_cache(maxsize=8192)
def _prefixes(skeletons: frozenset[str]) -> frozenset[str]:
    """Every prefix of 3+ letters of the skeletons of 3+ letters (the skeletons themselves included)."""
    return frozenset(sk[:j] for sk in skeletons if len(sk) >= 3 for j in range(3, len(sk) + 1))


def name_evidence(names: list[str], skeletons: frozenset[str]) -> float:
    """Share of ``names`` found in ``skeletons`` (exact, or a 3+ letter prefix either way): a name is
    found when it is a skeleton, a prefix of one (it is among their prefixes) or has one as its prefix
    (one of its own prefixes is a skeleton) — set lookups, not a scan of the passage's skeletons."""
    if not names:
        return 0.0
    prefixes = _prefixes(skeletons)
    found = 0
    for n in names:
        if n in skeletons or (len(n) >= 3 and (n in prefixes or any(n[:j] in skeletons for j in range(3, len(n))))):
            found += 1
    return found / len(names)
