"""A store seen through some collections (``footnote.store.scoped``) on both backends: the lanes return only
readable hits — and still ``k`` of them when another collection crowds the top of every lane —; lookups by id,
listings, addresses and curated notes of another collection read as absent; writes are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.engine import Engine
from footnote.errors import Forbidden
from footnote.records.memory import MemoryNote, NoteKind
from footnote.scoping import NoteCollections, scoped_engine
from footnote.settings import Settings, load_settings
from footnote.store.keys import ApiKey, key_hash

OPEN_DOCS = 2
CLOSED_DOCS = 40  # and one verse book


def _corpus(root: Path) -> tuple[Path, Path]:
    """Two collections on one topic: a small open one and a large closed one whose passages say the query's
    words more often (so every lane's top hits are the closed collection's)."""
    open_dir, closed_dir = root / "open", root / "closed"
    open_dir.mkdir()
    closed_dir.mkdir()
    for i in range(OPEN_DOCS):
        (open_dir / f"lamp-{i}.md").write_text(
            f"---\ntitle: Open note {i}\n---\nThe lamp room is swept each morning. The keepers write the weather in "
            "the log, note the wind, the swell, the sky and the ships that pass, and sign the page at dawn before "
            "breakfast and the long walk down the cliff path to the village.\n",
            encoding="utf-8")
    for i in range(CLOSED_DOCS):
        (closed_dir / f"secret-{i}.md").write_text(
            f"---\ntitle: Quillfeather ledger {i}\n---\nThe lamp room lamp: lamp oil, lamp wick and the lamp room "
            f"key are kept by Quillfeather {i}.\n", encoding="utf-8")
    (closed_dir / "verses.md").write_text(
        "---\nkind: verse\nbook: QB\ntitle: The Quillfeather Book\nlang: en\n---\n# The Quillfeather Book\n"
        + "".join(f"## QB 9.{i}\nQuillfeather verse {i}.\n" for i in range(5)), encoding="utf-8")
    return open_dir, closed_dir


def _engine(settings: Settings, root: Path) -> Engine:
    open_dir, closed_dir = _corpus(root)
    engine = Engine.from_settings(settings)
    for folder in (open_dir, closed_dir):
        report = engine.ingest([folder])
        assert report.ok, report.summary()
    return engine


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    url = str(tmp_path / "store.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    settings = load_settings(None, **{"store.url": url, "embedder.name": "hash", "server.keys_refresh_s": 0.05})
    eng = _engine(settings, tmp_path)
    request.addfinalizer(eng.close)
    return eng


def _view(engine: Engine, names: set[str]) -> Engine:
    return scoped_engine(engine, names, NoteCollections(engine, 0.05))


def test_lanes_keep_only_readable_hits_and_still_k_of_them(engine: Engine) -> None:
    store = engine.store
    assert store.collections() == {"open": OPEN_DOCS, "closed": CLOSED_DOCS + 1}
    whole = store.search_lexical("lamp room", 5, stemmed=True, lang="en")
    assert whole and all(h.fragment_id.startswith("closed/") for h in whole)  # the closed collection crowds the top
    view = _view(engine, {"open"}).store
    lexical = view.search_lexical("lamp room", 5, stemmed=True, lang="en")
    assert {h.fragment_id.split("#")[0] for h in lexical} == {f"open/lamp-{i}.md" for i in range(OPEN_DOCS)}
    assert engine.embedder is not None
    vec = engine.embedder.embed_queries(["lamp room lamp oil"])[0]
    dense = view.search_dense(vec, 3)
    assert dense and all(h.fragment_id.startswith("open/") for h in dense)
    assert len(dense) == min(3, sum(len(store.fragments_of(f"open/lamp-{i}.md")) for i in range(OPEN_DOCS)))
    fuzzy = view.search_trigram("Quillfeather ledger", 10)
    assert all(h.fragment_id.startswith("open/") for h in fuzzy) and store.search_trigram("Quillfeather ledger", 10)
    assert view.search_address("QB", "9.1", 5) == [] and store.search_address("QB", "9.1", 5)
    assert view.list_addresses() == [] and store.list_addresses()


def test_the_search_and_answer_never_see_another_collection(engine: Engine) -> None:
    view = _view(engine, {"open"})
    result = view.search("Who keeps the lamp room key? Quillfeather")
    assert result.candidates and all(c.fragment.source_id.startswith("open/") for c in result.candidates)
    answer = view.ask("Who keeps the lamp oil and the lamp room key?")
    assert "Quillfeather" not in str(answer.to_dict())
    assert all(c.fragment.source_id.startswith("open/") for c in answer.citations)
    whole = engine.ask("Who keeps the lamp oil and the lamp room key?")  # the control: the whole store finds it
    assert any(c.fragment.source_id.startswith("closed/") for c in whole.citations)


def test_lookups_and_listings_of_another_collection_read_as_absent(engine: Engine) -> None:
    view = _view(engine, {"open"}).store
    secret = "closed/secret-3.md"
    assert engine.store.get_source(secret) is not None
    assert view.get_source(secret) is None and view.fragments_of(secret) == [] and view.get_original(secret) is None
    assert view.get_fragments([f"{secret}#0", "open/lamp-0.md#0"])[0].source_id == "open/lamp-0.md"
    assert len(view.get_fragments([f"{secret}#0"])) == 0
    assert not view.get_embeddings([f"{secret}#0"]).any() and engine.store.get_embeddings([f"{secret}#0"]).any()
    assert [s.id for s in view.list_sources()] == [f"open/lamp-{i}.md" for i in range(OPEN_DOCS)]
    assert view.list_sources(collection="closed") == [] and view.count_sources() == OPEN_DOCS
    assert view.collections() == {"open": OPEN_DOCS}
    assert all(i.startswith("open/") for ids, _ in view.iter_embeddings(7) for i in ids)


def test_a_new_source_is_seen_by_the_view_at_once(engine: Engine, tmp_path: Path) -> None:
    view = _view(engine, {"open"}).store
    assert view.search_lexical("gannet", 5, stemmed=True, lang="en") == []
    later = tmp_path / "later"
    later.mkdir()
    (later / "gannet.md").write_text("---\ntitle: Gannets\n---\nGannets nest below the open lamp room.\n", encoding="utf-8")
    assert engine.ingest([later], collection="open").ok
    hits = view.search_lexical("gannet", 5, stemmed=True, lang="en")
    assert [h.fragment_id.split("#")[0] for h in hits] == ["open/gannet.md"]


def test_notes_belong_to_the_collections_of_their_sources(engine: Engine) -> None:
    def put(note_id: str, sources: tuple[str, ...]) -> None:
        engine.put_memory_note(MemoryNote(note_id, NoteKind.BOOST, f"About {note_id}.", triggers=(note_id,), sources=sources))

    put("about-open", ("open/lamp-0.md",))
    put("about-closed", ("closed/secret-1.md",))
    put("about-both", ("open/lamp-1.md", "closed/secret-2.md"))
    put("about-book", ("QB 9.4",))  # an address of the closed collection's book
    engine.put_memory_note(MemoryNote("no-sources", NoteKind.MEMORY, "Framing only.", triggers=("framing",)))
    view = _view(engine, {"open"})
    assert [n.id for n in view.store.list_memory_notes()] == ["about-open"]
    assert view.store.get_memory_note("about-closed") is None and view.store.get_memory_note("about-book") is None
    assert set(view.store.memory_vectors("hash").note_ids) <= {"about-open"}
    both = _view(engine, {"open", "closed"})
    assert {n.id for n in both.store.list_memory_notes()} == {"about-open", "about-closed", "about-both", "about-book"}
    with pytest.raises(Forbidden):
        view.store.put_memory_note(MemoryNote("sneaky", NoteKind.BOOST, "x", sources=("closed/secret-1.md",)), [], None, None)
    assert not view.store.delete_memory_note("about-closed") and engine.store.get_memory_note("about-closed")


def test_a_view_writes_no_corpus_and_no_keys(engine: Engine) -> None:
    view = _view(engine, {"open"}).store
    for call in (lambda: view.delete_sources(["open/lamp-0.md"]), lambda: view.put_api_key(ApiKey("k", "i", ("open",), True, 0), key_hash("k")),
                 lambda: view.revoke_api_key("k"), lambda: view.claim_pending(5, "me", 10.0)):
        with pytest.raises(Forbidden):
            call()
    assert engine.store.get_source("open/lamp-0.md") is not None


def test_keys_are_kept_hashed_and_named_once(engine: Engine) -> None:
    from footnote.errors import UsageError

    store = engine.store
    store.put_api_key(ApiKey("team", "id-1", ("open",), False, 1.0), key_hash("fn_secret"))
    with pytest.raises(UsageError, match="revoke it first"):
        store.put_api_key(ApiKey("team", "id-2", ("closed",), True, 2.0), key_hash("fn_other"))
    got = store.api_key_by_hash(key_hash("fn_secret"))
    assert got == ApiKey("team", "id-1", ("open",), False, 1.0)
    assert store.api_key_by_hash("fn_secret") is None and store.api_key_by_hash(key_hash("fn_other")) is None
    assert [k.name for k in store.api_keys()] == ["team"] and store.any_api_key()
    assert store.revoke_api_key("team") and not store.revoke_api_key("team") and store.api_keys() == []
    gone = store.api_key_by_hash(key_hash("fn_secret"))
    assert gone is not None and gone.revoked and store.any_api_key()  # kept, marked: the store never falls open
    store.put_api_key(ApiKey("team", "id-3", ("closed",), True, 3.0), key_hash("fn_third"))  # the name is free again
    assert [(k.name, k.key_id) for k in store.api_keys()] == [("team", "id-3")]
    again = store.api_key_by_hash(key_hash("fn_secret"))
    assert again is not None and again.revoked


def test_the_view_counts_its_own_sources_and_fragments(engine: Engine) -> None:
    whole = engine.store.stats()
    mine = _view(engine, {"open"}).store.stats()
    assert (mine.sources, mine.fragments, mine.embedded) == (OPEN_DOCS, OPEN_DOCS, OPEN_DOCS)
    assert whole.sources == OPEN_DOCS + CLOSED_DOCS + 1 and whole.fragments > mine.fragments
    assert mine.by_kind == {"prose_chapter": OPEN_DOCS} and "verse" in whole.by_kind
