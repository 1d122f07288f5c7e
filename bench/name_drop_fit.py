"""Fit ``support.name_drop`` (issue 39): a translated name no spelling matches, carried by meaning.

A model answering in Russian from English passages writes their names as a translation does — «Суперкубке» for
"Super Bowl", «Уэльсе» for "Wales" — and the support check, which compares names by their spelling, drops the
sentence (``name``: 61 of xquad's 726 Russian sentences citing their English paragraph). The drop asked here: how
much less like the passage's best-matching sentence the claim is without the name (``SupportScorer.name_drop``).

* **Carried** (should count): each Russian sentence of xquad citing its own English paragraph that the check drops
  for ``name`` alone — the largest drop among its names in another script that no spelling matches.
* **Not carried** (should not count): a Russian sentence the check keeps, with one of its names that a spelling
  matched swapped for a name of another article (a false claim about a true passage: "…в Суперкубке" made
  "…в Уимблдоне"), when the swap alone makes the check drop it — the same drop.

Articles alternate between the fit half and the held-out half; the floor is the lowest that keeps at most
``--max-false`` of the fit half's swapped names, and both halves are reported at it.

    .venv/bin/python bench/name_drop_fit.py [--xquad ../shared/eval/xquad] [--max-false 0.02]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from footnote.answer.particulars import claim_particulars, foreign_names
from footnote.answer.support import CitedPassage, SupportScorer
from footnote.settings import load_settings
from footnote.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]


def _load(xquad: Path, lang: str) -> dict[str, dict[str, str]]:
    rows = [json.loads(x) for x in (xquad / f"corpus.{lang}.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    return {r["id"]: r for r in rows}


def _auroc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--xquad", type=Path, default=ROOT.parent / "shared" / "eval" / "xquad")
    ap.add_argument("--embedder", default="embeddinggemma")
    ap.add_argument("--max-false", type=float, default=0.02)
    args = ap.parse_args()
    from footnote.models.embedders import make_embedder

    settings = load_settings(None, **{"embedder.name": args.embedder})
    embedder = make_embedder(settings.embedder, settings.models.dir_path)
    scorer = SupportScorer(settings.support.model_copy(update={"name_drop": {}}), embedder)
    en, ru = _load(args.xquad, "en"), _load(args.xquad, "ru")
    ids = [i for i in en if i in ru]
    articles = list(dict.fromkeys(i.split("#")[0] for i in ids))
    half = {a: k % 2 for k, a in enumerate(articles)}  # 0: fit, 1: held out
    # names of each article, in Cyrillic, for the swaps
    names_by_article: dict[str, set[str]] = {}
    for pid in ids:
        names_by_article.setdefault(pid.split("#")[0], set()).update(
            w for w, _ in claim_particulars(ru[pid]["text"]).names if any("\u0400" <= ch <= "\u04ff" for ch in w))
    rng = random.Random(39)
    pos: dict[int, list[float]] = {0: [], 1: []}
    neg: dict[int, list[float]] = {0: [], 1: []}
    pos_like: dict[int, list[float]] = {0: [], 1: []}
    neg_like: dict[int, list[float]] = {0: [], 1: []}
    t0 = time.perf_counter()
    for pid in ids:
        art = pid.split("#")[0]
        passage = CitedPassage(en[pid]["text"], (en[pid].get("title", ""),))
        pp = scorer.passage(passage.text, passage.extra)
        for s in split_sentences(ru[pid]["text"]):
            if len(s.split()) < 3:
                continue
            claim = s.rstrip(".!?…")
            v = scorer.judge(claim + " [1].", {1: passage})
            foreign = foreign_names(claim_particulars(claim), [pp])
            if list(v.why) == ["name"]:
                drops = [d for w, ok in foreign if not ok and (d := scorer.name_drop(claim, w, [passage.text])) is not None]
                if drops:
                    pos[half[art]].append(max(drops))
                likes = [x for w, ok in foreign if not ok and (x := scorer.name_likeness(w, [passage.text])) is not None]
                if likes:
                    pos_like[half[art]].append(max(likes))
            elif v.supported and (spelled := [w for w, ok in foreign if ok]):
                w = rng.choice(spelled)
                others = sorted(n for a, ns in names_by_article.items() if a != art for n in ns)
                swap = rng.choice(others)
                false = claim.replace(w, swap)
                fv = scorer.judge(false + " [1].", {1: passage})
                if list(fv.why) == ["name"]:
                    bad = [x for x, ok in foreign_names(claim_particulars(false), [pp]) if not ok]
                    drops = [d for x in bad if (d := scorer.name_drop(false, x, [passage.text])) is not None]
                    if drops:
                        neg[half[art]].append(max(drops))
                    likes = [y for x in bad if (y := scorer.name_likeness(x, [passage.text])) is not None]
                    if likes:
                        neg_like[half[art]].append(max(likes))
    secs = time.perf_counter() - t0
    fit_neg = sorted(neg[0])
    grid = sorted({round(x, 3) for x in [*pos[0], *neg[0]]} | {0.0})
    floor = next((f for f in grid if sum(n >= f for n in fit_neg) <= args.max_false * max(len(fit_neg), 1)), grid[-1])
    print(f"embedder {args.embedder}; {len(articles)} articles, alternate halves; {secs:.0f} s")
    for h, label in ((0, "fit"), (1, "held out")):
        p, n = pos[h], neg[h]
        print(f"{label:>9}: carried (translations dropped for a name) {len(p)}, not carried (swapped names) {len(n)}; "
              f"AUROC {_auroc(p, n):.3f}; at floor {floor:.3f}: carried recovered {sum(x >= floor for x in p)}/{len(p)}, "
              f"swapped kept {sum(x >= floor for x in n)}/{len(n)}")
    print(f"floor (lowest keeping at most {args.max_false:.0%} of the fit half's swapped names): {floor:.3f}")
    grid = sorted({round(x, 3) for x in [*pos_like[0], *neg_like[0]]} | {1.0})
    lfloor = next((f for f in grid if sum(n >= f for n in neg_like[0]) <= args.max_false * max(len(neg_like[0]), 1)),
                  grid[-1])
    for h, label in ((0, "fit"), (1, "held out")):
        p, n = pos_like[h], neg_like[h]
        print(f"{label:>9} likeness: carried {len(p)}, swapped {len(n)}; AUROC {_auroc(p, n):.3f}; at {lfloor:.3f}: "
              f"carried recovered {sum(x >= lfloor for x in p)}/{len(p)}, swapped kept {sum(x >= lfloor for x in n)}/{len(n)}")


if __name__ == "__main__":
    main()
