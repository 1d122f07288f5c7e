"""Fit and report the floor of the number's neighbourhood (answer.extractive.answerable.kind_window_min and
kind_window_min_other_language; docs/answering.md, "The number's neighbourhood").

    # rows: bench/answerable_fit.py collect --store STORE --questions Q --out rows.jsonl (the check recording)
    .venv/bin/python bench/kind_window.py floors --store STORE rows.jsonl [more.jsonl …] [--words 6]
    # the cross-lingual gap: the same stretch of an English answer against the question asked in English and Russian
    .venv/bin/python bench/kind_window.py gap --store XQUAD_EN_STORE [--n 150]

``floors`` takes the turns the shipped rules answer (``answerable_fit.answers`` at the shipped ablation floors)
whose question asks for a number or a colour, embeds the stretches around each judged sentence's number or colour
(``asked.kind_windows``), and prints, per floor, how many near misses it would decline more and how many answers
it would cost (with the gold string in the answer), for sentences in the question's language and in another one.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
from answerable_fit import answers  # type: ignore[import-not-found]

from footnote.answer.asked import BOUND_KINDS, asked_kind, kind_windows

FLOORS = (0.10, 0.16, 0.20, 0.25, 0.30, 0.35, 0.40)


def _engine(store: str) -> Any:
    from footnote.engine import Engine
    from footnote.settings import load_settings

    return Engine.from_settings(load_settings(None, **{"store.url": store}), create=False)


def floors(args: argparse.Namespace) -> int:
    eng = _engine(args.store)
    emb = eng.embedder
    for path in args.rows:
        scored: list[tuple[bool, bool, bool, float]] = []  # (answerable, gold in answer, same language, best)
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            ch = row and row["check"]
            if not ch or row["mode"] != "corpus" or not answers(row, 0.0, -0.03, 3):
                continue
            kind = asked_kind(ch["question"])
            if kind not in BOUND_KINDS:
                continue
            best: dict[bool, float] = {}
            qv = np.asarray(emb.embed_queries([ch["question"]]))[0]
            for c in ch["cands"]:
                windows = kind_windows(c["text"], ch["question"], kind, args.words)
                if windows:
                    same = c["lang"] == row["lang"]
                    v = float(np.max(np.asarray(emb.embed_passages(windows)) @ qv))
                    best[same] = max(best.get(same, -1.0), v)
            for same, v in best.items():
                scored.append((row["answerable"], row["gold_in_answer"], same, v))
        print(f"{Path(path).stem}: {len(scored)} judged turns asking for a number or a colour")
        for same in (True, False):
            part = [s for s in scored if s[2] is same]
            if not part:
                continue
            cells = []
            for f in FLOORS:
                dec = sum(1 for a, _, _, v in part if not a and v < f)
                lost = sum(1 for a, _, _, v in part if a and v < f)
                gold = sum(1 for a, g, _, v in part if a and g and v < f)
                cells.append(f"{f:.2f}: +{dec} declined, -{lost} answered ({gold} gold)")
            print(f"  {'same language' if same else 'other language'} (n {len(part)}): " + " · ".join(cells))
    eng.close()
    return 0


def gap(args: argparse.Namespace) -> int:
    """Over xquad dev questions asked in English and Russian: the best stretch of the English answering sentence
    (the one holding the English gold answer) against each question; prints the gap's median, mean, 90th percentile."""
    eval_dir = Path(args.eval)
    rows = {json.loads(line)["id"]: json.loads(line)
            for line in (eval_dir / "xquad/questions.dev.jsonl").read_text(encoding="utf-8").splitlines() if line}
    corpus = {json.loads(line)["id"]: json.loads(line)["text"]
              for line in (eval_dir / "xquad/corpus.en.jsonl").read_text(encoding="utf-8").splitlines() if line}
    skip = set()
    if args.skip:
        skip = {json.loads(line)["id"] for line in Path(args.skip).read_text(encoding="utf-8").splitlines() if line}
    ids = sorted(k[:-3] for k, r in rows.items() if k.endswith(":ru") and r["category"] == "in_corpus" and k not in skip)
    random.Random(args.seed).shuffle(ids)
    eng = _engine(args.store)
    emb = eng.embedder
    gaps = []
    for base in ids[: args.n]:
        en, ru = rows.get(base + ":en"), rows[base + ":ru"]
        kind = asked_kind(en["question"]) if en else None
        if en is None or kind not in BOUND_KINDS:
            continue
        text = corpus[en["gold"][0]]
        hits = [s for s in re.split(r"(?<=[.!?])\s+", text) if any(a.lower() in s.lower() for a in en["answers"])]
        windows = kind_windows(hits[0], en["question"], kind, args.words) if hits else []
        if not windows:
            continue
        wv = np.asarray(emb.embed_passages(windows))
        qe, qr = np.asarray(emb.embed_queries([en["question"], ru["question"]]))
        gaps.append(float(np.max(wv @ qe)) - float(np.max(wv @ qr)))
    eng.close()
    if not gaps:
        print("no question pairs with a number asked and a stretch found")
        return 1
    g = np.array(gaps)
    print(f"{len(g)} pairs: gap median {np.median(g):.3f}, mean {g.mean():.3f}, 90th percentile {np.percentile(g, 90):.3f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("floors")
    f.add_argument("rows", nargs="+")
    f.add_argument("--store", required=True)
    f.add_argument("--words", type=int, default=6)
    g = sub.add_parser("gap")
    g.add_argument("--store", required=True)
    g.add_argument("--eval", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "eval"))
    g.add_argument("--n", type=int, default=150)
    g.add_argument("--seed", type=int, default=3)
    g.add_argument("--words", type=int, default=6)
    g.add_argument("--skip", help="a question file whose ids are left out (the reported sample)")
    args = ap.parse_args()
    return {"floors": floors, "gap": gap}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
