"""Registering servicers with request parsing that cannot turn bad bytes into INTERNAL.

grpcio answers a request its deserializer rejects (invalid UTF-8 in a string field, a
truncated message) with INTERNAL. Here a failed parse becomes an `Undecodable` value,
which the handler guards answer with INVALID_ARGUMENT: it is the caller's input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor


class Undecodable:
    """Stands in for a request message whose bytes did not parse."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _lenient(parse: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception as err:
            return Undecodable(f"{type(err).__name__}: {err}")

    return deserialize


def _passthrough(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    # A handler may answer with bytes a scoring worker already serialized.
    def serializer(message: Any) -> bytes:
        if type(message) is bytes:
            return message
        return serialize(message)

    return serializer


def add_service(server: grpc.aio.Server, servicer: Any, service: ServiceDescriptor) -> str:
    """Register every method of `service` on `servicer`; returns the full service name."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in service.methods:
        request_cls = message_factory.GetMessageClass(method.input_type)
        response_cls = message_factory.GetMessageClass(method.output_type)
        behavior = getattr(servicer, method.name)
        kw: dict[str, Any] = {
            "request_deserializer": _lenient(request_cls.FromString),
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
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
    # Registered handlers skip the generic lookup per call (grpcio >= 1.62).
    server.add_registered_method_handlers(service.full_name, handlers)  # type: ignore[attr-defined]
    return service.full_name
