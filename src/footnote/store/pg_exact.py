"""In-process exact dense search over a PostgreSQL store's small kind groups.

A kind group of at most ``store.postgres.exact_search_max`` embedded fragments (at 100k fragments: the
verses) is searched exactly, not through HNSW. On the server that scan reads every row of the group —
at 10k verses 2,500 heap pages and ≈ 14–16 ms of backend CPU per search, the largest single cost of a
search there (``bench/pg_explain.py``). Here the group's vectors and rows are copied once into this
process (always; ``PostgresStore(exact_copy=False)`` leaves it on the server for tests and
``bench/pg_ab.py``) and searched with one matrix product (≈ 1 ms at 10k × 384).

Freshness: this process's own writes drop every copy at once (:meth:`ExactGroups.invalidate`, called
by the store's write methods); another process's writes arrive as a ``NOTIFY footnote_fragments`` sent
at its commit by a statement trigger on ``fragments`` (migration 13), which a dedicated ``LISTEN``
connection receives and every lookup drains first (no round trip: a read of what the socket holds).
A copy is loaded after the ``LISTEN`` is in effect and is thrown away if a notification arrived while it
loaded, so no commit can slip between the copy and its invalidation. A search that runs while another
process commits may or may not see that commit — as with the server's own scan. If the listening
connection breaks, every copy is dropped and searches go back to the server until it is re-opened.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from footnote.records.fragments import Fragment

log = logging.getLogger(__name__)

CHANNEL = "footnote_fragments"

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
    """The copies of one store's small kind groups, kept fresh by its writes and by ``LISTEN``."""

    def __init__(
        self, open_connection: Callable[[], psycopg.Connection[Any]], load: Callable[[GroupKey], Group],
        submit: Callable[[Callable[[], None]], object], schema: str = "",
    ) -> None:
        self._open = open_connection
        self._schema = schema  # the store's schema: a change to another schema's fragments (the payload) is not ours
        self._load = load
        self._submit = submit
        self._lock = threading.Lock()
        self._drain_lock = threading.Lock()  # one reader of the listening connection at a time
        self._groups: dict[GroupKey, Group] = {}
        self._loading: set[GroupKey] = set()
        self._gen = 0  # bumped by every invalidation: a load begun before it is discarded
        self._listener: psycopg.Connection[Any] | None = None
        self._closed = False
        self.loads = 0  # groups loaded (tests, the bench)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._groups.clear()
            listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(psycopg.Error):
                listener.close()

    def invalidate(self) -> None:
        """Drop every copy (this process wrote to ``fragments``, or another one did)."""
        with self._lock:
            self._gen += 1
            self._groups.clear()

    def get(self, kinds: Sequence[str] | None) -> Group | None:
        """The fresh copy of the group of ``kinds``, or None — then a load is started in the background
        and the caller searches on the server this time."""
        key: GroupKey = tuple(sorted(set(kinds))) if kinds is not None else None
        self._drain()
        with self._lock:
            if self._closed:
                return None
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

    def _drain(self) -> None:
        """Take the notifications the listening connection holds; any of them drops every copy."""
        with self._lock:
            listener = self._listener
        if listener is None:
            return
        try:
            with self._drain_lock:
                changed = any(n.payload in ("", self._schema) for n in listener.notifies(timeout=0))
        except psycopg.Error as e:
            log.info("the store's change notifications stopped (%s): exact search goes back to the server", e)
            with self._lock:
                if self._listener is listener:
                    self._listener = None
            with contextlib.suppress(psycopg.Error):
                listener.close()
            changed = True
        if changed:
            self.invalidate()

    def _listen(self) -> bool:
        """The ``LISTEN`` connection, opened once (before any copy is loaded)."""
        with self._lock:
            if self._listener is not None:
                return True
        try:
            conn = self._open()
            conn.autocommit = True
            conn.execute(f"LISTEN {CHANNEL}")
        except Exception as e:  # a StoreError from the pool's connect, or psycopg's
            log.info("cannot listen for the store's changes (%s): exact search stays on the server", e)
            return False
        with self._lock:
            if self._listener is None and not self._closed:
                self._listener = conn
                self._gen += 1  # nothing loaded before this LISTEN can be trusted
                self._groups.clear()
                return True
        conn.close()
        return self._listener is not None

    def _fill(self, key: GroupKey) -> None:
        try:
            if not self._listen():
                return
            with self._lock:
                gen = self._gen  # after the LISTEN: a change from now on bumps it
            group = self._load(key)
            self._drain()  # a commit during the load arrives here (or at the next lookup)
            with self._lock:
                if gen == self._gen and not self._closed:
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
