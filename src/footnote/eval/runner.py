"""Run a question set through ``engine.search`` and keep, per question, what the metrics need.

The seam for answer-level scoring: ``run_questions(..., on_result=cb)`` calls ``cb(question, result)``
after each search; whatever mapping it returns is kept in :attr:`Outcome.extra` (and reaches
``report.json`` per question), so an answer scorer can run ``engine.ask`` or judge the notes without
touching this module.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from footnote.errors import FootnoteError
from footnote.eval.metrics import first_hit_rank
from footnote.eval.questions import Question
from footnote.eval.rounds import round_effect
from footnote.retrieve.types import SearchResult

if TYPE_CHECKING:
    from footnote.corpus.ingest import IngestReport
    from footnote.engine import Engine
    from footnote.settings import Settings

log = logging.getLogger(__name__)

SearchFn = Callable[[str], SearchResult]
OnResult = Callable[[Question, SearchResult], Mapping[str, Any] | None]


@dataclass(frozen=True)
class Outcome:
    """One question's search, reduced to what evaluation measures."""

    question: Question
    source_ids: tuple[str, ...]  # source id of each ranked note, in order
    rank: int | None  # 1-based rank of the first gold note, None when none
    abstained: bool
    verdict: str
    signal: float
    max_score: float
    stage_ms: dict[str, float]
    total_ms: float
    rounds: int = 1
    model_calls: int = 0
    lexical_only: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    round_effect: dict[str, Any] = field(default_factory=dict)  # eval.rounds.round_effect
    # the same slate ordered by plain dense cosine alone (``Candidate.score``): 1-based rank of the first gold
    # note, None when none; 0 when not measured (lexical-only search, or an outcome made by hand)
    dense_rank: int | None = 0
    pair: str = ""  # "questionlang-corpuslang": the question's language and the slate's majority language

    @property
    def supported(self) -> bool:
        """A gold source is among the notes (at any rank)."""
        return self.rank is not None

    def to_dict(self) -> dict[str, Any]:
        q = self.question
        return {
            "id": q.id, "lang": q.lang, "category": q.category, "answerable": q.answerable,
            "gold": list(q.gold), "rank": self.rank, "abstained": self.abstained, "verdict": self.verdict,
            "signal": _num(self.signal), "max_score": _num(self.max_score), "rounds": self.rounds,
            "model_calls": self.model_calls, "total_ms": round(self.total_ms, 3),
            "stage_ms": {k: round(v, 3) for k, v in self.stage_ms.items()},
            "top_sources": list(self.source_ids[:5]), "extra": self.extra, "error": self.error,
            "round_effect": self.round_effect, "dense_rank": self.dense_rank, "pair": self.pair,
        }


def _num(x: float) -> float | None:
    return None if x != x else round(float(x), 6)  # NaN (an errored question) → null


def outcome_of(q: Question, result: SearchResult, total_ms: float, extra: Mapping[str, Any] | None = None) -> Outcome:
    """Reduce a search result for question ``q``. Stage times with the same name (a second round)
    are summed."""
    sids = tuple(c.fragment.source_id for c in result.candidates)
    dense = sorted(result.candidates, key=lambda c: -c.score)  # stable: cosine ties keep the fused order
    langs = Counter(c.fragment.lang for c in result.candidates)
    stage: dict[str, float] = {}
    for t in result.trace:
        stage[t.name] = stage.get(t.name, 0.0) + float(t.ms)
    return Outcome(
        question=q,
        source_ids=sids,
        rank=first_hit_rank(sids, q.gold),
        abstained=result.verdict.abstains,
        verdict=result.verdict.value,
        signal=float(result.signal.value),
        max_score=float(result.signal.max_score),
        stage_ms=stage,
        total_ms=total_ms,
        rounds=result.rounds,
        model_calls=result.model_calls,
        lexical_only=result.lexical_only,
        extra=dict(extra or {}),
        round_effect=round_effect(result, q.gold),
        dense_rank=0 if result.lexical_only else first_hit_rank([c.fragment.source_id for c in dense], q.gold),
        pair=f"{q.lang}-{langs.most_common(1)[0][0]}" if langs else q.lang,
    )


def run_questions(
    search: SearchFn,
    questions: Sequence[Question],
    *,
    progress: bool = True,
    on_result: OnResult | None = None,
) -> list[Outcome]:
    """Search every question (progress bar on stderr). A question whose search raises a
    ``FootnoteError`` is kept as an abstention with ``error`` set, and the run goes on."""
    out: list[Outcome] = []
    bar = tqdm(questions, desc="questions", unit="q", disable=not progress, dynamic_ncols=True)
    for q in bar:
        t0 = time.perf_counter()
        try:
            result = search(q.question)
        except FootnoteError as e:
            log.warning("question %s failed: %s", q.id, e.message)
            out.append(Outcome(q, (), None, True, "error", float("nan"), float("nan"), {}, 0.0, error=e.message))
            continue
        ms = (time.perf_counter() - t0) * 1000.0
        extra = on_result(q, result) if on_result is not None else None
        out.append(outcome_of(q, result, ms, extra))
    return out


def store_fingerprint(corpus: Sequence[Path], embedder: str) -> str:
    """Names the evaluation store for this corpus and embedder: the same inputs reuse one store
    (ingestion is idempotent, so an unchanged corpus is not re-embedded)."""
    h = hashlib.sha256(embedder.encode())
    for p in sorted(str(Path(c).resolve()) for c in corpus):
        h.update(b"\0" + p.encode())
    return h.hexdigest()[:12]


def default_store_url(out_dir: Path, corpus: Sequence[Path], embedder: str) -> str:
    return str(out_dir / "stores" / f"{embedder}-{store_fingerprint(corpus, embedder)}.db")


def prepare_engine(
    settings: Settings,
    corpus: Sequence[Path],
    *,
    out_dir: Path,
    store_url: str | None = None,
    progress: bool = True,
) -> tuple[Engine, IngestReport]:
    """An engine over a store holding ``corpus``: ``store_url`` when given (never pruned), else a
    store of its own under ``out_dir/stores`` (pruned to exactly this corpus)."""
    from footnote.engine import Engine

    own = store_url is None
    url = store_url or default_store_url(out_dir, corpus, settings.embedder.name)
    if own:
        Path(url).parent.mkdir(parents=True, exist_ok=True)
    engine = Engine.from_settings(settings.with_overrides(**{"store.url": url}))
    bar = tqdm(total=0, desc="ingest", unit="src", disable=not progress, dynamic_ncols=True)

    def tick(done: int, total: int, name: str) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.set_postfix_str(Path(name).name[-30:] if name else "", refresh=False)
        bar.refresh()

    try:
        report = engine.ingest(list(corpus), prune=own, progress=tick)
    except BaseException:
        engine.close()
        raise
    finally:
        bar.close()
    return engine, report


def refuse_backlog(engine: Engine, *, allow: bool, command: str = "eval") -> dict[str, Any]:
    """The store's embedding state; a UsageError when fragments still wait for vectors and ``allow`` is
    false: figures over a half-embedded store mix dense and lexical-only retrieval and measure neither."""
    from footnote.errors import UsageError

    state = engine.backlog_status()
    if state["state"] in ("embedding", "paused") and not allow:
        raise UsageError(
            f"{command}: store {engine.store.url} has {state['pending']:,} of {state['fragments']:,} fragments without "
            f"a vector ({state['message']}); finish embedding first (`footnote reembed`) or pass --allow-backlog"
        )
    return state
