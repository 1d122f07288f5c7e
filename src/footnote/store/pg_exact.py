"""In-process exact dense search over a PostgreSQL store's small kind groups.

A kind group of at most ``store.postgres.exact_search_max`` embedded fragments (at 100k fragments: the
verses) is searched exactly, not through HNSW. On the server that scan reads every row of the group —
at 10k verses 2,500 heap pages and ≈ 14–16 ms of backend CPU per search, the largest single cost of a
search there (``bench/pg_explain.py``). Here the group's vectors and rows are copied once into this
process (always; ``PostgresStore(exact_copy=False)`` leaves it on the server for tests and
``bench/pg_ab.py``) and searched with one matrix product (≈ 1 ms at 10k × 384).

Freshness: the store's one mechanism, its generation in this process (``store/pg_changes.py``: this
process's writes, and every other process's commits by ``NOTIFY``). Every lookup reads it first and drops every
copy when it moved. A copy is loaded only while a ``LISTEN`` is in effect and is kept only if the generation did
not move while it loaded, so no commit can slip between the copy and its invalidation. A search that runs
while another process commits may or may not see that commit — as with the server's own scan. If the
listening connection breaks, every copy is dropped and searches go back to the server until it is re-opened.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from footnote.records.fragments import Fragment
from footnote.store.pg_changes import ChangeFeed

log = logging.getLogger(__name__)

#: A kind group's key: its sorted kinds, or None for the whole store.
GroupKey = tuple[str, ...] | None


@dataclass(frozen=True)
class Group:
    """One kind group's embedded fragments: ids in the server's order, their vectors as stored, the
    vectors' norms, and the rows."""

    ids: tuple[str, ...]
    vectors: np.ndarray  # (n, dim) float32 as stored (rows mode returns them)
    norms: np.ndarray  # (n,) float32, zeros replaced by 1
    fragments: tuple[Fragment, ...]

    def nearest(self, q: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(row, 1 - cosine distance) of the ``k`` nearest, by distance then id — the order of the
        server's ``ORDER BY embedding <=> q, id``."""
        n = len(self.ids)
        if n == 0 or k <= 0:
            return []
        qn = float(np.linalg.norm(q))
        if qn == 0.0:
            return []
        sims = (self.vectors @ (np.asarray(q, dtype=np.float32) / qn)) / self.norms
        k = min(k, n)
        top = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
        # the rows are in id order, so the row index breaks ties as the id does; every row tied with the
        # k-th is taken so that the tie-break is the id's, not argpartition's
        kth = float(np.min(sims[top]))
        tied = np.flatnonzero(sims >= kth)
        order = sorted(tied.tolist(), key=lambda i: (-float(sims[i]), i))[:k]
        return [(i, float(sims[i])) for i in order]


class ExactGroups:
    """The copies of one store's small kind groups, kept while the store's generation stays the same."""

    def __init__(
        self, changes: ChangeFeed, load: Callable[[GroupKey], Group], submit: Callable[[Callable[[], None]], object],
    ) -> None:
        self._changes = changes
        self._load = load
        self._submit = submit
        self._lock = threading.Lock()
        self._groups: dict[GroupKey, Group] = {}
        self._at = -1  # the generation the copies are of
        self._loading: set[GroupKey] = set()
        self._closed = False
        self.loads = 0  # groups loaded (tests, the bench)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._groups.clear()

    def invalidate(self) -> None:
        """Drop every copy (this process wrote to ``fragments``; the store bumps its generation too)."""
        with self._lock:
            self._groups.clear()

    def _fresh(self, gen: int) -> None:
        """(under the lock) The copies are of generation ``gen`` from now on: older ones are dropped."""
        if gen != self._at:
            self._groups.clear()
            self._at = gen

    def get(self, kinds: Sequence[str] | None) -> Group | None:
        """The fresh copy of the group of ``kinds``, or None — then a load is started in the background
        and the caller searches on the server this time."""
        key: GroupKey = tuple(sorted(set(kinds))) if kinds is not None else None
        gen = self._changes.vectors_generation()
        with self._lock:
            if self._closed:
                return None
            self._fresh(gen)
            group = self._groups.get(key)
            if group is not None or key in self._loading:
                return group
            self._loading.add(key)
        try:
            self._submit(lambda: self._fill(key))
        except RuntimeError:  # the store is closing
            with self._lock:
                self._loading.discard(key)
        return None

    def _fill(self, key: GroupKey) -> None:
        try:
            if not self._changes.listening():
                return
            gen = self._changes.vectors_generation()  # under the LISTEN: a change from now on moves it
            group = self._load(key)
            if self._changes.vectors_generation() != gen:  # a commit during the load: the copy may be older than it
                return
            with self._lock:
                if not self._closed and gen >= self._at:  # (a lookup may have seen a newer generation meanwhile)
                    self._fresh(gen)
                    self._groups[key] = group
                    self.loads += 1
        except Exception as e:
            log.info("loading a kind group for exact search failed (%s): searched on the server meanwhile", e)
        finally:
            with self._lock:
                self._loading.discard(key)


def group_from_rows(rows: Sequence[Sequence[Any]], fragment: Callable[[Sequence[Any]], Fragment]) -> Group:
    """A :class:`Group` from ``(fragment columns…, embedding)`` rows in id order. The vectors' dimension is
    the rows' own (another process may have rebound the store to another one)."""
    frags = [fragment(r[:-1]) for r in rows]
    vectors = np.array([np.asarray(r[-1], dtype=np.float32) for r in rows], dtype=np.float32).reshape(len(rows), -1)
    norms = np.linalg.norm(vectors, axis=1).astype(np.float32)
    norms[norms == 0] = 1.0
    return Group(tuple(f.id for f in frags), vectors, norms, tuple(frags))
