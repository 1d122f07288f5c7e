"""``footnote reembed [--embedder NAME]``: switch a store to another embedder, or finish its backlog.

Rebinding clears every vector in one transaction (on PostgreSQL the vector column and HNSW index are
rebuilt for the new dimension): every fragment becomes backlog, embedded by the same resumable loop as
``footnote ingest``. Search keeps working meanwhile — lexically for what has no vector yet. A killed
run resumes where it stopped: run the same command again.
"""

from __future__ import annotations

import sys
import time

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import UsageError
from footnote.redact import mask_url


@click.command("reembed")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Embedding workers (default settings.backlog.ingest_workers: one per core).")
@click.option("--no-wait", "no_wait", is_flag=True,
              help="Only rebind (clear the vectors) and return; `footnote serve` or a later reembed embeds them.")
@common_options
def reembed(ctx: Ctx, workers: int | None, no_wait: bool) -> None:
    """Re-embed every fragment with the configured embedder (--embedder NAME), resumably."""
    from footnote.commands.ingest_view import StageDisplay, embed_summary, resume_hint
    from footnote.corpus.embedding import BacklogEmbedder, claims_line
    from footnote.corpus.memory_import import MemoryImporter
    from footnote.engine import settings_for_store
    from footnote.models.embedders import make_embedder
    from footnote.store import open_store

    store = open_store(ctx.settings.store.url, ctx.settings.store, create=False)
    display = StageDisplay(sys.stderr)
    try:
        # no --embedder (env, file): finish the backlog with the store's own embedder, never switch to the default
        settings = settings_for_store(ctx.settings, store)
        if settings.embedder.name == "none":
            raise UsageError("reembed needs an embedder: --embedder NAME (not none)")
        before = store.embedder_info()
        embedder = make_embedder(settings.embedder, settings.models.dir_path, store_binding=before)
        if embedder is None:  # pragma: no cover - "none" is refused above
            raise UsageError("reembed needs an embedder: --embedder NAME (not none)")
        if before is not None and before != (embedder.name, embedder.dim):
            # load the new model (or reach its endpoint) before any vector is dropped: a missing model
            # fails here with the store unchanged
            embedder.embed_passages(["footnote"])
        dropped = store.rebind_embedder(embedder.name, embedder.dim)
        if before is not None and before != (embedder.name, embedder.dim):
            click.echo(f"rebound {store.url} from {before[0]} (dim {before[1]}) to {embedder.name} "
                       f"(dim {embedder.dim}): {dropped:,} vectors dropped; lexical search meanwhile", err=True)
        if no_wait:
            report = None
        else:
            try:
                report = BacklogEmbedder(settings, store, embedder).run(progress=display.embed, workers=workers)
            finally:
                display.close()
            notes = MemoryImporter(settings, store, embedder).embed_stale()  # curated notes: few, embedded at once
            if notes:
                click.echo(f"re-embedded {notes} memory note{'s' if notes != 1 else ''} with {embedder.name}", err=True)
        bl = store.backlog()
        # what is left may be held by another worker (a running server's): say so, not only "resume"
        held = claims_line(store.claim_holders(), time.time()) if bl.pending else ""
    finally:
        store.close()
    resume = f"footnote reembed --embedder {embedder.name}" + ctx.store_option()
    if ctx.as_json:
        ctx.emit({"store": mask_url(settings.store.url), "embedder": embedder.name, "dim": embedder.dim, "dropped": dropped,
                  "embedding": report.to_dict() if report else None,
                  "fragments": bl.fragments, "embedded": bl.embedded, "pending": bl.pending,
                  **({"resume": resume} if bl.pending else {})})
    else:
        if report is not None:
            click.echo(embed_summary(report))
        click.echo(f"{bl.embedded:,} of {bl.fragments:,} fragments embedded with {embedder.name}")
        if held:
            click.echo(f"note: {held}", err=True)
        if bl.pending:
            click.echo(resume_hint(resume), err=True)
        if report is not None and report.error:
            click.echo(f"error: {report.error}", err=True)
    if report is not None and report.interrupted:
        sys.exit(130)
    if report is not None and report.error:
        sys.exit(1)


def register(group: click.Group) -> None:
    group.add_command(reembed)
