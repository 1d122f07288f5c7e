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

import json
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg

from footnote.errors import StoreError
from footnote.records.fragments import AddressLocator, Cue, Fragment, Source, locator_to_dict
from footnote.settings import StoreSettings
from footnote.store.conversations_pg import PgConversations
from footnote.store.keys import KeyListing
from footnote.store.memory_pg import PgMemory
from footnote.store.pg_changes import ChangeFeed
from footnote.store.pg_exact import ExactGroups, Group, GroupKey, group_from_rows
from footnote.store.pg_rows import FRAG_COLS, clean, fragment_row, source_row
from footnote.store.pg_search import PgSearch
from footnote.store.pg_support import (
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
from footnote.store.pg_vectors import PgVectors
from footnote.store.protocol import Original, SourceWrite, StoreStats
from footnote.store.recognition import RecognitionListing
from footnote.store.sql import SOURCE_COLS, SourceListing, pg
from footnote.store.text import fold, plain_text
from footnote.store.validate import check_batch_ids, check_cues, check_put

log = logging.getLogger(__name__)

_COPY_TYPES = ["text", "text", "int4", "text", "text", "text", "jsonb", "text",
               "text", "text", "text", "text", "text", "text", "vector"]


class PostgresStore(SourceListing, KeyListing, RecognitionListing, PgVectors, PgSearch, PgConversations, PgMemory):
    """A :class:`footnote.store.protocol.Store` on PostgreSQL ≥ 15 with pgvector ≥ 0.5 and pg_trgm.

    ``url`` (the attribute) is the connection URL with the password masked. ``exact_copy=False`` leaves the
    exact search of small kind groups on the server instead of the in-process copy (``store/pg_exact.py``):
    for tests of the server's own statement and for ``bench/pg_ab.py --b-server-exact-scan``."""

    def __init__(self, url: str, settings: StoreSettings, *, exact_copy: bool = True) -> None:
        check_url(url)
        self._dsn = url
        self.url = mask_url(url)
        self.settings = settings
        self._pool = Pool(url, settings.postgres.pool_size, settings.postgres.connect_timeout_s, self._configure)
        # First connection: reachability, extensions, migrations — all before anything is written.
        conn = self._pool.open_connection()
        try:
            #: whether the server runs on this machine (a loopback address or a Unix socket): its backends then
            #: share this machine's cores with the query embedding (``computes_here``, ``retrieve.pipeline.embeds_first``)
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
        # the store's generation in this process: its writes and other processes' NOTIFY (store/pg_changes.py)
        pg = settings.postgres
        self._changes = ChangeFeed(
            lambda: self._pool.open_connection(keepalives=1, keepalives_idle=pg.listen_keepalive_s,
                                               keepalives_interval=5, keepalives_count=3),
            self.schema, pg.listen_retry_s)
        self._exact = ExactGroups(self._changes, self._load_group,
                                  lambda job: self._thread_pool().submit(job)) if exact_copy else None

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
        self._changes.close()
        self._pool.close()

    def _fragments_changed(self, *, sources: bool = False) -> None:
        """This process wrote to ``fragments`` (and, ``sources``, added, replaced or removed a source): the generations
        move, its copies of small kind groups are stale."""
        self._changes.bump(sources=sources)
        if self._exact is not None:
            self._exact.invalidate()

    def generation(self) -> int:
        """The sources' generation as this process sees it (``store/pg_changes.py``)."""
        return self._changes.generation()

    def vectors_generation(self) -> int:
        """The vectors' generation as this process sees it (``store/pg_changes.py``)."""
        return self._changes.vectors_generation()

    def _load_group(self, key: GroupKey) -> Group:
        """The embedded fragments of one kind group (``key``: its kinds, None for all), for
        :class:`~footnote.store.pg_exact.ExactGroups`, in the server's id order."""
        where = "embedding IS NOT NULL" + (" AND kind = ANY(%s)" if key is not None else "")
        with self._pool.connection(autocommit=True) as conn:
            rows = conn.cursor(binary=True).execute(
                f"SELECT {FRAG_COLS}, embedding FROM fragments WHERE {where} ORDER BY id",
                [list(key)] if key is not None else None,
            ).fetchall()
        return group_from_rows(rows, fragment_row)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _thread_pool(self) -> ThreadPoolExecutor:
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=max(2, int(self.settings.postgres.pool_size)),
                                                    thread_name_prefix="footnote-pg")
            return self._executor

    # --- writing ----------------------------------------------------------------------------------

    def source_hash(self, source_id: str) -> str | None:
        with self._pool.connection() as conn:
            row = conn.execute("SELECT content_hash FROM sources WHERE id = %s", [clean(source_id)]).fetchone()
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
            sid = clean(source.id)
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
                    clean(f.id), clean(f.source_id), f.ordinal, clean(f.kind), clean(f.lang), clean(f.text),
                    json.loads(json.dumps(locator_to_dict(loc), ensure_ascii=False).replace("\\u0000", " ")),
                    f.content_hash,
                    clean(book) if book is not None else None, fold(clean(book)) if book is not None else None,
                    clean(loc.loc) if isinstance(loc, AddressLocator) else None, clean(label), fold(clean(label)),
                    plain_text(f.text), Vec(emb[i]) if emb is not None else None,
                ))
        ids = [clean(s.id) for s in sources]
        src_rows = [
            [clean(s.id), clean(s.kind), clean(s.title), clean(s.lang), s.content_hash, s.blob_sha256,
             clean(s.original_name), clean(s.media_type), clean(s.origin),
             json.dumps(dict(s.meta), ensure_ascii=False).replace("\\u0000", " "), clean(s.collection)]
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
                conn.execute("DELETE FROM recognition_jobs WHERE source_id = ANY(%s)", [ids])  # a placeholder's job
                conn.cursor().executemany(
                    f"INSERT INTO sources ({SOURCE_COLS}, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s, now())"
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
                        f"COPY fragments ({FRAG_COLS}, book, book_key, loc, addr_label, addr_key, tokens, embedding)"
                        " FROM STDIN (FORMAT BINARY)"
                    ) as cp:
                        cp.set_types(_COPY_TYPES)
                        for row in rows:
                            cp.write_row(row)
                new_sha = {clean(s.id): s.blob_sha256 for s in sources}
                for sha in sorted({o for i, o in old.items() if o != new_sha[i]}):
                    self._drop_orphan(conn, sha)
        except psycopg.Error as e:
            raise StoreError(f"writing {where} to {self.url} failed: {e}") from e
        finally:
            self._fragments_changed(sources=True)

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
        ids = [clean(i) for i in dict.fromkeys(source_ids)]
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
                conn.execute("DELETE FROM fragments WHERE source_id = ANY(%s)", [ids])
                conn.execute("DELETE FROM recognition_jobs WHERE source_id = ANY(%s)", [ids])  # a placeholder's job
                rows = conn.execute(
                    "DELETE FROM sources WHERE id = ANY(%s) RETURNING id, blob_sha256", [ids]  # cues: ON DELETE CASCADE
                ).fetchall()
                for sha in sorted({r[1] for r in rows}):
                    self._drop_orphan(conn, sha)
        except psycopg.Error as e:
            raise StoreError(f"deleting sources {ids[:3]!r} from {self.url} failed: {e}") from e
        finally:
            self._fragments_changed(sources=True)
        gone = {r[0] for r in rows}
        return [i for i in ids if i in gone]

    # --- reading ----------------------------------------------------------------------------------

    def _select(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        with self._pool.connection() as conn:
            return list(conn.execute(pg(statement), list(args)).fetchall())

    def _change(self, statement: str, args: Sequence[Any]) -> int:
        try:
            with self._pool.connection() as conn:
                changed = int(conn.execute(pg(statement), list(args)).rowcount)
                conn.commit()  # the pool rolls back what a block leaves uncommitted
                return changed
        except psycopg.Error as e:
            raise StoreError(f"write failed on {self.url}: {e}") from e

    def _change_rows(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        try:
            with self._pool.connection() as conn:
                rows = list(conn.execute(pg(statement), list(args)).fetchall())
                conn.commit()  # the pool rolls back what a block leaves uncommitted
                return rows
        except psycopg.Error as e:
            raise StoreError(f"write failed on {self.url}: {e}") from e

    @staticmethod
    def _source_from_row(row: Sequence[Any]) -> Source:
        return source_row(row)

    @staticmethod
    def _filter_value(value: str) -> str:
        return clean(value)

    def get_cues(self, source_id: str, start_ms: int = 0, end_ms: int | None = None) -> list[Cue]:
        hi = end_ms if end_ms is not None else 2**62
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT start_ms, end_ms, text FROM cues WHERE source_id = %(s)s AND start_ms >= coalesce("
                "(SELECT max(start_ms) FROM cues WHERE source_id = %(s)s AND start_ms <= %(lo)s), 0)"
                " AND start_ms < %(hi)s AND end_ms > %(lo)s ORDER BY start_ms, ordinal",
                {"s": clean(source_id), "lo": int(start_ms), "hi": int(hi)},
            ).fetchall()
        return [Cue(int(a), int(b), str(t)) for a, b, t in rows]

    def get_source(self, source_id: str) -> Source | None:
        with self._pool.connection() as conn:
            row = conn.execute(f"SELECT {SOURCE_COLS} FROM sources WHERE id = %s", [clean(source_id)]).fetchone()
        return source_row(row) if row else None

    def get_fragments(self, fragment_ids: Sequence[str]) -> list[Fragment]:
        if not fragment_ids:
            return []
        with self._pool.connection(autocommit=True) as conn:
            rows = conn.execute(
                f"SELECT {FRAG_COLS} FROM fragments WHERE id = ANY(%s)", [[clean(i) for i in fragment_ids]]
            ).fetchall()
        by_id = {r[0]: fragment_row(r) for r in rows}
        return [by_id[i] for i in fragment_ids if i in by_id]

    def get_fragments_with_embeddings(self, fragment_ids: Sequence[str]) -> tuple[list[Fragment], np.ndarray]:
        """Fragments (in the order asked, unknown ids skipped) and a vector per asked id (zeros where
        none), from one statement — the retrieval pool needs both."""
        dim = self._dim or 0
        mat = np.zeros((len(fragment_ids), dim), dtype=np.float32)
        if not fragment_ids:
            return [], mat
        with self._pool.connection(autocommit=True) as conn, conn.cursor(binary=True) as cur:
            cur.execute(f"SELECT {FRAG_COLS}, embedding FROM fragments WHERE id = ANY(%s)",
                        [[clean(i) for i in fragment_ids]])
            rows = cur.fetchall()
        by_id = {r[0]: r for r in rows}
        frags: list[Fragment] = []
        for j, fid in enumerate(fragment_ids):
            r = by_id.get(fid)
            if r is None:
                continue
            frags.append(fragment_row(r))
            if r[8] is not None and dim:
                mat[j] = r[8]
        return frags, mat

    def fragments_of(self, source_id: str) -> list[Fragment]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                f"SELECT {FRAG_COLS} FROM fragments WHERE source_id = %s ORDER BY ordinal", [clean(source_id)]
            ).fetchall()
        return [fragment_row(r) for r in rows]

    def get_original(self, source_id: str) -> Original | None:
        with self._pool.connection() as conn:
            row = conn.execute(
                "SELECT o.sha256, s.original_name, s.media_type, o.data FROM sources s"
                " JOIN originals o ON o.sha256 = s.blob_sha256 WHERE s.id = %s",
                [clean(source_id)],
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
                [[clean(i) for i in fragment_ids]],
            )
            found = {r[0]: r[1] for r in cur.fetchall()}
        for i, fid in enumerate(fragment_ids):
            v = found.get(fid)
            if v is not None:
                out[i] = v
        return out

    # --- bulk helpers (migration, benchmarks) -----------------------------------------------------

    def fragment_ids(self) -> Iterator[str]:
        """Every fragment id (ordered), streamed."""
        with self._pool.connection() as conn, conn.transaction(), conn.cursor(name="footnote_ids") as cur:
            cur.execute("SELECT id FROM fragments ORDER BY id")
            for r in cur:
                yield r[0]
