"""Collections: ids that never collide, an explicit error instead of a silent replacement,
idempotent re-ingest, and stores written before collections existed."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from footnote.corpus.collections import check_collection
from footnote.corpus.ingest import IngestStatus
from footnote.engine import Engine
from footnote.errors import UsageError
from footnote.settings import Settings
from footnote.store import open_store
from footnote.store.sqlite_schema import legacy_collection


def _note(d: Path, name: str, text: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(f"# {name}\n\n{text}\n", encoding="utf-8")
    return p


def test_same_file_name_in_two_folders_gives_two_sources(engine: Engine, tmp_path: Path) -> None:
    _note(tmp_path / "a", "notes.md", "Alpha keeps the lamp.")
    _note(tmp_path / "b", "notes.md", "Beta rows the boat.")
    ra = engine.ingest([tmp_path / "a"])
    rb = engine.ingest([tmp_path / "b"])
    assert ra.ok and rb.ok
    assert {s.id: s.collection for s in engine.store.list_sources()} == {"a/notes.md": "a", "b/notes.md": "b"}
    assert engine.store.search_lexical("alpha", 3, stemmed=False)  # the first is still there
    assert rb.to_dict()["collections"] == [{"path": str(tmp_path / "b"), "collection": "b"}]


def test_collision_is_an_error_not_a_replacement(engine: Engine, tmp_path: Path) -> None:
    _note(tmp_path / "a", "notes.md", "Alpha keeps the lamp.")
    _note(tmp_path / "b", "notes.md", "Beta rows the boat.")
    assert engine.ingest([tmp_path / "a"], collection="lib").ok
    r = engine.ingest([tmp_path / "b"], collection="lib")
    (entry,) = r.entries
    assert entry.status is IngestStatus.FAILED and entry.source_id == "lib/notes.md"
    assert "already taken" in (entry.error or "") and str(tmp_path / "a" / "notes.md") in (entry.error or "")
    assert "--collection" in (entry.error or "")
    (src,) = engine.store.list_sources()
    assert src.origin.endswith("/a/notes.md")
    assert engine.store.search_lexical("alpha", 3, stemmed=False) and not engine.store.search_lexical(
        "beta", 3, stemmed=False)


def test_the_same_files_through_a_symlinked_folder_are_the_same_sources(engine: Engine, tmp_path: Path) -> None:
    """``../shared`` reached from two checkouts (one a symlink): the files are the ones stored, unchanged —
    not other files claiming their ids (every source failed with 'already taken' before)."""
    _note(tmp_path / "data" / "lib", "notes.md", "Alpha keeps the lamp.")
    (tmp_path / "link").symlink_to(tmp_path / "data")
    assert engine.ingest([tmp_path / "data" / "lib"]).ok
    r = engine.ingest([tmp_path / "link" / "lib"])
    assert r.ok, r.entries
    assert [e.status for e in r.entries] == [IngestStatus.UNCHANGED]
    (src,) = engine.store.list_sources()
    assert src.id == "lib/notes.md" and src.origin.endswith("/data/lib/notes.md")


def test_explicit_ids_collide_across_files(engine: Engine, tmp_path: Path) -> None:
    d = tmp_path / "rows"
    d.mkdir()
    (d / "one.jsonl").write_text('{"id": "r1", "text": "first file"}\n', encoding="utf-8")
    (tmp_path / "two.jsonl").write_text('{"id": "r1", "text": "second file"}\n', encoding="utf-8")
    assert engine.ingest([d]).ok
    r = engine.ingest([tmp_path / "two.jsonl"])
    assert not r.ok and "already taken" in (r.entries[0].error or "")
    assert "first file" in engine.store.fragments_of("r1")[0].text


def test_moved_folder_takes_its_ids_over(engine: Engine, tmp_path: Path) -> None:
    _note(tmp_path / "old" / "lib", "notes.md", "Moved note.")
    assert engine.ingest([tmp_path / "old" / "lib"]).ok
    shutil.move(tmp_path / "old" / "lib", tmp_path / "lib")
    r = engine.ingest([tmp_path / "lib"])
    assert r.ok and r.entries[0].source_id == "lib/notes.md"
    (src,) = engine.store.list_sources()
    assert src.origin == (tmp_path / "lib" / "notes.md").as_posix()


def test_reingest_is_idempotent(engine: Engine, tmp_path: Path) -> None:
    _note(tmp_path / "lib", "a.md", "One.")
    _note(tmp_path / "lib" / "sub", "b.md", "Two.")
    first = engine.ingest([tmp_path / "lib"], collection="Library 2020")
    assert first.count(IngestStatus.ADDED) == 2
    assert {s.id for s in engine.store.list_sources()} == {"Library 2020/a.md", "Library 2020/sub/b.md"}
    again = engine.ingest([tmp_path / "lib"], collection="Library 2020")
    assert again.count(IngestStatus.UNCHANGED) == 2 and again.ok


@pytest.mark.parametrize("bad", ["", "  ", "a/b", "..", ".hidden", "x#y", "tab\there", "x" * 101])
def test_bad_collection_names(bad: str) -> None:
    with pytest.raises(UsageError):
        check_collection(bad)


def test_cli_collection_option(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from footnote.cli import main

    _note(tmp_path / "x", "n.md", "Text.")
    db = str(tmp_path / "s.db")
    res = CliRunner().invoke(main, ["ingest", str(tmp_path / "x"), "--store", db, "--collection", "mine", "--json",
                                    "--embedder", "hash"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["sources"][0]["source_id"] == "mine/n.md"
    res = CliRunner().invoke(main, ["ingest", str(tmp_path / "x"), "--store", db, "--collection", "a/b", "--embedder", "hash"])
    assert res.exit_code == 2 and "--collection" in res.output


def test_legacy_collection_rule() -> None:
    assert legacy_collection("/data/lectures/2020/talk.srt", "2020/talk.srt") == "lectures"
    assert legacy_collection("/data/corpus.jsonl", "row-1") == "data"
    assert legacy_collection("", "x") == ""


def _legacy_store(db: Path, folder: Path, settings: Settings) -> None:
    """A store as the version before collections and the cues table wrote it: ingest with today's code,
    then put the schema and rows back as they were (ids relative to the folder, cues in meta, user
    version 2)."""
    store = open_store(str(db), settings.store)
    from footnote.engine import Engine as E
    from footnote.models.embedders import make_embedder

    eng = E(settings, store, make_embedder(settings.embedder))
    assert eng.ingest([folder]).ok
    eng.close()
    prefix = folder.name + "/"
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        for (sid,) in conn.execute("SELECT id FROM sources").fetchall():
            cues = conn.execute("SELECT start_ms, end_ms, text FROM cues WHERE source_id = ? ORDER BY ordinal",
                                (sid,)).fetchall()
            meta = json.loads(conn.execute("SELECT meta FROM sources WHERE id = ?", (sid,)).fetchone()[0])
            if cues:
                meta["cues"] = json.dumps([list(c) for c in cues], ensure_ascii=False)
            new = sid[len(prefix):] if sid.startswith(prefix) else sid
            conn.execute("UPDATE sources SET id = ?, meta = ? WHERE id = ?", (new, json.dumps(meta), sid))
            conn.execute("UPDATE fragments SET source_id = ?, id = ? || '#' || ordinal, "
                         "track_id = CASE WHEN track_id IS NULL THEN NULL ELSE ? END WHERE source_id = ?",
                         (new, new, new, sid))
        conn.execute("DROP TABLE cues")
        conn.execute("DROP TABLE conversation_turns")  # later migrations' tables did not exist at version 2 either
        conn.execute("DROP TABLE conversations")
        conn.execute("DROP INDEX sources_collection")
        conn.execute("DROP INDEX sources_origin")
        conn.execute("ALTER TABLE sources DROP COLUMN collection")
        conn.execute("PRAGMA user_version=2")
        conn.commit()
    finally:
        conn.close()


def test_store_from_before_collections_migrates_and_reingests_idempotently(tmp_path: Path) -> None:
    folder = tmp_path / "harbour"
    _note(folder, "fog.md", "The horn sounds twice a minute in fog.")
    (folder / "talk.srt").write_text(
        "1\n00:00:00,000 --> 00:00:02,000\nFog rolls in.\n\n2\n00:00:02,000 --> 00:00:04,000\nThe horn sounds.\n",
        encoding="utf-8")
    (folder / "rows.jsonl").write_text('{"id": "row-1", "text": "A row."}\n', encoding="utf-8")
    settings = Settings.model_validate({"store": {"url": str(tmp_path / "s.db")}, "embedder": {"name": "hash"}})
    db = tmp_path / "s.db"
    _legacy_store(db, folder, settings)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        assert "cues" in conn.execute("SELECT meta FROM sources WHERE id = 'talk.srt'").fetchone()[0]

    from footnote.models.embedders import make_embedder

    store = open_store(str(db), settings.store)  # migrates
    eng = Engine(settings, store, make_embedder(settings.embedder))
    try:
        got = {s.id: s.collection for s in store.list_sources()}
        assert got == {"fog.md": "harbour", "talk.srt": "harbour", "row-1": "harbour"}
        track = store.get_source("talk.srt")
        assert track is not None and "cues" not in track.meta
        assert [c.text for c in store.get_cues("talk.srt")] == ["Fog rolls in.", "The horn sounds."]
        assert [c.text for c in store.get_cues("talk.srt", 2500, 3000)] == ["The horn sounds."]
        again = eng.ingest([folder])
        assert again.ok
        # the same files keep their ids: nothing added, nothing duplicated
        assert again.count(IngestStatus.ADDED) == 0
        assert {e.source_id for e in again.entries} == {"fog.md", "talk.srt", "row-1"}
        assert {s.id for s in store.list_sources()} == {"fog.md", "talk.srt", "row-1"}
        _note(folder, "new.md", "A new note.")
        newer = eng.ingest([folder])
        assert "harbour/new.md" in {e.source_id for e in newer.entries if e.status is IngestStatus.ADDED}
    finally:
        eng.close()


def test_a_stored_file_ingested_alone_keeps_its_id(engine: Engine, tmp_path: Path) -> None:
    p = _note(tmp_path / "lib" / "sub", "n.md", "First version.")
    assert engine.ingest([tmp_path / "lib"]).ok
    p.write_text("# n\n\nSecond version.\n", encoding="utf-8")
    r = engine.ingest([p])  # alone: its folder would be "sub", but the store has it under "lib"
    assert [(e.source_id, e.status) for e in r.entries] == [("lib/sub/n.md", IngestStatus.REPLACED)]
    assert [s.id for s in engine.store.list_sources()] == ["lib/sub/n.md"]
