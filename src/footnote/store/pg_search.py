"""Search on the PostgreSQL store: every lane call of a turn in one round trip per connection (see
:meth:`PgSearch.search_many`). A mixin of :class:`~footnote.store.postgres.PostgresStore`; the
statements are in :mod:`footnote.store.pg_statements`."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from footnote.errors import StoreError
from footnote.records.fragments import Fragment
from footnote.store.batch import AddressCall, DenseCall, LaneCall, LexicalCall, TrigramCall
from footnote.store.pg_exact import ExactGroups, Group
from footnote.store.pg_lexical import FIRST, SECOND, pair_key, pair_sql
from footnote.store.pg_rows import ROW_COLS, TEXT_ROWS_SQL, clean, take_rows
from footnote.store.pg_statements import (
    KIND_COUNTS_SQL,
    LEXICAL_SQL,
    TextKey,
    dense_params,
    dense_params_full,
    kept_sql,
    shared_scan,
)
from footnote.store.pg_support import Vec
from footnote.store.protocol import Hit
from footnote.store.text import DEFAULT_QUERY_LANGS, fold, tokenize

if TYPE_CHECKING:
    from footnote.settings import StoreSettings
    from footnote.store.pg_support import Pool

log = logging.getLogger(__name__)


class PgSearch:
    """The lanes: dense (exact, shared or filtered HNSW, or this process's copy of a small kind group),
    lexical (stemmed and unstemmed paired in one statement), address and trigram."""

    if TYPE_CHECKING:  # provided by PostgresStore
        url: str
        settings: StoreSettings
        _pool: Pool
        _dim: int | None
        _exact: ExactGroups | None
        _iterative_scan: bool
        _kind_counts: tuple[float, dict[str, int]] | None
        _counts_gen: int
        _recounting: bool
        _executor_lock: threading.Lock

        def _thread_pool(self) -> ThreadPoolExecutor: ...

        def embedder_info(self) -> tuple[str, int] | None: ...

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
                                 {"b": fold(clean(c.book)), "l": clean(c.loc), "k": int(c.k)}))
            else:
                q = " ".join(fold(clean(c.text)).split())
                if c.k > 0 and q:
                    trigram = True
                    text.append((i, "SELECT id, word_similarity(%(q)s, addr_key || ' ' || source_id || ' ' || left(tokens, 256)) AS s"
                                    " FROM fragments WHERE %(q)s <%% (addr_key || ' ' || source_id || ' ' || left(tokens, 256))"
                                    " ORDER BY s DESC, id LIMIT %(k)s", {"q": q, "k": int(c.k)}))
        paired: list[tuple[TextKey, str, Any]] = []
        for lanes in lexical.values():
            if len(lanes) == 2:
                (i_s, sql_s, p_s), (i_p, sql_p, p_p) = lanes[True], lanes[False]
                paired.append(((i_s, i_p), *pair_sql((sql_s, p_s), (sql_p, p_p), have, ROW_COLS)))
            else:
                text += lanes.values()
        if not text and not paired and not dense:
            return out, got
        if have is not None:
            text = [(i, TEXT_ROWS_SQL.format(inner=sql), {**params, "have": have}) for i, sql, params in text]
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
                        exact.append((i, kept_sql(f"SELECT id, embedding <=> %(q)b AS d FROM fragments WHERE {where}"
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
                    scans.append((members, *shared_scan(calls, members, first["q"], limit, have)))
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
                        take_rows(fetched, 3, got, self._dim or 0)
                    continue
                positive = isinstance(calls[key], LexicalCall | TrigramCall)
                out[key] = [Hit(r[0], float(r[1])) for r in fetched if not positive or float(r[1]) > 0]
                if have is not None:
                    take_rows(fetched, 2, got, self._dim or 0)
            short: list[int] = []
            held = set(have) if have is not None and (shared_cursors or local) else set()
            for members, cur in shared_cursors:
                fetched = cur.fetchall()
                if have is not None:
                    take_rows(fetched, 4, got, self._dim or 0)
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
        return kept_sql(f"SELECT id, embedding <=> %(q)b AS d FROM fragments WHERE {where}"
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
        counts = {str(k): int(n) for k, n in conn.execute(KIND_COUNTS_SQL).fetchall() if int(n) > 0}
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
        toks = list(dict.fromkeys(tokenize(clean(c.query))))
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
        return LEXICAL_SQL.format(column=column, kind_sql=kind_sql), params

    def list_addresses(self, collections: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        where = "" if collections is None else " AND s.collection = ANY(%s)"
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT f.book, f.loc, s.title FROM fragments f JOIN sources s ON s.id = f.source_id "
                "WHERE f.book IS NOT NULL AND f.loc IS NOT NULL" + where,
                [] if collections is None else [[clean(c) for c in collections]],
            ).fetchall()
        return [(str(b), str(loc), str(t or "")) for b, loc, t in rows]
