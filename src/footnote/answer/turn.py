"""The state of one turn while it runs (the :class:`~footnote.answer.pipeline.Answerer` is shared by
concurrent turns), and the trace made of it at the turn's end."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from footnote.answer.followup import PriorTurn, Rewrite
from footnote.answer.trace import Followup, NoteRef, SearchTrace, StageRecord, Trace
from footnote.answer.types import Abstention, Answer, Done, Error, Event, Note, Stage
from footnote.models.chat import CountingChatModel
from footnote.models.protocols import Budget
from footnote.records.memory import MemoryNote, NoteKind
from footnote.redact import redact
from footnote.retrieve.corpus_view import TurnCorpus
from footnote.retrieve.format import plan_dict, signal_dict, trace_dict
from footnote.retrieve.types import MemoryMatch, SearchResult


def ms_since(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)


@dataclass
class TurnState:
    """Per-turn state (the Answerer itself is shared by concurrent turns)."""

    question: str
    lang: str
    fallback_on: bool
    models: dict[str, CountingChatModel]
    counters: dict[str, list[int]]
    budget: Budget
    secrets: tuple[str, ...] = ()
    t0: float = field(default_factory=time.perf_counter)
    cpu_mark: float = field(default_factory=time.thread_time)  # this thread's CPU time when the last stage ended
    stages: list[StageRecord] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    result: SearchResult | None = None
    asked: str = ""  # the question as asked (``question`` is what the turn searched for)
    rewrite: Rewrite | None = None
    background: tuple[MemoryNote, ...] = ()  # matched memory notes (framing for the models, never cited)
    background_shown: bool = False  # a model was given them
    memory_dropped: int = 0  # citations of a background note dropped
    memory_removed: int = 0  # mentions of a background note's title removed
    near_miss: list[str] = field(default_factory=list)  # titles a near miss's not-found message names
    removed_by_reason: dict[str, int] = field(default_factory=dict)  # removed sentences by why (the answer's cleaner)
    unsupported: list[dict[str, Any]] = field(default_factory=list)  # sentences the support check found unsupported
    #: every model-written sentence the support check judged, in order, never its text: its citations, whether it
    #: is supported and why not, and ``check``, the check model's word where it was asked (``support.model_check``)
    judged: list[dict[str, Any]] = field(default_factory=list)
    #: the turn's reader of the corpus (opened before a follow-up's rewrite, else by the search): the
    #: answer stage reads sources, cues and named fragments through it, each once per turn
    corpus: TurnCorpus | None = None

    @property
    def search_lang(self) -> str | None:
        """The language the search takes as the question's: the one found as the turn opened, unless a follow-up was
        rewritten (the standalone question is detected anew)."""
        return self.lang if self.question == self.asked else None

    def not_pinned(self, history: Sequence[PriorTurn]) -> tuple[str, ...]:
        """Notes that may not pin this turn's search: a rewritten follow-up carries its subject's words, and the
        note that answered the turn it follows does not answer it again."""
        rewritten = self.rewrite is not None and self.rewrite.how != "unchanged"
        return tuple(history[-1].pinned_notes) if rewritten and history else ()

    @property
    def reads(self) -> TurnCorpus:
        assert self.corpus is not None, "the turn reads the corpus after its search"
        return self.corpus

    def degrade(self, why: str) -> None:
        """Say in the trace what failed and what was used instead (secrets masked)."""
        self.degraded.append(redact(why, self.secrets))

    def calls(self) -> int:
        return sum(c[0] for c in self.counters.values())

    def stage(self, name: str, t0: float, counts: dict[str, int] | None = None, **info: Any) -> Event:
        """Record a stage: wall ``ms`` since ``t0`` and ``cpu_ms``, this thread's CPU time since the
        previous stage (or the search) ended — what the stage cost, unlike wall time, whatever the load."""
        ms, n = ms_since(t0), dict(counts or {})
        cpu = time.thread_time()
        self.stages.append(StageRecord(name, ms, round((cpu - self.cpu_mark) * 1000.0, 3), n, info))
        self.cpu_mark = cpu
        return Stage(name, ms, n)


def memory_entry(turn: TurnState, m: MemoryMatch) -> dict[str, Any]:
    """A matched memory note in the trace: what matched, and what the turn did with it."""
    return {**m.to_dict(), "did": memory_entry_did(turn, m)}


def turn_trace(turn: TurnState, notes: Sequence[Note], removed_names: Sequence[str], *,
               removed_sentences: int = 0, abstention: Abstention | None = None) -> Trace:
    """The trace of a finished turn (``Answer.trace``): the search's, each answer stage's, the notes, the
    model calls, what was removed and why the corpus was insufficient."""
    r = turn.result
    assert r is not None
    return Trace(
        question_lang=turn.lang,
        rewritten_question=turn.question if turn.question != turn.asked else None,
        followup=None if turn.rewrite is None else Followup(turn.rewrite.how, tuple(turn.rewrite.carried)),
        search=SearchTrace(r.verdict, r.rounds, r.lexical_only, r.model_calls, plan_dict(r), signal_dict(r.signal),
                           len(r.candidates), tuple(trace_dict(t) for t in r.trace)),
        stages=tuple(turn.stages),
        notes=tuple(NoteRef(n.n, n.fragment.id, round(float(n.score), 6)) for n in notes),
        model_calls=r.model_calls + turn.calls(),
        model_calls_by_role={role: c[0] for role, c in turn.counters.items()},
        fallback_enabled=turn.fallback_on,
        degraded=tuple(turn.degraded),
        turn_timeout_s=turn.budget.turn_timeout_s,
        deadline_reached=turn.budget.expired(),
        removed_mentions=tuple(removed_names),
        policy=r.policy,
        memory=tuple(memory_entry(turn, m) for m in r.memory),
        memory_dropped_citations=turn.memory_dropped,
        memory_removed_mentions=turn.memory_removed,
        total_ms=ms_since(turn.t0),
        near_miss_titles=tuple(turn.near_miss),
        removed_sentences=removed_sentences,
        removed_by_reason=dict(turn.removed_by_reason),
        unsupported_sentences=tuple(turn.unsupported),
        abstention=abstention,
    )


def memory_entry_did(turn: TurnState, m: MemoryMatch) -> str:
    if m.note.kind is NoteKind.MEMORY:
        if turn.result is not None and turn.result.pinned is not None:
            return "not used: a pinned note answered"
        if m.note not in turn.background:
            return "not used: more background notes matched than answer.memory.max_memory_notes"
        return "framed" if turn.background_shown else "not used: extractive answer (no model saw it)"
    return m.did


def final_answer(events: Iterator[Event]) -> Answer:
    """The answer of a turn's event stream: its ``Done`` event."""
    for ev in events:
        if isinstance(ev, Done):
            return ev.answer
        if isinstance(ev, Error):
            raise ev.exc
    raise AssertionError("a turn ended without an answer")  # pragma: no cover
