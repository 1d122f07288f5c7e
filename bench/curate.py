"""Ingest-time attacks and the cues table, measured. Prints figures; asserts nothing.

    .venv/bin/python bench/curate.py                      # 50 MB word, 1M-cue track
    .venv/bin/python bench/curate.py --word-mb 10 --cues 200000

1. A word without spaces of N MB: ``pack_text`` time at N/4, N/2 and N (linear: the time doubles with
   the size; the old ``_split_long`` re-copied the rest of the word per piece — quadratic), then a
   whole ``ingest`` of a file holding it (lexical only, SQLite).
2. A track with M cues in SQLite: ``put_source`` time, then ``get_cues`` for a 1-second window near
   the end (p50 of 50) against parsing the whole JSON list as ``GET /cues`` did before the cues table.
3. Language detection: model load time and per-source detection time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from footnote.corpus.chunkers import pack_text
from footnote.records.fragments import Cue, Fragment, Source, TranscriptLocator, sha256_bytes, sha256_text
from footnote.settings import Settings, StoreSettings
from footnote.store.sqlite import SqliteStore


def long_word(mb: float, tmp: Path) -> None:
    cfg = Settings().chunk
    for frac in (0.25, 0.5, 1.0):
        n = int(mb * frac * 1_000_000)
        word = "x" * n
        t = time.perf_counter()
        chunks = pack_text(word, cfg)
        print(f"pack_text, one word of {n / 1e6:5.1f} MB: {time.perf_counter() - t:6.2f} s, {len(chunks)} chunks")
    from footnote.engine import Engine

    d = tmp / "word"
    d.mkdir()
    (d / "word.txt").write_text("y" * int(mb * 1_000_000), encoding="utf-8")
    settings = Settings.model_validate({"store": {"url": str(tmp / "w.db")}, "embedder": {"name": "none"}})
    with Engine.from_settings(settings) as eng:
        t = time.perf_counter()
        rep = eng.ingest([d])
        print(f"ingest of a {mb:.0f} MB one-word file (lexical only): {time.perf_counter() - t:6.2f} s, "
              f"{rep.fragments} fragments, ok={rep.ok}, timings_ms={rep.summary()['timings_ms']}")


def cues(m: int, tmp: Path) -> None:
    store = SqliteStore(tmp / "c.db", StoreSettings(url=str(tmp / "c.db")))
    cue_list = [Cue(i * 1000, i * 1000 + 950, f"cue number {i} of the long lecture") for i in range(m)]
    data = b"audio"
    src = Source("long.srt", "track_transcript", "long", "en", "h", sha256_bytes(data), "long.mp3", "audio/mpeg")
    frag = Fragment("long.srt#0", "long.srt", 0, "track_transcript", "en", "one window", TranscriptLocator(
        "long.srt", 0, 45_000), sha256_text("one window"))
    t = time.perf_counter()
    store.put_source(src, [frag], None, data, cues=cue_list)
    print(f"put_source with {m:,} cues: {time.perf_counter() - t:6.2f} s")
    lo = (m - 10) * 1000
    times = []
    for _ in range(50):
        t = time.perf_counter()
        got = store.get_cues("long.srt", lo, lo + 1000)
        times.append(time.perf_counter() - t)
    print(f"get_cues, 1-second window near the end: p50 {statistics.median(times) * 1e3:.2f} ms ({len(got)} cues)")
    raw = json.dumps([[c.start_ms, c.end_ms, c.text] for c in cue_list])
    times = []
    for _ in range(3):
        t = time.perf_counter()
        rows = json.loads(raw)
        _ = [r for r in rows if int(r[1]) > lo and int(r[0]) < lo + 1000]
        times.append(time.perf_counter() - t)
    print(f"before (the JSON list in Source.meta parsed per call): p50 {statistics.median(times) * 1e3:.0f} ms")
    store.close()


def lang() -> None:
    from footnote.corpus import lang as L

    t = time.perf_counter()
    L.detect_text_lang("warm")
    print(f"py3langid model load: {time.perf_counter() - t:.2f} s (once per process)")
    text = "Ein topologischer Raum heißt kompakt, wenn jede offene Überdeckung endlich ist. " * 120
    t = time.perf_counter()
    for _ in range(100):
        L.detect_text_lang(text)
    print(f"detect_text_lang on 10,000 characters: {(time.perf_counter() - t) * 10:.2f} ms per source")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--word-mb", type=float, default=50)
    ap.add_argument("--cues", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        lang()
        long_word(args.word_mb, tmp)
        cues(args.cues, tmp)


if __name__ == "__main__":
    main()
