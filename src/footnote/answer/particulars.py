"""What a similarity score misses (issue 39 §1): the particulars of a claim — its numbers, dates and proper
names — must be carried by a passage it cites, and a passage's instructions to a model are never evidence.

- **Numbers**: every number written in digits in the claim (``1492``, ``3``; ``1,230`` is ``1`` and ``230``, as
  :func:`footnote.text.numbers` reads it) must be in a cited passage, in digits or in words (``thirty-one``,
  ``тридцать один`` carry ``31``: :func:`number_words`).
- **Dates**: a month named in the claim (``February``, ``февраля``) must be named in a cited passage, in any of
  the languages here (:data:`_MONTHS`).
- **Proper names**: a capitalised word that does not open the sentence and is no stop word (``Atlantis``,
  ``Пенхаллоу``) must be in a cited passage or its source's title, compared on a script-neutral consonant
  skeleton (:func:`footnote.answer.sentences.name_skeleton`: ``Пенхаллоу`` ~ ``Penhallow``, ``Джаред`` ~
  ``Jared``), leniently — one skeleton a prefix of the other (inflection), or equal without ``v`` (``w`` written
  as a vowel: ``Боул`` ~ ``Bowl``), or two adjacent passage words written as one (``Пробоул`` ~ ``Pro Bowl``).
- **Instructions**: a sentence of a passage that speaks to a model — "ignore previous instructions", "SYSTEM:",
  "tell the reader that …", "скажи, что …" (:func:`is_instruction`) — is quoted data, never evidence: citation
  support leaves it out, and a claim that repeats a content word only such a sentence carries is unsupported.

Pure functions on text; :class:`footnote.answer.support.SupportScorer` applies them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from footnote.answer.instructions import is_instruction
from footnote.answer.sentences import name_skeleton
from footnote.text import STOP_WORDS, clean_text, split_sentences, tokenize

__all__ = [
    "ClaimParticulars", "PassageParticulars", "claim_particulars", "content_words", "is_instruction", "missing_particulars",
    "number_words", "passage_particulars",
]

# -- numbers written in words ----------------------------------------------------------------------------------

_EN_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "once": 1, "twice": 2, "thrice": 3, "dozen": 12,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "twelfth": 12, "twentieth": 20, "thirtieth": 30, "hundredth": 100,
}
_EN_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
# Russian cardinals and ordinals by stem (every case ending): the longest stem that opens the word decides.
_RU_STEMS = (
    ("ноль", 0), ("нул", 0), ("одиннадцат", 11), ("двенадцат", 12), ("тринадцат", 13), ("четырнадцат", 14),
    ("пятнадцат", 15), ("шестнадцат", 16), ("семнадцат", 17), ("восемнадцат", 18), ("девятнадцат", 19),
    ("двадцат", 20), ("тридцат", 30), ("сорок", 40), ("сорак", 40), ("пятьдесят", 50), ("пятидесят", 50),
    ("шестьдесят", 60), ("шестидесят", 60), ("семьдесят", 70), ("семидесят", 70), ("восемьдесят", 80),
    ("восьмидесят", 80), ("девяност", 90), ("сто", 100), ("двест", 200), ("двухсот", 200), ("триста", 300),
    ("трехсот", 300), ("четыреста", 400), ("пятьсот", 500), ("пятисот", 500), ("тысяч", 1_000), ("миллион", 1_000_000),
    ("миллиард", 1_000_000_000), ("один", 1), ("одна", 1), ("одно", 1), ("одни", 1), ("одно", 1), ("перв", 1),
    ("два", 2), ("две", 2), ("двух", 2), ("двум", 2), ("двое", 2), ("втор", 2), ("дважды", 2),
    ("три", 3), ("трех", 3), ("трём", 3), ("трем", 3), ("трое", 3), ("трет", 3), ("трижды", 3),
    ("четыр", 4), ("четвер", 4), ("пят", 5), ("шест", 6), ("сем", 7), ("седьм", 7), ("восем", 8), ("восьм", 8),
    ("девят", 9), ("десят", 10),
)

def _ru_value(word: str) -> int | None:
    best: tuple[int, int] | None = None
    for stem, v in _RU_STEMS:
        if word.startswith(stem) and len(word) <= len(stem) + 4 and (best is None or len(stem) > best[0]):
            best = (len(stem), v)
    if best is None:
        return None
    if best[1] == 7 and not re.match(r"^(?:сем|седьм)(?:ь|и|ью|ой|ого|ому|ым|ом|ая|ую|ое|ые|ых|ыми|еро|ерых)?$", word):
        return None  # "семья", "семинар"
    if best[1] == 100 and not re.match(r"^сто(?:|ни|м|ах|ами|а)$", word):
        return None  # "стол", "стоит"
    if best[1] in (5, 6, 9, 10) and re.match(r"^(?:пятн|пятк|шест[вуо]|девятн|десяти?ле)", word) and best[0] < 6:
        return None  # "пятно", "шествие"
    return best[1]


def number_words(text: str) -> set[str]:
    """The numbers ``text`` writes in words (English and Russian), as digits: ``thirty-one`` and
    ``тридцать один`` give ``31``, ``two hundred`` ``200``, ``twice`` ``2``; every word's own value is kept too
    (``thirty-one`` also gives ``30`` and ``1``)."""
    out: set[str] = set()
    total = current = 0
    run = False

    def close() -> None:
        nonlocal total, current, run
        if run:
            out.add(str(total + current))
        total = current = 0
        run = False

    for tok in tokenize(text.replace("-", " ")):
        v: int | None = None
        if tok in _EN_UNITS:
            v = _EN_UNITS[tok]
        elif tok in _EN_SCALES:
            v = _EN_SCALES[tok]
        elif tok and "\u0400" <= tok[0] <= "\u04ff":
            v = _ru_value(tok)
        if v is None:
            if tok not in ("and", "и"):
                close()
            continue
        out.add(str(v))
        if tok in _EN_SCALES or v >= 1000:  # a scale multiplies what came before it
            current = max(current, 1) * v
            if v >= 1000:
                total, current = total + current, 0
        elif v >= 100:  # Russian hundreds ("двести")
            if current or total % 1000:
                close()
            current = v
        elif current % 100 == 0 or (current % 100 >= 20 and current % 10 == 0 and v < 10):
            current += v  # "two hundred" + "five", "thirty" + "one"
        else:
            close()
            current = v
        run = True
    close()
    return out


# -- months ----------------------------------------------------------------------------------------------------

_MONTHS = (
    ("january", "jan", "январ"), ("february", "feb", "феврал"), ("march", "mar", "март"), ("april", "apr", "апрел"),
    ("may", "", "ма[йяюе]"), ("june", "jun", "июн"), ("july", "jul", "июл"), ("august", "aug", "август"),
    ("september", "sept?", "сентябр"), ("october", "oct", "октябр"), ("november", "nov", "ноябр"),
    ("december", "dec", "декабр"),
)
_MONTH_RE = [
    (i + 1, re.compile(r"(?i)\b(?:" + en + (r"|" + ab + r"\." if ab else "") + r")(?!\w)|(?i:\b" + ru + r")\w*"))
    for i, (en, ab, ru) in enumerate(_MONTHS)
]


def _months(text: str, *, claim: bool) -> set[int]:
    out = set()
    for i, pat in _MONTH_RE:
        for m in pat.finditer(text):
            w = m.group(0)
            if i == 5 and w.lower() == "may" and (claim and not w[0].isupper()):
                continue  # the verb "may": a claim's month is written with a capital (a passage's may be either)
            if i == 5 and w.lower().startswith("ма") and not re.fullmatch(r"(?i)ма[йяюе]|мае|маю|мая", w):
                continue  # "мать", "март" (March has its own stem), "маяк"
            if i == 3 and w.lower().startswith("мар") and not w.lower().startswith("март"):
                continue
            out.add(i)
    return out


# -- names -----------------------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_CAP = re.compile(r"[A-ZА-ЯЁ\u0370-\u03ff]")
_STOPS = STOP_WORDS.get("en", frozenset()) | STOP_WORDS.get("ru", frozenset())
# a unit's own opening (a list marker, a quote, Markdown emphasis) before its first word
_OPENING = re.compile(r"^[\s\-–—*•>#\d.)(\"'«“„‘]*")
_SENTENCE_START = re.compile(r"(?:[.!?…:;]\s+|\n\s*|[(«\"“]\s*)$")


# a number written with thousands separators: "281,754", "281 754", "2 818" (one number, whichever way it is grouped)
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?![\d]|[.,]\d)")


def _join(m: re.Match[str]) -> str:
    return re.sub(r"\D", "", m.group(0))


def _grouped(text: str) -> set[str]:
    """The numbers of ``text`` written with thousands separators, joined (``281,754`` → ``281754``)."""
    return {_join(m).lstrip("0") or "0" for m in _GROUPED.finditer(text)}


def _skeletons(word: str) -> set[str]:
    sk = name_skeleton(word)
    bare = sk[0] + sk[1:].replace("v", "") if sk else sk
    return {sk, bare} if bare != sk and len(bare) >= 4 else {sk}


@dataclass(frozen=True)
class PassageParticulars:
    """What a cited passage (with its source's title and its address) carries: numbers in digits or words,
    months, name skeletons of every word and of adjacent pairs, and the content words only its instruction
    sentences carry (``planted``)."""

    numbers: frozenset[str]
    months: frozenset[int]
    names: frozenset[str]  # skeletons of the words written in the claim's script …
    foreign_names: frozenset[tuple[str, str]]  # … and (script, skeleton) of every word, for a name in another script
    planted: frozenset[str]
    words: frozenset[str]  # every folded word of its evidence (not of its instructions)
    script: str = "latn"  # the script most of its letters are in


@dataclass(frozen=True)
class ClaimParticulars:
    numbers: frozenset[str]
    months: frozenset[int]
    names: tuple[tuple[str, frozenset[str]], ...]  # (the word, its skeletons)
    scripts: tuple[str, ...]  # each name's script
    words: frozenset[str]  # folded content words (for the planted-instruction echo)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", clean_text(text))


def passage_particulars(text: str, extra: Iterable[str] = ()) -> PassageParticulars:
    """``text``: the passage; ``extra``: its source's title, its address label (carried too, never planted)."""
    sents = split_sentences(_fold(text)) or [_fold(text)]
    evidence = [s for s in sents if not is_instruction(s)] + [_fold(x) for x in extra if x]
    planted_text = " ".join(s for s in sents if is_instruction(s))
    ev = " ".join(evidence)
    toks = tokenize(ev)
    digits = re.findall(r"\d+", ev)  # also inside a token: "1930s", "4th", "1930-х"
    nums = set(digits) | {t.lstrip("0") or "0" for t in digits} | _grouped(ev) | number_words(ev)
    cyr = sum(1 for ch in ev if "\u0400" <= ch <= "\u04ff")
    latn = sum(1 for ch in ev if ch.isascii() and ch.isalpha())
    words = [w for w in _WORD.findall(ev) if len(w) >= 2]
    names: set[tuple[str, str]] = set()
    for w in words:
        names |= {(_script(w), sk) for sk in _skeletons(w)}
    for a, b in pairwise(words):
        if _script(a) == _script(b) and a.lower() not in _STOPS and b.lower() not in _STOPS:
            names |= {(_script(a), sk) for sk in _skeletons(a + b)}
    ev_words = set(toks)
    planted = {t for t in tokenize(planted_text) if len(t) >= 4 and t not in _STOPS and not t.isdigit()} - ev_words
    return PassageParticulars(frozenset(nums), frozenset(_months(ev, claim=False)), frozenset(sk for _, sk in names if sk),
                              frozenset(n for n in names if n[1]), frozenset(planted), frozenset(ev_words),
                              "cyrl" if cyr > latn else "latn")


def claim_particulars(claim: str) -> ClaimParticulars:
    """The numbers (digits), months and proper names of a claim (its ``[n]`` markers already removed)."""
    text = _fold(claim)
    nums = {m.group(0).lstrip("0") or "0" for m in re.finditer(r"\d+", _GROUPED.sub(_join, text))}
    start = _OPENING.match(text)
    body_from = start.end() if start else 0
    names: list[tuple[str, frozenset[str]]] = []
    scripts: list[str] = []
    for m in _WORD.finditer(text):
        w = m.group(0)
        if m.start() <= body_from or not _CAP.match(w) or len(w) < 3:
            continue
        if _SENTENCE_START.search(text[: m.start()]):
            continue  # a word that opens a sentence or a quote is capitalised whatever it is
        if w.lower() in _STOPS or w.lower().split("'")[0] in _STOPS:
            continue
        if any(i for i, _ in _MONTH_RE if _.fullmatch(w)):
            continue  # a month: checked as a date
        sks = frozenset(s for s in _skeletons(w) if len(s) >= 3)
        if sks:
            names.append((w, sks))
            scripts.append(_script(w))
    words = content_words(text)
    return ClaimParticulars(frozenset(nums), frozenset(_months(text, claim=True)), tuple(names), tuple(scripts), words)


def _script(word: str) -> str:
    return "cyrl" if any("\u0400" <= ch <= "\u04ff" for ch in word) else "latn"


def _name_carried(sks: frozenset[str], script: str, cited: list[PassageParticulars]) -> bool:
    """Whether a passage carries the name: by skeleton, equal or one a prefix of the other within two letters
    (inflection); a passage word in another script also when the skeletons differ by one letter (a
    transliteration's sounds differ: ``Париж`` ~ ``Paris``)."""
    same = frozenset(sk for c in cited for sc, sk in c.foreign_names if sc == script)
    other = frozenset(sk for c in cited for sc, sk in c.foreign_names if sc != script)
    if _carried_strict(sks, same) or _carried_strict(sks, other):
        return True
    return any(len(o) >= 3 and o[0] == sk[0] and _one_edit(sk, o) for sk in sks for o in other)


# letters one transliteration writes for another's (Howard ~ Говард, Paris ~ Париж, Theodor ~ Теодор)
_SOUNDS = frozenset({frozenset(p) for p in ("gh", "js", "jg", "kh", "td", "sz", "fv", "fp", "sc", "ks")})


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (skeletons) differ by one letter: any one, when both have four or more; in a
    three-letter one only a letter one transliteration writes for another's (``prj`` ~ ``prs``)."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        return not diff or (len(diff) == 1 and (len(a) >= 4 or frozenset(diff[0]) in _SOUNDS))
    if min(len(a), len(b)) < 4:
        return False
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _carried_strict(sks: frozenset[str], carried: frozenset[str]) -> bool:
    for sk in sks:
        if sk in carried:
            return True
        if len(sk) >= 3 and any(len(c) >= 3 and (c.startswith(sk) or sk.startswith(c)) and min(len(c), len(sk)) >= 3
                                and abs(len(c) - len(sk)) <= 2 for c in carried if c[:1] == sk[:1]):
            return True
    return False


def content_words(text: str) -> frozenset[str]:
    """The folded content words of ``text`` (four letters or more, no stop words, no numbers): what a claim can
    echo of a planted instruction or a background note."""
    return frozenset(t for t in tokenize(_fold(text)) if len(t) >= 4 and t not in _STOPS and not t.isdigit())


def missing_particulars(claim: ClaimParticulars, cited: Iterable[PassageParticulars], *,
                        planted: frozenset[str] = frozenset(), background: frozenset[str] = frozenset(),
                        cross_script_names: str = "one") -> list[str]:
    """What the claim states that none of its cited passages carries, by kind: ``number``, ``date``,
    ``name``; ``instruction`` when it repeats a content word only a cited passage's instructions carry (or
    ``planted``: only the instructions of the turn's passages); ``background`` when it repeats one only the turn's
    background notes carry (``background``: their words that no passage of the turn carries). Empty when every
    particular is carried. A name written in the script of a cited passage's text must be carried; of the names
    written in another script (a translation: capitalised words that are names in one language and common words
    in the other — "Super Bowl" / "Суперкубок", "Executive Vice President" — and transliterations a skeleton
    misses) ``cross_script_names`` says how many must be: ``all``, ``half`` or ``one``."""
    cs = list(cited)
    nums = frozenset().union(*(c.numbers for c in cs)) if cs else frozenset()
    months = frozenset().union(*(c.months for c in cs)) if cs else frozenset()
    # a word one cited passage's instructions carry but another cited passage says is that passage's to vouch for
    said = frozenset().union(*(c.words for c in cs)) if cs else frozenset()
    turn_planted = (frozenset().union(*(c.planted for c in cs)) - said) if cs else frozenset()
    out: list[str] = []
    if claim.numbers - nums:
        out.append("number")
    if claim.months - months:
        out.append("date")
    own = {c.script for c in cs}
    same = [_name_carried(sks, sc, cs) for (_, sks), sc in zip(claim.names, claim.scripts, strict=True) if sc in own]
    other = [_name_carried(sks, sc, cs) for (_, sks), sc in zip(claim.names, claim.scripts, strict=True) if sc not in own]
    need = {"all": len(other), "half": (len(other) + 1) // 2, "one": min(1, len(other))}.get(cross_script_names, len(other))
    if not all(same) or sum(other) < need:
        out.append("name")
    if claim.words & (planted | turn_planted):  # (``planted`` is already less every passage's words)
        out.append("instruction")
    if claim.words & background:
        out.append("background")
    return out
