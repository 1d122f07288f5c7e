"""The SQLite store's vectors: the embedder binding, the sentence vectors and the embedding backlog
with its claims. A mixin of :class:`~footnote.store.sqlite.SqliteStore`."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from footnote.errors import StoreError
from footnote.store.protocol import BacklogStats, ClaimHolder, PendingFragment
from footnote.store.sqlite_schema import IN_CHUNK
from footnote.store.validate import check_embeddings

if TYPE_CHECKING:
    from footnote.settings import StoreSettings

log = logging.getLogger(__name__)


class SqliteVectors:
    """The embedder binding and everything about fragment vectors short of searching them."""

    if TYPE_CHECKING:  # provided by SqliteStore
        path: Path
        url: str
        settings: StoreSettings

        def _conn(self) -> sqlite3.Connection: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _immediate(self, conn: sqlite3.Connection, locked: str, failed: str) -> AbstractContextManager[None]: ...

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

    # --- embedder binding -----------------------------------------------------------------------

    def _binding(self, conn: sqlite3.Connection) -> tuple[str, int] | None:
        rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder_name', 'embedder_dim')"))
        if "embedder_name" not in rows:
            return None
        return rows["embedder_name"], int(rows["embedder_dim"])

    def embedder_info(self) -> tuple[str, int] | None:
        return self._binding(self._conn())

    def bind_embedder(self, name: str, dim: int) -> None:
        if not name or int(dim) <= 0:
            raise StoreError(f"bind_embedder: bad embedder ({name!r}, dim {dim})")
        if self._binding(self._conn()) == (name, int(dim)):
            return
        with self._write() as conn:
            old = self._binding(conn)
            if old == (name, int(dim)):
                return
            if old is not None:
                held = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
                if held:
                    raise StoreError(
                        f"store {self.url} holds {held} vectors from embedder {old[0]!r} (dim {old[1]}); it cannot "
                        f"be used with embedder {name!r} (dim {dim}). Re-ingest into a new store (--store PATH) "
                        f"or leave --embedder, embedder.name and a preset's embedder unset to use the store's own, {old[0]!r}."
                    )
                log.info("store %s: rebinding empty embedder slot %s → %s", self.url, old, (name, dim))
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embedder_name", name), ("embedder_dim", str(int(dim)))],
            )

    def rebind_embedder(self, name: str, dim: int) -> int:
        if not name or int(dim) <= 0:
            raise StoreError(f"rebind_embedder: bad embedder ({name!r}, dim {dim})")
        with self._write() as conn:
            if self._binding(conn) == (name, int(dim)):
                return 0
            dropped = int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
            conn.execute("DELETE FROM embeddings")
            conn.execute("DELETE FROM memory_vectors")  # curated notes too: `reembed` embeds them again
            conn.execute("UPDATE memory_notes SET embedder = NULL")
            conn.execute("DELETE FROM sentence_vectors WHERE embedder <> ?", [name])
            conn.execute("DELETE FROM meta WHERE key IN ('embed_rate', 'embed_rate_at', 'embed_rate_by')")
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embedder_name", name), ("embedder_dim", str(int(dim)))],
            )
        log.info("store %s: rebound to embedder %s (dim %d); %d vectors dropped", self.url, name, dim, dropped)
        return dropped

    # --- sentence vectors (the extractive answer's candidates) ----------------------------------

    def get_sentence_vectors(self, embedder: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(keys))
        out: dict[str, np.ndarray] = {}
        with self._read() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                chunk = wanted[i : i + IN_CHUNK]
                for key, vec in conn.execute(
                    f"SELECT key, vec FROM sentence_vectors WHERE embedder = ? AND key IN ({','.join('?' * len(chunk))})",
                    [embedder, *chunk],
                ):
                    out[key] = np.frombuffer(vec, dtype="<f4")
        return out

    def put_sentence_vectors(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        rows = [(embedder, k, np.asarray(v, dtype="<f4").tobytes()) for k, v in vectors.items()]
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "keeping sentence vectors failed"):
            conn.executemany("INSERT OR REPLACE INTO sentence_vectors (embedder, key, vec) VALUES (?, ?, ?)", rows)

    # --- embedding backlog ----------------------------------------------------------------------

    def pending_fragments(self, limit: int, after: str | None = None) -> list[PendingFragment]:
        if limit <= 0:
            return []
        rows = self._conn().execute(
            "SELECT f.id, f.content_hash, f.text FROM fragments f WHERE f.id > ? "
            "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.rid = f.rid) ORDER BY f.id LIMIT ?",
            (after or "", int(limit)),
        )
        return [PendingFragment(*r) for r in rows]

    def claim_pending(self, limit: int, holder: str, lease_s: float) -> list[PendingFragment]:
        if limit <= 0:
            return []
        conn = self._conn()
        now = time.time()
        with self._immediate(conn, "the store is locked by another writer", "claiming backlog fragments failed"):
            conn.execute("DELETE FROM embed_leases WHERE until <= ?", (now,))
            rows = [PendingFragment(*r) for r in conn.execute(
                "SELECT f.id, f.content_hash, f.text FROM fragments f"
                " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.rid = f.rid)"
                " AND NOT EXISTS (SELECT 1 FROM embed_leases l WHERE l.fragment_id = f.id) ORDER BY f.id LIMIT ?",
                (int(limit),),
            )]
            conn.executemany("INSERT OR REPLACE INTO embed_leases (fragment_id, holder, until) VALUES (?, ?, ?)",
                             [(r.id, holder, now + float(lease_s)) for r in rows])
        return rows

    def renew_claims(self, holder: str, lease_s: float) -> None:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "renewing backlog claims failed"):
            conn.execute("UPDATE embed_leases SET until = ? WHERE holder = ?", (time.time() + float(lease_s), holder))

    def release_claims(self, holder: str) -> None:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "releasing backlog claims failed"):
            conn.execute("DELETE FROM embed_leases WHERE holder = ?", (holder,))

    def claim_holders(self) -> list[ClaimHolder]:
        rows = self._conn().execute(
            "SELECT holder, COUNT(*), MAX(until) FROM embed_leases WHERE until > ? GROUP BY holder ORDER BY holder",
            (time.time(),),
        ).fetchall()
        return [ClaimHolder(str(h), int(n), float(u)) for h, n, u in rows]

    def put_embeddings(self, fragments: Sequence[PendingFragment], vectors: np.ndarray) -> int:
        if not fragments:
            return 0
        vecs = check_embeddings("", vectors, len(fragments), (self.embedder_info() or (None, None))[1],
                                where="put_embeddings")
        written = 0
        with self._write() as conn:
            now = self._binding(conn)
            if now is None or now[1] != vecs.shape[1]:  # rebound meanwhile
                raise StoreError(f"{self.path}: put_embeddings: the store was rebound to another embedder")
            for i in range(0, len(fragments), IN_CHUNK):
                chunk = fragments[i : i + IN_CHUNK]
                ids = [f.id for f in chunk]
                rid_of = {
                    fid: (rid, ch)
                    for rid, fid, ch in conn.execute(
                        f"SELECT rid, id, content_hash FROM fragments WHERE id IN ({','.join('?' * len(ids))})", ids
                    )
                }
                rows = []
                for j, f in enumerate(chunk, start=i):
                    got = rid_of.get(f.id)
                    if got is not None and got[1] == f.content_hash:
                        rows.append((got[0], vecs[j].tobytes()))
                conn.executemany("INSERT OR REPLACE INTO embeddings (rid, vec) VALUES (?, ?)", rows)
                conn.execute(f"DELETE FROM embed_leases WHERE fragment_id IN ({','.join('?' * len(ids))})", ids)
                written += len(rows)
        return written

    def missing_embeddings(self, fragment_ids: Sequence[str]) -> set[str]:
        wanted = list(dict.fromkeys(fragment_ids))
        out: set[str] = set()
        with self._read() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                chunk = wanted[i : i + IN_CHUNK]
                out.update(r[0] for r in conn.execute(
                    f"SELECT f.id FROM fragments f WHERE f.id IN ({','.join('?' * len(chunk))}) "
                    "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.rid = f.rid)", chunk,
                ))
        return out

    def backlog(self) -> BacklogStats:
        with self._read() as conn:
            total = conn.execute("SELECT COUNT(*) FROM fragments").fetchone()[0]
            embedded = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
            meta = dict(conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('embed_rate', 'embed_rate_at', 'embed_rate_by')"))
        return BacklogStats(int(total), int(embedded), float(meta.get("embed_rate", 0.0)),
                            float(meta.get("embed_rate_at", 0.0)), str(meta.get("embed_rate_by", "")))

    def note_embedding_rate(self, rate: float, *, running: bool = True, holder: str = "") -> None:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "noting the embedding rate failed"):
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embed_rate", repr(max(0.0, float(rate)))), ("embed_rate_at", repr(time.time() if running else 0.0)),
                 ("embed_rate_by", holder)],
            )
