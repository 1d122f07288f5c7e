# ruff: noqa  (research notes: numpy scripts; not library code)
"""Gate-signal candidates from gate_dump.py's dumps: per language pair, each feature's AUROC on the fit and
held-out halves, logistic combinations chosen by cross-validation on the fit half only, and the operating
point the calibrator's rule (answer target on the fit half) gives on the held-out half.

    python bench/research/gate_feats.py /tmp/gate4/en/dump-questions.dev.json [more dumps]
"""
from __future__ import annotations

import itertools
import re
import json
import math
import sys
import zlib
from pathlib import Path

import numpy as np

from footnote.eval.metrics import auroc
from footnote.retrieve.names import name_evidence, passage_skeletons, question_names


def load(path: str):
    meta = json.load(open(path))
    v = np.load(str(Path(path).with_name(Path(path).name.replace("dump-", "vectors-").replace(".json", ".npz"))))
    return meta, v["qv"], v["frag"], v["sent"]


NUM = re.compile(r"\d+(?:[.,]\d+)*")


def numbers(text: str) -> set[str]:
    return {n.replace(",", "").replace(".", "") for n in NUM.findall(text)}


def texts_of(path: str) -> dict[str, str]:
    from footnote.settings import load_settings
    from footnote.store import open_store
    db = next((Path(path).parent / "stores").glob("*.db"))
    st = open_store(str(db), load_settings(None).store)
    ids = [i for b, _ in st.iter_embeddings() for i in b]
    out = {f.id: f.text for f in st.get_fragments(ids)}
    st.close()
    return out


def features(meta, qv, frag, sent, text) -> tuple[list[dict], list[dict]]:
    fids = meta["fragments"]
    fpos = {f: i for i, f in enumerate(fids)}
    titles = np.array([meta["titles"][f] for f in fids])
    sources = np.array([meta["sources"][f] for f in fids])
    sidx = meta["sentences"]
    feats, info = [], []
    for r, q in zip(meta["rows"], qv):
        cands = [c for c in r["cands"] if c[5]]
        x: dict[str, float] = {}
        x["max"] = r["max_score"]
        x["lex"] = r["extra"].get("lexical_overlap", 0.0)
        x["bg"] = r["extra"].get("background", 0.0)
        cos = frag @ q
        order = np.argsort(-cos)
        top = order[0]
        x["gap12"] = float(cos[order[0]] - cos[order[1]])
        other_title = cos[titles != titles[top]]
        x["m_title"] = float(cos[top] - other_title.max()) if len(other_title) else 0.0
        same = (titles == titles[top]) & (np.arange(len(cos)) != top)
        x["sib_mean"] = float(cos[top] - cos[same].mean()) if same.any() else 0.0
        x["sib_max"] = float(cos[top] - cos[same].max()) if same.any() else 0.0
        for k in (5, 10):
            x[f"std{k}"] = float(np.std(cos[order[:k]]))
            x[f"top_minus_mean{k}"] = float(cos[top] - cos[order[1:k]].mean())
        # sentences of the final slate's fragments (in slate order)
        slate = [c[0] for c in cands if c[0] in fpos]
        per = []
        for f in slate:
            ii = sidx.get(f, [])
            per.append(sent[ii] @ q if ii else np.zeros(1, dtype=np.float32))
        best_per = [float(p.max()) for p in per]
        x["sent3"] = r["extra"].get("sentence", max(best_per[:3]) if best_per else 0.0)
        x["sent1"] = best_per[0] if best_per else 0.0
        x["sent5"] = max(best_per[:5]) if best_per else 0.0
        x["sent_slate"] = max(best_per) if best_per else 0.0
        allsent = sent @ q
        x["sent_all"] = float(allsent.max())
        if per:
            p0 = per[0]
            x["sent1_mm"] = float(p0.max() - p0.mean())
            top3 = np.sort(np.concatenate(per[:3]))[::-1]
            x["sent_gap"] = float(top3[0] - top3[1]) if len(top3) > 1 else 0.0
            x["sent_lse"] = float(np.log(np.exp(top3 / 0.05).sum()) * 0.05)
            j = int(np.argmax(best_per[:3]))
            x["agree"] = float(j == 0)
            x["sent_mean3"] = float(np.mean(top3[:3]))
            x["sent_minus_max"] = x["sent3"] - x["max"]
        else:
            for k in ("sent1_mm", "sent_gap", "sent_lse", "agree", "sent_mean3", "sent_minus_max"):
                x[k] = 0.0
        qtext = meta["questions"][len(feats)]
        names = question_names(qtext)
        top3 = " ".join(text.get(f, "") for f in slate[:3])
        top1 = text.get(slate[0], "") if slate else ""
        x["name_share3"] = name_evidence(names, passage_skeletons(top3)) if names else 0.5
        x["name_miss3"] = float(len(names) * (1 - name_evidence(names, passage_skeletons(top3)))) if names else 0.0
        x["name_share1"] = name_evidence(names, passage_skeletons(top1)) if names else 0.5
        qn = numbers(qtext)
        x["num_miss3"] = float(len(qn - numbers(top3)))
        x["num_share3"] = len(qn & numbers(top3)) / len(qn) if qn else 0.5
        feats.append(x)
        info.append({"half": r["half"], "pair": r["pair"], "cat": r["category"], "y": r["answerable"], "id": r["id"]})
    return feats, info


def fold_of(qid: str, k: int) -> int:
    return zlib.crc32(("cv:" + qid.split(":")[0]).encode()) % k


def logit_fit(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50) -> np.ndarray:
    """L2-regularised logistic regression by Newton steps; X already standardised, bias appended."""
    n, d = X.shape
    w = np.zeros(d)
    reg = np.eye(d) * l2
    reg[-1, -1] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        g = X.T @ (p - y) + reg @ w
        H = (X * (p * (1 - p))[:, None]).T @ X + reg
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def design(F: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    return np.hstack([(F - mu) / sd, np.ones((len(F), 1))])


def cv_auroc(F: np.ndarray, y: np.ndarray, ids: list[str], k: int = 5, l2: float = 1.0) -> float:
    folds = np.array([fold_of(i, k) for i in ids])
    scores = np.zeros(len(y))
    for f in range(k):
        tr, te = folds != f, folds == f
        mu, sd = F[tr].mean(0), F[tr].std(0) + 1e-9
        w = logit_fit(design(F[tr], mu, sd), y[tr], l2)
        scores[te] = design(F[te], mu, sd) @ w
    # pooled CV scores (each fold's scale is comparable: standardised logits)
    return auroc(list(scores), list(y.astype(bool)))


def threshold_for(values: np.ndarray, target: float) -> float:
    v = np.sort(values)
    k = len(v) - math.ceil(target * len(v) - 1e-9)
    return float(v[max(0, min(k, len(v) - 1))])


def rates(vals: np.ndarray, cats: np.ndarray, thr: float) -> tuple[float, float, float]:
    a = float(np.mean(vals[cats == "in_corpus"] >= thr))
    o = float(np.mean(vals[cats == "off_topic"] < thr)) if (cats == "off_topic").any() else float("nan")
    n = float(np.mean(vals[cats == "near_miss"] < thr)) if (cats == "near_miss").any() else float("nan")
    return a, o, n


def main() -> None:
    allf, alli = [], []
    for p in sys.argv[1:]:
        if p.endswith(".pkl"):
            import pickle
            f, i = pickle.load(open(p, "rb"))
        else:
            f, i = features(*load(p), texts_of(p))
        allf += f
        alli += i
    analyze(allf, alli)


def analyze(allf, alli) -> None:
    names = list(allf[0])
    pairs = sorted({i["pair"] for i in alli})
    for pair in pairs:
        idx = [j for j, i in enumerate(alli) if i["pair"] == pair]
        F = np.array([[allf[j][n] for n in names] for j in idx])
        y = np.array([alli[j]["y"] for j in idx], dtype=float)
        half = np.array([alli[j]["half"] for j in idx])
        cats = np.array([alli[j]["cat"] for j in idx])
        ids = [alli[j]["id"] for j in idx]
        fit, chk = half == 0, half == 1
        print(f"\n=== {pair}: fit {fit.sum()} held-out {chk.sum()} (in/off/near held-out: "
              f"{(cats[chk]=='in_corpus').sum()}/{(cats[chk]=='off_topic').sum()}/{(cats[chk]=='near_miss').sum()})")
        for n_i, n in enumerate(names):
            a_f = auroc(list(F[fit, n_i]), list(y[fit].astype(bool)))
            a_c = auroc(list(F[chk, n_i]), list(y[chk].astype(bool)))
            nm = chk & (cats != "off_topic")
            a_nm = auroc(list(F[nm, n_i]), list(y[nm].astype(bool)))
            print(f"  {n:>16}: fit {a_f:.3f} held-out {a_c:.3f} (vs near-miss {a_nm:.3f})")
        base = ["max", "sent3", "lex"]
        cand = [n for n in names if n not in base]
        results = []
        fit_ids = [i for i, h in zip(ids, fit) if h]
        for extra in [()] + [(c,) for c in cand] + list(itertools.combinations(cand, 2)):
            cols = [names.index(n) for n in base + list(extra)]
            Ff = F[fit][:, cols]
            cv = cv_auroc(Ff, y[fit], fit_ids)
            results.append((cv, extra, cols))
        results.sort(key=lambda r: -r[0])
        print("  logistic (max, sent3, lex + extras), CV AUROC on the fit half → held-out:")
        for cv, extra, cols in results[:8] + [r for r in results if r[1] == ()]:
            mu, sd = F[fit][:, cols].mean(0), F[fit][:, cols].std(0) + 1e-9
            w = logit_fit(design(F[fit][:, cols], mu, sd), y[fit])
            sc_f = design(F[fit][:, cols], mu, sd) @ w
            sc_c = design(F[chk][:, cols], mu, sd) @ w
            a_c = auroc(list(sc_c), list(y[chk].astype(bool)))
            pts = []
            for tgt in (0.96, 0.95):
                thr = threshold_for(sc_f[y[fit] == 1], tgt)
                a, o, n = rates(sc_c, cats[chk], thr)
                pts.append(f"t{tgt}: {100*a:.1f}/{100*o:.1f}/{100*n:.1f}")
            print(f"    {'+'.join(extra) or '(base)':>28}: cv {cv:.3f} held-out {a_c:.3f}  {'  '.join(pts)}")


if __name__ == "__main__":
    main()
