"""The loop-lag probe sees a callback that holds the loop (lower bounds only: never flaky)."""

from __future__ import annotations

import asyncio
import time

from tests.support.loop_lag import LoopLagProbe


async def test_a_hold_of_the_loop_shows_as_lateness_and_as_cpu() -> None:
    probe = LoopLagProbe()
    task = asyncio.create_task(probe.run())
    try:
        await asyncio.sleep(0.01)
        probe.read()  # a fresh window
        deadline = time.thread_time() + 0.03
        while time.thread_time() < deadline:  # 30 ms of this thread's CPU, not yielding
            pass
        await asyncio.sleep(0.01)
        window = probe.read()
    finally:
        task.cancel()
    assert window.wakeups >= 1
    assert window.max_late_ms >= 29 and window.late_over_10ms >= 1
    assert window.max_cpu_ms >= 29 and window.cpu_over_10ms >= 1
    assert probe.read().wakeups <= 1  # read starts a new window
