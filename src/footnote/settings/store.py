"""``store``: where fragments live (SQLite or PostgreSQL) and how they are searched there."""

from __future__ import annotations

from pydantic import Field

from footnote.settings.base import DEFAULT_STORE, _Frozen
from footnote.settings.store_postgres import PostgresSettings
from footnote.settings.store_sqlite import SqliteSettings


class StoreSettings(_Frozen):
    section = "store"
    url: str = Field(DEFAULT_STORE, description="Store URL: a path, sqlite:///path, or postgresql://… (env FOOTNOTE_STORE).")
    lexical_max_df: float = Field(
        0.5, description="Lexical lanes: query terms in more than this share of fragments are left out (BM25 weight ~0)."
    )
    trigram_query_grams: int = Field(
        12, description="Trigram lane: a query is matched by at most this many of its rarest trigrams (then re-scored on all)."
    )
    trigram_pool: int = Field(50, description="Trigram lane: candidates re-scored per query (at least; 10×k if larger).")
    blas_threads: int = Field(
        1, ge=0,
        description="Threads numpy's BLAS (OpenBLAS) may use in this process for Footnote's small matrix products (SQLite "
        "dense search, the PostgreSQL in-process copies, sentence vectors). 1: OpenBLAS's extra threads spin "
        "between products and cost a search CPU on a small machine (docs/retrieval.md, 'BLAS threads'); 0 = the "
        "library's default (try it on a many-core machine with a very large store).",
    )
    lexical_prune_min_fragments: int = Field(
        100, description="Lexical lanes: apply lexical_max_df only in stores of at least this many fragments."
    )
    postgres: PostgresSettings = Field(
        default_factory=lambda: PostgresSettings(),
        description="The PostgreSQL + pgvector store: HNSW, exact scans, connection pool, batching (docs/postgres.md).",
    )
    sqlite: SqliteSettings = Field(
        default_factory=lambda: SqliteSettings(),
        description="The embedded SQLite store: busy timeout, caches (docs/store.md).",
    )

