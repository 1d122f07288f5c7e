"""A demo store (real SQLite, real ingestion, the deterministic ``hash`` embedder) shared by the MCP tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.engine import Engine
from footnote.settings import Settings, load_settings


@pytest.fixture(scope="session")
def mcp_store(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Settings:
    root = tmp_path_factory.mktemp("mcp")
    # Served as `footnote serve` serves the demo: with the demo's own settings file (book aliases, scope).
    settings = load_settings(demo_dir / "footnote.toml", **{"store.url": str(root / "store.db"), "embedder.name": "hash"})
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([demo_dir])
        assert report.ok, report.summary()
    return settings
