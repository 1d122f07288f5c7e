"""Does the shape of a question's top dense cosines add evidence to the gate's signal? AUROC (in-corpus against
off-topic and near-miss) per language pair and half, of the derived signal (max cosine + best sentence cosine) alone
and plus a margin of the top cosine over the next ones, or a z-score of it.

    X=../shared/eval/xquad
    .venv/bin/python bench/gate_features.py --corpus $X/corpus.en.jsonl --questions $X/questions.dev.jsonl \
        --embedder embeddinggemma --dense-top 32 --out /tmp/g.dev.en.jsonl
    .venv/bin/python bench/gate_margin.py /tmp/g.dev.en.jsonl

Measured (docs/retrieval.md, "Any language pair"): no margin moves AUROC by more than +0.004 on either half.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from footnote.eval.metrics import auroc

Row = dict[str, Any]


def load(path: Path) -> list[Row]:
    rows = []
    for line in path.open(encoding="utf-8"):
        r = json.loads(line)
        if "dense" not in r:
            raise SystemExit(f"{path}: no dense cosines (dump it with bench/gate_features.py --dense-top 32)")
        d = np.zeros(max(32, len(r["dense"])))
        d[: len(r["dense"])] = r["dense"]
        r["d"], r["pair"] = d, f"{r['lang']}-{r['corpus_lang'] or r['lang']}"
        rows.append(r)
    return rows


def candidates() -> dict[str, Callable[[Row], float]]:
    def s0(r: Row) -> float:
        return float(r["max_score"] + r["sentence"])

    def m(n: int) -> Callable[[Row], float]:
        return lambda r: float(r["d"][0] - r["d"][1:n + 1].mean())

    def z(r: Row) -> float:
        rest = r["d"][1:]
        return float((r["d"][0] - rest.mean()) / max(rest.std(), 1e-6))

    def plus(w: float, f: Callable[[Row], float]) -> Callable[[Row], float]:
        return lambda r: s0(r) + w * f(r)

    out: dict[str, Callable[[Row], float]] = {"max cosine": lambda r: float(r["max_score"]), "max + sentence": s0}
    for w in (0.5, 1.0, 2.0):
        for n in (1, 4, 9):
            out[f"+ {w} x top1 - mean(top2..{n + 1})"] = plus(w, m(n))
    for w in (0.02, 0.05):
        out[f"+ {w} x z(top1)"] = plus(w, z)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dumps", nargs="+", type=Path)
    args = ap.parse_args(argv)
    rows = [r for p in args.dumps for r in load(p)]
    cells = [(p, h) for p in sorted({r["pair"] for r in rows}) for h in (0, 1)]
    print(f"{'signal':<36}" + "".join(f"{p + '/h' + str(h):>11}" for p, h in cells))
    for name, f in candidates().items():
        vals = []
        for p, h in cells:
            rs = [r for r in rows if r["pair"] == p and r["half"] == h]
            vals.append(auroc([-f(r) for r in rs], [not r["answerable"] for r in rs]) if rs else float("nan"))
        print(f"{name:<36}" + "".join(f"{v:>11.3f}" for v in vals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
