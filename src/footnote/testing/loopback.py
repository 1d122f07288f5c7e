"""Loopback networking for tests and benches: a free TCP port, and a ``http.server`` handler served from a
background thread on 127.0.0.1 (what :mod:`footnote.testing.openai_server` and the reranker tests use).

    with http_server(MyHandler) as base:   # "http://127.0.0.1:<port>"
        httpx.post(base + "/v1/rerank", ...)

and :func:`wait_until_serving`, for the tests and benches that start ``footnote serve`` processes.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
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


def wait_until_serving(proc: subprocess.Popen[bytes], url: str, timeout_s: float) -> str | None:
    """Wait for a ``footnote serve`` process to answer ``url``/healthz: None when it does, else why not (it exited,
    with the end of its output when it was piped, or ``timeout_s`` passed — then it is killed)."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout or proc.stderr
            tail = out.read().decode(errors="replace")[-2000:] if out is not None else ""
            return f"footnote serve exited {proc.returncode}: {tail}"
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return None
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    return f"footnote serve did not answer {url}/healthz within {timeout_s:.0f} s"
