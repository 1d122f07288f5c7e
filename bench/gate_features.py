"""Dump the coverage gate's raw inputs for every labelled question (one JSON line each), with the gate open.

    .venv/bin/python bench/gate_features.py --corpus ../shared/eval/xquad/corpus.en.jsonl \
        --questions ../shared/eval/xquad/questions.more.dev.jsonl --embedder embeddinggemma --out /tmp/feat.jsonl

Each line: the question's id, language (labelled and detected), category, half, the signal's inputs (max cosine,
background mean, lexical overlap, sentence cosine), the question's cosine distribution over the background sample
(mean, std, 99th percentile, max), the top five candidate cosines and, with ``--dense-top K``, the top-K dense
cosines over the whole store (``bench/gate_margin.py`` reads them). Used to fit and check how thresholds are
derived for language pairs nobody calibrated (docs/retrieval.md, "Any language pair").
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from footnote.eval.calibration import collecting_settings, split_half
from footnote.eval.questions import load_questions
from footnote.eval.runner import prepare_engine
from footnote.records.lang import detect_lang
from footnote.settings import load_settings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", required=True, type=Path)
    ap.add_argument("--questions", required=True, type=Path)
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "footnote-gate-features")
    ap.add_argument("--detected", action="store_true", help="search with the detected language, not the labelled one")
    ap.add_argument("--dense-top", type=int, default=0,
                    help="also dump the question's top-K dense cosines over the whole store (bench/gate_margin.py)")
    args = ap.parse_args(argv)

    overrides = {"embedder.name": args.embedder} if args.embedder else {}
    settings = collecting_settings(load_settings(**overrides))
    qs = load_questions(args.questions)
    engine, _ = prepare_engine(settings, args.corpus, out_dir=args.work_dir, progress=False)
    n = 0
    with engine, args.out.open("w", encoding="utf-8") as out:
        retriever = engine.retriever
        embedder = retriever.embedder
        assert embedder is not None
        bg = retriever.background.vectors()
        assert bg is not None and len(bg)
        for q in qs:
            detected = detect_lang(q.question, settings.corpus.default_lang)
            res = engine.search(q.question, lang=detected if args.detected else q.lang)
            qvec = np.asarray(embedder.embed_queries([q.question])[0], dtype=np.float32)
            cos = bg @ qvec
            ex = res.signal.extra
            scores = sorted((c.score for c in res.candidates), reverse=True)[:5]
            gold = [c.score for c in res.candidates if c.fragment.source_id in q.gold]
            row = {
                "id": q.id, "lang": q.lang, "detected": detected, "category": q.category, "answerable": q.answerable,
                "half": split_half(q), "corpus_lang": res.candidates[0].fragment.lang if res.candidates else "",
                "max_score": float(res.signal.max_score), "background": float(ex.get("background", 0.0)),
                "lexical": float(ex.get("lexical_overlap", 0.0)), "sentence": float(ex.get("sentence", 0.0)),
                "bg_mean": float(cos.mean()), "bg_std": float(cos.std()), "bg_p99": float(np.percentile(cos, 99)),
                "bg_max": float(cos.max()), "top": scores, "gold_cosine": max(gold) if gold else None,
                "gold_rank": next((i for i, c in enumerate(res.candidates) if c.fragment.source_id in q.gold), None),
            }
            if args.dense_top > 0:
                row["dense"] = [round(h.score, 5) for h in engine.store.search_dense(qvec, args.dense_top)]
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
            if n % 200 == 0:
                print(f"{n}/{len(qs)}", file=sys.stderr, flush=True)
    print(f"{n} questions -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
