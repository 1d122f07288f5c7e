"""The candidate sentences of the extractive answer and the cheap evidence about them: what is never
an answer (:func:`is_noise`, page footers), transcript windows cut at their cues
(:func:`transcript_units`), how much a sentence reads as prose in its language (a verse's translation
vs its transliteration or gloss), names compared across scripts (:func:`name_skeleton`) and the word a
question asks about (:func:`focus_word`). Pure functions on text; see ``answer/extractive.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from footnote.answer.instructions import is_instruction
from footnote.answer.types import Note
from footnote.records.fragments import Cue, TranscriptLocator
from footnote.text import STOP_WORDS, clean_text, edit_distance, is_stop, split_sentences, tokenize

__all__ = [
    "ANAPHOR",
    "LEADING_LOC",
    "answer_type",
    "carries_answer_type",
    "close_spelling",
    "continues",
    "cross_script_names",
    "cue_texts",
    "focus_word",
    "is_noise",
    "is_unended",
    "name_skeleton",
    "name_spelling",
    "names_shared",
    "note_sentences",
    "prose_likeness",
    "strip_reference_marks",
    "transcript_units",
]

# --- candidates ----------------------------------------------------------------------------------

_FOOTER = re.compile(
    r"(?i)(?:^|[\s—–|·-])(?:page|p\.|pp\.|стр\.?|страница|seite|página|pagina)\s*\d+(?:\s*(?:of|из|/)\s*\d+)?\s*$"
    r"|^\s*(?:[-–—]\s*)?\d{1,4}(?:\s*[-–—])?\s*$"
    r"|^\s*\d+\s*/\s*\d+\s*$"
    r"|\((?:page|p\.|pp\.|стр\.?|страница)\s*\d+\)\s*$"  # a table-of-contents entry
)
_BOILERPLATE = re.compile(
    r"(?i)(?:©|\(c\)\s*\d{4}|all rights reserved|все права защищены|table of contents|^contents$|^содержание$"
    r"|^https?://\S+$|^www\.\S+$)"
)
_MD_HEADING = re.compile(r"^\s*#{1,6}\s")
# A question put in other words ("You ask how we decide…") and the talk's greetings and sign-offs.
_REPORTED = re.compile(
    r"(?i)^(?:(?:you|they|he|she|people|readers?|listeners?)\s+(?:often\s+|sometimes\s+)?"
    r"(?:ask|asked|wonder|wondered|enquire|inquire)d?\b|(?:вы|ты|они|читатели|слушатели)\s+(?:часто\s+)?"
    r"(?:спрашива|интересу)\w*|the question (?:is|was)\b|вопрос в том)"
    r"|^(?:good (?:morning|afternoon|evening)|hello|welcome|thank you|thanks for|добрый (?:день|вечер)|"
    r"доброе утро|здравствуйте|спасибо за)\b"
)
_LETTER = re.compile(r"[^\W\d_]")
_END = re.compile(r"[.!?…:;»”\"')\]]$")
#: A clause ending in ':' of at most this many words introduces what follows and is no answer alone.
_INTRODUCER_WORDS = 8
#: A line without an ending of at most this many words is a heading (in any note; a letter's longer dateline or
#: signature: ``extractive.unended_line_kinds``).
_HEADING_WORDS = 5


def is_unended(sentence: str, max_words: int) -> bool:
    """A line of at most ``max_words`` words without a sentence's ending (a letter's dateline, closing, signature)."""
    s = sentence.strip()
    return bool(s) and len(s.split()) <= max_words and not _END.search(s)


def is_noise(sentence: str) -> bool:
    """A candidate that is never an answer: a question (also one reported: "You ask how…"), a page
    header/footer, boilerplate (greetings, copyright), a heading or fragment (< 3 words, or a short
    line without an ending), a short introducer ending in ':' (its list or formula follows, or was lost
    in a PDF's text), a piece that starts with punctuation (a cut sentence's tail), mostly not letters, an
    instruction to a model planted in the passage (:func:`~footnote.answer.instructions.is_instruction`)."""
    s = sentence.strip()
    if not s or s.endswith("?") or s.endswith("?»") or s.endswith("?\""):
        return True
    if s[0] in ".,;:!?":
        return True  # the tail of a sentence the splitter cut (a PDF's formula: ". , xn ∈ K, sodass …")
    if _FOOTER.search(s) or _BOILERPLATE.search(s) or _MD_HEADING.match(s) or _REPORTED.search(s):
        return True
    if is_instruction(s):
        return True  # an instruction to a model planted in a passage is quoted data, never an answer (issue 39 §2)
    words = s.split()
    if len(words) < 3:
        return True
    if is_unended(s, _HEADING_WORDS):
        return True  # a heading-like line
    if len(words) <= _INTRODUCER_WORDS and s.endswith(":"):
        return True  # an introducer whose list or formula follows ("heißt Metrik, wenn gilt:"): says nothing alone
    letters = len(_LETTER.findall(s))
    return letters < 0.5 * len(s.replace(" ", ""))


def cue_texts(note: Note, cues: Sequence[Cue]) -> list[str] | None:
    """The cue texts inside a transcript note's window, from its track's cues (``Store.get_cues``),
    or None when the note is not a transcript window made of exactly those cues."""
    loc = note.fragment.locator
    if not isinstance(loc, TranscriptLocator) or not cues:
        return None
    texts = [c.text for c in cues if c.start_ms >= loc.start_ms and c.end_ms <= loc.end_ms]
    if " ".join(" ".join(texts).split()) != " ".join(note.fragment.text.split()):
        return None  # the window is not exactly these cues (a cue split by the size cap): use the text
    return texts


_CUE_END = re.compile(r"[.!?…;:]['\"»”)\]]*$")


def transcript_units(cues: Sequence[str], max_words: int) -> list[str]:
    """Sentences of a transcript window made of whole cues: a unit ends at a cue ending a clause
    (``. ! ? … ; :``) or when it reaches ``max_words``; a cue with no letters (a sonnet's number) is
    a unit of its own."""
    out: list[str] = []
    buf: list[str] = []
    words = 0
    for cue in cues:
        c = " ".join(clean_text(cue).split())
        if not c:
            continue
        if not _LETTER.search(c):
            if buf:
                out.append(" ".join(buf))
                buf, words = [], 0
            out.append(c)
            continue
        n = len(c.split())
        if buf and words + n > max_words:
            out.append(" ".join(buf))
            buf, words = [], 0
        buf.append(c)
        words += n
        if _CUE_END.search(c):
            out.append(" ".join(buf))
            buf, words = [], 0
    if buf:
        out.append(" ".join(buf))
    return out


_TAIL_AFTER_END = re.compile(r"^(.*[.!?…][\"'»”)\]]*)\s+(\S.*)$")


def _without_footer(line: str) -> str:
    """``line`` without a page header/footer — the whole line, or its tail after a sentence end
    ("… the principal keeper directs. The Keeper's Handbook — Marrowick Light Page 2")."""
    stripped = line.strip()
    if not _FOOTER.search(stripped):
        return line
    m = _TAIL_AFTER_END.match(stripped)
    if m and len(m.group(2).split()) <= 12 and _FOOTER.search(m.group(2)):
        return m.group(1)  # "log. The Keeper's Handbook — Marrowick Light Page 3" → "log."
    return "" if len(stripped.split()) <= 12 else line


_REFERENCE_MARK = re.compile(r"[ \t]?\[(?:(?:note|nb|n)\s?)?(?:\d{1,3}(?:\s*[,–-]\s*\d{1,3})*|citation needed)\](?=[\s.,;:!?)\]\[]|$)", re.IGNORECASE)


def strip_reference_marks(text: str) -> str:
    """``text`` without the source's own reference marks (a Wikipedia ``…in 2010.[1]``, ``[note 7]``,
    ``[2][3]``, ``[citation needed]``): quoted, they would read as the answer's citations (``[1]`` is also how the
    answer cites its first note) and hide a sentence end (``2010.[1] It…`` is not cut)."""
    return _REFERENCE_MARK.sub("", text)


def note_sentences(note: Note, cues: Sequence[str] | None, max_words: int) -> list[str]:
    """The sentences of a note (without the source's reference marks); a transcript window with an
    overlong sentence is cut at its cues."""
    lines = strip_reference_marks(note.fragment.text).split("\n")
    text = "\n".join(x for x in (_without_footer(ln) if ln.strip() else ln for ln in lines) if x or not x.strip())
    sents = split_sentences(text)
    if cues and any(len(s.split()) > max_words for s in sents):
        return transcript_units(cues, max_words)
    return [without_marker(s) for s in sents]


#: A list item's marker at a sentence's start: "2)", "(iii)", "a)", "(b)", "•" — the list's, not the
#: sentence's (a PDF's enumerations: "2) Jeder metrische Raum …" is quoted as "Jeder metrische Raum …").
_MARKER = re.compile(r"^(?:\(?(?:\d{1,2}|[a-zA-Z]|[ivxIVX]{2,5})\)|[•‣▪◦·])\s+(?=\S)")


def without_marker(sentence: str) -> str:
    """``sentence`` without a leading list marker (unchanged when nothing would be left)."""
    return _MARKER.sub("", sentence, count=1)


LEADING_LOC = re.compile(r"^\d+(?:[.:]\d+)+\s+(?=\w)")
_LATIN_LETTER = re.compile(r"[a-zA-Z\u00C0-\u024F\u1E00-\u1EFF]")
_CYR = re.compile(r"[\u0400-\u04FF]")


def prose_likeness(sentence: str, lang: str) -> float:
    """How much ``sentence`` reads as prose in ``lang`` (0–1): the share of its words that are that
    language's stop words, lowered for letters of another script (a gloss interleaving Devanagari)
    and for '?'-separated word lists. A translation scores high; IAST transliteration and word-by-word
    glosses low."""
    toks = tokenize(sentence)
    if not toks:
        return 0.0
    stop = STOP_WORDS.get(lang, frozenset())
    share = sum(1 for t in toks if t in stop) / len(toks)
    letters = _LETTER.findall(sentence)
    if letters:
        own = _CYR if lang == "ru" else _LATIN_LETTER
        foreign = sum(1 for ch in letters if not own.match(ch))
        share *= 1.0 - foreign / len(letters)
    marks = sentence.count("?")
    if marks >= 3:
        share *= 0.2
    return min(1.0, share * 2.5)


_TRANSLIT = str.maketrans({
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "j", "з": "z", "и": "i", "й": "i",
    "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f",
    "х": "h", "ц": "c", "ч": "ch", "ш": "sh", "щ": "sh", "ъ": "", "ы": "i", "ь": "", "э": "e", "ю": "u", "я": "a",
})
_SKELETON_DROP = re.compile(r"[aeiouyh']")


def _latinised(word: str) -> str:
    """``word`` in lower case, Cyrillic transliterated and Latin ``ph/ck/q/x/w/c/dzh/zh`` spelled as the
    transliteration writes them: the common ground of :func:`name_skeleton` and :func:`name_spelling`."""
    w = word.lower().replace("дж", "j").translate(_TRANSLIT)
    w = w.replace("ph", "f").replace("ck", "k").replace("q", "k").replace("x", "ks").replace("w", "v")
    return re.sub(r"c(?=[eiy])", "s", w).replace("c", "k").replace("dzh", "j").replace("zh", "j")


def name_skeleton(word: str) -> str:
    """A script-neutral consonant skeleton of a name: Cyrillic transliterated, Latin ``c/q/x/w/ph/dzh/zh``
    spelled as the transliteration writes them, vowels and ``h`` dropped — ``Пэнтерс`` and ``Panthers``
    both give ``pntrs``, ``Джаред`` and ``Jared`` ``jrd``, ``Варшава`` and ``Warsaw`` ``vrsv``."""
    w = re.sub(r"(.)\1+", r"\1", _latinised(word).replace("sh", "s"))
    if not w:
        return w
    first = "a" if w[0] in "aeiouy" else w[0]  # a leading vowel is kept (any vowel alike): Allen, Аллена → aln
    return re.sub(r"(.)\1+", r"\1", first + _SKELETON_DROP.sub("", w[1:]))


def name_spelling(word: str) -> str:
    """A name as the two scripts spell it alike, vowels kept: Cyrillic transliterated, Latin ``w/ck/ph/q/x/zh``
    as the transliteration writes them, ``y`` as ``i``, doubled letters single — ``Marrowick`` and ``Марровик``
    both give ``marovik``, ``Марровике`` one letter more (:func:`close_spelling`). Tighter than
    :func:`name_skeleton`, which lets ``Морвик`` pass for ``Marrowick``."""
    w = _latinised(word).replace("kh", "h").replace("sh", "s").replace("y", "i").replace("'", "")
    return re.sub(r"(.)\1+", r"\1", w)


def close_spelling(a: str, b: str) -> bool:
    """Whether two :func:`name_spelling` forms are one name: equal, or — from five letters — one edit apart (a case
    ending: ``marovike`` for ``marovik``)."""
    if a == b:
        return True
    return min(len(a), len(b)) >= 5 and abs(len(a) - len(b)) <= 1 and edit_distance(a, b) <= 1


def inflected_spelling(a: str, b: str) -> bool:
    """Whether two :func:`name_spelling` forms are one name in two cases: they share their first five letters or more
    and differ after them by at most two letters each («Карпов» — «Карпова», «Карповым»; «Сторожевом» —
    «Сторожевого»; "Karpov's" — «Карпова»). Never a letter changed: «Карлов» is not «Карпов»."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= 5 and len(a) - n <= 2 and len(b) - n <= 2


#: A capitalised word of three letters or more, Latin or Cyrillic (a name, mostly).
CAPITALISED = re.compile(r"\b[A-ZА-ЯЁ][^\W\d_]{2,}")


def cross_script_names(text: str) -> set[str]:
    """Skeletons of the capitalised words of ``text`` that are not stop words (names, mostly)."""
    out = set()
    for i, m in enumerate(CAPITALISED.finditer(text)):
        w = m.group(0)
        if i == 0 and m.start() == 0 and w.lower() in STOP_WORDS.get("ru", frozenset()) | STOP_WORDS.get("en", frozenset()):
            continue
        if w.lower() in STOP_WORDS["ru"] or w.lower() in STOP_WORDS["en"]:
            continue
        sk = name_skeleton(w)
        if len(sk) >= 3:
            out.add(sk)
    return out


def names_shared(qnames: set[str], snames: set[str]) -> int:
    """How many of the question's name skeletons the sentence carries (equal, or one a 4+ prefix of the other)."""
    n = 0
    for q in qnames:
        if q in snames or any(len(x) >= 4 and len(q) >= 4 and (x.startswith(q[:4]) and q.startswith(x[:4]))
                              for x in snames):
            n += 1
    return n


ANAPHOR = re.compile(
    r"(?i)^(?:it|its|this|that|these|those|they|their|them|he|she|his|her|there|such|он|она|оно|они|его|её|ее|"
    r"их|это|этот|эта|эти|там|тогда|так)\b"
)
_FOCUS = re.compile(
    r"(?i)^\s*(?:how\s+(?:many|much|long|often|old|far|large|big|tall|high)|what|which|сколько|как\s+(?:долго|часто)|"
    r"как(?:ой|ая|ое|ие|ого|ую|им|ом|их|ова|ов|ово)|котор\w+)\s+([^\W\d_][\w'-]*)"
)


_ASKS_NUMBER = re.compile(
    r"(?i)\b(?:how\s+(?:many|much|long|old|far|large|big|tall|high)|what\s+(?:year|percentage|percent|number|amount|age)|"
    r"when|in\s+which\s+year|сколько|когда|в\s+каком\s+году)\b"
)
_ASKS_NAME = re.compile(r"(?i)\b(?:who|whom|whose|where|кто|кого|кому|кем|чей|чья|чьё|где)\b")
_NUMBER_WORDS = frozenset({
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "twenty",
    "hundred", "thousand", "million", "billion", "half", "dozen",
})
_CONTINUES = re.compile(
    r"(?i)^(?:as\s+such|as\s+a\s+result|then|thus|therefore|hence|usually|typically|however|instead|consequently|"
    r"in\s+turn|later|during\s+(?:this|that)|after\s+(?:this|that)|because\s+of\s+this|in\s+addition)\b"
)


def answer_type(question: str) -> str | None:
    """What kind of thing the question asks for: ``"number"`` (how many, when, what year…), ``"name"``
    (who, whose, where…), or None."""
    q = clean_text(question)
    if _ASKS_NUMBER.search(q):
        return "number"
    if _ASKS_NAME.search(q):
        return "name"
    return None


def carries_answer_type(sentence: str, question: str, kind: str | None) -> bool:
    """Whether ``sentence`` holds something of the asked kind that the question does not already say: a
    number (digits or a number word) for ``"number"``, a capitalised word past the sentence's first for
    ``"name"``. True when the kind is unknown."""
    if kind is None:
        return True
    qwords = {w.casefold() for w in tokenize(question)}
    words = re.findall(r"[^\W_][\w'’-]*", clean_text(sentence))
    if kind == "number":
        return any((w.isdigit() or w.casefold() in _NUMBER_WORDS) and w.casefold() not in qwords for w in words)
    return any(w[:1].isupper() and w.casefold() not in qwords and not is_stop(w) for w in words[1:])


def continues(sentence: str) -> bool:
    """Whether ``sentence`` continues the one before it (a connective or a pronoun opens it)."""
    s = clean_text(sentence).lstrip()
    return bool(_CONTINUES.match(s) or ANAPHOR.match(s))


def focus_word(question: str) -> str | None:
    """The word a question asks about right after its question word — "how many *points*",
    "сколько *часов*", "what *year*" — when it is a content word; else None."""
    m = _FOCUS.match(clean_text(question))
    if m is None:
        return None
    word = m.group(1)
    return None if is_stop(word) or len(word) < 2 else word
