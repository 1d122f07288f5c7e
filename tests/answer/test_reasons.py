"""A question that asks why is answered by a sentence that gives a reason (answer/reasons.py): a sentence that only
states the fact the question starts from is a near miss. Real SQLite store, hash embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from footnote.answer.asked import AskedKind, asked_kind, carries_kind
from footnote.answer.reasons import asks_reason, gives_reason
from footnote.answer.types import AbstentionReason, AnswerMode

from .conftest import write_corpus
from .test_answerable import LEXICAL_FLOOR


@pytest.mark.parametrize(("question", "asks"), [
    ("Why are keepers on watch not allowed an armchair?", True),
    ("why won't Karpov scrape the ice off with a knife", True),
    ("Почему вахтенный журнал не ведут карандашом?", True),
    ("Зачем Ада просила вторую лестницу?", True),
    ("Warum ist eine trübe Flamme gefährlich?", True),
    ("Pourquoi la corne de brume n'a-t-elle pas servi ?", True),
    ("¿Por qué se cambió el aceite?", True),
    ("Por que o oxigênio é transportado em criogenia?", True),
    ("Por que meios os cientistas liquefizeram o ar?", False),  # by what means
    ("How is the log kept?", False),
    ("What is the reason for the red band?", True),
    ("Besides constant flooding, why else was the Rhine regulated?", True),
    ("Who asked why the lamp was red?", False),  # a why it mentions is not what it asks (a helper's attack)
    ("Which verse says a ship 'does not ask why'?", False),
    ("Por que cidades passou o rio?", False),  # through which
    ("O diário é escrito a tinta por quê?", True),
])
def test_a_question_that_asks_why(question: str, asks: bool) -> None:
    assert asks_reason(question) is asks
    assert (asked_kind(question) is AskedKind.REASON) is asks


@pytest.mark.parametrize(("sentence", "gives"), [
    ("Every hour of fog is written in the log, because the Harbour Board pays for the oil.", True),
    ("Keepers tied a knot in a string for every winding, so that the count could be checked.", True),
    ("The fog horn was not needed, as the Black Skerry could be seen throughout.", True),
    ("Rates of sea-level rise had dropped so far, that sedimentation could compensate.", True),
    ("Мы не скоблим стекло ножом, потому что нож оставляет царапины.", True),
    ("Лёд счищают тёплой водой, чтобы не поцарапать стекло.", True),
    ("Das Log wird mit Tinte geführt, damit nichts ausradiert werden kann.", True),
    ("Um das Glas zu schonen, nimmt man warmes Wasser.", True),
    ("La corne n'a pas servi, car le rocher restait visible.", True),
    ("No se usa un cuchillo porque raya el cristal.", True),
    ("Trim the wick at every change of watch, for a smoking flame is a lie told to ships.", True),
    ("Outside those hours the bar is too shallow, and the keepers warn the boats.", True),
    ("Les bateaux attendent parce que la barre est basse.", True),
    ("Puisque la barre est basse, les bateaux attendent.", True),
    ("As the engine is slow to start, the keeper starts it at the first sign of fog.", True),
    ("If the weight ever reaches the floor, the lens stops.", True),
    ("Хуже всего лёд на стёклах: пар от лампы оседает и замерзает.", True),
    ("Ножом не скоблят, ибо остаются царапины.", True),
    # the fact the question starts from, and words that only look like a reason
    ("The keeper on watch sits in no chair with arms; a plain stool is provided.", False),
    ("The log is kept in ink, never in pencil.", False),
    ("Since 1868 the lamp has burned paraffin.", False),
    ("The lens is as tall as a man.", False),
    ("The car was left at the pier.", False),
    ("Das Schiff lief auf Grund.", False),
    ("The keeper kept the log, for example the weather and the wind.", False),
    ("It was too late in the year.", False),
    # marks that are something else (a helper's attack)
    ("Keepers have to keep the log in ink.", False),
    ("The spare wicks are kept in order on a shelf.", False),
    ("The keeper, as well as his assistant, signs the log.", False),
    ("The lamp has burned paraffin, since the change of 1868.", False),
    ("He kept the horn going, for twenty minutes.", False),
    ("Karpov too kept a log.", False),
    ("Um zehn Uhr geht der Wärter zu Bett.", False),
    ("Иначе говоря, журнал ведут чернилами.", False),
])
def test_a_sentence_that_gives_a_reason(sentence: str, gives: bool) -> None:
    assert gives_reason(sentence) is gives
    assert carries_kind(sentence, "Why is it so?", AskedKind.REASON) is gives


WATCH = {
    "watch.md": "# The Night Watch\n\n"
    "The keeper on watch sits on a plain stool in the watch room. The keeper on watch may not sit in a chair with "
    "arms.\n\n"
    "Every hour of fog is written in the watch log, because the Harbour Board pays for the oil the engine burns.\n",
}


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    return write_corpus(tmp_path, WATCH)


def test_why_without_a_reason_in_the_passages_is_a_near_miss(build_engine: Any) -> None:
    """The passage says the keeper may not sit in a chair with arms, not why: the turn ends as a near miss. The
    question whose reason is written is answered with it."""
    eng = build_engine(**LEXICAL_FLOOR)
    a = eng.ask("Why may the keeper on watch not sit in a chair with arms?")
    assert a.mode is AnswerMode.NOT_FOUND, a.answer
    assert a.abstention is not None and a.abstention.reason is AbstentionReason.ANSWER_NOT_IN_PASSAGES
    judged = [s for s in a.trace.stages if s.name == "outline"][-1].info["answerable"]  # type: ignore[union-attr]
    assert judged["asks"] == "reason" and judged["answers"] is False
    b = eng.ask("Why is every hour of fog written in the watch log?")
    assert b.mode is AnswerMode.CORPUS and "because the Harbour Board pays" in b.answer, b.answer
