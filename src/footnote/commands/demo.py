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

from footnote.errors import FootnoteError
from footnote.records.fragments import sha256_bytes
from footnote.settings import Settings, default_config_path

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
    """Whether the store of ``settings`` holds one of ``demo``'s files, byte for byte (its source id is the
    demo folder's name and the file's path under it). ``empty_too``: a store that does not exist yet, or holds
    no source, counts too (``serve`` is about to fill it with the demo). A store that cannot be opened does not
    count: the command itself then says why."""
    from footnote.store import open_store

    try:
        store = open_store(settings.store.url, settings.store, create=False)
    except FootnoteError:
        return empty_too
    try:
        if empty_too and store.count_sources() == 0:
            return True
        for path in demo_files(demo):
            src = store.get_source(f"{demo.name}/{path.relative_to(demo).as_posix()}")
            if src is not None:
                return src.blob_sha256 == sha256_bytes(path.read_bytes())
        return False
    except FootnoteError:
        return False
    finally:
        store.close()


def demo_config(settings: Settings, config_given: bool, demo: Path | None, *, empty_too: bool = False) -> Path | None:
    """The demo folder's settings file when no other settings file is given and the store is the demo's (see
    the module docstring); else None."""
    if demo is None or config_given or default_config_path() is not None:
        return None
    path = demo / DEMO_CONFIG
    if not path.is_file() or not holds_demo(settings, demo, empty_too=empty_too):
        return None
    return path
