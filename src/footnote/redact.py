"""Secrets never leave the process: masking for store URLs, model endpoints and upstream error text.

- :func:`mask_url` — a URL or connection string as it may be shown: the password of ``user:pass@``,
  any secret-named query parameter (``?password=``, ``sslpassword``, ``api_key``, ``token``…) and any
  secret-named ``key=value`` pair of a libpq connection string (``host=db password=s3cret``) become
  ``***``.
- :func:`redact` — free text (an upstream error body, an exception message): every URL in it masked as
  above, ``Authorization: Bearer …`` values, ``sk-…``-style keys, ``"api_key": "…"`` JSON fields, and
  every known secret passed in are replaced by ``***``.

Used where text crosses the process edge: ``/api/status``, error responses, log lines built from model
or store errors, and ``trace.degraded``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

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


def mask_url(url: str) -> str:
    """``url`` with its credentials masked (see the module docstring). Never raises."""
    if not url:
        return url
    if "://" not in url:
        return _KV.sub(lambda m: m.group("k") + m.group("eq") + MASK, url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{host}" if ":" in userinfo else f"{userinfo}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = "&".join(
            f"{quote(k, safe='')}={MASK if k.lower() in SECRET_KEYS else quote(v, safe='')}" for k, v in pairs
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Free text with URLs masked, tokens and known ``secrets`` replaced by ``***``."""
    if not text:
        return text
    out = text
    for s in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        out = out.replace(s, MASK)
    out = _URL.sub(lambda m: mask_url(m.group(0)), out)
    out = _USERINFO.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:{MASK}@", out)
    out = _JSON_SECRET.sub(lambda m: m.group("k") + f'"{MASK}"', out)
    out = _KV.sub(lambda m: m.group("k") + m.group("eq") + MASK, out)
    out = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", out)
    return _SK.sub(MASK, out)
