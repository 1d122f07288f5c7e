"""Curated memory on the PostgreSQL store (migration 0008): a mixin of :class:`~footnote.store.postgres.PostgresStore`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from footnote.errors import StoreError
from footnote.records.memory import MemoryNote, NoteKind
from footnote.store.memory import NoteVectors, note_to_write
from footnote.store.memory_sqlite import note_from_row, vectors_of
from footnote.store.pg_rows import clean

if TYPE_CHECKING:
    from footnote.store.pg_support import Pool

_COLS = "id, kind, title, body, triggers, sources, author, lang, content_hash, origin, updated"


class PgMemory:
    """``MemoryStore`` over the host store's pool."""

    if TYPE_CHECKING:  # provided by PostgresStore
        url: str
        _pool: Pool

        def embedder_info(self) -> tuple[str, int] | None: ...

    def put_memory_note(
        self, note: MemoryNote, texts: Sequence[str], vectors: np.ndarray | None, embedder: str | None
    ) -> MemoryNote:
        stored, vecs = note_to_write(note, texts, vectors, embedder, self.embedder_info)
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("DELETE FROM memory_vectors WHERE note_id = %s", (note.id,))
                conn.execute(
                    f"INSERT INTO memory_notes ({_COLS}, embedder) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, title = EXCLUDED.title, body = EXCLUDED.body,"
                    " triggers = EXCLUDED.triggers, sources = EXCLUDED.sources, author = EXCLUDED.author,"
                    " lang = EXCLUDED.lang, content_hash = EXCLUDED.content_hash, origin = EXCLUDED.origin,"
                    " updated = EXCLUDED.updated, embedder = EXCLUDED.embedder",
                    (stored.id, stored.kind.value, clean(stored.title), clean(stored.body),
                     Jsonb([clean(t) for t in stored.triggers]), Jsonb([clean(s) for s in stored.sources]),
                     clean(stored.author), stored.lang, stored.content_hash, clean(stored.origin), stored.updated,
                     embedder if vecs is not None else None),
                )
                if vecs is not None:
                    conn.cursor().executemany(
                        "INSERT INTO memory_vectors (note_id, ordinal, text, vector) VALUES (%s, %s, %s, %s)",
                        [(note.id, i, clean(t), vecs[i].tobytes()) for i, t in enumerate(texts)],
                    )
        except psycopg.Error as e:
            raise StoreError(f"saving memory note {note.id!r} in {self.url} failed: {e}") from e
        return stored

    def get_memory_note(self, note_id: str) -> MemoryNote | None:
        with self._pool.connection() as conn:
            row = conn.execute(f"SELECT {_COLS} FROM memory_notes WHERE id = %s", (note_id,)).fetchone()
        return note_from_row(row, row[4], row[5]) if row else None

    def list_memory_notes(self, kind: NoteKind | None = None) -> list[MemoryNote]:
        with self._pool.connection(autocommit=True) as conn:
            if kind is None:
                rows = conn.execute(f"SELECT {_COLS} FROM memory_notes ORDER BY id").fetchall()
            else:
                rows = conn.execute(f"SELECT {_COLS} FROM memory_notes WHERE kind = %s ORDER BY id",
                                    (NoteKind(kind).value,)).fetchall()
        return [note_from_row(r, r[4], r[5]) for r in rows]

    def delete_memory_note(self, note_id: str) -> bool:
        try:
            with self._pool.connection() as conn, conn.transaction():
                cur = conn.execute("DELETE FROM memory_notes WHERE id = %s", (note_id,))
                return bool(cur.rowcount)
        except psycopg.Error as e:
            raise StoreError(f"removing memory note {note_id!r} from {self.url} failed: {e}") from e

    def memory_embedders(self) -> dict[str, str | None]:
        with self._pool.connection() as conn:
            rows = conn.execute("SELECT id, embedder FROM memory_notes ORDER BY id").fetchall()
        return {r[0]: r[1] for r in rows}

    def memory_vectors(self, embedder: str) -> NoteVectors:
        with self._pool.connection(autocommit=True) as conn:
            rows = conn.execute(
                "SELECT v.note_id, v.text, v.vector FROM memory_vectors v JOIN memory_notes n ON n.id = v.note_id"
                " WHERE n.embedder = %s ORDER BY v.note_id, v.ordinal", (embedder,)
            ).fetchall()
        return vectors_of(rows)
