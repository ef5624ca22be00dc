"""gRPC error statuses with google.rpc details, and the guard for unexpected faults.

Bad input is INVALID_ARGUMENT with a google.rpc.BadRequest listing every field path; a
request over a limit is RESOURCE_EXHAUSTED naming the limit (and the field); anything
unexpected is INTERNAL with a generic message while the detail goes to the log only.
"""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import FieldViolation, Precondition, PreconditionError, SpecError
from scorewire.core.fairness import current_caller, tenant_key
from scorewire.runs import RunsUnavailable
from scorewire.scoring.executor import DeadlineExpired
from scorewire.scoring.pool import WorkerLost
from scorewire.server.registration import Undecodable, drain
from scorewire.server.security import current_principal
from scorewire.suites.checkllm_request import Unrunnable

log = logging.getLogger("scorewire.server")

_MAX_MESSAGE = 2000


class RequestRejected(Exception):
    """Raised inside a handler to end the call with a rich status."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        violations: Sequence[FieldViolation] = (),
        preconditions: Sequence[Precondition] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.violations = list(violations)
        self.preconditions = list(preconditions)


def _listing(violations: Sequence[FieldViolation | Precondition]) -> str:
    head = "; ".join(str(v) for v in violations[:3])
    more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
    return head + more


def invalid_argument(violations: Sequence[FieldViolation]) -> RequestRejected:
    """INVALID_ARGUMENT listing every violation."""
    return RequestRejected(
        grpc.StatusCode.INVALID_ARGUMENT, f"invalid request: {_listing(violations)}", violations
    )


def permission_denied(denials: Sequence[FieldViolation]) -> RequestRejected:
    """PERMISSION_DENIED naming every field the caller may not set (or read) as it asked."""
    return RequestRejected(
        grpc.StatusCode.PERMISSION_DENIED, f"permission denied: {_listing(denials)}", denials
    )


def failed_precondition(problems: Sequence[Precondition]) -> RequestRejected:
    """FAILED_PRECONDITION: a well-formed request this server cannot run as configured.

    Carries a google.rpc.PreconditionFailure (type = kind, subject = the setting to set,
    description) and a BadRequest with the field paths, so that clients reading either
    find where the suite names what is missing.
    """
    return RequestRejected(
        grpc.StatusCode.FAILED_PRECONDITION,
        f"the suite cannot run on this server: {_listing(problems)}",
        [FieldViolation(p.field, p.description) for p in problems],
        problems,
    )


def resource_exhausted(field: str, message: str) -> RequestRejected:
    """RESOURCE_EXHAUSTED naming the limit, with the field it concerns."""
    return RequestRejected(
        grpc.StatusCode.RESOURCE_EXHAUSTED, message, [FieldViolation(field, message)]
    )


NO_STORE = "this server keeps no run store, so it cannot record or read runs"
STORE_DOWN = "the run cannot be recorded or read now; retry later"


def unavailable(err: RunsUnavailable | None = None) -> RequestRejected:
    """UNAVAILABLE for a store that failed, in the store's words (which name it and what
    happened; the driver's detail went to the log), or for a server with no store."""
    if err is None:
        return RequestRejected(grpc.StatusCode.UNAVAILABLE, NO_STORE)
    return RequestRejected(grpc.StatusCode.UNAVAILABLE, f"{err}: {STORE_DOWN}")


def rejection(err: Exception) -> RequestRejected | None:
    """The status of an error the domain raises for the caller's request, else None.

    A bad spec is INVALID_ARGUMENT with every problem, a limit passed RESOURCE_EXHAUSTED
    naming it, a judge that cannot be called FAILED_PRECONDITION, and a deadline that
    passed while checks ran DEADLINE_EXCEEDED, and scoring workers that died on every try
    UNAVAILABLE (never INTERNAL: nothing in the server is known to be broken)."""
    if isinstance(err, RequestRejected):
        return err
    if isinstance(err, SpecError):
        return invalid_argument(err.violations)
    if isinstance(err, RunsUnavailable):
        return unavailable(err)
    if isinstance(err, LimitExceeded):
        return resource_exhausted(err.field, err.message)
    if isinstance(err, PreconditionError):
        return failed_precondition(err.problems)
    if isinstance(err, Unrunnable):
        return RequestRejected(
            grpc.StatusCode.FAILED_PRECONDITION,
            err.message,
            [FieldViolation(err.field, err.message)],
        )
    if isinstance(err, DeadlineExpired):
        return RequestRejected(grpc.StatusCode.DEADLINE_EXCEEDED, str(err))
    if isinstance(err, WorkerLost):
        return RequestRejected(
            grpc.StatusCode.UNAVAILABLE,
            f"{err}; the request was not scored (a worker crashed, or the kernel's OOM "
            "killer stopped it: the server log says which). If it fails again, the request "
            "itself is what stops them",
        )
    return None


def to_grpc_status(err: RequestRejected) -> grpc.Status:
    """A grpc.Status whose trailing metadata carries google.rpc.Status with BadRequest."""
    message = err.message[:_MAX_MESSAGE]
    status = status_pb2.Status(code=err.code.value[0], message=message)
    if err.violations:
        detail = any_pb2.Any()
        detail.Pack(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=v.field, description=v.description[:_MAX_MESSAGE]
                    )
                    for v in err.violations[:200]
                ]
            )
        )
        status.details.append(detail)
    if err.preconditions:
        detail = any_pb2.Any()
        detail.Pack(
            error_details_pb2.PreconditionFailure(
                violations=[
                    error_details_pb2.PreconditionFailure.Violation(
                        type=p.kind, subject=p.setting, description=p.description[:_MAX_MESSAGE]
                    )
                    for p in err.preconditions[:200]
                ]
            )
        )
        status.details.append(detail)
    return rpc_status.to_status(status)


async def abort(context: grpc.aio.ServicerContext[Any, Any], err: RequestRejected) -> NoReturn:
    """End the call with `err`'s status."""
    status = to_grpc_status(err)
    await context.abort(status.code, status.details, status.trailing_metadata)
    raise AssertionError("unreachable")  # pragma: no cover - abort raises


INTERNAL_MESSAGE = "internal error; the server log has the details"
assert grpc.StatusCode.INTERNAL.value[0] == code_pb2.INTERNAL

UNDECODABLE_MESSAGE = (
    "the request is not a valid message of this method's type "
    "(strings must be valid UTF-8; was it encoded for another method?)"
)


TOO_DEEP_MESSAGE = (
    "the request nests messages more than 100 levels deep, protobuf's limit (each list or "
    "object inside a google.protobuf.Value counts as two or three levels)"
)
BAD_UTF8_MESSAGE = "a string field of the request is not valid UTF-8"


def undecodable(reason: str = "") -> RequestRejected:
    """INVALID_ARGUMENT for a request whose bytes did not parse, naming the cause."""
    # upb names the cause in its message; say which one rather than guessing.
    if "MaxDepth" in reason:
        message = TOO_DEEP_MESSAGE
    elif "UTF-8" in reason:
        message = BAD_UTF8_MESSAGE
    else:
        message = UNDECODABLE_MESSAGE
    return RequestRejected(
        grpc.StatusCode.INVALID_ARGUMENT, message, [FieldViolation("request", message)]
    )


async def checked_stream(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The stream's messages; RequestRejected at the first one that did not parse."""
    async for message in requests:
        if isinstance(message, Undecodable):
            raise undecodable(message.reason)
        if isinstance(message, RequestRejected):  # refused from its bytes (`screening`)
            raise message
        yield message


def _share_of(context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """Make the call's work take its caller's share (`core.fairness.current_caller`): its
    tenant, or with auth off its connection (all calls through one proxy connection are
    then one caller)."""
    who = current_principal.get()
    current_caller.set(tenant_key(who.name) if who is not None else f"peer:{context.peer()}")


def _let_go(err: BaseException) -> None:
    """Drop what the refused call's frames hold (its request, the strings read from it).

    The refusal's traceback keeps the handler's frames, and the abort that follows puts
    them in a reference cycle that only the cyclic collector frees: ten refused 60 MB
    requests stayed resident (~1 GB) until it ran. The frames have finished, so their
    locals can go now; the guard's own frame drops the request itself.
    """
    traceback.clear_frames(err.__traceback__)


H = TypeVar("H", bound=Callable[..., Awaitable[Any]])
G = TypeVar("G", bound=Callable[..., AsyncIterator[Any]])


def guarded_unary(fn: H) -> H:
    """Turn RequestRejected into its status and any other fault into a generic INTERNAL."""

    @functools.wraps(fn)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            if isinstance(request, Undecodable):
                raise undecodable(request.reason)
            if isinstance(request, RequestRejected):  # refused from its bytes (`screening`)
                raise request
            _share_of(context)
            return await fn(self, request, context)
        except (grpc.aio.AbortError, grpc.aio.UsageError):
            raise
        except Exception as err:
            rejected = rejection(err)
            if rejected is None:
                log.exception("unexpected fault in %s", fn.__name__)
                await context.abort(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)
            request = None
            _let_go(err)
            await abort(context, rejected)

    return wrapper  # type: ignore[return-value]


def guarded_stream(fn: G) -> G:
    """The streaming counterpart of `guarded_unary`; a refused client stream is read on
    (bounded) before its refusal is sent (`registration.drain`)."""

    @functools.wraps(fn)
    async def wrapper(
        self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        streamed = hasattr(request, "__aiter__")
        try:
            if isinstance(request, Undecodable):
                raise undecodable(request.reason)
            if isinstance(request, RequestRejected):  # refused from its bytes (`screening`)
                raise request
            _share_of(context)
            if streamed:
                request = checked_stream(request)
            async for item in fn(self, request, context):
                yield item
        except (grpc.aio.AbortError, grpc.aio.UsageError):
            raise
        except Exception as err:
            rejected = rejection(err)
            if rejected is None:
                log.exception("unexpected fault in %s", fn.__name__)
                await context.abort(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)
            else:
                if streamed:  # what the caller still sends, first (`registration.drain`)
                    await drain(request)
                request = None
                _let_go(err)
                await abort(context, rejected)

    return wrapper  # type: ignore[return-value]
