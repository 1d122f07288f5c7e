"""Copy one store into another (``footnote migrate``): sources, fragments, embeddings and originals,
without re-embedding. Works between any two backends through the ``Store`` protocol (typically
SQLite → PostgreSQL).

Resumable: a source whose content hash already matches in the target is skipped, and each source is
written in its own transaction, so an interrupted copy leaves a consistent target and the next run
picks up where it stopped.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from footnote.errors import FootnoteError, StoreError
from footnote.store.protocol import Store

log = logging.getLogger(__name__)

#: progress(done, total, source_id)
Progress = Callable[[int, int, str], None]


@dataclass
class CopyReport:
    source_url: str
    target_url: str
    sources: int = 0
    copied: int = 0
    skipped: int = 0
    failed: int = 0
    pruned: int = 0
    fragments: int = 0
    embedded: int = 0
    original_bytes: int = 0
    seconds: float = 0.0
    embedder: str | None = None
    dim: int | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@contextlib.contextmanager
def _bulk(target: Store, enabled: bool) -> Iterator[None]:
    """Let a backend defer its ANN index while a large copy runs (PostgreSQL: build HNSW once at the end)."""
    bulk = getattr(target, "bulk_load", None)
    if enabled and bulk is not None:
        with bulk():
            yield
    else:
        yield


def copy_store(
    source: Store, target: Store, *, prune: bool = False, progress: Progress | None = None
) -> CopyReport:
    """Copy every source of ``source`` into ``target`` (see the module docstring)."""
    t0 = time.perf_counter()
    report = CopyReport(source.url, target.url)
    bound = source.embedder_info()
    if bound is not None:
        target.bind_embedder(*bound)  # StoreError on a name/dim mismatch, before anything is written
        report.embedder, report.dim = bound
    sources = source.list_sources()
    report.sources = len(sources)
    wanted = {s.id for s in sources}
    fresh = target.stats().fragments == 0
    with _bulk(target, enabled=fresh and bound is not None and len(sources) > 0):
        for i, src in enumerate(sources):
            try:
                if target.source_hash(src.id) == src.content_hash:
                    report.skipped += 1
                    continue
                frags = source.fragments_of(src.id)
                original = source.get_original(src.id)
                if original is None:
                    raise StoreError(f"source {src.id!r} has no stored original in {source.url}")
                emb: np.ndarray | None = None
                if bound is not None and frags:
                    emb = source.get_embeddings([f.id for f in frags])
                    present = emb.any(axis=1)
                    if not present.any():
                        emb = None
                    elif not present.all():
                        raise StoreError(
                            f"source {src.id!r}: {int((~present).sum())} of {len(frags)} fragments have no embedding"
                        )
                target.put_source(src, frags, emb, original.data, cues=source.get_cues(src.id))
                report.copied += 1
                report.fragments += len(frags)
                report.embedded += 0 if emb is None else len(frags)
                report.original_bytes += len(original.data)
            except FootnoteError as e:
                report.failed += 1
                report.errors.append(e.message)
                log.warning("migrate: %s", e.message)
            finally:
                if progress is not None:
                    progress(i + 1, len(sources), src.id)
    if prune:
        for s in target.list_sources():
            if s.id not in wanted:
                target.delete_source(s.id)
                report.pruned += 1
    report.seconds = round(time.perf_counter() - t0, 3)
    return report
