"""Rows of the PostgreSQL store: its column lists and the records made from a row (shared by the store's mixins)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from footnote.records.fragments import Fragment, Source, locator_from_dict

FRAG_COLS = "id, source_id, ordinal, kind, lang, text, locator, content_hash"
#: The fragment columns (and vector) a lane statement returns beside each hit in rows mode
#: (:meth:`PostgresStore.search_many_rows`), NULL for ids the caller already holds (``%(have)s``).
ROW_COLS = ", ".join(f"f.{c.strip()}" for c in FRAG_COLS.split(",")) + ", f.embedding"
ROW_JOIN = "LEFT JOIN fragments f ON f.id = {hit}.id AND NOT (f.id = ANY(%(have)s))"
#: A text lane's statement (two columns: id, score; in its own order) with the hits' rows joined.
TEXT_ROWS_SQL = ("SELECT h.id, h.s, " + ROW_COLS + " FROM (SELECT q.*, row_number() OVER () AS o FROM ({inner})"
                  " q(id, s)) h " + ROW_JOIN.format(hit="h") + " ORDER BY h.o")
#: Rows per fragment row in rows mode: hit columns first, then these.
ROW_WIDTH = 9


def source_row(row: Sequence[Any]) -> Source:
    return Source(
        id=row[0], kind=row[1], title=row[2], lang=row[3], content_hash=row[4], blob_sha256=row[5],
        original_name=row[6], media_type=row[7], origin=row[8], meta={str(k): str(v) for k, v in row[9].items()},
        collection=row[10],
    )


def fragment_row(row: Sequence[Any]) -> Fragment:
    return Fragment(
        id=row[0], source_id=row[1], ordinal=row[2], kind=row[3], lang=row[4], text=row[5],
        locator=locator_from_dict(row[6]), content_hash=row[7],
    )


def take_rows(
    fetched: Sequence[Sequence[Any]], at: int, got: dict[str, tuple[Fragment, np.ndarray]], dim: int
) -> None:
    """The fragment rows a rows-mode statement returned from column ``at`` on (NULL where not sent); a
    fragment without a vector yet gets zeros, as :meth:`PostgresStore.get_fragments_with_embeddings`."""
    for r in fetched:
        if r[at] is not None and r[at] not in got:
            vec = r[at + ROW_WIDTH - 1]
            got[r[at]] = (fragment_row(r[at : at + ROW_WIDTH - 1]),
                          np.asarray(vec, dtype=np.float32) if vec is not None else np.zeros(dim, dtype=np.float32))


def clean(s: str) -> str:
    """PostgreSQL text cannot hold NUL."""
    return s.replace("\x00", " ")
