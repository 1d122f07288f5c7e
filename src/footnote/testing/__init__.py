"""Test support shipped with the package (real protocols on loopback, for this project's tests and yours)."""

from __future__ import annotations

import os


def under_ci() -> bool:
    """True when the ``CI`` environment variable says so (``1``, ``true`` or ``yes``): then tests that need a
    service (embedded PostgreSQL, Chromium, ../shared) fail instead of skipping when it is missing."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
