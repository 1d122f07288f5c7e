"""Speech recognition figures on the LibriVox sonnets (the real whisper-base model; install it first with
`footnote models install whisper-base` or `make models`).

    .venv/bin/python bench/asr.py                     # ../shared/data/sonnets, settings' asr.* (beam 5, int8)
    .venv/bin/python bench/asr.py --beam 1 --threads 2
    .venv/bin/python bench/asr.py --skip-hour         # without the 60-minute lexical-index part

Prints, per recording and overall: WER against p00N.xhtml, wall seconds, real-time factor (wall /
audio), CPU seconds per audio second, the language detected and its probability; for sonnet 1 how far
each line's chip (the first machine cue holding the line's words, what the chat plays) starts from the
hand-made sync map (share within 0.5 s, mean, worst); peak RSS. Then the time from a 60-minute machine
transcript's recognition finishing to it being searchable lexically (load, cues, chunk, index into a
fresh SQLite store), and what an archive of 1,000 hours would take at the measured rate.
Each recording is recognised from scratch (a fresh cache folder); the model is loaded once, before timing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import wave
from pathlib import Path

from footnote.corpus.asr import AudioTranscriber, MachineTranscript, TranscriptCache, machine_cues
from footnote.corpus.ingest import Ingestor
from footnote.cpu import available_cores
from footnote.eval.asr import chip_starts, sync_lines, wer, words, xhtml_lines
from footnote.models.whisper import SAMPLE_RATE, Segment, WhisperRecognizer, Word
from footnote.settings import load_settings
from footnote.store import open_store

REPO = Path(__file__).resolve().parents[1]


class _Fixed:
    """A transcriber that returns a given transcript (the 60-minute indexing part)."""

    def __init__(self, mt: MachineTranscript) -> None:
        self.mt = mt

    @property
    def name(self) -> str:
        return "fixed"

    def duration(self, path: Path) -> float:
        return self.mt.duration_s

    def transcribe(self, path: Path, data: bytes, *, language: str | None, progress: object = None) -> MachineTranscript:
        return self.mt


def _hour_of(mts: list[MachineTranscript], minutes: int) -> MachineTranscript:
    segs: list[Segment] = []
    offset = 0
    while offset < minutes * 60_000:
        for mt in mts:
            for s in mt.segments:
                segs.append(Segment(s.start_ms + offset, s.end_ms + offset, s.text,
                                    tuple(Word(w.start_ms + offset, w.end_ms + offset, w.text) for w in s.words)))
            offset += int(mt.duration_s * 1000) + 1000
    return MachineTranscript(tuple(segs), "en", 0.99, False, offset / 1000, "fixed")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sonnets", type=Path, default=REPO.parent / "shared" / "data" / "sonnets")
    ap.add_argument("--beam", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--lang", default=None, help="force the language (default: detected)")
    ap.add_argument("--skip-hour", action="store_true")
    args = ap.parse_args()
    over: dict[str, object] = {"asr.nice": 0}
    if args.beam:
        over["asr.beam_size"] = args.beam
    if args.threads:
        over["asr.threads"] = args.threads
    settings = load_settings(None, **over)
    asr = settings.asr
    rec = WhisperRecognizer(asr, settings.models.dir_path)
    if not (rec.home / "model.bin").is_file():
        print(f"whisper-base is not installed in {rec.home}: footnote models install whisper-base", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    rec._load()
    print(f"model {asr.model} ({asr.compute_type}, beam {asr.beam_size}, "
          f"{asr.threads or available_cores()} threads) loaded in {time.perf_counter() - t0:.1f} s")
    mp3s = sorted(args.sonnets.glob("p0*.mp3"))
    mts: list[MachineTranscript] = []
    ref_all: list[str] = []
    hyp_all: list[str] = []
    audio_s = wall_s = cpu_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        tr = AudioTranscriber(asr, rec, TranscriptCache(Path(tmp) / "cache"))
        for mp3 in mp3s:
            c0, w0 = time.process_time(), time.perf_counter()
            mt = tr.transcribe(mp3, mp3.read_bytes(), language=args.lang)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            mts.append(mt)
            ref = words(" ".join(xhtml_lines(mp3.with_suffix(".xhtml").read_text(encoding="utf-8"))))
            hyp = words(" ".join(s.text for s in mt.segments))
            ref_all += ref
            hyp_all += hyp
            audio_s, wall_s, cpu_s = audio_s + mt.duration_s, wall_s + wall, cpu_s + cpu
            print(f"{mp3.name}: {mt.duration_s:.1f} s audio, WER {wer(ref, hyp):.1%} ({len(ref)} words), "
                  f"{wall:.1f} s wall, RTF {wall / mt.duration_s:.3f}, CPU {cpu / mt.duration_s:.3f} s/s, "
                  f"lang {mt.language} {mt.language_probability:.2f}")
    print(f"overall: WER {wer(ref_all, hyp_all):.1%} over {len(ref_all)} words; RTF {wall_s / audio_s:.3f} "
          f"(wall {wall_s:.1f} s / audio {audio_s:.1f} s); CPU {cpu_s / audio_s:.3f} s per audio s")
    sync = args.sonnets / "sonnet001.json"
    if sync.is_file() and mts:
        cues = machine_cues(mts[0].segments, asr.cue_max_ms, asr.cue_gap_ms)
        lines = sync_lines(json.loads(sync.read_text(encoding="utf-8")))
        timings = chip_starts(lines, cues)
        errs = [t.error_ms for t in timings if t.error_ms is not None]
        within = sum(1 for e in errs if e <= 500)
        print(f"sonnet 1 chips: {within}/{len(timings)} lines start within 0.5 s of the sync map "
              f"({within / len(timings):.0%}); mean {statistics.mean(errs) / 1000:.2f} s, worst {max(errs) / 1000:.2f} s; "
              f"{len(cues)} cues")
        for t in timings:
            if t.error_ms is None or t.error_ms > 500:
                print(f"  off: {t.line!r} sync {t.ref_ms / 1000:.2f} s, chip "
                      f"{'-' if t.chip_ms is None else f'{t.chip_ms / 1000:.2f} s'}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    rtf = wall_s / audio_s if audio_s else 0.0
    hours = 1000 * rtf
    print(f"archive of 1,000 h (~80,000 windows): {hours:.0f} h of recognition on this machine "
          f"({hours / 24:.1f} days); N machines: /N (one recording per worker)")
    if not args.skip_hour and mts:
        _hour(settings, mts)
    return 0


def _hour(settings: object, mts: list[MachineTranscript]) -> None:
    from footnote.settings import Settings

    assert isinstance(settings, Settings)
    mt = _hour_of(mts, 60)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "lectures"
        d.mkdir()
        with wave.open(str(d / "hour.wav"), "wb") as w:  # the bytes stored as the original; not decoded here
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SAMPLE_RATE)
            w.writeframes(b"\0\0" * SAMPLE_RATE)
        s = settings.with_overrides(**{"store.url": str(Path(tmp) / "s.db"), "embedder.name": "none"})
        store = open_store(s.store.url, s.store)
        t0 = time.perf_counter()
        report = Ingestor(s, store, None, transcriber=_Fixed(mt)).run([d], transcribe=True)
        took = time.perf_counter() - t0
        hits = store.search_lexical("fairest creatures desire increase", 5, stemmed=True)
        store.close()
    print(f"60-minute recording ({mt.duration_s / 60:.0f} min, {len(mt.segments)} segments): searchable "
          f"{took:.2f} s after its recognition finished ({report.fragments} windows; lexical hits {len(hits)})")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", str(available_cores()))
    sys.exit(main())
