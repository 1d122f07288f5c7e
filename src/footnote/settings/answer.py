"""``answer``: planning, extractive answers, synthesis, citations and fallback."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from footnote.settings.base import _Frozen
from footnote.settings.extractive import ExtractiveSettings


class AnswerSettings(_Frozen):
    section = "answer"
    enable_corpus_fallback: bool = Field(False, description="Answer from general knowledge (with a disclaimer) on corpus_insufficient.")
    max_notes_for_planner: int = Field(16, description="Notes shown to the outline planner.")
    fallback_probes_min: int = Field(3, description="Fallback re-search probes, at least.")
    fallback_probes_max: int = Field(5, description="Fallback re-search probes, at most.")
    max_question_chars: int = Field(2_000, description="Longest question accepted.")
    fallback_on_bail_out: bool = Field(
        False,
        description="Also summon the fallback model when the gate bails out. Off: a bail-out costs no model "
        "call at all (the fallback then runs only when the planner finds the notes insufficient).",
    )
    on_model_failure: Literal["extractive", "error"] = Field(
        "extractive",
        description="After a planner/synthesizer call fails its bounded retries: answer extractively (and say so "
        "in the trace) or end the turn with the error.",
    )
    planner_attempts: int = Field(2, description="Outline planner calls when its JSON is malformed (then extractive).")
    passage_chars: int = Field(1_200, description="Characters of a passage shown to a model, at most.")
    max_theses: int = Field(5, description="Theses the outline planner may return, at most.")
    max_notes_per_thesis: int = Field(
        4,
        description="Supporting notes kept per thesis, the best-ranked first: a planner that cites every "
        "note for one thesis (small models do) supports nothing in particular.",
    )
    fallback_probe_k: int = Field(8, description="Chunks each fallback probe may bring back.")
    fallback_cite_min_overlap: float = Field(
        0.3, description="Share of a fallback sentence's terms a probe chunk must carry to be cited for it."
    )
    prose_min_title_chars: int = Field(4, description="Source titles shorter than this are not checked in prose.")
    prose_min_variant_words: int = Field(
        3, ge=1, description="A title's shorter forms (no date, no subtitle, no leading label) and a file stem written "
        "with spaces are names in the prose check only with at least this many words (two-word pieces such as "
        "'Harbour Book' or a person's name are words people write).",
    )
    stream_flush_chars: int = Field(
        320, description="Streamed text outside corpus mode is cleaned and shown per sentence, or after this many characters "
        "at most (a corpus answer holds each sentence until it ends: see max_sentence_chars)."
    )
    corpus_description: str = Field(
        "", description="One line on what the corpus covers, told to the fallback model to judge scope."
    )
    turn_timeout_s: float = Field(
        90.0,
        gt=0,
        description="A turn's deadline across all its model calls (router, planner, synthesizer, fallback): past "
        "it, no further model call starts, a running one is cut, and the turn answers with what it has "
        "(extractive), saying so in the trace.",
    )
    max_sentence_chars: int = Field(
        2_000,
        description="In a corpus answer a streamed sentence is held until it ends (its citation may come last); "
        "one longer than this is judged as it stands (shown if cited, else removed).",
    )
    fallback_out_of_scope: str = Field(
        "",
        description="Subjects the fallback model must decline (in_scope false), as a phrase, e.g. 'cooking, sport, "
        "programming code or the news' (the demo's). Empty: the model judges scope from corpus_description alone.",
    )
    citation_meta_keys: tuple[str, ...] = Field(
        ("commentator", "author", "translator", "speaker", "date"),
        description="Front-matter fields of a cited source that each citation carries in `source_meta` (ask --json, "
        "the API's done event, MCP): the chat's chip names a commentary's commentator from it.",
    )
    near_miss_titles: int = Field(
        3,
        ge=0,
        description="A near miss (the answer stage read the retrieved passages and no sentence of them answers: "
        "abstention answer_not_in_passages) names the titles of this many of the top retrieved sources in its "
        "not-found message (\"The closest passages in the corpus come from “X” and “Y”, but none of them answers "
        "this question\"); 0: the generic not-found message.",
    )
    extractive: ExtractiveSettings = Field(
        default_factory=lambda: ExtractiveSettings(),
        description="The extractive answer (no model): which sentences answer, and how they are cited.",
    )
