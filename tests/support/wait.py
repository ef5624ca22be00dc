"""Waiting for a condition instead of sleeping a fixed time.

    wait_until(lambda: srv.judge.stats.in_flight == 0, "no judge call in flight")
    await wait_until_async(lambda: STARTED["slow"] >= 2, "both calls are running")

A fixed sleep is too short on a loaded machine (a flaky test) and longer than needed
everywhere else (a slow one). Polling waits as long as the condition takes, and the
timeout, far above any real wait, turns "it never happened" into a failure that names
the condition. Sleeps that are the behaviour under test (a stand-in's latency, a window
in which nothing may happen) are not waits and do not belong here.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

T = TypeVar("T")

TIMEOUT_S = 10.0
"""How long a condition may take: far above any real wait, so reaching it is a failure."""
INTERVAL_S = 0.01
"""Time between two looks at the condition."""


def wait_until(
    condition: Callable[[], T],
    what: str,
    *,
    timeout_s: float = TIMEOUT_S,
    interval_s: float = INTERVAL_S,
) -> T:
    """Poll `condition()` until it is truthy and return that value; fail naming `what`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout_s} s waiting for {what} (last: {value!r})")
        time.sleep(interval_s)


async def wait_until_async(
    condition: Callable[[], T | Awaitable[T]],
    what: str,
    *,
    timeout_s: float = TIMEOUT_S,
    interval_s: float = INTERVAL_S,
) -> T:
    """`wait_until` on the event loop: `condition` may be a coroutine function too."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if loop.time() >= deadline:
            pytest.fail(f"timed out after {timeout_s} s waiting for {what} (last: {value!r})")
        await asyncio.sleep(interval_s)
