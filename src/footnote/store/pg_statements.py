"""The PostgreSQL store's search statements: the lexical lane in one statement, the dense statements
(exact, HNSW, one unfiltered scan shared by several kind groups) and the per-kind counts that choose
among them. Used by :class:`~footnote.store.pg_search.PgSearch`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from footnote.store.batch import DenseCall, LaneCall
from footnote.store.pg_rows import ROW_COLS, ROW_JOIN
from footnote.store.pg_support import Vec

#: Embedded fragments per kind: every fragment's kind from the kind index (an index-only scan) less
#: the fragments still without a vector (the ``fragments_unembedded`` partial index) — the counts of
#: ``WHERE embedding IS NOT NULL GROUP BY kind`` without reading every heap row (≈ 4× less backend CPU).
KIND_COUNTS_SQL = (
    "SELECT a.kind, a.n - coalesce(u.n, 0) FROM (SELECT kind, count(*) AS n FROM fragments GROUP BY kind) a"
    " LEFT JOIN (SELECT kind, count(*) AS n FROM fragments WHERE embedding IS NULL GROUP BY kind) u USING (kind)"
)

#: One lexical lane call as one statement: lexemes of the query (regconfig per token), their document
#: frequency (``lexeme_stats``; row ``n``/'' holds the fragment count), common words dropped in a large
#: store (``lexical_max_df`` once it holds ``lexical_prune_min_fragments``, unless that drops all), BM25
#: idf weights, then ``Σ idf × ts_rank`` over the fragments matching any kept lexeme (the GIN index).
#: Lexemes are quoted for ``::tsquery`` exactly as a tsquery literal: '…' with \ and ' doubled. Each
#: lexeme's tsquery is parsed once (``tq``), not once per matching row, and each row's tsvector is
#: decompressed once (``x``: ``|| ''::tsvector`` yields the same vector, detoasted) instead of once per
#: lexeme: the same ranks, ≈ 10 % less backend CPU per lane at 100k fragments (docs/postgres.md). The
#: tsvectors live inline in the narrow ``fragment_terms`` (migration 12), not out of line in TOAST.
LEXICAL_SQL = (
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

#: What a text statement's results belong to: a call's index, or (stemmed, unstemmed) for paired lexical lanes.
TextKey = int | tuple[int, int]


def dense_params(dense: Sequence[tuple[int, str, dict[str, Any]]], i: int) -> dict[str, Any]:
    """The params of call ``i`` among the prepared dense calls."""
    return next(p for j, _, p in dense if j == i)


def dense_params_full(dense: Sequence[tuple[int, str, dict[str, Any]]], i: int) -> tuple[str, dict[str, Any]]:
    """(where, params) of call ``i`` among the prepared dense calls."""
    return next((w, p) for j, w, p in dense if j == i)


def kept_sql(inner: str, have: list[str] | None) -> str:
    """A dense statement: ``inner`` (id, distance d; its k nearest) materialised, then (id, 1 - d) by
    distance — with the hits' rows joined in rows mode (``have`` not None)."""
    if have is None:
        return f"WITH c AS MATERIALIZED ({inner}) SELECT id, 1 - d FROM c ORDER BY d, id"
    return (f"WITH c AS MATERIALIZED ({inner}) SELECT c.id, 1 - c.d, {ROW_COLS} FROM c "
            + ROW_JOIN.format(hit="c") + " ORDER BY c.d, c.id")


def shared_scan(
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
           f" kf AS MATERIALIZED (SELECT {ROW_COLS} FROM (SELECT DISTINCT id FROM g WHERE rn <= k"
           + (" AND 1 - d >= %(rmin)s" if rows_min is not None else "") +
           ") keep JOIN fragments f ON f.id = keep.id WHERE NOT (f.id = ANY(%(have)s)))"
           " SELECT c.id, c.kind, 1 - c.d, c.lang, kf.* FROM c LEFT JOIN kf ON kf.id = c.id")
    params: dict[str, Any] = {"q": q, "lim": limit, "gm": gm, "gkind": gkind, "gk": gk, "have": have}
    if rows_min is not None:
        params["rmin"] = float(rows_min)
    return sql, params
