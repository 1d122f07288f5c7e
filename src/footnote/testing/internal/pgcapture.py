"""Every statement psycopg executes inside a block: for tests and benchmarks that check what a store sends."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg


@contextlib.contextmanager
def captured() -> Iterator[list[tuple[int, str, Any]]]:
    """Every (backend pid, sql, params) any psycopg connection executes inside the block (the store's
    own connections included: ``Connection.execute`` goes through ``Cursor.execute`` too)."""
    log: list[tuple[int, str, Any]] = []
    orig = psycopg.Cursor.execute

    def execute(self: psycopg.Cursor[Any], query: Any, params: Any = None, **kw: Any) -> Any:
        log.append((self.connection.info.backend_pid, str(query), params))
        return orig(self, query, params, **kw)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield log
    finally:
        psycopg.Cursor.execute = orig  # type: ignore[method-assign]
