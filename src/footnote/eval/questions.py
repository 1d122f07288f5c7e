"""Question sets in the JSON Lines format of ``eval/README.md`` (a JSON array of the same objects is
accepted too); bad rows fail with file:line (file: item N for an array)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from footnote.errors import InputError


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    lang: str = Field(min_length=1)
    answerable: bool
    category: str = Field(min_length=1)
    gold: list[str] = Field(default_factory=list)
    answers: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    lang: str
    answerable: bool
    category: str
    gold: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()

    @property
    def cell(self) -> str:
        """The report cell key, e.g. ``in_corpus/ru``."""
        return f"{self.category}/{self.lang}"


def load_questions(
    path: str | Path, *, langs: Sequence[str] | None = None, limit: int | None = None
) -> list[Question]:
    """Read a question file. ``langs`` keeps only those languages; ``limit`` keeps the first N
    (after the language filter). A malformed row raises ``InputError`` naming file and line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(p, "question file not found") from None
    except UnicodeDecodeError as e:
        raise InputError(p, f"not UTF-8: {e}") from None
    keep = {lg.strip() for lg in langs if lg.strip()} if langs else None
    out: list[Question] = []
    seen: set[str] = set()
    for lineno, item, where in _items(p, text):
        try:
            row = _Row.model_validate(item)
        except ValidationError as e:
            problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'row'}: {err['msg']}" for err in e.errors())
            raise InputError(p, f"{where}not a question row ({problems})", line=lineno) from None
        if row.id in seen:
            raise InputError(p, f"{where}duplicate question id {row.id!r}", line=lineno)
        seen.add(row.id)
        if row.answerable and not row.gold:
            raise InputError(p, f"{where}answerable question {row.id!r} has no gold ids", line=lineno)
        if keep is not None and row.lang not in keep:
            continue
        out.append(
            Question(row.id, row.question, row.lang, row.answerable, row.category, tuple(row.gold), tuple(row.answers))
        )
    if not out:
        raise InputError(p, "no questions" + (f" in languages {sorted(keep)}" if keep else ""))
    return stratified_limit(out, limit) if limit is not None else out


def _items(p: Path, text: str) -> Iterator[tuple[int | None, object, str]]:
    """(line, parsed row, where-prefix) for JSON Lines (one object per line), or for one JSON array of
    objects (then rows are named "item N: ")."""
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(p, f"not valid JSON ({e.msg}); expected JSON Lines (one question object per line) "
                             "or one JSON array of question objects", line=e.lineno) from None
        if not isinstance(data, list):  # pragma: no cover - "[" starts an array
            raise InputError(p, "expected a JSON array of question objects")
        for i, item in enumerate(data, 1):
            yield None, item, f"item {i}: "
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(p, f"not valid JSON: {e.msg} (expected JSON Lines: one question object per line, "
                             "or one JSON array of them)", line=lineno) from None
        yield lineno, item, ""


def stratified_limit(questions: Sequence[Question], limit: int) -> list[Question]:
    """At most ``limit`` questions taken round-robin across cells (category/language), each cell
    in file order, so a small run still covers every category and language. File order is kept."""
    if limit <= 0 or limit >= len(questions):
        return list(questions)
    cells: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        cells.setdefault(q.cell, []).append(i)
    chosen: list[int] = []
    depth = 0
    while len(chosen) < limit:
        for idx in cells.values():
            if depth < len(idx) and len(chosen) < limit:
                chosen.append(idx[depth])
        depth += 1
    return [questions[i] for i in sorted(chosen)]


def question_texts(path: str | Path, *, limit: int | None = None) -> list[str]:
    """The questions of a question file (:func:`load_questions`), or of the demo's ``questions.json``
    (``{"questions": [{"question": …}, …]}``): the texts only, the first ``limit``."""
    p = Path(path)
    if p.suffix == ".json":
        import json

        data = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("questions"), list):
            return [str(q["question"]) for q in data["questions"]][:limit]
    return [q.question for q in load_questions(p, limit=limit)]
