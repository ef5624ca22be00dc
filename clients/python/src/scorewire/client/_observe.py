"""`Observer`: production outputs to ObserveService from a background thread.

`observe()` only converts the observation and appends it to a bounded buffer; a sender
thread sends batches (by count, or whatever waited `flush_interval_s`), retries
UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED with backoff, and drops (and
counts) what it cannot send. Nothing it does raises into the caller.
"""

from __future__ import annotations

import random
import re
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any

import grpc
from scorewire.client import _convert
from scorewire.client._convert import OutputLike, SampleLike
from scorewire.client.errors import ScorewireError
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc

try:
    from opentelemetry import trace as _otel_trace
except ImportError:  # tracing is optional
    _otel_trace = None  # type: ignore[assignment]

DROP_REASONS = ("buffer_full", "invalid", "rejected", "retries_exhausted", "closed")
"""Why an observation was dropped: the buffer was full; it could not be converted, or its
trace or span id is not 32 or 16 lowercase hex digits; the server refused it with a code
a retry cannot change (INVALID_ARGUMENT, naming it, or its whole batch;
FAILED_PRECONDITION, ...); every attempt
failed with a retryable code; observed after `close()`, or unsent at its deadline."""

RETRYABLE = frozenset(
    (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    )
)

_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")
_OBSERVATION_FIELD = re.compile(r"observations\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class ObserverStats:
    """A snapshot of what an Observer did with the observations it was given."""

    accepted: int
    """Observations taken into the buffer."""
    queued: int
    """Acknowledged by the server as QUEUED."""
    duplicate: int
    """Acknowledged as DUPLICATE (an observation with the same id was queued before)."""
    dropped: Mapping[str, int]
    """Observations dropped, by reason (every one of `DROP_REASONS`)."""
    buffered: int
    """Waiting or being sent now."""
    retries: int
    """Observe calls sent again after a retryable error."""


class Observer:
    """Sends observations of production traffic in the background; see `Client.observer`.

    Thread-safe. `observe()` never blocks on the network and never raises. Use as a
    context manager, or call `close()` (before closing the client).
    """

    def __init__(
        self,
        channel: grpc.Channel,
        *,
        metadata: tuple[tuple[str, str | bytes], ...] = (),
        buffer_size: int = 10_000,
        batch_size: int = 500,
        flush_interval_s: float = 1.0,
        call_timeout_s: float = 5.0,
        max_attempts: int = 5,
        initial_backoff_s: float = 0.1,
        max_backoff_s: float = 5.0,
    ) -> None:
        if buffer_size < 1 or not 1 <= batch_size <= 1000 or max_attempts < 1:
            raise ValueError("buffer_size >= 1, batch_size 1 to 1000 and max_attempts >= 1")
        self._stub = observe_pb2_grpc.ObserveServiceStub(channel)
        self._metadata = metadata
        self._buffer_size = buffer_size
        self._batch_size = batch_size
        self._interval = flush_interval_s
        self._call_timeout = call_timeout_s
        self._max_attempts = max_attempts
        self._backoff = (initial_backoff_s, max_backoff_s)
        self._lock = threading.Condition()
        self._buf: deque[opb.Observation] = deque()
        self._in_flight = 0
        self._accepted = 0
        self._resolved = 0
        self._queued = 0
        self._duplicate = 0
        self._retries = 0
        self._dropped = dict.fromkeys(DROP_REASONS, 0)
        self._closed = False
        self._wake = threading.Event()
        self._abort = threading.Event()  # close()'s deadline passed
        self._call: Any = None  # the Observe call in flight (a grpc.Future)
        self._thread = threading.Thread(target=self._run, name="scorewire-observer", daemon=True)
        self._thread.start()

    def observe(
        self,
        output: OutputLike,
        *,
        sample: SampleLike = None,
        trace_id: str | None = None,
        span_id: str = "",
        route: str = "",
        model: str = "",
        tenant: str = "",
        labels: Mapping[str, str] | None = None,
        observation_id: str = "",
        observed_at: datetime | None = None,
    ) -> bool:
        """Buffer one output to be sent; True if taken, False if dropped (and counted).

        `output` and `sample` as `Client.score` takes them. With `trace_id` None, the
        current OpenTelemetry span's trace and span ids (when `opentelemetry-api` is
        installed and a span is recording); `observed_at` defaults to now. Never raises.
        """
        try:
            obs = self._observation(
                output, sample, trace_id, span_id, route, model, tenant, labels, observed_at
            )
            obs.observation_id = observation_id
        except Exception:  # nothing may reach the caller's request path
            return self._drop("invalid")
        with self._lock:
            if self._closed:
                self._dropped["closed"] += 1
                return False
            if len(self._buf) + self._in_flight >= self._buffer_size:
                self._dropped["buffer_full"] += 1
                return False
            self._buf.append(obs)
            self._accepted += 1
            full = len(self._buf) >= self._batch_size
        if full:
            self._wake.set()
        return True

    def _observation(
        self,
        output: OutputLike,
        sample: SampleLike,
        trace_id: str | None,
        span_id: str,
        route: str,
        model: str,
        tenant: str,
        labels: Mapping[str, str] | None,
        observed_at: datetime | None,
    ) -> opb.Observation:
        if trace_id is None:
            trace_id, span_id = _current_span()
        if trace_id and not _TRACE_ID.fullmatch(trace_id):
            raise ValueError("trace_id")
        if span_id and not _SPAN_ID.fullmatch(span_id):
            raise ValueError("span_id")
        obs = opb.Observation()
        _convert.fill_output(obs.output, output)
        if sample is not None:
            _convert.fill_sample(obs.sample, sample)
        obs.trace.trace_id = trace_id
        obs.trace.span_id = span_id
        meta = obs.metadata
        meta.route, meta.model, meta.tenant = route, model, tenant
        if labels:
            meta.labels.update(labels)
        if observed_at is None:
            obs.observed_at.GetCurrentTime()
        else:
            obs.observed_at.FromDatetime(observed_at)
        return obs

    def stats(self) -> ObserverStats:
        """The counters now."""
        with self._lock:
            return ObserverStats(
                accepted=self._accepted,
                queued=self._queued,
                duplicate=self._duplicate,
                dropped=dict(self._dropped),
                buffered=len(self._buf) + self._in_flight,
                retries=self._retries,
            )

    def flush(self, timeout_s: float | None = None) -> bool:
        """Send everything observed so far and wait until each is acknowledged or
        dropped; False if `timeout_s` passed first (they stay buffered and are sent)."""
        with self._lock:
            target = self._accepted
        self._wake.set()
        with self._lock:
            return self._lock.wait_for(lambda: self._resolved >= target, timeout_s)

    def close(self, timeout_s: float = 5.0) -> bool:
        """Stop taking observations, send what is buffered for up to `timeout_s`, then
        drop what is left (reason `closed`). False if anything had to be dropped."""
        with self._lock:
            self._closed = True
        self._wake.set()
        self._thread.join(timeout_s)
        if not self._thread.is_alive():
            return not self._abort.is_set()
        self._abort.set()
        call = self._call
        if call is not None:
            call.cancel()
        self._thread.join()
        return False

    def __enter__(self) -> Observer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _drop(self, reason: str) -> bool:
        with self._lock:
            self._dropped[reason] += 1
        return False

    def _run(self) -> None:
        """The sender: batches whenever woken or every flush interval, until closed and
        empty, or aborted."""
        while True:
            self._wake.wait(self._interval)
            self._wake.clear()
            while not self._abort.is_set():
                batch = self._take()
                if not batch:
                    break
                self._send(batch)
            with self._lock:
                left = len(self._buf)
                if self._abort.is_set():
                    self._buf.clear()
                    self._in_flight += left
                elif self._closed and not left:
                    return
            if self._abort.is_set():
                self._resolve(None, "closed", left)
                return

    def _take(self) -> list[opb.Observation]:
        with self._lock:
            n = min(len(self._buf), self._batch_size)
            batch = [self._buf.popleft() for _ in range(n)]
            self._in_flight += n
            return batch

    def _send(self, batch: list[opb.Observation]) -> None:
        """One batch, with retries; then counted. When INVALID_ARGUMENT names the bad
        observations of the batch, only those are dropped and the rest sent again, once."""
        request = opb.ObserveRequest(observations=batch)
        backoff, max_backoff = self._backoff
        attempt, split = 0, False
        while True:
            attempt += 1
            outcome = self._attempt(request)
            if isinstance(outcome, opb.ObserveResponse):
                self._resolve(outcome, None, len(batch))
                return
            code = outcome.code() if outcome is not None else grpc.StatusCode.CANCELLED
            if self._abort.is_set() or code == grpc.StatusCode.CANCELLED:
                self._resolve(None, "closed", len(batch))
                return
            if code not in RETRYABLE:
                bad = None if split else _refused(outcome, len(batch))
                if bad and len(bad) < len(batch):
                    split = True
                    self._resolve(None, "rejected", len(bad))
                    batch = [o for i, o in enumerate(batch) if i not in bad]
                    request = opb.ObserveRequest(observations=batch)
                    continue
                self._resolve(None, "rejected", len(batch))
                return
            if attempt >= self._max_attempts:
                self._resolve(None, "retries_exhausted", len(batch))
                return
            with self._lock:
                self._retries += 1
            # Full jitter: many callers do not retry in step.
            if self._abort.wait(random.uniform(0, backoff)):
                self._resolve(None, "closed", len(batch))
                return
            backoff = min(2 * backoff, max_backoff)

    def _attempt(self, request: opb.ObserveRequest) -> Any:
        """One Observe call: its response, its error (a grpc.Call), or None if cancelled."""
        try:
            self._call = self._stub.Observe.future(
                request, timeout=self._call_timeout, metadata=self._metadata
            )
            if self._abort.is_set():  # close() may have looked before the call began
                self._call.cancel()
            return self._call.result()
        except grpc.FutureCancelledError:
            return None
        except grpc.RpcError as err:
            return err if isinstance(err, grpc.Call) else None
        finally:
            self._call = None

    def _resolve(self, response: opb.ObserveResponse | None, reason: str | None, n: int) -> None:
        with self._lock:
            if response is not None:
                duplicate = sum(a.status == opb.OBSERVATION_STATUS_DUPLICATE for a in response.acks)
                self._duplicate += duplicate
                self._queued += len(response.acks) - duplicate
            elif reason is not None:
                self._dropped[reason] += n
            self._in_flight -= n
            self._resolved += n
            self._lock.notify_all()


def _refused(err: Any, n: int) -> set[int] | None:
    """The positions of the observations an INVALID_ARGUMENT names
    (`observations[3].metadata.route`), or None unless every violation names one below n."""
    if err.code() != grpc.StatusCode.INVALID_ARGUMENT:
        return None
    bad: set[int] = set()
    for v in ScorewireError.from_rpc_error(err).field_violations:
        match = _OBSERVATION_FIELD.match(v.field)
        if match is None or int(match[1]) >= n:
            return None
        bad.add(int(match[1]))
    return bad


def _current_span() -> tuple[str, str]:
    """The current OpenTelemetry span's trace and span ids, or empty ones."""
    if _otel_trace is None:
        return "", ""
    ctx = _otel_trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return "", ""
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"
