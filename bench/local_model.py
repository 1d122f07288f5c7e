"""The whole ladder with the local model writing (issue 39 §5): what support-or-drop shows and drops.

    make llm-local                                   # xllamacpp + Qwen2.5-Coder-1.5B (once, < 1 min)
    .venv/bin/python bench/local_model.py --per-cell 15 --out /tmp/footnote-local
    .venv/bin/python bench/local_model.py --report /tmp/footnote-local   # figures again, no model calls

1. A sample of xquad dev (``../shared/eval/xquad/questions.dev.jsonl``): ``--per-cell`` questions of each of
   in-corpus and near-miss, English and Russian (the first by a hash of their ids: nothing chosen by hand),
   against the English corpus.
2. ``footnote eval --answers`` runs them with ``models.synthesizer = llama-cpp://qwen2.5-coder-1.5b`` (the
   extractive planner chooses the sentences, the model writes) and ``support.on_unsupported = "flag"``: every
   sentence the model wrote is kept and judged, so one run shows both what the default ("drop") would show —
   the sentences judged supported — and what it would drop.
3. Prints per cell: how each turn ended, the model's sentences (judged supported / would be dropped, and why),
   answers in the reader's language, latency p50/p95; and writes ``sentences.md``: every model sentence with its
   verdict and the passages it cites, for a reader to mark the check's errors (a dropped sentence the passages
   do support; a kept one they do not). Those marks are the figures' last column: ``--marks FILE`` (JSON Lines
   ``{"id", "i", "supported": bool}``, ``i`` the sentence's index in its answer) folds them in, and says what the
   sentence check (``support.model_check``, on when ``models.answer_check`` is set: the run sets it unless
   ``--no-check``) dropped rightly and wrongly. ``bench/marks/`` holds one reader's marks of the runs in
   docs/answering.md ("Measured again with the sentence check"): a later run marks its own sentences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

from footnote.answer.units import split_units
from footnote.eval.metrics import percentile
from footnote.records.lang import detect_lang

ROOT = Path(__file__).resolve().parents[1]
XQUAD = ROOT.parent / "shared" / "eval" / "xquad"
CITE = re.compile(r"\[\d+\]")
CONFIG = """\
[models.synthesizer]
base_url = "llama-cpp://{model}"
max_tokens = 200
timeout_s = 600

[answer]
turn_timeout_s = 900

[support]
on_unsupported = "flag"
"""
CHECK = """
[models.answer_check]
base_url = "llama-cpp://{model}"
timeout_s = 600
"""


def sample(questions: Path, per_cell: int, salt: str = "") -> list[dict[str, Any]]:
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for line in questions.read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if q["category"] in ("in_corpus", "near_miss") and q["lang"] in ("en", "ru"):
            cells[(q["category"], q["lang"])].append(q)
    out: list[dict[str, Any]] = []
    for key in sorted(cells):
        out += sorted(cells[key], key=lambda q: hashlib.sha1((salt + q["id"]).encode()).hexdigest())[:per_cell]
    return out


def run(ns: argparse.Namespace) -> Path:
    out: Path = ns.out
    out.mkdir(parents=True, exist_ok=True)
    qs = sample(ns.xquad / "questions.dev.jsonl", ns.per_cell, ns.salt)
    if ns.skip:  # another sample's ids: a held-out run takes none of them
        seen = {json.loads(x)["id"] for x in ns.skip.read_text(encoding="utf-8").splitlines() if x.strip()}
        qs = [q for q in qs if q["id"] not in seen]
    (out / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8")
    (out / "local.toml").write_text(CONFIG.format(model=ns.model) + ("" if ns.no_check else CHECK.format(model=ns.model)),
                                    encoding="utf-8")
    cmd = [str(ROOT / ".venv/bin/footnote"), "eval", "--config", str(out / "local.toml"),
           "--corpus", str(ns.xquad / "corpus.en.jsonl"), "--questions", str(out / "questions.jsonl"),
           "--answers", "--out", str(out / "run"), "--no-plots", "--no-progress"]
    if ns.store:
        cmd += ["--store", ns.store]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    return out


def _lang_of(text: str) -> str:
    return detect_lang(CITE.sub("", text), default="?")


def _judged(r: dict[str, Any], min_yes: float) -> list[dict[str, Any]]:
    """A turn's model sentences as the server judged them (the synthesize stage's ``judged``, in order: the support
    rules' verdict and the sentence check's p(yes)), each with its text: the run flags rather than drops, so the
    answer's cited units are those sentences. ``min_yes`` re-applies the sentence check's floor."""
    a = r["extra"]["answer"]
    judged = a.get("judged") or []
    if not judged:  # the model's answer was not used (it cited nothing, or failed): the extractive answer shown
        return []
    units = [u.strip() for u in split_units(a.get("text") or "") if CITE.search(u) and re.search(r"[^\W\d_]", CITE.sub("", u))]
    if len(units) != len(judged):
        print(f"  ! {r['id']}: {len(units)} cited units in the answer, {len(judged)} judged; sentences left out")
        return []
    out = []
    for u, j in zip(units, judged, strict=True):
        why = [w for w in j.get("why") or [] if w != "model"]
        p = (j.get("check") or {}).get("p_yes")
        if not why and isinstance(p, (int, float)) and p < min_yes:
            why.append("model")
        out.append({"sentence": CITE.sub("", u).strip(), "supported": not why, "missing": why,
                    "p_yes": float(p) if isinstance(p, (int, float)) else None})
    return out


def _check_summary(sents: list[tuple[dict[str, Any], int, dict[str, Any]]], marks: dict[tuple[str, int], bool],
                   min_yes: float) -> None:
    """What the reader's marks say of the whole check and of the sentence check's part in it."""
    marked = [(x, marks[(r["id"], i)]) for r, i, x in sents if (r["id"], i) in marks]
    good = [x for x, ok in marked if ok]
    print(f"\nmarked sentences: {len(marked)}; supported by the reader's marks {len(good)}; shown but not supported "
          f"{sum(1 for x, ok in marked if x['supported'] and not ok)}; supported but dropped "
          f"{sum(1 for x, ok in marked if ok and not x['supported'])} of {len(good)}")
    asked = [(float(x["p_yes"]), ok) for x, ok in marked if isinstance(x.get("p_yes"), float)]
    if asked:
        pos = [p for p, ok in asked if ok]
        neg = [p for p, ok in asked if not ok]
        auc = (sum((p > q) + 0.5 * (p == q) for p in pos for q in neg) / (len(pos) * len(neg))) if pos and neg else None
        print(f"sentence check (floor {min_yes}): asked of {len(asked)} the rules kept ({len(neg)} not supported); "
              f"dropped {sum(1 for p, ok in asked if p < min_yes and not ok)} rightly, "
              f"{sum(1 for p, ok in asked if p < min_yes and ok)} wrongly; "
              f"AUROC of p(yes) {'-' if auc is None else f'{auc:.3f}'}")


def report(out: Path, marks_file: Path | None, min_yes: float = 0.5) -> None:
    rows = [json.loads(x) for x in (out / "run" / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    golds = {q["id"]: q.get("answers") or [] for q in map(json.loads, (out / "questions.jsonl").read_text(
        encoding="utf-8").splitlines())}
    marks: dict[tuple[str, int], bool] = {}
    if marks_file is not None:
        for line in marks_file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                m = json.loads(line)
                marks[(m["id"], int(m["i"]))] = bool(m["supported"])
    cells: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        cells[f"{r['category']}/{r['lang']}"].append(r)
        cells["all"].append(r)
    md = ["# The local model's sentences, judged\n"]
    print(f"{'cell':<16} {'n':>3} {'model':>5} {'shown':>5} {'keep':>5} {'drop':>5} {'by mdl':>6} {'empty':>5} "
          f"{'in-lang':>7} {'p50 s':>6} {'p95 s':>6} {'gold':>5}  marked: dropped-but-supported / kept-but-not")
    for name in sorted(cells, key=lambda c: (c == "all", c)):
        rs = cells[name]
        model_rows = [r for r in rs if r["extra"]["answer"].get("judged")]  # the model's answer shown (judged)
        sents = [(r, i, s) for r in model_rows for i, s in enumerate(_judged(r, min_yes))]
        keep = [x for x in sents if x[2]["supported"]]
        drop = [x for x in sents if not x[2]["supported"]]
        by_model = sum(1 for x in drop if "model" in x[2].get("missing", []))
        empty = sum(1 for r in model_rows if r["extra"]["answer"]["mode"] == "corpus"
                    and not any(s["supported"] for s in _judged(r, min_yes)))
        shown = [r for r in rs if r["extra"]["answer"]["mode"] == "corpus"]
        in_lang = sum(1 for r in shown if _lang_of(r["extra"]["answer"]["text"]) == r["lang"])
        ms = [r["extra"]["answer"]["ms"] / 1000 for r in model_rows]
        gold = sum(1 for r in rs if r["extra"]["answer"]["correct"])
        wrong_drop = sum(1 for r, i, _ in drop if marks.get((r["id"], i)) is True)
        wrong_keep = sum(1 for r, i, _ in keep if marks.get((r["id"], i)) is False)
        marked = sum(1 for r, i, _ in sents if (r["id"], i) in marks)
        p50 = f"{percentile(ms, 50) or 0:.0f}" if ms else "-"
        p95 = f"{percentile(ms, 95) or 0:.0f}" if ms else "-"
        print(f"{name:<16} {len(rs):>3} {len(model_rows):>5} {len(shown):>5} {len(keep):>5} {len(drop):>5} {by_model:>6} {empty:>5} "
              f"{in_lang:>3}/{len(shown):<3} {p50:>6} {p95:>6} {gold:>5}  "
              + (f"{wrong_drop}/{len(drop)} · {wrong_keep}/{len(keep)} ({marked} of {len(sents)} marked)" if marks else "-"))
    if marks:
        _check_summary([(r, i, x) for r in rows if r["extra"]["answer"].get("judged")
                        for i, x in enumerate(_judged(r, min_yes))], marks, min_yes)
    ends: dict[str, int] = defaultdict(int)
    for r in rows:
        a = r["extra"]["answer"]
        ends[f"{r['category']}/{r['lang']}: {a['mode']}{' (' + a['abstention'] + ')' if a.get('abstention') else ''}"] += 1
    print("\nhow turns ended:")
    for k, v in sorted(ends.items()):
        print(f"  {v:>3}  {k}")
    for r in rows:
        a = r["extra"]["answer"]
        sup = _judged(r, min_yes)
        if not a["model_calls"] or not sup:
            continue
        md.append(f"## {r['id']} ({r['category']}, {r['lang']}): {a['question']}\n")
        md.append(f"gold: {', '.join(map(str, golds.get(r['id'], [])))}\n")
        for i, s in enumerate(sup):
            why = "" if s["supported"] else f" — would be dropped ({', '.join(s['missing'])})"
            p = f" (p_yes {s['p_yes']:.3f})" if isinstance(s.get("p_yes"), float) else ""
            md.append(f"- [{i}] {'kept' if s['supported'] else 'DROP'}{why}{p}: {s['sentence']}")
        for p in a.get("passages", []):
            md.append(f"  - passage [{p['n']}]: {p['text'][:700]}")
        md.append("")
    (out / "sentences.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    print(f"\nevery model sentence with its verdict and passages: {out / 'sentences.md'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("/tmp/footnote-local"))
    ap.add_argument("--per-cell", type=int, default=15)
    ap.add_argument("--salt", default="", help="Prefix of the ids hashed to choose the sample ('' : the first run's).")
    ap.add_argument("--skip", type=Path, default=None, help="questions.jsonl of an earlier run: leave its ids out.")
    ap.add_argument("--no-check", action="store_true",
                    help="Without models.answer_check (no answer-level model step, no sentence check).")
    ap.add_argument("--xquad", type=Path, default=XQUAD)
    ap.add_argument("--store", default="", help="An xquad English store built with embeddinggemma (saves ~10 min).")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--report", type=Path, default=None, help="Only print the figures of an earlier --out.")
    ap.add_argument("--marks", type=Path, default=None)
    ap.add_argument("--min-yes", type=float, default=0.5,
                    help="The sentence check's floor the figures apply (support.model_min_yes_default).")
    ns = ap.parse_args()
    if ns.report is None:
        run(ns)
    report(ns.report or ns.out, ns.marks, ns.min_yes)


if __name__ == "__main__":
    main()
