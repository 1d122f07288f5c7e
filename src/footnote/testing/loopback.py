"""Loopback networking for tests and benches: a free TCP port, and a ``http.server`` handler served from a
background thread on 127.0.0.1 (what :mod:`footnote.testing.openai_server` and the reranker tests use).

    with http_server(MyHandler) as base:   # "http://127.0.0.1:<port>"
        httpx.post(base + "/v1/rerank", ...)
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def start_http_server(
    handler: type[BaseHTTPRequestHandler], *, name: str = "loopback-http", poll_interval: float = 0.05
) -> ThreadingHTTPServer:
    """Serve ``handler`` on 127.0.0.1:<free port> from a daemon thread; stop it with :func:`stop_http_server`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": poll_interval}, name=name, daemon=True)
    thread.start()
    return httpd


def stop_http_server(httpd: ThreadingHTTPServer) -> None:
    httpd.shutdown()
    httpd.server_close()


def base_url(httpd: ThreadingHTTPServer) -> str:
    """``http://127.0.0.1:<port>`` of a server from :func:`start_http_server`."""
    return f"http://127.0.0.1:{httpd.server_address[1]}"


@contextmanager
def http_server(
    handler: type[BaseHTTPRequestHandler], *, name: str = "loopback-http", poll_interval: float = 0.05
) -> Iterator[str]:
    """:func:`start_http_server` for the length of a ``with`` block; yields the server's base URL."""
    httpd = start_http_server(handler, name=name, poll_interval=poll_interval)
    try:
        yield base_url(httpd)
    finally:
        stop_http_server(httpd)
