"""A question naming several verses ("BG 2.11-13", "HB 1.1–1.3", "BG 2"): the extractive answer quotes
each of them, in order.

:meth:`~footnote.answer.extractive.SentenceRanker._by_address` scores the addressed notes' prose sentences
(a verse before its commentary, a translation before a transliteration). For one address it quotes the
best ``answer.extractive.address.sentences`` of them. When the addressed notes hold several addresses,
:func:`per_address` quotes every address instead — the best note of each (its verse, when the corpus has
it), its best ``address.range_sentences`` sentences in reading order — the addresses in the book's order,
at most ``address.range_verses`` of them. Quoting only the best two sentences of a range left a verse of
it out ("BG 2.11-13" quoted 2.12 and 2.13).
"""

from __future__ import annotations

from collections.abc import Sequence

from footnote.answer.quotes import Pick
from footnote.answer.types import Note
from footnote.records.fragments import AddressLocator
from footnote.retrieve.books import loc_key

#: One scored sentence of an addressed note: (score, note number, position in the note, text).
Scored = tuple[float, int, int, str]


def per_address(scored: Sequence[Scored], notes: Sequence[Note], max_verses: int, per_verse: int) -> list[Pick]:
    """Each address's quote, the addresses in order (empty when ``scored`` holds fewer than two addresses:
    the single-address answer applies). ``scored`` is best first."""
    books: dict[str, int] = {}
    where: dict[int, tuple[str, str]] = {}
    for note in notes:
        loc = note.fragment.locator
        if isinstance(loc, AddressLocator):
            book = loc.book.casefold()
            books.setdefault(book, len(books))
            where[note.n] = (book, loc.loc)
    groups: dict[tuple[str, str], list[Scored]] = {}
    for entry in scored:
        at = where.get(entry[1])
        if at is not None:
            groups.setdefault(at, []).append(entry)
    if len(groups) < 2:
        return []
    order = sorted(groups, key=lambda at: (books[at[0]], loc_key(at[1]), at[1]))
    out: list[Pick] = []
    for at in order[: max(1, max_verses)]:
        entries = groups[at]
        best = entries[0][1]  # the address's best note: its verse before a commentary
        mine = sorted([e for e in entries if e[1] == best][: max(1, per_verse)], key=lambda e: e[2])
        out.extend(Pick(n, text, round(score, 6), 1.0, pos) for score, n, pos, text in mine)
    return out
