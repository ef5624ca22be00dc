"""`ScorewireError`: a failed call with its gRPC code and google.rpc details decoded.

The server reports a malformed request as INVALID_ARGUMENT with a `google.rpc.BadRequest`
detail in the `grpc-status-details-bin` trailer; this module reads it with
googleapis-common-protos alone (no grpcio-status), so callers see field violations as
plain `(field, description)` pairs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import grpc
from google.rpc import error_details_pb2, status_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"


class FieldViolation(NamedTuple):
    """One offending field of a request, as the server named it."""

    field: str
    """The field's path, for example `checks[2].params.pattern`."""
    description: str
    """What is wrong with it."""


class ScorewireError(Exception):
    """A scorewire call that failed: the gRPC status code, its message and details.

    `field_violations` is filled from a `google.rpc.BadRequest` detail (INVALID_ARGUMENT);
    it is empty for every other error. `status` is the decoded `google.rpc.Status`, or
    None when the server sent no details.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        field_violations: Iterable[FieldViolation] = (),
        status: status_pb2.Status | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.field_violations: list[FieldViolation] = list(field_violations)
        self.status = status
        super().__init__(self._describe())

    def _describe(self) -> str:
        text = f"{self.code.name}: {self.message}"
        for v in self.field_violations:
            text += f"\n  {v.field}: {v.description}"
        return text

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> ScorewireError:
        """Build the error from a sync or asyncio `grpc.RpcError` (a failed call)."""
        code = _call(err, "code") or grpc.StatusCode.UNKNOWN
        message = _call(err, "details") or ""
        status = decode_status(_call(err, "trailing_metadata"))
        return cls(code, message, field_violations_of(status), status)


def _call(err: grpc.RpcError, name: str) -> Any:
    """Call `err.name()` when the error has it (a bare RpcError has none)."""
    method = getattr(err, name, None)
    return method() if callable(method) else None


def decode_status(
    trailing_metadata: Iterable[tuple[str, str | bytes]] | None,
) -> status_pb2.Status | None:
    """Decode the `google.rpc.Status` from a call's trailing metadata, if present."""
    for key, value in trailing_metadata or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status()
            try:
                status.ParseFromString(value)
            except Exception:  # a malformed trailer must not hide the call's own error
                return None
            return status
    return None


def field_violations_of(status: status_pb2.Status | None) -> list[FieldViolation]:
    """Every field violation of every BadRequest detail in `status`, in order."""
    if status is None:
        return []
    out: list[FieldViolation] = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            out.extend(FieldViolation(v.field, v.description) for v in bad.field_violations)
    return out
