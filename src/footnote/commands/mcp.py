"""``footnote mcp``: serve the store over the Model Context Protocol on stdin/stdout (desktop agents).

The same server runs over streamable HTTP at ``/mcp`` inside ``footnote serve``. While it runs, the SDK
points the process's fd 1 at stderr, so nothing but protocol messages reaches stdout.
"""

from __future__ import annotations

import click

from footnote.commands.base import Ctx, common_options


@click.command("mcp")
@common_options
def mcp_command(ctx: Ctx) -> None:
    """Serve the store to MCP clients over stdio (tools: search, ask, get_source, list_sources)."""
    from footnote.mcp.server import build_server

    with ctx.engine() as engine:
        build_server(engine).run("stdio")


def register(group: click.Group) -> None:
    group.add_command(mcp_command)
