"""``footnote ingest``, ``footnote status`` (``footnote sources`` and ``remove``: commands/curate.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from footnote.cli import Ctx, ProgressBar, common_options
from footnote.errors import UsageError


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--kind", default=None, help="Kind for sources that do not declare one (see settings.corpus.kinds).")
@click.option("--lang", default=None, help="Language for sources that do not declare one (else detected).")
@click.option("--prune", is_flag=True, help="Delete stored sources under PATHs (folders or files) that are no longer there.")
@click.option("--collection", default=None,
              help="Collection name: prefixes the ids of file sources (default: each folder's own name).")
@click.option("--audio", type=click.Path(path_type=Path), default=None,
              help="The audio file of the one transcript given (when their names differ).")
@common_options
def ingest(ctx: Ctx, paths: tuple[Path, ...], kind: str | None, lang: str | None, prune: bool,
           collection: str | None, audio: Path | None) -> None:
    """Load, chunk, embed and store the files under PATH… (idempotent)."""
    kinds = ctx.settings.corpus.kinds
    if kind is not None and kind not in kinds:
        raise UsageError(f"--kind {kind!r} is not a known kind (known: {', '.join(kinds)})")
    bar = ProgressBar(sys.stderr.isatty(), "ingesting")
    with ctx.engine(create=True) as engine:
        try:
            report = engine.ingest(list(paths), kind=kind, lang=lang, prune=prune, progress=bar,
                                   collection=collection, audio=audio)
        except KeyboardInterrupt:
            bar.close()
            stats = engine.store.stats()
            click.echo(
                f"\ninterrupted: the store {stats.url} keeps every source written before the interrupt, each one "
                f"whole ({stats.sources} sources, {stats.fragments} fragments now); the rest were not written"
                + (" and nothing was pruned" if prune else "")
                + ". Run the same `footnote ingest` again to finish: unchanged sources are skipped.",
                err=True,
            )
            sys.exit(130)
        finally:
            bar.close()
    if ctx.as_json:
        data = report.to_dict()
        data["sources"] = [{k: e[k] for k in ("path", "source_id", "status", "fragments", "error")}
                           for e in data["sources"]]
        ctx.emit(data)
    else:
        for e in report.entries:
            if e.error:
                click.echo(f"failed: {e.error}" if e.path in e.error else f"failed: {e.path}: {e.error}", err=True)
        for path, why in report.refused:
            click.echo(f"refused: {path}: {why}", err=True)
        for p in report.pairings:
            click.echo(f"paired: {p.transcript} + {p.audio} ({p.how})")
        for path, by in report.superseded:
            click.echo(f"superseded: {path} (same track as {by})")
        for path in report.unpaired_audio:
            click.echo(f"unpaired audio: {path} (no transcript names it; pair with --audio or a .audio sidecar)",
                       err=True)
        s = report.summary()
        pruned = f", {s['pruned']} pruned" if prune else ""
        emb = "lexical only" if s["embedder"] is None else f"embedder {s['embedder']}"
        click.echo(f"{s['added']} added, {s['unchanged']} unchanged, {s['replaced']} replaced, "
                   f"{s['failed']} failed{pruned}; {s['fragments']} fragments written in {s['seconds']:.1f} s ({emb})")
    if not report.ok:
        sys.exit(1)


@click.command("status")
@common_options
def status(ctx: Ctx) -> None:
    """Store, embedder, counts per kind and language; says when search is lexical only."""
    with ctx.engine() as engine:
        st = engine.status()
    if ctx.as_json:
        ctx.emit(st)
        return
    click.echo(f"store:     {st['store']}")
    emb = st["embedder"] or "none"
    built = st.get("store_embedder")
    if st["empty"]:
        click.echo(f"embedder:  {emb if st['embedder'] else 'none (lexical only)'}")
        click.echo("the store is empty: add sources with `footnote ingest PATH…`"
                   + (f" (they will be embedded with {st['embedder']})" if st["embedder"] else " (lexical only)"))
        return
    if built == "none":
        click.echo(f"embedder:  {emb} (store built lexical only: no vectors)")
    elif built:
        click.echo(f"embedder:  {emb} (store built with {built}, dim {st['dim']})")
    else:
        click.echo(f"embedder:  {emb if st['embedder'] else 'none (lexical only)'}")
    if st.get("gate_calibrated") is False:
        click.echo(f"gate:      uncalibrated: using {st['gate_thresholds']}'s thresholds (run `footnote calibrate`)")
    if st.get("embedder_model"):
        click.echo(f"model:     {st['embedder_model']}")
    click.echo(f"sources:   {st['sources']}")
    click.echo(f"fragments: {st['fragments']} ({st['embedded']} embedded)")
    for title, key in (("by kind", "by_kind"), ("by lang", "by_lang")):
        counts = st.get(key) or {}
        click.echo(f"{title}:   " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"))
    if st["lexical_only"]:
        why = "the store holds no vectors" if st["embedder"] is not None else (
            "the store was built without an embedder" if built == "none" else "no embedder configured")
        click.echo(f"search:    lexical only ({why})")
    else:
        click.echo("search:    lexical + dense")


def register(group: click.Group) -> None:
    group.add_command(ingest)
    group.add_command(status)
