"""The PostgreSQL store's vectors: the embedder binding, the embedding backlog and its claims, the
sentence vectors, and the HNSW index (built at binding, dropped around a bulk load or a large backlog).
A mixin of :class:`~footnote.store.postgres.PostgresStore`."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from footnote.errors import StoreError
from footnote.store.pg_rows import clean
from footnote.store.pg_support import BULK_LOCK, CLAIM_LOCK, MIGRATION_LOCK, WRITE_LOCK
from footnote.store.protocol import BacklogStats, ClaimHolder, PendingFragment
from footnote.store.validate import check_embeddings

if TYPE_CHECKING:
    from footnote.settings import StoreSettings
    from footnote.store.pg_support import Pool

log = logging.getLogger(__name__)

#: Vectors up to this dimension (4 bytes each) are stored inside the heap row (STORAGE PLAIN).
_PLAIN_STORAGE_MAX_DIM = 1024
#: The GIN indexes whose pending lists :meth:`PostgresStore.flush_text_indexes` merges.
_GIN_INDEXES = ("fragment_terms_tsv_stem", "fragment_terms_tsv_plain", "fragments_trgm")


class PgVectors:
    """The embedder binding and everything about fragment vectors short of searching them."""

    if TYPE_CHECKING:  # provided by PostgresStore
        url: str
        settings: StoreSettings
        _pool: Pool
        _dim: int | None
        _kind_counts: tuple[float, dict[str, int]] | None
        _counts_gen: int

        def _fragments_changed(self, *, sources: bool = False) -> None: ...

    # --- embedder binding -------------------------------------------------------------------------

    def embedder_info(self) -> tuple[str, int] | None:
        with self._pool.connection() as conn:
            rows = dict(conn.execute(
                "SELECT key, value FROM footnote_meta WHERE key IN ('embedder_name', 'embedder_dim')"
            ).fetchall())
        if "embedder_name" not in rows:
            return None
        return rows["embedder_name"], int(rows["embedder_dim"])

    def _bound_dim(self) -> int | None:
        """The bound embedder's dim: remembered once known, else read (another process may have bound it)."""
        return self._dim if self._dim is not None else (self.embedder_info() or (None, None))[1]

    def bind_embedder(self, name: str, dim: int) -> None:
        if dim <= 0 or dim > 16000:
            raise StoreError(f"embedder {name!r}: dimension {dim} is out of pgvector's range (1..16000)")
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
            rows = dict(conn.execute(
                "SELECT key, value FROM footnote_meta WHERE key IN ('embedder_name', 'embedder_dim')"
            ).fetchall())
            if "embedder_name" in rows:
                have = (rows["embedder_name"], int(rows["embedder_dim"]))
                if have == (name, dim):
                    self._dim = dim
                    missing = conn.execute("SELECT to_regclass('fragments_embedding_hnsw')").fetchone() == (None,)
                    if missing and not self._bulk_load_running(conn):
                        if self._backlog_is_large(conn):  # the next backlog run builds it when it is done
                            log.info("store %s: no HNSW index while a large backlog waits; dense search is "
                                     "exact until the backlog is embedded", self.url)
                        else:
                            self._create_ann_index(conn)  # repair: a bulk load was interrupted
                    return
                held = conn.execute("SELECT count(*) FROM fragments WHERE embedding IS NOT NULL").fetchone()
                if held is not None and held[0]:
                    raise StoreError(
                        f"store {self.url} holds {held[0]} vectors from embedder {have[0]!r} (dim {have[1]}); it "
                        f"cannot be used with embedder {name!r} (dim {dim}). Re-ingest into a new store (--store URL) "
                        f"or leave --embedder, embedder.name and a preset's embedder unset to use the store's own, {have[0]!r}."
                    )
                log.info("store %s: rebinding empty embedder slot %s → %s", self.url, have, (name, dim))
                conn.execute("DROP INDEX IF EXISTS fragments_embedding_hnsw")
            s = self.settings
            conn.execute(f"ALTER TABLE fragments ALTER COLUMN embedding TYPE vector({int(dim)})")
            # keep vectors inside the row (pgvector stores them out of line by default), so an exact
            # scan does not fetch TOAST for every row; very wide vectors cannot fit a page: MAIN
            storage = "PLAIN" if dim <= _PLAIN_STORAGE_MAX_DIM else "MAIN"
            conn.execute(f"ALTER TABLE fragments ALTER COLUMN embedding SET STORAGE {storage}")
            self._create_ann_index(conn)
            conn.cursor().executemany(
                "INSERT INTO footnote_meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [("embedder_name", name), ("embedder_dim", str(dim)), ("hnsw_m", str(s.postgres.hnsw_m)),
                 ("hnsw_ef_construction", str(s.postgres.hnsw_ef_construction))],
            )
        self._dim = dim

    def rebind_embedder(self, name: str, dim: int) -> int:
        if not name or dim <= 0 or dim > 16000:
            raise StoreError(f"embedder {name!r}: dimension {dim} is out of pgvector's range (1..16000)")
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
                rows = dict(conn.execute(
                    "SELECT key, value FROM footnote_meta WHERE key IN ('embedder_name', 'embedder_dim')"
                ).fetchall())
                if rows.get("embedder_name") == name and rows.get("embedder_dim") == str(dim):
                    return 0
                conn.execute("DROP INDEX IF EXISTS fragments_embedding_hnsw")
                cur = conn.execute("UPDATE fragments SET embedding = NULL WHERE embedding IS NOT NULL")
                dropped = max(0, cur.rowcount)
                conn.execute("DELETE FROM memory_vectors")  # curated notes too: `reembed` embeds them again
                conn.execute("UPDATE memory_notes SET embedder = NULL")
                conn.execute(f"ALTER TABLE fragments ALTER COLUMN embedding TYPE vector({int(dim)})")
                storage = "PLAIN" if dim <= _PLAIN_STORAGE_MAX_DIM else "MAIN"
                conn.execute(f"ALTER TABLE fragments ALTER COLUMN embedding SET STORAGE {storage}")
                self._create_ann_index(conn)
                conn.execute("DELETE FROM footnote_meta WHERE key IN ('embed_rate', 'embed_rate_at', 'embed_rate_by')")
                conn.execute("DELETE FROM sentence_vectors WHERE embedder <> %s", [name])
                conn.cursor().executemany(
                    "INSERT INTO footnote_meta (key, value) VALUES (%s, %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    [("embedder_name", name), ("embedder_dim", str(dim))],
                )
        except psycopg.Error as e:
            raise StoreError(f"rebinding {self.url} to embedder {name!r} (dim {dim}) failed: {e}") from e
        self._dim = dim
        self._counts_gen += 1
        self._kind_counts = None
        self._fragments_changed()
        log.info("store %s: rebound to embedder %s (dim %d); %d vectors dropped", self.url, name, dim, dropped)
        return dropped

    # --- embedding backlog ------------------------------------------------------------------------

    def pending_fragments(self, limit: int, after: str | None = None) -> list[PendingFragment]:
        if limit <= 0:
            return []
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT id, content_hash, text FROM fragments WHERE embedding IS NULL AND id > %s ORDER BY id LIMIT %s",
                [after or "", int(limit)],
            ).fetchall()
        return [PendingFragment(*r) for r in rows]

    def claim_pending(self, limit: int, holder: str, lease_s: float) -> list[PendingFragment]:
        if limit <= 0:
            return []
        try:
            with self._pool.connection() as conn, conn.transaction():
                # claims are serialised (each is one short statement): the claim statement's snapshot
                # then sees every claim committed before it
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))", [CLAIM_LOCK])
                conn.execute("DELETE FROM embed_leases WHERE until <= now()")
                rows = conn.execute(
                    "WITH c AS (SELECT f.id, f.content_hash, f.text FROM fragments f WHERE f.embedding IS NULL"
                    "   AND NOT EXISTS (SELECT 1 FROM embed_leases l WHERE l.fragment_id = f.id) ORDER BY f.id LIMIT %s),"
                    " ins AS (INSERT INTO embed_leases (fragment_id, holder, until)"
                    "   SELECT id, %s, now() + make_interval(secs => %s) FROM c"
                    "   ON CONFLICT (fragment_id) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until)"
                    " SELECT id, content_hash, text FROM c ORDER BY id",
                    [int(limit), holder, float(lease_s)],
                ).fetchall()
        except psycopg.Error as e:
            raise StoreError(f"claiming backlog fragments in {self.url} failed: {e}") from e
        return [PendingFragment(*r) for r in rows]

    def renew_claims(self, holder: str, lease_s: float) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("UPDATE embed_leases SET until = now() + make_interval(secs => %s) WHERE holder = %s",
                         [float(lease_s), holder])

    def release_claims(self, holder: str) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("DELETE FROM embed_leases WHERE holder = %s", [holder])

    def claim_holders(self) -> list[ClaimHolder]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT holder, count(*), extract(epoch FROM max(until)) FROM embed_leases WHERE until > now()"
                " GROUP BY holder ORDER BY holder"
            ).fetchall()
        return [ClaimHolder(str(h), int(n), float(u)) for h, n, u in rows]

    def put_embeddings(self, fragments: Sequence[PendingFragment], vectors: np.ndarray) -> int:
        if not fragments:
            return 0
        self._dim = None  # another process may have rebound the store: read the binding afresh
        vecs = check_embeddings("", vectors, len(fragments), self._bound_dim(), where="put_embeddings")
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
                cur = conn.execute(
                    "UPDATE fragments f SET embedding = v.e::vector FROM"
                    " (SELECT unnest(%s::text[]) AS id, unnest(%s::text[]) AS h, unnest(%s::text[]) AS e) v"
                    " WHERE f.id = v.id AND f.content_hash = v.h",
                    [[clean(f.id) for f in fragments], [f.content_hash for f in fragments],
                     ["[" + ",".join(repr(float(x)) for x in v) + "]" for v in vecs]],
                )
                written = max(0, cur.rowcount)
                conn.execute("DELETE FROM embed_leases WHERE fragment_id = ANY(%s)", [[clean(f.id) for f in fragments]])
                return written
        except psycopg.Error as e:
            raise StoreError(f"writing {len(fragments)} vectors to {self.url} failed: {e}") from e
        finally:
            self._fragments_changed()

    def get_sentence_vectors(self, embedder: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        if not keys:
            return {}
        with self._pool.connection(autocommit=True) as conn:
            rows = conn.execute(
                "SELECT key, vec FROM sentence_vectors WHERE embedder = %s AND key = ANY(%s)",
                [embedder, list(dict.fromkeys(keys))],
            ).fetchall()
        return {k: np.frombuffer(bytes(v), dtype="<f4") for k, v in rows}

    def put_sentence_vectors(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        rows = [(embedder, k, np.asarray(v, dtype="<f4").tobytes()) for k, v in vectors.items()]
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.cursor().executemany(
                    "INSERT INTO sentence_vectors (embedder, key, vec) VALUES (%s, %s, %s)"
                    " ON CONFLICT (embedder, key) DO UPDATE SET vec = EXCLUDED.vec",
                    rows,
                )
        except psycopg.Error as e:
            raise StoreError(f"{self.url}: keeping sentence vectors failed: {e}") from e

    def missing_embeddings(self, fragment_ids: Sequence[str]) -> set[str]:
        if not fragment_ids:
            return set()
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT id FROM fragments WHERE id = ANY(%s) AND embedding IS NULL",
                [[clean(i) for i in fragment_ids]],
            ).fetchall()
        return {r[0] for r in rows}

    def backlog(self) -> BacklogStats:
        with self._pool.connection() as conn:
            frag = conn.execute("SELECT count(*), count(embedding) FROM fragments").fetchone()
            meta = dict(conn.execute(
                "SELECT key, value FROM footnote_meta WHERE key IN ('embed_rate', 'embed_rate_at', 'embed_rate_by')"
            ).fetchall())
        assert frag is not None
        return BacklogStats(int(frag[0]), int(frag[1]), float(meta.get("embed_rate", 0.0)),
                            float(meta.get("embed_rate_at", 0.0)), str(meta.get("embed_rate_by", "")))

    def note_embedding_rate(self, rate: float, *, running: bool = True, holder: str = "") -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.cursor().executemany(
                "INSERT INTO footnote_meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [("embed_rate", repr(max(0.0, float(rate)))), ("embed_rate_at", repr(time.time() if running else 0.0)),
                 ("embed_rate_by", holder)],
            )

    def _create_ann_index(self, conn: psycopg.Connection[Any]) -> None:
        s = self.settings
        log.info("building the HNSW index (m=%d, ef_construction=%d)", s.postgres.hnsw_m, s.postgres.hnsw_ef_construction)
        # at least 512 MB for the build (an index that outgrows it builds far slower); never lower a
        # larger server setting
        conn.execute("SELECT set_config('maintenance_work_mem', CASE WHEN pg_size_bytes(current_setting("
                     "'maintenance_work_mem')) < pg_size_bytes('512MB') THEN '512MB' ELSE current_setting("
                     "'maintenance_work_mem') END, true)")
        conn.execute(
            "CREATE INDEX IF NOT EXISTS fragments_embedding_hnsw ON fragments USING hnsw (embedding vector_cosine_ops)"
            f" WITH (m = {int(s.postgres.hnsw_m)}, ef_construction = {int(s.postgres.hnsw_ef_construction)})"
        )

    def flush_text_indexes(self) -> None:
        """Merge the GIN indexes' pending lists (the text lanes' tsvector indexes and the trigram one)
        into the indexes proper — ``gin_clean_pending_list``, what (auto)vacuum does. GIN's fast update
        appends new entries to a pending list of up to ``gin_pending_list_limit`` (4 MB) that every
        search scans linearly, and autovacuum merges it only after ~20 % more rows are written: after
        an ingest the list stayed, and the stemmed lexical lane at 100k fragments spent 2.5× the backend
        CPU (median 10.1 → 4.1 ms). Ingest and backlog runs call this at their end. Best effort: a
        role that may not do it (not the indexes' owner, a replica) just logs it."""
        try:
            with self._pool.connection() as conn, conn.transaction():
                for ix in _GIN_INDEXES:
                    conn.execute("SELECT gin_clean_pending_list(to_regclass(%s))", [ix])
        except StoreError as e:
            log.info("store %s: GIN pending lists left to autovacuum (%s)", self.url, e.message)

    @contextlib.contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Drop the HNSW index while a large load runs and build it once at the end (pgvector builds an
        index far faster than it inserts into one). A session advisory lock marks the load as running;
        if the process dies, the lock goes with its session and the next ``bind_embedder`` rebuilds
        the index."""
        with self._pool.connection() as holder:
            holder.execute("SELECT pg_advisory_lock(%s, hashtext(current_schema()))", [BULK_LOCK])
            holder.commit()
            try:
                with self._pool.connection() as conn, conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
                    conn.execute("DROP INDEX IF EXISTS fragments_embedding_hnsw")
                yield
            finally:
                try:
                    if self._dim is not None:
                        with self._pool.connection() as conn, conn.transaction():
                            conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
                            self._create_ann_index(conn)
                            conn.execute("ANALYZE fragments")
                    self.flush_text_indexes()
                finally:
                    holder.execute("SELECT pg_advisory_unlock(%s, hashtext(current_schema()))", [BULK_LOCK])
                    holder.commit()

    def _backlog_is_large(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether the fragments without a vector are worth embedding without the HNSW index
        (``pg_bulk_min_fragments`` and ``pg_bulk_min_share`` of the store)."""
        row = conn.execute("SELECT count(*), count(*) - count(embedding) FROM fragments").fetchone()
        total, pending = (int(row[0]), int(row[1])) if row else (0, 0)
        s = self.settings
        return pending >= max(1, s.postgres.bulk_min_fragments) and pending >= s.postgres.bulk_min_share * total

    @contextlib.contextmanager
    def deferred_index(self) -> Iterator[bool]:
        """Around a backlog run: when the backlog is large (:meth:`_backlog_is_large`), drop the HNSW
        index while the vectors are written and build it once at the end (pgvector builds an index far
        faster than it inserts into one); yields whether it did. Dense search scans exactly meanwhile
        (correct, slower). Never waits: if another session is bulk-loading, yields False. At the end the
        index is built only if the backlog is no longer large — a run cut short (Ctrl-C, server stop)
        leaves it to the next run; a killed one too (its session lock goes with it, and
        ``bind_embedder`` builds the index once the backlog is small)."""
        with self._pool.connection() as holder:
            got = holder.execute("SELECT pg_try_advisory_lock(%s, hashtext(current_schema()))", [BULK_LOCK]).fetchone()
            holder.commit()
            if not (got and got[0]):
                yield False
                return
            try:
                with self._pool.connection() as conn, conn.transaction():
                    large = self._backlog_is_large(conn)
                    if large and self._bound_dim() is not None:
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
                        conn.execute("DROP INDEX IF EXISTS fragments_embedding_hnsw")
                        log.info("store %s: HNSW index dropped while a large backlog is embedded", self.url)
                if not large:
                    yield False
                    return
                yield True
            finally:
                try:
                    with self._pool.connection() as conn, conn.transaction():
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
                        missing = conn.execute("SELECT to_regclass('fragments_embedding_hnsw')").fetchone() == (None,)
                        if missing and self._bound_dim() is not None and not self._backlog_is_large(conn):
                            self._create_ann_index(conn)
                            conn.execute("ANALYZE fragments")
                    self.flush_text_indexes()  # vectors written by UPDATE added entries to the GIN indexes too
                finally:
                    holder.execute("SELECT pg_advisory_unlock(%s, hashtext(current_schema()))", [BULK_LOCK])
                    holder.commit()

    def _bulk_load_running(self, conn: psycopg.Connection[Any]) -> bool:
        row = conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(current_schema()))", [BULK_LOCK]).fetchone()
        if row is not None and row[0]:
            conn.execute("SELECT pg_advisory_unlock(%s, hashtext(current_schema()))", [BULK_LOCK])
            return False
        return True
