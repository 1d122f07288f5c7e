"""The answer-check model's floor (``answer.extractive.answerable.model_min_yes``), read from `footnote eval` runs.

A run with ``models.answer_check`` configured records, for every turn the rules passed, the model's probability
of "yes" (``extra.answer.answer_model`` in its questions.jsonl). Made with the model's floor at 0 (the model
asked, never declining: ``model_min_yes = { "llama-cpp:qwen2.5-coder-1.5b" = 0.0 }``), one run serves every
floor: declining is all a floor changes. For each candidate floor this prints, per run: answerable questions still answered (and with the gold
string in the text), unanswerable ones declined; a turn counts as declined when the rules or the gate declined
it, or its probability is under the floor. ``--fit RUN --max-lost SHARE`` picks the highest floor that costs the
fit run at most that share of its answered answerable questions; the other runs are reported at that floor.

    footnote eval --store SQ --questions Q --answers --no-plots --out RUN --config check0.toml
    .venv/bin/python bench/answer_check_fit.py --fit RUN [OTHER_RUN …] [--max-lost 0.02]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

GRID = [round(0.05 * i, 2) for i in range(1, 14)]


def _rows(run: Path) -> list[dict[str, Any]]:
    path = run / "questions.jsonl" if run.is_dir() else run
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tally(rows: list[dict[str, Any]], floor: float) -> dict[str, int]:
    """Answerable answered (gold in the text), unanswerable declined, at ``floor``."""
    out = {"answerable": 0, "answered": 0, "gold": 0, "unanswerable": 0, "declined": 0, "asked": 0}
    for r in rows:
        a = r.get("extra", {}).get("answer", {})
        p = a.get("answer_model")
        answered = a.get("mode") == "corpus" and (p is None or p >= floor)
        out["asked"] += p is not None
        if r.get("answerable"):
            out["answerable"] += 1
            out["answered"] += answered
            out["gold"] += answered and str(a.get("matched") or "").startswith("answer:")
        else:
            out["unanswerable"] += 1
            out["declined"] += not answered
    return out


def line(name: str, t: dict[str, int]) -> str:
    return (f"{name:<28} answered {t['answered']:>3}/{t['answerable']:<3} (gold {t['gold']:>3})  "
            f"declined {t['declined']:>3}/{t['unanswerable']:<3}  model asked {t['asked']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit", type=Path, required=True, help="the run the floor is read on")
    ap.add_argument("runs", type=Path, nargs="*", help="runs reported at the chosen floor")
    ap.add_argument("--max-lost", type=float, default=0.02,
                    help="share of the fit run's answered answerable questions the floor may cost")
    args = ap.parse_args()
    fit = _rows(args.fit)
    base = tally(fit, 0.0)
    print(f"fit: {args.fit}")
    print(line("  no model (floor 0)", base))
    chosen = 0.0
    for floor in GRID:
        t = tally(fit, floor)
        print(line(f"  floor {floor:.2f}", t))
        if base["answered"] - t["answered"] <= args.max_lost * base["answered"]:
            chosen = floor
    print(f"chosen floor: {chosen:.2f} (costs the fit run at most {args.max_lost:.0%} of its answered answerable)")
    for run in args.runs:
        rows = _rows(run)
        print(line(f"{run.name} · no model", tally(rows, 0.0)))
        print(line(f"{run.name} · floor {chosen:.2f}", tally(rows, chosen)))


if __name__ == "__main__":
    main()
