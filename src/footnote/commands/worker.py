"""``footnote worker``: embed a store's backlog from any machine that reaches the store (docs/postgres.md,
"Workers on several machines").

A worker opens the store by its URL, loads the store's own embedder from its own models directory, and claims
batches of fragments without a vector (``claim_pending``: each batch held for ``backlog.lease_s``, renewed while
it runs), so any number of workers — and the servers' own background embedding — split one backlog without
embedding a fragment twice; a killed worker's claims pass to the others when their lease runs out. It keeps
polling for new backlog (``--poll``, default ``backlog.serve_poll_s``) until stopped (Ctrl-C, SIGTERM: what it
claimed and did not write goes back to the backlog), or with ``--until-empty`` exits once nothing is left.
``footnote status`` shows the workers holding claims and the last rate.
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
@common_options
def worker(ctx: Ctx, workers: int | None, until_empty: bool, poll: float | None) -> None:
    """Embed the store's backlog, sharing it with every other worker and server on the same store."""
    from footnote.corpus.embedding import BacklogEmbedder
    from footnote.engine import settings_for_store
    from footnote.models.embedders import make_embedder
    from footnote.redact import mask_url
    from footnote.store import open_store

    store = open_store(ctx.settings.store.url, ctx.settings.store, create=False)
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    t0 = time.monotonic()
    total: dict[str, Any] = {"embedded": 0, "skipped": 0, "runs": 0}
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
        if not ctx.as_json:
            click.echo(f"worker on {mask_url(store.url)}: {embedder.name}, "
                       f"{store.backlog().pending:,} fragments waiting", err=True)
        while not stop.is_set():
            try:
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
                if until_empty and store.backlog().pending == 0:
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
               "remaining": store.backlog().pending, "stopped": stop.is_set(), "embedder": embedder.name}
        if ctx.as_json:
            ctx.emit(doc)
        else:
            how = "stopped" if doc["stopped"] else "done"
            click.echo(f"worker {how}: {doc['embedded']:,} embedded in {doc['seconds']} s; "
                       f"{doc['remaining']:,} left in the store", err=True)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        store.close()
