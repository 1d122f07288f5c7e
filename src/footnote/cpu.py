"""How many cores this process may use: sizes the embedder's query threads and tells the retriever
whether a query embedding occupies the whole machine."""

from __future__ import annotations

import os


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the system says, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
