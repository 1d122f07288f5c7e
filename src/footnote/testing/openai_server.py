"""A scripted OpenAI-compatible chat server on loopback: real HTTP, real SSE streaming.

Each ``POST /v1/chat/completions`` takes the next :class:`Reply` from the script (one list for every
model, or a list per model name), answers it — a JSON completion, or ``text/event-stream`` chunks
ending in ``data: [DONE]`` when the request says ``"stream": true`` — and records the request body in
``requests`` so tests can inspect exactly what a model was shown. ``Reply(status=503)`` answers an
error; ``Reply(delay_s=…)`` sleeps first (timeouts), watching the connection meanwhile: a client that
closes it during the delay is recorded in ``hangups`` (model name, seconds after the request arrived)
and gets no reply. An exhausted script answers HTTP 500 and records it
in ``unexpected``. ``POST …/embeddings`` takes replies from the same script and answers one vector of
``Reply.dim`` numbers per input (:func:`embedding_for`), or ``raw``. A request asking for ``logprobs`` gets
``Reply.top_logprobs`` as its first token's alternatives (a model weighing "yes" against "no").

    with ScriptedOpenAIServer([Reply("Hello [1]."), Reply(status=503)]) as srv:
        settings = ChatModelSettings(base_url=srv.base_url, model="m")
"""

from __future__ import annotations

import hashlib
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from footnote.testing import loopback


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``chunks`` (streaming only) defaults to ``content`` split after spaces."""

    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    chunks: tuple[str, ...] | None = None
    chunk_delay_s: float = 0.0
    raw: str | None = None  # a raw body: a non-streaming 200 (malformed replies), or an error status's body
    dim: int = 8  # POST …/embeddings: one deterministic vector of this dimension per input (see embedding_for)
    #: a request that asks for ``logprobs`` gets these (token, log-probability) pairs as its first token's
    #: ``top_logprobs`` (None: no ``logprobs`` in the reply, as an endpoint that does not give them)
    top_logprobs: tuple[tuple[str, float], ...] | None = None

    def stream_chunks(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        out: list[str] = []
        word = ""
        for ch in self.content:
            word += ch
            if ch == " ":
                out.append(word)
                word = ""
        if word:
            out.append(word)
        return out


def embedding_for(text: str, dim: int) -> list[float]:
    """The scripted server's vector for ``text``: deterministic, from a hash of the text (not normalised)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [((digest[i % len(digest)] + i) % 17) - 8.0 + 0.5 for i in range(dim)]


#: a scripted model that replies by what it is asked (the request's JSON body)
Responder = Callable[[dict[str, Any]], Reply]


class ScriptedOpenAIServer:
    """Serve ``script`` (a list of replies, or a dict model name → list) on 127.0.0.1:<free port>. A model's
    script may instead be a function of the request's body (a model that answers by what it is shown)."""

    def __init__(self, script: Sequence[Reply] | dict[str, Sequence[Reply] | Responder]) -> None:
        self._by_body: dict[str | None, Responder] = {}
        if isinstance(script, dict):
            self._scripts: dict[str | None, list[Reply]] = {k: list(v) for k, v in script.items() if not callable(v)}
            self._by_body = {k: v for k, v in script.items() if callable(v)}
        else:
            self._scripts = {None: list(script)}
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.unexpected: list[dict[str, Any]] = []
        self.hangups: list[tuple[str, float]] = []
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw.decode("utf-8") or "{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                body["_path"] = self.path
                t0 = time.monotonic()
                body["_auth"] = self.headers.get("Authorization")
                reply = server._next(body)
                if reply is None:
                    self._send_json(500, {"error": {"message": "script exhausted"}})
                    return
                if reply.delay_s and self._wait_or_hangup(reply.delay_s):
                    with server._lock:
                        server.hangups.append((str(body.get("model", "")), round(time.monotonic() - t0, 3)))
                    self.close_connection = True
                    return
                if reply.status != 200:
                    if reply.raw is not None:  # an upstream's own error body (tests check it is not echoed)
                        self._send_bytes(reply.status, reply.raw.encode("utf-8"), "application/json")
                    else:
                        self._send_json(reply.status, {"error": {"message": f"scripted status {reply.status}"}})
                    return
                if self.path.rstrip("/").endswith("/embeddings") and reply.raw is None:
                    inputs = body.get("input")
                    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
                    self._send_json(200, {
                        "object": "list", "model": body.get("model", ""),
                        "data": [{"object": "embedding", "index": i, "embedding": embedding_for(t, reply.dim)}
                                 for i, t in enumerate(texts)],
                    })
                elif body.get("stream"):
                    self._send_stream(reply)
                elif reply.raw is not None:
                    self._send_bytes(200, reply.raw.encode("utf-8"), "application/json")
                else:
                    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": reply.content}}
                    if body.get("logprobs") and reply.top_logprobs is not None:
                        top = [{"token": t, "logprob": lp} for t, lp in reply.top_logprobs]
                        first = top[0] if top else {"token": reply.content, "logprob": 0.0}
                        choice["logprobs"] = {"content": [{**first, "top_logprobs": top}]}
                    self._send_json(200, {
                        "id": "chatcmpl-scripted", "object": "chat.completion", "model": body.get("model", ""),
                        "choices": [choice],
                    })

            def _wait_or_hangup(self, delay_s: float) -> bool:
                """Sleep ``delay_s``; True as soon as the client closes the connection meanwhile."""
                end = time.monotonic() + delay_s
                while (left := end - time.monotonic()) > 0:
                    ready, _, _ = select.select([self.connection], [], [], min(left, 0.02))
                    if ready:
                        try:
                            if self.connection.recv(1, socket.MSG_PEEK) == b"":
                                return True
                        except OSError:
                            return True
                        time.sleep(min(left, 0.02))  # pipelined bytes: not a hang-up
                return False

            def _send_bytes(self, status: int, data: bytes, ctype: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send_json(self, status: int, obj: dict[str, Any]) -> None:
                self._send_bytes(status, json.dumps(obj).encode("utf-8"), "application/json")

            def _send_stream(self, reply: Reply) -> None:
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for piece in reply.stream_chunks():
                        chunk = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
                                 "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        if reply.chunk_delay_s:
                            time.sleep(reply.chunk_delay_s)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self._httpd = loopback.start_http_server(Handler, name="scripted-openai")
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            loopback.stop_http_server(self._httpd)
            self._httpd = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script --------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return loopback.base_url(self._httpd) + "/v1"

    def _next(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            model = body.get("model")
            if model in self._by_body:
                return self._by_body[model](body)
            queue = self._scripts.get(model) if model in self._scripts else self._scripts.get(None)
            if not queue:
                self.unexpected.append(body)
                return None
            return queue.pop(0)

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("model") == model]

    def remaining(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._scripts.values())

    def all_text_sent(self) -> str:
        """Every message content the server received, joined (to check what models were shown)."""
        return "\n".join(
            str(m.get("content", "")) for r in self.requests for m in r.get("messages", []) if isinstance(m, dict)
        )
