"""The bundled demo corpus and its own settings file, for every command.

``footnote serve`` ingests the demo (``server.demo_corpus``) into an empty store; the demo's names for its
verse book ("the Harbour Book" → HB) and what its fallback declines live in the demo folder's
``footnote.toml``. Every command reads that file when no other settings file is given (``--config``,
``FOOTNOTE_CONFIG``, ``./footnote.toml``) and the store is the demo's: it holds one of the demo's files, byte
for byte — so ``footnote ask "Что говорит Книга гавани 3.2?"`` over the store ``make run`` filled answers as
the chat does, and a store of other books is never read with the demo's names. ``serve`` also reads it for a
store it is about to fill with the demo.
"""

from __future__ import annotations

import logging
from pathlib import Path

from footnote.records.fragments import sha256_bytes
from footnote.settings import Settings, default_config_path
from footnote.store import peek_sources

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[3]

#: The demo's own settings file (book aliases, what the fallback declines), beside its corpus.
DEMO_CONFIG = "footnote.toml"


def resolve_demo_dir(configured: str) -> Path | None:
    """The demo folder: as configured (relative to the current directory), else beside the package's repo."""
    p = Path(configured).expanduser()
    if p.is_dir():
        return p
    if not p.is_absolute() and (REPO_ROOT / p).is_dir():
        return REPO_ROOT / p
    return None


def demo_files(demo: Path) -> list[Path]:
    """The demo's corpus files (its settings file and READMEs are not sources), sorted."""
    return sorted(p for p in demo.rglob("*") if p.is_file() and p.name != DEMO_CONFIG
                  and not p.name.lower().startswith("readme"))


def holds_demo(settings: Settings, demo: Path, *, empty_too: bool = False) -> bool:
    """Whether the store of ``settings`` holds one of ``demo``'s files, byte for byte, under a source id of the
    demo folder's name and a path under it. ``empty_too``: a store that does not exist yet, or holds
    no source, counts too (``serve`` is about to fill it with the demo).

    Every command asks this (`footnote models list` too), so the store is not opened: a SQLite file is read
    read-only, never created or migrated (:func:`~footnote.store.peek_sources`), and a PostgreSQL store is never
    connected to here (an unreachable server would cost every command its connect timeout twice): only ``serve``
    takes the demo's settings for one, when it is told to fill it (``empty_too``). A store that cannot be read
    does not count: the command itself then says why."""
    url = settings.store.url
    if url.startswith(("postgresql://", "postgres://")):
        return empty_too
    files = demo_files(demo)
    peek = peek_sources(url, [f"{demo.name}/{p.relative_to(demo).as_posix()}" for p in files])
    if peek is None:
        return False
    count, held = peek
    if count == 0:  # no file yet, or a store with no source
        return empty_too
    if not held:
        return False
    # a source's stored original may be another of the demo's files than its id names (a lecture's transcript
    # is stored with its recording): any of the demo's files will do
    return bool(set(held.values()) & {sha256_bytes(p.read_bytes()) for p in files})


def demo_config(settings: Settings, config_given: bool, demo: Path | None, *, empty_too: bool = False) -> Path | None:
    """The demo folder's settings file when no other settings file is given and the store is the demo's (see
    the module docstring); else None."""
    if demo is None or config_given or default_config_path() is not None:
        return None
    path = demo / DEMO_CONFIG
    if not path.is_file() or not holds_demo(settings, demo, empty_too=empty_too):
        return None
    return path
