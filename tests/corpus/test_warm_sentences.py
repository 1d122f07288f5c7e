"""Issue 44 §12: the sentence vectors a search compares a question with are made at ingest, not by the first
searches that touch each passage (on xquad's cold store that first-touch work was the slow tenth: p95 9.9× a
dense-only search's). After `footnote ingest` every sentence the gate and the extractive answer embed is in the
store; a search then embeds only its question."""

from __future__ import annotations

import hashlib
from pathlib import Path

from click.testing import CliRunner

from footnote.cli import main
from footnote.engine import Engine
from footnote.retrieve.signal import gate_sentences
from footnote.settings import Settings
from footnote.store import open_store


def _missing(settings: Settings) -> int:
    store = open_store(settings.store.url, settings.store)
    try:
        texts = {s for src in store.list_sources() for f in store.fragments_of(src.id) for s in gate_sentences([f], 1 << 30)}
        keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        assert keys
        return len(keys) - len(store.get_sentence_vectors("hash", keys))  # type: ignore[attr-defined]
    finally:
        store.close()


def test_ingest_makes_every_sentence_vector_a_search_compares_with(hash_settings: Settings, demo_dir: Path) -> None:
    with Engine.from_settings(hash_settings) as engine:
        report = engine.ingest([demo_dir / "letters"])
        assert report.sentences_warmed > 0 and report.sentences_skipped == ""
        assert report.to_dict()["sentence_vectors"]["made"] == report.sentences_warmed
        again = engine.warm_sentences(report)
        assert again.sentences_warmed == 0  # all kept in the store: nothing to make twice
        before = engine.embedder.calls if hasattr(engine.embedder, "calls") else None
        engine.search("When did the gale break the lantern glass?")
        if before is not None:
            assert engine.embedder.calls - before <= 1  # the question, no passage's sentences
    assert _missing(hash_settings) == 0


def test_a_store_over_the_cap_leaves_them_to_use_and_says_why(hash_settings: Settings, demo_dir: Path) -> None:
    settings = hash_settings.with_overrides(**{"backlog.warm_sentences_max_fragments": 1})
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([demo_dir / "letters"])
    assert report.sentences_warmed == 0 and "backlog.warm_sentences_max_fragments" in report.sentences_skipped
    assert _missing(hash_settings) > 0


def test_the_cli_says_what_it_made(hash_settings: Settings, demo_dir: Path) -> None:
    r = CliRunner().invoke(main, ["ingest", str(demo_dir / "letters"), "--store", hash_settings.store.url,
                                  "--embedder", "hash"])
    assert r.exit_code == 0, r.output
    assert "sentence vectors: making them now" in r.output and "sentence vectors: " in r.output
    assert _missing(hash_settings) == 0
