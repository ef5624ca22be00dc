"""One scrubber for every text that came from upstream: no credential leaves in it.

Providers echo credentials in what they send back ("Incorrect API key provided: sk-…"),
and a hostile or broken upstream can put anything anywhere: in an error body's `code`,
in a refusal, in a verdict's reasoning. Every backend, provider and embeddings error
path, and the judge's answers, pass through `scrub` before they reach a reason, an
error or a log line; `ScrubbingFilter` does the same for log records.

Two things are removed:
- the configured keys, which every client that holds one registers (`register`) when it
  is built, and any run of characters sharing 11 or more consecutive characters with one
  (partial echoes such as a key's first or last part around a mask; shorter shared runs,
  down to 8, are caught once a longer one was seen in the same text);
- common key shapes whoever they belong to: `sk-…` (OpenAI, `sk-ant-…` Anthropic,
  `sk-proj-…`), Google's `AIza…`, bearer tokens and `x-api-key` values.

The registry is process-wide on purpose: a secret known to one client must be scrubbed
from every text, whichever client or log line it reaches.
"""

from __future__ import annotations

import logging
import re
import threading

REDACTED = "[redacted]"
"""What a scrubbed secret is replaced with."""

_MIN_FRAGMENT = 8
"""Shortest run of a configured key's characters that is scrubbed on its own."""
_MIN_KEY = 6
"""Shortest configured key that is scrubbed (whole); fragments only of longer ones."""

# Each shape with a cheap test (a substring of the lowercased text) that must pass
# before its regular expression runs: most texts contain none, and then cost a few
# substring searches instead of a scan with a pattern per position.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"(?i:\bbearer\s+)[^\s\"',;]+")),  # Authorization: Bearer <token>
    ("x-api-key", re.compile(r"(?i:\bx-api-key[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]+")),
    ("sk-", re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")),  # OpenAI, Anthropic (sk-ant-), sk-proj-
    ("aiza", re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}")),  # Google API keys
)
# Runs of the characters keys are made of: candidates for a configured key's fragment.
_RUN = re.compile(r"[A-Za-z0-9_\-.~+/=]{" + str(_MIN_FRAGMENT) + ",}")

_lock = threading.Lock()
_keys: frozenset[str] = frozenset()
_grams: frozenset[str] = frozenset()
"""Every run of `_MIN_FRAGMENT` characters of a configured key."""
_probes: tuple[str, ...] = ()
"""The grams at every `_PROBE_STRIDE`-th offset of each key: a text containing none of
them contains no fragment of `_MIN_FRAGMENT + _PROBE_STRIDE - 1` characters or more, so
most texts are cleared by a few substring searches instead of a look at every run."""
_PROBE_STRIDE = 4


def register(*secrets: str | None) -> None:
    """Remember configured credentials so that `scrub` removes them (and their fragments)."""
    global _keys, _grams, _probes
    # Shorter strings would scrub ordinary words; no real key is that short.
    new = {s for s in secrets if s and len(s) >= _MIN_KEY and s != "unused"}
    if not new or new <= _keys:
        return
    with _lock:
        keys = _keys | new
        grams = {k[i : i + _MIN_FRAGMENT] for k in keys for i in range(len(k) - _MIN_FRAGMENT + 1)}
        probes = {
            k[i : i + _MIN_FRAGMENT]
            for k in keys
            for i in [*range(0, len(k) - _MIN_FRAGMENT + 1, _PROBE_STRIDE), len(k) - _MIN_FRAGMENT]
            if i >= 0
        }
        _keys, _grams, _probes = keys, frozenset(grams), tuple(probes)


_LABEL = re.compile(r"(?i)(bearer\s+|x-api-key[\"']?\s*[:=]\s*[\"']?)")


def _shape(match: re.Match[str]) -> str:
    # keep a label ("Bearer ", "x-api-key: "), drop its value
    label = _LABEL.match(match.group(0))
    return (label.group(0) if label else "") + REDACTED


def _fragment(match: re.Match[str]) -> str:
    # A run sharing any 8 consecutive characters with a configured key goes entirely:
    # partial echoes ("sk-abc…wxyz", a key glued to other text) are still secrets.
    run, grams = match.group(0), _grams
    for i in range(len(run) - _MIN_FRAGMENT + 1):
        if run[i : i + _MIN_FRAGMENT] in grams:
            return REDACTED
    return run


def scrub(text: str) -> str:
    """`text` without configured keys, their fragments, or anything shaped like a key."""
    if not text:
        return text
    keys = _keys
    if keys:
        for key in keys:
            if key in text:
                text = text.replace(key, REDACTED)
        if any(probe in text for probe in _probes):
            text = _RUN.sub(_fragment, text)
    lowered = text.lower()
    for marker, pattern in _SHAPES:
        if marker in lowered:
            text = pattern.sub(_shape, text)
    return text


class ScrubbingFilter(logging.Filter):
    """A logging filter that scrubs each record's formatted message (install on handlers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the record's message with its scrubbed form; never drops a record."""
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not format: leave it to logging
            return True
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True


def install_log_scrubbing(logger: logging.Logger | None = None) -> None:
    """Add a `ScrubbingFilter` to every handler of `logger` (default: the root logger)."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, ScrubbingFilter) for f in handler.filters):
            handler.addFilter(ScrubbingFilter())
