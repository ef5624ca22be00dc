"""core/fairness.py: work shared between callers by weighted round robin, with a cap."""

from __future__ import annotations

import random

from scorewire.core.fairness import FairQueue


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
