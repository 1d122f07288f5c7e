"""A store seen without its rows capability (``search_many_rows``): the lanes return ids and scores and the pool
reads the hits' rows itself — the path before the PostgreSQL lane statements joined them, kept for the parity
test and the A/B bench (``bench/pg_ab.py --b-rows-read-by-the-pool``), not for the product."""

from __future__ import annotations

from typing import Any


class RowsReadByThePool:
    """``store`` with every attribute but ``search_many_rows`` (so ``store.batch.capabilities`` finds no rows)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "search_many_rows":
            raise AttributeError(name)
        return getattr(self._store, name)
