"""``retrieve``: lanes, pool, cap, reserves; the fusion weights and the reranker in their own sections."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from footnote.settings.base import _Frozen
from footnote.settings.fusion import FusionSettings, FusionWeights
from footnote.settings.rerank import RerankSettings


class RetrieveSettings(_Frozen):
    section = "retrieve"
    max_subquestions: int = Field(4, description="Sub-questions in a plan, at most.")
    max_paraphrases: int = Field(2, description="Paraphrases per sub-question, at most.")
    dense_k: int = Field(40, description="Candidates per dense lane (per kind group) per query.")
    parallel_text_lanes_min_fragments: int = Field(
        10_000, ge=0,
        description="A store without batched lanes (SQLite), the query embedded first: from this many embedded fragments on, "
        "the text lanes (and the read of their hits' rows) run on a worker thread while the dense lanes run on "
        "the calling thread. Both release the GIL for most of their work, so a large store gains; on a small "
        "store the two threads' Python only contends (docs/retrieval.md).",
    )
    ready_vector_wait_ms: float = Field(
        2.0,
        description="With a batching store (PostgreSQL): wait this long for the query vector before the text lanes "
        "start; if it is ready by then (the query cache had it), text and dense lanes go as ONE batch (concurrent "
        "connections) instead of two in a row.",
    )
    dense_rows_floor_margin: float = Field(
        0.01, ge=0.0,
        description="A dense lane on a store that joins the hits' rows to its statements (PostgreSQL) returns the rows only of the hits whose cosine could pass the pool's "
        "pre-floor (the one expected for the query's language and the majority language the pool had at the previous "
        "search in it) less this margin; the others come back as id, cosine and language, all the pool uses of a hit "
        "it drops (a pre-floor lower than expected: the pool reads the ones it may keep, so the candidates are the "
        "same either way). The margin covers the last digits by which the server's cosine and the pool's differ; a "
        "large one (10) sends every row, the A/B reference of docs/postgres.md.",
    )
    lexical_k: int = Field(40, description="Candidates per lexical lane per query.")
    address_k: int = Field(
        64, description="Candidates from the address lane per address (every fragment at that address: a verse and all its commentary chunks)."
    )
    trigram_k: int = Field(8, description="Candidates from the trigram lane per query (transliterated phrases only).")
    max_addresses: int = Field(
        32, description="Addresses one question is searched for at most, after ranges and chapters are expanded "
        "(the plan says when more were asked)."
    )
    chapter_max_verses: int = Field(
        12, description="A chapter or range asked for ('BG 2', 'HB 1.1-1.5') is searched verse by verse, in order, "
        "up to this many verses; the plan says so when the cap cuts it."
    )
    cap: int = Field(60, description="Pool capped to this many by cosine before reranking.")
    keep_top: int = Field(16, description="Kept after reranking, by rank (no absolute cutoff).")
    reserve_verses: int = Field(2, description="Verses guaranteed after the cut (above the reserve floor).")
    reserve_library: int = Field(2, description="Library passages guaranteed after the cut (above the reserve floor).")
    reranker: Literal["fusion", "http", "local"] = Field("fusion", description="Reranker: fused lane evidence, Cohere-style HTTP, or a local cross-encoder dir.")
    pending_embed_max: int = Field(
        4, ge=0, description="While the store embeds (some fragments have vectors, some not yet): the pooled fragments "
        "without a vector that the lexical lanes rank best, at most this many per ranking (a turn ranks once, again "
        "for a second round), are embedded in memory (never written), so fusion and the gate judge them by their true "
        "cosine, not a neutral one — a passage ingested a minute ago answers its own question. 0: never; each costs "
        "one passage embedding. A store with no vector at all is searched by its words alone."
    )
    cap_protect_lexical: int = Field(
        3, description="Top hits of each lexical/trigram lane per query kept through the cap regardless of cosine."
    )
    rerank: RerankSettings = Field(
        default_factory=lambda: RerankSettings(),
        description="A reranker endpoint or model when retrieve.reranker is http or local: URL, model, key, timeouts.",
    )
    fusion: FusionSettings = Field(
        default_factory=lambda: FusionSettings(),
        description="The offline ranking (reranker = fusion): lane weights in units of the query's cosine spread, per embedder.",
    )

    def fusion_weights(self, embedder: str) -> FusionWeights:
        """The offline fusion weights for ``embedder``: its ``fusion_by_embedder`` entry, else the fields."""
        return self.fusion.by_embedder.get(embedder) or FusionWeights(
            lexical=self.fusion.lexical_weight, cross_lexical=self.fusion.cross_lexical_weight,
            trigram=self.fusion.trigram_weight, names=self.fusion.name_weight, fitted_on="retrieve.fusion.*_weight",
        )
