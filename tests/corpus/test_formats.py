"""Archives as they are: Word, EPUB, saved web pages, video lectures and scans (OCR), each loaded from a
real file (``tests/data/formats``: made with pandoc and ffmpeg, see its ``sources/README.md``; the scans
are the Tesseract project's, ``../shared/data/scans``) and cited at its own place."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from footnote.corpus.chunkers import chunk_document
from footnote.corpus.loaders import iter_files, load_path
from footnote.corpus.ocr import Ocr, page_from_tsv
from footnote.engine import Engine
from footnote.errors import InputError
from footnote.records.fragments import FileLocator, Fragment, TranscriptLocator, page_confidence
from footnote.settings import Settings, load_settings

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"
S = Settings().with_overrides(**{"ocr.cache_dir": ""})  # every page really read (the cache has its own test)


def _frags(path: Path, settings: Settings = S, **kw: object) -> tuple[object, list[Fragment]]:
    docs = list(load_path(path, settings=settings, **kw))  # type: ignore[arg-type]
    assert len(docs) == 1
    return docs[0].source, chunk_document(docs[0], settings)


def _having(frags: list[Fragment], words: str) -> Fragment:
    found = [f for f in frags if words in f.text]
    assert found, f"no fragment has {words!r}: {[f.text[:60] for f in frags]}"
    return found[0]


# --- Word --------------------------------------------------------------------------------------------


def test_docx_keeps_headings_tables_footnotes_and_the_accepted_text() -> None:
    src, frags = _frags(FORMATS / "report.docx")
    assert src.title == "The Keeper’s Report for 1887" and src.meta["author"] == "Thomas Varcoe"  # type: ignore[attr-defined]
    assert src.media_type.endswith("wordprocessingml.document") and src.lang == "en"  # type: ignore[attr-defined]
    text = "\n".join(f.text for f in frags)
    # the footnote stays with the paragraph that cites it, its mark a superscript (never "[1]": answers cite so)
    summary = _having(frags, "without a single night")
    # the mark before the full stop: "1887.¹" would be read as a citation of passage 1 if an answer quoted it
    assert "1887¹." in summary.text and "¹ Except the night of 14 March" in summary.text and "[1]" not in text
    assert ".¹" not in text and "Thomas Varcoe" not in text  # the author under the title is metadata, not text
    assert summary.locator == FileLocator("report.docx", None, "Summary", 2)
    # tables as rows, under their heading
    stores = _having(frags, "Mineral oil | 400 gallons")
    assert stores.locator == FileLocator("report.docx", None, "Stores", 4) and "Wicks | 36 dozen" in stores.text
    # a tracked change resolved to the accepted text; a sub-heading makes a path
    repairs = _having(frags, "allowance for the year was fifty pounds")
    assert "forty pounds" not in text and "was forty" not in text
    assert repairs.locator == FileLocator("report.docx", None, "Stores › Repairs", 10)


def test_docx_bad_files_fail_alone_naming_the_file(tmp_path: Path) -> None:
    good = (FORMATS / "report.docx").read_bytes()
    (tmp_path / "cut.docx").write_bytes(good[: len(good) // 2])
    (tmp_path / "old.docx").write_bytes(b"\xd0\xcf\x11\xe0 an old binary .doc saved with the wrong name")
    (tmp_path / "empty.docx").write_bytes(b"")
    for name, problem in (("cut.docx", "corrupt"), ("old.docx", "not a Word document"), ("empty.docx", "empty")):
        with pytest.raises(InputError) as e:
            list(load_path(tmp_path / name, settings=S))
        assert name in str(e.value) and problem in str(e.value)


# --- EPUB --------------------------------------------------------------------------------------------


def test_epub_book_chapter_paragraph_from_its_own_metadata() -> None:
    src, frags = _frags(FORMATS / "book.epub")
    assert src.title == "Записки смотрителя маяка" and src.lang == "ru"  # type: ignore[attr-defined]
    assert src.meta["author"] == "Пётр Карпов" and src.media_type == "application/epub+zip"  # type: ignore[attr-defined]
    assert src.meta["chapters"] == "2" and "Пётр Карпов" not in " ".join(f.text for f in frags)  # type: ignore[attr-defined]  # no title page
    winter = _having(frags, "Зимой лёд намерзал")
    # the chapter's title from the book's table of contents; its own heading is ¶ 1, so its text starts at ¶ 2
    assert winter.locator == FileLocator("book.epub", None, "Глава вторая. Зима", 2)
    night = _having(frags, "подрезать фитили")
    assert night.locator == FileLocator("book.epub", None, "Глава первая. Прибытие › Первая ночь", 4)


def _rezip(src: Path, dst: Path, extra: dict[str, str]) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item, zin.read(item.filename))
        for name, text in extra.items():
            zout.writestr(name, text)


ENC = """<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
 xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="{alg}"/>
 <enc:CipherData><enc:CipherReference URI="EPUB/text/ch001.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>"""


def test_epub_drm_is_refused_but_font_obfuscation_is_not(tmp_path: Path) -> None:
    _rezip(FORMATS / "book.epub", tmp_path / "drm.epub",
           {"META-INF/encryption.xml": ENC.format(alg="http://www.w3.org/2001/04/xmlenc#aes128-cbc")})
    with pytest.raises(InputError, match="DRM") as e:
        list(load_path(tmp_path / "drm.epub", settings=S))
    assert "drm.epub" in str(e.value)
    _rezip(FORMATS / "book.epub", tmp_path / "fonts.epub",
           {"META-INF/encryption.xml": ENC.format(alg="http://www.idpf.org/2008/embedding")})
    src, _ = _frags(tmp_path / "fonts.epub")
    assert src.title == "Записки смотрителя маяка"  # type: ignore[attr-defined]
    (tmp_path / "text.epub").write_text("not a zip", encoding="utf-8")
    with pytest.raises(InputError, match="not a readable zip archive"):
        list(load_path(tmp_path / "text.epub", settings=S))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
    (tmp_path / "hollow.epub").write_bytes(buf.getvalue())
    with pytest.raises(InputError, match="container"):
        list(load_path(tmp_path / "hollow.epub", settings=S))


# --- saved web pages ---------------------------------------------------------------------------------


def test_html_main_content_only_with_heading_paths() -> None:
    src, frags = _frags(FORMATS / "marrowick-light.html")
    assert src.title == "The Marrowick Light" and src.media_type == "text/html" and src.lang == "en"  # type: ignore[attr-defined]
    text = "\n".join(f.text for f in frags)
    for furniture in ("window.track", "Archive", "Subscribe", "All rights reserved", "Fog signals", "body{}"):
        assert furniture not in text, furniture
    lamp = _having(frags, "colza oil until 1879")
    assert lamp.locator.section == "The lamp"  # type: ignore[union-attr]  # the h1 repeating the title is no level
    assert "1879 | mineral oil" in text
    keepers = _having(frags, "alternating watches")
    assert keepers.locator.section == "The keepers" and keepers.locator.para == 4  # type: ignore[union-attr]


def test_html_without_main_content_is_read_whole_and_an_empty_page_fails(tmp_path: Path) -> None:
    page = tmp_path / "index.htm"
    page.write_text('<html lang="ru"><body><nav>Меню</nav><div>Смотритель зажигал лампу на закате.</div>'
                    "<script>track()</script></body></html>", encoding="utf-8")
    src, frags = _frags(page)
    assert src.lang == "ru" and [f.text for f in frags] == ["Смотритель зажигал лампу на закате."]  # type: ignore[attr-defined]
    blank = tmp_path / "blank.html"
    blank.write_text("<html><head><script>x()</script></head><body><img src=a.png></body></html>", encoding="utf-8")
    with pytest.raises(InputError, match="no text") as e:
        list(load_path(blank, settings=S))
    assert "blank.html" in str(e.value)


# --- video lectures ----------------------------------------------------------------------------------


def test_video_with_its_own_subtitle_track_is_a_track() -> None:
    src, frags = _frags(FORMATS / "lecture.mp4")
    assert src.media_type == "video/mp4" and src.lang == "en"  # type: ignore[attr-defined]
    assert all(isinstance(f.locator, TranscriptLocator) for f in frags)
    bell = _having(frags, "In fog the bell was rung every five minutes.")
    assert bell.locator == TranscriptLocator("lecture.mp4", 0, 6000)


def test_video_pairs_with_a_transcript_beside_it_and_a_silent_one_fails_alone(tmp_path: Path) -> None:
    shutil.copy(FORMATS / "lecture.webm", tmp_path / "talk.webm")  # its own track is WebVTT; the SRT beside wins
    (tmp_path / "talk.srt").write_text("1\n00:00:01,000 --> 00:00:03,000\nThe fog bell was cast in Bristol.\n",
                                       encoding="utf-8")
    shutil.copy(FORMATS / "silent.mp4", tmp_path / "silent.mp4")
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"})
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([tmp_path])
        by = {Path(e.path).name: e for e in report.entries}
        assert by["talk.srt"].status.value == "added", report.summary()
        src = engine.store.get_source(by["talk.srt"].source_id)
        assert src is not None and src.media_type == "video/webm" and src.original_name == "talk.webm"
        frags = engine.store.fragments_of(src.id)
        assert frags[0].locator == TranscriptLocator(src.id, 1000, 3000)
        assert "silent.mp4" in " ".join(report.unpaired_audio)  # no transcript, no subtitles: named, not ingested
    with pytest.raises(InputError, match="a video needs a transcript") as e:
        list(load_path(tmp_path / "silent.mp4", settings=S))
    assert "silent.mp4" in str(e.value)


# --- scans (OCR) -------------------------------------------------------------------------------------

needs_tesseract = pytest.mark.usefixtures("ocr_installed")


def test_tesseract_tsv_becomes_paragraphs_with_word_boxes() -> None:
    head = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        (1, 1, 1, 1, 10, 10, 50, 20, 96, "The"), (1, 1, 1, 2, 70, 10, 80, 20, 95, "keeper's"),
        (1, 1, 1, 3, 160, 10, 60, 20, 91, "lamp-"), (1, 1, 2, 1, 10, 40, 60, 20, 93, "room"),
        (1, 1, 2, 2, 80, 40, 60, 20, 12, "~%"),  # noise below ocr.min_confidence
        (1, 2, 1, 1, 10, 90, 60, 20, 90, "Next"),
    ]
    tsv = "\n".join([head, *("\t".join(map(str, (5, 1, *r[:5], r[5], r[6], r[7], r[8], r[9]))) for r in rows)])
    page = page_from_tsv(tsv, 30.0)
    assert page.text == "The keeper's lamproom\n\nNext"
    assert [w.text for w in page.words] == ["The", "keeper's", "lamp-", "room", "Next"]
    assert page.words[1].box == (70, 10, 150, 30) and page.confidence == pytest.approx((96 + 95 + 91 + 93 + 90) / 5, abs=0.1)


@needs_tesseract
def test_a_scanned_image_is_read_by_ocr_and_says_so(shared_dir: Path) -> None:
    src, frags = _frags(shared_dir / "data/scans/phototest.tif")
    meta = src.meta  # type: ignore[attr-defined]
    assert src.media_type == "image/tiff" and meta["ocr"].startswith("tesseract ") and meta["ocr_pages"] == "1"  # type: ignore[attr-defined]
    assert (page_confidence(meta, 1) or 0) > 80
    quick = _having(frags, "quick brown dog jumped over the lazy fox")
    assert quick.locator == FileLocator("phototest.tif", 1, None)


@needs_tesseract
def test_devanagari_is_found_by_its_script(shared_dir: Path) -> None:
    src, frags = _frags(shared_dir / "data/scans/devatest.png")
    assert "सभी मनुष्यों को गौरव" in " ".join(f.text for f in frags)
    assert (page_confidence(src.meta, 1) or 0) > 80 and src.meta["ocr_models"] == "1:Devanagari"  # type: ignore[attr-defined]


def _mixed_pdf(path: Path, scan: Path) -> None:
    """A PDF whose page 1 has a text layer and page 2 is a scanned image (reportlab)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    c.setFont("Helvetica", 12)
    c.drawString(72, 760, "The first page has a text layer and is never read by OCR.")
    c.showPage()
    c.drawImage(str(scan), 40, 300, width=640 * 0.75, height=480 * 0.75)
    c.showPage()
    c.save()


@needs_tesseract
def test_a_pdf_gets_ocr_only_on_its_pages_without_text(shared_dir: Path, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "photo.png"
    Image.open(shared_dir / "data/scans/phototest.tif").convert("L").save(png)
    _mixed_pdf(tmp_path / "mixed.pdf", png)
    src, frags = _frags(tmp_path / "mixed.pdf")
    assert src.meta["ocr_pages"] == "2"  # type: ignore[attr-defined]
    assert _having(frags, "never read by OCR").locator.page == 1  # type: ignore[union-attr]
    assert _having(frags, "lazy fox").locator.page == 2  # type: ignore[union-attr]
    off = S.with_overrides(**{"ocr.enabled": False})
    src, frags = _frags(tmp_path / "mixed.pdf", off)
    assert "ocr" not in src.meta and all(f.locator.page == 1 for f in frags)  # type: ignore[attr-defined,union-attr]


@needs_tesseract
def test_an_image_with_no_text_fails_alone(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("L", (400, 300), 255).save(tmp_path / "blank.png")
    (tmp_path / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 truncated")
    for name, problem in (("blank.png", "no text found"), ("broken.jpg", "image")):
        with pytest.raises(InputError, match=problem) as e:
            list(load_path(tmp_path / name, settings=S))
        assert name in str(e.value)


def test_walking_a_folder_finds_every_format() -> None:
    recordings: list[tuple[Path, Path]] = []
    names = {f.name for f, _ in iter_files([FORMATS], audio_found=recordings)}
    assert {"report.docx", "book.epub", "marrowick-light.html"} <= names
    assert {"lecture.mp4", "lecture.webm", "silent.mp4"} <= {f.name for f, _ in recordings}  # videos ride as recordings


@needs_tesseract
def test_an_unchanged_scan_is_not_read_again_and_a_changed_docx_replaces_its_source(shared_dir: Path,
                                                                                     tmp_path: Path) -> None:
    import docx

    folder = tmp_path / "letters"
    folder.mkdir()
    shutil.copy(shared_dir / "data/scans/phototest.tif", folder / "phototest.tif")
    shutil.copy(shared_dir / "data/scans/devatest.png", folder / "devatest.png")  # hi: its stored hash carries the language
    shutil.copy(FORMATS / "report.docx", folder / "report.docx")
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash",
                                      "ocr.cache_dir": ""})
    with Engine.from_settings(settings) as engine:
        first = {Path(e.path).name: e for e in engine.ingest([folder]).entries}
        assert {e.status.value for e in first.values()} == {"added"}
    # no Tesseract at all now: an unchanged scan must not need it
    gone = settings.with_overrides(**{"ocr.command": str(tmp_path / "no-tesseract")})
    d = docx.Document(str(folder / "report.docx"))
    d.add_paragraph("A postscript: the new lens arrived from Birmingham in December.")
    d.save(str(folder / "report.docx"))
    with Engine.from_settings(gone) as engine:
        again = {Path(e.path).name: e for e in engine.ingest([folder]).entries}
        assert again["phototest.tif"].status.value == "unchanged" and again["devatest.png"].status.value == "unchanged"
        assert again["phototest.tif"].fragments == first["phototest.tif"].fragments
        assert again["report.docx"].status.value == "replaced"
        assert again["report.docx"].source_id == first["report.docx"].source_id
        texts = " ".join(f.text for f in engine.store.fragments_of(first["report.docx"].source_id))
        assert "new lens arrived from Birmingham" in texts


@needs_tesseract
def test_pages_are_kept_as_they_are_read_so_a_stopped_scan_resumes(shared_dir: Path, tmp_path: Path) -> None:
    from PIL import Image

    from footnote.corpus.ocr import page_bytes

    ocr = Ocr(S.ocr.model_copy(update={"cache_dir": str(tmp_path / "cache")}))
    frames = [Image.open(shared_dir / "data/scans/phototest.tif").convert("L"),
              Image.open(shared_dir / "data/scans/eurotext.tif").convert("L")]
    rendered: list[int] = []

    def render(n: int) -> object:
        def go() -> tuple[bytes, int, int, int]:
            rendered.append(n)
            return page_bytes(frames[n - 1]), frames[n - 1].width, frames[n - 1].height, 300
        return go

    first = dict(ocr.recognise_all([(1, render(1))], doc_sha="ab" * 32))  # stopped after page 1
    assert rendered == [1] and "lazy fox" in first[1].text
    both = dict(ocr.recognise_all([(1, render(1)), (2, render(2))], doc_sha="ab" * 32))
    assert rendered == [1, 2] and both[1] == first[1] and "faulen Hund" in both[2].text  # page 1 not read again
    gone = Ocr(ocr.settings.model_copy(update={"command": str(tmp_path / "no-tesseract")}))
    assert dict(gone.recognise_all([(1, render(1)), (2, render(2))], doc_sha="ab" * 32)) == both  # no Tesseract needed
    assert rendered == [1, 2]
    other = Ocr(ocr.settings.model_copy(update={"page_seg_mode": 6}))  # other settings: another reading
    assert other.cached("ab" * 32, 1) is None


WIKI = """<!DOCTYPE html><html lang="ru"><head><meta charset="windows-1251"><title>Кронштадтский маяк — Википедия</title>
<script>RLCONF={}</script></head><body><div id="mw-navigation"><ul><li>Статья</li><li>Править</li></ul></div>
<div id="content" role="main"><h1 id="firstHeading">Кронштадтский маяк</h1>
<div id="siteSub">Материал из Википедии — свободной энциклопедии</div><div class="mw-parser-output">
<p><b>Кронштадтский маяк</b> — маяк на острове Котлин в Финском заливе, построенный в 1888 году.</p>
<div id="toc" class="toc"><h2>Содержание</h2><ul><li>1 История</li><li>2 Устройство</li></ul></div>
<h2><span class="mw-headline">История</span><span class="mw-editsection">[<a href="?action=edit">править</a>]</span></h2>
<p>Новый маяк из кирпича был зажжён осенью 1888 года, и его огонь был виден за четырнадцать миль.<sup class="reference"><a href="#cite_note-1">[1]</a></sup></p>
<h2>Примечания</h2><ol class="references"><li id="cite_note-1">Морской сборник, 1889, № 3.</li></ol>
</div></div><div id="footer"><ul><li>Текст доступен по лицензии Creative Commons.</li></ul></div>
<div class="cookie-banner">Мы используем файлы cookie.</div></body></html>"""


def test_a_wiki_page_loses_its_furniture_and_its_reference_marks_are_never_citation_shapes(tmp_path: Path) -> None:
    page = tmp_path / "kronshtadt.html"
    page.write_bytes(WIKI.encode("cp1251"))
    src, frags = _frags(page)
    assert src.title == "Кронштадтский маяк" and src.lang == "ru"  # type: ignore[attr-defined]
    text = "\n".join(f.text for f in frags)
    for furniture in ("Материал из Википедии", "Содержание", "править", "Править", "cookie", "лицензии", "RLCONF"):
        assert furniture not in text and all(furniture not in (f.locator.section or "") for f in frags), furniture  # type: ignore[union-attr]
    history = _having(frags, "четырнадцать миль")
    assert history.locator.section == "История"  # type: ignore[union-attr]  # not "Кронштадтский маяк › История[править]"
    # Wikipedia's "[1]" would be read as a citation of passage 1; a mark after the full stop too
    assert "миль¹." in history.text and "[1]" not in text and ".¹" not in text
    assert "¹ Морской сборник, 1889, № 3." in text  # the note keeps its number


def test_epub_footnotes_keep_their_marks_and_lose_their_back_links(tmp_path: Path) -> None:
    chapter = ('<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
               "<h1>Глава первая</h1><p>Керосина хватает до марта, если экономить каждую каплю."
               '<a href="#fn1" class="footnote-ref" epub:type="noteref">1</a></p>'
               '<section epub:type="footnotes"><ol><li id="fn1" epub:type="footnote"><p>В 1903 году керосин подорожал.'
               '<a href="#fnref1" role="doc-backlink">↩︎</a></p></li></ol></section></body></html>')
    src_book = FORMATS / "book.epub"
    with zipfile.ZipFile(src_book) as zin, zipfile.ZipFile(tmp_path / "notes.epub", "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            zout.writestr(item, chapter.encode() if item.filename.endswith("ch001.xhtml") else data)
    _, frags = _frags(tmp_path / "notes.epub")
    text = "\n".join(f.text for f in frags)
    assert "каплю¹." in text and "¹ В 1903 году керосин подорожал." in text and "↩" not in text


def test_a_section_in_another_language_gets_its_own() -> None:
    import docx

    from footnote.corpus.loaders.base import LoadContext, block_lang_of

    ctx = LoadContext(settings=S, kind=None, lang=None, root=FORMATS)
    lang_of = block_lang_of(ctx, "en")
    ru = "Смотритель маяка зажигал лампу за полчаса до заката и гасил её на рассвете, а зимой счищал лёд со стёкол " * 2
    assert lang_of(ru) == "ru" and lang_of("Короткая строка.") == "en"  # a short one keeps the document's
    assert block_lang_of(LoadContext(settings=S, kind=None, lang="de", root=FORMATS), "en")(ru) == "de"  # --lang wins
    assert docx  # python-docx is installed with the project


def test_ocr_keeps_each_word_in_one_script_and_a_sentence_in_one_paragraph() -> None:
    from footnote.corpus.ocr import one_script

    english = ["In", "47", "В.С.", "General", "Ratko", "Ма", "said", "the", "Dubrovnik", "walls", "were", "safe", "for", "the", "tourist", "season", "this", "year"]
    fixed = one_script(english)
    assert fixed[2] == "B.C." and fixed[5] == "Ma" and fixed[0] == "In"  # Cyrillic look-alikes on a Latin page
    russian = ["Смотритель", "зажигал", "лампу", "в", "1887", "году", "рядом", "c", "маяком", "Ha", "мысе", "Сторожевом"]
    assert one_script(russian)[7] == "с" and one_script(russian)[9] == "На"
    assert one_script(["моРЕр", "lighthouse"]) == ["моРЕр", "lighthouse"]  # no look-alike for м: left as read
    head = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [(1, 1, 1, 1, "the"), (1, 1, 1, 2, "fog"), (1, 1, 1, 3, "signal"), (1, 1, 1, 4, "failed"),
            (1, 2, 1, 1, "of"), (1, 2, 1, 2, "the"), (1, 2, 1, 3, "fourteenth."), (1, 3, 1, 1, "Next")]
    tsv = "\n".join([head, *(f"5\t1\t{b}\t{p}\t{ln}\t{w}\t0\t0\t10\t10\t90\t{t}" for b, p, ln, w, t in rows)])
    assert page_from_tsv(tsv, 30.0).text == "the fog signal failed of the fourteenth.\n\nNext"


# --- hostile files (an attack on the loaders) ----------------------------------------------------------


def test_paragraph_numbers_hold_for_short_paragraphs() -> None:
    from footnote.corpus.loaders.markup import Para, blocks_of
    from footnote.records.fragments import Document, Source

    paras = [Para("Heading", 1)] + [Para(f"Line {i} is short.") for i in range(1, 301)]
    src = Source("d.docx", "prose_chapter", "t", "en", "h", "b", "d.docx", "x")
    frags = chunk_document(Document(src, b"", blocks=tuple(blocks_of(paras, kind="prose_chapter", lang="en"))), S)
    assert len(frags) > 3
    for f in frags:  # "Line N" is paragraph N + 1 (the heading is the first)
        n = int(f.text.split()[1])
        assert f.locator.para == n + 1, (f.locator, f.text[:20])  # type: ignore[union-attr]


def test_zip_bombs_and_repeated_chapters_are_refused_or_read_once(tmp_path: Path) -> None:
    small = S.with_overrides(**{"corpus.max_unpacked_bytes": 200_000})
    good = (FORMATS / "report.docx").read_bytes()
    with zipfile.ZipFile(io.BytesIO(good)) as zin, zipfile.ZipFile(tmp_path / "bomb.docx", "w", zipfile.ZIP_DEFLATED) as z:
        for item in zin.infolist():
            z.writestr(item, zin.read(item.filename))
        z.writestr("word/media/zeros.bin", b"\0" * 1_000_000)  # 1 MB of zeros: a kilobyte zipped
    with pytest.raises(InputError, match="max_unpacked_bytes") as e:
        list(load_path(tmp_path / "bomb.docx", settings=small))
    assert "bomb.docx" in str(e.value)
    # an EPUB whose spine names one chapter ten thousand times: read once
    with zipfile.ZipFile(FORMATS / "book.epub") as zin, zipfile.ZipFile(tmp_path / "spine.epub", "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("content.opf"):
                text = data.decode()
                ref = '<itemref idref="ch001_xhtml" />'
                assert ref in text, text
                data = text.replace(ref, ref * 10_000).encode()
            zout.writestr(item, data)
    src, frags = _frags(tmp_path / "spine.epub")
    assert src.meta["chapters"] == "2" and sum("подрезать фитили" in f.text for f in frags) == 1  # type: ignore[attr-defined]
    tiny = S.with_overrides(**{"corpus.max_html_bytes": 1024})
    with pytest.raises(InputError, match="max_html_bytes"):
        list(load_path(FORMATS / "book.epub", settings=tiny))
    with pytest.raises(InputError, match="max_html_bytes"):
        list(load_path(FORMATS / "marrowick-light.html", settings=tiny))


def test_odd_declarations_in_a_page_are_not_trusted(tmp_path: Path) -> None:
    from footnote.corpus.loaders.base import declared_lang

    assert [declared_lang(v) for v in ("en-GB", "RU", "pt_BR", "<b>weird lang", "", None, "x-klingon")] == \
        ["en", "ru", "pt", None, None, None, None]
    page = tmp_path / "odd.html"
    page.write_bytes(b'<html lang="&lt;b&gt;weird"><head><meta charset="undefined"></head><body><p>The keeper lit the '
                     b"lamp at dusk and trimmed the wicks at midnight, as the Board's rules required.</p></body></html>"
)
    src, frags = _frags(page)
    assert src.lang == "en" and "trimmed the wicks" in frags[0].text  # type: ignore[attr-defined]


@needs_tesseract
def test_images_too_large_or_with_too_many_pages_are_refused_undecoded(tmp_path: Path) -> None:
    from PIL import Image

    pages = [Image.new("1", (200, 100), 1) for _ in range(5)]
    pages[0].save(tmp_path / "many.tif", save_all=True, append_images=pages[1:])
    with pytest.raises(InputError, match=r"ocr\.max_pages"):
        list(load_path(tmp_path / "many.tif", settings=S.with_overrides(**{"ocr.max_pages": 4})))
    Image.new("1", (4000, 3000), 1).save(tmp_path / "poster.png")
    with pytest.raises(InputError, match="max_page_pixels") as e:
        list(load_path(tmp_path / "poster.png", settings=S.with_overrides(**{"ocr.max_page_pixels": 10_000_000})))
    assert "poster.png" in str(e.value)


def test_a_blank_page_never_reaches_tesseract(tmp_path: Path) -> None:
    from PIL import Image

    from footnote.corpus.ocr import page_bytes

    gone = Ocr(S.ocr.model_copy(update={"command": "true"}))  # "tesseract" that reads nothing: never asked
    gone._checked = True  # the blank test comes before any call
    page = gone.recognise(page_bytes(Image.new("L", (2480, 3508), 250)), 300)
    assert page.text == "" and page.words == () and (page.width, page.height) == (2480, 3508)


def test_a_video_named_like_an_ffmpeg_protocol_is_read_as_a_file(tmp_path: Path) -> None:
    shutil.copy(FORMATS / "lecture.mp4", tmp_path / "lecture.mp4")
    (tmp_path / "pipe:0.mkv").write_bytes(b"not a video")  # "pipe:0" would read standard input
    (tmp_path / "concat:lecture.mp4|lecture.mp4.mkv").write_bytes(b"not a video either")
    for name in ("pipe:0.mkv", "concat:lecture.mp4|lecture.mp4.mkv"):
        with pytest.raises(InputError) as e:
            list(load_path(tmp_path / name, settings=S))
        assert name in str(e.value) and "subtitle" in str(e.value)


@needs_tesseract
def test_ingest_tells_the_pages_a_scan_has_read(shared_dir: Path, tmp_path: Path) -> None:
    from PIL import Image

    from footnote.commands.ingest_view import StageDisplay
    from footnote.corpus.ingest_report import IngestProgress

    frames = [Image.open(shared_dir / "data/scans/phototest.tif").convert("L"),
              Image.open(shared_dir / "data/scans/eurotext.tif").convert("L")]
    (tmp_path / "scans").mkdir()
    frames[0].save(tmp_path / "scans" / "two.tif", save_all=True, append_images=frames[1:])
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash", "ocr.cache_dir": ""})
    seen: list[IngestProgress] = []
    with Engine.from_settings(settings) as engine:
        assert engine.ingest([tmp_path / "scans"], events=seen.append).ok
    ocr = [(p.ocr.pages_done, p.ocr.pages_total) for p in seen if p.stage == "ocr" and p.ocr is not None]
    assert ocr == [(1, 2), (2, 2)]
    line = io.StringIO()
    display = StageDisplay(line, say_searchable=False)
    display.tty, display.min_gap = True, 0.0
    display.ingest(next(p for p in seen if p.stage == "ocr"))
    assert "OCR two.tif page 1/2" in line.getvalue()


@needs_tesseract
def test_a_new_scan_is_searchable_as_its_pages_are_read_and_whole_or_absent_after(shared_dir: Path,
                                                                                  tmp_path: Path) -> None:
    from PIL import Image

    from footnote.corpus.ingest_report import IngestProgress

    photo = Image.open(shared_dir / "data/scans/phototest.tif").convert("L")
    euro = Image.open(shared_dir / "data/scans/eurotext.tif").convert("L")
    (tmp_path / "ok").mkdir()
    photo.save(tmp_path / "ok" / "three.tif", save_all=True, append_images=[euro, photo])
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash", "ocr.cache_dir": "",
                                      "ocr.searchable_every_pages": 1, "ocr.workers": 1})
    seen: dict[int, tuple[str, int]] = {}  # pages read → (what the store holds then, its fragments)
    with Engine.from_settings(settings) as engine:
        sid = "ok/three.tif"

        def watch(p: IngestProgress) -> None:
            if p.stage == "ocr" and p.ocr is not None:
                src = engine.store.get_source(sid)
                seen[p.ocr.pages_done] = (src.meta.get("partial", "whole") if src else "absent",
                                          len(engine.store.fragments_of(sid)) if src else 0)

        report = engine.ingest([tmp_path / "ok"], events=watch)
        assert report.ok and report.entries[0].status.value == "added", report.summary()
        src = engine.store.get_source(sid)
        assert src is not None and "partial" not in src.meta and not src.content_hash.startswith("partial:")
        assert {f.locator.page for f in engine.store.fragments_of(sid)} == {1, 2, 3}  # type: ignore[union-attr]
    assert seen[1][0] == "absent"  # told of page 1 before the part is written
    assert seen[2] == ("1 pages read so far", seen[2][1]) and seen[2][1] >= 1  # page 1 searchable while 2 is read
    assert seen[3][0] == "2 pages read so far"

    # a scan that fails on its third page leaves nothing behind: the store is as it was
    (tmp_path / "bad").mkdir()
    photo.save(tmp_path / "bad" / "broken.tif", save_all=True, append_images=[euro, Image.new("L", (4000, 3000), 255)])
    small = settings.with_overrides(**{"ocr.max_page_pixels": 10_000_000})
    with Engine.from_settings(small) as engine:
        report = engine.ingest([tmp_path / "bad"])
        assert report.entries[0].status.value == "failed" and "max_page_pixels" in (report.entries[0].error or "")
        assert engine.store.get_source("bad/broken.tif") is None
        assert engine.store.get_source("ok/three.tif") is not None  # the other scan untouched
