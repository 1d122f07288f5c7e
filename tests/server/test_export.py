"""Exported conversations (issue 41 item 4; server/export.py): Markdown and one self-contained HTML page over
real HTTP and from the CLI — questions, answers as shown, numbered citations whose links open the original at
the cited place on the server that answered, abstentions said as such, text escaped, each reader's own only."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from click.testing import CliRunner
from serverkit import XSS_QUESTION, LiveServer
from test_server_api import FOG, RISOTTO, parse_sse

from footnote.cli import main
from footnote.server.export import original_url

pytestmark = pytest.mark.integration


def _ask(http: httpx.Client, question: str, cid: str | None = None) -> dict:
    body: dict = {"question": question, **({"conversation_id": cid} if cid else {})}
    r = http.post("/api/ask", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return dict(parse_sse(r.text))["done"]


@pytest.fixture
def conversation(live: LiveServer) -> tuple[httpx.Client, str, dict, dict, dict]:
    """One reader's conversation of three turns: answered, off-topic (declined), answered from a passage with HTML."""
    http = httpx.Client(base_url=live.url, timeout=60)
    first = _ask(http, FOG)
    cid = first["conversation_id"]
    second = _ask(http, RISOTTO, cid)
    third = _ask(http, XSS_QUESTION, cid)
    assert first["mode"] == "corpus" and first["citations"] and second["mode"] != "corpus"
    return http, cid, first, second, third


def test_markdown_export_links_every_citation_to_its_original(conversation: tuple, live: LiveServer) -> None:
    http, cid, first, second, third = conversation
    r = http.get(f"/api/conversations/{cid}/export", params={"format": "md"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    assert re.fullmatch(rf'attachment; filename="footnote-{cid[:8]}\.md"', r.headers["content-disposition"])
    md = r.text
    assert md.startswith(f"# {FOG}\n") and f"## Question 1: {FOG}" in md and f"## Question 2: {RISOTTO}" in md
    sections = re.split(r"^## Question \d+: ", md, flags=re.M)[1:]
    assert len(sections) == 3
    for section, turn in ((sections[0], first), (sections[2], third)):
        # each turn's markers link to its own citations (inline: no reference definition of one turn stands for
        # another's), and each resolves to a live original
        linked = dict(re.findall(r"\[\\\[(\d+)\\\]\]\((\S+?)\)", section))
        assert linked == {str(c["n"]): original_url(c, live.url) for c in turn["citations"]
                          if f"[{c['n']}]" in turn["answer"]}, section
        for url in linked.values():
            assert url.startswith(live.url + "/api/sources/")
            got = http.get(urlsplit(url)._replace(scheme="", netloc="", fragment="").geturl())
            assert got.status_code == 200, url
    assert original_url(third["citations"][0], live.url) != original_url(first["citations"][0], live.url)
    # the off-topic turn is said as an abstention, with its reason, not dressed as an answer
    q2 = md.split(f"## Question 2: {RISOTTO}", 1)[1].split("## Question 3", 1)[0]
    reason = second["abstention"]["reason"]
    assert "> **Not answered from the corpus** — " in q2 and f"(`{reason}`)" in q2
    assert "**Sources**" not in q2
    # a passage's HTML stays text in any Markdown renderer: no raw tag reaches the file
    assert "\\<script\\>window.\\_\\_footnoteXss" in md and not re.search(r"(?<!\\)<[a-z/]", md)


def test_html_export_is_one_escaped_page_without_scripts(conversation: tuple, live: LiveServer) -> None:
    http, cid, first, second, third = conversation
    r = http.get(f"/api/conversations/{cid}/export", params={"format": "html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    assert page.startswith("<!doctype html>") and "<script" not in page.lower()
    assert not re.search(r"""(?:src|href)=["'](?!http://127\.0\.0\.1|#)""", page)  # nothing loaded from elsewhere
    assert third["mode"] == "corpus" and "&lt;script&gt;window.__footnoteXss" in page
    assert "<link" not in page and "@import" not in page
    for c in first["citations"]:
        assert f'<a href="{original_url(c, live.url)}">{c["n"]}</a>' in page.replace("&amp;", "&")
    assert f'class="declined" data-reason="{second["abstention"]["reason"]}"' in page


def test_one_answer_and_the_errors_a_reader_meets(conversation: tuple, live: LiveServer) -> None:
    http, cid, *_ = conversation
    one = http.get(f"/api/conversations/{cid}/export", params={"format": "md", "turn": 2})
    assert one.status_code == 200 and "Question 2" in one.text and "Question 1" not in one.text
    assert one.text.startswith(f"# {RISOTTO}\n")  # one answer's file is titled with its own question
    page = http.get(f"/api/conversations/{cid}/export", params={"format": "html", "turn": 2}).text
    assert f"<title>{RISOTTO}</title>" in page
    assert 'filename="footnote-' in one.headers["content-disposition"] and "-2.md" in one.headers["content-disposition"]
    assert http.get(f"/api/conversations/{cid}/export", params={"turn": 9}).status_code == 404
    assert http.get(f"/api/conversations/{cid}/export", params={"format": "pdf"}).status_code == 422
    assert http.get(f"/api/conversations/{cid}/export", params={"turn": 0}).status_code == 422
    with httpx.Client(base_url=live.url, timeout=30) as stranger:  # another reader: as if it did not exist
        assert stranger.get(f"/api/conversations/{cid}/export").status_code == 404
    assert http.get("/api/conversations/nope/export").status_code == 404


def test_cli_export_to_a_file_with_the_public_address(conversation: tuple, live: LiveServer, tmp_path: Path) -> None:
    _, cid, first, *_ = conversation
    out = tmp_path / "talk.html"
    store = str(live.settings.store.url)
    res = CliRunner().invoke(main, ["conversations", "export", cid, "--format", "html", "--out", str(out),
                                    "--base-url", "https://footnote.example.org", "--store", store])
    assert res.exit_code == 0, res.output
    page = out.read_text(encoding="utf-8")
    c = first["citations"][0]
    assert original_url(c, "https://footnote.example.org").replace("&", "&amp;") in page
    md = CliRunner().invoke(main, ["conversations", "export", cid, "--turn", "1", "--store", store])
    assert md.exit_code == 0 and md.output.startswith(f"# {FOG}") and "Question 2" not in md.output
    assert f"http://{live.settings.server.host}:{live.settings.server.port}/api/sources/" in md.output
    bad = CliRunner().invoke(main, ["conversations", "export", "--store", store])
    assert bad.exit_code == 2 and "export needs a conversation ID" in bad.output
    gone = CliRunner().invoke(main, ["conversations", "export", "0" * 32, "--store", store])
    assert gone.exit_code != 0 and "no conversation" in gone.output


def test_a_question_cannot_make_markdown_of_its_own(live: LiveServer) -> None:
    """Whatever a reader types stays text in the Markdown file: no raw HTML (a backslash before it included), no
    link or image of its own, no reference definition; only the export's own links to the originals are links."""
    http = httpx.Client(base_url=live.url, timeout=60)
    nasty = ("\\\\<img src=x onerror=alert(3)> [click](javascript:alert(1)) ![i](http://evil.example/x.png) "
             "`code` *fog horn*")
    done = _ask(http, nasty)
    md = http.get(f"/api/conversations/{done['conversation_id']}/export", params={"format": "md"}).text
    assert not re.search(r"(?<!\\)<[a-z/]", md.replace("\\\\", ""))  # every < escaped, even after \\
    assert not re.search(r"(?<!\\)!\[", md)  # no image
    links = re.findall(r"(?<!\\)\]\((\S+?)\)", md)
    assert all(u.startswith(live.url + "/api/sources/") for u in links), links  # only links to originals
    assert "evil.example" in md and "javascript" in md  # the words are kept, as text


def test_cli_errors_say_what_is_wrong_and_leave_nothing_behind(conversation: tuple, live: LiveServer,
                                                               tmp_path: Path) -> None:
    _, cid, *_ = conversation
    store = str(live.settings.store.url)
    res = CliRunner().invoke(main, ["conversations", "export", cid, "--out", str(tmp_path / "no" / "x.md"),
                                    "--store", store])
    assert res.exit_code == 2 and "cannot write" in res.output and "Traceback" not in res.output
    missing = tmp_path / "missing.db"
    res = CliRunner().invoke(main, ["conversations", "export", cid, "--store", str(missing)])
    assert res.exit_code != 0 and not missing.exists()
