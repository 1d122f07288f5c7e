"""``footnote ask "…" [--json] [--fallback/--no-fallback]``: stream the answer, then the resolved
citations, the verdict and the mode. ``--json`` prints exactly the answer contract (``Answer.to_dict()``)."""

from __future__ import annotations

import sys
from typing import Any

import click

from footnote.answer.types import EventKind
from footnote.cli import Ctx, common_options
from footnote.corpus.records import locator_from_dict
from footnote.errors import FootnoteError, ModelError
from footnote.retrieve.format import format_locator, snippet


def citation_line(c: dict[str, Any]) -> str:
    """``[2] Lecture 3 04:12–04:55 — snippet``, ``[3] HB 2.4``, ``[4] handbook.pdf p. 7``."""
    where = format_locator(locator_from_dict(c["locator"]), c.get("title") or None)
    return f"[{c['n']}] {where} — {snippet(c['text'], 100)}"


def render_done(data: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if data.get("disclaimer"):
        lines.append(f"({data['disclaimer']})")
    if data["citations"]:
        lines.append("")
        lines += [citation_line(c) for c in data["citations"]]
    lines.append("")
    extra = []
    if data.get("dropped_citations"):
        extra.append(f"dropped citations: {data['dropped_citations']}")
    if data.get("removed_mentions"):
        extra.append(f"removed mentions: {data['removed_mentions']}")
    lines.append(
        f"verdict: {data['verdict']}   mode: {data['mode']}   model calls: {data['model_calls']}"
        + ("   corpus insufficient" if data["corpus_insufficient"] else "")
        + (f"   ({', '.join(extra)})" if extra else "")
    )
    for d in data.get("trace", {}).get("degraded", []):
        lines.append(f"note: {d}")
    return lines


def register(group: click.Group) -> None:
    @group.command("ask")
    @click.argument("question")
    @click.option("--fallback/--no-fallback", "fallback", default=None,
                  help="Answer from general knowledge on a coverage miss (default: answer.enable_corpus_fallback).")
    @common_options
    def ask(ctx: Ctx, question: str, fallback: bool | None) -> None:
        """Answer QUESTION from the corpus with citations — or say it is not in the corpus."""
        with ctx.engine() as engine:
            if ctx.as_json:
                ctx.emit(engine.ask(question, fallback=fallback).to_dict())
                return
            streamed = False
            for ev in engine.ask_stream(question, fallback=fallback):
                if ev.kind is EventKind.TOKEN:
                    click.echo(ev.data["text"], nl=False)
                    sys.stdout.flush()
                    streamed = True
                elif ev.kind is EventKind.ERROR:
                    if streamed:
                        click.echo("")
                    raise _error(ev.data)
                elif ev.kind is EventKind.DONE:
                    if streamed:
                        click.echo("")
                    for line in render_done(ev.data):
                        click.echo(line)


def _error(data: dict[str, Any]) -> FootnoteError:
    import footnote.errors as errors

    cls = getattr(errors, str(data.get("type", "")), None)
    if isinstance(cls, type) and issubclass(cls, FootnoteError) and cls not in (errors.InputError,):
        try:
            return cls(str(data["message"]))
        except TypeError:
            pass
    return ModelError(str(data["message"]))
