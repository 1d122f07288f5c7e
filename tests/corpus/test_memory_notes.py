"""Curated memory note files: the loader's errors, ``footnote memory import | list | remove`` through
click's runner over a real SQLite store, idempotence, and re-embedding after a rebind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.corpus.memory import load_note, note_texts
from footnote.corpus.memory_import import MemoryImporter
from footnote.errors import InputError
from footnote.models.embedders import make_embedder
from footnote.records.memory import NoteKind
from footnote.settings import load_settings
from footnote.store import open_store

GOOD = """---
kind: pinned
triggers: ["When is the horn started?", "horn rule"]
sources: ["a.md", "HB 2.1"]
author: "Editorial board"
---
The horn is started when the beacon is lost.
"""


def _run(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def db(tmp_path: Path) -> str:
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.md").write_text("---\nkind: letter\n---\nThe horn is started when the beacon is lost.\n", encoding="utf-8")
    (d / "hb.md").write_text("---\nkind: verse\nbook: HB\ntitle: The Harbour Book\n---\n# The Harbour Book\n"
                             "## HB 2.1\nWhen the Black Skerry is hidden, the horn must speak.\n", encoding="utf-8")
    path = str(tmp_path / "s.db")
    code, _, err = _run(["ingest", str(d), "--store", path, "--embedder", "hash"])
    assert code == 0, err
    return path


def test_loader_reads_front_matter_lists_and_defaults(tmp_path: Path) -> None:
    p = tmp_path / "horn-rule.md"
    p.write_text(GOOD, encoding="utf-8")
    n = load_note(p)
    assert n.id == "horn-rule" and n.kind is NoteKind.PINNED and n.label == "horn-rule"
    assert n.triggers == ("When is the horn started?", "horn rule") and n.sources == ("a.md", "HB 2.1")
    assert n.author == "Editorial board" and n.lang == "en" and len(n.content_hash) == 64
    texts = note_texts(n, 50)
    assert texts[:2] == ["When is the horn started?", "horn rule"] and "The horn is started" in texts[2]


@pytest.mark.parametrize(("text", "problem"), [
    (GOOD.replace("kind: pinned", "kind: sticky"), "unknown kind 'sticky'"),
    (GOOD.replace('sources: ["a.md", "HB 2.1"]\n', ""), "a pinned note must name the sources"),
    (GOOD.replace("The horn is started when the beacon is lost.\n", "\n  \n"), "the note has no body"),
    (GOOD.replace('["When is the horn started?", "horn rule"]', '["unclosed'), "front matter triggers: not a valid list"),
    (GOOD.replace("author:", "colour: red\nauthor:"), "unknown front matter field(s): colour"),
    ("The horn is started.\n", "no front matter"),
    (GOOD.replace("---\nThe horn", "The horn"), "expected 'key: value'"),
])
def test_loader_errors_name_the_file_and_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    p = tmp_path / "bad.md"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_note(p)
    assert str(p) in e.value.message and problem in e.value.message


def test_import_is_idempotent_and_a_failing_note_fails_alone(tmp_path: Path, db: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "horn-rule.md").write_text(GOOD, encoding="utf-8")
    (notes / "ghost.md").write_text(GOOD.replace('"a.md"', '"letters/nowhere.md"').replace("HB 2.1", "HB 9.9"),
                                    encoding="utf-8")
    (notes / "background.md").write_text("---\nkind: memory\ntriggers: horn\n---\nFrame it kindly.\n", encoding="utf-8")
    (notes / "README.md").write_text("# not a note\n", encoding="utf-8")
    code, out, err = _run(["memory", "import", str(notes), "--store", db, "--json"])
    assert code == 1  # one note failed
    rep = json.loads(out)
    assert (rep["imported"], rep["unchanged"], rep["failed"]) == (2, 0, 1)
    failed = next(r for r in rep["notes"] if r["status"] == "failed")
    assert failed["path"] == str(notes / "ghost.md")
    assert failed["error"].startswith(f"{notes / 'ghost.md'}: source(s) not in the store: 'letters/nowhere.md', 'HB 9.9'")
    code, out, _ = _run(["memory", "import", str(notes / "horn-rule.md"), str(notes / "background.md"), "--store", db])
    assert code == 0 and "0 imported, 2 unchanged, 0 failed" in out  # unchanged content: nothing written
    (notes / "horn-rule.md").write_text(GOOD.replace("beacon is lost", "beacon is hidden"), encoding="utf-8")
    code, out, _ = _run(["memory", "import", str(notes / "horn-rule.md"), "--store", db])
    assert code == 0 and "1 imported, 0 unchanged" in out

    code, out, _ = _run(["memory", "list", "--store", db, "--json"])
    rows = json.loads(out)["notes"]
    assert [r["id"] for r in rows] == ["background", "horn-rule"]
    assert set(rows[1]) >= {"id", "kind", "triggers", "sources", "author", "updated"}
    assert rows[1]["kind"] == "pinned" and rows[1]["sources"] == ["a.md", "HB 2.1"] and rows[1]["updated"] > 0
    code, out, _ = _run(["memory", "list", "--store", db])
    assert code == 0 and "horn-rule  pinned" in out

    assert rows[1]["missing_sources"] == []
    code, _, _ = _run(["remove", "corpus/a.md", "--store", db])
    assert code == 0
    code, out, _ = _run(["memory", "list", "--store", db])
    assert "(sources no longer in the store: a.md)" in out

    code, out, _ = _run(["memory", "remove", "horn-rule", "--store", db])
    assert code == 0 and "removed horn-rule" in out
    code, _, err = _run(["memory", "remove", "horn-rule", "--store", db])
    assert code == 1 and "no memory note 'horn-rule'" in err
    code, _, err = _run(["memory", "import", str(tmp_path / "missing"), "--store", db])
    assert code == 1 and "no such file or folder" in err


def test_two_files_with_one_id_fail_the_second(tmp_path: Path, db: str) -> None:
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "a.md").write_text(GOOD.replace("kind: pinned", "kind: pinned\nid: same"), encoding="utf-8")
    (notes / "sub" / "b.md").write_text(GOOD.replace("kind: pinned", "kind: pinned\nid: same"), encoding="utf-8")
    code, out, _ = _run(["memory", "import", str(notes), "--store", db, "--json"])
    rep = json.loads(out)
    assert code == 1 and rep["imported"] == 1 and "ids must be unique" in rep["notes"][1]["error"]


def test_a_file_named_twice_is_one_note_not_a_duplicate_id(tmp_path: Path, db: str) -> None:
    """QA: `footnote memory import notes notes/rule.md` (a folder and a file in it, or one file twice)
    failed the note as "ids must be unique": the same file is read once per import."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "rule.md").write_text(GOOD, encoding="utf-8")
    code, out, err = _run(["memory", "import", str(notes), str(notes / "rule.md"), str(notes / ".." / "notes" / "rule.md"),
                           "--store", db, "--json"])
    rep = json.loads(out)
    assert code == 0, (out, err)
    assert rep["imported"] == 1 and rep["failed"] == 0 and len(rep["notes"]) == 1


def test_rebinding_drops_note_vectors_until_reembedded(tmp_path: Path, db: str) -> None:
    notes = tmp_path / "n.md"
    notes.write_text(GOOD, encoding="utf-8")
    assert _run(["memory", "import", str(notes), "--store", db])[0] == 0
    s = load_settings(None, **{"store.url": db, "embedder.name": "hash", "embedder.hash_dim": 32})
    store = open_store(db, s.store)
    try:
        emb = make_embedder(s.embedder)
        assert emb is not None
        store.rebind_embedder("hash", 32)
        assert store.memory_embedders() == {"n": None} and store.memory_vectors("hash").note_ids == ()
        assert MemoryImporter(s, store, emb).embed_stale() == 1
        got = store.memory_vectors("hash")
        assert got.vectors.shape == (len(got.texts), 32) and set(got.note_ids) == {"n"}
        assert MemoryImporter(s, store, emb).embed_stale() == 0
    finally:
        store.close()


def test_a_huge_body_and_a_symlink_out_of_the_folder_are_refused(tmp_path: Path, db: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "huge.md").write_text("---\nkind: memory\n---\n" + "word " * 10_000, encoding="utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text("---\nkind: memory\n---\nOutside the folder.\n", encoding="utf-8")
    (notes / "link.md").symlink_to(outside)
    code, out, _ = _run(["memory", "import", str(notes), "--store", db, "--json"])
    rep = json.loads(out)
    assert code == 1 and rep["imported"] == 0 and rep["failed"] == 1
    assert "the limit is 20,000 (memory.max_body_chars)" in rep["notes"][0]["error"]
    # the symlink is not followed out, and says so (QA: it was left out silently, "0 imported, 0 failed")
    assert [(r["path"], r["status"]) for r in rep["notes"]] == [(str(notes / "huge.md"), "failed"),
                                                                (str(notes / "link.md"), "refused")]
    assert "outside" in rep["notes"][1]["error"] and "not followed" in rep["notes"][1]["error"]
    assert rep["refused"] == 1
    (notes / "huge.md").unlink()
    code, out, err = _run(["memory", "import", str(notes), "--store", db])
    assert code == 0 and "0 imported, 0 unchanged, 0 failed, 1 refused" in out
    assert f"refused: {notes / 'link.md'}: symlink to {outside}" in err
