"""Recognition work kept in the store: recordings and scans that ``footnote ingest --recognise-later`` left for
``footnote worker`` (any machine) to read by speech recognition or OCR (docs/postgres.md, "Workers on several
machines").

A job names a stored source (a placeholder holding the original file and no passages yet), the task (``asr``
or ``ocr``) and the load options the ingest was given. A worker claims one job for ``lease_s`` (renewed while
it works; a killed worker's job passes to another when the lease runs out), reads the original from the store,
writes the source's passages and removes the job; a job that fails is released with its error and retried by the
next worker, up to a number of tries. Written once for both backends over ``_select`` and ``_change_rows``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable


class Task(StrEnum):
    ASR = "asr"  # speech recognition of a recording without a transcript
    OCR = "ocr"  # OCR of a scanned page


@dataclass(frozen=True)
class RecognitionJob:
    source_id: str
    task: Task
    options: dict[str, Any] = field(default_factory=dict)  # the ingest's load options: kind, lang
    holder: str = ""  # who holds it ("" when nobody does)
    until: float = 0.0  # the holder's lease (Unix seconds)
    tries: int = 0
    error: str = ""  # the last try's error

    def to_dict(self) -> dict[str, Any]:
        return {"source_id": self.source_id, "task": self.task.value, "holder": self.holder or None,
                "until": self.until or None, "tries": self.tries, "error": self.error or None}


@runtime_checkable
class RecognitionStore(Protocol):
    """Speech-recognition and OCR jobs beside the corpus (``tests/store/test_recognition_jobs.py``, both backends)."""

    def put_recognition_job(self, source_id: str, task: Task, options: dict[str, Any]) -> None:
        """Add the job of ``source_id`` (or start it over: no holder, no tries)."""
        ...

    def claim_recognition_job(self, holder: str, lease_s: float, max_tries: int,
                              tasks: Sequence[Task] = (Task.ASR, Task.OCR)) -> RecognitionJob | None:
        """The first job of ``tasks`` nobody holds (or whose lease ran out) with fewer than ``max_tries`` tries, now
        held by ``holder`` for ``lease_s`` — atomically, so two workers never hold one job; None when there is none."""
        ...

    def renew_recognition_job(self, source_id: str, holder: str, lease_s: float) -> bool:
        """Extend ``holder``'s lease on the job; False when it holds it no longer."""
        ...

    def finish_recognition_job(self, source_id: str, holder: str, error: str | None = None) -> None:
        """Done: the job is removed; with ``error``: released, its tries counted and the error kept."""
        ...

    def recognition_jobs(self) -> list[RecognitionJob]:
        """Every job, by source id."""
        ...


_COLS = "source_id, task, options, holder, until, tries, error"


def _job(r: Sequence[Any]) -> RecognitionJob:
    return RecognitionJob(str(r[0]), Task(r[1]), json.loads(r[2]) if isinstance(r[2], str) else dict(r[2]),
                          str(r[3] or ""), float(r[4] or 0.0), int(r[5] or 0), str(r[6] or ""))


class RecognitionListing:
    """:class:`RecognitionStore` written once; a backend gives ``_select`` and ``_change_rows``."""

    def _select(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError

    def _change_rows(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        """Run one writing statement (``… RETURNING``) in its own transaction; the rows it returned."""
        raise NotImplementedError

    def put_recognition_job(self, source_id: str, task: Task, options: dict[str, Any]) -> None:
        self._change_rows(
            "INSERT INTO recognition_jobs (source_id, task, options, holder, until, tries, error) "
            "VALUES (?, ?, ?, '', 0, 0, '') ON CONFLICT (source_id) DO UPDATE SET task = EXCLUDED.task, "
            "options = EXCLUDED.options, holder = '', until = 0, tries = 0, error = '' RETURNING source_id",
            [source_id, task.value, json.dumps(options, ensure_ascii=False, sort_keys=True)])

    def claim_recognition_job(self, holder: str, lease_s: float, max_tries: int,
                              tasks: Sequence[Task] = (Task.ASR, Task.OCR)) -> RecognitionJob | None:
        if not tasks:
            return None
        now = time.time()
        marks = ", ".join("?" * len(tasks))
        names = [t.value for t in tasks]
        # the outer WHERE repeats the test: of two claims racing for one row, the second finds it held, and none
        rows = self._change_rows(
            f"UPDATE recognition_jobs SET holder = ?, until = ? WHERE until < ? AND tries < ? AND source_id = "
            f"(SELECT source_id FROM recognition_jobs WHERE until < ? AND tries < ? AND task IN ({marks}) "
            f"ORDER BY tries, source_id LIMIT 1) RETURNING {_COLS}",
            [holder, now + lease_s, now, max_tries, now, max_tries, *names])
        return _job(rows[0]) if rows else None

    def renew_recognition_job(self, source_id: str, holder: str, lease_s: float) -> bool:
        rows = self._change_rows("UPDATE recognition_jobs SET until = ? WHERE source_id = ? AND holder = ? "
                                 "RETURNING source_id", [time.time() + lease_s, source_id, holder])
        return bool(rows)

    def finish_recognition_job(self, source_id: str, holder: str, error: str | None = None) -> None:
        if error is None:
            self._change_rows("DELETE FROM recognition_jobs WHERE source_id = ? AND holder = ? RETURNING source_id",
                              [source_id, holder])
        else:
            self._change_rows("UPDATE recognition_jobs SET holder = '', until = 0, tries = tries + 1, error = ? "
                              "WHERE source_id = ? AND holder = ? RETURNING source_id", [error[:2000], source_id, holder])

    def recognition_jobs(self) -> list[RecognitionJob]:
        return [_job(r) for r in self._select(f"SELECT {_COLS} FROM recognition_jobs ORDER BY source_id", [])]
