"""Fuzzing the real HTTP surface (issue 44, "keep it fixed"): every operation of the OpenAPI document the
server publishes (``/openapi.json``), driven by schemathesis on hypothesis — valid requests and requests
that break the schema (wrong types, missing fields, odd Unicode, lone surrogates, huge numbers) — plus
``/mcp`` (JSON-RPC messages, valid and not), any path with any method, and every route without the key.

Over a real server on loopback (uvicorn with ``footnote serve``'s protocol, its own SQLite store of the
demo, the ``hash`` embedder, an API key so the writing routes are reached), every response must pass
:func:`fuzzkit.problems`: no 5xx, no traceback, every 4xx with a reason.

Bounded: the default run sends ``FUZZ_EXAMPLES`` examples per operation and mode within ``FUZZ_SECONDS``
(well under a minute on a loaded 2-core machine); ``-m slow`` runs the long version. The counts land in
``artifacts/fuzz/*.json`` and are printed (``-s``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import requests
import schemathesis
from fuzzkit import AUTH, Tally, fuzz_server
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from serverkit import LiveServer

pytestmark = pytest.mark.integration

FUZZ_EXAMPLES = int(os.environ.get("FOOTNOTE_FUZZ_EXAMPLES", "10"))  # per operation and generation mode
FUZZ_SECONDS = float(os.environ.get("FOOTNOTE_FUZZ_SECONDS", "25"))  # the OpenAPI operations, all together
SLOW_EXAMPLES, SLOW_SECONDS = 150, 900.0


@pytest.fixture(scope="module")
def fuzz_live(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Iterator[LiveServer]:
    with fuzz_server(tmp_path_factory.mktemp("fuzz"), demo_dir) as server:
        yield server


def _settings(examples: int, derandomize: bool) -> Callable[[Any], Any]:
    # no shrinking and no example database: failures are collected (all of them, not the first), and
    # nothing is written into the checkout
    return settings(max_examples=examples, deadline=None, database=None, derandomize=derandomize,
                    phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


def _headers(resp: schemathesis.Response) -> dict[str, str]:
    return {k.lower(): (v[0] if isinstance(v, list) and v else str(v)) for k, v in resp.headers.items()}


#: Strings the schema-driven generator does not make on its own (hypothesis leaves out surrogates) and that
#: broke something once: planted into the generated requests' string fields.
ODD_STRINGS = ("\ud800", "x\udc00y", "http://x@[::1", "postgresql://bob:pw@[::1:8829/db", "../../x", "..%2f..%2fx",
               "/etc/passwd", "\x00", "\u202egnp.exe", "\U0001d518\u0301", "a" * 5000, " ", "null", "-1", "1e309",
               "<script>alert(1)</script>", "' OR 1=1 --", "{{7*7}}", "%s%n", "\\\\server\\share")
_PATH_SAFE_ODD = tuple(o for o in ODD_STRINGS if "\ud800" not in o and "\udc00" not in o and o.strip())


#: The odd strings the (slower) writing seeds try: each that broke a write once, and a few shapes.
_WRITE_ODD = ("\ud800", "x\udc00y", "http://x@[::1", "postgresql://bob:pw@[::1:8829/db", "../../x", "\x00",
              "a" * 5000, "<script>alert(1)</script>")


def _string_slots(value: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every string inside a JSON-like value."""
    out: list[tuple[Any, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        if isinstance(v, str):
            out.append((value, k))
        else:
            out += _string_slots(v)
    return out


def plant_odd_strings(case: schemathesis.Case, data: st.DataObject) -> None:
    """Now and then, one string of the generated request (body, query or path) becomes an odd one."""
    if not data.draw(st.booleans(), label="plant"):
        return
    slots = [("body", c, k) for c, k in _string_slots(case.body)] if isinstance(case.body, dict | list) else []
    slots += [("query", case.query, k) for k, v in (case.query or {}).items() if isinstance(v, str)]
    slots += [("path", case.path_parameters, k) for k, v in (case.path_parameters or {}).items() if isinstance(v, str)]
    if not slots:
        return
    where, container, key = data.draw(st.sampled_from(slots), label="slot")
    container[key] = data.draw(st.sampled_from(ODD_STRINGS if where == "body" else _PATH_SAFE_ODD), label="odd")


def _operation_test(live: LiveServer, tally: Tally, session: requests.Session, op: Any, route: str,
                    mode: GenerationMode, until: float, examples: int, derandomize: bool) -> Callable[[], None]:
    @given(case=op.as_strategy(generation_mode=mode), data=st.data())
    @_settings(examples, derandomize)
    def one(case: schemathesis.Case, data: st.DataObject) -> None:
        plant_odd_strings(case, data)  # before the clock: the draws must not depend on time
        if time.monotonic() > until:
            return
        resp = case.call(base_url=live.url, session=session, headers=AUTH, timeout=60)
        sent = f"{mode.value} path={case.path_parameters} query={case.query} body={case.body!r}"
        tally.record(route, resp.status_code, _headers(resp), resp.content, sent)

    return one


def fuzz_openapi(live: LiveServer, tally: Tally, examples: int, seconds: float, *, derandomize: bool) -> set[str]:
    """Every operation of /openapi.json, positive then negative examples; the routes fuzzed."""
    schema = schemathesis.openapi.from_url(live.url + "/openapi.json", headers=AUTH, timeout=30)
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 15, [f"{o.method} {o.path}" for o in operations]
    share = seconds / (2 * len(operations))
    session = requests.Session()
    routes: set[str] = set()
    for op in operations:
        route = f"{op.method.upper()} {op.path}"
        routes.add(route)
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            one = _operation_test(live, tally, session, op, route, mode, time.monotonic() + share, examples, derandomize)
            try:
                one()
            except Unsatisfiable:  # nothing in this operation can be made invalid (no parameters, no body)
                assert mode is GenerationMode.NEGATIVE, route
    return routes


def without_key(live: LiveServer, tally: Tally, routes: set[str]) -> None:
    """Each route with no key and with a wrong one: 401 with the reason."""
    with httpx.Client(base_url=live.url, timeout=30) as client:
        for route in sorted(routes):
            method, path = route.split(" ", 1)
            path = path.replace("{source_id}", "demo/x").replace("{page}", "1").replace("{note_id}", "n") \
                .replace("{conversation_id}", "0" * 32)
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                r = client.request(method, path, headers=headers, json={} if method in ("POST", "PUT") else None)
                tally.record(route + " (no key)", r.status_code, r.headers, r.content, str(headers))
                if path != "/healthz":
                    assert r.status_code == 401, (route, r.status_code, r.text)


def _seed_requests() -> list[tuple[str, str, Any]]:
    """The regression corpus: every odd string in every string field of a valid request to each route (the
    generator above seldom makes a request valid enough to reach the code behind the schema)."""
    note = {"id": "fuzz-seed", "kind": "memory", "body": "The fog horn sounds twice a minute.", "title": "t",
            "triggers": ["fog horn"], "sources": [], "author": "a", "lang": "en"}
    out: list[tuple[str, str, Any]] = []
    for odd in _WRITE_ODD:
        for key in ("id", "kind", "body", "title", "author", "lang"):
            out.append(("POST", "/api/memory", {**note, key: odd}))
        for key in ("triggers", "sources"):
            out.append(("POST", "/api/memory", {**note, key: [odd]}))
        out.append(("PUT", "/api/memory/fuzz-seed", {**note, "body": odd}))
        out.append(("POST", "/api/ask", {"question": "fog horn", "conversation_id": odd, "stream": False}))
    for odd in _PATH_SAFE_ODD:
        q = quote(odd, safe="")
        out += [("GET", f"/api/sources/{q}", None), ("GET", f"/api/sources/{q}/view", None),
                ("GET", f"/api/sources/{q}/cues", None), ("GET", f"/api/sources/{q}/pages/1", None),
                ("DELETE", f"/api/sources/{q}", None), ("GET", f"/api/memory/{q}", None),
                ("DELETE", f"/api/memory/{q}", None), ("GET", f"/api/conversations/{q}", None),
                ("DELETE", f"/api/conversations/{q}", None), ("GET", f"/api/search?q={q}", None),
                ("GET", f"/api/sources?collection={q}", None)]
    for odd in ("\ud800", "http://x@[::1", "a" * 5000, "\x00"):
        out.append(("POST", "/api/ask", {"question": f"fog {odd}", "stream": False}))
        out.append(("POST", "/api/ask", {"question": f"fog {odd}"}))
    # integers past a database column's (the long run found `offset=2**63` a 500: SQLite's OverflowError)
    lecture = quote("demo/lectures/01-lamp-and-lens.srt", safe="")
    for big in (2**63, 2**64 + 1, 10**30):
        out += [("GET", f"/api/conversations?offset={big}", None), ("GET", f"/api/sources?offset={big}", None),
                ("GET", f"/api/sources/{lecture}/cues?start_ms={big}", None),
                ("GET", f"/api/sources/{lecture}/cues?end_ms={big}", None)]
    return out


def _template(path: str) -> str:
    path = path.split("?")[0]
    for prefix, name in (("/api/sources/", "{source_id}"), ("/api/memory/", "{note_id}"),
                         ("/api/conversations/", "{conversation_id}")):
        if path.startswith(prefix):
            rest = path[len(prefix):]
            tail = next((t for t in ("/view", "/cues", "/pages/1") if rest.endswith(t)), "")
            return prefix + name + tail.replace("/1", "/{page}")
    return path


def fuzz_seeds(live: LiveServer, tally: Tally) -> None:
    with httpx.Client(base_url=live.url, timeout=60) as client:
        for method, path, body in _seed_requests():
            content = None if body is None else json.dumps(body, ensure_ascii=True)
            headers = {**AUTH, "Content-Type": "application/json"}
            route = f"{method} {_template(path)} (seed)"
            try:
                r = client.request(method, path, content=content, headers=headers)
            except httpx.TransportError as e:  # the server dropped the connection: no answer at all
                tally.dropped(route, f"{content or path}: {type(e).__name__}: {e}")
                continue
            tally.record(route, r.status_code, r.headers, r.content, content or path)


_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")
_SEGMENT = st.text(st.characters(codec="utf-8", exclude_characters="/?#"), max_size=12)


def fuzz_any_path(live: LiveServer, tally: Tally, examples: int, *, derandomize: bool) -> None:
    """Any method on any path (under /api, /static, /mcp and the root), any query, with the key."""
    with httpx.Client(base_url=live.url, timeout=60) as client:

        @given(method=st.sampled_from(_METHODS),
               prefix=st.sampled_from(["/api/", "/api/sources/", "/api/memory/", "/api/conversations/", "/static/",
                                       "/", "/mcp/", "/docs/", "/openapi.json/"]),
               segments=st.lists(_SEGMENT, max_size=4), query=st.dictionaries(_SEGMENT, _SEGMENT, max_size=3))
        @_settings(examples, derandomize)
        def one(method: str, prefix: str, segments: list[str], query: dict[str, str]) -> None:
            path = prefix + "/".join(quote(s, safe="@:;,=+$!*'()~") for s in segments)
            r = client.request(method, path, params=query, headers=AUTH)
            tally.record(f"{method} (any path)", r.status_code, r.headers, r.content, f"{path} {query}",
                         bodiless=method == "HEAD")

        one()


# --- /mcp ------------------------------------------------------------------------------------------

MCP_HEADERS = {**AUTH, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TOOLS = ("search", "ask", "get_source", "list_sources")
ARG_NAMES = ("query", "question", "id", "source_id", "k", "limit", "offset", "fragment_id", "cursor", "lang",
             "fallback", "collection", "page", "x")
_JSON_LEAF = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=40)
_JSON = st.recursive(_JSON_LEAF, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids,
                                                                                       max_size=3), max_leaves=8)
_SOURCE_IDS = st.sampled_from(["demo/lectures/02-fog-and-tides.vtt", "demo/x", "../../etc/passwd", "http://x@[::1",
                               "", "\u0000", "a" * 300])


def _tool_call() -> st.SearchStrategy[dict[str, Any]]:
    args = st.dictionaries(st.sampled_from(ARG_NAMES), _JSON | _SOURCE_IDS, max_size=4)
    return st.fixed_dictionaries({"name": st.sampled_from(TOOLS) | st.text(max_size=12), "arguments": args | _JSON})


def _message() -> st.SearchStrategy[Any]:
    method = st.sampled_from(["tools/call", "tools/list", "resources/read", "resources/list",
                              "resources/templates/list", "prompts/list", "ping", "initialize", "completion/complete",
                              "logging/setLevel", "notifications/initialized"]) | st.text(max_size=20)
    uri = st.fixed_dictionaries({"uri": st.builds(lambda s: "footnote://source/" + s, _SOURCE_IDS | st.text(max_size=30))
                                 | st.text(max_size=30)})
    params = _tool_call() | uri | _JSON
    msg = st.fixed_dictionaries({"jsonrpc": st.just("2.0") | _JSON_LEAF, "id": st.integers(0, 10**6) | st.text(max_size=6)
                                 | st.none(), "method": method}, optional={"params": params})
    return msg | st.lists(msg, min_size=1, max_size=3) | _JSON


def _mcp_session(client: httpx.Client, tally: Tally) -> str:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}}
    r = client.post("/mcp", json=init, headers=MCP_HEADERS)
    tally.record("POST /mcp", r.status_code, r.headers, r.content, "initialize")
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers={**MCP_HEADERS, "mcp-session-id": sid})
    tally.record("POST /mcp", r.status_code, r.headers, r.content, "notifications/initialized")
    return sid


def fuzz_mcp(live: LiveServer, tally: Tally, examples: int, seconds: float, *, derandomize: bool) -> None:
    """JSON-RPC messages to /mcp in a live session (tools, resources, any method, any params), raw bytes,
    and requests with no session, a wrong one, or odd headers."""
    until = time.monotonic() + seconds
    with httpx.Client(base_url=live.url, timeout=60) as client:
        sid = _mcp_session(client, tally)

        @given(message=_message(), session=st.sampled_from(["live", "live", "live", "none", "bogus"]))
        @_settings(examples, derandomize)
        def one(message: Any, session: str) -> None:
            if time.monotonic() > until:
                return
            headers = dict(MCP_HEADERS)
            if session != "none":
                headers["mcp-session-id"] = sid if session == "live" else "not-a-session"
            body = json.dumps(message, ensure_ascii=True)
            r = client.post("/mcp", content=body, headers=headers)
            tally.record("POST /mcp", r.status_code, r.headers, r.content, body)
            if r.status_code == 200 and "json" in r.headers.get("content-type", ""):
                replies = r.json() if isinstance(r.json(), list) else [r.json()]
                for reply in replies:
                    err = reply.get("error") if isinstance(reply, dict) else None
                    if isinstance(err, dict) and err.get("code") == -32603:  # JSON-RPC "internal error": a 5xx
                        tally.failures.append(f"POST /mcp {body[:200]}: internal error {err}")

        one()

        @given(raw=st.binary(max_size=200), ctype=st.sampled_from(["application/json", "text/plain", ""]),
               method=st.sampled_from(["POST", "GET", "DELETE"]))
        @_settings(max(3, examples // 3), derandomize)
        def raw(raw: bytes, ctype: str, method: str) -> None:
            if time.monotonic() > until:
                return
            headers = {**MCP_HEADERS, "Content-Type": ctype, "mcp-session-id": "not-a-session"}
            r = client.request(method, "/mcp", content=raw if method == "POST" else None, headers=headers)
            tally.record(f"{method} /mcp", r.status_code, r.headers, r.content, repr(raw[:100]))

        raw()
        r = client.delete("/mcp", headers={**MCP_HEADERS, "mcp-session-id": sid})
        tally.record("DELETE /mcp", r.status_code, r.headers, r.content, "end the session")


def run_all(live: LiveServer, name: str, examples: int, seconds: float, *, derandomize: bool) -> Tally:
    tally = Tally(name)
    try:
        with tally.phase("seeds"):
            fuzz_seeds(live, tally)
        with tally.phase("openapi"):
            routes = fuzz_openapi(live, tally, examples, seconds, derandomize=derandomize)
        expected = {"POST /api/ask", "GET /api/search", "GET /api/sources", "GET /api/sources/{source_id}",
                    "DELETE /api/sources/{source_id}", "GET /api/conversations", "DELETE /api/conversations/{conversation_id}",
                    "GET /api/memory", "POST /api/memory", "PUT /api/memory/{note_id}", "DELETE /api/memory/{note_id}"}
        assert expected <= routes, expected - routes
        with tally.phase("mcp"):
            fuzz_mcp(live, tally, examples * 4, seconds / 5, derandomize=derandomize)
        with tally.phase("any path"):
            fuzz_any_path(live, tally, examples * 2, derandomize=derandomize)
        with tally.phase("no key"):
            without_key(live, tally, routes | {"POST /mcp"})
    finally:
        tally.report()
    assert httpx.get(live.url + "/healthz", timeout=30).status_code == 200  # still serving
    assert not tally.failures, "\n".join(tally.failures[:30])
    return tally


def test_fuzz_the_http_surface(fuzz_live: LiveServer) -> None:
    tally = run_all(fuzz_live, "http", FUZZ_EXAMPLES, FUZZ_SECONDS, derandomize=True)
    assert tally.requests >= 200 and len(tally.routes) >= 20


@pytest.mark.slow
def test_fuzz_the_http_surface_long(fuzz_live: LiveServer) -> None:
    tally = run_all(fuzz_live, "http-long", SLOW_EXAMPLES, SLOW_SECONDS, derandomize=False)
    assert tally.requests >= 2000


def test_the_checks_catch_what_they_are_for() -> None:
    from fuzzkit import problems

    ok = {"content-type": "application/json"}
    assert problems(500, ok, b'{"error": "internal error"}')
    assert problems(404, ok, b'{"detail": "Not Found"}')  # a 4xx with no reason in our shape
    assert problems(200, ok, b'Traceback (most recent call last):\n  File "/x/app.py", line 3, in f')
    assert problems(200, {"content-type": "text/event-stream"},
                    b'event: error\ndata: {"error": "internal error", "status": 500}\n\n')
    assert not problems(422, ok, b'{"error": "invalid request: q: field required", "type": "InvalidRequest"}')
    assert not problems(400, ok, b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}')
