"""The retrieval pipeline up to the coverage gate (docs/architecture.md "The flow", steps 1–7).

Round 1 runs the deterministic plan (the question + detected addresses); the gate decides.
BAIL_OUT → stop with no model call; SUFFICIENT / GOOD_ENOUGH → stop; between the bounds, with a router
configured → round 2 with its rewrite (the deterministic variant when it fails), pools merged, re-checked;
at most ``settings.gate.max_rounds`` rounds. Each round's ranking is ``retrieve/ranking.py``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import replace
from typing import Protocol

import numpy as np

from footnote.cpu import available_cores
from footnote.models.protocols import Budget, ChatModel, Embedder, Reranker, ThreadedQueries
from footnote.records.memory import NoteKind
from footnote.retrieve.background import BackgroundSample
from footnote.retrieve.books import BookCache, in_address_order
from footnote.retrieve.corpus_view import TurnCorpus
from footnote.retrieve.dedup import dedup_windows
from footnote.retrieve.judge import CoverageJudge
from footnote.retrieve.lanes import DENSE_LANE, LanePool, LaneQuery, plan_queries
from footnote.retrieve.memory import MemoryMatcher, Resolved, TurnMemory, pin_veto, pinned_of
from footnote.retrieve.plan import first_round_plan, second_round_plan
from footnote.retrieve.ranking import Ranked, Ranker
from footnote.retrieve.runners import LaneRunner, Round, lane_runner
from footnote.retrieve.sentence_vectors import SentenceVectorCache, shared_cache
from footnote.retrieve.types import (
    Candidate,
    Lane,
    LaneHit,
    QueryPlan,
    SearchResult,
    StageTrace,
    Verdict,
)
from footnote.settings import Settings
from footnote.store.memory import MemoryStore
from footnote.store.protocol import LaneStore, SourceStore, VectorStore
from footnote.text import Analyzer

log = logging.getLogger(__name__)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


def embeds_first(embedder: Embedder | None, store: LaneStore) -> bool:
    """Whether a round embeds its queries before any lane runs: when the query embedding uses every core
    this process may run on (an embedder that declares its query threads, :class:`ThreadedQueries`) and the
    store computes on this machine (``computes_here``), so text lanes run beside it would only compete with
    it for the cores (docs/retrieval.md, "The query first, then every lane")."""
    if not isinstance(embedder, ThreadedQueries):
        return False
    threads = embedder.query_threads
    return threads > 0 and available_cores() <= threads and bool(store.computes_here)


class SearchStore(SourceStore, VectorStore, LaneStore, MemoryStore, Protocol):
    """The store capabilities a search uses: the lanes, the pool's rows and vectors, the books and the
    background sample, the curated notes."""


class Retriever:
    """Plan → lanes → pool/pre-floor → cap → rerank → cut → reserves → dedup → gate, in rounds."""

    def __init__(
        self,
        settings: Settings,
        store: SearchStore,
        embedder: Embedder | None,
        reranker: Reranker | None,
        router: ChatModel | None,
        lanes: LaneRunner | None = None,
        *,
        embed_first: bool | None = None,
        vectors: SentenceVectorCache | None = None,
    ) -> None:
        """``lanes``: how a round's lanes run on this store (default: :func:`~footnote.retrieve.runners.lane_runner`,
        batched on a store that batches lane calls, else serial). ``embed_first``: force the schedule that
        embeds the query before any lane (True) or the one that overlaps them (False) — for tests and
        benches; None decides by :func:`embeds_first`. ``vectors``: the sentence-vector cache the gate shares with
        the answer stage (the composition root's; default: one of this retriever's own)."""
        self.settings = settings
        self.lanes = lanes or lane_runner(store, settings)
        self.store = store
        self.embedder = embedder
        self.reranker = reranker
        self.router = router
        self._lock = threading.Lock()
        self._analyzer = Analyzer()
        self.books = BookCache(store)
        self.background = BackgroundSample(store, settings.gate)
        self.vectors = vectors if vectors is not None else shared_cache(settings, store)
        self.judge = CoverageJudge(settings, self.vectors, embedder, self._analyzer, self.background)
        self.ranker = Ranker(settings, store, embedder, reranker, self.judge)
        self._executor: ThreadPoolExecutor | None = None
        self.embed_first = (embed_first if embed_first is not None else embeds_first(embedder, store)) \
            and embedder is not None
        self._in_flight = 0  # searches running now (embed_first applies to a search that runs alone)
        self.matcher = MemoryMatcher(settings, store, embedder.name if embedder else None, self._analyzer)

    # -- public --------------------------------------------------------------------------------
    @property
    def lexical_only(self) -> bool:
        """No embedder, or a store without any vectors (filled lexical-only): the lexical lanes alone."""
        if self.embedder is None:
            return True
        sample = self.background.vectors()
        return sample is None or len(sample) == 0

    def corpus(self) -> TurnCorpus:
        """A turn's reader of the corpus, at the store's generation now (the books of that generation);
        :meth:`search` hands it on."""
        gen = self.store.generation()  # the turn sees the corpus as of now: what is derived from it is of this generation
        return TurnCorpus(self.store, self.books.get(gen), self.settings, self.embedder, generation=gen, vectors=self.vectors,
                          probe=lambda queries, min_score, k: self.probe(queries, min_score=min_score, k=k))

    def search(self, question: str, *, lang: str | None = None, not_pinned: Collection[str] = (),
               budget: Budget | None = None, corpus: TurnCorpus | None = None) -> SearchResult:
        """``not_pinned``: notes that may not pin this search (a follow-up to the turn they answered).
        ``budget``: the turn's deadline and stop flag, passed to the router's call in a second round.
        ``corpus``: the turn's reader, when the turn opened one before searching (else a new one)."""
        with self._lock:
            self._in_flight += 1
            alone = self._in_flight == 1
        try:
            return self._search(question, lang, not_pinned, corpus or self.corpus(),
                                first=self.embed_first and alone, budget=budget)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _search(self, question: str, lang: str | None, not_pinned: Collection[str], view: TurnCorpus, *,
                first: bool, budget: Budget | None = None) -> SearchResult:
        """One search; ``first``: embed the queries before any lane (:func:`embeds_first`, and no other
        search running: beside other searches the overlap is worth more than the cores it would free —
        a burst of 34 asks on the demo server gave first event p95 0.76–1.06 s with it, 0.44–0.48 s without)."""
        s = self.settings
        traces: list[StageTrace] = []
        qlang = lang or s.corpus.question_lang(question)
        lexical = self.lexical_only
        first = first and not lexical
        beside = first and self._parallel_text()  # decided once for the search's rounds

        t0 = time.perf_counter()
        plan = first_round_plan(question, s, lang=qlang, books=view.books)
        queries = plan_queries(plan)
        traces.append(StageTrace("plan", _ms(t0), {
            "subquestions": len(plan.subquestions), "queries": len(queries),
            "addresses": sum(len(sq.addresses) for sq in plan.subquestions),
        }, {"source": plan.source, "lang": plan.lang}))

        pool = LanePool()
        got: list[np.ndarray | None] = [None]

        def embed_round1() -> np.ndarray | None:
            got[0], vecs = self._embed(question, queries, traces, "embed", lexical)
            return vecs

        rows_min = None if lexical else self.rows_floor(plan.lang)
        lane_traces, _ = self.lanes.run(Round(queries, embed_round1, pool, plan.lang, 1, rows_min,
                                              self._lane_executor(lexical), first, beside))
        traces.extend(lane_traces)
        qvec = got[0]
        asked = tuple(a for sq in plan.subquestions for a in sq.addresses)
        mem = self._memory(question, qvec, plan.lang, traces, view, not_pinned)
        lean = mem.pinned is not None
        keep_top = s.memory.lean_keep_top if lean else s.retrieve.keep_top
        ranked = self.ranker.rank(question, qvec, plan.lang, pool, traces, "", lexical, asked, keep_top, mem, rows_min, books=view.books)
        if mem.pinned is not None and (why := self._pin_veto(question, plan.lang, mem, ranked, view)):
            # the note serves, it does not override: the search goes on as if it had not matched
            mem = replace(mem, pinned=None, pinned_refs=None, vetoed=(mem.pinned.note.id, why))
            lean, keep_top = False, s.retrieve.keep_top
            ranked = self.ranker.rank(question, qvec, plan.lang, pool, traces, "", lexical, asked, keep_top, mem, rows_min, books=view.books)
        rounds, calls = 1, 0
        plans = [plan]
        max_rounds = 1 if lean else s.gate.max_rounds  # lean policy: no second round, no regeneration call
        while ranked.verdict is Verdict.INSUFFICIENT and rounds < max_rounds:
            if self.router is None:
                # the deterministic variant did not earn its place (docs/retrieval.md "Rounds"): the
                # gate's verdict stands; it remains the router's fallback
                traces.append(StageTrace(f"round{rounds + 1}", 0.0, {"skipped": 1}, {"reason": "no router"}))
                break
            rounds += 1
            sfx = f"@round{rounds}"
            t0 = time.perf_counter()
            before = ranked
            partial = self._result(plans[-1], ranked, rounds - 1, traces, calls, lexical, view)
            plan2, n = second_round_plan(question, s, self.router, lang=plan.lang, previous=partial, budget=budget)
            calls += n
            new_q = [q for q in plan_queries(plan2) if not any(q.text == p.text for p in queries)]
            traces.append(StageTrace(f"plan{sfx}", _ms(t0), {
                "subquestions": len(plan2.subquestions), "queries": len(new_q), "model_calls": n,
            }, {"source": plan2.source}))
            plans.append(plan2)
            queries = [*queries, *new_q]
            def embed_round(qs: list[LaneQuery] = new_q, name: str = f"embed{sfx}") -> np.ndarray | None:
                return self._embed(None, qs, traces, name, lexical)[1]

            lane_traces, _ = self.lanes.run(Round(new_q, embed_round, pool, plan.lang, rounds, rows_min,
                                                  self._lane_executor(lexical), first, beside))
            traces.extend(lane_traces)
            ranked = self.ranker.rank(question, qvec, plan.lang, pool, traces, sfx, lexical, asked, keep_top, mem, rows_min, books=view.books)
            traces.append(_round_effect(f"round{rounds}", _ms(t0), before, ranked, len(new_q)))
        ranked = replace(ranked, final=in_address_order(ranked.final, asked))  # a range reads in order
        res = self._result(_merge_plans(plans), ranked, rounds, traces, calls, lexical, view)
        return replace(res, memory=mem.described(ranked.boosts), policy="lean" if lean else "wide", boosts=ranked.boosts,
                       pinned_refs=mem.pinned_refs)

    def probe(self, queries: Sequence[str], *, min_score: float, k: int = 8) -> list[Candidate]:
        """Fallback re-search: dense hits of each probe with cosine ≥ ``min_score`` to that probe,
        deduplicated (a fragment keeps its best probe cosine and every probe's provenance), best
        first, at most ``k``. With no embedder there is no cosine to admit by: empty."""
        texts = [" ".join(q.split()) for q in queries if q and q.strip()]
        if self.embedder is None or not texts or self.lexical_only:
            return []
        vecs = self.embedder.embed_queries(texts)
        best: dict[str, float] = {}
        hits: dict[str, list[LaneHit]] = {}
        for text, vec in zip(texts, vecs, strict=True):
            for rank, h in enumerate(self.store.search_dense(vec, k)):
                if h.score < min_score:
                    continue
                hits.setdefault(h.fragment_id, []).append(LaneHit(Lane.DENSE_LIBRARY, text, rank, float(h.score)))
                best[h.fragment_id] = max(best.get(h.fragment_id, -1.0), float(h.score))
        order = sorted(best, key=lambda i: (-best[i], i))
        frags = {f.id: f for f in self.store.get_fragments(order)}
        cands = [
            Candidate(frags[i], best[i], tuple(replace(h, lane=self._dense_lane(frags[i].kind)) for h in hits[i]))
            for i in order if i in frags
        ]
        kept, _ = dedup_windows(cands)
        return kept[:k]

    def close(self) -> None:
        """Stop the lane worker thread (if one was started)."""
        with self._lock:
            ex, self._executor = self._executor, None
        if ex is not None:
            ex.shutdown(wait=True)

    # -- stages --------------------------------------------------------------------------------
    def _lane_executor(self, lexical: bool) -> Executor | None:
        """The worker thread the query is embedded on while the text lanes run — or, the query embedded
        first, the text lanes while the dense lanes run (None: lexical only)."""
        if lexical:
            return None
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="footnote-lanes")
        return self._executor

    def _parallel_text(self) -> bool:
        """The query embedded first on a store without batched lanes: whether the text lanes run beside
        the dense lanes (``retrieve.parallel_text_lanes_min_fragments``; the count is the one the
        background sample read last)."""
        self.background.vectors()  # keeps the count fresh (cached: no read on most searches)
        return self.background.embedded >= self.settings.retrieve.parallel_text_lanes_min_fragments

    def rows_floor(self, qlang: str) -> float | None:
        """The cosine below which a dense lane may leave a hit's row out (``retrieve.dense_rows_floor_margin``): the
        pre-floor this search expects — the one of the query's language and the pool's majority language
        at the previous search in that language (at first, the query's own) — less the margin. Only
        speed depends on the guess: the pool reads what a lower pre-floor than expected could keep."""
        rs = self.settings.retrieve
        if self.embedder is None:
            return None
        corpus = self.ranker.corpus_langs.get(qlang, qlang)
        return self.judge.thresholds(qlang, corpus, False).prefloor - rs.dense_rows_floor_margin

    def _dense_lane(self, kind: str) -> Lane:
        return DENSE_LANE[self.settings.corpus.group_of(kind)]

    def _embed(
        self, question: str | None, queries: Sequence[LaneQuery], traces: list[StageTrace], name: str, lexical: bool
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        if self.embedder is None or lexical:
            traces.append(StageTrace(name, 0.0, {"queries": 0}, {"lexical_only": True}))
            return None, None
        t0 = time.perf_counter()
        texts = [q.text for q in queries]
        if question is not None:
            texts_all = list(dict.fromkeys([" ".join(question.split()), *texts]))
        else:
            texts_all = list(dict.fromkeys(texts))
        if not texts_all:
            traces.append(StageTrace(name, _ms(t0), {"queries": 0}))
            return None, None
        vecs = self.embedder.embed_queries(texts_all)
        traces.append(StageTrace(name, _ms(t0), {"queries": len(texts_all)}))
        row = {t: i for i, t in enumerate(texts_all)}
        qvec = vecs[0] if question is not None else None
        return qvec, (vecs[[row[t] for t in texts]] if texts else np.zeros((0, vecs.shape[1]), dtype=np.float32))

    def _memory(self, question: str, qvec: np.ndarray | None, qlang: str, traces: list[StageTrace],
                view: TurnCorpus, not_pinned: Collection[str] = ()) -> TurnMemory:
        """Score the curated notes for the question; resolve what the matched boosts name."""
        t0 = time.perf_counter()
        scored = self.matcher.score(question, qvec, qlang)
        matched = scored.matched
        pinned = pinned_of(matched)
        unbacked: str | None = None
        repeated: str | None = None
        if pinned is not None and pinned.note.id in not_pinned:  # the reader has this answer already
            repeated, pinned = pinned.note.id, None
        got: Resolved | None = None
        if pinned is not None:
            got = view.resolve(pinned.note.sources)
            if not got.source_ids and not got.fragment_ids:  # its sources were removed since it was written
                unbacked, pinned, got = pinned.note.id, None, None
        boosts = tuple(m for m in matched if m.note.kind is NoteKind.BOOST)
        named: dict[str, Resolved] = {}
        texts: dict[str, np.ndarray] = {}
        if boosts:
            named = {b.note.id: view.resolve(b.note.sources) for b in boosts}
            if qvec is not None and self.embedder is not None:
                vecs = self.store.memory_vectors(self.embedder.name)
                ids = np.array(vecs.note_ids)
                texts = {b.note.id: vecs.vectors[ids == b.note.id] for b in boosts if len(ids)}
        traces.append(StageTrace("memory", _ms(t0), {
            "notes": len(scored.scores), "matched": len(matched), "pinned": int(pinned is not None), "boosts": len(boosts),
        }, {"method": scored.method, "best": scored.scores[0].to_dict() if scored.scores else None}))
        return TurnMemory(matched, pinned, boosts, named, texts, unbacked, repeated, got)

    def _pin_veto(self, question: str, qlang: str, mem: TurnMemory, ranked: Ranked, view: TurnCorpus) -> str | None:
        assert mem.pinned is not None
        srcs = view.sources(c.fragment.source_id for c in ranked.final[: self.settings.memory.lean_keep_top])
        titles = {sid: src.title for sid, src in srcs.items() if src.title}
        return pin_veto(question, qlang, mem.pinned.note, mem.pinned_refs, ranked.final, titles, self.settings,
                        self.matcher.analyzer, self.matcher.lang_of)

    def _result(
        self, plan: QueryPlan, ranked: Ranked, rounds: int, traces: list[StageTrace], calls: int, lexical: bool,
        view: TurnCorpus,
    ) -> SearchResult:
        return SearchResult(
            plan=plan, candidates=tuple(ranked.final), verdict=ranked.verdict, signal=ranked.signal,
            rounds=rounds, trace=tuple(traces), corpus=view, lexical_only=lexical, model_calls=calls,
        )


def _round_effect(name: str, ms: float, before: Ranked, after: Ranked, new_queries: int) -> StageTrace:
    """What a further round bought: whether the ranked slate (ids in order), its top note or the
    verdict changed, with the earlier round's verdict, signal and sources (``footnote eval`` reports
    them per category)."""
    ids0 = [c.fragment.id for c in before.final]
    ids1 = [c.fragment.id for c in after.final]
    return StageTrace(name, ms, {
        "ranks_changed": int(ids0 != ids1),
        "top_changed": int(ids0[:1] != ids1[:1]),
        "verdict_changed": int(before.verdict is not after.verdict),
        "new_queries": new_queries,
    }, {
        "verdict_before": before.verdict.value, "signal_before": float(before.signal.value),
        "sources_before": [c.fragment.source_id for c in before.final],
    })


def _merge_plans(plans: list[QueryPlan]) -> QueryPlan:
    if len(plans) == 1:
        return plans[0]
    first = plans[0]
    subs = list(first.subquestions)
    for p in plans[1:]:
        subs.extend(sq for sq in p.subquestions if sq not in subs)
    return replace(first, subquestions=tuple(subs), source="+".join(dict.fromkeys(p.source for p in plans)))
