"""``retrieve.fusion``: the offline ranking's lane weights, in units of each query's cosine spread (docs/retrieval.md)."""

from __future__ import annotations

from pydantic import Field

from footnote.settings.base import _Frozen
from footnote.settings.measured import tables


class FusionWeights(_Frozen):
    """One embedder's offline fusion weights, in units of the query's cosine spread (``retrieve.fusion``)."""

    lexical: float = Field(ge=0.0, description="Normalised lexical evidence, query and fragment in one language.")
    cross_lexical: float = Field(ge=0.0, description="Normalised lexical evidence across languages.")
    trigram: float = Field(ge=0.0, description="Normalised trigram similarity.")
    names: float = Field(ge=0.0, description="Cross-script name evidence (across languages only).")
    fitted_on: str = Field("", description="What the weights were chosen on.")


class FusionSettings(_Frozen):
    section = "retrieve.fusion"
    lexical_weight: float = Field(
        1.0, ge=0.0,
        description="Offline fusion: weight of normalised lexical evidence when query and fragment share a language, "
        "in units of the query's cosine spread (the standard deviation of the pool's cosines to it), so it means "
        "the same on any embedder's cosine scale. The weights of an embedder listed in by_embedder win.",
    )
    cross_lexical_weight: float = Field(
        0.0, ge=0.0,
        description="Offline fusion: weight of lexical evidence across languages, in cosine spreads (a Russian "
        "question over English text matches only numbers and Latin-script names: a lexical ranking across "
        "languages is mostly noise, so it is weighed 0 unless measured otherwise for an embedder).",
    )
    trigram_weight: float = Field(
        3.0, ge=0.0, description="Offline fusion: weight of normalised trigram similarity, in cosine spreads."
    )
    name_weight: float = Field(
        1.0, ge=0.0,
        description="Offline fusion: weight of cross-script name evidence (the question's capitalised names, "
        "transliterated to consonant skeletons, found in a passage in another language), in cosine spreads.",
    )
    by_embedder: dict[str, FusionWeights] = Field(
        default_factory=lambda: {n: FusionWeights.model_validate(t) for n, t in tables("fusion").items()},
        description="Offline fusion weights per embedder (the package's measured tables, fitted on the fit half of xquad dev: "
        "docs/retrieval.md, 'Fusion'); an embedder not listed uses the *_weight fields.",
    )
    min_spread: float = Field(
        0.005, gt=0.0,
        description="Offline fusion: the smallest cosine spread the weights are multiplied by (one candidate, "
        "equal cosines, or no embedder, where the lexical and address evidence alone rank).",
    )
    address_bonus: float = Field(1.0, description="Offline fusion: bonus of an exact address hit (puts it first).")
    address_verse_bonus: float = Field(
        0.5, description="Offline fusion: extra bonus of an exact address hit in the verses group (the verse before its commentaries)."
    )
