"""Polling a condition: its value when it holds, a failure naming it when it never does."""

from __future__ import annotations

import itertools

import pytest

from tests.support.wait import wait_until, wait_until_async


def test_wait_until_returns_the_first_truthy_value() -> None:
    # the condition holds on the third look
    looks = itertools.count()
    assert wait_until(lambda: next(looks) >= 2 and "ready", "the third look") == "ready"


def test_wait_until_fails_naming_the_condition() -> None:
    with pytest.raises(pytest.fail.Exception, match="waiting for the impossible"):
        wait_until(lambda: False, "the impossible", timeout_s=0.05)


async def test_wait_until_async_awaits_a_coroutine_condition() -> None:
    looks = itertools.count()

    async def ready() -> int:
        return next(looks) >= 2

    assert await wait_until_async(ready, "the third look") is True
    with pytest.raises(pytest.fail.Exception, match="waiting for never"):
        await wait_until_async(lambda: 0, "never", timeout_s=0.05)
