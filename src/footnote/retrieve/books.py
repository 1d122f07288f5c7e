"""The corpus's own books, for reading addresses the way readers write them.

A :class:`BookIndex` is built from the store's addressed fragments (``LaneStore.list_addresses``: book code,
location, source title). :func:`address_aliases` is the one place that says how a book may be typed: the
settings' ``corpus.book_aliases`` plus, for every book the corpus holds, its code and its source titles
(with and without a leading article). Nothing about any particular book lives in code.

Ranges and chapters are expanded against the book's real locations, in order ("HB 1.1-1.3" → HB 1.1,
HB 1.2, HB 1.3; "BG 2" → BG 2.1 … capped at ``retrieve.chapter_max_verses``), and a location the book
lacks is said plainly with what the book has ("HB 9.9 is not in the corpus; The Harbour Book has
1.1–3.6").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from footnote.lru import ByGeneration
from footnote.records.fragments import AddressLocator
from footnote.retrieve.types import Candidate, Lane
from footnote.settings import Settings
from footnote.store.protocol import LaneStore

_ARTICLES = ("the ", "a ")
_MAX_TITLES = 3  # a book stored as more sources than this is not named by their titles


def loc_key(loc: str) -> tuple[int, ...]:
    """A location's sort key: its numbers ("2.13" → (2, 13); a joint verse "1.16-18" sorts by its start)."""
    start = re.split(r"[-–]", loc, maxsplit=1)[0]
    nums = [int(x) for x in re.findall(r"\d+", start)]
    return tuple(nums) if nums else (10**9,)


def _loc_span(loc: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """First and last verse a location covers: "2.13" → ((2, 13), (2, 13)); "1.16-18" → ((1, 16), (1, 18))."""
    parts = re.split(r"\s*[-–—‒]\s*", loc, maxsplit=1)
    start = tuple(int(x) for x in re.findall(r"\d+", parts[0]))
    if len(parts) == 1:
        return start, start
    tail = tuple(int(x) for x in re.findall(r"\d+", parts[1]))
    end = start[: max(0, len(start) - len(tail))] + tail
    return start, end


@dataclass(frozen=True)
class Book:
    code: str
    titles: tuple[str, ...]
    locs: tuple[str, ...]  # in reading order

    @property
    def names(self) -> tuple[str, ...]:
        """Titles that name the book itself: none with digits, and none when the book is split over more
        than ``_MAX_TITLES`` sources (their titles name verses: "BG 2.13 — a commentator")."""
        if len(self.titles) > _MAX_TITLES:
            return ()
        return tuple(t for t in self.titles if not any(ch.isdigit() for ch in t))

    @property
    def title(self) -> str:
        return self.names[0] if self.names else self.code

    def extent(self) -> str:
        """"1.1–3.6": the first and last location."""
        if not self.locs:
            return ""
        return self.locs[0] if len(self.locs) == 1 else f"{self.locs[0]}–{self.locs[-1]}"


@dataclass(frozen=True)
class BookIndex:
    """The books of one corpus, by canonical code (compared case-insensitively)."""

    books: Mapping[str, Book] = field(default_factory=dict)
    #: address_aliases() of this index, by the settings' book aliases (built once per index, not per call)
    _aliases: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = field(
        default_factory=dict, compare=False, repr=False, hash=False)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, str]]) -> BookIndex:
        locs: dict[str, dict[str, None]] = {}
        titles: dict[str, dict[str, None]] = {}
        codes: dict[str, str] = {}
        for book, loc, title in rows:
            code = codes.setdefault(book.casefold(), book)
            locs.setdefault(code, {})[loc] = None
            if title:
                titles.setdefault(code, {})[title] = None
        books = {
            code: Book(code, tuple(titles.get(code, {})), tuple(sorted(ls, key=lambda x: (loc_key(x), x))))
            for code, ls in locs.items()
        }
        return cls(books)

    def get(self, code: str) -> Book | None:
        if code in self.books:
            return self.books[code]
        folded = code.casefold()
        return next((b for c, b in self.books.items() if c.casefold() == folded), None)

    def only_book(self) -> Book | None:
        """The corpus's one book, when it holds exactly one (then "chapter 2, verse 47" needs no name)."""
        return next(iter(self.books.values())) if len(self.books) == 1 else None

    @staticmethod
    def within(book: Book, loc: str) -> list[str]:
        """The book's locations inside the range or chapter ``loc``, in order: "1.1-1.3" (or "1.1-3") holds
        1.1, 1.2, 1.3 and a joint verse "1.2-3"; a chapter "2" holds every "2.x"."""
        start, end = _loc_span(loc)
        if not start:
            return []
        ranged = re.search(r"[-–—‒]", loc) is not None
        out = []
        for have in book.locs:
            a, b = _loc_span(have)
            if ranged:
                if len(a) == len(start) and len(b) == len(end) and start <= a and b <= end:
                    out.append(have)
            elif len(a) > len(start) and a[: len(start)] == start:
                out.append(have)
        return out


def address_aliases(settings: Settings, books: BookIndex | None = None) -> Mapping[str, str]:
    """How a book may be typed (lower-cased) → its canonical code: the settings' ``corpus.book_aliases``
    plus each of the corpus's books by its code and source titles (with and without "the"/"a"; titles
    with digits, and the titles of a book split into more than three sources, name verses rather than the
    book and are left out). Settings win over titles where they disagree. Read-only, and built once per
    book index (a turn asks for it at several stages; the index is new after every write)."""
    key = tuple(sorted(settings.corpus.book_aliases.items()))
    if books is not None and (done := books._aliases.get(key)) is not None:
        return done
    made = MappingProxyType(_aliases(settings, books))
    if books is not None:
        books._aliases[key] = made
    return made


def _aliases(settings: Settings, books: BookIndex | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for book in (books.books.values() if books is not None else ()):
        out.setdefault(book.code.lower(), book.code)
        for title in book.names:
            t = " ".join(title.lower().split())
            out.setdefault(t, book.code)
            for art in _ARTICLES:
                if t.startswith(art) and len(t) > len(art) + 2:
                    out.setdefault(t[len(art):], book.code)
    out.update({k.lower(): v for k, v in settings.corpus.book_aliases.items()})
    return out


@dataclass(frozen=True)
class Expanded:
    addresses: tuple[AddressLocator, ...]
    notes: tuple[str, ...]


_NOTES = {
    "en": {
        "no_book": "{label} is not in the corpus: it holds no book {book} (books: {have})",
        "missing": "{label} is not in the corpus; {title} has {extent}",
        "capped": "{label} holds {n} verses; the first {k} are searched ({span}, setting retrieve.chapter_max_verses)",
        "too_many": "{n} addresses were asked for; the first {k} are searched (setting retrieve.max_addresses)",
    },
    "ru": {
        "no_book": "{label} нет в корпусе: книги {book} в нём нет (книги: {have})",
        "missing": "{label} нет в корпусе; в книге «{title}» есть {extent}",
        "capped": "В {label} {n} стихов; искали в первых {k} ({span}, настройка retrieve.chapter_max_verses)",
        "too_many": "Запрошено адресов: {n}; искали по первым {k} (настройка retrieve.max_addresses)",
    },
}


def _say(lang: str, key: str, **values: object) -> str:
    return _NOTES.get(lang, _NOTES["en"])[key].format(**values)


def expand_addresses(
    addresses: Iterable[AddressLocator], books: BookIndex | None, cap: int, total: int = 10**6, lang: str = "en"
) -> Expanded:
    """Ranges and chapters → the book's own locations inside them, in order (at most ``cap`` per range and
    ``total`` in all, each cap said in a note); a location the book lacks is kept (the exact lane finds nothing, the gate
    says not found) with a note saying what the book has."""
    out: list[AddressLocator] = []
    notes: list[str] = []
    for addr in addresses:
        book = books.get(addr.book) if books is not None else None
        if book is None:
            out.append(addr)
            if books is not None and books.books:
                have = ", ".join(sorted(books.books))
                notes.append(_say(lang, "no_book", label=addr.label, book=addr.book, have=have))
            continue
        if addr.loc in book.locs:
            out.append(addr)
            continue
        inside = BookIndex.within(book, addr.loc)
        if not inside:
            out.append(addr)
            notes.append(_say(lang, "missing", label=addr.label, title=book.title, extent=book.extent()))
            continue
        shown = inside[: max(1, cap)]
        if len(inside) > len(shown):
            notes.append(_say(lang, "capped", label=addr.label, n=len(inside), k=len(shown),
                              span=f"{book.code} {shown[0]}–{shown[-1]}"))
        out.extend(AddressLocator(book.code, loc, f"{book.code} {loc}") for loc in shown)
    seen: set[tuple[str, str]] = set()
    unique = []
    for a in out:
        if (a.book, a.loc) not in seen:
            seen.add((a.book, a.loc))
            unique.append(a)
    if len(unique) > max(1, total):
        notes.append(_say(lang, "too_many", n=len(unique), k=max(1, total)))
        unique = unique[: max(1, total)]
    return Expanded(tuple(unique), tuple(dict.fromkeys(notes)))


class BookStore(LaneStore, Protocol):
    """What the books are read from: the addressed fragments, and the generation they are of."""

    def generation(self) -> int: ...


class BookCache:
    """The store's :class:`BookIndex`, kept for one corpus generation (``SourceStore.generation``: a new ingest
    or a removal shows up at the next turn)."""

    def __init__(self, store: BookStore) -> None:
        self.store = store
        self._kept: ByGeneration[BookIndex] = ByGeneration()

    def get(self, generation: int | None = None) -> BookIndex:
        """The books of ``generation`` (the turn's, read as it opened); None: the store's generation now."""
        gen = self.store.generation() if generation is None else generation
        return self._kept.get(gen, lambda: BookIndex.from_rows(self.store.list_addresses()))


def in_address_order(candidates: list[Candidate], asked: Sequence[AddressLocator]) -> list[Candidate]:
    """A range or chapter reads in order: the exact-address hits of each kind (verses, commentaries) are
    put in the order the addresses were asked, in the slots they already hold — nothing else moves, no
    candidate enters or leaves. One address or none: unchanged."""
    if len(asked) < 2:
        return candidates
    order = {(a.book.casefold(), a.loc): i for i, a in enumerate(asked)}

    def position(c: Candidate) -> int | None:
        loc = c.fragment.locator
        if not isinstance(loc, AddressLocator) or not any(h.lane is Lane.ADDRESS for h in c.lanes):
            return None
        return order.get((loc.book.casefold(), loc.loc))

    out = list(candidates)
    by_kind: dict[str, list[int]] = {}
    for i, c in enumerate(out):
        if position(c) is not None:
            by_kind.setdefault(c.fragment.kind, []).append(i)
    before = list(out)
    for slots in by_kind.values():
        ordered = sorted(slots, key=lambda i: (position(before[i]) or 0, i))
        for slot, i in zip(slots, ordered, strict=True):
            out[slot] = before[i]
    return out
