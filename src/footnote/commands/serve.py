"""``footnote serve``: set up, ingest the demo corpus into an empty store, serve the API and web chat."""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from footnote.commands.base import Ctx, common_options
from footnote.commands.demo import demo_config, resolve_demo_dir
from footnote.engine import Engine
from footnote.errors import ServeError, UsageError
from footnote.settings import Settings

log = logging.getLogger(__name__)

def bind(host: str, port: int) -> socket.socket:
    """Bind ``host:port`` now, so a busy or unavailable address fails with the OS's reason before anything claims
    to be serving — but do not listen yet (:func:`listen`): a browser opened while the demo is still being
    ingested is refused at once rather than left waiting on a queued connection (the stranger's trial)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if os.name == "posix":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart is not blocked by TIME_WAIT
        if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise _cannot_listen(host, port, e) from e
    sock.set_inheritable(True)
    return sock


def listen(sock: socket.socket, host: str, port: int) -> None:
    """Start accepting connections on a socket :func:`bind` made (two servers that bound the same port before
    either listened: the second is told here, as for a busy port)."""
    try:
        sock.listen(2048)
    except OSError as e:
        raise _cannot_listen(host, port, e) from e


def _cannot_listen(host: str, port: int, e: OSError) -> ServeError:
    hint = " (another program is listening there: pick another port with --port, or PORT= for make run)" \
        if e.errno in (98, 48, 10048) else ""
    reason = (e.strerror or str(e)).split(" (while attempting")[0]  # asyncio-style suffix repeats the address
    return ServeError(f"cannot listen on {host}:{port}: {reason}{hint}")


def release_freed_memory() -> bool:
    """Hand the C heap's freed pages back to the system (glibc's ``malloc_trim``; elsewhere nothing). Embedding
    the demo in the serving process frees its batches' buffers, but glibc keeps them resident until the server
    restarts: embeddinggemma 2.0 GB → 0.62 GB measured (docs/embedders.md). True when it ran."""
    import ctypes

    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return False
    trim(0)
    return True


def ingest_demo_if_empty(engine: Engine, demo: Path | None, memory: Path | None = None,
                         say: Callable[[str], None] | None = None) -> str:
    """Ingest ``demo`` when the store holds no source, then import the demo's curated memory notes
    (``memory``) into it; return a line saying what happened. ``say``: progress lines meanwhile (the demo
    takes about a minute on a loaded machine: `make run` is not silent for it)."""
    stats = engine.store.stats()
    if stats.sources:
        return f"store {stats.url}: {stats.sources} sources, {stats.fragments} fragments"
    if demo is None:
        return f"store {stats.url} is empty and no demo corpus was found; add sources with `footnote ingest PATH`"
    display = None
    if say is not None:
        from footnote.commands.ingest_view import StageDisplay

        say(f"the store {stats.url} is empty: ingesting the demo corpus {demo} (a minute or so, once)")
        display = StageDisplay(sys.stderr, every_s=5.0)
    try:  # README files are skipped when a folder is walked
        # the server makes the sentence vectors in the background once it listens (server.warm_sentences_max_fragments)
        report = engine.ingest([demo], events=display.ingest if display is not None else None, warm_sentences=False)
    finally:
        if display is not None:
            display.close()
    after = engine.store.stats()
    line = f"ingested the demo corpus {demo}: {after.sources} sources, {after.fragments} fragments in {report.seconds:.1f} s"
    if report.failed:
        line += f" ({report.failed} failed: see `footnote ingest {demo}`)"
    if memory is not None:
        notes = engine.import_memory([memory])
        line += f"; {notes.count('imported')} curated memory notes from {memory}"
        if notes.failed:
            line += f" ({notes.failed} failed: see `footnote memory import {memory}`)"
    release_freed_memory()
    return line


@click.command("serve")
@click.option("--host", default=None, help="Address to bind (default settings.server.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), default=None, help="Port to bind (default settings.server.port, 8000).")
@click.option("--demo", "demo", type=click.Path(path_type=Path), default=None,
              help="Corpus folder ingested when the store is empty (default settings.server.demo_corpus).")
@click.option("--no-demo", is_flag=True, help="Never ingest a demo corpus.")
@click.option("--log-level", default="warning", type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              help="uvicorn's log level.")
@common_options
def serve(ctx: Ctx, host: str | None, port: int | None, demo: Path | None, no_demo: bool, log_level: str) -> None:
    """Serve the HTTP API and the web chat (ingesting the demo corpus into an empty store first)."""
    import uvicorn

    from footnote.server.app import create_app

    ctx.own_demo_config = False  # serve decides below, counting a store it is about to fill with the demo
    settings = ctx.settings
    if demo is not None and not demo.is_dir():
        raise UsageError(f"--demo {demo}: not a folder")
    demo_dir = None if no_demo else (demo or resolve_demo_dir(settings.server.demo_corpus))
    # the demo's own settings when the store is the demo's, or empty and about to be filled with it
    own_config = demo_config(settings, ctx.config is not None, demo_dir, empty_too=True)
    if own_config is not None:
        ctx.use_config(str(own_config))
        settings = ctx.settings
        click.echo(f"settings: {own_config} (the demo's own)", err=True)
    host = host or settings.server.host
    port = port if port is not None else settings.server.port
    sock = bind(host, port)
    port = sock.getsockname()[1]  # the real one when 0 was asked for
    settings = settings.with_overrides(**{"server.host": host, "server.port": port})  # the Host guard knows the bind address
    # a store that does not exist is created only to hold the demo corpus (`make run` on a fresh clone)
    with Engine.from_settings(settings, create=demo_dir is not None) as engine:
        memory_dir = resolve_demo_dir(settings.server.demo_memory) if demo_dir is not None and demo is None else None
        click.echo(ingest_demo_if_empty(engine, demo_dir, memory_dir, say=lambda line: click.echo(line, err=True)),
                   err=True)
        status = engine.status()
        embedding = status.get("embedding") or {}
        if embedding.get("state") in ("embedding", "paused"):
            worker = "embedding them in the background" if settings.backlog.serve_worker else (
                "background embedding is off (backlog.serve_worker)")
            click.echo(f"{embedding['pending']:,} fragments without a vector: lexical search for those; {worker}",
                       err=True)
        elif status["lexical_only"]:
            click.echo("lexical-only mode: no embeddings, only word matches are searched", err=True)
        note = engine.gate_note()
        if note:
            click.echo(f"warning: {note}", err=True)
        app = create_app(engine, settings)
        shown = f"[{host}]" if ":" in host else host
        listen(sock, host, port)
        click.echo(f"Footnote is serving http://{shown}:{port}  (API docs: http://{shown}:{port}/docs)")
        if settings.mcp.enabled:
            click.echo(f"MCP (streamable HTTP): http://{shown}:{port}/mcp", err=True)
        uvicorn.Server(uvicorn_config(app, settings, log_level)).run(sockets=[sock])


def uvicorn_config(app: Any, settings: Settings, log_level: str = "warning") -> Any:
    """How ``serve`` runs uvicorn: request headers within ``server.header_timeout_s``, idle kept-alive
    connections closed after ``server.keep_alive_s`` (longer than the clients' own limits: see the setting)."""
    import uvicorn

    from footnote.server.slowclients import protocol_class

    return uvicorn.Config(app, log_level=log_level, timeout_graceful_shutdown=5,
                          timeout_keep_alive=settings.server.keep_alive_s,
                          http=protocol_class(settings.server.header_timeout_s))


def register(group: click.Group) -> None:
    group.add_command(serve)
