"""The ``Store`` protocol every backend implements (SQLite embedded, PostgreSQL + pgvector), made of named
capabilities — ``SourceStore``, ``VectorStore``, ``LaneStore``, ``MemoryStore``, ``ConversationStore`` — each
tested by the conformance suite's mixins of the same scope and each a module of either backend (docs/store.md,
"How the backends are cut"). A stage that needs one capability can ask for just that protocol.

Semantics both backends keep (the conformance suite in ``footnote.testing.store_conformance`` checks them):
- ``put_source`` replaces a source, its fragments, embeddings and original atomically (one
  transaction): readers see the old version or the new one, never a mix; a failure leaves the old.
  ``put_sources`` does the same for a batch of sources in one transaction.
- Originals are content-addressed by sha256 and shared between sources with the same bytes.
- Lexical search tokenises with ``footnote.store.text`` (Snowball stemming by the fragment's
  language for the stemmed column; verbatim lower-cased tokens for the unstemmed one).
- Dense search is cosine over L2-normalised float32 vectors; scores are cosines in [-1, 1].
- Conversations (``footnote.store.conversations``) are kept beside the corpus; writing them never
  changes what the lanes see.
- Curated memory (``footnote.store.memory``) is kept apart too: notes and their vectors, tagged with
  the embedder that made them.
- A store remembers which embedder (name, dim) filled it; opening it with another raises StoreError.
- Embedding is a backlog: a fragment may be stored without a vector (``put_source`` with None) and get
  one later (``put_embeddings``); ``pending_fragments`` lists those still without one, so an interrupted
  run resumes where it stopped. ``rebind_embedder`` switches embedders by clearing every vector (every
  fragment becomes backlog); the lexical lanes keep working throughout.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from footnote.records.fragments import Cue, Fragment, Source
from footnote.store.conversations import ConversationStore
from footnote.store.keys import KeyStore
from footnote.store.memory import MemoryStore
from footnote.store.recognition import RecognitionStore

#: The largest integer a store's column holds (SQLite's INTEGER, PostgreSQL's BIGINT): an offset or a time past it is
#: refused at the edge (a 422), never sent to the database (SQLite raised OverflowError: a 500).
INT_MAX = 2**63 - 1


@dataclass(frozen=True)
class Hit:
    """One lane hit: a fragment id and the lane's own score (cosine for dense; bm25-like, higher
    is better, for lexical; similarity for trigram; 1.0 for an exact address)."""

    fragment_id: str
    score: float
    # the fragment's language when a rows-mode statement left its row out (a dense hit below the call's
    # ``rows_min``): what the pool needs of a hit it will drop (store.batch.DenseCall)
    lang: str | None = None


@dataclass(frozen=True)
class StoreStats:
    sources: int
    fragments: int
    embedded: int
    by_kind: dict[str, int]
    by_lang: dict[str, int]
    embedder: str | None
    dim: int | None
    url: str


@dataclass(frozen=True)
class PendingFragment:
    """A fragment waiting for its vector: what the embedder needs and what ``put_embeddings`` checks
    (a fragment replaced in the meantime has another content hash and is not written)."""

    id: str
    content_hash: str
    text: str


@dataclass(frozen=True)
class ClaimHolder:
    """One worker's claims on the backlog: how many fragments, and until when (Unix seconds, the latest)."""

    holder: str
    fragments: int
    until: float


@dataclass(frozen=True)
class BacklogStats:
    """How far embedding has come: fragments, those with a vector, and the last rate a backlog worker
    noted (fragments/s, 0 when none has) with when it noted it (Unix seconds, 0 when never)."""

    fragments: int
    embedded: int
    rate: float = 0.0
    rate_at: float = 0.0
    rate_by: str = ""  # the claim holder that noted the rate ("" when unknown)

    @property
    def pending(self) -> int:
        return max(0, self.fragments - self.embedded)


@dataclass(frozen=True)
class SourceWrite:
    """One source for :meth:`Store.put_sources`: the arguments of :meth:`Store.put_source`."""

    source: Source
    fragments: Sequence[Fragment]
    embeddings: np.ndarray | None
    original: bytes
    cues: Sequence[Cue] = ()


@dataclass(frozen=True)
class Original:
    """A stored original file, served as uploaded."""

    sha256: str
    name: str
    media_type: str
    data: bytes


@runtime_checkable
class SentenceVectorStore(Protocol):
    """Vectors of note sentences kept by the store (the extractive answer's candidates): embedded once
    on first use, so a warm store embeds no passage sentence at question time. Keyed by the embedder's
    name and a key of the sentence text (its SHA-1); vectors are float32 rows."""

    def get_sentence_vectors(self, embedder: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those ``keys`` that have one (for ``embedder``)."""
        ...

    def put_sentence_vectors(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        """Keep ``vectors`` (key → float32 row); an existing key is replaced. Does not count as a
        write of the corpus (no generation bump)."""
        ...


@runtime_checkable
class VectorStore(Protocol):
    """The fragment vectors: the embedder the store is bound to, the embedding backlog and its claims, the
    vectors themselves (the conformance suite's ``BindingTests``; ``sqlite_vectors.py``, ``pg_vectors.py``)."""

    # --- embedder binding -------------------------------------------------------------------
    def embedder_info(self) -> tuple[str, int] | None:
        """(embedder name, dim) that filled this store, or None while it has no embeddings."""
        ...

    def bind_embedder(self, name: str, dim: int) -> None:
        """Record the embedder; StoreError if the store was filled by a different name or dim."""
        ...

    def rebind_embedder(self, name: str, dim: int) -> int:
        """Bind the store to another embedder: every vector is dropped in the same transaction (the
        backlog is then every fragment) and, on PostgreSQL, the vector column and HNSW index are rebuilt
        for ``dim``. Curated memory notes lose their vectors too (``memory_embedders`` says None). Binding to
        the embedder already bound does nothing. Returns the fragment vectors dropped."""
        ...

    # --- embedding backlog ------------------------------------------------------------------
    def pending_fragments(self, limit: int, after: str | None = None) -> list[PendingFragment]:
        """Up to ``limit`` fragments without a vector, by id, with ids greater than ``after``."""
        ...

    def claim_pending(self, limit: int, holder: str, lease_s: float) -> list[PendingFragment]:
        """Like :meth:`pending_fragments` from the start, leaving out fragments another live claim holds,
        and claims those returned for ``holder`` for ``lease_s`` seconds — atomically, so two workers
        claiming at once never get the same fragment. ``put_embeddings`` drops the claims of the
        fragments it is given; a claim not renewed expires (a killed worker's fragments come back)."""
        ...

    def renew_claims(self, holder: str, lease_s: float) -> None:
        """Extend every claim of ``holder`` to ``lease_s`` seconds from now."""
        ...

    def release_claims(self, holder: str) -> None:
        """Drop every claim of ``holder`` (a worker that stops: what it did not write is backlog again)."""
        ...

    def claim_holders(self) -> list[ClaimHolder]:
        """Every holder with unexpired claims, by holder (a dead worker's claims are released by the next
        run at once: ``footnote.corpus.embedding.reclaim_dead_claims``)."""
        ...

    def put_embeddings(self, fragments: Sequence[PendingFragment], vectors: np.ndarray) -> int:
        """Store vectors (rows aligned with ``fragments``) for fragments that still exist with the same
        content hash; others are skipped (replaced or deleted meanwhile). One transaction. StoreError,
        writing nothing, when no embedder is bound, the dim differs or a value is not finite.
        Returns the number written."""
        ...

    def missing_embeddings(self, fragment_ids: Sequence[str]) -> set[str]:
        """Those of ``fragment_ids`` that are stored but have no vector yet (a lexical hit on one of them
        is no evidence against it in the dense lanes)."""
        ...

    def vectors_generation(self) -> int:
        """The generation of the fragments and their vectors: it moves with every write of the corpus, vectors
        included (a backlog's every batch). What is derived from the vectors (the gate's background sample, a copy of
        a kind group's vectors) is kept for one such generation; the same mechanism as ``SourceStore.generation``."""
        ...

    def backlog(self) -> BacklogStats:
        """Fragments, embedded fragments and the last noted embedding rate (cheap: for status lines)."""
        ...

    def note_embedding_rate(self, rate: float, *, running: bool = True, holder: str = "") -> None:
        """Remember a backlog worker's current rate (fragments/s) so other processes can show an ETA;
        ``running=False``: the worker stopped (interrupted, failed), so no run is shown as going on.
        ``holder``: the worker's claim holder (``BacklogStats.rate_by``: a killed worker is not shown running)."""
        ...


    def iter_embeddings(self, batch: int = 1000) -> Iterable[tuple[list[str], np.ndarray]]:
        """All (fragment ids, vectors) in batches — for migration and calibration."""
        ...

    def get_embeddings(self, fragment_ids: Sequence[str]) -> np.ndarray:
        """Vectors for the given ids, in order (zeros for a fragment without one)."""
        ...


@runtime_checkable
class SourceStore(Protocol):
    """Sources and their fragments, cues and originals: written, deleted and read (``WriteTests``,
    ``DeleteTests``, ``CueTests``, ``CurationTests``; ``sqlite.py``, ``postgres.py``)."""

    # --- writing ----------------------------------------------------------------------------
    def source_hash(self, source_id: str) -> str | None:
        """The stored content hash of a source, or None if absent."""
        ...

    def put_source(
        self,
        source: Source,
        fragments: Sequence[Fragment],
        embeddings: np.ndarray | None,
        original: bytes,
        cues: Sequence[Cue] = (),
    ) -> None:
        """Insert or atomically replace a source with its fragments, embeddings (rows aligned with
        ``fragments``, or None for lexical-only), original bytes and (a track's) cues. Raises StoreError,
        writing nothing, when a fragment belongs to another source, ids repeat, embeddings do not fit
        (rows, bound dim, non-finite, or no embedder bound), ``source.blob_sha256`` is not the sha256 of
        ``original``, or the cues are out of order or overlap."""
        ...

    def put_sources(self, writes: Sequence[SourceWrite]) -> None:
        """:meth:`put_source` for each of ``writes`` in ONE transaction (ingest gathers small sources so
        the lexical indexes and statistics are written once per batch, not once per source). Any error
        (including two writes with the same source id) writes none of them."""
        ...

    def delete_source(self, source_id: str) -> None:
        """Remove a source (absent: nothing happens); see :meth:`delete_sources`."""
        ...

    def delete_sources(self, source_ids: Sequence[str]) -> list[str]:
        """Remove these sources with their fragments, vectors, cues and every original no other source
        shares, in ONE transaction; returns the ids that were there (unknown ids are skipped)."""
        ...

    # --- reading ----------------------------------------------------------------------------
    def list_sources(
        self,
        *,
        kind: str | None = None,
        lang: str | None = None,
        collection: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Source]:
        """Sources ordered by id, those matching every filter given, ``limit`` from ``offset``."""
        ...

    def count_sources(self, *, kind: str | None = None, lang: str | None = None, collection: str | None = None) -> int:
        """How many sources :meth:`list_sources` would list with these filters and no limit."""
        ...

    def collections(self) -> dict[str, int]:
        """Source count per collection name."""
        ...

    def fragment_counts(self, collections: Sequence[str]) -> list[tuple[str, str, int]]:
        """(kind, lang, fragments) of the sources in ``collections``."""
        ...

    def source_collections(self) -> dict[str, str]:
        """Every source id with its collection (what a view limited to some collections filters by)."""
        ...

    def get_cues(self, source_id: str, start_ms: int = 0, end_ms: int | None = None) -> list[Cue]:
        """The cues of a track that overlap ``[start_ms, end_ms)`` (end None: to the end), in order;
        empty for an unknown source or one without cues."""
        ...

    def get_source(self, source_id: str) -> Source | None: ...

    def get_fragments(self, fragment_ids: Sequence[str]) -> list[Fragment]:
        """Fragments by id, in the order asked; unknown ids are skipped."""
        ...

    def fragments_of(self, source_id: str) -> list[Fragment]: ...

    def get_original(self, source_id: str) -> Original | None: ...

    def stats(self) -> StoreStats: ...

    def generation(self) -> int:
        """The sources' generation: a number that moves whenever a source is added, replaced or removed (its fragments
        with it), by this process or another — not when vectors are written. What is derived from the sources and kept
        between turns (the books, the prose check's names, the example questions) is kept for one generation: the
        store's one freshness rule (docs/architecture.md, "What a turn reads, and how fresh"). SQLite keeps it in the
        file; PostgreSQL in this process, moved by its writes and by other processes' notifications
        (``store/pg_changes.py``). What is derived from vectors follows ``VectorStore.vectors_generation``."""
        ...


@runtime_checkable
class LaneStore(Protocol):
    """The lanes a search runs (``LexicalTests``, ``AddressTests``, ``TrigramTests``, ``DenseTests``;
    ``sqlite_search.py``, ``pg_search.py``); ``store.batch`` names the optional batched forms."""

    #: whether the lanes compute on this machine (SQLite in this process, PostgreSQL at a loopback address
    #: or a Unix socket): they then share its cores with the query embedding
    computes_here: bool

    # --- lanes ------------------------------------------------------------------------------
    def search_dense(self, vector: np.ndarray, k: int, kinds: Sequence[str] | None = None) -> list[Hit]:
        """Top-k fragments by cosine to ``vector`` (restricted to ``kinds`` when given)."""
        ...

    def search_lexical(
        self, query: str, k: int, *, stemmed: bool, lang: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        """Full-text search: ``stemmed`` uses the Snowball column (query stemmed in ``lang``, or both
        Russian and English when None), else the verbatim column. Any query term may match (OR)."""
        ...

    def search_address(self, book: str, loc: str, k: int) -> list[Hit]:
        """Fragments whose address is exactly (book, loc) — never a neighbour."""
        ...

    def list_addresses(self, collections: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """Every distinct (book, loc, source title) among addressed fragments (of sources in ``collections``
        when given): the corpus's own books, for reading addresses as people type them (``footnote.retrieve.books``)."""
        ...

    def search_trigram(self, text: str, k: int) -> list[Hit]:
        """Fuzzy match of ``text`` against ``addr_label || source_id || tokens``."""
        ...


@runtime_checkable
class Store(SourceStore, VectorStore, LaneStore, ConversationStore, MemoryStore, KeyStore, RecognitionStore, Protocol):
    """Everything a backend provides: the capabilities above, curated memory, conversations, named keys and
    recognition jobs."""

    url: str

    def close(self) -> None: ...
