"""Collections and source ids that never collide.

Every ingested folder is a *collection*, named by ``--collection NAME`` or, by default, after the
folder itself (a file named on its own: after its folder). The name is stored with each source
(``Source.collection``) and prefixes the ids of file sources: ``ingest lectures/`` gives
``lectures/2020/talk.srt``. Ids a file declares itself (a JSONL row's ``id``, a Markdown front
matter ``id``) are kept as written. Without ``--collection``, a file the store already holds keeps
the collection (and id) it has, whichever folder or subfolder it is ingested from this time.

An id already stored from another file that still exists is a **collision** (the same file reached by
another path — a symlinked folder — is not another file): the new source fails
with a message naming both files, and the stored one is left alone (never silently replaced). A
stored source whose file is gone (the folder was moved) may be taken over. Re-ingesting the same
folder finds its own sources by their origin and keeps their ids, so it stays idempotent — including
stores written before collections existed, whose ids have no prefix.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from footnote.errors import UsageError
from footnote.records.fragments import Source

MAX_COLLECTION_CHARS = 100


def check_collection(name: str) -> str:
    """The collection name, stripped; UsageError for one that cannot prefix ids."""
    name = unicodedata.normalize("NFC", name.strip())
    if not name:
        raise UsageError("--collection must not be empty")
    if len(name) > MAX_COLLECTION_CHARS:
        raise UsageError(f"--collection is {len(name)} characters long; the limit is {MAX_COLLECTION_CHARS}")
    bad = [c for c in name if c in "/\\#" or unicodedata.category(c)[0] == "C"]
    if bad or name.startswith("."):
        raise UsageError(f"--collection {name!r}: a name cannot start with '.' or hold '/', '\\', '#' or "
                         "control characters")
    return name


def default_collection(root: Path) -> str:
    """The folder's own name (``.`` resolved), made safe for an id prefix."""
    name = root.resolve().name or "root"
    cleaned = "".join("_" if (c in "/\\#" or unicodedata.category(c)[0] == "C") else c for c in name)
    return cleaned.lstrip(".") or "root"


class SourceIndex:
    """What the store holds, by id and by (collection, origin), read once per ingest run."""

    def __init__(self, sources: Iterable[Source]) -> None:
        self._by_id: dict[str, tuple[str, str]] = {}
        self._by_collection: dict[str, dict[str, str]] = {}
        self._collection_of: dict[str, str] = {}
        for s in sources:
            self._by_id[s.id] = (s.origin, s.collection)
            if s.origin:
                # several sources share a JSONL origin; their ids are explicit, so any one will do
                self._by_collection.setdefault(s.collection, {}).setdefault(s.origin, s.id)
                self._collection_of.setdefault(s.origin, s.collection)

    def collection_of(self, origin: str) -> str | None:
        """The collection the file at ``origin`` is stored under, if it is stored: ingesting that file
        again — alone or with its folder, or a subfolder — keeps its collection and so its id."""
        return self._collection_of.get(origin)

    def known_ids(self, collection: str) -> dict[str, str]:
        """origin → id of the file sources already stored under ``collection``."""
        return self._by_collection.get(collection, {})

    def collision(self, source: Source) -> str | None:
        """Why ``source`` may not take its id (another existing file holds it), or None."""
        held = self._by_id.get(source.id)
        if held is None:
            return None
        origin, collection = held
        if same_origin(origin, source.origin):
            return None
        if origin and not Path(origin).exists():
            return None  # its file is gone (moved or deleted): the id is free to take over
        where = f"from {origin}" if origin else "with no file of origin"
        coll = f" in collection {collection!r}" if collection else ""
        return (f"source id {source.id!r} is already taken by the source stored {where}{coll}; nothing was "
                f"replaced. Ingest this folder under another name (--collection NAME), give the source "
                f"another id, or remove the stored one first (footnote remove {source.id!r})")

    def release(self, source_id: str) -> None:
        """Let another file take ``source_id`` (a corrected transcript replacing its recording's machine
        transcript): it is no longer a collision."""
        self._by_id.pop(source_id, None)

    def moved(self, source: Source) -> bool:
        """Whether the stored source of this id came from another file (it is rewritten so that its
        origin, which prune and remove go by, is where the file is now). A collection name alone never
        forces a rewrite: file ids carry it, and explicit ids keep what they had."""
        held = self._by_id.get(source.id)
        return held is not None and not same_origin(held[0], source.origin)


def same_origin(a: str, b: str) -> bool:
    """Whether two recorded origins are one file: the same path, or two paths to it (a symlinked folder,
    ``../shared`` reached from two checkouts) — that file is not another source claiming the id."""
    if a == b:
        return True
    if not a or not b:
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
