"""Loaders: one per file type, chosen by suffix. ``load_path`` reads one file into documents.

=============================  ===================================================================
suffix                         loader
=============================  ===================================================================
``.srt`` ``.vtt`` ``.json``    transcripts (one track; paired with audio of the same stem)
``.jsonl`` ``.ndjson``         corpus JSON Lines (one source per row)
``.md`` ``.markdown`` ``.txt`` Markdown / plain text with optional front matter
``.pdf``                       PDF, one block per page
``.docx``                      Word documents: heading path + paragraph (tables, footnotes, changes)
``.epub``                      EPUB books: chapter (spine item) + heading path + paragraph
``.html`` ``.htm`` ``.xhtml``  saved web pages: the main content, heading path + paragraph
``.png .jpg .jpeg .tif .tiff`` scanned pages, read by OCR (a PDF's pages without text too)
=============================  ===================================================================

Audio and video files ride with the transcript of the same stem, or the one a pairing names
(``footnote.corpus.pairing``); one without a transcript is a source of its own when a video holds a text
subtitle track (``footnote.corpus.loaders.video``) or when its speech is recognised (``ingest
--transcribe``: ``footnote.corpus.loaders.audio``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from footnote.corpus.asr import AsrProgress, Transcriber
from footnote.corpus.loaders.audio import load_audio
from footnote.corpus.loaders.base import LoadContext
from footnote.corpus.loaders.docx import DOCX_SUFFIXES, load_docx
from footnote.corpus.loaders.epub import EPUB_SUFFIXES, load_epub
from footnote.corpus.loaders.html import HTML_SUFFIXES, load_html
from footnote.corpus.loaders.jsonl import JSONL_SUFFIXES, load_jsonl_entries
from footnote.corpus.loaders.pdf import PDF_SUFFIXES, load_pdf, pdf_hash
from footnote.corpus.loaders.scans import IMAGE_SUFFIXES, image_hash, load_image
from footnote.corpus.loaders.text import TEXT_SUFFIXES, load_text
from footnote.corpus.loaders.transcripts import TRANSCRIPT_SUFFIXES, find_audio, load_transcript
from footnote.corpus.loaders.video import has_text_subtitles, is_video, load_video_subtitles
from footnote.errors import InputError
from footnote.records.fragments import Document
from footnote.settings import Settings

__all__ = [
    "EARLY_HASH", "LOADERS", "LoadContext", "early_hash", "find_audio", "iter_files", "load_entries", "load_path", "outside_root",
    "supported_suffixes",
]

Loader = Callable[[Path, LoadContext], Iterator[Document]]

LOADERS: dict[str, Loader] = {
    **{s: load_transcript for s in TRANSCRIPT_SUFFIXES},
    **{s: load_text for s in TEXT_SUFFIXES},
    **{s: load_pdf for s in PDF_SUFFIXES},
    **{s: load_docx for s in DOCX_SUFFIXES},
    **{s: load_epub for s in EPUB_SUFFIXES},
    **{s: load_html for s in HTML_SUFFIXES},
    **{s: load_image for s in IMAGE_SUFFIXES},
}


#: Loaders whose work is heavy (OCR) and whose content hash is known from the bytes alone: ingest asks
#: before loading, and an unchanged file is not read again.
EARLY_HASH: dict[str, Callable[[LoadContext, bytes], str]] = {
    **{s: pdf_hash for s in PDF_SUFFIXES},
    **{s: image_hash for s in IMAGE_SUFFIXES},
}


def early_hash(path: Path, ctx: LoadContext) -> str | None:
    """The content hash ``path`` will have, when its loader can tell before loading (see EARLY_HASH)."""
    fn = EARLY_HASH.get(path.suffix.lower())
    if fn is None:
        return None
    try:
        return fn(ctx, path.read_bytes())
    except OSError:
        return None  # the loader reports it


def supported_suffixes() -> tuple[str, ...]:
    return (*LOADERS, *JSONL_SUFFIXES)


def _hidden(path: Path, root: Path) -> bool:
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = (path.name,)
    return any(p.startswith(".") for p in parts)


def outside_root(path: Path, root: Path) -> bool:
    """Whether ``path``, its symlinks followed, lies outside ``root`` (its symlinks followed too)."""
    try:
        return not path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop: never followed either
        return True


def iter_files(
    paths: Iterable[str | Path],
    audio_extensions: tuple[str, ...] | None = None,
    skip_stems: tuple[str, ...] | None = None,
    *,
    refused: list[tuple[Path, str]] | None = None,
    audio_found: list[tuple[Path, Path]] | None = None,
    is_notice: Callable[[Path], object] | None = None,
) -> list[tuple[Path, Path]]:
    """(file, root) for every source file under ``paths``, sorted within each directory.

    A directory is walked recursively (hidden files and folders, unknown suffixes, audio files and
    ``settings.corpus.skip_stems`` such as README.md are skipped); its root is itself. Symlinked
    folders are not descended into, and a symlinked file that resolves outside the folder is not
    followed: it is appended to ``refused`` as ``(path, reason)`` (a link to ``/etc/passwd`` inside a
    corpus folder must never be ingested and served). A file given explicitly is always listed (an
    unsupported one then fails with a clear message), rooted at its parent — naming a link is
    choosing it; an explicit audio file stands for the transcript of the same stem. A missing path is
    listed too, so that it fails as an entry. Audio files met in walked folders are appended to
    ``audio_found`` as ``(file, root)`` (pairing reports those no transcript took).
    """
    defaults = Settings().corpus
    if audio_extensions is None:
        audio_extensions = defaults.audio_extensions
    skip = {s.lower() for s in (defaults.skip_stems if skip_stems is None else skip_stems)}
    audio = {e.lower() for e in audio_extensions}
    known = set(supported_suffixes())
    out: list[tuple[Path, Path]] = []
    seen: set[Path] = set()

    def add(f: Path, root: Path) -> None:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            out.append((f, root))

    for p in map(Path, paths):
        try:
            is_dir = p.is_dir()
        except OSError as e:  # a name the system cannot take (ENAMETOOLONG): the file's own error says so
            if refused is not None:
                refused.append((p, f"cannot be read: {e.strerror or e}"))
                continue
            is_dir = False
        if is_dir:
            for f in sorted(p.rglob("*")):
                if _hidden(f, p) or f.name.split(".")[0].lower() in skip:
                    continue
                if f.is_symlink() and f.is_dir():  # never descended into; said when it leads outside
                    if refused is not None and outside_root(f, p):
                        refused.append((f, f"symlinked folder to {os.path.realpath(f)}, outside {p}: not followed"))
                    continue
                if f.is_dir():  # rglob passes over a folder it cannot list without a word: say so
                    try:
                        with os.scandir(f):
                            pass
                    except OSError as e:
                        if refused is not None:
                            refused.append((f, f"folder cannot be read: {e.strerror or e}"))
                    continue
                suffix = f.suffix.lower()
                if suffix not in known and suffix not in audio:
                    continue
                if f.is_symlink() and not f.exists():  # a broken link is a file the user meant: say so
                    if refused is not None:
                        refused.append((f, f"broken symlink: its target {os.readlink(f)} does not exist"))
                    continue
                if f.is_symlink() and outside_root(f, p):
                    if refused is not None:
                        refused.append((f, f"symlink to {os.path.realpath(f)}, outside {p}: not followed"))
                    continue
                if not f.is_file():
                    continue
                if suffix in known:
                    if is_notice is not None and is_notice(f):  # a licence or notice (the inventory says so)
                        continue
                    add(f, p)
                elif audio_found is not None:
                    audio_found.append((f, p))
        elif p.suffix.lower() in audio:
            transcripts = [p.with_suffix(s) for s in TRANSCRIPT_SUFFIXES if p.with_suffix(s).is_file()]
            add(transcripts[0] if transcripts else p, p.parent)
        else:
            add(p, p.parent)
    return out


def load_entries(
    path: Path,
    *,
    settings: Settings,
    kind: str | None = None,
    lang: str | None = None,
    root: Path | None = None,
    collection: str = "",
    known_ids: Mapping[str, str] | None = None,
    audio: Path | None = None,
    transcriber: Transcriber | None = None,
    asr_progress: AsrProgress | None = None,
    pages_read: Callable[[Path, int, int], None] | None = None,
) -> Iterator[Document | InputError]:
    """Documents of one file; a bad JSONL line is yielded as an InputError and the file goes on.
    A file-level problem raises InputError. ``collection``, ``known_ids`` and ``audio``: see
    :class:`LoadContext`; ``pages_read`` hears of a scan's pages as OCR reads them. With a ``transcriber`` an audio file is recognised into a machine-transcribed
    track (:mod:`footnote.corpus.loaders.audio`); without one it is an error."""
    ctx = LoadContext(settings=settings, kind=kind, lang=lang, root=root if root is not None else path.parent,
                      collection=collection, known_ids=known_ids or {}, audio=audio, pages_read=pages_read)
    suffix = path.suffix.lower()
    try:
        exists = path.exists()
    except OSError as e:  # e.g. a name longer than the system allows
        raise InputError(path, f"cannot be read: {e.strerror or e}") from e
    if not exists:
        raise InputError(path, "no such file or directory")
    if suffix in JSONL_SUFFIXES:
        yield from load_jsonl_entries(path, ctx)
        return
    loader = LOADERS.get(suffix)
    if loader is None:
        if suffix in {e.lower() for e in settings.corpus.audio_extensions}:
            if is_video(path) and has_text_subtitles(path):  # a human's subtitles win over recognition
                yield from load_video_subtitles(path, ctx)
                return
            if transcriber is not None:
                yield from load_audio(path, ctx, transcriber, asr_progress)
                return
            what = "a video needs a transcript of the same stem (.srt, .vtt or .json), a text subtitle track " \
                "inside it," if is_video(path) else "an audio file needs a transcript of the same stem (.srt, .vtt or .json),"
            raise InputError(path, f"{what} or name its transcript with it: footnote ingest TRANSCRIPT --audio FILE; "
                             "or recognise its speech with --transcribe")
        raise InputError(path, f"unsupported file type {suffix or '(no suffix)'!r} "
                         f"(supported: {', '.join(sorted(supported_suffixes()))})")
    yield from loader(path, ctx)


def load_path(
    path: Path,
    *,
    settings: Settings,
    kind: str | None = None,
    lang: str | None = None,
    root: Path | None = None,
) -> Iterator[Document]:
    """Documents of one file, choosing the loader by file type. Raises InputError at the first problem
    (for JSONL: at the first bad line, after the good rows before it)."""
    for item in load_entries(path, settings=settings, kind=kind, lang=lang, root=root):
        if isinstance(item, InputError):
            raise item
        yield item
