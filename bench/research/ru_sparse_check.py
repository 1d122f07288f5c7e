# ruff: noqa  (research notes: numpy scripts; not library code)
"""Robustness of the best sparse candidates (ru_signals.py): weight curves on both halves, halves swapped,
bootstrap of the check-half AUROC delta, abstention at the fitted operating point."""
_a = open("bench/research/ru_signals.py").read()
exec(_a[:_a.index('print("== gate AUROC')])
rng = np.random.default_rng(0)
def boot_delta(a, b, L, H, n=500):
    m = (lang == L) & (half == H); P = np.where(m & pos_m)[0]; N = np.where(m & ~pos_m)[0]; out = []
    for _ in range(n):
        p = rng.choice(P, len(P)); q = rng.choice(N, len(N))
        out.append(auroc(b[p], b[q]) - auroc(a[p], a[q]))
    return np.percentile(out, [2.5, 50, 97.5])
for k in ("sp_marg", "sp_top", "m10", "ent"):
    x = col(k)
    print(f"\n{k}: raw weight → AUROC ru h0 / ru h1 / en h0 / en h1 (en added to en's shipped signal)")
    sd = x[half == 0].std()
    for wz in (0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05):
        w = wz / sd
        print(f"  w={w:7.4f} (z {wz}) ru {au(base['ru']+w*x,'ru',0):.4f} {au(base['ru']+w*x,'ru',1):.4f}  en {au(base['en']+w*x,'en',0):.4f} {au(base['en']+w*x,'en',1):.4f}")
    for H in (0, 1):
        # fit on the other half
        best = max((au(base["ru"] + (wz / sd) * x, "ru", 1 - H), wz) for wz in np.arange(0, 0.08, 0.0025))
        w = best[1] / sd
        lo, md, hi = boot_delta(base["ru"], base["ru"] + w * x, "ru", H)
        print(f"  fit on half {1-H}: w={w:.4f}; check half {H}: {au(base['ru'],'ru',H):.4f} → {au(base['ru']+w*x,'ru',H):.4f}  Δ 95% CI [{lo:+.4f}, {hi:+.4f}]")
# operating point: bail_out = highest value answering 0.96 of in-corpus on fit half; abstention on check half
def op(sig, L, w_name):
    m0 = (lang == L) & (half == 0) & pos_m
    thr = np.quantile(sig[m0], 1 - 0.96)
    for H in (0, 1):
        m = (lang == L) & (half == H)
        print(f"  {w_name:28s} half {H}: answer {np.mean(sig[m & pos_m] >= thr):.3f}  abstain near_miss {np.mean(sig[m & (cat=='near_miss')] < thr):.3f}  off_topic {np.mean(sig[m & (cat=='off_topic')] < thr):.3f}")
x = col("sp_marg"); w = 0.015 / x[half == 0].std()
print("\nru operating point (bail_out at 96% answer on half 0):")
op(base["ru"], "ru", "shipped")
op(base["ru"] + w * x, "ru", f"+{w:.3f}×sp_marg")
