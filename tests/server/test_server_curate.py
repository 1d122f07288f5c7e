"""DELETE /api/sources/{id}: only behind a configured API key sent in a header; removes the source,
its fragments, vectors, cues and unshared original in one go; the cues endpoint reads the cues table."""

from __future__ import annotations

from pathlib import Path

import httpx
from serverkit import start_server, stop_server

from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.settings import Settings, load_settings

SRT = ("1\n00:00:00,000 --> 00:00:02,000\nFog rolls over the skerry.\n\n"
       "2\n00:00:02,000 --> 00:00:04,000\nThe keeper starts the horn.\n")


def _store(tmp_path: Path, **overrides: object) -> Settings:
    d = tmp_path / "lib"
    d.mkdir()
    (d / "talk.srt").write_text(SRT, encoding="utf-8")
    (d / "talk.mp3").write_bytes(b"ID3" + bytes(range(256)) * 4)
    (d / "fog.md").write_text("# Fog\n\nThe horn sounds twice a minute in fog.\n", encoding="utf-8")
    (d / "copy.md").write_text("# Fog\n\nThe horn sounds twice a minute in fog.\n", encoding="utf-8")
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash", **overrides})
    with Engine.from_settings(settings) as eng:
        assert eng.ingest([d]).ok
    return settings


def test_delete_needs_a_configured_key(tmp_path: Path) -> None:
    settings = _store(tmp_path)
    with Engine.from_settings(settings) as engine:
        url, server, thread = start_server(create_app(engine, settings))
        try:
            r = httpx.delete(url + "/api/sources/lib/fog.md")
            assert r.status_code == 403 and "API key" in r.json()["error"]
            assert engine.store.get_source("lib/fog.md") is not None
        finally:
            stop_server(server, thread)


def test_delete_removes_everything_of_the_source(tmp_path: Path) -> None:
    settings = _store(tmp_path, **{"server.api_key": "k3y"})
    with Engine.from_settings(settings) as engine:
        store = engine.store
        url, server, thread = start_server(create_app(engine, settings))
        try:
            with httpx.Client(base_url=url, timeout=30) as c:
                key = {"X-API-Key": "k3y"}
                cues = c.get("/api/sources/lib/talk.srt/cues", params={"start_ms": 2500}, headers=key).json()
                assert [x["text"] for x in cues["cues"]] == ["The keeper starts the horn."]
                assert c.get("/api/sources/lib/fog.md/cues", headers=key).status_code == 404
                listed = c.get("/api/sources", headers=key).json()["sources"]
                assert all("cues" not in s["meta"] for s in listed)
                assert {s["collection"] for s in listed} == {"lib"}
                page = c.get("/api/sources", params={"limit": 1, "offset": 1}, headers=key).json()
                assert page["count"] == 1 and page["total"] == 3 and page["sources"][0]["id"] == "lib/fog.md"
                tracks = c.get("/api/sources", params={"kind": "track_transcript"}, headers=key).json()
                assert [s["id"] for s in tracks["sources"]] == ["lib/talk.srt"]
                assert c.get("/api/sources", params={"limit": 0}, headers=key).status_code == 422

                assert c.delete("/api/sources/lib/talk.srt").status_code == 401  # no key
                # the browser's cookie alone is not enough to delete
                assert c.post("/api/session", headers=key).status_code == 200
                r = c.delete("/api/sources/lib/talk.srt")
                assert r.status_code == 401 and "header" in r.json()["error"]
                c.cookies.clear()

                before = store.stats()
                talk_frags = len(store.fragments_of("lib/talk.srt"))
                r = c.delete("/api/sources/lib/talk.srt", headers={"Authorization": "Bearer k3y"})
                assert r.status_code == 200 and r.json() == {"removed": ["lib/talk.srt"]}
                assert store.get_source("lib/talk.srt") is None and store.fragments_of("lib/talk.srt") == []
                assert store.get_cues("lib/talk.srt") == []
                after = store.stats()
                assert after.fragments == before.fragments - talk_frags
                assert after.embedded == before.embedded - talk_frags
                assert c.get("/api/sources/lib/talk.srt", headers=key).status_code == 404
                assert c.delete("/api/sources/lib/talk.srt", headers=key).status_code == 404

                # two sources share one original: removing one keeps the bytes for the other
                c.delete("/api/sources/lib/copy.md", headers=key)
                orig = c.get("/api/sources/lib/fog.md", headers=key)
                assert orig.status_code == 200 and b"twice a minute" in orig.content
        finally:
            stop_server(server, thread)
