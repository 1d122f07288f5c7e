"""``footnote calibrate --corpus C --questions Q``: derive the coverage gate's thresholds for the
configured embedder (per query/corpus language pair) from labelled questions, write them into the
settings file under ``gate.by_embedder.<embedder>``, and print what each threshold buys."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from tqdm import tqdm

from footnote.commands.base import Ctx, common_options, langs_option
from footnote.errors import UsageError
from footnote.eval.calibration import (
    FIT,
    FitTargets,
    buy_table,
    collect,
    collecting_settings,
    derived_check,
    fit_gate,
    format_table,
    in_effect_table,
)
from footnote.eval.questions import load_questions
from footnote.eval.runner import prepare_engine
from footnote.settings import write_settings_file
from footnote.settings.measured import file_name, measured_dir, write_table


@click.command("calibrate")
@click.option("--corpus", "corpus", multiple=True, type=click.Path(path_type=Path, exists=True),
              help="Corpus file or folder to ingest (repeatable; required but with --memory over --store).")
@click.option("--questions", "questions", default=None, type=click.Path(path_type=Path),
              help="Labelled questions (JSON Lines or a JSON array, eval/README.md format): in_corpus vs near_miss/off_topic.")
@click.option("--memory", "memory", default=None, type=click.Path(path_type=Path, exists=True),
              help="Curated memory notes (file or folder) to import and fit the memory match threshold on, instead "
              "of the gate (docs/memory.md).")
@click.option("--memory-questions", "memory_questions", default=None, type=click.Path(path_type=Path),
              help="Labelled questions for --memory (default: questions.json in the notes folder).")
@click.option("--margin", default=0.01, show_default=True, type=click.FloatRange(0.0, 0.5),
              help="--memory: added to the best score of a fit question written for no note.")
@langs_option
@click.option("--work-dir", "work_dir", default=None, type=click.Path(path_type=Path),
              help="Where the calibration store goes (reused when unchanged); default: a temporary folder.")
@click.option("--all-questions", "all_questions", is_flag=True,
              help="Fit on every question instead of the fit half (then there is no held-out check).")
@click.option("--answer-target", default=FitTargets.answer_target, show_default=True, type=click.FloatRange(0.5, 1.0),
              help="Share of in-corpus questions the bail-out threshold must still answer (on the fit half).")
@click.option("--write/--no-write", default=True, show_default=True,
              help="Write the thresholds into the settings file.")
@click.option("--settings-file", "settings_file", default=None, type=click.Path(path_type=Path),
              help="The TOML file to write (created if missing); default: --config (FOOTNOTE_CONFIG). With neither, "
              "nothing is written (a ./footnote.toml would change every later command run from that folder).")
@click.option("--into-package", "into_package", is_flag=True,
              help="Write into the package's measured tables (settings/measured/<embedder>.toml: the defaults "
              "Footnote ships) instead of a settings file; for a developer's checkout.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bars on stderr.")
@common_options
def calibrate(ctx: Ctx, corpus: tuple[Path, ...], questions: Path | None, memory: Path | None,
              memory_questions: Path | None, margin: float, langs: list[str] | None, work_dir: Path | None,
              all_questions: bool, answer_target: float, write: bool, settings_file: Path | None,
              into_package: bool, progress: bool) -> None:
    """Fit the gate's thresholds from labelled questions and print what each buys (or, with --memory,
    the curated-memory match threshold)."""
    if memory is not None:
        _calibrate_memory(ctx, corpus, memory, memory_questions, margin, work_dir, write, settings_file, progress,
                          into_package)
        return
    if questions is None:
        raise UsageError("calibrate needs --questions FILE (the gate) or --memory NOTES (curated memory)")
    if not corpus:
        raise UsageError("calibrate needs --corpus PATH (the labelled questions' corpus)")
    qs = load_questions(questions, langs=langs)
    settings = ctx.settings
    if settings.embedder.name == "none":
        raise UsageError("calibrate needs an embedder (the lexical-only gate is not cosine-calibrated)")
    round_one = collecting_settings(settings)
    with tempfile.TemporaryDirectory(prefix="footnote-calibrate-") as tmp:
        out_dir = work_dir or Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        engine, ingest = prepare_engine(round_one, list(corpus), out_dir=out_dir, store_url=ctx.store, progress=progress)
        with engine:
            if engine.embedder is None:
                raise UsageError(f"calibrate needs an embedder: the store {engine.store.url} was built lexical only")
            emb = engine.embedder.name  # the store's when --embedder is not given
            if ingest.failed:
                click.echo(f"warning: {ingest.failed} corpus entries failed to ingest", err=True)
            bar = tqdm(total=len(qs), desc="questions", unit="q", disable=not progress, dynamic_ncols=True)

            def tick(done: int, total: int) -> None:
                bar.update(done - bar.n)

            try:
                rows = collect(lambda q: engine.search(q), qs, progress=tick)
            finally:
                bar.close()
    try:
        fit = fit_gate(rows, FitTargets(answer_target=answer_target), fit_half=None if all_questions else FIT)
    except ValueError as e:
        raise UsageError(f"{questions}: {e}") from None
    table = buy_table(rows, fit)
    derived = derived_check(rows, FitTargets(answer_target=answer_target))
    # What the thresholds in effect before this run (shipped or configured) buy on the same searches.
    before = settings.gate
    in_effect = (in_effect_table(rows, lambda q, c: before.thresholds(emb, q, c))
                 if before.calibrated(emb) else [])
    half = "all questions" if all_questions else "the fit half (split by gold paragraph / question id)"
    fitted_on = (f"{questions.name}: {len(qs)} questions, fitted on {half}; corpus "
                 f"{', '.join(c.name for c in corpus)}; {datetime.now(UTC).date().isoformat()}")
    target = _target(ctx, settings_file, into_package, emb) if write else None
    gate_values = fit.settings_update(emb, fitted_on)["gate"]["by_embedder"][emb]
    if target is not None:
        _write(target, into_package, "gate", emb, gate_values)
    result: dict[str, Any] = {
        "embedder": emb,
        "fitted_on": fitted_on,
        "default_pair": fit.default_pair,
        "pairs": {
            p: {"thresholds": f.thresholds.model_dump(), "n_fit": f.n_fit, "auroc_fit": f.auroc_fit,
                "auroc_check": f.auroc_check,
                "weights": {"background": f.weights[0], "lexical": f.weights[1], "sentence": f.weights[2]}}
            for p, f in fit.by_pair.items()
        },
        "derived": fit.derived.model_dump() if fit.derived is not None else None,
        "derived_check": derived,
        "table": table,
        "in_effect_table": in_effect,
        "written_to": str(target) if target is not None else None,
    }
    if ctx.as_json:
        ctx.emit(result)
        return
    for p, f in fit.by_pair.items():
        t = f.thresholds
        click.echo(f"{p}: bail_out {t.bail_out} sufficient {t.sufficient} good_enough {t.good_enough} "
                   f"(signal = max − {t.background_weight}×background + {t.lexical_weight}×lexical overlap "
                   f"+ {t.sentence_weight}×best sentence); "
                   f"prefloor {t.prefloor} reserve_floor {t.reserve_floor} fallback_min_score {t.fallback_min_score}; "
                   f"AUROC fit {_f(f.auroc_fit)} check {_f(f.auroc_check)}")
    for line in format_table(table):
        click.echo(line)
    if (d := fit.derived) is not None:
        click.echo(f"derived (any other pair): bail_out {d.bail_out} sufficient {d.sufficient} good_enough "
                   f"{d.good_enough} (signal = (max − {d.background_weight}×background + {d.sentence_weight}×best "
                   f"sentence) ÷ background spread); prefloor {d.prefloor}; what a pair nobody calibrated gets, each "
                   "pair left out of the fit in turn:")
        if derived:
            for line in format_table(derived):
                click.echo(line)
        else:
            click.echo("  (no check: the questions have one language pair with enough rows, and a pair is checked "
                       "on thresholds derived from the others)")
    if in_effect:
        click.echo(f"in effect before this run (gate.by_embedder.{emb}; `footnote settings` says where they come "
                   "from), on the same searches:")
        for line in format_table(in_effect):
            click.echo(line)
    _say_written(target, write, "gate", emb, gate_values)


def _calibrate_memory(ctx: Ctx, corpus: tuple[Path, ...], notes: Path, questions: Path | None, margin: float,
                      work_dir: Path | None, write: bool, settings_file: Path | None, progress: bool,
                      into_package: bool = False) -> None:
    from footnote.eval.memory import collect_memory, fit_threshold, load_memory_questions, outcomes

    qpath = questions or (notes / "questions.json" if notes.is_dir() else None)
    if qpath is None:
        raise UsageError("--memory NOTE_FILE needs --memory-questions FILE")
    qs = load_memory_questions(qpath)
    if not corpus and not ctx.store:
        raise UsageError("calibrate --memory needs --corpus PATH or --store URL (the notes' sources must be there)")
    settings = ctx.settings
    with tempfile.TemporaryDirectory(prefix="footnote-calibrate-") as tmp:
        out_dir = work_dir or Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        engine, _ = prepare_engine(settings, list(corpus), out_dir=out_dir, store_url=ctx.store, progress=progress)
        with engine:
            if engine.embedder is None:
                raise UsageError("calibrate --memory needs an embedder (lexical matching has no cosine to fit)")
            emb = engine.embedder.name
            imported = engine.import_memory([notes])
            if imported.failed:
                click.echo(f"warning: {imported.failed} notes failed to import", err=True)
            rows = collect_memory(engine, qs)
    threshold = fit_threshold(rows, margin)
    result = outcomes(rows, threshold)
    fitted_on = (f"{qpath.name}: {len(qs)} questions, fitted on the fit half (lowest score no fit question "
                 f"written for no note reaches, + {margin}); AUROC fit {result['fit']['auroc']} test "
                 f"{result['test']['auroc']}; {datetime.now(UTC).date().isoformat()}")
    target = _target(ctx, settings_file, into_package, emb) if write else None
    memory_values = {"default": {"match": threshold, "fitted_on": fitted_on}, "by_lang_pair": {}}
    if target is not None:
        _write(target, into_package, "memory", emb, memory_values)
    if ctx.as_json:
        ctx.emit({"embedder": emb, "threshold": threshold, "fitted_on": fitted_on, "outcomes": result,
                  "written_to": str(target) if target is not None else None})
        return
    click.echo(f"memory match threshold for {emb}: {threshold}")
    for split in ("fit", "test"):
        s = result[split]
        click.echo(f"  {split}: hit rate {s['hit_rate']} of {s['n_for_notes']}, false matches {s['false_matches']} of "
                   f"{s['n_for_none']}, wrong note {s['wrong_note']}, AUROC {s['auroc']}")
    _say_written(target, write, "memory", emb, memory_values)


def _target(ctx: Ctx, settings_file: Path | None, into_package: bool, embedder: str) -> Path | None:
    """Where the fit goes: the package's measured tables, else --settings-file or --config; None (nothing
    written) without any: a ./footnote.toml written by default silently changed every later command run
    from that folder."""
    if into_package:
        if settings_file is not None:
            raise UsageError("--into-package and --settings-file name two places to write: give one")
        return measured_dir() / file_name(embedder)
    return settings_file or (Path(ctx.config) if ctx.config else None)


def _say_written(target: Path | None, write: bool, table: str, embedder: str, values: dict[str, Any]) -> None:
    """What was written where (the TOML itself), or how to write it."""
    import tomlkit

    if not write:
        return
    doc = tomlkit.dumps({table: {"by_embedder": {embedder: values}}}).strip()
    if target is None:
        click.echo(f"not written: no settings file named. To use these thresholds, add to a settings file (or run "
                   f"again with --settings-file PATH):\n{doc}", err=True)
    else:
        click.echo(f"written to {target} (under {table}.by_embedder.{embedder}):\n{doc}")


def _write(target: Path, into_package: bool, table: str, embedder: str, values: dict[str, Any]) -> None:
    """``values`` as the embedder's ``table`` (``gate``, ``memory``): in the measured file, or merged into the
    settings file under ``<section>.by_embedder.<embedder>``."""
    if into_package:
        write_table(embedder, table, values, target.parent)
    else:
        write_settings_file(target, {table: {"by_embedder": {embedder: values}}})


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def register(group: click.Group) -> None:
    group.add_command(calibrate)
