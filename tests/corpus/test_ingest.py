"""Ingestion into a real SQLite store: real files, bad input, idempotency, prune, batching."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from corpus_support import CountingStore, bad_inputs, generation

from footnote.corpus.ingest import Ingestor, IngestReport, IngestStatus
from footnote.engine import Engine
from footnote.errors import ModelError
from footnote.records.fragments import FileLocator, TranscriptLocator, sha256_bytes
from footnote.settings import Settings


def _by_status(report: IngestReport, status: IngestStatus) -> list[str]:
    return [e.source_id or e.path for e in report.entries if e.status is status]


def test_sonnet_track_stored_with_exact_ms_and_mp3(engine: Engine, shared_dir: Path, tmp_path: Path) -> None:
    d = tmp_path / "tracks"
    d.mkdir()
    shutil.copy(shared_dir / "data/sonnets/p001.mp3", d / "p001.mp3")
    shutil.copy(shared_dir / "data/sonnets/sonnet001.srt", d / "p001.srt")
    report = engine.ingest([d])
    assert report.ok and _by_status(report, IngestStatus.ADDED) == ["tracks/p001.srt"]
    original = engine.store.get_original("tracks/p001.srt")
    mp3 = (d / "p001.mp3").read_bytes()
    assert original is not None and original.data == mp3 and original.media_type == "audio/mpeg"
    assert original.sha256 == sha256_bytes(mp3)
    sync = json.loads((shared_dir / "data/sonnets/sonnet001.json").read_text(encoding="utf-8"))["fragments"]
    bounds = {int(Decimal(f[k]) * 1000) for f in sync for k in ("begin", "end")}
    frags = engine.store.fragments_of("tracks/p001.srt")
    assert len(frags) >= 2
    for f in frags:
        assert isinstance(f.locator, TranscriptLocator) and f.locator.track_id == "tracks/p001.srt"
        assert f.locator.start_ms in bounds and f.locator.end_ms in bounds
    assert frags[0].locator.start_ms == 0  # type: ignore[union-attr]
    assert frags[-1].locator.end_ms == int(Decimal(sync[-1]["end"]) * 1000)  # type: ignore[union-attr]


def test_pdf_pages_in_store(engine: Engine, shared_dir: Path) -> None:
    report = engine.ingest([shared_dir / "data/pdf/GeoTopo-komprimiert.pdf"], lang="de")
    assert report.ok and report.fragments > 117
    hits = engine.store.search_lexical("Hausdorff-Raum", 5, stemmed=False)
    assert hits
    (frag,) = engine.store.get_fragments([hits[0].fragment_id])
    assert isinstance(frag.locator, FileLocator)
    assert frag.locator.file == "pdf/GeoTopo-komprimiert.pdf" and frag.locator.page == 12
    assert frag.lang == "de"
    pages = {f.locator.page for f in engine.store.fragments_of("pdf/GeoTopo-komprimiert.pdf")}  # type: ignore[union-attr]
    assert max(p for p in pages if p) == 117


def test_russian_jsonl_found_by_another_inflection(engine: Engine, shared_dir: Path) -> None:
    report = engine.ingest([shared_dir / "eval/xquad/corpus.ru.jsonl"])
    assert report.ok and report.count(IngestStatus.ADDED) == 144
    # "университетах" (locative plural) never occurs in the corpus; its stem does
    assert engine.store.search_lexical("университетах", 10, stemmed=False, lang="ru") == []
    hits = engine.store.search_lexical("университетах", 10, stemmed=True, lang="ru")
    assert hits
    texts = [f.text.lower() for f in engine.store.get_fragments([h.fragment_id for h in hits])]
    assert all("университет" in t for t in texts)


def _good_inputs(d: Path) -> None:
    (d / "good.md").write_text("# Good\n\nA good paragraph about harbours.\n", encoding="utf-8")
    (d / "good.srt").write_text("1\n00:00:00,000 --> 00:00:02,000\nA good cue.\n", encoding="utf-8")


def test_each_bad_input_fails_alone(engine: Engine, shared_dir: Path, tmp_path: Path) -> None:
    d = tmp_path / "mixed"
    expected = bad_inputs(d, shared_dir)
    _good_inputs(d)
    report = engine.ingest([d])
    failed = {Path(e.path).name: e for e in report.entries if e.status is IngestStatus.FAILED}
    assert set(failed) == set(expected)
    for name, (words, line) in expected.items():
        err = failed[name].error or ""
        where = f"{d / name}:{line}" if line is not None else str(d / name)
        assert err.startswith(where + ":") or err.startswith(where + " "), err
        assert words in err, err
    stored = {s.id for s in engine.store.list_sources()}
    assert stored == {"mixed/good.md", "mixed/good.srt", "row-a", "row-c"}
    assert not report.ok


def test_bad_new_version_keeps_the_stored_one(engine: Engine, tmp_path: Path) -> None:
    d = tmp_path / "c"
    d.mkdir()
    (d / "talk.srt").write_text("1\n00:00:00,000 --> 00:00:02,000\nFirst version.\n", encoding="utf-8")
    assert engine.ingest([d]).ok
    before = (engine.store.source_hash("talk.srt"), [f.text for f in engine.store.fragments_of("talk.srt")])
    (d / "talk.srt").write_text("1\n00:00:03,000 --> 00:00:02,000\nBroken.\n", encoding="utf-8")
    report = engine.ingest([d], prune=True)
    assert _by_status(report, IngestStatus.FAILED) == [str(d / "talk.srt")]
    assert report.pruned == ()
    after = (engine.store.source_hash("talk.srt"), [f.text for f in engine.store.fragments_of("talk.srt")])
    assert after == before


def test_idempotent_replace_and_prune(engine: Engine, db_path: Path, tmp_path: Path) -> None:
    store: CountingStore = engine.store  # type: ignore[assignment]
    d = tmp_path / "lib"
    (d / "sub").mkdir(parents=True)
    for i in range(5):
        (d / "sub" / f"n{i}.md").write_text(f"# Note {i}\n\nText number {i} about the harbour.\n", encoding="utf-8")
    (d / "rows.jsonl").write_text('{"id": "r1", "text": "one"}\n{"id": "r2", "text": "two"}\n', encoding="utf-8")
    first = engine.ingest([d])
    assert first.count(IngestStatus.ADDED) == 7 and first.ok
    assert len(store.writes) == 7
    gen = generation(db_path)
    files = {p: p.read_bytes() for p in db_path.parent.glob("store.db*")}

    again = engine.ingest([d])
    assert again.count(IngestStatus.UNCHANGED) == 7 and again.fragments == 0
    assert len(store.writes) == 7 and generation(db_path) == gen
    assert {p: p.read_bytes() for p in db_path.parent.glob("store.db*")} == files

    (d / "sub" / "n1.md").write_text("# Note 1\n\nChanged text.\n", encoding="utf-8")
    (d / "sub" / "n3.md").unlink()
    (d / "rows.jsonl").write_text('{"id": "r1", "text": "one"}\n', encoding="utf-8")
    third = engine.ingest([d])  # no prune: the removed ones stay
    assert _by_status(third, IngestStatus.REPLACED) == ["lib/sub/n1.md"]
    assert "Changed text." in engine.store.fragments_of("lib/sub/n1.md")[0].text
    assert engine.store.get_source("lib/sub/n3.md") is not None and engine.store.get_source("r2") is not None

    fourth = engine.ingest([d], prune=True)
    assert sorted(fourth.pruned) == ["lib/sub/n3.md", "r2"] and fourth.count(IngestStatus.UNCHANGED) == 5
    assert engine.store.get_source("lib/sub/n3.md") is None and engine.store.get_source("r2") is None
    assert engine.store.fragments_of("lib/sub/n3.md") == []

    # prune only looks under the paths given: another root's sources stay
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("Another root.", encoding="utf-8")
    engine.ingest([other])
    # the same files ingested from a subfolder keep their collection and ids: nothing new, nothing pruned
    fifth = engine.ingest([d / "sub"], prune=True)
    assert fifth.count(IngestStatus.UNCHANGED) == 4 and fifth.pruned == ()
    (d / "sub" / "n5.md").write_text("# Note 5\n\nA new one.\n", encoding="utf-8")
    assert _by_status(engine.ingest([d / "sub"]), IngestStatus.ADDED) == ["sub/n5.md"]  # new: the folder's name
    # named as another collection, the same files get other ids; prune then drops the stale ones, and
    # nothing outside lib/sub
    sixth = engine.ingest([d / "sub"], prune=True, collection="notes")
    assert _by_status(sixth, IngestStatus.ADDED) == [f"notes/n{i}.md" for i in (0, 1, 2, 4, 5)]
    assert sorted(sixth.pruned) == ["lib/sub/n0.md", "lib/sub/n1.md", "lib/sub/n2.md", "lib/sub/n4.md", "sub/n5.md"]
    assert engine.store.get_source("other/x.txt") is not None and engine.store.get_source("r1") is not None


def test_kind_override_changes_hash_and_unknown_kind_is_usage_error(engine: Engine, tmp_path: Path) -> None:
    from footnote.errors import UsageError

    p = tmp_path / "a.md"
    p.write_text("Some letter text.", encoding="utf-8")
    engine.ingest([p])
    r = engine.ingest([p], kind="letter")
    sid = f"{tmp_path.name}/a.md"  # a file named alone: the collection is its folder's name
    assert _by_status(r, IngestStatus.REPLACED) == [sid]
    src = engine.store.get_source(sid)
    assert src is not None and src.kind == "letter"
    with pytest.raises(UsageError):
        engine.ingest([p], kind="recipe")


class _RecordingEmbedder:
    name = "hash"
    dim = 8

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[int] = []
        self.fail = fail

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_passages(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise ModelError("embedder is down")
        self.calls.append(len(texts))
        v = np.ones((len(texts), self.dim), dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_embeddings_batched_across_sources(hash_settings: Settings, tmp_path: Path) -> None:
    from footnote.store import open_store

    settings = hash_settings.with_overrides(**{"embedder.batch_size": 8})
    d = tmp_path / "many"
    d.mkdir()
    for i in range(30):
        (d / f"{i:02d}.txt").write_text(f"Tiny note {i}.", encoding="utf-8")
    store = open_store(settings.store.url, settings.store)
    emb = _RecordingEmbedder()
    ticks: list[tuple[int, int]] = []
    report = Ingestor(settings, store, emb).run([d], progress=lambda done, total, _label: ticks.append((done, total)))
    assert report.count(IngestStatus.ADDED) == 30
    assert ticks == [(i, 30) for i in range(1, 31)]
    assert emb.calls == [8, 8, 8, 6]  # one fragment per source, batched across sources
    assert store.stats().embedded == 30
    store.close()


def test_embedder_failure_keeps_sources_searchable_and_backlog_waiting(hash_settings: Settings, tmp_path: Path) -> None:
    from footnote.store import open_store

    d = tmp_path / "e"
    d.mkdir()
    (d / "a.txt").write_text("Alpha particles.", encoding="utf-8")
    store = open_store(hash_settings.store.url, hash_settings.store)
    report = Ingestor(hash_settings, store, _RecordingEmbedder(fail=True)).run([d])
    # the source is written and searchable on the lexical lanes; its vectors are the backlog
    assert report.count(IngestStatus.ADDED) == 1 and not report.ok
    assert report.embed is not None and "embedder is down" in (report.embed.error or "")
    assert report.embed.remaining == 1 and store.backlog().pending == 1
    assert [s.id for s in store.list_sources()] == ["e/a.txt"]  # collection "e"
    assert store.search_lexical("alpha", 5, stemmed=True)
    # the embedder is back: the same run again embeds the backlog, the source is unchanged
    again = Ingestor(hash_settings, store, _RecordingEmbedder()).run([d])
    assert again.ok and again.count(IngestStatus.UNCHANGED) == 1
    assert again.embed is not None and again.embed.embedded == 1 and store.backlog().pending == 0
    store.close()


def test_lexical_only_ingest(hash_settings: Settings, tmp_path: Path) -> None:
    settings = hash_settings.with_overrides(**{"embedder.name": "none"})
    p = tmp_path / "a.txt"
    p.write_text("Lexical only text about boats.", encoding="utf-8")
    with Engine.from_settings(settings) as eng:
        report = eng.ingest([p])
        assert report.ok and report.embedder is None
        st = eng.status()
        assert st["lexical_only"] is True and st["fragments"] == 1 and st["embedded"] == 0


def test_duplicate_ids_fail_the_second(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": "same", "text": "first"}\n', encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"id": "same", "text": "second"}\n', encoding="utf-8")
    report = engine.ingest([tmp_path])
    assert [e.status for e in report.entries] == [IngestStatus.ADDED, IngestStatus.FAILED]
    assert "duplicate source id 'same'" in (report.entries[1].error or "")
    assert engine.store.fragments_of("same")[0].text == "first"
