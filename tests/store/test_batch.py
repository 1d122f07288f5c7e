"""The optional batch capabilities of a store, found once per store as typed protocols (store/batch.py)."""

from __future__ import annotations

from pathlib import Path

from footnote.settings import StoreSettings
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
