# ruff: noqa  (research notes: numpy scripts; not library code)
"""Dump, per question, everything the gate-feature research (gate_feats.py) needs, with the real Retriever
(round one, the embedder's gate open, sentence term collected, as `footnote calibrate` collects):
final candidates (fragment id, source id, source title, cosine, rerank), the gate extras, the query
vector; plus every fragment vector and every sentence vector of the corpus.

    python bench/research/gate_dump.py CORPUS QUESTIONS OUT_DIR [--langs ru]

Writes OUT_DIR/dump.json and OUT_DIR/vectors.npz; the store stays in OUT_DIR/stores (a rerun embeds
nothing but the questions; query vectors are kept in OUT_DIR/qvec-<questions>.npz)."""
from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from footnote.eval.calibration import collecting_settings, split_half
from footnote.eval.questions import load_questions
from footnote.eval.runner import prepare_engine
from footnote.settings import load_settings
from footnote.text import split_sentences


def main() -> None:
    corpus, questions, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    langs = sys.argv[5].split(",") if len(sys.argv) > 5 and sys.argv[4] == "--langs" else None
    out.mkdir(parents=True, exist_ok=True)
    s = collecting_settings(load_settings(None, **{"embedder.name": "embeddinggemma", "embedder.query_cache_size": 8192}))
    t0 = time.process_time()
    engine, _ = prepare_engine(s, [corpus], out_dir=out, progress=False)
    print("ingest CPU s", round(time.process_time() - t0, 1), flush=True)
    qs = load_questions(questions, langs=langs)
    emb = engine.embedder
    qcache = out.parent / f"qvec-{questions.stem}-{'_'.join(langs or ['all'])}.npz"
    import os
    while os.environ.get("WAIT_QVEC") and not qcache.exists():
        time.sleep(10)
    if qcache.exists():
        qv = np.load(qcache)["qv"]
    else:
        t0 = time.process_time()
        qv = np.asarray(emb.embed_queries([q.question for q in qs]), dtype=np.float32)
        np.savez(qcache, qv=qv)
        print("query embedding CPU s", round(time.process_time() - t0, 1), flush=True)
    for q, v in zip(qs, qv, strict=True):
        emb._cache.put(q.question, v)
        emb._cache.put(" ".join(q.question.split()), v)
    store = engine.store
    titles: dict[str, str] = {}


    def title(sid: str) -> str:
        if sid not in titles:
            src = store.get_source(sid)
            titles[sid] = (src.title if src is not None else "") or sid.split("#")[0]
        return titles[sid]


    rows = []
    t0 = time.process_time()
    for q, v in zip(qs, qv, strict=True):
        r = engine.search(q.question)
        rows.append({"id": q.id, "lang": q.lang, "category": q.category, "answerable": q.answerable, "gold": list(q.gold),
                     "half": split_half(q), "pair": f"{r.plan.lang}-{r.candidates[0].fragment.lang if r.candidates else q.lang}",
                     "extra": r.signal.extra, "max_score": r.signal.max_score,
                     "cands": [[c.fragment.id, c.fragment.source_id, title(c.fragment.source_id), c.score,
                                c.rerank if c.rerank is not None else c.score, c.embedded] for c in r.candidates]})
    print("search CPU s", round(time.process_time() - t0, 1), "for", len(qs), flush=True)
    # every fragment vector and every sentence vector (embedding the sentences no search has seen yet)
    ids, vecs = [], []
    for b_ids, b in store.iter_embeddings():
        ids += b_ids
        vecs.append(b)
    frag_vec = np.concatenate(vecs).astype(np.float32)
    frags = {f.id: f for f in store.get_fragments(ids)}
    sent_of: dict[str, list[str]] = {fid: split_sentences(frags[fid].text) for fid in ids}
    texts = sorted({t for ss in sent_of.values() for t in ss})
    keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
    have = store.get_sentence_vectors(emb.name, keys)
    todo = [t for t, k in zip(texts, keys) if k not in have]
    if todo:
        t0 = time.process_time()
        fresh = np.asarray(emb.embed_passages(todo), dtype=np.float32)
        store.put_sentence_vectors(emb.name, {hashlib.sha1(t.encode("utf-8")).hexdigest(): v for t, v in zip(todo, fresh)})
        have.update({hashlib.sha1(t.encode("utf-8")).hexdigest(): v for t, v in zip(todo, fresh)})
        print("sentences embedded", len(todo), "CPU s", round(time.process_time() - t0, 1), flush=True)
    sent_vec = np.stack([have[k] for k in keys]).astype(np.float32)
    index = {t: i for i, t in enumerate(texts)}
    meta = {"fragments": ids, "sources": {fid: frags[fid].source_id for fid in ids},
            "titles": {fid: title(frags[fid].source_id) for fid in ids},
            "sentences": {fid: [index[t] for t in ss] for fid, ss in sent_of.items()}, "rows": rows,
            "questions": [q.question for q in qs]}
    json.dump(meta, open(out / f"dump-{questions.stem}.json", "w"), ensure_ascii=False)
    np.savez(out / f"vectors-{questions.stem}.npz", qv=qv, frag=frag_vec, sent=sent_vec)
    engine.close()
    print("done", out)


if __name__ == "__main__":
    main()
