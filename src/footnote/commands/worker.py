"""``footnote worker``: embed a store's backlog — and recognise the recordings and scans that ``footnote ingest
--recognise-later`` left — from any machine that reaches the store (docs/postgres.md, "Workers on several machines").

A worker opens the store by its URL, loads the store's own embedder from its own models directory, and claims
batches of fragments without a vector (``claim_pending``: each batch held for ``backlog.lease_s``, renewed while
it runs), so any number of workers — and the servers' own background embedding — split one backlog without
embedding a fragment twice; a killed worker's claims pass to the others when their lease runs out. It keeps
polling for new backlog (``--poll``, default ``backlog.serve_poll_s``) until stopped (Ctrl-C, SIGTERM: what it
claimed and did not write goes back to the backlog), or with ``--until-empty`` exits once nothing is left.
``footnote status`` shows the workers holding claims and the last rate.

Recognition jobs (``footnote.corpus.recognition``) come first: one at a time, leased for ``backlog.lease_s`` and
renewed while it runs, each only of a kind this machine can do (speech when its speech model is installed, scans
when Tesseract is; ``--no-recognise``: none); the passages it writes join the embedding backlog it then embeds.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from typing import Any

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import StoreError, UsageError


def register(group: click.Group) -> None:
    group.add_command(worker)


def _finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise click.BadParameter("must be a number of seconds", ctx, param)
    return value


@click.command("worker")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Embedding workers in this process (default settings.backlog.ingest_workers: one per core).")
@click.option("--until-empty", is_flag=True, help="Exit once the store has no fragment without a vector.")
@click.option("--poll", type=click.FloatRange(min=0.05, max=86_400.0), default=None, callback=_finite,
              help="Seconds between looks for new backlog (default settings.backlog.serve_poll_s). Without "
              "--until-empty the worker runs until stopped (Ctrl-C, SIGTERM).")
@click.option("--recognise/--no-recognise", "recognise", default=True, show_default=True,
              help="Also take speech-recognition and OCR jobs left by `ingest --recognise-later` (those this machine "
              "has the models for).")
@common_options
def worker(ctx: Ctx, workers: int | None, until_empty: bool, poll: float | None, recognise: bool) -> None:
    """Embed the store's backlog (and recognise what ingest left for workers), sharing it with every other worker
    and server on the same store."""
    from footnote.corpus.embedding import BacklogEmbedder, new_holder
    from footnote.corpus.recognition import Recognizer
    from footnote.engine import settings_for_store
    from footnote.models.embedders import make_embedder
    from footnote.redact import mask_url
    from footnote.store import open_store

    store = open_store(ctx.settings.store.url, ctx.settings.store, create=False)
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    t0 = time.monotonic()
    total: dict[str, Any] = {"embedded": 0, "skipped": 0, "runs": 0, "recognised": 0, "recognition_failed": 0}
    try:
        settings = settings_for_store(ctx.settings, store)
        bound = store.embedder_info()
        if bound is None:
            raise UsageError(f"{mask_url(store.url)} has no embedder bound: ingest with one, or `footnote reembed "
                             "--embedder NAME`, before starting workers")
        if settings.embedder.name != bound[0]:
            raise UsageError(f"{mask_url(store.url)} is bound to {bound[0]}: a worker embeds with the store's own "
                             "embedder (leave out --embedder; `footnote reembed --embedder NAME` switches the store)")
        embedder = make_embedder(settings.embedder, settings.models.dir_path, store_binding=bound)
        if embedder is None:  # pragma: no cover - "none" is refused above
            raise UsageError("worker needs an embedder")
        wait_s = poll if poll is not None else settings.backlog.serve_poll_s
        recognizer = Recognizer(settings, store, new_holder())
        tasks = recognizer.tasks() if recognise else ()
        if not ctx.as_json:
            jobs = store.recognition_jobs()
            click.echo(f"worker on {mask_url(store.url)}: {embedder.name}, "
                       f"{store.backlog().pending:,} fragments waiting"
                       + (f", {len(jobs):,} recordings or scans to recognise" if jobs else "")
                       + (f" (this machine: {', '.join(t.value for t in tasks) or 'neither'})" if jobs else ""),
                       err=True)
        while not stop.is_set():
            try:
                while tasks and not stop.is_set() and _recognise_one(store, recognizer, settings, tasks, total,
                                                                    quiet=ctx.as_json):
                    pass
                if store.backlog().pending > 0:
                    report = BacklogEmbedder(settings, store, embedder).run(workers=workers, stop=stop)
                    total["embedded"] += report.embedded
                    total["skipped"] += report.skipped
                    total["runs"] += 1
                    if report.error:
                        raise UsageError(f"embedding stopped: {report.error}")
                    if report.embedded and not ctx.as_json:
                        click.echo(f"embedded {report.embedded:,} in {report.seconds:.1f} s "
                                   f"({report.rate:.1f}/s); {report.remaining:,} left", err=True)
                if until_empty and store.backlog().pending == 0 and not _waiting_jobs(store, settings, tasks):
                    break
            except StoreError as e:
                if until_empty:
                    raise
                # a long-running worker outlives a locked or briefly unreachable store: it tries again
                click.echo(f"store unavailable, trying again in {wait_s:g} s: {e.message}", err=True)
            # what is left is claimed by others: an --until-empty worker looks again soon, not after a whole poll
            stop.wait(min(wait_s, 0.5) if until_empty else wait_s)
        seconds = time.monotonic() - t0
        doc = {**total, "seconds": round(seconds, 2), "rate": round(total["embedded"] / seconds, 2) if seconds else 0.0,
               "remaining": store.backlog().pending, "stopped": stop.is_set(), "embedder": embedder.name,
               "to_recognise": len(store.recognition_jobs())}
        if ctx.as_json:
            ctx.emit(doc)
        else:
            how = "stopped" if doc["stopped"] else "done"
            recognised = f"{doc['recognised']:,} recognised, " if doc["recognised"] else ""
            click.echo(f"worker {how}: {recognised}{doc['embedded']:,} embedded in "
                       f"{doc['seconds']} s; {doc['remaining']:,} left in the store"
                       + (f", {doc['to_recognise']:,} to recognise" if doc["to_recognise"] else ""), err=True)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        store.close()


def _waiting_jobs(store: Any, settings: Any, tasks: Any) -> bool:
    """Whether a recognition job this worker could take may still come free (one held by another worker, or one
    free it has not taken yet); a job past its tries waits for no one."""
    limit = settings.backlog.recognition_tries
    return any(j.tries < limit and j.task in tasks for j in store.recognition_jobs())


def _recognise_one(store: Any, recognizer: Any, settings: Any, tasks: Any, total: dict[str, Any], *, quiet: bool) -> bool:
    """Claim and run one recognition job (its lease renewed meanwhile); False when there is none to claim."""
    from footnote.errors import FootnoteError

    lease = settings.backlog.lease_s
    job = store.claim_recognition_job(recognizer.holder, lease, settings.backlog.recognition_tries, tasks)
    if job is None:
        return False
    done = threading.Event()

    def renew() -> None:
        while not done.wait(lease / 3):
            store.renew_recognition_job(job.source_id, recognizer.holder, lease)

    keeper = threading.Thread(target=renew, name="footnote-recognition-lease", daemon=True)
    keeper.start()
    t0 = time.monotonic()
    try:
        written = recognizer.run_one(job)
    except FootnoteError as e:
        total["recognition_failed"] += 1
        if not quiet:
            click.echo(f"failed to recognise: {e.message}", err=True)
        return True
    finally:
        done.set()
        keeper.join(timeout=5)
    if written is None:  # removed, or ingested otherwise, since it was left for a worker
        if not quiet:
            click.echo(f"skipped {job.source_id}: no longer waits for recognition", err=True)
        return True
    total["recognised"] += 1
    if not quiet:
        click.echo(f"recognised {job.source_id} ({job.task.value}): {written} passage{'s' if written != 1 else ''} in "
                   f"{time.monotonic() - t0:.1f} s", err=True)
    return True
