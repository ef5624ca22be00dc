"""The Python client's Observer against a real server (its rule: tests/clients/observe_rules.yaml).

Each test names its observations uniquely, so tests sharing one server never see each
other's; an unreachable server is a port that was just closed.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator

import pytest
from scorewire.client import Client

from tests.clients.observed import scored
from tests.support.wait import wait_until


@pytest.fixture
def client(scorewire_addr: str) -> Iterator[Client]:
    with Client(scorewire_addr) as c:
        yield c


@pytest.fixture
def unreachable() -> Iterator[Client]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with Client(f"127.0.0.1:{port}") as c:
        yield c


def test_observations_arrive_and_are_scored(client: Client) -> None:
    # flushed by the interval, acknowledged, then scored by the server's rule
    ids = {f"py-{uuid.uuid4()}": text for text in ("Paris", "Lyon")}
    with client.observer(flush_interval_s=0.05) as observer:
        for oid, text in ids.items():
            assert observer.observe(
                text,
                sample={"input": "capital of France?"},
                trace_id=uuid.uuid4().hex,
                span_id="00f067aa0ba902b7",
                route="/py-test",
                labels={"env": "test"},
                observation_id=oid,
            )
        assert observer.flush(20)
        stats = observer.stats()
    assert (stats.queued, stats.buffered, sum(stats.dropped.values())) == (2, 0, 0)
    wait_until(lambda: set(ids) <= scored(client).keys(), "observations scored", timeout_s=20)
    results = scored(client)
    assert {oid: results[oid] for oid in ids} == {oid: text == "Paris" for oid, text in ids.items()}


def test_the_same_observation_sent_twice_is_a_duplicate(client: Client) -> None:
    # the server's dedupe by observation id shows in the stats, not as a drop
    oid = f"py-{uuid.uuid4()}"
    with client.observer() as observer:
        observer.observe("Paris", observation_id=oid)
        observer.flush(20)
        observer.observe("Paris", observation_id=oid)
        observer.flush(20)
        stats = observer.stats()
    assert (stats.queued, stats.duplicate) == (1, 1)


def test_a_full_buffer_drops_and_counts_instead_of_blocking(unreachable: Client) -> None:
    # the server is down: the sender retries one batch while observe() stays fast
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
            time.sleep(0.02)  # let the sender try, and fail
    stats = observer.stats()
    assert (taken, stats.accepted, stats.dropped["buffer_full"]) == (10, 10, 190)
    assert stats.retries > 0
    assert slowest < 0.05, slowest
    start = time.monotonic()
    assert observer.close(0.2) is False  # its deadline passed with 10 unsent
    assert time.monotonic() - start < 2
    stats = observer.stats()
    assert (stats.dropped["closed"], stats.buffered) == (10, 0)
    assert observer.observe("Paris") is False  # after close: dropped, not raised
    assert observer.stats().dropped["closed"] == 11


def test_retries_are_bounded(unreachable: Client) -> None:
    # max_attempts calls, then the batch is dropped as retries_exhausted
    with unreachable.observer(max_attempts=3, initial_backoff_s=0.001) as observer:
        observer.observe("Paris")
        assert observer.flush(10)
        stats = observer.stats()
    assert (stats.dropped["retries_exhausted"], stats.retries) == (1, 2)


def test_what_the_server_refuses_is_dropped_not_retried(client: Client) -> None:
    # INVALID_ARGUMENT names the bad observation: it is dropped, the rest of its batch is
    # sent again; bad input never raises into the caller
    with client.observer() as observer:
        observer.observe("Paris", route="r" * 1000)  # over the server's 256 characters
        observer.observe("Paris", observation_id=f"py-{uuid.uuid4()}")
        assert observer.observe("Paris", trace_id="not-hex") is False
        assert observer.observe({"no such key": 1}) is False
        assert observer.flush(20)
        stats = observer.stats()
    assert (stats.dropped["rejected"], stats.queued) == (1, 1)
    assert stats.dropped["invalid"] == 2
    assert stats.retries == 0


def test_close_flushes(client: Client) -> None:
    # no batch filled and no interval passed: close() sends what is buffered
    observer = client.observer(flush_interval_s=3600, batch_size=1000)
    for _ in range(5):
        observer.observe("Paris")
    assert observer.close(20) is True
    stats = observer.stats()
    assert (stats.queued + stats.duplicate, stats.buffered) == (5, 0)


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_client_closed_first_stops_the_observer_at_once(scorewire_addr: str) -> None:
    # the channel closed under the sender: what is unsent is dropped as closed, and
    # neither flush nor close waits out its deadline; the sender thread ends quietly
    client = Client(scorewire_addr)
    observer = client.observer(flush_interval_s=3600)
    assert observer.observe("Paris")
    client.close()
    start = time.monotonic()
    assert observer.flush(10)
    assert observer.close(10) is False
    assert time.monotonic() - start < 5
    assert observer.observe("Paris") is False
    stats = observer.stats()
    assert (stats.dropped["closed"], stats.buffered) == (2, 0)
