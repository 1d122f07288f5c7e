"""Every format opens at its place over real HTTP: a Word document's paragraph on the rendered page, a
saved web page never run on the server's origin, a video lecture served in ranges, a scan's page image
with the passage's OCR word boxes lit — and citations that say a page was read by OCR."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from serverkit import LiveServer

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"


def _url(source_id: str) -> str:
    return "/api/sources/" + "/".join(quote(p, safe="") for p in source_id.split("/"))


def _ask(live: LiveServer, question: str) -> dict:
    r = httpx.post(live.url + "/api/ask", json={"question": question, "stream": False}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_word_paragraph_opens_on_the_rendered_page_lit(archive: LiveServer) -> None:
    frags = archive.engine.store.fragments_of("archive/report.docx")
    repairs = next(f for f in frags if "fifty pounds" in f.text)
    r = httpx.get(archive.url + _url("archive/report.docx") + "/view", params={"f": repairs.id})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    anchor = f'id="p-{repairs.ordinal}"'
    at = page.index(anchor)
    assert "¶ 10" in page[at : at + 200] and "Stores › Repairs" in page[:at]
    assert f'class="passage cited" data-fragment="{repairs.id}"' in page
    assert "<script" not in page
    original = httpx.get(archive.url + _url("archive/report.docx"))
    assert original.status_code == 200 and original.content == (FORMATS / "report.docx").read_bytes()
    assert original.headers["content-type"].startswith("application/vnd.openxmlformats")


def test_an_epub_opens_at_its_chapter_and_its_original_is_the_book(archive: LiveServer) -> None:
    frags = archive.engine.store.fragments_of("archive/book.epub")
    winter = next(f for f in frags if "Зимой" in f.text)
    page = httpx.get(archive.url + _url("archive/book.epub") + "/view", params={"f": winter.id}).text
    at = page.index(f'id="p-{winter.ordinal}"')
    assert "Глава вторая. Зима" in page[:at] and "¶ 2" in page[at : at + 200] and 'lang="ru"' in page
    original = httpx.get(archive.url + _url("archive/book.epub"))
    assert original.content == (FORMATS / "book.epub").read_bytes()
    assert original.headers["content-type"] == "application/epub+zip"


def test_a_saved_page_is_served_sandboxed_and_read_on_our_own_page(archive: LiveServer) -> None:
    r = httpx.get(archive.url + _url("archive/marrowick-light.html"))
    assert r.status_code == 200 and "sandbox" in r.headers["content-security-policy"]  # its scripts never run here
    view = httpx.get(archive.url + _url("archive/marrowick-light.html") + "/view")
    assert "colza oil" in view.text and "window.track" not in view.text
    assert "script-src" not in view.headers["content-security-policy"] and "default-src 'none'" in view.headers[
        "content-security-policy"]


def test_a_video_lecture_is_served_in_ranges(archive: LiveServer) -> None:
    src = archive.engine.store.get_source("archive/lecture.mp4")
    assert src is not None and src.media_type == "video/mp4"
    r = httpx.get(archive.url + _url(src.id), headers={"Range": "bytes=0-99"})
    assert r.status_code == 206 and len(r.content) == 100 and r.headers["content-type"] == "video/mp4"
    cues = httpx.get(archive.url + _url(src.id) + "/cues").json()["cues"]
    assert [c["start_ms"] for c in cues] == [0, 2000, 4500]
    got = _ask(archive, "How often was the bell rung in fog during the lecture?")
    cited = [c for c in got["citations"] if c["source_id"] == src.id]
    assert cited and cited[0]["locator"]["track_id"] == src.id


@pytest.mark.usefixtures("ocr_installed")
def test_a_scan_lights_the_passage_and_its_citation_says_ocr(archive: LiveServer) -> None:
    sid = "archive/phototest.tif"
    frag = next(f for f in archive.engine.store.fragments_of(sid) if "lazy fox" in f.text)
    r = httpx.get(archive.url + _url(sid) + "/pages/1", params={"fragment": frag.id}, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert int(r.headers["X-Footnote-Highlights"]) >= 6  # word boxes of the passage, read again by OCR
    left, top, right, bottom = (int(v) for v in r.headers["X-Footnote-Highlight-Box"].split(","))
    assert 0 <= left < right <= 640 and 0 <= top < bottom <= 480
    plain = httpx.get(archive.url + _url(sid) + "/pages/1")
    assert plain.status_code == 200 and plain.headers["X-Footnote-Highlights"] == "0"
    assert httpx.get(archive.url + _url(sid) + "/pages/2").status_code == 404
    got = _ask(archive, "What did the quick brown dog jump over?")
    cited = [c for c in got["citations"] if c["source_id"] == sid]
    assert cited and cited[0]["ocr"] is True and cited[0]["ocr_confidence"] > 80
    assert all(c["ocr"] is False for c in got["citations"] if c["source_id"] != sid)


def test_a_docx_citation_carries_its_heading_path_and_paragraph(archive: LiveServer) -> None:
    got = _ask(archive, "What was the keeper's allowance for the year 1887?")
    cited = [c for c in got["citations"] if c["source_id"] == "archive/report.docx"]
    assert cited, got
    loc = cited[0]["locator"]
    assert loc["section"] and isinstance(loc.get("para"), int) and loc["page"] is None
    assert re.search(r"fifty pounds|four hundred gallons", " ".join(c["text"] for c in cited))


def test_a_quoted_footnote_mark_is_never_read_as_a_citation(archive: LiveServer) -> None:
    got = _ask(archive, "Was the Marrowick light ever late in 1887?")
    answer = got["answer"]
    assert "1887¹" in answer and not re.search(r"1887\.?\s*\[\d+\]\s*¹?\s*Except", answer), answer
    # every [n] in the answer is a citation the server resolved, and the one after 1887 cites the report
    shown = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    assert shown == {c["n"] for c in got["citations"]}
    after = re.search(r"1887¹\.?\s*\[(\d+)\]", answer)
    assert after and next(c for c in got["citations"] if c["n"] == int(after.group(1)))["source_id"] == "archive/report.docx"
