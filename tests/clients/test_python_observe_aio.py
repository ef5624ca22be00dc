"""The Python client's AsyncObserver against a real server (its rule: observe_rules.yaml).

The asyncio twin of test_python_observe.py, with the same naming: each test names its
observations uniquely, and an unreachable server is a port that was just closed. A
server that appears late is a TCP relay to the real one opened on the port the client
has been retrying; a server that never answers accepts connections and reads nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

import pytest
from scorewire.client import AsyncClient, AsyncObserver, Client
from scorewire.client._observe_shared import ObserverBase

from tests.clients.observed import scored
from tests.support.servers import free_port
from tests.support.wait import wait_until, wait_until_async

T = TypeVar("T")

# A client retrying an address where nothing listens reconnects within 0.1 s once
# something does (grpc's default first reconnect backoff is 1 s).
FAST_RECONNECT = [
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 100),
]


@pytest.fixture
async def client(scorewire_addr: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(scorewire_addr) as c:
        yield c


@pytest.fixture
async def unreachable() -> AsyncIterator[AsyncClient]:
    async with AsyncClient(f"127.0.0.1:{free_port()}") as c:
        yield c


@contextlib.asynccontextmanager
async def listening(
    port: int, handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]
) -> AsyncIterator[list[asyncio.StreamWriter]]:
    """A TCP server on 127.0.0.1:`port` running `handle` per connection; yields the
    connections so far, and closes them with it."""
    writers: list[asyncio.StreamWriter] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        with contextlib.suppress(ConnectionError):
            await handle(reader, writer)
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", port)
    try:
        yield writers
    finally:
        server.close()
        for writer in writers:
            writer.close()
        await server.wait_closed()


def relay_to(target: str) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]:
    """A connection handler passing bytes both ways between the caller and `target`."""
    host, port = target.rsplit(":", 1)

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            up_writer.close()

    return relay


async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A connection handler that reads everything and answers nothing."""
    while await reader.read(65536):
        pass


def keyword_defaults(function: Callable[..., Any]) -> dict[str, Any]:
    """A function's keyword-only parameters and their defaults."""
    params = inspect.signature(function).parameters.values()
    return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def test_the_async_observer_takes_the_sync_ones_options_and_defaults() -> None:
    # one set of options: the two client methods and the observers' shared constructor
    shared = keyword_defaults(ObserverBase.__init__)
    del shared["metadata"]  # the client's own
    assert keyword_defaults(AsyncClient.observer) == keyword_defaults(Client.observer) == shared


async def test_observations_arrive_and_are_scored(client: AsyncClient, scorewire_addr: str) -> None:
    # flushed by the interval, acknowledged, then scored by the server's rule
    ids = {f"py-aio-{uuid.uuid4()}": text for text in ("Paris", "Lyon")}
    async with client.observer(flush_interval_s=0.05) as observer:
        for oid, text in ids.items():
            assert observer.observe(
                text,
                sample={"input": "capital of France?"},
                trace_id=uuid.uuid4().hex,
                span_id="00f067aa0ba902b7",
                route="/py-aio-test",
                labels={"env": "test"},
                observation_id=oid,
            )
        assert await observer.flush(20)
        stats = observer.stats()
    assert (stats.queued, stats.buffered, sum(stats.dropped.values())) == (2, 0, 0)

    def all_scored() -> dict[str, bool]:
        with Client(scorewire_addr) as reader:
            results = scored(reader)
        return results if set(ids) <= results.keys() else {}

    results = await wait_until_async(
        lambda: asyncio.to_thread(all_scored), "observations scored", timeout_s=20
    )
    assert {oid: results[oid] for oid in ids} == {oid: text == "Paris" for oid, text in ids.items()}


async def test_the_same_observation_sent_twice_is_a_duplicate(client: AsyncClient) -> None:
    # the server's dedupe by observation id shows in the stats, not as a drop
    oid = f"py-aio-{uuid.uuid4()}"
    async with client.observer() as observer:
        observer.observe("Paris", observation_id=oid)
        assert await observer.flush(20)
        observer.observe("Paris", observation_id=oid)
        assert await observer.flush(20)
        stats = observer.stats()
    assert (stats.queued, stats.duplicate) == (1, 1)


async def test_a_full_buffer_drops_and_counts_instead_of_blocking(unreachable: AsyncClient) -> None:
    # the server is down: the sender task retries one batch while observe() stays fast
    observer = unreachable.observer(
        buffer_size=10, batch_size=5, flush_interval_s=0.01, max_attempts=1000,
        initial_backoff_s=0.01, max_backoff_s=0.05,
    )  # fmt: skip
    slowest, taken = 0.0, 0
    for i in range(200):
        start = time.perf_counter()
        taken += observer.observe("Paris", observation_id=f"o{i}")
        slowest = max(slowest, time.perf_counter() - start)
        if i % 50 == 0:
            await asyncio.sleep(0.02)  # let the sender try, and fail
    await wait_until_async(lambda: observer.stats().retries > 0, "a batch retried")
    stats = observer.stats()
    assert (taken, stats.accepted, stats.dropped["buffer_full"]) == (10, 10, 190)
    assert slowest < 0.05, slowest
    start = time.monotonic()
    assert await observer.close(0.2) is False  # its deadline passed with 10 unsent
    assert time.monotonic() - start < 2
    stats = observer.stats()
    assert (stats.dropped["closed"], stats.buffered) == (10, 0)


async def test_observe_after_close_is_a_counted_drop(client: AsyncClient) -> None:
    # a late observation from a request still running at shutdown must not raise
    observer = client.observer()
    assert await observer.close(20) is True
    assert observer.observe("Paris", observation_id=f"py-aio-{uuid.uuid4()}") is False
    stats = observer.stats()
    assert (stats.accepted, stats.dropped["closed"]) == (0, 1)


async def test_unavailable_is_retried_until_the_server_answers(scorewire_addr: str) -> None:
    # nothing listens at first: UNAVAILABLE, retried; then the server appears there
    port = free_port()
    oid = f"py-aio-{uuid.uuid4()}"
    async with AsyncClient(f"127.0.0.1:{port}", options=FAST_RECONNECT) as late:
        observer = late.observer(max_attempts=1000, initial_backoff_s=0.01, max_backoff_s=0.05)
        assert observer.observe("Paris", observation_id=oid)
        await wait_until_async(lambda: observer.stats().retries >= 2, "UNAVAILABLE retried")
        async with listening(port, relay_to(scorewire_addr)):
            assert await observer.flush(20)
            assert await observer.close(20) is True
    stats = observer.stats()
    assert (stats.queued, sum(stats.dropped.values())) == (1, 0)
    assert stats.retries >= 2


async def test_retries_are_bounded(unreachable: AsyncClient) -> None:
    # max_attempts calls, then the batch is dropped as retries_exhausted
    async with unreachable.observer(max_attempts=3, initial_backoff_s=0.001) as observer:
        observer.observe("Paris")
        assert await observer.flush(10)
        stats = observer.stats()
    assert (stats.dropped["retries_exhausted"], stats.retries) == (1, 2)


async def test_what_the_server_refuses_is_dropped_not_retried(client: AsyncClient) -> None:
    # INVALID_ARGUMENT names the bad observation: it is dropped, the rest of its batch is
    # sent again; bad input never raises into the caller
    async with client.observer() as observer:
        observer.observe("Paris", route="r" * 1000)  # over the server's 256 characters
        observer.observe("Paris", observation_id=f"py-aio-{uuid.uuid4()}")
        assert observer.observe("Paris", trace_id="not-hex") is False
        assert observer.observe({"no such key": 1}) is False
        assert await observer.flush(20)
        stats = observer.stats()
    assert (stats.dropped["rejected"], stats.queued) == (1, 1)
    assert stats.dropped["invalid"] == 2
    assert stats.retries == 0


async def test_close_cancels_a_call_the_server_never_answers() -> None:
    # the server is gone but its port still accepts: close() ends the call in flight at
    # its deadline rather than waiting out the call's own
    port = free_port()
    async with listening(port, swallow) as calls, AsyncClient(f"127.0.0.1:{port}") as silent:
        observer = silent.observer(flush_interval_s=0.01, call_timeout_s=60)
        assert observer.observe("Paris")
        await wait_until_async(lambda: calls, "the call's connection")
        start = time.monotonic()
        assert await observer.close(0.3) is False
        assert time.monotonic() - start < 2
    stats = observer.stats()
    assert (stats.dropped["closed"], stats.buffered, stats.retries) == (1, 0, 0)


async def test_close_flushes(client: AsyncClient) -> None:
    # no batch filled and no interval passed: close() sends what is buffered
    observer = client.observer(flush_interval_s=3600, batch_size=1000)
    for _ in range(5):
        observer.observe("Paris")
    assert await observer.close(20) is True
    stats = observer.stats()
    assert (stats.queued + stats.duplicate, stats.buffered) == (5, 0)


def test_observe_from_another_thread_wakes_the_sender(scorewire_addr: str) -> None:
    # a full batch observed off the loop's thread is sent at once, the loop woken the
    # thread-safe way: in debug mode asyncio raises in a thread that touches the loop.
    # The loop runs in a thread of its own, which the test stops whatever happened.
    loop = asyncio.new_event_loop()
    loop.set_debug(True)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def on_loop(coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(20)

    async def open_observer() -> tuple[AsyncClient, AsyncObserver]:
        client = AsyncClient(scorewire_addr)
        return client, client.observer(batch_size=2, flush_interval_s=3600)

    try:
        client, observer = on_loop(open_observer())
        on_loop(asyncio.sleep(0))  # after the sender task's first step: it waits
        assert [observer.observe("Paris") for _ in range(2)] == [True, True]
        wait_until(lambda: observer.stats().queued + observer.stats().duplicate == 2, "a send")
        assert on_loop(observer.close(10)) is True
        on_loop(client.close())
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


async def test_a_client_closed_first_stops_the_observer_at_once(scorewire_addr: str) -> None:
    # the channel closed under the sender task: what is unsent is dropped as closed, and
    # neither flush nor close waits out its deadline
    client = AsyncClient(scorewire_addr)
    observer = client.observer(flush_interval_s=3600)
    assert observer.observe("Paris")
    await client.close()
    start = time.monotonic()
    assert await observer.flush(10)
    assert await observer.close(10) is False
    assert time.monotonic() - start < 5
    assert observer.observe("Paris") is False
    stats = observer.stats()
    assert (stats.dropped["closed"], stats.buffered) == (2, 0)
