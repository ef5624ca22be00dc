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
from scorewire.server.registration import Behavior, Lenient, Undecodable, replace_behavior
from scorewire.server.status import RequestRejected, abort, checked_stream, undecodable


def _checked(request: Any) -> Any:
    """The request, its stream checked message by message; RequestRejected if undecodable."""
    if isinstance(request, Undecodable):
        raise undecodable(request.reason)
    return checked_stream(request) if hasattr(request, "__aiter__") else request


def _guard(behavior: Behavior, streams: bool) -> Behavior:
    # A streaming behavior is an async generator, or a coroutine writing with
    # context.write (grpc_health's Watch): wrap each as what it is.
    if streams and not inspect.iscoroutinefunction(behavior):

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            try:
                async for item in behavior(_checked(request), context):
                    yield item
            except RequestRejected as err:
                await abort(context, err)

        return stream

    async def call(request: Any, context: Any) -> Any:
        try:
            return await behavior(_checked(request), context)
        except RequestRejected as err:
            await abort(context, err)

    return call


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
        return self.wrap_handler(await continuation(details), details.method)

    def wrap_handler(
        self, handler: grpc.RpcMethodHandler[Any, Any], full_method: str
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """`handler` guarded, unless its deserializer is already lenient (see the module);
        the same for every call of the method, so it may be applied once, at registration
        (`server.registration.WrappingServer`)."""
        parse = getattr(handler, "request_deserializer", None)
        if parse is None or isinstance(parse, Lenient):
            return handler
        return replace_behavior(handler, _guard, request_deserializer=Lenient(parse))
