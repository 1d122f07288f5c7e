"""Audio pairing beyond equal stems: the LibriVox sonnets folder, --audio, sidecars, sync maps that
name their audio, one transcript per track, and a report of what was paired with what."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from footnote.corpus.ingest import IngestStatus
from footnote.engine import Engine
from footnote.errors import UsageError

SRT = "1\n00:00:00,000 --> 00:00:02,000\nFrom fairest creatures we desire increase.\n"


def _sonnets(shared_dir: Path, tmp_path: Path) -> Path:
    d = tmp_path / "sonnets"
    shutil.copytree(shared_dir / "data/sonnets", d)
    for p in d.iterdir():
        p.chmod(0o644)
    return d


def test_sonnets_folder_makes_one_track_and_reports_the_rest(engine: Engine, shared_dir: Path) -> None:
    report = engine.ingest([shared_dir / "data/sonnets"])
    assert report.ok
    tracks = engine.store.list_sources(kind="track_transcript")
    assert [s.id for s in tracks] == ["sonnets/sonnet001.srt"]  # not two duplicate tracks
    assert [(Path(a).name, Path(b).name) for a, b in report.superseded] == [("sonnet001.json", "sonnet001.srt")]
    assert sorted(Path(a).name for a in report.unpaired_audio) == ["p001.mp3", "p002.mp3", "p003.mp3"]
    assert report.pairings == ()


def test_audio_option_pairs_a_single_transcript(engine: Engine, shared_dir: Path) -> None:
    son = shared_dir / "data/sonnets"
    report = engine.ingest([son / "sonnet001.srt"], audio=son / "p001.mp3")
    assert report.ok
    (p,) = report.pairings
    assert (Path(p.transcript).name, Path(p.audio).name, p.how) == ("sonnet001.srt", "p001.mp3", "--audio")
    (src,) = engine.store.list_sources()
    original = engine.store.get_original(src.id)
    assert original is not None and original.media_type == "audio/mpeg"
    assert original.data == (son / "p001.mp3").read_bytes()
    assert src.meta["audio"] == "p001.mp3" and src.meta["transcript"] == "sonnet001.srt"
    cues = engine.store.get_cues(src.id)
    assert cues[1].text == "From fairest creatures we desire increase," and cues[1].start_ms == 2680


def test_audio_option_needs_exactly_one_transcript(engine: Engine, shared_dir: Path, tmp_path: Path) -> None:
    d = tmp_path / "two"
    d.mkdir()
    (d / "a.srt").write_text(SRT, encoding="utf-8")
    (d / "b.srt").write_text(SRT, encoding="utf-8")
    with pytest.raises(UsageError, match="one transcript"):
        engine.ingest([d], audio=shared_dir / "data/sonnets/p001.mp3")
    with pytest.raises(UsageError, match="no such file"):
        engine.ingest([d / "a.srt"], audio=tmp_path / "missing.mp3")
    with pytest.raises(UsageError, match="not an audio file"):
        engine.ingest([d / "a.srt"], audio=d / "b.srt")


def test_sync_map_naming_its_audio_pairs_the_track(engine: Engine, shared_dir: Path, tmp_path: Path) -> None:
    d = _sonnets(shared_dir, tmp_path)
    sync = json.loads((d / "sonnet001.json").read_text(encoding="utf-8"))
    sync["audio"] = "p001.mp3"
    (d / "sonnet001.json").write_text(json.dumps(sync), encoding="utf-8")
    report = engine.ingest([d])
    assert report.ok
    (p,) = report.pairings
    assert (Path(p.transcript).name, Path(p.audio).name, p.how) == ("sonnet001.srt", "p001.mp3",
                                                                     "named in sonnet001.json")
    assert sorted(Path(a).name for a in report.unpaired_audio) == ["p002.mp3", "p003.mp3"]
    (src,) = engine.store.list_sources(kind="track_transcript")
    assert src.media_type == "audio/mpeg" and src.original_name == "p001.mp3"


def test_sidecar_pairs_the_track(engine: Engine, shared_dir: Path, tmp_path: Path) -> None:
    d = _sonnets(shared_dir, tmp_path)
    (d / "sonnet001.audio").write_text("p002.mp3\n", encoding="utf-8")
    report = engine.ingest([d])
    (p,) = report.pairings
    assert (Path(p.audio).name, p.how) == ("p002.mp3", "sidecar sonnet001.audio")
    assert report.to_dict()["pairings"][0]["how"] == "sidecar sonnet001.audio"


def test_preference_picks_the_transcript(shared_dir: Path, tmp_path: Path, hash_settings: object) -> None:
    from footnote.settings import Settings

    assert isinstance(hash_settings, Settings)
    settings = Settings.model_validate({**hash_settings.model_dump(), "corpus": {
        **hash_settings.corpus.model_dump(), "transcript_preference": [".json", ".srt"]}})
    eng = Engine.from_settings(settings)
    try:
        report = eng.ingest([shared_dir / "data/sonnets"])
        assert [s.id for s in eng.store.list_sources(kind="track_transcript")] == ["sonnets/sonnet001.json"]
        assert [Path(a).name for a, _ in report.superseded] == ["sonnet001.srt"]
    finally:
        eng.close()


def test_named_audio_must_exist_and_stay_inside(engine: Engine, tmp_path: Path) -> None:
    d = tmp_path / "t"
    d.mkdir()
    (tmp_path / "private.mp3").write_bytes(b"ID3 private")
    (d / "a.srt").write_text(SRT, encoding="utf-8")
    (d / "a.audio").write_text("../private.mp3\n", encoding="utf-8")
    (d / "b.srt").write_text(SRT, encoding="utf-8")
    (d / "b.audio").write_text("missing.mp3\n", encoding="utf-8")
    (d / "c.json").write_text(json.dumps({"audio": "c.txt", "segments": [{"start": 0, "end": 1, "text": "x"}]}),
                              encoding="utf-8")
    (d / "c.txt").write_text("not audio", encoding="utf-8")
    os.symlink(tmp_path / "private.mp3", d / "link.mp3")
    (d / "e.srt").write_text(SRT, encoding="utf-8")
    (d / "e.audio").write_text("link.mp3\n", encoding="utf-8")
    report = engine.ingest([d])
    errors = {Path(e.path).name: e.error or "" for e in report.entries if e.status is IngestStatus.FAILED}
    assert "outside" in errors["a.srt"] and "a.audio" in errors["a.srt"]
    assert "no such file" in errors["b.srt"]
    assert "not an audio file" in errors["c.json"]
    assert "outside" in errors["e.srt"]
    # the text file c.txt is ingested on its own; no track took private audio
    for src in engine.store.list_sources():
        assert src.media_type != "audio/mpeg"
    assert any(Path(p).name == "link.mp3" for p, _ in report.refused)


def test_cli_reports_pairings(shared_dir: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from footnote.cli import main

    son = shared_dir / "data/sonnets"
    db = str(tmp_path / "s.db")
    res = CliRunner().invoke(main, ["ingest", str(son / "sonnet001.srt"), "--audio", str(son / "p001.mp3"),
                                    "--store", db, "--embedder", "hash"])
    assert res.exit_code == 0, res.output
    assert f"paired: {son / 'sonnet001.srt'} + {son / 'p001.mp3'} (--audio)" in res.output
    res = CliRunner().invoke(main, ["ingest", str(son), "--store", tmp_path / "t.db", "--embedder", "hash"])
    assert "superseded:" in res.output
    # each unpaired MP3 is reported exactly once (the per-file summary's "skipped" line)
    for mp3 in ("p002.mp3", "p003.mp3"):
        lines = [ln for ln in res.output.splitlines() if str(son / mp3) in ln]
        assert len(lines) == 1 and "audio without a transcript" in lines[0], lines
    # audio named on the command line (no folder walked, so no "skipped" line) is reported once too
    res = CliRunner().invoke(main, ["ingest", str(son / "p002.mp3"), str(son / "sonnet001.srt"), "--store",
                                    tmp_path / "u.db", "--embedder", "hash"])
    lines = [ln for ln in res.output.splitlines() if str(son / "p002.mp3") in ln]
    assert len(lines) == 1 and "needs a transcript" in lines[0], res.output
