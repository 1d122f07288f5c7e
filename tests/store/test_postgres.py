"""The PostgreSQL store: the conformance suite unchanged, plus PostgreSQL-specific behaviour
(bad URLs, a server without pgvector, dimension mismatch, schema and indexes)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from footnote.settings import StoreSettings
from footnote.store import open_store
from footnote.store.protocol import Store
from footnote.testing.conversation_conformance import ConversationConformance
from footnote.testing.memory_conformance import MemoryConformance
from footnote.testing.store_conformance import StoreConformance
from footnote.testing.store_conformance_batch import BatchTests

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def _open(url: str, **kw: object) -> Store:
    return open_store(url, StoreSettings(url=url, **kw))  # type: ignore[arg-type]


class TestPostgresConformance(StoreConformance, ConversationConformance, MemoryConformance, BatchTests):
    @pytest.fixture
    def store(self, pg_url: str) -> Iterator[Store]:
        s = _open(pg_url)
        yield s
        s.close()


# --- PostgreSQL-specific behaviour ---------------------------------------------------------------

import json  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import psycopg  # noqa: E402
from psycopg.types.json import Jsonb  # noqa: E402

from footnote.engine import Engine  # noqa: E402
from footnote.errors import StoreError  # noqa: E402
from footnote.settings import load_settings  # noqa: E402
from footnote.store.pg_support import migration_files  # noqa: E402
from footnote.testing.internal.pgserver import EmbeddedPostgres, pg_bin_dir, wait_session_gone  # noqa: E402
from footnote.testing.loopback import free_port  # noqa: E402
from footnote.testing.store_conformance import (  # noqa: E402
    distinct_texts,
    embed,
    embed_query,
    ids,
    make_fragments,
    make_source,
    put,
)


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", [schema[0] if schema else ""])
        return {r[0] for r in rows.fetchall()}


def test_schema_indexes_and_migrations(pg_url: str) -> None:
    s = _open(pg_url, hnsw_m=12, hnsw_ef_construction=48)
    try:
        assert {"sources", "fragments", "originals", "footnote_meta", "footnote_migrations", "cues"} <= _tables(pg_url)
        s.bind_embedder("hash", 64)
        with psycopg.connect(pg_url) as conn:
            schema = conn.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
            assert schema.startswith("t_")  # the store lives in the schema named by the URL
            idx = dict(conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = 'fragments'", [schema]
            ).fetchall())
            terms_idx = dict(conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = 'fragment_terms'",
                [schema]).fetchall())
            terms_storage = conn.execute(
                "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'fragment_terms'::regclass"
                " AND attname LIKE 'tsv%' ORDER BY 1").fetchall()
            versions = [r[0] for r in conn.execute("SELECT version FROM footnote_migrations").fetchall()]
            coltype, storage = conn.execute(
                "SELECT format_type(atttypid, atttypmod), attstorage FROM pg_attribute"
                " WHERE attrelid = 'fragments'::regclass AND attname = 'embedding'"
            ).fetchone()  # type: ignore[misc]
        assert "USING hnsw (embedding vector_cosine_ops)" in idx["fragments_embedding_hnsw"]
        assert "m='12'" in idx["fragments_embedding_hnsw"] and "ef_construction='48'" in idx["fragments_embedding_hnsw"]
        assert "gin_trgm_ops" in idx["fragments_trgm"] and "addr_key" in idx["fragments_trgm"]
        assert "source_id" in idx["fragments_trgm"] and "tokens" in idx["fragments_trgm"]
        assert "fragments_tsv_stem" not in idx and "fragments_tsv_plain" not in idx
        assert "USING gin (tsv_stem)" in terms_idx["fragment_terms_tsv_stem"]
        assert "USING gin (tsv_plain)" in terms_idx["fragment_terms_tsv_plain"]
        assert terms_storage == [("tsv_plain", "m"), ("tsv_stem", "m")]  # inline: ranking reads no TOAST
        assert coltype == "vector(64)" and storage == "p"  # vectors kept in the row
        assert "WHERE (embedding IS NULL)" in idx["fragments_unembedded"]  # the embedding backlog's index
        assert versions == [v for v, _, _ in migration_files()] and versions[:6] == [1, 2, 3, 4, 5, 6]
    finally:
        s.close()
    # reopening applies nothing twice and keeps the binding
    s2 = _open(pg_url)
    try:
        assert s2.embedder_info() == ("hash", 64)
    finally:
        s2.close()


def test_url_password_masked(pg_url: str) -> None:
    s = _open(pg_url)
    try:
        password = psycopg.conninfo.conninfo_to_dict(pg_url)["password"]
        assert password and password not in s.url and "***" in s.url
        assert s.stats().url == s.url
    finally:
        s.close()


def test_store_knows_its_server_runs_on_this_machine(pg_url: str) -> None:
    """The embedded server listens on 127.0.0.1: its backends share this machine's cores with the
    query embedding (a lone search then embeds first, retrieve.pipeline.embeds_first)."""
    from footnote.store.pg_support import on_this_machine

    s = _open(pg_url)
    try:
        assert s.computes_here is True
    finally:
        s.close()
    for host in ("127.0.0.1", "127.0.0.53", "::1", "[::1]", "localhost", "/var/run/postgresql", ""):
        assert on_this_machine(host), host
    for host in ("db.example.com", "10.0.0.5", "2001:db8::1", "192.168.1.20"):
        assert not on_this_machine(host), host


@pytest.mark.parametrize(
    "make_url, expect",
    [
        (lambda u: "postgresql://postgres@127.0.0.1:notaport/db", "malformed"),
        (lambda u: "postgresql://postgres@127.0.0.1:99999/db", "malformed"),
        (lambda u: f"postgresql://postgres:x@127.0.0.1:{free_port()}/db", "cannot connect"),
        (lambda u: u.replace(psycopg.conninfo.conninfo_to_dict(u)["password"], "wrong-password"), "password"),
        (lambda u: u.split("?")[0].rsplit("/", 1)[0] + "/no_such_database", "does not exist"),
    ],
    ids=["port-not-a-number", "port-out-of-range", "nothing-listening", "bad-credentials", "no-database"],
)
def test_bad_url_is_a_clear_store_error(pg_url: str, make_url: object, expect: str) -> None:
    url = make_url(pg_url)  # type: ignore[operator]
    with pytest.raises(StoreError) as e:
        _open(url, pg_connect_timeout_s=3)
    assert expect in str(e.value)
    assert "wrong-password" not in str(e.value)


def test_server_without_pgvector(pg_server: EmbeddedPostgres) -> None:
    """A real server whose extension directory lacks pgvector (PostgreSQL 18's extension_control_path
    pointed, for one database, at a copy of the extension folder without vector)."""
    import os
    import shutil
    import tempfile

    ext_src = pg_bin_dir().parent / "share" / "extension"
    root = Path(tempfile.mkdtemp(prefix="footnote-novector-"))  # readable by the server's OS user
    (root / "extension").mkdir()
    for d in (root, root / "extension"):
        os.chmod(d, 0o755)
    for f in ext_src.iterdir():
        if not f.name.startswith("vector"):
            (root / "extension" / f.name).symlink_to(f)
    url = pg_server.create_database("novector")
    try:
        with psycopg.connect(pg_server.url(), autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE novector SET extension_control_path = '{root}'")
        with pytest.raises(StoreError) as e:
            _open(url)
        msg = str(e.value)
        assert "'vector'" in msg and "CREATE EXTENSION vector" in msg and "apt install" in msg
        # nothing was written: no tables were created
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)
    finally:
        pg_server.drop_database("novector")
        shutil.rmtree(root, ignore_errors=True)


def test_dimension_mismatch_with_configured_embedder(pg_url: str, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "kind": "letter", "title": "A", "lang": "en", "text": "Hello there."}\n')
    settings = load_settings(None, **{"store.url": pg_url, "embedder.name": "hash", "embedder.hash_dim": 32})
    with Engine.from_settings(settings) as eng:
        eng.ingest([corpus])
        assert eng.store.stats().embedded == 1
    other = load_settings(None, **{"store.url": pg_url, "embedder.name": "hash", "embedder.hash_dim": 48})
    with pytest.raises(StoreError) as e:
        Engine.from_settings(other)
    assert "32" in str(e.value) and "48" in str(e.value)
    s = _open(pg_url)
    try:
        assert s.embedder_info() == ("hash", 32) and s.stats().fragments == 1
    finally:
        s.close()


def test_hnsw_recall_floor(pg_url: str) -> None:
    """Forced onto the HNSW index (pg_exact_search_max=0): recall@10 against exact search stays high."""
    rng = np.random.default_rng(7)
    n, dim, nq = 3000, 64, 40
    centers = rng.normal(size=(30, dim))
    vecs = centers[rng.integers(0, 30, n)] + 0.6 * rng.normal(size=(n, dim))
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
    s = _open(pg_url, pg_exact_search_max=0, hnsw_ef_search=64)
    try:
        s.bind_embedder("hash", dim)
        for j in range(3):
            src, data = make_source(f"bulk-{j}")
            frags = make_fragments(src, [f"text {j}.{i}" for i in range(n // 3)])
            s.put_source(src, frags, vecs[j * (n // 3):(j + 1) * (n // 3)], data)
        ids = [f"bulk-{j}#{i}" for j in range(3) for i in range(n // 3)]
        with psycopg.connect(pg_url) as conn:
            conn.execute("SET enable_seqscan = off")
            plan = "\n".join(r[0] for r in conn.execute(
                "EXPLAIN SELECT id FROM fragments ORDER BY embedding <=> (SELECT embedding FROM fragments LIMIT 1) LIMIT 10"
            ).fetchall())
        assert "fragments_embedding_hnsw" in plan
        queries = vecs[rng.integers(0, n, nq)] + 0.3 * rng.normal(size=(nq, dim)).astype(np.float32)
        recalls = []
        for q in queries:
            exact = {ids[i] for i in np.argsort(-(vecs @ (q / np.linalg.norm(q))))[:10]}
            got = {h.fragment_id for h in s.search_dense(q, 10)}
            recalls.append(len(exact & got) / 10)
        assert float(np.mean(recalls)) >= 0.9, np.mean(recalls)
        # a kind filter on the ANN path still returns only that kind, k of them
        hits = s.search_dense(queries[0], 10, kinds=["letter"])
        assert len(hits) == 10
    finally:
        s.close()


def test_concurrent_searches_and_writes(pg_url: str) -> None:
    s = _open(pg_url, pg_pool_size=4)
    try:
        s.bind_embedder("hash", 64)
        src, data = make_source("base")
        frags = make_fragments(src, [f"river stone {i} lantern" for i in range(50)])
        put(s, src, data, frags)
        errors: list[BaseException] = []

        def worker(i: int) -> None:
            try:
                for _ in range(5):
                    assert s.search_dense(embed_query("river stone 3"), 5)
                    assert s.search_lexical("lantern", 5, stemmed=True)
                extra, d = make_source(f"w{i}")
                put(s, extra, d, make_fragments(extra, [f"worker {i} text"]))
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        assert s.stats().sources == 21
        np.testing.assert_allclose(s.get_embeddings([frags[0].id])[0], embed(frags[:1])[0], atol=1e-6)
    finally:
        s.close()


def test_embedded_server_as_designed(pg_server: EmbeddedPostgres) -> None:
    """PostgreSQL 18 from the wheel, not root, on 127.0.0.1 only, with pgvector, pg_trgm and the Russian stemmer."""
    import os
    import pwd

    with psycopg.connect(pg_server.url()) as conn:
        assert conn.execute("SHOW server_version").fetchone()[0].startswith("18.")  # type: ignore[index]
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        assert conn.execute("SHOW unix_socket_directories").fetchone() == ("",)
        avail = dict(conn.execute(
            "SELECT name, default_version FROM pg_available_extensions WHERE name IN ('vector', 'pg_trgm')"
        ).fetchall())
        assert set(avail) == {"vector", "pg_trgm"}
        assert conn.execute("SELECT to_tsvector('russian', 'книгами')::text").fetchone() == ("'книг':1",)
        data_dir = conn.execute("SHOW data_directory").fetchone()[0]  # type: ignore[index]
    owner = pwd.getpwuid(os.stat(data_dir).st_uid).pw_name
    assert owner != "root"
    if os.geteuid() == 0:
        assert owner == "postgres"


def test_lexeme_stats_stay_exact(pg_url: str) -> None:
    """The idf table the lexical lanes rank with follows inserts, replacements and deletions exactly."""
    s = _open(pg_url)
    try:
        for i in range(4):
            src, data = make_source(f"s{i}", lang="ru" if i % 2 else "en")
            put(s, src, data, make_fragments(src, [f"книгами и тетрадями {i}", f"running lanterns {i}"]), embedded=False)
        v2, d2 = make_source("s1", version="2", lang="ru")
        put(s, v2, d2, make_fragments(v2, ["совсем другой текст"]), embedded=False)
        s.delete_source("s2")
        with psycopg.connect(pg_url) as conn:  # a hand-made change of a fragment's tokens: the terms follow
            conn.execute("UPDATE fragments SET tokens = 'zebra crossings' WHERE id = 's3#0'")
            conn.execute("UPDATE fragments SET embedding = NULL WHERE id = 's3#1'")  # touches no terms
        assert [h.fragment_id for h in s.search_lexical("zebra", 5, stemmed=False)] == ["s3#0"]
        with psycopg.connect(pg_url) as conn:
            kept = conn.execute("SELECT col, lexeme, df FROM lexeme_stats WHERE df > 0 ORDER BY 1, 2").fetchall()
            fresh = conn.execute(
                "SELECT c, lx, count(*) FROM (SELECT 's'::\"char\" c, unnest(tsvector_to_array("
                "   to_tsvector(footnote_ts_config(lang), tokens))) lx FROM fragments"
                " UNION ALL SELECT 'p', unnest(tsvector_to_array(to_tsvector('simple', tokens))) FROM fragments"
                " UNION ALL SELECT 'n', '' FROM fragments) t GROUP BY 1, 2 ORDER BY 1, 2"
            ).fetchall()
            # the terms table follows every write: one row per fragment, the same kind
            assert conn.execute("SELECT count(*) FROM fragment_terms t FULL JOIN fragments f USING (id)"
                                " WHERE t.id IS NULL OR f.id IS NULL OR t.kind <> f.kind").fetchone() == (0,)
        assert kept == fresh
        assert ("n", "", 5) in kept
    finally:
        s.close()


def test_bulk_load_defers_the_index_and_a_dead_loader_is_repaired(pg_url: str) -> None:
    from footnote.store.pg_support import BULK_LOCK

    s = _open(pg_url)
    try:
        s.bind_embedder("hash", 64)
        other = _open(pg_url)
        with s.bulk_load():  # type: ignore[attr-defined]
            src, data = make_source("bulk")
            put(s, src, data, make_fragments(src, ["one text", "two text"]))
            other.bind_embedder("hash", 64)  # another process opening the store meanwhile: no index yet
            with psycopg.connect(pg_url) as conn:
                assert conn.execute("SELECT to_regclass('fragments_embedding_hnsw')").fetchone() == (None,)
        other.close()
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT to_regclass('fragments_embedding_hnsw') IS NOT NULL").fetchone() == (True,)
        # a loader that died mid-load (its session, and so its lock, gone): the next open rebuilds the index
        dead = psycopg.connect(pg_url, autocommit=True)
        dead.execute("SELECT pg_advisory_lock(%s, hashtext(current_schema()))", [BULK_LOCK])
        dead.execute("DROP INDEX fragments_embedding_hnsw")
        dead_pid = dead.info.backend_pid
        dead.close()
        wait_session_gone(pg_url, dead_pid)
        s.bind_embedder("hash", 64)
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT to_regclass('fragments_embedding_hnsw') IS NOT NULL").fetchone() == (True,)
    finally:
        s.close()


def test_server_side_failures_surface_as_store_errors(pg_url: str) -> None:
    s = _open(pg_url)
    try:
        s.bind_embedder("hash", 64)
        with pytest.raises(StoreError):
            s.search_dense(np.ones(32, dtype=np.float32), 5)  # wrong query dimension
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE sources RENAME TO sources_gone")
        with pytest.raises(StoreError) as e:
            s.list_sources()
        assert "sources" in str(e.value)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE sources_gone RENAME TO sources")
        assert s.list_sources() == []  # the pool recovered
    finally:
        s.close()


def test_killed_owner_leaves_no_server_behind(pg_server: EmbeddedPostgres) -> None:
    """A process that started a server with ``watch_pid`` and was killed (no cleanup ran): its
    watchdog stops the server and removes the temporary data directory."""
    import os
    import signal
    import subprocess
    import sys

    code = ("import os, time; from footnote.testing.internal import pgserver; s = pgserver.start(watch_pid=os.getpid()); "
            "print(s.to_json(), flush=True); time.sleep(120)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        server = EmbeddedPostgres.from_json(child.stdout.readline())
        assert server.running()
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        for _ in range(300):
            if not Path(server.data_dir).exists():
                break
            time.sleep(0.1)
        assert not Path(server.data_dir).exists()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(server.url(), connect_timeout=2)
    finally:
        if child.poll() is None:
            child.kill()


def test_migrating_a_store_from_before_cues_and_languages(pg_url: str) -> None:
    """A store at migration 3 (cues in sources.meta, only ru/en stemmed, no collections) opened by
    today's code: cues move to their table, collections are filled in, German is stemmed."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        schema = pg_url.split("search_path%3D", 1)[1].split(",", 1)[0]
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        conn.execute(f"SET search_path = {schema}, public")
        conn.execute("CREATE TABLE footnote_migrations (version integer PRIMARY KEY, name text NOT NULL,"
                     " applied_at timestamptz NOT NULL DEFAULT now())")
        for version, name, sql in migration_files():
            if version <= 3:
                conn.execute(sql.encode("utf-8"))
                conn.execute("INSERT INTO footnote_migrations (version, name) VALUES (%s, %s)", [version, name])
        cues = json.dumps([[0, 1000, "Nebel zieht auf."], [1000, 2500, "Die Räume des Turms."]])
        conn.execute("INSERT INTO originals (sha256, size, data) VALUES ('x', 1, 'x')")
        conn.execute(
            "INSERT INTO sources (id, kind, title, lang, content_hash, blob_sha256, original_name, media_type,"
            " origin, meta) VALUES ('2020/talk.srt', 'track_transcript', 't', 'de', 'h', 'x', 'talk.srt',"
            " 'application/x-subrip', '/data/lectures/2020/talk.srt', %s)",
            [Jsonb({"transcript": "talk.srt", "cues": cues})],
        )
        conn.execute(
            "INSERT INTO fragments (id, source_id, ordinal, kind, lang, text, locator, content_hash, tokens)"
            " VALUES ('2020/talk.srt#0', '2020/talk.srt', 0, 'track_transcript', 'de', 'Die Räume des Turms.',"
            " %s, 'c', 'die raume des turms')",
            [Jsonb({"track_id": "2020/talk.srt", "start_ms": 0, "end_ms": 2500})],
        )
    s = _open(pg_url)
    try:
        src = s.get_source("2020/talk.srt")
        assert src is not None and src.collection == "lectures" and "cues" not in src.meta
        assert src.meta["transcript"] == "talk.srt"
        assert [c.text for c in s.get_cues("2020/talk.srt")] == ["Nebel zieht auf.", "Die Räume des Turms."]
        assert [c.text for c in s.get_cues("2020/talk.srt", 1500)] == ["Die Räume des Turms."]
        # the stored German fragment is stemmed in German now (its generated column was rebuilt)
        assert ids(s.search_lexical("Raum", 5, stemmed=True, lang="de")) == ["2020/talk.srt#0"]
    finally:
        s.close()


class _TurnCounter:
    """A loopback TCP proxy in front of PostgreSQL that counts round trips: the client messages after
    which a client must wait for the server — ``Sync`` (extended protocol) and ``Query`` (simple
    protocol). A request/response client sends one per statement; a pipelined batch, one in all."""

    def __init__(self, host: str, port: int) -> None:
        import socket

        self.turns = 0
        self.kinds: list[str] = []
        self._lock = threading.Lock()
        self._listen = socket.socket()
        self._listen.bind(("127.0.0.1", 0))
        self._listen.listen(8)
        self.port = self._listen.getsockname()[1]
        self._target = (host, port)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket

        while True:
            try:
                client, _ = self._listen.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: object, dst: object, from_client: bool) -> None:
        buf = b""
        started = False  # the client's first message (startup) has no type byte
        while True:
            try:
                data = src.recv(65536)  # type: ignore[attr-defined]
            except OSError:
                return
            if not data:
                return
            if from_client:
                buf += data
                while True:
                    if not started:
                        if len(buf) < 8:
                            break
                        n = int.from_bytes(buf[:4], "big")
                        code = int.from_bytes(buf[4:8], "big")
                        buf = buf[n:]
                        started = code != 80877103  # an SSLRequest is followed by the real startup
                        continue
                    if len(buf) < 5:
                        break
                    n = int.from_bytes(buf[1:5], "big")
                    if len(buf) < 1 + n:
                        break
                    kind = chr(buf[0])
                    buf = buf[1 + n:]
                    with self._lock:
                        self.kinds.append(kind)
                        if kind in "SQ":
                            self.turns += 1
            dst.sendall(data)  # type: ignore[attr-defined]

    def close(self) -> None:
        self._listen.close()


def test_search_many_is_one_round_trip_and_matches_single_calls(pg_url: str) -> None:
    from urllib.parse import urlsplit, urlunsplit

    from footnote.store.batch import AddressCall, DenseCall, LexicalCall, TrigramCall

    parts = urlsplit(pg_url)
    proxy = _TurnCounter(parts.hostname or "127.0.0.1", parts.port or 5432)
    url = urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.port}", f":{proxy.port}")))
    # 50 < rows: HNSW for all kinds; the per-kind counts kept for the whole test, so no recount on a worker
    # thread adds a round trip of its own while the turns are counted (a loaded machine took > 10 s here)
    s = _open(url, pg_exact_search_max=50, pg_pool_size=1, pg_batch_connections=1, pg_size_cache_s=3600.0)
    try:
        s.bind_embedder("hash", 64)
        src, data = make_source("mix")
        texts = [f"river stone {i} lantern" for i in range(60)] + ["karmaṇy evādhikāras te mā phaleṣu"]
        put(s, src, data, make_fragments(src, texts))
        q = embed_query("river stone 7")
        calls = [DenseCall(q, 5), DenseCall(q, 3, ("letter",)), LexicalCall("lantern stone", 5, True, "en"),
                 LexicalCall("lantern", 4, False), AddressCall("BG", "2.47", 3), TrigramCall("karmany evadhikaras", 3),
                 LexicalCall("", 5, True), DenseCall(q, 0)]
        single = [
            s.search_dense(q, 5), s.search_dense(q, 3, kinds=["letter"]),
            s.search_lexical("lantern stone", 5, stemmed=True, lang="en"), s.search_lexical("lantern", 4, stemmed=False),
            s.search_address("BG", "2.47", 3), s.search_trigram("karmany evadhikaras", 3), [], [],
        ]
        before, k0 = proxy.turns, len(proxy.kinds)
        batch = s.search_many(calls)  # type: ignore[attr-defined]
        assert proxy.turns - before == 1, "".join(proxy.kinds[k0:])  # the whole batch: one round trip
        assert [[h.fragment_id for h in hs] for hs in batch] == [[h.fragment_id for h in hs] for hs in single]
        for got, want in zip(batch, single, strict=True):
            np.testing.assert_allclose([h.score for h in got], [h.score for h in want], rtol=1e-6)
        assert len(batch[0]) == 5 and batch[2] and batch[3] and batch[5]
        before = proxy.turns
        for c in calls[:6]:
            s.search_many([c])  # type: ignore[attr-defined]
        assert proxy.turns - before == 6  # one per call when they come one at a time
        # dealt over three connections: one round trip on each, concurrently; the same hits
        par = _open(url, pg_exact_search_max=50, pg_pool_size=4, pg_batch_connections=3, pg_size_cache_s=3600.0)
        try:
            # three idle connections before counting: a loaded machine's warm-up call may have run its shares one
            # after another on two, and the third's start-up statements were then counted (9 turns, not 3)
            pool = par._pool  # type: ignore[attr-defined]
            with pool.connection(), pool.connection(), pool.connection():
                pass
            par.search_many(calls)  # type: ignore[attr-defined]  # warm: size cache, prepared statements
            before = proxy.turns
            got = par.search_many(calls)  # type: ignore[attr-defined]
            assert proxy.turns - before == 3
            assert [[h.fragment_id for h in hs] for hs in got] == [[h.fragment_id for h in hs] for hs in single]
        finally:
            par.close()
    finally:
        s.close()
        proxy.close()


def test_fragments_with_embeddings_in_one_statement(pg_url: str) -> None:
    s = _open(pg_url)
    try:
        s.bind_embedder("hash", 64)
        src, data = make_source("fw")
        frags = make_fragments(src, ["alpha beta", "gamma delta", "epsilon"])
        put(s, src, data, frags)
        asked = [frags[2].id, "nope#0", frags[0].id]
        got, mat = s.get_fragments_with_embeddings(asked)  # type: ignore[attr-defined]
        assert [f.id for f in got] == [frags[2].id, frags[0].id]
        assert got == s.get_fragments(asked)
        assert mat.shape == (3, 64) and not mat[1].any()
        np.testing.assert_allclose(mat, s.get_embeddings(asked), atol=1e-7)
        assert s.get_fragments_with_embeddings([])[0] == []  # type: ignore[attr-defined]
    finally:
        s.close()


def test_kind_filtered_hnsw_needs_the_iterative_scan(pg_url: str) -> None:
    """Plain HNSW post-filters its ef_search candidates: a rare kind gets fewer than k hits. The
    iterative scan (pgvector ≥ 0.8, ``hnsw_iterative_scan``) keeps walking until k rows pass."""
    rng = np.random.default_rng(11)
    n, dim, k = 2000, 32, 10
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    s = _open(pg_url)
    try:
        s.bind_embedder("hash", dim)
        common, d1 = make_source("common", kind="commentary")
        rare, d2 = make_source("rare", kind="letter")
        s.put_source(common, make_fragments(common, [f"c {i}" for i in range(n - 20)]), vecs[: n - 20], d1)
        s.put_source(rare, make_fragments(rare, [f"r {i}" for i in range(20)], kind="letter"), vecs[n - 20:], d2)
    finally:
        s.close()
    q = rng.normal(size=dim).astype(np.float32)
    exact = {f"rare#{i}" for i in np.argsort(-(vecs[n - 20:] @ (q / np.linalg.norm(q))))[:k]}
    got = {}
    # at this size the planner rightly prefers the kind index or a sequential scan for a 1 % filter
    # (exact anyway): take both away, so the HNSW index serves the query as it does at scale
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP INDEX fragments_kind")
    index_url = pg_url + "%20-cenable_seqscan%3Doff"
    for mode in ("off", "relaxed_order"):
        st = _open(index_url, pg_exact_search_max=0, hnsw_ef_search=40, hnsw_iterative_scan=mode)
        try:
            got[mode] = st.search_dense(q, k, kinds=["letter"])
        finally:
            st.close()
    assert len(got["off"]) < k  # 1 % of the rows: ~0.4 of the 40 candidates are letters
    assert len(got["relaxed_order"]) == k and {h.fragment_id for h in got["relaxed_order"]} == exact
    assert [h.score for h in got["relaxed_order"]] == sorted((h.score for h in got["relaxed_order"]), reverse=True)


def test_shared_hnsw_scan_serves_common_kind_groups_and_falls_back_for_short_ones(pg_url: str) -> None:
    """Common kind groups of one query vector share ONE unfiltered HNSW scan, split by kind; a rare
    group gets its own filtered scan, and a group the shared scan leaves short of k too — the results
    are the exact per-kind top-k either way (a small store: the HNSW graph finds the true neighbours)."""
    from footnote.store.batch import DenseCall

    s = _open(pg_url, pg_exact_search_max=0, hnsw_ef_search=40, pg_shared_scan_min_share=0.25)
    try:
        s.bind_embedder("hash", 64)
        texts = distinct_texts(300, seed=4)
        _fill_kinds(s, texts, 150, 180, "src")
        rng = np.random.default_rng(3)
        exact = _open(pg_url, pg_exact_search_max=10**6)
        try:
            for _ in range(5):
                q = rng.normal(size=64).astype(np.float32)
                calls = [DenseCall(q, 30, ("letter", "prose_chapter")), DenseCall(q, 10, ("verse",)),
                         DenseCall(q, 60, ("commentary",))]  # commentary: 60 > its share of the 40 shared rows
                got = s.search_many(calls)  # type: ignore[attr-defined]
                want = exact.search_many(calls)  # type: ignore[attr-defined]
                for g, w, c in zip(got, want, calls, strict=True):
                    assert len(g) == c.k
                    assert [h.fragment_id for h in g] == [h.fragment_id for h in w]
                    np.testing.assert_allclose([h.score for h in g], [h.score for h in w], atol=1e-5)
        finally:
            exact.close()
    finally:
        s.close()


def _fill_kinds(s: Store, texts: list[str], letters: int, verses: int, prefix: str) -> None:
    """``texts`` as three sources: letters, then verses up to ``verses``, the rest commentary."""
    for kind, lo, hi in (("letter", 0, letters), ("verse", letters, verses), ("commentary", verses, len(texts))):
        src, data = make_source(f"{prefix}-{kind}", kind=kind)
        put(s, src, data, make_fragments(src, texts[lo:hi]))


def test_unfiltered_scans_use_their_own_ef_search(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared scan and a dense call of every kind run at the unfiltered table's ef_search, a
    kind-filtered scan at the filtered table's (each raised to its limit or k)."""
    from footnote.store.batch import DenseCall

    s = _open(pg_url, pg_exact_search_max=0, pg_shared_scan_min_share=0.25, pg_batch_connections=1,
              hnsw_ef_search_by_size=((10**6, 90),), hnsw_ef_search_unfiltered_by_size=((10**6, 30),))
    seen: list[tuple[str, int]] = []  # (the next dense statement's kind, ef_search set before it)
    real = psycopg.Connection.execute

    def spy(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        if isinstance(query, str) and "set_config('hnsw.ef_search'" in query:
            seen.append(("ef", int(params[0])))
        elif isinstance(query, str) and "ORDER BY embedding <=>" in query:
            seen.append(("filtered" if "kind = ANY" in query else "unfiltered", 0))
        return real(self, query, params, **kw)

    try:
        s.bind_embedder("hash", 64)
        texts = distinct_texts(200, seed=9)
        _fill_kinds(s, texts, 120, 140, "ef")
        q = embed_query(texts[150])
        monkeypatch.setattr(psycopg.Connection, "execute", spy)
        s.search_many([DenseCall(q, 5, ("letter",)), DenseCall(q, 5, ("commentary",)),  # shared
                       DenseCall(q, 4, ("verse",)),  # 10 % of the store: its own filtered scan
                       DenseCall(q, 6)])  # type: ignore[attr-defined]
        monkeypatch.undo()
        from itertools import pairwise

        efs = {kind: ef for (_, ef), (kind, _) in pairwise(seen) if kind != "ef" and ef}
        assert efs == {"unfiltered": 30, "filtered": 90}, seen
    finally:
        monkeypatch.undo()
        s.close()


def test_lane_statements_return_their_hits_rows(pg_url: str) -> None:
    """Rows mode (``search_many_rows``): every lane statement — the shared HNSW scan, a kind-filtered
    one, an exact one, lexical, address, trigram — returns the same hits as ``search_many`` and, from
    the same statement (one round trip), the fragment and vector of each hit not held yet; what the
    caller holds is not sent again."""
    from urllib.parse import urlsplit, urlunsplit

    from footnote.store.batch import AddressCall, DenseCall, LexicalCall, TrigramCall

    parts = urlsplit(pg_url)
    proxy = _TurnCounter(parts.hostname or "127.0.0.1", parts.port or 5432)
    url = urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.port}", f":{proxy.port}")))
    # the server's own exact statement is under test here, not the in-process copy (tests/store/test_pg_exact.py)
    from footnote.store.postgres import PostgresStore

    s = PostgresStore(url, StoreSettings(url=url, pg_exact_search_max=40, hnsw_ef_search=40,  # type: ignore[arg-type]
                                         pg_shared_scan_min_share=0.25, pg_batch_connections=1,
                                         pg_size_cache_s=3600.0),  # no recount's round trip among those counted
                      exact_copy=False)
    try:
        s.bind_embedder("hash", 64)
        texts = distinct_texts(300, seed=5)
        texts[7] = "karmaṇy evādhikāras te mā phaleṣu river lantern"
        for kind, lo, hi in (("letter", 0, 150), ("verse", 150, 180), ("commentary", 180, 300)):
            src, data = make_source(f"rows-{kind}", kind=kind)
            put(s, src, data, make_fragments(src, texts[lo:hi]))
        q = embed_query(texts[200])
        calls = [DenseCall(q, 12, ("letter",)), DenseCall(q, 8, ("commentary",)),  # the shared scan
                 DenseCall(q, 5, ("verse",)),  # 30 verses ≤ pg_exact_search_max: exact
                 DenseCall(q, 6),  # every kind, 300 > 40: its own HNSW scan
                 LexicalCall(" ".join(texts[3].split()[:2]), 10, True, "en"), LexicalCall("lantern", 5, False),
                 AddressCall("BG", "2.47", 3), TrigramCall("karmany evadhikaras", 3)]
        want = s.search_many(calls)  # type: ignore[attr-defined]
        rows: dict[str, tuple[Any, np.ndarray]] = {}
        before = proxy.turns
        got = s.search_many_rows(calls, rows)  # type: ignore[attr-defined]
        assert proxy.turns - before == 1  # hits and rows: one round trip
        assert [[h.fragment_id for h in hs] for hs in got] == [[h.fragment_id for h in hs] for hs in want]
        for g, w in zip(got, want, strict=True):
            assert [h.score for h in g] == [h.score for h in w]
        assert all(got[i] for i in (0, 1, 2, 3, 4, 5, 7))
        ids = list(dict.fromkeys(h.fragment_id for hs in got for h in hs))
        assert sorted(rows) == sorted(ids)  # the rows of the hits, and of nothing else
        assert [rows[i][0] for i in ids] == s.get_fragments(ids)
        np.testing.assert_array_equal(np.vstack([rows[i][1] for i in ids]), s.get_embeddings(ids))
        # what the caller holds is not sent again; the rest is
        held = {i: rows[i] for i in ids[::2]}
        again = dict(held)
        sent: dict[str, tuple[Any, np.ndarray]] = {}
        orig = s._search_batch  # type: ignore[attr-defined]

        def spy(batch: Any, have: Any = None) -> Any:
            hits, new = orig(batch, have)
            sent.update(new)
            return hits, new

        s._search_batch = spy  # type: ignore[attr-defined]
        s.search_many_rows(calls, again)  # type: ignore[attr-defined]
        assert sorted(again) == sorted(ids) and not set(sent) & set(held)
        assert set(sent) == set(ids) - set(held)
    finally:
        s.close()
        proxy.close()


def test_shared_scan_leaves_out_the_rows_below_rows_min(pg_url: str) -> None:
    """Rows mode with a dense call's ``rows_min`` (retrieve.dense_rows_floor_margin): the shared HNSW scan sends the
    rows of its hits at or above it, and for the others their language instead — the hits and scores are
    those of ``search_many``."""
    from dataclasses import replace

    from footnote.store.batch import DenseCall

    s = _open(pg_url, pg_exact_search_max=0, pg_shared_scan_min_share=0.25, pg_batch_connections=1)
    try:
        s.bind_embedder("hash", 64)
        texts = distinct_texts(200, seed=12)
        _fill_kinds(s, texts, 120, 140, "rmin")
        q = embed_query(texts[150])
        calls = [DenseCall(q, 20, ("letter",)), DenseCall(q, 20, ("commentary",))]
        want = s.search_many(calls)  # type: ignore[attr-defined]
        floor = float(np.median([h.score for hs in want for h in hs]))
        rows: dict[str, tuple[Any, np.ndarray]] = {}
        got = s.search_many_rows([replace(c, rows_min=floor) for c in calls], rows)  # type: ignore[attr-defined]
        assert [[(h.fragment_id, h.score) for h in hs] for hs in got] == \
            [[(h.fragment_id, h.score) for h in hs] for hs in want]
        hits = [h for hs in got for h in hs]
        above = [h for h in hits if h.score >= floor]
        below = [h for h in hits if h.score < floor]
        assert above and below
        assert sorted(rows) == sorted(h.fragment_id for h in above)
        assert all(h.lang is None for h in above)
        langs = {f.id: f.lang for f in s.get_fragments([h.fragment_id for h in below])}
        assert [h.lang for h in below] == [langs[h.fragment_id] for h in below]
    finally:
        s.close()


def test_reads_of_one_statement_are_one_round_trip_and_jit_is_off(pg_url: str) -> None:
    """The search path's reads (the fragments, their vectors, the curated notes) go in autocommit: one
    round trip each, not three (psycopg's implicit BEGIN and closing ROLLBACK); and Footnote's sessions
    run with JIT off unless ``store.postgres.jit`` says otherwise."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_url)
    proxy = _TurnCounter(parts.hostname or "127.0.0.1", parts.port or 5432)
    url = urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.port}", f":{proxy.port}")))
    s = _open(url, pg_pool_size=2)
    try:
        s.bind_embedder("hash", 64)
        src, data = make_source("rt")
        frags = make_fragments(src, ["alpha beta", "gamma delta"])
        put(s, src, data, frags)
        ids = [f.id for f in frags]
        s.get_fragments(ids)  # the connection exists and is configured
        for read in (lambda: s.get_fragments(ids), lambda: s.get_fragments_with_embeddings(ids),  # type: ignore[attr-defined]
                     lambda: s.get_embeddings(ids), lambda: s.list_memory_notes(),
                     lambda: s.memory_vectors("hash")):
            before = proxy.turns
            read()
            assert proxy.turns - before == 1
        with s._pool.connection() as conn:  # type: ignore[attr-defined]
            assert conn.execute("SHOW jit").fetchone() == ("off",)
            assert not conn.autocommit  # handed back as it was lent
        put(s, src, data, frags)  # writes still run in their own transactions
        assert s.get_fragments(ids) == frags
    finally:
        s.close()
        proxy.close()
    on = _open(pg_url, pg_jit=True)
    try:
        with on._pool.connection() as conn:  # type: ignore[attr-defined]
            assert conn.execute("SHOW jit").fetchone() == ("on",)
    finally:
        on.close()


_GIN = ("fragment_terms_tsv_stem", "fragment_terms_tsv_plain", "fragments_trgm")


def _pending_pages(url: str) -> dict[str, int]:
    """Pages in each GIN index's pending list (pgstattuple), which every search using it scans linearly."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple SCHEMA public")
        return {ix: int(conn.execute("SELECT pending_pages FROM public.pgstatginindex(to_regclass(%s))",
                                     [ix]).fetchone()[0]) for ix in _GIN}  # type: ignore[index]


def test_ingest_merges_the_gin_pending_lists(pg_url: str, tmp_path: Path) -> None:
    """GIN's fast update leaves new entries in a pending list that autovacuum merges only after ~20 %
    more rows: written source by source it stays, and every lexical search scans it. An ingest run
    (and a backlog run) merges them at its end."""
    s = _open(pg_url)
    try:
        src, data = make_source("src-direct")
        put(s, src, data, make_fragments(src, distinct_texts(40, seed=9)), embedded=False)
        left = _pending_pages(pg_url)
        assert left["fragment_terms_tsv_stem"] > 0 and left["fragment_terms_tsv_plain"] > 0  # the control: put_source leaves them
        s.flush_text_indexes()  # type: ignore[attr-defined]
        assert _pending_pages(pg_url) == dict.fromkeys(_GIN, 0)
    finally:
        s.close()
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "kind": "letter", "title": f"D{i}", "lang": "en",
                                          "text": " ".join(distinct_texts(3, seed=20 + i))}) + "\n" for i in range(30)))
    settings = load_settings(None, **{"store.url": pg_url, "embedder.name": "hash", "embedder.hash_dim": 32})
    with Engine.from_settings(settings) as eng:
        eng.ingest([corpus])
        assert eng.store.stats().embedded == eng.store.stats().fragments > 40
    assert _pending_pages(pg_url) == dict.fromkeys(_GIN, 0)


def test_kind_counts_match_a_full_count_and_are_refreshed_off_the_search_path(pg_url: str) -> None:
    """The per-kind counts that pick exact / shared / filtered dense search: equal to counting the
    embedded rows (fragments without a vector left out); once stale, recounted on a worker thread
    while the search goes on with the previous counts."""
    s = _open(pg_url, pg_size_cache_s=3600.0)
    s.bind_embedder("hash", 64)
    other = _open(pg_url)
    try:
        texts = distinct_texts(90, seed=5)
        for kind, lo, hi, embedded in (("letter", 0, 40, True), ("verse", 40, 60, True), ("verse", 60, 75, False),
                                       ("commentary", 75, 90, False)):
            src, data = make_source(f"src-{kind}-{lo}", kind=kind)
            put(s, src, data, make_fragments(src, texts[lo:hi]), embedded=embedded)
        q = np.random.default_rng(1).normal(size=64).astype(np.float32)
        s.search_dense(q, 5, kinds=["verse"])
        assert s._kind_counts is not None  # type: ignore[attr-defined]
        assert s._kind_counts[1] == {"letter": 40, "verse": 20}  # type: ignore[attr-defined]
        src, data = make_source("src-more", kind="commentary")
        put(other, src, data, make_fragments(src, distinct_texts(12, seed=6)))
        before = s.search_dense(q, 5, kinds=["commentary"])  # counts an hour fresh: not recounted
        assert s._kind_counts[1] == {"letter": 40, "verse": 20}  # type: ignore[attr-defined]
        assert len(before) == 5  # the exact scan (a group under pg_exact_search_max) is right all the same
        s.settings = s.settings.model_copy(update={"postgres": s.settings.postgres.model_copy(update={"size_cache_s": 0.0})})  # type: ignore[attr-defined]
        s.search_dense(q, 5, kinds=["commentary"])
        deadline = time.monotonic() + 10
        while s._kind_counts[1] != {"letter": 40, "verse": 20, "commentary": 12} and time.monotonic() < deadline:  # type: ignore[attr-defined]
            time.sleep(0.05)
        assert s._kind_counts[1] == {"letter": 40, "verse": 20, "commentary": 12}  # type: ignore[attr-defined]
    finally:
        other.close()
        s.close()
