"""Aggregate outcomes into the report contract and write ``report.json``, ``report.md`` and plots.

``report.json`` (checks rely on it)::

    {"overall": CELL, "by_category_lang": {"in_corpus/ru": CELL, ...}, "by_lang": {"en": CELL, ...},
     "auroc": {"en": float|null, ...}, "auroc_max_score": {...}, "auroc_by_negative": {...},
     "by_pair": {"ru-en": PAIR, ...},
     "latency_ms": {"stage": {"p50", "p95", "mean"}, ..., "total": {...}},
     "rounds": {"overall": ROUNDS, "by_category_lang": {...}, "auroc_round1": {"en": float|null, ...}},
     "meta": {...}}

    ROUNDS = {"n", "second_round", "skipped", "round_ms_p50", "search_ms_p50_with_round",
              "search_ms_p50_without", "ranks_changed", "top_changed", "verdicts_changed",
              "recall@1", "recall@1_round1"}    (footnote.eval.rounds)

    CELL = {"n", "n_gold", "recall@1", "recall@5", "recall@16", "mrr", "answer_rate", "abstain_rate",
            "abstention_precision", "abstention_recall", "crag", "signal_p50", "max_score_p50", "errors"}

    PAIR = {"n", "n_gold", "recall@1", "recall@1_dense", "mrr", "mrr_dense", "auroc", "auroc_max_score"}

``by_pair`` puts Footnote's ranking and gate beside plain dense cosine on the same questions, per language
pair (question language - the slate's majority language): ``recall@1_dense`` / ``mrr_dense`` rank the same
slate by cosine alone (``Candidate.score``), ``auroc_max_score`` is the plain max cosine's AUROC; so whether
fusion and the gate signal add evidence over dense alone is visible in every report (null when not measured:
lexical-only search).

Recall and MRR are over the cell's questions that have gold ids (null when it has none); CRAG is over
all of them: abstained 0, answered with a gold source among the notes +1, answered otherwise −1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from footnote.eval.metrics import abstention_pr, auroc, crag_points, mean, mrr, percentile, recall_at_k
from footnote.eval.metrics import rounded as _r
from footnote.eval.rounds import auroc_round1, rounds_cell
from footnote.eval.runner import Outcome

RECALL_KS = (1, 5, 16)


def cell_metrics(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The metrics of one cell (any subset of outcomes)."""
    n = len(outcomes)
    gold = [o for o in outcomes if o.question.gold]
    ranks = [o.rank for o in gold]
    abst = [o.abstained for o in outcomes]
    prec, rec = abstention_pr(abst, [o.question.answerable for o in outcomes])
    answered = sum(1 for a in abst if not a)
    crag = mean([float(crag_points(o.question.answerable, o.abstained, o.supported)) for o in outcomes])
    sig = [o.signal for o in outcomes if not math.isnan(o.signal)]
    mx = [o.max_score for o in outcomes if not math.isnan(o.max_score)]
    cell: dict[str, Any] = {"n": n, "n_gold": len(gold)}
    for k in RECALL_KS:
        cell[f"recall@{k}"] = _r(recall_at_k(ranks, k))
    cell.update(
        {
            "mrr": _r(mrr(ranks)),
            "answer_rate": _r(answered / n if n else None),
            "abstain_rate": _r((n - answered) / n if n else None),
            "abstention_precision": _r(prec),
            "abstention_recall": _r(rec),
            "crag": _r(crag),
            "signal_p50": _r(percentile(sig, 50)),
            "max_score_p50": _r(percentile(mx, 50)),
            "errors": sum(1 for o in outcomes if o.error),
        }
    )
    return cell


def _group(outcomes: Iterable[Outcome], key: str) -> dict[str, list[Outcome]]:
    out: dict[str, list[Outcome]] = {}
    for o in outcomes:
        k = o.question.cell if key == "cell" else o.question.lang
        out.setdefault(k, []).append(o)
    return dict(sorted(out.items()))


def _auroc_of(outcomes: Sequence[Outcome], attr: str) -> float | None:
    pairs = [(getattr(o, attr), o.question.answerable) for o in outcomes if not math.isnan(getattr(o, attr))]
    return _r(auroc([p[0] for p in pairs], [p[1] for p in pairs]))


def pair_metrics(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Fused against plain dense cosine on the same questions (see the module docstring, PAIR)."""
    gold = [o for o in outcomes if o.question.gold]
    measured = [o for o in gold if o.dense_rank != 0]
    dense = [o.dense_rank for o in measured]
    return {
        "n": len(outcomes), "n_gold": len(gold),
        "recall@1": _r(recall_at_k([o.rank for o in gold], 1)),
        "recall@1_dense": _r(recall_at_k(dense, 1)) if measured else None,
        "mrr": _r(mrr([o.rank for o in gold])),
        "mrr_dense": _r(mrr(dense)) if measured else None,
        "auroc": _auroc_of(outcomes, "signal"),
        "auroc_max_score": _auroc_of(outcomes, "max_score"),
    }


def _by_pair(outcomes: Iterable[Outcome]) -> dict[str, list[Outcome]]:
    out: dict[str, list[Outcome]] = {}
    for o in outcomes:
        out.setdefault(o.pair or o.question.lang, []).append(o)
    return dict(sorted(out.items()))


def latency(outcomes: Sequence[Outcome]) -> dict[str, dict[str, float | None]]:
    """p50/p95/mean milliseconds per trace stage, plus ``total`` (the whole search call)."""
    stages: dict[str, list[float]] = {}
    for o in outcomes:
        if o.error:
            continue
        for name, ms in o.stage_ms.items():
            stages.setdefault(name, []).append(ms)
        stages.setdefault("total", []).append(o.total_ms)
    return {
        name: {"p50": _r(percentile(v, 50), 3), "p95": _r(percentile(v, 95), 3), "mean": _r(mean(v), 3)}
        for name, v in stages.items()
    }


def build_report(outcomes: Sequence[Outcome], meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The whole report as a JSON-ready dict (see the module docstring)."""
    by_lang = _group(outcomes, "lang")
    auroc_by_negative: dict[str, dict[str, float | None]] = {}
    for lang, items in by_lang.items():
        pos = [o for o in items if o.question.answerable]
        negs = sorted({o.question.category for o in items if not o.question.answerable})
        auroc_by_negative[lang] = {
            cat: _auroc_of(pos + [o for o in items if o.question.category == cat and not o.question.answerable], "signal")
            for cat in negs
        }
    return {
        "overall": cell_metrics(outcomes),
        "by_category_lang": {k: cell_metrics(v) for k, v in _group(outcomes, "cell").items()},
        "by_lang": {k: cell_metrics(v) for k, v in by_lang.items()},
        "auroc": {lang: _auroc_of(items, "signal") for lang, items in by_lang.items()},
        "auroc_max_score": {lang: _auroc_of(items, "max_score") for lang, items in by_lang.items()},
        "auroc_by_negative": auroc_by_negative,
        "by_pair": {k: pair_metrics(v) for k, v in _by_pair(outcomes).items()},
        "latency_ms": latency(outcomes),
        "rounds": rounds_report(outcomes),
        "meta": dict(meta or {}),
    }


def rounds_report(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The second round's cost and effect per category/language cell and overall, and the AUROC of
    the signal round one left (see :mod:`footnote.eval.rounds`)."""
    def cell(items: Sequence[Outcome]) -> dict[str, Any]:
        return rounds_cell([o.round_effect for o in items], [o.rank for o in items],
                           [bool(o.question.gold) for o in items], [o.total_ms for o in items])

    ok = [o for o in outcomes if not o.error]
    return {
        "overall": cell(ok),
        "by_category_lang": {k: cell(v) for k, v in _group(ok, "cell").items()},
        "auroc_round1": {
            lang: auroc_round1([o.signal for o in items], [o.round_effect for o in items],
                               [o.question.answerable for o in items])
            for lang, items in _group(ok, "lang").items()
        },
    }


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def _abstention_lines(ab: Any) -> list[str]:
    """The answers' abstention reasons: how many answers of each cell abstained for each reason."""
    if not isinstance(ab, Mapping):
        return []
    rows: list[tuple[str, Mapping[str, int]]] = [("**overall**", ab.get("overall", {})), *ab.get("by_category_lang", {}).items()]
    reasons = list(dict.fromkeys(r for _, counts in rows for r in counts))
    if not reasons:
        return []
    out = ["", "### Abstention reasons", "", "| cell | " + " | ".join(reasons) + " |", "| --- |" + " ---: |" * len(reasons)]
    out += [f"| {name} | " + " | ".join(str(counts.get(r, 0)) for r in reasons) + " |" for name, counts in rows]
    return out


def render_markdown(report: Mapping[str, Any], plots: Sequence[str] = ()) -> str:
    """A readable report: the cells table, AUROC, latency, and the plots."""
    meta = report.get("meta", {})
    lines = ["# Footnote evaluation", ""]
    for k in ("questions", "corpus", "embedder", "reranker", "store", "thresholds", "started", "seconds"):
        if k in meta:
            lines.append(f"- **{k}**: `{meta[k]}`")
    cols = ["n", "recall@1", "recall@5", "recall@16", "mrr", "answer_rate", "abstain_rate", "crag",
            "abstention_precision", "abstention_recall", "signal_p50", "max_score_p50"]
    lines += ["", "## Retrieval and abstention", "", "| cell | " + " | ".join(cols) + " |",
              "| --- |" + " ---: |" * len(cols)]
    rows: list[tuple[str, Mapping[str, Any]]] = [("**overall**", report["overall"])]
    rows += [(f"{k} (all)", v) for k, v in report.get("by_lang", {}).items()]
    rows += list(report["by_category_lang"].items())
    for name, cell in rows:
        lines.append(f"| {name} | " + " | ".join(_fmt(cell.get(c)) for c in cols) + " |")
    lines += ["", "## Abstention AUROC of the gate signal", "", "| lang | signal | max cosine | by negative category |",
              "| --- | ---: | ---: | --- |"]
    for lang, v in report["auroc"].items():
        neg = ", ".join(f"{c}: {_fmt(x)}" for c, x in report.get("auroc_by_negative", {}).get(lang, {}).items())
        lines.append(f"| {lang} | {_fmt(v)} | {_fmt(report.get('auroc_max_score', {}).get(lang))} | {neg} |")
    pairs = report.get("by_pair", {})
    if pairs:
        pcols = ["n_gold", "recall@1", "recall@1_dense", "mrr", "mrr_dense", "auroc", "auroc_max_score"]
        lines += ["", "## Against dense cosine alone (same questions, per language pair)", "",
                  "recall@1 / MRR of the ranking against the same slate ordered by cosine alone; AUROC of the gate "
                  "signal against plain max cosine.", "", "| pair | " + " | ".join(pcols) + " |",
                  "| --- |" + " ---: |" * len(pcols)]
        for pair, cell in pairs.items():
            lines.append(f"| {pair} | " + " | ".join(_fmt(cell.get(c)) for c in pcols) + " |")
    lines += ["", "## Latency (ms)", "", "| stage | p50 | p95 | mean |", "| --- | ---: | ---: | ---: |"]
    for stage, v in report["latency_ms"].items():
        lines.append(f"| {stage} | {_fmt(v.get('p50'))} | {_fmt(v.get('p95'))} | {_fmt(v.get('mean'))} |")
    rounds = report.get("rounds")
    if isinstance(rounds, Mapping) and "overall" in rounds:
        rcols = [c for c in rounds["overall"] if c != "n"]
        lines += ["", "## Second round: cost and effect", "", "| cell | n | " + " | ".join(rcols) + " |",
                  "| --- | ---: |" + " ---: |" * len(rcols)]
        for name, cell in [("**overall**", rounds["overall"]), *rounds.get("by_category_lang", {}).items()]:
            lines.append(f"| {name} | {_fmt(cell.get('n'))} | " + " | ".join(_fmt(cell.get(c)) for c in rcols) + " |")
        lines.append("")
        lines.append("AUROC of round one's signal: " + ", ".join(
            f"{k} {_fmt(v)}" for k, v in rounds.get("auroc_round1", {}).items()))
    answers = report.get("answers")
    if isinstance(answers, Mapping) and "overall" in answers:
        acols = [c for c in answers["overall"] if c != "n"]
        lines += ["", "## Answers", "", "| cell | n | " + " | ".join(acols) + " |", "| --- | ---: |" + " ---: |" * len(acols)]
        arows = [("**overall**", answers["overall"]), *answers.get("by_category_lang", {}).items()]
        for name, cell in arows:
            lines.append(f"| {name} | {_fmt(cell.get('n'))} | " + " | ".join(_fmt(cell.get(c)) for c in acols) + " |")
        lines += _abstention_lines(answers.get("abstentions"))
    if plots:
        lines += ["", "## Plots", ""]
        lines += [f"![{Path(p).stem}]({Path(p).name})" for p in plots]
    lines += ["", "CRAG: abstained 0, answered with a gold source among the notes +1, answered otherwise −1. "
              "Recall/MRR over questions with gold ids.", ""]
    return "\n".join(lines)


def write_report(out_dir: Path, outcomes: Sequence[Outcome], meta: Mapping[str, Any] | None = None,
                 *, plots: bool = True, sections: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write ``report.json``, ``report.md``, ``questions.jsonl`` and the PNG plots into ``out_dir``.
    ``sections`` are extra top-level entries of ``report.json`` (e.g. ``"answers"``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report = build_report(outcomes, meta)
    report.update(dict(sections or {}))
    written: list[str] = []
    if plots:
        from footnote.eval.plots import write_plots

        written = write_plots(out_dir, outcomes)
    report["plots"] = [Path(p).name for p in written]
    (out_dir / "report.json").write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    (out_dir / "report.md").write_text(render_markdown(report, written), encoding="utf-8")
    with (out_dir / "questions.jsonl").open("w", encoding="utf-8") as f:
        for o in outcomes:
            f.write(json.dumps(o.to_dict(), ensure_ascii=False) + "\n")
    return report
