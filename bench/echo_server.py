"""A bare gRPC echo service on grpc.aio: the transport ceiling the service bench compares to.

`Echo/Unary` takes a ScoreRequest and returns it (parsed and serialized like any
protobuf service, with no logic in between); `Echo/Stream` splits a RunSuiteRequest's cases into
messages of BATCH cases each, as RunSuite batches its results, so both sides move the
same volume through the same machinery with no scoring.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "clients/python/src")]

import grpc  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402

BATCH = 256


async def unary(request: pb.ScoreRequest, context: grpc.aio.ServicerContext) -> pb.ScoreRequest:
    return request


async def stream(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    req = pb.RunSuiteRequest.FromString(request)
    cases = list(req.cases)
    for i in range(0, len(cases), BATCH):
        batch = pb.CaseResultBatch(
            results=[
                pb.CaseResult(index=i + j, sample_id=c.sample.id, passed=True)
                for j, c in enumerate(cases[i : i + BATCH])
            ]
        )
        yield pb.RunSuiteResponse(results=batch).SerializeToString()
    yield pb.RunSuiteResponse(summary=pb.RunSummary(cases=len(cases))).SerializeToString()


async def main() -> None:
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", 64 << 20),
            ("grpc.max_send_message_length", 64 << 20),
        ]
    )
    handler = grpc.method_handlers_generic_handler(
        "Echo",
        {
            "Unary": grpc.unary_unary_rpc_method_handler(
                unary,
                request_deserializer=pb.ScoreRequest.FromString,
                response_serializer=pb.ScoreRequest.SerializeToString,
            ),
            "Stream": grpc.unary_stream_rpc_method_handler(stream),
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"echo listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
