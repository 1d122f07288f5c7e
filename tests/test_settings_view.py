"""Settings you can see: ``footnote settings`` (value, origin, description), ``--set`` through tomlkit,
the documentation of every field, the commented sample, models by environment, the demo's own config."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.answer.fallback import fallback_messages
from footnote.cli import main
from footnote.engine import Engine
from footnote.errors import ConfigError, UsageError
from footnote.settings import MODEL_ROLES, Settings, load_settings, resolve_settings
from footnote.settings.surface import USER_KEYS
from footnote.settings_view import documented_keys, fields, sections

REPO = Path(__file__).resolve().parents[1]
LLM_VARS = ("FOOTNOTE_LLM_BASE_URL", "FOOTNOTE_LLM_API_KEY", "FOOTNOTE_LLM_MODEL", "FOOTNOTE_CONFIG",
            "FOOTNOTE_STORE", "FOOTNOTE_EMBEDDER", "FOOTNOTE_API_KEY")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for v in LLM_VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.chdir(tmp_path)  # no ./footnote.toml from the checkout


def test_every_field_has_a_description_and_documentation() -> None:
    every = fields()
    assert len(every) > 100
    assert [f.key for f in every if not f.description] == []
    assert [s for s, d in sections().items() if not d] == []
    documented = documented_keys((REPO / "docs" / "settings.md").read_text(encoding="utf-8"))
    keys = {f.key for f in every}
    missing, stale = sorted(keys - documented), sorted(documented - keys)
    assert (missing, stale) == ([], []), "regenerate with: .venv/bin/python scripts/settings_docs.py"


# A figure in a description goes stale the day it is measured again: a latency, a percentage, a recall or an
# AUROC value, a before -> after pair, a speed-up factor. The measurement belongs in docs/defaults.md.
FIGURE = re.compile(
    r"\d\s?(ms|%)(?!\w)|recall@\d+\s+[\d.]|AUROC\s*\(?[\d.]|\d\s*(->|→)\s*\d|\d(\.\d+)?x\b|\bp(50|95)\b"
)


def test_no_description_quotes_a_benchmark_figure() -> None:
    quoting = {f.key: m.group(0) for f in fields() if (m := FIGURE.search(f.description))}
    assert quoting == {}, "move the figure to docs/defaults.md (or the subsystem's page)"
    assert FIGURE.search("recall@10 0.976 -> 0.995, p50 39.5 ms, 1.6x longer") is not None
    defaults = (REPO / "docs" / "defaults.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\*\*`([a-z_.]+)`\*\*", defaults))
    assert named and named <= {f.key for f in fields()}, sorted(named - {f.key for f in fields()})


def test_the_sample_covers_every_section_and_names_only_real_keys() -> None:
    path = REPO / "footnote.toml.example"
    text = path.read_text(encoding="utf-8")
    resolve_settings(path)  # a valid settings file as shipped
    headers = set(re.findall(r"^\[([a-z_.]+)\]", text, flags=re.M))
    assert set(sections()) <= {h.split(".")[0] for h in headers}
    assert {f"models.{r}" for r in MODEL_ROLES} <= headers
    keys = {f.key for f in fields()}
    section = ""
    named = []
    for line in text.splitlines():
        if m := re.match(r"^\[([a-z_.]+)\]", line):
            section = m.group(1)
        elif (m := re.match(r"^#\s*([a-z_]+)\s*=", line)) and not section.startswith("corpus.book_aliases"):
            named.append(f"{section}.{m.group(1)}")
    assert named and [k for k in named if k not in keys | {".preset"}] == []  # preset: the file's top-level key
    assert ".preset" in named
    # the user surface, all of it and nothing else: a tuning key in the sample is a user's first stumble
    named_keys = set(named) - {".preset"} | ({"corpus.book_aliases"} & headers)
    assert sorted(USER_KEYS - named_keys) == [], "a user key the sample does not show"
    assert sorted(named_keys - USER_KEYS) == [], "a tuning key in the sample (or a key missing from USER_SURFACE)"


def test_the_user_surface_is_small_and_made_of_real_keys() -> None:
    every = {f.key: f for f in fields()}
    assert set(every) >= USER_KEYS
    assert 40 <= len(USER_KEYS) <= 80 < len(every) - len(USER_KEYS)
    assert {k for k, f in every.items() if f.user} == USER_KEYS
    tuning = [k for k in every if k not in USER_KEYS]
    assert "gate.by_embedder" in tuning and "answer.extractive.min_similarity" in tuning


def test_settings_lists_the_user_surface_and_what_was_set_and_all_with_all(tmp_path: Path) -> None:
    cfg = tmp_path / "mine.toml"
    cfg.write_text("[retrieve]\ncap = 50\n", encoding="utf-8")
    short = CliRunner().invoke(main, ["settings", "--config", str(cfg), "--embedder", "hash"])
    assert short.exit_code == 0, short.output
    assert "retrieve.keep_top = " in short.output  # a user key at its default
    assert "retrieve.cap = 50  (file)" in short.output  # a tuning key, shown because it was set
    assert "retrieve.fusion.min_spread" not in short.output  # a tuning key at its default
    hidden = len(fields()) - len(USER_KEYS) - 1
    assert f"# {hidden} tuning keys at their defaults not shown: footnote settings --all" in short.output
    full = CliRunner().invoke(main, ["settings", "--config", str(cfg), "--embedder", "hash", "--all"]).output
    assert "retrieve.fusion.min_spread = " in full and "not shown" not in full
    doc = json.loads(CliRunner().invoke(main, ["settings", "--json", "--config", str(cfg)]).output)
    surfaces = {r["key"]: r["surface"] for r in doc["settings"]}
    assert len(surfaces) == len(fields()) and surfaces["retrieve.cap"] == "tuning" and surfaces["store.url"] == "user"


def test_show_values_with_their_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "mine.toml"
    cfg.write_text('[retrieve]\nkeep_top = 7\n', encoding="utf-8")
    monkeypatch.setenv("FOOTNOTE_API_KEY", "hunter2")
    r = CliRunner().invoke(main, ["settings", "--json", "--config", str(cfg), "--embedder", "hash"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    rows = {row["key"]: row for row in doc["settings"]}
    assert doc["config_file"] == str(cfg)
    assert rows["retrieve.keep_top"] | {"description": ""} == {
        "key": "retrieve.keep_top", "value": 7, "source": "file", "description": "", "surface": "user"}
    assert rows["embedder.name"]["value"] == "hash" and rows["embedder.name"]["source"] == "flag"
    assert rows["server.api_key"] == rows["server.api_key"] | {"value": "***", "source": "env"}
    assert rows["retrieve.cap"]["source"] == "default" and rows["retrieve.cap"]["description"]
    text = CliRunner().invoke(main, ["settings", "--config", str(cfg), "--show-secrets"]).output
    assert "retrieve.keep_top = 7  (file)" in text and '"hunter2"' in text


def test_credentials_inside_urls_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOOTNOTE_STORE", "postgresql://bob:s3cr3t@127.0.0.1:5432/foot")
    monkeypatch.setenv("FOOTNOTE_LLM_BASE_URL", "http://u:pw123@127.0.0.1:9/v1?key=abc")
    r = CliRunner().invoke(main, ["settings", "--json"])
    assert r.exit_code == 0, r.output
    assert "s3cr3t" not in r.output and "pw123" not in r.output and "abc" not in r.output
    rows = {row["key"]: row["value"] for row in json.loads(r.output)["settings"]}
    assert rows["store.url"] == "postgresql://bob:***@127.0.0.1:5432/foot"
    assert rows["models.synthesizer.base_url"] == "http://u:***@127.0.0.1:9/v1?key=***"
    assert "s3cr3t" not in CliRunner().invoke(main, ["settings"]).output
    assert "s3cr3t" in CliRunner().invoke(main, ["settings", "--show-secrets"]).output


def test_set_keeps_comments_and_refuses_bad_values(tmp_path: Path) -> None:
    cfg = tmp_path / "footnote.toml"
    original = "# my notes on this deployment\n[retrieve]\n# wider for long books\nkeep_top = 16  # was 12\n"
    cfg.write_text(original, encoding="utf-8")
    r = CliRunner().invoke(main, ["settings", "--set", "retrieve.keep_top=20", "--set", "store.url=my.db",
                                  "--set", "answer.enable_corpus_fallback=true"])
    assert r.exit_code == 0, r.output
    text = cfg.read_text(encoding="utf-8")
    for comment in ("# my notes on this deployment", "# wider for long books", "# was 12"):
        assert comment in text
    s = load_settings(cfg)
    assert (s.retrieve.keep_top, s.store.url, s.answer.enable_corpus_fallback) == (20, "my.db", True)
    before = cfg.read_text(encoding="utf-8")
    bad = CliRunner().invoke(main, ["settings", "--set", "retrieve.keep_top=many"])
    assert bad.exit_code == 2 and "retrieve.keep_top" in bad.output and "unchanged" in bad.output
    typo = CliRunner().invoke(main, ["settings", "--set", "keep_top=3"])
    assert typo.exit_code == 2 and "did you mean retrieve.keep_top" in typo.output
    assert cfg.read_text(encoding="utf-8") == before


def test_llm_environment_configures_every_role_without_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "footnote.toml"
    cfg.write_text('[models.synthesizer]\nbase_url = "http://own:1/v1"\nmodel = "own-model"\n', encoding="utf-8")
    monkeypatch.setenv("FOOTNOTE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("FOOTNOTE_LLM_API_KEY", "k")
    monkeypatch.setenv("FOOTNOTE_LLM_MODEL", "env-model")
    res = resolve_settings(cfg)
    m = res.settings.models
    for role in ("router", "planner", "fallback"):
        got = getattr(m, role)
        assert (got.base_url, got.model, got.api_key, got.configured) == ("http://127.0.0.1:9/v1", "env-model", "k", True)
        assert res.source_of(f"models.{role}.model") == "env"
    assert (m.synthesizer.base_url, m.synthesizer.model, m.synthesizer.api_key) == ("http://own:1/v1", "own-model", "k")
    assert res.source_of("models.synthesizer.model") == "file"


def test_a_base_url_without_a_model_is_a_startup_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = {"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"}
    monkeypatch.setenv("FOOTNOTE_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # and no FOOTNOTE_LLM_MODEL
    with pytest.raises(ConfigError, match=r"models\.router: base_url 'http://127.0.0.1:9/v1' is set but no model name.*FOOTNOTE_LLM_MODEL"):
        Engine.from_settings(**store)
    r = CliRunner().invoke(main, ["status", "--store", store["store.url"], "--embedder", "hash"])
    assert r.exit_code == 2 and "no model name" in r.output
    cfg = tmp_path / "own.toml"
    cfg.write_text('[models.planner]\nbase_url = "http://x:1/v1"\n', encoding="utf-8")
    monkeypatch.setenv("FOOTNOTE_LLM_MODEL", "env-model")  # a role with its own base URL names its own model
    with pytest.raises(ConfigError, match=r"models\.planner: base_url 'http://x:1/v1' is set but no model name"):
        Engine.from_settings(load_settings(cfg, **store))
    monkeypatch.delenv("FOOTNOTE_LLM_BASE_URL")  # a model with nowhere to send it
    with pytest.raises(ConfigError, match=r"models\.router: model 'env-model' is set but no base_url"):
        Engine.from_settings(**store)


def test_asking_for_the_fallback_without_a_fallback_model_says_so(tmp_path: Path, demo_dir: Path) -> None:
    store = str(tmp_path / "s.db")
    with Engine.from_settings(**{"store.url": store, "embedder.name": "hash"}) as engine:
        engine.ingest([demo_dir / "verses"])
        with pytest.raises(UsageError, match="no fallback model is configured"):
            engine.ask("How long should I stir a risotto?", fallback=True)
        assert engine.ask("How long should I stir a risotto?").mode.value == "not_found"
    r = CliRunner().invoke(main, ["ask", "What is a risotto?", "--fallback", "--store", store, "--embedder", "hash"])
    assert r.exit_code == 2 and "no fallback model is configured" in r.output


def test_demo_knowledge_lives_in_the_demo_config() -> None:
    default = Settings()
    assert "harbour book" not in default.corpus.book_aliases and default.answer.fallback_out_of_scope == ""
    demo = load_settings(REPO / "demo" / "footnote.toml")
    assert demo.corpus.book_aliases["harbour book"] == "HB" and demo.corpus.book_aliases["bg"] == "BG"
    assert "cooking" in demo.answer.fallback_out_of_scope
    with_list = fallback_messages("q", "en", "", 3, 5, demo.answer.fallback_out_of_scope)[0].content
    assert "Questions about cooking, sport, programming code or the news are out of scope" in with_list
    plain = fallback_messages("q", "en", "", 3, 5)[0].content
    assert "cooking" not in plain and "outside the library's subject" in plain
    with open(REPO / "demo" / "footnote.toml", "rb") as fh:
        assert "answer" in tomllib.load(fh)
