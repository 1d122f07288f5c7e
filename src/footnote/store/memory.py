"""Curated memory in the store (both backends): notes and the vectors of their triggers and body
chunks, kept apart from the corpus (writing them never changes what the lanes see).

Vectors carry the embedder that made them; :meth:`MemoryStore.memory_vectors` returns only those of
the embedder asked for, so a store rebound to another embedder matches no stale note vector (``footnote
reembed`` re-embeds the notes). Notes are few (tens to hundreds): matching reads them all and scores
them with numpy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from footnote.errors import StoreError
from footnote.records.memory import MemoryNote, NoteKind

__all__ = ["MemoryStore", "NoteKind", "NoteVectors", "check_note_vectors"]


@dataclass(frozen=True)
class NoteVectors:
    """Every embedded text of the notes (row i belongs to note ``note_ids[i]``)."""

    note_ids: tuple[str, ...]
    texts: tuple[str, ...]
    vectors: np.ndarray


@runtime_checkable
class MemoryStore(Protocol):
    """What a store keeps of curated memory (the conformance mixin ``MemoryConformance`` checks it)."""

    def put_memory_note(
        self, note: MemoryNote, texts: Sequence[str], vectors: np.ndarray | None, embedder: str | None
    ) -> MemoryNote:
        """Insert or atomically replace the note ``note.id`` with its embedded ``texts`` (``vectors``
        rows aligned with them, made by ``embedder``; None: not embedded). Returns the stored note,
        ``updated`` set to now. StoreError, writing nothing, when the vectors do not fit (rows, a value
        not finite, another dim than the store's bound embedder, or an embedder the store is not bound to)."""
        ...

    def get_memory_note(self, note_id: str) -> MemoryNote | None:
        ...

    def list_memory_notes(self, kind: NoteKind | None = None) -> list[MemoryNote]:
        """Notes by id (only ``kind`` when given)."""
        ...

    def delete_memory_note(self, note_id: str) -> bool:
        """Remove the note and its vectors; False when there was none."""
        ...

    def memory_embedders(self) -> dict[str, str | None]:
        """note id → the embedder its vectors were made with (None: none yet)."""
        ...

    def memory_vectors(self, embedder: str) -> NoteVectors:
        """Every note vector made by ``embedder``, by note id then ordinal."""
        ...


def check_note_vectors(
    texts: Sequence[str], vectors: np.ndarray | None, embedder: str | None, bound: tuple[str, int] | None
) -> np.ndarray | None:
    """The vectors as L2-normalised float32 rows, or StoreError naming what does not fit."""
    if vectors is None:
        return None
    if embedder is None:
        raise StoreError("note vectors given without the embedder that made them")
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim != 2 or v.shape[0] != len(texts):
        raise StoreError(f"note vectors: {v.shape[0] if v.ndim == 2 else '?'} rows for {len(texts)} texts")
    if bound is None or bound[0] != embedder:
        raise StoreError(f"note vectors from embedder {embedder!r}, but the store is bound to "
                         f"{bound[0] if bound else 'no embedder'!r}")
    if v.shape[1] != bound[1]:
        raise StoreError(f"note vectors have dim {v.shape[1]}; the store's embedder {bound[0]!r} has dim {bound[1]}")
    if not np.isfinite(v).all():
        raise StoreError("note vectors hold a value that is not finite")
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return np.where(norms > 0, v / np.where(norms > 0, norms, 1.0), v).astype(np.float32)


def note_to_write(note: MemoryNote, texts: Sequence[str], vectors: np.ndarray | None, embedder: str | None,
                  bound: Callable[[], tuple[str, int] | None]) -> tuple[MemoryNote, np.ndarray | None]:
    """What a backend writes for ``put_memory_note``: the note stamped with the time it is written, and its
    vectors checked against the store's bound embedder (``bound`` is asked only when there are vectors)."""
    vecs = check_note_vectors(texts, vectors, embedder, bound() if vectors is not None else None)
    return replace(note, updated=time.time()), vecs
