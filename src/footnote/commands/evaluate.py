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

from footnote.cli import Ctx, common_options, langs_option
from footnote.errors import UsageError
from footnote.eval.questions import load_questions
from footnote.eval.report import write_report
from footnote.eval.runner import OnResult, prepare_engine, refuse_backlog, run_questions


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
    lines = [f"{'cell':<28}" + "".join(f"{c:>13}" for c in cols)]
    rows = [("overall", report["overall"]), *report["by_category_lang"].items()]
    for name, cell in rows:
        lines.append(f"{name:<28}" + "".join(f"{f(cell.get(c)):>13}" for c in cols))
    lines.append("auroc: " + ", ".join(f"{k} {f(v).strip()}" for k, v in report["auroc"].items()))
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
@click.option("--corpus", "corpus", multiple=True, required=True, type=click.Path(path_type=Path, exists=True),
              help="Corpus file or folder to ingest (repeatable), e.g. eval/xquad/corpus.en.jsonl.")
@click.option("--questions", "questions", required=True, type=click.Path(path_type=Path),
              help="Question set (JSON Lines, or one JSON array of the same objects; eval/README.md format).")
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
def evaluate(ctx: Ctx, corpus: tuple[Path, ...], questions: Path, langs: list[str] | None, out_dir: Path,
             limit: int | None, plots: bool, progress: bool, answers: bool, allow_backlog: bool) -> None:
    """Measure retrieval and abstention on labelled questions: recall@k, MRR, AUROC, CRAG, latency.

    The corpus is ingested into a store of its own under OUT/stores (reused and not re-embedded
    when unchanged), or into --store when given.
    """
    if limit is not None and limit <= 0:
        raise UsageError("--limit must be a positive number")
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
    report = write_report(out_dir, outcomes, meta, plots=plots, sections=sections)
    if ctx.as_json:
        ctx.emit(report)
        return
    for line in summary_lines(report):
        click.echo(line)
    if answers_mod:
        for line in answers_mod.summary_lines(report["answers"]):
            click.echo(line)
    click.echo(f"report: {out_dir / 'report.json'}, {out_dir / 'report.md'}", err=not sys.stdout.isatty())


def register(group: click.Group) -> None:
    group.add_command(evaluate)
