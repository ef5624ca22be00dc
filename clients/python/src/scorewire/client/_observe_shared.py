"""What the two observers share, everything but their I/O.

`Observer` sends from a thread, `AsyncObserver` from a task on the event loop; both take
observations through `ObserverBase.observe` (the observation built from the caller's
data, then the bounded buffer), count them in one `ObservationBuffer`, and let a
`BatchSend` decide after each Observe call whether a batch is settled, sent again after
a backoff, or cut down to the observations the server did not refuse.
"""

from __future__ import annotations

import random
import re
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
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
    """A snapshot of what an observer did with the observations it was given."""

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


class ObserverBase:
    """The part of `Observer` and `AsyncObserver` that does no I/O: the options,
    `observe()` and `stats()`. A subclass starts its sender in `_start` and wakes it in
    `_wake_sender`."""

    def __init__(
        self,
        channel: Any,
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
        # One generated stub for both: on a grpc.aio channel its calls are awaitable.
        self._stub = observe_pb2_grpc.ObserveServiceStub(channel)
        self._metadata = metadata
        self._interval = flush_interval_s
        self._call_timeout = call_timeout_s
        self._max_attempts = max_attempts
        self._backoff = (initial_backoff_s, max_backoff_s)
        self._buffer = ObservationBuffer(buffer_size, batch_size)
        self._start()

    def _start(self) -> None:
        raise NotImplementedError

    def _wake_sender(self) -> None:
        raise NotImplementedError

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
        installed and a span is recording); `observed_at` defaults to now. Never raises
        and never waits on the network.
        """
        try:
            obs = observation(
                output, sample, trace_id, span_id, route, model, tenant, labels, observed_at
            )
            obs.observation_id = observation_id
        except Exception:  # nothing may reach the caller's request path
            return self._buffer.refuse("invalid")
        taken, batch_ready = self._buffer.put(obs)
        if batch_ready:
            self._wake_sender()
        return taken

    def stats(self) -> ObserverStats:
        """The counters now."""
        return self._buffer.stats()

    def _batch_send(self, batch: list[opb.Observation]) -> BatchSend:
        return BatchSend(batch, self._buffer, self._max_attempts, self._backoff)


class ObservationBuffer:
    """The observations waiting to be sent, and what became of each one taken: every one
    is settled once, acknowledged or dropped. Thread-safe."""

    def __init__(self, size: int, batch_size: int) -> None:
        self._size = size
        self._batch_size = batch_size
        self._lock = threading.Condition()  # notified whenever observations are settled
        self._waiting: deque[opb.Observation] = deque()
        self._in_flight = 0
        self._accepted = 0
        self._settled = 0
        self._queued = 0
        self._duplicate = 0
        self._retries = 0
        self._dropped = dict.fromkeys(DROP_REASONS, 0)
        self._closed = False

    def put(self, obs: opb.Observation) -> tuple[bool, bool]:
        """Take `obs` unless closed or full (counting the drop); (taken, a batch is ready)."""
        with self._lock:
            if self._closed:
                self._dropped["closed"] += 1
                return False, False
            if len(self._waiting) + self._in_flight >= self._size:
                self._dropped["buffer_full"] += 1
                return False, False
            self._waiting.append(obs)
            self._accepted += 1
            return True, len(self._waiting) >= self._batch_size

    def refuse(self, reason: str) -> bool:
        """Count one observation dropped before it was taken; False."""
        with self._lock:
            self._dropped[reason] += 1
        return False

    def take(self) -> list[opb.Observation]:
        """The next batch (empty when nothing waits), now in flight."""
        with self._lock:
            n = min(len(self._waiting), self._batch_size)
            self._in_flight += n
            return [self._waiting.popleft() for _ in range(n)]

    def acknowledged(self, response: opb.ObserveResponse, n: int) -> None:
        """`n` observations in flight were acknowledged by `response`."""
        duplicate = sum(a.status == opb.OBSERVATION_STATUS_DUPLICATE for a in response.acks)
        with self._lock:
            self._duplicate += duplicate
            self._queued += len(response.acks) - duplicate
            self._settle(n)

    def dropped(self, reason: str, n: int) -> None:
        """`n` observations in flight were dropped for `reason`."""
        with self._lock:
            self._dropped[reason] += n
            self._settle(n)

    def retried(self) -> None:
        """A batch is being sent again."""
        with self._lock:
            self._retries += 1

    def close(self) -> None:
        """Take no more observations."""
        with self._lock:
            self._closed = True

    def abandon(self) -> bool:
        """Close, and drop everything unsent (waiting or in flight) as `closed`: the sender
        has stopped. True if anything was dropped."""
        with self._lock:
            self._closed = True
            self._in_flight += len(self._waiting)
            self._waiting.clear()
            n = self._in_flight
            self._dropped["closed"] += n
            self._settle(n)
            return n > 0

    def _settle(self, n: int) -> None:
        self._in_flight -= n
        self._settled += n
        self._lock.notify_all()

    @property
    def accepted(self) -> int:
        """Observations taken so far."""
        with self._lock:
            return self._accepted

    def flushed(self, target: int) -> bool:
        """Whether `target` observations (the first `target` taken) are settled."""
        with self._lock:
            return self._settled >= target

    def wait_flushed(self, target: int, timeout_s: float | None) -> bool:
        """Block the calling thread until `flushed(target)`; False if `timeout_s` passed."""
        with self._lock:
            return self._lock.wait_for(lambda: self._settled >= target, timeout_s)

    def finished(self) -> bool:
        """Closed with nothing left to send: the sender may stop."""
        with self._lock:
            return self._closed and not self._waiting and not self._in_flight

    def stats(self) -> ObserverStats:
        """The counters now."""
        with self._lock:
            return ObserverStats(
                accepted=self._accepted,
                queued=self._queued,
                duplicate=self._duplicate,
                dropped=dict(self._dropped),
                buffered=len(self._waiting) + self._in_flight,
                retries=self._retries,
            )


class BatchSend:
    """One batch's way through its Observe calls, without the calls: send `request`, then
    tell `answered` what came back."""

    def __init__(
        self,
        batch: list[opb.Observation],
        buffer: ObservationBuffer,
        max_attempts: int,
        backoff: tuple[float, float],
    ) -> None:
        self._batch = batch
        self._buffer = buffer
        self._max_attempts = max_attempts
        self._backoff, self._max_backoff = backoff
        self._attempts = 0
        self._split = False
        self.request = opb.ObserveRequest(observations=batch)
        """What to send next."""

    def answered(self, outcome: opb.ObserveResponse | ScorewireError | None) -> float | None:
        """Count what one call's outcome (its response, its error, or None when it was
        cancelled) settles. None when the whole batch is settled; otherwise the seconds to
        wait before sending `request` again.

        Retryable codes are sent again up to `max_attempts` calls, after a random wait up to
        a backoff that doubles each time. When INVALID_ARGUMENT names the bad observations
        of the batch, only those are dropped and the rest sent again at once, once.
        """
        self._attempts += 1
        n = len(self._batch)
        if isinstance(outcome, opb.ObserveResponse):
            self._buffer.acknowledged(outcome, n)
            return None
        if outcome is None or outcome.code == grpc.StatusCode.CANCELLED:
            self._buffer.dropped("closed", n)
            return None
        if outcome.code not in RETRYABLE:
            bad = None if self._split else _refused(outcome, n)
            if not bad or len(bad) == n:
                self._buffer.dropped("rejected", n)
                return None
            self._split = True
            self._buffer.dropped("rejected", len(bad))
            self._batch = [o for i, o in enumerate(self._batch) if i not in bad]
            self.request = opb.ObserveRequest(observations=self._batch)
            return 0.0
        if self._attempts >= self._max_attempts:
            self._buffer.dropped("retries_exhausted", n)
            return None
        self._buffer.retried()
        wait = random.uniform(0, self._backoff)  # full jitter: callers do not retry in step
        self._backoff = min(2 * self._backoff, self._max_backoff)
        return wait


def observation(
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
    """The Observation of the caller's plain data; raises when it cannot be built."""
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


def _refused(err: ScorewireError, n: int) -> set[int] | None:
    """The positions of the observations an INVALID_ARGUMENT names
    (`observations[3].metadata.route`), or None unless every violation names one below n."""
    if err.code != grpc.StatusCode.INVALID_ARGUMENT:
        return None
    bad: set[int] = set()
    for v in err.field_violations:
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
