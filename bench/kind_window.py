"""Fit and report the floor of the number's neighbourhood (answer.extractive.answerable.kind_window_min and
kind_window_min_other_language; docs/answering.md, "The number's neighbourhood").

    .venv/bin/python bench/kind_window.py floors --store STORE QUESTIONS.jsonl [more.jsonl …] [--config F]
    # the cross-lingual gap: the same stretch of an English answer against the question asked in English and Russian
    .venv/bin/python bench/kind_window.py gap --store XQUAD_EN_STORE [--n 150]

``floors`` asks each question whose kind is a number or a colour with the rule recording and never declining, and
prints, per floor, how many near misses it would decline more and how many answers it would cost (with the gold
string in the answer), varying the floor for sentences in the question's language and in another one.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from footnote.answer.asked import BOUND_KINDS, asked_kind, kind_windows
from footnote.text import split_sentences

FLOORS = (0.10, 0.16, 0.20, 0.25, 0.30, 0.35, 0.40)


def _engine(store: str) -> Any:
    from footnote.engine import Engine
    from footnote.settings import load_settings

    return Engine.from_settings(load_settings(None, **{"store.url": store}), create=False)


def floors(args: argparse.Namespace) -> int:
    """Each question asked with the rule recording and never declining (both floors at -1): for every chosen
    sentence the other rules pass, the best stretch's cosine as the engine computes it (the subject masked when
    ``kind_window_mask_subject``); a turn is declined at a pair of floors when every such sentence is under its
    floor (the question's language, another)."""
    from footnote.answer.answerable import AnswerCheck
    from footnote.engine import Engine
    from footnote.eval.answers import normalise
    from footnote.settings import load_settings

    over = {"store.url": args.store, "answer.extractive.answerable.kind_window_min": {args.embedder: -1.0},
            "answer.extractive.answerable.kind_window_min_other_language": {args.embedder: -1.0},
            "answer.extractive.answerable.kind_window_mask_subject": not args.no_mask}
    eng = Engine.from_settings(load_settings(args.config, **over), create=False)
    check: AnswerCheck = eng.answerer.ranker.check
    seen: list[tuple[bool, float]] = []  # (same language, near) for the turn's sentences

    def judge(question: str, qlang: str, chosen: Any, subject: Any, *rest: Any, **kw: Any) -> Any:
        for c in chosen[: check.settings.sentences]:  # each sentence on its own: the turn stops at the first
            one = AnswerCheck.judge(check, question, qlang, [c], subject, *rest, **kw)
            if one.answers and one.near is not None:
                seen.append((c.lang == qlang, one.near))
        return AnswerCheck.judge(check, question, qlang, chosen, subject, *rest, **kw)

    check.judge = judge  # type: ignore[method-assign]
    for path in args.questions:
        turns = []  # (answerable, gold in the answer, [(same, near)])
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            q = json.loads(line)
            if asked_kind(q["question"]) not in BOUND_KINDS:
                continue
            seen.clear()
            a = eng.ask(q["question"]).to_dict()
            if a["mode"] != "corpus" or not seen:
                continue
            gold = [normalise(g) for g in q.get("answers", []) if g]
            turns.append((q.get("answerable", True), any(g in normalise(a["answer"]) for g in gold), list(seen)))
        print(f"{Path(path).stem}: {len(turns)} answered turns asking for a number or a colour, held to the rule")

        def line_for(f_same: float, f_other: float, turns: list[Any] = turns) -> str:
            out = [t for t in turns if all(v < (f_same if same else f_other) for same, v in t[2])]
            dec = sum(1 for t in out if not t[0])
            lost = [t for t in out if t[0]]
            return f"+{dec} declined, -{len(lost)} answered ({sum(1 for t in lost if t[1])} gold)"

        print("  floor in the question's language (other at " + f"{args.other}): " + " · ".join(
            f"{f:.2f}: {line_for(f, args.other)}" for f in FLOORS))
        print("  floor in another language (same at " + f"{args.same}): " + " · ".join(
            f"{f:.2f}: {line_for(args.same, f)}" for f in FLOORS))
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
        hits = [s for s in split_sentences(text) if any(a.lower() in s.lower() for a in en["answers"])]
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
    f.add_argument("questions", nargs="+", help="question files (JSON lines with question, answerable, answers)")
    f.add_argument("--store", required=True)
    f.add_argument("--config", default=None, help="a settings file (the demo's: demo/footnote.toml)")
    f.add_argument("--embedder", default="embeddinggemma")
    f.add_argument("--no-mask", action="store_true", help="compare without taking the subject out (the first rule)")
    f.add_argument("--same", type=float, default=0.30, help="the same-language floor while the other one varies")
    f.add_argument("--other", type=float, default=0.21, help="the other-language floor while the same one varies")
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
