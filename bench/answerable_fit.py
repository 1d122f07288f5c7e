"""Fit and report the answer-level check's thresholds (answer/answerable.py; docs/answering.md).

The question samples (ids in ``bench/answerable_samples.json``; the data is read from ../shared/eval):

    .venv/bin/python bench/answerable_fit.py sample --out /tmp/samples

Two steps, so a threshold is chosen on some questions and reported on others:

    # 1. collect: answer each question with the check recording (and never declining), one JSON row each
    .venv/bin/python bench/answerable_fit.py collect --store STORE --questions Q.jsonl --out rows.jsonl
    # 2. fit / report: what each (short, long) threshold pair would decline and keep, per set and cell
    .venv/bin/python bench/answerable_fit.py grid rows-fit-1.jsonl rows-fit-2.jsonl
    .venv/bin/python bench/answerable_fit.py report rows-held-out.jsonl --short 0.0 --long -0.03

A row holds, for each judged sentence, every focus word the sentence does not carry verbatim (nor its passage,
nor the collection's subject) with its *drop*: how much less like the sentence the question is without the word.
A question is answered when some judged sentence holds the kind asked and no such word has a drop under the
threshold (``short`` for questions of at most ``--short-words`` focus words, ``long`` otherwise) — exactly the
check the engine runs, so the report is what the shipped settings give. Store: one ingested with the embedder
the thresholds are for (``footnote ingest CORPUS --store STORE``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.answer.answerable import AnswerCheck, Judged, asked_kind, carries_kind, focus_words, without
from footnote.answer.candidates import Cand


class RecordingCheck(AnswerCheck):
    """The engine's check, recording every judged sentence's words and drops; it never declines."""

    def __init__(self, base: AnswerCheck) -> None:
        super().__init__(base.settings, base.embedder, base.scorer)
        self.rows: list[dict[str, Any]] = []

    def judge(self, question: str, qlang: str, chosen: Sequence[Cand], subject: Callable[[str, str], bool],
              vecs: np.ndarray | None = None, passages: Sequence[Any] = (),
              titles: Any = None) -> Judged:
        kind = asked_kind(question)
        focus = focus_words(question)
        cands = []
        for c in chosen[: self.settings.sentences]:
            words = []
            f = c.note.fragment
            section = getattr(f.locator, "section", None) or ""
            note = set(self.scorer.terms(f"{section}\n{f.text}", c.lang))
            head = set(self.scorer.terms(section, c.lang))
            for w in focus:
                lex = self._lexical(w, c) or subject(w, c.lang)
                stems = set(self.scorer.terms(w, c.lang))
                in_note = stems <= note
                in_head = bool(stems) and stems <= head
                drop = imp = None
                if not lex and vecs is not None and c.row >= 0 and c.sim is not None:
                    v, qv = self._queries([without(question, w), question])
                    drop = round(c.sim - float(v @ vecs[c.row]), 5)
                    imp = round(1.0 - float(v @ qv), 5)  # how much of the question the word is
                words.append([w, lex, in_note, drop, in_head, imp])
            cands.append({"carries": carries_kind(c.text, question, kind), "words": words, "sim": c.sim, "lang": c.lang,
                          "text": c.text})
        self.rows.append({"asks": kind.value if kind else None, "focus": focus, "cands": cands, "question": question})
        return Judged(True, kind, tuple(focus), (), True, 1.0, 0)


def collect(args: argparse.Namespace) -> int:
    from footnote.engine import Engine
    from footnote.eval.answers import normalise

    eng = Engine.from_settings(None, create=False, **{"store.url": args.store})
    ranker = eng.answerer.ranker
    rec = RecordingCheck(ranker.check)
    ranker.check = rec
    qs = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    t0 = time.time()
    with Path(args.out).open("w", encoding="utf-8") as out:
        for i, q in enumerate(qs):
            rec.rows.clear()
            a = eng.ask(q["question"]).to_dict()
            gold = [normalise(g) for g in q.get("answers", []) if g]
            text = normalise(a["answer"])
            row = {"id": q["id"], "lang": q["lang"], "category": q["category"], "answerable": q.get("answerable", True),
                   "mode": a["mode"], "reason": (a.get("abstention") or {}).get("reason"),
                   "gold_in_answer": a["mode"] == "corpus" and any(g in text for g in gold),
                   "cites_gold": any(c["source_id"] in set(q.get("gold", [])) for c in a["citations"]),
                   "check": rec.rows[0] if rec.rows else None}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            if i % 25 == 0:
                print(f"{i}/{len(qs)} {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    eng.close()
    return 0


#: The same-language similarity floor ``report`` and ``grid`` apply (answer.extractive.answerable.min_similarity).
MIN_SIMILARITY = 0.40


def answers(row: dict[str, Any], short: float, long: float, short_words: int) -> bool:
    """Whether the shipped rule lets ``row``'s answer through at these thresholds: the kind asked (judged again
    from the recorded question and sentence, when the row has them), the focus words' drops, and the
    same-language similarity floor. (Digits of the question a passage lacks are not recorded; they are rare in
    these sets.)"""
    ch = row["check"]
    if ch is None:
        return True
    floor = short if len(ch["focus"]) <= short_words else long
    kind = asked_kind(ch["question"]) if "question" in ch else None
    for c in ch["cands"]:
        carries = carries_kind(c["text"], ch["question"], kind) if "text" in c else c["carries"]
        if not carries:
            continue
        if c["lang"] == row["lang"] and c["sim"] is not None and c["sim"] < MIN_SIMILARITY:
            continue
        missing = [w for w, lex, in_note, drop, *_ in c["words"] if not lex and not in_note and (
            (drop is None and c["lang"] == row["lang"]) or (drop is not None and drop < floor))]
        if not missing:
            return True
    return False


def table(rows: list[dict[str, Any]], short: float, long: float, short_words: int) -> dict[str, list[int]]:
    """Per category/language: [n, answered now, answered without the check]."""
    cells: dict[str, list[int]] = {}
    for r in rows:
        base = r["mode"] == "corpus"
        now = base and answers(r, short, long, short_words)
        o = cells.setdefault(f"{r['category']}/{r['lang']}", [0, 0, 0])
        o[0] += 1
        o[1] += now
        o[2] += base
    return cells


def _line(name: str, cells: dict[str, list[int]]) -> str:
    parts = []
    for k, (n, now, base) in sorted(cells.items()):
        if k.startswith("in_corpus"):
            parts.append(f"{k} answered {now}/{n} (kind check only: {base})")
        else:
            parts.append(f"{k} declined {n - now}/{n} (kind check only: {n - base})")
    return f"{name}: " + " · ".join(parts)


def _load(paths: Sequence[str]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(Path(p).stem, [json.loads(line) for line in Path(p).read_text(encoding="utf-8").splitlines() if line.strip()])
            for p in paths]


def grid(args: argparse.Namespace) -> int:
    sets = _load(args.rows)
    for short in (0.01, 0.0, -0.01, -0.02, -0.03):
        for long in (0.0, -0.01, -0.02, -0.03, -0.04):
            print(f"short {short:+.2f} long {long:+.2f} | " + " | ".join(
                _line(name, table(rows, short, long, args.short_words)) for name, rows in sets))
    return 0


def report(args: argparse.Namespace) -> int:
    for name, rows in _load(args.rows):
        print(_line(name, table(rows, args.short, args.long, args.short_words)))
    return 0


SAMPLES = Path(__file__).with_name("answerable_samples.json")
#: Which shared question file each sample is drawn from, and the file ``sample`` writes it to.
SAMPLE_FILES = {
    "squad2_en": ("squad2/questions.jsonl", "squad2_en.jsonl"),
    "squad2_pt_fit": ("squad2-pt/questions.jsonl", "squad2_pt_fit.jsonl"),
    "squad2_pt_held_out": ("squad2-pt/questions.jsonl", "squad2_pt_held_out.jsonl"),
    "xquad_dev": ("xquad/questions.dev.jsonl", "xquad_dev.jsonl"),
    "xquad_more": ("xquad/questions.more.dev.jsonl", "xquad_more.jsonl"),
}


def sample(args: argparse.Namespace) -> int:
    """Write the fitted and reported question samples (``answerable_samples.json``: ids only) from ../shared/eval,
    and the squad2-pt corpus subset (its four articles) the Portuguese samples are asked over."""
    ids = json.loads(SAMPLES.read_text(encoding="utf-8"))
    eval_dir, out = Path(args.eval), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for key, (src, name) in SAMPLE_FILES.items():
        rows = {json.loads(line)["id"]: line for line in (eval_dir / src).read_text(encoding="utf-8").splitlines() if line}
        missing = [i for i in ids[key] if i not in rows]
        if missing:
            raise SystemExit(f"{eval_dir / src}: {len(missing)} sample ids not found (first: {missing[0]})")
        (out / name).write_text("".join(rows[i] + "\n" for i in ids[key]), encoding="utf-8")
    titles = set(ids["squad2_pt_titles"])
    corpus = [line for line in (eval_dir / "squad2-pt/corpus.jsonl").read_text(encoding="utf-8").splitlines()
              if line and json.loads(line)["title"] in titles]
    (out / "squad2_pt_corpus.jsonl").write_text("".join(line + "\n" for line in corpus), encoding="utf-8")
    print(f"wrote {len(SAMPLE_FILES) + 1} files to {out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--store", required=True)
    c.add_argument("--questions", required=True)
    c.add_argument("--out", required=True)
    sm = sub.add_parser("sample")
    sm.add_argument("--out", required=True)
    sm.add_argument("--eval", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "eval"))
    for name in ("grid", "report"):
        p = sub.add_parser(name)
        p.add_argument("rows", nargs="+")
        p.add_argument("--short-words", type=int, default=3)
        if name == "report":
            p.add_argument("--short", type=float, default=0.0)
            p.add_argument("--long", type=float, default=-0.03)
    args = ap.parse_args()
    return {"collect": collect, "grid": grid, "report": report, "sample": sample}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
