"""What a judge call costs: tokens from the response times a per-model price table.

Prices are USD per 1M input and output tokens. A model that is in neither the built-in
table nor the settings' overrides is *unpriced*: its calls cost 0 in the totals and the
score says `unpriced`, because a guessed price is worse than a visible gap. An operator
may name a fallback price for such models (`SCOREWIRE_JUDGE_FALLBACK_PRICE`), which then
prices them like any other.

A budget can only hold a call it can price, so a *budgeted* call to an unpriced model is
refused (`unpriced_refusal`) unless the operator set a fallback price or allowed
unpriced calls (`SCOREWIRE_JUDGE_ALLOW_UNPRICED`). Before a budgeted call, its worst
case (`Price.ceiling`: every prompt byte a token, plus `PROMPT_OVERHEAD_TOKENS`, and
all of `max_tokens`) is reserved; the usage the upstream reports afterwards must fit
inside those bounds (`usage_problem`), or it is an error, never a refund.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROMPT_OVERHEAD_TOKENS = 512
"""Tokens a chat request may bill beyond its text: role and message markers, the
provider's own framing of a system prompt or a response schema."""

PRICES_SETTING = "SCOREWIRE_JUDGE_PRICES"
"""The setting that prices a model (named in refusals)."""


def prompt_token_bound(*parts: str | Mapping[str, Any] | None) -> int:
    """Most tokens these prompt parts can be billed as: one per UTF-8 byte, plus overhead.

    Byte-level BPE tokenizers (OpenAI's, Anthropic's, Llama's) never make a token of
    less than one byte, so the byte count bounds the token count; a JSON schema sent as
    a response format counts as its serialised bytes.
    """
    total = PROMPT_OVERHEAD_TOKENS
    for part in parts:
        if part is None:
            continue
        text = part if isinstance(part, str) else json.dumps(part, separators=(",", ":"))
        total += len(text.encode("utf-8", "surrogatepass"))
    return total


def usage_problem(
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    prompt_bound: int,
    max_tokens: int | None,
) -> str | None:
    """Why reported usage cannot be true (negative, or beyond what the call allowed), or None.

    `max_tokens=None` means the call set no completion limit (only the sign is checked).
    """
    for name, value in (("prompt_tokens", input_tokens), ("completion_tokens", output_tokens)):
        if value is not None and value < 0:
            return f"the upstream reported {name}={value}, a negative token count"
    if input_tokens is not None and input_tokens > prompt_bound:
        return (
            f"the upstream reported prompt_tokens={input_tokens}, more than this prompt "
            f"can be ({prompt_bound})"
        )
    if output_tokens is not None and max_tokens is not None and output_tokens > max_tokens:
        return (
            f"the upstream reported completion_tokens={output_tokens}, more than the "
            f"call's max_tokens ({max_tokens})"
        )
    return None


@dataclass(frozen=True, slots=True)
class Price:
    """USD per 1M tokens."""

    input_per_m: float
    """Price of 1M prompt tokens."""
    output_per_m: float
    """Price of 1M completion tokens."""

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Dollars for one call with these token counts."""
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1e6

    def ceiling(self, prompt_bound: int, max_tokens: int) -> float:
        """The most one call can cost: `prompt_bound` input and `max_tokens` output tokens."""
        return self.cost(prompt_bound, max_tokens)


# Vendors' published list prices (standard tier, no batch or cache discounts) as of 2025.
# They drift: override any entry with SCOREWIRE_JUDGE_PRICES rather than editing here.
BUILTIN_PRICES: Mapping[str, Price] = {
    # OpenAI
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4-turbo": Price(10.00, 30.00),
    "gpt-3.5-turbo": Price(0.50, 1.50),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "o1": Price(15.00, 60.00),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    # Anthropic
    "claude-3-haiku": Price(0.25, 1.25),
    "claude-3-opus": Price(15.00, 75.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-sonnet-4-5": Price(3.00, 15.00),
    "claude-opus-4": Price(15.00, 75.00),
    "claude-opus-4-1": Price(15.00, 75.00),
    "claude-opus-4-5": Price(5.00, 25.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
    # Google Gemini (through its OpenAI-compatible endpoint)
    "gemini-1.5-flash": Price(0.075, 0.30),
    "gemini-1.5-pro": Price(1.25, 5.00),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gemini-2.0-flash-lite": Price(0.075, 0.30),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.5-pro": Price(1.25, 10.00),
}

# Only suffixes that name a snapshot of the same model are stripped: a dated release
# (`-2024-07-18`, `-20241022`) or the moving `-latest` alias. Anything else
# (`gpt-4o-audio-preview`) is a different model and stays unpriced.
_SNAPSHOT = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")


def _normalise(model: str) -> str:
    name = model.strip().lower()
    name = name.removeprefix("models/")  # Gemini's OpenAI endpoint accepts `models/...`
    return _SNAPSHOT.sub("", name)


class PriceTable:
    """Looks up a model's price: settings overrides first, then the built-in table, then
    the fallback price (when one is set)."""

    def __init__(
        self,
        overrides: Mapping[str, tuple[float, float]] | None = None,
        *,
        fallback: tuple[float, float] | None = None,
        allow_unpriced: bool = False,
    ) -> None:
        self._exact: dict[str, Price] = {}
        self._normal: dict[str, Price] = {}
        for name, price in BUILTIN_PRICES.items():
            self._add(name, price)
        for name, (inp, out) in (overrides or {}).items():
            self._add(name, Price(float(inp), float(out)))
        self.fallback = None if fallback is None else Price(float(fallback[0]), float(fallback[1]))
        """The price of models in neither table, or None (they are unpriced)."""
        self.allow_unpriced = allow_unpriced
        """Whether budgeted calls to unpriced models may run (their cost uncounted)."""

    @classmethod
    def from_settings(cls, settings: Any) -> PriceTable:
        """The table the settings describe (`judge_prices`, `judge_fallback_price`,
        `judge_allow_unpriced`)."""
        return cls(
            settings.judge_prices,
            fallback=settings.judge_fallback_price,
            allow_unpriced=settings.judge_allow_unpriced,
        )

    def unpriced_refusal(self, model: str, what: str = "judge") -> str | None:
        """Why a budgeted call to `model` may not run (it has no price), or None when it may."""
        if self.allow_unpriced or self.price(model) is not None:
            return None
        return (
            f"the {what} model {model!r} has no known price, so a budget cannot hold its "
            f"calls: price it in {PRICES_SETTING} (or set SCOREWIRE_JUDGE_FALLBACK_PRICE, "
            "or SCOREWIRE_JUDGE_ALLOW_UNPRICED=true to run unpriced calls uncounted)"
        )

    def _add(self, name: str, price: Price) -> None:
        self._exact[name] = price
        self._normal[_normalise(name)] = price

    def price(self, model: str) -> Price | None:
        """The price of `model` (the fallback for unknown ones), or None when it is unpriced."""
        found = self._exact.get(model)
        if found is not None:
            return found
        found = self._normal.get(_normalise(model))
        return found if found is not None else self.fallback

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Dollars for one call, or None when the model is unpriced."""
        price = self.price(model)
        return None if price is None else price.cost(input_tokens, output_tokens)
