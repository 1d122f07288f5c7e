"""Curating a store from the command line: ``footnote remove ID|PATH…``, ``footnote sources`` pages
and filters, ``ingest --prune`` with a file path."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from footnote.cli import main
from footnote.store import open_store


def _run(*args: str | Path) -> Result:
    extra = [] if "--embedder" in args else ["--embedder", "hash"]
    return CliRunner().invoke(main, [str(a) for a in args] + extra)


def _library(tmp_path: Path) -> tuple[Path, str]:
    d = tmp_path / "lib"
    (d / "letters").mkdir(parents=True)
    (d / "notes.md").write_text("# Notes\n\nThe lamp is trimmed at dawn.\n", encoding="utf-8")
    (d / "ru.md").write_text("# Заметки\n\nЛампу чистят на рассвете каждый день.\n", encoding="utf-8")
    for i in range(3):
        (d / "letters" / f"l{i}.md").write_text(f"---\nkind: letter\n---\nLetter {i} about the harbour.\n",
                                                encoding="utf-8")
    (d / "talk.srt").write_text("1\n00:00:00,000 --> 00:00:02,000\nFog rolls in.\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    res = _run("ingest", d, "--store", db, "--embedder", "hash")
    assert res.exit_code == 0, res.output
    return d, db


def test_sources_pages_and_filters(tmp_path: Path) -> None:
    _, db = _library(tmp_path)
    every = json.loads(_run("sources", "--store", db, "--json").output)
    assert every["total"] == 6 and len(every["sources"]) == 6
    ids = [r["id"] for r in every["sources"]]
    assert ids == sorted(ids)
    page = json.loads(_run("sources", "--store", db, "--json", "--limit", "2", "--offset", "2").output)
    assert [r["id"] for r in page["sources"]] == ids[2:4] and page["total"] == 6
    letters = json.loads(_run("sources", "--store", db, "--json", "--kind", "letter").output)
    assert letters["total"] == 3 and {r["kind"] for r in letters["sources"]} == {"letter"}
    ru = json.loads(_run("sources", "--store", db, "--json", "--lang", "ru").output)
    assert [r["id"] for r in ru["sources"]] == ["lib/ru.md"]
    assert json.loads(_run("sources", "--store", db, "--json", "--collection", "nope").output)["total"] == 0
    text = _run("sources", "--store", db, "--limit", "2").output
    assert "1–2 of 6 sources" in text and "next page: --offset 2 --limit 2" in text
    colls = json.loads(_run("sources", "--store", db, "--json", "--collections").output)
    assert colls == {"collections": [{"name": "lib", "sources": 6}]}


def test_remove_by_id_file_and_folder(tmp_path: Path) -> None:
    d, db = _library(tmp_path)
    res = _run("remove", "lib/notes.md", "--store", db, "--dry-run")
    assert res.exit_code == 0 and "would remove: lib/notes.md" in res.output
    res = _run("remove", "lib/notes.md", d / "talk.srt", d / "letters", "--store", db, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["removed"] == ["lib/notes.md", "lib/talk.srt", "lib/letters/l0.md", "lib/letters/l1.md",
                              "lib/letters/l2.md"]
    store = open_store(db)  # reading needs no embedder
    try:
        assert [s.id for s in store.list_sources()] == ["lib/ru.md"]
        assert store.get_cues("lib/talk.srt") == [] and store.fragments_of("lib/notes.md") == []
        assert store.stats().fragments == len(store.fragments_of("lib/ru.md"))
        assert store.stats().embedded == store.stats().fragments
    finally:
        store.close()
    res = _run("remove", "lib/nothing.md", tmp_path / "elsewhere", "--store", db)
    assert res.exit_code == 1 and "no stored source matches 'lib/nothing.md'" in res.output
    assert _run("remove", "--store", db).exit_code == 2


def test_remove_a_collection_and_a_gone_folder(tmp_path: Path) -> None:
    import shutil

    d, db = _library(tmp_path)
    shutil.rmtree(d / "letters")  # removing what a deleted folder left behind
    res = _run("remove", d / "letters", "--store", db, "--json")
    assert res.exit_code == 0 and len(json.loads(res.output)["removed"]) == 3
    res = _run("remove", "--collection", "lib", "--store", db, "--json")
    assert res.exit_code == 0 and len(json.loads(res.output)["removed"]) == 3
    assert json.loads(_run("sources", "--store", db, "--json").output)["total"] == 0


def test_prune_with_a_file_path(tmp_path: Path) -> None:
    d, db = _library(tmp_path)
    (d / "notes.md").unlink()
    res = _run("ingest", d / "notes.md", "--prune", "--store", db, "--embedder", "hash", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["pruned"] == ["lib/notes.md"]
    # a file that still exists is kept; the other files under the folder are not touched
    res = _run("ingest", d / "ru.md", "--prune", "--store", db, "--embedder", "hash", "--json")
    assert res.exit_code == 0 and json.loads(res.output)["pruned"] == []
    assert json.loads(_run("sources", "--store", db, "--json").output)["total"] == 5
