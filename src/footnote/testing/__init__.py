"""Test support shipped with the package for this project's tests and yours: the backend-agnostic conformance
suites (``store_conformance``, ``memory_conformance``, ``conversation_conformance``), a scripted OpenAI-compatible
server (``openai_server``) and loopback helpers (``loopback``). ``footnote.testing.internal`` is this repository's
own infrastructure (embedded PostgreSQL, statement capture), not a public API."""

from __future__ import annotations

import os


def under_ci() -> bool:
    """True when the ``CI`` environment variable says so (``1``, ``true`` or ``yes``): then tests that need a
    service (embedded PostgreSQL, Chromium, ../shared) fail instead of skipping when it is missing."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
