"""``footnote serve`` as a user runs it: a subprocess that ingests the demo into an empty store and serves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from footnote.testing.loopback import free_port

pytestmark = pytest.mark.integration


def test_serve_ingests_the_demo_and_serves(tmp_path: Path, demo_dir: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    cmd = [sys.executable, "-c", "from footnote.cli import main; main()", "serve", "--port", str(port),
           "--embedder", "hash", "--demo", str(demo_dir)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "footnote serve did not come up"
            time.sleep(0.2)
        status = httpx.get(url + "/api/status").json()
        assert status["sources"] >= 11 and status["embedder"] == "hash"
        assert (tmp_path / "footnote-data" / "footnote.db").exists()  # the default store, relative to the cwd
        ids = {s["id"] for s in httpx.get(url + "/api/sources").json()["sources"]}
        assert "README.md" not in ids and "demo/lectures/02-fog-and-tides.vtt" in ids
        assert httpx.get(url + "/").text.startswith("<!doctype html>")
        # The demo is served with its own settings (demo/footnote.toml): its book's names resolve.
        found = httpx.get(url + "/api/search", params={"q": "What does the Harbour Book 3.2 say?"}).json()
        assert found["notes"][0]["label"] == "HB 3.2"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}" in out
    assert "ingested the demo corpus" in err
    assert f"settings: {demo_dir / 'footnote.toml'} (the demo's own)" in err
    assert f"MCP (streamable HTTP): http://127.0.0.1:{port}/mcp" in err


def test_a_busy_port_is_reported_not_served(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cmd = [sys.executable, "-c", "from footnote.cli import main; main()", "serve", "--port", str(port),
               "--embedder", "hash", "--no-demo"]
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3
    assert f"error: cannot listen on 127.0.0.1:{port}: Address already in use" in proc.stderr
    assert "--port" in proc.stderr and "serving" not in proc.stdout + proc.stderr
    assert not (tmp_path / "footnote-data").exists()  # failed before touching a store


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    """The stranger's `footnote serve --port 99999` printed a traceback ending in "OverflowError: bind(): port must
    be 0-65535"; it is a usage error (exit 2) naming the option, before any store is touched."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    cmd = [sys.executable, "-c", "from footnote.cli import main; main()", "serve", "--port", "99999", "--no-demo"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Invalid value for '--port': 99999 is not in the range 0<=x<=65535" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "footnote-data").exists()


def test_a_bound_port_refuses_until_the_server_listens() -> None:
    """The stranger's trial: the port listened while the demo was still being ingested, so a browser opened early
    waited on a queued connection (12 s, nothing said). ``bind`` claims the port without listening — a connection
    is refused at once — and ``listen`` opens it once the server is ready; a second server that bound the same port
    before either listened is told at ``listen``, as for a busy port."""
    from footnote.commands.serve import bind, listen
    from footnote.errors import ServeError

    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    try:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        listen(sock, "127.0.0.1", port)
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        with pytest.raises(ServeError, match=f"cannot listen on 127.0.0.1:{port}: .*already in use"):
            bind("127.0.0.1", port)  # someone listens there now
    finally:
        sock.close()
