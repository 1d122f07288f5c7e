"""An unfinished index is a state, not an answer: while fragments wait for vectors, a question the lexical
lanes cannot answer ends as ``index_incomplete`` ("only N % of the corpus is searchable by meaning yet"), in
the reader's language, never "nothing close"; an answer only the meaning of a partial index vouches for is not
shown. Real SQLite store, hash embedder, ingested without waiting for vectors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.answer.disclaimers import index_incomplete_text
from footnote.answer.types import AbstentionReason, AbstentionStage, AnswerMode
from footnote.cli import main
from footnote.engine import Engine

from .conftest import CORPUS, make_settings

#: no word of it is in the corpus: only the vectors could find what it is near
UNSEEN = "Which signal warns ships in thick weather?"
UNSEEN_RU = "Какой сигнал предупреждает корабли в плохую погоду?"


@pytest.fixture
def half(tmp_path: Path) -> Iterator[Engine]:
    d = tmp_path / "corpus"
    d.mkdir()
    for name, text in CORPUS.items():
        (d / name).write_text(text, encoding="utf-8")
    eng = Engine.from_settings(make_settings(tmp_path))
    eng.ingest([d], wait=False)
    assert eng.store.backlog().pending > 0
    yield eng
    eng.close()


def test_a_miss_while_embedding_says_the_index_is_incomplete(half: Engine) -> None:
    a = half.ask(UNSEEN)
    assert a.mode is AnswerMode.NOT_FOUND
    assert a.abstention is not None
    assert (a.abstention.reason, a.abstention.stage) == (AbstentionReason.INDEX_INCOMPLETE, AbstentionStage.INDEX)
    assert a.answer.startswith("Only 0 % of the corpus is searchable by meaning yet")
    assert "nothing" not in a.answer.lower()
    assert a.to_dict()["abstention"] == {"reason": "index_incomplete", "stage": "index"}
    index = next(s for s in a.trace.stages if s.name == "index")  # type: ignore[union-attr]
    assert index.counts["embedded"] == 0 and index.counts["fragments"] > 0


def test_it_is_said_in_the_readers_language(half: Engine) -> None:
    a = half.ask(UNSEEN_RU)
    assert a.abstention is not None and a.abstention.reason is AbstentionReason.INDEX_INCOMPLETE
    assert a.answer.startswith("Пока только 0 % корпуса доступно для поиска по смыслу")


def test_a_question_the_words_answer_is_still_answered_while_embedding(half: Engine) -> None:
    a = half.ask("How many gallons of paraffin may the oil store hold?")
    assert a.mode is AnswerMode.CORPUS and "600" in a.answer, a.answer


def test_once_embedded_the_same_miss_is_an_ordinary_abstention(half: Engine) -> None:
    half.embed_backlog()
    assert half.store.backlog().pending == 0
    a = half.ask(UNSEEN)
    assert a.abstention is None or a.abstention.reason is not AbstentionReason.INDEX_INCOMPLETE


def test_the_cli_and_the_eta(half: Engine, tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["ask", UNSEEN, "--store", str(tmp_path / "store.db"), "--embedder", "hash", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["abstention"] == {"reason": "index_incomplete", "stage": "index"}
    assert index_incomplete_text("en", 27.4, 150.0).endswith("Ask again in about 2 min.")
    assert index_incomplete_text("ru", 50, None).endswith("Спросите ещё раз, когда индексация закончится.")
    assert index_incomplete_text("hi", 50, 30).startswith("Only 50 %")  # no texts in Hindi: English
    assert index_incomplete_text("de", 50, 30).startswith("Erst 50 % des Korpus")


def test_a_note_ingested_a_moment_ago_answers_as_it_will_once_embedded(tmp_path: Path) -> None:
    """A store whose passages are embedded, then one new note ingested without waiting: its lexical hit is embedded
    for the turn (``retrieve.pending_embed_max``), so the turn is the one the whole index gives — same answer, same
    citations — and nothing is written (the backlog still holds the note). Over the demo with EmbeddingGemma the
    note had ranked below sixteen embedded passages that only share its subject (docs/answering.md)."""
    d = tmp_path / "corpus"
    d.mkdir()
    for i in range(24):  # embedded passages about the keepers and their watch, none about a cat
        (d / f"watch-{i:02d}.md").write_text(
            f"# Watch {i}\n\nThe keepers of the station kept watch number {i} in the lamp room and wrote the name "
            f"of the keeper on watch in the log, as the keepers of every station must.\n", encoding="utf-8")
    eng = Engine.from_settings(make_settings(tmp_path))
    try:
        eng.ingest([d])
        new = tmp_path / "new"
        new.mkdir()
        (new / "cat.md").write_text("# The station cat\n\nThe keepers gave the station cat the name Biscuit.\n",
                                    encoding="utf-8")
        eng.ingest([new], wait=False)
        assert eng.store.backlog().pending == 1
        q = "What name did the keepers give the station cat?"
        a = eng.ask(q)
        assert a.mode is AnswerMode.CORPUS and "Biscuit" in a.answer, a.answer
        assert a.citations and a.citations[0].fragment.source_id.endswith("cat.md")
        assert a.trace is not None
        pool = next(s for s in a.trace.search.stages if s["name"] == "pool")
        assert pool["counts"]["embedded_for_turn"] == 1
        assert eng.store.backlog().pending == 1  # nothing written by the turn
        eng.embed_backlog()
        full = eng.ask(q)
        assert full.answer == a.answer
        assert [c.fragment.id for c in full.citations] == [c.fragment.id for c in a.citations]
    finally:
        eng.close()
