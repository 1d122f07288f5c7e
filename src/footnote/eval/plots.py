"""Plots of an evaluation (matplotlib, Agg backend: no display needed).

- ``scores_<lang>.png``: distributions of the gate signal and of the max cosine per category;
- ``roc.png``: the ROC of the gate signal (answerable vs not) per language, AUROC in the legend;
- ``support.svg`` (support_fit): citation-support scores of supported vs unsupported pairs;
- ``judge.svg`` (footnote judge): judge scores per criterion and the citation-support share.
"""

from __future__ import annotations

import importlib.util
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from footnote.eval.metrics import auroc, roc_curve
from footnote.eval.runner import Outcome

log = logging.getLogger(__name__)

#: how to get the plots when matplotlib is missing (it is the ``plots`` extra, in ``make test``'s dev tools)
PLOTS_HINT = "pip install 'footnote[plots]' (matplotlib) for the plots"


def plots_available() -> bool:
    """Whether matplotlib can be imported (the ``plots`` extra); without it reports are written without plots."""
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):  # a blocked or half-installed package
        return False


def _plt():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_score_distributions(path: Path, outcomes: Sequence[Outcome], title: str = "") -> Path:
    """Histograms of ``signal`` and ``max_score`` per category, side by side."""
    plt = _plt()
    cats = sorted({o.question.category for o in outcomes})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, attr, label in ((axes[0], "signal", "gate signal"), (axes[1], "max_score", "max cosine")):
        values = [getattr(o, attr) for o in outcomes if not math.isnan(getattr(o, attr))]
        if not values:
            continue
        lo, hi = min(values), max(values)
        if hi <= lo:
            hi = lo + 1e-3
        bins = [lo + (hi - lo) * i / 30 for i in range(31)]
        for cat in cats:
            v = [getattr(o, attr) for o in outcomes if o.question.category == cat and not math.isnan(getattr(o, attr))]
            if v:
                ax.hist(v, bins=bins, alpha=0.5, label=f"{cat} (n={len(v)})")
        thr = _threshold_of(outcomes, attr)
        if thr is not None:
            ax.axvline(thr, color="k", linestyle="--", linewidth=1, label="bail-out threshold")
        ax.set_xlabel(label)
        ax.set_ylabel("questions")
        ax.legend(fontsize=8)
    fig.suptitle(title or "score distributions per category")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _threshold_of(outcomes: Sequence[Outcome], attr: str) -> float | None:
    """The bail-out threshold the run used, when the pipeline put it in ``extra`` (max cosine only)."""
    for o in outcomes:
        t = o.extra.get("bail_out_threshold") if attr == "max_score" else o.extra.get("signal_threshold")
        if isinstance(t, int | float):
            return float(t)
    return None


def plot_roc(path: Path, outcomes: Sequence[Outcome]) -> Path:
    """ROC of the gate signal per language (answerable = positive)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    for lang in sorted({o.question.lang for o in outcomes}):
        items = [o for o in outcomes if o.question.lang == lang and not math.isnan(o.signal)]
        scores = [o.signal for o in items]
        labels = [o.question.answerable for o in items]
        a = auroc(scores, labels)
        if a is None:
            continue
        fpr, tpr, _ = roc_curve(scores, labels)
        ax.plot(fpr, tpr, label=f"{lang}: AUROC {a:.3f}")
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("false-positive rate (unanswerable answered)")
    ax.set_ylabel("true-positive rate (answerable answered)")
    ax.set_title("gate signal ROC")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(out_dir: Path, outcomes: Sequence[Outcome]) -> list[str]:
    """All plots into ``out_dir``; returns their paths (none, with a warning, without matplotlib)."""
    if not plots_available():
        log.warning("report written without plots: %s", PLOTS_HINT)
        return []
    written: list[str] = []
    for lang in sorted({o.question.lang for o in outcomes}):
        items = [o for o in outcomes if o.question.lang == lang]
        written.append(str(plot_score_distributions(out_dir / f"scores_{lang}.png", items, f"score distributions ({lang})")))
    written.append(str(plot_roc(out_dir / "roc.png", outcomes)))
    return written


def plot_support_distributions(path: Path, rows: Sequence[dict[str, Any]], thresholds: dict[str, float],
                               title: str = "") -> Path:
    """Histograms of the support ``score`` of true-note pairs vs neighbour-note pairs, same-language and
    cross-lingual side by side, with the fitted thresholds (rows as written by support_fit)."""
    plt = _plt()
    groups = (("same_lang", "same language"), ("cross_lang", "cross-lingual"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (group, label) in zip(axes, groups, strict=True):
        rs = [r for r in rows if (r["kind"] in ("ru-en", "en-ru")) == (group == "cross_lang")]
        if not rs:
            ax.set_visible(False)
            continue
        scores = [float(r["score"]) for r in rs]
        lo, hi = min(scores), max(scores)
        bins = [lo + (max(hi, lo + 1e-3) - lo) * i / 40 for i in range(41)]
        for want, name in ((True, "true note"), (False, "neighbour note")):
            v = [float(r["score"]) for r in rs if bool(r["label"]) is want]
            ax.hist(v, bins=bins, alpha=0.55, label=f"{name} (n={len(v)})")
        if group in thresholds:
            ax.axvline(thresholds[group], color="k", linestyle="--", linewidth=1,
                       label=f"threshold {thresholds[group]:.3f}")
        ax.set_xlabel(f"support score ({label})")
        ax.set_ylabel("pairs")
        ax.legend(fontsize=8)
    fig.suptitle(title or "citation-support score distributions")
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)
    return path


def write_judge_plot(path: Path, section: dict[str, Any]) -> Path | None:
    """``judge.svg``: how often each 1–5 score was given per criterion, and the judge's faithfulness
    against the answer's citation-support share (one dot per answer, jittered). ``judge_compare.svg``:
    A wins / ties / B wins. None without matplotlib."""
    if not plots_available():
        log.warning("judge report written without its plot: %s", PLOTS_HINT)
        return None
    plt = _plt()
    rows = [r for r in section.get("per_question", []) if r.get("scores")]
    if "mean" not in section:  # pairwise
        fig, ax = plt.subplots(figsize=(5.5, 3.5))
        labels = ["A wins", "ties", "B wins"]
        counts = [section["a_wins"], section["ties"], section["b_wins"]]
        ax.bar(labels, counts, color=["#4c72b0", "#aaaaaa", "#dd8452"])
        for i, c in enumerate(counts):
            ax.text(i, c, str(c), ha="center", va="bottom")
        ax.set_ylabel("questions")
        ax.set_title(f"judge {section['model']}: A vs B (sign test p = {section['sign_test_p']})", fontsize=9)
        fig.tight_layout()
        fig.savefig(path, format="svg")
        plt.close(fig)
        return path
    crits = list(section["mean"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / max(len(crits), 1)
    for k, crit in enumerate(crits):
        counts = [sum(1 for r in rows if r["scores"][crit]["score"] == v) for v in range(1, 6)]
        axes[0].bar([v + (k - (len(crits) - 1) / 2) * width for v in range(1, 6)], counts, width=width,
                    label=f"{crit} (mean {section['mean'][crit]})")
    axes[0].set_xticks(range(1, 6))
    axes[0].set_xlabel("judge score")
    axes[0].set_ylabel("answers")
    axes[0].legend(fontsize=8)
    pts = [(r["scores"]["faithfulness"]["score"], r["support"]) for r in rows if r.get("support") is not None]
    if pts:
        jit = [((i * 37) % 11 - 5) * 0.025 for i in range(len(pts))]  # deterministic jitter
        axes[1].scatter([f + j for (f, _), j in zip(pts, jit, strict=True)], [s for _, s in pts], alpha=0.6)
        ag = section.get("agreement") or {}
        axes[1].set_title(f"agreement {ag.get('agree')}, Spearman {ag.get('spearman')} (n={len(pts)})", fontsize=9)
    axes[1].set_xticks(range(1, 6))
    axes[1].set_xlim(0.5, 5.5)
    axes[1].set_ylim(-0.05, 1.05)
    axes[1].set_xlabel("judge faithfulness")
    axes[1].set_ylabel("citation support: share of supported sentences")
    fig.suptitle(f"judge {section['model']} on {section['n']} answers")
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)
    return path
