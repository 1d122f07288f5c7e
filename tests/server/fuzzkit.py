"""The fuzzing suite's plumbing (issue 44): a real server over loopback with its own store, the checks every
response must pass, and a tally of what was sent (printed at the end of a run, written to
``artifacts/fuzz/<name>.json``).

The checks — for every request, whatever was sent:

- no 5xx status, and no ``error`` event with a 5xx status inside a 200 event stream;
- no Python traceback anywhere in the body (``Traceback (most recent call last)``, ``File "….py", line N``);
- every 4xx carries a reason: a JSON body whose ``error`` is a non-empty string (the API's error body) or
  an object with a non-empty ``message`` (a JSON-RPC error from ``/mcp``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from serverkit import LiveServer, build_store, free_socket, stop_server

from footnote.commands.serve import uvicorn_config
from footnote.engine import Engine
from footnote.server.app import create_app

KEY = "fuzz-key-0123456789abcdef"
AUTH = {"X-API-Key": KEY}
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "fuzz"
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"\n]+\.py\", line \d+")


def error_reason(body: str) -> str:
    """The reason a 4xx body gives ('' when it gives none)."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    err = data.get("error")
    if isinstance(err, str):
        return err.strip()
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return err["message"].strip()
    return ""


def sse_errors(body: str) -> list[dict[str, Any]]:
    """The data of every ``error`` event in an event stream."""
    out = []
    for frame in body.split("\n\n"):
        lines = frame.strip().splitlines()
        if lines and lines[0] == "event: error":
            data = "".join(line[5:].strip() for line in lines[1:] if line.startswith("data:"))
            try:
                out.append(json.loads(data))
            except ValueError:
                out.append({"status": 500, "error": f"unparsable error event {data[:100]!r}"})
    return out


def problems(status: int, headers: Mapping[str, str], body: bytes, *, bodiless: bool = False) -> list[str]:
    """What is wrong with one response (empty: nothing). ``bodiless``: the answer to a HEAD, which has no
    body to give a reason in."""
    text = body.decode("utf-8", "replace")
    found: list[str] = []
    if status >= 500:
        found.append(f"HTTP {status}: {text[:300]}")
    if _TRACEBACK.search(text):
        found.append(f"a traceback in the body: {text[:300]}")
    if 400 <= status < 500 and not bodiless and not error_reason(text):
        found.append(f"HTTP {status} without a reason: {text[:300]!r}")
    if "text/event-stream" in headers.get("content-type", ""):
        for err in sse_errors(text):
            if int(err.get("status") or 500) >= 500 or not str(err.get("error") or "").strip():
                found.append(f"an error event in a {status} stream: {err}")
    return found


@dataclass
class Tally:
    """What a fuzz run sent and found (per route: ``METHOD /path/{template}``)."""

    name: str
    requests: int = 0
    routes: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)  # seconds each part of the run took
    t0: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, route: str, status: int, headers: Mapping[str, str], body: bytes, sent: str = "", *,
               bodiless: bool = False) -> list[str]:
        found = problems(status, headers, body, bodiless=bodiless)
        with self._lock:
            self.requests += 1
            self.routes[route] += 1
            self.statuses[status] += 1
            for p in found:
                self.failures.append(f"{route} {sent[:200]}: {p}")
        return found

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        t = time.monotonic()
        try:
            yield
        finally:
            self.phases[name] = round(time.monotonic() - t, 1)

    def dropped(self, route: str, what: str) -> None:
        """A request that got no response (the connection was closed or reset): a failure."""
        with self._lock:
            self.requests += 1
            self.routes[route] += 1
            self.statuses[0] += 1
            self.failures.append(f"{route} {what[:300]}: no response")

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "requests": self.requests, "routes": len(self.routes),
                "per_route": dict(sorted(self.routes.items())),
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                "failures": len(self.failures), "failure_examples": self.failures[:20],
                "seconds": round(time.monotonic() - self.t0, 1), "phases": self.phases}

    def report(self) -> None:
        s = self.summary()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{self.name}.json").write_text(json.dumps(s, indent=1) + "\n", encoding="utf-8")
        print(f"\nfuzz {self.name}: {s['requests']} requests over {s['routes']} routes in {s['seconds']} s, "
              f"{s['failures']} failures; statuses {s['statuses']}")


@contextmanager
def fuzz_server(root: Path, demo_dir: Path) -> Iterator[LiveServer]:
    """A server as ``footnote serve`` runs it (:func:`uvicorn_config`), over its own store of the demo
    (the fuzzer writes and deletes: the session's shared store stays untouched), with an API key so the
    writing routes (memory, source removal) are reached too."""
    settings = build_store(root, demo_dir).with_overrides(**{
        "server.api_key": KEY, "server.warm_up": False, "backlog.serve_worker": False,
    })
    engine = Engine.from_settings(settings)
    app = create_app(engine, settings)
    sock = free_socket()
    server = uvicorn.Server(uvicorn_config(app, settings))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="footnote-fuzz-server")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the fuzz server did not start")
        time.sleep(0.05)
    try:
        yield LiveServer(f"http://127.0.0.1:{sock.getsockname()[1]}", app, engine, settings, root)
    finally:
        stop_server(server, thread)
        engine.close()
