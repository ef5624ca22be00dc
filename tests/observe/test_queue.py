"""The observation queue, on SQLite and on Redis Streams: the same promises on both."""

from __future__ import annotations

import asyncio

import pytest
from scorewire.observe.queue import QueueFull

from tests.observe.conftest import QueueOpener


async def test_a_batch_is_queued_and_taken_in_order(open_queue: QueueOpener) -> None:
    # what put returned True for is handed out, oldest first, once
    q = await open_queue()
    assert await q.put([("a", b"1"), ("b", b"2")]) == [True, True]
    assert await q.depth() == 2
    taken = await q.take(10)
    assert [(d.id, d.payload, d.deliveries) for d in taken] == [("a", b"1", 1), ("b", b"2", 1)]
    assert await q.take(10) == []  # hidden while leased


async def test_a_duplicate_id_is_not_queued_again(open_queue: QueueOpener) -> None:
    # within a batch and across batches, even after it was processed
    q = await open_queue()
    assert await q.put([("a", b"1"), ("a", b"1")]) == [True, False]
    await q.done(await q.take(10))
    assert await q.put([("a", b"1"), ("b", b"2")]) == [False, True]
    assert [d.id for d in await q.take(10)] == ["b"]


async def test_a_full_queue_refuses_the_whole_batch(open_queue: QueueOpener) -> None:
    # nothing of a batch that does not fit is queued; duplicates take no room
    q = await open_queue(max_depth=3)
    await q.put([("a", b""), ("b", b"")])
    with pytest.raises(QueueFull, match="SCOREWIRE_OBSERVE_QUEUE_MAX"):
        await q.put([("c", b""), ("d", b"")])
    assert await q.depth() == 2
    assert await q.put([("a", b""), ("c", b"")]) == [False, True]
    await q.done(await q.take(1))  # done makes room
    assert await q.depth() == 2
    assert await q.put([("d", b"")]) == [True]


async def test_what_is_not_done_within_the_lease_is_handed_out_again(
    open_queue: QueueOpener,
) -> None:
    # a consumer that died: at least once delivery, counted as a second delivery
    q = await open_queue(lease_s=0.2)
    await q.put([("a", b"1")])
    (_first,) = await q.take(10)
    await asyncio.sleep(0.4)
    (again,) = await q.take(10)
    assert (again.id, again.payload, again.deliveries) == ("a", b"1", 2)
    assert not await q.processed(again)
    await q.done([again])
    await asyncio.sleep(0.4)
    assert await q.take(10) == []
    assert await q.depth() == 0


async def test_the_queue_outlives_its_process(open_queue: QueueOpener) -> None:
    # acknowledged means durable: a second queue on the same engine sees it
    q = await open_queue()
    await q.put([("a", b"1")])
    await q.close()
    again = await open_queue()
    assert [d.id for d in await again.take(10)] == ["a"]


async def test_an_id_is_forgotten_after_the_dedupe_window(open_queue: QueueOpener) -> None:
    # ids are not kept forever: memory stays bounded by rate x window
    q = await open_queue(dedupe_s=1.0)
    await q.put([("a", b"1")])
    await q.done(await q.take(10))
    await asyncio.sleep(1.2)
    await q.put([("b", b"2")])
    await q.done(await q.take(10))  # the SQLite queue forgets old ids as it marks others done
    assert await q.put([("a", b"1")]) == [True]


async def test_consumers_taking_at_once_never_get_the_same_observation(
    open_queue: QueueOpener,
) -> None:
    # replicas share the queue: each observation goes to one of them while its lease holds
    queues = [await open_queue(max_depth=1000) for _ in range(3)]
    await queues[0].put([(f"o{i}", b"") for i in range(600)])
    taken = [[d.id for d in t] for t in await asyncio.gather(*(q.take(150) for q in queues))]
    taken += [[d.id for d in t] for t in await asyncio.gather(*(q.take(150) for q in queues))]
    ids = [i for t in taken for i in t]
    assert sorted(ids) == sorted(f"o{i}" for i in range(600))  # each once, none left out


async def test_a_redelivery_another_consumer_finished_meanwhile_is_processed(
    open_queue: QueueOpener,
) -> None:
    # a slow consumer whose lease lapsed finishes after another took it: not scored again
    slow, other = await open_queue(lease_s=0.2), await open_queue(lease_s=0.2)
    await slow.put([("a", b"1")])
    first = await slow.take(10)
    await asyncio.sleep(0.4)
    (again,) = await other.take(10)
    await slow.done(first)
    assert await other.processed(again)
    await other.done([again])
    assert await other.depth() == 0


async def test_batches_racing_for_the_last_room_never_pass_the_bound(
    open_queue: QueueOpener,
) -> None:
    # replicas putting at once: exactly as many batches fit as there is room for
    queues = [await open_queue(max_depth=100) for _ in range(4)]
    await queues[0].put([(f"a{i}", b"") for i in range(50)])

    async def put(k: int) -> bool:
        try:
            await queues[k % 4].put([(f"b{k}-{i}", b"") for i in range(10)])
        except QueueFull:
            return False
        return True

    fitted = await asyncio.gather(*(put(k) for k in range(16)))
    assert sum(fitted) == 5 and await queues[0].depth() == 100
