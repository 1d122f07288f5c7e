# ruff: noqa  (research notes: numpy scripts; not library code)
"""Repeated held-out check of the Russian→English candidates: 20 random 50/50 splits by question group
(crc32 of seed + the calibration key, so language twins stay together); weights fitted on one half by
grid, delta measured on the other. Prints mean, sd and share of splits with a gain, per candidate."""
import zlib, itertools
_a = open("bench/research/ru_signals.py").read()
exec(_a[:_a.index('F = [feats(i)')])
U = np.load(f"{CACHE}/xquad-use.npz"); assert list(U["frag_id"]) == fid
SU = U["qu"] @ U["fu"].T
n = np.arange(len(D)); top1 = np.array([FI[d["cands"][0][0]] for d in D])
spm = SP[n, top1] - SP.mean(1); usm = SU[n, top1] - SU.mean(1); spt = SP[n, top1]
ship = np.array([d["extra"]["max_score"] - 0.75 * d["extra"]["background"] for d in D])
ship_en = np.array([d["extra"]["max_score"] + 0.1 * d["extra"]["lexical_overlap"] for d in D])
key = [(d["gold"][0] if d["gold"] else d["id"].split(":")[0]) for d in D]
G = [np.array([FI[x[0]] for x in d["cands"]]) for d in D]
FU = [np.array([x[3] for x in d["cands"]]) for d in D]
GOLD = [np.array([x[1] in d["gold"] for x in d["cands"]]) for d in D]
ru_in = np.where((lang == "ru") & pos_m)[0]
def hits(ws, wu):
    return np.array([GOLD[i][int(np.argmax(FU[i] + ws * SP[i, G[i]] + wu * SU[i, G[i]]))] for i in range(len(D))])
rgrid = list(itertools.product((0, 0.04, 0.08, 0.12), (0, 0.1, 0.2, 0.3)))
H = {g: hits(*g) for g in rgrid}
def au_m(x, m): return auroc(x[m & pos_m], x[m & ~pos_m])
cands_gate = {
    "gate + sparse margin": [ship + w * spm for w in (0, 0.1, 0.2, 0.3, 0.4)],
    "gate + sparse top1": [ship + w * spt for w in (0, 0.05, 0.1, 0.2, 0.3)],
    "gate + USE margin": [ship + w * usm for w in (0, 0.05, 0.1, 0.2, 0.3)],
    "gate + sparse & USE margins": [ship + a * spm + b * usm for a in (0, 0.1, 0.2, 0.3, 0.4) for b in (0, 0.05, 0.1, 0.2)],
}
out = {k: [] for k in [*cands_gate, "fusion + sparse cos", "fusion + USE cos", "fusion + both"]}
for seed in range(20):
    hh = np.array([zlib.crc32(f"{seed}:{k}".encode()) % 2 for k in key])
    for F_ in (0,):
        fit, chk = (lang == "ru") & (hh == F_), (lang == "ru") & (hh != F_)
        for name, xs in cands_gate.items():
            b = int(np.argmax([au_m(x, fit) for x in xs]))
            out[name].append(au_m(xs[b], chk) - au_m(xs[0], chk))
        for name, sub in (("fusion + sparse cos", [g for g in rgrid if g[1] == 0]), ("fusion + USE cos", [g for g in rgrid if g[0] == 0]), ("fusion + both", rgrid)):
            fi = np.intersect1d(ru_in, np.where(fit)[0]); ci = np.intersect1d(ru_in, np.where(chk)[0])
            b = max(sub, key=lambda g: (round(H[g][fi].mean(), 6), -sum(g)))
            out[name].append(H[b][ci].mean() - H[(0, 0)][ci].mean())
print(f"{'candidate (ru-en, fitted per split)':34s} {'mean Δ':>8s} {'sd':>7s} {'min':>7s} {'max':>7s} {'P(Δ>0)':>7s} {'P(Δ≥.02)':>8s}")
for k, v in out.items():
    v = np.array(v)
    print(f"{k:34s} {v.mean():+8.4f} {v.std():7.4f} {v.min():+7.4f} {v.max():+7.4f} {np.mean(v>0):7.2f} {np.mean(v>=0.02):8.2f}")
