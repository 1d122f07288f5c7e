"""``footnote migrate --from sqlite:///… --to postgresql://…``: copy a store without re-embedding."""

from __future__ import annotations

import sys

import click

from footnote.commands.base import Ctx, ProgressBar, common_options
from footnote.errors import UsageError
from footnote.redact import mask_url
from footnote.store import open_store
from footnote.store.copy import copy_store


@click.command("migrate")
@click.option("--from", "from_url", required=True, help="Store to copy from (path, sqlite:///path or postgresql://…).")
@click.option("--to", "to_url", default=None,
              help="Store to copy into (default: the configured store, --store / FOOTNOTE_STORE).")
@click.option("--prune", is_flag=True, help="Also delete sources in the target that the source store lacks.")
@click.option("--progress/--no-progress", default=None, help="Force the progress bar on or off (default: on a terminal).")
@common_options
def migrate(ctx: Ctx, from_url: str, to_url: str | None, prune: bool, progress: bool | None) -> None:
    """Copy sources, fragments, embeddings and original files from one store into another, without
    re-embedding. Resumable: sources whose content hash already matches in the target are skipped."""
    target_url = to_url or ctx.settings.store.url
    if target_url == from_url:
        raise UsageError("--from and --to name the same store")
    base = ctx.settings.store
    src = open_store(from_url, base.model_copy(update={"url": from_url}))
    try:
        dst = open_store(target_url, base.model_copy(update={"url": target_url}))
        bar = ProgressBar(sys.stderr.isatty() if progress is None else progress, "migrating")
        try:
            report = copy_store(src, dst, prune=prune, progress=bar)
        finally:
            bar.close()
            dst.close()
    finally:
        src.close()
    if ctx.as_json:
        data = report.to_dict()
        data["source_url"], data["target_url"] = mask_url(data["source_url"]), mask_url(data["target_url"])
        ctx.emit(data)
    else:
        for err in report.errors:
            click.echo(f"failed: {err}", err=True)
        emb = f"embedder {report.embedder} (dim {report.dim})" if report.embedder else "lexical only"
        click.echo(
            f"{report.copied} copied, {report.skipped} unchanged, {report.failed} failed"
            + (f", {report.pruned} pruned" if prune else "")
            + f"; {report.fragments} fragments ({report.embedded} embedded), "
            f"{report.original_bytes} bytes of originals in {report.seconds:.1f} s; {emb}"
        )
    if not report.ok:
        sys.exit(1)


def register(group: click.Group) -> None:
    group.add_command(migrate)
