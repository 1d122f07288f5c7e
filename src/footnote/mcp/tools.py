"""What the MCP tools and resources do, over an :class:`~footnote.engine.Engine` (synchronous).

Transport-free so that it can be read and tested on its own; :mod:`footnote.mcp.server` registers these
as MCP tools and runs them in worker threads. Everything is looked up by id in the store: no argument is
ever used as a filesystem path, so ``../`` or an absolute path names nothing and is ``NotFound``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from footnote.answer.citations import citation_label
from footnote.answer.types import abstention_dict, gate_abstention
from footnote.engine import Engine
from footnote.errors import NotFound, UsageError
from footnote.records.fragments import (
    AddressLocator,
    FileLocator,
    Fragment,
    Locator,
    Source,
    TranscriptLocator,
    fragment_dict,
    locator_from_dict,
)
from footnote.retrieve.format import format_locator, format_ms

SOURCE_URI = "footnote://source/"

#: What an agent is told for each gate verdict (the ``search`` tool's ``coverage`` line).
COVERAGE = {
    "sufficient": "the corpus covers this question",
    "good_enough": "the corpus covers this question",
    "insufficient": "the corpus has only weak matches: treat them as possibly unrelated",
    "bail_out": "the corpus has nothing on this question: the notes below (if any) are unrelated",
}


def source_summary(s: Source) -> dict[str, Any]:
    return {"source_id": s.id, "kind": s.kind, "title": s.title, "lang": s.lang,
            "media_type": s.media_type, "uri": SOURCE_URI + s.id,
            "transcript": s.meta.get("transcript_by") or None,  # "machine": a speech recognition
            "ocr": "ocr" in s.meta}  # some pages (ocr_pages) read by OCR


def _fragment_dict(f: Fragment, title: str | None, *, cited: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {**fragment_dict(f), "label": format_locator(f.locator, title)}
    if cited is not None:
        out["cited"] = cited
    return out


def _matches(f: Fragment, want: Locator) -> bool:
    loc = f.locator
    if isinstance(want, TranscriptLocator):
        return isinstance(loc, TranscriptLocator) and loc.start_ms < max(want.end_ms, want.start_ms + 1) \
            and loc.end_ms > want.start_ms
    if isinstance(want, AddressLocator):
        return isinstance(loc, AddressLocator) and loc.book == want.book and loc.loc == want.loc
    if isinstance(loc, FileLocator) and isinstance(want, FileLocator):
        if want.page is not None and loc.page != want.page:
            return False
        return not want.section or loc.section == want.section
    return False


@dataclass
class FootnoteTools:
    """The four MCP tools and the source resource, over one engine."""

    engine: Engine

    @property
    def _mcp(self) -> Any:
        return self.engine.settings.mcp

    def search(self, query: str, k: int | None = None) -> dict[str, Any]:
        k = self._mcp.search_k if k is None else k
        if not 1 <= k <= self._mcp.search_max_k:
            raise UsageError(f"k must be between 1 and {self._mcp.search_max_k}, not {k}")
        result = self.engine.search(query)  # the engine checks the question (InvalidQuestion)
        cands = result.candidates[:k]
        titles = result.corpus.titles(c.fragment.source_id for c in cands)
        verdict = result.verdict.value
        notes = []
        for i, c in enumerate(cands, 1):
            f = c.fragment
            notes.append({"n": i, "title": titles.get(f.source_id, ""), **_fragment_dict(f, titles.get(f.source_id)),
                          "score": round(float(c.score), 4)})
        return {"verdict": verdict, "corpus_has_nothing": result.verdict.abstains,
                "coverage": COVERAGE.get(verdict, verdict),
                "abstention": abstention_dict(gate_abstention(result.verdict)), "lexical_only": result.lexical_only,
                "notes": notes, "total_candidates": len(result.candidates)}

    def ask(self, question: str, fallback: bool | None = None) -> dict[str, Any]:
        answer = self.engine.ask(question, fallback=fallback)  # the engine checks the question
        data = answer.to_dict()
        data.pop("trace", None)
        for c, d in zip(answer.citations, data["citations"], strict=True):
            d["label"] = citation_label(c)  # names a commentary's commentator (source_meta)
        return data

    def _source(self, source_id: str) -> Source:
        src = self.engine.store.get_source(source_id) if source_id else None
        if src is None:
            raise NotFound(f"no source {source_id!r} in the store (ids come from search, ask or list_sources)")
        return src

    def get_source(self, source_id: str, locator: dict[str, Any] | None = None) -> dict[str, Any]:
        src = self._source(source_id)
        frags = sorted(self.engine.store.fragments_of(src.id), key=lambda f: f.ordinal)
        cap = self._mcp.max_fragments
        out: dict[str, Any] = {"source": source_summary(src), "fragment_count": len(frags)}
        if not locator:
            out["fragments"] = [_fragment_dict(f, src.title) for f in frags[:cap]]
            out["truncated"] = len(frags) > cap
            return out
        try:
            want = locator_from_dict({"label": "", **locator} if "book" in locator else locator)
        except (KeyError, TypeError, ValueError) as e:
            raise UsageError(
                f"locator {locator!r} is not one of {{track_id, start_ms, end_ms}}, {{book, loc}} or {{file, page, section}}"
            ) from e
        if isinstance(want, TranscriptLocator) and want.track_id != src.id:
            raise UsageError(f"locator names track {want.track_id!r}, not source {src.id!r}")
        hit = [i for i, f in enumerate(frags) if _matches(f, want)]
        if not hit:
            raise NotFound(f"source {src.id!r} has no passage at {_describe(want)}")
        ctx = self._mcp.context_fragments
        lo, hi = max(0, hit[0] - ctx), min(len(frags), hit[-1] + ctx + 1)
        chosen = set(hit)
        window = list(range(lo, hi))[:cap]
        out["fragments"] = [_fragment_dict(frags[i], src.title, cited=i in chosen) for i in window]
        out["truncated"] = hi - lo > cap
        return out

    def list_sources(self, kind: str | None = None, lang: str | None = None, cursor: str | None = None) -> dict[str, Any]:
        try:
            start = int(cursor) if cursor else 0
        except ValueError as e:
            raise UsageError(f"cursor {cursor!r} is not one this tool returned") from e
        if start < 0:
            raise UsageError(f"cursor {cursor!r} is not one this tool returned")
        sources = sorted(self.engine.store.list_sources(), key=lambda s: s.id)
        if kind:
            sources = [s for s in sources if s.kind == kind]
        if lang:
            sources = [s for s in sources if s.lang == lang]
        page = self._mcp.page_size
        chunk = sources[start : start + page]
        nxt = start + page if start + page < len(sources) else None
        return {"sources": [source_summary(s) for s in chunk], "total": len(sources),
                "next_cursor": None if nxt is None else str(nxt)}

    def source_text(self, source_id: str) -> str:
        """The ``footnote://source/{id}`` resource: a header, then the source's fragments with their labels."""
        src = self._source(source_id)
        limit = self._mcp.resource_max_chars
        head = f"# {src.title or src.id}\n\nsource_id: {src.id}\nkind: {src.kind}\nlang: {src.lang}\n"
        parts = [head]
        size = len(head)
        for f in sorted(self.engine.store.fragments_of(src.id), key=lambda f: f.ordinal):
            block = f"\n[{format_locator(f.locator, src.title)}]\n{f.text}\n"
            if size + len(block) > limit:
                parts.append(f"\n… (cut at {limit} characters; use get_source with a locator for a passage)\n")
                break
            parts.append(block)
            size += len(block)
        return "".join(parts)

    def listed_sources(self) -> list[Source]:
        return sorted(self.engine.store.list_sources(), key=lambda s: s.id)[: self._mcp.resources_listed_max]


def _describe(loc: Locator) -> str:
    if isinstance(loc, TranscriptLocator):
        return f"{format_ms(loc.start_ms)}–{format_ms(loc.end_ms)}"
    return format_locator(loc)
