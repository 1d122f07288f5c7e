"""A conversation — or one of its answers — as a file people can take away: Markdown, or one self-contained HTML
page (docs/conversations.md, "Export").

Both keep what the chat shows: each question, the answer as it was shown, its numbered citations as links that
open the original at the cited place on the server that answered (a PDF at its page, a recording at the cited
time, a verse at its address, any other text at its paragraph), and an abstention said as one ("Not answered
from the corpus", with its reason) rather than dressed as an answer. A general-knowledge fallback keeps the
disclaimer the server painted on it. The HTML page has no script, no external style sheet, font or image: it
opens the same offline, and every text in it is escaped (an answer or a title with HTML in it stays text).

One implementation for the CLI (``footnote conversations export``) and the HTTP route
(``GET /api/conversations/{id}/export``); the links mirror the chat's ``originalUrl`` (``static/app.js``).
"""

from __future__ import annotations

import datetime as dt
import html
import re
import time
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any
from urllib.parse import quote

from footnote.store.conversations import Conversation, TurnRecord

__all__ = ["ExportFormat", "export_conversation", "original_url"]


class ExportFormat(StrEnum):
    MARKDOWN = "md"
    HTML = "html"


#: The few words an export writes itself, by the conversation's language (English for any other).
_WORDS: dict[str, dict[str, str]] = {
    "en": {"sources": "Sources", "declined": "Not answered from the corpus", "fallback": "General knowledge, not the corpus",
           "searched": "Searched for", "exported": "Exported", "from": "from", "turn": "Question", "page": "p.",
           "editors": "Editors' answer"},
    "ru": {"sources": "Источники", "declined": "Ответа в корпусе нет", "fallback": "Общие знания, не корпус",
           "searched": "Искали", "exported": "Выгружено", "from": "с", "turn": "Вопрос", "page": "с.",
           "editors": "Ответ редакции"},
}

#: What each abstention reason says, in words (the chat's "Why: …" line, shorter).
_REASONS: dict[str, dict[str, str]] = {
    "en": {
        "no_relevant_content": "nothing in the corpus is close to this question",
        "insufficient_coverage": "the corpus has only weak matches",
        "planner_found_nothing": "the passages found cite nothing that answers",
        "answer_not_in_passages": "the corpus speaks of this topic, but no passage answers the question",
        "weakly_grounded": "the checks removed every sentence the passages did not support",
        "out_of_scope": "outside what the library covers",
        "index_incomplete": "the corpus was still being indexed",
    },
    "ru": {
        "no_relevant_content": "в корпусе нет ничего близкого к этому вопросу",
        "insufficient_coverage": "в корпусе только слабые совпадения",
        "planner_found_nothing": "найденные отрывки не отвечают на вопрос",
        "answer_not_in_passages": "корпус говорит об этой теме, но ни один отрывок не отвечает на вопрос",
        "weakly_grounded": "проверки убрали каждое предложение, которого не подтверждают отрывки",
        "out_of_scope": "вне того, что охватывает библиотека",
        "index_incomplete": "корпус ещё индексировался",
    },
}

_CITE = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def _words(lang: str) -> dict[str, str]:
    return _WORDS.get(lang, _WORDS["en"])


def original_url(c: Mapping[str, Any], base: str) -> str:
    """Where citation ``c`` (``Citation.to_dict()``) opens the original at its place, on the server at ``base``."""
    base = base.rstrip("/")
    loc = c.get("locator") or {}
    sid = str(c.get("source_id", ""))
    src = f"{base}/api/sources/" + "/".join(quote(p, safe="") for p in sid.split("/"))
    fid = str(c.get("fragment_id", ""))
    view = f"{src}/view?f={quote(fid, safe='')}"
    if "note" in loc:  # a pinned note has no original file: the chat opens it in its memory panel
        return f"{base}/#memory={quote(str(loc['note']), safe='')}"
    if "track_id" in loc:
        return f"{src}#t={int(loc['start_ms']) / 1000:g},{int(loc['end_ms']) / 1000:g}"
    if "book" in loc:
        label = str(loc.get("label") or f"{loc['book']} {loc['loc']}").strip()
        return f"{view}#{quote('-'.join(label.split()), safe='')}"
    if loc.get("page") is not None:  # a PDF or a scan, at its page
        return f"{src}#page={int(loc['page'])}"
    return f"{view}#p-{quote(fid.rsplit('#', 1)[-1], safe='')}"


def _ms(ms: int) -> str:
    s = int(ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def citation_label(c: Mapping[str, Any], lang: str) -> str:
    """The citation's place in words: title and page, time span, verse address, section and paragraph."""
    w = _words(lang)
    loc = c.get("locator") or {}
    title = str(c.get("title") or c.get("source_id", ""))
    if "note" in loc:
        return f"{w['editors']}: {loc.get('title') or loc['note']}"
    if "track_id" in loc:
        return f"{title}, {_ms(loc['start_ms'])}–{_ms(loc['end_ms'])}"
    if "book" in loc:
        return str(loc.get("label") or f"{loc['book']} {loc['loc']}")
    parts = [title]
    if loc.get("page") is not None:
        parts.append(f"{w['page']} {loc['page']}")
    if loc.get("section") and str(loc["section"]) not in title:
        parts.append(f"§ {loc['section']}")
    if loc.get("para") is not None:
        parts.append(f"¶ {loc['para']}")
    return ", ".join(parts)


def _declined(answer: Mapping[str, Any]) -> str | None:
    """The abstention's reason when the turn is not a corpus answer (None: it is one, or a fallback)."""
    if answer.get("mode") in ("corpus", "fallback"):
        return None
    ab = answer.get("abstention") or {}
    return str(ab.get("reason") or answer.get("mode") or "declined")


def _turns(conv: Conversation, turn: int | None) -> Sequence[TurnRecord]:
    return [t for t in conv.turns if turn is None or t.n == turn]


def _lang(conv: Conversation) -> str:
    for t in conv.turns:
        lang = str(t.answer.get("lang") or "")
        if lang:
            return lang.split("-")[0]
    return "en"


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


#: Characters that make Markdown syntax out of plain text: escaped with a backslash wherever the export writes text
#: it did not write itself (questions, answers, titles, labels) — raw HTML, links, images, emphasis, code.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


def _md_escape(text: str) -> str:
    """Text for Markdown that renders as itself: every character that could open a tag, a link, an image or a
    reference definition is backslash-escaped (the backslash first), so a passage's ``<script>``, a question's
    ``[x](javascript:…)`` or ``![](http://…)`` stay text in any renderer."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_text(text: str, urls: Mapping[int, str]) -> str:
    """An answer's text for Markdown: escaped, each ``[n]`` an inline link to its original (``[1, 2]`` as two), so
    no reference definition of one turn can stand for another's (a document has one set of definitions)."""
    out, last = [], 0
    for m in _CITE.finditer(text):
        out.append(_md_escape(text[last:m.start()]))
        links = []
        for n in (int(x) for x in re.split(r"[,;]", m.group(1))):
            links.append(f"[\\[{n}\\]]({urls[n]})" if n in urls else f"\\[{n}\\]")
        out.append(" ".join(links))
        last = m.end()
    out.append(_md_escape(text[last:]))
    return "".join(out).strip()


def _title(conv: Conversation, turn: int | None) -> str:
    """The file's title: the conversation's (its first question), or the one answer's own question."""
    if turn is not None:
        for t in conv.turns:
            if t.n == turn:
                return t.question
    return conv.title


def to_markdown(conv: Conversation, base: str, turn: int | None = None, now: float | None = None) -> str:
    lang = _lang(conv)
    w = _words(lang)
    reasons = _REASONS.get(lang, _REASONS["en"])
    out = [f"# {_md_escape(_title(conv, turn))}", "",
           f"*{w['exported']} {_when(now if now is not None else time.time())} {w['from']} {_md_escape(base.rstrip('/'))}*",
           ""]
    for t in _turns(conv, turn):
        a = t.answer
        cites = sorted(a.get("citations") or [], key=lambda c: int(c.get("n", 0)))
        urls = {int(c["n"]): original_url(c, base) for c in cites}
        out += [f"## {w['turn']} {t.n}: {_md_escape(t.question)}", ""]
        if t.rewritten_question:
            out += [f"*{w['searched']}: {_md_escape(t.rewritten_question)}*", ""]
        reason = _declined(a)
        if reason is not None:
            out += [f"> **{w['declined']}** — {_md_escape(reasons.get(reason, reason))} (`{reason}`)", ">"]
            out += [f"> {line}" if line else ">" for line in _md_text(str(a.get("answer", "")), urls).splitlines()]
            out.append("")
        else:
            if a.get("mode") == "fallback":
                note = f" — {_md_escape(str(a['disclaimer']))}" if a.get("disclaimer") else ""
                out += [f"> **{w['fallback']}**{note}", ""]
            out += [_md_text(str(a.get("answer", "")), urls), ""]
        if cites:
            out += [f"**{w['sources']}**", ""]
            out += [f"- \\[{c['n']}\\] [{_md_escape(citation_label(c, lang))}]({urls[int(c['n'])]})" for c in cites]
            out += [""]
    return "\n".join(out).rstrip() + "\n"


_STYLE = """
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:2rem}.meta,.searched{color:#666;font-size:.9rem}
.answer{white-space:pre-wrap}.declined{border-left:4px solid #b26b00;background:#fff7e8;padding:.6rem .9rem}
.fallback{border-left:4px solid #6b6bb2;background:#f1f1fb;padding:.6rem .9rem}
sup a{text-decoration:none}ol.sources{font-size:.92rem}ol.sources li{margin:.3rem 0}
.quote{color:#555;display:block;font-size:.88rem}
"""


def _html_text(text: str, cites: Mapping[int, str]) -> str:
    """Escaped answer text with each ``[n]`` a link to its original (an unknown number stays as written)."""
    out, last = [], 0
    for m in _CITE.finditer(text):
        out.append(html.escape(text[last:m.start()]))
        links = []
        for n in (int(x) for x in re.split(r"[,;]", m.group(1))):
            url = cites.get(n)
            links.append(f'<a href="{html.escape(url)}">{n}</a>' if url else str(n))
        out.append("<sup>[" + ", ".join(links) + "]</sup>")
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _excerpt(text: str, limit: int = 300) -> str:
    """The cited passage's opening, cut at a word and marked when cut."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def to_html(conv: Conversation, base: str, turn: int | None = None, now: float | None = None) -> str:
    lang = _lang(conv)
    w = _words(lang)
    reasons = _REASONS.get(lang, _REASONS["en"])
    e = html.escape
    body = [f"<h1>{e(_title(conv, turn))}</h1>",
            f'<p class="meta">{e(w["exported"])} {e(_when(now if now is not None else time.time()))} {e(w["from"])} '
            f'<a href="{e(base)}">{e(base.rstrip("/"))}</a></p>']
    for t in _turns(conv, turn):
        a = t.answer
        cites = sorted(a.get("citations") or [], key=lambda c: int(c.get("n", 0)))
        urls = {int(c["n"]): original_url(c, base) for c in cites}
        body.append(f'<section id="turn-{t.n}"><h2 dir="auto">{e(w["turn"])} {t.n}: {e(t.question)}</h2>')
        if t.rewritten_question:
            body.append(f'<p class="searched" dir="auto">{e(w["searched"])}: {e(t.rewritten_question)}</p>')
        reason = _declined(a)
        text = _html_text(str(a.get("answer", "")).strip(), urls)
        if reason is not None:
            body.append(f'<div class="declined" data-reason="{e(reason)}"><p><strong>{e(w["declined"])}</strong> — '
                        f'{e(reasons.get(reason, reason))} (<code>{e(reason)}</code>)</p>'
                        f'<p class="answer" dir="auto">{text}</p></div>')
        elif a.get("mode") == "fallback":
            note = f" — {e(str(a['disclaimer']))}" if a.get("disclaimer") else ""
            body.append(f'<div class="fallback"><p><strong>{e(w["fallback"])}</strong>{note}</p>'
                        f'<p class="answer" dir="auto">{text}</p></div>')
        else:
            body.append(f'<p class="answer" dir="auto">{text}</p>')
        if cites:
            items = "".join(
                f'<li value="{int(c["n"])}"><a href="{e(urls[int(c["n"])])}">{e(citation_label(c, lang))}</a>'
                f'<span class="quote" dir="auto">{e(_excerpt(str(c.get("text", ""))))}</span></li>' for c in cites)
            body.append(f'<p><strong>{e(w["sources"])}</strong></p><ol class="sources">{items}</ol>')
        body.append("</section>")
    return (f'<!doctype html>\n<html lang="{e(lang)}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{e(_title(conv, turn))}</title><style>{_STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def export_conversation(conv: Conversation, fmt: ExportFormat, base: str, turn: int | None = None) -> str:
    """``conv`` (or only its turn ``turn``) as Markdown or one self-contained HTML page, its links on ``base``."""
    return (to_markdown if fmt is ExportFormat.MARKDOWN else to_html)(conv, base, turn)
