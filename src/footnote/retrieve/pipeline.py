"""The retrieval pipeline up to the coverage gate (docs/architecture.md "The flow", steps 1–7).

Round 1 runs the deterministic plan (the question + detected addresses); the gate decides.
BAIL_OUT → stop with no model call; SUFFICIENT / GOOD_ENOUGH → stop; between the bounds → round 2
with a regenerated plan (the router's rewrite when one is configured, else a deterministic
variant), pools merged, re-checked; at most ``settings.gate.max_rounds`` rounds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from footnote.cpu import available_cores
from footnote.models.protocols import Budget, ChatModel, Embedder, Reranker, ThreadedQueries
from footnote.records.fragments import AddressLocator
from footnote.records.lang import question_lang
from footnote.records.memory import NoteKind
from footnote.retrieve.background import BackgroundSample
from footnote.retrieve.books import BookCache, in_address_order
from footnote.retrieve.corpus_view import TurnCorpus
from footnote.retrieve.dedup import dedup_windows
from footnote.retrieve.judge import CoverageJudge
from footnote.retrieve.lanes import DENSE_LANE, FORCING_LANES, LanePool, LaneQuery, plan_queries
from footnote.retrieve.memory import MemoryMatcher, Resolved, TurnMemory, apply_boosts, pin_veto, pinned_of
from footnote.retrieve.plan import first_round_plan, second_round_plan
from footnote.retrieve.pool import majority_lang, read_pool
from footnote.retrieve.rerank import rerank
from footnote.retrieve.reserves import add_reserves
from footnote.retrieve.runners import LaneRunner, Round, lane_runner
from footnote.retrieve.types import (
    Candidate,
    GateSignal,
    Lane,
    LaneHit,
    QueryPlan,
    SearchResult,
    StageTrace,
    Verdict,
    pooled,
)
from footnote.settings import GateThresholds, Settings
from footnote.store.protocol import Store
from footnote.text import Analyzer

log = logging.getLogger(__name__)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


@dataclass(frozen=True)
class _Ranked:
    final: list[Candidate]
    signal: GateSignal
    verdict: Verdict
    thresholds: GateThresholds
    boosts: dict[str, dict[str, float]] = field(default_factory=dict)


def embeds_first(embedder: Embedder | None, store: Store) -> bool:
    """Whether a round embeds its queries before any lane runs: when the query embedding uses every core
    this process may run on (an embedder that declares its query threads, :class:`ThreadedQueries`) and the
    store computes on this machine (``computes_here``), so text lanes run beside it would only compete with
    it for the cores (docs/retrieval.md, "The query first, then every lane")."""
    if not isinstance(embedder, ThreadedQueries):
        return False
    threads = embedder.query_threads
    return threads > 0 and available_cores() <= threads and bool(store.computes_here)


class Retriever:
    """Plan → lanes → pool/pre-floor → cap → rerank → cut → reserves → dedup → gate, in rounds."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        embedder: Embedder | None,
        reranker: Reranker | None,
        router: ChatModel | None,
        lanes: LaneRunner | None = None,
        *,
        embed_first: bool | None = None,
    ) -> None:
        """``lanes``: how a round's lanes run on this store (default: :func:`~footnote.retrieve.runners.lane_runner`,
        batched on a store that batches lane calls, else serial). ``embed_first``: force the schedule that
        embeds the query before any lane (True) or the one that overlaps them (False) — for tests and
        benches; None decides by :func:`embeds_first`."""
        self.settings = settings
        self.lanes = lanes or lane_runner(store, settings)
        self.store = store
        self.embedder = embedder
        self.reranker = reranker
        self.router = router
        self._lock = threading.Lock()
        self._analyzer = Analyzer()
        self.books = BookCache(store, settings.retrieve.books_cache_s)
        self.background = BackgroundSample(store, settings.gate)
        self.judge = CoverageJudge(settings, store, embedder, self.books, self._analyzer, self.background)
        self._executor: ThreadPoolExecutor | None = None
        self.embed_first = (embed_first if embed_first is not None else embeds_first(embedder, store)) \
            and embedder is not None
        self._in_flight = 0  # searches running now (embed_first applies to a search that runs alone)
        self.matcher = MemoryMatcher(settings, store, embedder.name if embedder else None, self._analyzer)
        self._corpus_langs: dict[str, str] = {}  # query language → the pool's majority language last time

    # -- public --------------------------------------------------------------------------------
    @property
    def lexical_only(self) -> bool:
        """No embedder, or a store without any vectors (filled lexical-only): the lexical lanes alone."""
        if self.embedder is None:
            return True
        sample = self.background.vectors()
        return sample is None or len(sample) == 0

    def corpus(self) -> TurnCorpus:
        """A turn's reader of the corpus (the books as they are now); :meth:`search` hands it on."""
        return TurnCorpus(self.store, self.books.get(), self.settings, self.embedder)

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
        qlang = lang or question_lang(question, s.corpus.default_lang, min_confidence=s.corpus.question_lang_min_confidence)
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
        ranked = self._rank(question, qvec, plan.lang, pool, traces, "", lexical, asked, keep_top, mem, rows_min)
        if mem.pinned is not None and (why := self._pin_veto(question, plan.lang, mem, ranked, view)):
            # the note serves, it does not override: the search goes on as if it had not matched
            mem = replace(mem, pinned=None, pinned_refs=None, vetoed=(mem.pinned.note.id, why))
            lean, keep_top = False, s.retrieve.keep_top
            ranked = self._rank(question, qvec, plan.lang, pool, traces, "", lexical, asked, keep_top, mem, rows_min)
        rounds, calls = 1, 0
        plans = [plan]
        max_rounds = 1 if lean else s.gate.max_rounds  # lean policy: no second round, no regeneration call
        while ranked.verdict is Verdict.INSUFFICIENT and rounds < max_rounds:
            if self.router is None and not s.gate.second_round_without_router:
                # the deterministic variant did not earn its place (docs/retrieval.md "Rounds"): the
                # gate's verdict stands
                traces.append(StageTrace(f"round{rounds + 1}", 0.0, {"skipped": 1},
                                         {"reason": "no router (gate.second_round_without_router is off)"}))
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
            ranked = self._rank(question, qvec, plan.lang, pool, traces, sfx, lexical, asked, keep_top, mem, rows_min)
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
        corpus = self._corpus_langs.get(qlang, qlang)
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

    def _pin_veto(self, question: str, qlang: str, mem: TurnMemory, ranked: _Ranked, view: TurnCorpus) -> str | None:
        assert mem.pinned is not None
        srcs = view.sources(c.fragment.source_id for c in ranked.final[: self.settings.memory.lean_keep_top])
        titles = {sid: src.title for sid, src in srcs.items() if src.title}
        return pin_veto(question, qlang, mem.pinned.note, mem.pinned_refs, ranked.final, titles, self.settings,
                        self.matcher.analyzer)

    def _rank(
        self, question: str, qvec: np.ndarray | None, qlang: str, pool: LanePool, traces: list[StageTrace], sfx: str,
        lexical: bool, asked: tuple[AddressLocator, ...] = (), keep_top: int | None = None, mem: TurnMemory | None = None,
        rows_min: float | None = None,
    ) -> _Ranked:
        """``rows_min``: the floor the dense lanes left rows out below (:meth:`rows_floor`)."""
        s, rs = self.settings, self.settings.retrieve
        # pool: fragments and their true cosine to the question
        t0 = time.perf_counter()
        pr = read_pool(
            self.store, pool, qvec, embedder=self.embedder is not None, rows_min=None if lexical else rows_min,
            margin=rs.dense_rows_floor_margin,
            prefloor_of=lambda langs: self.judge.thresholds(qlang, majority_lang(langs, s.corpus.default_lang), lexical).prefloor,
        )
        ids, frags, mat, cos, has_vec, read = pr.ids, pr.frags, pr.mat, pr.cos, pr.has_vec, pr.read
        corpus_lang = majority_lang(pr.langs, s.corpus.default_lang)
        self._corpus_langs[qlang] = corpus_lang  # what the next search in this language expects (rows_floor)
        th0 = self.judge.thresholds(qlang, corpus_lang, lexical)
        cands: list[Candidate] = []
        dropped = 0
        prefloor = th0.prefloor
        for i, c, emb in zip(ids, cos.tolist(), has_vec.tolist(), strict=True):
            hits = tuple(pool.hits[i])
            forced = any(h.lane in FORCING_LANES for h in hits)
            if not forced and not lexical and c < prefloor:
                dropped += 1
                continue
            cands.append(pooled(frags[i], c, hits, forced=forced, embedded=emb))
        traces.append(StageTrace(f"pool{sfx}", _ms(t0), {
            "pooled": len(ids) + pr.left_out, "forced": sum(c.forced for c in cands),
            "below_prefloor": dropped + pr.left_out, "kept": len(cands), "read": read, "rows_left_out": pr.left_out,
        }, {"prefloor": th0.prefloor}))

        # cap: top `cap` by cosine; exact-address hits and the top lexical/trigram hits are protected
        t0 = time.perf_counter()
        capped, protected = _cap(cands, rs.cap, rs.cap_protect_lexical, by_cosine=not lexical)
        traces.append(StageTrace(f"cap{sfx}", _ms(t0), {"in": len(cands), "kept": len(capped), "protected": protected}))

        # rerank (configured cross-encoder, else fused lane evidence)
        t0 = time.perf_counter()
        ranked, method = rerank(question, capped, reranker=self.reranker, query_lang=qlang, settings=s,
                                embedder=self.embedder.name if self.embedder is not None else "none")
        traces.append(StageTrace(f"rerank{sfx}", _ms(t0), {"in": len(capped)}, {"method": method}))

        # dedup overlapping windows, then cut to keep_top by rank, then reserves
        t0 = time.perf_counter()
        deduped, removed = dedup_windows(ranked)
        traces.append(StageTrace(f"dedup{sfx}", _ms(t0), {"in": len(ranked), "removed": removed}))
        t0 = time.perf_counter()
        top = rs.keep_top if keep_top is None else keep_top
        kept, rest = deduped[:top], deduped[top:]
        choice = self.judge.choice(qlang, kept[0].fragment.lang if kept else corpus_lang, lexical)
        thresholds = choice.thresholds
        final, added = add_reserves(kept, rest, s, thresholds.reserve_floor)
        traces.append(StageTrace(f"reserves{sfx}", _ms(t0), {"kept": len(kept), "reserves": added},
                                 {"reserve_floor": thresholds.reserve_floor}))

        # gate: judged on the slate without boosts (a boost is not evidence)
        t0 = time.perf_counter()
        signal, verdict, lead = self.judge.judge(question, qvec, qlang, final, thresholds, lexical, asked)
        if lead is not None:
            final = [c for c in final if c.fragment.id == lead] + [c for c in final if c.fragment.id != lead]
        traces.append(StageTrace(f"gate{sfx}", _ms(t0), {"candidates": len(final), "lectures": signal.lecture_count},
                                 {"verdict": verdict.value, "value": signal.value, "pair": choice.pair,
                                  "thresholds": choice.source.value, "thresholds_via": choice.via, **signal.extra}))
        given: dict[str, dict[str, float]] = {}
        if mem is not None and mem.boosts:
            t0 = time.perf_counter()
            row = {i: j for j, i in enumerate(ids)}
            body_cos: dict[str, np.ndarray] = {}
            if mat is not None:
                cmat = np.stack([mat[row[c.fragment.id]] for c in deduped]) if deduped else np.zeros((0, 1), np.float32)
                for nid, nv in mem.texts.items():
                    body_cos[nid] = (cmat @ nv.T).max(axis=1) if len(nv) and len(cmat) else np.zeros(len(deduped))
            boosted, given = apply_boosts(deduped, mem.boosts, body_cos, s, mem.named)
            final, _ = add_reserves(boosted[:top], boosted[top:], s, thresholds.reserve_floor)
            moved = sum(1 for a, b in zip(kept, final, strict=False) if a.fragment.id != b.fragment.id)
            traces.append(StageTrace(f"boost{sfx}", _ms(t0), {"boosted": len(given), "moved": moved},
                                     {"boost_max": s.memory.boost_max, "by_fragment": given}))
        return _Ranked(final, signal, verdict, thresholds, given)

    def _result(
        self, plan: QueryPlan, ranked: _Ranked, rounds: int, traces: list[StageTrace], calls: int, lexical: bool,
        view: TurnCorpus,
    ) -> SearchResult:
        return SearchResult(
            plan=plan, candidates=tuple(ranked.final), verdict=ranked.verdict, signal=ranked.signal,
            rounds=rounds, trace=tuple(traces), corpus=view, lexical_only=lexical, model_calls=calls,
        )


def _round_effect(name: str, ms: float, before: _Ranked, after: _Ranked, new_queries: int) -> StageTrace:
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


def _cap(cands: list[Candidate], cap: int, protect: int, *, by_cosine: bool) -> tuple[list[Candidate], int]:
    """The top ``cap`` by cosine, with exact-address hits and each lexical/trigram lane's top
    ``protect`` hits per query guaranteed a place. Lexical only: by best lexical rank instead."""
    def is_protected(c: Candidate) -> bool:
        return any(h.lane is Lane.ADDRESS or (h.lane in FORCING_LANES and h.rank < protect) for h in c.lanes)

    def key(c: Candidate) -> tuple[float, str]:
        if by_cosine:
            return (-c.score, c.fragment.id)
        return (float(min((h.rank for h in c.lanes), default=10**6)), c.fragment.id)

    # one key and one protection test per candidate (keys are unique: they end with the fragment id)
    keyed = sorted(((key(c), is_protected(c), c) for c in cands), key=lambda x: x[0])
    prot = [x for x in keyed if x[1]][:cap]
    rest = [x for x in keyed if not x[1]][: max(0, cap - len(prot))]
    return [x[2] for x in sorted(prot + rest, key=lambda x: x[0])], len(prot)


def _merge_plans(plans: list[QueryPlan]) -> QueryPlan:
    if len(plans) == 1:
        return plans[0]
    first = plans[0]
    subs = list(first.subquestions)
    for p in plans[1:]:
        subs.extend(sq for sq in p.subquestions if sq not in subs)
    return replace(first, subquestions=tuple(subs), source="+".join(dict.fromkeys(p.source for p in plans)))
