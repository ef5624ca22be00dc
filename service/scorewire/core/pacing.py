"""Long Python loops on the event loop, in slices: other requests run between them.

A loop over a hundred thousand items holds the event loop, and so every other caller of
the process, for as long as it runs. One that awaits `pacer.tick()` per item gives the
loop back whenever `slice_s` has passed since it last did, so it holds it for about one
slice (plus one item) at a time. The clock is read per item (tens of nanoseconds), which
suits items of very different cost better than a count would.
"""

from __future__ import annotations

import asyncio
import time

SLICE_S = 0.002
"""How long a paced loop keeps the event loop before letting others run. A task that
yields goes to the back of the ready queue, but timers that fell due meanwhile join it
behind that task, so another caller may wait two slices: 2 ms keeps that, with the
loop's own work, well within the 10 ms any one request may hold it."""


class Pacer:
    """Yields to the event loop once `slice_s` has passed since the last yield."""

    __slots__ = ("_slice_s", "_until")

    def __init__(self, slice_s: float = SLICE_S) -> None:
        self._slice_s = slice_s
        self._until = time.perf_counter() + slice_s

    async def tick(self) -> None:
        """Let other tasks run when this slice is used up; otherwise return at once."""
        if time.perf_counter() >= self._until:
            await asyncio.sleep(0)
            self._until = time.perf_counter() + self._slice_s
