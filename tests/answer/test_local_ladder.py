"""The whole ladder with the real local model writing (issue 39 §5; slow, skipped unless ``make llm-local``
installed it): the demo as ``make run`` builds it, EmbeddingGemma, the extractive planner choosing the sentences
and Qwen2.5-Coder-1.5B (``llama-cpp://qwen2.5-coder-1.5b``) writing them, the server's checks after it.

What must hold whatever the small model writes: every sentence shown carries a citation and is judged supported
by the passages it cites (or the turn says it found nothing grounded); a near miss is declined before the model
is called; the model was really asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.answer.types import AnswerMode
from footnote.answer.units import CITE, is_introducer, split_units
from footnote.engine import Engine
from footnote.models.chat import make_chat_models
from footnote.models.llama_local import GGUF
from footnote.settings import Settings, load_settings
from footnote.store import open_store

from .conftest import copy_store

NAME = "qwen2.5-coder-1.5b"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def engine(gemma_settings: Settings, gemma_embedder: object, demo_dir: Path, gemma_demo_store: tuple[Path, str],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    if not (gemma_settings.models.dir_path / NAME / GGUF).is_file():
        pytest.skip("the local model is not installed (make llm-local)")
    pytest.importorskip("xllamacpp")
    db, _ = gemma_demo_store
    copy = copy_store(db, tmp_path_factory.mktemp("demo-local"))
    s = load_settings(demo_dir / "footnote.toml", **{
        "store.url": str(copy), "models.dir": str(gemma_settings.models.dir_path),
        "models.synthesizer.base_url": f"llama-cpp://{NAME}", "models.synthesizer.max_tokens": "160",
        "models.synthesizer.timeout_s": "600", "answer.turn_timeout_s": "900",
    })
    eng = Engine(s, open_store(s.store.url, s.store), gemma_embedder,  # type: ignore[arg-type]
                 chat_models=make_chat_models(s.models))
    yield eng
    eng.close()


@pytest.mark.parametrize("question", [
    "What did Ada Penhallow ask the Harbour Board to send after the gale broke the lantern glass?",
    "Чем Карпов счищал лёд со стёкол фонаря?",
])
def test_every_sentence_the_local_model_gets_shown_is_cited_and_supported(engine: Engine, question: str) -> None:
    a = engine.ask(question)
    assert a.model_calls >= 1  # the local model was asked
    assert a.trace is not None
    synth = next(st for st in a.trace.stages if st.name == "synthesize")
    if a.mode is AnswerMode.NOT_FOUND:  # nothing it wrote was supported: said so, nothing shown
        assert a.abstention is not None and a.abstention.reason.value == "weakly_grounded"
        return
    assert a.mode is AnswerMode.CORPUS and a.citations
    shown = [u for u in split_units(a.answer) if u.strip() and not is_introducer(u)]  # as the server splits them
    assert shown and all(CITE.search(u) for u in shown), a.answer
    if synth.info.get("synthesizer") == "model":
        support = a.trace.support or {}
        judged = support.get("sentences") or []
        assert judged and all(s["supported"] for s in judged), (a.answer, judged)


def test_a_near_miss_is_declined_before_the_local_model_is_called(engine: Engine) -> None:
    a = engine.ask("What was Ada Penhallow's yearly salary?")
    assert a.mode is AnswerMode.NOT_FOUND and a.model_calls == 0
