"""Registering servicers with request parsing that cannot turn bad bytes into INTERNAL.

grpcio answers a request its deserializer rejects (invalid UTF-8 in a string field, a
truncated message) with INTERNAL. Here a failed parse becomes an `Undecodable` value,
which the handler guards answer with INVALID_ARGUMENT: it is the caller's input.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, ServiceDescriptor


class Undecodable:
    """Stands in for a request message whose bytes did not parse."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Lenient:
    """A request deserializer that returns `Undecodable` instead of raising, and what
    its `screen` returns instead of the message when the screen refuses the bytes (the
    handler guards raise that refusal: `server.screening`)."""

    __slots__ = ("_parse", "_screen")

    def __init__(
        self, parse: Callable[[bytes], Any], screen: Callable[[bytes], Any] | None = None
    ) -> None:
        self._parse = parse
        self._screen = screen

    def __call__(self, data: bytes) -> Any:
        """The parsed message, the screen's refusal, or `Undecodable` naming why the bytes
        did not parse."""
        if self._screen is not None:
            refused = self._screen(data)
            if refused is not None:
                return refused
        try:
            return self._parse(data)
        except Exception as err:
            return Undecodable(f"{type(err).__name__}: {err}")


Behavior = Callable[..., Any]


def replace_behavior(
    handler: grpc.RpcMethodHandler[Any, Any],
    wrap: Callable[[Behavior, bool], Behavior],
    *,
    request_deserializer: Callable[[bytes], Any] | None = None,
) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same kind whose behavior is `wrap(behavior, streams_response)`.

    Interceptors use it to run code around a method; `request_deserializer` replaces
    the handler's own when given.
    """
    h: Any = handler
    kw = {
        "request_deserializer": request_deserializer or h.request_deserializer,
        "response_serializer": h.response_serializer,
    }
    if h.unary_unary:
        return grpc.unary_unary_rpc_method_handler(wrap(h.unary_unary, False), **kw)
    if h.unary_stream:
        return grpc.unary_stream_rpc_method_handler(wrap(h.unary_stream, True), **kw)
    if h.stream_unary:
        return grpc.stream_unary_rpc_method_handler(wrap(h.stream_unary, False), **kw)
    return grpc.stream_stream_rpc_method_handler(wrap(h.stream_stream, True), **kw)


HandlerWrap = Callable[[Any, str], Any]
"""Wraps one method's `grpc.RpcMethodHandler`, given the method's full name
(`/package.Service/Method`)."""


@runtime_checkable
class StaticInterceptor(Protocol):
    """An interceptor whose work is wrapping each method's handler, the same way for every
    call: it can be applied at registration (`WrappingServer`) instead of per call."""

    def wrap_handler(
        self, handler: grpc.RpcMethodHandler[Any, Any], full_method: str
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """The method's handler, wrapped."""


def chained(links: Sequence[StaticInterceptor]) -> HandlerWrap:
    """The wrapping of an interceptor chain: the first link outermost, as grpc runs it."""
    inner_first = list(reversed(links))

    def wrap(handler: grpc.RpcMethodHandler[Any, Any], method: str) -> Any:
        for link in inner_first:
            handler = link.wrap_handler(handler, method)
        return handler

    return wrap


class _WrappedGeneric(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    """A generic handler whose method handlers come out wrapped, each wrapped once."""

    def __init__(self, inner: Any, wrap: HandlerWrap) -> None:
        self._inner = inner
        self._wrap = wrap
        self._done: dict[str, tuple[Any, Any]] = {}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        """The inner handler's method handler for the call, wrapped (None if it has none)."""
        handler = self._inner.service(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        done = self._done.get(method)
        if done is None or done[0] is not handler:
            done = (handler, self._wrap(handler, method))
            self._done[method] = done
        return done[1]


class WrappingServer:
    """What the `add_*_to_server` functions need of a server, wrapping every handler they
    register: per-method code (the gRPC metrics, the decode guard) applied at
    registration instead of by interceptors, which grpc.aio runs as a chain of coroutines
    on every call. Measured on an echo method from a grpc.aio client at 32 in flight, the
    server's CPU per call from /proc, median of 8 alternating rounds: 357 µs bare, 378 µs
    with those two as interceptors, 354 µs wrapped here. Registered-method handlers are
    added as generic ones, for the reason `add_service` gives."""

    def __init__(self, server: grpc.aio.Server, wrap: HandlerWrap) -> None:
        self._server = server
        self._wrap = wrap

    def add_generic_rpc_handlers(self, handlers: Sequence[Any]) -> None:
        """Add `handlers`, their method handlers wrapped."""
        self._server.add_generic_rpc_handlers(
            tuple(_WrappedGeneric(h, self._wrap) for h in handlers)
        )

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        """Add a service's method handlers, wrapped, as a generic handler."""
        self.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))


def _passthrough(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    # A handler may answer with bytes a scoring worker already serialized.
    def serializer(message: Any) -> bytes:
        if type(message) is bytes:
            return message
        return serialize(message)

    return serializer


def _as_bytes(data: bytes) -> bytes:
    return data


def add_service(
    server: grpc.aio.Server,
    servicer: Any,
    service: ServiceDescriptor,
    *,
    raw: frozenset[str] = frozenset(),
    screen: Callable[[Descriptor], Callable[[bytes], Any] | None] | None = None,
) -> str:
    """Register every method of `service` on `servicer`; returns the full service name.

    The methods named in `raw` get their request messages as bytes, to parse as they
    choose (`server.intake`: big requests off the event loop); `screen`, given a method's
    request type, returns what looks at the other methods' bytes before they are parsed
    (`Lenient`), if anything."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in service.methods:
        request_cls = message_factory.GetMessageClass(method.input_type)
        response_cls = message_factory.GetMessageClass(method.output_type)
        behavior = getattr(servicer, method.name)
        if method.name in raw:
            parse = Lenient(_as_bytes)
        else:
            screening = screen(method.input_type) if screen is not None else None
            parse = Lenient(request_cls.FromString, screening)
        kw: dict[str, Any] = {
            "request_deserializer": parse,
            "response_serializer": _passthrough(response_cls.SerializeToString),
        }
        if method.client_streaming and method.server_streaming:
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(behavior, **kw)
        elif method.client_streaming:
            handlers[method.name] = grpc.stream_unary_rpc_method_handler(behavior, **kw)
        elif method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(behavior, **kw)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(behavior, **kw)
    # Generic handlers only. Registering methods (`add_registered_method_handlers`) skips
    # a dict lookup per call, but grpc.aio's server loop keeps one pending request per
    # registered method and `asyncio.wait`s on all of them for every incoming call: with
    # the 14 methods of scorewire's services, measured ~25 µs more of the event loop's
    # CPU per unary call than a server with none (an echo server in process under a
    # fixed aio load from another process: median 180 vs 155 µs over 6 rounds each).
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
    return service.full_name


DRAIN_S = 5.0
"""Longest a refused client stream is read on before its refusal is sent."""
DRAIN_MAX_BYTES = 64 << 20
"""Most bytes a refused client stream is read on (SCOREWIRE_MAX_MESSAGE_BYTES' default)."""


async def drain(messages: AsyncIterator[Any]) -> None:
    """Read and drop what a refused client stream still sends (at most `DRAIN_MAX_BYTES`
    of raw or parsed messages, and `DRAIN_S` seconds), so that the refusal is what the
    caller reads: a grpc.aio client still writing when the status arrives reports
    INTERNAL "Internal error from Core" instead of it. Errors of the stream end it."""
    left = DRAIN_MAX_BYTES
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_S):
            async for message in messages:
                left -= len(message) if isinstance(message, bytes) else message.ByteSize()
                if left < 0:
                    return
