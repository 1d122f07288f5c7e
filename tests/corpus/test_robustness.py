"""Ingest under attack: symlinks out of the folder, a huge word, absurd cue times, UTF-16/32 text,
languages beyond Russian and English."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from footnote.corpus.chunkers import _split_long, pack_text, split_sentences
from footnote.corpus.ingest import IngestStatus
from footnote.corpus.loaders import iter_files, load_path
from footnote.engine import Engine
from footnote.errors import InputError
from footnote.records.lang import detect_text_lang, lang_guess
from footnote.settings import Settings
from footnote.store.text import SNOWBALL, Analyzer

# --- symlinks ------------------------------------------------------------------------------------


def _folder_with_links(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "lib"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "real.md").write_text("# Real\n\nThe harbour note that belongs here.\n", encoding="utf-8")
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("# Secret\n\nTOP SECRET keeper salary list.\n", encoding="utf-8")
    os.symlink(secret, root / "leak.md")  # a file link out of the folder
    os.symlink("/etc/passwd", root / "passwd.txt")  # the attack that was reported
    os.symlink(secret.parent, root / "outdir")  # a folder link out of the folder
    os.symlink(root / "sub" / "real.md", root / "alias.md")  # a link that stays inside
    return root, secret


def test_symlinks_out_of_the_folder_are_refused_and_reported(engine: Engine, tmp_path: Path) -> None:
    root, _ = _folder_with_links(tmp_path)
    report = engine.ingest([root])
    refused = {Path(p).name: why for p, why in report.refused}
    assert set(refused) == {"leak.md", "passwd.txt", "outdir"}
    assert "outside" in refused["passwd.txt"] and "/etc/passwd" in refused["passwd.txt"]
    assert "folder" in refused["outdir"]
    assert report.summary()["refused"] == 3
    stored = {s.id for s in engine.store.list_sources()}
    # the inside link resolves to a file already listed: one source; nothing from outside
    assert stored == {"lib/alias.md"} or stored == {"lib/sub/real.md"}
    for src in engine.store.list_sources():
        for f in engine.store.fragments_of(src.id):
            assert "SECRET" not in f.text and "root:" not in f.text
    assert not engine.store.search_lexical("salary", 5, stemmed=False)
    assert not engine.store.search_lexical("root", 5, stemmed=False)


def test_a_broken_symlink_is_reported_not_skipped_without_a_word(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "lib"
    root.mkdir()
    (root / "real.md").write_text("# Real\n\nThe harbour note that belongs here.\n", encoding="utf-8")
    os.symlink("moved-away.md", root / "chapter.md")  # the target was renamed or deleted
    report = engine.ingest([root])
    refused = {Path(p).name: why for p, why in report.refused}
    assert set(refused) == {"chapter.md"}
    assert "broken symlink" in refused["chapter.md"] and "moved-away.md" in refused["chapter.md"]
    assert {s.id for s in engine.store.list_sources()} == {"lib/real.md"}


def test_named_symlink_is_followed_because_it_was_chosen(engine: Engine, tmp_path: Path) -> None:
    root, _ = _folder_with_links(tmp_path)
    report = engine.ingest([root / "leak.md"])
    assert report.ok and report.refused == ()
    assert engine.store.search_lexical("salary", 5, stemmed=False)


def test_audio_companion_linked_out_of_the_folder_is_refused(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "tracks"
    root.mkdir()
    (root / "talk.srt").write_text("1\n00:00:00,000 --> 00:00:02,000\nA cue about fog.\n", encoding="utf-8")
    private = tmp_path / "private.mp3"
    private.write_bytes(b"ID3 private recording")
    os.symlink(private, root / "talk.mp3")
    report = engine.ingest([root])
    (entry,) = report.entries
    assert entry.status is IngestStatus.FAILED and "talk.mp3" in (entry.error or "")
    assert "not followed" in (entry.error or "")
    assert engine.store.list_sources() == []


def test_unreadable_folder_is_reported_not_passed_over(tmp_path: Path) -> None:
    """A subfolder the user cannot list was skipped without a word (pathlib's rglob ignores the error).
    As root, permissions are lifted only by dropping the capabilities: ingest runs under setpriv then."""
    root = tmp_path / "lib"
    (root / "locked").mkdir(parents=True)
    (root / "ok.md").write_text("# Ok\n\nThe lamp burns whale oil.\n", encoding="utf-8")
    (root / "locked" / "in.md").write_text("# In\n\nA note nobody may read.\n", encoding="utf-8")
    (root / "locked").chmod(0)
    cmd = [sys.executable, "-m", "footnote.cli", "ingest", str(root), "--embedder", "hash",
           "--store", str(tmp_path / "s.db"), "--json"]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            (root / "locked").chmod(0o755)
            pytest.skip("running as root without setpriv: cannot make a folder unreadable")
        drop = "-dac_override,-dac_read_search"
        cmd = [setpriv, f"--inh-caps={drop}", f"--bounding-set={drop}", *cmd]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        (root / "locked").chmod(0o755)
    doc = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    assert doc["summary"]["added"] == 1
    refused = {Path(e["path"]).name: e["reason"] for e in doc["refused"]}
    assert "cannot be read" in refused.get("locked", ""), (doc["refused"], r.stderr)


def test_iter_files_reports_refusals(tmp_path: Path) -> None:
    root, _ = _folder_with_links(tmp_path)
    refused: list[tuple[Path, str]] = []
    files = [f.name for f, _ in iter_files([root], refused=refused)]
    assert "leak.md" not in files and "passwd.txt" not in files and "secret.md" not in files
    assert sorted(p.name for p, _ in refused) == ["leak.md", "outdir", "passwd.txt"]


# --- a huge word -----------------------------------------------------------------------------------


def test_split_long_cuts_a_huge_word_exactly() -> None:
    word = "".join(chr(0x61 + i % 26) for i in range(3_000_017))
    pieces = _split_long(f"start {word} end", 1000)
    assert pieces[0] == "start" and pieces[-1].endswith("end")
    assert all(len(p) <= 1000 for p in pieces)
    assert "".join(pieces[1:-1]) + pieces[-1].split(" ")[0] == word
    assert _split_long("aa bb cccccccc d e", 3) == ["aa", "bb", "ccc", "ccc", "cc", "d e"]
    assert _split_long("abcdef", 3) == ["abc", "def"]


def test_pack_text_of_a_huge_word_loses_nothing() -> None:
    cfg = Settings().chunk
    word = "x" * 2_000_000
    chunks = pack_text(word, cfg)
    assert "".join(chunks) == word and max(map(len, chunks)) <= max(cfg.text_max_chars, cfg.text_target_chars)


@pytest.mark.parametrize(("text", "parts"), [
    ("One. Two! Three? Four… Five", ["One.", "Two!", "Three?", "Four…", "Five"]),
    ("He said \"stop.\" Then left.", ["He said \"stop.\"", "Then left."]),
    ("a.b c. d", ["a.b c. d"]),  # a lower-case word does not start a sentence
    ("\n- item\n- item two", ["", "- item", "- item two"]),
    ("no end", ["no end"]),
    ("Dr. Hale met the U.S.\nBoard. Then left.", ["Dr. Hale met the U.S.\nBoard.", "Then left."]),
    ("धर्मक्षेत्रे। कुरुक्षेत्रे॥ End", ["धर्मक्षेत्रे।", "कुरुक्षेत्रे॥", "End"]),
])
def test_chunker_sentences_follow_the_one_sentence_rule(text: str, parts: list[str]) -> None:
    assert split_sentences(text) == parts


def test_huge_word_file_ingests(engine: Engine, tmp_path: Path) -> None:
    p = tmp_path / "w" / "word.txt"
    p.parent.mkdir()
    p.write_text("z" * 1_000_000, encoding="utf-8")
    report = engine.ingest([p])
    assert report.ok and report.fragments >= 1_000_000 // Settings().chunk.text_max_chars


# --- absurd cue times ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "body", "line"), [
    ("hour.srt", "1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n99999999999999999999:00:00,000 --> "
                 "99999999999999999999:00:01,000\nbad\n", 6),
    ("digits.srt", "1\n" + "9" * 5000 + ":00:00,000 --> " + "9" * 5000 + ":00:01,000\nbad\n", 2),
    ("hour.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nok\n\n123456789012:00:00.000 --> 123456789012:00:01.000\nx\n", 6),
])
def test_out_of_range_cue_time_names_file_and_line(tmp_path: Path, name: str, body: str, line: int) -> None:
    p = tmp_path / name
    p.write_text(body, encoding="utf-8")
    with pytest.raises(InputError) as ei:
        list(load_path(p, settings=Settings()))
    assert ei.value.line == line and "out of range" in ei.value.message
    assert str(ei.value).startswith(f"{p}:{line}: ")


@pytest.mark.parametrize("value", ["1e999999999", 1e300, "4e12"])
def test_json_segment_time_out_of_range(tmp_path: Path, value: object) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"unit": "s", "segments": [{"start": 0, "end": 1, "text": "ok"},
                                                       {"start": 2, "end": value, "text": "x"}]}), encoding="utf-8")
    with pytest.raises(InputError) as ei:
        list(load_path(p, settings=Settings()))
    assert "segment 2" in ei.value.message and "out of range" in ei.value.message


def test_cue_limit_is_a_setting(tmp_path: Path) -> None:
    p = tmp_path / "long.srt"
    p.write_text("1\n02:00:00,000 --> 02:00:01,000\nlate\n", encoding="utf-8")
    assert list(load_path(p, settings=Settings()))
    with pytest.raises(InputError):
        list(load_path(p, settings=Settings.model_validate({"corpus": {"max_cue_ms": 3_600_000}})))


# --- encodings ---------------------------------------------------------------------------------------

TEXT = "# Маяк\n\nСмотритель зажигает лампу в сумерках.\r\nThe keeper lights the lamp at dusk.\n"


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16", "utf-16-be-bom", "utf-32"])
def test_bom_text_is_decoded(tmp_path: Path, codec: str) -> None:
    data = ("\ufeff" + TEXT).encode("utf-16-be") if codec == "utf-16-be-bom" else TEXT.encode(codec)
    p = tmp_path / "note.md"
    p.write_bytes(data)
    (doc,) = load_path(p, settings=Settings())
    assert doc.source.title == "Маяк"
    assert "Смотритель зажигает лампу" in doc.blocks[0].text and "\r" not in doc.blocks[0].text
    assert doc.original == data  # the original is kept as uploaded


def test_utf16_without_bom_is_named(tmp_path: Path) -> None:
    p = tmp_path / "note.txt"
    p.write_bytes("Plain English text, no byte-order mark.\n".encode("utf-16-le"))
    with pytest.raises(InputError) as ei:
        list(load_path(p, settings=Settings()))
    assert "UTF-16LE" in ei.value.message and "convert" in ei.value.message


def test_bad_utf16_after_bom_is_an_encoding_error(tmp_path: Path) -> None:
    p = tmp_path / "bad.srt"
    p.write_bytes(b"\xff\xfe" + "1\n00:00:00,000 --> 00:00:01,000\nhi\n".encode("utf-16-le") + b"\x00\xd8")
    with pytest.raises(InputError) as ei:
        list(load_path(p, settings=Settings()))
    assert "byte-order mark" in ei.value.message and "UTF-16" in ei.value.message


def test_utf16_transcript_ingests(engine: Engine, tmp_path: Path) -> None:
    d = tmp_path / "t"
    d.mkdir()
    (d / "talk.srt").write_bytes("1\n00:00:00,000 --> 00:00:02,000\nFog over the skerry.\n".encode("utf-16"))
    report = engine.ingest([d])
    assert report.ok and engine.store.get_cues("t/talk.srt")[0].text == "Fog over the skerry."


# --- languages -----------------------------------------------------------------------------------------

GERMAN = ("Ein topologischer Raum heißt kompakt, wenn jede offene Überdeckung eine endliche Teilüberdeckung "
          "besitzt. Die Räume, die wir betrachten, sind Hausdorffsch.")
FRENCH = "Un espace topologique est dit compact si tout recouvrement ouvert admet un sous-recouvrement fini."


def test_detector_knows_more_than_russian_and_english() -> None:
    assert detect_text_lang(GERMAN) == "de"
    assert detect_text_lang(FRENCH) == "fr"
    assert detect_text_lang("The keeper lights the lamp at dusk and trims the wick at dawn.") == "en"
    assert detect_text_lang("Смотритель зажигает лампу в сумерках и поправляет фитиль на рассвете.") == "ru"


def test_unsure_guess_falls_back_to_the_script_rule() -> None:
    iast = "karmaṇy evādhikāras te mā phaleṣu kadācana mā karma-phala-hetur bhūr mā te saṅgo 'stv akarmaṇi"
    assert lang_guess(iast)[1] < Settings().corpus.lang_detect_min_confidence
    assert detect_text_lang(iast, "en") == "en"
    assert detect_text_lang("12345 67 89", "en") == "en"


def test_detector_candidates_restrict_the_choice() -> None:
    assert detect_text_lang(GERMAN, candidates=("en", "ru")) == "en"  # German is not among them


def test_german_markdown_is_stemmed_in_german(engine: Engine, tmp_path: Path) -> None:
    d = tmp_path / "de"
    d.mkdir()
    (d / "kompakt.md").write_text(f"# Kompaktheit\n\n{GERMAN}\n", encoding="utf-8")
    engine.ingest([d])
    (src,) = engine.store.list_sources()
    assert src.lang == "de"
    # German Snowball folds "Räume" and "Raum" together; English would not
    assert Analyzer().stem(["raume"], "de") == Analyzer().stem(["raum"], "de")
    assert engine.store.search_lexical("Raum", 5, stemmed=True, lang="de")
    # --lang still overrides detection
    engine.ingest([d], lang="en")
    assert engine.store.list_sources()[0].lang == "en"


def test_every_snowball_language_has_a_pystemmer_algorithm() -> None:
    import Stemmer

    assert set(SNOWBALL.values()) <= set(Stemmer.algorithms())
    assert {"de", "fr", "es", "it", "ru", "en"} <= set(SNOWBALL)


def test_german_pdf_detected_as_german(engine: Engine, shared_dir: Path, tmp_path: Path) -> None:
    d = tmp_path / "pdf"
    d.mkdir()
    shutil.copy(shared_dir / "data/pdf/GeoTopo-komprimiert.pdf", d / "GeoTopo.pdf")
    report = engine.ingest([d])
    assert report.ok
    (src,) = engine.store.list_sources()
    assert src.lang == "de"
    frags = engine.store.fragments_of(src.id)
    assert {f.lang for f in frags} == {"de"}
    assert engine.store.search_lexical("kompakte Räume", 5, stemmed=True, lang="de")


def test_upgrade_rewrites_only_sources_whose_language_changed(engine: Engine, tmp_path: Path) -> None:
    """Sources the old script rule already got right keep their content hash (no re-embedding of a
    whole store after the upgrade); a source now detected as German is rewritten."""
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "en.md").write_text("# Lamp\n\nThe keeper lights the lamp at dusk and trims the wick at dawn.\n",
                             encoding="utf-8")
    (d / "de.md").write_text(f"# Kompakt\n\n{GERMAN}\n", encoding="utf-8")
    engine.ingest([d])
    settings = engine.settings
    (en,) = load_path(d / "en.md", settings=settings, root=d)
    (de,) = load_path(d / "de.md", settings=settings, root=d)
    assert engine.store.source_hash("mixed/en.md") == en.source.content_hash
    assert engine.store.source_hash("mixed/de.md") not in (None, de.source.content_hash)
