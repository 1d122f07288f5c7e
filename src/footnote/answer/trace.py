"""A finished turn's trace, typed: what the search found and decided, each answer stage's counts and
timings, the notes, the model calls, what the server's checks removed and why the corpus was insufficient.

``Answer.trace`` is a :class:`Trace`; :meth:`Trace.to_dict` is its one JSON shape (``ask --json``, the HTTP
API, the eval reports) and :meth:`Trace.from_dict` reads that shape back. The search's plan and signal, a
stage's ``info`` and the support summary stay mappings: their keys vary by stage and embedder
(docs/answering.md, "The trace")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from footnote.answer.types import Abstention, abstention_dict
from footnote.retrieve.types import Verdict


@dataclass(frozen=True)
class StageRecord:
    """One answer stage: wall ``ms``, this thread's ``cpu_ms``, its counts and what else it reports."""

    name: str
    ms: float
    cpu_ms: float = 0.0
    counts: Mapping[str, int] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ms": self.ms, "cpu_ms": self.cpu_ms, "counts": dict(self.counts),
                "info": dict(self.info)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StageRecord:
        return cls(str(d["name"]), float(d.get("ms", 0.0)), float(d.get("cpu_ms", 0.0)),
                   {str(k): int(v) for k, v in (d.get("counts") or {}).items()}, dict(d.get("info") or {}))


@dataclass(frozen=True)
class SearchTrace:
    """What the retriever reported: its verdict (the gate's, before any later stage found the notes
    wanting), rounds, plan, signal, candidate count and its own stages."""

    verdict: Verdict
    rounds: int
    lexical_only: bool
    model_calls: int
    plan: Mapping[str, Any]
    signal: Mapping[str, Any]
    candidates: int
    stages: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "rounds": self.rounds, "lexical_only": self.lexical_only,
                "model_calls": self.model_calls, "plan": dict(self.plan), "signal": dict(self.signal),
                "candidates": self.candidates, "stages": [dict(s) for s in self.stages]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SearchTrace:
        return cls(Verdict(d["verdict"]), int(d.get("rounds", 1)), bool(d.get("lexical_only", False)),
                   int(d.get("model_calls", 0)), dict(d.get("plan") or {}), dict(d.get("signal") or {}),
                   int(d.get("candidates", 0)), tuple(dict(s) for s in d.get("stages") or ()))


@dataclass(frozen=True)
class NoteRef:
    """A note the turn numbered: ``[n]`` → fragment, with its score."""

    n: int
    fragment_id: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "fragment_id": self.fragment_id, "score": self.score}


@dataclass(frozen=True)
class Followup:
    """How a conversation's follow-up was understood (``how``: ``rule``, ``model`` or ``unchanged``)."""

    how: str
    carried: tuple[str, ...] = ()


@dataclass(frozen=True)
class Trace:
    """The trace of one turn (see the module docstring)."""

    question_lang: str
    search: SearchTrace
    rewritten_question: str | None = None
    followup: Followup | None = None
    stages: tuple[StageRecord, ...] = ()
    notes: tuple[NoteRef, ...] = ()
    model_calls: int = 0
    model_calls_by_role: Mapping[str, int] = field(default_factory=dict)
    fallback_enabled: bool = False
    degraded: tuple[str, ...] = ()
    turn_timeout_s: float | None = None
    deadline_reached: bool = False
    removed_mentions: tuple[str, ...] = ()
    policy: str | None = None
    #: the matched memory notes, each with what the turn did with it (``did``)
    memory: tuple[Mapping[str, Any], ...] = ()
    memory_dropped_citations: int = 0
    memory_removed_mentions: int = 0
    total_ms: float = 0.0
    near_miss_titles: tuple[str, ...] = ()
    removed_sentences: int = 0
    #: ``removed_sentences`` by why: ``uncited``, ``unsupported`` (the passages it cites do not support it), ``prose``
    removed_by_reason: Mapping[str, int] = field(default_factory=dict)
    #: each model-written sentence the support check found unsupported: its citations, ``why`` (``score``, ``number``,
    #: ``date``, ``name``, ``instruction``, ``background``, ``question``, ``garbled``, ``model``), its best score and
    #: ``action`` (``removed`` or ``flagged``); never its text
    unsupported_sentences: tuple[Mapping[str, Any], ...] = ()
    abstention: Abstention | None = None
    #: the citation-support summary (``support.in_trace``), None when not computed
    support: Mapping[str, Any] | None = None

    def stage(self, name: str) -> StageRecord | None:
        """The answer stage of that name (the last one, should a stage run twice), else None."""
        return last_stage(self.stages, name)

    def answerable(self) -> Mapping[str, Any] | None:
        """What the answer-level check found this turn (the ``outline`` stage's ``answerable``; its ``model``
        entry is the answer-check model's verdict), else None: the check did not judge the turn."""
        st = self.stage("outline")
        judged = st.info.get("answerable") if st is not None else None
        return judged if isinstance(judged, Mapping) else None

    def judged(self) -> list[Mapping[str, Any]]:
        """How the support check judged each model-written sentence shown or removed, in order (the synthesize
        stage's ``judged``: citations, supported, why, the check model's word as ``check``); [] for an extractive
        answer."""
        st = self.stage("synthesize")
        judged = st.info.get("judged") if st is not None else None
        return [j for j in judged if isinstance(j, Mapping)] if isinstance(judged, list) else []

    def with_degraded(self, *why: str) -> Trace:
        """This trace with more entries in ``degraded``."""
        return replace(self, degraded=(*self.degraded, *why))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "question_lang": self.question_lang,
            "rewritten_question": self.rewritten_question,
            "followup": None if self.followup is None else {"how": self.followup.how, "carried": list(self.followup.carried)},
            "search": self.search.to_dict(),
            "stages": [s.to_dict() for s in self.stages],
            "notes": [n.to_dict() for n in self.notes],
            "model_calls": self.model_calls,
            "model_calls_by_role": dict(self.model_calls_by_role),
            "fallback_enabled": self.fallback_enabled,
            "degraded": list(self.degraded),
            "turn_timeout_s": self.turn_timeout_s,
            "deadline_reached": self.deadline_reached,
            "removed_mentions": list(self.removed_mentions),
            "policy": self.policy,
            "memory": [dict(m) for m in self.memory],
            "memory_dropped_citations": self.memory_dropped_citations,
            "memory_removed_mentions": self.memory_removed_mentions,
            "total_ms": self.total_ms,
        }
        if self.near_miss_titles:
            out["near_miss_titles"] = list(self.near_miss_titles)
        out["removed_sentences"] = self.removed_sentences
        out["removed_by_reason"] = dict(self.removed_by_reason)
        out["unsupported_sentences"] = [dict(u) for u in self.unsupported_sentences]
        out["abstention"] = abstention_dict(self.abstention)
        if self.support is not None:
            out["support"] = dict(self.support)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trace:
        """The inverse of :meth:`to_dict`."""
        f = d.get("followup")
        return cls(
            question_lang=str(d.get("question_lang", "")),
            search=SearchTrace.from_dict(d["search"]),
            rewritten_question=d.get("rewritten_question"),
            followup=None if not f else Followup(str(f.get("how", "")), tuple(f.get("carried") or ())),
            stages=tuple(StageRecord.from_dict(s) for s in d.get("stages") or ()),
            notes=tuple(NoteRef(int(n["n"]), str(n["fragment_id"]), float(n["score"])) for n in d.get("notes") or ()),
            model_calls=int(d.get("model_calls", 0)),
            model_calls_by_role={str(k): int(v) for k, v in (d.get("model_calls_by_role") or {}).items()},
            fallback_enabled=bool(d.get("fallback_enabled", False)),
            degraded=tuple(str(x) for x in d.get("degraded") or ()),
            turn_timeout_s=d.get("turn_timeout_s"),
            deadline_reached=bool(d.get("deadline_reached", False)),
            removed_mentions=tuple(str(x) for x in d.get("removed_mentions") or ()),
            policy=d.get("policy"),
            memory=tuple(dict(m) for m in d.get("memory") or ()),
            memory_dropped_citations=int(d.get("memory_dropped_citations", 0)),
            memory_removed_mentions=int(d.get("memory_removed_mentions", 0)),
            total_ms=float(d.get("total_ms", 0.0)),
            near_miss_titles=tuple(str(x) for x in d.get("near_miss_titles") or ()),
            removed_sentences=int(d.get("removed_sentences", 0)),
            removed_by_reason={str(k): int(v) for k, v in (d.get("removed_by_reason") or {}).items()},
            unsupported_sentences=tuple(dict(u) for u in d.get("unsupported_sentences") or ()),
            abstention=Abstention.from_dict(d.get("abstention")),
            support=dict(d["support"]) if d.get("support") is not None else None,
        )


def last_stage(stages: Sequence[StageRecord], name: str) -> StageRecord | None:
    """The last recorded stage of that name (a stage may run twice), else None."""
    return next((s for s in reversed(stages) if s.name == name), None)
