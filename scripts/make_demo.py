#!/usr/bin/env python3
"""Regenerate Footnote's bundled demo corpus (``demo/``) from the texts under ``scripts/demo/``.

Everything in ``demo/`` is written by the project about an invented subject (the keepers of the
Marrowick Light, a fictional lighthouse) and is rebuilt deterministically by this script:

* ``demo/lectures/*.mp3`` + one transcript each (``.srt``, ``.vtt`` or JSON segments) under the same
  stem. Every sentence of a lecture script is synthesized separately with espeak-ng, its silence
  trimmed, and the sentences joined with fixed pauses, so each cue's start/end is known to the sample.
  The joined WAV is encoded with lame (32 kbit/s mono), decoded again with sox, and the cues shifted by
  the encoder delay measured between the two (~50 ms; at this bitrate MP3 has no gapless header, so
  every player plays that delay); each decoded cue's speech onset is then checked against its start.
  The last cue always ends before the audio does.
* ``demo/verses``, ``demo/letters``, ``demo/prose``: Markdown copied from ``scripts/demo`` after a
  front-matter check.
* ``demo/pdf/keepers-handbook.pdf``: a 7-page PDF with a text layer, outline and page numbers, made
  with reportlab from ``scripts/demo/handbook.txt`` (DejaVu Sans embedded, so Cyrillic renders
  without any font at run time).
* ``demo/README.md``: ``scripts/demo/README.template.md`` with the demo questions resolved against
  the generated files (cue times in ms, PDF pages, verse addresses).

Needs: espeak-ng, lame and sox on PATH (Debian: ``apt-get install espeak-ng lame sox
libsox-fmt-mp3``), reportlab (the ``dev`` extra) and DejaVu fonts (``fonts-dejavu-core``).
Run from the repository root: ``python scripts/make_demo.py`` (``--check`` verifies the committed
corpus is what the sources produce, without writing).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import re
import shutil
import subprocess
import sys
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "scripts" / "demo"
sys.path.insert(0, str(SRC))

from demo_pdf import build_handbook  # noqa: E402
from demo_questions import render_questions  # noqa: E402

RATE = 22_050  # espeak-ng's native rate; kept through encoding (MPEG-2 layer III)
LEAD_MS, GAP_MS, TAIL_MS = 300, 450, 900
TRIM_THRESHOLD = 250  # |sample| below this at a sentence's ends counts as silence
TRIM_MARGIN_MS = 15
MP3_BITRATE_KBPS = 32
MAX_ONSET_OFFSET_MS = 40  # decoded speech onset vs. cue start (cues start TRIM_MARGIN_MS early)
MARKUP = re.compile(r"\[([^|\]]+)\|([^\]]+)\]")  # [written|spoken]


@dataclass(frozen=True)
class Lecture:
    stem: str
    title: str
    lang: str
    voice: str
    speed: int
    fmt: str  # srt | vtt | json
    sentences: tuple[tuple[str, str], ...]  # (written, spoken)


@dataclass(frozen=True)
class Cue:
    start_ms: int
    end_ms: int
    text: str


def parse_lecture(path: Path) -> Lecture:
    head, _, body = path.read_text(encoding="utf-8").partition("\n---\n")
    meta = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
    meta = {k.strip(): v.strip() for k, v in meta.items()}
    sentences = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        written = MARKUP.sub(lambda m: m.group(1), line)
        spoken = MARKUP.sub(lambda m: m.group(2), line)
        sentences.append((written, spoken))
    if meta.get("format") not in {"srt", "vtt", "json"}:
        raise SystemExit(f"{path}: format must be srt, vtt or json")
    return Lecture(
        stem=path.stem,
        title=meta["title"],
        lang=meta["lang"],
        voice=meta["voice"],
        speed=int(meta.get("speed", "150")),
        fmt=meta["format"],
        sentences=tuple(sentences),
    )


def read_wav(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2 or w.getframerate() != RATE:
            raise SystemExit(f"{path}: expected 16-bit mono {RATE} Hz from espeak-ng")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").copy()


def write_wav(path: Path, samples: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.astype("<i2").tobytes())


def synth(text: str, voice: str, speed: int, tmp: Path) -> np.ndarray:
    out = tmp / "sentence.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(out), text], check=True)
    samples = read_wav(out)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > TRIM_THRESHOLD)
    if loud.size == 0:
        raise SystemExit(f"espeak-ng produced silence for: {text!r}")
    margin = RATE * TRIM_MARGIN_MS // 1000
    return samples[max(0, loud[0] - margin) : min(samples.size, loud[-1] + margin)]


def silence(ms: int) -> np.ndarray:
    return np.zeros(RATE * ms // 1000, dtype=np.int16)


def samples_to_ms(n: int) -> int:
    return round(n * 1000 / RATE)


def build_audio(lecture: Lecture, tmp: Path) -> tuple[np.ndarray, list[Cue]]:
    parts: list[np.ndarray] = [silence(LEAD_MS)]
    pos = parts[0].size
    cues: list[Cue] = []
    for i, (written, spoken) in enumerate(lecture.sentences):
        if i:
            gap = silence(GAP_MS)
            parts.append(gap)
            pos += gap.size
        audio = synth(spoken, lecture.voice, lecture.speed, tmp)
        cues.append(Cue(samples_to_ms(pos), samples_to_ms(pos + audio.size), written))
        parts.append(audio)
        pos += audio.size
    parts.append(silence(TAIL_MS))
    return np.concatenate(parts), cues


def encode_mp3(wav: Path, mp3: Path, lecture: Lecture) -> None:
    subprocess.run(
        [
            "lame", "--quiet", "--noreplaygain", "-m", "m", "-b", str(MP3_BITRATE_KBPS),
            "--resample", str(RATE / 1000), "--id3v2-only",
            "--tt", lecture.title, "--ta", "Footnote demo corpus", "--tl", "The Marrowick Light",
            str(wav), str(mp3),
        ],
        check=True,
    )  # fmt: skip


def decode(mp3: Path, tmp: Path) -> np.ndarray:
    """The MP3 as a decoder (sox) actually produces it, at RATE."""
    out = tmp / "decoded.wav"
    subprocess.run(["sox", str(mp3), "-t", "wav", "-r", str(RATE), "-c", "1", "-b", "16", str(out)], check=True)
    return read_wav(out)


def encoder_lag(original: np.ndarray, decoded: np.ndarray) -> int:
    """Samples by which the decoded stream trails the WAV that was encoded (the MP3 encoder delay).

    At 32 kbit/s and 22.05 kHz an MP3 frame is too small for lame's gapless (LAME/Info) header, so every
    decoder, browsers included, plays the encoder delay (~50 ms) before the first sample. Found by
    cross-correlating the first seconds of both signals."""
    n = min(original.size, decoded.size, RATE * 6)
    a, b = original[:n].astype(np.float64), decoded[:n].astype(np.float64)
    size = 1 << (2 * n - 1).bit_length()
    corr = np.fft.irfft(np.fft.rfft(b, size) * np.conj(np.fft.rfft(a, size)), size)
    max_lag = RATE // 5  # the delay is a few MP3 frames; never more than 200 ms
    return int(np.argmax(corr[: max_lag + 1]))


def onset_offsets_ms(decoded: np.ndarray, cues: list[Cue]) -> list[int]:
    """For every cue, where speech really starts in the decoded audio minus where the cue says it starts.

    Searched from the middle of the pause before the cue; proves the encoder delay/padding is handled
    (a shifted or stretched stream shows up here as a growing offset)."""
    loud = np.abs(decoded.astype(np.int32)) > TRIM_THRESHOLD
    offsets = []
    for c in cues:
        lo = max(0, (c.start_ms - GAP_MS // 2) * RATE // 1000)
        hits = np.flatnonzero(loud[lo : c.end_ms * RATE // 1000])
        if hits.size == 0:
            raise SystemExit(f"no speech in the decoded audio for cue at {c.start_ms} ms: {c.text!r}")
        offsets.append(samples_to_ms(lo + int(hits[0])) - c.start_ms)
    return offsets


def fmt_ts(ms: int, sep: str) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def render_transcript(cues: list[Cue], fmt: str) -> str:
    if fmt == "srt":
        blocks = [f"{i}\n{fmt_ts(c.start_ms, ',')} --> {fmt_ts(c.end_ms, ',')}\n{c.text}\n" for i, c in enumerate(cues, 1)]
        return "\n".join(blocks)
    if fmt == "vtt":
        blocks = [f"{fmt_ts(c.start_ms, '.')} --> {fmt_ts(c.end_ms, '.')}\n{c.text}\n" for c in cues]
        return "WEBVTT\n\n" + "\n".join(blocks)
    segs = [{"start": c.start_ms / 1000, "end": c.end_ms / 1000, "text": c.text} for c in cues]
    return json.dumps(segs, ensure_ascii=False, indent=1) + "\n"


def build_lectures(out: Path, tmp: Path) -> dict[str, list[Cue]]:
    all_cues: dict[str, list[Cue]] = {}
    (out / "lectures").mkdir(parents=True, exist_ok=True)
    for script in sorted((SRC / "lectures").glob("*.txt")):
        lecture = parse_lecture(script)
        samples, cues = build_audio(lecture, tmp)
        wav = tmp / f"{lecture.stem}.wav"
        write_wav(wav, samples)
        mp3 = out / "lectures" / f"{lecture.stem}.mp3"
        encode_mp3(wav, mp3, lecture)
        decoded = decode(mp3, tmp)
        lag_ms = samples_to_ms(encoder_lag(samples, decoded))
        cues = [Cue(c.start_ms + lag_ms, c.end_ms + lag_ms, c.text) for c in cues]
        wav_ms, mp3_ms = samples_to_ms(samples.size), samples_to_ms(decoded.size)
        if cues[-1].end_ms > min(wav_ms, mp3_ms):
            raise SystemExit(f"{lecture.stem}: last cue ends at {cues[-1].end_ms} ms, audio is {wav_ms}/{mp3_ms} ms")
        offsets = onset_offsets_ms(decoded, cues)
        if max(map(abs, offsets)) > MAX_ONSET_OFFSET_MS:
            raise SystemExit(f"{lecture.stem}: decoded speech onsets are off the cues by {offsets} ms")
        ext = {"srt": ".srt", "vtt": ".vtt", "json": ".json"}[lecture.fmt]
        (out / "lectures" / f"{lecture.stem}{ext}").write_text(render_transcript(cues, lecture.fmt), encoding="utf-8")
        all_cues[f"lectures/{lecture.stem}{ext}"] = cues
        print(
            f"  {lecture.stem}: {len(cues)} cues, wav {wav_ms} ms, decoded mp3 {mp3_ms} ms, encoder lag {lag_ms} ms, "
            f"last cue ends {cues[-1].end_ms} ms, onset offsets {min(offsets)}..{max(offsets)} ms, "
            f"{mp3.stat().st_size // 1024} KiB"
        )
    return all_cues


FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def copy_markdown(out: Path) -> None:
    for sub, kind in (("verses", "verse"), ("letters", "letter"), ("prose", "prose_chapter")):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for src in sorted((SRC / sub).glob("*.md")):
            text = src.read_text(encoding="utf-8")
            m = FRONT.match(text)
            if not m:
                raise SystemExit(f"{src}: missing front matter")
            meta = dict(line.split(":", 1) for line in m.group(1).splitlines())
            meta = {k.strip(): v.strip() for k, v in meta.items()}
            if meta.get("kind") != kind or not meta.get("title") or meta.get("lang") not in {"en", "ru"}:
                raise SystemExit(f"{src}: front matter needs kind: {kind}, a title and lang en|ru")
            shutil.copyfile(src, out / sub / src.name)
            print(f"  {sub}/{src.name}")


def build(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="footnote-demo-") as t:
        tmp = Path(t)
        print("lectures:")
        cues = build_lectures(out, tmp)
        print("markdown:")
        copy_markdown(out)
        print("pdf:")
        (out / "pdf").mkdir(parents=True, exist_ok=True)
        pages = build_handbook(SRC / "handbook.txt", out / "pdf" / "keepers-handbook.pdf")
        print(f"  pdf/keepers-handbook.pdf: {pages} pages")
        transcripts = {k: [(c.start_ms, c.end_ms, c.text) for c in v] for k, v in cues.items()}
        readme = render_questions(SRC / "README.template.md", SRC / "questions.json", out, transcripts)
        (out / "README.md").write_text(readme, encoding="utf-8")
        print("  README.md")


def same_tree(a: Path, b: Path) -> list[str]:
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    diff = sorted(str(p) for p in files_a ^ files_b)
    diff += sorted(str(p) for p in files_a & files_b if not filecmp.cmp(a / p, b / p, shallow=False))
    return diff


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "demo", help="output folder (default: demo/)")
    ap.add_argument("--check", action="store_true", help="rebuild in a temp folder and compare with --out")
    args = ap.parse_args(argv)
    for tool in ("espeak-ng", "lame", "sox"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install espeak-ng lame sox libsox-fmt-mp3)")
    if args.check:
        with tempfile.TemporaryDirectory(prefix="footnote-demo-check-") as t:
            build(Path(t))
            diff = same_tree(Path(t), args.out)
        print("demo is up to date" if not diff else "differs: " + ", ".join(diff))
        return 1 if diff else 0
    if args.out.exists():
        for sub in ("lectures", "verses", "letters", "prose", "pdf"):
            shutil.rmtree(args.out / sub, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    build(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
