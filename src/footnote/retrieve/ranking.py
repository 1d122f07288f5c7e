"""Steps 3–6 of a search round (docs/architecture.md, "The flow"): the pool read with its cosines and the
pre-floor, the cap, the rerank (fusion or a configured reranker), dedup, the cut with its reserves, the gate's
verdict, and the curated notes' boosts. The :class:`~footnote.retrieve.pipeline.Retriever` runs it once a round."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from footnote.models.protocols import Embedder, Reranker
from footnote.records.fragments import AddressLocator
from footnote.retrieve.books import BookIndex
from footnote.retrieve.dedup import dedup_windows
from footnote.retrieve.judge import CoverageJudge
from footnote.retrieve.lanes import FORCING_LANES, LanePool
from footnote.retrieve.memory import TurnMemory, apply_boosts
from footnote.retrieve.pool import PoolStore, embed_pending, majority_lang, read_pool
from footnote.retrieve.rerank import rerank
from footnote.retrieve.reserves import add_reserves
from footnote.retrieve.types import Candidate, GateSignal, Lane, StageTrace, Verdict, pooled
from footnote.settings import GateThresholds, Settings


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


@dataclass(frozen=True)
class Ranked:
    final: list[Candidate]
    signal: GateSignal
    verdict: Verdict
    thresholds: GateThresholds
    boosts: dict[str, dict[str, float]] = field(default_factory=dict)


class Ranker:
    """One round's ranking over a store (shared by concurrent searches). ``corpus_langs``: the pool's majority
    language at the last search in each query language (what the next one expects: ``Retriever.rows_floor``)."""

    def __init__(self, settings: Settings, store: PoolStore, embedder: Embedder | None, reranker: Reranker | None,
                 judge: CoverageJudge) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.reranker = reranker
        self.judge = judge
        self.corpus_langs: dict[str, str] = {}

    def rank(
        self, question: str, qvec: np.ndarray | None, qlang: str, pool: LanePool, traces: list[StageTrace], sfx: str,
        lexical: bool, asked: tuple[AddressLocator, ...] = (), keep_top: int | None = None, mem: TurnMemory | None = None,
        rows_min: float | None = None, *, books: BookIndex,
    ) -> Ranked:
        """``rows_min``: the floor the dense lanes left rows out below (:meth:`rows_floor`)."""
        s, rs = self.settings, self.settings.retrieve
        # pool: fragments and their true cosine to the question
        t0 = time.perf_counter()
        pr = read_pool(
            self.store, pool, qvec, embedder=self.embedder is not None, rows_min=None if lexical else rows_min,
            margin=rs.dense_rows_floor_margin,
            prefloor_of=lambda langs: self.judge.thresholds(qlang, majority_lang(langs, s.corpus.default_lang), lexical).prefloor,
        )
        jit = 0
        if qvec is not None and self.embedder is not None and not lexical:
            pr, jit = embed_pending(pr, pool, qvec, self.embedder, rs.pending_embed_max)
        ids, frags, mat, cos, has_vec, read = pr.ids, pr.frags, pr.mat, pr.cos, pr.has_vec, pr.read
        corpus_lang = majority_lang(pr.langs, s.corpus.default_lang)
        self.corpus_langs[qlang] = corpus_lang  # what the next search in this language expects (rows_floor)
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
            "embedded_for_turn": jit,
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
        signal, verdict, lead = self.judge.judge(question, qvec, qlang, final, thresholds, lexical, asked, books)
        other: dict[str, object] = {}
        if verdict is Verdict.BAIL_OUT and s.gate.other_languages and not lexical and qvec is not None:
            look, other = self.judge.other_languages(question, qvec, qlang, final, asked, books)
            if look is not None:
                signal, verdict, choice, lead = look
                thresholds = choice.thresholds
        if lead is not None:
            final = [c for c in final if c.fragment.id == lead] + [c for c in final if c.fragment.id != lead]
        traces.append(StageTrace(f"gate{sfx}", _ms(t0), {"candidates": len(final), "lectures": signal.lecture_count},
                                 {"verdict": verdict.value, "value": signal.value, "pair": choice.pair,
                                  "thresholds": choice.source.value, "thresholds_via": choice.via, **signal.extra,
                                  **({"other_languages": other} if other else {})}))
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
        return Ranked(final, signal, verdict, thresholds, given)


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


__all__ = ["Ranked", "Ranker"]
