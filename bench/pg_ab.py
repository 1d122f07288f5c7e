"""PostgreSQL search, variants A/B (settings overrides) interleaved with a dense-only baseline on the
same store and questions, per search: wall time, this process's CPU, and the CPU of the PostgreSQL
backends it used (``/proc/<pid>/schedstat``: needs the server on this machine) — the CPU figures
survive a busy machine, the wall times do not. Also checks that the variants return the same slates
(ids, scores, verdicts), and prints the load average.

    .venv/bin/python bench/pg_ab.py --store postgresql://…/footnote_bench_anchored_100000 --queries 40 \\
        --b-rows-read-by-the-pool

``--b-rows-read-by-the-pool``: B's store without its rows capability, so the pool reads the hits' rows after
the lanes (the path before the lane statements joined them, once ``retrieve.lane_rows=false``: kept here, not
in the product).

``--b-server-exact-scan``: B's store searches its small kind groups on the server, not from the in-process copy
(the path before ``store.postgres.exact_cache`` was retired: ``PostgresStore(exact_copy=False)``).

``--b-embed-first on|off``: B's retriever embeds the query before any lane (on) or overlaps the text lanes with
the embedding (off), whatever the rule would pick (the former ``retrieve.embed_first``; ``Retriever(embed_first=…)``).

``--a`` / ``--b`` take KEY=JSON overrides (repeatable); A is the defaults unless given. Fresh query
vectors each time (``embedder.query_cache_size`` 0), so the embedding is inside every search; the
dense-only baseline embeds, runs ``search_dense(k=10)`` and reads the hits' fragments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_explain import backend_cpu_ns, backend_pids
from search import queries

from footnote.engine import Engine
from footnote.settings import Settings, load_settings


def _p(v: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(v), q)) if v else float("nan")


def _overrides(items: list[str]) -> dict[str, Any]:
    return {k: json.loads(v) for k, v in (o.split("=", 1) for o in items)}


def _slate(r: Any) -> tuple[Any, ...]:
    return (r.verdict.value, tuple((c.fragment.id, round(float(c.score), 6)) for c in r.candidates))


def _engine(settings: Settings, rows_by_pool: bool = False, server_exact: bool = False,
            embed_first: bool | None = None) -> Engine:
    """An engine on the product's path, or on one the product no longer takes (kept here, not in it)."""
    if not rows_by_pool and not server_exact:
        engine = Engine.from_settings(settings)
    else:
        from footnote.models.embedders import make_embedder
        from footnote.store.postgres import PostgresStore
        from footnote.testing.internal.rows import RowsReadByThePool

        store: Any = PostgresStore(settings.store.url, settings.store, exact_copy=not server_exact)
        if rows_by_pool:
            store = RowsReadByThePool(store)
        engine = Engine(settings, store, make_embedder(settings.embedder, settings.models.dir_path))
    if embed_first is not None:
        engine.retriever.embed_first = embed_first
    return engine


def run(base: Settings, a: dict[str, Any], b: dict[str, Any], qs: list[str], warmup: int = 3,
        b_rows_by_pool: bool = False, b_server_exact: bool = False, b_embed_first: bool | None = None) -> dict[str, Any]:
    engines = {"A": Engine.from_settings(base.with_overrides(**a) if a else base),
               "B": _engine(base.with_overrides(**b) if b else base, b_rows_by_pool, b_server_exact, b_embed_first)}
    dense_engine = engines["A"]
    emb, store = dense_engine.embedder, dense_engine.store
    assert emb is not None

    def dense_only(q: str) -> None:
        vec = emb.embed_queries([q])[0]
        hits = store.search_dense(vec, 10)
        store.get_fragments([h.fragment_id for h in hits])

    calls: dict[str, Any] = {"A": engines["A"].search, "B": engines["B"].search, "dense-only": dense_only}
    pids_of = {"A": engines["A"], "B": engines["B"], "dense-only": dense_engine}
    m: dict[str, dict[str, list[float]]] = {k: {"wall": [], "client": [], "backend": []} for k in calls}
    same = 0
    try:
        for i in range(warmup):
            for fn in calls.values():
                fn(f"warm-up question number {i}?")
        for i, q in enumerate(qs):
            names = list(calls)
            order = names[i % 3:] + names[: i % 3]
            slates = {}
            for name in order:
                pids = backend_pids(pids_of[name])
                s0, c0, t0 = backend_cpu_ns(pids), time.process_time(), time.perf_counter()
                r = calls[name](q)
                m[name]["wall"].append((time.perf_counter() - t0) * 1e3)
                m[name]["client"].append((time.process_time() - c0) * 1e3)
                m[name]["backend"].append((backend_cpu_ns(pids | backend_pids(pids_of[name])) - s0) / 1e6)
                if r is not None:
                    slates[name] = _slate(r)
            same += slates["A"] == slates["B"]
    finally:
        for e in engines.values():
            e.close()
    out: dict[str, Any] = {"queries": len(qs), "same_slates": same, "loadavg": os.getloadavg()}
    for name, v in m.items():
        out[name] = {k: {"p50": _p(x, 50), "p95": _p(x, 95)} for k, x in v.items()}
        cpu = [c + s for c, s in zip(v["client"], v["backend"], strict=True)]
        out[name]["cpu"] = {"p50": _p(cpu, 50), "p95": _p(cpu, 95)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--a", action="append", default=[], metavar="KEY=JSON")
    ap.add_argument("--b", action="append", default=[], metavar="KEY=JSON")
    ap.add_argument("--b-rows-read-by-the-pool", dest="b_rows_by_pool", action="store_true",
                    help="B's store hides its rows capability: the pool reads the hits' rows after the lanes.")
    ap.add_argument("--b-server-exact-scan", dest="b_server_exact", action="store_true",
                    help="B's store searches its small kind groups on the server (no in-process copy).")
    ap.add_argument("--b-embed-first", dest="b_embed_first", choices=("on", "off"), default=None,
                    help="B's retriever embeds first (on) or overlaps the text lanes with the embedding (off).")
    ap.add_argument("--json", dest="json_out", type=Path, default=None)
    args = ap.parse_args()
    base = load_settings(None).with_overrides(**{"store.url": args.store, "embedder.query_cache_size": 0})
    print(f"load average before: {os.getloadavg()}")
    res = run(base, _overrides(args.a), _overrides(args.b), queries(args.queries), b_rows_by_pool=args.b_rows_by_pool,
              b_server_exact=args.b_server_exact,
              b_embed_first=None if args.b_embed_first is None else args.b_embed_first == "on")
    print(f"A = {args.a or 'defaults'}; B = {args.b or 'defaults'}; {res['queries']} questions interleaved; "
          f"identical slates A/B: {res['same_slates']}/{res['queries']}; load average after: {res['loadavg']}")
    print(f"{'':<12}{'wall p50':>10}{'wall p95':>10}{'client CPU':>12}{'backend CPU':>13}{'CPU p50':>10}{'CPU p95':>10}"
          f"{'wall ÷ dense-only':>19}")
    d = res["dense-only"]["wall"]["p50"]
    for name in ("A", "B", "dense-only"):
        r = res[name]
        print(f"{name:<12}{r['wall']['p50']:>10.1f}{r['wall']['p95']:>10.1f}{r['client']['p50']:>12.1f}"
              f"{r['backend']['p50']:>13.1f}{r['cpu']['p50']:>10.1f}{r['cpu']['p95']:>10.1f}{r['wall']['p50'] / d:>18.2f}×")
    if args.json_out:
        args.json_out.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
