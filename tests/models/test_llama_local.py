"""The local model (``llama-cpp://``): llama.cpp's own server started in-process by ``xllamacpp`` on first
use, shared by the roles naming the same GGUF, spoken to over loopback HTTP with a random key.

The fast tests cover naming, laziness and the failures a user meets (no model installed, a file that is not a
GGUF). The slow ones run the real Qwen2.5-Coder-1.5B when ``make llm-local`` installed it (skipped otherwise):
JSON and streaming, a hang-up and the turn's deadline cutting a long generation, the key guarding the port."""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path

import httpx
import pytest

from footnote.errors import Cancelled, ConfigError, ModelError, TurnDeadline
from footnote.models.chat import extract_json, make_chat_models
from footnote.models.llama_local import GGUF, LlamaCppChatModel, resolve_gguf
from footnote.models.protocols import Budget, ChatMessage
from footnote.settings import ChatModelSettings, ModelsSettings
from footnote.settings.loader import resolve_settings

NAME = "qwen2.5-coder-1.5b"
HAS_XLLAMACPP = importlib.util.find_spec("xllamacpp") is not None
INSTALLED = ModelsSettings().dir_path / NAME / GGUF
needs_engine = pytest.mark.skipif(not HAS_XLLAMACPP, reason="xllamacpp not installed (make llm-local)")
needs_model = pytest.mark.skipif(not (HAS_XLLAMACPP and INSTALLED.is_file()),
                                 reason=f"the local model is not installed (make llm-local: {INSTALLED})")


def test_a_local_url_names_an_installed_model_or_a_file(tmp_path: Path) -> None:
    assert resolve_gguf(f"llama-cpp://{NAME}", tmp_path, [NAME]) == tmp_path / NAME / GGUF
    assert resolve_gguf("llama-cpp:///abs/m.gguf", tmp_path, [NAME]) == Path("/abs/m.gguf")
    for bad in ("llama-cpp://", "llama-cpp://a/b.gguf", "llama-cpp://..", "llama-cpp://."):
        with pytest.raises(ConfigError, match="local chat model"):
            resolve_gguf(bad, tmp_path, [NAME])


def test_a_mistyped_or_foreign_model_name_is_a_startup_error_naming_the_chat_models() -> None:
    """A stranger's typo (`llama-cpp://qwen-typo`) said "GGUF file not found … install qwen2.5-coder-1.5b" on the
    first ask, and the speech model was offered as a chat model."""
    for bad in ("llama-cpp://qwen-typo", "llama-cpp://whisper-base"):
        with pytest.raises(ConfigError, match=r"no local chat model is called .*known: qwen2\.5-coder-1\.5b;") as e:
            make_chat_models(ModelsSettings(synthesizer=ChatModelSettings(base_url=bad)))
        assert "whisper-base;" not in str(e.value)


def test_one_setting_makes_the_local_model_the_synthesizer_and_nothing_loads_yet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOOTNOTE_SYNTHESIZER_BASE_URL", f"llama-cpp://{NAME}")
    monkeypatch.setenv("FOOTNOTE_MODELS_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    settings = resolve_settings().settings
    models = make_chat_models(settings.models)
    assert list(models) == ["synthesizer"]  # no model name needed; no other role is touched
    m = models["synthesizer"]
    assert isinstance(m, LlamaCppChatModel) and m.name == f"llama-cpp:{NAME}"
    assert m.server.path == tmp_path / NAME / GGUF and not m.server.started


def test_the_environment_makes_it_the_check_model_too_and_sets_the_deadline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `make llm-local` prints: both roles and a longer turn, over the demo's own settings (no file given)."""
    monkeypatch.setenv("FOOTNOTE_SYNTHESIZER_BASE_URL", f"llama-cpp://{NAME}")
    monkeypatch.setenv("FOOTNOTE_ANSWER_CHECK_BASE_URL", f"llama-cpp://{NAME}")
    monkeypatch.setenv("FOOTNOTE_TURN_TIMEOUT_S", "300")
    monkeypatch.setenv("FOOTNOTE_MODELS_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    settings = resolve_settings().settings
    assert settings.answer.turn_timeout_s == 300.0
    models = make_chat_models(settings.models)
    assert sorted(models) == ["answer_check", "synthesizer"]
    check = models["answer_check"]
    assert isinstance(check, LlamaCppChatModel) and check.server is models["synthesizer"].server  # one model loaded


def test_roles_naming_one_model_share_one_server() -> None:
    s = ChatModelSettings(base_url="llama-cpp:///nonexistent/model.gguf")
    models = make_chat_models(ModelsSettings(planner=s, synthesizer=s, fallback=ChatModelSettings(
        base_url="llama-cpp:///nonexistent/other.gguf")))
    planner, synth, fallback = (models[r] for r in ("planner", "synthesizer", "fallback"))
    assert fallback.name == "llama-cpp:other.gguf"
    assert isinstance(planner, LlamaCppChatModel) and isinstance(synth, LlamaCppChatModel)
    assert isinstance(fallback, LlamaCppChatModel)
    assert planner.server is synth.server and fallback.server is not planner.server
    assert planner.name == "llama-cpp:nonexistent"  # a model.gguf is named by its folder, as installs are


def test_a_missing_model_says_how_to_install_it(tmp_path: Path) -> None:
    ms = ModelsSettings(dir=str(tmp_path), synthesizer=ChatModelSettings(base_url=f"llama-cpp://{NAME}"))
    m = make_chat_models(ms)["synthesizer"]
    expected = (f"the local model {NAME} is not installed in .* \\(run `footnote models install {NAME}`" if HAS_XLLAMACPP
                else "xllamacpp is not installed")
    with pytest.raises(ModelError, match=expected):
        m.complete([ChatMessage("user", "hi")])
    with pytest.raises(ModelError, match=expected):
        list(m.stream([ChatMessage("user", "hi")]))


@needs_engine
def test_a_file_that_is_not_a_gguf_is_a_model_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model", encoding="utf-8")
    m = make_chat_models(ModelsSettings(synthesizer=ChatModelSettings(base_url=f"llama-cpp://{bad}")))["synthesizer"]
    with pytest.raises(ModelError, match=r"notes\.gguf: llama\.cpp could not load it"):
        m.complete([ChatMessage("user", "hi")])


# -- the real model ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local() -> LlamaCppChatModel:
    s = ChatModelSettings(base_url=f"llama-cpp://{NAME}", max_tokens=48, local_n_ctx=2048, timeout_s=300)
    m = make_chat_models(ModelsSettings(planner=s))["planner"]
    assert isinstance(m, LlamaCppChatModel)
    m.server.base_url()  # load it once: loading is not what the tests time
    return m


def _stop_after(seconds: float) -> threading.Event:
    stop = threading.Event()
    threading.Timer(seconds, stop.set).start()
    return stop


@pytest.mark.slow
@needs_model
def test_the_local_model_answers_json_and_streams(local: LlamaCppChatModel) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    assert extract_json(local.complete([ChatMessage("user", 'Reply {"ok": true}.')], json_schema=schema)) == {"ok": True}
    assert "".join(local.stream([ChatMessage("user", "Say hello.")])).strip()


@pytest.mark.slow
@needs_model
def test_the_local_model_weighs_yes_against_no(local: LlamaCppChatModel) -> None:
    """llama.cpp's server gives the first token's log-probabilities: the answer check's probability of "yes"."""
    from footnote.answer.model_check import OPTIONS, messages

    lit = local.choose(messages("When is the lamp lit?", ["The lamp is lit at sunset every day."]), OPTIONS)
    heard = local.choose(messages("How far away can the fog horn be heard?",
                                  ["The Black Skerry beacon stands two nautical miles off the head."]), OPTIONS)
    assert set(lit) == {"yes", "no"} and sum(lit.values()) == pytest.approx(1.0)
    assert lit["yes"] > 0.5 > heard["yes"]


@pytest.mark.slow
@needs_model
def test_the_local_model_weighs_a_faithful_sentence_above_a_false_relation(local: LlamaCppChatModel) -> None:
    """The sentence check (``support.model_check``): every word of both statements is the passage's, only who did
    what differs. The 1.5B model is a weak judge (docs/answering.md gives what it drops and keeps on its own
    answers), but it weighs the faithful one higher in both pairs."""
    from footnote.answer.model_check import OPTIONS, sentence_messages

    passage = ["In the 2014 season the New England Patriots beat the Seattle Seahawks to win Super Bowl XLIX. A year "
               "later the Denver Broncos beat the Carolina Panthers in Super Bowl 50."]

    def p_yes(statement: str) -> float:
        return local.choose(sentence_messages(statement, passage, 3000), OPTIONS)["yes"]

    assert p_yes("The Patriots won Super Bowl XLIX [1].") > p_yes("The Broncos won Super Bowl XLIX [1].")
    assert p_yes("The Broncos beat the Panthers in Super Bowl 50 [1].") > 0.5 > p_yes(
        "The Panthers beat the Broncos in Super Bowl 50 [1].")


@pytest.mark.slow
@needs_model
def test_the_local_port_refuses_a_caller_without_its_key(local: LlamaCppChatModel) -> None:
    url = local.server.base_url()
    assert url.startswith("http://127.0.0.1:")
    r = httpx.post(f"{url}/chat/completions", json={"model": "x", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 401


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize("how", ["hang-up", "deadline"])
def test_a_long_local_prompt_is_cut_and_the_model_serves_the_next_call(local: LlamaCppChatModel, how: str) -> None:
    """~1,000 prompt tokens take ~50 s on 2 cores: a hang-up or the deadline 3 s in stops the server between
    two batches of the prompt (``local_batch``), so the next call is not queued behind the abandoned one."""
    long = "Summarise this log: " + " ".join(f"At {i} the keeper wound clock number {i * 7}." for i in range(90))
    budget = (Budget(stop=_stop_after(3.0)) if how == "hang-up"
              else Budget(deadline=time.monotonic() + 3.0, turn_timeout_s=3.0))
    t0 = time.monotonic()
    with pytest.raises(Cancelled if how == "hang-up" else TurnDeadline):
        "".join(local.stream([ChatMessage("user", long)], budget=budget))
    after = time.monotonic() - t0 - 3.0
    assert after < 3.0, f"the call went on {after:.1f} s after the {how}"
    t1 = time.monotonic()
    assert local.complete([ChatMessage("user", "Say OK.")])
    took = time.monotonic() - t1
    assert took < 20, f"the next call took {took:.0f} s: the abandoned prompt still held the model's only slot"
