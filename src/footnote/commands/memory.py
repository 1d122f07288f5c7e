"""``footnote memory import PATH… | list | remove ID``: curated memory notes (docs/memory.md)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import click

from footnote.commands.base import Ctx, common_options


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


@click.group("memory")
def memory() -> None:
    """Curated memory: pinned answers, topic boosts, background notes."""


@memory.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@common_options
def import_(ctx: Ctx, paths: tuple[Path, ...]) -> None:
    """Import note files (Markdown with front matter) or folders of them; unchanged notes are skipped."""
    with ctx.engine() as engine:
        report = engine.import_memory(list(paths))
    if ctx.as_json:
        ctx.emit(report.to_dict())
    else:
        for r in report.results:
            if r.status == "failed":
                click.echo(f"error: {r.error}", err=True)
            elif r.status == "refused":
                click.echo(f"refused: {r.path}: {r.error}", err=True)
        refused = report.count("refused")
        click.echo(f"{report.count('imported')} imported, {report.count('unchanged')} unchanged, {report.failed} failed"
                   f"{f', {refused} refused' if refused else ''} ({'embedded with ' + report.embedder if report.embedder else 'lexical matching only'})")
    if report.failed:
        sys.exit(1)


@memory.command("list")
@common_options
def list_(ctx: Ctx) -> None:
    """List the notes: id, kind, author, when updated, triggers."""
    with ctx.engine() as engine:
        notes = engine.memory_summaries()
    if ctx.as_json:
        ctx.emit({"notes": notes})
        return
    if not notes:
        click.echo("no memory notes (add some with `footnote memory import PATH`)")
    for n in notes:
        trig = "; ".join(n["triggers"]) or "—"
        missing = f"  (sources no longer in the store: {', '.join(n['missing_sources'])})" if n["missing_sources"] else ""
        click.echo(f"{n['id']}  {n['kind']:<6}  {n['author'] or '—'}  {_when(n['updated'])}  {trig}{missing}")


@memory.command("remove")
@click.argument("note_id")
@common_options
def remove(ctx: Ctx, note_id: str) -> None:
    """Remove note NOTE_ID."""
    with ctx.engine() as engine:
        engine.remove_memory_note(note_id)
    if ctx.as_json:
        ctx.emit({"removed": note_id})
    else:
        click.echo(f"removed {note_id}")


def register(group: click.Group) -> None:
    group.add_command(memory)
