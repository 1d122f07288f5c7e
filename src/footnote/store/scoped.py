"""A store seen through a set of collections: what a named key limited to some collections may read.

:func:`scoped_store` wraps any backend. Every read of the corpus goes through the view, so a passage of
another collection never reaches the retrieval pool, the gate, the model or the answer:

- the lanes (dense, lexical, address, trigram; one by one or batched, with or without rows) run on the
  backend and the view keeps only the hits of readable sources — asking the backend for more hits
  (``k`` scaled by the share of sources the view reads, then four times more each time) until it has ``k`` of
  its own or the backend has none left, so a small collection in a large store still gets its top ``k``;
- fragments, sources, originals, cues, addresses and vectors by id come back only for readable sources
  (another collection's id reads as unknown: ``None``, skipped, or a zero vector);
- curated memory notes are shown only when ``note_visible`` says so (the engine: every source the note's
  references name lies in the view's collections);
- writes of the corpus are refused (``Forbidden``); conversations, sentence vectors, the embedding backlog
  and keys pass through (a conversation's owner already includes the key: ``footnote.server.access``).

Which source lies in which collection is read from the backend (``source_collections``) once, again when a
hit names a source the view has not seen, and at least every ``refresh_s`` seconds (a source moved to another
collection). ``stats`` counts the view's sources and fragments; the embedding ``backlog`` is the whole store's
(numbers, never text).
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from footnote.errors import Forbidden
from footnote.records.fragments import Cue, Fragment, Source
from footnote.records.memory import MemoryNote, NoteKind
from footnote.store.batch import (
    AddressCall,
    BatchSearch,
    BatchSearchRows,
    DenseCall,
    FragmentsWithEmbeddings,
    LaneCall,
    LexicalCall,
    TrigramCall,
    capabilities,
)
from footnote.store.conversations import Conversation, ConversationSummary, TurnRecord
from footnote.store.keys import ALL_COLLECTIONS, ApiKey
from footnote.store.memory import NoteVectors
from footnote.store.protocol import (
    BacklogStats,
    ClaimHolder,
    Hit,
    Original,
    SentenceVectorStore,
    Store,
    StoreStats,
)

#: How much more than ``k`` the view asks for at most in one go, and how fast it grows its ask.
_GROWTH = 4
_MIN_SHARE = 0.01


def source_of(fragment_id: str) -> str:
    """The source id of a fragment id (``f"{source_id}#{ordinal}"``)."""
    return fragment_id.rsplit("#", 1)[0]


class ScopedStore:
    """The view (see the module docstring). ``collections``: what it reads; ``note_visible``: which curated
    notes it shows."""

    def __init__(self, base: Store, collections: Iterable[str], note_visible: Callable[[MemoryNote], bool],
                 refresh_s: float = 5.0) -> None:
        self.base = base
        self.readable = frozenset(collections)
        if ALL_COLLECTIONS in self.readable:
            raise ValueError("a view of every collection is the store itself")
        self.url = base.url
        self.computes_here = base.computes_here
        self._note_visible = note_visible
        self._refresh_s = refresh_s
        self._lock = threading.Lock()
        self._of: dict[str, str] = {}
        self._at = -math.inf

    # --- which source lies where ------------------------------------------------------------------
    def _map(self, force: bool = False) -> dict[str, str]:
        now = time.monotonic()
        if force or now - self._at > self._refresh_s:
            with self._lock:
                if force or now - self._at > self._refresh_s:
                    self._of = self.base.source_collections()
                    self._at = time.monotonic()
        return self._of

    def reads_source(self, source_id: str) -> bool:
        got = self._map().get(source_id)
        if got is None:  # a source added since the map was read
            got = self._map(force=True).get(source_id)
        return got in self.readable

    def _keep(self, hits: Sequence[Hit]) -> list[Hit]:
        of = self._map()
        if any(source_of(h.fragment_id) not in of for h in hits):
            of = self._map(force=True)
        return [h for h in hits if of.get(source_of(h.fragment_id)) in self.readable]

    def _first_ask(self, k: int) -> int:
        of = self._map()
        share = sum(1 for c in of.values() if c in self.readable) / max(1, len(of))
        return max(k, math.ceil(k / max(share, _MIN_SHARE)))

    def _own(self, run: Callable[[int], list[Hit]], k: int) -> list[Hit]:
        """The first ``k`` readable hits of a lane (see the module docstring)."""
        return self._own_each([k], lambda asks: [run(n) for _, n in asks])[0]

    def _own_each(self, ks: Sequence[int], run: Callable[[list[tuple[int, int]]], list[list[Hit]]]) -> list[list[Hit]]:
        """The first ``ks[i]`` readable hits of each of several lanes run together: ``run`` takes (lane index, hits
        to ask for) pairs and returns each pair's hits; a lane short of its own ``k`` is asked again for more, until
        the backend has no more."""
        out: list[list[Hit]] = [[] for _ in ks]
        asks = {i: self._first_ask(k) for i, k in enumerate(ks) if k > 0}
        while asks:
            got = run(list(asks.items()))
            again = {}
            for (i, ask), hits in zip(asks.items(), got, strict=True):
                kept = self._keep(hits)
                if len(kept) >= ks[i] or len(hits) < ask:
                    out[i] = kept[: ks[i]]
                else:
                    again[i] = ask * _GROWTH
            asks = again
        return out

    # --- lanes ------------------------------------------------------------------------------------
    def search_dense(self, vector: np.ndarray, k: int, kinds: Sequence[str] | None = None) -> list[Hit]:
        return self._own(lambda n: self.base.search_dense(vector, n, kinds=kinds), k)

    def search_lexical(
        self, query: str, k: int, *, stemmed: bool, lang: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        return self._own(lambda n: self.base.search_lexical(query, n, stemmed=stemmed, lang=lang, kinds=kinds), k)

    def search_address(self, book: str, loc: str, k: int) -> list[Hit]:
        return self._own(lambda n: self.base.search_address(book, loc, n), k)

    def search_trigram(self, text: str, k: int) -> list[Hit]:
        return self._own(lambda n: self.base.search_trigram(text, n), k)

    def list_addresses(self, collections: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        wanted = self.readable if collections is None else self.readable & set(collections)
        return self.base.list_addresses(sorted(wanted))

    # --- sources and fragments by id ------------------------------------------------------------
    def get_source(self, source_id: str) -> Source | None:
        src = self.base.get_source(source_id)
        return src if src is not None and src.collection in self.readable else None

    def get_fragments(self, fragment_ids: Sequence[str]) -> list[Fragment]:
        return [f for f in self.base.get_fragments(fragment_ids) if self.reads_source(f.source_id)]

    def fragments_of(self, source_id: str) -> list[Fragment]:
        return self.base.fragments_of(source_id) if self.reads_source(source_id) else []

    def get_original(self, source_id: str) -> Original | None:
        return self.base.get_original(source_id) if self.reads_source(source_id) else None

    def get_cues(self, source_id: str, start_ms: int = 0, end_ms: int | None = None) -> list[Cue]:
        return self.base.get_cues(source_id, start_ms, end_ms) if self.reads_source(source_id) else []

    def source_hash(self, source_id: str) -> str | None:
        return self.base.source_hash(source_id) if self.reads_source(source_id) else None

    def list_sources(self, *, kind: str | None = None, lang: str | None = None, collection: str | None = None,
                     limit: int | None = None, offset: int = 0) -> list[Source]:
        if collection is not None:
            if collection not in self.readable:
                return []
            return self.base.list_sources(kind=kind, lang=lang, collection=collection, limit=limit, offset=offset)
        mine = [s for c in sorted(self.readable) for s in self.base.list_sources(kind=kind, lang=lang, collection=c)]
        mine.sort(key=lambda s: s.id)
        return mine[offset:] if limit is None else mine[offset: offset + limit]

    def count_sources(self, *, kind: str | None = None, lang: str | None = None, collection: str | None = None) -> int:
        names = self.readable if collection is None else self.readable & {collection}
        return sum(self.base.count_sources(kind=kind, lang=lang, collection=c) for c in names)

    def collections(self) -> dict[str, int]:
        return {c: n for c, n in self.base.collections().items() if c in self.readable}

    def source_collections(self) -> dict[str, str]:
        return {s: c for s, c in self._map(force=True).items() if c in self.readable}

    def fragment_counts(self, collections: Sequence[str]) -> list[tuple[str, str, int]]:
        return self.base.fragment_counts(sorted(self.readable & set(collections)))

    def generation(self) -> int:
        """The whole store's generation (a write to any collection moves it: a view derives from the whole)."""
        return self.base.generation()

    def vectors_generation(self) -> int:
        return self.base.vectors_generation()

    def stats(self) -> StoreStats:
        """The view's sources and fragments (by kind and language). ``embedded`` is exact once the whole store is
        embedded; while it is embedding, the store's count capped at the view's fragments (the backlog is not kept
        by collection)."""
        whole = self.base.stats()
        by_kind: dict[str, int] = {}
        by_lang: dict[str, int] = {}
        for kind, lang, n in self.base.fragment_counts(sorted(self.readable)):
            by_kind[kind] = by_kind.get(kind, 0) + n
            by_lang[lang] = by_lang.get(lang, 0) + n
        fragments = sum(by_kind.values())
        embedded = fragments if whole.embedded >= whole.fragments else min(fragments, whole.embedded)
        return replace(whole, sources=self.count_sources(), fragments=fragments, embedded=embedded,
                       by_kind=dict(sorted(by_kind.items())), by_lang=dict(sorted(by_lang.items())))

    # --- vectors ----------------------------------------------------------------------------------
    def get_embeddings(self, fragment_ids: Sequence[str]) -> np.ndarray:
        out = self.base.get_embeddings(fragment_ids)
        for i, fid in enumerate(fragment_ids):
            if not self.reads_source(source_of(fid)):
                out[i] = 0.0
        return out

    def iter_embeddings(self, batch: int = 1000) -> Iterable[tuple[list[str], np.ndarray]]:
        for ids, vecs in self.base.iter_embeddings(batch):
            keep = [i for i, fid in enumerate(ids) if self.reads_source(source_of(fid))]
            if keep:
                yield [ids[i] for i in keep], vecs[keep]

    def missing_embeddings(self, fragment_ids: Sequence[str]) -> set[str]:
        return self.base.missing_embeddings([f for f in fragment_ids if self.reads_source(source_of(f))])

    def embedder_info(self) -> tuple[str, int] | None:
        return self.base.embedder_info()

    def bind_embedder(self, name: str, dim: int) -> None:
        self.base.bind_embedder(name, dim)

    def backlog(self) -> BacklogStats:
        return self.base.backlog()

    def claim_holders(self) -> list[ClaimHolder]:
        return self.base.claim_holders()

    def get_sentence_vectors(self, embedder: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        if not isinstance(self.base, SentenceVectorStore):
            return {}
        return self.base.get_sentence_vectors(embedder, keys)

    def put_sentence_vectors(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        if isinstance(self.base, SentenceVectorStore):
            self.base.put_sentence_vectors(embedder, vectors)

    # --- curated memory -----------------------------------------------------------------------------
    def list_memory_notes(self, kind: NoteKind | None = None) -> list[MemoryNote]:
        return [n for n in self.base.list_memory_notes(kind) if self._note_visible(n)]

    def get_memory_note(self, note_id: str) -> MemoryNote | None:
        note = self.base.get_memory_note(note_id)
        return note if note is not None and self._note_visible(note) else None

    def memory_embedders(self) -> dict[str, str | None]:
        shown = {n.id for n in self.list_memory_notes()}
        return {i: e for i, e in self.base.memory_embedders().items() if i in shown}

    def memory_vectors(self, embedder: str) -> NoteVectors:
        nv = self.base.memory_vectors(embedder)
        shown = {n.id for n in self.list_memory_notes()}
        keep = [i for i, nid in enumerate(nv.note_ids) if nid in shown]
        return NoteVectors(tuple(nv.note_ids[i] for i in keep), tuple(nv.texts[i] for i in keep),
                           nv.vectors[keep] if len(nv.vectors) else nv.vectors)

    def put_memory_note(self, note: MemoryNote, texts: Sequence[str], vectors: np.ndarray | None,
                        embedder: str | None) -> MemoryNote:
        if not self._note_visible(note):
            raise Forbidden(f"note {note.id!r} names sources outside the collections this key may write")
        held = self.base.get_memory_note(note.id)
        if held is not None and not self._note_visible(held):  # never replace a note the key cannot see
            raise Forbidden(f"note id {note.id!r} is taken; choose another id")
        return self.base.put_memory_note(note, texts, vectors, embedder)

    def delete_memory_note(self, note_id: str) -> bool:
        if self.get_memory_note(note_id) is None:
            return False
        return self.base.delete_memory_note(note_id)

    # --- conversations and keys pass through (the owner carries the key) -------------------------------
    def append_turn(self, conversation_id: str | None, turn: TurnRecord, owner: str | None = None) -> tuple[str, int]:
        return self.base.append_turn(conversation_id, turn, owner)

    def get_conversation(self, conversation_id: str, owner: str | None = None) -> Conversation | None:
        return self.base.get_conversation(conversation_id, owner)

    def list_conversations(self, limit: int = 50, offset: int = 0, owner: str | None = None) -> list[ConversationSummary]:
        return self.base.list_conversations(limit, offset, owner)

    def delete_conversation(self, conversation_id: str, owner: str | None = None) -> bool:
        return self.base.delete_conversation(conversation_id, owner)

    def api_keys(self) -> list[ApiKey]:
        return self.base.api_keys()

    def api_key_by_hash(self, hashed: str) -> ApiKey | None:
        return self.base.api_key_by_hash(hashed)

    def any_api_key(self) -> bool:
        return self.base.any_api_key()

    # --- what a view never does ---------------------------------------------------------------------
    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise Forbidden("a key limited to some collections cannot change the corpus, its vectors or the keys")

    put_source = put_sources = delete_source = delete_sources = _refuse
    pending_fragments = claim_pending = renew_claims = release_claims = put_embeddings = _refuse
    note_embedding_rate = rebind_embedder = put_api_key = revoke_api_key = _refuse
    put_recognition_job = claim_recognition_job = renew_recognition_job = finish_recognition_job = _refuse

    def recognition_jobs(self) -> list[Any]:
        return []

    def close(self) -> None:
        """The backend stays open: it is the server's."""


class _Batched(ScopedStore):
    """The view of a backend that runs lane calls in batches (PostgreSQL): the same, batched."""

    def search_many(self, calls: Sequence[LaneCall]) -> list[list[Hit]]:
        batch = capabilities(self.base).batch
        assert batch is not None
        return self._own_many(calls, batch.search_many)

    def _own_many(self, calls: Sequence[LaneCall], run: Callable[[Sequence[LaneCall]], list[list[Hit]]]) -> list[list[Hit]]:
        return self._own_each([_k(c) for c in calls], lambda asks: run([_with_k(calls[i], n) for i, n in asks]))


class _BatchedRows(_Batched):
    def search_many_rows(self, calls: Sequence[LaneCall], rows: dict[str, tuple[Fragment, np.ndarray]]) -> list[list[Hit]]:
        batch = capabilities(self.base).batch_rows
        assert batch is not None
        got: dict[str, tuple[Fragment, np.ndarray]] = {}
        out = self._own_many(calls, lambda cs: batch.search_many_rows(cs, got))
        rows.update({fid: row for fid, row in got.items() if self.reads_source(row[0].source_id)})
        return out


class _WithVectors:
    def get_fragments_with_embeddings(self: Any, fragment_ids: Sequence[str]) -> tuple[list[Fragment], np.ndarray]:
        mine = [f if self.reads_source(source_of(f)) else "" for f in fragment_ids]
        with_vectors = capabilities(self.base).with_vectors
        assert with_vectors is not None
        frags, vecs = with_vectors.get_fragments_with_embeddings(mine)
        return [f for f in frags if self.reads_source(f.source_id)], vecs


def _k(call: LaneCall) -> int:
    return int(call.k)


def _with_k(call: LaneCall, k: int) -> LaneCall:
    assert isinstance(call, DenseCall | LexicalCall | AddressCall | TrigramCall)
    return replace(call, k=k)


def scoped_store(base: Store, collections: Iterable[str], note_visible: Callable[[MemoryNote], bool],
                 refresh_s: float = 5.0) -> Store:
    """``base`` seen through ``collections`` (see the module docstring), with the same optional capabilities
    (batched lanes, rows, fragments with vectors) as ``base``, so the same lane runner serves it."""
    caps = capabilities(base)
    bases: list[type] = []
    if caps.with_vectors is not None:
        bases.append(_WithVectors)
    if caps.batch_rows is not None and caps.batch is not None:
        bases.append(_BatchedRows)
    elif caps.batch is not None:
        bases.append(_Batched)
    else:
        bases.append(ScopedStore)
    view: Store = _view_class(tuple(bases))(base, collections, note_visible, refresh_s)
    return view


@functools.cache
def _view_class(bases: tuple[type, ...]) -> Any:
    return type("ScopedStore", bases, {}) if len(bases) > 1 else bases[0]


__all__ = ["BatchSearch", "BatchSearchRows", "FragmentsWithEmbeddings", "ScopedStore", "scoped_store", "source_of"]
