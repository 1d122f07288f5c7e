"""How notes, locators and search results read to a person or serialise to JSON.

Shared by ``footnote search``, ``footnote ask``, the HTTP API and the evaluation report, so a
locator reads the same everywhere: ``Lecture title 04:12–04:55``, ``HB 2.4``, ``handbook.pdf p. 7``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from footnote.records.fragments import (
    AddressLocator,
    FileLocator,
    Fragment,
    Locator,
    NoteLocator,
    TranscriptLocator,
    fragment_dict,
)
from footnote.retrieve.types import Candidate, GateSignal, SearchResult, StageTrace


def format_ms(ms: int) -> str:
    """Milliseconds as ``MM:SS`` (``H:MM:SS`` from an hour on); sub-second parts are floored."""
    s = max(0, int(ms)) // 1000
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


def format_locator(loc: Locator, title: str | None = None) -> str:
    """A locator as people read it. ``title`` names a transcript's track (falls back to its id)."""
    if isinstance(loc, TranscriptLocator):
        return f"{title or loc.track_id} {format_ms(loc.start_ms)}–{format_ms(loc.end_ms)}"
    if isinstance(loc, AddressLocator):
        return loc.label or f"{loc.book} {loc.loc}"
    if isinstance(loc, FileLocator):
        out = loc.file
        if loc.page is not None:
            out += f" p. {loc.page}"
        if loc.section:
            out += f" § {loc.section}"
        if loc.para is not None:
            out += f" ¶ {loc.para}"
        return out
    if isinstance(loc, NoteLocator):  # a pinned curated note: the editors' answer
        when = datetime.fromtimestamp(loc.updated, UTC).strftime("%Y-%m-%d") if loc.updated else ""
        return f"editors' answer “{loc.title or loc.note}” ({', '.join(x for x in (loc.author, when) if x)})"
    return str(loc)  # pragma: no cover - Locator is a closed union


def snippet(text: str, limit: int = 240) -> str:
    """The text on one line, cut at a word boundary near ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def lane_scores(c: Candidate) -> dict[str, float]:
    """Best score per lane for a candidate (a lane may have found it for several queries)."""
    out: dict[str, float] = {}
    for h in c.lanes:
        name = h.lane.value
        if name not in out or h.score > out[name]:
            out[name] = h.score
    return dict(sorted(out.items()))


def note_dict(n: int, c: Candidate, titles: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One ranked note in the ``search --json`` / HTTP contract."""
    f: Fragment = c.fragment
    title = (titles or {}).get(f.source_id)
    return {
        "n": n,
        **fragment_dict(f),
        "label": format_locator(f.locator, title),
        "score": round(float(c.score), 6),
        "rerank": None if c.rerank is None else round(float(c.rerank), 6),
        "lanes": {k: round(v, 6) for k, v in lane_scores(c).items()},
        "forced": c.forced,
        "reserve": c.reserve,
        "embedded": c.embedded,
    }


def signal_dict(sig: GateSignal) -> dict[str, Any]:
    return {
        "value": round(float(sig.value), 6),
        "max_score": round(float(sig.max_score), 6),
        "lecture_count": sig.lecture_count,
        "thresholds": {k: float(v) for k, v in sig.thresholds.items()},
        "extra": {k: float(v) for k, v in sig.extra.items()},
    }


def trace_dict(t: StageTrace) -> dict[str, Any]:
    return {"name": t.name, "ms": round(float(t.ms), 3), "counts": dict(t.counts), "info": _jsonable(t.info)}


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple | set | frozenset):
        return [_jsonable(v) for v in x]
    if isinstance(x, str | int | float | bool) or x is None:
        return x
    try:
        return float(x)
    except (TypeError, ValueError):
        return str(x)


def plan_dict(result: SearchResult) -> dict[str, Any]:
    p = result.plan
    return {
        "question": p.question,
        "lang": p.lang,
        "source": p.source,
        "subquestions": [
            {"text": s.text, "paraphrases": list(s.paraphrases), "addresses": [a.label for a in s.addresses]}
            for s in p.subquestions
        ],
        "address_notes": list(p.address_notes),
    }


def search_result_dict(result: SearchResult, titles: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``footnote search --json`` contract: notes, verdict, signal, trace (and plan, rounds)."""
    return {
        "notes": [note_dict(i, c, titles) for i, c in enumerate(result.candidates, 1)],
        "verdict": result.verdict.value,
        "abstains": result.verdict.abstains,
        "signal": signal_dict(result.signal),
        "lexical_only": result.lexical_only,
        "rounds": result.rounds,
        "model_calls": result.model_calls,
        "plan": plan_dict(result),
        "policy": result.policy,
        "memory": [m.to_dict() for m in result.memory],
        "trace": [trace_dict(t) for t in result.trace],
    }
