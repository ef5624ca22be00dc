"""The one small interface every judge backend implements, and its error type.

A backend makes exactly one HTTP attempt per `complete` call: retries, backoff,
concurrency limits and deadlines belong to the caller (`scorewire.judge.calls`), so
the SDKs' own retries are switched off.

Nothing a backend raises carries text from the provider's error body: such messages
can echo parts of credentials ("Incorrect API key provided: sk-…"). Errors say the
HTTP status and the provider's short error type/code only, and even those pass through
`scorewire.core.secrets.scrub` (a hostile upstream can put a key in its `code`).

Both SDKs send through their aiohttp transport (`DefaultAioHttpClient`, the SDKs' own
opt-in), not their default httpx/httpcore one: per judge call at concurrency 32 the
httpcore pool re-checks every idle connection (a `poll` and a socket-attributes lookup
each) on every request, and that bookkeeping with httpcore's pure-Python HTTP/1.1 was
about a third of the scoring process's CPU (`bench/judge_profile.py`); aiohttp's pool
and C parser cost a fraction of it. Requests, errors and responses are still the SDKs'.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import httpx2
from scorewire.core.secrets import scrub
from scorewire.judge.prompts import Prompt


@dataclass(frozen=True, slots=True)
class Completion:
    """One answer from a judge model."""

    text: str
    """The answer's text (empty when the model refused)."""
    input_tokens: int | None
    """Prompt tokens billed, or None when the server did not say."""
    output_tokens: int | None
    """Completion tokens billed, or None when the server did not say."""
    refusal: str | None = None
    """The model's refusal message, when it declined to answer."""
    truncated: bool = False
    """True when the answer stopped at max_tokens."""
    model: str = ""
    """The model the provider says answered (the response's `model`, such as
    `gpt-4o-mini-2024-07-18`); empty when it did not say. A provider that silently
    updates a model shows here first (`scorewire.runs.drift`)."""


MAX_MODEL_CHARS = 128
"""Longest reported model name kept; a longer one is cut (it becomes a metric label)."""


def reported_model(value: object) -> str:
    """The provider's `model` field as kept: scrubbed, printable, at most MAX_MODEL_CHARS;
    empty when it is not a string."""
    if not isinstance(value, str):
        return ""
    text = "".join(ch for ch in scrub(value) if ch.isprintable())
    return text[:MAX_MODEL_CHARS]


class BackendError(Exception):
    """A judge HTTP attempt that produced no answer."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        message = scrub(message)
        super().__init__(message)
        self.message = message
        """Safe to show: status and error type only, never the provider's message (scrubbed)."""
        self.retryable = retryable
        """True for 408/409/429/5xx, timeouts and dropped connections."""
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After / retry-after-ms), if any."""
        self.status = status
        """The HTTP status, when there was a response."""


class JudgeBackend(Protocol):
    """A chat endpoint that answers one prompt."""

    name: str
    """The backend's name in `backend:model` (`openai`, `anthropic`)."""

    async def complete(
        self,
        prompt: Prompt,
        *,
        model: str,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Completion:
        """Make one attempt; raise BackendError when it produced no answer."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP client."""
        ...


def dropped(err: BaseException) -> bool:
    """Whether an SDK timeout error is really a dropped or refused connection.

    The SDKs' aiohttp transport maps every aiohttp connection error that is not a
    connect failure (the server closing the connection mid-request among them) to a
    connect *timeout*; httpx reported those as connection errors. This restores the
    distinction so that the reason says what happened ("could not reach", not "timed
    out"); both are retried alike.
    """
    import aiohttp

    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, aiohttp.ServerTimeoutError | TimeoutError):
            return False
        if isinstance(cause, aiohttp.ClientConnectionError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def http_limits(connections: int) -> httpx2.Limits:
    """Connection limits for a backend's HTTP client that allow `connections` requests
    at once (the judge concurrency): a pool smaller than that would queue calls behind
    the concurrency limit, and the SDKs' default (1,000) is below the highest setting."""
    n = max(1, connections)
    return httpx2.Limits(max_connections=n, max_keepalive_connections=n)


RETRYABLE_STATUS = frozenset({408, 409, 429})


def is_retryable_status(status: int) -> bool:
    """429, 408, 409 and every 5xx are worth retrying; other 4xx are not."""
    return status in RETRYABLE_STATUS or status >= 500


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


_SAFE_TOKEN = re.compile(r"[^A-Za-z0-9_.\-]")


def safe_error_detail(body: object) -> str:
    """The provider's error `type`/`code` (short identifiers only), never its message."""
    if not isinstance(body, Mapping):
        return ""
    parts = []
    for key in ("type", "code"):
        value = body.get(key)
        if isinstance(value, str) and value:
            parts.append(_SAFE_TOKEN.sub("", value)[:48])
    return "/".join(p for p in parts if p)


def status_error(
    backend: str, status: int, body: object, headers: Mapping[str, str]
) -> BackendError:
    """The BackendError for an HTTP error response."""
    detail = safe_error_detail(body)
    what = f"the {backend} judge answered HTTP {status}" + (f" ({detail})" if detail else "")
    return BackendError(
        what,
        retryable=is_retryable_status(status),
        retry_after=parse_retry_after(headers),
        status=status,
    )


def mentions(body: object, *words: str) -> bool:
    """Whether the provider's error body names one of `words` (for feature fallbacks)."""
    if not isinstance(body, Mapping):
        return False
    text = " ".join(str(body.get(k, "")) for k in ("param", "message", "code")).lower()
    return any(w in text for w in words)
