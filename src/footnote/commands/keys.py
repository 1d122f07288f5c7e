"""``footnote keys create NAME --collection C… [--write] | list | revoke NAME``: named API keys, each reading
(or reading and writing) some collections (docs/server.md, "Keys and collections"). The store keeps each
key's SHA-256; ``create`` prints the key once."""

from __future__ import annotations

import datetime as dt
import secrets
import time

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import NotFound
from footnote.store import open_store
from footnote.store.keys import ALL_COLLECTIONS, ApiKey, check_collections, check_key_name, key_hash, new_key


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


@click.group("keys")
def keys() -> None:
    """Named API keys: who may read (and write) which collections."""


@keys.command("create")
@click.argument("name")
@click.option("--collection", "collections", multiple=True, metavar="NAME",
              help="A collection the key reads (repeat for more; '*' for every collection).")
@click.option("--write", is_flag=True, help="The key may also change the curated notes of its collections and "
              "remove their sources over HTTP.")
@common_options
def create(ctx: Ctx, name: str, collections: tuple[str, ...], write: bool) -> None:
    """Create key NAME and print it (once: the store keeps only its hash)."""
    check_key_name(name)
    granted = check_collections(collections)
    store = open_store(ctx.settings.store.url, ctx.settings.store, create=False)  # only ingest makes a store
    try:
        have = store.collections()
        unknown = [c for c in granted if c != ALL_COLLECTIONS and c not in have]
        key = new_key()
        record = ApiKey(name, secrets.token_hex(8), granted, write, time.time())
        store.put_api_key(record, key_hash(key))
    finally:
        store.close()
    for c in unknown:  # a collection ingested later is read then: a warning, not an error
        click.echo(f"warning: the store has no collection {c!r} yet (it has: {', '.join(sorted(have)) or 'none'}); "
                   "the key reads it once it is ingested", err=True)
    if ctx.as_json:
        ctx.emit({**record.to_dict(), "key": key})
    else:
        click.echo(key)
        click.echo(f"key {name!r} reads {', '.join(granted)}{' and writes them' if write else ''}; "
                   "it is shown only now", err=True)


@keys.command("list")
@common_options
def list_(ctx: Ctx) -> None:
    """List the keys: name, collections, whether they write, when made (never the keys themselves)."""
    store = open_store(ctx.settings.store.url, ctx.settings.store, create=False)
    try:
        found = store.api_keys()
    finally:
        store.close()
    if ctx.as_json:
        ctx.emit({"keys": [k.to_dict() for k in found]})
        return
    if not found:
        click.echo("no named keys (make one with `footnote keys create NAME --collection C`)")
    width = max(len(k.name) for k in found) if found else 0
    for k in found:
        click.echo(f"{k.name:<{width}}  {'read+write' if k.write else 'read':<10}  {_when(k.created)}  "
                   f"{', '.join(k.collections)}")


@keys.command("revoke")
@click.argument("name")
@common_options
def revoke(ctx: Ctx, name: str) -> None:
    """Revoke key NAME: every server on the store refuses it within server.keys_refresh_s."""
    store = open_store(ctx.settings.store.url, ctx.settings.store, create=False)
    try:
        if not store.revoke_api_key(name):
            raise NotFound(f"no live key named {name!r} (revoked already, or never made: footnote keys list shows "
                           "the live ones)")
    finally:
        store.close()
    if ctx.as_json:
        ctx.emit({"revoked": name})
    else:
        click.echo(f"revoked {name}")


def register(group: click.Group) -> None:
    group.add_command(keys)
