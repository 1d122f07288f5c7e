"""The PostgreSQL store's generation in this process (store/pg_changes.py) when it cannot listen: every read is a new
value (nothing vouches that the corpus is unchanged), and the listening connection is dialled again at most every
``retry_s`` — not once per turn. The listening itself runs against a real server in tests/store/test_pg_exact.py and
tests/retrieve/test_freshness.py."""

from __future__ import annotations

import time
from typing import Any

from footnote.errors import StoreError
from footnote.store.pg_changes import ChangeFeed


class Refusing:
    """An opener whose every connection is refused (a standby that refuses LISTEN, a server at its limit)."""

    def __init__(self) -> None:
        self.tries = 0

    def __call__(self) -> Any:
        self.tries += 1
        raise StoreError("connection refused")


def test_without_a_listener_every_read_is_new_and_the_server_is_not_dialled_per_read() -> None:
    opener = Refusing()
    feed = ChangeFeed(opener, "s", retry_s=0.3)
    seen = [feed.generation() for _ in range(20)]
    assert len(set(seen)) == 20  # each turn rebuilds what it derives
    assert opener.tries == 1
    time.sleep(0.35)
    feed.generation()
    assert opener.tries == 2  # tried again once the wait is over


def test_a_write_of_this_process_moves_the_generation() -> None:
    feed = ChangeFeed(Refusing(), "s", retry_s=60.0)
    feed.generation()
    with feed._lock:
        before = feed._gen
    feed.bump()
    with feed._lock:
        assert feed._gen == before + 1
