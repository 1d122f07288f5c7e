"""A lock for one shared embedding model that lets a waiting query embedding go before the next passage
chunk, and lets passage calls finish in the order they came. A search's query vector is on the turn's
critical path; a note's sentence vectors are not (they wait for their own search anyway). Without it,
34 concurrent first asks on a cold store queued their query embeddings behind each other's sentence
batches, and every search waited seconds (``bench/load.py``; docs/server.md)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


class QueryFirstLock:
    """Mutual exclusion with two kinds of holder. ``query()`` waits only for the current holder.
    ``passages()`` opens one passage call (its chunks share a ticket); each ``chunk()`` of it waits while
    any query is waiting and while an older passage call is still open, so calls finish first come, first
    served (the first turn's sentences are done first, not every turn's at the end). Passages can starve
    under an endless stream of queries, which is the intended order for a server (ingestion runs in its own
    worker processes)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False
        self._queries_waiting = 0
        self._tickets = itertools.count()
        self._open: set[int] = set()

    @contextmanager
    def query(self) -> Iterator[None]:
        with self._cond:
            self._queries_waiting += 1
            try:
                while self._busy:
                    self._cond.wait()
            finally:
                self._queries_waiting -= 1
            self._busy = True
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def passages(self) -> Iterator[_PassageCall]:
        with self._cond:
            ticket = next(self._tickets)
            self._open.add(ticket)
        try:
            yield _PassageCall(self, ticket)
        finally:
            with self._cond:
                self._open.discard(ticket)
                self._cond.notify_all()

    @contextmanager
    def _chunk(self, ticket: int) -> Iterator[None]:
        with self._cond:
            while self._busy or self._queries_waiting or min(self._open) != ticket:
                self._cond.wait()
            self._busy = True
        try:
            yield
        finally:
            self._release()

    @property
    def queries_waiting(self) -> int:
        with self._cond:
            return self._queries_waiting

    @property
    def contended(self) -> bool:
        """Whether other work waits for the model: a query, or an open passage call (its next chunk)."""
        with self._cond:
            return self._queries_waiting > 0 or bool(self._open)

    def _release(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()


class _PassageCall:
    """One open passage call of a :class:`QueryFirstLock`: ``with call.chunk(): …`` runs one chunk."""

    def __init__(self, lock: QueryFirstLock, ticket: int) -> None:
        self._lock = lock
        self.ticket = ticket

    def chunk(self) -> AbstractContextManager[None]:
        return self._lock._chunk(self.ticket)
