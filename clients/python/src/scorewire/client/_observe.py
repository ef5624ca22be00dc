"""`Observer`: production outputs to ObserveService from a background thread.

`observe()` only converts the observation and appends it to a bounded buffer; a sender
thread sends batches (by count, or whatever waited `flush_interval_s`), retries
UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED with backoff, and drops (and
counts) what it cannot send. Nothing it does raises into the caller. Everything but the
thread is shared with `AsyncObserver` (`_observe_shared`).
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

import grpc
from scorewire.client._observe_shared import ObserverBase
from scorewire.client.errors import ScorewireError
from scorewire.v1 import observe_pb2 as opb


class Observer(ObserverBase):
    """Sends observations of production traffic in the background; see `Client.observer`.

    Thread-safe. `observe()` never blocks on the network and never raises. Use as a
    context manager, or call `close()` (before closing the client).
    """

    def _start(self) -> None:
        self._wake = threading.Event()
        self._abort = threading.Event()  # close()'s deadline passed
        self._call: Any = None  # the Observe call in flight (a grpc.Future)
        self._abandoned = False  # the sender stopped with observations unsent
        self._thread = threading.Thread(target=self._run, name="scorewire-observer", daemon=True)
        self._thread.start()

    def _wake_sender(self) -> None:
        self._wake.set()

    def flush(self, timeout_s: float | None = None) -> bool:
        """Send everything observed so far and wait until each is acknowledged or
        dropped; False if `timeout_s` passed first (they stay buffered and are sent)."""
        target = self._buffer.accepted
        self._wake.set()
        return self._buffer.wait_flushed(target, timeout_s)

    def close(self, timeout_s: float = 5.0) -> bool:
        """Stop taking observations, send what is buffered for up to `timeout_s`, then
        drop what is left (reason `closed`). False if anything had to be dropped."""
        self._buffer.close()
        self._wake.set()
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            self._abort.set()
            call = self._call
            if call is not None:
                call.cancel()
            self._thread.join()
        return not self._abandoned

    def __enter__(self) -> Observer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> None:
        """The sender: batches whenever woken or every flush interval, until closed and
        empty, or aborted; then whatever is unsent is dropped as `closed`."""
        try:
            while not self._abort.is_set() and not self._buffer.finished():
                self._wake.wait(self._interval)
                self._wake.clear()
                while not self._abort.is_set() and (batch := self._buffer.take()):
                    self._send(batch)
        except ValueError:  # grpc's "Channel closed!": the client was closed first
            pass
        finally:
            self._abandoned = self._buffer.abandon()

    def _send(self, batch: list[opb.Observation]) -> None:
        """One batch, with retries, until settled or aborted (then `_run` drops it)."""
        sending = self._batch_send(batch)
        while not self._abort.is_set():
            wait = sending.answered(self._attempt(sending.request))
            if wait is None or self._abort.wait(wait):
                return

    def _attempt(self, request: opb.ObserveRequest) -> opb.ObserveResponse | ScorewireError | None:
        """One Observe call: its response, its error, or None if cancelled."""
        try:
            self._call = self._stub.Observe.future(
                request, timeout=self._call_timeout, metadata=self._metadata
            )
            if self._abort.is_set():  # close() may have looked before the call began
                self._call.cancel()
            response: opb.ObserveResponse = self._call.result()
            return response
        except grpc.FutureCancelledError:
            return None
        except grpc.RpcError as err:
            return ScorewireError.from_rpc_error(err)
        finally:
            self._call = None
