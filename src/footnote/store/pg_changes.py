"""Whether a PostgreSQL store's corpus changed, as this process sees it: the backend's one freshness mechanism.

:class:`ChangeFeed` keeps two counters in this process: the generation of the *sources* (a source added, replaced or
removed: ``SourceStore.generation``) and that of the *vectors* (any write of fragments or their vectors, the sources'
included: ``VectorStore.vectors_generation``). This process's own writes bump it
at once (the store's write methods call :meth:`ChangeFeed.bump`); another process's writes arrive as a
``NOTIFY footnote_fragments`` sent at its commit by statement triggers on ``fragments`` (migration 13, payload the
schema: the vectors' generation) and on ``sources`` (migration 16, payload "<schema>:sources": both), which a
dedicated ``LISTEN`` connection receives. Reading the generation drains
what that connection holds first (no round trip: a read of what the socket has), so a commit is seen by the
first read after its notification arrived — at once on a local server. Notifications are per schema: a write
to another store in the same database is not ours.

What reads it: every turn as it opens (``SourceStore.generation``, the turn's reader: the books, the prose
check's names) and this process's copies of small kind groups for exact search (``store/pg_exact.py``). If the
listening connection cannot be opened or breaks, nothing can vouch that the corpus is unchanged: every read of
the generation returns a new value (each turn rebuilds what it derives) until a new ``LISTEN`` is in effect,
tried again at most every ``store.postgres.listen_retry_s`` (a server that refuses ``LISTEN``, a standby, is
not dialled once per turn). A link dropped without a word (a NAT's idle timeout) is found by TCP keepalives
(``store.postgres.listen_keepalive_s``): the next read then fails, and counts as a change.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

log = logging.getLogger(__name__)

CHANNEL = "footnote_fragments"


class ChangeFeed:
    """This process's generation of one PostgreSQL store (see the module docstring)."""

    def __init__(self, open_connection: Callable[[], psycopg.Connection[Any]], schema: str = "",
                 retry_s: float = 10.0) -> None:
        self._open = open_connection
        self._retry_s = retry_s
        self._failed_at: float | None = None  # when opening the listener last failed (or it broke)
        self._schema = schema  # the store's schema: a change to another schema's tables (the payload) is not ours
        self._lock = threading.Lock()
        self._drain_lock = threading.Lock()  # one reader of the listening connection at a time
        self._gen = 0  # the vectors' generation
        self._sources = 0  # the sources' generation
        self._listener: psycopg.Connection[Any] | None = None
        self._closed = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(psycopg.Error):
                listener.close()

    def bump(self, *, sources: bool = True) -> None:
        """This process wrote to the corpus: fragments or vectors, and (``sources``) a source."""
        with self._lock:
            self._gen += 1
            self._sources += int(sources)

    def generation(self) -> int:
        """The sources' generation now: the notifications received so far taken into account; a new value on every call
        while nothing listens (the listening connection is opened on the first call, and again after a break)."""
        self._refresh()
        with self._lock:
            return self._sources

    def vectors_generation(self) -> int:
        """The vectors' generation now (as :meth:`generation`)."""
        self._refresh()
        with self._lock:
            return self._gen

    def _refresh(self) -> None:
        if not self.listening():
            self.bump()
        else:
            self._drain()

    def listening(self) -> bool:
        """Whether a ``LISTEN`` is in effect (opened here when it is not: a change from now on is seen)."""
        with self._lock:
            if self._listener is not None:
                return True
            if self._closed:
                return False
            if self._failed_at is not None and time.monotonic() - self._failed_at < self._retry_s:
                return False  # not yet: tried again after store.postgres.listen_retry_s
            self._failed_at = time.monotonic()  # one opener at a time; cleared once it listens
        try:
            conn = self._open()
            conn.autocommit = True
            conn.execute(f"LISTEN {CHANNEL}")
        except Exception as e:  # a StoreError from the pool's connect, or psycopg's
            log.info("cannot listen for the store's changes (%s): every turn reads the corpus afresh, "
                     "listening tried again in %.0f s", e, self._retry_s)
            return False
        with self._lock:
            if self._listener is None and not self._closed:
                self._failed_at = None
                self._listener = conn
                self._gen += 1  # nothing read before this LISTEN can be vouched for
                self._sources += 1
                return True
        conn.close()
        return self._listener is not None

    def _drain(self) -> None:
        """Take the notifications the listening connection holds; any of ours bumps the generation."""
        with self._lock:
            listener = self._listener
        if listener is None:
            return
        try:
            with self._drain_lock:
                payloads = {n.payload for n in listener.notifies(timeout=0)}
            changed = bool(payloads & {"", self._schema, f"{self._schema}:sources"})
            sources = bool(payloads & {"", f"{self._schema}:sources"})
        except psycopg.Error as e:
            log.info("the store's change notifications stopped (%s): the corpus is read afresh until they are back", e)
            with self._lock:
                if self._listener is listener:
                    self._listener = None
                    self._failed_at = None  # re-open at the next read (a later failure waits retry_s)
            with contextlib.suppress(psycopg.Error):
                listener.close()
            changed = sources = True
        if changed:
            self.bump(sources=sources)


__all__ = ["CHANNEL", "ChangeFeed"]
