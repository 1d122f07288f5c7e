"""A question naming a range quotes every verse of it, and "the next verse" follows the verse of the turn
before (issue 44, item 9): the real Bhagavad-gita corpus's chapter 2 (eval/gita/corpus.jsonl) and the demo's
Harbour Book, with the hash embedder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.answer.followup import PriorTurn, relative_address
from footnote.answer.types import Answer
from footnote.engine import Engine
from footnote.retrieve.books import BookIndex
from footnote.settings import ConversationSettings, load_settings


@pytest.fixture(scope="module")
def gita2(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The Gita's chapter 2 (73 verses and their commentaries) in a temporary store."""
    tmp = tmp_path_factory.mktemp("gita2")
    rows = (shared_dir / "eval" / "gita" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    chapter = [r for r in rows if json.loads(r)["address"]["loc"].startswith("2.")]
    (tmp / "gita2.jsonl").write_text("\n".join(chapter) + "\n", encoding="utf-8")
    eng = Engine.from_settings(load_settings(None, **{"store.url": str(tmp / "g.db"), "embedder.name": "hash"}))
    eng.ingest([tmp / "gita2.jsonl"])
    yield eng
    eng.close()


def _cited(answer: Answer) -> list[str]:
    return [c.fragment.source_id for c in answer.citations]


@pytest.mark.parametrize("question", ["BG 2.11-13", "БГ 2.11-13", "What do BG 2.11–2.13 say?"])
def test_a_range_quotes_every_verse_in_order(gita2: Engine, question: str) -> None:
    answer = gita2.ask(question)
    cited = _cited(answer)
    assert cited == ["BG 2.11#verse", "BG 2.12#verse", "BG 2.13#verse"], cited
    assert "Thou hast grieved for those that should not be grieved for" in answer.answer  # 2.11's translation
    assert answer.answer.index("grieved for") < answer.answer.index("Nor at any time") < answer.answer.index("Just as")


def test_a_range_in_the_harbour_book(hash_demo: Engine) -> None:
    answer = hash_demo.ask("HB 1.1–1.3")
    labels = [getattr(c.fragment.locator, "label", None) for c in answer.citations]
    assert labels == ["HB 1.1", "HB 1.2", "HB 1.3"], answer.answer


def test_a_single_address_still_quotes_verse_and_commentary(gita2: Engine) -> None:
    cited = _cited(gita2.ask("What does BG 2.47 say?"))
    assert cited[0] == "BG 2.47#verse"
    assert all(c.startswith("BG 2.47#") for c in cited)


@pytest.mark.parametrize(
    ("followup", "verse", "shown"),
    [
        ("And what does the next verse say?", "BG 2.48", "And what does BG 2.48 say?"),
        ("And the previous verse?", "BG 2.46", "And BG 2.46?"),
        ("а следующий стих?", "BG 2.48", "а BG 2.48?"),
        ("А предыдущий?", "BG 2.46", "А BG 2.46?"),
    ],
)
def test_the_next_verse_follows_the_previous_turn(gita2: Engine, followup: str, verse: str, shown: str) -> None:
    first = gita2.ask("What does BG 2.47 say?", remember=True)
    assert first.conversation_id is not None
    answer = gita2.ask(followup, conversation_id=first.conversation_id)
    assert answer.trace is not None and answer.trace.rewritten_question == shown
    cited = _cited(answer)
    assert cited and cited[0] == f"{verse}#verse", cited
    assert all(c.startswith(f"{verse}#") for c in cited), cited


def test_the_next_verse_chains_and_follows_a_range(gita2: Engine) -> None:
    first = gita2.ask("BG 2.11-13", remember=True)
    cid = first.conversation_id
    assert cid is not None
    second = gita2.ask("What is the next verse?", conversation_id=cid)
    assert _cited(second)[0] == "BG 2.14#verse"
    third = gita2.ask("and the next one?", conversation_id=cid)
    assert _cited(third)[0] == "BG 2.15#verse"


BOOKS = BookIndex.from_rows([("HB", f"{c}.{v}", "The Harbour Book") for c in (1, 2) for v in range(1, 6)])
ALIASES = {"hb": "HB"}
CFG = ConversationSettings()
VERSE_WORDS = ("verse", "стих")


def _rel(question: str, prior: str, cited: tuple[str, ...] = ()) -> str | None:
    turn = PriorTurn(prior, prior, "", cited_addresses=cited)
    r = relative_address(question, [turn], CFG, ALIASES, BOOKS, VERSE_WORDS)
    return None if r is None else r.question


def test_relative_address_steps_through_the_books_locations() -> None:
    assert _rel("What does the next verse say?", "HB 1.5") == "What does HB 2.1 say?"  # across the chapter
    assert _rel("the previous verse?", "HB 2.1") == "HB 1.5?"
    assert _rel("And the next verse?", "What is the lamp?", cited=("HB 1.2",)) == "And HB 1.3?"  # its citation
    assert _rel("And the next verse?", "HB 2.5") == "And HB 2.6?"  # past the end: asked, said not in the corpus
    assert _rel("What happens next in HB 1.2?", "HB 1.1") is None  # an address of its own
    assert _rel("Who is next to the keeper?", "HB 1.1") is None  # "next" with no verse word, mid-question
    assert _rel("And the next verse?", "What is the lamp?") is None  # no address before
