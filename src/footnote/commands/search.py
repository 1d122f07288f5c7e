"""``footnote search "…" [--explain] [--json] [--lang L]``: retrieval up to the gate, no LLM."""

from __future__ import annotations

from typing import Any

import click

from footnote.commands.base import Ctx, common_options
from footnote.retrieve.format import format_locator, lane_scores, search_result_dict, snippet
from footnote.retrieve.types import SearchResult


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items())


def render_text(result: SearchResult, titles: dict[str, str], *, explain: bool, width: int = 240,
                lexical_why: str = "no embedder configured") -> list[str]:
    """The human-readable search output, as lines. ``lexical_why``: why a lexical-only search was one."""
    lines: list[str] = []
    if result.lexical_only:
        lines.append(f"(lexical only: {lexical_why} — cosines are 0, ranking is by lexical evidence)")
    lines.extend(f"({note})" for note in result.plan.address_notes)
    if not result.candidates:
        lines.append("no notes found")
    for i, c in enumerate(result.candidates, 1):
        f = c.fragment
        where = format_locator(f.locator, titles.get(f.source_id))
        title = titles.get(f.source_id, f.source_id)
        head = f"[{i}] {where}" + (f" — {title}" if title and title not in where else "")
        flags = "".join([" forced" if c.forced else "", " reserve" if c.reserve else ""])
        rr = "–" if c.rerank is None else f"{c.rerank:.4f}"
        lanes = " ".join(f"{k}={v:.3f}" for k, v in lane_scores(c).items())
        lines.append(head)
        lines.append(f"    {f.kind} · {f.lang} · cosine {c.score:.4f} · rerank {rr}{flags}")
        lines.append(f"    lanes: {lanes or '–'}")
        lines.append(f"    {snippet(f.text, width)}")
    sig = result.signal
    th = ", ".join(f"{k} {v:g}" for k, v in sig.thresholds.items())
    extra = ", ".join(f"{k} {v:.4f}" for k, v in sig.extra.items())
    lines.append("")
    abst = " (abstains: nothing close in the corpus)" if result.verdict.abstains else ""
    lines.append(f"verdict: {result.verdict.value}{abst}   rounds: {result.rounds}   model calls: {result.model_calls}")
    lines.append(f"signal: {sig.value:.4f}   max cosine: {sig.max_score:.4f}   lecture chunks: {sig.lecture_count}")
    if extra:
        lines.append(f"signal inputs: {extra}")
    if th:
        lines.append(f"thresholds: {th}")
    if explain:
        p = result.plan
        lines.append("")
        lines.append(f"plan ({p.source}, lang {p.lang}):")
        for sq in p.subquestions:
            addrs = f"  addresses: {', '.join(a.label for a in sq.addresses)}" if sq.addresses else ""
            paras = f"  paraphrases: {' | '.join(sq.paraphrases)}" if sq.paraphrases else ""
            lines.append(f"  - {sq.text}{paras}{addrs}")
        lines.append("stages:")
        total = 0.0
        for t in result.trace:
            total += t.ms
            info = ", ".join(f"{k}={_short(v)}" for k, v in t.info.items())
            lines.append(f"  {t.name:<24} {t.ms:9.2f} ms  {_fmt_counts(t.counts)}" + (f"  [{info}]" if info else ""))
        lines.append(f"  {'total':<24} {total:9.2f} ms")
    return lines


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    s = str(v)
    return s if len(s) <= 40 else s[:37] + "…"


@click.command("search")
@click.argument("question")
@click.option("--explain", is_flag=True, help="Show the plan and every stage's counts and milliseconds.")
@click.option("--lang", default=None, help="The question's language (default: detected).")
@common_options
def search(ctx: Ctx, question: str, explain: bool, lang: str | None) -> None:
    """Search the corpus: ranked notes with locators and scores, the gate's verdict (no LLM)."""
    with ctx.engine() as engine:
        result = engine.search(question, lang=lang)
        titles = result.corpus.titles(c.fragment.source_id for c in result.candidates)
        embedding = engine.backlog_status()
        why = ("no embedder configured" if engine.embedder is None
               else f"no fragment has a {engine.embedder.name} vector yet")
    if ctx.as_json:
        ctx.emit({**search_result_dict(result, titles), "embedding": embedding})
        return
    for line in render_text(result, titles, explain=explain, lexical_why=why):
        click.echo(line)
    if embedding["state"] in ("embedding", "paused"):
        click.echo(f"note: {embedding['message']}")


def register(group: click.Group) -> None:
    group.add_command(search)
