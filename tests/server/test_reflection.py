"""Server reflection, v1 and v1alpha, serving the protos' comments (through generated stubs)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2 as pb

from tests.server.conftest import Server, start_server
from tests.support.rpc import first_message

V1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
V1ALPHA = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"


async def _ask(
    server: Server, method: str, request: pb.ServerReflectionRequest
) -> pb.ServerReflectionResponse:
    # The two versions' messages are the same on the wire, so v1alpha's classes call v1 too.
    call = server.channel.stream_stream(
        method,
        request_serializer=pb.ServerReflectionRequest.SerializeToString,
        response_deserializer=pb.ServerReflectionResponse.FromString,
    )

    async def one() -> AsyncIterator[pb.ServerReflectionRequest]:
        yield request

    return await first_message(call(one()))


def _files(answer: pb.ServerReflectionResponse) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    protos = answer.file_descriptor_response.file_descriptor_proto
    parsed = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in protos]
    return {f.name: f for f in parsed}


@pytest.mark.parametrize("method", [V1, V1ALPHA])
async def test_both_versions_list_every_service(server: Server, method: str) -> None:
    # grpcurl and newer tools ask v1 first; older ones only know v1alpha.
    answer = await _ask(server, method, pb.ServerReflectionRequest(list_services=""))
    names = {s.name for s in answer.list_services_response.service}
    assert {
        "scorewire.v1.ScoringService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names


@pytest.mark.parametrize("method", [V1, V1ALPHA])
async def test_descriptors_carry_the_proto_comments(server: Server, method: str) -> None:
    # The generated _pb2 descriptors have no source info; the shipped set has.
    request = pb.ServerReflectionRequest(file_containing_symbol="scorewire.v1.ScoringService")
    files = _files(await _ask(server, method, request))
    scoring = files["scorewire/v1/scoring.proto"]
    comments = [loc.leading_comments for loc in scoring.source_code_info.location]
    assert any("ScoringService scores outputs against checks" in c for c in comments)
    assert "google/protobuf/struct.proto" in files  # its imports come along


async def test_v1_describes_itself(server: Server) -> None:
    # `grpcurl describe` with no symbol describes every listed service, v1's own included.
    request = pb.ServerReflectionRequest(
        file_containing_symbol="grpc.reflection.v1.ServerReflection"
    )
    files = _files(await _ask(server, V1, request))
    v1 = files["grpc/reflection/v1/reflection.proto"]
    assert v1.package == "grpc.reflection.v1"
    method = v1.service[0].method[0]
    assert method.input_type == ".grpc.reflection.v1.ServerReflectionRequest"


async def test_an_unknown_symbol_is_not_found(server: Server) -> None:
    # NOT_FOUND inside the stream, as the reflection protocol answers it.
    request = pb.ServerReflectionRequest(file_containing_symbol="scorewire.v1.NoSuchThing")
    answer = await _ask(server, V1, request)
    assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


@pytest.mark.parametrize("method", [V1, V1ALPHA])
async def test_both_versions_stay_open_without_a_token(method: str) -> None:
    # With bearer tokens on, grpcurl can still list and describe (auth_open_health).
    srv = await start_server(auth_token_sha256=hashlib.sha256(b"a-token").hexdigest())
    try:
        answer = await _ask(srv, method, pb.ServerReflectionRequest(list_services=""))
        assert "scorewire.v1.ScoringService" in {
            s.name for s in answer.list_services_response.service
        }
    finally:
        await srv.channel.close()
        await srv.running.stop(0)
