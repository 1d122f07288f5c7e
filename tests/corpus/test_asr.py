"""Recordings without a transcript: recognition windows, resume after an interrupt, machine cues, the
ingest of bare audio (a real clip through the real Whisper model), bad audio failing alone, a corrected
transcript replacing the machine one, citations that say "machine", transcript export."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from asr_support import ScriptedRecognizer, asr_settings, clip, real_transcriber, write_wav
from click.testing import CliRunner

from footnote.answer.citations import citation_label
from footnote.cli import main
from footnote.corpus.asr import AudioTranscriber, TranscriptCache, machine_cues
from footnote.corpus.ingest import Ingestor, IngestStatus
from footnote.corpus.loaders.transcripts import parse_vtt
from footnote.engine import Engine
from footnote.models.embedders import make_embedder
from footnote.models.whisper import SAMPLE_RATE, Segment, Word
from footnote.records.fragments import TranscriptLocator
from footnote.settings import Settings
from footnote.store import open_store


def _noise(seconds: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(seconds * SAMPLE_RATE)) * 0.05).astype(np.float32)


def _scripted(settings: Settings, rec: ScriptedRecognizer) -> AudioTranscriber:
    return AudioTranscriber(settings.asr, rec, TranscriptCache(settings.asr.cache_path))


def _engine(settings: Settings) -> Engine:
    return Engine(settings, open_store(settings.store.url, settings.store), make_embedder(settings.embedder))


def test_machine_cues_end_at_punctuation_a_pause_or_the_length_limit() -> None:
    w = [Word(0, 400, " From"), Word(450, 900, " fairest"), Word(950, 1500, " creatures,"),
         Word(1600, 2000, " that"), Word(2900, 3300, " thereby"),  # a 0.9 s pause before "thereby"
         *[Word(3400 + 500 * i, 3800 + 500 * i, f" w{i}") for i in range(20)]]
    cues = machine_cues([Segment(0, 13_300, "…", tuple(w))], cue_max_ms=4_000, cue_gap_ms=400)
    assert [c.text for c in cues[:3]] == ["From fairest creatures,", "that", "thereby w0 w1 w2 w3 w4 w5 w6"]
    assert (cues[0].start_ms, cues[0].end_ms) == (0, 1500)  # the words' own times, never interpolated
    assert all(c.end_ms - c.start_ms <= 4_000 for c in cues)
    assert all(a.end_ms <= b.start_ms for a, b in itertools.pairwise(cues))
    assert " ".join(c.text for c in cues).split()[-1] == "w19"  # no word lost


def test_windows_resume_after_an_interrupt_where_the_last_whole_window_ended(tmp_path: Path) -> None:
    s = asr_settings(tmp_path, **{"asr.window_s": 60})
    wav = write_wav(tmp_path / "talk.wav", _noise(150))
    data = wav.read_bytes()
    whole = AudioTranscriber(s.asr, ScriptedRecognizer(), TranscriptCache(tmp_path / "other-cache"))
    expected = whole.transcribe(wav, data, language=None)
    assert expected.duration_s == pytest.approx(150, abs=0.1)
    assert expected.segments[-1].end_ms <= 150_000
    starts = [x.start_ms for x in expected.segments]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)

    def stop_on_second(call: int) -> None:
        if call == 2:
            raise KeyboardInterrupt

    first = ScriptedRecognizer(stop_on_second)
    with pytest.raises(KeyboardInterrupt):
        _scripted(s, first).transcribe(wav, data, language=None)
    tr = _scripted(s, ScriptedRecognizer())
    part = tr.cache.part_path(tr.key(data, None))
    assert part.is_file() and not tr.cache.done_path(tr.key(data, None)).exists()
    with part.open("a", encoding="utf-8") as f:  # a kill -9 in the middle of a write
        f.write('{"start_ms": 99999, "end_')
    again = ScriptedRecognizer()
    got = _scripted(s, again).transcribe(wav, data, language=None)
    assert got.resumed_from_s == pytest.approx(49.0)  # the first window kept its segments up to 49 s
    assert sum(again.calls) < int(150 * SAMPLE_RATE)  # it did not start over
    assert got.segments == expected.segments  # the same transcript as a run never interrupted
    assert not part.exists()
    cached = ScriptedRecognizer()
    assert _scripted(s, cached).transcribe(wav, data, language=None).segments == expected.segments
    assert cached.calls == []  # finished: from the cache, the model is not asked


def test_bare_audio_is_transcribed_with_the_real_model(tmp_path: Path, shared_dir: Path) -> None:
    """A 7-second clip cut from the LibriVox recording, through the real whisper-base model."""
    s = asr_settings(tmp_path)
    tr = real_transcriber(s)
    d = tmp_path / "lectures"
    d.mkdir()
    write_wav(d / "clip.wav", clip(shared_dir / "data/sonnets/p001.mp3", 2.3, 9.3))
    write_wav(d / "quiet.wav", np.zeros(3 * SAMPLE_RATE, dtype=np.float32))
    (d / "notes.md").write_text("# Notes\n\nThe lighthouse keeper's log.\n", encoding="utf-8")
    eng = _engine(s)
    try:
        plain = Ingestor(s, eng.store, eng.embedder, transcriber=tr).run([d])  # asr.enabled is off
        assert [e.source_id for e in plain.entries] == ["lectures/notes.md"]
        assert sorted(plain.unpaired_audio) == [str(d / "clip.wav"), str(d / "quiet.wav")]
        assert all("--transcribe" in n.reason for n in plain.skipped)
        seen: list[float] = []
        report = Ingestor(s, eng.store, eng.embedder, transcriber=tr).run(
            [d], transcribe=True, events=lambda p: p.audio and seen.append(p.audio.done_s))
        by = {e.path: e for e in report.entries}
        assert by[str(d / "clip.wav")].status is IngestStatus.ADDED
        assert by[str(d / "quiet.wav")].status is IngestStatus.FAILED  # silence fails alone
        assert "no speech recognised" in (by[str(d / "quiet.wav")].error or "")
        assert [t.source_id for t in report.transcribed] == ["lectures/clip.wav"]
        assert seen and seen[-1] == pytest.approx(10.0, abs=0.2)  # 7 s + 3 s of audio over the run
        src = eng.store.get_source("lectures/clip.wav")
        assert src is not None and src.meta["transcript_by"] == "machine" and src.lang == "en"
        assert float(src.meta["asr_language_probability"]) > 0.5
        original = eng.store.get_original("lectures/clip.wav")
        assert original is not None and original.media_type == "audio/wav"  # the chip plays the recording
        cues = eng.store.get_cues("lectures/clip.wav")
        text = " ".join(c.text for c in cues).lower()
        assert "fairest creatures" in text and "never die" in text
        first = next(c for c in cues if "fairest" in c.text.lower())
        assert 0 <= first.start_ms <= 800  # "From" is spoken ~0.2 s into the clip
        (frag,) = eng.store.fragments_of("lectures/clip.wav")
        assert isinstance(frag.locator, TranscriptLocator) and frag.locator.start_ms == cues[0].start_ms
        hits = eng.store.search_lexical("fairest creatures", 3, stemmed=True)
        assert hits and hits[0].fragment_id == "lectures/clip.wav#0"
        again = Ingestor(s, eng.store, eng.embedder, transcriber=tr).run([d], transcribe=True)
        assert {e.path: e.status for e in again.entries}[str(d / "clip.wav")] is IngestStatus.UNCHANGED
    finally:
        eng.close()


def test_bad_audio_fails_alone_and_the_rest_ingests(tmp_path: Path, shared_dir: Path) -> None:
    s = asr_settings(tmp_path, **{"asr.max_audio_s": 100})
    d = tmp_path / "box"
    d.mkdir()
    write_wav(d / "good.wav", _noise(20))
    (d / "fake.mp3").write_bytes(b"this is not audio at all\n" * 50)
    (d / "empty.ogg").write_bytes(b"")
    write_wav(d / "long.wav", _noise(101))
    mp3 = (shared_dir / "data/sonnets/p001.mp3").read_bytes()
    (d / "cut.mp3").write_bytes(mp3[: len(mp3) // 5])  # truncated: what is there is transcribed
    (d / "notes.md").write_text("# Notes\n\nstill here\n", encoding="utf-8")
    eng = _engine(s)
    try:
        report = Ingestor(s, eng.store, eng.embedder, transcriber=_scripted(s, ScriptedRecognizer())).run(
            [d], transcribe=True)
        by = {Path(e.path).name: e for e in report.entries}
        assert by["good.wav"].status is IngestStatus.ADDED and by["notes.md"].status is IngestStatus.ADDED
        assert by["cut.mp3"].status is IngestStatus.ADDED
        heard = {Path(t.path).name: t.duration_s for t in report.transcribed}
        assert heard["cut.mp3"] < 53 / 5 + 2  # what the truncated file holds, not the 53 s its header announces
        assert heard["good.wav"] == pytest.approx(20, abs=0.01)
        assert by["fake.mp3"].status is IngestStatus.FAILED and "fake.mp3" in (by["fake.mp3"].error or "")
        assert "audio" in (by["fake.mp3"].error or "")
        assert by["empty.ogg"].status is IngestStatus.FAILED and "empty audio file" in (by["empty.ogg"].error or "")
        assert by["long.wav"].status is IngestStatus.FAILED and "the limit is" in (by["long.wav"].error or "")
        ids = {x.id for x in eng.store.list_sources()}
        assert ids == {"box/good.wav", "box/cut.mp3", "box/notes.md"}
    finally:
        eng.close()


def test_a_corrected_transcript_replaces_the_machine_one(tmp_path: Path) -> None:
    s = asr_settings(tmp_path)
    d = tmp_path / "talks"
    d.mkdir()
    write_wav(d / "talk.wav", _noise(30))
    eng = _engine(s)
    try:
        tr = _scripted(s, ScriptedRecognizer())
        first = Ingestor(s, eng.store, eng.embedder, transcriber=tr).run([d], transcribe=True)
        assert first.ok and eng.store.get_source("talks/talk.wav").meta["transcript_by"] == "machine"  # type: ignore[union-attr]
        assert eng.store.search_lexical("word1", 3, stemmed=False)
        result = eng.ask("word0 again")
        assert result.citations and result.citations[0].to_dict()["transcript"] == "machine"
        assert citation_label(result.citations[0]).endswith("(machine transcript)")
        out = CliRunner().invoke(main, ["transcript", "export", "talks/talk.wav", "--beside", "--format", "vtt",
                                        "--store", s.store.url, "--embedder", "hash"])
        assert out.exit_code == 0, out.output
        exported = parse_vtt(d / "talk.vtt", (d / "talk.vtt").read_text(encoding="utf-8"))
        assert exported == eng.store.get_cues("talks/talk.wav")  # the same cues, exact times
        (d / "talk.vtt").write_text("WEBVTT\n\n00:00.500 --> 00:04.000\nA corrected lighthouse sentence.\n\n"
                                    "00:10.000 --> 00:14.000\nThe keeper lit the lamp.\n", encoding="utf-8")
        second = Ingestor(s, eng.store, eng.embedder, transcriber=tr).run([d], transcribe=True)
        assert [(e.source_id, e.status) for e in second.entries] == [("talks/talk.wav", IngestStatus.REPLACED)]
        src = eng.store.get_source("talks/talk.wav")
        assert src is not None and "transcript_by" not in src.meta and src.origin.endswith("talk.vtt")
        assert [x.id for x in eng.store.list_sources()] == ["talks/talk.wav"]  # same id, one source
        assert not eng.store.search_lexical("word1", 3, stemmed=False)  # the machine text is gone
        assert eng.store.search_lexical("lighthouse", 3, stemmed=False)
        assert eng.store.stats().embedded == eng.store.stats().fragments  # re-embedded, old vectors gone
        assert eng.ask("the keeper lit the lamp").citations[0].to_dict()["transcript"] is None
        third = Ingestor(s, eng.store, eng.embedder, transcriber=tr).run([d], transcribe=True)
        assert [e.status for e in third.entries] == [IngestStatus.UNCHANGED]
    finally:
        eng.close()


def test_ingest_cli_says_what_was_transcribed_and_forces_the_language(tmp_path: Path, shared_dir: Path) -> None:
    s = asr_settings(tmp_path)
    real_transcriber(s)  # skips with the reason when the model is not installed
    d = tmp_path / "rec"
    d.mkdir()
    write_wav(d / "line.wav", clip(shared_dir / "data/sonnets/p001.mp3", 2.3, 6.0))
    env = {"FOOTNOTE_MODELS_DIR": str(s.models.dir_path), "FOOTNOTE_CONFIG": str(tmp_path / "none.toml")}
    args = ["ingest", str(d), "--transcribe", "--lang", "en", "--store", s.store.url, "--embedder", "hash",
            "--json"]
    cfg = tmp_path / "asr.toml"
    cfg.write_text(f'[asr]\ncache_dir = "{tmp_path / "c"}"\nnice = 0\n', encoding="utf-8")
    out = CliRunner().invoke(main, [*args, "--config", str(cfg)], env=env)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    (t,) = data["transcribed"]
    assert t["source_id"] == "rec/line.wav" and t["language"] == "en" and t["language_probability"] is None
    assert data["summary"]["transcribed"] == 1
    text = CliRunner().invoke(main, [*args[:-1], "--config", str(cfg)], env=env)
    assert text.exit_code == 0, text.output
    assert f"unchanged {d / 'line.wav'}" in text.stdout and "1 unchanged" in text.stdout  # not recognised again


def test_an_interrupted_ingest_keeps_finished_recordings_and_continues_the_half_done_one(tmp_path: Path) -> None:
    s = asr_settings(tmp_path, **{"asr.window_s": 60})
    d = tmp_path / "archive"
    d.mkdir()
    write_wav(d / "a.wav", _noise(70, seed=1))
    write_wav(d / "b.wav", _noise(150, seed=2))

    def stop_in_b(call: int) -> None:
        if call == 4:  # a: 2 windows; b: its first window done, Ctrl-C in its second
            raise KeyboardInterrupt

    eng = _engine(s)
    try:
        first = Ingestor(s, eng.store, eng.embedder, transcriber=_scripted(s, ScriptedRecognizer(stop_in_b))).run(
            [d], transcribe=True)
        assert first.interrupted
        assert [x.id for x in eng.store.list_sources()] == ["archive/a.wav"]  # finished: kept, searchable
        rec = ScriptedRecognizer()
        second = Ingestor(s, eng.store, eng.embedder, transcriber=_scripted(s, rec)).run([d], transcribe=True)
        statuses = {Path(e.path).name: e.status for e in second.entries}
        assert statuses == {"a.wav": IngestStatus.UNCHANGED, "b.wav": IngestStatus.ADDED}
        assert sum(rec.calls) < 150 * SAMPLE_RATE  # b went on from its first window; a was not heard again
        shutil.rmtree(s.asr.cache_path)  # the cache gone (another machine): the store still knows
        third_rec = ScriptedRecognizer()
        third = Ingestor(s, eng.store, eng.embedder, transcriber=_scripted(s, third_rec)).run([d], transcribe=True)
        assert [e.status for e in third.entries] == [IngestStatus.UNCHANGED, IngestStatus.UNCHANGED]
        assert third_rec.calls == []
        forced = Ingestor(s, eng.store, eng.embedder, transcriber=_scripted(s, ScriptedRecognizer())).run(
            [d], transcribe=True, lang="ru")  # another language forced: recognised again
        assert [e.status for e in forced.entries] == [IngestStatus.REPLACED, IngestStatus.REPLACED]
        assert eng.store.get_source("archive/a.wav").meta["asr_language_forced"] == "true"  # type: ignore[union-attr]
    finally:
        eng.close()
