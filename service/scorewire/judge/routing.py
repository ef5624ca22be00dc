"""Which judge backends are configured, where they point, and what a check naming a judge
needs before its first call (the preflight's judge half).

A backend slot is `openai` (any OpenAI-compatible endpoint) or `anthropic`. The `openai`
slot can be given over to Gemini's OpenAI-compatible endpoint (a checkllm file's
`judge: {backend: gemini}`): it is then built from the Gemini settings only, named
`gemini` in every message and metric, and never sent OpenAI's key.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from scorewire.judge.answers import NO_JUDGE
from scorewire.judge.models import BACKENDS, DEFAULT_MODELS, ModelRef, parse_model
from scorewire.judge.pricing import PriceTable

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
"""Gemini's OpenAI-compatible endpoint, used unless a base URL is configured."""

NO_BACKEND_SETTING = "SCOREWIRE_OPENAI_API_KEY"
"""The setting named first when no judge backend at all is configured."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One configured backend slot: its name in messages, key and base URL (never logged)."""

    name: str
    """`openai`, `gemini` or `anthropic`: what errors, logs and metrics call it."""
    api_key: str | None
    base_url: str | None


@dataclass(frozen=True, slots=True)
class Hint:
    """What a slot is called and what to set when it is not configured."""

    name: str
    setting: str
    message: str


HINTS: Mapping[str, Hint] = {
    "openai": Hint(
        "openai",
        "SCOREWIRE_OPENAI_API_KEY",
        "set SCOREWIRE_OPENAI_API_KEY (or OPENAI_API_KEY), or SCOREWIRE_OPENAI_BASE_URL for "
        "a local OpenAI-compatible server",
    ),
    "anthropic": Hint(
        "anthropic",
        "SCOREWIRE_ANTHROPIC_API_KEY",
        "set SCOREWIRE_ANTHROPIC_API_KEY (or ANTHROPIC_API_KEY)",
    ),
}
GEMINI_HINT = Hint(
    "gemini",
    "SCOREWIRE_GEMINI_API_KEY",
    "set SCOREWIRE_GEMINI_API_KEY (or GEMINI_API_KEY), or SCOREWIRE_GEMINI_BASE_URL for "
    "another Gemini-compatible endpoint",
)


def _secret(value: Any, *env_names: str, environ: Mapping[str, str]) -> str | None:
    raw = value.get_secret_value() if hasattr(value, "get_secret_value") else value
    if isinstance(raw, str) and raw:
        return raw
    return next((environ[n] for n in env_names if environ.get(n)), None)


def endpoints_from_settings(
    settings: Any, *, gemini: bool = False, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, Endpoint], dict[str, Hint]]:
    """The configured slots and the hints of every slot, from settings and the SDKs' env.

    With `gemini`, the `openai` slot is Gemini's: its key from `SCOREWIRE_GEMINI_API_KEY`,
    `GEMINI_API_KEY` or `GOOGLE_API_KEY`, configured only when a key or an explicit base
    URL is set (a keyless call to Google's endpoint can only fail).
    """
    env = os.environ if environ is None else environ
    slots: dict[str, Endpoint] = {}
    hints = dict(HINTS)
    if gemini:
        hints["openai"] = GEMINI_HINT
        key = _secret(settings.gemini_api_key, "GEMINI_API_KEY", "GOOGLE_API_KEY", environ=env)
        url = _secret(settings.gemini_base_url, "GEMINI_BASE_URL", environ=env)
        if key or url:
            slots["openai"] = Endpoint("gemini", key, url or GEMINI_BASE_URL)
    else:
        key = _secret(settings.openai_api_key, "OPENAI_API_KEY", environ=env)
        url = _secret(settings.openai_base_url, "OPENAI_BASE_URL", environ=env)
        if key or url:
            slots["openai"] = Endpoint("openai", key, url)
    key = _secret(settings.anthropic_api_key, "ANTHROPIC_API_KEY", environ=env)
    if key:
        url = _secret(settings.anthropic_base_url, "ANTHROPIC_BASE_URL", environ=env)
        slots["anthropic"] = Endpoint("anthropic", key, url)
    return slots, hints


def no_judge_message(hints: Mapping[str, Hint]) -> str:
    """Why a judge check cannot run when no backend at all is configured."""
    return f"{NO_JUDGE}: " + "; or ".join(hints[b].message for b in BACKENDS if b in hints)


def not_configured_message(slot: str, hints: Mapping[str, Hint]) -> str:
    """Why a judge check naming `slot` cannot run."""
    hint = hints.get(slot, HINTS.get(slot))
    if hint is None:  # pragma: no cover - parse_model admits only known slots
        return f"the {slot} judge backend is not configured"
    return f"the {hint.name} judge backend is not configured: {hint.message}"


def resolve(
    ref: ModelRef, *, default: ModelRef, configured: Collection[str]
) -> tuple[str | None, str | None]:
    """The slot and model a check naming `ref` is judged by (None where unknown)."""
    auto = next((b for b in BACKENDS if b in configured), None)
    default_slot = default.backend or auto
    slot = ref.backend or default_slot
    if ref.model:
        return slot, ref.model
    if slot is not None and slot == default_slot and default.model:
        return slot, default.model
    if slot is None:
        return None, default.model
    return slot, DEFAULT_MODELS[slot]


def judge_problem(
    model: str,
    *,
    configured: Collection[str],
    default: ModelRef,
    prices: PriceTable,
    hints: Mapping[str, Hint],
    budgeted: bool,
    credentials: bool = True,
) -> tuple[str, str, str] | None:
    """Why a check naming judge `model` (`""` for the default) cannot be judged here, as
    (kind, setting, message), or None when it can.

    - `BACKEND`: no judge backend at all; `CREDENTIALS`: the slot it names has none;
    - `PRICE`: a budgeted run, and the model has no price and unpriced calls are not
      accepted (`SCOREWIRE_JUDGE_ALLOW_UNPRICED`): every call would be refused.
    `credentials=False` (an offline validation) checks prices only.
    """
    try:
        ref = parse_model(model)
    except ValueError:
        return None  # a load error already reported where the model is written
    slot, name = resolve(ref, default=default, configured=configured)
    if credentials:
        if slot is None:
            return "BACKEND", NO_BACKEND_SETTING, no_judge_message(hints)
        if slot not in configured:
            hint = hints.get(slot, HINTS[slot])
            return "CREDENTIALS", hint.setting, not_configured_message(slot, hints)
    if budgeted and name is not None:
        refusal = prices.unpriced_refusal(name)
        if refusal is not None:
            return "PRICE", "SCOREWIRE_JUDGE_PRICES", refusal
    return None
