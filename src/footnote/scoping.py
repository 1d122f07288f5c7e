"""An engine seen through some collections (a named key's): :func:`scoped_engine`.

The view's engine shares the models and the settings and builds its own stages (retriever, answerer, caches)
over :func:`footnote.store.scoped.scoped_store`, so every search, answer, example question, source and note it
reaches lies in those collections. A curated note belongs to the collections of the sources its references
name (resolved against the whole store, as the answer stage resolves them): it is shown through the view only
when every one of them lies there. A note without references belongs to no collection and is shown only to a
key for every collection (docs/server.md, "Keys and collections").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from footnote.records.memory import MemoryNote
from footnote.store.scoped import scoped_store, source_of

if TYPE_CHECKING:
    from footnote.engine import Engine


class NoteCollections:
    """Which collections each curated note belongs to, resolved once per note version and again after
    ``refresh_s`` (a source it names may have been ingested or removed since)."""

    def __init__(self, engine: Engine, refresh_s: float) -> None:
        self.engine = engine
        self.refresh_s = refresh_s
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str], tuple[frozenset[str], float]] = {}

    def of(self, note: MemoryNote) -> frozenset[str]:
        """The collections of the sources ``note`` names; empty when it names none, or one not in the store."""
        key = (note.id, note.content_hash)
        now = time.monotonic()
        with self._lock:
            got = self._known.get(key)
        if got is not None and now - got[1] <= self.refresh_s:
            return got[0]
        found = self._resolve(note)
        with self._lock:
            self._known[key] = (found, now)
        return found

    def _resolve(self, note: MemoryNote) -> frozenset[str]:
        if not note.sources:
            return frozenset()
        resolved = self.engine.retriever.corpus().resolve(note.sources)
        if resolved.missing:
            return frozenset()
        sources = set(resolved.source_ids) | {source_of(f) for f in resolved.fragment_ids}
        of = self.engine.store.source_collections()
        names = {of.get(s) for s in sources}
        return frozenset() if None in names else frozenset(n for n in names if n is not None)


def scoped_engine(engine: Engine, collections: Iterable[str], notes: NoteCollections) -> Engine:
    """``engine`` limited to ``collections`` (see the module docstring)."""
    from footnote.engine import Engine

    names = frozenset(collections)

    def visible(note: MemoryNote) -> bool:
        found = notes.of(note)
        return bool(found) and found <= names

    view = scoped_store(engine.store, names, visible, engine.settings.server.keys_refresh_s)
    return Engine(engine.settings, view, engine.embedder, engine.reranker, engine.chat_models)
