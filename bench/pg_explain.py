"""PostgreSQL search, statement by statement: what one ``Retriever.search`` sends, each statement's
``EXPLAIN (ANALYZE, BUFFERS)``, and the search's cost split into wall time and CPU time (the
client process and the PostgreSQL backends it used), so the figures survive a loaded machine.

    .venv/bin/python bench/pg_explain.py --store postgresql://…/footnote_bench_anchored_100000 --explain 2
    .venv/bin/python bench/pg_explain.py --store URL --queries 60      # per-stage wall + CPU table

The store is the one ``bench/search.py --store URL --sizes 100000`` built. The statements are
captured on the client (every ``execute`` of the store's connections during one search) and replayed
inside one transaction with the same local settings (``set_config`` statements) before each EXPLAIN.
Backend CPU is read from ``/proc/<backend pid>/schedstat`` (nanoseconds on CPU), so it needs the
server on this machine (an embedded one).

``--stages`` prints, per search: wall p50/p95 of each traced stage, the query embedding's CPU (the
embedder alone on the same texts), the client process CPU and the backends' CPU per search — with
and without the embedding (the same questions again, vectors cached).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import queries

from footnote.engine import Engine
from footnote.settings import load_settings
from footnote.testing.internal.pgcapture import captured


def backend_cpu_ns(pids: set[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    return total


def backend_pids(engine: Engine) -> set[int]:
    pool = getattr(engine.store, "_pool", None)
    return {c.info.backend_pid for c in getattr(pool, "_all", []) if not c.closed}


def explain(url: str, stmts: list[tuple[int, str, Any]], repeat: int = 5) -> list[tuple[str, float, float]]:
    """Replay the captured statements: local settings in order, an EXPLAIN for each SELECT, then the
    statement itself ``repeat`` times: (statement head, median backend CPU ms, median wall ms)."""
    out: list[tuple[str, float, float]] = []
    with psycopg.connect(url) as conn:
        from footnote.store.pg_support import register_vector

        register_vector(conn)
        for pid, sql, params in stmts:
            s = sql.strip()
            if s in ("BEGIN", "COMMIT", "ROLLBACK"):
                conn.commit()  # the store's local settings end with its transaction: so do ours
                continue
            if "set_config" in s:
                conn.execute(s, params)
                continue
            if not s.upper().startswith(("SELECT", "WITH")):
                continue
            t0 = time.perf_counter()
            rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS, SETTINGS) " + s, params).fetchall()
            wall = (time.perf_counter() - t0) * 1e3
            head = re.sub(r"\s+", " ", s)[:150]
            print(f"\n--- backend {pid}: {head}…  (round trip {wall:.1f} ms)")
            for (line,) in rows:
                if len(line) > 400:
                    line = line[:400] + "…"
                print("   ", line)
            cpu, walls = [], []
            me = {conn.info.backend_pid}
            for _ in range(repeat):
                c0, t0 = backend_cpu_ns(me), time.perf_counter()
                conn.execute(s, params).fetchall()
                walls.append((time.perf_counter() - t0) * 1e3)
                cpu.append((backend_cpu_ns(me) - c0) / 1e6)
            out.append((head[:90], float(np.median(cpu)), float(np.median(walls))))
        conn.rollback()
    print(f"\n{'statement (replayed ' + str(repeat) + '×, median)':<92}{'backend CPU ms':>15}{'wall ms':>9}")
    for head, c, w in out:
        print(f"{head:<92}{c:>15.2f}{w:>9.2f}")
    return out


def pct(v: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(v), q)) if v else float("nan")


def stages(engine: Engine, qs: list[str], dump: dict[str, Any] | None = None) -> None:
    emb = engine.embedder
    assert emb is not None
    rows: dict[str, list[float]] = {}
    for rnd in ("fresh", "cached"):
        walls, ccpu, scpu = [], [], []
        for q in qs:
            pids = backend_pids(engine)
            s0, c0, t0 = backend_cpu_ns(pids), time.process_time(), time.perf_counter()
            r = engine.search(q)
            walls.append((time.perf_counter() - t0) * 1e3)
            ccpu.append((time.process_time() - c0) * 1e3)
            scpu.append((backend_cpu_ns(pids | backend_pids(engine)) - s0) / 1e6)
            if dump is not None and rnd == "fresh":
                dump[q] = {"verdict": r.verdict.value,
                           "ranked": [[c.fragment.id, round(float(c.score), 6)] for c in r.candidates]}
            if rnd == "fresh":
                per: dict[str, float] = {}
                for t in r.trace:
                    per[t.name] = per.get(t.name, 0.0) + t.ms
                for k, v in per.items():
                    rows.setdefault(k, []).append(v)
        rows[f"TOTAL wall ({rnd})"] = walls
        rows[f"client CPU ({rnd})"] = ccpu
        rows[f"backend CPU ({rnd})"] = scpu
        rows[f"CPU client+backends ({rnd})"] = [a + b for a, b in zip(ccpu, scpu, strict=True)]
    # the embedding alone: CPU of embedding the same texts (cache cleared by new text variants)
    ecpu, ewall = [], []
    for q in qs:
        text = q + " ?"
        c0, t0 = time.process_time(), time.perf_counter()
        emb.embed_queries([text])
        ecpu.append((time.process_time() - c0) * 1e3)
        ewall.append((time.perf_counter() - t0) * 1e3)
    rows["embedding alone, wall"] = ewall
    rows["embedding alone, CPU"] = ecpu
    print(f"{'stage / measure':<34}{'p50 ms':>9}{'p95 ms':>9}{'n':>5}")
    for k, v in rows.items():
        print(f"{k:<34}{pct(v, 50):>9.2f}{pct(v, 95):>9.2f}{len(v):>5}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--explain", type=int, default=0, help="EXPLAIN the statements of this many searches.")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--dump", type=Path, default=None,
                    help="Write each question's verdict and ranked (fragment id, score) here, to compare runs.")
    args = ap.parse_args()
    settings = load_settings(None).with_overrides(**{"store.url": args.store})
    if args.overrides:
        settings = settings.with_overrides(**{k: json.loads(v) for k, v in (o.split("=", 1) for o in args.overrides)})
    qs = queries(args.queries + args.explain + 3)
    with Engine.from_settings(settings) as engine:
        for q in qs[:3]:
            engine.search(q)
        for q in qs[3 : 3 + args.explain]:
            with captured() as stmts:
                engine.search(q)
            print(f"\n===== {q!r}: {len(stmts)} statements on {len({p for p, _, _ in stmts})} connections")
            explain(args.store, stmts)
        if args.queries:
            dump: dict[str, Any] | None = {} if args.dump else None
            stages(engine, qs[3 + args.explain :], dump)
            if args.dump:
                args.dump.write_text(json.dumps(dump, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
