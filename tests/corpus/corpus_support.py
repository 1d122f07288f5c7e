"""Shared helpers of the corpus tests (imported by name: pytest puts this folder on sys.path)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.corpus.records import Fragment, Source


class CountingStore:
    """Wraps a real store and counts the calls that write."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes: list[tuple[str, str]] = []

    def put_source(self, source: Source, fragments: Sequence[Fragment], embeddings: np.ndarray | None,
                   original: bytes) -> None:
        self.writes.append(("put", source.id))
        self.inner.put_source(source, fragments, embeddings, original)

    def delete_source(self, source_id: str) -> None:
        self.writes.append(("delete", source_id))
        self.inner.delete_source(source_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def generation(db: Path) -> int:
    """The store's write generation (bumped by every write transaction), read with plain sqlite3."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
