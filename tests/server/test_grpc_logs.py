"""A response write that lost a race with the caller's cancel is not logged as an error."""

from __future__ import annotations

import logging
import sys

import pytest
from grpc._cython import cygrpc
from scorewire.server.grpc_logs import GRPC_AIO_LOGGER, LateWriteFilter, quiet_late_writes


def _record(exc: BaseException | None, msg: str) -> logging.LogRecord:
    exc_info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord(GRPC_AIO_LOGGER, logging.ERROR, __file__, 1, msg, (), exc_info)


LATE = cygrpc.ExecuteBatchError(
    'Failed "execute_batch": (<grpc._cython.cygrpc.SendMessageOperation object at 0x7f>,)'
)


def test_a_failed_response_write_becomes_debug() -> None:
    record = _record(LATE, "ExecuteBatchError raised in core by servicer method [/x/Y]")
    assert LateWriteFilter().filter(record) is False  # DEBUG is off for grpc's logger
    assert record.levelno == logging.DEBUG


@pytest.mark.parametrize(
    "exc",
    [
        cygrpc.ExecuteBatchError('Failed "execute_batch": (<SendStatusFromServerOperation>,)'),
        RuntimeError("SendMessageOperation"),  # not gRPC core's failure
        None,
    ],
)
def test_every_other_grpc_error_is_left_as_it_is(exc: BaseException | None) -> None:
    record = _record(exc, "Unexpected [RuntimeError] raised by servicer method [/x/Y]")
    assert LateWriteFilter().filter(record) is True and record.levelno == logging.ERROR


def test_the_server_installs_the_filter_once(caplog: pytest.LogCaptureFixture) -> None:
    quiet_late_writes()
    quiet_late_writes()
    logger = logging.getLogger(GRPC_AIO_LOGGER)
    assert sum(isinstance(f, LateWriteFilter) for f in logger.filters) == 1
    with caplog.at_level(logging.INFO):
        try:
            raise LATE
        except cygrpc.ExecuteBatchError:
            logger.exception("ExecuteBatchError raised in core by servicer method [/x/Y]")
            logger.error("another error")
    assert [r.getMessage() for r in caplog.records] == ["another error"]
    assert sys.exc_info() == (None, None, None)
