"""Offline fusion: lane evidence weighed by language pair, cross-script names, address before all."""

from __future__ import annotations

import random

from footnote.retrieve.fusion import Evidence, evidence_of, fused_score, lane_tops
from footnote.retrieve.names import name_evidence, passage_skeletons, question_names, skeleton, translit
from footnote.retrieve.types import Lane, LaneHit
from footnote.settings import RetrieveSettings

RS = RetrieveSettings(fusion_lexical_weight=0.02, fusion_cross_lexical_weight=0.0, fusion_name_weight=0.01)


def test_lexical_counts_only_within_a_language_by_default() -> None:
    ev = Evidence(lexical=1.0)
    assert fused_score(0.8, ev, same_lang=True, is_verse=False, rs=RS) > 0.8
    assert fused_score(0.8, ev, same_lang=False, is_verse=False, rs=RS) == 0.8


def test_lexical_normalised_per_lane_and_query() -> None:
    hits = [[LaneHit(Lane.LEXICAL_STEMMED, "q", 0, 10.0)], [LaneHit(Lane.LEXICAL_STEMMED, "q", 1, 5.0)],
            [LaneHit(Lane.DENSE_LIBRARY, "q", 0, 0.9)]]
    tops = lane_tops(hits)
    assert evidence_of(hits[0], tops).lexical == 1.0
    assert evidence_of(hits[1], tops).lexical == 0.5
    assert evidence_of(hits[2], tops) == Evidence(dense_lanes=1)


def test_exact_address_outranks_cosine_and_the_verse_comes_first() -> None:
    addr = Evidence(address=1.0)
    verse = fused_score(0.0, addr, same_lang=True, is_verse=True, rs=RS)
    commentary = fused_score(0.1, addr, same_lang=True, is_verse=False, rs=RS)
    plain = fused_score(0.99, Evidence(lexical=1.0), same_lang=True, is_verse=False, rs=RS)
    assert verse > commentary > plain


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
