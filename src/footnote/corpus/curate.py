"""Curating a store: which stored sources a user means by ``ID|PATH…`` (``footnote remove``).

A target is, in order: a stored source id exactly; else a path — the sources whose ``origin`` is that
file, or lies under that folder (the path need not exist any more: removing what a deleted folder
left behind is the point). ``collection`` adds every source of that collection. A target that
matches nothing is reported, never guessed at.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from footnote.store.protocol import SourceStore


@dataclass(frozen=True)
class Selection:
    ids: tuple[str, ...]
    unmatched: tuple[str, ...]


def select_sources(store: SourceStore, targets: Sequence[str], collection: str | None = None) -> Selection:
    """The ids of the stored sources that ``targets`` (ids or paths) and ``collection`` name, in order."""
    ids: dict[str, None] = {}
    unmatched: list[str] = []
    by_origin: list[tuple[str, str]] | None = None
    for t in targets:
        if store.get_source(t) is not None:
            ids[t] = None
            continue
        if by_origin is None:
            by_origin = [(s.origin, s.id) for s in store.list_sources() if s.origin]
        p = Path(os.path.abspath(os.path.expanduser(t))).as_posix()
        prefix = p.rstrip("/") + "/"
        found = [sid for origin, sid in by_origin if origin == p or origin.startswith(prefix)]
        if found:
            ids.update(dict.fromkeys(found))
        else:
            unmatched.append(t)
    if collection is not None:
        listed = store.list_sources(collection=collection)
        if listed:
            ids.update(dict.fromkeys(s.id for s in listed))
        else:
            unmatched.append(f"--collection {collection}")
    return Selection(tuple(ids), tuple(unmatched))
