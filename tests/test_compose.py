"""compose.yaml: `docker compose up` stays one server over PostgreSQL; the `org` profile adds a second server, an
embedding worker and a load balancer over both — all on the one database, with one admin key (docs/postgres.md).
Docker is not run here (no registry for images on these machines); the file is read as compose reads it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

COMPOSE = Path(__file__).resolve().parents[1] / "compose.yaml"


def test_the_org_profile_runs_two_servers_and_a_worker_on_one_database() -> None:
    doc = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    services = doc["services"]
    assert {n for n, s in services.items() if "profiles" not in s} == {"db", "footnote"}  # plain `up`: one server
    org = {n for n, s in services.items() if "org" in s.get("profiles", ())}
    assert org == {"footnote-b", "worker", "lb"}
    store = services["footnote"]["environment"]["FOOTNOTE_STORE"]
    assert store.startswith("postgresql://") and "@db:" in store
    for name in ("footnote-b", "worker"):
        assert services[name]["environment"]["FOOTNOTE_STORE"] == store
    assert services["footnote-b"]["environment"]["FOOTNOTE_API_KEY"] == services["footnote"]["environment"]["FOOTNOTE_API_KEY"]
    assert services["footnote-b"]["command"][:2] == ["footnote", "serve"] and "--no-demo" in services["footnote-b"]["command"]
    assert services["worker"]["command"][:2] == ["footnote", "worker"]
    upstream = re.search(r"upstream footnote \{([^}]*)\}", doc["configs"]["lb"]["content"])
    assert upstream is not None
    assert re.findall(r"server ([\w-]+):8000", upstream.group(1)) == ["footnote", "footnote-b"]
    assert "proxy_buffering off" in doc["configs"]["lb"]["content"]  # answers stream (SSE)
