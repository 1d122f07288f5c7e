"""Curated memory on the SQLite store (migration 0005): a mixin of :class:`~footnote.store.sqlite.SqliteStore`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from footnote.records.memory import MemoryNote, NoteKind
from footnote.store.memory import NoteVectors, note_to_write

_COLS = "id, kind, title, body, triggers, sources, author, lang, content_hash, origin, updated"


def note_from_row(r: Sequence[Any], triggers: Any = None, sources: Any = None) -> MemoryNote:
    """A note from a row of ``_COLS`` (lists given decoded, or as JSON text in the row)."""
    trig = triggers if triggers is not None else json.loads(r[4])
    srcs = sources if sources is not None else json.loads(r[5])
    return MemoryNote(id=r[0], kind=NoteKind(r[1]), title=r[2], body=r[3], triggers=tuple(trig), sources=tuple(srcs),
                      author=r[6], lang=r[7], content_hash=r[8], origin=r[9], updated=float(r[10]))


class SqliteMemory:
    """``MemoryStore`` over the host store's connections."""

    if TYPE_CHECKING:  # provided by SqliteStore
        url: str

        def _conn(self) -> sqlite3.Connection: ...

        def _immediate(self, conn: sqlite3.Connection, locked: str, failed: str) -> AbstractContextManager[None]: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def embedder_info(self) -> tuple[str, int] | None: ...

    def put_memory_note(
        self, note: MemoryNote, texts: Sequence[str], vectors: np.ndarray | None, embedder: str | None
    ) -> MemoryNote:
        stored, vecs = note_to_write(note, texts, vectors, embedder, self.embedder_info)
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", f"saving memory note {note.id!r} failed"):
            conn.execute("DELETE FROM memory_vectors WHERE note_id = ?", (note.id,))
            conn.execute(
                f"INSERT OR REPLACE INTO memory_notes ({_COLS}, embedder) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (stored.id, stored.kind.value, stored.title, stored.body, json.dumps(list(stored.triggers), ensure_ascii=False),
                 json.dumps(list(stored.sources), ensure_ascii=False), stored.author, stored.lang, stored.content_hash,
                 stored.origin, stored.updated, embedder if vecs is not None else None),
            )
            if vecs is not None:
                conn.executemany(
                    "INSERT INTO memory_vectors (note_id, ordinal, text, vector) VALUES (?, ?, ?, ?)",
                    [(note.id, i, t, vecs[i].tobytes()) for i, t in enumerate(texts)],
                )
        return stored

    def get_memory_note(self, note_id: str) -> MemoryNote | None:
        row = self._conn().execute(f"SELECT {_COLS} FROM memory_notes WHERE id = ?", (note_id,)).fetchone()
        return note_from_row(row) if row else None

    def list_memory_notes(self, kind: NoteKind | None = None) -> list[MemoryNote]:
        if kind is None:
            rows = self._conn().execute(f"SELECT {_COLS} FROM memory_notes ORDER BY id").fetchall()
        else:
            rows = self._conn().execute(f"SELECT {_COLS} FROM memory_notes WHERE kind = ? ORDER BY id",
                                        (NoteKind(kind).value,)).fetchall()
        return [note_from_row(r) for r in rows]

    def delete_memory_note(self, note_id: str) -> bool:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", f"removing memory note {note_id!r} failed"):
            conn.execute("DELETE FROM memory_vectors WHERE note_id = ?", (note_id,))
            gone = conn.execute("DELETE FROM memory_notes WHERE id = ?", (note_id,)).rowcount
        return bool(gone)

    def memory_embedders(self) -> dict[str, str | None]:
        return dict(self._conn().execute("SELECT id, embedder FROM memory_notes ORDER BY id").fetchall())

    def memory_vectors(self, embedder: str) -> NoteVectors:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT v.note_id, v.text, v.vector FROM memory_vectors v JOIN memory_notes n ON n.id = v.note_id"
                " WHERE n.embedder = ? ORDER BY v.note_id, v.ordinal", (embedder,)
            ).fetchall()
        return vectors_of(rows)


def vectors_of(rows: Sequence[Sequence[Any]]) -> NoteVectors:
    if not rows:
        return NoteVectors((), (), np.zeros((0, 0), dtype=np.float32))
    mat = np.vstack([np.frombuffer(bytes(r[2]), dtype=np.float32) for r in rows])
    return NoteVectors(tuple(r[0] for r in rows), tuple(r[1] for r in rows), mat)
