"""``footnote eval``: run a labelled question set through search and write the report.

(``footnote calibrate`` lives in ``footnote.commands.calibrate``.)
"""

from __future__ import annotations

import importlib
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from footnote.commands.base import Ctx, common_options, langs_option
from footnote.errors import UsageError
from footnote.eval.questions import load_questions
from footnote.eval.report import write_report
from footnote.eval.runner import OnResult, prepare_engine, refuse_backlog, run_questions
from footnote.eval.table import aligned


def _answers_module() -> Any:
    """The answer-level scorer (``footnote.eval.answers``: ``make_scorer``, ``answer_report``,
    ``summary_lines``), when the answer package provides one."""
    try:
        return importlib.import_module("footnote.eval.answers")
    except ModuleNotFoundError as e:
        if e.name == "footnote.eval.answers":
            raise UsageError("--answers: answer-level scoring is not available in this build") from None
        raise


def summary_lines(report: dict[str, Any]) -> list[str]:
    """A short table for the terminal."""
    def f(x: Any) -> str:
        return "    –" if x is None else f"{x:5.3f}" if isinstance(x, float) else f"{x:5}"

    cols = ("n", "recall@1", "recall@5", "recall@16", "mrr", "answer_rate", "abstain_rate", "crag")
    rows = [("overall", report["overall"]), *report["by_category_lang"].items()]
    lines = aligned(["cell", *cols], [[name, *(f(cell.get(c)).strip() for c in cols)] for name, cell in rows])
    lines.append("auroc: " + ", ".join(f"{k} {f(v).strip()}" for k, v in report["auroc"].items()))
    for pair, p in report.get("by_pair", {}).items():
        lines.append(f"{pair}: recall@1 {f(p['recall@1']).strip()} (dense cosine alone {f(p['recall@1_dense']).strip()}), "
                     f"gate AUROC {f(p['auroc']).strip()} (max cosine {f(p['auroc_max_score']).strip()})")
    r2 = report.get("rounds", {}).get("overall")
    if r2:
        lines.append(f"second round: ran {r2['second_round']}/{r2['n']} (round p50 {f(r2['round_ms_p50']).strip()} ms), "
                     f"skipped {r2['skipped']}; ranks changed {r2['ranks_changed']}, top changed {r2['top_changed']}, "
                     f"verdicts changed {r2['verdicts_changed']} (per category: report.md)")
    lat = report["latency_ms"].get("total")
    if lat:
        lines.append(f"search latency: p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms")
    return lines


@click.command("eval")
@click.option("--corpus", "corpus", multiple=True, type=click.Path(path_type=Path, exists=True),
              help="Corpus file or folder to ingest (repeatable), e.g. eval/xquad/corpus.en.jsonl.")
@click.option("--questions", "questions", default=None, type=click.Path(path_type=Path),
              help="Question set (JSON Lines, or one JSON array of the same objects; eval/README.md format).")
@click.option("--memory", "memory", default=None, type=click.Path(path_type=Path, exists=True),
              help="Curated memory notes (file or folder) to import and measure: matching on labelled questions "
              "and lean vs wide latency (docs/memory.md).")
@click.option("--memory-questions", "memory_questions", default=None, type=click.Path(path_type=Path),
              help="Labelled questions for --memory (default: questions.json in the notes folder).")
@langs_option
@click.option("--out", "out_dir", default="footnote-eval", type=click.Path(path_type=Path), show_default=True,
              help="Where report.json, report.md, plots and the evaluation store go.")
@click.option("--limit", default=None, type=int, help="At most N questions, spread over categories and languages.")
@click.option("--plots/--no-plots", default=True, show_default=True, help="Write PNG plots.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bars on stderr.")
@click.option("--answers", is_flag=True, help="Also score answers (needs footnote.eval.answers).")
@click.option("--allow-backlog", is_flag=True,
              help="Run even when fragments still wait for vectors (figures then mix dense and lexical-only search).")
@common_options
def evaluate(ctx: Ctx, corpus: tuple[Path, ...], questions: Path | None, memory: Path | None,
             memory_questions: Path | None, langs: list[str] | None, out_dir: Path,
             limit: int | None, plots: bool, progress: bool, answers: bool, allow_backlog: bool) -> None:
    """Measure retrieval and abstention on labelled questions: recall@k, MRR, AUROC, CRAG, latency.

    The corpus is ingested into a store of its own under OUT/stores (reused and not re-embedded
    when unchanged), or into --store when given.
    """
    if limit is not None and limit <= 0:
        raise UsageError("--limit must be a positive number")
    if not corpus and not (memory and ctx.store):
        raise UsageError("eval needs --corpus PATH (or, with only --memory, --store URL)")
    if questions is None:
        if memory is None:
            raise UsageError("eval needs --questions FILE, --memory NOTES, or both")
        _memory_only(ctx, corpus, memory, memory_questions, out_dir, progress)
        return
    qs = load_questions(questions, langs=langs, limit=limit)
    settings = ctx.settings
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    engine, ingest_report = prepare_engine(settings, list(corpus), out_dir=out_dir, store_url=ctx.store,
                                           progress=progress)
    with engine:
        if ingest_report.interrupted:
            click.echo("interrupted while ingesting the corpus: what was done is kept; run the same command again",
                       err=True)
            sys.exit(130)
        embedding = refuse_backlog(engine, allow=allow_backlog)
        if ingest_report.failed:
            click.echo(f"warning: {ingest_report.failed} corpus entries failed to ingest", err=True)
        answers_mod = _answers_module() if answers else None
        on_result: OnResult | None = answers_mod.make_scorer(engine) if answers_mod else None
        t1 = time.perf_counter()
        outcomes = run_questions(lambda q: engine.search(q), qs, progress=progress, on_result=on_result)
        search_s = time.perf_counter() - t1
        memory_section = _memory_section(engine, memory, memory_questions) if memory is not None else None
        emb = engine.embedder.name if engine.embedder is not None else "none"  # the store's unless --embedder
        gate = settings.gate.by_embedder.get(emb)
        meta = {
            "questions": str(questions),
            "corpus": [str(c) for c in corpus],
            "langs": langs,
            "limit": limit,
            "n_questions": len(qs),
            "embedder": emb,
            "reranker": settings.retrieve.reranker,
            "router": engine.chat_models["router"].name if "router" in engine.chat_models else None,
            "store": engine.store.url,
            "thresholds": gate.default.model_dump() if gate else None,
            "thresholds_by_lang_pair": {k: v.model_dump() for k, v in gate.by_lang_pair.items()} if gate else {},
            "thresholds_fitted_on": gate.fitted_on if gate else None,
            "ingest": ingest_report.summary(),
            "embedding": embedding,
            "started": started,
            "seconds": round(time.perf_counter() - t0, 2),
            "search_seconds": round(search_s, 2),
        }
    sections = {"answers": answers_mod.answer_report(outcomes)} if answers_mod else {}
    if memory_section is not None:
        sections["memory"] = memory_section
    report = write_report(out_dir, outcomes, meta, plots=plots, sections=sections)
    if ctx.as_json:
        ctx.emit(report)
        return
    for line in summary_lines(report):
        click.echo(line)
    if answers_mod:
        for line in answers_mod.summary_lines(report["answers"]):
            click.echo(line)
    if memory_section is not None:
        from footnote.eval.memory import summary_lines as memory_lines

        for line in memory_lines(memory_section):
            click.echo(line)
    click.echo(f"report: {out_dir / 'report.json'}, {out_dir / 'report.md'}", err=not sys.stdout.isatty())


def _memory_section(engine: Any, notes: Path, questions: Path | None) -> dict[str, Any]:
    """Import ``notes`` and measure matching (configured thresholds) and lean vs wide latency."""
    from footnote.eval.memory import collect_memory, lean_vs_wide, load_memory_questions, outcomes

    qpath = questions or (notes / "questions.json" if notes.is_dir() else None)
    if qpath is None:
        raise UsageError("--memory NOTE_FILE needs --memory-questions FILE")
    qs = load_memory_questions(qpath)
    imported = engine.import_memory([notes])
    rows = collect_memory(engine, qs)
    return {"questions": str(qpath), "notes": imported.count("imported") + imported.count("unchanged"),
            "failed_notes": imported.failed, "outcomes": outcomes(rows), "latency": lean_vs_wide(engine, qs)}


def _memory_only(ctx: Ctx, corpus: tuple[Path, ...], notes: Path, questions: Path | None, out_dir: Path,
                 progress: bool) -> None:
    import json

    from footnote.eval.memory import summary_lines as memory_lines

    engine, _ = prepare_engine(ctx.settings, list(corpus), out_dir=out_dir, store_url=ctx.store, progress=progress)
    with engine:
        section = _memory_section(engine, notes, questions)
        section["embedder"] = engine.embedder.name if engine.embedder is not None else "none"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "memory.json").write_text(json.dumps(section, ensure_ascii=False, indent=2), encoding="utf-8")
    if ctx.as_json:
        ctx.emit(section)
        return
    for line in memory_lines(section):
        click.echo(line)
    click.echo(f"report: {out_dir / 'memory.json'}", err=not sys.stdout.isatty())


def register(group: click.Group) -> None:
    group.add_command(evaluate)
