"""How many threads numpy's BLAS may use in this process (``store.blas_threads``), set once by the
composition root (:meth:`footnote.engine.Engine.from_settings`).

Footnote's own matrix products are small and many: a query against ≤ 100k stored vectors (SQLite dense
search, the PostgreSQL store's in-process copies), a turn's sentence vectors. OpenBLAS splits such a
product across its threads and those threads then spin while they wait for the next one, so on a
2-core machine a search cost twice the CPU it needed: at 100k fragments (SQLite) 76 ms of process CPU
per search with OpenBLAS's default threads against 41 ms with one, and the whole search 39.5 → 33.8 ms
p50 (``bench/search.py``, docs/retrieval.md)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def limit_blas_threads(threads: int) -> int | None:
    """Limit the BLAS libraries numpy loaded to ``threads`` (0: leave the library's default). Returns
    the limit set, or None when nothing was changed (0, or threadpoolctl finds no BLAS)."""
    if threads <= 0:
        return None
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:  # pragma: no cover - a declared dependency
        log.warning("threadpoolctl is not installed: numpy's BLAS keeps its own thread count")
        return None
    if not any(p.get("user_api") == "blas" for p in threadpool_info()):
        return None
    threadpool_limits(limits=threads, user_api="blas")  # process-wide, for the life of the process
    return threads
