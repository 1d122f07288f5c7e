"""``store.postgres``: the PostgreSQL + pgvector store — HNSW, exact scans, pools, batches (docs/postgres.md)."""


from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from footnote.settings.base import _Frozen


class PostgresSettings(_Frozen):
    section = "store.postgres"
    hnsw_m: int = Field(
        24, description="PostgreSQL HNSW index: m (links per node); with ef_construction 200 the recall margin a 1M store needs, "
        "at a longer build (docs/postgres.md, 'HNSW recall'). Applies to indexes built from now on (REINDEX to "
        "change one).",
    )
    hnsw_ef_construction: int = Field(
        200,
        description="PostgreSQL HNSW index: ef_construction, the candidate list while building (build time roughly "
        "proportional; recall against pgvector's default: docs/postgres.md, 'HNSW recall'). Applies to indexes "
        "built from now on (REINDEX to change one).",
    )
    hnsw_ef_search: int | None = Field(
        None,
        description="PostgreSQL HNSW query: hnsw.ef_search, the candidate list of a graph search (raised to k when k is "
        "larger). Higher: better recall, slower. None (the default): chosen by the store's size from "
        "hnsw_ef_search_by_size; a number here overrides that for every size.",
    )
    hnsw_ef_search_by_size: tuple[tuple[int, int], ...] = Field(
        ((100_000, 200), (1_000_000, 800)),
        description="PostgreSQL HNSW query: (embedded fragments, ef_search) rows, chosen from recall against exact search on "
        "real embeddings with the default index (docs/postgres.md, 'HNSW recall'): a store uses the ef_search of "
        "the first row whose size is at least its own, beyond the last row the last row's. Used when "
        "hnsw_ef_search is None, for kind-filtered (iterative) scans; the unfiltered scans use "
        "hnsw_ef_search_unfiltered_by_size.",
    )
    hnsw_ef_search_unfiltered_by_size: tuple[tuple[int, int], ...] = Field(
        ((100_000, 150), (1_000_000, 800)),
        description="PostgreSQL HNSW query: the same rows for an unfiltered scan (the one shared by the common kind groups, "
        "and a dense call of every kind): its recall does not suffer from a filter, so it needs a shorter "
        "candidate list (bench/hnsw_recall.py; docs/postgres.md, 'HNSW recall').",
    )
    hnsw_iterative_scan: Literal["off", "relaxed_order", "strict_order"] = Field(
        "relaxed_order",
        description="PostgreSQL HNSW query (pgvector >= 0.8; ignored on older versions): hnsw.iterative_scan. With a kind "
        "filter, plain HNSW post-filters its ef_search candidates and can return fewer than k rows; an iterative scan "
        "keeps walking the graph until k rows pass. relaxed_order is re-sorted exactly over the k found.",
    )
    hnsw_max_scan_tuples: int = Field(
        20000,
        description="PostgreSQL HNSW iterative scan (pgvector >= 0.8): hnsw.max_scan_tuples, the most index tuples one "
        "filtered query visits before it stops (bounds the time of a filter that almost nothing passes).",
    )
    exact_search_max: int = Field(
        10_000, description="PostgreSQL: with at most this many embedded fragments, dense search is exact (no HNSW)."
    )
    shared_scan_min_share: float = Field(
        0.25,
        description="PostgreSQL dense lanes: kind groups holding at least this share of the embedded fragments are "
        "served together by ONE unfiltered HNSW scan of the query vector (hnsw_ef_search candidates, split by kind); "
        "rarer groups get their own kind-filtered (iterative) scan, and a group the shared scan leaves short of k too.",
    )
    bulk_min_fragments: int = Field(
        20_000,
        description="PostgreSQL: a backlog run with at least this many fragments to embed (and bulk_min_share of "
        "the store) drops the HNSW index and builds it once at the end; dense search scans exactly meanwhile.",
    )
    bulk_min_share: float = Field(
        0.5, description="PostgreSQL: the share of the store's fragments a backlog must be for bulk_min_fragments "
        "to apply (rebuilding an index over many embedded vectors for a small backlog would cost more)."
    )
    size_cache_s: float = Field(
        10.0, description="PostgreSQL: how long the per-kind counts that pick exact, shared or filtered HNSW dense search "
        "are reused (seconds)."
    )
    batch_connections: int = Field(
        3,
        description="PostgreSQL: a batch of lane calls (one round's dense lanes, or its text lanes) is dealt over at "
        "most this many pooled connections, each one pipelined round trip, run concurrently (1: one connection, "
        "one round trip for the whole batch).",
    )
    pool_size: int = Field(8, description="PostgreSQL: most connections one store keeps open (one per concurrent call).")
    connect_timeout_s: int = Field(10, description="PostgreSQL: seconds to wait when connecting before a StoreError.")
    listen_retry_s: float = Field(
        10.0, description="PostgreSQL: after the connection that listens for other processes' writes could not be "
        "opened (or broke), seconds before it is tried again; meanwhile every turn reads the corpus afresh "
        "(store/pg_changes.py).",
    )
    listen_keepalive_s: int = Field(
        20, description="PostgreSQL: TCP keepalive idle seconds of the listening connection, so that a link dropped "
        "without a word (a NAT or load balancer's idle timeout) is noticed — after about this plus three 5-second "
        "probes — and the corpus read afresh, instead of a silent listener leaving titles and books unrefreshed.",
    )
    jit: bool = Field(
        False,
        description="PostgreSQL: leave the server's JIT compilation on for Footnote's connections. Off (SET jit = off "
        "per connection): every Footnote statement is short, and a server with LLVM JIT compiles a statement whose "
        "planned cost passes jit_above_cost (a lexical lane over a common word can) — tens of ms for nothing.",
    )
    trigram_threshold: float = Field(
        0.6, description="PostgreSQL address lane: pg_trgm.word_similarity_threshold for the trigram match "
        "(lower admits fuzzier matches but lets far more candidates through the GIN index)."
    )

    @field_validator("hnsw_ef_search_by_size", "hnsw_ef_search_unfiltered_by_size")
    @classmethod
    def _ef_rows(cls, rows: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        if not rows or any(size <= 0 or ef <= 0 for size, ef in rows):
            raise ValueError("needs at least one (fragments, ef_search) row, both positive")
        return tuple(sorted(rows))

    def ef_search_for(self, embedded: int, *, filtered: bool = True) -> int:
        """The hnsw.ef_search of a store holding ``embedded`` vectors (``hnsw_ef_search`` when set), for a
        kind-filtered scan or (``filtered`` False) an unfiltered one."""
        if self.hnsw_ef_search is not None:
            return int(self.hnsw_ef_search)
        rows = self.hnsw_ef_search_by_size if filtered else self.hnsw_ef_search_unfiltered_by_size
        for size, ef in rows:
            if embedded <= size:
                return int(ef)
        return int(rows[-1][1])
