"""Dedup: overlapping transcript windows of the same track collapse to the better-ranked one."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.records.fragments import TranscriptLocator
from footnote.retrieve.types import Candidate


def overlaps(a: Candidate, b: Candidate) -> bool:
    """True when both are windows of the same track whose spans overlap."""
    la, lb = a.fragment.locator, b.fragment.locator
    if not isinstance(la, TranscriptLocator) or not isinstance(lb, TranscriptLocator):
        return False
    return la.track_id == lb.track_id and la.start_ms < lb.end_ms and lb.start_ms < la.end_ms


def dedup_windows(ranked: Sequence[Candidate]) -> tuple[list[Candidate], int]:
    """Walk ``ranked`` best first; drop a candidate overlapping one already kept (or a repeated id).
    Returns the survivors in order and how many were dropped."""
    kept: list[Candidate] = []
    seen: set[str] = set()
    by_track: dict[str, list[Candidate]] = {}
    dropped = 0
    for c in ranked:
        if c.fragment.id in seen:
            dropped += 1
            continue
        loc = c.fragment.locator
        if isinstance(loc, TranscriptLocator):
            if any(overlaps(c, k) for k in by_track.get(loc.track_id, ())):
                dropped += 1
                continue
            by_track.setdefault(loc.track_id, []).append(c)
        seen.add(c.fragment.id)
        kept.append(c)
    return kept, dropped
