"""``bench/search.py --compare``: Footnote's whole search against a dense-only baseline, interleaved
in one process on the same store, embedder and questions, so the p50/p95 *ratio* survives a busy
machine (absolute milliseconds do not).

- Footnote: ``Engine.search`` (plan, lanes, pool, fusion, gate; no LLM).
- Dense-only: the same embedder's query vector (computed afresh) → ``store.search_dense(k)`` over the
  same stored vectors → ``store.get_fragments`` of the hits (what a dense-only peer returns).

The query-embedding cache is off for both (``embedder.query_cache_size = 0``), so each side pays for
its own embedding; the order alternates per question (A,B then B,A). Besides wall time it reports
this process's CPU time per search (``time.process_time``, every thread): on a shared machine a
search is also *preempted*, and the one that does more steps is preempted more often, so the wall
ratio drifts up with the load while the CPU ratio measures the work (for SQLite all of it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.engine import Engine
from footnote.settings import Settings
from footnote.store import open_store
from footnote.store.copy import copy_store


def _pct(v: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(v), q)) if v else float("nan")


def real_questions(path: Path, *, lang: str | None = None, limit: int | None = None) -> list[str]:
    """Question texts of an eval question file (optionally one language), in file order."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if lang and row.get("lang") != lang:
            continue
        out.append(str(row["question"]))
    return out[:limit] if limit else out


def corpus_store(settings: Settings, url: str, corpus: Path) -> str:
    """A SQLite store at ``url`` holding ``corpus`` (ingested once, then reused)."""
    if Path(url).exists():
        st = open_store(url)
        n = st.stats().fragments
        st.close()
        if n:
            return url
    engine = Engine.from_settings(settings.with_overrides(**{"store.url": url}))
    with engine:
        engine.ingest([corpus])
    return url


def pg_copy(settings: Settings, sqlite_url: str, pg_url: str) -> str:
    """The SQLite store's sources, fragments and vectors copied into PostgreSQL (nothing re-embedded)."""
    src = open_store(sqlite_url)
    dst = open_store(pg_url, settings.store.model_copy(update={"url": pg_url}))
    try:
        if dst.stats().fragments != src.stats().fragments:
            copy_store(src, dst, prune=True)
    finally:
        src.close()
        dst.close()
    return pg_url


def compare(settings: Settings, url: str, qs: Sequence[str], *, k: int = 10, warmup: int = 5) -> dict[str, Any]:
    """Interleave Footnote's search and the dense-only baseline over ``qs``; p50/p95 of each and ratios."""
    s = settings.with_overrides(**{"store.url": url, "embedder.query_cache_size": 0})
    engine = Engine.from_settings(s)
    foot: list[float] = []
    dense: list[float] = []
    foot_cpu: list[float] = []
    dense_cpu: list[float] = []
    verdicts: dict[str, int] = {}
    rounds = 0
    with engine:
        emb, store = engine.embedder, engine.store
        assert emb is not None, "the comparison needs an embedder"

        def dense_only(q: str) -> list[str]:
            vec = emb.embed_queries([q])[0]
            hits = store.search_dense(vec, k)
            return [f.id for f in store.get_fragments([h.fragment_id for h in hits])]

        def footnote(q: str) -> None:
            nonlocal rounds
            r = engine.search(q)
            verdicts[r.verdict.value] = verdicts.get(r.verdict.value, 0) + 1
            rounds += r.rounds - 1

        for i in range(warmup):
            footnote(f"warm-up question number {i}?")
            dense_only(f"warm-up question number {i}?")
        verdicts.clear()
        rounds = 0
        for i, q in enumerate(qs):
            a, b = (footnote, foot, foot_cpu), (dense_only, dense, dense_cpu)
            for fn, sink, cpu in ((a, b) if i % 2 == 0 else (b, a)):
                c0, t0 = time.process_time(), time.perf_counter()
                fn(q)
                sink.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
        n = store.stats().fragments
    res = {
        "fragments": n, "queries": len(qs), "k": k, "verdicts": verdicts, "second_rounds": rounds,
        "footnote": {"p50": _pct(foot, 50), "p95": _pct(foot, 95)},
        "dense_only": {"p50": _pct(dense, 50), "p95": _pct(dense, 95)},
    }
    res["ratio"] = {q: res["footnote"][q] / res["dense_only"][q] for q in ("p50", "p95")}
    res["cpu"] = {"footnote_p50": _pct(foot_cpu, 50), "dense_only_p50": _pct(dense_cpu, 50)}
    res["cpu"]["ratio_p50"] = res["cpu"]["footnote_p50"] / res["cpu"]["dense_only_p50"]
    return res


def print_compare(label: str, res: dict[str, Any]) -> None:
    f, d, r = res["footnote"], res["dense_only"], res["ratio"]
    print(f"\n== compare {label}: {res['fragments']} fragments, {res['queries']} questions interleaved, "
          f"verdicts {res['verdicts']}, second rounds {res['second_rounds']}")
    print(f"{'':<22}{'p50 ms':>10}{'p95 ms':>10}")
    print(f"{'Footnote search':<22}{f['p50']:>10.2f}{f['p95']:>10.2f}")
    print(f"{'dense-only (k=' + str(res['k']) + ')':<22}{d['p50']:>10.2f}{d['p95']:>10.2f}")
    print(f"{'ratio':<22}{r['p50']:>9.3f}×{r['p95']:>9.3f}×")
    c = res["cpu"]
    print(f"CPU time of this process per search, p50: Footnote {c['footnote_p50']:.2f} ms, dense-only "
          f"{c['dense_only_p50']:.2f} ms, ratio {c['ratio_p50']:.3f}× (all of the work for SQLite; PostgreSQL's "
          "own CPU is in its server processes, not counted)")
