"""gRPC server metrics under the names go-grpc-prometheus and py-grpc-prometheus use.

`GrpcServerMetrics` is a `grpc.aio.ServerInterceptor` that exports
- `grpc_server_started_total{grpc_type,grpc_service,grpc_method}`,
- `grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}`,
- `grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method}` (a histogram),
- `grpc_server_msg_received_total` and `grpc_server_msg_sent_total`,
so dashboards and alerts written for Go services work unchanged. `grpc_type` is `unary`,
`client_stream`, `server_stream` or `bidi_stream`; `grpc_code` is the Go spelling of the
status (`OK`, `InvalidArgument`, `Canceled`, ...), which is what those dashboards expect.

Counting follows go-grpc-prometheus: a unary call receives one message and, when it
succeeds, sends one; streamed messages are counted one by one as they pass (the wrapped
iterators count them, or the wrapped context's `read`/`write` for handlers that use them).

Why plain counters and a collector: every call touches five series, and prometheus-client's
`Counter.inc`/`Histogram.observe` take a lock each and scan the buckets linearly, which
cost a measurable share of a unary call. Here a call adds to plain ints and floats of its
method (bisect picks the bucket), all on the event loop thread, and a `Collector` turns
them into the same families when /metrics is scraped (on prometheus-client's HTTP thread;
it copies before reading, and under the GIL each int it reads is whole).
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from bisect import bisect_left
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

LABELS = ("grpc_type", "grpc_service", "grpc_method")

_EOF: Any = getattr(grpc.aio, "EOF")  # noqa: B009 - missing from grpc-stubs
_OK = grpc.StatusCode.OK

HANDLING_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    30.0,
    60.0,
    120.0,
    300.0,
)
"""From 100 µs (a Score with deterministic checks takes well under 1 ms, so Prometheus'
default 5 ms first bucket would put every call in it), through Prometheus' defaults (as
go-grpc-prometheus uses), to minutes for long RunSuite streams and judge-backed calls."""

GO_CODE_NAMES: dict[grpc.StatusCode, str] = {
    grpc.StatusCode.OK: "OK",
    grpc.StatusCode.CANCELLED: "Canceled",
    grpc.StatusCode.UNKNOWN: "Unknown",
    grpc.StatusCode.INVALID_ARGUMENT: "InvalidArgument",
    grpc.StatusCode.DEADLINE_EXCEEDED: "DeadlineExceeded",
    grpc.StatusCode.NOT_FOUND: "NotFound",
    grpc.StatusCode.ALREADY_EXISTS: "AlreadyExists",
    grpc.StatusCode.PERMISSION_DENIED: "PermissionDenied",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "ResourceExhausted",
    grpc.StatusCode.FAILED_PRECONDITION: "FailedPrecondition",
    grpc.StatusCode.ABORTED: "Aborted",
    grpc.StatusCode.OUT_OF_RANGE: "OutOfRange",
    grpc.StatusCode.UNIMPLEMENTED: "Unimplemented",
    grpc.StatusCode.INTERNAL: "Internal",
    grpc.StatusCode.UNAVAILABLE: "Unavailable",
    grpc.StatusCode.DATA_LOSS: "DataLoss",
    grpc.StatusCode.UNAUTHENTICATED: "Unauthenticated",
}
"""`grpc_code` label values: Go's `codes.Code.String()`, as go-grpc-prometheus exports."""

_HELP = {
    "started": "Total number of RPCs started on the server.",
    "handled": "Total number of RPCs completed on the server, regardless of success or failure.",
    "seconds": "Histogram of response latency (seconds) of gRPC that had been "
    "application-level handled by the server.",
    "received": "Total number of RPC stream messages received on the server.",
    "sent": "Total number of gRPC stream messages sent by the server.",
}


def grpc_type(request_streaming: bool, response_streaming: bool) -> str:
    """The `grpc_type` label of a method with these streaming flags."""
    if request_streaming:
        return "bidi_stream" if response_streaming else "client_stream"
    return "server_stream" if response_streaming else "unary"


def split_method(full_method: str) -> tuple[str, str]:
    """`/pkg.Service/Method` -> (`pkg.Service`, `Method`)."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return (service or "unknown"), (method or "unknown")


def _bounds(buckets: Iterable[float]) -> list[float]:
    """Histogram upper bounds ending in +Inf, checked as prometheus-client checks them."""
    bounds = [float(b) for b in buckets]
    if bounds and bounds[-1] != math.inf:
        bounds.append(math.inf)
    if bounds != sorted(bounds):
        raise ValueError("Buckets not in sorted order")
    if len(bounds) < 2:
        raise ValueError("Must have at least two buckets")
    return bounds


class _Method:
    """The running totals of one method's series: plain numbers, updated on the event
    loop thread without locks and read by `_Collector` at scrape time."""

    __slots__ = (
        "_owner",
        "bounds",
        "counts",
        "failed",
        "labels",
        "ok",
        "received",
        "sent",
        "started",
        "sum",
    )

    def __init__(self, owner: GrpcServerMetrics, labels: tuple[str, str, str]) -> None:
        self._owner = owner
        self.labels = labels
        self.bounds = owner.bounds
        self.started = 0
        self.received = 0
        self.sent = 0
        self.ok = 0
        """Calls handled with OK (the common case, kept out of the `failed` dict)."""
        self.failed: dict[grpc.StatusCode, int] = {}
        """Calls handled with each other status code that has a series."""
        self.counts = [0] * len(self.bounds)
        """Observations per histogram bucket (not cumulative; the last is +Inf)."""
        self.sum = 0.0

    def add_series(self, code: grpc.StatusCode) -> None:
        """Create the `grpc_server_handled_total` series of `code` (at zero) if missing."""
        if code is _OK:
            if (self, code) not in self._owner.handled_series:
                self._owner.handled_series.append((self, code))
        elif code not in self.failed:
            self._owner.handled_series.append((self, code))
            self.failed[code] = 0

    def finish_ok(self, started_at: float) -> None:
        """Count a call that ended with OK, `started_at` being its `perf_counter()`."""
        elapsed = time.perf_counter() - started_at
        self.counts[bisect_left(self.bounds, elapsed)] += 1
        self.sum += elapsed
        if not self.ok:
            self.add_series(_OK)
        self.ok += 1

    def finish(self, code: grpc.StatusCode, started_at: float) -> None:
        """Count a finished call with its status and duration."""
        if code is _OK:
            self.finish_ok(started_at)
            return
        elapsed = time.perf_counter() - started_at
        self.counts[bisect_left(self.bounds, elapsed)] += 1
        self.sum += elapsed
        if code not in self.failed:
            self.add_series(code)
        self.failed[code] += 1


def _code_of(err: BaseException | None, context: Any) -> grpc.StatusCode:
    """The status a call ends with, given how its handler ended."""
    if err is None or isinstance(err, grpc.aio.AbortError):
        code = context.code()  # set by abort() or set_code()
        if isinstance(code, grpc.StatusCode):
            return code
        return grpc.StatusCode.OK if err is None else grpc.StatusCode.UNKNOWN
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        # Past the deadline grpc cancels the handler, and a status the handler still
        # tries to send fails (ExecuteBatchError): the caller sees DEADLINE_EXCEEDED.
        return grpc.StatusCode.DEADLINE_EXCEEDED
    if isinstance(err, asyncio.CancelledError | GeneratorExit):
        return grpc.StatusCode.CANCELLED  # the caller went away
    return grpc.StatusCode.UNKNOWN  # what grpc.aio answers for an unhandled exception


class _CountingContext:
    """A servicer context whose `read` and `write` count messages (for handlers that
    stream through the context instead of iterators); everything else is delegated."""

    __slots__ = ("_context", "_method")

    def __init__(self, context: Any, method: _Method) -> None:
        self._context = context
        self._method = method

    async def read(self) -> Any:
        msg = await self._context.read()
        if msg is not _EOF:
            self._method.received += 1
        return msg

    async def write(self, message: Any) -> None:
        try:
            await self._context.write(message)
        except asyncio.CancelledError:
            # The caller cancelled while the write was under way. The cancellation can
            # land after grpc has sent the message, once the write's own wait is over
            # but before this coroutine resumes (a client that cancels as soon as it has
            # read the message meets exactly that), so the message counts as sent.
            self._method.sent += 1
            raise
        self._method.sent += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


class _CountingIterator:
    """Counts the request messages a handler takes from its request iterator."""

    __slots__ = ("_it", "_method")

    def __init__(self, it: AsyncIterator[Any], method: _Method) -> None:
        self._it = it
        self._method = method

    def __aiter__(self) -> _CountingIterator:
        return self

    async def __anext__(self) -> Any:
        msg = await self._it.__anext__()
        self._method.received += 1
        return msg


_Families = tuple[
    CounterMetricFamily,
    CounterMetricFamily,
    HistogramMetricFamily,
    CounterMetricFamily,
    CounterMetricFamily,
]


def _families() -> _Families:
    """The five families, empty, in the order the registry has always listed them."""
    return (
        CounterMetricFamily("grpc_server_started", _HELP["started"], labels=LABELS),
        CounterMetricFamily("grpc_server_handled", _HELP["handled"], labels=(*LABELS, "grpc_code")),
        HistogramMetricFamily("grpc_server_handling_seconds", _HELP["seconds"], labels=LABELS),
        CounterMetricFamily("grpc_server_msg_received", _HELP["received"], labels=LABELS),
        CounterMetricFamily("grpc_server_msg_sent", _HELP["sent"], labels=LABELS),
    )


class _Collector(Collector):
    """Turns the methods' running totals into metric families at scrape time."""

    def __init__(self, owner: GrpcServerMetrics) -> None:
        self._owner = owner
        self._le = [floatToGoString(b) for b in owner.bounds]  # type: ignore[no-untyped-call]

    def describe(self) -> Iterator[Metric]:
        """The families, without samples (for the registry's duplicate-name check)."""
        return iter(_families())

    def collect(self) -> Iterator[Metric]:
        """The families with one series per method (and per status code for handled)."""
        # Copies first: the event loop thread may add methods or series meanwhile.
        methods = list(self._owner.methods)
        handled_series = list(self._owner.handled_series)
        started, handled, seconds, received, sent = _families()
        for m in methods:
            started.add_metric(m.labels, m.started)
            received.add_metric(m.labels, m.received)
            sent.add_metric(m.labels, m.sent)
            acc = 0
            buckets: list[tuple[str, float]] = []
            for le, n in zip(self._le, m.counts.copy(), strict=True):
                acc += n
                buckets.append((le, acc))
            seconds.add_metric(m.labels, buckets, m.sum)
        for m, code in handled_series:
            value = m.ok if code is _OK else m.failed.get(code, 0)
            handled.add_metric((*m.labels, GO_CODE_NAMES.get(code, "Unknown")), value)
        return iter((started, handled, seconds, received, sent))


Continuation = Callable[[grpc.HandlerCallDetails], Awaitable["grpc.RpcMethodHandler[Any, Any]"]]


class GrpcServerMetrics(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """The gRPC server interceptor; see the module docstring for what it exports."""

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        buckets: Iterable[float] = HANDLING_BUCKETS,
    ) -> None:
        self.bounds = _bounds(buckets)
        """The histogram's upper bounds, +Inf last."""
        self.methods: list[_Method] = []
        """Every method seen or preregistered, in the order their series appeared."""
        self.handled_series: list[tuple[_Method, grpc.StatusCode]] = []
        """Every `grpc_server_handled_total` series, in the order it appeared."""
        self._methods: dict[str, _Method] = {}
        self._wrapped: dict[str, tuple[Any, grpc.RpcMethodHandler[Any, Any]]] = {}
        registry.register(_Collector(self))

    def preregister(self, services: Iterable[ServiceDescriptor]) -> None:
        """Create every series of these services at zero, as go-grpc-prometheus does, so
        rates and alerts see them before the first call (and every status code)."""
        for service in services:
            for m in service.methods:
                full = f"/{service.full_name}/{m.name}"
                method = self._method(full, grpc_type(m.client_streaming, m.server_streaming))
                for code in GO_CODE_NAMES:
                    method.add_series(code)

    def _method(self, full_method: str, kind: str) -> _Method:
        method = self._methods.get(full_method)
        if method is None:
            service, name = split_method(full_method)
            method = _Method(self, (kind, service, name))
            self._methods[full_method] = method
            self.methods.append(method)
        return method

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """Wrap the method's handler (once per method) so its calls are counted."""
        handler = await continuation(handler_call_details)
        cached = self._wrapped.get(handler_call_details.method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        if handler is None:
            return handler
        full_method: str = handler_call_details.method
        wrapped = self._wrap(handler, full_method)
        self._wrapped[full_method] = (handler, wrapped)
        return wrapped

    def wrap_handler(
        self, handler: grpc.RpcMethodHandler[Any, Any], full_method: str
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """`handler` counted as `intercept_service` counts it, applied once, when the
        method is registered (`server.registration.WrappingServer`): then no interceptor
        runs per call."""
        return self._wrap(handler, full_method)

    def _wrap(
        self, handler: grpc.RpcMethodHandler[Any, Any], full_method: str
    ) -> grpc.RpcMethodHandler[Any, Any]:
        h: Any = handler
        method = self._method(full_method, grpc_type(h.request_streaming, h.response_streaming))
        kw = {
            "request_deserializer": h.request_deserializer,
            "response_serializer": h.response_serializer,
        }
        if h.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(_unary(h.unary_unary, method), **kw)
        if h.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _streaming(h.unary_stream, method, False), **kw
            )
        if h.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                _client_stream(h.stream_unary, method), **kw
            )
        return grpc.stream_stream_rpc_method_handler(
            _streaming(h.stream_stream, method, True), **kw
        )


def _unary(
    behavior: Callable[..., Awaitable[Any]], method: _Method
) -> Callable[..., Awaitable[Any]]:
    """Wrap a unary handler: the hot path, so OK calls take the shortest way through."""
    perf_counter = time.perf_counter

    async def call(request: Any, context: Any) -> Any:
        method.started += 1
        method.received += 1
        started_at = perf_counter()
        try:
            response = await behavior(request, context)
        except BaseException as err:
            method.finish(_code_of(err, context), started_at)
            raise
        code = context.code()  # None unless the handler called set_code()
        if code is None or code is _OK:
            method.finish_ok(started_at)
            method.sent += 1
        else:
            code = _code_of(None, context)
            method.finish(code, started_at)
            if code is _OK:
                method.sent += 1
        return response

    return call


def _client_stream(
    behavior: Callable[..., Awaitable[Any]], method: _Method
) -> Callable[..., Awaitable[Any]]:
    """Wrap a client-streaming handler (many requests, one response)."""

    async def call(request: Any, context: Any) -> Any:
        method.started += 1
        request = _CountingIterator(aiter(request), method)
        context = _CountingContext(context, method)
        started_at = time.perf_counter()
        err: BaseException | None = None
        try:
            return await behavior(request, context)
        except BaseException as e:
            err = e
            raise
        finally:
            code = _code_of(err, context)
            method.finish(code, started_at)
            if code is _OK:
                method.sent += 1

    return call


def _streaming(
    behavior: Callable[..., Any], method: _Method, request_streaming: bool
) -> Callable[..., Any]:
    """Wrap a handler that streams responses (server- or bidi-streaming).

    An async-generator handler is wrapped by an async generator that counts what it
    yields; any other handler (one that writes through `context.write`) gets a counting
    context instead.
    """

    def prepare(request: Any) -> Any:
        method.started += 1
        if request_streaming:
            return _CountingIterator(aiter(request), method)
        method.received += 1
        return request

    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            request = prepare(request)
            started_at = time.perf_counter()
            err: BaseException | None = None
            try:
                async for item in behavior(request, context):
                    yield item
                    method.sent += 1  # resumed: grpc took the message and wants the next
            except BaseException as e:
                err = e
                raise
            finally:
                method.finish(_code_of(err, context), started_at)

        return stream

    async def written(request: Any, context: Any) -> None:
        request = prepare(request)
        counting = _CountingContext(context, method)
        started_at = time.perf_counter()
        err: BaseException | None = None
        try:
            result = behavior(request, counting)
            if inspect.isawaitable(result):
                await result
            else:  # a plain function returning an async iterator
                async for item in result:
                    await counting.write(item)
        except BaseException as e:
            err = e
            raise
        finally:
            method.finish(_code_of(err, context), started_at)

    return written
