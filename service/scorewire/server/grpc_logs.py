"""grpc.aio's log of a response write that lost a race with the caller's cancel.

When a caller cancels a streaming call (a client leaving a RunSuite stream early) while
the handler is writing a response, the write fails in gRPC core before the server's
loop has seen the cancel, and grpc.aio logs `ExecuteBatchError raised in core by
servicer method [...]` at ERROR with a traceback. Once it has seen the cancel it
ignores the same failure (`_handle_exceptions`: "If client closed (aka. cancelled),
ignore the failed batch operations"). A failed message write means the call is over in
core (cancelled, past its deadline, or its connection gone), and its status is already
decided there, so `quiet_late_writes` turns those records into DEBUG ones: an operator
sees no error for a caller that went away. Every other grpc record is left as it is.
"""

from __future__ import annotations

import importlib
import logging

GRPC_AIO_LOGGER = "grpc._cython.cygrpc"
"""The logger grpc.aio's server writes its handler errors to."""

EXECUTE_BATCH_ERROR: type[Exception] = importlib.import_module(
    "grpc._cython.cygrpc"
).ExecuteBatchError
"""What gRPC core's failed operation raises (grpc-stubs does not declare the module)."""


class LateWriteFilter(logging.Filter):
    """Demotes a failed response write (ExecuteBatchError on SendMessageOperation) to DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether to emit `record`; a late write is emitted only if DEBUG is on."""
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, EXECUTE_BATCH_ERROR) and "SendMessageOperation" in str(exc):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def quiet_late_writes() -> None:
    """Install `LateWriteFilter` on grpc.aio's logger (once per process)."""
    logger = logging.getLogger(GRPC_AIO_LOGGER)
    if not any(isinstance(f, LateWriteFilter) for f in logger.filters):
        logger.addFilter(LateWriteFilter())
