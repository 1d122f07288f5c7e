#!/usr/bin/env python3
"""Start, stop and locate an embedded PostgreSQL (18.6 + pgvector + pg_trgm) for development.

    .venv/bin/python scripts/pg.py start   # initdb a temporary cluster, start it on 127.0.0.1:<free port>,
                                           # create database "footnote", print its URL
    export FOOTNOTE_STORE=$(.venv/bin/python scripts/pg.py url)
    .venv/bin/footnote ingest demo && .venv/bin/footnote ask "..."
    .venv/bin/python scripts/pg.py stop    # stop the server and delete its data directory
    .venv/bin/python scripts/pg.py status

The server runs as the ``postgres`` OS user when you are root (PostgreSQL refuses root). Its state
(data directory, port, password) is kept in $FOOTNOTE_PG_STATE (default /tmp/footnote-pg.json).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from footnote.errors import StoreError
from footnote.testing.internal import pgserver

STATE = Path(os.environ.get("FOOTNOTE_PG_STATE", "/tmp/footnote-pg.json"))
DBNAME = "footnote"


def _load() -> pgserver.EmbeddedPostgres | None:
    if not STATE.exists():
        return None
    return pgserver.EmbeddedPostgres.from_json(STATE.read_text())


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "status"
    server = _load()
    if cmd == "start":
        if server is not None and server.running():
            print(server.url(DBNAME))
            return 0
        server = pgserver.start()
        url = server.create_database(DBNAME)
        STATE.write_text(server.to_json())
        STATE.chmod(0o600)
        print(url)
        return 0
    if cmd == "url":
        if server is None or not server.running():
            print("no embedded PostgreSQL is running (scripts/pg.py start)", file=sys.stderr)
            return 1
        print(server.url(DBNAME))
        return 0
    if cmd == "stop":
        if server is not None:
            server.stop()
            STATE.unlink(missing_ok=True)
        return 0
    if cmd == "status":
        if server is not None and server.running():
            print(f"running on 127.0.0.1:{server.port} (data {server.data_dir})")
            return 0
        print("not running")
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except StoreError as e:
        print(f"error: {e.message}", file=sys.stderr)
        sys.exit(1)
