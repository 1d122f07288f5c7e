"""Secrets never leave the process: masking of store URLs, model endpoints and upstream text."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from footnote.errors import StoreError
from footnote.redact import RedactingFilter, mask_url, redact, settings_secrets
from footnote.settings import load_settings
from footnote.store import open_store

PW = "s3cret-Pa55"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://me:{PW}@db:5432/footnote", "postgresql://me:***@db:5432/footnote"),
        (f"postgresql://me@db/footnote?password={PW}&sslmode=require",
         "postgresql://me@db/footnote?password=***&sslmode=require"),
        (f"postgresql:///footnote?host=/run/pg&sslpassword={PW}", "postgresql:///footnote?host=/run/pg&sslpassword=***"),
        (f"host=db user=me password={PW} dbname=footnote", "host=db user=me password=*** dbname=footnote"),
        (f"host=db password='{PW} x' dbname=footnote", "host=db password=*** dbname=footnote"),
        (f"https://proxy:{PW}@llm.example/v1", "https://proxy:***@llm.example/v1"),
        (f"https://llm.example/v1?api_key={PW}", "https://llm.example/v1?api_key=***"),
        ("postgresql://me@db/footnote", "postgresql://me@db/footnote"),
        ("/var/lib/footnote/store.db", "/var/lib/footnote/store.db"),
    ],
)
def test_mask_url_in_every_form(url: str, shown: str) -> None:
    assert mask_url(url) == shown and PW not in mask_url(url)


def test_redact_free_text() -> None:
    text = (f'HTTP 401: {{"error": "bad key sk-live-{PW}", "api_key": "{PW}"}} at postgresql://u:{PW}@h/db '
            f"Authorization: Bearer abc{PW} password={PW}")
    out = redact(text, [PW])
    assert PW not in out and "HTTP 401" in out and "postgresql://u:***@h/db" in out


def test_libpq_string_is_rejected_not_taken_as_a_sqlite_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError) as e:
        open_store(f"host=localhost user=me password={PW} dbname=footnote")
    assert PW not in e.value.message and "postgresql://" in e.value.message
    assert list(tmp_path.iterdir()) == []  # no file named after the password


def test_settings_secrets_and_log_filter(caplog: pytest.LogCaptureFixture) -> None:
    s = load_settings(None, **{"store.url": f"postgresql://me:{PW}@db/x", "models.planner.api_key": "sk-abcdefgh12",
                               "models.planner.base_url": "http://u:proxy-pass@h/v1", "models.planner.model": "m"})
    assert {PW, "sk-abcdefgh12", "proxy-pass"} <= set(settings_secrets(s))
    logger = logging.getLogger("footnote.test.redact")
    logger.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO, logger="footnote.test.redact"):
        logger.info("POST %s", f"http://u:{PW}@h/v1/chat/completions")
    assert PW not in caplog.text and "u:***@h" in caplog.text


def test_mask_url_hide_user_drops_the_user_name_too() -> None:
    # a model endpoint's basic-auth user name is itself a credential: it goes with the password
    assert mask_url("https://alice:s3cret@h:8080/v1?api_key=k", hide_user=True) == "https://***@h:8080/v1?api_key=***"
    assert mask_url("https://alice@h/v1", hide_user=True) == "https://***@h/v1"
    assert mask_url("https://alice:s3cret@h/v1") == "https://alice:***@h/v1"
