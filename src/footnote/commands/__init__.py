"""CLI commands, one module per family; each module exposes ``register(group)``.

- ``corpus``: ingest, status                   - ``search``: search
- ``curate``: sources, remove
- ``evaluate``: eval, calibrate                 - ``ask``: ask
- ``serve``: serve                              - ``migrate``: migrate
- ``models``: models list | install | remove
- ``reembed``: reembed
- ``conversations``: conversations
- ``mcp``: mcp (stdio MCP server)               - ``settings``: settings (show, --set)
- ``judge``: judge                             - ``memory``: memory import | list | remove
- ``transcript``: transcript export             - ``worker``: worker (embed a shared store's backlog)
- ``keys``: keys create | list | revoke (named API keys by collection)
"""

from __future__ import annotations

import importlib

import click

MODULES = ("corpus", "curate", "search", "evaluate", "calibrate", "ask", "conversations", "serve", "migrate", "models",
           "reembed", "mcp", "settings", "judge", "memory", "transcript", "worker", "keys")


def register_all(group: click.Group) -> None:
    for name in MODULES:
        importlib.import_module(f"footnote.commands.{name}").register(group)
