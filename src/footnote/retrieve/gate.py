"""The coverage gate: plain comparisons, no model call.

The seed's three functions, over a :class:`Coverage` (the gate's inputs) and the thresholds
configured for the embedder and language pair (``settings.gate.thresholds(...)``). The value
compared is ``Coverage.value`` — the "do we know this?" signal (see :func:`signal_value`); with
``background_weight = 0`` and ``lexical_weight = 0`` it is the seed's max cosine exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from footnote.retrieve.types import Verdict
from footnote.settings import GateThresholds


@dataclass(frozen=True)
class Coverage:
    """What the gate looks at: the signal value, the max cosine of the ranked set and the lecture
    chunks in it; ``extra`` holds every other input, shown in the trace."""

    value: float
    max_score: float
    lecture_count: int
    extra: dict[str, float] = field(default_factory=dict)
    exact_address: bool = False  # a note sits at an address the question names exactly ("HB 3.2")
    missing_address: bool = False  # the question is only an address, and the corpus has no such one ("BG 19.5")


def is_coverage_sufficient(c: Coverage, t: GateThresholds) -> bool:
    """A solid pool: signal ≥ sufficient and ≥ ``min_lectures`` lecture chunks."""
    if c.value < t.sufficient:
        return False
    return c.lecture_count >= t.min_lectures


def is_coverage_good_enough(c: Coverage, t: GateThresholds) -> bool:
    """Sufficient, or one confident hit on its own (signal ≥ good_enough): stop searching early."""
    if is_coverage_sufficient(c, t):
        return True
    return c.value >= t.good_enough or c.exact_address


def should_bail_out(c: Coverage, t: GateThresholds) -> bool:
    """Nothing close (signal < bail_out), or an address-only question whose address the corpus does not
    hold: no second round, no query-regeneration call. An exact address hit never bails out."""
    if c.exact_address:
        return False
    return c.missing_address or c.value < t.bail_out


def decide(c: Coverage, t: GateThresholds) -> Verdict:
    """The verdict, in the seed's order: sufficient, good enough, bail out, else insufficient (a
    missing address is checked first: neighbours of a verse that does not exist are no answer)."""
    if c.missing_address and not c.exact_address:
        return Verdict.BAIL_OUT
    if is_coverage_sufficient(c, t):
        return Verdict.SUFFICIENT
    if is_coverage_good_enough(c, t):
        return Verdict.GOOD_ENOUGH
    if should_bail_out(c, t):
        return Verdict.BAIL_OUT
    return Verdict.INSUFFICIENT


def signal_value(max_score: float, background: float, lexical: float, t: GateThresholds, sentence: float = 0.0,
                 spread: float = 1.0) -> float:
    """The combined "do we know this?" signal: the max cosine, minus ``background_weight`` × the
    question's mean cosine to a fixed sample of the corpus (how close *anything* looks to it), plus
    ``sentence_weight`` × the best question–sentence cosine inside the top fragments — divided by the
    question's background ``spread`` (the standard deviation of those cosines) when the thresholds are
    ``spread_normalised`` — plus ``lexical_weight`` × the rare-term overlap of the best same-language candidate."""
    dense = max_score - t.background_weight * background + t.sentence_weight * sentence
    if t.spread_normalised:
        dense /= max(spread, 1e-6)
    return dense + t.lexical_weight * lexical


def thresholds_dict(t: GateThresholds) -> dict[str, float]:
    return {k: float(v) for k, v in t.model_dump().items() if isinstance(v, int | float)}


_STRENGTH = {Verdict.BAIL_OUT: 0, Verdict.INSUFFICIENT: 1, Verdict.GOOD_ENOUGH: 2, Verdict.SUFFICIENT: 3}


def stronger(a: Verdict, b: Verdict) -> Verdict:
    """The more confident of two verdicts. Used while a store is partly embedded: fragments without a
    vector yet are judged by the lexical-only gate, the rest by the dense one, and a lexical hit on an
    unembedded fragment is not overruled by a dense miss it could not have had."""
    return a if _STRENGTH[a] >= _STRENGTH[b] else b
