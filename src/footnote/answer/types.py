"""Types that carry a turn from the gate to the reader: notes, outline, citations, answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from footnote.errors import FootnoteError
from footnote.records.fragments import (
    FileLocator,
    Fragment,
    fragment_dict,
    locator_from_dict,
    page_confidence,
)
from footnote.retrieve.types import Verdict

if TYPE_CHECKING:
    from footnote.answer.trace import Trace


class AnswerMode(StrEnum):
    CORPUS = "corpus"
    FALLBACK = "fallback"
    DECLINED = "declined"
    NOT_FOUND = "not_found"


class AbstentionReason(StrEnum):
    """Why a turn gave no corpus answer (``docs/answering.md``, "Abstention reasons")."""

    NO_RELEVANT_CONTENT = "no_relevant_content"  # the gate bailed out: nothing close in the corpus
    INSUFFICIENT_COVERAGE = "insufficient_coverage"  # the gate found only weak matches, and no answer came of them
    PLANNER_FOUND_NOTHING = "planner_found_nothing"  # the model planner's outline cited no note
    ANSWER_NOT_IN_PASSAGES = "answer_not_in_passages"  # related passages, but no sentence of them answers
    WEAKLY_GROUNDED = "weakly_grounded"  # the server's checks removed every sentence of the answer
    OUT_OF_SCOPE = "out_of_scope"  # the fallback model declined: outside what the library covers
    INDEX_INCOMPLETE = "index_incomplete"  # fragments still wait for vectors: the answer may be among them


class AbstentionStage(StrEnum):
    """The stage of the turn that decided the abstention."""

    GATE = "gate"
    INDEX = "index"
    PLANNER = "planner"
    ANSWER = "answer"
    SUPPORT = "support"
    FALLBACK = "fallback"


@dataclass(frozen=True)
class Abstention:
    """Why a turn's answer is not a corpus answer, and which stage said so (``None`` on a corpus answer)."""

    reason: AbstentionReason
    stage: AbstentionStage

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason.value, "stage": self.stage.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Abstention | None:
        """The inverse of :meth:`to_dict` (a stored turn's ``abstention``); None for null or an unknown value."""
        if not data:
            return None
        try:
            return cls(AbstentionReason(data["reason"]), AbstentionStage(data["stage"]))
        except (KeyError, ValueError):
            return None


def gate_abstention(verdict: Verdict) -> Abstention | None:
    """What the gate's verdict alone says (the MCP ``search`` tool, which runs no answer stage): a
    bail-out is ``no_relevant_content``, weak matches ``insufficient_coverage``, else nothing."""
    if verdict is Verdict.BAIL_OUT:
        return Abstention(AbstentionReason.NO_RELEVANT_CONTENT, AbstentionStage.GATE)
    if verdict is Verdict.INSUFFICIENT:
        return Abstention(AbstentionReason.INSUFFICIENT_COVERAGE, AbstentionStage.GATE)
    return None


def abstention_dict(abstention: Abstention | None) -> dict[str, str] | None:
    """The one serialisation of an abstention for every surface (CLI, HTTP, MCP, trace, stored turn)."""
    return None if abstention is None else abstention.to_dict()


@dataclass(frozen=True)
class Note:
    """A fragment admitted into a turn, numbered ``n`` (1-based) as the model sees it."""

    n: int
    fragment: Fragment
    score: float
    rerank: float | None = None


@dataclass(frozen=True)
class Thesis:
    text: str
    notes: tuple[int, ...]


@dataclass(frozen=True)
class Outline:
    theses: tuple[Thesis, ...]

    @property
    def empty(self) -> bool:
        return not any(t.notes for t in self.theses)


@dataclass(frozen=True)
class Citation:
    """A resolved citation: number shown to the reader → fragment → locator."""

    n: int
    fragment: Fragment
    title: str = ""
    #: The cited source's relevant front matter (``answer.citation_meta_keys``: commentator, author, …).
    source_meta: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        f = self.fragment
        return {
            "n": self.n,
            **fragment_dict(f),
            "title": self.title,
            "source_meta": dict(self.source_meta),
            "transcript": self.transcript,
            "ocr": self.ocr_confidence is not None,
            "ocr_confidence": self.ocr_confidence,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Citation:
        """The inverse of :meth:`to_dict` (the fragment's ordinal from its id; its content hash unknown)."""
        fid = str(d["fragment_id"])
        tail = fid.rsplit("#", 1)[-1]
        meta = {str(k): str(v) for k, v in (d.get("source_meta") or {}).items()}
        if d.get("transcript") and "transcript_by" not in meta:
            meta["transcript_by"] = str(d["transcript"])
        loc = d.get("locator") or {}
        if d.get("ocr_confidence") is not None and "ocr_confidence" not in meta and loc.get("page") is not None:
            meta["ocr_confidence"] = f"{loc['page']}:{d['ocr_confidence']}"
        frag = Fragment(fid, str(d["source_id"]), int(tail) if tail.isdigit() else 0, str(d.get("kind", "")),
                        str(d.get("lang", "")), str(d.get("text", "")), locator_from_dict(d.get("locator") or {}), "")
        return cls(int(d["n"]), frag, str(d.get("title", "")), meta)

    @property
    def transcript(self) -> str | None:
        """``"machine"`` when the cited text is a speech recognition (the recording is the ground truth)."""
        return self.source_meta.get("transcript_by") or None

    @property
    def ocr_confidence(self) -> float | None:
        """The cited page's mean OCR word confidence (0-100) when the page was read by OCR, else None."""
        loc = self.fragment.locator
        return page_confidence(self.source_meta, loc.page) if isinstance(loc, FileLocator) else None


@dataclass(frozen=True)
class Answer:
    """The answer contract of ``footnote ask --json`` and the HTTP API's non-streaming ask."""

    answer: str
    citations: tuple[Citation, ...]
    verdict: Verdict
    corpus_insufficient: bool
    mode: AnswerMode
    disclaimer: str | None = None
    dropped_citations: int = 0
    removed_mentions: int = 0
    removed_sentences: int = 0
    model_calls: int = 0
    lang: str = "en"
    #: what the turn did, stage by stage (None for an answer made outside a turn)
    trace: Trace | None = None
    conversation_id: str | None = None
    turn: int | None = None
    #: Why this is not a corpus answer (None exactly when ``mode`` is ``corpus``).
    abstention: Abstention | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "turn": self.turn,
            "answer": self.answer,
            "citations": [c.to_dict() for c in self.citations],
            "verdict": self.verdict.value,
            "corpus_insufficient": self.corpus_insufficient,
            "mode": self.mode.value,
            "abstention": abstention_dict(self.abstention),
            "disclaimer": self.disclaimer,
            "dropped_citations": self.dropped_citations,
            "removed_mentions": self.removed_mentions,
            "removed_sentences": self.removed_sentences,
            "model_calls": self.model_calls,
            "lang": self.lang,
            "trace": self.trace.to_dict() if self.trace is not None else {},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Answer:
        """The inverse of :meth:`to_dict`: a stored turn's answer (saved without its trace) or an ``ask --json``
        reply read back. A cited fragment's ordinal is read from its id; its language and content hash,
        which the contract does not carry, are left empty."""
        from footnote.answer.trace import Trace

        trace = d.get("trace")
        return cls(
            answer=str(d.get("answer", "")),
            citations=tuple(Citation.from_dict(c) for c in d.get("citations") or () if isinstance(c, Mapping)),
            verdict=Verdict(d["verdict"]),
            corpus_insufficient=bool(d.get("corpus_insufficient", False)),
            mode=AnswerMode(d["mode"]),
            disclaimer=d.get("disclaimer"),
            dropped_citations=int(d.get("dropped_citations", 0)),
            removed_mentions=int(d.get("removed_mentions", 0)),
            removed_sentences=int(d.get("removed_sentences", 0)),
            model_calls=int(d.get("model_calls", 0)),
            lang=str(d.get("lang", "en")),
            trace=Trace.from_dict(trace) if trace else None,
            conversation_id=d.get("conversation_id"),
            turn=d.get("turn"),
            abstention=Abstention.from_dict(d.get("abstention")),
        )


@dataclass(frozen=True)
class Stage:
    """A stage of the turn finished: its name, milliseconds and counts."""

    name: str
    ms: float
    counts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Writing:
    """A model starts writing the answer (``model``: its name, without its endpoint). Nothing of it is shown until a sentence has passed
    the server's checks — with a local model that is a minute or more — so the reader is told what is happening."""

    model: str


@dataclass(frozen=True)
class Understood:
    """How a conversation's follow-up was understood: the standalone question the turn searches for
    (``how``: "rule" or "model"). Sent before the search only when it differs from the question."""

    question: str
    original: str
    how: str


@dataclass(frozen=True)
class Token:
    """A piece of the displayed answer (already checked: citations resolved, prose checked)."""

    text: str


@dataclass(frozen=True)
class CitationEvent:
    """A citation the displayed answer uses, resolved on the server."""

    citation: Citation


@dataclass(frozen=True)
class VerdictEvent:
    """The gate's verdict and the turn's mode, just before the answer is done."""

    verdict: Verdict
    mode: AnswerMode
    corpus_insufficient: bool
    disclaimer: str | None = None
    abstention: Abstention | None = None


@dataclass(frozen=True)
class Done:
    """The turn's last event: the whole answer contract."""

    answer: Answer


@dataclass(frozen=True)
class Error:
    """The turn ended with an error (the exception itself: the edges translate it once)."""

    exc: FootnoteError


Event = Understood | Stage | Writing | Token | CitationEvent | VerdictEvent | Done | Error
"""Streaming events of a turn. Serialised only at the edges: the server's SSE code (event names
``understood``, ``stage``, ``writing``, ``token``, ``citation``, ``verdict``, ``done``, ``error``) and the CLI."""
