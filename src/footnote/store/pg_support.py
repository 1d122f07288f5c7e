"""Plumbing for the PostgreSQL store: URL checks and masking, a small thread-safe connection pool,
binary adaptation of pgvector's ``vector`` type to numpy, and the numbered-migration runner."""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import queue
import re
import struct
import threading
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import psycopg
import psycopg.sql
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format

from footnote import redact
from footnote.errors import StoreError, StoreURLError
from footnote.redact import mask_url as mask_url  # re-exported: the store modules mask with it

log = logging.getLogger(__name__)

#: Advisory lock key serialising migrations and embedder binding across processes.
MIGRATION_LOCK = 0x466F6F74  # "Foot"
#: Advisory lock key serialising writers (one writer at a time, as in SQLite; keeps lexeme_stats
#: updates free of deadlocks).
WRITE_LOCK = 0x466F6F75
#: Advisory lock key (with the schema's hash) held by a session while it bulk-loads without the HNSW index.
BULK_LOCK = 0x466F6F76
#: Advisory lock key (with the schema's hash) serialising backlog claims (``claim_pending``).
CLAIM_LOCK = 0x466F6F77

_EXTENSION_HELP = {
    "vector": (
        "pgvector is required: install it on the server (Debian/Ubuntu: apt install postgresql-NN-pgvector; "
        "macOS: brew install pgvector; managed services: enable the 'vector' extension — it ships with "
        "AWS RDS/Aurora, Google Cloud SQL/AlloyDB, Azure Flexible Server, Supabase, Neon, Crunchy), then "
        "run CREATE EXTENSION vector; in this database as a user allowed to"
    ),
    "pg_trgm": "pg_trgm (a contrib module) is required: install postgresql-contrib and run CREATE EXTENSION pg_trgm;",
}


def check_url(url: str) -> None:
    """StoreError for a URL that is not a well-formed postgresql:// URL (before any connection)."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a non-numeric or out-of-range port
    except ValueError as e:
        raise StoreURLError(f"malformed PostgreSQL URL {mask_url(url)!r}: {e}") from e
    if parts.scheme not in ("postgresql", "postgres"):
        raise StoreURLError(f"not a PostgreSQL URL: {mask_url(url)!r} (expected postgresql://user:pass@host:port/db)")
    if port == 0:
        raise StoreURLError(f"malformed PostgreSQL URL {mask_url(url)!r}: port 0")
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as e:
        raise StoreURLError(f"malformed PostgreSQL URL {mask_url(url)!r}: {_first_line(e)}") from e


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def connect_error(url: str, e: BaseException) -> StoreError:
    """A clear StoreError for a failed connection (unreachable, bad credentials, missing database)."""
    msg = str(e).strip().replace("\n", " ")
    hint = ""
    low = msg.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        hint = " (check the user name and password in the URL)"
    elif "does not exist" in low and "database" in low:
        hint = " (create the database first: CREATE DATABASE …)"
    elif "connection refused" in low or "timeout" in low or "could not translate host" in low:
        hint = " (is PostgreSQL running and reachable at that host and port?)"
    return StoreError(f"cannot connect to PostgreSQL at {mask_url(url)}: {redact.redact(msg, [url])}{hint}")


def on_this_machine(host: str) -> bool:
    """Whether a libpq host (as the connection reports it) is this machine: a Unix socket directory, a
    loopback address or ``localhost``."""
    if not host or host.startswith("/") or host.startswith("@") or host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# --- vector <-> numpy -------------------------------------------------------------------------------


class Vec:
    """A float32 vector to send as pgvector's binary ``vector``."""

    __slots__ = ("arr",)

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = np.ascontiguousarray(arr, dtype=np.float32)


class _VecLoaderBinary(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray:
        return np.frombuffer(bytes(data), dtype=">f4", offset=4).astype(np.float32)


class _VecLoaderText(Loader):
    def load(self, data: Any) -> np.ndarray:
        body = bytes(data).strip()[1:-1]
        return np.array(body.split(b","), dtype=np.float32) if body else np.zeros(0, np.float32)


def register_vector(conn: psycopg.Connection[Any]) -> None:
    """Adapt ``vector`` on this connection: numpy out (text and binary), :class:`Vec` in (binary)."""
    info = psycopg.types.TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the 'vector' type is not visible on this connection (is pgvector in the search_path?)")
    oid = info.oid
    info.register(conn)  # so binary COPY can name the type

    class _VecDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            a: np.ndarray = obj.arr
            return struct.pack(">HH", a.shape[0], 0) + a.astype(">f4").tobytes()

    _VecDumper.oid = oid
    conn.adapters.register_dumper(Vec, _VecDumper)
    conn.adapters.register_loader(oid, _VecLoaderBinary)
    conn.adapters.register_loader(oid, _VecLoaderText)


# --- connection pool ----------------------------------------------------------------------------


class Pool:
    """At most ``size`` connections, handed out one per ``with pool.connection()`` block (thread-safe).
    Each connection is configured once by ``configure``; a broken connection is discarded."""

    def __init__(
        self, url: str, size: int, connect_timeout: int, configure: Callable[[psycopg.Connection[Any]], None]
    ) -> None:
        self.url = url
        self.connect_timeout = connect_timeout
        self.configure = configure
        self._idle: queue.LifoQueue[psycopg.Connection[Any]] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(max(2, size))  # bulk_load holds one while using another
        self._closed = False
        self._all: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()

    def open_connection(self, **params: Any) -> psycopg.Connection[Any]:
        """A connection outside the pool; ``params``: more libpq connection parameters (keepalives…)."""
        try:
            conn = psycopg.connect(self.url, connect_timeout=self.connect_timeout, application_name="footnote", **params)
        except psycopg.Error as e:
            raise connect_error(self.url, e) from e
        return conn

    @contextlib.contextmanager
    def connection(self, *, autocommit: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for the block. ``autocommit``: for a read of one statement — psycopg's
        implicit transaction costs two more round trips (``BEGIN`` and the closing ``ROLLBACK``), each
        a wake-up of the backend, a third of a small read's time on a busy machine."""
        if self._closed:
            raise StoreError("the PostgreSQL store is closed")
        self._slots.acquire()
        conn: psycopg.Connection[Any] | None = None
        try:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = self.open_connection()
                try:
                    self.configure(conn)
                    conn.commit()
                except BaseException:
                    conn.close()
                    raise
                with self._lock:
                    self._all.append(conn)
            if autocommit:
                conn.autocommit = True
            try:
                yield conn
            except psycopg.Error as e:
                if not conn.closed and not conn.broken:
                    conn.rollback()
                raise StoreError(f"PostgreSQL at {mask_url(self.url)}: {_first_line(e)}") from e
            except BaseException:
                if not conn.closed and not conn.broken:
                    conn.rollback()
                raise
            else:
                if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    conn.rollback()
        finally:
            if conn is not None and autocommit and not conn.closed and not conn.broken:
                if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    conn.execute("ROLLBACK")  # a transaction the block began and left open
                conn.autocommit = False
            if conn is not None:
                if conn.closed or conn.broken or self._closed:
                    with self._lock:
                        if conn in self._all:
                            self._all.remove(conn)
                    conn.close()
                else:
                    self._idle.put(conn)
            self._slots.release()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        with self._lock:
            conns, self._all = self._all, []
        for c in conns:
            with contextlib.suppress(Exception):
                c.close()


# --- migrations ---------------------------------------------------------------------------------


def migration_files() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every ``migrations/postgres/NNNN_name.sql``, in order."""
    root = resources.files("footnote.store").joinpath("migrations", "postgres")
    out = []
    for entry in root.iterdir():
        m = re.fullmatch(r"(\d{4})_(\w+)\.sql", entry.name)
        if m:
            out.append((int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    return sorted(out)


def ensure_extensions(conn: psycopg.Connection[Any], url: str, names: tuple[str, ...] = ("vector", "pg_trgm")) -> None:
    """Create the extensions if missing; StoreError saying how to install one the server lacks."""
    rows = conn.execute(
        "SELECT name, installed_version FROM pg_available_extensions WHERE name = ANY(%s)", [list(names)]
    ).fetchall()
    have = {r[0]: r[1] for r in rows}
    for name in names:
        if name not in have:
            conn.rollback()
            raise StoreError(
                f"PostgreSQL at {mask_url(url)} has no '{name}' extension available. {_EXTENSION_HELP[name]}"
            )
        if have[name] is None:
            try:
                conn.execute(f"CREATE EXTENSION IF NOT EXISTS {name}")  # name from our own tuple
                conn.commit()
            except psycopg.errors.InsufficientPrivilege as e:
                conn.rollback()
                raise StoreError(
                    f"extension '{name}' is available at {mask_url(url)} but not installed, and this user may not "
                    f"install it: ask an administrator to run CREATE EXTENSION {name}; in this database ({_first_line(e)})"
                ) from e
            except psycopg.Error as e:
                conn.rollback()
                raise StoreError(
                    f"CREATE EXTENSION {name} failed at {mask_url(url)}: {_first_line(e)}. {_EXTENSION_HELP[name]}"
                ) from e
    conn.commit()


def ensure_schema(conn: psycopg.Connection[Any]) -> str:
    """Create the first schema of the connection's ``search_path`` if it does not exist (a URL may
    name one: ``?options=-csearch_path%3Dfootnote,public``), so tables never land elsewhere silently.
    Returns the schema the store's tables live in."""
    path = str(conn.execute("SHOW search_path").fetchone()[0])  # type: ignore[index]
    first = next((p.strip().strip('"') for p in path.split(",") if p.strip() and p.strip() != '"$user"'), "public")
    exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", [first]).fetchone()
    if exists is None:
        try:
            conn.execute(psycopg.sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(psycopg.sql.Identifier(first)))
            conn.commit()
        except psycopg.Error as e:
            conn.rollback()
            raise StoreError(f"cannot create schema {first!r} named by the search_path: {_first_line(e)}") from e
    conn.commit()
    # the name as the server resolves it (an unquoted capital folds to lower case): what a trigger's
    # TG_TABLE_SCHEMA says, which the change notifications are matched against (store/pg_changes.py)
    resolved = conn.execute("SELECT current_schema()").fetchone()
    conn.commit()
    return str(resolved[0]) if resolved is not None and resolved[0] else first


def migrate(conn: psycopg.Connection[Any]) -> list[int]:
    """Apply pending migrations in one transaction under an advisory lock; returns the versions applied."""
    applied: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
        conn.execute(
            "CREATE TABLE IF NOT EXISTS footnote_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r[0] for r in conn.execute("SELECT version FROM footnote_migrations").fetchall()}
        for version, name, sql in migration_files():
            if version in done:
                continue
            log.info("applying PostgreSQL migration %04d_%s", version, name)
            conn.execute(sql.encode("utf-8"))
            conn.execute("INSERT INTO footnote_migrations (version, name) VALUES (%s, %s)", [version, name])
            applied.append(version)
    return applied
