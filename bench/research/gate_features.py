# ruff: noqa  (research notes: numpy scripts that exec each other; not library code)
"""Research: AUROC of gate signals on cached vectors (numpy). Fit on half 0, check on half 1."""
from __future__ import annotations
import sys
sys.argv = ["x"]
_a = open("bench/research/xquad_signals.py").read()
exec(_a[:_a.index('if __name__ == "__main__":')])
_b = open("bench/research/skeleton.py").read()
exec(_b[_b.index("from footnote.retrieve.plan"):_b.rindex('if __name__ == "__main__":')])
from footnote.store.text import Analyzer, tokenize
an = Analyzer()
def cterms(t, lg):
    return set(an.stem(tokenize(" ".join(keywords(t))), lg))
fterms = [set(an.stem(tokenize(t), "en")) for t in frag_text]
def overlap(i, j):
    q = cterms(qs[i]["question"], qs[i]["lang"])
    return len(q & fterms[j]) / len(q) if q else 0.0
F = {}
for i, q in enumerate(qs):
    s = S[i]; order = np.argsort(-s); j = order[0]
    top3 = order[:3]
    ov = max(overlap(i, k) for k in top3) if q["lang"] == "en" else 0.0
    feats = qfeats(q["question"])
    nm = max(ev(feats, k) for k in top3) / max(1, len(feats)) if q["lang"] == "ru" else 0.0
    F[i] = dict(max=s[j], bg=s.mean(), ov=ov, nm=nm, gap=s[j]-s[order[1]], top5=s[order[:5]].mean())
def au(fn, L, H, c=None):
    pos = [fn(F[i]) for i in np.where((lang==L)&(cat=="in_corpus")&np.isin(half,H))[0]]
    m = (lang==L)&(cat!="in_corpus")&np.isin(half,H) if c is None else (lang==L)&(cat==c)&np.isin(half,H)
    neg = [fn(F[i]) for i in np.where(m)[0]]
    return round(auroc(pos, neg), 4)
for L in ("en", "ru"):
    print(L, "max", au(lambda f: f["max"], L, [0]), au(lambda f: f["max"], L, [1]))
    best = None
    for bw in (0, 0.25, 0.5, 0.8, 1.0):
        for lw in (0, 0.02, 0.04, 0.06, 0.1, 0.15, 0.2, 0.3):
            key = "ov" if L == "en" else "nm"
            fn = lambda f, bw=bw, lw=lw: f["max"] - bw*f["bg"] + lw*f[key]
            a0 = au(fn, L, [0])
            if best is None or a0 > best[0]: best = (a0, bw, lw, au(fn, L, [1]), au(fn, L, [1], "near_miss"), au(fn, L, [1], "off_topic"))
    print(L, "best fit-half", best)
    for gw in (0.0, 0.3, 0.6, 1.0):
        fn = lambda f, gw=gw: f["max"] - best[1]*f["bg"] + best[2]*f["ov" if L=="en" else "nm"] + gw*f["gap"]
        print(L, "gap", gw, au(fn, L, [0]), au(fn, L, [1]))
