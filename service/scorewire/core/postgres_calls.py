"""PostgreSQL for the stores: a connection pool, and one deadline per store operation.

`open_pool(url, ...)` makes the pool the label and run stores share the settings of;
`within(op, timeout_s)` runs one operation (taking a connection included) and gives up
on it at the deadline. Both stores go through them, so that a database that does not
answer costs every caller the same `SCOREWIRE_STORE_TIMEOUT_S`, whatever it stopped in.

Why the operation runs as a task of its own: psycopg, when the task awaiting a query is
cancelled, sends the server a cancel request and waits for the query to end, up to
5 s for each (fixed in psycopg), before the cancellation goes on. Against a server that
does not answer (stopped, frozen, its host gone) an `asyncio.timeout` around the query
therefore ended 10 s late. Here the caller is answered at the deadline, and the task is
cancelled and left to finish that clean-up in the background; its connection goes back
to the pool afterwards, which resets it (or drops it, when psycopg closed it) before
handing it out again.

A server that stopped without a word (frozen, or its host gone) sends nothing a client
could notice: only the client's own deadline ends the wait. TCP keepalives on every
connection, and a TCP user timeout of the deadline, let the kernel drop the pool's
connections to a host that vanished (unacknowledged data, unanswered probes) instead
of keeping them for the pool to hand out.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit

from psycopg_pool import AsyncConnectionPool
from psycopg_pool.base import AttemptWithBackoff

T = TypeVar("T")

_ABANDONED: set[asyncio.Task[object]] = set()
"""Operations past their deadline, finishing their cancellation in the background."""


# psycopg_pool tries again to reach a database it lost after a delay that doubles from
# 1 s, bounded only by `reconnect_timeout` (300 s): a few seconds into an outage its next
# try was already several seconds away, so calls failed at their deadline after the
# database was back (tests/runs/test_store_down.py failed about one run in two). A try a
# second keeps the recovery within about a second of the database's return, for one
# connection attempt a second per pool while it is down.
AttemptWithBackoff.DELAY_BACKOFF = 1.0


def store_address(url: str) -> str:
    """`scheme://host:port/db` of a store URL, without its user, password or query: how
    logs and errors name a database."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


def open_pool(
    url: str, *, name: str, timeout_s: float, max_size: int, longest_s: float | None = None
) -> AsyncConnectionPool:
    """A pool on `url` (not opened yet: `await pool.open(wait=False)`) whose connections
    autocommit, run in UTC, stop a statement after `timeout_s` on the server, and whose
    lost connections are noticed: checked before each use, kept alive by TCP probes.

    `longest_s` (default `timeout_s`) is the longest deadline any operation of the store
    has: a connection is waited for that long at most, `within` bounding each operation.
    """
    idle_s = max(1, math.ceil(timeout_s))
    return AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        timeout=max(timeout_s, longest_s or 0.0),
        check=AsyncConnectionPool.check_connection,
        name=name,
        kwargs={
            "autocommit": True,
            # libpq's minimum is 2 s; `within` bounds what a caller waits anyway.
            "connect_timeout": max(2, math.ceil(timeout_s)),
            "keepalives": 1,
            "keepalives_idle": idle_s,
            "keepalives_interval": idle_s,
            "keepalives_count": 3,
            "tcp_user_timeout": int(timeout_s * 1000),
            "application_name": "scorewire",
            "options": f"-c statement_timeout={int(timeout_s * 1000)} -c timezone=UTC",
        },
    )


async def within(op: Callable[[], Awaitable[T]], timeout_s: float) -> T:
    """`op()`'s result, or TimeoutError once `timeout_s` has passed without one.

    An operation that finished by the deadline counts, even when the caller hears of it
    late. One that did not is cancelled and not waited for (see the module's docstring);
    a caller cancelled meanwhile cancels it too.
    """
    task: asyncio.Task[T] = asyncio.ensure_future(op())
    try:
        await asyncio.wait((task,), timeout=timeout_s)
    finally:
        if not task.done():
            task.cancel()
            _ABANDONED.add(task)
            task.add_done_callback(_forget)
    if not task.done():
        raise TimeoutError
    return task.result()


def _forget(task: asyncio.Task[object]) -> None:
    _ABANDONED.discard(task)
    if not task.cancelled():
        task.exception()  # its caller was told at the deadline; nothing to report twice
