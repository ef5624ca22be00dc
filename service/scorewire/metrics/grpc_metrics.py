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
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from prometheus_client import CollectorRegistry, Counter, Histogram

LABELS = ("grpc_type", "grpc_service", "grpc_method")

_EOF: Any = getattr(grpc.aio, "EOF")  # noqa: B009 - missing from grpc-stubs

HANDLING_BUCKETS = (
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
"""Prometheus' default buckets (as go-grpc-prometheus uses) plus minutes, for long
RunSuite streams and judge-backed calls."""

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


def grpc_type(request_streaming: bool, response_streaming: bool) -> str:
    """The `grpc_type` label of a method with these streaming flags."""
    if request_streaming:
        return "bidi_stream" if response_streaming else "client_stream"
    return "server_stream" if response_streaming else "unary"


def split_method(full_method: str) -> tuple[str, str]:
    """`/pkg.Service/Method` -> (`pkg.Service`, `Method`)."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return (service or "unknown"), (method or "unknown")


class _Method:
    """The metric children of one method, looked up once rather than on every call."""

    __slots__ = ("_handled", "_labels", "handled", "received", "seconds", "sent", "started")

    def __init__(self, owner: GrpcServerMetrics, labels: tuple[str, str, str]) -> None:
        self._labels = labels
        self._handled = owner.handled
        self.started = owner.started.labels(*labels)
        self.received = owner.received.labels(*labels)
        self.sent = owner.sent.labels(*labels)
        self.seconds = owner.seconds.labels(*labels)
        self.handled: dict[grpc.StatusCode, Any] = {}

    def handled_child(self, code: grpc.StatusCode) -> Any:
        """The `grpc_server_handled_total` child of `code`, created on first use."""
        child = self.handled.get(code)
        if child is None:
            child = self._handled.labels(*self._labels, GO_CODE_NAMES.get(code, "Unknown"))
            self.handled[code] = child
        return child

    def finish(self, code: grpc.StatusCode, started_at: float) -> None:
        """Count a finished call with its status and duration."""
        self.seconds.observe(time.perf_counter() - started_at)
        self.handled_child(code).inc()


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
            self._method.received.inc()
        return msg

    async def write(self, message: Any) -> None:
        await self._context.write(message)
        self._method.sent.inc()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


class _CountingIterator:
    """Counts the request messages a handler takes from its request iterator."""

    __slots__ = ("_inc", "_it")

    def __init__(self, it: AsyncIterator[Any], inc: Callable[[], None]) -> None:
        self._it = it
        self._inc = inc

    def __aiter__(self) -> _CountingIterator:
        return self

    async def __anext__(self) -> Any:
        msg = await self._it.__anext__()
        self._inc()
        return msg


Continuation = Callable[[grpc.HandlerCallDetails], Awaitable["grpc.RpcMethodHandler[Any, Any]"]]


class GrpcServerMetrics(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """The gRPC server interceptor; see the module docstring for what it exports."""

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        buckets: Iterable[float] = HANDLING_BUCKETS,
    ) -> None:
        self.started = Counter(
            "grpc_server_started",
            "Total number of RPCs started on the server.",
            LABELS,
            registry=registry,
        )
        self.handled = Counter(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure.",
            (*LABELS, "grpc_code"),
            registry=registry,
        )
        self.seconds = Histogram(
            "grpc_server_handling_seconds",
            "Histogram of response latency (seconds) of gRPC that had been "
            "application-level handled by the server.",
            LABELS,
            registry=registry,
            buckets=tuple(buckets),
        )
        self.received = Counter(
            "grpc_server_msg_received",
            "Total number of RPC stream messages received on the server.",
            LABELS,
            registry=registry,
        )
        self.sent = Counter(
            "grpc_server_msg_sent",
            "Total number of gRPC stream messages sent by the server.",
            LABELS,
            registry=registry,
        )
        self._methods: dict[str, _Method] = {}
        self._wrapped: dict[str, tuple[Any, grpc.RpcMethodHandler[Any, Any]]] = {}

    def preregister(self, services: Iterable[ServiceDescriptor]) -> None:
        """Create every series of these services at zero, as go-grpc-prometheus does, so
        rates and alerts see them before the first call (and every status code)."""
        for service in services:
            for m in service.methods:
                full = f"/{service.full_name}/{m.name}"
                method = self._method(full, grpc_type(m.client_streaming, m.server_streaming))
                for code in GO_CODE_NAMES:
                    method.handled_child(code)

    def _method(self, full_method: str, kind: str) -> _Method:
        method = self._methods.get(full_method)
        if method is None:
            service, name = split_method(full_method)
            method = _Method(self, (kind, service, name))
            self._methods[full_method] = method
        return method

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """Wrap the method's handler (once per method) so its calls are counted."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        full_method: str = handler_call_details.method
        cached = self._wrapped.get(full_method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(handler, full_method)
        self._wrapped[full_method] = (handler, wrapped)
        return wrapped

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
            return grpc.unary_unary_rpc_method_handler(_unary(h.unary_unary, method, False), **kw)
        if h.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _streaming(h.unary_stream, method, False), **kw
            )
        if h.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(_unary(h.stream_unary, method, True), **kw)
        return grpc.stream_stream_rpc_method_handler(
            _streaming(h.stream_stream, method, True), **kw
        )


def _unary(
    behavior: Callable[..., Awaitable[Any]], method: _Method, request_streaming: bool
) -> Callable[..., Awaitable[Any]]:
    """Wrap a handler with one response (unary or client-streaming)."""

    async def call(request: Any, context: Any) -> Any:
        method.started.inc()
        if request_streaming:
            request = _CountingIterator(aiter(request), method.received.inc)
            context = _CountingContext(context, method)
        else:
            method.received.inc()
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
            if code is grpc.StatusCode.OK:
                method.sent.inc()

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
        method.started.inc()
        if request_streaming:
            return _CountingIterator(aiter(request), method.received.inc)
        method.received.inc()
        return request

    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            request = prepare(request)
            started_at = time.perf_counter()
            err: BaseException | None = None
            try:
                async for item in behavior(request, context):
                    yield item
                    method.sent.inc()  # resumed: grpc took the message and wants the next
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
