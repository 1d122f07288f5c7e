"""``store.sqlite``: the embedded SQLite store (docs/store.md)."""


from __future__ import annotations

from pydantic import Field

from footnote.settings.base import _Frozen


class SqliteSettings(_Frozen):
    section = "store.sqlite"
    busy_timeout_ms: int = Field(30_000, description="How long a SQLite writer waits for the lock.")
    fragment_cache: int = Field(
        20_000, description="SQLite: fragments (with their vectors) and term frequencies the search keeps in memory "
        "between writes, so repeated candidates are not read again (0: off).",
    )
    common_terms_scan_max: int = Field(
        20_000,
        description="SQLite: in a store of at most this many fragments, the terms lexical_max_df leaves out are found once "
        "per write by one scan of the FTS vocabulary, instead of each query's terms being looked up there (two "
        "lookups a search). Larger stores look terms up (a vocabulary scan grows with the store; "
        "docs/retrieval.md).",
    )
