"""Rerankers over real HTTP: a scripted Cohere-style /rerank server on loopback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from footnote.errors import ConfigError, ModelError, ModelTimeout
from footnote.models.rerankers import HttpReranker, LocalCrossEncoderReranker, make_reranker
from footnote.settings import RetrieveSettings
from footnote.testing.loopback import http_server


class Script:
    """What the server answers, one step per request: ('ok'|'5xx'|'sleep'|'garbage'|'404', arg)."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []


def _score(query: str, doc: str) -> float:
    q = set(query.lower().split())
    return len(q & set(doc.lower().split())) / (1 + len(doc.split()))


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            n = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(n))
            script.requests.append(payload)
            script.headers.append(dict(self.headers))
            step, arg = script.steps.pop(0) if script.steps else ("ok", None)
            if step == "5xx":
                self._send(int(arg or 503), b'{"error":"overloaded"}')
            elif step == "404":
                self._send(404, b'{"error":"no such model"}')
            elif step == "sleep":
                time.sleep(float(arg))
                self._send(200, b'{"results": []}')
            elif step == "garbage":
                self._send(200, arg.encode() if isinstance(arg, str) else b"<html>not json</html>", "text/html")
            else:
                docs = payload["documents"]
                results = [{"index": i, "relevance_score": _score(payload["query"], d)} for i, d in enumerate(docs)]
                results.sort(key=lambda r: -r["relevance_score"])
                self._send(200, json.dumps({"results": results[: payload["top_n"]]}).encode())

    return H


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()
    with http_server(_handler(script), poll_interval=0.02) as base:
        yield f"{base}/v1/rerank", script


DOCS = ["the cat sat on the mat", "warsaw is the capital of poland", "poland capital city warsaw"]


def test_http_reranker_ranks_and_sends_the_cohere_payload(server: tuple[str, Script]) -> None:
    url, script = server
    rr = HttpReranker(url, "rerank-2", api_key="k123", timeout_s=2, retries=0)
    scores = rr.rerank("capital of poland", DOCS)
    assert len(scores) == 3
    assert scores[0] < scores[2] and scores[0] < scores[1]  # the cat is least relevant
    assert script.requests == [{"model": "rerank-2", "query": "capital of poland", "documents": DOCS, "top_n": 3}]
    assert script.headers[0]["Authorization"] == "Bearer k123"
    assert rr.rerank("q", []) == []
    assert len(script.requests) == 1  # no call for an empty slate


def test_http_reranker_retries_a_5xx_then_succeeds(server: tuple[str, Script]) -> None:
    url, script = server
    script.steps = [("5xx", 503), ("5xx", 500), ("ok", None)]
    rr = HttpReranker(url, "m", timeout_s=2, retries=2, backoff_s=0.01)
    scores = rr.rerank("capital of poland", DOCS)
    assert len(script.requests) == 3
    assert max(range(3), key=lambda i: scores[i]) != 0


def test_http_reranker_persistent_5xx_is_a_clear_error(server: tuple[str, Script]) -> None:
    url, script = server
    script.steps = [("5xx", 502)] * 3
    rr = HttpReranker(url, "m", timeout_s=2, retries=2, backoff_s=0.01)
    with pytest.raises(ModelError) as e:
        rr.rerank("q", DOCS)
    assert "HTTP 502" in e.value.message and "3 attempts" in e.value.message and url in e.value.message
    assert len(script.requests) == 3


def test_http_reranker_client_error_is_not_retried(server: tuple[str, Script]) -> None:
    url, script = server
    script.steps = [("404", None)]
    with pytest.raises(ModelError, match="HTTP 404"):
        HttpReranker(url, "m", timeout_s=2, retries=2, backoff_s=0.01).rerank("q", DOCS)
    assert len(script.requests) == 1


def test_http_reranker_timeout(server: tuple[str, Script]) -> None:
    url, script = server
    script.steps = [("sleep", 1.0), ("sleep", 1.0)]
    rr = HttpReranker(url, "m", timeout_s=0.2, retries=1, backoff_s=0.01)
    t0 = time.monotonic()
    with pytest.raises(ModelTimeout, match="timed out"):
        rr.rerank("q", DOCS)
    assert time.monotonic() - t0 < 1.5  # bounded: two short attempts, not two full sleeps


@pytest.mark.parametrize(
    "body",
    [
        "<html>not json</html>",
        '{"data": []}',
        '{"results": [{"index": 7, "relevance_score": 0.3}]}',
        '{"results": [{"relevance_score": 0.3}]}',
    ],
)
def test_http_reranker_malformed_replies(server: tuple[str, Script], body: str) -> None:
    url, script = server
    script.steps = [("garbage", body)]
    with pytest.raises(ModelError):
        HttpReranker(url, "m", timeout_s=2, retries=0).rerank("q", DOCS)


def test_http_reranker_unreachable() -> None:
    rr = HttpReranker("http://127.0.0.1:9/rerank", "m", timeout_s=0.5, retries=1, backoff_s=0.01)
    with pytest.raises(ModelError, match="cannot reach"):
        rr.rerank("q", DOCS)


def test_top_n_subset_ranks_missing_passages_last(server: tuple[str, Script]) -> None:
    url, script = server
    script.steps = [("garbage", '{"results": [{"index": 1, "relevance_score": 0.9}, {"index": 2, "relevance_score": 0.2}]}')]
    scores = HttpReranker(url, "m", timeout_s=2, retries=0).rerank("q", DOCS)
    assert scores[1] > scores[2] > scores[0]


def test_make_reranker_by_settings(tmp_path: Path) -> None:
    assert make_reranker(RetrieveSettings()) is None
    rr = make_reranker(RetrieveSettings(reranker="http", rerank={"url": "http://127.0.0.1:1/rerank", "model": "m"}))
    assert isinstance(rr, HttpReranker)
    # the section's old flat keys still construct it (a deprecation warning names the new ones)
    assert isinstance(make_reranker(RetrieveSettings(reranker="http", rerank_url="http://127.0.0.1:1/rerank")), HttpReranker)
    with pytest.raises(ConfigError, match=r"rerank\.url"):
        make_reranker(RetrieveSettings(reranker="http"))
    with pytest.raises(ConfigError, match="http"):
        make_reranker(RetrieveSettings(reranker="http", rerank_url="ftp://x"))
    with pytest.raises(ConfigError, match="no such model directory"):
        make_reranker(RetrieveSettings(reranker="local", rerank_model=str(tmp_path / "missing")))
    with pytest.raises(ConfigError, match=r"rerank\.model"):
        make_reranker(RetrieveSettings(reranker="local"))
    local = make_reranker(RetrieveSettings(reranker="local", rerank_model=str(tmp_path)))
    assert isinstance(local, LocalCrossEncoderReranker)


def test_local_reranker_without_the_extra_is_a_clear_config_error(tmp_path: Path) -> None:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:  # pragma: no cover - the extra is not installed in CI
        pytest.skip("sentence-transformers is installed")
    rr = LocalCrossEncoderReranker(str(tmp_path))
    assert rr.rerank("q", []) == []
    with pytest.raises(ConfigError, match=r"rerank-local"):
        rr.rerank("q", ["a passage"])
