"""The web chat in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright).

Screenshots go to artifacts/screenshots/. Under CI=true these tests run or fail, never skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serverkit import XSS_QUESTION, LiveServer, start_server, stop_server

from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.server.sse import sse_frame
from footnote.settings import load_settings

pytestmark = [pytest.mark.browser, pytest.mark.integration]

FOG = "When do the Marrowick keepers start the fog horn, and how does it sound?"
RED_LAMP = "Что означает красный фонарь на галерее маяка?"
PARAFFIN = "How many gallons of paraffin may the oil store hold?"
RISOTTO = "How long should I stir a mushroom risotto before adding the parmesan?"
TIMEOUT_MS = 30_000


@pytest.fixture
def page(browser: Any, live: LiveServer) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(live.url + "/")
    pg.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
    yield pg
    ctx.close()
    assert not errors, errors


def ask(pg: Any, question: str) -> Any:
    """Type a question, send it, wait until its turn is done; return the turn's locator."""
    before = pg.locator(".turn").count()
    pg.fill("#question", question)
    pg.click("#ask-button")
    turn = pg.locator(".turn").nth(before)
    turn.wait_for(timeout=TIMEOUT_MS)
    pg.wait_for_function(
        "n => document.querySelectorAll('.turn')[n]?.dataset.done === 'true'", arg=before, timeout=TIMEOUT_MS
    )
    return turn


def test_demo_question_streams_an_answer_with_chips(page: Any, screenshots: Path) -> None:
    turn = ask(page, FOG)
    assert turn.get_attribute("data-state") == "answered"
    assert int(turn.get_attribute("data-tokens") or 0) > 0  # the text arrived as streamed tokens
    chips = turn.locator(".turn__answer .chip")
    assert chips.count() >= 1
    assert turn.locator(".turn__state").inner_text() == "Answered from the corpus"
    answer = turn.locator(".turn__answer").inner_text()
    assert "fog horn" in answer and "[1]" not in answer  # [n] became chips
    assert turn.locator(".turn__sources .source").count() == chips.evaluate_all(
        "cs => new Set(cs.map(c => c.dataset.n)).size")
    page.screenshot(path=str(screenshots / "chat-answered.png"), full_page=True)


def test_transcript_chip_plays_the_cited_span(page: Any, screenshots: Path) -> None:
    turn = ask(page, FOG)
    chip = turn.locator(".turn__answer .chip--transcript").first
    start_ms = int(chip.get_attribute("data-start-ms"))
    end_ms = int(chip.get_attribute("data-end-ms"))
    source = chip.get_attribute("data-source")
    chip.click()
    page.wait_for_selector("#viewer:not([hidden]) #viewer-audio:not([hidden])", timeout=TIMEOUT_MS)
    page.wait_for_function(
        """([s, e]) => { const a = document.getElementById('player');
               return a.readyState >= 1 && a.currentTime >= s && a.currentTime <= e; }""",
        arg=[start_ms / 1000, end_ms / 1000], timeout=TIMEOUT_MS,
    )
    audio = page.evaluate(
        "() => { const a = document.getElementById('player'); return {t: a.currentTime, src: a.currentSrc, d: a.duration}; }"
    )
    assert start_ms / 1000 <= audio["t"] <= end_ms / 1000
    assert audio["src"].endswith("/api/sources/" + source)
    assert audio["d"] > end_ms / 1000 - 1
    # the extractive answer quotes the transcript, so the chip plays just the quoted sentence's cues
    played = page.evaluate("() => { const v = document.getElementById('viewer').dataset; return [v.playStartMs, v.playEndMs]; }")
    p0, p1 = int(played[0]), int(played[1])
    assert start_ms <= p0 < p1 <= end_ms
    assert p1 - p0 < end_ms - start_ms  # narrower than the ~45 s window
    answer = turn.locator(".turn__answer").inner_text()
    cues = httpx.get(page.url.split("?")[0].rstrip("/") + f"/api/sources/{source}/cues", params={"start_ms": p0, "end_ms": p1}).json()["cues"]
    quoted = " ".join(c["text"] for c in cues)
    words = [w.strip(",.;:!?«»\"").lower() for w in quoted.split()[:4]]
    assert all(w in answer.lower() for w in words), (words, answer)  # the cues played are the ones quoted
    page.screenshot(path=str(screenshots / "chat-transcript.png"))


def test_pdf_chip_opens_the_page_with_the_passage(page: Any, screenshots: Path) -> None:
    turn = ask(page, PARAFFIN)
    assert turn.get_attribute("data-state") == "answered"
    chip = turn.locator(".chip--pdf").first
    page_no = chip.get_attribute("data-page")
    fragment = chip.get_attribute("data-fragment")
    chip.click()
    page.wait_for_selector("#viewer:not([hidden]) #viewer-page:not([hidden])", timeout=TIMEOUT_MS)
    page.wait_for_function(
        "() => { const i = document.getElementById('page-image'); return i.complete && i.naturalWidth > 0; }",
        timeout=TIMEOUT_MS,
    )
    img = page.evaluate(
        "() => { const i = document.getElementById('page-image'); return {src: i.src, w: i.naturalWidth, h: i.naturalHeight}; }"
    )
    assert f"/pages/{page_no}?" in img["src"] and "fragment=" in img["src"]
    assert fragment and fragment.split("#")[0] in img["src"].replace("%2F", "/").replace("%23", "#")
    assert img["w"] > 400 and img["h"] > img["w"]  # a portrait page, rendered
    assert f"Page {page_no}" in page.locator("#page-caption").inner_text()
    page.screenshot(path=str(screenshots / "chat-pdf-page.png"))


def test_off_topic_question_shows_not_in_corpus(page: Any, screenshots: Path) -> None:
    turn = ask(page, RISOTTO)
    assert turn.get_attribute("data-state") == "not-found"
    assert turn.locator(".turn__state").inner_text() == "Not in the corpus"
    assert turn.locator(".chip").count() == 0
    page.screenshot(path=str(screenshots / "chat-not-found.png"), full_page=True)


def test_russian_question_gets_a_russian_interface(page: Any, screenshots: Path) -> None:
    turn = ask(page, RED_LAMP)
    assert turn.get_attribute("data-state") == "answered"
    assert turn.locator(".turn__state").inner_text() == "Ответ по корпусу"
    assert page.evaluate("document.documentElement.lang") == "ru"
    assert page.get_attribute("#question", "placeholder") == "Задайте вопрос по корпусу…"
    assert page.locator("#ask-button").inner_text() == "Спросить"
    page.screenshot(path=str(screenshots / "chat-russian.png"), full_page=True)


def test_script_in_a_passage_renders_as_text(page: Any) -> None:
    turn = ask(page, XSS_QUESTION)
    assert page.evaluate("typeof window.__footnoteXss") == "undefined"
    assert page.locator("#log script, #viewer script").count() == 0
    turn.locator(".chip").first.click()
    page.wait_for_selector("#viewer:not([hidden])", timeout=TIMEOUT_MS)
    shown = page.locator("#viewer-text").inner_text()
    assert "<script>window.__footnoteXss = 1</script>" in shown
    assert page.evaluate("typeof window.__footnoteXss") == "undefined"


def test_phone_sized_screen(browser: Any, live: LiveServer, screenshots: Path) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                              device_scale_factor=2)
    pg = ctx.new_page()
    try:
        pg.goto(live.url + "/")
        pg.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
        turn = ask(pg, FOG)
        assert turn.get_attribute("data-state") == "answered"
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390  # nothing spills sideways
        box = pg.locator("#ask-form").bounding_box()
        assert box is not None and box["width"] <= 390 and box["y"] + box["height"] <= 844 + 1
        pg.screenshot(path=str(screenshots / "chat-phone.png"))
        turn.locator(".chip").first.tap()
        pg.wait_for_selector("#viewer:not([hidden])", timeout=TIMEOUT_MS)
        vbox = pg.locator(".viewer__box").bounding_box()
        assert vbox is not None and vbox["width"] >= 380
        pg.screenshot(path=str(screenshots / "chat-phone-viewer.png"))
    finally:
        ctx.close()


def test_lexical_only_banner(browser: Any, served_store: tuple[Path, Any], screenshots: Path) -> None:
    _, settings = served_store
    lexical = settings.with_overrides(**{"embedder.name": "none"})
    with Engine.from_settings(lexical) as engine:
        url, server, thread = start_server(create_app(engine, lexical))
        ctx = browser.new_context(viewport={"width": 1000, "height": 700})
        try:
            pg = ctx.new_page()
            pg.goto(url + "/")
            banner = pg.locator("#lexical-banner")
            banner.wait_for(state="visible", timeout=TIMEOUT_MS)
            assert banner.get_attribute("data-lexical-only") == "true"
            assert "Lexical-only" in banner.inner_text()
            assert pg.evaluate("document.body.classList.contains('lexical-only')")
            line = pg.locator("#status-line").inner_text()
            assert line.endswith("— no embedding model, so passages are found by their words only."), line
            ask(pg, FOG)
            pg.screenshot(path=str(screenshots / "chat-lexical-only.png"))
        finally:
            ctx.close()
            stop_server(server, thread)


def test_default_mode_has_no_lexical_banner(page: Any, live: LiveServer) -> None:
    assert page.locator("#lexical-banner").is_hidden()
    st = live.engine.status()
    line = page.locator("#status-line").inner_text()  # what the store holds and how it is searched, in words
    assert line == (f"{st['sources']} sources in {st['fragments']} passages, all embedded, so they are found by "
                    "meaning and by their words."), line
    assert page.locator("#status-line").get_attribute("title") == f"Embedding model: {st['embedder']}"


def _scripted_turn(mode: str, disclaimer: str | None, answer: str, abstention: dict[str, str] | None = None,
                   lang: str = "en") -> str:
    done = {"answer": answer, "citations": [], "verdict": "insufficient", "corpus_insufficient": True,
            "mode": mode, "abstention": abstention, "disclaimer": disclaimer, "dropped_citations": 0,
            "removed_mentions": 0, "model_calls": 1, "lang": lang, "trace": {}}
    frames = [
        sse_frame("stage", {"name": "search.gate", "ms": 1.0, "counts": {}}),
        sse_frame("token", {"text": answer}),
        sse_frame("verdict", {k: done[k] for k in ("verdict", "mode", "corpus_insufficient", "disclaimer", "abstention")}),
        sse_frame("done", done),
    ]
    return b"".join(frames).decode()


@pytest.mark.parametrize(
    ("mode", "state", "label"),
    [("fallback", "fallback", "Answered from general knowledge — not from the corpus"),
     ("declined", "declined", "Out of scope — declined")],
)
def test_fallback_and_declined_states_are_painted(page: Any, screenshots: Path, mode: str, state: str, label: str) -> None:
    """The general-knowledge fallback needs a configured model; here the browser receives the event
    stream such a server sends (same frames, same Answer shape) and must paint the state and the
    server's disclaimer."""
    disclaimer = "This answer is not from the corpus: it comes from the model's general knowledge." if mode == "fallback" else None
    why = {"reason": "planner_found_nothing", "stage": "planner"} if mode == "fallback" else \
        {"reason": "out_of_scope", "stage": "fallback"}
    body = _scripted_turn(mode, disclaimer, "Lighthouses <b>often</b> use fog signals." if mode == "fallback" else
                          "I can only answer about the corpus.", why)
    page.route("**/api/ask", lambda route: route.fulfill(status=200, content_type="text/event-stream", body=body))
    turn = ask(page, "Tell me about lighthouses in general")
    assert turn.get_attribute("data-state") == state
    assert turn.locator(".turn__state").inner_text() == label
    assert turn.get_attribute("data-abstention") == why["reason"]
    assert turn.locator(".turn__reason").inner_text() == (
        "Why: the passages found were judged not to answer it." if mode == "fallback" else
        "Why: the question is outside what this library covers.")
    if disclaimer:
        assert turn.locator(".turn__disclaimer").is_visible()
        assert turn.locator(".turn__disclaimer").inner_text() == disclaimer
        assert "<b>often</b>" in turn.locator(".turn__answer").inner_text()
        page.screenshot(path=str(screenshots / "chat-fallback.png"), full_page=True)
    else:
        assert turn.locator(".turn__disclaimer").is_hidden()
    json.dumps(body)


def test_api_key_prompt(browser: Any, served_store: tuple[Path, Any]) -> None:
    _, settings = served_store
    keyed = settings.with_overrides(**{"server.api_key": "browser-key"})
    with Engine.from_settings(keyed) as engine:
        url, server, thread = start_server(create_app(engine, keyed))
        ctx = browser.new_context()
        try:
            pg = ctx.new_page()
            pg.goto(url + "/")
            pg.wait_for_selector("#key-form:not([hidden])", timeout=TIMEOUT_MS)
            pg.fill("#key-input", "wrong")
            pg.click("#key-form button")
            pg.wait_for_selector("#key-error:not([hidden])", timeout=TIMEOUT_MS)
            pg.fill("#key-input", "browser-key")
            pg.click("#key-form button")
            pg.wait_for_selector("#key-form[hidden]", state="attached", timeout=TIMEOUT_MS)
            pg.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
            turn = ask(pg, FOG)
            assert turn.get_attribute("data-state") == "answered"
        finally:
            ctx.close()
            stop_server(server, thread)


def test_verse_chip_shows_address_and_text(page: Any, live: LiveServer, screenshots: Path) -> None:
    for question in ("What does HB 3.2 say?", "What must the horn do when the Black Skerry is hidden?"):
        turn = ask(page, question)
        if turn.locator(".chip--verse").count():
            break
    chip = turn.locator(".chip--verse").first
    address = chip.get_attribute("data-address")
    assert address
    chip.click()
    page.wait_for_selector("#viewer:not([hidden]) #viewer-text:not([hidden])", timeout=TIMEOUT_MS)
    assert address in page.locator("#viewer-title").inner_text()
    meta = page.locator("#viewer-meta").inner_text()
    assert address not in meta and "The Harbour Book" in meta  # the title names the address once; the meta the book
    stored = [f for f in live.engine.store.fragments_of(chip.get_attribute("data-source"))
              if getattr(f.locator, "label", None) == address]
    assert stored and page.locator("#viewer-text").inner_text().strip() == stored[0].text.strip()
    assert page.locator("#viewer-audio").is_hidden() and page.locator("#viewer-page").is_hidden()
    page.screenshot(path=str(screenshots / "chat-verse.png"))


def test_api_docs_page_renders_offline(browser: Any, live: LiveServer, screenshots: Path) -> None:
    ctx = browser.new_context()
    try:
        pg = ctx.new_page()
        pg.goto(live.url + "/docs")
        pg.wait_for_selector("#api .turn", timeout=TIMEOUT_MS)
        titles = pg.locator("#api .turn__question").all_inner_texts()
        assert "POST /api/ask" in titles and "GET /api/sources/{source_id}" in titles
        # descriptions are Markdown: ``code`` and `code` become <code>, no marks are left as text
        text = pg.locator("#api").inner_text()
        assert "``" not in text and "`" not in text, [ln for ln in text.splitlines() if "`" in ln][:3]
        codes = pg.locator("#api .docs__description code").all_inner_texts()
        assert "footnote search --json" in codes and "#HB-2.2" in codes
        ask_card = pg.locator("#api .turn").filter(has_text="POST /api/ask")
        assert "conversation_id" in ask_card.locator(".docs__field code").all_inner_texts()
        assert ask_card.locator("code", has_text="stream: false").count() >= 1  # a response's description too
        assert pg.evaluate("document.querySelectorAll('#api script, #api img, #api iframe').length") == 0
        pg.screenshot(path=str(screenshots / "api-docs.png"), full_page=False)
    finally:
        ctx.close()


def test_status_line_while_embedding_starts_has_no_question_mark(browser: Any, tmp_path: Path) -> None:
    """A worker that has not finished its first batch has no rate yet: the line says the time left is being
    estimated (it read "embedding 0%, about ? left")."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.txt").write_text("A note about harbours and their lamps.\n", encoding="utf-8")
    settings = load_settings(None, **{
        "store.url": str(tmp_path / "s.db"), "embedder.name": "hash", "server.warm_up": False,
        "backlog.serve_worker": False,
    })
    engine = Engine.from_settings(settings)
    engine.ingest([corpus], wait=False)
    engine.store.note_embedding_rate(0.0)  # what a worker notes when it starts, before its first batch
    url, server, thread = start_server(create_app(engine, settings))
    ctx = browser.new_context(viewport={"width": 1000, "height": 700})
    try:
        assert httpx.get(f"{url}/api/status", timeout=10).json()["embedding"]["eta_s"] is None
        pg = ctx.new_page()
        pg.goto(url + "/")
        pg.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
        line = pg.locator("#status-line").inner_text()
        assert "embedding 0%, estimating the time left" in line and "?" not in line, line
    finally:
        ctx.close()
        stop_server(server, thread)
        engine.close()


# --- abstention reasons, said in the reader's language ------------------------------------------

NOTHING = "Who invented the Marrowick fog horn?"  # the gate bails out
NOTHING_RU = "Сколько стоил туманный горн маяка Марровик?"
NOTHING_DE = "Wer hat das Nebelhorn von Marrowick erfunden und wann wurde es gebaut?"
NEAR = "What colour is the Marrowick fog horn painted?"  # the horn is in the corpus, its colour is not


def _fresh(pg: Any) -> None:
    """Start a new conversation, so the next question is not read as a follow-up."""
    if pg.locator("#new-chat").is_visible():
        pg.click("#new-chat")


def test_a_question_the_server_would_not_ask_is_the_readers_to_mend(page: Any) -> None:
    """A question of punctuation alone gets a 422 with the reason; the chat shows it as "not asked — please
    rephrase", not as "Something went wrong" (a stranger read that as a server failure)."""
    turn = ask(page, "?!?!... ,,, ;;; ---")
    assert turn.get_attribute("data-state") == "invalid"
    assert turn.locator(".turn__state").inner_text() == "Not asked — please rephrase"
    assert "no words to search for" in turn.locator(".turn__failure").inner_text()
    _fresh(page)


def test_not_found_says_why_in_the_readers_language(page: Any, screenshots: Path) -> None:
    turn = ask(page, NOTHING)
    assert turn.get_attribute("data-state") == "not-found"
    assert turn.get_attribute("data-abstention") == "no_relevant_content"
    assert turn.get_attribute("data-abstention-stage") == "gate"
    reason = turn.locator(".turn__reason")
    assert reason.is_visible() and reason.inner_text() == "Why: nothing in the corpus is close to this question."
    _fresh(page)
    turn = ask(page, NOTHING_RU)
    assert turn.get_attribute("data-abstention") == "no_relevant_content"
    assert turn.locator(".turn__state").inner_text() == "В корпусе этого нет"
    assert turn.locator(".turn__reason").inner_text() == "Почему: в корпусе нет ничего близкого к этому вопросу."
    assert turn.locator(".turn__answer").inner_text().startswith("В корпусе об этом ничего не нашлось")
    page.screenshot(path=str(screenshots / "chat-abstention-ru.png"), full_page=True)
    _fresh(page)
    turn = ask(page, NOTHING_DE)  # a German reader: the server's text and the answer's own strings in German
    assert turn.get_attribute("data-abstention") == "no_relevant_content"
    assert turn.locator(".turn__state").inner_text() == "Nicht im Korpus"
    assert turn.locator(".turn__reason").inner_text() == "Warum: Nichts im Korpus kommt dieser Frage nahe."
    assert turn.locator(".turn__answer").inner_text().startswith("Dazu habe ich im Korpus nichts gefunden")
    _fresh(page)
    turn = ask(page, FOG)  # a corpus answer says no reason
    assert turn.get_attribute("data-state") == "answered" and turn.get_attribute("data-abstention") is None
    assert turn.locator(".turn__reason").is_hidden()


def test_an_unknown_reason_is_not_painted(page: Any) -> None:
    body = _scripted_turn("not_found", None, "Nothing here.", {"reason": "a_future_reason", "stage": "gate"})
    page.route("**/api/ask", lambda route: route.fulfill(status=200, content_type="text/event-stream", body=body))
    turn = ask(page, "Anything at all?")
    assert turn.get_attribute("data-state") == "not-found" and turn.get_attribute("data-abstention") == "a_future_reason"
    assert turn.locator(".turn__reason").is_hidden()  # the state label says enough; no raw key is shown
    assert "a_future_reason" not in turn.inner_text()


def test_a_near_miss_names_the_closest_sources_and_keeps_its_reason_on_reload(
    browser: Any, served_store: tuple[Path, Any], screenshots: Path
) -> None:
    _, base = served_store
    settings = base.with_overrides(**{"answer.extractive.min_similarity": {"hash": 0.9}})  # a sentence floor for the test embedder
    engine = Engine.from_settings(settings)
    url, server, thread = start_server(create_app(engine, settings))
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        pg = ctx.new_page()
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url + "/")
        pg.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
        turn = ask(pg, NEAR)
        assert turn.get_attribute("data-state") == "not-found"
        assert turn.get_attribute("data-abstention") == "answer_not_in_passages"
        assert turn.get_attribute("data-abstention-stage") == "answer"
        assert turn.locator(".turn__reason").inner_text() == (
            "Why: the corpus has passages on the subject, but none of them answers this question.")
        text = turn.locator(".turn__answer").inner_text()
        assert text.startswith("The closest passages in the corpus come from “") and "Marrowick" in text, text
        pg.screenshot(path=str(screenshots / "chat-near-miss.png"), full_page=True)
        pg.reload()  # the permalink restores the stored turn, its reason with it
        pg.wait_for_selector('.turn[data-restored="true"]', timeout=TIMEOUT_MS)
        again = pg.locator(".turn").first
        assert again.get_attribute("data-abstention") == "answer_not_in_passages"
        assert again.locator(".turn__reason").is_visible()
        assert again.locator(".turn__answer").inner_text() == text
    finally:
        ctx.close()
        stop_server(server, thread)
        engine.close()
    assert not errors, errors
