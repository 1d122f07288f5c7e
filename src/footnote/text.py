"""The one text module: cleaning, folding, tokenising, stemming, stop words, content words, sentence
splitting and language detection — used alike by the store, retrieval (plan, gate), the answer layer
and evaluation, so "a content word" or "a token" means the same thing everywhere.

Rules (the same at indexing and at query time, so both sides always agree):

1. **Clean** (:func:`clean_text`): invisible characters are removed — zero-width space/joiners, soft
   hyphen, word joiner, BOM, bidi marks and every other format character (Unicode category ``Cf``) —
   so ``fog\\u200bhorn`` is ``foghorn``; control characters (a PDF's U+0004) become spaces.
2. **Fold** (:func:`fold`): cleaned, lower-case, Unicode NFKC (ligatures ``ﬁ`` → ``fi``, full-width
   forms), Latin letters lose their diacritics (IAST ``karmaṇy evādhikāras`` → ``karmany evadhikaras``),
   stray combining marks are dropped (Russian stress accents, IAST ``l̥``), ``ё`` → ``е``. Cyrillic
   letters such as ``й`` keep their identity. Plain ASCII text is only lower-cased (the fast path).
3. **Tokenise** (:func:`tokenize`): maximal runs of letters and digits with the combining marks inside
   them (Devanagari vowel signs and viramas); everything else separates.
4. **Stem** (:class:`Analyzer`): Snowball via PyStemmer by language (:data:`SNOWBALL`: ``ru`` →
   ``russian``, ``de`` → ``german``, … 28 languages); any other language is left unstemmed.
5. **Stop words** (:data:`STOP_WORDS`): one list per language; a *content word*
   (:func:`keywords`, :func:`content_terms`) is a word of two or more characters that is neither a stop
   word of any served language nor a number.
6. **Sentences** (:func:`split_sentences`): wrapped lines joined, sentence punctuation and real line
   breaks split, common abbreviations kept whole.

Stores built before step 1 (invisible characters) and NFKC were added keep the old tokens for the rare
words that contain such characters; re-ingesting those sources (``ingest --force``) brings them in line.
Everything else tokenises exactly as before, so no re-index is needed.
"""

from __future__ import annotations

import re
import sys
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache

import Stemmer

from footnote.records.lang import detect_lang

__all__ = [
    "ABBREVIATIONS", "DEFAULT_QUERY_LANGS", "SNOWBALL", "STOP_WORDS", "Analyzer", "clean_text", "content_terms",
    "detect_lang", "fold", "is_stop", "keywords", "mixed_script_words", "no_break_after", "sentence_breaks", "split_sentences", "starts_sentence", "strip_invisible",
    "tokenize",
]

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


# --- cleaning ------------------------------------------------------------------------------------


def _class_of(pred: object, lo: int = 0, hi: int = sys.maxunicode + 1) -> str:
    """A regex character class body of the code points for which ``pred(ch)`` holds."""
    ranges: list[tuple[int, int]] = []
    for cp in range(lo, hi):
        if pred(chr(cp)):  # type: ignore[operator]
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "".join(f"\\U{a:08x}-\\U{b:08x}" if a != b else f"\\U{a:08x}" for a, b in ranges)


# Format characters (Cf: ZWSP U+200B, ZWNJ/ZWJ, LRM/RLM, soft hyphen U+00AD, word joiner, BOM, tags…)
# plus the combining grapheme joiner and the Hangul/Mongolian fillers that render as nothing.
_INVISIBLE = re.compile(
    "[" + _class_of(lambda c: unicodedata.category(c) == "Cf", 0, 0x10000)
    + "\U000e0000-\U000e007f\U0001d173-\U0001d17a\U0001bca0-\U0001bca3\u034f\u115f\u1160\u3164\uffa0\u180b-\u180d]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def strip_invisible(text: str) -> str:
    """``text`` without invisible (format) characters; nothing else changes."""
    return text if text.isascii() else _INVISIBLE.sub("", text)


def clean_text(text: str) -> str:
    """Invisible characters removed and control characters (except tab and newlines) turned into
    spaces: what a reader should see, and what planning starts from."""
    return _CONTROL.sub(" ", strip_invisible(text))


# --- folding and tokens --------------------------------------------------------------------------


def _build_fold_table() -> dict[int, str | None]:
    table: dict[int, str | None] = {}
    # Latin-1 Supplement, Latin Extended-A/B, Latin Extended Additional (IAST lives here).
    for lo, hi in [(0x00C0, 0x024F), (0x1E00, 0x1EFF)]:
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            base = "".join(c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
            if base and base != ch and all(ord(c) < 0x250 for c in base):
                table[cp] = base
    for lo, hi in [(0x0300, 0x0370), (0x1AB0, 0x1B00), (0x1DC0, 0x1E00)]:  # combining marks left after NFC
        for cp in range(lo, hi):
            table[cp] = None
    table[ord("ё")] = "е"
    table[ord("Ё")] = "Е"
    return table


_FOLD = _build_fold_table()
_NEEDS_FOLD = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_FOLD)) + "]")


def fold(text: str) -> str:
    """Cleaned of invisible characters, lower-case, NFKC, diacritics folded (see the module docstring)."""
    s = text.lower()
    if s.isascii():
        return s
    s = unicodedata.normalize("NFKC", _INVISIBLE.sub("", s))
    return s.translate(_FOLD) if _NEEDS_FOLD.search(s) else s


# Word characters plus combining marks; "_" is turned into a space before matching (see tokenize).
_TOKEN = re.compile(r"[\w" + _class_of(lambda c: unicodedata.category(c).startswith("M"), 0x0300, 0x10000) + "]+")


def tokenize(text: str) -> list[str]:
    """Folded tokens of ``text`` (letters and digits)."""
    return _TOKEN.findall(fold(text).replace("_", " "))


class Analyzer:
    """Stems tokens by language. Stemmer instances are cached per language *and per thread*
    (PyStemmer objects are not thread-safe). Cheap to create."""

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


_ANALYZER = Analyzer()


@lru_cache(maxsize=1024)
def text_stems(text: str, lang: str) -> frozenset[str]:
    """Every stem of ``text``'s tokens in ``lang`` (the gate's lexical overlap, for a slate's top
    fragments). Cached per text: the same passages lead search after search, and stemming one took
    more time than the rest of the gate (≈ 6 kB a passage of 800 characters, so ≈ 6 MB when full)."""
    return frozenset(_ANALYZER.stem(tokenize(text), lang))


# --- stop words and content words ----------------------------------------------------------------

_EN = """a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each either else ever every few for from
further had has have having he her here hers herself him himself his how however i if in into is
it its itself just let may me might more most much must my myself neither no nor not now of off often
on once one only or other our ours ourselves out over own per please same say
said says shall she should so some such tell than that the their theirs them themselves then there these
they this those though through thus to too under until up upon us very was we were what whatever when
whenever where whereas whether which while who whoever whom whose why will with within without would yes
yet you your yours yourself yourselves explain describe give name many"""
_RU = """а без более бы был была были было быть в вам вас весь во вот все всё всего всех вы где да даже для до
его ее её если есть еще ещё же за здесь и из или им их к как какая какие каким какой каков какова какое
каково какую каких каком когда кто ли либо мне может мы на над надо наш не него нее неё нет ни них но ну о
об однако он она они оно от очень по под при про с со так также такой там те тем то того тоже той только
том ты у уже хотя чего чей чем что чтобы чье чья эта эти это этот я почему зачем сколько который которая
которые которого которой котором которую расскажи объясни скажи назови опиши мой моя свою свой себя себе ей
ему ей нам нас них ним ней нее раз тут потом теперь вдруг нибудь уж ведь ничего тогда этого этом этой эту
тот разве хоть впрочем куда после перед через между чтоб будто будет можно нельзя ж ль бы"""

#: One stop-word list per language (folded forms, as :func:`fold` writes them).
STOP_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(fold(w) for w in _EN.split()),
    "ru": frozenset(fold(w) for w in _RU.split()),
}
_ALL_STOP: frozenset[str] = frozenset().union(*STOP_WORDS.values())

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)


def is_stop(word: str, lang: str | None = None) -> bool:
    """Whether ``word`` is a stop word (in ``lang``, or in any served language when None)."""
    w = fold(word)
    return w in (STOP_WORDS.get(lang, frozenset()) if lang else _ALL_STOP)


def keywords(text: str) -> list[str]:
    """Content words of ``text`` (stop words of every served language, numbers and one-letter words
    dropped), first-seen order, case kept, invisible characters removed."""
    out: dict[str, str] = {}
    for w in _WORD.findall(unicodedata.normalize("NFKC", strip_invisible(text))):
        lw = fold(w)
        if lw in _ALL_STOP or w.isdigit() or len(lw) < 2:
            continue
        out.setdefault(lw, w)
    return list(out.values())


def content_terms(text: str, lang: str, analyzer: Analyzer | None = None) -> set[str]:
    """Stemmed content words of ``text`` in ``lang`` — what the gate's lexical overlap and the
    extractive answer's lexical evidence both count."""
    toks = tokenize(" ".join(keywords(text)))
    return set((analyzer or _ANALYZER).stem(toks, lang))


def edit_distance(a: Sequence[object], b: Sequence[object]) -> int:
    """Levenshtein distance between two sequences (letters of a name, words of a transcript): substitutions,
    deletions and insertions, each 1."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def numbers(text: str) -> set[str]:
    """The numbers written in ``text`` (language-neutral evidence: years, counts, addresses)."""
    return {t for t in tokenize(text) if t.isdigit()}


# --- sentences -----------------------------------------------------------------------------------

#: Words after which a full stop does not end a sentence (compared lower-cased). Single capital
#: letters (initials: ``J. Smith``) and dotted runs of single letters (``U.S.``, ``e.g.``, ``т.е.``) are
#: abbreviations too. The one rule for notes (:func:`split_sentences`) and for the units of a displayed
#: answer (``answer/units.py``), so both splitters cut a text at the same places.
ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "st", "prof", "sr", "jr", "vs", "etc", "c", "ca", "cf", "approx", "viz", "al",
    "no", "vol", "p", "pp", "ch", "fig", "т.е", "т.д", "т.п", "т.к", "др", "г", "гг", "им", "ст", "см", "стр",
    "рис",
})
_OPENERS = "\"'«“‘(¡¿"
_NOT_START = "[,;:)]}»”’"


def no_break_after(head: str) -> bool:
    """Whether the full stop that ends ``head`` is not a sentence end: it closes an abbreviation
    (:data:`ABBREVIATIONS`), an initial (``J.``), a dotted run of single letters (``U.S.``, ``e.g.``) or
    a list number alone at the start of its line (``2.``)."""
    if not head.endswith("."):
        return False
    # the word before the full stop: the longest run of word characters and dots (scanned from the end,
    # so a long head costs no more than its last word)
    i = end = len(head) - 1
    while i > 0 and (head[i - 1].isalnum() or head[i - 1] in "._"):
        i -= 1
    word = head[i:end]
    if word and word[-1].isalpha():
        parts = word.split(".")
        if word.lower() in ABBREVIATIONS:
            return True
        if len(parts) == 1 and len(word) == 1 and word.isupper():
            return True
        if len(parts) > 1 and all(len(x) == 1 and x.isalpha() for x in parts):
            return True
    if not (word.isdigit() and len(word) <= 3):
        return False
    j = i  # a list number alone at the start of its line ("2.")
    while j > 0 and head[j - 1] in " \t":
        j -= 1
    return j == 0 or head[j - 1] == "\n"


def starts_sentence(rest: str) -> bool:
    """Whether ``rest`` (the text after sentence punctuation and its whitespace) can start a new
    sentence: its first character after any opening quotes or brackets is not a lower-case letter, a
    citation bracket ``[`` or closing punctuation."""
    body = rest.lstrip(_OPENERS) or rest
    ch = body[:1]
    return bool(ch) and not ch.islower() and ch not in _NOT_START


_SENT_END = re.compile(r"[.!?…।॥]+[\"'»”’)\]]*(?P<ws>\s+)|\n+")
_BULLET_AHEAD = re.compile(r"[ \t]*[-*•]")
_HEAD_WINDOW = 64  # characters before a full stop that decide whether it ends a sentence


def sentence_breaks(text: str, *, lines: bool = True) -> list[tuple[int, int]]:
    """Where ``text`` is cut into sentences, as (end of a sentence, start of the next) offsets into
    ``text`` itself (nothing is cleaned or moved): after ``. ! ? … । ॥`` (with any closing quotes and
    brackets) and whitespace, unless :func:`no_break_after` or :func:`starts_sentence` says no. With
    ``lines`` a line break is a cut too (text whose lines are real breaks, as :func:`split_sentences`
    sees it after unwrapping); without (raw paragraphs of a document: hard-wrapped lines) only a line
    starting a list item (``-``, ``*``, ``•``) is, and a full stop before a line break obeys the same
    rule as before a space. The one sentence rule for notes, the answer's units and the chunker.
    Linear in ``len(text)``: each full stop is judged on the last few dozen characters before it."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _SENT_END.finditer(text):
        ws = m.group("ws")
        if ws is None:  # a run of line breaks with no sentence punctuation before it
            if lines or _BULLET_AHEAD.match(text, m.end()):
                out.append((m.start(), m.end()))
                start = m.end()
            continue
        if not lines or "\n" not in ws:
            if not starts_sentence(text[m.end() : m.end() + 4]):
                continue  # "e.g. this", "a.b c. d": a lower-case word goes on the sentence
            lo = max(start, m.start() + 1 - _HEAD_WINDOW)
            head = text[lo : m.start() + 1]
            if lo > start:
                head = "x" + head  # a cut window: its first word is no abbreviation, its start no line start
            if no_break_after(head):
                continue  # "Dr. Smith", "U.S. Supreme Court": not a boundary
        out.append((m.end() - len(ws), m.end()))
        start = m.end()
    return out


def _unwrap(text: str) -> str:
    """Join lines wrapped mid-sentence (PDF text layers, hard-wrapped prose); keep real breaks: blank
    lines, lines ending a sentence, short heading-like lines, bullets."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        buf = ""
        for ln in (x.strip() for x in para.split("\n")):
            if not ln:
                continue
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
    """Sentences of ``text`` (real line breaks and sentence punctuation), cleaned (no invisible or
    control characters), whitespace collapsed, non-empty. A sentence keeps its closing quotes and
    brackets (``… Saturn IB.)``); a full stop ends one only when :func:`no_break_after` allows it and
    :func:`starts_sentence` holds for what follows."""
    text = _unwrap(clean_text(text))
    out: list[str] = []
    start = 0
    for end, nxt in sentence_breaks(text):
        head = text[start:end]
        if head.strip():
            out.append(" ".join(head.split()))
        start = nxt
    tail = text[start:].strip()
    if tail:
        out.append(" ".join(tail.split()))
    return out


_WORD_LETTERS = re.compile(r"[^\W\d_]+")


#: the scripts whose letters look alike: a word mixing two of them is a garble or a disguise
_CONFUSABLE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK"})


def _script(ch: str) -> str:
    """The script a letter's Unicode name starts with (``LATIN``, ``CYRILLIC``, ``GREEK``, …)."""
    return unicodedata.name(ch, " ").split(" ", 1)[0]


def mixed_script_words(text: str) -> list[str]:
    """The words of ``text`` whose letters (marks aside) come from two of Latin, Cyrillic and Greek ("Dukeом",
    "Апulia", "Hinduизма"): a small model's garble, or a homoglyph disguise — or, for Latin with Greek, scientific
    notation ("TNFα", "NF-κB"), which a passage then writes too. Other scripts are left alone (a Japanese sentence
    mixes kanji and kana in one run)."""
    out = []
    for w in _WORD_LETTERS.findall(text):
        if w.isascii():
            continue
        scripts = {_script(ch) for ch in w if unicodedata.category(ch) in ("Lu", "Ll")}
        if len(scripts & _CONFUSABLE_SCRIPTS) > 1:
            out.append(w)
    return out


#: Cyrillic and Greek letters that render like a Latin one (the prose check's skeleton and the question's fold)
LATIN_LOOKALIKES = {
    # Cyrillic capitals and small letters
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j",
    "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o", "ν": "v", "ι": "i", "κ": "k", "α": "a",
}
#: the Russian letters a Latin one passes for (a Latin "c" typed inside a Russian word)
_CYRILLIC_LOOKALIKES = {lat: cyr for cyr, lat in LATIN_LOOKALIKES.items() if cyr in "АВЕКМНОРСТХУаеорсух"}
#: full-width Latin letters and digits (not punctuation: a Chinese or Japanese question keeps its "？")
_FULLWIDTH = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]+")


def unmix_letters(text: str) -> str:
    """``text`` with look-alike letters read as what they were meant to be, for a question (never for stored text):
    full-width Latin letters and digits as ASCII ("Ｈｏｗ" → "How"; full-width punctuation is kept), and a word that
    mixes Latin and Cyrillic letters written in the script most of the question's letters are in, when each of its
    odd letters has a twin there — "Hоw" with a Cyrillic "о" in an English question becomes "How", "чаcто" or "сo"
    with a Latin "c" or "o" in a Russian one becomes "часто", "со". A word with an odd letter that has no twin is
    left as typed ("Dukeом", "iPhoneа", "в Excelе"), and so are Greek letters: "TNFα" and "NF-κB" are notation,
    not disguise."""
    text = _FULLWIDTH.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    if text.isascii():
        return text
    latin = cyrillic = 0
    for ch in text:
        if ch.isalpha():
            sc = _script(ch)
            latin += sc == "LATIN"
            cyrillic += sc == "CYRILLIC"
    if not latin or not cyrillic:
        return text
    to_latin = latin >= cyrillic
    twins, odd = (LATIN_LOOKALIKES, "CYRILLIC") if to_latin else (_CYRILLIC_LOOKALIKES, "LATIN")

    def fix(m: re.Match[str]) -> str:
        w = m.group()
        scripts = {_script(ch) for ch in w if unicodedata.category(ch) in ("Lu", "Ll")}
        if scripts != {"LATIN", "CYRILLIC"}:
            return w
        fixed = "".join(twins.get(ch, ch) if _script(ch) == odd else ch for ch in w)
        return fixed if not mixed_script_words(fixed) else w

    return _WORD_LETTERS.sub(fix, text)


#: where a title's subtitle starts: a dash between spaces, a colon or a full stop ("Lecture 1. The lamp and the lens")
_SUBTITLE = re.compile(r"\s+[—–-]\s+|[:.]\s+")
_APOSTROPHES = re.compile("['\u2019\u2018\u02bc`\u00b4]")


def named_sources(question: str, titles: Mapping[str, str], min_chars: int = 6) -> set[str]:
    """The ids of ``titles`` (source id → title) whose title ``question`` names — the whole title or its head before
    a subtitle ("The Keeper's Handbook — Marrowick Light", "Lecture 1. The lamp and the lens"), less a leading
    "The", at least ``min_chars`` characters, as whole words, folded and with apostrophes dropped ("Keeper’s",
    "Keepers") — as in "according to the Keeper's Handbook, …". A title of one word names its source only when the
    question writes it capitalised as the title does ("Normans", not "the weather" for a source titled "Weather"):
    a common word is not a name. (A pinned note yields to such a source; its sentences are preferred.)"""
    if not titles:
        return set()
    q = _APOSTROPHES.sub("", fold(question))
    plain = _APOSTROPHES.sub("", question)
    return {sid for sid, title in titles.items() if _names(q, plain, title, min_chars)}


def names_title(question: str, title: str, min_chars: int = 6) -> bool:
    """Whether ``question`` names ``title`` (:func:`named_sources`, for one title)."""
    return bool(named_sources(question, {"": title}, min_chars))


def _names(q: str, plain: str, title: str, min_chars: int) -> bool:
    """``q``: the question folded, apostrophes dropped; ``plain``: as written, apostrophes dropped."""
    head = _SUBTITLE.split(title.strip(), maxsplit=1)[0].strip()
    for raw in dict.fromkeys([title.strip(), head]):
        raw = raw[4:] if raw.lower().startswith("the ") else raw
        t = _APOSTROPHES.sub("", fold(raw)).strip()
        if len(t) < min_chars or not re.search(rf"(?<!\w){re.escape(t)}(?!\w|[.,]\d)", q):
            continue
        if len(t.split()) > 1:
            return True
        word = _APOSTROPHES.sub("", raw.strip())
        if word[:1].isupper() and re.search(rf"(?<!\w){re.escape(word)}(?!\w)", plain):
            return True
    return False
