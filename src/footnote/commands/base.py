"""What every command shares: the per-invocation :class:`Ctx`, the common options, the progress bar.

Kept apart from :mod:`footnote.cli` (which registers the commands) so that importing one command module
never imports the whole command line first (no import cycle).
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar, get_args

import click

from footnote.engine import Engine
from footnote.errors import FootnoteError
from footnote.lifeline import Terminated, terminate_as_interrupt
from footnote.redact import mask_url
from footnote.settings import EmbedderSettings, Settings, load_settings

F = TypeVar("F", bound=Callable[..., Any])

#: Every embedder the settings accept (the ``embedder.name`` Literal).
EMBEDDER_NAMES: tuple[str, ...] = get_args(EmbedderSettings.model_fields["name"].annotation)


class Ctx:
    """Per-invocation options shared by every command."""

    def __init__(self, store: str | None, config: str | None, as_json: bool, embedder: str | None) -> None:
        self.store = store
        self.config = config
        self.as_json = as_json
        self.embedder = embedder
        self._settings: Settings | None = None
        #: with no settings file given, a store holding the demo corpus is read with the demo's own file
        #: (:mod:`footnote.commands.demo`); ``serve`` decides that itself
        self.own_demo_config = True

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            overrides: dict[str, Any] = {}
            if self.store:
                overrides["store.url"] = self.store
            if self.embedder:
                overrides["embedder.name"] = self.embedder
            self._settings = load_settings(self.config, **overrides)
            if self.config is None and self.own_demo_config:
                from footnote.commands.demo import demo_config, resolve_demo_dir

                own = demo_config(self._settings, False, resolve_demo_dir(self._settings.server.demo_corpus))
                if own is not None:  # the store `make run` filled: read as the chat reads it
                    self.config = str(own)
                    self._settings = load_settings(self.config, **overrides)
                    click.echo(f"settings: {own} (the demo's own)", err=True)
        return self._settings

    def use_config(self, config: str) -> None:
        """Read settings from ``config`` from now on (``serve`` uses the demo's own file)."""
        self.config = config
        self._settings = None

    def engine(self, *, create: bool = False) -> Engine:
        """The engine over ``--store``; only commands that write (``create=True``: ingest) may create a
        store that does not exist yet. The embedder follows the store's unless ``--embedder`` (env, file) says."""
        return Engine.from_settings(self.settings, create=create)

    def store_option(self) -> str:
        """`` --store URL`` for a command line shown to the user (a resume hint): nothing when the store
        came from ``FOOTNOTE_STORE`` (the same environment gives it again), and never a password."""
        if not self.store or self.store == os.environ.get("FOOTNOTE_STORE"):
            return ""
        return f" --store {shlex.quote(mask_url(self.store))}"

    def emit(self, data: Any) -> None:
        """One JSON document on stdout."""
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


class ProgressBar:
    """A progress callback ``(done, total, label)`` drawing a bar on stderr, created when the total is
    first known; does nothing when ``enabled`` is false (callers pass ``sys.stderr.isatty()``)."""

    def __init__(self, enabled: bool, label: str, *, lines_every_s: float | None = None) -> None:
        """``lines_every_s``: when no bar is drawn (not a terminal: ``make run`` in a log), a plain
        ``label done/total`` line at most this often, and at the end."""
        self.enabled = enabled
        self.label = label
        self.lines_every_s = lines_every_s
        self._bar: Any = None
        self._done = 0
        self._said = 0.0

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            if self.lines_every_s is not None:
                now = time.monotonic()
                if now - self._said >= self.lines_every_s or done >= total:
                    self._said = now
                    click.echo(f"{self.label} {done}/{total}", err=True)
            return
        if self._bar is None:
            self._bar = click.progressbar(length=total, label=self.label, file=sys.stderr, show_pos=True,
                                          item_show_func=lambda _: None)
            self._bar.__enter__()
        self._bar.update(done - self._done)
        self._done = done

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def _split_langs(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    return [x.strip() for x in value.split(",") if x.strip()] if value else None


#: ``--langs en,ru`` on the commands that read a question set; the command gets a list (None: all).
langs_option = click.option(
    "--langs", default=None, callback=_split_langs,
    help="Only questions in these languages, comma-separated (e.g. en,ru).",
)


def common_options(f: F) -> F:
    """``--store``, ``--config``, ``--embedder``, ``--json`` on every command; passes ``ctx: Ctx``."""

    @click.option("--store", "store", envvar="FOOTNOTE_STORE", default=None, help="Store URL or path (env FOOTNOTE_STORE).")
    @click.option("--config", "config", envvar="FOOTNOTE_CONFIG", default=None, help="Settings TOML file (env FOOTNOTE_CONFIG).")
    @click.option("--embedder", "embedder", type=click.Choice(EMBEDDER_NAMES), default=None,
                  help="Embedder (none: lexical only). Default: the one an existing store was built with, else "
                  "the configured one.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
    @functools.wraps(f)
    def wrapper(*args: Any, store: str | None, config: str | None, embedder: str | None, as_json: bool, **kwargs: Any) -> Any:
        ctx = Ctx(store, config, as_json, embedder)
        # SIGTERM stops a command as Ctrl-C does (what is finished is kept, worker processes end with it)
        with terminate_as_interrupt():
            try:
                return f(ctx, *args, **kwargs)
            except FootnoteError as e:
                if as_json:
                    ctx.emit({"error": e.message, "type": type(e).__name__})
                else:
                    click.echo(f"error: {e.message}", err=True)
                sys.exit(e.exit_code)
            except KeyboardInterrupt as e:  # not "Aborted!" and 1: the README's 130
                click.echo(f"\ninterrupted ({'SIGTERM' if isinstance(e, Terminated) else 'Ctrl-C'})", err=True)
                sys.exit(130)

    return wrapper  # type: ignore[return-value]


__all__ = ["EMBEDDER_NAMES", "Ctx", "ProgressBar", "common_options", "langs_option"]
