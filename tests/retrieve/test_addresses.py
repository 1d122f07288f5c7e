"""Addresses as readers write them (issue 16): ranges, chapters, Russian forms, phrasing, names from the
corpus's own books, and a missing address that says what exists."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.engine import Engine
from footnote.records.fragments import AddressLocator
from footnote.retrieve.books import BookIndex, address_aliases
from footnote.retrieve.phrased import ordinal_value
from footnote.retrieve.plan import first_round_plan
from footnote.retrieve.types import Lane
from footnote.settings import Settings, load_settings

HB = [("HB", f"{c}.{v}", "The Harbour Book") for c, n in ((1, 5), (2, 5), (3, 6)) for v in range(1, n + 1)]
BG = [("BG", loc, f"BG {loc}") for loc in ("1.15", "1.16-18", "1.19", *(f"2.{v}" for v in range(1, 73)))]
SB = [("SB", f"1.2.{v}", "SB 1.2") for v in range(1, 10)]
BOOKS = BookIndex.from_rows(HB + BG + SB)
# the engine's defaults without the demo's names: book names must come from the corpus or the settings
PLAIN = Settings().with_overrides(**{"corpus.book_aliases": {"bg": "BG", "бг": "BG", "гита": "BG", "gita": "BG",
                                                             "bhagavad-gita": "BG"}})


def labels(question: str, books: BookIndex = BOOKS, settings: Settings = PLAIN) -> list[str]:
    return [a.label for a in first_round_plan(question, settings, books=books).subquestions[0].addresses]


def notes(question: str, books: BookIndex = BOOKS) -> tuple[str, ...]:
    return first_round_plan(question, PLAIN, books=books).address_notes


@pytest.mark.parametrize(("question", "want"), [
    ("HB 1.1-1.3", ["HB 1.1", "HB 1.2", "HB 1.3"]),
    ("BG 2.11–2.13", ["BG 2.11", "BG 2.12", "BG 2.13"]),
    ("БГ 2.11-13", ["BG 2.11", "BG 2.12", "BG 2.13"]),
    ("SB 1.2.6-7", ["SB 1.2.6", "SB 1.2.7"]),
    ("HB 1.4-2.2", ["HB 1.4", "HB 1.5", "HB 2.1", "HB 2.2"]),
    ("BG 1.15-19", ["BG 1.15", "BG 1.16-18", "BG 1.19"]),  # a joint verse inside the range
    ("BG 1.16-1.18", ["BG 1.16-18"]),
    ("HB 2", ["HB 2.1", "HB 2.2", "HB 2.3", "HB 2.4", "HB 2.5"]),
    ("Гита 2.47", ["BG 2.47"]),
    ("What does verse 2.1 of the Harbour Book say?", ["HB 2.1"]),
    ("What does HB 2.1 say?", ["HB 2.1"]),
    ("Bhagavad-gita chapter 2 verse 47", ["BG 2.47"]),
    ("second chapter, verse 47 of the Gita", ["BG 2.47"]),
    ("Гита, глава 2, стих 47", ["BG 2.47"]),
    ("вторая глава Гиты, стих 47", ["BG 2.47"]),
    ("In chapter two of the Harbour Book, what is said about fog?", ["HB 2.1", "HB 2.2", "HB 2.3", "HB 2.4", "HB 2.5"]),
])
def test_forms_readers_write(question: str, want: list[str]) -> None:
    assert labels(question) == want


@pytest.mark.parametrize("question", [
    "What is the first chapter about?",  # no book named, and the corpus has several
    "Which verse mentions the fog?", "Tell me about 3 ships and the second chapter", "chapter about lamps",
])
def test_ordinary_questions_have_no_address(question: str) -> None:
    assert labels(question) == []


def test_one_book_corpus_needs_no_name_for_chapter_and_verse() -> None:
    gita = BookIndex.from_rows(BG)
    assert labels("second chapter, verse 47", gita) == ["BG 2.47"]
    assert labels("глава 2, стих 47", gita) == ["BG 2.47"]
    assert labels("the first chapter", gita) == []  # a bare chapter needs the book named


def test_chapter_is_capped_and_the_cap_is_said() -> None:
    got = labels("BG 2")
    assert got == [f"BG 2.{v}" for v in range(1, 13)]
    assert notes("BG 2") == ("BG 2 holds 72 verses; the first 12 are searched (BG 2.1–2.12, setting "
                             "retrieve.chapter_max_verses)",)
    capped = PLAIN.with_overrides(**{"retrieve.chapter_max_verses": 3})
    assert labels("глава 2 Гиты", settings=capped) == ["BG 2.1", "BG 2.2", "BG 2.3"]


def test_missing_address_says_what_exists() -> None:
    assert labels("HB 9.9") == ["HB 9.9"]  # kept: the exact lane finds nothing and the gate says not found
    assert notes("HB 9.9") == ("HB 9.9 is not in the corpus; The Harbour Book has 1.1–3.6",)
    assert notes("HB 7") == ("HB 7 is not in the corpus; The Harbour Book has 1.1–3.6",)
    assert notes("HB 1.1") == ()


def test_names_come_from_the_corpus_and_settings_not_code() -> None:
    aliases = address_aliases(PLAIN, BOOKS)
    assert aliases["the harbour book"] == "HB" and aliases["harbour book"] == "HB" and aliases["hb"] == "HB"
    assert not any(k.startswith("bg ") for k in aliases)  # titles with digits name verses, not the book
    many = BookIndex.from_rows([("K", f"{i}", f"Chapter of the kings {'I' * i}") for i in range(1, 6)])
    assert set(address_aliases(PLAIN, many)) == {"k", *PLAIN.corpus.book_aliases}  # one source per verse
    own = PLAIN.with_overrides(**{"corpus.book_aliases": {"маячная книга": "HB"}})
    assert labels("Маячная книга 3.2", settings=own) == ["HB 3.2"]
    assert labels("Harbour Book 3.2", books=BookIndex()) == []  # without the corpus, nothing knows that name
    assert ordinal_value("седьмой") == 7 and ordinal_value("12th") == 12 and ordinal_value("about") is None


@pytest.fixture(scope="module")
def demo_engine(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    with Engine.from_settings(load_settings(None, **{"store.url": str(db), "embedder.name": "hash"})) as eng:
        assert eng.ingest([demo_dir]).failed == 0
        yield eng


def _address_sources(result: object) -> list[str]:
    return [c.fragment.locator.label for c in result.candidates  # type: ignore[attr-defined]
            if any(h.lane is Lane.ADDRESS for h in c.lanes) and c.fragment.kind == "verse"]


def test_demo_ranges_chapters_and_phrasing(demo_engine: Engine) -> None:
    r = demo_engine.search("HB 1.1-1.3")
    assert _address_sources(r) == ["HB 1.1", "HB 1.2", "HB 1.3"]  # in order
    assert [c.fragment.locator.label for c in r.candidates[:3]] == ["HB 1.1", "HB 1.2", "HB 1.3"]
    r = demo_engine.search("HB 3.6-3.4")  # a backwards range holds nothing
    assert r.plan.address_notes == ("HB 3.6-3.4 is not in the corpus; The Harbour Book has 1.1–3.6",)
    r = demo_engine.search("What does verse 2.1 of the Harbour Book say?")
    assert r.candidates[0].fragment.locator.label == "HB 2.1"
    r = demo_engine.search("HB 3")
    assert _address_sources(r) == [f"HB 3.{v}" for v in range(1, 7)]
    r = demo_engine.search("HB 9.9")
    assert r.verdict.abstains and r.plan.address_notes == (
        "HB 9.9 is not in the corpus; The Harbour Book has 1.1–3.6",)


def test_demo_missing_address_answer_says_what_exists(demo_engine: Engine) -> None:
    answer = demo_engine.ask("HB 9.9")
    assert answer.mode.value == "not_found"
    assert answer.answer.startswith("HB 9.9 is not in the corpus; The Harbour Book has 1.1–3.6.")


def test_a_question_full_of_ranges_is_capped_in_all() -> None:
    q = " ".join(f"HB {c}.1-{c}.5" for c in (1, 2, 3)) + " BG 2 " * 5 + " ".join(f"BG 2.{v}" for v in range(1, 70))
    plan = first_round_plan(q, PLAIN, books=BOOKS)
    assert len(plan.subquestions[0].addresses) == 32
    assert any("(setting retrieve.max_addresses)" in n for n in plan.address_notes)
    assert len(first_round_plan("HB 1 " * 400, PLAIN, books=BOOKS).subquestions[0].addresses) == 5


def test_ask_prints_the_chapter_cap(demo_engine: Engine, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from footnote.cli import main

    url = demo_engine.store.url
    r = CliRunner().invoke(main, ["ask", "HB 3", "--store", url, "--embedder", "hash",
                                  "--config", str(_cap_config(tmp_path))])
    assert r.exit_code == 0, r.output
    assert "note: HB 3 holds 6 verses; the first 2 are searched (HB 3.1–3.2" in r.stdout


def _cap_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "footnote.toml"
    cfg.write_text("[retrieve]\nchapter_max_verses = 2\n", encoding="utf-8")
    return cfg


def test_notes_follow_the_questions_language() -> None:
    plan = first_round_plan("Что говорит БГ 9.99?", PLAIN, books=BOOKS)
    assert plan.address_notes == ("BG 9.99 нет в корпусе; в книге «BG» есть 1.15–2.72",)


def test_missing_address_of_a_book_named_only_by_the_corpus_abstains(demo_dir: Path, tmp_path: Path) -> None:
    """No alias in the settings at all: the demo's book is known by its own code and title."""
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash",
                                      "corpus.book_aliases": {}})
    with Engine.from_settings(settings) as eng:
        eng.ingest([demo_dir / "verses"])
        r = eng.search("HB 9.9")
        assert r.verdict.abstains and r.signal.extra["missing_address"] == 1.0
        assert r.plan.address_notes == ("HB 9.9 is not in the corpus; The Harbour Book has 1.1–3.6",)
        r = eng.search("What does the Harbour Book 2.2 say?")
        assert r.candidates[0].fragment.locator.label == "HB 2.2" and not r.verdict.abstains


def test_address_order_moves_only_address_hits_within_their_slots() -> None:
    from footnote.records.fragments import Fragment, TranscriptLocator
    from footnote.retrieve.books import in_address_order
    from footnote.retrieve.types import Candidate, LaneHit

    def cand(fid: str, kind: str, loc: str | None) -> Candidate:
        locator = AddressLocator("HB", loc, f"HB {loc}") if loc else TranscriptLocator("t", 0, 1)
        lanes = (LaneHit(Lane.ADDRESS, f"HB {loc}", 0, 1.0),) if loc else ()
        return Candidate(Fragment(fid, "s", 0, kind, "en", fid, locator, "h"), 0.5, lanes)

    asked = tuple(AddressLocator("HB", f"1.{v}", f"HB 1.{v}") for v in (1, 2, 3))
    cands = [cand("v3", "verse", "1.3"), cand("v1", "verse", "1.1"), cand("t", "track_transcript", None),
             cand("c2", "commentary", "1.2"), cand("v2", "verse", "1.2"), cand("c1", "commentary", "1.1")]
    got = [c.fragment.id for c in in_address_order(cands, asked)]
    assert got == ["v1", "v2", "t", "c1", "v3", "c2"]
    assert in_address_order(cands, asked[:1]) == cands


def test_the_alias_map_is_built_once_per_book_index_and_read_only() -> None:
    """A turn asks for the book-alias map at several stages: it is built once per book index (a new index
    after every write) and per alias settings, and nobody can change it in passing."""
    from footnote.settings import Settings

    s = Settings()
    idx = BookIndex.from_rows([("HB", "1.1", "The Harbour Book"), ("HB", "1.2", "The Harbour Book")])
    first = address_aliases(s, idx)
    assert first["harbour book"] == "HB" and first["the harbour book"] == "HB"
    assert address_aliases(s, idx) is first
    mine = s.with_overrides(**{"corpus.book_aliases": {**s.corpus.book_aliases, "hbk": "HB"}})
    theirs = address_aliases(mine, idx)
    assert theirs is not first and theirs["hbk"] == "HB" and "hbk" not in first
    again = BookIndex.from_rows([("HB", "1.1", "The Harbour Book")])
    assert address_aliases(s, again) is not first and address_aliases(s, again) == first
    with pytest.raises(TypeError):
        first["x"] = "y"  # type: ignore[index]
