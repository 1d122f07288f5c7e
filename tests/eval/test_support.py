"""Citation support without a model (footnote.eval.support), with the hash embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from footnote.answer.types import Answer, AnswerMode, Citation
from footnote.eval.support import SupportScorer, cited_sentences, support_cell, support_fields
from footnote.eval.support_fit import build_pairs
from footnote.models.embedders import HashEmbedder
from footnote.records.fragments import FileLocator, Fragment
from footnote.retrieve.types import Verdict
from footnote.settings import Settings

PANTHERS = Fragment("doc#0", "doc", 0, "prose_chapter", "en",
                    "The Panthers defense gave up just 308 points, ranking sixth in the league. "
                    "Kawann Short led the team in sacks with 11.", FileLocator("doc.md"), "h")
RHINE = Fragment("rhine#0", "rhine", 0, "prose_chapter", "en",
                 "The Rhine flows from the Swiss Alps to the North Sea. It is about 1,230 kilometres long.",
                 FileLocator("rhine.md"), "h2")


def _answer(text: str, *frags: Fragment, mode: AnswerMode = AnswerMode.CORPUS) -> Answer:
    cits = tuple(Citation(i + 1, f, f.source_id) for i, f in enumerate(frags))
    return Answer(text, cits, Verdict.SUFFICIENT, False, mode)


def _scorer() -> SupportScorer:
    return SupportScorer(Settings().support, HashEmbedder(384))


def test_cited_sentences_attach_trailing_markers() -> None:
    got = cited_sentences("The defense gave up 308 points [1]. Short led in sacks. [1][2] Nothing cited here.")
    assert [s.cites for s in got] == [(1,), (1, 2), ()]
    assert got[0].text == "The defense gave up 308 points."  # as the note has it (so its vector is reused)
    assert cited_sentences("Mid [2] sentence, end [1][3].")[0].text == "Mid sentence, end."
    assert got[2].text == "Nothing cited here."
    got = cited_sentences("Илья Карпов, смотритель [1] Маяк на мысе, 1887 года [3]")
    assert [(s.text, s.cites) for s in got] == [("Илья Карпов, смотритель", (1,)), ("Маяк на мысе, 1887 года", (3,))]
    # an answer's label with a marker states nothing: its marker goes to the sentence it introduces (the local
    # model's "Ответ: [1] …" was dropped as an unsupported sentence "Ответ:" and took its verbatim quote down)
    for label in ("Ответ:", "Answer:", "**Answer:**", "Antwort :", "答案："):
        got = cited_sentences(f"{label} [1] The Panthers defense gave up just 308 points [2].")
        assert [(s.text, s.cites) for s in got] == [("The Panthers defense gave up just 308 points.", (2, 1))], label
    # any other lead-in is a claim of its own, judged alone (a helper's attack: merged, a true sentence carried it)
    got = cited_sentences("Pirates smuggled the lens in 1492: [2] The Panthers gave up 308 points [1].")
    assert [(s.text, s.cites) for s in got] == [("Pirates smuggled the lens in 1492:", (2,)),
                                                ("The Panthers gave up 308 points.", (1,))]


def test_verbatim_sentence_is_supported_and_a_wrong_citation_is_not() -> None:
    sup = _scorer().score_answer(_answer(
        "The Panthers defense gave up just 308 points, ranking sixth in the league [1]. "
        "The Rhine flows from the Swiss Alps to the North Sea [1].", PANTHERS, RHINE))
    assert sup is not None
    first, second = sup.sentences
    assert first.supported and first.citations[0].similarity > 0.99 and first.citations[0].containment == 1.0
    assert not second.supported  # cites the Panthers note for a claim about the Rhine
    assert sup.recall == 0.5 and sup.precision == 0.5
    assert sup.unsupported == ["The Rhine flows from the Swiss Alps to the North Sea."]


def test_uncited_sentence_and_dangling_number_are_unsupported() -> None:
    sup = _scorer().score_answer(_answer("Kawann Short led the team in sacks with 11 [1]. He also won [7].", PANTHERS))
    assert sup is not None
    assert [s.supported for s in sup.sentences] == [True, False]
    assert sup.sentences[1].citations[0].score == 0.0


def test_a_wrong_number_lowers_containment() -> None:
    s = _scorer()
    (_, right, _), (_, wrong, _) = s.score_pairs([("Kawann Short had 11 sacks.", PANTHERS.text),
                                                   ("Kawann Short had 19 sacks.", PANTHERS.text)])
    assert right is not None and wrong is not None and right > wrong


def test_cross_lingual_claim_scores_on_similarity_only() -> None:
    claim = "Защита Пэнтерс уступила всего 999 очков."
    [(sim, cont, score)] = _scorer().score_pairs([(claim, PANTHERS.text)])
    assert cont is None and score == sim  # the default penalty is 0 (it lowered held-out AUROC)
    penalised = SupportScorer(Settings().support.model_copy(update={"missing_number_penalty": 0.1}), HashEmbedder(384))
    [(sim2, _, score2)] = penalised.score_pairs([(claim, PANTHERS.text)])
    assert score2 == pytest.approx(sim2 - 0.1)  # 999 is not in the note: one number missing


def test_answers_without_citations_by_design_are_not_scored() -> None:
    s = _scorer()
    assert s.score_answer(_answer("Not in the corpus.", mode=AnswerMode.NOT_FOUND)) is None
    assert support_fields(s, _answer("x", mode=AnswerMode.DECLINED)) == {}


def test_one_embedding_call_per_answer() -> None:
    calls: list[int] = []

    class Counting(HashEmbedder):
        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return super().embed_passages(texts)

    SupportScorer(Settings().support, Counting(64)).score_answer(
        _answer("Short led in sacks [1]. The Rhine is long [2]. Points: 308 [1][2].", PANTHERS, RHINE))
    assert calls == [3 + 4]  # distinct texts once: 3 claims, 2 sentences in each of 2 notes


def test_support_cell_means() -> None:
    s = _scorer()
    rows = [support_fields(s, _answer("The Panthers defense gave up just 308 points [1].", PANTHERS)),
            support_fields(s, _answer("The Rhine is in Peru [1].", PANTHERS)), {}]
    cell = support_cell(rows)
    assert cell["n_unsupported"] == 1 and cell["cite_recall"] == 0.5 and cell["cite_precision"] == 0.5


def test_threshold_falls_back_for_an_unknown_embedder() -> None:
    st = Settings().support
    assert st.thresholds("nobody") == st.thresholds(st.uncalibrated_fallback)


def test_build_pairs_from_a_parallel_set(tmp_path: Path) -> None:
    rows = {"en": ["Alpha beta gamma delta epsilon zeta one.", "Eta theta iota kappa lambda mu two."],
            "ru": ["Альфа бета гамма дельта эпсилон дзета один.", "Эта тета йота каппа лямбда мю два."]}
    for lang, texts in rows.items():
        with (tmp_path / f"corpus.{lang}.jsonl").open("w") as fh:
            for i, t in enumerate(texts):
                fh.write(json.dumps({"id": f"A#{i}", "lang": lang, "text": t}) + "\n")
    (tmp_path / "questions.dev.jsonl").write_text(json.dumps(
        {"id": "q", "question": "What is alpha?", "lang": "en", "answers": ["beta"], "gold": ["A#0"]}) + "\n")
    kinds = build_pairs(tmp_path)
    assert kinds["en"][:2] == [(rows["en"][0], rows["en"][0], True), (rows["en"][0], rows["en"][1], False)]
    assert kinds["ru-en"][0] == (rows["ru"][0], rows["en"][0], True)
    assert kinds["qa-en"] == [("What is alpha: beta.", rows["en"][0], True), ("What is alpha: beta.", rows["en"][1], False)]
