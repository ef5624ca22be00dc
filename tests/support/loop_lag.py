"""A loop-lag probe: how long anything held an event loop, measured from inside it.

    probe = LoopLagProbe()
    task = asyncio.create_task(probe.run())
    ...  # the work under study, on the same loop
    print(probe.read())  # and start a new window
    task.cancel()

A task sleeps 1 ms over and over and records how late each wake-up was: the longest
lateness is the longest stretch the loop could not run it (a long callback, a step of
a coroutine that did not yield, or the process waiting for a CPU or for the GIL). To
tell those apart it also records the CPU time the loop's thread spent between two
wake-ups: a wake-up 80 ms late after 2 ms of the thread's CPU is the machine's doing,
one after 80 ms of CPU is a callback that held the loop.

For measurements (benchmarks, a look while debugging), never for assertions on time:
a loaded machine makes any figure here late.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

SLEEP_S = 0.001
"""How long the probe sleeps between two looks."""
HOLD_S = 0.010
"""The hold counted as too long (the most one request may hold the loop)."""


@dataclass(frozen=True, slots=True)
class LagWindow:
    """What the probe saw since its last read."""

    wakeups: int
    max_late_ms: float
    """The latest wake-up, wall clock: what any other caller waited at worst."""
    p99_late_ms: float
    late_over_10ms: int
    max_cpu_ms: float
    """The most CPU the loop's thread spent between two wake-ups: the longest hold
    that was work on this loop rather than the machine's or another thread's doing."""
    cpu_over_10ms: int

    def as_dict(self) -> dict[str, float]:
        """The figures as a JSON object."""
        return {name: getattr(self, name) for name in self.__slots__}


class LoopLagProbe:
    """Records the lateness of 1 ms sleeps on the running loop (`run` as a task)."""

    def __init__(self) -> None:
        self._late: list[float] = []
        self._cpu: list[float] = []

    async def run(self) -> None:
        """Sleep and record, until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            t0, cpu0 = loop.time(), time.thread_time()
            await asyncio.sleep(SLEEP_S)
            self._late.append(loop.time() - t0 - SLEEP_S)
            self._cpu.append(time.thread_time() - cpu0)

    def read(self) -> LagWindow:
        """The window since the last read (and start a new one)."""
        late, cpu = sorted(self._late), self._cpu
        self._late, self._cpu = [], []
        if not late:
            return LagWindow(0, 0.0, 0.0, 0, 0.0, 0)
        return LagWindow(
            wakeups=len(late),
            max_late_ms=late[-1] * 1000,
            p99_late_ms=late[min(len(late) - 1, int(0.99 * len(late)))] * 1000,
            late_over_10ms=sum(1 for x in late if x > HOLD_S),
            max_cpu_ms=max(cpu) * 1000,
            cpu_over_10ms=sum(1 for x in cpu if x > HOLD_S),
        )
