"""``footnote sources`` (paged, filtered) and ``footnote remove``: looking after what a store holds."""

from __future__ import annotations

import sys
from typing import Any

import click

from footnote.commands.base import Ctx, common_options
from footnote.corpus.curate import select_sources
from footnote.errors import UsageError


def _count(src_meta: Any, fallback: int) -> int:
    n = src_meta.get("fragments") if src_meta else None
    return int(n) if n and str(n).isdigit() else fallback


@click.command("sources")
@click.option("--kind", default=None, help="Only sources of this kind.")
@click.option("--lang", default=None, help="Only sources in this language (e.g. en, de).")
@click.option("--collection", default=None, help="Only sources of this collection.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many rows (a page).")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip this many rows first.")
@click.option("--collections", "list_collections", is_flag=True, help="List the collections and their sizes instead.")
@common_options
def sources(ctx: Ctx, kind: str | None, lang: str | None, collection: str | None, limit: int | None,
            offset: int, list_collections: bool) -> None:
    """List the stored sources (id, kind, lang, fragments, title), ordered by id."""
    with ctx.engine() as engine:
        store = engine.store
        if list_collections:
            colls = store.collections()
            if ctx.as_json:
                ctx.emit({"collections": [{"name": k, "sources": v} for k, v in colls.items()]})
            else:
                for name, n in colls.items():
                    click.echo(f"{name or '(none)':<40} {n:>7}")
                click.echo(f"{len(colls)} collections")
            return
        total = store.count_sources(kind=kind, lang=lang, collection=collection)
        rows: list[dict[str, Any]] = []
        for src in store.list_sources(kind=kind, lang=lang, collection=collection, limit=limit, offset=offset):
            count = _count(src.meta, -1)
            if count < 0:
                count = len(store.fragments_of(src.id))
            rows.append({"id": src.id, "kind": src.kind, "lang": src.lang, "title": src.title,
                         "collection": src.collection, "fragments": count, "media_type": src.media_type,
                         "awaiting": src.meta.get("awaiting")})  # left for footnote worker (ingest --recognise-later)
    if ctx.as_json:
        ctx.emit({"sources": rows, "total": total, "offset": offset, "limit": limit})
        return
    if not rows:
        click.echo("no sources match" if total or offset or kind or lang or collection
                   else "no sources (run: footnote ingest PATH…)")
        return
    w = min(48, max(len(r["id"]) for r in rows))
    for r in rows:
        waits = f"  (waits for {r['awaiting']}: footnote worker)" if r["awaiting"] else ""
        click.echo(f"{r['id']:<{w}}  {r['kind']:<16} {r['lang']:<3} {r['fragments']:>6}  {r['title']}{waits}")
    shown = f"{offset + 1}–{offset + len(rows)} of {total}" if (limit or offset) else f"{total}"
    click.echo(f"{shown} sources, {sum(r['fragments'] for r in rows)} fragments listed")
    if limit and offset + len(rows) < total:
        click.echo(f"next page: --offset {offset + len(rows)} --limit {limit}")


@click.command("remove")
@click.argument("targets", nargs=-1)
@click.option("--collection", default=None, help="Remove every source of this collection.")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; change nothing.")
@common_options
def remove(ctx: Ctx, targets: tuple[str, ...], collection: str | None, dry_run: bool) -> None:
    """Remove stored sources by ID or by PATH (a file, or every source under a folder), with their
    fragments, vectors, cues and originals no other source shares — in one transaction."""
    if not targets and collection is None:
        raise UsageError("name what to remove: source ids, file or folder paths, or --collection NAME")
    with ctx.engine() as engine:
        sel = select_sources(engine.store, targets, collection)
        removed = list(sel.ids) if dry_run else engine.store.delete_sources(list(sel.ids)) if sel.ids else []
    if ctx.as_json:
        ctx.emit({"removed": removed, "unmatched": list(sel.unmatched), "dry_run": dry_run})
    else:
        verb = "would remove" if dry_run else "removed"
        for sid in removed:
            click.echo(f"{verb}: {sid}")
        for t in sel.unmatched:
            click.echo(f"no stored source matches {t!r}", err=True)
        click.echo(f"{len(removed)} source{'s' if len(removed) != 1 else ''} {verb}")
    if sel.unmatched:
        sys.exit(1)


def register(group: click.Group) -> None:
    group.add_command(sources)
    group.add_command(remove)
