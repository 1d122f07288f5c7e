"""Why a turn abstains, decided where the pipeline's stages leave it: the reason of an empty outline and
the titles a near miss names (``docs/answering.md``, "Abstention reasons")."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from footnote.answer.trace import StageRecord, last_stage
from footnote.answer.types import Abstention, AbstentionReason, AbstentionStage, Note
from footnote.records.fragments import Source


def outline_abstention(stages: Sequence[StageRecord]) -> Abstention:
    """Why an empty outline abstains, from the turn's recorded stages: the model planner cited no note
    (``planner_found_nothing``); the extractive answer had no sentence floor to judge by and the gate's
    verdict (only weak matches) decided (``insufficient_coverage``); else the extractive answer read the
    passages and found no sentence that answers (``answer_not_in_passages``: a near miss)."""
    outline = last_stage(stages, "outline")
    info: Mapping[str, Any] = outline.info if outline is not None else {}
    if info.get("planner") == "model":
        return Abstention(AbstentionReason.PLANNER_FOUND_NOTHING, AbstentionStage.PLANNER)
    if info.get("declined_by") == "gate":
        return Abstention(AbstentionReason.INSUFFICIENT_COVERAGE, AbstentionStage.GATE)
    return Abstention(AbstentionReason.ANSWER_NOT_IN_PASSAGES, AbstentionStage.ANSWER)


def near_miss_titles(lookup: Callable[[Iterable[str]], Mapping[str, Source]], notes: Sequence[Note],
                     cap: int) -> list[str]:
    """Titles (else file names) of the first ``cap`` distinct sources among ``notes``, best first (``lookup``:
    the sources the store holds among some ids, by id)."""
    if cap <= 0 or not notes:
        return []
    ids = list(dict.fromkeys(n.fragment.source_id for n in notes))
    sources = lookup(ids)
    out: list[str] = []
    for sid in ids:
        s = sources.get(sid)
        title = ((s.title or s.original_name) if s is not None else "").strip()
        if title and title not in out:
            out.append(title)
        if len(out) >= cap:
            break
    return out
