"""The PostgreSQL + pgvector store: the seed's own layout, for corpora that outgrow one machine.

Layout (``migrations/postgres``): ``sources``, ``fragments`` with ``embedding vector(dim)`` and an HNSW
cosine index (``vector_cosine_ops``, created when the embedder is bound), two tsvector GIN indexes
(stemmed: PostgreSQL's Snowball configs by the fragment's language through ``footnote_ts_config(lang)``,
the same map as :data:`footnote.store.text.SNOWBALL` (migration 0004); unstemmed:
``simple``), a ``pg_trgm`` GIN index over ``addr_label || source_id || tokens``, originals in a
content-addressed ``bytea`` table. Semantics are those of :mod:`footnote.store.protocol` (the
conformance suite checks them on both backends).

Text goes through :mod:`footnote.store.text` before PostgreSQL sees it (lower-case, diacritics folded,
``ё``→``е``, tokens of letters and digits), so both backends tokenise alike; PostgreSQL stems. Query
text is never parsed as tsquery syntax: each token becomes ``plainto_tsquery(config, token)`` and the
parts are OR-ed with ``||``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg

from footnote.errors import StoreError
from footnote.records.fragments import (
    AddressLocator,
    Cue,
    Fragment,
    Source,
    locator_from_dict,
    locator_to_dict,
)
from footnote.settings import StoreSettings
from footnote.store.batch import AddressCall, DenseCall, LaneCall, LexicalCall, TrigramCall
from footnote.store.conversations_pg import PgConversations
from footnote.store.memory_pg import PgMemory
from footnote.store.pg_exact import ExactGroups, Group, GroupKey, group_from_rows
from footnote.store.pg_lexical import FIRST, SECOND, pair_key, pair_sql
from footnote.store.pg_support import (
    BULK_LOCK,
    CLAIM_LOCK,
    MIGRATION_LOCK,
    WRITE_LOCK,
    Pool,
    Vec,
    check_url,
    ensure_extensions,
    ensure_schema,
    mask_url,
    migrate,
    on_this_machine,
    register_vector,
)
from footnote.store.protocol import BacklogStats, Hit, Original, PendingFragment, SourceWrite, StoreStats
from footnote.store.sql import page_clause, pg, source_filter
from footnote.store.text import DEFAULT_QUERY_LANGS, fold, plain_text, tokenize
from footnote.store.validate import check_batch_ids, check_cues, check_embeddings, check_put

log = logging.getLogger(__name__)

_FRAG_COLS = "id, source_id, ordinal, kind, lang, text, locator, content_hash"
_COPY_TYPES = ["text", "text", "int4", "text", "text", "text", "jsonb", "text",
               "text", "text", "text", "text", "text", "text", "vector"]
_SRC_COLS = "id, kind, title, lang, content_hash, blob_sha256, original_name, media_type, origin, meta, collection"
#: Vectors up to this dimension (4 bytes each) are stored inside the heap row (STORAGE PLAIN).
_PLAIN_STORAGE_MAX_DIM = 1024
#: Embedded fragments per kind: every fragment's kind from the kind index (an index-only scan) less
#: the fragments still without a vector (the ``fragments_unembedded`` partial index) — the counts of
#: ``WHERE embedding IS NOT NULL GROUP BY kind`` without reading every heap row (≈ 4× less backend CPU).
_KIND_COUNTS_SQL = (
    "SELECT a.kind, a.n - coalesce(u.n, 0) FROM (SELECT kind, count(*) AS n FROM fragments GROUP BY kind) a"
    " LEFT JOIN (SELECT kind, count(*) AS n FROM fragments WHERE embedding IS NULL GROUP BY kind) u USING (kind)"
)
#: The GIN indexes whose pending lists :meth:`PostgresStore.flush_text_indexes` merges.
_GIN_INDEXES = ("fragment_terms_tsv_stem", "fragment_terms_tsv_plain", "fragments_trgm")

#: One lexical lane call as one statement: lexemes of the query (regconfig per token), their document
#: frequency (``lexeme_stats``; row ``n``/'' holds the fragment count), common words dropped in a large
#: store (``lexical_max_df`` once it holds ``lexical_prune_min_fragments``, unless that drops all), BM25
#: idf weights, then ``Σ idf × ts_rank`` over the fragments matching any kept lexeme (the GIN index).
#: Lexemes are quoted for ``::tsquery`` exactly as a tsquery literal: '…' with \ and ' doubled. Each
#: lexeme's tsquery is parsed once (``tq``), not once per matching row, and each row's tsvector is
#: decompressed once (``x``: ``|| ''::tsvector`` yields the same vector, detoasted) instead of once per
#: lexeme: the same ranks, ≈ 10 % less backend CPU per lane at 100k fragments (docs/postgres.md). The
#: tsvectors live inline in the narrow ``fragment_terms`` (migration 12), not out of line in TOAST.
_LEXICAL_SQL = (
    "WITH n AS (SELECT coalesce((SELECT df FROM lexeme_stats WHERE col = 'n' AND lexeme = ''), 0)::float8 AS n),"
    " st AS (SELECT q.lx, s.df::float8 AS df FROM (SELECT DISTINCT unnest(tsvector_to_array("
    "   to_tsvector(footnote_ts_config(u.c), u.t))) AS lx FROM unnest(%(cfgs)s::text[], %(toks)s::text[]) AS u(c, t)) q"
    "   CROSS JOIN LATERAL (SELECT s.df FROM lexeme_stats s WHERE s.col = %(code)s AND s.lexeme = q.lx OFFSET 0) s"
    "   WHERE s.df > 0),"
    " rare AS (SELECT st.lx, st.df FROM st, n WHERE n.n > 0 AND st.df / n.n <= %(max_df)s),"
    " prune AS (SELECT (n.n >= %(min_n)s AND (SELECT count(*) FROM st) > 1 AND EXISTS (SELECT 1 FROM rare)) AS p FROM n),"
    " keep AS (SELECT lx, df FROM rare WHERE (SELECT p FROM prune)"
    "   UNION ALL SELECT lx, df FROM st WHERE NOT (SELECT p FROM prune)),"
    " t AS (SELECT chr(39) || replace(replace(keep.lx, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39))"
    "   || chr(39) AS lit, ln(1.0 + (n.n - keep.df + 0.5) / (keep.df + 0.5)) AS w FROM keep, n WHERE n.n > 0),"
    " tq AS MATERIALIZED (SELECT t.lit::tsquery AS q, t.w FROM t)"
    " SELECT f.id, (SELECT sum(tq.w * ts_rank(x.v, tq.q, 1)) FROM tq) AS r FROM fragment_terms f"
    " CROSS JOIN LATERAL (SELECT f.{column} || ''::tsvector AS v OFFSET 0) x"
    " WHERE f.{column} @@ (SELECT string_agg(t.lit, ' | ')::tsquery FROM t){kind_sql}"
    " ORDER BY r DESC, f.id LIMIT %(k)s"
)


#: The fragment columns (and vector) a lane statement returns beside each hit in rows mode
#: (:meth:`PostgresStore.search_many_rows`), NULL for ids the caller already holds (``%(have)s``).
_ROW_COLS = ", ".join(f"f.{c.strip()}" for c in _FRAG_COLS.split(",")) + ", f.embedding"
_ROW_JOIN = "LEFT JOIN fragments f ON f.id = {hit}.id AND NOT (f.id = ANY(%(have)s))"
#: A text lane's statement (two columns: id, score; in its own order) with the hits' rows joined.
_TEXT_ROWS_SQL = ("SELECT h.id, h.s, " + _ROW_COLS + " FROM (SELECT q.*, row_number() OVER () AS o FROM ({inner})"
                  " q(id, s)) h " + _ROW_JOIN.format(hit="h") + " ORDER BY h.o")
#: Rows per fragment row in rows mode: hit columns first, then these.
_ROW_WIDTH = 9
#: What a text statement's results belong to: a call's index, or (stemmed, unstemmed) for paired lexical lanes.
TextKey = int | tuple[int, int]


def _source(row: Sequence[Any]) -> Source:
    return Source(
        id=row[0], kind=row[1], title=row[2], lang=row[3], content_hash=row[4], blob_sha256=row[5],
        original_name=row[6], media_type=row[7], origin=row[8], meta={str(k): str(v) for k, v in row[9].items()},
        collection=row[10],
    )


def _fragment(row: Sequence[Any]) -> Fragment:
    return Fragment(
        id=row[0], source_id=row[1], ordinal=row[2], kind=row[3], lang=row[4], text=row[5],
        locator=locator_from_dict(row[6]), content_hash=row[7],
    )


def dense_params(dense: Sequence[tuple[int, str, dict[str, Any]]], i: int) -> dict[str, Any]:
    """The params of call ``i`` among the prepared dense calls."""
    return next(p for j, _, p in dense if j == i)


def dense_params_full(dense: Sequence[tuple[int, str, dict[str, Any]]], i: int) -> tuple[str, dict[str, Any]]:
    """(where, params) of call ``i`` among the prepared dense calls."""
    return next((w, p) for j, w, p in dense if j == i)


def _kept_sql(inner: str, have: list[str] | None) -> str:
    """A dense statement: ``inner`` (id, distance d; its k nearest) materialised, then (id, 1 - d) by
    distance — with the hits' rows joined in rows mode (``have`` not None)."""
    if have is None:
        return f"WITH c AS MATERIALIZED ({inner}) SELECT id, 1 - d FROM c ORDER BY d, id"
    return (f"WITH c AS MATERIALIZED ({inner}) SELECT c.id, 1 - c.d, {_ROW_COLS} FROM c "
            + _ROW_JOIN.format(hit="c") + " ORDER BY c.d, c.id")


def _shared_scan(
    calls: Sequence[LaneCall], members: list[int], q: Vec, limit: int, have: list[str] | None
) -> tuple[str, dict[str, Any]]:
    """The statement of one unfiltered HNSW scan shared by several kind groups (``members``): (id,
    kind, 1 - d) of the ``limit`` nearest. In rows mode (id, kind, 1 - d, lang), then the rows of the ones
    each group keeps — its k nearest of its kinds, ranked as the caller ranks them (distance, then id) —
    except those below the calls' ``rows_min`` (their lang is what the caller gets of them)."""
    if have is None:
        return ("SELECT id, kind, 1 - (embedding <=> %(q)b) FROM fragments WHERE embedding IS NOT NULL"
                " ORDER BY embedding <=> %(q)b LIMIT %(lim)s", {"q": q, "lim": limit})
    gm: list[int] = []
    gkind: list[str] = []
    gk: list[int] = []
    floors: list[float | None] = []
    for i in members:
        c = calls[i]
        assert isinstance(c, DenseCall) and c.kinds is not None
        floors.append(c.rows_min)
        for kind in dict.fromkeys(c.kinds):
            gm.append(i)
            gkind.append(kind)
            gk.append(int(c.k))
    # one floor for the scan: the lowest of its calls' (none if any call wants every row)
    rows_min = None if any(f is None for f in floors) else min(f for f in floors if f is not None)
    sql = ("WITH c AS MATERIALIZED (SELECT id, kind, lang, embedding <=> %(q)b AS d FROM fragments"
           " WHERE embedding IS NOT NULL ORDER BY embedding <=> %(q)b LIMIT %(lim)s),"
           " g AS (SELECT c.id, c.d, g.k, row_number() OVER (PARTITION BY g.m ORDER BY c.d, c.id) AS rn FROM c"
           " JOIN unnest(%(gm)s::int[], %(gkind)s::text[], %(gk)s::int[]) AS g(m, kind, k) ON g.kind = c.kind),"
           # the kept rows joined first (materialised): a LEFT JOIN straight from c would probe the
           # primary key for every one of the `limit` rows and drop the others' rows afterwards
           f" kf AS MATERIALIZED (SELECT {_ROW_COLS} FROM (SELECT DISTINCT id FROM g WHERE rn <= k"
           + (" AND 1 - d >= %(rmin)s" if rows_min is not None else "") +
           ") keep JOIN fragments f ON f.id = keep.id WHERE NOT (f.id = ANY(%(have)s)))"
           " SELECT c.id, c.kind, 1 - c.d, c.lang, kf.* FROM c LEFT JOIN kf ON kf.id = c.id")
    params: dict[str, Any] = {"q": q, "lim": limit, "gm": gm, "gkind": gkind, "gk": gk, "have": have}
    if rows_min is not None:
        params["rmin"] = float(rows_min)
    return sql, params


def _take_rows(
    fetched: Sequence[Sequence[Any]], at: int, got: dict[str, tuple[Fragment, np.ndarray]], dim: int
) -> None:
    """The fragment rows a rows-mode statement returned from column ``at`` on (NULL where not sent); a
    fragment without a vector yet gets zeros, as :meth:`PostgresStore.get_fragments_with_embeddings`."""
    for r in fetched:
        if r[at] is not None and r[at] not in got:
            vec = r[at + _ROW_WIDTH - 1]
            got[r[at]] = (_fragment(r[at : at + _ROW_WIDTH - 1]),
                          np.asarray(vec, dtype=np.float32) if vec is not None else np.zeros(dim, dtype=np.float32))


def _clean(s: str) -> str:
    """PostgreSQL text cannot hold NUL."""
    return s.replace("\x00", " ")


class PostgresStore(PgConversations, PgMemory):
    """A :class:`footnote.store.protocol.Store` on PostgreSQL ≥ 15 with pgvector ≥ 0.5 and pg_trgm.

    ``url`` (the attribute) is the connection URL with the password masked."""

    def __init__(self, url: str, settings: StoreSettings) -> None:
        check_url(url)
        self._dsn = url
        self.url = mask_url(url)
        self.settings = settings
        self._pool = Pool(url, settings.postgres.pool_size, settings.postgres.connect_timeout_s, self._configure)
        # First connection: reachability, extensions, migrations — all before anything is written.
        conn = self._pool.open_connection()
        try:
            #: whether the server runs on this machine (a loopback address or a Unix socket): its backends then
            #: share this machine's cores with the query embedding (``retrieve.embed_first``)
            self.computes_here = on_this_machine(conn.info.host)
            ensure_extensions(conn, url)
            self.schema = ensure_schema(conn)
            migrate(conn)
        except psycopg.Error as e:
            raise StoreError(f"preparing the PostgreSQL store at {self.url} failed: {e}") from e
        finally:
            conn.close()
        self._iterative_scan = self._has_iterative_scan()
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        self._dim: int | None = None
        self._kind_counts: tuple[float, dict[str, int]] | None = None
        self._counts_gen = 0  # bumped when the counts are dropped, so a recount under way does not restore them
        self._recounting = False
        info = self.embedder_info()
        self._dim = info[1] if info else None
        # small kind groups copied into this process for exact dense search (store/pg_exact.py)
        self._exact = ExactGroups(self._pool.open_connection, self._load_group,
                                  lambda job: self._thread_pool().submit(job), self.schema) if settings.postgres.exact_cache else None

    def _has_iterative_scan(self) -> bool:
        """pgvector ≥ 0.8 (``hnsw.iterative_scan``): a kind-filtered HNSW query keeps scanning until k
        rows pass the filter. Older versions post-filter the ef_search candidates (fewer than k hits)."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is None:
            return False
        parts = [int(p) if p.isdigit() else 0 for p in str(row[0]).split(".")[:2]]
        ok = tuple(parts + [0] * (2 - len(parts))) >= (0, 8)
        if not ok:
            log.warning("pgvector %s has no iterative index scans: kind-filtered HNSW search may return fewer than k "
                        "hits (upgrade to pgvector ≥ 0.8)", row[0])
        return ok

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        if not self.settings.postgres.jit:
            conn.execute("SET jit = off")  # session-wide; pg_jit (settings) says why

    def close(self) -> None:
        with self._executor_lock:
            ex, self._executor = self._executor, None
        if ex is not None:
            ex.shutdown(wait=True)
        if self._exact is not None:
            self._exact.close()
        self._pool.close()

    def _fragments_changed(self) -> None:
        """This process wrote to ``fragments``: its copies of small kind groups are stale."""
        if self._exact is not None:
            self._exact.invalidate()

    def _load_group(self, key: GroupKey) -> Group:
        """The embedded fragments of one kind group (``key``: its kinds, None for all), for
        :class:`~footnote.store.pg_exact.ExactGroups`, in the server's id order."""
        where = "embedding IS NOT NULL" + (" AND kind = ANY(%s)" if key is not None else "")
        with self._pool.connection(autocommit=True) as conn:
            rows = conn.cursor(binary=True).execute(
                f"SELECT {_FRAG_COLS}, embedding FROM fragments WHERE {where} ORDER BY id",
                [list(key)] if key is not None else None,
            ).fetchall()
        return group_from_rows(rows, _fragment)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
                        f"or leave --embedder (and embedder.name) unset to use the store's own, {have[0]!r}."
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
                conn.execute("DELETE FROM footnote_meta WHERE key IN ('embed_rate', 'embed_rate_at')")
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
                    [[_clean(f.id) for f in fragments], [f.content_hash for f in fragments],
                     ["[" + ",".join(repr(float(x)) for x in v) + "]" for v in vecs]],
                )
                written = max(0, cur.rowcount)
                conn.execute("DELETE FROM embed_leases WHERE fragment_id = ANY(%s)", [[_clean(f.id) for f in fragments]])
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
                [[_clean(i) for i in fragment_ids]],
            ).fetchall()
        return {r[0] for r in rows}

    def backlog(self) -> BacklogStats:
        with self._pool.connection() as conn:
            frag = conn.execute("SELECT count(*), count(embedding) FROM fragments").fetchone()
            meta = dict(conn.execute(
                "SELECT key, value FROM footnote_meta WHERE key IN ('embed_rate', 'embed_rate_at')"
            ).fetchall())
        assert frag is not None
        return BacklogStats(int(frag[0]), int(frag[1]), float(meta.get("embed_rate", 0.0)),
                            float(meta.get("embed_rate_at", 0.0)))

    def note_embedding_rate(self, rate: float, *, running: bool = True) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.cursor().executemany(
                "INSERT INTO footnote_meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [("embed_rate", repr(max(0.0, float(rate)))), ("embed_rate_at", repr(time.time() if running else 0.0))],
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

    # --- writing ----------------------------------------------------------------------------------

    def source_hash(self, source_id: str) -> str | None:
        with self._pool.connection() as conn:
            row = conn.execute("SELECT content_hash FROM sources WHERE id = %s", [_clean(source_id)]).fetchone()
        return row[0] if row else None

    def put_source(
        self, source: Source, fragments: Sequence[Fragment], embeddings: np.ndarray | None, original: bytes,
        cues: Sequence[Cue] = (),
    ) -> None:
        self.put_sources([SourceWrite(source, fragments, embeddings, original, cues)])

    def put_sources(self, writes: Sequence[SourceWrite]) -> None:
        """One transaction for the whole batch, one statement per table: the ``lexeme_stats`` trigger and
        the GIN indexes' pending lists are updated once per batch (one ``COPY``), not once per source."""
        if not writes:
            return
        check_batch_ids(writes)
        sources: list[Source] = []
        originals: dict[str, bytes] = {}
        cue_rows: list[tuple[Any, ...]] = []
        rows: list[tuple[Any, ...]] = []
        for w in writes:  # every check before anything is written
            source = w.source
            sha, emb = check_put(source, w.fragments, w.embeddings, w.original, self._bound_dim)
            sid = _clean(source.id)
            cue_rows += [(sid, *c) for c in check_cues(source.id, w.cues)]
            if not source.blob_sha256:
                source = replace(source, blob_sha256=sha)
            sources.append(source)
            originals.setdefault(sha, bytes(w.original))
            for i, f in enumerate(w.fragments):
                loc = f.locator
                book = loc.book if isinstance(loc, AddressLocator) else None
                label = loc.label if isinstance(loc, AddressLocator) else ""
                rows.append((
                    _clean(f.id), _clean(f.source_id), f.ordinal, _clean(f.kind), _clean(f.lang), _clean(f.text),
                    json.loads(json.dumps(locator_to_dict(loc), ensure_ascii=False).replace("\\u0000", " ")),
                    f.content_hash,
                    _clean(book) if book is not None else None, fold(_clean(book)) if book is not None else None,
                    _clean(loc.loc) if isinstance(loc, AddressLocator) else None, _clean(label), fold(_clean(label)),
                    plain_text(f.text), Vec(emb[i]) if emb is not None else None,
                ))
        ids = [_clean(s.id) for s in sources]
        src_rows = [
            [_clean(s.id), _clean(s.kind), _clean(s.title), _clean(s.lang), s.content_hash, s.blob_sha256,
             _clean(s.original_name), _clean(s.media_type), _clean(s.origin),
             json.dumps(dict(s.meta), ensure_ascii=False).replace("\\u0000", " "), _clean(s.collection)]
            for s in sources
        ]
        where = f"source {ids[0]!r}" if len(ids) == 1 else f"{len(ids)} sources ({ids[0]!r}…)"
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
                old = dict(conn.execute("SELECT id, blob_sha256 FROM sources WHERE id = ANY(%s)", [ids]).fetchall())
                conn.execute(
                    "INSERT INTO originals (sha256, size, data) SELECT * FROM unnest(%s::text[], %s::int8[], %s::bytea[])"
                    " ON CONFLICT (sha256) DO NOTHING",
                    [list(originals), [len(d) for d in originals.values()], list(originals.values())],
                )
                conn.execute("DELETE FROM fragments WHERE source_id = ANY(%s)", [ids])
                conn.cursor().executemany(
                    f"INSERT INTO sources ({_SRC_COLS}, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s, now())"
                    " ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, title = EXCLUDED.title,"
                    " lang = EXCLUDED.lang, content_hash = EXCLUDED.content_hash, blob_sha256 = EXCLUDED.blob_sha256,"
                    " original_name = EXCLUDED.original_name, media_type = EXCLUDED.media_type,"
                    " origin = EXCLUDED.origin, meta = EXCLUDED.meta, collection = EXCLUDED.collection,"
                    " updated_at = now()",
                    src_rows,
                )
                if old:
                    conn.execute("DELETE FROM cues WHERE source_id = ANY(%s)", [list(old)])
                if cue_rows:
                    with conn.cursor() as cur, cur.copy(
                        "COPY cues (source_id, ordinal, start_ms, end_ms, text) FROM STDIN"
                    ) as cp:
                        for cue in cue_rows:
                            cp.write_row(cue)
                if rows:
                    # one COPY (binary: vectors travel as float32) = one statement, so the lexeme_stats
                    # trigger runs once per batch
                    with conn.cursor() as cur, cur.copy(
                        f"COPY fragments ({_FRAG_COLS}, book, book_key, loc, addr_label, addr_key, tokens, embedding)"
                        " FROM STDIN (FORMAT BINARY)"
                    ) as cp:
                        cp.set_types(_COPY_TYPES)
                        for row in rows:
                            cp.write_row(row)
                new_sha = {_clean(s.id): s.blob_sha256 for s in sources}
                for sha in sorted({o for i, o in old.items() if o != new_sha[i]}):
                    self._drop_orphan(conn, sha)
        except psycopg.Error as e:
            raise StoreError(f"writing {where} to {self.url} failed: {e}") from e
        finally:
            self._fragments_changed()

    @staticmethod
    def _drop_orphan(conn: psycopg.Connection[Any], sha: str) -> None:
        conn.execute(
            "DELETE FROM originals o WHERE o.sha256 = %s AND NOT EXISTS"
            " (SELECT 1 FROM sources s WHERE s.blob_sha256 = o.sha256)",
            [sha],
        )

    def delete_source(self, source_id: str) -> None:
        self.delete_sources([source_id])

    def delete_sources(self, source_ids: Sequence[str]) -> list[str]:
        ids = [_clean(i) for i in dict.fromkeys(source_ids)]
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
                conn.execute("DELETE FROM fragments WHERE source_id = ANY(%s)", [ids])
                rows = conn.execute(
                    "DELETE FROM sources WHERE id = ANY(%s) RETURNING id, blob_sha256", [ids]  # cues: ON DELETE CASCADE
                ).fetchall()
                for sha in sorted({r[1] for r in rows}):
                    self._drop_orphan(conn, sha)
        except psycopg.Error as e:
            raise StoreError(f"deleting sources {ids[:3]!r} from {self.url} failed: {e}") from e
        finally:
            self._fragments_changed()
        gone = {r[0] for r in rows}
        return [i for i in ids if i in gone]

    # --- reading ----------------------------------------------------------------------------------

    @staticmethod
    def _source_filter(kind: str | None, lang: str | None, collection: str | None) -> tuple[str, list[Any]]:
        where, args = source_filter(kind, lang, collection, _clean)
        return pg(where), args

    def list_sources(
        self,
        *,
        kind: str | None = None,
        lang: str | None = None,
        collection: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Source]:
        where, args = self._source_filter(kind, lang, collection)
        page, more = page_clause(limit, offset, None)
        page, args = pg(page), args + more
        with self._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_SRC_COLS} FROM sources{where} ORDER BY id{page}", args).fetchall()
        return [_source(r) for r in rows]

    def count_sources(
        self, *, kind: str | None = None, lang: str | None = None, collection: str | None = None
    ) -> int:
        where, args = self._source_filter(kind, lang, collection)
        with self._pool.connection() as conn:
            row = conn.execute(f"SELECT count(*) FROM sources{where}", args).fetchone()
        return int(row[0]) if row else 0

    def collections(self) -> dict[str, int]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT collection, count(*) FROM sources GROUP BY collection ORDER BY collection"
            ).fetchall()
        return {str(c): int(n) for c, n in rows}

    def get_cues(self, source_id: str, start_ms: int = 0, end_ms: int | None = None) -> list[Cue]:
        hi = end_ms if end_ms is not None else 2**62
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT start_ms, end_ms, text FROM cues WHERE source_id = %(s)s AND start_ms >= coalesce("
                "(SELECT max(start_ms) FROM cues WHERE source_id = %(s)s AND start_ms <= %(lo)s), 0)"
                " AND start_ms < %(hi)s AND end_ms > %(lo)s ORDER BY start_ms, ordinal",
                {"s": _clean(source_id), "lo": int(start_ms), "hi": int(hi)},
            ).fetchall()
        return [Cue(int(a), int(b), str(t)) for a, b, t in rows]

    def get_source(self, source_id: str) -> Source | None:
        with self._pool.connection() as conn:
            row = conn.execute(f"SELECT {_SRC_COLS} FROM sources WHERE id = %s", [_clean(source_id)]).fetchone()
        return _source(row) if row else None

    def get_fragments(self, fragment_ids: Sequence[str]) -> list[Fragment]:
        if not fragment_ids:
            return []
        with self._pool.connection(autocommit=True) as conn:
            rows = conn.execute(
                f"SELECT {_FRAG_COLS} FROM fragments WHERE id = ANY(%s)", [[_clean(i) for i in fragment_ids]]
            ).fetchall()
        by_id = {r[0]: _fragment(r) for r in rows}
        return [by_id[i] for i in fragment_ids if i in by_id]

    def get_fragments_with_embeddings(self, fragment_ids: Sequence[str]) -> tuple[list[Fragment], np.ndarray]:
        """Fragments (in the order asked, unknown ids skipped) and a vector per asked id (zeros where
        none), from one statement — the retrieval pool needs both."""
        dim = self._dim or 0
        mat = np.zeros((len(fragment_ids), dim), dtype=np.float32)
        if not fragment_ids:
            return [], mat
        with self._pool.connection(autocommit=True) as conn, conn.cursor(binary=True) as cur:
            cur.execute(f"SELECT {_FRAG_COLS}, embedding FROM fragments WHERE id = ANY(%s)",
                        [[_clean(i) for i in fragment_ids]])
            rows = cur.fetchall()
        by_id = {r[0]: r for r in rows}
        frags: list[Fragment] = []
        for j, fid in enumerate(fragment_ids):
            r = by_id.get(fid)
            if r is None:
                continue
            frags.append(_fragment(r))
            if r[8] is not None and dim:
                mat[j] = r[8]
        return frags, mat

    def fragments_of(self, source_id: str) -> list[Fragment]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                f"SELECT {_FRAG_COLS} FROM fragments WHERE source_id = %s ORDER BY ordinal", [_clean(source_id)]
            ).fetchall()
        return [_fragment(r) for r in rows]

    def get_original(self, source_id: str) -> Original | None:
        with self._pool.connection() as conn:
            row = conn.execute(
                "SELECT o.sha256, s.original_name, s.media_type, o.data FROM sources s"
                " JOIN originals o ON o.sha256 = s.blob_sha256 WHERE s.id = %s",
                [_clean(source_id)],
            ).fetchone()
        return Original(row[0], row[1], row[2], bytes(row[3])) if row else None

    def stats(self) -> StoreStats:
        with self._pool.connection() as conn:
            sources = conn.execute("SELECT count(*) FROM sources").fetchone()
            frag = conn.execute("SELECT count(*), count(embedding) FROM fragments").fetchone()
            by_kind = dict(conn.execute("SELECT kind, count(*) FROM fragments GROUP BY kind").fetchall())
            by_lang = dict(conn.execute("SELECT lang, count(*) FROM fragments GROUP BY lang").fetchall())
        assert sources is not None and frag is not None
        info = self.embedder_info()
        return StoreStats(
            sources=int(sources[0]), fragments=int(frag[0]), embedded=int(frag[1]),
            by_kind={str(k): int(v) for k, v in by_kind.items()}, by_lang={str(k): int(v) for k, v in by_lang.items()},
            embedder=info[0] if info else None, dim=info[1] if info else None, url=self.url,
        )

    def iter_embeddings(self, batch: int = 1000) -> Iterable[tuple[list[str], np.ndarray]]:
        dim = self._dim
        with self._pool.connection() as conn, conn.transaction(), conn.cursor(name="footnote_iter_emb", binary=True) as cur:
            cur.itersize = max(1, batch)
            cur.execute("SELECT id, embedding FROM fragments WHERE embedding IS NOT NULL ORDER BY id")
            while True:
                rows = cur.fetchmany(max(1, batch))
                if not rows:
                    break
                mat = np.vstack([r[1] for r in rows]).astype(np.float32)
                dim = dim or mat.shape[1]
                yield [r[0] for r in rows], mat

    def get_embeddings(self, fragment_ids: Sequence[str]) -> np.ndarray:
        dim = self._dim or 0
        out = np.zeros((len(fragment_ids), dim), dtype=np.float32)
        if not fragment_ids or not dim:
            return out
        with self._pool.connection(autocommit=True) as conn, conn.cursor(binary=True) as cur:
            cur.execute(
                "SELECT id, embedding FROM fragments WHERE id = ANY(%s) AND embedding IS NOT NULL",
                [[_clean(i) for i in fragment_ids]],
            )
            found = {r[0]: r[1] for r in cur.fetchall()}
        for i, fid in enumerate(fragment_ids):
            v = found.get(fid)
            if v is not None:
                out[i] = v
        return out

    # --- lanes ------------------------------------------------------------------------------------

    def search_dense(self, vector: np.ndarray, k: int, kinds: Sequence[str] | None = None) -> list[Hit]:
        return self.search_many([DenseCall(np.asarray(vector), k, tuple(kinds) if kinds is not None else None)])[0]

    def search_lexical(
        self, query: str, k: int, *, stemmed: bool, lang: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        """OR over the query's lexemes (PostgreSQL's own Snowball configs on the folded tokens), ranked
        by the sum of each matched lexeme's ``ts_rank`` weighted by its BM25 idf (``lexeme_stats``)."""
        call = LexicalCall(query, k, stemmed, lang, tuple(kinds) if kinds is not None else None)
        return self.search_many([call])[0]

    def search_address(self, book: str, loc: str, k: int) -> list[Hit]:
        return self.search_many([AddressCall(book, loc, k)])[0]

    def search_trigram(self, text: str, k: int) -> list[Hit]:
        return self.search_many([TrigramCall(text, k)])[0]

    def search_many(self, calls: Sequence[LaneCall]) -> list[list[Hit]]:
        """Every call's hits, in order, in **one round trip** per connection: the calls are dealt over
        at most ``pg_batch_connections`` pooled connections, each sending its share as one pipeline
        (one Sync) inside one transaction, concurrently — PostgreSQL runs each connection on its own
        backend process, so three HNSW lookups take the time of about one where cores allow. Session
        settings (HNSW ``ef_search`` and iterative scan, the trigram threshold) are set locally in the
        same pipeline. A lexical call is a single statement (idf lookup, pruning and ranking in SQL)."""
        return self._search_many(calls, None)

    def search_many_rows(
        self, calls: Sequence[LaneCall], rows: dict[str, tuple[Fragment, np.ndarray]]
    ) -> list[list[Hit]]:
        """:meth:`search_many`, and the fragment and vector of every hit not already in ``rows`` added
        to it, from the same statements (each lane statement joins its hits' rows; an id in ``rows``
        is not sent again): no second read of the hits (docs/postgres.md). A hit whose row is missing
        (a fallback scan) is simply not added."""
        return self._search_many(calls, rows)

    def _search_many(
        self, calls: Sequence[LaneCall], rows: dict[str, tuple[Fragment, np.ndarray]] | None
    ) -> list[list[Hit]]:
        # units dealt over the connections: each call alone, except the dense calls of one query vector
        # that one HNSW scan serves together (common kind groups, see _search_batch)
        units: list[list[int]] = []
        by_vec: dict[bytes, list[int]] = {}
        counts: dict[str, int] | None = None
        if any(isinstance(c, DenseCall) and c.kinds is not None for c in calls):
            with self._pool.connection(autocommit=True) as conn:
                counts = self._embedded_by_kind(conn)
        # and the lexical calls of one query (stemmed and unstemmed: one statement, see _search_batch)
        by_query: dict[tuple[Any, ...], list[int]] = {}
        for i, c in enumerate(calls):
            if isinstance(c, DenseCall) and counts is not None and self._shares_scan(c, counts):
                key = np.asarray(c.vector, dtype=np.float32).tobytes()
                if key not in by_vec:
                    by_vec[key] = []
                    units.append(by_vec[key])
                by_vec[key].append(i)
            elif isinstance(c, LexicalCall):
                qkey = pair_key(c)
                if qkey not in by_query:
                    by_query[qkey] = []
                    units.append(by_query[qkey])
                by_query[qkey].append(i)
            else:
                units.append([i])
        have = None if rows is None else list(rows)
        n = max(1, min(int(self.settings.postgres.batch_connections), len(units)))
        if n == 1:
            hits, got = self._search_batch(calls, have)
            if rows is not None:
                rows.update(got)
            return hits
        shares = [[i for u in units[j::n] for i in u] for j in range(n)]
        ex = self._thread_pool()
        futures = [ex.submit(self._search_batch, [calls[i] for i in share], have) for share in shares[1:]]
        out: list[list[Hit]] = [[] for _ in calls]
        try:
            first = self._search_batch([calls[i] for i in shares[0]], have)
        finally:
            results = [f.result() for f in futures]  # every share finishes (or raises) before we return
        for share, (hits, got) in zip(shares, [first, *results], strict=True):
            for i, h in zip(share, hits, strict=True):
                out[i] = h
            if rows is not None:
                rows.update(got)
        return out

    def _search_batch(
        self, calls: Sequence[LaneCall], have: list[str] | None = None
    ) -> tuple[list[list[Hit]], dict[str, tuple[Fragment, np.ndarray]]]:
        """One connection, one pipeline: see :meth:`search_many`. ``have`` not None: rows mode — each
        statement also returns its hits' fragment rows and vectors (those not in ``have``)."""
        out: list[list[Hit]] = [[] for _ in calls]
        got: dict[str, tuple[Fragment, np.ndarray]] = {}
        text: list[tuple[TextKey, str, Any]] = []  # (call index — a pair of them for paired lexical lanes —, sql, params)
        lexical: dict[tuple[Any, ...], dict[bool, tuple[int, str, dict[str, Any]]]] = {}  # query → stemmed → statement
        dense: list[tuple[int, str, dict[str, Any]]] = []  # (call index, where, params)
        trigram = False
        for i, c in enumerate(calls):
            if isinstance(c, DenseCall):
                prepared = self._dense_where(c)
                if prepared is not None:
                    dense.append((i, *prepared))
            elif isinstance(c, LexicalCall):
                stmt = self._lexical_sql(c)
                if stmt is not None:
                    lanes = lexical.setdefault(pair_key(c), {})
                    if c.stemmed in lanes:  # the same call twice: its own statement
                        text.append((i, *stmt))
                    else:
                        lanes[c.stemmed] = (i, *stmt)
            elif isinstance(c, AddressCall):
                if c.k > 0:
                    text.append((i, "SELECT id, 1.0 FROM fragments WHERE book_key = %(b)s AND loc = %(l)s"
                                    " ORDER BY source_id, ordinal LIMIT %(k)s",
                                 {"b": fold(_clean(c.book)), "l": _clean(c.loc), "k": int(c.k)}))
            else:
                q = " ".join(fold(_clean(c.text)).split())
                if c.k > 0 and q:
                    trigram = True
                    text.append((i, "SELECT id, word_similarity(%(q)s, addr_key || ' ' || source_id || ' ' || left(tokens, 256)) AS s"
                                    " FROM fragments WHERE %(q)s <%% (addr_key || ' ' || source_id || ' ' || left(tokens, 256))"
                                    " ORDER BY s DESC, id LIMIT %(k)s", {"q": q, "k": int(c.k)}))
        paired: list[tuple[TextKey, str, Any]] = []
        for lanes in lexical.values():
            if len(lanes) == 2:
                (i_s, sql_s, p_s), (i_p, sql_p, p_p) = lanes[True], lanes[False]
                paired.append(((i_s, i_p), *pair_sql((sql_s, p_s), (sql_p, p_p), have, _ROW_COLS)))
            else:
                text += lanes.values()
        if not text and not paired and not dense:
            return out, got
        if have is not None:
            text = [(i, _TEXT_ROWS_SQL.format(inner=sql), {**params, "have": have}) for i, sql, params in text]
        text += paired
        t0 = time.perf_counter()
        ann: list[tuple[int, str, dict[str, Any]]] = []  # kind-filtered HNSW scans
        ann_all: list[tuple[int, str, dict[str, Any]]] = []  # unfiltered ones (a call of every kind)
        exact: list[tuple[int, str, dict[str, Any]]] = []
        local: list[tuple[int, Group]] = []  # (call index, the in-process copy of its kind group)
        shared: dict[bytes, list[int]] = {}  # query vector → the calls one unfiltered HNSW scan serves
        shared_cursors: list[tuple[list[int], psycopg.Cursor[Any]]] = []
        with self._pool.connection() as conn:
            # autocommit, with BEGIN … COMMIT sent inside the pipeline: psycopg's own transaction
            # handling would add a round trip (it syncs after its implicit BEGIN)
            conn.autocommit = True
            try:
                counts = self._embedded_by_kind(conn) if dense else {}
                total = sum(counts.values())
                for i, where, params in dense:
                    c = calls[i]
                    assert isinstance(c, DenseCall)
                    size = total if c.kinds is None else sum(counts.get(k, 0) for k in set(c.kinds))
                    if size <= int(self.settings.postgres.exact_search_max):
                        group = self._exact.get(c.kinds) if self._exact is not None else None
                        if group is not None:  # searched here, with this process's fresh copy of the group
                            local.append((i, group))
                            continue
                        # a small (kind-filtered) set: an exact scan is as fast as the index and returns the true top-k
                        # (the distance computed once per row: the sort key, then 1 - d for the k kept)
                        exact.append((i, _kept_sql(f"SELECT id, embedding <=> %(q)b AS d FROM fragments WHERE {where}"
                                                   " ORDER BY d, id LIMIT %(k)s", have),
                                      params if have is None else {**params, "have": have}))
                    elif self._shares_scan(c, counts):
                        # a common kind group: served by one unfiltered scan shared with the vector's other groups
                        shared.setdefault(params["q"].arr.tobytes(), []).append(i)
                    else:
                        # HNSW; with a kind filter pgvector ≥ 0.8 keeps scanning the graph until k rows pass
                        # it (iterative scan); relaxed order re-sorted exactly over the k found
                        (ann if c.kinds is not None else ann_all).append(
                            (i, self._ann_sql(where, have), params if have is None else {**params, "have": have}))
                ef = self.settings.postgres.ef_search_for(total)
                ef_all = self.settings.postgres.ef_search_for(total, filtered=False)  # the shared scan has no filter
                scans = []
                for members in shared.values():
                    first = dense_params(dense, members[0])
                    limit = max(ef_all, sum(int(dense_params(dense, i)["k"]) for i in members))
                    scans.append((members, *_shared_scan(calls, members, first["q"], limit, have)))
                cursors, shared_cursors = (self._pipeline(conn, text, ann, exact, trigram, scans, ef, have is not None,
                                                          ef_shared=ef_all, ann_all=ann_all)
                                           if text or ann or ann_all or exact or scans else ([], []))
            finally:
                if not conn.closed and not conn.broken:
                    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                        conn.execute("ROLLBACK")
                    conn.autocommit = False
            for key, cur in cursors:
                fetched = cur.fetchall()
                if isinstance(key, tuple):  # paired lexical lanes: (tag, id, score, row…)
                    for tag, j in ((FIRST, key[0]), (SECOND, key[1])):
                        out[j] = [Hit(r[1], float(r[2])) for r in fetched if r[0] == tag and float(r[2]) > 0]
                    if have is not None:
                        _take_rows(fetched, 3, got, self._dim or 0)
                    continue
                positive = isinstance(calls[key], LexicalCall | TrigramCall)
                out[key] = [Hit(r[0], float(r[1])) for r in fetched if not positive or float(r[1]) > 0]
                if have is not None:
                    _take_rows(fetched, 2, got, self._dim or 0)
            short: list[int] = []
            held = set(have) if have is not None and (shared_cursors or local) else set()
            for members, cur in shared_cursors:
                fetched = cur.fetchall()
                if have is not None:
                    _take_rows(fetched, 4, got, self._dim or 0)
                ranked = sorted(fetched, key=lambda r: (-float(r[2]), r[0]))
                for i in members:
                    c = calls[i]
                    assert isinstance(c, DenseCall) and c.kinds is not None
                    kinds = set(c.kinds)
                    # in rows mode a hit sent without its row (below rows_min) comes with its language
                    hits = [Hit(r[0], float(r[2]), r[3] if have is not None and r[4] is None and r[0] not in held else None)
                            for r in ranked if r[1] in kinds][: c.k]
                    out[i] = hits
                    if len(hits) < c.k:
                        short.append(i)
        for i, group in local:
            c = calls[i]
            assert isinstance(c, DenseCall)
            nearest = group.nearest(np.asarray(c.vector, dtype=np.float32).reshape(-1), int(c.k))
            out[i] = [Hit(group.ids[j], sim) for j, sim in nearest]
            if have is not None:
                for j, _ in nearest:
                    fid = group.ids[j]
                    if fid not in held and fid not in got:
                        got[fid] = (group.fragments[j], group.vectors[j])
        if short:  # a group the shared scan left short of k: its own filtered (iterative) scan
            for i, hits in zip(short, self._search_batch_filtered([dense_params_full(dense, i) for i in short]),
                               strict=True):
                out[i] = hits
        log.debug("search_many: %d calls (%d ann, %d exact, %d in process) in %.1f ms", len(calls), len(ann), len(exact), len(local),
                  (time.perf_counter() - t0) * 1e3)
        return out, got

    def _ann_sql(self, where: str, have: list[str] | None = None) -> str:
        return _kept_sql(f"SELECT id, embedding <=> %(q)b AS d FROM fragments WHERE {where}"
                         " ORDER BY embedding <=> %(q)b LIMIT %(k)s", have)

    def _search_batch_filtered(self, dense: list[tuple[str, dict[str, Any]]]) -> list[list[Hit]]:
        """Kind-filtered HNSW scans (iterative), one pipeline: the fallback of a shared scan."""
        with self._pool.connection() as conn:
            conn.autocommit = True
            try:
                counts = self._kind_counts
                ef = self.settings.postgres.ef_search_for(sum(counts[1].values()) if counts else 0)
                cursors, _ = self._pipeline(conn, [], [(j, self._ann_sql(w), p) for j, (w, p) in enumerate(dense)], [],
                                            False, [], ef)
            finally:
                if not conn.closed and not conn.broken:
                    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                        conn.execute("ROLLBACK")
                    conn.autocommit = False
            return [[Hit(r[0], float(r[1])) for r in cur.fetchall()] for _, cur in cursors]

    def _shares_scan(self, c: DenseCall, counts: dict[str, int]) -> bool:
        """Whether a dense call's kind group is common enough to be served by the shared unfiltered scan."""
        if c.kinds is None:
            return False
        total = sum(counts.values())
        size = sum(counts.get(k, 0) for k in set(c.kinds))
        return bool(total) and size > int(self.settings.postgres.exact_search_max) and \
            size >= self.settings.postgres.shared_scan_min_share * total

    def _embedded_by_kind(self, conn: psycopg.Connection[Any]) -> dict[str, int]:
        """Embedded fragments per kind (it only picks the search method: exact scan, the shared HNSW
        scan, or a kind-filtered one). Counted on ``conn`` the first time; afterwards the counts are
        reused, and once older than ``pg_size_cache_s`` recounted on a worker thread while searches go
        on with the previous ones — a count reads every row's index entry (≈ 11 ms of backend CPU at
        100k fragments), which a search on a quiet server (one every ``pg_size_cache_s`` or rarer) paid
        every time before."""
        cached = self._kind_counts
        if cached is None:
            return self._count_kinds(conn, self._counts_gen)
        if time.monotonic() - cached[0] >= self.settings.postgres.size_cache_s:
            self._recount_later()
        return cached[1]

    def _count_kinds(self, conn: psycopg.Connection[Any], gen: int) -> dict[str, int]:
        started = time.monotonic()
        counts = {str(k): int(n) for k, n in conn.execute(_KIND_COUNTS_SQL).fetchall() if int(n) > 0}
        if gen == self._counts_gen:  # not reset meanwhile (rebind)
            self._kind_counts = (started, counts)
        return counts

    def _recount_later(self) -> None:
        with self._executor_lock:
            if self._recounting or self._pool.closed:
                return
            self._recounting = True
        gen = self._counts_gen

        def job() -> None:
            try:
                with self._pool.connection() as conn:
                    self._count_kinds(conn, gen)
            except StoreError as e:  # the store closed or the server went away: the next search says so
                log.debug("recounting embedded fragments per kind failed: %s", e.message)
            finally:
                self._recounting = False

        try:
            self._thread_pool().submit(job)
        except RuntimeError:  # closing
            self._recounting = False

    def _thread_pool(self) -> ThreadPoolExecutor:
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=max(2, int(self.settings.postgres.pool_size)),
                                                    thread_name_prefix="footnote-pg")
            return self._executor

    def _pipeline(
        self, conn: psycopg.Connection[Any], text: Sequence[tuple[TextKey, str, Any]], ann: list[tuple[int, str, Any]],
        exact: list[tuple[int, str, Any]], trigram: bool, scans: list[tuple[list[int], str, Any]], ef: int = 0,
        binary: bool = False, ef_shared: int = 0, ann_all: list[tuple[int, str, Any]] | None = None,
    ) -> tuple[list[tuple[TextKey, psycopg.Cursor[Any]]], list[tuple[list[int], psycopg.Cursor[Any]]]]:
        """Send every statement in one pipeline (one Sync): BEGIN, local settings, the text lanes, the
        unfiltered HNSW scans — shared ones and ``ann_all`` — (``hnsw.ef_search`` ``ef_shared``, raised to
        their limit or k) and the kind-filtered ones (``ef``, raised to k), the exact dense lanes (index
        scans off for them only, so last), COMMIT.
        ``binary``: results in binary (the rows mode's vectors: no text parsing)."""
        s = self.settings

        def run(sql: str, params: Any) -> psycopg.Cursor[Any]:
            return conn.cursor(binary=True).execute(sql, params) if binary else conn.execute(sql, params)

        cursors: list[tuple[TextKey, psycopg.Cursor[Any]]] = []
        shared: list[tuple[list[int], psycopg.Cursor[Any]]] = []
        with conn.pipeline():
            conn.execute("BEGIN")
            if trigram:
                conn.execute("SELECT set_config('pg_trgm.word_similarity_threshold', %s, true)",
                             [str(float(s.postgres.trigram_threshold))])
            cursors += [(i, run(sql, params)) for i, sql, params in text]
            if scans:
                lim = max(int(p["lim"]) for _, _, p in scans)
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(max(ef_shared, lim))])
                shared += [(members, run(sql, params)) for members, sql, params in scans]
            if ann_all:
                k_all = max(int(p["k"]) for _, _, p in ann_all)
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(max(ef_shared or ef, k_all))])
                cursors += [(i, run(sql, params)) for i, sql, params in ann_all]
            if ann:
                k_max = max(int(p["k"]) for _, _, p in ann)
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(max(ef, k_max))])
                if self._iterative_scan and s.postgres.hnsw_iterative_scan != "off":
                    conn.execute("SELECT set_config('hnsw.iterative_scan', %s, true),"
                                 " set_config('hnsw.max_scan_tuples', %s, true)",
                                 [s.postgres.hnsw_iterative_scan, str(int(s.postgres.hnsw_max_scan_tuples))])
                cursors += [(i, run(sql, params)) for i, sql, params in ann]
            if exact:
                conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
                cursors += [(i, run(sql, params)) for i, sql, params in exact]
            conn.execute("COMMIT")
        return cursors, shared

    def _dense_where(self, c: DenseCall) -> tuple[str, dict[str, Any]] | None:
        """(where, params) of a dense call, or None when it can return nothing."""
        if c.k <= 0:
            return None
        if self._dim is None:
            info = self.embedder_info()
            if info is None:
                return None
            self._dim = info[1]
        q = np.asarray(c.vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self._dim:
            raise StoreError(f"query vector has dim {q.shape[0]}, the store holds dim {self._dim}")
        if not np.isfinite(q).all() or not q.any():
            return None
        where = "embedding IS NOT NULL" + (" AND kind = ANY(%(kinds)s)" if c.kinds is not None else "")
        return where, {"q": Vec(q), "k": int(c.k), "kinds": list(c.kinds) if c.kinds is not None else None}

    def _lexical_sql(self, c: LexicalCall) -> tuple[str, dict[str, Any]] | None:
        """One statement: the query's lexemes (PostgreSQL's Snowball configs over the folded tokens),
        their document frequencies, common-word pruning, BM25 idf weights, the OR match and the rank."""
        toks = list(dict.fromkeys(tokenize(_clean(c.query))))
        if c.k <= 0 or not toks:
            return None
        # each token through the config of each query language (footnote_ts_config: the column's own
        # map; '' is 'simple', the token itself)
        if c.stemmed:
            configs, column, code = [*([c.lang] if c.lang else DEFAULT_QUERY_LANGS), ""], "tsv_stem", "s"
        else:
            configs, column, code = [""], "tsv_plain", "p"
        pairs = [(cfg, t) for t in toks for cfg in configs]
        s = self.settings
        kind_sql = " AND f.kind = ANY(%(kinds)s)" if c.kinds is not None else ""
        params = {"cfgs": [p[0] for p in pairs], "toks": [p[1] for p in pairs], "code": code,
                  "max_df": float(s.lexical_max_df), "min_n": int(s.lexical_prune_min_fragments),
                  "kinds": list(c.kinds) if c.kinds is not None else None, "k": int(c.k)}
        return _LEXICAL_SQL.format(column=column, kind_sql=kind_sql), params

    def list_addresses(self) -> list[tuple[str, str, str]]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT f.book, f.loc, s.title FROM fragments f JOIN sources s ON s.id = f.source_id "
                "WHERE f.book IS NOT NULL AND f.loc IS NOT NULL"
            ).fetchall()
        return [(str(b), str(loc), str(t or "")) for b, loc, t in rows]

    # --- bulk helpers (migration, benchmarks) -----------------------------------------------------

    def fragment_ids(self) -> Iterator[str]:
        """Every fragment id (ordered), streamed."""
        with self._pool.connection() as conn, conn.transaction(), conn.cursor(name="footnote_ids") as cur:
            cur.execute("SELECT id FROM fragments ORDER BY id")
            for r in cur:
                yield r[0]
