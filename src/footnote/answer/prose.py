"""The prose check: titles, address labels and file names that no note of this turn carries are
removed from the displayed answer.

Names are compared on a *skeleton* of the text (:func:`skeleton`), so that a name cannot slip past the
check by its spelling: invisible format characters (zero-width space/joiner, soft hyphen, bidi marks)
are dropped, characters are decomposed (NFKD) and their combining marks dropped (a decomposed
``é`` anywhere in the sentence no longer shifts offsets or hides a name), Cyrillic and Greek letters
that look like Latin ones (``Н``, ``В``, ``Α``, ``о``…) map to the Latin letter, typographic
apostrophes, dashes and spaces map to plain ones. Both the known names and the answer are skeletonised;
every match maps back to the answer's own characters.

The whole piece is checked before it is split into sentences, so a real title that itself contains
". " is found whole. A removed mention takes its clause with it (the text between the nearest
``, ; : ( ) — –`` marks or the sentence's ends): "The horn, per HB 3.4, sounds" → "The horn sounds"; a
sentence left with fewer than ``MIN_WORDS`` words is removed whole (its citations go with it, and
it is counted in ``removed_sentences``). Citation markers of a removed clause stay with the sentence.

Names in the forms people and models write them (issue 39): titles are matched on a *loose* skeleton
(Markdown emphasis ``* ` ~`` dropped, ``_`` read as a space, runs of spaces as one), so doubled spaces
or bold inside a title hide nothing; a title's *variants* — without its date (", 16 February 1886"),
without its subtitle (before ": " or " — "), after a leading label ("Lecture 1. …") — are names of
their source when they keep at least ``min_variant_words`` words; a source id with its folders
(``demo/letters/x.md``) and a file stem without its extension, with dashes, underscores or dots
(``1886-02-penhallow``, ``keepers_handbook``) are names, and so is the stem with spaces when it has
``min_variant_words`` words. Each is removed unless a note of the turn comes from its source or
carries it in its text.

Links: a Markdown link ``[t](url)``, an autolink ``<url>`` or a bare ``https://…``/``www.…`` stays
only when its address appears in the text of a passage its own sentence cites; otherwise a Markdown
link keeps its words, unlinked, and a bare or autolinked address is removed (both counted as removed
mentions, named by the address).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from footnote.answer.types import Note
from footnote.answer.units import unit_bounds
from footnote.lru import ByGeneration
from footnote.records.fragments import AddressLocator, FileLocator, Source
from footnote.text import LATIN_LOOKALIKES

ADDRESS = re.compile(r"(?<![\w.])([A-ZА-ЯЁ]{1,5})\.?\s?(\d{1,4}(?:[.:]\d{1,4})+)(?![\w]|\.\d)")
FILE_EXTS = "pdf|docx?|txt|md|markdown|epub|html?|srt|vtt|json|jsonl|mp3|ogg|opus|m4a|wav|csv|rtf|odt|xhtml"
FILENAME = re.compile(rf"(?<![\w/\\.-])[\w][\w\-.]{{0,120}}?\.(?:{FILE_EXTS})(?![\w])", re.IGNORECASE)
MIN_WORDS = 3  # a sentence left with fewer words after a removal is removed whole

_CONFUSABLE = {
    **LATIN_LOOKALIKES,
    # punctuation
    "’": "'", "‘": "'", "ʼ": "'", "′": "'", "´": "'", "`": "'",
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
    "ё": "е", "Ё": "Е",
}


_ASCII_SPACE = str.maketrans({chr(c): " " for c in range(128) if chr(c).isspace()})


def skeleton(text: str, *, lower: bool = True) -> tuple[str, list[int]]:
    """(the skeleton of ``text``, for each of its characters the index of the character of ``text``
    it came from). See the module docstring for what is folded."""
    if text.isascii():  # the common case: one character for one, whitespace → " " (same as the loop below)
        out_ascii = text.translate(_ASCII_SPACE)
        return (out_ascii.lower() if lower else out_ascii), list(range(len(text)))
    out: list[str] = []
    idx: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            if ch.isspace():
                ch = " "
            out.append(ch.lower() if lower else ch)
            idx.append(i)
            continue
        cat = unicodedata.category(ch)
        if cat == "Cf" or cat == "Mn" or cat == "Me":
            continue
        if ch.isspace():
            out.append(" ")
            idx.append(i)
            continue
        c = _CONFUSABLE.get(ch, ch)
        for d in unicodedata.normalize("NFKD", c):
            if unicodedata.combining(d) or unicodedata.category(d) == "Cf":
                continue
            d = _CONFUSABLE.get(d, d)
            for e in d.lower() if lower else d:
                out.append(e)
                idx.append(i)
    return "".join(out), idx


def skel(text: str) -> str:
    """The lower-case skeleton of ``text`` (names compared loosely), trimmed."""
    return skeleton(text)[0].strip()


def _loosen(s: str, idx: list[int]) -> tuple[str, list[int]]:
    """A skeleton made loose: Markdown emphasis marks dropped, ``_`` read as a space, a run of spaces as one."""
    out: list[str] = []
    oidx: list[int] = []
    for ch, i in zip(s, idx, strict=True):
        if ch in "*`~":
            continue
        if ch == "_":
            ch = " "
        if ch == " " and out and out[-1] == " ":
            continue
        out.append(ch)
        oidx.append(i)
    return "".join(out), oidx


def loose_skeleton(text: str) -> tuple[str, list[int]]:
    """The lower-case skeleton of ``text`` made loose (:func:`_loosen`), with its index map."""
    return _loosen(*skeleton(text))


def loose(text: str) -> str:
    """A name compared loosely: its lower-case skeleton, no Markdown emphasis, one space between words."""
    return loose_skeleton(text)[0].strip()


def norm_label(text: str) -> str:
    """An address label compared loosely: skeleton, no spaces or dots between book and number."""
    return re.sub(r"[\s.]+", "", skel(text)).replace(":", ".")


def _addr_key(book: str, loc: str) -> str:
    return skel(book) + "|" + loc.replace(":", ".")


_MONTH_WORDS = tuple(" ".join((
    "january february march april may june july august september october november december",
    "jan feb mar apr jun jul aug sep sept oct nov dec",
    "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
    "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",
)).split(" "))
_YEAR_WORDS = ("года", "год", "г")


def _alts(words: Iterable[str]) -> str:
    return "|".join(sorted({re.escape(skel(w)) for w in words}, key=lambda w: (-len(w), w)))


_MONTHS = _alts(_MONTH_WORDS)
_DATE = (rf"(?:(?:\d{{1,2}}\s+)?(?:{_MONTHS})\.?\s+(?:\d{{1,2}},?\s+)?)?\d{{4}}(?:-\d{{2}}){{0,2}}"
         rf"(?:\s*(?:{_alts(_YEAR_WORDS)})\.?)?")
_DATE_TAIL = re.compile(rf"(?:\s*[,;(]|\s+-)\s*{_DATE}\s*\)?\s*$")
_DATE_HEAD = re.compile(rf"^\s*\(?{_DATE}\)?\s*[-:,.]\s+")
_PAREN_TAIL = re.compile(r"\s*\([^()]*\)\s*$")
_SUBTITLE = re.compile(r":\s+|\s+-\s+")
_LABEL = re.compile(r"[.!?]\s+")
_STEM_SEP = re.compile(r"[\s_\-.]+")
_LANG_EXT = re.compile(r"^(.+)\.[a-z]{2}$")
_EXT_TAIL = re.compile(rf"^(.+?)\.(?:{FILE_EXTS})$", re.IGNORECASE)


def title_variants(title: str) -> set[str]:
    """The loose forms of ``title`` without its date, subtitle or leading label (not ``title`` itself)."""
    t = loose(title)
    forms = {t}
    undated = _DATE_HEAD.sub("", _DATE_TAIL.sub("", t)).strip()
    forms.add(undated)
    for f in list(forms):
        forms.add(_PAREN_TAIL.sub("", f).strip())
    for f in list(forms):
        parts = _SUBTITLE.split(f, maxsplit=1)
        forms.add(parts[0].strip())
        pieces = _LABEL.split(f, maxsplit=1)
        if len(pieces) == 2:
            forms.add(pieces[0].strip())
            forms.add(pieces[1].strip())
    forms.discard(t)
    return {f.strip(" ,;:-.") for f in forms if f.strip(" ,;:-.")}


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def stem_keys(name: str) -> set[str]:
    """A file name's or source id's stems (no folders, no ``#part``, no extension, with and without a
    language extension such as ``.ru``) as space-separated words; only stems of two words or more."""
    base = skel(name).rsplit("/", 1)[-1].split("#", 1)[0]
    m = _EXT_TAIL.match(base)
    stems = {m.group(1) if m else base}
    for st in list(stems):
        lm = _LANG_EXT.match(st)
        if lm:
            stems.add(lm.group(1))
    keys = {" ".join(p for p in _STEM_SEP.split(st) if p) for st in stems}
    return {k for k in keys if len(k.split()) >= 2}


@dataclass(frozen=True)
class KnownNames:
    """Every source title and file name in the store (as skeletons), for the prose check."""

    titles: tuple[str, ...]
    files: frozenset[str]
    kinds: tuple[str, ...]
    title_re: re.Pattern[str] | None
    corpus_lang: str | None = None
    file_re: re.Pattern[str] | None = None  # known file names that the generic pattern misses (spaces)
    # title variants (loose) and file stems (space-separated words) → the ids of the sources they name
    owners: Mapping[str, frozenset[str]] = field(default_factory=dict)
    variant_re: re.Pattern[str] | None = None
    stem_re: re.Pattern[str] | None = None
    ids: frozenset[str] = frozenset()  # source ids, skeletons
    min_variant_words: int = 3

    @property
    def split_titles(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """Titles with a sentence end inside (``"notes. on fog"``), with the offsets after each one."""
        out = []
        variants = tuple(k for k in self.owners if " " in k and not k.replace(" ", "").isalnum())
        for t in (*self.titles, *variants):
            cuts = tuple(m.end() for m in re.finditer(r"[.!?…]+\s+", t))
            if cuts:
                out.append((t, cuts))
        return tuple(out)


def names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    ordered = sorted({loose(n) for n in names} - {""}, key=lambda t: (-len(t), t))
    if not ordered:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in ordered) + r")(?!\w)")


def stems_pattern(keys: Iterable[str]) -> re.Pattern[str] | None:
    ordered = sorted(set(keys), key=lambda t: (-len(t), t))
    if not ordered:
        return None
    alts = (r"[\s_\-.]+".join(re.escape(p) for p in k.split()) for k in ordered)
    return re.compile(r"(?<![\w/\\.-])(?:" + "|".join(alts) + r")(?![\w])")


class SourceListing(Protocol):
    """What the names index reads of a turn's reader (``TurnCorpus``): the corpus generation the turn opened at
    and the listing of every source."""

    generation: int

    def listing(self) -> list[Source]: ...


class MentionIndex:
    """Known titles and file names of the corpus: built from a turn's listing of sources, and kept (shared by
    concurrent turns) until a turn opens at another corpus generation (docs/architecture.md, "What a turn
    reads, and how fresh")."""

    def __init__(self, *, min_title_chars: int, min_variant_words: int = 3) -> None:
        self.min_title_chars = min_title_chars
        self.min_variant_words = min_variant_words
        self._kept: ByGeneration[KnownNames] = ByGeneration()

    def get(self, reads: SourceListing) -> KnownNames:
        return self._kept.get(reads.generation, lambda: self._build(reads.listing()))

    def _build(self, sources: list[Source]) -> KnownNames:
        titles = sorted(
            {skel(s.title) for s in sources if len(s.title.strip()) >= self.min_title_chars},
            key=lambda t: (-len(t), t),
        )
        files = frozenset(skel(s.original_name) for s in sources if s.original_name.strip())
        kinds = tuple(sorted({s.kind for s in sources}))
        langs: dict[str, int] = {}
        for s in sources:
            langs[s.lang] = langs.get(s.lang, 0) + 1
        corpus_lang = max(sorted(langs), key=lambda lg: langs[lg]) if langs else None
        owners: dict[str, set[str]] = {}
        variants: set[str] = set()
        stems: set[str] = set()
        for s in sources:
            if len(s.title.strip()) >= self.min_title_chars:
                for v in title_variants(s.title):
                    if word_count(v) >= self.min_variant_words and len(v) >= self.min_title_chars:
                        owners.setdefault(v, set()).add(s.id)
                        variants.add(v)
            for k in stem_keys(s.id) | (stem_keys(s.original_name) if s.original_name.strip() else set()):
                owners.setdefault(k, set()).add(s.id)
                stems.add(k)
        return KnownNames(
            tuple(titles), files, kinds, names_pattern(titles), corpus_lang, names_pattern(f for f in files if " " in f),
            owners={k: frozenset(v) for k, v in owners.items()}, variant_re=names_pattern(variants),
            stem_re=stems_pattern(stems), ids=frozenset(skel(s.id) for s in sources),
            min_variant_words=self.min_variant_words,
        )


@dataclass
class Carried:
    """What the notes of this turn carry: titles, file names, address keys, source ids and their texts
    (loose skeletons; ``by_n``: each note's own text, case-folded, for the links its sentences cite)."""

    titles: set[str]
    files: set[str]
    addresses: set[str]
    texts: list[str]
    sources: set[str] = field(default_factory=set)
    by_n: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, notes: Iterable[Note], titles_by_source: dict[str, str], files_by_source: dict[str, str]) -> Carried:
        c = cls(set(), set(), set(), [])
        for note in notes:
            f = note.fragment
            c.sources.add(f.source_id)
            c.files.add(skel(f.source_id.rsplit("/", 1)[-1]))
            if f.source_id in titles_by_source:
                c.titles.add(loose(titles_by_source[f.source_id]))
            if f.source_id in files_by_source:
                c.files.add(skel(files_by_source[f.source_id]))
            loc = f.locator
            if isinstance(loc, AddressLocator):
                c.addresses.add(_addr_key(loc.book, loc.loc))
                c.addresses.add(norm_label(loc.label))
            elif isinstance(loc, FileLocator):
                c.files.add(skel(loc.file.rsplit("/", 1)[-1]))
            c.texts.append(loose_skeleton(f.text)[0])
            c.by_n[note.n] = f.text.casefold()
        return c

    def in_text(self, mention: str) -> bool:
        m = loose(mention)
        return any(m in t for t in self.texts)

    def owns(self, owners: Iterable[str]) -> bool:
        return any(o in self.sources for o in owners)


@dataclass
class ProseResult:
    text: str
    mentions: int = 0
    names: list[str] = field(default_factory=list)
    sentences: int = 0  # sentences removed whole


_CLAUSE_LEFT = re.compile(r"[,;:(\u2014\u2013]|\s-\s")
_CLAUSE_RIGHT = re.compile(r"[,;:)\u2014\u2013]|\s-\s")
_CITE_TAIL = re.compile(r"(?:\s*\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\])+")
_CITE_ANY = re.compile(r"\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\]")
_END = re.compile(r"(?:[.!?…]+[\"'»”)]*)?(?:\s*\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\])*[\"'»”)]*\s*$")
_CONJ = re.compile(r"^(?:and|but|or|so|while|whereas|и|а|но|или)\b\s*", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}|\d+", re.UNICODE)
_MARKS = "*_`~"
_PATH = re.compile(r"(?<![\w/\\.:#-])[\w][\w.\-#]*(?:[/\\][\w.\-#]+)+")
_LINK = re.compile(
    r"\[(?P<md_text>[^\[\]\n]+)\]\(\s*<?(?P<md_url>[^()\s<>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)"
    r"|<(?P<auto>(?:https?|ftp)://[^<>\s]+|www\.[^<>\s]+)>"
    r"|(?<![\w@/(<\[])(?P<bare>(?:(?:https?|ftp)://|www\.)[^\s<>\[\]\"'`]+)",
    re.IGNORECASE,
)
_URL_SCHEME = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//|^www\.|(?<=//)www\.")


def _trim_url(url: str) -> str:
    """A bare address without the punctuation that ends its sentence (a ")" only when it opens none)."""
    while url and url[-1] in ".,;:!?'\"»”’)":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


class ProseChecker:
    """Removes titles, address labels and file names that no note of this turn carries."""

    def __init__(self, known: KnownNames, carried: Carried) -> None:
        self.known = known
        self.carried = carried
        self._split_titles = known.split_titles

    # -- finding -------------------------------------------------------------------------------
    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, mention) in ``text`` of every mention this turn does not carry."""
        out: list[tuple[int, int, str]] = []
        cased, cidx = skeleton(text, lower=False)
        carried, known = self.carried, self.known

        def back(s: int, e: int, idx: list[int]) -> tuple[int, int, str]:
            a, b = idx[s], idx[e - 1] + 1
            while a > 0 and b < len(text) and text[a - 1] in _MARKS and text[b] == text[a - 1]:
                a, b = a - 1, b + 1  # **Title** goes with its emphasis
            return a, b, text[a:b]

        for m in FILENAME.finditer(cased):
            if not self._file_ok(m.group(0)):
                out.append(back(m.start(), m.end(), cidx))
        for m in _PATH.finditer(cased):
            p = skel(m.group(0)).replace("\\", "/")
            if self._path_named(p) and not self._path_ok(p):
                out.append(back(m.start(), m.end(), cidx))
        for m in ADDRESS.finditer(cased):
            key = _addr_key(m.group(1), m.group(2))
            if key in carried.addresses or norm_label(m.group(0)) in carried.addresses:
                continue
            if carried.in_text(m.group(0)):
                continue
            out.append(back(m.start(), m.end(), cidx))
        low, lidx = skeleton(text)
        if known.file_re is not None:
            for m in known.file_re.finditer(low):
                if not self._file_ok(m.group(0)):
                    out.append(back(m.start(), m.end(), lidx))
        if known.stem_re is not None:
            for m in known.stem_re.finditer(low):
                form = m.group(0)
                key = " ".join(p for p in _STEM_SEP.split(form) if p)
                spaced = not re.search(r"[_\-.]", form)
                if spaced and len(key.split()) < known.min_variant_words:
                    continue  # "harbour book": words people write, not a file's name
                if carried.owns(known.owners.get(key, ())) or loose(form) in carried.titles or carried.in_text(form):
                    continue
                out.append(back(m.start(), m.end(), lidx))
        lo, loidx = loose_skeleton(text)
        if known.title_re is not None:
            for m in known.title_re.finditer(lo):
                t = m.group(0)
                if t in carried.titles or carried.in_text(t):
                    continue
                out.append(back(m.start(), m.end(), loidx))
        if known.variant_re is not None:
            for m in known.variant_re.finditer(lo):
                v = m.group(0)
                if carried.owns(known.owners.get(v, ())) or v in carried.titles or carried.in_text(v):
                    continue
                out.append(back(m.start(), m.end(), loidx))
        links = [(m.start(), m.end()) for m in _LINK.finditer(text)]  # what is left of them is approved
        if links:
            out = [sp for sp in out if not any(a <= sp[0] and sp[1] <= b for a, b in links)]
        return _merge(out)

    def _file_ok(self, name: str) -> bool:
        n = skel(name)
        base = n.rsplit("/", 1)[-1]
        if base in self.carried.files or n in self.carried.files:
            return True
        if self._stem_carried(base):
            return True
        return self.carried.in_text(name)

    def _path_named(self, path: str) -> bool:
        """Whether a path-shaped token (``demo/letters/x.md``, ``letters/x``) names a file or a source."""
        base = path.rsplit("/", 1)[-1].split("#", 1)[0]
        if _EXT_TAIL.match(base) or path in self.known.ids:
            return True
        if any(i.endswith("/" + path) for i in self.known.ids):
            return True
        return any(k in self.known.owners for k in stem_keys(base))

    def _path_ok(self, path: str) -> bool:
        base = path.rsplit("/", 1)[-1]
        if base in self.carried.files or self._stem_carried(base):
            return True
        for sid in self.carried.sources:
            s = skel(sid)
            if s == path or s.endswith("/" + path) or path.endswith("/" + s):
                return True
        return self.carried.in_text(path)

    def _stem_carried(self, name: str) -> bool:
        return any(self.carried.owns(self.known.owners.get(k, ())) for k in stem_keys(name))

    # -- links -----------------------------------------------------------------------------------
    def links(self, text: str) -> tuple[str, list[str]]:
        """``text`` with every link whose address no passage its sentence cites carries unlinked (a
        Markdown link keeps its words) or removed (a bare or autolinked address); (text, those addresses)."""
        if "://" not in text and "www." not in text.casefold() and "](" not in text:
            return text, []
        units = unit_bounds(text)
        out: list[str] = []
        names: list[str] = []
        last = 0
        for m in _LINK.finditer(text):
            url = m.group("md_url") or m.group("auto") or m.group("bare")
            start, end = m.start(), m.end()
            if m.group("bare"):
                trimmed = _trim_url(url)
                end -= len(url) - len(trimmed)
                url = trimmed
            unit = next((u for u in units if u[0] <= start < u[1]), (0, len(text)))
            if self._approved(url, text[unit[0]:unit[1]]):
                continue
            out.append(text[last:start])
            out.append(m.group("md_text") or "")
            names.append(url)
            last = end
        if not names:
            return text, []
        out.append(text[last:])
        return _tidy("".join(out)), names

    def _approved(self, url: str, unit: str) -> bool:
        key = _URL_SCHEME.sub("", url.casefold()).rstrip("/")
        if len(key) < 4:
            return False
        nums = {int(x) for c in _CITE_ANY.finditer(unit) for x in re.findall(r"\d+", c.group(0))}
        return any(key in self.carried.by_n.get(n, "") for n in nums)

    def cut_ok(self, head: str) -> bool:
        """False when ``head`` ends inside a known title that has a sentence end in it ("Notes. On
        Fog"): a streamed piece must not be cut there, or the title would reach the reader in halves."""
        if not self._split_titles:
            return True
        tail = skeleton(head[-400:])[0]
        for title, cuts in self._split_titles:
            for c in cuts:
                if tail.endswith(title[:c]) or tail.rstrip().endswith(title[:c].rstrip()):
                    return False
        return True

    # -- removing ------------------------------------------------------------------------------
    def check(self, text: str) -> ProseResult:
        """The text with every uncarried mention removed with its clause (see the module docstring)."""
        text, links = self.links(text)
        spans = self.spans(text)
        if not spans:
            return ProseResult(text, len(links), links)
        units = unit_bounds(text)
        cuts: list[tuple[int, int, str]] = []  # (start, end, citations to keep)
        whole: set[int] = set()
        for start, end, _ in spans:
            ua = next(u for u in units if u[0] <= start < u[1] or start < u[0])
            ub = next((u for u in units if u[0] < end <= u[1]), units[-1])
            u0, u1 = ua[0], ub[1]
            body_end = u0 + _END.search(text[u0:u1]).start()  # type: ignore[union-attr]
            left = None
            for m in _CLAUSE_LEFT.finditer(text, u0, start):
                left = m
            right = _CLAUSE_RIGHT.search(text, end, body_end) if end < body_end else None
            if left is not None and right is not None:
                a, b = left.start(), right.end()
            elif left is not None:
                a, b = left.start(), body_end
            elif right is not None:
                a, b = u0, right.end()
            else:
                a, b = u0, u1
            keep = "".join(m.group(0) for m in _CITE_ANY.finditer(text, a, b)) if (a, b) != (u0, u1) else ""
            rest = text[u0:a] + text[b:body_end]
            if (a, b) == (u0, u1) or len(_WORD.findall(_CITE_ANY.sub(" ", rest))) < MIN_WORDS:
                a, b, keep = u0, u1, ""
                whole.add(u0)
            cuts.append((a, b, keep))
        out = text
        for a, b, keep in sorted(_merge_cuts(cuts), reverse=True):
            head, tail = out[:a], out[b:]
            if keep:
                e = _END.search(tail)
                pos = e.start() if e is not None and "\n" not in tail[: e.start()] else 0
                tail = tail[:pos].rstrip() + " " + keep + tail[pos:] if pos else " " + keep + tail
            if not head.strip() or head.rstrip().endswith((".", "!", "?", "…", "\n")):
                tail = _CONJ.sub("", tail.lstrip(" ,;:-"))
                tail = tail[:1].upper() + tail[1:]
                head = head if not head.strip() else head.rstrip() + " "
            out = head + tail
        return ProseResult(_tidy(out), len(spans) + len(links), links + [s[2] for s in spans], len(whole))


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    spans.sort(key=lambda s: (s[0], -s[1]))  # of two mentions at one place, the longer names it
    out: list[tuple[int, int, str]] = []
    for s in spans:
        if out and s[0] < out[-1][1]:
            prev = out[-1]
            out[-1] = (prev[0], max(prev[1], s[1]), prev[2])
        else:
            out.append(s)
    return out


def _merge_cuts(cuts: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    cuts.sort()
    out: list[tuple[int, int, str]] = []
    for a, b, keep in cuts:
        if out and a < out[-1][1]:
            pa, pb, pk = out[-1]
            out[-1] = (pa, max(pb, b), pk + keep if b > pb else pk)
        else:
            out.append((a, b, keep))
    return out


def _tidy(text: str) -> str:
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    body = text.strip()
    body = re.sub(r"\(\s*[,;]?\s*\)|«\s*»|\"\s*\"|“\s*”", "", body)
    body = re.sub(r"[ \t]{2,}", " ", body)
    body = re.sub(r"[ \t]+([,.;:!?])", r"\1", body)
    body = re.sub(r"^[,;:]\s*", "", body)
    body = re.sub(r"([,;:])\s*([.!?])", r"\2", body)
    body = re.sub(r"([,;:])\s*(\[\d)", r" \2", body)
    if body[:1].islower() and not lead:
        body = body[:1].upper() + body[1:]
    return lead + body + trail if body else (" " if lead or trail else "")
