"""One freshness rule (docs/architecture.md, "What a turn reads, and how fresh"): a turn sees the corpus as of its
opening, and what is kept between turns — the books and their addresses, the prose check's names, the example
questions — is kept for one corpus generation (``SourceStore.generation``). A second engine over the same store
(another process's writes, on PostgreSQL through ``NOTIFY``) ingests a source and then removes it between the turns
of a running engine: the next turn sees each change. Real SQLite file, real embedded PostgreSQL, hash embedder."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from footnote.answer.prose import skel
from footnote.answer.types import AnswerMode
from footnote.engine import Engine
from footnote.settings import load_settings

BASE = """---
title: Notes on the Harbour Wall
lang: en
---
The harbour wall was raised by two feet after the storm of 1881. The masons worked through the winter.
"""
QUARRY = """---
kind: verse
book: QB
title: The Quarry Book
lang: en
---
# The Quarry Book
## QB 1.1
Ring the quarry bell three times before the blasting at noon.
### Commentary
The quarry bell at Tregarrow is rung three times, a minute apart, before every noon blast, so that the shepherds on the down can bring their flocks away from the edge.
"""
TITLE = "The Quarry Book"


def _engine(url: str) -> Engine:
    return Engine.from_settings(load_settings(None, **{"store.url": url, "embedder.name": "hash"}))


def _sees(reader: Engine) -> tuple[bool, bool, bool]:
    """(the books know QB, the names index knows the title, an ask of "QB 1.1" cites the quarry verse)."""
    reads = reader.retriever.corpus()
    names = reader.answerer.mentions.get(reads)
    a = reader.ask("What does QB 1.1 say?")
    cited = a.mode is AnswerMode.CORPUS and any("quarry" in c.fragment.source_id for c in a.citations)
    return any(code.casefold() == "qb" for code in reads.books.books), skel(TITLE) in names.titles, cited


def _between_turns(url: str, tmp_path: Path, wait_s: float) -> None:
    (tmp_path / "wall.md").write_text(BASE, encoding="utf-8")
    (tmp_path / "quarry.md").write_text(QUARRY, encoding="utf-8")
    with _engine(url) as writer:
        writer.ingest([tmp_path / "wall.md"])
        with _engine(url) as reader:
            assert _sees(reader) == (False, False, False)  # the first turn: caches built at this generation
            before = reader.retriever.corpus().generation
            writer.ingest([tmp_path / "quarry.md"])
            _settle(reader, before, wait_s)
            assert _sees(reader) == (True, True, True)
            sid = next(s.id for s in writer.store.list_sources() if "quarry" in s.id)
            before = reader.retriever.corpus().generation
            assert writer.store.delete_sources([sid]) == [sid]
            _settle(reader, before, wait_s)
            assert _sees(reader) == (False, False, False)


def _settle(reader: Engine, before: int, wait_s: float) -> None:
    """Until the reader's store says the generation moved (PostgreSQL: the notification's way from the writer's
    commit to this process's listening connection; SQLite: the file, at once)."""
    deadline = time.monotonic() + wait_s
    while reader.store.generation() == before:
        assert time.monotonic() < deadline, f"the generation stayed {before} for {wait_s} s after another engine's write"
        time.sleep(0.01)


def test_sqlite_a_turn_sees_an_ingest_and_a_removal_made_between_turns(tmp_path: Path) -> None:
    _between_turns(str(tmp_path / "store.db"), tmp_path, 0.0)


@pytest.mark.integration
def test_postgres_a_turn_sees_an_ingest_and_a_removal_made_between_turns(pg_url: str, tmp_path: Path) -> None:
    _between_turns(pg_url, tmp_path, 2.0)


def test_a_backlog_moves_the_vectors_generation_not_the_sources(tmp_path: Path) -> None:
    """While a store embeds, every batch of vectors moves the vectors' generation only: the books and the names index,
    derived from the sources, are not rebuilt by every turn (at 5,000 sources the names index takes ~0.6 s)."""
    (tmp_path / "wall.md").write_text(BASE, encoding="utf-8")
    with _engine(str(tmp_path / "store.db")) as eng:
        g0, v0 = eng.store.generation(), eng.store.vectors_generation()
        eng.ingest([tmp_path / "wall.md"], wait=False)
        g1, v1 = eng.store.generation(), eng.store.vectors_generation()
        assert g1 != g0 and v1 != v0
        names = eng.answerer.mentions.get(eng.retriever.corpus())
        eng.embed_backlog()
        assert eng.store.generation() == g1 and eng.store.vectors_generation() != v1
        assert eng.answerer.mentions.get(eng.retriever.corpus()) is names  # kept: no source changed
        eng.ask("How much was the harbour wall raised?")
        assert eng.store.generation() == g1  # a turn is no write of the corpus


def test_the_first_vectors_are_searched_at_the_next_turn(tmp_path: Path) -> None:
    """A store with no vectors yet is searched lexically only; once another engine writes its first vectors, the next
    search runs the dense lanes too (the background sample of an empty store is read again when the generation
    moves, not after a wait)."""
    (tmp_path / "quarry.md").write_text(QUARRY, encoding="utf-8")
    url = str(tmp_path / "store.db")
    with _engine(url) as writer:
        writer.ingest([tmp_path / "quarry.md"], wait=False)
        with _engine(url) as reader:
            assert reader.search("When is the bell rung at Tregarrow?").lexical_only
            writer.embed_backlog()
            assert not reader.search("When is the bell rung at Tregarrow?").lexical_only
