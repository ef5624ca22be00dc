"""Dollars as the CLI and the viewer show them (`scorewire.core.money.usd`)."""

from __future__ import annotations

import pytest
from scorewire.cli.run_output import money
from scorewire.core.money import usd
from scorewire.viewer.render import _money


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (0.0, "$0.0000"),  # nothing spent: as before
        (12.3456, "$12.3456"),  # a cent or more: four decimals
        (0.01, "$0.0100"),
        (0.0099, "$0.0099"),  # under a cent: two significant digits
        (0.000144, "$0.00014"),  # one judge call: it read "$0.0000"
        (0.0001, "$0.00010"),
        (1.5e-9, "$0.0000000015"),
        (1e-20, "$0.000000000000"),  # past twelve decimals: the cap
    ],
)
def test_an_amount_keeps_its_significant_digits(amount: float, shown: str) -> None:
    assert usd(amount) == shown


def test_the_cli_and_the_viewer_say_the_same() -> None:
    for amount in (0.0, 0.000144, 3.5):
        assert money(amount) == _money(amount) == usd(amount)
