"""The server's background embedding: a thread that embeds pending fragments while ``footnote serve`` runs.

A server started on a half-embedded store (``ingest --no-wait``, an interrupted ingest, a ``reembed``
in progress) finishes the job: every ``backlog.serve_poll_s`` the thread looks for fragments without a
vector and embeds them with ``backlog.serve_workers`` workers. Local models then run in worker
processes at a lower CPU priority (``backlog.serve_nice``), never on the query embedder's lock, so
queries keep their latency.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from footnote.errors import FootnoteError

if TYPE_CHECKING:
    from footnote.engine import Engine

log = logging.getLogger(__name__)


class BacklogWorker:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0
        self.last_error: str | None = None

    def start(self) -> None:
        if self._thread is not None or self.engine.embedder is None:
            return
        self._thread = threading.Thread(target=self._loop, name="footnote-backlog", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        cfg = self.engine.settings.backlog
        while not self._stop.is_set():
            try:
                if self.engine.store.backlog().pending > 0:
                    report = self.engine.embed_backlog(
                        workers=cfg.serve_workers, stop=self._stop, background=True,
                    )
                    self.runs += 1
                    self.last_error = report.error
                    if report.embedded:
                        log.info("background embedding: %d fragments in %.1f s (%d left)",
                                 report.embedded, report.seconds, report.remaining)
                    if report.error:
                        log.warning("background embedding stopped: %s", report.error)
            except FootnoteError as e:
                self.last_error = e.message
                log.warning("background embedding failed: %s", e.message)
            except Exception:  # never take the server down with it
                log.exception("background embedding failed")
            self._stop.wait(cfg.serve_poll_s)
