"""Retrieval-level parity: the same corpus (XQuAD English paragraphs, hash embedder) ingested into
SQLite and PostgreSQL through ``Engine.ingest`` returns the same top results for the same questions;
and the HNSW index's recall@10 against exact search is measured and held to a floor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from footnote.engine import Engine
from footnote.settings import load_settings
from footnote.store.postgres import PostgresStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

N_QUESTIONS = 40


@pytest.fixture(scope="module")
def questions(shared_dir: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (shared_dir / "eval/xquad/questions.dev.jsonl").open(encoding="utf-8")]
    rows = [q for q in rows if q["category"] == "in_corpus" and q["lang"] == "en"]
    return rows[:: max(1, len(rows) // N_QUESTIONS)][:N_QUESTIONS]


@pytest.fixture
def engines(pg_url: str, tmp_path: Path, shared_dir: Path) -> Iterator[tuple[Engine, Engine]]:
    corpus = shared_dir / "eval/xquad/corpus.en.jsonl"
    built = []
    for url in (str(tmp_path / "parity.db"), pg_url):
        eng = Engine.from_settings(load_settings(None, **{"store.url": url, "embedder.name": "hash"}))
        eng.ingest([corpus])
        built.append(eng)
    yield built[0], built[1]
    for eng in built:
        eng.close()


def test_same_corpus_same_top_results(engines: tuple[Engine, Engine], questions: list[dict[str, Any]]) -> None:
    lite, pg = engines
    assert isinstance(pg.store, PostgresStore)
    sl, sp = lite.store.stats(), pg.store.stats()
    assert (sl.sources, sl.fragments, sl.embedded, sl.by_kind) == (sp.sources, sp.fragments, sp.embedded, sp.by_kind)
    assert lite.embedder is not None
    top1_search = top1_lex = 0
    gold_lite = gold_pg = 0
    for q in questions:
        vec = lite.embedder.embed_queries([q["question"]])[0]
        # dense lane: exact on both sides at this size → the same cosines, the same ids (ties aside)
        dl, dp = lite.store.search_dense(vec, 10), pg.store.search_dense(vec, 10)
        np.testing.assert_allclose([h.score for h in dl], [h.score for h in dp], atol=1e-5)
        last = dl[-1].score
        assert {h.fragment_id for h in dl if h.score > last + 1e-5} == {
            h.fragment_id for h in dp if h.score > last + 1e-5}, q["id"]
        # lexical (stemmed) lane: both find the same best fragment (rank functions differ: bm25 vs ts_rank)
        ll = lite.store.search_lexical(q["question"], 10, stemmed=True, lang="en")
        lp = pg.store.search_lexical(q["question"], 10, stemmed=True, lang="en")
        top1_lex += ll[:1] != [] and [h.fragment_id for h in ll[:1]] == [h.fragment_id for h in lp[:1]]
        # the whole search (plan, lanes, fusion, gate): same top candidate
        rl, rp = lite.search(q["question"], lang="en"), pg.search(q["question"], lang="en")
        cl = [c.fragment.source_id for c in rl.candidates[:5]]
        cp = [c.fragment.source_id for c in rp.candidates[:5]]
        top1_search += cl[:1] == cp[:1]
        gold_lite += any(s in q["gold"] for s in cl)
        gold_pg += any(s in q["gold"] for s in cp)
    n = len(questions)
    assert top1_search / n >= 0.85, (top1_search, n)
    assert top1_lex / n >= 0.85, (top1_lex, n)
    assert abs(gold_lite - gold_pg) / n <= 0.05, (gold_lite, gold_pg, n)


def test_hnsw_recall_against_exact(engines: tuple[Engine, Engine], questions: list[dict[str, Any]]) -> None:
    _, pg = engines
    assert isinstance(pg.store, PostgresStore) and pg.embedder is not None
    ann = PostgresStore(pg.store._dsn, pg.store.settings.model_copy(update={"postgres": pg.store.settings.postgres.model_copy(update={"exact_search_max": 0})}))
    try:
        recalls = []
        for q in questions:
            vec = pg.embedder.embed_queries([q["question"]])[0]
            exact = {h.fragment_id for h in pg.store.search_dense(vec, 10)}
            approx = {h.fragment_id for h in ann.search_dense(vec, 10)}
            recalls.append(len(exact & approx) / len(exact))
        assert float(np.mean(recalls)) >= 0.95, np.mean(recalls)
    finally:
        ann.close()


def test_every_schedule_of_the_batched_runner_keeps_the_results(engines: tuple[Engine, Engine],
                                                                questions: list[dict[str, Any]]) -> None:
    """The batched lane runner's schedules — the text lanes while the query embeds, one batch for text + dense
    lanes when the vector is ready, the query first — and the hits' rows joined to the lane statements change
    when the work is done, never what the search returns (against the pool reading the rows itself)."""
    import time

    from footnote.models.embedders import HashEmbedder
    from footnote.retrieve.runners import BatchedLanes
    from footnote.store import open_store
    from footnote.testing.internal.rows import RowsReadByThePool

    _, pg = engines
    assert pg.embedder is not None
    dim = pg.embedder.dim

    class Slow(HashEmbedder):  # the text lanes finish first
        def embed_queries(self, texts: Any) -> np.ndarray:
            time.sleep(0.3)
            return super().embed_queries(texts)

    def engine(embedder: HashEmbedder, *, hide_rows: bool = False, **over: Any) -> Engine:
        s = pg.settings.with_overrides(**over)
        store = open_store(s.store.url, s.store)
        return Engine(s, RowsReadByThePool(store) if hide_rows else store, embedder)  # type: ignore[arg-type]

    plain = engine(HashEmbedder(dim), hide_rows=True, **{"retrieve.ready_vector_wait_ms": 0.0})
    rows = engine(Slow(dim), **{"retrieve.ready_vector_wait_ms": 0.0})
    rows_merged = engine(HashEmbedder(dim), **{"retrieve.ready_vector_wait_ms": 10_000.0})
    first = engine(Slow(dim))
    first.retriever.embed_first = True  # the vector first, then one batch
    try:
        assert all(isinstance(e.retriever.lanes, BatchedLanes) for e in (plain, rows, rows_merged, first))
        for q in questions[:8]:
            ref = plain.search(q["question"], lang="en")
            got = {"rows": rows.search(q["question"], lang="en"),
                   "rows, merged": rows_merged.search(q["question"], lang="en"),
                   "embed first": first.search(q["question"], lang="en")}
            for how, r in got.items():
                assert [c.fragment.id for c in r.candidates] == [c.fragment.id for c in ref.candidates], (how, q["id"])
                assert [c.fragment for c in r.candidates] == [c.fragment for c in ref.candidates], (how, q["id"])
                np.testing.assert_allclose([c.score for c in r.candidates], [c.score for c in ref.candidates],
                                           atol=1e-5)
                assert r.verdict == ref.verdict
                assert r.signal.value == pytest.approx(ref.signal.value, abs=1e-6)
            text = {how: next(t for t in r.trace if t.name == "lanes:text") for how, r in got.items()}
            pool = {how: next(t for t in r.trace if t.name == "pool") for how, r in got.items()}
            assert not text["rows"].info["merged"] and text["rows"].info["overlapped_embedding"]
            assert text["rows, merged"].info["merged"]
            assert text["embed first"].info["merged"] and text["embed first"].info["embed_first"]
            assert all(p.counts["read"] == 0 for p in pool.values())  # the lanes brought every row
            ref_pool = next(t for t in ref.trace if t.name == "pool")
            assert ref_pool.counts["read"] > 0  # the reference read them after the lanes
    finally:
        for e in (plain, rows, rows_merged, first):
            e.close()


def test_dense_rows_left_out_below_the_prefloor_keep_the_results(engines: tuple[Engine, Engine],
                                                                 questions: list[dict[str, Any]]) -> None:
    """``retrieve.dense_rows_floor_margin``: the shared HNSW scan leaves out the rows of hits below the pre-floor the
    search expects, and the pool drops them unread — or reads them after all where the pre-floor that applies
    is lower (a Russian question over the English corpus, the first time: ru-en's pre-floor, not the
    expected ru-ru one).
    The candidates, their scores and the verdicts are those of a full read, to the last bit."""
    from footnote.models.embedders import HashEmbedder
    from footnote.store import open_store

    _, pg = engines
    assert pg.embedder is not None
    dim = pg.embedder.dim
    t = {"bail_out": 0.3, "sufficient": 0.5, "good_enough": 0.6, "min_lectures": 2, "fallback_min_score": 0.3,
         "reserve_floor": 0.25}
    gate = {"hash": {"default": {**t, "prefloor": 0.2}, "by_lang_pair": {"ru-en": {**t, "prefloor": -0.5}},
                     "fitted_on": "test"}}
    # every dense call through the shared HNSW scan (the store is small enough for exact scans otherwise)
    base = {"store.postgres.exact_search_max": 0, "store.postgres.shared_scan_min_share": 0.0, "gate.by_embedder": gate}

    def engine(**over: Any) -> Engine:
        s = pg.settings.with_overrides(**base, **over)
        return Engine(s, open_store(s.store.url, s.store), HashEmbedder(dim))

    on, off = engine(), engine(**{"retrieve.dense_rows_floor_margin": 10.0})  # off: every row sent
    counts = {"en": [0, 0], "ru": [0, 0]}  # rows left out, rows the pool read
    below: list[str] = []  # questions with dense hits left out below the default pre-floor
    try:
        # English first; then Russian, starting with a question that has hits between ru-en's pre-floor and
        # the one the lanes expect the first time (ru-ru's: the default)
        for lang in ("en", "ru", "ru"):
            for text in below + [q["question"] for q in questions[:10] if q["question"] not in below] \
                    if lang == "ru" else [q["question"] for q in questions[:10]]:
                a, b = on.search(text, lang=lang), off.search(text, lang=lang)
                assert [(c.fragment, c.score, c.rerank) for c in a.candidates] == \
                    [(c.fragment, c.score, c.rerank) for c in b.candidates], (lang, text)
                assert (a.verdict, a.signal.value) == (b.verdict, b.signal.value)
                pool_a = next(t for t in a.trace if t.name == "pool")
                pool_b = next(t for t in b.trace if t.name == "pool")
                assert pool_a.counts["pooled"] == pool_b.counts["pooled"]
                assert pool_a.counts["below_prefloor"] == pool_b.counts["below_prefloor"]
                assert pool_b.counts["rows_left_out"] == pool_b.counts["read"] == 0
                counts[lang][0] += pool_a.counts["rows_left_out"]
                counts[lang][1] += pool_a.counts["read"]
                if lang == "en" and pool_a.counts["rows_left_out"]:
                    below.append(text)
    finally:
        on.close()
        off.close()
    assert below and counts["en"][0] > 0 and counts["en"][1] == 0  # dropped unread, nothing read back
    # the first Russian question expected ru-ru's pre-floor and read back every row ru-en's keeps; after it,
    # the lanes expect ru-en's (below every cosine here) and leave nothing out
    assert counts["ru"][0] == 0 and counts["ru"][1] > 0
