"""Micro-benchmarks of the embedded SQLite store. Prints figures; asserts nothing.

    .venv/bin/python bench/store_micro.py                 # defaults: 20k lexical, 100k x 384 dense
    .venv/bin/python bench/store_micro.py --dense 10000 --lexical 5000

1. Lexical-only ``put_source`` throughput (fragments/s): ~900-character fragments cut from the real
   evaluation corpora in ../shared/eval (Russian, English, IAST), 25 fragments per source, one
   transaction per source — tokenising, Snowball stemming, FTS5 and trigram indexing included.
2. Exact dense search at N x dim (synthetic unit vectors): cold load of the matrix, then p50/p95 of
   ``search_dense`` (k=50) without and with a kind filter.
3. Lexical (stemmed), trigram and address lane latency on the same 100k-fragment store.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from footnote.records.fragments import (
    AddressLocator,
    FileLocator,
    Fragment,
    Source,
    sha256_bytes,
    sha256_text,
)
from footnote.settings import StoreSettings
from footnote.store.sqlite import SqliteStore

SHARED = Path(__file__).resolve().parents[2] / "shared" / "eval"
KINDS = ("track_transcript", "verse", "commentary", "prose_chapter", "letter")


def corpus_chunks(size: int = 900) -> list[tuple[str, str]]:
    """(lang, ~size-char chunk) from the shared eval corpora, or synthetic text if they are absent."""
    out: list[tuple[str, str]] = []
    for f in sorted(SHARED.glob("*/corpus*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            text, lang = row["text"], row.get("lang", "en")
            for i in range(0, len(text), size):
                piece = text[i : i + size]
                if len(piece) > 200:
                    out.append((lang, piece))
    if not out:
        rng = np.random.default_rng(0)
        words = [f"word{i}" for i in range(5000)]
        out = [("en", " ".join(rng.choice(words, 140))) for _ in range(1000)]
    return out


def make_source(sid: str, kind: str, lang: str) -> tuple[Source, bytes]:
    data = f"original {sid}".encode()
    src = Source(sid, kind, sid, lang, sha256_text(sid), sha256_bytes(data), f"{sid}.txt", "text/plain")
    return src, data


def bench_lexical(store: SqliteStore, n: int, per_source: int = 25) -> float:
    chunks = corpus_chunks()
    batches = []
    for s in range(0, n, per_source):
        lang = chunks[s % len(chunks)][0]
        src, data = make_source(f"lex-{s // per_source}", KINDS[(s // per_source) % len(KINDS)], lang)
        frags = []
        for j in range(min(per_source, n - s)):
            lg, text = chunks[(s + j) % len(chunks)]
            frags.append(Fragment(f"{src.id}#{j}", src.id, j, src.kind, lg, text, FileLocator(src.id, j + 1), sha256_text(text)))
        batches.append((src, frags, data))
    t0, c0 = time.perf_counter(), time.process_time()
    for src, frags, data in batches:
        store.put_source(src, frags, None, data)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    chars = sum(len(f.text) for _, fr, _ in batches for f in fr)
    print(
        f"lexical-only put_source: {n} fragments ({chars / n:.0f} chars avg) in {dt:.2f} s = {n / dt:,.0f} fragments/s "
        f"wall; {n / cpu:,.0f} fragments per CPU-second"
    )
    return n / dt


def bench_dense(store: SqliteStore, n: int, dim: int, queries: int, per_source: int = 100) -> None:
    rng = np.random.default_rng(1)
    store.bind_embedder("synthetic", dim)
    t0 = time.perf_counter()
    for s in range(0, n, per_source):
        m = min(per_source, n - s)
        sid = f"dense-{s // per_source}"
        kind = KINDS[(s // per_source) % len(KINDS)]
        src, data = make_source(sid, kind, "en")
        frags = [
            Fragment(f"{sid}#{j}", sid, j, kind, "en", f"fragment {s + j}", AddressLocator("BK", f"{s // per_source}.{j}", f"BK {s // per_source}.{j}"), "h")
            for j in range(m)
        ]
        vecs = rng.standard_normal((m, dim), dtype=np.float32)
        store.put_source(src, frags, vecs, data)
    dt = time.perf_counter() - t0
    print(f"embedded put_source ({dim} dims, short texts): {n} fragments in {dt:.1f} s = {n / dt:,.0f} fragments/s")

    qs = rng.standard_normal((queries, dim), dtype=np.float32)
    t0 = time.perf_counter()
    store.search_dense(qs[0], 50)
    print(f"dense cold load + first query at {n} x {dim}: {(time.perf_counter() - t0) * 1e3:.0f} ms")
    for label, kinds in (("all kinds", None), ("kinds=[verse, letter]", ["verse", "letter"])):
        times, cpus = [], []
        for q in qs:
            t, c = time.perf_counter(), time.thread_time()
            store.search_dense(q, 50, kinds=kinds)
            times.append((time.perf_counter() - t) * 1e3)
            cpus.append((time.thread_time() - c) * 1e3)
        report(f"dense search k=50, {label}", times, cpus)

    # brute-force check of the top-10 on a few queries, and the bare numpy floor on this machine now
    mat = np.vstack([v for _, v in store.iter_embeddings(batch=20000)])
    ids = [i for b, _ in store.iter_embeddings(batch=20000) for i in b]
    for q in qs[:3]:
        qn = q / np.linalg.norm(q)
        want = [ids[i] for i in np.argsort(-(mat @ qn))[:10]]
        assert [h.fragment_id for h in store.search_dense(q, 10)] == want
    times, cpus = [], []
    for q in qs:
        t, c = time.perf_counter(), time.thread_time()
        np.argpartition(-(mat @ q), 49)[:50]
        times.append((time.perf_counter() - t) * 1e3)
        cpus.append((time.thread_time() - c) * 1e3)
    report("numpy floor (matrix @ q + argpartition, same matrix)", times, cpus)


def report(label: str, times: list[float], cpus: list[float]) -> None:
    times.sort()
    print(
        f"{label}: p50 {statistics.median(times):.1f} ms, p95 {times[int(0.95 * len(times)) - 1]:.1f} ms wall; "
        f"p50 {statistics.median(cpus):.1f} ms CPU (this thread; BLAS threads not counted)"
    )


def bench_lanes(store: SqliteStore, queries: int) -> None:
    qs = ["what did my people do on the holy plain", "защита уступила очков", "karmaṇy evādhikāras te",
          "Super Bowl 50 halftime show", "BK 17.3"]
    for label, fn in (
        ("lexical stemmed k=50", lambda q: store.search_lexical(q, 50, stemmed=True)),
        ("lexical plain k=50", lambda q: store.search_lexical(q, 50, stemmed=False)),
        ("trigram k=10", lambda q: store.search_trigram(q, 10)),
        ("address k=10", lambda q: store.search_address("BK", "17.3", 10)),
    ):
        times, cpus = [], []
        for i in range(queries):
            t, c = time.perf_counter(), time.thread_time()
            fn(qs[i % len(qs)])
            times.append((time.perf_counter() - t) * 1e3)
            cpus.append((time.thread_time() - c) * 1e3)
        report(label, times, cpus)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lexical", type=int, default=20_000, help="fragments for the lexical-only put benchmark")
    ap.add_argument("--dense", type=int, default=100_000, help="fragments for the dense benchmark")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="footnote-bench-") as tmp:
        store = SqliteStore(Path(tmp) / "lex.db", StoreSettings.model_validate({}))
        if args.lexical:
            bench_lexical(store, args.lexical)
        store.close()
        store = SqliteStore(Path(tmp) / "dense.db", StoreSettings.model_validate({}))
        bench_lexical(store, args.dense // 4)
        bench_dense(store, args.dense, args.dim, args.queries)
        bench_lanes(store, args.queries)
        size = sum(p.stat().st_size for p in Path(tmp).glob("dense.db*"))
        print(f"store file (dense + {args.dense // 4} lexical fragments): {size / 2**20:.0f} MiB")
        store.close()


if __name__ == "__main__":
    main()
