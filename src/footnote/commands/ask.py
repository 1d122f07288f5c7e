"""``footnote ask "…" [--json] [--fallback/--no-fallback]``: stream the answer, then the resolved
citations, the verdict and the mode. ``--json`` prints exactly the answer contract (``Answer.to_dict()``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import click

from footnote.answer.citations import citation_label
from footnote.answer.types import Answer, Citation, Done, Error, Token, Understood, Writing
from footnote.commands.base import Ctx, common_options
from footnote.retrieve.format import snippet


def citation_line(c: Citation) -> str:
    """``[2] Lecture 3 04:12–04:55 — snippet``, ``[3] HB 2.4``, ``[4] handbook.pdf p. 7``."""
    return f"[{c.n}] {citation_label(c)} — {snippet(c.fragment.text, 100)}"


def support_lines(support: dict[str, Any] | None) -> list[str]:
    """``citation support: 2/3 sentences supported …`` and each unsupported sentence (the trace's)."""
    if not support:
        return []
    if "error" in support:
        return [f"citation support: not computed ({support['error']})"]
    n = support["n_sentences"]
    ok = n - len(support["unsupported"])
    prec = support.get("citation_precision")
    lines = [f"citation support: {ok}/{n} sentences supported"
             + ("" if prec is None else f", citation precision {prec:.2f}")]
    lines += [f"  unsupported: {snippet(s, 120)}" for s in support["unsupported"]]
    return lines


def model_check_lines(answer: Answer) -> list[str]:
    """What the answer-check model (``models.answer_check``) said of the turn, when it was asked and answered."""
    judged = answer.trace.answerable() if answer.trace is not None else None
    model = judged.get("model") if judged is not None else None
    lines: list[str] = []
    if isinstance(model, Mapping) and model.get("p_yes") is not None:
        said = "declined: no answer in the chosen sentences" if model.get("declines") else "kept"
        lines.append(f"answer check: {model.get('model')} gave 'yes' {float(model['p_yes']):.2f} "
                     f"(floor {float(model.get('min_yes', 0.0)):.2f}): {said}")
    sentences = answer.trace.judged() if answer.trace is not None else []
    asked = [j["check"] for j in sentences if isinstance(j.get("check"), Mapping) and j["check"].get("p_yes") is not None]
    if asked:
        out = sum(1 for c in asked if c.get("declines"))
        lines.append(f"sentence check: {asked[0].get('model')} judged {len(asked)} sentence(s) the rules kept, "
                     f"{out} not supported (floor {float(asked[0].get('min_yes', 0.0)):.2f})")
    return lines


def render_done(answer: Answer) -> list[str]:
    lines: list[str] = []
    if answer.disclaimer:
        lines.append(f"({answer.disclaimer})")
    if answer.citations:
        lines.append("")
        lines += [citation_line(c) for c in answer.citations]
    lines.append("")
    extra = []
    if answer.dropped_citations:
        extra.append(f"dropped citations: {answer.dropped_citations}")
    if answer.removed_mentions:
        extra.append(f"removed mentions: {answer.removed_mentions}")
    trace = answer.trace
    unsupported = trace.removed_by_reason.get("unsupported", 0) if trace is not None else 0
    if answer.removed_sentences - unsupported:
        extra.append(f"removed uncited sentences: {answer.removed_sentences - unsupported}")
    if unsupported:
        extra.append(f"removed unsupported sentences: {unsupported}")
    if trace is not None and trace.policy == "lean":
        extra.append("lean policy: a pinned note matched")
    dropped_memory = trace.memory_dropped_citations + trace.memory_removed_mentions if trace is not None else 0
    if dropped_memory:
        extra.append(f"background-note citations or mentions removed: {dropped_memory}")
    lines.append(
        f"verdict: {answer.verdict.value}   mode: {answer.mode.value}   model calls: {answer.model_calls}"
        + ("   corpus insufficient" if answer.corpus_insufficient else "")
        + (f"   abstention: {answer.abstention.reason.value} ({answer.abstention.stage.value})" if answer.abstention else "")
        + (f"   ({', '.join(extra)})" if extra else "")
    )
    lines += support_lines(dict(trace.support) if trace is not None and trace.support is not None else None)
    lines += model_check_lines(answer)
    for d in trace.degraded if trace is not None else ():
        lines.append(f"note: {d}")
    if answer.mode.value != "not_found":  # a not-found answer already starts with them
        for n in trace.search.plan.get("address_notes", []) if trace is not None else ():
            lines.append(f"note: {n}")
    return lines


def register(group: click.Group) -> None:
    @group.command("ask")
    @click.argument("question")
    @click.option("--fallback/--no-fallback", "fallback", default=None,
                  help="Answer from general knowledge on a coverage miss (default: answer.enable_corpus_fallback).")
    @click.option("--conversation", "conversation", metavar="ID|new", default=None,
                  help="Ask a follow-up in conversation ID (see `footnote conversations`), or start one with 'new'; "
                  "the turn is saved there.")
    @common_options
    def ask(ctx: Ctx, question: str, fallback: bool | None, conversation: str | None) -> None:
        """Answer QUESTION from the corpus with citations — or say it is not in the corpus."""
        cid = None if conversation in (None, "new") else conversation
        remember = conversation is not None
        with ctx.engine() as engine:
            embedding = engine.backlog_status()
            if ctx.as_json:
                ctx.emit({**engine.ask(question, fallback=fallback, conversation_id=cid, remember=remember).to_dict(),
                          "embedding": embedding})
                return
            if embedding["state"] in ("embedding", "paused"):
                click.echo(f"note: {embedding['message']}", err=True)
            streamed = False
            for ev in engine.ask_stream(question, fallback=fallback, conversation_id=cid, remember=remember):
                if isinstance(ev, Understood):
                    click.echo(f"Searching for: {ev.question}", err=True)
                elif isinstance(ev, Writing):
                    # a local model takes a minute or more, with nothing shown until a sentence has passed its checks
                    click.echo(f"Writing the answer with {ev.model}; each sentence is shown once the passages it "
                               "cites are found to support it…", err=True)
                elif isinstance(ev, Token):
                    click.echo(ev.text, nl=False)
                    sys.stdout.flush()
                    streamed = True
                elif isinstance(ev, Error):
                    if streamed:
                        click.echo("")
                    raise ev.exc
                elif isinstance(ev, Done):
                    if streamed:
                        click.echo("")
                    for line in render_done(ev.answer):
                        click.echo(line)
                    if ev.answer.conversation_id:
                        click.echo(f"conversation: {ev.answer.conversation_id} (turn {ev.answer.turn}; "
                                   f"continue with --conversation {ev.answer.conversation_id})")
