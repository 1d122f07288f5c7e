"""What every route needs, built once per app by ``create_app`` (no module-level singletons)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from footnote.engine import Engine
from footnote.server.access import Access, Engines, Keyring, access_of
from footnote.server.pages import PageRenderer
from footnote.server.sse import EventPump
from footnote.settings import Settings


@dataclass
class ServerState:
    engine: Engine
    settings: Settings
    pump: EventPump
    pages: PageRenderer
    keyring: Keyring
    engines: Engines
    secrets: tuple[str, ...] = ()  # replaced by *** wherever text leaves the process (redact.settings_secrets)

    def access(self, request: Request) -> Access:
        return access_of(request)

    def engine_for(self, request: Request) -> Engine:
        """The engine this request reads through: the whole corpus, or the collections its key reads."""
        return self.engines.for_access(access_of(request))


class JSON(JSONResponse):
    """JSON as the CLI prints it: UTF-8 text (no ``\\u`` escapes), anything odd via ``str``."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str, separators=(",", ":")).encode("utf-8")


def error_body(message: str, kind: str, **extra: Any) -> dict[str, Any]:
    """The one error shape of the API (the CLI's ``--json`` error shape, plus extras)."""
    return {"error": message, "type": kind, **extra}
