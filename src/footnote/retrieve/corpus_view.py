"""The turn's one door to the corpus: what a turn reads besides its search — the sources' titles and
metadata, a transcript's cues, a named source's fragments, the book names and their aliases, how common a
term is, the whole listing of sources (the prose check's names index), how far embedding has come, the one
sentence-vector cache the gate shares (``vectors``) — and the fallback's re-search (``probe``).

The engine opens one :class:`TurnCorpus` per turn (``Retriever.corpus``) before anything else: a
follow-up's rewrite reads it, the search is given it and hands it on in ``SearchResult.corpus``, and the
answer stage reads the corpus only through it — it holds no store and no retriever. The reader is typed by
the store capabilities it uses (:class:`CorpusReads`), never the whole ``Store``. Each source and each
source's fragments are read once per turn, however many stages ask (the prose check, the citations, a near
miss's titles, a pinned note's sources). Freshness: docs/architecture.md, "What a turn reads, and how fresh".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from footnote.records.fragments import Cue, Fragment, Source
from footnote.retrieve.books import BookIndex, address_aliases
from footnote.retrieve.memory import Resolved, resolve_refs
from footnote.retrieve.sentence_vectors import SentenceVectorCache
from footnote.retrieve.types import Candidate
from footnote.store import sources_by_id
from footnote.store.protocol import LaneStore, SourceStore, VectorStore

if TYPE_CHECKING:
    from footnote.models.protocols import Embedder
    from footnote.settings import Settings


class CorpusReads(SourceStore, VectorStore, LaneStore, Protocol):
    """The store capabilities a turn's reader uses: sources and fragments, the backlog's state, the lexical and
    address lanes (a term's share, a note's references)."""


#: the fallback's re-search: (probe texts, min_score, k) → dense hits (``Retriever.probe``)
Probe = Callable[[Sequence[str], float, int], list[Candidate]]


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

    def __init__(self, store: CorpusReads, books: BookIndex, settings: Settings, embedder: Embedder | None, *,
                 probe: Probe | None = None, generation: int = 0, vectors: SentenceVectorCache | None = None) -> None:
        self._store = store
        self.books = books
        self.settings = settings
        self.embedder = embedder  # the store's embedder: whose thresholds and sentence vectors apply
        #: the sources' generation as the turn opened (``SourceStore.generation``): the long-lived caches derived
        #: from the sources (the books, the names index) are the ones of this generation
        self.generation = generation
        self._probe = probe
        #: the one sentence-vector cache, shared with the gate and by every turn (content-addressed: never stale)
        self.vectors = vectors
        self._lock = threading.Lock()
        self._sources: dict[str, Source | None] = {}
        self._fragments_of: dict[str, list[Fragment]] = {}
        self._listing: list[Source] | None = None
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

    def titles(self, source_ids: Iterable[str]) -> dict[str, str]:
        """The title of each source among ``source_ids`` the corpus holds (how every edge names a search's
        sources: the CLI, HTTP and MCP read them through the search's reader)."""
        return {sid: src.title for sid, src in self.sources(source_ids).items()}

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

    def listing(self) -> list[Source]:
        """Every source of the corpus (read once per turn; the prose check's names index is built from it when
        the generation moved)."""
        if self._listing is None:
            self._listing = self._store.list_sources()
        return self._listing

    def each_source(self) -> Iterator[tuple[Source, list[Fragment]]]:
        """Every source with its fragments, one at a time (warming the sentence vectors ahead of the readers)."""
        for source in self.listing():
            yield source, self._store.fragments_of(source.id)

    def fragment_count(self) -> int:
        """How many fragments the corpus holds (read once per turn)."""
        if self._size is None:
            self._size = self._store.stats().fragments
        return self._size

    def probe(self, queries: Sequence[str], *, min_score: float, k: int) -> list[Candidate]:
        """The fallback's re-search: dense hits of each probe text with cosine ≥ ``min_score`` (``Retriever.probe``);
        empty without one."""
        return self._probe(queries, min_score, k) if self._probe is not None else []

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
        total = max(1, self.fragment_count())
        cap = int(total * self.settings.conversation.new_subject_max_share) + 1
        return len(self._store.search_lexical(term, cap, stemmed=True, lang=lang)) / total


__all__ = ["CorpusReads", "IndexState", "Probe", "TurnCorpus"]
