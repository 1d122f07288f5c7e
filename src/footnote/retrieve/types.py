"""Types that carry a turn through plan → lanes → fusion → rerank → reserves → gate."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from footnote.records.fragments import AddressLocator, Fragment
from footnote.records.memory import MemoryNote
from footnote.settings import GateThresholds

if TYPE_CHECKING:
    from footnote.retrieve.corpus_view import TurnCorpus
    from footnote.retrieve.memory import Resolved


class Verdict(StrEnum):
    """The coverage gate's decision."""

    SUFFICIENT = "sufficient"
    GOOD_ENOUGH = "good_enough"
    BAIL_OUT = "bail_out"
    INSUFFICIENT = "insufficient"

    @property
    def abstains(self) -> bool:
        """Retrieval-level abstention: the gate found nothing close (no answer is attempted)."""
        return self is Verdict.BAIL_OUT


class Lane(StrEnum):
    DENSE_LECTURES = "dense_lectures"
    DENSE_VERSES = "dense_verses"
    DENSE_LIBRARY = "dense_library"
    LEXICAL_STEMMED = "lexical_stemmed"
    LEXICAL_UNSTEMMED = "lexical_unstemmed"
    ADDRESS = "address"
    TRIGRAM = "trigram"


@dataclass(frozen=True)
class SubQuestion:
    text: str
    paraphrases: tuple[str, ...] = ()
    addresses: tuple[AddressLocator, ...] = ()


@dataclass(frozen=True)
class QueryPlan:
    question: str
    lang: str
    subquestions: tuple[SubQuestion, ...]
    source: str = "deterministic"  # "deterministic" | "model"
    address_notes: tuple[str, ...] = ()  # "HB 9.9 is not in the corpus; …", "BG 2 holds 72 verses; …"


@dataclass(frozen=True)
class LaneHit:
    """One lane's evidence for a candidate: which lane, for which query string, rank and score."""

    lane: Lane
    query: str
    rank: int
    score: float


@dataclass(frozen=True)
class Candidate:
    """A fragment in the pool, with its provenance. ``score`` is always the true cosine to the
    question (0.0 with no embedder); ``rerank`` is the reranker's value, kept apart."""

    fragment: Fragment
    score: float
    lanes: tuple[LaneHit, ...] = ()
    rerank: float | None = None
    forced: bool = False  # lexical/address hit forced past the pre-floor
    reserve: bool = False  # admitted by a per-kind reserve
    embedded: bool = True  # False: the fragment has no vector yet (embedding backlog): score is no dense evidence

    @property
    def lane_names(self) -> tuple[str, ...]:
        return tuple(sorted({h.lane.value for h in self.lanes}))


def pooled(fragment: Fragment, score: float, lanes: tuple[LaneHit, ...], *, forced: bool, embedded: bool) -> Candidate:
    """``Candidate(fragment, score, lanes, forced=…, embedded=…)`` without the frozen dataclass's
    per-field ``object.__setattr__`` (the pool makes one for every fragment of every search)."""
    new = object.__new__(Candidate)
    new.__dict__.update(fragment=fragment, score=score, lanes=lanes, rerank=None, forced=forced, reserve=False,
                        embedded=embedded)
    return new


def with_rerank(c: Candidate, value: float | None) -> Candidate:
    """``dataclasses.replace(c, rerank=value)`` without its per-field work (fusion does it for every
    candidate of every search): a shallow copy of the fields with ``rerank`` set."""
    new = object.__new__(Candidate)
    new.__dict__.update(c.__dict__)
    new.__dict__["rerank"] = value
    return new


@dataclass(frozen=True)
class StageTrace:
    name: str
    ms: float
    counts: dict[str, int] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GateSignal:
    """Inputs of the coverage gate, all shown in the trace."""

    max_score: float
    lecture_count: int
    value: float  # the scalar "do we know this?" signal the gate compares (higher = more confident); AUROC is measured on it
    thresholds: dict[str, float]
    extra: dict[str, float] = field(default_factory=dict)  # e.g. margin, lane agreement, combined signal
    applied: GateThresholds | None = None  # the thresholds the gate compared against (typed; ``thresholds`` is for the trace)


@dataclass(frozen=True)
class MemoryMatch:
    """A note scored against the question; ``matched`` when ``score >= threshold``. ``did``: what the
    turn did with it (pinned, boosted, framed, or why not)."""

    note: MemoryNote
    score: float
    threshold: float
    via: str = ""
    did: str = ""

    @property
    def matched(self) -> bool:
        return self.score >= self.threshold

    def to_dict(self) -> dict[str, object]:
        return {"id": self.note.id, "kind": self.note.kind.value, "score": round(float(self.score), 6),
                "threshold": round(float(self.threshold), 6), "via": self.via[:120], "did": self.did}


@dataclass(frozen=True)
class SearchResult:
    """What retrieval hands to answering: ranked candidates, the verdict and the trace, and the turn's
    reader of the corpus (``corpus``) through which answering reads everything else."""

    plan: QueryPlan
    candidates: tuple[Candidate, ...]
    verdict: Verdict
    signal: GateSignal
    rounds: int
    trace: tuple[StageTrace, ...]
    #: the turn's reader of the corpus (sources, cues, books and aliases, the embedder): the answer stage
    #: reads the corpus through it, never the store (retrieve/corpus_view.py)
    corpus: TurnCorpus = field(compare=False, repr=False)
    lexical_only: bool = False
    model_calls: int = 0  # router calls made (round 2 only: a bail-out costs none)
    memory: tuple[MemoryMatch, ...] = ()  # curated notes matched (with what each did), best first
    policy: str = "wide"  # "lean" when a pinned note matched (one round, a small slate), else "wide"
    boosts: dict[str, dict[str, float]] = field(default_factory=dict)  # fragment id → {boost note id: amount}
    pinned_refs: Resolved | None = None  # what the pinned note's references resolved to (once, by the search)

    @property
    def pinned(self) -> MemoryMatch | None:
        return next((m for m in self.memory if m.did == "pinned"), None)
