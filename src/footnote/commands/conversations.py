"""``footnote conversations [ID] [--delete] [--limit N]``: list the saved conversations, show one with
its turns and citations, or remove one."""

from __future__ import annotations

import datetime as dt

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import NotFound
from footnote.store import open_store
from footnote.store.conversations import check_conversation_id


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def register(group: click.Group) -> None:
    @group.command("conversations")
    @click.argument("conversation_id", required=False)
    @click.option("--delete", is_flag=True, help="Remove conversation ID and its turns.")
    @click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True,
                  help="Conversations listed, most recent first.")
    @common_options
    def conversations(ctx: Ctx, conversation_id: str | None, delete: bool, limit: int) -> None:
        """List saved conversations, or show (or --delete) conversation CONVERSATION_ID."""
        if delete and not conversation_id:
            raise click.UsageError("--delete needs a CONVERSATION_ID")
        store = open_store(ctx.settings.store.url, ctx.settings.store)
        try:
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
