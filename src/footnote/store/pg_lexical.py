"""PostgreSQL: the stemmed and unstemmed lexical lanes of one query as one statement.

The two lanes of a query mostly find the same fragments (on the 100k bench store 39.97 of 40 on
average; on real text most of them): as two statements on two connections each one reads its hits' rows from
``fragments``, sends them, and the client decodes them twice. :func:`pair_sql` runs both rankings in
one statement and sends each hit's row once, with its first occurrence (docs/postgres.md).
"""

from __future__ import annotations

import re
from typing import Any

from footnote.store.batch import LexicalCall

#: A named parameter of a statement (``%(name)s``).
_PARAM = re.compile(r"%\((\w+)\)s")

#: The lane tag of each hit of a paired statement (its first column): 0 the first statement, 1 the second.
FIRST, SECOND = 0, 1


def pair_key(c: LexicalCall) -> tuple[Any, ...]:
    """What the two lanes of one query share: calls with the same key (one stemmed, one not) are paired."""
    return (c.query, c.k, c.lang, c.kinds)


def pair_sql(
    first: tuple[str, dict[str, Any]], second: tuple[str, dict[str, Any]], have: list[str] | None, row_cols: str
) -> tuple[str, dict[str, Any]]:
    """Two lexical statements (each: id, score; in its own order, LIMIT k) as one: rows ``(tag, id,
    score)`` ordered by tag, then each statement's own order. With ``have`` (rows mode) the columns
    ``row_cols`` of ``fragments f`` follow, for the first occurrence of an id not in ``have`` only
    (NULL elsewhere). The second statement's parameters are renamed (``name`` → ``name_2``)."""
    sql2 = _PARAM.sub(lambda m: f"%({m.group(1)}_2)s", second[0])
    params = {**first[1], **{f"{k}_2": v for k, v in second[1].items()}}
    hits = (f"SELECT {FIRST} AS tag, q.id, q.s, row_number() OVER () AS o FROM ({first[0]}) q(id, s)"
            f" UNION ALL SELECT {SECOND}, q.id, q.s, row_number() OVER () FROM ({sql2}) q(id, s)")
    if have is None:
        return f"SELECT h.tag, h.id, h.s FROM ({hits}) h ORDER BY h.tag, h.o", params
    sql = (f"WITH h AS MATERIALIZED ({hits}),"
           f" kf AS MATERIALIZED (SELECT {row_cols} FROM (SELECT DISTINCT id FROM h) u JOIN fragments f ON f.id = u.id"
           " WHERE NOT (f.id = ANY(%(have)s))),"
           " r AS (SELECT h.tag, h.id, h.s, h.o, row_number() OVER (PARTITION BY h.id ORDER BY h.tag) AS n FROM h)"
           " SELECT r.tag, r.id, r.s, kf.* FROM r LEFT JOIN kf ON kf.id = r.id AND r.n = 1 ORDER BY r.tag, r.o")
    return sql, {**params, "have": have}
