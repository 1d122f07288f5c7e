"""The checks ``put_source`` makes before it writes anything, shared by both backends.

A put that fails any of them raises :class:`footnote.errors.StoreError` and leaves the store as it was
(the conformance suite checks this on SQLite and PostgreSQL alike).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from footnote.errors import StoreError
from footnote.records.fragments import (
    AddressLocator,
    Cue,
    FileLocator,
    Fragment,
    Source,
    TranscriptLocator,
    sha256_bytes,
)
from footnote.store.dense import normalise_rows
from footnote.store.protocol import SourceWrite


def check_source(source: Source, fragments: Sequence[Fragment], original: bytes) -> str:
    """The sha256 of ``original`` once the source, its fragments and the original's bytes check out: the
    source has an id, the original is bytes matching ``source.blob_sha256`` (when given), every fragment
    belongs to the source, has a unique id and a known locator."""
    where = f"put_source({source.id!r})"
    if not source.id:
        raise StoreError(f"{where}: a source needs an id")
    if not isinstance(original, bytes | bytearray | memoryview):
        raise StoreError(f"{where}: the original must be bytes, not {type(original).__name__}")
    sha = sha256_bytes(bytes(original))
    if source.blob_sha256 and source.blob_sha256 != sha:
        raise StoreError(f"{where}: blob_sha256 {source.blob_sha256[:12]}… does not match the original's {sha[:12]}…")
    seen: set[str] = set()
    for f in fragments:
        if f.source_id != source.id:
            raise StoreError(f"{where}: fragment {f.id!r} belongs to source {f.source_id!r}")
        if f.id in seen:
            raise StoreError(f"{where}: fragment id {f.id!r} appears twice")
        seen.add(f.id)
        if not isinstance(f.locator, TranscriptLocator | AddressLocator | FileLocator):
            raise StoreError(f"{where}: fragment {f.id!r} has no valid locator")
    return sha


def check_embeddings(
    source_id: str, embeddings: np.ndarray, rows: int, dim: int | None, *, where: str | None = None
) -> np.ndarray:
    """``embeddings`` as float32 rows, L2-normalised, once they are finite numbers of shape
    ``(rows, dim)``; ``dim`` is the bound embedder's (None: no embedder bound, so vectors are refused)."""
    where = where or f"put_source({source_id!r})"
    if dim is None:
        raise StoreError(f"{where}: embeddings given but the store has no embedder bound (call bind_embedder)")
    arr = np.asarray(embeddings)
    if arr.ndim != 2 or arr.shape != (rows, dim):
        raise StoreError(f"{where}: embeddings of shape {arr.shape} do not fit {rows} fragments × dim {dim}")
    if not np.issubdtype(arr.dtype, np.number) or not np.isfinite(arr).all():
        raise StoreError(f"{where}: embeddings must be finite numbers")
    return normalise_rows(arr)


def check_put(
    source: Source,
    fragments: Sequence[Fragment],
    embeddings: np.ndarray | None,
    original: bytes,
    bound_dim: Callable[[], int | None],
) -> tuple[str, np.ndarray | None]:
    """Everything ``put_source`` checks, in order: the original's sha256 and the normalised vectors (None
    when ``embeddings`` is None). ``bound_dim`` gives the bound embedder's dim and is asked only when
    vectors are given."""
    sha = check_source(source, fragments, original)
    if embeddings is None:
        return sha, None
    return sha, check_embeddings(source.id, embeddings, len(fragments), bound_dim())


def check_cues(source_id: str, cues: Sequence[Cue]) -> list[tuple[int, int, int, str]]:
    """``(ordinal, start_ms, end_ms, text)`` rows of a track's cues once they are in order and never
    overlap (``get_cues`` relies on it), with ``0 <= start <= end``; StoreError otherwise."""
    rows: list[tuple[int, int, int, str]] = []
    last_end = -1
    for i, c in enumerate(cues):
        start, end = int(c.start_ms), int(c.end_ms)
        if start < 0 or end < start:
            raise StoreError(f"put_source({source_id!r}): cue {i} spans {start}–{end} ms")
        if start < last_end:
            raise StoreError(f"put_source({source_id!r}): cue {i} starts at {start} ms, before cue {i - 1} ends "
                             f"({last_end} ms); cues must be in order and not overlap")
        if end > 2**62:
            raise StoreError(f"put_source({source_id!r}): cue {i} ends too late ({end} ms)")
        last_end = end
        rows.append((i, start, end, c.text.replace("\x00", " ")))
    return rows


def check_batch_ids(writes: Sequence[SourceWrite]) -> None:
    """StoreError when two writes of one ``put_sources`` batch name the same source or fragment id."""
    sources: set[str] = set()
    frags: dict[str, str] = {}
    for w in writes:
        if w.source.id in sources:
            raise StoreError(f"put_sources: source {w.source.id!r} appears twice in one batch")
        sources.add(w.source.id)
        for f in w.fragments:
            other = frags.setdefault(f.id, w.source.id)
            if other != w.source.id:
                raise StoreError(f"put_sources: fragment id {f.id!r} of source {w.source.id!r} is also one of "
                                 f"{other!r}'s in the same batch")
