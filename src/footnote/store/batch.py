"""Lane calls as values, so a store can run a whole round's lanes at once.

The retrieval lanes (``retrieve.lanes``) describe each search as a :data:`LaneCall` and hand a list
of them to :func:`run_calls`. A store with a ``search_many(calls)`` method (PostgreSQL: one
pipelined round trip) runs them together; any other store runs them one by one, timed.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from footnote.records.fragments import Fragment
from footnote.store.protocol import Hit, LaneStore


@dataclass(frozen=True)
class DenseCall:
    vector: np.ndarray
    k: int
    kinds: tuple[str, ...] | None = None
    # rows mode: a store may leave out the rows of hits whose cosine is below this, returning them as
    # ``Hit(id, cosine, lang)`` instead (retrieve.dense_rows_floor_margin); None: every hit's row
    rows_min: float | None = None


@dataclass(frozen=True)
class LexicalCall:
    query: str
    k: int
    stemmed: bool
    lang: str | None = None
    kinds: tuple[str, ...] | None = None


@dataclass(frozen=True)
class AddressCall:
    book: str
    loc: str
    k: int


@dataclass(frozen=True)
class TrigramCall:
    text: str
    k: int


LaneCall = DenseCall | LexicalCall | AddressCall | TrigramCall


@runtime_checkable
class BatchSearch(Protocol):
    """A store that runs many lane calls together (results in the order of ``calls``)."""

    def search_many(self, calls: Sequence[LaneCall]) -> list[list[Hit]]: ...


@runtime_checkable
class BatchSearchRows(Protocol):
    """A store whose lane statements can also return their hits' rows (PostgreSQL: joined in the same
    statement, so the pool needs no second read)."""

    def search_many_rows(self, calls: Sequence[LaneCall], rows: dict[str, tuple[Fragment, np.ndarray]]) -> list[list[Hit]]:
        """:meth:`BatchSearch.search_many`, adding to ``rows`` the fragment and vector of each hit not
        in it yet."""
        ...


@runtime_checkable
class FragmentsWithEmbeddings(Protocol):
    """A store that returns fragments and their vectors in one call (PostgreSQL: one statement)."""

    def get_fragments_with_embeddings(self, fragment_ids: Sequence[str]) -> tuple[list[Fragment], np.ndarray]:
        """(the fragments found, in the order asked; a matrix with one row per *asked* id — zeros for
        an unknown id or one without a vector)."""
        ...


@dataclass(frozen=True)
class Capabilities:
    """What a store can do beyond the ``Store`` protocol, found once per store (:func:`capabilities`):
    each optional capability as its typed protocol, or None."""

    batch: BatchSearch | None = None
    batch_rows: BatchSearchRows | None = None
    with_vectors: FragmentsWithEmbeddings | None = None


_CAPABILITIES: weakref.WeakKeyDictionary[Any, Capabilities] = weakref.WeakKeyDictionary()


def capabilities(store: object) -> Capabilities:
    """The store's optional capabilities (``isinstance`` on the protocols, once per store object: a search asks
    on every lane batch, and walking a protocol's attributes each time was a measurable share of it)."""
    try:
        return _CAPABILITIES[store]
    except (KeyError, TypeError):
        pass
    caps = Capabilities(
        batch=store if isinstance(store, BatchSearch) else None,
        batch_rows=store if isinstance(store, BatchSearchRows) else None,
        with_vectors=store if isinstance(store, FragmentsWithEmbeddings) else None,
    )
    with contextlib.suppress(TypeError):  # an object that takes no weak reference: asked again next time
        _CAPABILITIES[store] = caps
    return caps


def call_one(store: LaneStore, call: LaneCall) -> list[Hit]:
    """One lane call through the plain ``LaneStore`` protocol."""
    if isinstance(call, DenseCall):
        return store.search_dense(call.vector, call.k, kinds=list(call.kinds) if call.kinds is not None else None)
    if isinstance(call, LexicalCall):
        return store.search_lexical(call.query, call.k, stemmed=call.stemmed, lang=call.lang,
                                    kinds=list(call.kinds) if call.kinds is not None else None)
    if isinstance(call, AddressCall):
        return store.search_address(call.book, call.loc, call.k)
    return store.search_trigram(call.text, call.k)


def run_calls(
    store: LaneStore, calls: Sequence[LaneCall], rows: dict[str, tuple[Fragment, np.ndarray]] | None = None
) -> tuple[list[list[Hit]], list[float] | None]:
    """Every call's hits, in order, and each call's milliseconds (None when the store batched them).
    ``rows``: where a store that can (:class:`BatchSearchRows`) adds the hits' fragments and vectors."""
    if not calls:
        return [], []
    caps = capabilities(store)
    if rows is not None and caps.batch_rows is not None:
        return caps.batch_rows.search_many_rows(calls, rows), None
    if caps.batch is not None:
        return caps.batch.search_many(calls), None
    out: list[list[Hit]] = []
    ms: list[float] = []
    for c in calls:
        t0 = time.perf_counter()
        out.append(call_one(store, c))
        ms.append((time.perf_counter() - t0) * 1000)
    return out, ms
