"""The fallback (only on ``corpus_insufficient``, behind ``answer.enable_corpus_fallback``, overridable
per turn): the strongest model answers from general knowledge as ``{answer, search_queries, disclaimer,
in_scope}``. Out of scope → a polite decline, no re-search. In scope → re-search on 3–5 derived probes
admitting only chunks with cosine ≥ the embedder's ``fallback_min_score``; a chunk is cited only for an
answer sentence it supports (term overlap ≥ ``answer.fallback_cite_min_overlap``). The disclaimer shown
is painted by the server (``disclaimers.py``); the model's own is ignored."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from footnote.answer.disclaimers import LANG_NAMES
from footnote.answer.extractive import TermScorer, cite_sentence, split_sentences
from footnote.answer.types import Note
from footnote.errors import ModelError
from footnote.models.chat import complete_parsed, extract_json
from footnote.models.protocols import ChatMessage, ChatModel

log = logging.getLogger(__name__)

FALLBACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "search_queries": {"type": "array", "items": {"type": "string"}},
        "disclaimer": {"type": "string"},
        "in_scope": {"type": "boolean"},
    },
    "required": ["answer", "search_queries", "disclaimer", "in_scope"],
}

SYSTEM = (
    "The library's search found nothing on this question. Answer it from your general knowledge, in "
    "{language}, briefly and carefully. {scope}{out_of_scope}Also give {pmin}-{pmax} short search queries (in the "
    "language of the library's texts if you can tell it, else the question's) that would find supporting "
    "passages. A disclaimer that this answer is from general knowledge is already shown to the reader by the "
    "system; do not repeat it in the answer. Do not cite numbers or name documents. Reply with JSON only: "
    '{{"answer": "...", "search_queries": ["..."], "disclaimer": "...", "in_scope": true}}.'
)


@dataclass(frozen=True)
class FallbackReply:
    answer: str
    search_queries: tuple[str, ...]
    disclaimer: str
    in_scope: bool


def fallback_messages(
    question: str, lang: str, corpus_description: str, pmin: int, pmax: int, out_of_scope: str = ""
) -> list[ChatMessage]:
    scope = f"The library covers: {corpus_description}. " if corpus_description else ""
    if out_of_scope:
        rule = f"Questions about {out_of_scope} are out of scope: set in_scope to false for them. "
    else:
        rule = "A question plainly outside the library's subject is out of scope: set in_scope to false for it. "
    system = SYSTEM.format(language=LANG_NAMES.get(lang, "the question's language"), scope=scope, out_of_scope=rule,
                           pmin=pmin, pmax=pmax)
    return [ChatMessage("system", system), ChatMessage("user", question)]


def parse_fallback(reply: str) -> FallbackReply:
    data = extract_json(reply)
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        raise ModelError(f"fallback model: expected {{answer, search_queries, disclaimer, in_scope}}, got {str(data)[:120]!r}")
    queries = data.get("search_queries") or []
    if isinstance(queries, str):
        queries = [queries]
    in_scope = data.get("in_scope", True)
    if isinstance(in_scope, str):
        in_scope = in_scope.strip().lower() not in ("false", "no", "0")
    return FallbackReply(
        answer=data["answer"].strip(),
        search_queries=tuple(str(q).strip() for q in queries if str(q).strip()),
        disclaimer=str(data.get("disclaimer") or ""),
        in_scope=bool(in_scope),
    )


def ask_fallback(
    model: ChatModel, question: str, lang: str, *, corpus_description: str, pmin: int, pmax: int, attempts: int,
    out_of_scope: str = "",
) -> FallbackReply:
    messages = fallback_messages(question, lang, corpus_description, pmin, pmax, out_of_scope)
    reply, _ = complete_parsed(model, messages, parse_fallback, json_schema=FALLBACK_SCHEMA, attempts=attempts)
    return reply


def probes(question: str, reply: FallbackReply, pmin: int, pmax: int) -> list[str]:
    """3–5 probes: the model's queries, padded with the question and the answer's first sentences."""
    out = list(dict.fromkeys(reply.search_queries))[:pmax]
    for extra in [question, *split_sentences(reply.answer)]:
        if len(out) >= pmin:
            break
        if extra and extra not in out:
            out.append(extra)
    return out[:pmax]


def attach_citations(
    answer: str, lang: str, notes: Sequence[Note], scorer: TermScorer, min_overlap: float
) -> tuple[str, list[int]]:
    """Append ``[n]`` to each answer sentence a probe note supports (term overlap), nothing otherwise."""
    if not notes:
        return answer, []
    note_terms = [(n, set(scorer.terms(n.fragment.text, n.fragment.lang or lang))) for n in notes]
    pieces: list[str] = []
    used: list[int] = []
    for sent in split_sentences(answer):
        best: tuple[float, int] | None = None
        for note, terms in note_terms:
            sterms = set(scorer.terms(sent, note.fragment.lang or lang))
            if not sterms:
                continue
            share = len(sterms & terms) / len(sterms)
            if share >= min_overlap and (best is None or share > best[0]):
                best = (share, note.n)
        if best is not None:
            pieces.append(cite_sentence(sent, best[1]))
            if best[1] not in used:
                used.append(best[1])
        else:
            pieces.append(sent)
    return " ".join(pieces), used
