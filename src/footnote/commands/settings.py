"""``footnote settings``: the settings in effect (value, origin, description); ``--set key=value`` writes
the TOML file keeping its comments; ``--markdown`` prints the reference of docs/settings.md."""

from __future__ import annotations

import json
from typing import Any

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import UsageError
from footnote.settings import resolve_settings
from footnote.settings.presets import preset_names, preset_summary
from footnote.settings_view import describe, markdown, parse_assignment, set_values, settings_file_target


def _overrides(ctx: Ctx) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ctx.store:
        out["store.url"] = ctx.store
    if ctx.embedder:
        out["embedder.name"] = ctx.embedder
    return out


@click.command("settings")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE",
              help="Write KEY=VALUE into the settings file (--config, FOOTNOTE_CONFIG or ./footnote.toml); repeatable.")
@click.option("--show-secrets", is_flag=True, help="Print API keys instead of ***.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the reference table of every field (docs/settings.md).")
@click.option("--all", "show_all", is_flag=True,
              help="Also list the tuning keys left at their defaults (by default: the user surface and every key set).")
@click.option("--presets", "list_presets", is_flag=True, help="List the presets (preset = \"NAME\" or FOOTNOTE_PRESET).")
@common_options
def settings_command(ctx: Ctx, assignments: tuple[str, ...], show_secrets: bool, as_markdown: bool,
                     show_all: bool, list_presets: bool) -> None:
    """Show the settings in effect: value, where it came from (default, preset, file, env, flag), description.
    The user surface and every key set anywhere; --all adds the tuning keys left at their defaults (--json: all)."""
    if as_markdown:
        click.echo(markdown(), nl=False)
        return
    if list_presets:
        found = {name: preset_summary(name) for name in preset_names()}
        if ctx.as_json:
            ctx.emit({"presets": found})
        else:
            for name, summary in found.items():
                click.echo(f"{name}: {summary}")
        return
    given = ctx.config
    ctx.settings  # noqa: B018 — over the demo's store with no file given, the demo's own file is the one in effect
    if assignments:
        parsed = [parse_assignment(a) for a in assignments]
        if given is None and ctx.config is not None:
            raise UsageError(
                f"the settings in effect over this store are the demo's own ({ctx.config}); a new ./footnote.toml "
                f"would replace them, the demo's book names included: name the file to write with --config (e.g. "
                f"--config {ctx.config}, or a copy of it)")
        target = settings_file_target(ctx.config)
        set_values(target, parsed)
        ctx.use_config(str(target))
        if not ctx.as_json:
            for key, value in parsed:
                click.echo(f"{target}: {key} = {json.dumps(value, ensure_ascii=False)}")
            return
    resolved = resolve_settings(ctx.config, **_overrides(ctx))
    rows = describe(resolved, reveal=show_secrets)
    if ctx.as_json:
        ctx.emit({"config_file": str(resolved.path) if resolved.path else None, "preset": resolved.preset,
                  "settings": rows})
        return
    click.echo(f"# settings file: {resolved.path or 'none (defaults, environment and flags only)'}")
    if resolved.preset:
        click.echo(f"# preset: {resolved.preset} ({preset_summary(resolved.preset)})")
    hidden = 0
    if not show_all:
        kept = [r for r in rows if r["surface"] == "user" or r["source"] != "default"]
        hidden, rows = len(rows) - len(kept), kept
    section = ""
    for row in rows:
        top = row["key"].split(".", 1)[0]
        if top != section:
            section = top
            click.echo(f"\n[{section}]")
        value = json.dumps(row["value"], ensure_ascii=False)
        if len(value) > 100:
            value = value[:97] + "…"
        click.echo(f"{row['key']} = {value}  ({row['source']})")
        click.echo(f"    {row['description']}")
    if hidden:
        click.echo(f"\n# {hidden} tuning keys at their defaults not shown: footnote settings --all (docs/settings.md)")


def register(group: click.Group) -> None:
    group.add_command(settings_command)
