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


# --- issue 44 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://x@[::1", "postgresql://bob:pw-secret@[::1:8829/db", "https://a:b@[zz/x?token=t1234"])
def test_a_url_that_does_not_parse_is_masked_without_recursion(url: str) -> None:
    shown = mask_url(url)  # the old code went mask_url -> urlsplit's ValueError -> redact -> mask_url -> ...
    assert "pw-secret" not in shown and "t1234" not in shown
    assert redact(f"no conversation {url!r}").startswith("no conversation")
    assert "pw-secret" not in redact(f"at {url} here") and "pw-secret" not in mask_url(url, hide_user=True)


def test_every_encoding_of_a_secret_is_masked() -> None:
    import base64
    from urllib.parse import quote

    key = "k3y/with+odd=chars"
    for prefix in (b"", b"a", b"ab", b"user:"):  # each alignment of the key inside a base64 blob
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            blob = enc(prefix + key.encode() + b"!").decode()
            out = redact(f"echo {blob}", [key])
            assert "***" in out and len(out) < len(f"echo {blob}") - 10, (prefix, out)
    assert redact(f"sent {quote(key, safe='')}", [key]) == "sent ***"
    # a URL given as a secret brings its password (a model base_url's)
    assert redact("upstream said PW-0123456", ["http://alice:PW-0123456@h/v1"]) == "upstream said ***"


@pytest.mark.parametrize("url", ["postgresql://bob:pw-secret@[::1:8829/db", "postgresql://a:pw-secret@h:99999/db",
                                 "sqlite://u:pw-secret@x/y", "ftp://u:pw-secret@x/y"])
def test_a_malformed_store_url_exits_2_with_the_reason(url: str) -> None:
    from click.testing import CliRunner

    from footnote.cli import main

    r = CliRunner().invoke(main, ["status", "--store", url])
    assert r.exit_code == 2, r.output
    assert "pw-secret" not in r.output and "Traceback" not in r.output and "URL" in r.output
