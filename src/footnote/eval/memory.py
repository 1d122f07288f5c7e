"""Curated-memory matching measured and calibrated (``footnote calibrate --memory``, ``footnote eval --memory``).

Labelled questions (JSON ``{"questions": [{"q", "lang", "note", "split"}]}``, ``note`` null for a
question no note is about, ``split`` ``fit`` or ``test``). For each question: every note's score
(the matcher's, with the store's embedder). The signal is the best note score; a question written for
a note is a **hit** when that note is the best-scoring note and clears the threshold; a **false
match** is a question written for no note that clears it (or one written for a note whose best
match is another note that clears it).

The fitted threshold is the lowest that no ``fit`` question written for no note reaches, plus
``margin``; AUROC (best score, written-for-a-note vs not) is reported on both halves. The lean policy's
saving: the same pinned questions answered with memory on (lean) and off (wide), p50 of each.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footnote.engine import Engine
from footnote.errors import InputError, UsageError
from footnote.eval.metrics import auroc, percentile
from footnote.records.memory import NoteKind


@dataclass(frozen=True)
class MemoryQuestion:
    q: str
    lang: str
    note: str | None
    split: str


@dataclass(frozen=True)
class MemoryRow:
    question: MemoryQuestion
    best_id: str | None
    best_score: float
    threshold: float  # the threshold the best note was compared with
    want_score: float | None


def load_memory_questions(path: Path) -> list[MemoryQuestion]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(path, f"cannot read labelled memory questions: {e}") from None
    items = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise InputError(path, "expected {\"questions\": [{\"q\", \"lang\", \"note\", \"split\"}, …]}")
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, dict) or not isinstance(it.get("q"), str) or it.get("split") not in ("fit", "test"):
            raise InputError(path, f"question {i}: needs 'q' (text) and 'split' (fit or test)")
        note = it.get("note")
        out.append(MemoryQuestion(it["q"], str(it.get("lang") or ""), note if isinstance(note, str) else None, it["split"]))
    return out


def collect_memory(engine: Engine, questions: Sequence[MemoryQuestion]) -> list[MemoryRow]:
    """Every question's note scores (one query embedding each)."""
    if not engine.store.list_memory_notes():
        raise UsageError(f"the store {engine.store.url} holds no memory notes: import them first (--memory NOTES)")
    matcher = engine.retriever.matcher
    rows = []
    for q in questions:
        qn = engine.question(q.q)
        vec = engine.embedder.embed_queries([qn])[0] if engine.embedder is not None else None
        lang = q.lang or engine.settings.corpus.default_lang
        scored = matcher.score(qn, vec, lang)
        best = scored.scores[0] if scored.scores else None
        want = next((m.score for m in scored.scores if m.note.id == q.note), None) if q.note else None
        rows.append(MemoryRow(q, best.note.id if best else None, best.score if best else 0.0,
                              best.threshold if best else 1.0, want))
    return rows


def fit_threshold(rows: Sequence[MemoryRow], margin: float) -> float:
    negs = [r.best_score for r in rows if r.question.split == "fit" and r.question.note is None]
    poss = [r.want_score for r in rows if r.question.split == "fit" and r.question.note and r.want_score is not None]
    if not negs or not poss:
        raise UsageError("the fit half needs questions written for a note and questions written for none")
    return round(max(negs) + margin, 4)


def outcomes(rows: Sequence[MemoryRow], threshold: float | None = None) -> dict[str, Any]:
    """Hit rate and false matches per split (``threshold`` None: each row's own, as configured)."""
    out: dict[str, Any] = {}
    for split in ("fit", "test"):
        rs = [r for r in rows if r.question.split == split]
        pos = [r for r in rs if r.question.note]
        neg = [r for r in rs if not r.question.note]

        def clears(r: MemoryRow) -> bool:
            return r.best_score >= (r.threshold if threshold is None else threshold)

        hits = sum(1 for r in pos if r.best_id == r.question.note and clears(r))
        wrong = sum(1 for r in pos if r.best_id != r.question.note and clears(r))
        false = sum(1 for r in neg if clears(r))
        scores = [r.best_score for r in rs]
        out[split] = {
            "n_for_notes": len(pos), "n_for_none": len(neg),
            "hit_rate": round(hits / len(pos), 4) if pos else None,
            "wrong_note": wrong,
            "false_matches": false,
            "false_match_rate": round(false / len(neg), 4) if neg else None,
            "auroc": _round(auroc(scores, [bool(r.question.note) for r in rs])) if rs else None,
            "misses": [r.question.q for r in pos if not (r.best_id == r.question.note and clears(r))],
            "false": [r.question.q for r in neg if clears(r)],
        }
    return out


def lean_vs_wide(engine: Engine, questions: Sequence[MemoryQuestion], repeats: int = 3) -> dict[str, Any]:
    """p50 milliseconds of whole turns for the questions written for pinned notes: as they are (lean
    when the pinned note matches) and with curated memory off (the wide policy)."""
    pinned = {n.id for n in engine.store.list_memory_notes(NoteKind.PINNED)}
    qs = [q.q for q in questions if q.note in pinned]
    if not qs:
        return {"n": 0}
    wide = Engine(engine.settings.with_overrides(**{"memory.enabled": False}), engine.store, engine.embedder,
                  engine.reranker, engine.chat_models)
    times: dict[str, list[float]] = {"lean": [], "wide": []}
    policies: list[str] = []
    for _ in range(repeats):
        for q in qs:
            for name, eng in (("lean", engine), ("wide", wide)):
                t0 = time.perf_counter()
                a = eng.ask(q)
                times[name].append((time.perf_counter() - t0) * 1000)
                if name == "lean":
                    policies.append(str(a.trace.policy if a.trace is not None else None))
    wide.close_stages()
    return {
        "n": len(qs), "repeats": repeats,
        "lean_share": round(policies.count("lean") / len(policies), 4),
        "lean_p50_ms": _round(percentile(times["lean"], 50)), "wide_p50_ms": _round(percentile(times["wide"], 50)),
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)


def summary_lines(section: dict[str, Any]) -> list[str]:
    lines = []
    for split in ("fit", "test"):
        s = section["outcomes"][split]
        lines.append(f"memory {split}: hit rate {s['hit_rate']} ({s['n_for_notes']} for notes), false matches "
                     f"{s['false_matches']}/{s['n_for_none']} off-note, wrong note {s['wrong_note']}, AUROC {s['auroc']}")
    lat = section.get("latency")
    if lat and lat.get("n"):
        lines.append(f"lean vs wide (pinned questions, {lat['n']}×{lat['repeats']}): p50 {lat['lean_p50_ms']} ms vs "
                     f"{lat['wide_p50_ms']} ms; lean taken {lat['lean_share']:.0%}")
    return lines
