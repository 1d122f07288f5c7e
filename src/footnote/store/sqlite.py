"""The embedded SQLite store: one file, WAL, one writer, numbered migrations, FTS5 + trigram, numpy dense.

Schema and rules: ``docs/store.md`` and ``store/migrations/sqlite/*.sql``. Every write is one
``BEGIN IMMEDIATE`` transaction (a process-wide lock serialises this process's writers; SQLite's busy
timeout the other processes'); readers never block and see a committed snapshot. Each thread gets its
own connection, and only that thread closes it: :meth:`SqliteStore.close` closes its own and those of
threads that have ended, and a live thread's is closed by that thread the next time it touches the closed
store (closing a connection another thread is stepping on crashes the interpreter).
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from footnote.errors import StoreError
from footnote.records.fragments import Cue, Fragment, Source
from footnote.settings import StoreSettings
from footnote.store.conversations_sqlite import SqliteConversations
from footnote.store.dense import DenseCache, DenseSnapshot
from footnote.store.memory_sqlite import SqliteMemory
from footnote.store.protocol import BacklogStats, Hit, Original, PendingFragment, SourceWrite, StoreStats
from footnote.store.sql import page_clause, source_filter
from footnote.store.sqlite_schema import (
    FRAGMENT_COLS,
    IN_CHUNK,
    MIN_SQLITE,
    SOURCE_COLS,
    book_key,
    fragment_from_row,
    legacy_collection,
    load_migrations,
    locator_row,
    source_from_row,
    split_sql,
)
from footnote.store.text import Analyzer, fold, fts_or, fts_phrase, tokenize, trigrams
from footnote.store.validate import check_batch_ids, check_cues, check_embeddings, check_put

log = logging.getLogger(__name__)


_DIM_KEY = ("", "embedder_dim")  # the per-generation counts also keep the bound dimension (0: none)


class SqliteStore(SqliteConversations, SqliteMemory):
    """The ``Store`` protocol on one SQLite file (see the module docstring)."""

    #: its searches compute in this process, on this machine's cores (``retrieve.embed_first``)
    computes_here = True

    def __init__(self, path: Path, settings: StoreSettings) -> None:
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise StoreError(
                f"SQLite {sqlite3.sqlite_version} is too old: Footnote needs {'.'.join(map(str, MIN_SQLITE))}+ "
                "(FTS5 with the trigram tokenizer)"
            )
        self.path = Path(path).expanduser().resolve()
        self.url = f"sqlite:///{self.path}"
        self.settings = settings
        self._busy_s = settings.sqlite.busy_timeout_ms / 1000.0
        self._local = threading.local()
        self._conns: list[tuple[sqlite3.Connection, threading.Thread]] = []  # (connection, its thread)
        self._conns_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        self._analyzer = Analyzer()
        self._dense = DenseCache()
        # per write generation: fragment rows + vectors the retrieval pool read, fragment count and
        # term document frequencies (a write bumps the generation and so empties them)
        self._gen_cache: tuple[int, dict[str, tuple[Fragment, bytes | None]], dict[tuple[str, str], int]] = (-1, {}, {})
        # (generation, column → the terms lexical_max_df leaves out) of a small store (_drop_common_terms)
        self._common_terms: tuple[int, dict[str, frozenset[str]]] = (-1, {})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.path}: cannot create the store's folder: {e}") from e
        try:
            conn = self._conn()
            try:
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            except sqlite3.DatabaseError as e:
                raise StoreError(f"{self.path}: not a Footnote SQLite store ({e})") from e
            if str(mode).lower() != "wal":
                raise StoreError(f"{self.path}: cannot switch to WAL mode (got {mode!r})")
            self._migrate(conn)
        except BaseException:
            self.close()
            raise

    # --- connections and transactions ---------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if self._closed:
            if conn is not None:  # this thread's connection, left open by a close() on another thread
                self._release_own()
            raise StoreError(f"store {self.url} is closed")
        if conn is None:
            try:
                conn = sqlite3.connect(
                    str(self.path), timeout=self._busy_s, isolation_level=None, check_same_thread=False
                )
                conn.execute(f"PRAGMA busy_timeout={int(self.settings.sqlite.busy_timeout_ms)}")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA temp_store=MEMORY")
                conn.execute("PRAGMA cache_size=-32000")
            except sqlite3.Error as e:
                raise StoreError(f"{self.path}: cannot open the store: {e}") from e
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append((conn, threading.current_thread()))
        return conn

    def _release_own(self) -> None:
        """Close this thread's connection and forget it (the store was closed)."""
        conn, self._local.conn = getattr(self._local, "conn", None), None
        if conn is not None:
            self._close_own(conn)

    def _close_own(self, conn: sqlite3.Connection) -> None:
        try:
            conn.close()
        except sqlite3.Error:  # pragma: no cover - closing never matters more than the caller
            log.debug("error closing a connection", exc_info=True)

    @contextmanager
    def _immediate(self, conn: sqlite3.Connection, locked: str, failed: str) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` under this process's write lock; COMMIT when the block ends, ROLLBACK on any
        exception. SQLite errors become a :class:`StoreError` ("<path>: <locked> (…)" when the lock cannot
        be had, "<path>: <failed> and was rolled back: …" after)."""
        with self._write_lock:
            self._drop_orphan_transaction(conn)
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as e:
                raise StoreError(f"{self.path}: {locked} ({e})") from e
            self._local.active = True
            try:
                try:
                    yield
                    conn.execute("COMMIT")
                except BaseException as e:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if isinstance(e, sqlite3.Error):
                        raise StoreError(f"{self.path}: {failed} and was rolled back: {e}") from e
                    raise
            finally:
                self._local.active = False

    def _drop_orphan_transaction(self, conn: sqlite3.Connection) -> None:
        """Roll back a transaction no block owns: a signal (Ctrl-C) that lands between ``BEGIN`` and the
        ``try`` guarding it leaves one open, and the next block's ``BEGIN`` would fail on it."""
        if conn.in_transaction and not getattr(self._local, "active", False):
            log.debug("%s: rolling back a transaction left open by an interrupted block", self.path)
            conn.execute("ROLLBACK")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One BEGIN IMMEDIATE transaction; rolled back on any exception; bumps the generation."""
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "write failed"):
            yield conn
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every statement inside sees the same committed snapshot."""
        conn = self._conn()
        self._drop_orphan_transaction(conn)
        conn.execute("BEGIN")
        self._local.active = True
        try:
            yield conn
        except sqlite3.ProgrammingError as e:
            if self._closed:  # closed by another thread (shutdown) while this one was reading
                raise StoreError(f"store {self.url} is closed") from e
            raise
        finally:
            self._local.active = False
            try:
                if conn.in_transaction:
                    conn.execute("COMMIT")
            except sqlite3.ProgrammingError:  # this very thread closed the store inside the block
                pass
            if self._closed:  # closed by another thread meanwhile: this thread closes its own connection
                self._release_own()

    def close(self) -> None:
        """Close the store: this thread's connection and those of ended threads now; a live thread's
        when that thread next touches the store (it gets a :class:`StoreError` then)."""
        me = threading.current_thread()
        with self._conns_lock:
            self._closed = True
            for c, owner in self._conns:
                if owner is me or not owner.is_alive():
                    self._close_own(c)
            self._conns.clear()
        self._local.conn = None  # closed above with the others of this thread's
        self._dense.clear()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- migrations -----------------------------------------------------------------------------

    def schema_version(self) -> int:
        return int(self._conn().execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self, conn: sqlite3.Connection) -> None:
        migrations = load_migrations()
        latest = len(migrations)
        if self.schema_version() == latest:
            return
        conn.create_function("footnote_collection_of", 2, legacy_collection, deterministic=True)
        with self._immediate(conn, "cannot lock the store to migrate it", "migration failed"):
            current = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if current > latest:
                raise StoreError(
                    f"{self.path}: schema version {current} is newer than this Footnote knows ({latest}); "
                    "upgrade Footnote"
                )
            for num, name, sql in migrations[current:]:
                log.info("store %s: applying migration %s", self.path, name)
                for stmt in split_sql(sql):
                    conn.execute(stmt)
                conn.execute(f"PRAGMA user_version={num}")

    # --- embedder binding -----------------------------------------------------------------------

    def _binding(self, conn: sqlite3.Connection) -> tuple[str, int] | None:
        rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder_name', 'embedder_dim')"))
        if "embedder_name" not in rows:
            return None
        return rows["embedder_name"], int(rows["embedder_dim"])

    def embedder_info(self) -> tuple[str, int] | None:
        return self._binding(self._conn())

    def bind_embedder(self, name: str, dim: int) -> None:
        if not name or int(dim) <= 0:
            raise StoreError(f"bind_embedder: bad embedder ({name!r}, dim {dim})")
        if self._binding(self._conn()) == (name, int(dim)):
            return
        with self._write() as conn:
            old = self._binding(conn)
            if old == (name, int(dim)):
                return
            if old is not None:
                held = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
                if held:
                    raise StoreError(
                        f"store {self.url} holds {held} vectors from embedder {old[0]!r} (dim {old[1]}); it cannot "
                        f"be used with embedder {name!r} (dim {dim}). Re-ingest into a new store (--store PATH) "
                        f"or leave --embedder (and embedder.name) unset to use the store's own, {old[0]!r}."
                    )
                log.info("store %s: rebinding empty embedder slot %s → %s", self.url, old, (name, dim))
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embedder_name", name), ("embedder_dim", str(int(dim)))],
            )

    def rebind_embedder(self, name: str, dim: int) -> int:
        if not name or int(dim) <= 0:
            raise StoreError(f"rebind_embedder: bad embedder ({name!r}, dim {dim})")
        with self._write() as conn:
            if self._binding(conn) == (name, int(dim)):
                return 0
            dropped = int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
            conn.execute("DELETE FROM embeddings")
            conn.execute("DELETE FROM memory_vectors")  # curated notes too: `reembed` embeds them again
            conn.execute("UPDATE memory_notes SET embedder = NULL")
            conn.execute("DELETE FROM sentence_vectors WHERE embedder <> ?", [name])
            conn.execute("DELETE FROM meta WHERE key IN ('embed_rate', 'embed_rate_at')")
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embedder_name", name), ("embedder_dim", str(int(dim)))],
            )
        log.info("store %s: rebound to embedder %s (dim %d); %d vectors dropped", self.url, name, dim, dropped)
        return dropped

    # --- sentence vectors (the extractive answer's candidates) ----------------------------------

    def get_sentence_vectors(self, embedder: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(keys))
        out: dict[str, np.ndarray] = {}
        with self._read() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                chunk = wanted[i : i + IN_CHUNK]
                for key, vec in conn.execute(
                    f"SELECT key, vec FROM sentence_vectors WHERE embedder = ? AND key IN ({','.join('?' * len(chunk))})",
                    [embedder, *chunk],
                ):
                    out[key] = np.frombuffer(vec, dtype="<f4")
        return out

    def put_sentence_vectors(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        rows = [(embedder, k, np.asarray(v, dtype="<f4").tobytes()) for k, v in vectors.items()]
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "keeping sentence vectors failed"):
            conn.executemany("INSERT OR REPLACE INTO sentence_vectors (embedder, key, vec) VALUES (?, ?, ?)", rows)

    # --- embedding backlog ----------------------------------------------------------------------

    def pending_fragments(self, limit: int, after: str | None = None) -> list[PendingFragment]:
        if limit <= 0:
            return []
        rows = self._conn().execute(
            "SELECT f.id, f.content_hash, f.text FROM fragments f WHERE f.id > ? "
            "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.rid = f.rid) ORDER BY f.id LIMIT ?",
            (after or "", int(limit)),
        )
        return [PendingFragment(*r) for r in rows]

    def claim_pending(self, limit: int, holder: str, lease_s: float) -> list[PendingFragment]:
        if limit <= 0:
            return []
        conn = self._conn()
        now = time.time()
        with self._immediate(conn, "the store is locked by another writer", "claiming backlog fragments failed"):
            conn.execute("DELETE FROM embed_leases WHERE until <= ?", (now,))
            rows = [PendingFragment(*r) for r in conn.execute(
                "SELECT f.id, f.content_hash, f.text FROM fragments f"
                " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.rid = f.rid)"
                " AND NOT EXISTS (SELECT 1 FROM embed_leases l WHERE l.fragment_id = f.id) ORDER BY f.id LIMIT ?",
                (int(limit),),
            )]
            conn.executemany("INSERT OR REPLACE INTO embed_leases (fragment_id, holder, until) VALUES (?, ?, ?)",
                             [(r.id, holder, now + float(lease_s)) for r in rows])
        return rows

    def renew_claims(self, holder: str, lease_s: float) -> None:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "renewing backlog claims failed"):
            conn.execute("UPDATE embed_leases SET until = ? WHERE holder = ?", (time.time() + float(lease_s), holder))

    def release_claims(self, holder: str) -> None:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "releasing backlog claims failed"):
            conn.execute("DELETE FROM embed_leases WHERE holder = ?", (holder,))

    def put_embeddings(self, fragments: Sequence[PendingFragment], vectors: np.ndarray) -> int:
        if not fragments:
            return 0
        vecs = check_embeddings("", vectors, len(fragments), (self.embedder_info() or (None, None))[1],
                                where="put_embeddings")
        written = 0
        with self._write() as conn:
            now = self._binding(conn)
            if now is None or now[1] != vecs.shape[1]:  # rebound meanwhile
                raise StoreError(f"{self.path}: put_embeddings: the store was rebound to another embedder")
            for i in range(0, len(fragments), IN_CHUNK):
                chunk = fragments[i : i + IN_CHUNK]
                ids = [f.id for f in chunk]
                rid_of = {
                    fid: (rid, ch)
                    for rid, fid, ch in conn.execute(
                        f"SELECT rid, id, content_hash FROM fragments WHERE id IN ({','.join('?' * len(ids))})", ids
                    )
                }
                rows = []
                for j, f in enumerate(chunk, start=i):
                    got = rid_of.get(f.id)
                    if got is not None and got[1] == f.content_hash:
                        rows.append((got[0], vecs[j].tobytes()))
                conn.executemany("INSERT OR REPLACE INTO embeddings (rid, vec) VALUES (?, ?)", rows)
                conn.execute(f"DELETE FROM embed_leases WHERE fragment_id IN ({','.join('?' * len(ids))})", ids)
                written += len(rows)
        return written

    def missing_embeddings(self, fragment_ids: Sequence[str]) -> set[str]:
        wanted = list(dict.fromkeys(fragment_ids))
        out: set[str] = set()
        with self._read() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                chunk = wanted[i : i + IN_CHUNK]
                out.update(r[0] for r in conn.execute(
                    f"SELECT f.id FROM fragments f WHERE f.id IN ({','.join('?' * len(chunk))}) "
                    "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.rid = f.rid)", chunk,
                ))
        return out

    def backlog(self) -> BacklogStats:
        with self._read() as conn:
            total = conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0]
            embedded = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
            meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embed_rate', 'embed_rate_at')"))
        return BacklogStats(int(total), int(embedded), float(meta.get("embed_rate", 0.0)),
                            float(meta.get("embed_rate_at", 0.0)))

    def note_embedding_rate(self, rate: float, *, running: bool = True) -> None:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "noting the embedding rate failed"):
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embed_rate", repr(max(0.0, float(rate)))), ("embed_rate_at", repr(time.time() if running else 0.0))],
            )

    # --- writing --------------------------------------------------------------------------------

    def source_hash(self, source_id: str) -> str | None:
        row = self._conn().execute("SELECT content_hash FROM sources WHERE id = ?", (source_id,)).fetchone()
        return row[0] if row else None

    def put_source(
        self,
        source: Source,
        fragments: Sequence[Fragment],
        embeddings: np.ndarray | None,
        original: bytes,
        cues: Sequence[Cue] = (),
    ) -> None:
        self.put_sources([SourceWrite(source, fragments, embeddings, original, cues)])

    def put_sources(self, writes: Sequence[SourceWrite]) -> None:
        check_batch_ids(writes)
        prepared = [self._prepare_put(w) for w in writes]  # every check before anything is written
        t0 = time.perf_counter()
        with self._write() as conn:
            for p in prepared:
                self._write_put(conn, *p)
        log.debug("put_sources: %d sources, %d fragments in %.1f ms", len(writes),
                  sum(len(w.fragments) for w in writes), (time.perf_counter() - t0) * 1e3)

    def _prepare_put(self, w: SourceWrite) -> tuple[Any, ...]:
        source, fragments, original = w.source, w.fragments, w.original
        sha, vecs = check_put(source, fragments, w.embeddings, original,
                              lambda: (self.embedder_info() or (None, None))[1])
        cue_rows = check_cues(source.id, w.cues)
        if not source.blob_sha256:
            source = replace(source, blob_sha256=sha)
        an = self._analyzer
        frag_rows, fts_rows, tri_rows = [], [], []
        for f in fragments:
            lrow = locator_row(f.locator)
            frag_rows.append((f.id, f.source_id, int(f.ordinal), f.kind, f.lang, f.text, *lrow, f.content_hash))
            toks = tokenize(f.text)
            plain = " ".join(toks)
            fts_rows.append((" ".join(an.stem(toks, f.lang)), plain))
            label = lrow[7] or ""
            tri_rows.append(f"{fold(label)} {fold(f.source_id)} {' '.join(t for t in dict.fromkeys(toks) if len(t) > 2)}")
        src_row = (
            source.id, source.kind, source.title, source.lang, source.content_hash, source.blob_sha256,
            source.original_name, source.media_type, source.origin, json.dumps(dict(source.meta), ensure_ascii=False),
            source.collection,
        )  # fmt: skip
        return source, sha, bytes(original), vecs, cue_rows, src_row, frag_rows, fts_rows, tri_rows

    def _write_put(
        self, conn: sqlite3.Connection, source: Source, sha: str, original: bytes, vecs: np.ndarray | None,
        cue_rows: list[tuple[int, int, int, str]], src_row: tuple[Any, ...], frag_rows: list[tuple[Any, ...]],
        fts_rows: list[tuple[str, str]], tri_rows: list[str],
    ) -> None:
        old = conn.execute("SELECT blob_sha256 FROM sources WHERE id = ?", (source.id,)).fetchone()
        if old is not None:
            self._delete_rows(conn, source.id)
        if conn.execute("SELECT 1 FROM originals WHERE sha256 = ?", (sha,)).fetchone() is None:
            conn.execute("INSERT INTO originals (sha256, size, data) VALUES (?, ?, ?)", (sha, len(original), original))
        conn.execute(f"INSERT INTO sources ({SOURCE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", src_row)
        conn.executemany(
            "INSERT INTO cues (source_id, ordinal, start_ms, end_ms, text) VALUES (?, ?, ?, ?, ?)",
            [(source.id, *row) for row in cue_rows],
        )
        # Row ids are never reused (the dense cache refreshes by row id): start past the highest ever.
        high = conn.execute(
            "SELECT MAX((SELECT COALESCE(MAX(rid), 0) FROM fragments), "
            "(SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key = 'rid_high'))"
        ).fetchone()[0]
        rids = range(high + 1, high + 1 + len(frag_rows))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('rid_high', ?)", (str(high + len(frag_rows)),))
        conn.executemany(
            "INSERT INTO fragments (rid, id, source_id, ordinal, kind, lang, text, loc_type, track_id, start_ms, "
            "end_ms, book, book_key, loc, addr_label, file, page, section, content_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(rid, *row) for rid, row in zip(rids, frag_rows, strict=True)],
        )
        conn.executemany(
            "INSERT INTO fts (rowid, stemmed, plain) VALUES (?, ?, ?)",
            [(rid, *row) for rid, row in zip(rids, fts_rows, strict=True)],
        )
        conn.executemany("INSERT INTO trigram (rowid, body) VALUES (?, ?)", list(zip(rids, tri_rows, strict=True)))
        if vecs is not None:
            conn.executemany(
                "INSERT INTO embeddings (rid, vec) VALUES (?, ?)",
                [(rid, vecs[i].tobytes()) for i, rid in enumerate(rids)],
            )
        if old is not None and old[0] != sha:
            self._gc_original(conn, old[0])

    @staticmethod
    def _delete_rows(conn: sqlite3.Connection, source_id: str) -> None:
        sub = "(SELECT rid FROM fragments WHERE source_id = ?)"
        conn.execute(f"DELETE FROM fts WHERE rowid IN {sub}", (source_id,))
        conn.execute(f"DELETE FROM trigram WHERE rowid IN {sub}", (source_id,))
        conn.execute(f"DELETE FROM embeddings WHERE rid IN {sub}", (source_id,))
        conn.execute("DELETE FROM fragments WHERE source_id = ?", (source_id,))
        conn.execute("DELETE FROM cues WHERE source_id = ?", (source_id,))
        conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))

    @staticmethod
    def _gc_original(conn: sqlite3.Connection, sha: str) -> None:
        conn.execute(
            "DELETE FROM originals WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM sources WHERE blob_sha256 = ?)",
            (sha, sha),
        )

    def delete_source(self, source_id: str) -> None:
        self.delete_sources([source_id])

    def delete_sources(self, source_ids: Sequence[str]) -> list[str]:
        removed: list[str] = []
        with self._write() as conn:
            blobs: set[str] = set()
            for sid in dict.fromkeys(source_ids):
                old = conn.execute("SELECT blob_sha256 FROM sources WHERE id = ?", (sid,)).fetchone()
                if old is None:
                    continue
                self._delete_rows(conn, sid)
                blobs.add(old[0])
                removed.append(sid)
            for sha in sorted(blobs):
                self._gc_original(conn, sha)
        return removed

    # --- reading --------------------------------------------------------------------------------

    def list_sources(
        self,
        *,
        kind: str | None = None,
        lang: str | None = None,
        collection: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Source]:
        where, args = source_filter(kind, lang, collection)
        page, more = page_clause(limit, offset, -1)
        args += more
        rows = self._conn().execute(f"SELECT {SOURCE_COLS} FROM sources{where} ORDER BY id{page}", args)
        return [source_from_row(r) for r in rows]

    def count_sources(
        self, *, kind: str | None = None, lang: str | None = None, collection: str | None = None
    ) -> int:
        where, args = source_filter(kind, lang, collection)
        return int(self._conn().execute(f"SELECT COUNT(*) FROM sources{where}", args).fetchone()[0])

    def collections(self) -> dict[str, int]:
        rows = self._conn().execute("SELECT collection, COUNT(*) FROM sources GROUP BY collection ORDER BY collection")
        return {str(c): int(n) for c, n in rows}

    def get_cues(self, source_id: str, start_ms: int = 0, end_ms: int | None = None) -> list[Cue]:
        hi = end_ms if end_ms is not None else 2**62
        rows = self._conn().execute(
            "SELECT start_ms, end_ms, text FROM cues WHERE source_id = ?1 AND start_ms >= COALESCE("
            "(SELECT MAX(start_ms) FROM cues WHERE source_id = ?1 AND start_ms <= ?2), 0) "
            "AND start_ms < ?3 AND end_ms > ?2 ORDER BY start_ms, ordinal",
            (source_id, int(start_ms), int(hi)),
        )
        return [Cue(int(a), int(b), str(t)) for a, b, t in rows]

    def get_source(self, source_id: str) -> Source | None:
        row = self._conn().execute(f"SELECT {SOURCE_COLS} FROM sources WHERE id = ?", (source_id,)).fetchone()
        return source_from_row(row) if row else None

    def get_fragments(self, fragment_ids: Sequence[str]) -> list[Fragment]:
        wanted = list(dict.fromkeys(fragment_ids))
        found: dict[str, Fragment] = {}
        with self._read() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                chunk = wanted[i : i + IN_CHUNK]
                q = f"SELECT {FRAGMENT_COLS} FROM fragments WHERE id IN ({','.join('?' * len(chunk))})"
                for row in conn.execute(q, chunk):
                    found[row[0]] = fragment_from_row(row)
        return [found[i] for i in fragment_ids if i in found]

    def fragments_of(self, source_id: str) -> list[Fragment]:
        q = f"SELECT {FRAGMENT_COLS} FROM fragments WHERE source_id = ? ORDER BY ordinal"
        return [fragment_from_row(r) for r in self._conn().execute(q, (source_id,))]

    def get_original(self, source_id: str) -> Original | None:
        row = self._conn().execute(
            "SELECT o.sha256, s.original_name, s.media_type, o.data FROM sources s "
            "JOIN originals o ON o.sha256 = s.blob_sha256 WHERE s.id = ?",
            (source_id,),
        ).fetchone()
        return Original(row[0], row[1], row[2], bytes(row[3])) if row else None

    def stats(self) -> StoreStats:
        with self._read() as conn:
            sources = conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0]
            by_kind = dict(conn.execute("SELECT kind, COUNT(*) FROM fragments GROUP BY kind ORDER BY kind"))
            by_lang = dict(conn.execute("SELECT lang, COUNT(*) FROM fragments GROUP BY lang ORDER BY lang"))
            embedded = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
            binding = self._binding(conn)
        return StoreStats(
            sources=sources,
            fragments=sum(by_kind.values()),
            embedded=embedded,
            by_kind=by_kind,
            by_lang=by_lang,
            embedder=binding[0] if binding else None,
            dim=binding[1] if binding else None,
            url=self.url,
        )

    def iter_embeddings(self, batch: int = 1000) -> Iterable[tuple[list[str], np.ndarray]]:
        binding = self.embedder_info()
        if binding is None:
            return
        dim = binding[1]
        # A private connection: the generator may be consumed slowly or from another thread.
        conn = sqlite3.connect(str(self.path), timeout=self._busy_s, isolation_level=None)
        try:
            cur = conn.execute("SELECT f.id, e.vec FROM embeddings e JOIN fragments f ON f.rid = e.rid ORDER BY e.rid")
            while rows := cur.fetchmany(max(1, batch)):
                mat = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
                yield [r[0] for r in rows], mat.astype(np.float32)
        finally:
            conn.close()

    def get_embeddings(self, fragment_ids: Sequence[str]) -> np.ndarray:
        binding = self.embedder_info()
        dim = binding[1] if binding else 0
        out = np.zeros((len(fragment_ids), dim), dtype=np.float32)
        if not dim or not fragment_ids:
            return out
        pos: dict[str, list[int]] = {}
        for i, fid in enumerate(fragment_ids):
            pos.setdefault(fid, []).append(i)
        wanted = list(pos)
        with self._read() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                chunk = wanted[i : i + IN_CHUNK]
                q = (
                    "SELECT f.id, e.vec FROM fragments f JOIN embeddings e ON e.rid = f.rid "
                    f"WHERE f.id IN ({','.join('?' * len(chunk))})"
                )
                for fid, blob in conn.execute(q, chunk):
                    out[pos[fid]] = np.frombuffer(blob, dtype="<f4", count=dim)
        return out

    def _cache_at(self, gen: int) -> tuple[dict[str, tuple[Fragment, bytes | None]], dict[tuple[str, str], int]]:
        """The per-generation caches (fresh ones when the store was written since)."""
        cached = self._gen_cache
        if cached[0] != gen:
            cached = (gen, {}, {})
            self._gen_cache = cached
        return cached[1], cached[2]

    def get_fragments_with_embeddings(self, fragment_ids: Sequence[str]) -> tuple[list[Fragment], np.ndarray]:
        """Fragments (in the order asked, unknown ids skipped) and a vector per asked id (zeros where
        none), read together in one snapshot — the retrieval pool needs both (``store.batch``). Rows
        read are kept until the next write (``settings.sqlite.fragment_cache`` of them); when every row
        asked is kept, only the generation is read (one statement: the rows are those of that generation)."""
        wanted = list(dict.fromkeys(fragment_ids))
        conn = self._conn()
        self._drop_orphan_transaction(conn)  # a left-open transaction would show an old generation
        rows, counts = self._cache_at(self._generation(conn))
        dim = counts.get(_DIM_KEY)
        found = {fid: rows[fid] for fid in wanted if fid in rows}
        missing: list[str] = []
        if dim is None or len(found) < len(wanted):
            with self._read() as conn:
                rows, counts = self._cache_at(self._generation(conn))
                binding = self._binding(conn)
                dim = counts[_DIM_KEY] = binding[1] if binding else 0
                found = {fid: rows[fid] for fid in wanted if fid in rows}
                missing = [fid for fid in wanted if fid not in found]
                for i in range(0, len(missing), IN_CHUNK):
                    chunk = missing[i : i + IN_CHUNK]
                    q = (f"SELECT {FRAGMENT_COLS}, e.vec FROM fragments LEFT JOIN embeddings e ON e.rid = fragments.rid "
                         f"WHERE fragments.id IN ({','.join('?' * len(chunk))})")
                    for row in conn.execute(q, chunk):
                        found[row[0]] = (fragment_from_row(row[:-1]), row[-1])
        room = self.settings.sqlite.fragment_cache - len(rows)
        if room > 0 and missing:
            rows.update((fid, found[fid]) for fid in missing[:room] if fid in found)
        frags: list[Fragment] = []
        blobs: list[bytes] = []
        none = bytes(4 * dim)  # the zero vector: unknown id, or no vector yet
        for fid in fragment_ids:
            got = found.get(fid)
            if got is None:
                blobs.append(none)
                continue
            frags.append(got[0])
            blob = got[1]
            blobs.append(none if blob is None or len(blob) < 4 * dim else blob[: 4 * dim])
        if not dim:
            return frags, np.zeros((len(fragment_ids), 0), dtype=np.float32)
        # one read of the joined blobs; astype: a writable copy of our own, not a view of them
        mat = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(fragment_ids), dim).astype(np.float32)
        return frags, mat

    # --- lanes ----------------------------------------------------------------------------------

    def _generation(self, conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    def _load_dense(self, prev: DenseSnapshot | None) -> DenseSnapshot:
        """The dense snapshot at the current generation: ``prev`` refreshed (rows gone dropped, new rows
        read) when it still holds most rows, else a full load. One read transaction either way."""
        t0 = time.perf_counter()
        sql = "SELECT e.rid, f.id, f.kind, e.vec FROM embeddings e JOIN fragments f ON f.rid = e.rid"
        with self._read() as conn:
            gen = self._generation(conn)
            binding = self._binding(conn)
            if binding is None:
                return DenseSnapshot.empty(gen)
            dim = binding[1]
            listed = conn.execute("SELECT group_concat(rid) FROM (SELECT rid FROM embeddings ORDER BY rid)").fetchone()[0]
            current = np.array(listed.split(","), dtype=np.int64) if listed else np.empty(0, dtype=np.int64)
            if prev is not None and prev.dim == dim and len(prev.ids) > 0:
                missing = prev.missing_keys(current)
                if len(missing) <= len(current) // 2:
                    new_rows = []
                    for i in range(0, len(missing), IN_CHUNK):
                        chunk = [int(x) for x in missing[i : i + IN_CHUNK]]
                        q = f"{sql} WHERE e.rid IN ({','.join('?' * len(chunk))}) ORDER BY e.rid"
                        new_rows.append(conn.execute(q, chunk).fetchall())
                    snap = prev.refreshed(gen, current, new_rows)
                    log.debug(
                        "store %s: dense refresh +%d rows, now %d, in %.0f ms",
                        self.url, len(missing), len(snap.ids), (time.perf_counter() - t0) * 1e3,
                    )  # fmt: skip
                    return snap
            cur = conn.execute(f"{sql} ORDER BY e.rid")
            snap = DenseSnapshot.build(gen, dim, len(current), iter(lambda: cur.fetchmany(4096), []))
        log.info("store %s: loaded %d vectors in %.0f ms", self.url, len(snap.ids), (time.perf_counter() - t0) * 1e3)
        return snap

    def search_dense(self, vector: np.ndarray, k: int, kinds: Sequence[str] | None = None) -> list[Hit]:
        conn = self._conn()
        snap = self._dense.get(self._generation(conn), self._load_dense)
        if not snap.ids:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != snap.matrix.shape[1]:
            raise StoreError(f"query vector has dim {q.shape[0]}, the store's vectors {snap.matrix.shape[1]}")
        norm = math.sqrt(float(q @ q))  # np.linalg.norm costs more than the product itself on a small store
        if not math.isfinite(norm) or norm == 0.0:
            return []
        return snap.search(q / norm, k, kinds)

    def search_lexical(
        self, query: str, k: int, *, stemmed: bool, lang: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        terms = self._analyzer.query_terms(query, stemmed=stemmed, lang=lang)
        if not terms or k <= 0:
            return []
        column, weights = ("stemmed", "1.0, 0.0") if stemmed else ("plain", "0.0, 1.0")
        conn = self._conn()
        terms = self._drop_common_terms(conn, terms, column)
        params: list[Any] = [f"{column} : ({fts_or(terms)})"]
        where = ""
        if kinds is not None:
            if not kinds:
                return []
            where = f" AND f.kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        params.append(k)
        sql = (
            f"SELECT f.id, bm25(fts, {weights}) AS r FROM fts JOIN fragments f ON f.rid = fts.rowid "
            f"WHERE fts MATCH ?{where} ORDER BY r LIMIT ?"
        )
        return [Hit(fid, -float(r)) for fid, r in conn.execute(sql, params)]

    def _drop_common_terms(self, conn: sqlite3.Connection, terms: list[str], column: str) -> list[str]:
        """Leave out terms found in more than ``settings.lexical_max_df`` of the fragments (in a store of at
        least ``settings.lexical_prune_min_fragments``): BM25 gives them (almost) no weight, yet scoring
        their long posting lists is most of a query's cost. A query made only of such terms keeps them all."""
        ratio = self.settings.lexical_max_df
        if ratio >= 1.0 or len(terms) < 2:
            return terms
        gen = self._generation(conn)
        _, counts = self._cache_at(gen)  # counts and dfs stay valid until a write
        total = counts.get(("", ""))
        if total is None:
            total = counts[("", "")] = int(conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0])
        if total < self.settings.lexical_prune_min_fragments:
            return terms
        if total <= self.settings.sqlite.common_terms_scan_max:
            # a small store: its common terms, found once per generation (one scan of the vocabulary)
            at, by_column = self._common_terms
            common = by_column.get(column) if at == gen else None
            if common is None:
                common = self._scan_common_terms(column, ratio)
            kept = [t for t in terms if t not in common]
            return kept or terms
        unknown = [t for t in terms if (column, t) not in counts]
        if unknown:
            got = dict(conn.execute(
                f"SELECT term, doc FROM fts_vocab WHERE col = ? AND term IN ({','.join('?' * len(unknown))})",
                [column, *unknown],
            ))
            if len(counts) < self.settings.sqlite.fragment_cache:
                counts.update(((column, t), int(got.get(t, 0))) for t in unknown)
        else:
            got = {}
        df = {t: counts.get((column, t), got.get(t, 0)) for t in terms}
        kept = [t for t in terms if df.get(t, 0) <= ratio * total]
        return kept or terms

    def _scan_common_terms(self, column: str, ratio: float) -> frozenset[str]:
        """The terms of ``column`` found in more than ``ratio`` of the fragments, read in one snapshot with the
        generation they belong to, and kept until the next write."""
        with self._read() as conn:
            gen = self._generation(conn)
            total = int(conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0])
            common = frozenset(t for (t,) in conn.execute(
                "SELECT term FROM fts_vocab WHERE col = ? AND doc > ?", [column, ratio * total]))
        at, by_column = self._common_terms
        self._common_terms = (gen, {**(by_column if at == gen else {}), column: common})
        return common

    def search_address(self, book: str, loc: str, k: int) -> list[Hit]:
        if k <= 0:
            return []
        rows = self._conn().execute(
            "SELECT id FROM fragments WHERE book_key = ? AND loc = ? ORDER BY source_id, ordinal LIMIT ?",
            (book_key(book), loc.strip(), k),
        )
        return [Hit(r[0], 1.0) for r in rows]

    def list_addresses(self) -> list[tuple[str, str, str]]:
        rows = self._conn().execute(
            "SELECT DISTINCT f.book, f.loc, s.title FROM fragments f JOIN sources s ON s.id = f.source_id "
            "WHERE f.loc_type = 'a' AND f.book IS NOT NULL AND f.loc IS NOT NULL"
        )
        return [(str(b), str(loc), str(t or "")) for b, loc, t in rows]

    def search_trigram(self, text: str, k: int) -> list[Hit]:
        """Fuzzy match on ``label || source_id || tokens``. Candidates: the rows holding any of the query's
        rarest trigrams (at most ``settings.trigram_query_grams``, looked up one doclist at a time and
        weighted by IDF — cheaper than FTS5's bm25 over thousands of rows); the best
        ``max(trigram_pool, 10k)`` are re-scored by the share of *all* the query's trigrams they contain."""
        grams = trigrams(text)
        if not grams or k <= 0:
            return []
        ordered = sorted(grams)
        with self._read() as conn:
            df = dict(
                conn.execute(
                    f"SELECT term, doc FROM trigram_vocab WHERE term IN ({','.join('?' * len(ordered))})", ordered
                )
            )
            rare = sorted(df, key=lambda g: (df[g], g))[: max(1, self.settings.trigram_query_grams)]
            if not rare:
                return []
            total = conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0]
            parts, weights = [], []
            for g in rare:
                listed = conn.execute(
                    "SELECT group_concat(rowid) FROM trigram WHERE trigram MATCH ?", (fts_phrase(g),)
                ).fetchone()[0]
                if listed:
                    rids_g = np.array(listed.split(","), dtype=np.int64)
                    parts.append(rids_g)
                    weights.append(np.full(len(rids_g), math.log(1.0 + total / df[g])))
            if not parts:
                return []
            uniq, inverse = np.unique(np.concatenate(parts), return_inverse=True)
            score = np.bincount(inverse, weights=np.concatenate(weights))
            n_pool = min(len(uniq), max(self.settings.trigram_pool, 10 * k))
            best = np.argpartition(-score, n_pool - 1)[:n_pool] if n_pool < len(uniq) else np.arange(len(uniq))
            weight = {int(uniq[i]): float(score[i]) for i in best}
            rids = list(weight)
            rows = conn.execute(
                f"SELECT t.rowid, f.id, t.body FROM trigram t JOIN fragments f ON f.rid = t.rowid "
                f"WHERE t.rowid IN ({','.join('?' * len(rids))})",
                rids,
            ).fetchall()
        scored = [(len(grams & trigrams(body)) / len(grams), weight[rid], fid) for rid, fid, body in rows]
        scored.sort(key=lambda x: (-x[0], -x[1], x[2]))
        return [Hit(fid, score) for score, _, fid in scored[:k]]


__all__ = ["SqliteStore", "book_key", "load_migrations", "split_sql"]
