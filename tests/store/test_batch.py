"""The optional batch capabilities of a store, found once per store as typed protocols (store/batch.py)."""

from __future__ import annotations

from pathlib import Path

from footnote.settings import StoreSettings
from footnote.store import open_store
from footnote.store.batch import FragmentsWithEmbeddings, capabilities
from footnote.store.sqlite import SqliteStore


def test_capabilities_are_the_store_typed_and_found_once(tmp_path: Path) -> None:
    s = SqliteStore(tmp_path / "s.db", StoreSettings())
    try:
        caps = capabilities(s)
        assert caps.batch is None and caps.batch_rows is None  # SQLite runs lane calls one by one
        assert caps.with_vectors is s and isinstance(caps.with_vectors, FragmentsWithEmbeddings)
        assert capabilities(s) is caps  # not looked up again on every lane batch
    finally:
        s.close()

    class Plain:  # a store with none of them
        pass

    plain = Plain()
    assert capabilities(plain).batch is None and capabilities(plain).with_vectors is None
    assert capabilities(plain) is capabilities(plain)
    assert capabilities(42).batch is None  # an object that takes no weak reference is still answered


def test_each_backend_is_every_named_capability(tmp_path: Path) -> None:
    """``Store`` is made of named capabilities (``store.protocol``): both backends provide each of them."""
    from footnote.store.conversations import ConversationStore
    from footnote.store.memory import MemoryStore
    from footnote.store.postgres import PostgresStore
    from footnote.store.protocol import LaneStore, SourceStore, Store, VectorStore

    caps = (SourceStore, VectorStore, LaneStore, MemoryStore, ConversationStore)
    sqlite = open_store(str(tmp_path / "caps.db"), StoreSettings())
    try:
        assert all(isinstance(sqlite, c) for c in caps) and isinstance(sqlite, Store)
    finally:
        sqlite.close()
    for cap in caps:  # the PostgreSQL class, without a server: every method of every capability is there
        names = [n for n in dir(cap) if not n.startswith("_") and callable(getattr(cap, n, None))]
        assert names and all(callable(getattr(PostgresStore, n, None)) for n in names), cap
