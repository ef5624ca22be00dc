"""Reading gRPC answers in tests: the field violations of a rejection, a stream's first message.

`violations` and `bad_request` read the google.rpc.BadRequest detail that every
INVALID_ARGUMENT and RESOURCE_EXHAUSTED carries (scorewire's way, rule 4);
`first_message` takes one message off a stream and fails when the stream ends empty,
where a bare `async for ...: assert ...; break` would pass without asserting anything.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import TypeVar

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

T = TypeVar("T")


def violations(err: grpc.RpcError) -> list[tuple[str, str]]:
    """(field, description) of every google.rpc.BadRequest violation in the trailers."""
    out: list[tuple[str, str]] = []
    for key, value in err.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                br = error_details_pb2.BadRequest()
                if detail.Unpack(br):
                    out.extend((v.field, v.description) for v in br.field_violations)
    return out


def bad_request(err: grpc.RpcError) -> dict[str, str]:
    """The field violations as {field: description} (empty without a BadRequest)."""
    return dict(violations(err))


async def first_message(stream: AsyncIterable[T]) -> T:
    """The first message of `stream`; fails when the stream ends without one."""
    async for message in stream:
        return message
    pytest.fail("the stream ended without a message")
