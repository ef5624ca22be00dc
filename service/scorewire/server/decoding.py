"""Bytes that are not a request message are INVALID_ARGUMENT on every service.

scorewire's own services register `Lenient` deserializers (`registration.add_service`),
and their handler guards answer an `Undecodable` request. Services registered by their
libraries (health, reflection) deserialize with the message's `FromString`, whose
exception grpcio turns into UNKNOWN with the parser's message. `DecodeGuard` gives
those handlers a lenient deserializer and answers an undecodable request (or stream
message) with the same INVALID_ARGUMENT; handlers that are already lenient pass
through untouched, so scorewire's own calls pay nothing for it.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from scorewire.server.errors import abort, undecodable
from scorewire.server.registration import Lenient, Undecodable

Behavior = Callable[..., Any]


async def _checked(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
    async for message in requests:
        if isinstance(message, Undecodable):
            await abort(context, undecodable(message.reason))
        yield message


async def _request(request: Any, context: Any) -> Any:
    if isinstance(request, Undecodable):
        await abort(context, undecodable(request.reason))
    if hasattr(request, "__aiter__"):
        return _checked(request, context)
    return request


def _guard(behavior: Behavior, streams: bool) -> Behavior:
    if streams and not inspect.iscoroutinefunction(behavior):

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            async for item in behavior(await _request(request, context), context):
                yield item

        return stream

    async def call(request: Any, context: Any) -> Any:
        return await behavior(await _request(request, context), context)

    return call


def guarded_handler(handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
    """The same handler with a lenient deserializer and a guard on its behavior."""
    h: Any = handler
    kw = {
        "request_deserializer": Lenient(h.request_deserializer),
        "response_serializer": h.response_serializer,
    }
    if h.unary_unary:
        return grpc.unary_unary_rpc_method_handler(_guard(h.unary_unary, False), **kw)
    if h.unary_stream:
        return grpc.unary_stream_rpc_method_handler(_guard(h.unary_stream, True), **kw)
    if h.stream_unary:
        return grpc.stream_unary_rpc_method_handler(_guard(h.stream_unary, False), **kw)
    return grpc.stream_stream_rpc_method_handler(_guard(h.stream_stream, True), **kw)


class DecodeGuard(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """Makes undecodable requests INVALID_ARGUMENT on services registered by libraries."""

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]
        ],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """The handler, guarded unless its deserializer is already lenient (or it has none)."""
        handler = await continuation(details)
        if handler is None:
            return handler
        parse = getattr(handler, "request_deserializer", None)
        if parse is None or isinstance(parse, Lenient):
            return handler
        return guarded_handler(handler)
