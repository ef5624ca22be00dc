"""Dollars as people read them: the CLI's tables and the viewer's pages say the same."""

from __future__ import annotations

import math

DECIMALS = 4
"""Decimals of an amount of a cent or more, and of zero."""
SMALL = 0.01
"""Below a cent, four decimals would keep fewer than two significant digits."""
MOST_DECIMALS = 12
"""Decimals of the smallest amounts shown (a billionth of a cent is still not zero)."""


def usd(amount: float) -> str:
    """`$0.0123`: four decimals, or as many as keep two significant digits of a smaller
    amount (`$0.00014`, never `$0.0000` for what was spent), up to twelve."""
    size = abs(amount)
    if size == 0 or not math.isfinite(size) or size >= SMALL:
        return f"${amount:.{DECIMALS}f}"
    decimals = max(DECIMALS, min(MOST_DECIMALS, 1 - math.floor(math.log10(size))))
    return f"${amount:.{decimals}f}"
