"""The gRPC interceptor in-process: its plain counters, exported by its collector, give
the series prometheus-client's own Counter and Histogram gave (values, buckets, codes)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import grpc
import pytest
from prometheus_client import CollectorRegistry
from scorewire.metrics.grpc_metrics import GrpcServerMetrics
from scorewire.v1 import scoring_pb2

SCORE = "/scorewire.v1.ScoringService/Score"
UNARY = {
    "grpc_type": "unary",
    "grpc_service": "scorewire.v1.ScoringService",
    "grpc_method": "Score",
}


class FakeContext:
    """The parts of a grpc.aio servicer context the interceptor reads."""

    def __init__(self, remaining: float | None = None) -> None:
        self._code: Any = None
        self._remaining = remaining

    def code(self) -> Any:
        return self._code

    def set_code(self, code: Any) -> None:
        self._code = code

    def time_remaining(self) -> float | None:
        return self._remaining


class Details:
    """A `grpc.HandlerCallDetails`."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """Durations the next calls take: perf_counter answers 0, then the duration."""
    durations: list[float] = []
    ticks: list[float] = []

    def perf_counter() -> float:
        if not ticks:
            ticks.extend([0.0, durations.pop(0) if durations else 0.0])
        return ticks.pop(0)

    monkeypatch.setattr(time, "perf_counter", perf_counter)
    yield durations


async def call_unary(
    metrics: GrpcServerMetrics,
    behavior: Callable[[Any, Any], Any],
    context: FakeContext | None = None,
    method: str = SCORE,
) -> None:
    handler = grpc.unary_unary_rpc_method_handler(behavior)

    async def continuation(_: Any) -> Any:
        return handler

    wrapped: Any = await metrics.intercept_service(continuation, Details(method))  # type: ignore[arg-type]
    # The call's outcome (raised or not) is what the metrics record.
    with contextlib.suppress(BaseException):
        await wrapped.unary_unary(object(), context or FakeContext())


async def ok(request: Any, context: Any) -> Any:
    return request


async def set_code_only(request: Any, context: Any) -> Any:
    context.set_code(grpc.StatusCode.NOT_FOUND)
    return request


async def aborted(request: Any, context: Any) -> Any:
    context.set_code(grpc.StatusCode.PERMISSION_DENIED)
    raise grpc.aio.AbortError("aborted")


async def raises(request: Any, context: Any) -> Any:
    raise ValueError("boom")


async def cancelled(request: Any, context: Any) -> Any:
    raise asyncio.CancelledError


def make(buckets: tuple[float, ...] | None = None) -> tuple[GrpcServerMetrics, CollectorRegistry]:
    registry = CollectorRegistry(auto_describe=True)
    metrics = (
        GrpcServerMetrics(registry)
        if buckets is None
        else GrpcServerMetrics(registry, buckets=buckets)
    )
    metrics.preregister([scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"]])
    return metrics, registry


@pytest.mark.parametrize(
    ("behavior", "context", "code", "sent"),
    [
        # a plain return is OK and sends the response
        (ok, None, "OK", 1),
        # set_code() without raising: that code, and grpc discards the response
        (set_code_only, None, "NotFound", 0),
        # abort(): the code it set
        (aborted, None, "PermissionDenied", 0),
        # an unhandled exception is what grpc.aio answers: Unknown
        (raises, None, "Unknown", 0),
        # an exception past the deadline: the caller sees DeadlineExceeded
        (raises, FakeContext(remaining=0.0), "DeadlineExceeded", 0),
        # cancellation means the caller went away
        (cancelled, None, "Canceled", 0),
    ],
)
async def test_unary_outcome_sets_code_and_sent(
    behavior: Callable[[Any, Any], Any], context: FakeContext | None, code: str, sent: int
) -> None:
    metrics, registry = make()
    await call_unary(metrics, behavior, context)
    assert registry.get_sample_value("grpc_server_started_total", UNARY) == 1
    assert registry.get_sample_value("grpc_server_msg_received_total", UNARY) == 1
    assert registry.get_sample_value("grpc_server_msg_sent_total", UNARY) == sent
    assert registry.get_sample_value("grpc_server_handled_total", {**UNARY, "grpc_code": code}) == 1
    assert registry.get_sample_value("grpc_server_handling_seconds_count", UNARY) == 1


async def test_histogram_bucket_is_first_bound_at_or_above(clock: list[float]) -> None:
    # A duration equal to a bound lands in that bucket (le is inclusive); above the last
    # bound only +Inf counts it; buckets are cumulative and _sum adds the durations.
    metrics, registry = make(buckets=(0.1, 1.0))
    clock.extend([0.1, 0.5, 1.0, 7.0])
    for _ in range(4):
        await call_unary(metrics, ok)

    def bucket(le: str) -> float | None:
        return registry.get_sample_value("grpc_server_handling_seconds_bucket", {**UNARY, "le": le})

    assert (bucket("0.1"), bucket("1.0"), bucket("+Inf")) == (1, 3, 4)
    assert registry.get_sample_value("grpc_server_handling_seconds_count", UNARY) == 4
    assert registry.get_sample_value("grpc_server_handling_seconds_sum", UNARY) == 8.6


async def test_unregistered_method_gets_series_on_first_use() -> None:
    # A method outside the preregistered services: its handled series appear per code as
    # codes occur, not all at zero.
    metrics, registry = make()
    method = "/grpc.health.v1.Health/Check"
    labels = {"grpc_type": "unary", "grpc_service": "grpc.health.v1.Health", "grpc_method": "Check"}
    await call_unary(metrics, raises, method=method)
    assert (
        registry.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "Unknown"})
        == 1
    )
    assert (
        registry.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "OK"})
        is None
    )
    await call_unary(metrics, ok, method=method)
    assert (
        registry.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) == 1
    )


async def test_streams_count_each_message() -> None:
    # Client stream: each request taken counts; server stream: each response yielded.
    metrics, registry = make()

    async def requests() -> AsyncIterator[int]:
        for i in range(3):
            yield i

    async def total(request: AsyncIterator[int], context: Any) -> int:
        return sum([i async for i in request])

    async def three(request: Any, context: Any) -> AsyncIterator[int]:
        for i in range(3):
            yield i

    handlers = {
        "/x.Y/Up": grpc.stream_unary_rpc_method_handler(total),
        "/x.Y/Down": grpc.unary_stream_rpc_method_handler(three),
    }

    async def continuation(details: Any) -> Any:
        return handlers[details.method]

    up: Any = await metrics.intercept_service(continuation, Details("/x.Y/Up"))  # type: ignore[arg-type]
    assert await up.stream_unary(requests(), FakeContext()) == 3
    down: Any = await metrics.intercept_service(continuation, Details("/x.Y/Down"))  # type: ignore[arg-type]
    assert [i async for i in down.unary_stream(object(), FakeContext())] == [0, 1, 2]

    def value(name: str, kind: str, method: str) -> float | None:
        labels = {"grpc_type": kind, "grpc_service": "x.Y", "grpc_method": method}
        return registry.get_sample_value(name, labels)

    assert value("grpc_server_msg_received_total", "client_stream", "Up") == 3
    assert value("grpc_server_msg_sent_total", "client_stream", "Up") == 1
    assert value("grpc_server_msg_received_total", "server_stream", "Down") == 1
    assert value("grpc_server_msg_sent_total", "server_stream", "Down") == 3


async def test_wrapped_handler_is_reused_while_the_handler_is_the_same() -> None:
    # One wrapper per method handler; a different handler for the method gets a new one.
    metrics, _ = make()
    first = grpc.unary_unary_rpc_method_handler(ok)
    second = grpc.unary_unary_rpc_method_handler(ok)
    current = [first]

    async def continuation(_: Any) -> Any:
        return current[0]

    details: Any = Details(SCORE)
    a = await metrics.intercept_service(continuation, details)
    assert await metrics.intercept_service(continuation, details) is a
    current[0] = second
    assert await metrics.intercept_service(continuation, details) is not a


def test_bad_buckets_and_duplicate_registration_are_rejected() -> None:
    # As prometheus-client's Histogram: buckets must be sorted; and one registry cannot
    # hold the grpc_server_* families twice.
    with pytest.raises(ValueError, match="sorted"):
        GrpcServerMetrics(CollectorRegistry(), buckets=(1.0, 0.5))
    registry = CollectorRegistry(auto_describe=True)
    GrpcServerMetrics(registry)
    with pytest.raises(ValueError, match="Duplicated"):
        GrpcServerMetrics(registry)
