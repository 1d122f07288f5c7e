"""Secrets never leave the process: masking for store URLs, model endpoints and upstream error text.

- :func:`mask_url` — a URL or connection string as it may be shown: the password of ``user:pass@``,
  any secret-named query parameter (``?password=``, ``sslpassword``, ``api_key``, ``token``…) and any
  secret-named ``key=value`` pair of a libpq connection string (``host=db password=s3cret``) become
  ``***``. A URL that does not parse (``http://x@[::1``) is masked by pattern.
- :func:`redact` — free text (an upstream error body, an exception message): every URL in it masked as
  above, ``Authorization: Bearer …`` values, ``sk-…``-style keys, ``"api_key": "…"`` JSON fields, and
  every known secret passed in — as is, URL-encoded or base64-encoded; a URL passed as a secret brings
  its password — are replaced by ``***``.

Used where text crosses the process edge: ``/api/status``, error responses, log lines built from model
or store errors, and ``trace.degraded``.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus, unquote, urlsplit

if TYPE_CHECKING:
    from footnote.settings import Settings

MASK = "***"
SECRET_KEYS = frozenset({
    "password", "passwd", "pass", "pwd", "sslpassword", "secret", "client_secret", "token", "access_token",
    "refresh_token", "api_key", "apikey", "key", "auth", "authorization", "sig", "signature",
})
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][\w+.-]*://)(?P<user>[^:/?#@\s]*):(?P<pw>[^@/?#\s]*)@")
_URL = re.compile(r"[A-Za-z][\w+.-]*://[^\s\"'<>]+")
_KV = re.compile(
    r"(?P<k>\b(?:" + "|".join(sorted(SECRET_KEYS, key=len, reverse=True)) + r"))(?P<eq>\s*=\s*)"
    r"(?P<v>'(?:[^'\\]|\\.)*'|[^\s&;,'\"]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}")
_SK = re.compile(r"\b(sk|pk|rk|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{8,}")
_JSON_SECRET = re.compile(
    r"(?P<k>\"(?:" + "|".join(sorted(SECRET_KEYS, key=len, reverse=True)) + r")\"\s*:\s*)\"[^\"]*\"", re.IGNORECASE
)


def looks_like_libpq(text: str) -> bool:
    """``host=db user=me password=x dbname=y``: libpq's key=value connection string form."""
    pairs = re.findall(r"(?:^|\s)([a-z_]+)\s*=", text.strip())
    return bool(pairs) and "://" not in text and any(
        p in {"host", "hostaddr", "dbname", "user", "password", "port", "sslmode", "service", "passfile"} for p in pairs
    )


def mask_url(url: str, *, hide_user: bool = False) -> str:
    """``url`` with its credentials masked (see the module docstring). Never raises. ``hide_user``: the
    user name goes too (``https://***@host``), for endpoints whose user name is itself a credential
    (basic auth in a model ``base_url``)."""
    if not url:
        return url
    if "://" not in url:
        return _KV.sub(lambda m: m.group("k") + m.group("eq") + MASK, url)
    try:
        parts = urlsplit(url)
    except ValueError:  # "http://x@[::1": not parsable, masked by pattern (never through redact: it calls us)
        return _mask_unparsable(url, hide_user=hide_user)
    if not parts.scheme or not parts.netloc:  # "://u:p@h", "x+:/://u:p@h": nothing parsed as the user info
        return _mask_unparsable(url, hide_user=hide_user)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        if hide_user:
            netloc = f"{MASK}@{host}"
        else:
            netloc = f"{user}:{MASK}@{host}" if ":" in userinfo else f"{userinfo}@{host}"
    query = re.sub(
        r"(?P<k>(?:^|&)[^=&]+)=(?P<v>[^&]*)",
        lambda m: f"{m.group('k')}={MASK}" if m.group("k").lstrip("&").lower() in SECRET_KEYS else m.group(0),
        parts.query,
    )
    out = f"{parts.scheme}://{netloc}{parts.path}"
    if query:
        out += "?" + query
    if parts.fragment:
        out += "#" + parts.fragment
    return out


def _mask_unparsable(url: str, *, hide_user: bool) -> str:
    """A URL :func:`urllib.parse.urlsplit` refuses (an unclosed ``[`` of an IPv6 host): everything up to
    the last ``@`` is taken as the user info (masked as :func:`mask_url` would), secret-named ``k=v``
    pairs after it are masked."""
    scheme, rest = url.split("://", 1)
    if "@" in rest:
        userinfo, host = rest.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        if hide_user or any(c in user for c in "/?#"):
            rest = f"{MASK}@{host}"
        else:
            rest = f"{user}:{MASK}@{host}" if ":" in userinfo else f"{userinfo}@{host}"
    return _KV.sub(lambda m: m.group("k") + m.group("eq") + MASK, f"{scheme}://{rest}")


def _b64_cores(secret: bytes) -> set[str]:
    """The base64 text that ``secret`` becomes wherever it sits in an encoded string: for each of the three
    byte alignments, the characters that depend on the secret's bytes only (an echoed ``Basic`` header,
    ``user:key`` encoded, a key in a base64 blob)."""
    out: set[str] = set()
    n = len(secret)
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + secret).decode("ascii")
        core = enc[-(-8 * pad // 6) : (8 * (pad + n)) // 6]
        if len(core) >= 5:
            out |= {core, core.replace("+", "-").replace("/", "_")}
    return out


def secret_forms(secret: str) -> set[str]:
    """``secret`` as it may be echoed: as is, URL-encoded (``quote``, ``quote_plus``), base64 (standard and
    URL-safe, at any alignment); a URL (a model's ``base_url``) adds its password in each of these forms."""
    forms: set[str] = set()
    if not secret:
        return forms
    raw = [secret]
    if "://" in secret:
        try:
            pw = urlsplit(secret).password
        except ValueError:
            pw = None
        if pw:
            raw += [pw, unquote(pw)]
    for s in raw:
        if len(s) < 4:
            continue
        forms |= {s, quote(s, safe=""), quote_plus(s), *_b64_cores(s.encode("utf-8", "surrogatepass"))}
    return {f for f in forms if len(f) >= 4}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Free text with URLs masked, tokens and known ``secrets`` (in each of their :func:`secret_forms`)
    replaced by ``***``. Never raises, never recurses."""
    if not text:
        return text
    out = text
    forms: set[str] = set()
    for secret in secrets:
        if secret and len(secret) >= 4:
            forms |= secret_forms(secret)
    for s in sorted(forms, key=len, reverse=True):
        out = out.replace(s, MASK)
    out = _URL.sub(lambda m: mask_url(m.group(0)), out)
    out = _USERINFO.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:{MASK}@", out)
    out = _JSON_SECRET.sub(lambda m: m.group("k") + f'"{MASK}"', out)
    out = _KV.sub(lambda m: m.group("k") + m.group("eq") + MASK, out)
    out = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", out)
    return _SK.sub(MASK, out)


def settings_secrets(settings: Settings) -> tuple[str, ...]:
    """Every secret the settings hold: API keys, the server key, passwords in the store URL and in model
    base_urls (to be replaced wherever they would otherwise be echoed)."""
    out: list[str] = [settings.server.api_key, settings.retrieve.rerank.api_key, settings.embedder.openai.api_key]
    urls = [settings.store.url, settings.retrieve.rerank.url, *settings.embedder.openai.base_url]
    for role in ("router", "planner", "synthesizer", "fallback", "answer_check", "judge"):
        m = getattr(settings.models, role)
        out.append(m.api_key)
        urls.append(m.base_url)
    for u in urls:
        if not u:
            continue
        try:
            parts = urlsplit(u)
            if parts.password:
                out.append(parts.password)
        except ValueError:
            pass
        out += [m.group("v").strip("'") for m in _KV.finditer(u.split("?", 1)[-1].replace("&", " "))]
    return tuple(s for s in out if s and len(s) >= 4)


def redact_tree(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string redacted."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: redact_tree(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_tree(v, secrets) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in the formatted message (installed on the loggers of the
    HTTP libraries, which log full request URLs: ``http://user:pass@host/...``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, ()
        return True


def install_log_filters(names: Iterable[str] = ("httpx", "httpcore", "uvicorn.error", "uvicorn.access")) -> None:
    """Mask secrets in the records of these loggers (idempotent)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
