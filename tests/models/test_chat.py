"""The OpenAI-compatible client against the scripted server on loopback (real HTTP, real SSE)."""

from __future__ import annotations

import json

import pytest

from footnote.errors import ConfigError, ModelError, ModelTimeout
from footnote.models.chat import OpenAIChatModel, extract_json, make_chat_models
from footnote.models.protocols import ChatMessage
from footnote.settings import ChatModelSettings, ModelsSettings
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

MSGS = [ChatMessage("system", "be brief"), ChatMessage("user", "hello")]


def _model(srv: ScriptedOpenAIServer, **kw: object) -> OpenAIChatModel:
    cfg = {"base_url": srv.base_url, "model": "m1", "api_key": "k", "retries": 2, "retry_backoff_s": 0.0, "timeout_s": 5.0}
    cfg.update(kw)
    return OpenAIChatModel("planner", ChatModelSettings(**cfg))


def test_complete_sends_schema_and_key() -> None:
    with ScriptedOpenAIServer([Reply('{"theses": []}')]) as srv:
        m = _model(srv)
        out = m.complete(MSGS, json_schema={"type": "object"})
        assert json.loads(out) == {"theses": []}
        req = srv.requests[0]
        assert req["_path"] == "/v1/chat/completions"
        assert req["_auth"] == "Bearer k"
        assert req["model"] == "m1" and req["stream"] is False
        assert req["response_format"]["type"] == "json_schema"
        assert req["messages"][1] == {"role": "user", "content": "hello"}
        assert m.calls == 1 and m.requests == 1


def test_stream_yields_sse_deltas_in_order() -> None:
    with ScriptedOpenAIServer([Reply(chunks=("Fog ", "horn [1", "]. ", "Done."))]) as srv:
        m = _model(srv)
        assert list(m.stream(MSGS)) == ["Fog ", "horn [1", "]. ", "Done."]
        assert srv.requests[0]["stream"] is True


def test_5xx_is_retried_then_succeeds() -> None:
    with ScriptedOpenAIServer([Reply(status=503), Reply(status=429), Reply("ok")]) as srv:
        m = _model(srv)
        assert m.complete(MSGS) == "ok"
        assert len(srv.requests) == 3 and m.requests == 3 and m.calls == 1


def test_5xx_after_bounded_retries_is_a_clear_error() -> None:
    with ScriptedOpenAIServer([Reply(status=500)] * 5) as srv:
        m = _model(srv, retries=1)
        with pytest.raises(ModelError) as ei:
            m.complete(MSGS)
        assert len(srv.requests) == 2  # 1 + 1 retry, no more
        msg = ei.value.message
        assert "models.planner" in msg and "HTTP 500" in msg and "2 attempts" in msg


def test_stream_5xx_bounded() -> None:
    with ScriptedOpenAIServer([Reply(status=502)] * 3) as srv:
        m = _model(srv, retries=2)
        with pytest.raises(ModelError, match="HTTP 502"):
            list(m.stream(MSGS))
        assert len(srv.requests) == 3


def test_timeout_is_bounded_and_raises_model_timeout() -> None:
    with ScriptedOpenAIServer([Reply("late", delay_s=0.8)] * 2) as srv:
        m = _model(srv, retries=1, timeout_s=0.2)
        with pytest.raises(ModelTimeout, match="timed out"):
            m.complete(MSGS)
        assert len(srv.requests) == 2


def test_client_error_is_not_retried() -> None:
    with ScriptedOpenAIServer([Reply(status=401), Reply("never")]) as srv:
        m = _model(srv)
        with pytest.raises(ModelError, match="HTTP 401"):
            m.complete(MSGS)
        assert len(srv.requests) == 1


def test_schema_rejected_falls_back_to_json_object() -> None:
    with ScriptedOpenAIServer([Reply(status=400), Reply('{"a": 1}')]) as srv:
        m = _model(srv)
        assert extract_json(m.complete(MSGS, json_schema={"type": "object"})) == {"a": 1}
        assert srv.requests[1]["response_format"] == {"type": "json_object"}


def test_unreachable_endpoint() -> None:
    m = OpenAIChatModel("synthesizer", ChatModelSettings(
        base_url="http://127.0.0.1:9/v1", model="x", retries=1, retry_backoff_s=0.0, timeout_s=1.0))
    with pytest.raises(ModelError, match="cannot reach"):
        m.complete(MSGS)


def test_malformed_body_is_a_model_error() -> None:
    with ScriptedOpenAIServer([Reply(raw="not json")]) as srv, pytest.raises(ModelError, match="malformed reply"):
        _model(srv).complete(MSGS)


@pytest.mark.parametrize("text,expected", [
    ('{"theses": []}', {"theses": []}),
    ('```json\n{"theses": [{"text": "a", "notes": [1]}]}\n```', {"theses": [{"text": "a", "notes": [1]}]}),
    ('Sure! Here is the outline: {"theses": []} Hope it helps.', {"theses": []}),
])
def test_extract_json_tolerates_wrapping(text: str, expected: object) -> None:
    assert extract_json(text) == expected


def test_extract_json_rejects_prose() -> None:
    with pytest.raises(ModelError, match="no JSON"):
        extract_json("I think the answer is yes")


def test_make_chat_models_only_configured_roles() -> None:
    assert make_chat_models(ModelsSettings()) == {}
    ms = ModelsSettings(synthesizer=ChatModelSettings(base_url="http://127.0.0.1:1/v1", model="s"))
    models = make_chat_models(ms)
    assert list(models) == ["synthesizer"]
    with pytest.raises(ConfigError, match=r"models\.planner\.base_url"):
        make_chat_models(ModelsSettings(planner=ChatModelSettings(base_url="ftp://x", model="p")))


@pytest.mark.parametrize("flag", ["stop", "deadline"])
def test_a_blocking_completion_is_cut_by_the_stop_flag_or_deadline(flag: str) -> None:
    """complete() waits for a whole reply: the stop flag (client gone) or the turn's deadline closes the
    request's connection while it waits, instead of waiting out the model's 30 s."""
    import threading
    import time

    from footnote.errors import Cancelled, TurnDeadline
    from footnote.models.protocols import Budget

    with ScriptedOpenAIServer([Reply('{"theses": []}', delay_s=30), Reply('{"theses": []}')]) as srv:
        m = _model(srv, timeout_s=60.0, retries=0)
        stop = threading.Event()
        budget = (Budget(stop=stop) if flag == "stop"
                  else Budget(deadline=time.monotonic() + 0.4, turn_timeout_s=0.4))
        if flag == "stop":
            threading.Timer(0.4, stop.set).start()
        t0 = time.monotonic()
        with pytest.raises(Cancelled if flag == "stop" else TurnDeadline):
            m.complete(MSGS, budget=budget)
        took = time.monotonic() - t0
        assert took < 2.0, took
        deadline = time.monotonic() + 2.0
        while not srv.hangups and time.monotonic() < deadline:
            time.sleep(0.02)
        assert srv.hangups and srv.hangups[0][0] == "m1" and srv.hangups[0][1] < 2.0, srv.hangups
        # a later call (no budget) still works, over a fresh connection
        assert json.loads(m.complete(MSGS, budget=Budget(stop=threading.Event()))) == {"theses": []}
        m.close()


# -- choose: a one-word choice weighed by the first token's log-probabilities ---------------------------------


def test_choose_reads_the_first_tokens_log_probabilities() -> None:
    import math

    top = (("no", math.log(0.6)), ("yes", math.log(0.3)), ("No", math.log(0.05)), ("maybe", math.log(0.05)))
    with ScriptedOpenAIServer([Reply("no", top_logprobs=top)]) as srv:
        m = _model(srv, temperature=0.7, max_tokens=800)
        shares = m.choose(MSGS, ("yes", "no"))
        req = srv.requests[0]
    # "No" counts for "no"; "maybe" for neither; the shares are over the options alone
    assert shares == pytest.approx({"yes": 0.3 / 0.95, "no": 0.65 / 0.95})
    assert req["logprobs"] is True and req["top_logprobs"] >= 2
    assert req["max_tokens"] == 1 and req["temperature"] == 0.0  # one token, never sampled
    assert m.calls == 1


def test_choose_without_log_probabilities_takes_the_word_replied() -> None:
    with ScriptedOpenAIServer([Reply(" Yes."), Reply("Perhaps")]) as srv:
        m = _model(srv)
        assert m.choose(MSGS, ("yes", "no")) == {"yes": 1.0, "no": 0.0}
        assert m.choose(MSGS, ("yes", "no")) == {}  # neither word: no opinion


def test_choose_retries_a_5xx_and_names_a_4xx() -> None:
    with ScriptedOpenAIServer([Reply(status=503), Reply("no", top_logprobs=(("no", 0.0),))]) as srv:
        assert _model(srv).choose(MSGS, ("yes", "no")) == {"yes": 0.0, "no": 1.0}
    with ScriptedOpenAIServer([Reply(status=400)]) as srv, pytest.raises(ModelError, match="HTTP 400"):
        _model(srv).choose(MSGS, ("yes", "no"))


def test_the_answer_check_role_is_made_when_configured() -> None:
    with ScriptedOpenAIServer([]) as srv:
        models = make_chat_models(ModelsSettings(answer_check=ChatModelSettings(base_url=srv.base_url, model="m")))
    assert list(models) == ["answer_check"]


def test_choose_survives_what_an_endpoint_should_not_send() -> None:
    """A helper's attack: NaN put "p_yes": NaN into the JSON answer; 1000 overflowed into an HTTP 500; a tokenizer's
    own pieces ("▁Yes") read as neither word, so every answer was declined."""
    import math

    from footnote.models.chat import choice_shares

    assert choice_shares([("yes", math.nan), ("no", -1.0)], "yes", ("yes", "no")) == {"yes": 0.0, "no": 1.0}
    assert choice_shares([("yes", 1000.0), ("no", -1.0)], "yes", ("yes", "no"))["yes"] == pytest.approx(1 / (1 + math.exp(-1)))
    assert choice_shares([("yes", math.inf), ("no", -math.inf)], "", ("yes", "no")) == {"yes": 1.0, "no": 0.0}
    assert choice_shares([("▁Yes", -0.01), ("No", -5.0)], "Yes", ("yes", "no"))["yes"] > 0.99
    assert choice_shares([("ĠYes", -0.01), ("Ġno", -5.0)], "Yes", ("yes", "no"))["yes"] > 0.99
    assert choice_shares([("yes", math.nan)], "no", ("yes", "no")) == {"yes": 0.0, "no": 1.0}  # the word replied


@pytest.mark.parametrize("how", ["status", "malformed", "choose"])
def test_a_key_the_upstream_echoes_is_masked_before_its_text_is_cut(how: str) -> None:
    """A helper's attack: the body was cut (200 or 300 characters) and then masked, so a copy of the key straddling
    the cut was no longer found — and the masked copies before it, shorter, pulled the fragment into the message."""
    key = "Zq7" + "x" * 10 + "SECRETKEYTAIL" + "y" * 16
    body = (key + " ") * 6 + " " * 20 + key
    reply = Reply(status=503, raw=body) if how == "status" else Reply(raw=body)
    with ScriptedOpenAIServer([reply] * 3) as srv:
        m = _model(srv, api_key=key, retries=0)
        with pytest.raises(ModelError) as e:
            if how == "choose":
                m.choose(MSGS, ("yes", "no"))
            else:
                m.complete(MSGS)
    message = str(e.value)
    assert ("HTTP 503" in message) if how == "status" else ("malformed" in message), message
    assert key[:8] not in message and "SECRETKEYTAIL" not in message, message
