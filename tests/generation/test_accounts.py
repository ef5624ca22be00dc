"""Provider accounts: the window of calls at once learned from 429s, shared fairly, and
the retries a generation makes, through the real SDK against the OpenAI stand-in."""

from __future__ import annotations

import asyncio
import time

import pytest
from scorewire.core.fairness import FairSlots
from scorewire.generation.accounts import CallWindow, SdkClients
from scorewire.generation.providers import OpenAIChatProvider, ProviderError, parse_provider

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.judge import OPENAI_KEY

REF = parse_provider("openai:gpt-4o-mini")


async def test_the_window_doubles_each_round_trip_until_a_429_cuts_it() -> None:
    window = CallWindow(start=4, most=64)
    for _ in range(4):  # one round trip of a window of 4: one more per answer
        window.answered()
    assert window.size == 8
    held = [window.call() for _ in range(6)]  # six calls in flight
    epochs = [await h.__aenter__() for h in held]
    window.refused(epochs[0])  # one of them refused: the provider was taking the other 5
    assert window.size == 5 and window.cuts == 1
    window.refused(epochs[1])  # a refusal of a call sent before the cut: no second cut
    assert window.size == 5 and window.cuts == 1
    for h in held:
        await h.__aexit__(None, None, None)
    for _ in range(5):  # then one more per window's worth of answers
        window.answered()
    assert window.size == 6
    for epoch in (1, 2):  # refused with nothing else in flight: down to one call
        window.refused(epoch)
    assert window.size == 1  # never below one call
    for _ in range(1000):
        window.answered()
    assert window.size <= 64


async def test_slots_given_back_past_a_smaller_capacity_are_not_handed_out() -> None:
    slots = FairSlots(4)
    held = [slots.slot("a") for _ in range(4)]
    for h in held:
        await h.__aenter__()
    slots.resize(2)
    waiter = asyncio.create_task(_hold(slots))
    await asyncio.sleep(0.01)
    for h in held[:2]:
        await h.__aexit__(None, None, None)  # 2 held, capacity 2: still full
    await asyncio.sleep(0.01)
    assert not waiter.done()
    await held[2].__aexit__(None, None, None)
    await asyncio.wait_for(waiter, 1)
    await held[3].__aexit__(None, None, None)
    slots.resize(3)
    assert slots.free == 3


async def _hold(slots: FairSlots) -> None:
    async with slots.slot("b"):
        pass


async def test_a_rate_limited_account_gets_every_answer_by_narrowing_its_window() -> None:
    # The provider takes 4 calls at once and refuses more with a 429; the window starts
    # at 16 with 40 generations waiting: it halves until the provider stops refusing,
    # and every generation is answered (the refused ones retried after Retry-After).
    fake = FakeOpenAI(api_key=OPENAI_KEY, default=Reply(content="Paris", delay_s=0.02))
    fake.limit_in_flight, fake.limit_retry_after_s = 4, 0.02
    clients = SdkClients(start=16, most=64)
    try:
        with fake.running():
            p = OpenAIChatProvider(REF, api_key=OPENAI_KEY, base_url=fake.url, clients=clients)
            made = await asyncio.gather(*(p.generate(f"q{i}", timeout_s=30) for i in range(40)))
            window = clients.get("openai", OPENAI_KEY, fake.url, 2).window
    finally:
        await clients.aclose()
    assert [m.text for m in made] == ["Paris"] * 40
    assert fake.rate_limited > 0 and window.cuts >= 1
    assert fake.max_in_flight <= 4 and fake.calls == 40


async def test_a_server_error_is_retried_up_to_max_retries() -> None:
    fake = FakeOpenAI(api_key=OPENAI_KEY)
    with fake.running():
        fake.script(Reply(status=503), Reply(status=503), Reply(content="Paris"))
        p = OpenAIChatProvider(REF, api_key=OPENAI_KEY, base_url=fake.url, max_retries=2)
        try:
            assert (await p.generate("q", timeout_s=30)).text == "Paris"
            fake.script(*[Reply(status=503)] * 3)
            with pytest.raises(ProviderError) as caught:
                await p.generate("q", timeout_s=30)
        finally:
            await p.aclose()
    assert "HTTP 503" in caught.value.message and fake.calls == 6


async def test_a_429_asking_longer_than_the_call_may_take_ends_it_at_once() -> None:
    fake = FakeOpenAI(api_key=OPENAI_KEY)
    with fake.running():
        fake.script(Reply(status=429, headers={"retry-after": "60"}))
        p = OpenAIChatProvider(REF, api_key=OPENAI_KEY, base_url=fake.url)
        started = time.monotonic()
        try:
            with pytest.raises(ProviderError) as caught:
                await p.generate("q", timeout_s=5)
        finally:
            await p.aclose()
    assert "HTTP 429" in caught.value.message and time.monotonic() - started < 5


async def test_a_tenant_whose_calls_hang_leaves_part_of_the_window_to_another() -> None:
    # tenant a's 8 calls hang: with a share of 0.75 it holds 6 of the 8 slots, and
    # tenant b's call goes in at once instead of waiting for one of a's to end
    from scorewire.core.fairness import current_caller

    window = CallWindow(start=8, most=8, tenant_share=0.75)
    inside: list[str] = []
    hang = asyncio.Event()

    async def call(tenant: str) -> None:
        current_caller.set(tenant)
        async with window.call():
            inside.append(tenant)
            await hang.wait()

    a = [asyncio.create_task(call("a")) for _ in range(8)]
    await asyncio.sleep(0.01)
    assert inside == ["a"] * 6
    b = asyncio.create_task(call("b"))
    await asyncio.sleep(0.01)
    assert inside[-1] == "b"
    hang.set()
    await asyncio.gather(*a, b)
    assert inside.count("a") == 8
