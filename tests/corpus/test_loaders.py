"""Loaders on real files (../shared/data, ../shared/eval) and on small files written here."""

from __future__ import annotations

import itertools
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from footnote.corpus.chunkers import chunk_document
from footnote.corpus.loaders import iter_files, load_entries, load_path
from footnote.errors import InputError
from footnote.records.fragments import (
    AddressLocator,
    FileLocator,
    TranscriptLocator,
    sha256_bytes,
)
from footnote.settings import Settings

S = Settings()


def _sync_map_ms(path: Path) -> list[tuple[int, int, str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(int(Decimal(f["begin"]) * 1000), int(Decimal(f["end"]) * 1000), " ".join(f["lines"]))
            for f in data["fragments"]]


@pytest.fixture
def sonnet_track(shared_dir: Path, tmp_path: Path) -> Path:
    """Sonnet 1 laid out as a track: p001.mp3 + p001.json (the sync map) in one folder."""
    d = tmp_path / "sonnets"
    d.mkdir()
    shutil.copy(shared_dir / "data/sonnets/p001.mp3", d / "p001.mp3")
    shutil.copy(shared_dir / "data/sonnets/sonnet001.json", d / "p001.json")
    return d


def test_sync_map_track_keeps_exact_ms_and_audio_original(sonnet_track: Path, shared_dir: Path) -> None:
    (doc,) = load_path(sonnet_track / "p001.json", settings=S, root=sonnet_track)
    mp3 = (shared_dir / "data/sonnets/p001.mp3").read_bytes()
    assert doc.original == mp3
    assert doc.source.media_type == "audio/mpeg"
    assert doc.source.original_name == "p001.mp3"
    assert doc.source.blob_sha256 == sha256_bytes(mp3)
    assert doc.source.id == "p001.json"
    assert doc.source.kind == "track_transcript"
    expected = [c for c in _sync_map_ms(sonnet_track / "p001.json") if c[2].strip()]
    assert [(c.start_ms, c.end_ms) for c in doc.cues] == [(b, e) for b, e, _ in expected]
    frags = chunk_document(doc, S)
    assert len(frags) >= 2
    starts = {b for b, _, _ in expected}
    ends = {e for _, e, _ in expected}
    for f in frags:
        assert isinstance(f.locator, TranscriptLocator)
        assert f.locator.track_id == "p001.json"
        assert f.locator.start_ms in starts and f.locator.end_ms in ends
        assert f.locator.end_ms - f.locator.start_ms <= S.chunk.transcript_window_ms
    assert frags[0].locator.start_ms == expected[0][0]  # type: ignore[union-attr]
    assert frags[-1].locator.end_ms == expected[-1][1]  # type: ignore[union-attr]
    # the line "From fairest creatures…" sits in the first window, which starts at 0 ms
    assert "From fairest creatures we desire increase" in frags[0].text
    # consecutive windows overlap a little, never go backwards
    for a, b in itertools.pairwise(frags):
        assert a.locator.start_ms < b.locator.start_ms <= a.locator.end_ms  # type: ignore[union-attr]


def test_track_title_comes_from_the_audio_title_tag(demo_dir: Path, sonnet_track: Path) -> None:
    (doc,) = load_path(demo_dir / "lectures/02-fog-and-tides.vtt", settings=S, root=demo_dir)
    assert doc.source.title == "Lecture 2. Fog and tides at Marrowick"  # the mp3's ID3 title
    assert doc.source.id == "lectures/02-fog-and-tides.vtt"
    (untagged,) = load_path(sonnet_track / "p001.json", settings=S, root=sonnet_track)
    assert untagged.source.title == "p001"  # LibriVox's mp3 has no title tag: the file stem


def test_srt_matches_sync_map(shared_dir: Path) -> None:
    srt = shared_dir / "data/sonnets/sonnet001.srt"
    (doc,) = load_path(srt, settings=S)
    expected = _sync_map_ms(shared_dir / "data/sonnets/sonnet001.json")
    assert [(c.start_ms, c.end_ms, c.text) for c in doc.cues] == [(b, e, t) for b, e, t in expected if t]
    # no audio next to it (different stem): the transcript itself is the original
    assert doc.original == srt.read_bytes()
    assert doc.source.media_type == "application/x-subrip"


def test_vtt_with_tags_settings_and_notes(tmp_path: Path) -> None:
    p = tmp_path / "talk.vtt"
    p.write_text(
        "WEBVTT - a talk\n\nNOTE written by hand\n\n1\n00:01.000 --> 00:04.500 align:start\n"
        "<v Ann>Hello &amp; welcome</v>\n\n01:00:05.000 --> 01:00:07.250\nsecond <b>line</b>\n",
        encoding="utf-8",
    )
    (doc,) = load_path(p, settings=S, lang="en")
    assert [(c.start_ms, c.end_ms, c.text) for c in doc.cues] == [
        (1000, 4500, "Hello & welcome"), (3_605_000, 3_607_250, "second line")]


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        ([{"start": 0, "end": 2.5, "text": "a"}, {"start": 2.5, "end": 4, "text": "b"}], [(0, 2500), (2500, 4000)]),
        ([{"start": 0, "end": 2500, "text": "a"}, {"start": 2500, "end": 4000, "text": "b"}], [(0, 2500), (2500, 4000)]),
        ([{"start": 0, "end": 3, "text": "a"}, {"start": 3, "end": 7, "text": "b"}], [(0, 3000), (3000, 7000)]),
        ([{"start_ms": 10, "end_ms": 20, "text": "a"}, {"start_ms": 20, "end_ms": 30, "text": "b"}], [(10, 20), (20, 30)]),
        ({"unit": "ms", "segments": [{"start": 1, "end": 2, "text": "a"}]}, [(1, 2)]),
    ],
)
def test_json_segment_units(tmp_path: Path, segments: object, expected: list[tuple[int, int]]) -> None:
    p = tmp_path / "seg.json"
    p.write_text(json.dumps(segments), encoding="utf-8")
    (doc,) = load_path(p, settings=S)
    assert [(c.start_ms, c.end_ms) for c in doc.cues] == expected


def test_pdf_pages_and_sections(shared_dir: Path) -> None:
    pdf = shared_dir / "data/pdf/GeoTopo-komprimiert.pdf"
    (doc,) = load_path(pdf, settings=S)
    assert doc.source.media_type == "application/pdf"
    assert doc.original == pdf.read_bytes()
    pages = [b.page for b in doc.blocks]
    assert pages == sorted(pages) and pages[0] == 1 and max(p or 0 for p in pages) == 117
    frags = chunk_document(doc, S)
    hits = [f for f in frags if "heißt Metrik, wenn gilt" in f.text]
    assert hits and all(isinstance(f.locator, FileLocator) and f.locator.page == 10 for f in hits)
    assert hits[0].locator.section == "1.2 Metrische Räume"  # type: ignore[union-attr]
    hausdorff = [f for f in frags if "Hausdorff-Raum" in f.text]
    assert hausdorff and {f.locator.page for f in hausdorff} == {12}  # type: ignore[union-attr]
    # a chunk never spans pages: each fragment's text is found on its own page
    by_page = {b.page: b.text for b in doc.blocks}
    for f in frags[:60]:
        assert f.text.split()[0] in by_page[f.locator.page]  # type: ignore[union-attr]


def test_jsonl_rows_are_sources(shared_dir: Path) -> None:
    path = shared_dir / "eval/xquad/corpus.ru.jsonl"
    docs = list(load_path(path, settings=S))
    assert len(docs) == 144
    ids = [d.source.id for d in docs]
    assert len(set(ids)) == 144 and "Super_Bowl_50#0" in ids
    assert all(d.source.lang == "ru" and d.source.kind == "prose_chapter" for d in docs)
    assert not docs[0].blocks[0].text.startswith("\ufeff")


def test_jsonl_address_rows(shared_dir: Path, tmp_path: Path) -> None:
    lines = (shared_dir / "eval/gita/corpus.jsonl").read_text(encoding="utf-8").split("\n")[:3]
    p = tmp_path / "gita.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs = list(load_path(p, settings=S))
    assert docs[0].source.id == "BG 1.1#verse" and docs[0].source.kind == "verse"
    assert docs[0].blocks[0].address == AddressLocator("BG", "1.1", "BG 1.1")
    frags = chunk_document(docs[0], S)
    assert all(f.locator == AddressLocator("BG", "1.1", "BG 1.1") for f in frags)


VERSE_MD = """---
kind: verse
book: HB
title: The Harbour Book
lang: en
---
# The Harbour Book

A short introduction to the book.

## HB 1.1
The tide comes in and the boats rise together.

### Commentary
Rising together means no boat is left on the sand.

## HB 1.2
Mend the net before the storm.

### Комментарий
Чини сеть до бури.

## Afterword
Thanks to the harbour master.
"""


def test_verse_markdown(tmp_path: Path) -> None:
    p = tmp_path / "books" / "harbour.md"
    p.parent.mkdir()
    p.write_text(VERSE_MD, encoding="utf-8")
    (doc,) = load_path(p, settings=S, root=tmp_path)
    assert doc.source.id == "books/harbour.md"
    assert doc.source.title == "The Harbour Book" and doc.source.kind == "verse"
    got = [(b.kind, b.address.label if b.address else None, b.text.split("\n")[0][:20]) for b in doc.blocks]
    assert got == [
        ("commentary", None, "A short introduction"),
        ("verse", "HB 1.1", "The tide comes in an"),
        ("commentary", "HB 1.1", "Rising together mean"),
        ("verse", "HB 1.2", "Mend the net before "),
        ("commentary", "HB 1.2", "Чини сеть до бури."),
        ("commentary", None, "Thanks to the harbou"),
    ]
    frags = chunk_document(doc, S)
    assert [f.kind for f in frags] == ["commentary", "verse", "commentary", "verse", "commentary", "commentary"]
    assert frags[1].locator == AddressLocator("HB", "1.1", "HB 1.1")
    assert frags[5].locator == FileLocator("books/harbour.md", None, "Afterword")
    assert [f.id for f in frags] == [f"books/harbour.md#{i}" for i in range(6)]


def test_markdown_sections_and_front_matter_lang(tmp_path: Path) -> None:
    p = tmp_path / "letter.md"
    p.write_text("---\nkind: letter\nid: letters/one\n---\n# Dear friend\n\nПривет из гавани, где всё спокойно и тихо.\n\n"
                 "```\n# not a heading\n```\n\n## P.S.\nЕщё одно.\n", encoding="utf-8")
    (doc,) = load_path(p, settings=S)
    assert doc.source.id == "letters/one" and doc.source.kind == "letter" and doc.source.lang == "ru"
    assert [b.section for b in doc.blocks] == ["Dear friend", "P.S."]
    assert "# not a heading" in doc.blocks[0].text


def test_lang_precedence(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("Plain English words here.", encoding="utf-8")
    b = tmp_path / "b.md"
    b.write_text("---\nlang: en\n---\nРусский текст.", encoding="utf-8")
    assert next(load_path(a, settings=S)).source.lang == "en"
    assert next(load_path(a, settings=S, lang="de")).source.lang == "de"
    assert next(load_path(b, settings=S, lang="de")).source.lang == "en"


def test_content_hash_covers_options(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_text("Some text.", encoding="utf-8")

    def h(**kw: object) -> str:
        s = kw.pop("settings", S)
        return next(load_path(p, settings=s, **kw)).source.content_hash  # type: ignore[arg-type]

    base = h()
    assert base == h()
    assert base != h(kind="letter")
    assert base != h(lang="ru")
    assert base != h(settings=S.with_overrides(**{"chunk.text_target_chars": 500}))
    assert base != h(settings=S.with_overrides(**{"embedder.name": "hash"}))
    p.write_text("Some other text.", encoding="utf-8")
    assert base != h()


def test_iter_files(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    for name in ("a.md", "sub/b.srt", "sub/b.mp3", "c.rtf", ".hidden/d.md", ".e.txt", "f.pdf", "README.md",
                 "sub/LICENSE.txt"):
        (tmp_path / name).write_bytes(b"x")
    got = [(f.relative_to(tmp_path).as_posix(), r) for f, r in iter_files([tmp_path])]
    assert got == [("a.md", tmp_path), ("f.pdf", tmp_path), ("sub/b.srt", tmp_path)]
    # explicit audio stands for its transcript; explicit unknown files are listed (and fail on load)
    got2 = iter_files([tmp_path / "sub/b.mp3", tmp_path / "c.rtf"])
    assert got2 == [(tmp_path / "sub/b.srt", tmp_path / "sub"), (tmp_path / "c.rtf", tmp_path)]
    with pytest.raises(InputError, match="unsupported file type"):
        list(load_path(tmp_path / "c.rtf", settings=S))


def test_jsonl_bad_line_entries(tmp_path: Path) -> None:
    p = tmp_path / "rows.jsonl"
    p.write_text('{"id": "a", "text": "first"}\n{"id": "b", "text": \n{"id": "c", "text": "third"}\n'
                 '{"id": "d", "text": "x", "kind": "recipe"}\n', encoding="utf-8")
    items = list(load_entries(p, settings=S))
    assert [type(i).__name__ for i in items] == ["Document", "InputError", "Document", "InputError"]
    errs = [i for i in items if isinstance(i, InputError)]
    assert errs[0].line == 2 and str(p) in errs[0].message
    assert errs[1].line == 4 and "unknown kind 'recipe'" in errs[1].message
