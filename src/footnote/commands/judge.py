"""``footnote judge``: grade an ``eval --answers`` run's answers with the judge model (offline)."""

from __future__ import annotations

from pathlib import Path

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import ConfigError, UsageError
from footnote.eval.judge import add_to_report, compare_runs, judge_run, summary_lines
from footnote.eval.plots import PLOTS_HINT, write_judge_plot
from footnote.models.chat import make_chat_model


@click.command("judge")
@click.argument("run_dir", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option("--compare", "compare", nargs=2, default=None, type=click.Path(path_type=Path, file_okay=False),
              help="RUN_A RUN_B: pairwise verdicts on the questions both runs answered (sides from a hash of the id).")
@common_options
def judge(ctx: Ctx, run_dir: Path | None, compare: tuple[Path, Path] | None) -> None:
    """Score each answer of RUN_DIR (an `eval --answers --out RUN_DIR` run) for faithfulness, completeness,
    structure and balance with models.judge; verdicts are cached, so a re-run costs nothing."""
    if (run_dir is None) == (compare is None):
        raise UsageError("give one RUN_DIR, or --compare RUN_A RUN_B")
    js = ctx.settings.models.judge
    if not js.configured:
        raise ConfigError("models.judge is not configured: set models.judge.base_url and models.judge.model")
    js = js.model_copy(update={"temperature": 0.0})
    model = make_chat_model("judge", js, ctx.settings.models)
    attempts = ctx.settings.judge.attempts
    if compare is not None:
        section = compare_runs(model, js.model or model.name, compare[0], compare[1], attempts=attempts)
        key, where = "judge_compare", compare[0]
    else:
        assert run_dir is not None
        section = judge_run(model, js.model or model.name, run_dir, attempts=attempts,
                            faithful_min=ctx.settings.judge.faithful_min_score,
                            supported_min=ctx.settings.judge.supported_share_min)
        key, where = "judge", run_dir
    add_to_report(where, key, section)
    plot = write_judge_plot(where / f"{key}.svg", section)
    if ctx.as_json:
        ctx.emit(section)
        return
    for line in summary_lines(section):
        click.echo(line)
    click.echo(f"report: {where / 'report.json'} ({key}), {where / (key + '.md')}, "
               + (f"plot {plot}" if plot else f"no plot ({PLOTS_HINT})"))


def register(group: click.Group) -> None:
    group.add_command(judge)
