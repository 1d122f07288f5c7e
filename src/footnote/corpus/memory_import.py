"""Importing curated memory notes (``footnote memory import``, ``POST/PUT /api/memory``).

Each note is checked (front matter, kind, body, sources present in the store; a pinned note's body too:
:meth:`MemoryImporter.check_body`), embedded — its
triggers as queries, its title and body chunks as passages, all with the store's embedder — and
written with its vectors in one transaction. A note whose content hash is unchanged and whose
vectors came from the current embedder is skipped (idempotent, like ``ingest``). A note that fails
fails alone, with ``path: problem``; the others are imported.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from footnote.corpus.memory import load_note, note_files, note_texts
from footnote.corpus.memory_checks import body_problem
from footnote.corpus.memory_checks import file_line as _file_line
from footnote.errors import InputError, StoreError
from footnote.models.protocols import Embedder
from footnote.records.memory import MemoryNote, NoteKind
from footnote.retrieve.books import BookIndex, address_aliases
from footnote.retrieve.memory import resolve_refs
from footnote.settings import Settings
from footnote.store.memory import MemoryStore
from footnote.store.protocol import LaneStore, SourceStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NoteResult:
    path: str
    id: str | None
    status: str  # "imported" | "unchanged" | "failed" | "refused" (a symlink out of its folder, not followed)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "id": self.id, "status": self.status, "error": self.error}


@dataclass(frozen=True)
class MemoryImportReport:
    results: tuple[NoteResult, ...] = ()
    seconds: float = 0.0
    embedder: str | None = None

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def failed(self) -> int:
        return self.count("failed")

    def to_dict(self) -> dict[str, Any]:
        return {"imported": self.count("imported"), "unchanged": self.count("unchanged"), "failed": self.failed,
                "refused": self.count("refused"), "embedder": self.embedder, "seconds": round(self.seconds, 3), "notes": [r.to_dict() for r in self.results]}


class NoteStore(MemoryStore, SourceStore, LaneStore, Protocol):
    """What importing a note reads and writes: the notes, the sources and addresses its references name."""


@dataclass
class MemoryImporter:
    settings: Settings
    store: NoteStore
    embedder: Embedder | None
    _books: BookIndex | None = field(default=None, repr=False)

    def run(self, paths: Sequence[str | Path]) -> MemoryImportReport:
        t0 = time.perf_counter()
        results: list[NoteResult] = []
        seen: dict[str, str] = {}
        read: set[Path] = set()  # a file named twice (a folder and a file in it) is one note
        for raw in paths:
            refused: list[tuple[Path, str]] = []
            try:
                files = list(note_files([raw], refused))
            except InputError as e:
                results.append(NoteResult(str(raw), None, "failed", e.message))
                continue
            for f in files:
                if Path(f).resolve() in read:
                    continue
                read.add(Path(f).resolve())
                try:
                    note = load_note(f, default_lang=self.settings.corpus.default_lang,
                                     max_chars=self.settings.memory.max_body_chars)
                    if note.id in seen:
                        raise InputError(f, f"note id {note.id!r} is also the id of {seen[note.id]} (ids must be unique)")
                    seen[note.id] = str(f)
                    _, changed = self.put(note, path=f)
                    results.append(NoteResult(str(f), note.id, "imported" if changed else "unchanged"))
                except (InputError, StoreError) as e:
                    log.info("%s", e.message)  # the report carries it; the CLI and API say it once
                    results.append(NoteResult(str(f), None, "failed", e.message))
            results.extend(NoteResult(str(f), None, "refused", why) for f, why in refused)
        return MemoryImportReport(tuple(results), time.perf_counter() - t0, self.embedder.name if self.embedder else None)

    def check_sources(self, note: MemoryNote, path: str | Path) -> None:
        """InputError naming ``path`` when a source the note names is not in the store."""
        if not note.sources:
            return
        if self._books is None:
            self._books = BookIndex.from_rows(self.store.list_addresses())
        got = resolve_refs(self.store, note.sources, address_aliases(self.settings, self._books))
        if got.missing:
            raise InputError(path, "source(s) not in the store: " + ", ".join(repr(m) for m in got.missing)
                             + " (a source id, the end of one such as 'lectures/02-fog-and-tides.vtt', or an address such as 'HB 2.1')")

    def check_body(self, note: MemoryNote, path: str | Path) -> None:
        """InputError naming ``path`` and the line when a pinned note's body (shown to readers as the editors'
        answer) carries what the corpus does not back: a ``[n]`` that is not one of its own sources (``[1]``
        is the first entry of ``sources``), a file name or source path no source of the store has, an
        address the corpus lacks or one written with look-alike or invisible characters, or a link whose
        address appears in none of the passages of its own sources."""
        if note.kind is not NoteKind.PINNED:
            return
        if self._books is None:
            self._books = BookIndex.from_rows(self.store.list_addresses())
        problem = body_problem(self.store, note, address_aliases(self.settings, self._books))
        if problem is None:
            return
        line, why = problem
        if isinstance(path, Path) or Path(str(path)).is_file():
            raise InputError(path, why, line=_file_line(Path(path), note.body, line))
        raise InputError(path, f"body line {line}: {why}")

    def put(self, note: MemoryNote, *, path: str | Path, replace_only: bool = False) -> tuple[MemoryNote, bool]:
        """Check, embed and write ``note``; (stored note, whether anything was written)."""
        self.check_sources(note, path)
        self.check_body(note, path)
        name = self.embedder.name if self.embedder else None
        old = self.store.get_memory_note(note.id)
        if old is not None and old.content_hash == note.content_hash and self.store.memory_embedders().get(note.id) == name:
            return old, False
        texts, vecs = self.vectors(note)
        return self.store.put_memory_note(note, texts, vecs, name if vecs is not None else None), True

    def vectors(self, note: MemoryNote) -> tuple[list[str], np.ndarray | None]:
        """The note's texts and their vectors: triggers embedded as queries (a reader's question is one),
        title and body chunks as passages; None with no embedder."""
        texts = note_texts(note, self.settings.memory.chunk_chars)
        if self.embedder is None:
            return texts, None
        n_trig = sum(1 for t in texts if t in note.triggers)
        parts = []
        if n_trig:
            parts.append(self.embedder.embed_queries(texts[:n_trig]))
        if len(texts) > n_trig:
            parts.append(self.embedder.embed_passages(texts[n_trig:]))
        return texts, np.vstack(parts).astype(np.float32)

    def embed_stale(self) -> int:
        """Re-embed every note whose vectors are not the current embedder's (``footnote reembed``)."""
        if self.embedder is None:
            return 0
        done = 0
        for nid, emb in self.store.memory_embedders().items():
            if emb == self.embedder.name:
                continue
            note = self.store.get_memory_note(nid)
            if note is None:
                continue
            texts, vecs = self.vectors(note)
            self.store.put_memory_note(note, texts, vecs, self.embedder.name)
            done += 1
        return done
