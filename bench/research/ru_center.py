# ruff: noqa  (research notes: numpy scripts; not library code)
"""Language-mean shift for Russian questions: q' = normalise(q − mean(ru questions) + mean(en questions)),
means fitted on half-0 questions only; recall@1 on the real round-one pool and gate AUROC, per half.
Run after dump_xquad_pool.py (exec's ru_signals.py for the shared loading)."""
import sys
_a = open("bench/research/ru_signals.py").read()
exec(_a[:_a.index('F = [feats(i)')])
Q = np.array([d["id"] for d in D])
for fitset in ("half0-all", "half0-incorpus"):
    m0 = (half == 0) if fitset == "half0-all" else (half == 0) & pos_m
    mu_ru = QV[m0 & (lang == "ru")].mean(0); mu_en = QV[m0 & (lang == "en")].mean(0)
    for a in (0.5, 1.0, 1.5):
        Q2 = QV.copy()
        r = lang == "ru"
        Q2[r] = QV[r] - a * mu_ru + a * mu_en
        Q2 /= np.linalg.norm(Q2, axis=1, keepdims=True)
        S2 = Q2 @ E.T
        def fn(i, c):
            return np.array([x[3] - x[2] + S2[i, FI[x[0]]] for x in c])
        mx = np.array([S2[i, [FI[x[0]] for x in D[i]["cands"]]].max() for i in range(len(D))])
        bg = S2.mean(1)   # background over all fragments (the pipeline samples the corpus)
        best = max((au(mx - w * bg, "ru", 0), w) for w in (0, .25, .5, .75, 1.0))
        print(f"{fitset:15s} a={a}: ru r@1 {r1(fn,'ru',0):.4f} {r1(fn,'ru',1):.4f} | AUROC max {au(mx,'ru',0):.4f} {au(mx,'ru',1):.4f}"
              f" | max-{best[1]}bg {best[0]:.4f} {au(mx - best[1]*bg,'ru',1):.4f}")
