"""Stores: the ``Store`` protocol and its backends, opened by URL."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from footnote.errors import StoreMissing, StoreURLError
from footnote.records.fragments import Source
from footnote.redact import looks_like_libpq, mask_url
from footnote.settings import StoreSettings
from footnote.store.protocol import (
    BacklogStats,
    Hit,
    Original,
    PendingFragment,
    SourceStore,
    Store,
    StoreStats,
)

__all__ = ["BacklogStats", "Hit", "Original", "PendingFragment", "Store", "StoreStats", "open_store",
           "peek_sources", "sources_by_id", "sqlite_path_from_url"]


def sqlite_path_from_url(url: str) -> Path:
    """``sqlite:///abs/path``, ``sqlite:///rel/path`` (relative) or a plain path → Path."""
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///"):])
    if url.startswith("sqlite://"):
        raise StoreURLError(f"store URL {mask_url(url)!r}: use sqlite:///path or a plain path")
    return Path(url)


def open_store(url: str, settings: StoreSettings | None = None, *, create: bool = True) -> Store:
    """Open (and migrate) the store at ``url``: a path or sqlite:/// URL → SQLite; postgresql:// → PostgreSQL.

    ``create=False`` (commands that only read): a SQLite file that does not exist is a ``StoreMissing``
    error instead of a new empty store. A PostgreSQL database is never created here either way."""
    settings = settings or StoreSettings(url=url)
    if looks_like_libpq(url):
        # "host=db user=me password=… dbname=x" is not a path: taken as one, it created a SQLite file named
        # with the password
        raise StoreURLError(
            f"store URL {mask_url(url)!r} is a libpq key=value connection string; write it as a URL: "
            "postgresql://user:password@host:port/dbname"
        )
    if url.startswith(("postgresql://", "postgres://")):
        from footnote.store.postgres import PostgresStore

        return PostgresStore(url, settings)
    if "://" in url and not url.startswith("sqlite:"):
        raise StoreURLError(f"store URL {mask_url(url)!r}: unknown scheme (expected a path, sqlite:///path or postgresql://…)")
    from footnote.store.sqlite import SqliteStore

    path = sqlite_path_from_url(url)
    if not create and not path.expanduser().exists():
        raise StoreMissing(
            f"no store at {path}: nothing has been ingested there yet. Create it with `footnote ingest PATH…` "
            f"(same --store), or point --store (env FOOTNOTE_STORE) at an existing store"
        )
    return SqliteStore(path, settings)


def peek_sources(url: str, source_ids: Sequence[str]) -> tuple[int, dict[str, str]] | None:
    """How many sources a SQLite store at ``url`` holds, and the stored originals' sha256 of those of
    ``source_ids`` it holds — read read-only: never created, never migrated, no connection kept; no file there
    yet holds none (0, {}). None: not a SQLite store (a PostgreSQL store is never connected to here: a caller that
    can do without it should not wait on it), or not readable as one (a folder, a file of another kind)."""
    if url.startswith(("postgresql://", "postgres://")) or ("://" in url and not url.startswith("sqlite:")):
        return None
    try:
        path = sqlite_path_from_url(url).expanduser()
    except StoreURLError:
        return None
    if not path.exists():
        return 0, {}
    if not path.is_file():
        return None
    held: dict[str, str] = {}
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)) as db:
            count = int(db.execute("SELECT count(*) FROM sources").fetchone()[0])
            for sid in source_ids:
                row = db.execute("SELECT blob_sha256 FROM sources WHERE id = ?", (sid,)).fetchone()
                if row is not None:
                    held[sid] = str(row[0])
    except (sqlite3.Error, OSError):
        return None
    return count, held


def sources_by_id(store: SourceStore, source_ids: Iterable[str]) -> dict[str, Source]:
    """Each source among ``source_ids`` that ``store`` holds, by id, in first-seen order (one lookup per
    distinct id; a source the store lacks is left out)."""
    out: dict[str, Source] = {}
    for sid in dict.fromkeys(source_ids):
        src = store.get_source(sid)
        if src is not None:
            out[sid] = src
    return out


