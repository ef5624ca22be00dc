"""The pacer: a long loop on the event loop lets other tasks run once its slice is used up."""

from __future__ import annotations

import asyncio

from scorewire.core.pacing import Pacer


async def _interleaving(pacer: Pacer, items: int) -> list[str]:
    order: list[str] = []

    async def long_loop() -> None:
        for _ in range(items):
            order.append("item")
            await pacer.tick()

    async def neighbour() -> None:
        order.append("neighbour")

    work = asyncio.create_task(long_loop())
    other = asyncio.create_task(neighbour())
    await asyncio.gather(work, other)
    return order


async def test_a_used_up_slice_lets_a_waiting_task_run_before_the_loop_goes_on() -> None:
    # a slice of 0 s is always used up: the neighbour runs after the first item
    order = await _interleaving(Pacer(0.0), 5)
    assert order[:3] == ["item", "neighbour", "item"]


async def test_within_its_slice_the_loop_keeps_the_event_loop() -> None:
    # an hour's slice: nothing else runs until the loop is done
    order = await _interleaving(Pacer(3600.0), 5)
    assert order == ["item"] * 5 + ["neighbour"]
