"""Search on the SQLite store: the fragment rows and vectors the retrieval pool reads (kept per write
generation), and the lanes — dense over an in-process numpy snapshot, lexical over FTS5 (stemmed and
unstemmed), address, trigram. A mixin of :class:`~footnote.store.sqlite.SqliteStore`."""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from footnote.errors import StoreError
from footnote.records.fragments import Fragment
from footnote.store.dense import DenseCache, DenseSnapshot
from footnote.store.protocol import Hit
from footnote.store.sqlite_schema import FRAGMENT_COLS, IN_CHUNK, book_key, fragment_from_row
from footnote.store.text import Analyzer, fts_or, fts_phrase, trigrams

if TYPE_CHECKING:
    from footnote.settings import StoreSettings

log = logging.getLogger(__name__)

#: the per-generation counts also keep the bound dimension (0: none)
DIM_KEY = ("", "embedder_dim")


class SqliteSearch:
    """Reading fragments for the pool, and the four lanes."""

    if TYPE_CHECKING:  # provided by SqliteStore
        url: str
        settings: StoreSettings
        _analyzer: Analyzer
        _dense: DenseCache
        _gen_cache: tuple[int, dict[str, tuple[Fragment, bytes | None]], dict[tuple[str, str], int]]
        _common_terms: tuple[int, dict[str, frozenset[str]]]

        def _conn(self) -> sqlite3.Connection: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _drop_orphan_transaction(self, conn: sqlite3.Connection) -> None: ...

        def _binding(self, conn: sqlite3.Connection) -> tuple[str, int] | None: ...

    def _cache_at(self, gen: int) -> tuple[dict[str, tuple[Fragment, bytes | None]], dict[tuple[str, str], int]]:
        """The per-generation caches (fresh ones when the store was written since)."""
        cached = self._gen_cache
        if cached[0] != gen:
            cached = (gen, {}, {})
            self._gen_cache = cached
        return cached[1], cached[2]

    def get_fragments_with_embeddings(self, fragment_ids: Sequence[str]) -> tuple[list[Fragment], np.ndarray]:
        """Fragments (in the order asked, unknown ids skipped) and a vector per asked id (zeros where
        none), read together in one snapshot — the retrieval pool needs both (``store.batch``). Rows
        read are kept until the next write (``settings.sqlite.fragment_cache`` of them); when every row
        asked is kept, only the generation is read (one statement: the rows are those of that generation)."""
        wanted = list(dict.fromkeys(fragment_ids))
        conn = self._conn()
        self._drop_orphan_transaction(conn)  # a left-open transaction would show an old generation
        rows, counts = self._cache_at(self._generation(conn))
        dim = counts.get(DIM_KEY)
        found = {fid: rows[fid] for fid in wanted if fid in rows}
        missing: list[str] = []
        if dim is None or len(found) < len(wanted):
            with self._read() as conn:
                rows, counts = self._cache_at(self._generation(conn))
                binding = self._binding(conn)
                dim = counts[DIM_KEY] = binding[1] if binding else 0
                found = {fid: rows[fid] for fid in wanted if fid in rows}
                missing = [fid for fid in wanted if fid not in found]
                for i in range(0, len(missing), IN_CHUNK):
                    chunk = missing[i : i + IN_CHUNK]
                    q = (f"SELECT {FRAGMENT_COLS}, e.vec FROM fragments LEFT JOIN embeddings e ON e.rid = fragments.rid "
                         f"WHERE fragments.id IN ({','.join('?' * len(chunk))})")
                    for row in conn.execute(q, chunk):
                        found[row[0]] = (fragment_from_row(row[:-1]), row[-1])
        room = self.settings.sqlite.fragment_cache - len(rows)
        if room > 0 and missing:
            rows.update((fid, found[fid]) for fid in missing[:room] if fid in found)
        frags: list[Fragment] = []
        blobs: list[bytes] = []
        none = bytes(4 * dim)  # the zero vector: unknown id, or no vector yet
        for fid in fragment_ids:
            got = found.get(fid)
            if got is None:
                blobs.append(none)
                continue
            frags.append(got[0])
            blob = got[1]
            blobs.append(none if blob is None or len(blob) < 4 * dim else blob[: 4 * dim])
        if not dim:
            return frags, np.zeros((len(fragment_ids), 0), dtype=np.float32)
        # one read of the joined blobs; astype: a writable copy of our own, not a view of them
        mat = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(fragment_ids), dim).astype(np.float32)
        return frags, mat

    # --- lanes ----------------------------------------------------------------------------------

    def _generation(self, conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    def _load_dense(self, prev: DenseSnapshot | None) -> DenseSnapshot:
        """The dense snapshot at the current generation: ``prev`` refreshed (rows gone dropped, new rows
        read) when it still holds most rows, else a full load. One read transaction either way."""
        t0 = time.perf_counter()
        sql = "SELECT e.rid, f.id, f.kind, e.vec FROM embeddings e JOIN fragments f ON f.rid = e.rid"
        with self._read() as conn:
            gen = self._generation(conn)
            binding = self._binding(conn)
            if binding is None:
                return DenseSnapshot.empty(gen)
            dim = binding[1]
            listed = conn.execute("SELECT group_concat(rid) FROM (SELECT rid FROM embeddings ORDER BY rid)").fetchone()[0]
            current = np.array(listed.split(","), dtype=np.int64) if listed else np.empty(0, dtype=np.int64)
            if prev is not None and prev.dim == dim and len(prev.ids) > 0:
                missing = prev.missing_keys(current)
                if len(missing) <= len(current) // 2:
                    new_rows = []
                    for i in range(0, len(missing), IN_CHUNK):
                        chunk = [int(x) for x in missing[i : i + IN_CHUNK]]
                        q = f"{sql} WHERE e.rid IN ({','.join('?' * len(chunk))}) ORDER BY e.rid"
                        new_rows.append(conn.execute(q, chunk).fetchall())
                    snap = prev.refreshed(gen, current, new_rows)
                    log.debug(
                        "store %s: dense refresh +%d rows, now %d, in %.0f ms",
                        self.url, len(missing), len(snap.ids), (time.perf_counter() - t0) * 1e3,
                    )  # fmt: skip
                    return snap
            cur = conn.execute(f"{sql} ORDER BY e.rid")
            snap = DenseSnapshot.build(gen, dim, len(current), iter(lambda: cur.fetchmany(4096), []))
        log.info("store %s: loaded %d vectors in %.0f ms", self.url, len(snap.ids), (time.perf_counter() - t0) * 1e3)
        return snap

    def search_dense(self, vector: np.ndarray, k: int, kinds: Sequence[str] | None = None) -> list[Hit]:
        conn = self._conn()
        snap = self._dense.get(self._generation(conn), self._load_dense)
        if not snap.ids:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != snap.matrix.shape[1]:
            raise StoreError(f"query vector has dim {q.shape[0]}, the store's vectors {snap.matrix.shape[1]}")
        norm = math.sqrt(float(q @ q))  # np.linalg.norm costs more than the product itself on a small store
        if not math.isfinite(norm) or norm == 0.0:
            return []
        return snap.search(q / norm, k, kinds)

    def search_lexical(
        self, query: str, k: int, *, stemmed: bool, lang: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        terms = self._analyzer.query_terms(query, stemmed=stemmed, lang=lang)
        if not terms or k <= 0:
            return []
        column, weights = ("stemmed", "1.0, 0.0") if stemmed else ("plain", "0.0, 1.0")
        conn = self._conn()
        terms = self._drop_common_terms(conn, terms, column)
        params: list[Any] = [f"{column} : ({fts_or(terms)})"]
        where = ""
        if kinds is not None:
            if not kinds:
                return []
            where = f" AND f.kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        params.append(k)
        sql = (
            f"SELECT f.id, bm25(fts, {weights}) AS r FROM fts JOIN fragments f ON f.rid = fts.rowid "
            f"WHERE fts MATCH ?{where} ORDER BY r LIMIT ?"
        )
        return [Hit(fid, -float(r)) for fid, r in conn.execute(sql, params)]

    def _drop_common_terms(self, conn: sqlite3.Connection, terms: list[str], column: str) -> list[str]:
        """Leave out terms found in more than ``settings.lexical_max_df`` of the fragments (in a store of at
        least ``settings.lexical_prune_min_fragments``): BM25 gives them (almost) no weight, yet scoring
        their long posting lists is most of a query's cost. A query made only of such terms keeps them all."""
        ratio = self.settings.lexical_max_df
        if ratio >= 1.0 or len(terms) < 2:
            return terms
        gen = self._generation(conn)
        _, counts = self._cache_at(gen)  # counts and dfs stay valid until a write
        total = counts.get(("", ""))
        if total is None:
            total = counts[("", "")] = int(conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0])
        if total < self.settings.lexical_prune_min_fragments:
            return terms
        if total <= self.settings.sqlite.common_terms_scan_max:
            # a small store: its common terms, found once per generation (one scan of the vocabulary)
            at, by_column = self._common_terms
            common = by_column.get(column) if at == gen else None
            if common is None:
                common = self._scan_common_terms(column, ratio)
            kept = [t for t in terms if t not in common]
            return kept or terms
        unknown = [t for t in terms if (column, t) not in counts]
        if unknown:
            got = dict(conn.execute(
                f"SELECT term, doc FROM fts_vocab WHERE col = ? AND term IN ({','.join('?' * len(unknown))})",
                [column, *unknown],
            ))
            if len(counts) < self.settings.sqlite.fragment_cache:
                counts.update(((column, t), int(got.get(t, 0))) for t in unknown)
        else:
            got = {}
        df = {t: counts.get((column, t), got.get(t, 0)) for t in terms}
        kept = [t for t in terms if df.get(t, 0) <= ratio * total]
        return kept or terms

    def _scan_common_terms(self, column: str, ratio: float) -> frozenset[str]:
        """The terms of ``column`` found in more than ``ratio`` of the fragments, read in one snapshot with the
        generation they belong to, and kept until the next write."""
        with self._read() as conn:
            gen = self._generation(conn)
            total = int(conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0])
            common = frozenset(t for (t,) in conn.execute(
                "SELECT term FROM fts_vocab WHERE col = ? AND doc > ?", [column, ratio * total]))
        at, by_column = self._common_terms
        self._common_terms = (gen, {**(by_column if at == gen else {}), column: common})
        return common

    def search_address(self, book: str, loc: str, k: int) -> list[Hit]:
        if k <= 0:
            return []
        rows = self._conn().execute(
            "SELECT id FROM fragments WHERE book_key = ? AND loc = ? ORDER BY source_id, ordinal LIMIT ?",
            (book_key(book), loc.strip(), k),
        )
        return [Hit(r[0], 1.0) for r in rows]

    def list_addresses(self, collections: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        where, args = "", []
        if collections is not None:
            where, args = f" AND s.collection IN ({','.join('?' * len(collections))})", list(collections)
        rows = self._conn().execute(
            "SELECT DISTINCT f.book, f.loc, s.title FROM fragments f JOIN sources s ON s.id = f.source_id "
            "WHERE f.loc_type = 'a' AND f.book IS NOT NULL AND f.loc IS NOT NULL" + where, args
        )
        return [(str(b), str(loc), str(t or "")) for b, loc, t in rows]

    def search_trigram(self, text: str, k: int) -> list[Hit]:
        """Fuzzy match on ``label || source_id || tokens``. Candidates: the rows holding any of the query's
        rarest trigrams (at most ``settings.trigram_query_grams``, looked up one doclist at a time and
        weighted by IDF — cheaper than FTS5's bm25 over thousands of rows); the best
        ``max(trigram_pool, 10k)`` are re-scored by the share of *all* the query's trigrams they contain."""
        grams = trigrams(text)
        if not grams or k <= 0:
            return []
        ordered = sorted(grams)
        with self._read() as conn:
            df = dict(
                conn.execute(
                    f"SELECT term, doc FROM trigram_vocab WHERE term IN ({','.join('?' * len(ordered))})", ordered
                )
            )
            rare = sorted(df, key=lambda g: (df[g], g))[: max(1, self.settings.trigram_query_grams)]
            if not rare:
                return []
            total = conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0]
            parts, weights = [], []
            for g in rare:
                listed = conn.execute(
                    "SELECT group_concat(rowid) FROM trigram WHERE trigram MATCH ?", (fts_phrase(g),)
                ).fetchone()[0]
                if listed:
                    rids_g = np.array(listed.split(","), dtype=np.int64)
                    parts.append(rids_g)
                    weights.append(np.full(len(rids_g), math.log(1.0 + total / df[g])))
            if not parts:
                return []
            uniq, inverse = np.unique(np.concatenate(parts), return_inverse=True)
            score = np.bincount(inverse, weights=np.concatenate(weights))
            n_pool = min(len(uniq), max(self.settings.trigram_pool, 10 * k))
            best = np.argpartition(-score, n_pool - 1)[:n_pool] if n_pool < len(uniq) else np.arange(len(uniq))
            weight = {int(uniq[i]): float(score[i]) for i in best}
            rids = list(weight)
            rows = conn.execute(
                f"SELECT t.rowid, f.id, t.body FROM trigram t JOIN fragments f ON f.rid = t.rowid "
                f"WHERE t.rowid IN ({','.join('?' * len(rids))})",
                rids,
            ).fetchall()
        scored = [(len(grams & trigrams(body)) / len(grams), weight[rid], fid) for rid, fid, body in rows]
        scored.sort(key=lambda x: (-x[0], -x[1], x[2]))
        return [Hit(fid, score) for score, _, fid in scored[:k]]
