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
import re
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
from footnote.store.dense import DenseCache
from footnote.store.keys import KeyListing
from footnote.store.memory_sqlite import SqliteMemory
from footnote.store.protocol import Original, SourceWrite, StoreStats
from footnote.store.recognition import RecognitionListing
from footnote.store.sql import SOURCE_COLS, SourceListing
from footnote.store.sqlite_schema import (
    FRAGMENT_COLS,
    IN_CHUNK,
    MIN_SQLITE,
    book_key,
    fragment_from_row,
    legacy_collection,
    load_migrations,
    locator_row,
    source_from_row,
    split_sql,
)
from footnote.store.sqlite_search import SqliteSearch
from footnote.store.sqlite_vectors import SqliteVectors
from footnote.store.text import Analyzer, fold, tokenize
from footnote.store.validate import check_batch_ids, check_cues, check_put

log = logging.getLogger(__name__)


class SqliteStore(SourceListing, KeyListing, RecognitionListing, SqliteVectors, SqliteSearch, SqliteConversations, SqliteMemory):
    """The ``Store`` protocol on one SQLite file (see the module docstring)."""

    #: its searches compute in this process, on this machine's cores (``retrieve.pipeline.embeds_first``)
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
                    if not _column_added_already(conn, stmt):
                        conn.execute(stmt)
                conn.execute(f"PRAGMA user_version={num}")

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
            if prepared:
                self._sources_changed(conn)
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
            frag_rows.append((f.id, f.source_id, int(f.ordinal), f.kind, f.lang, f.text, *lrow[:-1], f.content_hash, lrow[-1]))
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
            "end_ms, book, book_key, loc, addr_label, file, page, section, content_hash, para) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                conn.execute("DELETE FROM recognition_jobs WHERE source_id = ?", (sid,))  # a placeholder's job
                blobs.add(old[0])
                removed.append(sid)
            for sha in sorted(blobs):
                self._gc_original(conn, sha)
            if removed:
                self._sources_changed(conn)
        return removed

    @staticmethod
    def _sources_changed(conn: sqlite3.Connection) -> None:
        """(inside a corpus write) A source was added, replaced or removed: the sources' generation moves."""
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'sources_generation'")

    # --- reading --------------------------------------------------------------------------------

    def generation(self) -> int:
        """The sources' generation: moved by every write that adds, replaces or removes a source, by any process, in
        the file itself (one indexed read)."""
        conn = self._conn()
        self._drop_orphan_transaction(conn)  # a left-open transaction would show an old generation
        return int(conn.execute("SELECT value FROM meta WHERE key = 'sources_generation'").fetchone()[0])

    def vectors_generation(self) -> int:
        """The generation of fragments and their vectors: moved by every corpus write (``_write``), vectors included."""
        conn = self._conn()
        self._drop_orphan_transaction(conn)
        return self._generation(conn)

    no_limit = -1

    def _select(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        return list(self._conn().execute(statement, list(args)))

    def _change(self, statement: str, args: Sequence[Any]) -> int:
        conn = self._conn()  # not a write of the corpus: no generation bump
        with self._immediate(conn, "the store is locked by another writer", "write failed"):
            return int(conn.execute(statement, list(args)).rowcount)

    def _change_rows(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        conn = self._conn()  # not a write of the corpus: no generation bump
        with self._immediate(conn, "the store is locked by another writer", "write failed"):
            return list(conn.execute(statement, list(args)).fetchall())

    @staticmethod
    def _source_from_row(row: Sequence[Any]) -> Source:
        return source_from_row(tuple(row))

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


_ADD_COLUMN = re.compile(r"^\s*ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)", re.IGNORECASE)


def _column_added_already(conn: sqlite3.Connection, stmt: str) -> bool:
    """Whether ``stmt`` adds a column its table has already (SQLite has no ``ADD COLUMN IF NOT EXISTS``; a store
    whose version was set back, or built by a newer schema script, must migrate all the same)."""
    code = "\n".join(ln for ln in stmt.splitlines() if not ln.strip().startswith("--"))
    m = _ADD_COLUMN.match(code)
    if m is None:
        return False
    return any(row[1] == m.group(2) for row in conn.execute(f"PRAGMA table_info({m.group(1)})"))


__all__ = ["SqliteStore", "book_key", "load_migrations", "split_sql"]
