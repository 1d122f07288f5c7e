"""The conformance suite's lane capability (``LaneStore``): lexical, address, trigram and dense lanes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from footnote.records.fragments import (
    AddressLocator,
    Fragment,
)
from footnote.store.protocol import LaneStore, Store
from footnote.testing.store_fixtures import (
    DIM,
    EMBEDDER,
    distinct_texts,
    embed,
    embed_query,
    ids,
    make_fragments,
    make_source,
    put,
)


class LexicalTests:
    """The lexical lanes: stemming by language, IAST, ranking, user text that looks like FTS syntax."""

    def test_the_store_says_whether_its_lanes_compute_here(self, store: Store) -> None:
        """``computes_here`` decides whether a lone search embeds its query first (``retrieve.pipeline``):
        a declared bool, never left to a default."""
        assert isinstance(store.computes_here, bool)
        assert isinstance(store, LaneStore)

    @pytest.mark.parametrize(("lang", "stored", "query"), [
        ("de", "Die kompakten Räume der Topologie.", "Raum"),
        ("fr", "Les espaces topologiques compacts.", "espace"),
        ("es", "Las bibliotecas de la ciudad.", "biblioteca"),
    ])
    def test_lexical_stemmed_other_languages(self, store: Store, lang: str, stored: str, query: str) -> None:
        src, data = make_source(lang, lang=lang)
        frags = make_fragments(src, [stored, "Something else entirely."])
        put(store, src, data, frags, embedded=False)
        assert ids(store.search_lexical(query, 5, stemmed=True, lang=lang)) == [frags[0].id]
        assert store.search_lexical(query, 5, stemmed=False) == []

    def test_lexical_stemmed_russian_inflection(self, store: Store) -> None:
        src, data = make_source("ru", lang="ru")
        frags = make_fragments(
            src, ["Он пришёл в библиотеку с книгами и тетрадями.", "Совсем другой текст о погоде."]
        )
        put(store, src, data, frags, embedded=False)
        for lang in ("ru", None):
            hits = store.search_lexical("книга", 5, stemmed=True, lang=lang)
            assert ids(hits) == [frags[0].id], lang
            assert hits[0].score > 0
        # ё and е are the same letter for search; the unstemmed column needs the exact form
        assert ids(store.search_lexical("пришел", 5, stemmed=False)) == [frags[0].id]
        assert store.search_lexical("книга", 5, stemmed=False) == []
        assert ids(store.search_lexical("книгами", 5, stemmed=False)) == [frags[0].id]

    def test_lexical_stemmed_english_inflection(self, store: Store) -> None:
        src, data = make_source("en", lang="en")
        frags = make_fragments(src, ["She runs every morning.", "A quiet evening at home."])
        put(store, src, data, frags, embedded=False)
        for lang in ("en", None):
            assert ids(store.search_lexical("running", 5, stemmed=True, lang=lang)) == [frags[0].id]
        assert store.search_lexical("running", 5, stemmed=False) == []

    def test_lexical_iast_verbatim_and_without_diacritics(self, store: Store) -> None:
        sa, data = make_source("gita", lang="sa", kind="verse")
        frags = make_fragments(
            sa, ["karmaṇy evādhikāras te mā phaleṣu kadācana", "yoga-sthaḥ kuru karmāṇi saṅgaṁ tyaktvā"]
        )
        en, edata = make_source("gloss", lang="en", kind="commentary")
        efrags = make_fragments(en, ["The phrase karmaṇy evādhikāras te means one has a right to action."])
        put(store, sa, data, frags, embedded=False)
        put(store, en, edata, efrags, embedded=False)
        both = {frags[0].id, efrags[0].id}
        for q in ("karmaṇy evādhikāras te", "karmany evadhikaras", "KARMAṆY"):
            assert set(ids(store.search_lexical(q, 5, stemmed=False))) == both, q
            # stemming must not mangle transliteration: the stemmed lane finds it too
            # (an OR query may also reach another verse through a shared stem, e.g. karmāṇi)
            assert both <= set(ids(store.search_lexical(q, 5, stemmed=True))), q
            assert both <= set(ids(store.search_lexical(q, 5, stemmed=True, lang="en"))), q
        top2 = ids(store.search_lexical("karmaṇy evādhikāras te", 5, stemmed=True))[:2]
        assert set(top2) == both
        assert ids(store.search_lexical("phaleṣu", 5, stemmed=False)) == [frags[0].id]
        assert ids(store.search_lexical("sangam", 5, stemmed=False)) == [frags[1].id]

    def test_lexical_ranking_kinds_and_k(self, store: Store) -> None:
        src, data = make_source("many", kind="letter")
        texts = ["lantern lantern lantern", "a lantern among many other different words here"] + [
            f"lantern note number {i} with filler words" for i in range(8)
        ]
        frags = make_fragments(src, texts)
        frags[1] = replace(frags[1], kind="prose_chapter")
        put(store, src, data, frags, embedded=False)
        hits = store.search_lexical("lantern", 3, stemmed=True)
        assert len(hits) == 3
        assert hits[0].fragment_id == frags[0].id
        assert all(h.score > 0 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        only = store.search_lexical("lantern", 10, stemmed=False, kinds=["prose_chapter"])
        assert ids(only) == [frags[1].id]
        assert store.search_lexical("lantern", 10, stemmed=True, kinds=["verse"]) == []
        assert (
            len(store.search_lexical("lantern", 100, stemmed=True, kinds=["letter", "prose_chapter"])) == 10
        )

    def test_lexical_any_term_matches(self, store: Store) -> None:
        src, data = make_source("or")
        frags = make_fragments(src, ["only the falcon here", "only the otter here", "nothing relevant"])
        put(store, src, data, frags, embedded=False)
        got = set(ids(store.search_lexical("falcon otter missingword", 10, stemmed=True)))
        assert got == {frags[0].id, frags[1].id}

    @pytest.mark.parametrize(
        "query",
        [
            '"',
            '""',
            "*",
            "near*",
            "NEAR(a b)",
            "NEAR",
            "-minus",
            "col:umn",
            "a AND OR NOT b",
            "((",
            ")",
            "^start",
            "'",
            "{stemmed}: x",
            "plain : y",
            "",
            "   ",
            "+",
            "a\x00b",
            "💥 emoji",
            'say "hi" -now: *NEAR*',
        ],
    )
    def test_fts_syntax_in_queries_never_raises(self, store: Store, query: str) -> None:
        src, data = make_source("syn")
        frags = make_fragments(src, ["The station is near the river; say hi now.", "minus column start"])
        put(store, src, data, frags, embedded=False)
        for stemmed in (True, False):
            hits = store.search_lexical(query, 5, stemmed=stemmed)
            assert isinstance(hits, list)
        assert isinstance(store.search_trigram(query, 5), list)
        assert isinstance(store.search_address(query, query, 5), list)

    def test_operator_words_are_plain_words(self, store: Store) -> None:
        src, data = make_source("ops")
        frags = make_fragments(src, ["The station is near the river.", "Nothing of note."])
        put(store, src, data, frags, embedded=False)
        assert ids(store.search_lexical("NEAR", 5, stemmed=False)) == [frags[0].id]
        assert ids(store.search_lexical('"near" OR', 5, stemmed=True)) == [frags[0].id]

    # -- address and trigram -----------------------------------------------------------------------


class AddressTests:
    """The exact address lane: no neighbour, several fragments in order."""

    def _address_corpus(self, store: Store) -> list[Fragment]:
        src, data = make_source("bg", kind="verse")
        locs = [("BG", "1.9"), ("BG", "1.95"), ("BG", "19.50"), ("BG", "2.13"), ("SB", "1.9")]
        frags = make_fragments(
            src,
            [f"Verse text for {b} {loc}." for b, loc in locs],
            locators=[AddressLocator(b, loc, f"{b} {loc}") for b, loc in locs],
        )
        put(store, src, data, frags, embedded=False)
        return frags

    def test_address_exact_no_neighbour(self, store: Store) -> None:
        frags = self._address_corpus(store)
        assert store.search_address("BG", "19.5", 10) == []
        assert store.search_address("BG", "1.10", 10) == []
        assert store.search_address("BG", "2.1", 10) == []
        hits = store.search_address("BG", "1.9", 10)
        assert ids(hits) == [frags[0].id] and hits[0].score == 1.0
        assert ids(store.search_address("bg", "1.95", 10)) == [frags[1].id]
        assert ids(store.search_address("Bg", "19.50", 10)) == [frags[2].id]
        assert ids(store.search_address("SB", "1.9", 10)) == [frags[4].id]

    def test_address_several_fragments_in_order(self, store: Store) -> None:
        src, data = make_source("hb", kind="verse")
        loc = AddressLocator("HB", "2.4", "HB 2.4")
        other = AddressLocator("HB", "2.5", "HB 2.5")
        frags = make_fragments(
            src,
            ["verse", "commentary part one", "commentary part two", "next verse"],
            locators=[loc, loc, loc, other],
        )
        put(store, src, data, frags, embedded=False)
        assert ids(store.search_address("HB", "2.4", 10)) == [f.id for f in frags[:3]]
        assert len(store.search_address("HB", "2.4", 2)) == 2

    def test_list_addresses_names_books_and_locs(self, store: Store) -> None:
        assert store.list_addresses() == []
        src, data = make_source("hb", kind="verse", title="The Harbour Book")
        a, b = AddressLocator("HB", "1.1", "HB 1.1"), AddressLocator("HB", "1.2", "HB 1.2")
        put(store, src, data, make_fragments(src, ["v1", "c1", "v2"], locators=[a, a, b]), embedded=False)
        assert sorted(store.list_addresses()) == [("HB", "1.1", "The Harbour Book"), ("HB", "1.2", "The Harbour Book")]


class TrigramTests:
    """The fuzzy trigram lane over labels and source ids."""

    def test_trigram_fuzzy_label(self, store: Store) -> None:
        src, data = make_source("bhagavad-gita", kind="verse")
        labels = [("Bhagavad-gita", "2.13"), ("Hitopadesha", "3.7"), ("Upadesamrta", "1")]
        frags = make_fragments(
            src,
            ["dehino 'smin yathā dehe", "unrelated fable text", "another unrelated instruction"],
            locators=[AddressLocator(b, loc, f"{b} {loc}") for b, loc in labels],
        )
        put(store, src, data, frags, embedded=False)
        for typed in ("bhagavad gita 2.13", "Bhagavadgita 2.13", "Bhagavad-gitta 2.13", "BHAGAVAD-GĪTĀ 2.13"):
            hits = store.search_trigram(typed, 3)
            assert hits and hits[0].fragment_id == frags[0].id, typed
            assert hits[0].score > 0
            assert all(h.score <= hits[0].score for h in hits)
        hits = store.search_trigram("hitopadesa 3.7", 3)
        assert hits and hits[0].fragment_id == frags[1].id

    def test_trigram_matches_source_id(self, store: Store) -> None:
        a, da = make_source("letter-1975-03-12-to-mukunda")
        b, db = make_source("letter-1971-11-02-to-govinda")
        fa = make_fragments(a, ["my dear son, please accept my blessings"])
        fb = make_fragments(b, ["my dear son, please accept my blessings"])
        put(store, a, da, fa, embedded=False)
        put(store, b, db, fb, embedded=False)
        hits = store.search_trigram("letter to mukunda 1975", 2)
        assert hits[0].fragment_id == fa[0].id

    # -- dense -------------------------------------------------------------------------------------


class DenseTests:
    """The dense lane: exact top-k, unnormalised queries, no stale cache."""

    def test_dense_topk_equals_brute_force(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        kinds = ["verse", "letter", "track_transcript"]
        all_frags: list[Fragment] = []
        all_vecs = []
        for j, kind in enumerate(kinds):
            src, data = make_source(f"src-{kind}", kind=kind)
            frags = make_fragments(src, distinct_texts(30, seed=j))
            vecs = embed(frags)
            store.put_source(src, frags, vecs, data)
            all_frags += frags
            all_vecs.append(vecs)
        matrix = np.vstack(all_vecs)
        kind_arr = np.array([f.kind for f in all_frags])
        for qi, qtext in enumerate(["amber basalt cedar", "glacier harbor island lagoon", "zephyr token1x3"]):
            q = embed_query(qtext)
            for k, only in ((10, None), (5, ["verse"]), (7, ["letter", "track_transcript"]), (200, None)):
                cos = matrix @ q
                mask = np.ones(len(all_frags), bool) if only is None else np.isin(kind_arr, only)
                expected = np.sort(cos[mask])[::-1][:k]
                hits = store.search_dense(q, k, kinds=only)
                assert len(hits) == len(expected), (qi, k, only)
                scores = np.array([h.score for h in hits])
                np.testing.assert_allclose(scores, expected, atol=1e-4)
                by_id = {f.id: i for i, f in enumerate(all_frags)}
                hit_idx = [by_id[h.fragment_id] for h in hits]
                assert len(set(hit_idx)) == len(hit_idx)
                assert all(mask[i] for i in hit_idx), (qi, k, only)
                np.testing.assert_allclose(scores, cos[hit_idx], atol=1e-4)  # each score is that id's cosine
                # ties aside, every fragment strictly above the k-th score is returned
                must = {i for i in np.flatnonzero(mask) if cos[i] > expected[-1] + 1e-4}
                assert must <= set(hit_idx), (qi, k, only)
                if only is not None:
                    assert {f.kind for f in store.get_fragments(ids(hits))} <= set(only)

    def test_dense_query_need_not_be_normalised(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("n")
        frags = make_fragments(src, distinct_texts(5))
        put(store, src, data, frags)
        q = embed_query(frags[2].text)
        hits = store.search_dense(q * 7.5, 1)
        assert ids(hits) == [frags[2].id]
        assert abs(hits[0].score - 1.0) < 1e-4

    def test_dense_sees_writes_after_search(self, store: Store) -> None:
        """A search, then a write, then a search: the second sees the write (no stale cache)."""
        store.bind_embedder(EMBEDDER, DIM)
        a, da = make_source("a")
        fa = make_fragments(a, distinct_texts(3, seed=1))
        put(store, a, da, fa)
        q = embed_query(fa[1].text)
        assert ids(store.search_dense(q, 1)) == [fa[1].id]
        b, db = make_source("b")
        fb = make_fragments(b, [fa[1].text + " exact twin"])
        put(store, b, db, fb)
        assert set(ids(store.search_dense(q, 2))) == {fa[1].id, fb[0].id}
        store.delete_source("a")
        assert ids(store.search_dense(q, 5)) == [fb[0].id]

    # -- embedder binding --------------------------------------------------------------------------
