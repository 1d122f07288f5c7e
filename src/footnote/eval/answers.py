"""Answer-level scoring: is the answer right, cited, or an honest abstention? (CRAG-style)

Two scorings, both reported per language and cell:

- **by string** (``points``): an answer to an unanswerable question is −1; otherwise correct when a
  normalised gold answer string appears in the *answer text itself* (not merely in a cited note — that
  is kept apart as ``in_notes``) and every citation is valid (it resolves to a note of this turn and its
  number is in the answer). +1 correct, 0 abstained (``not_found``/``declined``), −1 otherwise.
- **by source** (``points_by_source``, language-independent): correct when a cited note comes from a
  gold source (the cross-lingual sets' gold strings are in the question's language, not the corpus's).

``make_scorer(engine)`` plugs into ``footnote eval --answers`` (``run_questions(on_result=…)``): it
answers from the search already run, so one retrieval serves both levels. ``python -m
footnote.eval.answers --corpus … --questions …`` runs it standalone and prints the table.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.answer.types import AbstentionReason, Answer, AnswerMode
from footnote.eval.judge import judge_inputs
from footnote.eval.metrics import auroc, mean, percentile
from footnote.eval.metrics import rounded as _r
from footnote.eval.support import SupportScorer, support_cell, support_fields
from footnote.eval.table import aligned
from footnote.text import fold

if TYPE_CHECKING:
    from footnote.engine import Engine
    from footnote.eval.questions import Question
    from footnote.eval.runner import OnResult, Outcome
    from footnote.retrieve.types import SearchResult

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalise(text: str) -> str:
    """SQuAD-style: folded (lower-case, no diacritics, ё→е), punctuation and English articles
    dropped, whitespace collapsed."""
    t = _PUNCT.sub(" ", fold(text))
    t = _ARTICLES.sub(" ", t)
    return " ".join(t.split())


@dataclass(frozen=True)
class AnswerScore:
    points: int  # +1 correct, 0 abstained, −1 otherwise
    correct: bool
    abstained: bool
    citations_valid: bool
    cites_gold: bool
    matched: str | None  # the gold string found, and where ("answer" / "note")
    in_notes: bool = False  # a gold string is in a cited note's text (whether or not in the answer)

    @property
    def points_by_source(self) -> int:
        """CRAG with 'correct' = a cited note comes from a gold source (language-independent)."""
        if self.abstained:
            return 0
        return 1 if (self.cites_gold and self.citations_valid) else -1

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": self.points, "points_by_source": self.points_by_source, "correct": self.correct,
            "abstained": self.abstained, "citations_valid": self.citations_valid, "cites_gold": self.cites_gold,
            "matched": self.matched, "in_notes": self.in_notes,
        }


def citations_valid(answer: Answer) -> bool:
    """Every citation resolves to a note of this turn and is used in the displayed answer."""
    turn_ids = {n.fragment_id for n in answer.trace.notes} if answer.trace is not None else None
    for c in answer.citations:
        if f"[{c.n}]" not in answer.answer:
            return False
        if turn_ids is not None and c.fragment.id not in turn_ids:
            return False
    return True


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


def score_answer(
    answer: Answer, gold_answers: Sequence[str], gold_sources: Collection[str] = (), *, answerable: bool = True
) -> AnswerScore:
    """Score one answer. ``answerable=False`` (near-miss, off-topic, SQuAD 2.0 unanswerable — whose rows may
    still list plausible answers): any answer is −1, an abstention 0."""
    abstained = answer.mode in (AnswerMode.NOT_FOUND, AnswerMode.DECLINED)
    valid = citations_valid(answer)
    cites_gold = answerable and any(c.fragment.source_id in gold_sources for c in answer.citations)
    if abstained:
        return AnswerScore(0, False, True, valid, cites_gold, None)
    if not answerable:
        return AnswerScore(-1, False, False, valid, False, None)
    text = normalise(answer.answer)
    notes = [normalise(c.fragment.text) for c in answer.citations]
    golds = [(g, normalise(g)) for g in gold_answers]
    matched = next((f"answer:{g}" for g, ng in golds if _contains(text, ng)), None)
    in_notes = any(_contains(n, ng) for _, ng in golds for n in notes)
    if matched is None and in_notes:
        matched = next(f"note:{g}" for g, ng in golds if any(_contains(n, ng) for n in notes))
    correct = matched is not None and matched.startswith("answer:") and valid
    return AnswerScore(1 if correct else -1, correct, False, valid, cites_gold, matched, in_notes)


def make_scorer(engine: Engine, *, fallback: bool | None = None) -> OnResult:
    """``on_result`` for ``run_questions``: answer from the search just run, score, keep the figures."""
    support = SupportScorer(engine.settings.support, engine.embedder)

    def on_result(q: Question, result: SearchResult) -> Mapping[str, Any]:
        t0 = time.perf_counter()
        answer: Answer = engine.answer_result(q.question, result, fallback=fallback)
        ms = (time.perf_counter() - t0) * 1000.0
        score = score_answer(answer, q.answers, q.gold, answerable=q.answerable)
        return {"answer": {
            **score.to_dict(), "mode": answer.mode.value, "ms": round(ms, 3), "model_calls": answer.model_calls,
            "abstention": answer.abstention.reason.value if answer.abstention is not None else None,
            "dropped_citations": answer.dropped_citations, "removed_mentions": answer.removed_mentions,
            "n_citations": len(answer.citations), "removed_sentences": answer.removed_sentences,
            "answer_level": answer_level_score(answer), "answer_model": answer_model_score(answer),
            "judged": judged_sentences(answer),
            **support_fields(support, answer), **judge_inputs(q.question, answer),
        }}

    return on_result


def answer_level_score(answer: Answer) -> float | None:
    """The answer-level check's signal for a turn (``answer/answerable.py``): the share of the question's focus
    words the best judged sentence carries, less 1 when it lacks the kind of thing asked or is too unlike the
    question (``close``) — None when the check
    did not judge the turn (the gate bailed out, an address answered, no sentence reached the floors)."""
    judged = answer.trace.answerable() if answer.trace is not None else None
    if judged is None:
        return None
    held = judged.get("carries", True) and judged.get("close", True)
    return float(judged.get("coverage", 0.0)) - (0.0 if held else 1.0)


def answer_model_score(answer: Answer) -> float | None:
    """The answer-check model's probability of "yes" for a turn (``answer/model_check.py``); None when no model
    was asked (none configured, the rules declined first, the model failed)."""
    judged = answer.trace.answerable() if answer.trace is not None else None
    model = judged.get("model") if judged is not None else None
    p = model.get("p_yes") if isinstance(model, Mapping) else None
    return float(p) if isinstance(p, (int, float)) else None


def judged_sentences(answer: Answer) -> list[Mapping[str, Any]]:
    """How the support check judged each model-written sentence, in order (the synthesize stage's ``judged``:
    supported, why not, the check model's word): [] for an extractive answer."""
    return answer.trace.judged() if answer.trace is not None else []


def answer_level_auroc(outcomes: Sequence[Outcome], key: str = "answer_level") -> dict[str, Any]:
    """AUROC of the answer-level signal (answerable questions against the others), among the turns the check
    judged, per language and per negative category (beside the gate's ``auroc``); ``key="answer_model"``: the
    answer-check model's probability of "yes", among the turns it was asked about."""
    by_lang: dict[str, list[tuple[float, bool, str]]] = {}
    for o in outcomes:
        sc = o.extra.get("answer", {}).get(key)
        if sc is not None:
            by_lang.setdefault(o.question.lang, []).append((float(sc), o.question.answerable, o.question.category))
    out: dict[str, Any] = {}
    for lang, pts in sorted(by_lang.items()):
        pos = [p for p in pts if p[1]]
        cats = sorted({p[2] for p in pts if not p[1]})
        out[lang] = {
            "n": len(pts),
            "auroc": _r(auroc([p[0] for p in pts], [p[1] for p in pts])),
            "by_negative": {c: _r(auroc([p[0] for p in pos + [q for q in pts if q[2] == c]],
                                        [p[1] for p in pos + [q for q in pts if q[2] == c]])) for c in cats},
        }
    return out


def _cell(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    rows = [o.extra["answer"] for o in outcomes if "answer" in o.extra]
    n = len(rows)
    ask_ms = [o.total_ms + o.extra["answer"]["ms"] for o in outcomes if "answer" in o.extra]

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    return {
        "n": n,
        "crag": r(mean([float(x["points"]) for x in rows])),
        "crag_by_source": r(mean([float(x["points_by_source"]) for x in rows])),
        "correct_rate": r(mean([1.0 if x["correct"] else 0.0 for x in rows])),
        "abstain_rate": r(mean([1.0 if x["abstained"] else 0.0 for x in rows])),
        "wrong_rate": r(mean([1.0 if x["points"] < 0 else 0.0 for x in rows])),
        "in_notes_rate": r(mean([1.0 if x.get("in_notes") else 0.0 for x in rows])),
        "correct_by_source_rate": r(mean([1.0 if x["points_by_source"] > 0 else 0.0 for x in rows])),
        "wrong_by_source_rate": r(mean([1.0 if x["points_by_source"] < 0 else 0.0 for x in rows])),
        "invalid_citations": sum(1 for x in rows if not x["citations_valid"]),
        "ask_ms_p50": r(percentile(ask_ms, 50)),
        "ask_ms_p95": r(percentile(ask_ms, 95)),
        **support_cell(rows),
    }


def abstention_counts(outcomes: Sequence[Outcome]) -> dict[str, int]:
    """How many answers abstained for each reason (``AbstentionReason`` values; the order of the enum)."""
    got = Counter(o.extra["answer"].get("abstention") for o in outcomes if "answer" in o.extra)
    return {r.value: got[r.value] for r in AbstentionReason if got[r.value]}


def answer_report(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Answer-level figures overall, per category and language, per language; and the count of each
    abstention reason (every answer that is not a corpus answer has one) overall and per category and
    language."""
    cells: dict[str, list[Outcome]] = {}
    langs: dict[str, list[Outcome]] = {}
    for o in outcomes:
        cells.setdefault(o.question.cell, []).append(o)
        langs.setdefault(o.question.lang, []).append(o)
    return {
        "overall": _cell(outcomes),
        "by_lang": {k: _cell(v) for k, v in sorted(langs.items())},
        "by_category_lang": {k: _cell(v) for k, v in sorted(cells.items())},
        "abstentions": {"overall": abstention_counts(outcomes),
                        "by_category_lang": {k: abstention_counts(v) for k, v in sorted(cells.items())}},
        "answer_level_auroc": answer_level_auroc(outcomes),
        "answer_model_auroc": answer_level_auroc(outcomes, "answer_model"),
    }


COLUMNS = ("n", "correct_rate", "abstain_rate", "wrong_rate", "correct_by_source_rate", "wrong_by_source_rate",
           "crag", "crag_by_source", "invalid_citations", "ask_ms_p50", "ask_ms_p95",
           "cite_recall", "cite_precision", "n_unsupported")
_HEADS = {"correct_rate": "gold_in_answer", "abstain_rate": "declined", "wrong_rate": "wrong",
          "correct_by_source_rate": "src_correct", "wrong_by_source_rate": "src_wrong"}


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    def f(x: Any) -> str:
        return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)

    lines = ["answers — by string: the gold string in the answer text (gold_in_answer / declined / wrong); "
             "by source: a cited note from a gold source (src_correct / src_wrong); CRAG of each"]
    rows = [("overall", report["overall"]), *report["by_lang"].items(), *report["by_category_lang"].items()]
    lines += aligned(["cell", *(_HEADS.get(c, c) for c in COLUMNS)],
                     [[name, *(f(cell.get(c)) for c in COLUMNS)] for name, cell in rows])
    ab = report.get("abstentions")
    if isinstance(ab, Mapping):
        lines.append("abstention reasons (answers that are not corpus answers, by reason)")
        for name, counts in [("overall", ab.get("overall", {})), *ab.get("by_category_lang", {}).items()]:
            lines.append(f"{name:<30}" + (" · ".join(f"{r} {n}" for r, n in counts.items()) or "–"))
    for key, title in (("answer_level_auroc", "answer-level check: AUROC of its signal among the turns it judged "
                        "(answerable vs not), beside the gate's"),
                       ("answer_model_auroc", "answer-check model: AUROC of its probability of 'yes' among the turns "
                        "it was asked about")):
        al = report.get(key)
        if isinstance(al, Mapping) and al:
            lines.append(title)
            for lang, cell in al.items():
                negs = " · ".join(f"vs {c} {f(v)}" for c, v in cell.get("by_negative", {}).items())
                lines.append(f"{lang:<6} n {cell.get('n')} auroc {f(cell.get('auroc'))}" + (f" ({negs})" if negs else ""))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone: ingest (cached store under --out), search + answer every question, print the table."""
    from footnote.eval.questions import load_questions
    from footnote.eval.runner import prepare_engine, run_questions
    from footnote.settings import load_settings

    ap = argparse.ArgumentParser(prog="python -m footnote.eval.answers")
    ap.add_argument("--corpus", action="append", required=True, type=Path)
    ap.add_argument("--questions", required=True, type=Path)
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--config", default=None)
    ap.add_argument("--langs", default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", type=Path, default=Path("/tmp/footnote-cache/answers-eval"))
    ap.add_argument("--fallback", action="store_true")
    ns = ap.parse_args(argv)
    overrides = {"embedder.name": ns.embedder} if ns.embedder else {}
    settings = load_settings(ns.config, **overrides)
    langs = [x for x in ns.langs.split(",") if x] if ns.langs else None
    qs = load_questions(ns.questions, langs=langs, limit=ns.limit)
    engine, _ = prepare_engine(settings, ns.corpus, out_dir=ns.out, store_url=None, progress=False)
    with engine:
        outcomes = run_questions(lambda q: engine.search(q), qs, progress=False,
                                 on_result=make_scorer(engine, fallback=True if ns.fallback else None))
    for line in summary_lines(answer_report(outcomes)):
        print(line)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
