"""`AsyncObserver`: production outputs to ObserveService from a task on the event loop.

The asyncio twin of `Observer`, with the same options, counters and rules
(`_observe_shared`): only the sender differs, a task instead of a thread, and `flush` and
`close` are awaited. `observe()` stays a plain method that never waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from types import TracebackType

import grpc
import grpc.aio
from scorewire.client._observe_shared import ObserverBase
from scorewire.client.errors import ScorewireError
from scorewire.v1 import observe_pb2 as opb


class AsyncObserver(ObserverBase):
    """Sends observations of production traffic from a task on the running event loop;
    see `AsyncClient.observer`.

    `observe()` is a plain method: it never blocks on the network and never raises, from
    the loop's thread or any other. Use `async with`, or `await close()` (before closing
    the client).
    """

    def _start(self) -> None:
        self._loop = asyncio.get_running_loop()  # RuntimeError outside a running loop
        self._loop_thread = threading.get_ident()
        self._wake = asyncio.Event()
        self._progress = asyncio.Event()  # set whenever observations are settled
        self._abandoned = False  # the sender stopped with observations unsent
        self._task = self._loop.create_task(self._run(), name="scorewire-observer")

    def _wake_sender(self) -> None:
        if threading.get_ident() == self._loop_thread:
            self._wake.set()
            return
        # An asyncio.Event is the loop's own: set it there. A closed loop raises
        # RuntimeError, and nothing will send again.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._wake.set)

    async def flush(self, timeout_s: float | None = None) -> bool:
        """Send everything observed so far and wait until each is acknowledged or
        dropped; False if `timeout_s` passed first (they stay buffered and are sent)."""
        target = self._buffer.accepted
        self._wake.set()
        waiter = asyncio.ensure_future(self._flushed(target))
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout_s)
        finally:
            waiter.cancel()
        return bool(done)

    async def close(self, timeout_s: float = 5.0) -> bool:
        """Stop taking observations, send what is buffered for up to `timeout_s`, then
        drop what is left (reason `closed`). False if anything had to be dropped."""
        self._buffer.close()
        self._wake.set()
        done, _ = await asyncio.wait({self._task}, timeout=timeout_s)
        if not done:
            self._task.cancel()  # ends its call or its backoff; it drops what is left
            await asyncio.wait({self._task})
        return not self._abandoned

    async def __aenter__(self) -> AsyncObserver:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _flushed(self, target: int) -> None:
        while not self._buffer.flushed(target):
            self._progress.clear()
            await self._progress.wait()

    async def _run(self) -> None:
        """The sender: batches whenever woken or every flush interval, until closed and
        empty, or cancelled; then whatever is unsent is dropped as `closed`."""
        try:
            while not self._buffer.finished():
                await self._woken()
                while batch := self._buffer.take():
                    await self._send(batch)
        except grpc.aio.UsageError:  # "Channel is closed.": the client was closed first
            pass
        finally:
            # Also when cancelled: by close() at its deadline, by the loop ending, or by
            # grpc.aio when the channel closed under a call.
            self._abandoned = self._buffer.abandon()
            self._progress.set()

    async def _woken(self) -> None:
        """Return when woken or after the flush interval."""
        timer = self._loop.call_later(self._interval, self._wake.set)
        try:
            await self._wake.wait()
        finally:
            timer.cancel()
        self._wake.clear()

    async def _send(self, batch: list[opb.Observation]) -> None:
        """One batch, with retries, until settled."""
        sending = self._batch_send(batch)
        while True:
            wait = sending.answered(await self._attempt(sending.request))
            self._progress.set()
            if wait is None:
                return
            await asyncio.sleep(wait)

    async def _attempt(self, request: opb.ObserveRequest) -> opb.ObserveResponse | ScorewireError:
        """One Observe call: its response or its error (a cancelled call raises)."""
        try:
            response: opb.ObserveResponse = await self._stub.Observe(
                request, timeout=self._call_timeout, metadata=self._metadata
            )
            return response
        except grpc.RpcError as err:
            return ScorewireError.from_rpc_error(err)
