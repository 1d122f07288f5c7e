"""Chunkers: transcript windows and library packing, on made-up documents with known shapes."""

from __future__ import annotations

import itertools
from pathlib import Path

from footnote.corpus.chunkers import chunk_document, chunk_transcript, pack_text
from footnote.corpus.chunkers import split_sentences as chunker_sentences
from footnote.engine import Engine
from footnote.records.fragments import (
    AddressLocator,
    Block,
    Cue,
    Document,
    FileLocator,
    Source,
    TranscriptLocator,
)
from footnote.settings import Settings, load_settings

S = Settings()


def _src(kind: str = "prose_chapter", sid: str = "doc") -> Source:
    return Source(id=sid, kind=kind, title="t", lang="en", content_hash="h", blob_sha256="b",
                  original_name="x", media_type="text/plain")


def _cues(n: int, step_ms: int = 3000, words: int = 8) -> list[Cue]:
    return [Cue(i * step_ms, (i + 1) * step_ms, " ".join(f"w{i}x{j}" for j in range(words))) for i in range(n)]


def test_transcript_windows_are_about_45s_with_overlap() -> None:
    cues = _cues(100)  # 300 s of 3-second cues
    wins = chunk_transcript(cues, S.chunk)
    assert 6 <= len(wins) <= 9
    for _text, start, end in wins:
        assert end - start <= S.chunk.transcript_window_ms
        assert end - start >= S.chunk.transcript_window_ms - 3000 or end == cues[-1].end_ms
        assert start % 3000 == 0 and end % 3000 == 0  # exact cue boundaries
    for (_, s1, e1), (_, s2, _) in itertools.pairwise(wins):
        assert s1 < s2 < e1  # overlap, forward progress
        assert e1 - s2 <= S.chunk.transcript_overlap_ms
    # every cue's text is in some window
    joined = " ".join(t for t, _, _ in wins)
    assert all(c.text in joined for c in cues)


def test_transcript_char_cap() -> None:
    cfg = S.chunk.model_copy(update={"transcript_max_chars": 200})
    cues = _cues(40, step_ms=500, words=10)
    wins = chunk_transcript(cues, cfg)
    assert all(len(t) <= 200 for t, _, _ in wins)
    assert wins[-1][2] == cues[-1].end_ms
    huge = [Cue(0, 1000, "word " * 3000)]
    pieces = chunk_transcript(huge, S.chunk)
    assert len(pieces) >= 2 and all(len(t) <= S.chunk.transcript_max_chars for t, _, _ in pieces)
    assert all((s, e) == (0, 1000) for _, s, e in pieces)


def test_pack_paragraphs_then_sentences() -> None:
    paras = [f"Paragraph {i} " + "short words here. " * 10 for i in range(12)]  # ~190 chars each
    chunks = pack_text("\n\n".join(paras), S.chunk)
    assert all(len(c) <= S.chunk.text_target_chars for c in chunks)
    assert len(chunks) == 3  # 4 paragraphs (~760) fit in 900, 5 do not
    assert "".join(chunks).replace("\n", "").replace(" ", "") == "".join(paras).replace(" ", "")
    long_para = " ".join(f"Sentence number {i} says something about the harbour." for i in range(60))
    chunks = pack_text(long_para, S.chunk)
    assert len(chunks) >= 3 and all(len(c) <= S.chunk.text_target_chars for c in chunks)
    assert all(c.endswith(".") for c in chunks)  # cut between sentences
    no_stops = "word " * 1000
    chunks = pack_text(no_stops, S.chunk)
    assert all(len(c) <= S.chunk.text_max_chars for c in chunks)


def test_a_long_paragraph_is_cut_by_the_one_sentence_rule() -> None:
    """The chunker packs a long paragraph's sentences as footnote.text cuts them: never right after an
    abbreviation, an initial or a dotted run ("Dr.", "J.", "U.S.", "e.g."), nor before a lower-case word;
    a hard-wrapped line is not a sentence end."""
    from footnote.text import split_sentences as note_sentences

    unit = ("The keeper met Dr. Hale and J. Smith of the U.S. Lighthouse Board at the pier, e.g. on\n"
            "Tuesdays in winter. ")
    para = unit * 40  # ~4,000 characters: packed sentence by sentence
    chunks = pack_text(para, S.chunk)
    assert len(chunks) >= 3 and all(len(c) <= S.chunk.text_target_chars for c in chunks)
    for c in chunks:
        assert c.startswith("The keeper met Dr. Hale") and c.endswith("Tuesdays in winter.")
    # the chunker's sentences are the notes' sentences (same cuts; the raw text kept as it was)
    assert [" ".join(s.split()) for s in chunker_sentences(para) if s.strip()] == note_sentences(para)


def test_the_sentence_rule_judges_a_full_stop_by_the_word_before_it_only() -> None:
    """Each full stop is judged on a short window before it (linear on a huge paragraph): a window cut
    inside a long word never turns its tail into an abbreviation or a list number."""
    long_word = "x" * 200
    assert chunker_sentences(f"{long_word}p. Next one.") == [f"{long_word}p.", "Next one."]
    assert chunker_sentences(f"{long_word} 12. Next one.") == [f"{long_word} 12.", "Next one."]
    assert chunker_sentences(f"{long_word} see p. Twelve.") == [f"{long_word} see p. Twelve."]
    assert chunker_sentences(f"{long_word}\n2. Next one.") == [f"{long_word}\n2. Next one."]
    para = "a. b. c. " * 20_000  # full stops that end no sentence (lower case follows)
    assert chunker_sentences(para) == [para]


def test_blocks_are_never_crossed_and_ids_ordered() -> None:
    addr = AddressLocator("HB", "1.1", "HB 1.1")
    blocks = (
        Block("Verse text one.", "verse", "en", address=addr),
        Block("Commentary one.", "commentary", "en", address=addr),
        Block("Page one text.", "prose_chapter", "en", page=1, section="Intro"),
        Block("Page two text.", "prose_chapter", "ru", page=2, section="Intro"),
    )
    doc = Document(source=_src(), original=b"", blocks=blocks)
    frags = chunk_document(doc, S)
    assert [f.text for f in frags] == [b.text for b in blocks]
    assert [f.kind for f in frags] == ["verse", "commentary", "prose_chapter", "prose_chapter"]
    assert frags[3].lang == "ru"
    assert frags[2].locator == FileLocator("doc", 1, "Intro")
    assert [f.id for f in frags] == ["doc#0", "doc#1", "doc#2", "doc#3"]
    assert [f.ordinal for f in frags] == [0, 1, 2, 3]


def test_track_fragments_carry_track_locator() -> None:
    doc = Document(source=_src("track_transcript", "talk.srt"), original=b"", cues=tuple(_cues(5)))
    (frag,) = chunk_document(doc, S)
    assert frag.locator == TranscriptLocator("talk.srt", 0, 15000)
    assert frag.kind == "track_transcript"


def test_a_fragment_is_captioned_by_the_section_it_starts_in() -> None:
    """A PDF page whose outline entries start on it: each fragment names the section whose heading it
    starts with, else the one in force (from the page before, or the last heading of the fragment
    before) — not the last section of the page."""
    para = "Words of the keeper's handbook, long enough to fill a piece of it. " * 14
    page = (f"Running header\n1. The Station\n{para}\nThe night watches\n{para}\n"
            f"Duties by day\nBy day the keepers clean the lens\nand the glass. {para}")
    block = Block(page, "prose_chapter", "en", page=2, section="Contents",
                  section_marks=("1. The Station", "The night watches", "Duties by day", "The lens", "Not on the page"))
    frags = chunk_document(Document(source=_src(), original=b"", blocks=(block,)), S)
    got = [(f.text[:24], f.locator.section) for f in frags]  # type: ignore[union-attr]
    assert len(frags) >= 3, got
    # the first piece: a running header, then most of it is "1. The Station"
    assert frags[0].locator.section == "1. The Station", got  # type: ignore[union-attr]
    order = ["1. The Station", "The night watches", "Duties by day"]
    sections = [s for _, s in got]
    assert set(sections) == set(order) and sections == sorted(sections, key=order.index), got  # in page order
    # "the lens" ending a line inside a sentence is no heading; a title absent from the page names nothing
    day = next(f for f in frags if "By day the keepers" in f.text)
    assert day.locator.section == "Duties by day", got  # type: ignore[union-attr]
    plain = Block("Just text. More text.", "prose_chapter", "en", page=3, section="Duties by day")
    (only,) = chunk_document(Document(source=_src(), original=b"", blocks=(plain,)), S)
    assert only.locator == FileLocator("doc", 3, "Duties by day")  # no marks: the section in force


def test_the_demo_handbook_captions_name_the_passage_section(demo_dir: Path, tmp_path: Path) -> None:
    eng = Engine.from_settings(load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"}))
    try:
        eng.ingest([demo_dir / "pdf"])
        frags = eng.store.fragments_of("pdf/keepers-handbook.pdf")
        sec = {f.text.split("\n", 1)[0]: f.locator.section for f in frags}  # type: ignore[union-attr]
        assert sec["1. The Station and the Watch"] == "1. The Station and the Watch"  # was "Duties by day"
        assert sec["Duties by day"] == "Duties by day"
        assert sec["3. The Fog Signal"] == "3. The Fog Signal"  # was "The engine", the page's last section
        lens = next(f for f in frags if f.text.startswith("If the lens stops"))
        assert lens.locator.section == "The clockwork"  # type: ignore[union-attr]  # carried from the piece before
    finally:
        eng.close()
