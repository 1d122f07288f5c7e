"""What a turn reads of the corpus besides its search: the sources' titles and metadata, a transcript's
cues, a named source's fragments, the book names and their aliases, how common a term is.

The retriever opens one :class:`TurnCorpus` per turn (``Retriever.corpus``); the answer stage's rewrite
reads it before the search, the search fills its book index in and hands it on in
``SearchResult.corpus``, and the answer stage reads the corpus only through it — never the store. Each
source and each source's fragments are read once per turn, however many stages ask (the prose check, the
citations, a near miss's titles, a pinned note's sources).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from footnote.records.fragments import Cue, Fragment, Source
from footnote.retrieve.books import BookIndex, address_aliases
from footnote.retrieve.memory import Resolved, resolve_refs
from footnote.store import sources_by_id

if TYPE_CHECKING:
    from footnote.models.protocols import Embedder
    from footnote.settings import Settings
    from footnote.store import Store


@dataclass(frozen=True)
class IndexState:
    """How much of the corpus is searchable by meaning as a turn opens (fragments waiting for vectors are
    found by the lexical lanes only)."""

    fragments: int
    embedded: int
    eta_s: float | None  # the backlog's estimate while a worker runs, else None

    @property
    def percent(self) -> float:
        return 100.0 * self.embedded / self.fragments if self.fragments else 100.0

    @property
    def complete(self) -> bool:
        return self.embedded >= self.fragments


class TurnCorpus:
    """The corpus as one turn sees it (a reader with the turn's caches; not shared between turns)."""

    def __init__(self, store: Store, books: BookIndex, settings: Settings, embedder: Embedder | None) -> None:
        self._store = store
        self.books = books
        self.settings = settings
        self.embedder = embedder  # the store's embedder: whose thresholds and sentence vectors apply
        self._lock = threading.Lock()
        self._sources: dict[str, Source | None] = {}
        self._fragments_of: dict[str, list[Fragment]] = {}
        self._size: int | None = None
        self._index: IndexState | None = None

    @property
    def aliases(self) -> Mapping[str, str]:
        """How a book may be typed (lower-cased) → its code: the settings' names and the corpus's own
        (built once per book index)."""
        return address_aliases(self.settings, self.books)

    def sources(self, source_ids: Iterable[str]) -> dict[str, Source]:
        """The sources among ``source_ids`` the corpus holds, by id, in first-seen order (a source the
        store lacks is left out); each read once per turn."""
        ids = list(dict.fromkeys(source_ids))
        with self._lock:
            missing = [i for i in ids if i not in self._sources]
        got = sources_by_id(self._store, missing)
        with self._lock:
            self._sources.update({i: got.get(i) for i in missing})
            return {i: s for i in ids if (s := self._sources[i]) is not None}

    def cues(self, source_id: str, start_ms: int, end_ms: int | None) -> list[Cue]:
        """A transcript's cues between two times (the extractive answer cuts a transcript note at them)."""
        return self._store.get_cues(source_id, start_ms, end_ms)

    def fragments(self, fragment_ids: Sequence[str]) -> list[Fragment]:
        return self._store.get_fragments(fragment_ids) if fragment_ids else []

    def fragments_of(self, source_id: str) -> list[Fragment]:
        """A source's fragments (read once per turn)."""
        with self._lock:
            have = self._fragments_of.get(source_id)
        if have is None:
            have = self._store.fragments_of(source_id)
            with self._lock:
                self._fragments_of[source_id] = have
        return have

    def resolve(self, refs: Sequence[str]) -> Resolved:
        """What a memory note's references name (source ids, unique path tails, addresses)."""
        return resolve_refs(self._store, refs, self.aliases)

    def index(self) -> IndexState:
        """How far embedding has come, read once per turn (a store without an embedder counts as complete: its
        lexical lanes are all it has)."""
        if self._index is None:
            if self.embedder is None:
                self._index = IndexState(0, 0, None)
            else:
                bl = self._store.backlog()
                running = bl.pending > 0 and bl.rate > 0 and time.time() - bl.rate_at <= self.settings.backlog.rate_stale_s
                self._index = IndexState(bl.fragments, bl.embedded, bl.pending / bl.rate if running else None)
        return self._index

    def term_share(self, term: str, lang: str) -> float:
        """The share of the corpus's fragments that match ``term`` lexically (stemmed, in ``lang``), counted
        up to ``conversation.new_subject_max_share`` (past it the follow-up rule's answer is the same)."""
        if self._size is None:
            self._size = max(1, self._store.stats().fragments)
        total = self._size
        cap = int(total * self.settings.conversation.new_subject_max_share) + 1
        return len(self._store.search_lexical(term, cap, stemmed=True, lang=lang)) / total


__all__ = ["IndexState", "TurnCorpus"]
