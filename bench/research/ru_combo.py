# ruff: noqa  (research notes: numpy scripts; not library code)
"""Combinations for Russian→English: fusion + sparse cosine + USE cosine (cross-lingual pairs only) for
recall@1; shipped gate + sparse margin + USE margin (+ language-mean shift) for AUROC. Grid fitted on one
half, checked on the other, both directions."""
_a = open("bench/research/ru_signals.py").read()
exec(_a[:_a.index('F = [feats(i)')])
U = np.load(f"{CACHE}/xquad-use.npz"); assert list(U["frag_id"]) == fid
SU = U["qu"] @ U["fu"].T
import itertools
def fused(i, c): return np.array([x[3] for x in c])
def mk(ws, wu):
    def fn(i, c):
        g = np.array([FI[x[0]] for x in c])
        return fused(i, c) + ws * SP[i, g] + wu * SU[i, g]
    return fn
grid = list(itertools.product((0, 0.04, 0.08, 0.12), (0, 0.1, 0.2, 0.3)))
print("recall@1 ru (cross-lingual terms apply to ru questions only; en unchanged)")
for F_ in (0, 1):
    C = 1 - F_
    sc = {g: r1(mk(*g), "ru", F_) for g in grid}
    best = max(grid, key=lambda g: (round(sc[g], 6), -sum(g)))
    print(f"  fit half {F_}: best (sparse w, USE w) = {best}: fit {sc[(0,0)]:.4f} → {sc[best]:.4f}; check half {C}: {r1(mk(0,0),'ru',C):.4f} → {r1(mk(*best),'ru',C):.4f}")
    for g in ((0.08, 0), (0, 0.2), (0.08, 0.2)):
        print(f"     {g}: half {F_} {sc[g]:.4f}  half {C} {r1(mk(*g),'ru',C):.4f}")
top1 = np.array([FI[d["cands"][0][0]] for d in D])
n = np.arange(len(D))
spm = SP[n, top1] - SP.mean(1); usm = SU[n, top1] - SU.mean(1)
mu_ru = QV[(half == 0) & (lang == "ru")].mean(0); mu_en = QV[(half == 0) & (lang == "en")].mean(0)
ship = np.array([d["extra"]["max_score"] - 0.75 * d["extra"]["background"] for d in D])
print("\ngate AUROC ru")
g2 = list(itertools.product((0, 0.1, 0.2, 0.3, 0.4), (0, 0.05, 0.1, 0.2, 0.3)))
for F_ in (0, 1):
    C = 1 - F_
    sc = {g: au(ship + g[0] * spm + g[1] * usm, "ru", F_) for g in g2}
    best = max(g2, key=lambda g: sc[g])
    x = ship + best[0] * spm + best[1] * usm
    print(f"  fit half {F_}: best (sparse margin w, USE margin w) = {best}: fit {sc[(0,0)]:.4f} → {sc[best]:.4f}; check half {C}: {au(ship,'ru',C):.4f} → {au(x,'ru',C):.4f}")

# language-mean shift of the Russian question vector (means from half-0 questions) + sparse margin
for a in (0.5, 1.0):
    Q2 = QV.copy(); r = lang == "ru"; Q2[r] = QV[r] - a * mu_ru + a * mu_en; Q2 /= np.linalg.norm(Q2, axis=1, keepdims=True)
    S2 = Q2 @ E.T
    mx = np.array([S2[i, [FI[x[0]] for x in D[i]["cands"]]].max() for i in range(len(D))])
    shift = mx - 0.75 * S2.mean(1)
    for ws in (0, 0.2, 0.3):
        x = shift + ws * spm
        print(f"mean shift a={a} (means fitted on half 0) + {ws} × sparse margin: ru h0 {au(x,'ru',0):.4f} h1 {au(x,'ru',1):.4f}")
