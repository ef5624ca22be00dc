"""core/fairness.py: work shared between callers by weighted round robin, with a cap."""

from __future__ import annotations

import asyncio
import random

from scorewire.core.fairness import FairQueue, FairSlots


def _drain(q: FairQueue[int], n: int) -> list[str]:
    out = []
    for _ in range(n):
        taken = q.pop()
        assert taken is not None
        out.append(taken[0])
        q.done(taken[0])
    return out


def test_a_caller_with_many_items_waits_behind_itself() -> None:
    # A queues 100 items, then B one: B's is the second taken, not the 101st.
    q: FairQueue[int] = FairQueue()
    for i in range(100):
        q.push("A", i)
    q.push("B", 0)
    assert _drain(q, 3) == ["A", "B", "A"]


def test_weights_share_the_capacity_in_proportion() -> None:
    # weight 3 against 1: three items of A for each of B while both wait
    q: FairQueue[int] = FairQueue(weights={"A": 3.0})
    for i in range(40):
        q.push("A", i)
        q.push("B", i)
    got = _drain(q, 40)
    assert got.count("A") == 30 and got.count("B") == 10


def test_a_light_weight_still_gets_its_turn() -> None:
    # weight 0.25: one item every fourth round, never starved
    q: FairQueue[int] = FairQueue(weights={"B": 0.25})
    for i in range(50):
        q.push("A", i)
        q.push("B", i)
    got = _drain(q, 25)
    assert got.count("B") == 5


def test_the_cap_leaves_capacity_for_the_next_caller() -> None:
    # A holds at most 2; with both held, A's next waits even though nothing else does
    q: FairQueue[int] = FairQueue(cap=2)
    for i in range(5):
        q.push("A", i)
    assert q.pop() == ("A", 0) and q.pop() == ("A", 1)
    assert q.pop() is None and q.held("A") == 2
    q.push("B", 9)
    assert q.pop() == ("B", 9)  # B goes at once
    q.done("A")
    assert q.pop() == ("A", 2)


def test_a_cap_blocked_caller_does_not_stop_a_light_one() -> None:
    # A at its cap, B light: B is served after its deficit builds up, not refused
    q: FairQueue[int] = FairQueue(cap=1, weights={"B": 0.1})
    q.push("A", 0)
    q.push("A", 1)
    assert q.pop() == ("A", 0)
    q.push("B", 0)
    assert q.pop() == ("B", 0)


def test_removed_items_are_not_taken_and_idle_callers_are_forgotten() -> None:
    q: FairQueue[int] = FairQueue()
    q.push("A", 1)
    q.push("A", 2)
    assert q.remove("A", 1) and not q.remove("A", 1)
    assert q.pop() == ("A", 2) and q.pop() is None
    q.done("A")
    assert len(q) == 0 and q.held("A") == 0 and not q._lanes


def test_every_item_is_taken_once_whatever_the_order() -> None:
    # random pushes, removals and completions: nothing lost, nothing taken twice, the cap held
    rnd = random.Random(7)
    q: FairQueue[int] = FairQueue(cap=3, weights={"k1": 2.0, "k2": 0.5})
    pushed: dict[int, str] = {}
    taken: set[int] = set()
    held: list[tuple[str, int]] = []
    for n in range(5000):
        r = rnd.random()
        if r < 0.45:
            key = f"k{rnd.randrange(4)}"
            q.push(key, n)
            pushed[n] = key
        elif r < 0.5 and pushed:
            n2 = rnd.choice(list(pushed))
            if n2 not in taken and q.remove(pushed[n2], n2):
                del pushed[n2]
        elif r < 0.8:
            got = q.pop()
            if got is not None:
                key, item = got
                assert item not in taken and pushed[item] == key
                taken.add(item)
                held.append(got)
                assert q.held(key) <= 3
        elif held:
            key, _ = held.pop(rnd.randrange(len(held)))
            q.done(key)
    while held:
        q.done(held.pop()[0])
    while (got := q.pop()) is not None:
        taken.add(got[1])
        q.done(got[0])
    assert taken == set(pushed)


def test_an_uncapped_key_may_hold_any_number() -> None:
    # callers told apart only by connection take turns without a cap
    q: FairQueue[int] = FairQueue(cap=1)
    for i in range(3):
        q.push("peer:a", i, capped=False)
    assert [q.pop(), q.pop(), q.pop()] == [("peer:a", 0), ("peer:a", 1), ("peer:a", 2)]


# --- FairSlots: a limit of so many at once, shared in turn ---------------------------------


async def _holders(slots: FairSlots, order: list[str], key: str, release: asyncio.Event) -> None:
    async with slots.slot(key):
        order.append(key)
        await release.wait()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_free_slot_is_taken_without_waiting() -> None:
    # nobody waits: the slot is held before the task yields once
    slots = FairSlots(2)
    async with slots.slot("A"):
        assert slots.free == 1 and slots.waiting == 0
    assert slots.free == 2


async def test_a_slot_given_back_goes_to_the_next_key_not_the_first_asker() -> None:
    # A holds the only slot with 5 more waiting, then B asks: B is the second served, not
    # the seventh (a plain semaphore serves in arrival order)
    slots = FairSlots(1)
    order: list[str] = []
    gates = [asyncio.Event() for _ in range(7)]
    tasks = [asyncio.create_task(_holders(slots, order, "A", gates[i])) for i in range(6)]
    await _settle()
    tasks.append(asyncio.create_task(_holders(slots, order, "B", gates[6])))
    await _settle()
    assert order == ["A"] and slots.waiting == 6
    for _ in range(6):
        for g in gates:
            g.set()  # whoever holds the slot lets go
        await _settle()
    await asyncio.gather(*tasks)
    assert order[:3] == ["A", "A", "B"] and order.count("A") == 6
    assert slots.free == 1 and slots.waiting == 0


async def test_weights_share_the_slots_in_proportion() -> None:
    # weight 3 against 1, both with 40 waiting behind a held slot: of the next 40
    # handed out, 30 go to A and 10 to B
    slots = FairSlots(1, weights={"A": 3.0})
    order: list[str] = []
    go = asyncio.Event()
    first = asyncio.create_task(_holders(slots, order, "first", go))
    await _settle()
    quick = asyncio.Event()
    quick.set()
    tasks = [
        asyncio.create_task(_holders(slots, order, key, quick)) for _ in range(40) for key in "AB"
    ]
    await _settle()
    go.set()
    await asyncio.gather(first, *tasks)
    served = order[1:41]
    assert served.count("A") == 30 and served.count("B") == 10


async def test_a_waiter_cancelled_leaves_the_queue_and_the_next_one_is_served() -> None:
    slots = FairSlots(1)
    order: list[str] = []
    hold, rest = asyncio.Event(), asyncio.Event()
    rest.set()
    holder = asyncio.create_task(_holders(slots, order, "H", hold))
    await _settle()
    gone = asyncio.create_task(_holders(slots, order, "A", rest))
    after = asyncio.create_task(_holders(slots, order, "B", rest))
    await _settle()
    assert slots.waiting == 2
    gone.cancel()
    await _settle()
    assert slots.waiting == 1 and gone.cancelled()
    hold.set()
    await asyncio.gather(holder, after)
    assert order == ["H", "B"] and slots.free == 1 and slots.waiting == 0


async def test_a_waiter_cancelled_as_it_is_handed_a_slot_gives_it_back() -> None:
    # the slot goes to A and A is cancelled before it runs: B must still get the slot
    slots = FairSlots(1)
    order: list[str] = []
    rest = asyncio.Event()
    rest.set()
    async with slots.slot("H"):
        racer = asyncio.create_task(_holders(slots, order, "A", rest))
        after = asyncio.create_task(_holders(slots, order, "B", rest))
        await _settle()
        assert slots.waiting == 2
    assert slots.waiting == 1 and slots.free == 0  # the slot is A's; A has not run yet
    racer.cancel()
    await _settle()
    assert racer.cancelled() and after.done() and order == ["B"]
    assert slots.free == 1 and slots.waiting == 0


async def test_no_slot_is_lost_or_doubled_whatever_the_tasks_do() -> None:
    # many tasks of random keys hold, raise, are cancelled waiting or holding: never more
    # than `capacity` inside at once, and every slot free at the end
    rnd = random.Random(11)
    slots = FairSlots(3, weights={"k0": 2.0, "k1": 0.5})
    inside = 0
    most = 0
    entered = 0

    async def worker(key: str, hold: int, fail: bool) -> None:
        nonlocal inside, most, entered
        async with slots.slot(key):
            inside += 1
            entered += 1
            most = max(most, inside)
            try:
                for _ in range(hold):
                    await asyncio.sleep(0)
                if fail:
                    raise ValueError("the work failed")
            finally:
                inside -= 1

    tasks = []
    for _ in range(600):
        key = f"k{rnd.randrange(4)}"
        tasks.append(asyncio.create_task(worker(key, rnd.randrange(6), rnd.random() < 0.2)))
        if rnd.random() < 0.3:
            await asyncio.sleep(0)
        if rnd.random() < 0.25:
            rnd.choice(tasks).cancel()
    _, pending = await asyncio.wait(tasks, timeout=60)  # a guard, not a measure
    assert not pending, "tasks still wait for a slot: one was lost"
    results = await asyncio.gather(*tasks, return_exceptions=True)
    cancelled = sum(isinstance(r, asyncio.CancelledError) for r in results)
    assert 0 < cancelled < 600 and entered > 300
    assert most == 3 and inside == 0
    assert slots.free == 3 and slots.waiting == 0 and not slots._waiting._lanes


async def test_a_share_caps_what_one_key_holds_and_follows_the_capacity() -> None:
    # 8 slots, a share of 0.5: A's calls hang holding 4, its fifth waits with slots free,
    # and B is served at once; grown to 16, A may hold 8
    slots = FairSlots(8, share=0.5)
    order: list[str] = []
    hang, b_done = asyncio.Event(), asyncio.Event()
    a = [asyncio.create_task(_holders(slots, order, "A", hang)) for _ in range(10)]
    await _settle()
    assert order == ["A"] * 4 and slots.free == 4 and slots.waiting == 6
    b = asyncio.create_task(_holders(slots, order, "B", b_done))
    await _settle()
    assert order[-1] == "B" and slots.free == 3
    slots.resize(16)
    await _settle()
    assert order.count("A") == 8 and slots.waiting == 2
    hang.set()
    b_done.set()
    await asyncio.gather(*a, b)
    assert order.count("A") == 10 and slots.free == 16


async def test_without_a_share_one_key_may_hold_every_slot() -> None:
    slots = FairSlots(4)
    order: list[str] = []
    hang = asyncio.Event()
    a = [asyncio.create_task(_holders(slots, order, "A", hang)) for _ in range(4)]
    await _settle()
    assert slots.free == 0
    hang.set()
    await asyncio.gather(*a)
