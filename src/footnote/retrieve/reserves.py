"""Per-kind reserves (docs/architecture.md "The flow", step 5): after the cut, guarantee at least ``reserve_verses`` verses
and ``reserve_library`` library passages, each above the reserve cosine floor, taken in rank order
from the rest of the capped pool. A reserve never overlaps a kept transcript window."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from footnote.records.fragments import KindGroup
from footnote.retrieve.dedup import overlaps
from footnote.retrieve.types import Candidate
from footnote.settings import Settings


def add_reserves(
    kept: Sequence[Candidate], rest: Sequence[Candidate], settings: Settings, floor: float
) -> tuple[list[Candidate], int]:
    """``kept`` plus reserves drawn from ``rest`` (best first); returns the list and how many were added."""
    rs = settings.retrieve
    out = list(kept)
    ids = {c.fragment.id for c in out}
    added = 0
    for group, need in ((KindGroup.VERSES, rs.reserve_verses), (KindGroup.LIBRARY, rs.reserve_library)):
        have = sum(1 for c in out if settings.corpus.group_of(c.fragment.kind) is group)
        for c in rest:
            if have >= need:
                break
            if c.fragment.id in ids or settings.corpus.group_of(c.fragment.kind) is not group:
                continue
            if c.score < floor or any(overlaps(c, k) for k in out):
                continue
            out.append(replace(c, reserve=True))
            ids.add(c.fragment.id)
            have += 1
            added += 1
    return out, added
