"""What a judge call costs: tokens from the response times a per-model price table.

Prices are USD per 1M input and output tokens. A model that is in neither the built-in
table nor the settings' overrides is *unpriced*: its calls cost 0 in the totals and the
score says `unpriced`, because a guessed price is worse than a visible gap.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


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
    """Looks up a model's price: settings overrides first, then the built-in table."""

    def __init__(self, overrides: Mapping[str, tuple[float, float]] | None = None) -> None:
        self._exact: dict[str, Price] = {}
        self._normal: dict[str, Price] = {}
        for name, price in BUILTIN_PRICES.items():
            self._add(name, price)
        for name, (inp, out) in (overrides or {}).items():
            self._add(name, Price(float(inp), float(out)))

    def _add(self, name: str, price: Price) -> None:
        self._exact[name] = price
        self._normal[_normalise(name)] = price

    def price(self, model: str) -> Price | None:
        """The price of `model`, or None when it is unpriced."""
        found = self._exact.get(model)
        if found is not None:
            return found
        return self._normal.get(_normalise(model))

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Dollars for one call, or None when the model is unpriced."""
        price = self.price(model)
        return None if price is None else price.cost(input_tokens, output_tokens)
