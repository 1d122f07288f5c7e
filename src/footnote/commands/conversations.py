"""``footnote conversations [ID] [--delete] [--limit N]``: list the saved conversations, show one with
its turns and citations, or remove one; ``footnote conversations export ID --format md|html``: write one (or
one of its answers) as a file to take away (``footnote.server.export``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import NotFound
from footnote.server.export import ExportFormat, export_conversation
from footnote.store import open_store
from footnote.store.conversations import check_conversation_id


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def register(group: click.Group) -> None:
    @group.command("conversations")
    @click.argument("conversation_id", required=False)
    @click.argument("export_id", required=False, metavar="[ID]")
    @click.option("--delete", is_flag=True, help="Remove conversation ID and its turns.")
    @click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True,
                  help="Conversations listed, most recent first.")
    @click.option("--format", "fmt", type=click.Choice([f.value for f in ExportFormat]), default="md", show_default=True,
                  help="export: Markdown, or one self-contained HTML page.")
    @click.option("--turn", type=click.IntRange(1), default=None, help="export: only this turn (one answer).")
    @click.option("--base-url", default=None, metavar="URL",
                  help="export: the server the citation links open (default server.public_url, else http://HOST:PORT).")
    @click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
                  help="export: write to this file (default: standard output).")
    @common_options
    def conversations(ctx: Ctx, conversation_id: str | None, export_id: str | None, delete: bool, limit: int,
                      fmt: str, turn: int | None, base_url: str | None, out: Path | None) -> None:
        """List saved conversations, or show (or --delete) conversation CONVERSATION_ID;
        `conversations export ID --format md|html` writes one as a file to take away."""
        if delete and not conversation_id:
            raise click.UsageError("--delete needs a CONVERSATION_ID")
        if export_id is not None and conversation_id != "export":
            raise click.UsageError(f"unexpected argument {export_id!r} (did you mean `conversations export ID`?)")
        if conversation_id == "export" and export_id is None:
            raise click.UsageError("export needs a conversation ID: footnote conversations export ID --format md|html")
        store = open_store(ctx.settings.store.url, ctx.settings.store, create=False)  # reading never makes a store
        try:
            if conversation_id == "export" and export_id is not None:
                conv = store.get_conversation(check_conversation_id(export_id))
                if conv is None or (turn is not None and all(t.n != turn for t in conv.turns)):
                    raise NotFound(f"no conversation {export_id!r}" + (f" turn {turn}" if conv is not None else ""))
                srv = ctx.settings.server
                base = base_url or srv.public_url or f"http://{srv.host}:{srv.port}"
                text = export_conversation(conv, ExportFormat(fmt), base, turn)
                if out is None:
                    click.echo(text, nl=False)
                else:
                    try:
                        out.write_text(text, encoding="utf-8")
                    except OSError as e:
                        raise click.UsageError(f"cannot write {out}: {e.strerror or e}") from e
                    click.echo(f"wrote {out} ({len(conv.turns) if turn is None else 1} turn(s), {fmt})", err=True)
                return
            if conversation_id is None:
                rows = store.list_conversations(limit)
                if ctx.as_json:
                    ctx.emit({"conversations": [c.to_dict() for c in rows]})
                    return
                if not rows:
                    click.echo("no conversations yet (the web chat and `footnote ask --conversation new` start them)")
                for c in rows:
                    click.echo(f"{c.id}  {_when(c.updated_at)}  {c.turns:>3} turn{'s' if c.turns != 1 else ' '}  {c.title}")
                return
            cid = check_conversation_id(conversation_id)
            if delete:
                if not store.delete_conversation(cid):
                    raise NotFound(f"no conversation {conversation_id!r}")
                if ctx.as_json:
                    ctx.emit({"deleted": cid})
                else:
                    click.echo(f"deleted conversation {cid}")
                return
            conv = store.get_conversation(cid)
            if conv is None:
                raise NotFound(f"no conversation {conversation_id!r}")
            if ctx.as_json:
                ctx.emit(conv.to_dict())
                return
            click.echo(f"{conv.title}  ({_when(conv.created_at)})")
            for t in conv.turns:
                click.echo(f"\n[{t.n}] Q: {t.question}")
                if t.rewritten_question:
                    click.echo(f"    searched for: {t.rewritten_question}")
                click.echo(str(t.answer.get("answer", "")))
                for c in t.answer.get("citations", []):
                    label = c.get("title") or c.get("source_id")
                    click.echo(f"  [{c.get('n')}] {label} — {str(c.get('text', ''))[:100]}")
        finally:
            store.close()
