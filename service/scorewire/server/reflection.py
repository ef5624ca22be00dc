"""Server reflection under `grpc.reflection.v1` and `v1alpha`, with the protos' comments.

grpcio-reflection ships only `v1alpha`, and it serves descriptors re-serialized from the
descriptor pool, which drops `source_code_info`: grpcurl's `describe` then shows no
comments. Here both versions answer from one servicer, and the scorewire files are served
as protoc wrote them into `scorewire_v1.binpb` (`scripts/generate.sh` builds it with
`--include_source_info`; `scripts/check_generated.sh` keeps it fresh), comments included.

The two versions' messages are identical on the wire (v1 is v1alpha promoted, same
fields and numbers), so the v1 service parses and answers with the v1alpha classes. Its
descriptor, which grpcurl fetches to describe it, is v1alpha's renamed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from importlib.resources import files
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, duration_pb2
from google.protobuf.descriptor import FileDescriptor
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2 as pb

V1ALPHA = "grpc.reflection.v1alpha.ServerReflection"
V1 = "grpc.reflection.v1.ServerReflection"
DESCRIPTOR_SET = "scorewire_v1.binpb"
"""The descriptor set (with source info and imports) beside this module."""


def _v1_file() -> descriptor_pb2.FileDescriptorProto:
    """`grpc/reflection/v1/reflection.proto`, derived from the v1alpha file by renaming."""
    proto = descriptor_pb2.FileDescriptorProto.FromString(pb.DESCRIPTOR.serialized_pb)
    proto.name = "grpc/reflection/v1/reflection.proto"
    proto.package = "grpc.reflection.v1"
    proto.ClearField("options")
    old, new = ".grpc.reflection.v1alpha.", ".grpc.reflection.v1."
    for message in proto.message_type:
        for f in message.field:
            if f.type_name:  # assigning "" would mark a scalar field as typed
                f.type_name = f.type_name.replace(old, new)
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new)
            method.output_type = method.output_type.replace(old, new)
    return proto


def _files() -> list[descriptor_pb2.FileDescriptorProto]:
    """Every file reflection serves, each after its imports."""
    shipped = descriptor_pb2.FileDescriptorSet.FromString(
        files("scorewire.server").joinpath(DESCRIPTOR_SET).read_bytes()
    )
    out = list(shipped.file)
    # The error details an answer's status carries (BadRequest, PreconditionFailure):
    # grpcurl decodes a status detail only when reflection knows its type.
    detail_files = (duration_pb2.DESCRIPTOR, error_details_pb2.DESCRIPTOR)
    for module_file in (health_pb2.DESCRIPTOR, pb.DESCRIPTOR, *detail_files):
        out.append(descriptor_pb2.FileDescriptorProto.FromString(module_file.serialized_pb))
    out.append(_v1_file())
    return out


class ReflectionServicer:
    """Answers `ServerReflectionInfo` for `service_names` from the shipped descriptors."""

    def __init__(self, service_names: Iterable[str]) -> None:
        self._names = sorted({*service_names, V1, V1ALPHA})
        self._pool = descriptor_pool.DescriptorPool()
        self._bytes: dict[str, bytes] = {}
        for proto in _files():
            if proto.name not in self._bytes:
                self._pool.Add(proto)
                self._bytes[proto.name] = proto.SerializeToString()

    async def info(
        self, requests: AsyncIterator[pb.ServerReflectionRequest], _context: Any
    ) -> AsyncIterator[pb.ServerReflectionResponse]:
        """The bidirectional stream: one response per request, in order."""
        async for request in requests:
            yield self.answer(request)

    def answer(self, request: pb.ServerReflectionRequest) -> pb.ServerReflectionResponse:
        """The response to one reflection request."""
        kind = request.WhichOneof("message_request")
        try:
            if kind == "list_services":
                listed = [pb.ServiceResponse(name=n) for n in self._names]
                return pb.ServerReflectionResponse(
                    original_request=request,
                    list_services_response=pb.ListServiceResponse(service=listed),
                )
            if kind == "file_by_filename":
                return self._file(request, self._pool.FindFileByName(request.file_by_filename))
            if kind == "file_containing_symbol":
                symbol = request.file_containing_symbol
                return self._file(request, self._pool.FindFileContainingSymbol(symbol))
            if kind == "file_containing_extension":
                ext = request.file_containing_extension
                message = self._pool.FindMessageTypeByName(ext.containing_type)
                found = self._pool.FindExtensionByNumber(message, ext.extension_number)
                return self._file(request, self._pool.FindFileContainingSymbol(found.full_name))
            if kind == "all_extension_numbers_of_type":
                message = self._pool.FindMessageTypeByName(request.all_extension_numbers_of_type)
                numbers = sorted(e.number for e in self._pool.FindAllExtensions(message))
                return pb.ServerReflectionResponse(
                    original_request=request,
                    all_extension_numbers_response=pb.ExtensionNumberResponse(
                        base_type_name=message.full_name, extension_number=numbers
                    ),
                )
        except KeyError:
            return _error(request, grpc.StatusCode.NOT_FOUND, "not found")
        return _error(request, grpc.StatusCode.INVALID_ARGUMENT, "no request set")

    def _file(
        self, request: pb.ServerReflectionRequest, file: FileDescriptor
    ) -> pb.ServerReflectionResponse:
        """`file` and everything it imports, as the shipped bytes (with comments)."""
        seen: dict[str, FileDescriptor] = {}
        stack = [file]
        while stack:
            current = stack.pop()
            if current.name not in seen:
                seen[current.name] = current
                stack.extend(current.dependencies)
        return pb.ServerReflectionResponse(
            original_request=request,
            file_descriptor_response=pb.FileDescriptorResponse(
                file_descriptor_proto=[self._bytes[name] for name in seen]
            ),
        )


def _error(
    request: pb.ServerReflectionRequest, code: grpc.StatusCode, message: str
) -> pb.ServerReflectionResponse:
    return pb.ServerReflectionResponse(
        original_request=request,
        error_response=pb.ErrorResponse(error_code=code.value[0], error_message=message),
    )


def add_reflection(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection v1 and v1alpha for `service_names` (the reflection services added)."""
    servicer = ReflectionServicer(service_names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.info,
        request_deserializer=pb.ServerReflectionRequest.FromString,
        response_serializer=pb.ServerReflectionResponse.SerializeToString,
    )
    for name in (V1, V1ALPHA):
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": handler}),)
        )
