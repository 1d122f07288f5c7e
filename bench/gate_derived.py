"""Fit the derived thresholds (language pairs nobody calibrated) from gate-feature dumps and check them on
questions in languages nobody fitted. Prints, per language of the fresh set: AUROC of the derived signal and of
the plain max cosine, answered in-corpus, abstained off-topic and near-miss at the derived bail_out — and the
same for the thresholds the gate would otherwise borrow (the shipped cross-lingual pair).

    .venv/bin/python bench/gate_features.py --corpus ../shared/eval/xquad/corpus.en.jsonl \
        --questions ../shared/eval/xquad/questions.dev.jsonl --embedder embeddinggemma --out /tmp/g.dev.en.jsonl
    (the same over corpus.ru.jsonl -> /tmp/g.dev.ru.jsonl, and questions.more.dev.jsonl -> /tmp/g.more.jsonl)
    .venv/bin/python bench/gate_derived.py --fit /tmp/g.dev.en.jsonl /tmp/g.dev.ru.jsonl --fresh /tmp/g.more.jsonl \
        --embedder embeddinggemma

Only the fit half (split_half) of the --fit dumps is fitted on; --fresh is only measured.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from footnote.eval.calibration import FitTargets, LabelledSignal, derived_check, fit_derived, format_table
from footnote.eval.metrics import auroc
from footnote.settings import GateThresholds, load_settings


def signals(path: Path) -> list[LabelledSignal]:
    out = []
    for line in path.open(encoding="utf-8"):
        r: dict[str, Any] = json.loads(line)
        out.append(LabelledSignal(
            id=r["id"], lang=r["lang"], pair=f"{r['lang']}-{r['corpus_lang'] or r['lang']}", category=r["category"],
            answerable=r["answerable"], half=r["half"], max_score=r["max_score"], background=r["background"],
            lexical_overlap=r["lexical"], gold_cosine=r["gold_cosine"], sentence=r["sentence"], spread=r["bg_std"],
        ))
    return out


def figures(rows: list[LabelledSignal], t: GateThresholds) -> dict[str, float | None]:
    def share(cat: str, answered: bool) -> float | None:
        rs = [r for r in rows if r.category == cat]
        return sum((r.value_at(t) >= t.bail_out) == answered for r in rs) / len(rs) if rs else None

    return {
        "auroc": auroc([-r.value_at(t) for r in rows], [not r.answerable for r in rows]),
        "auroc_max_cosine": auroc([-r.max_score for r in rows], [not r.answerable for r in rows]),
        "answered": share("in_corpus", True), "abstain_off_topic": share("off_topic", False),
        "abstain_near_miss": share("near_miss", False), "n": float(len(rows)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", nargs="+", type=Path, required=True)
    ap.add_argument("--fresh", nargs="*", type=Path, default=[])
    ap.add_argument("--embedder", default="embeddinggemma", help="whose shipped thresholds to compare against")
    ap.add_argument("--answer-target", type=float, default=FitTargets.answer_target)
    ap.add_argument("--background", action=argparse.BooleanOptionalAction, default=None,
                    help="weigh background-subtracted shapes (default: when the mean background reaches "
                    "FitTargets.derived_background_min)")
    args = ap.parse_args(argv)
    targets = FitTargets(answer_target=args.answer_target)
    fit_rows = [r for p in args.fit for r in signals(p)]
    derived = fit_derived(fit_rows, targets, background=args.background)
    if derived is None:
        raise SystemExit("no pair has enough rows to fit on")
    print("derived:", json.dumps(derived.model_dump()))
    print("each calibrated pair left out of the fit in turn (what a pair nobody calibrated gets):")
    for line in format_table(derived_check(fit_rows, targets, background=args.background)):
        print(line)
    gate = load_settings().gate
    fresh = [r for p in args.fresh for r in signals(p)]
    cols = ("auroc", "auroc_max_cosine", "answered", "abstain_off_topic", "abstain_near_miss", "n")
    if fresh:
        print(f"fresh questions (fitted on nothing): {'pair':>6} {'thresholds':>10} " + " ".join(f"{c:>17}" for c in cols))
    for pair in sorted({r.pair for r in fresh}):
        rs = [r for r in fresh if r.pair == pair]
        q, _, c = pair.partition("-")
        lent = gate.choose(args.embedder, "ru" if q != c else c, c).thresholds  # what an unlisted pair borrowed
        for name, t in (("derived", derived), ("borrowed", lent)):
            f = figures(rs, t)
            print(f"{'':>36}{pair:>6} {name:>10} " + " ".join(
                f"{'–' if f[c] is None else round(float(f[c] or 0.0), 3):>17}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
