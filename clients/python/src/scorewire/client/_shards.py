"""One large RunSuite batch over several replicas: `run_suite(..., shards=N)` of the
blocking client (ShardedRun, chunks on threads) and of the asyncio one (AsyncShardedRun,
chunks as tasks), the same rules for both.

The cases are split into chunks of consecutive cases (at most `chunk_cases` each, and
at least N chunks), which run as separate RunSuite calls, N at a time, over the
client's channel: its round_robin policy (several addresses, or a name resolving to
several) or an L7 proxy spreads them over the replicas. Then:

- **Retries.** A chunk whose call fails with UNAVAILABLE, or whose stream breaks (the
  transport lost it: a replica killed behind nginx shows as INTERNAL "RST_STREAM",
  behind HAProxy as UNKNOWN "Stream removed"), is sent again whole, up to
  `chunk_attempts` times in all; the next call goes to another replica as the channel
  (or the proxy) picks it. Any other error fails the run, and the other chunks are
  cancelled.
- **Exactly once.** A chunk's results are held until its summary arrives, then
  released: a case whose first attempt broke is reported once, from the attempt that
  finished, and every result agrees with the merged summary. Memory is bounded by
  `chunk_cases` times the chunks in flight.
- **Indexes.** `CaseResult.index` refers to the caller's list, not to the chunk.
- **Summary.** The chunks' summaries are merged by counts and sums and the gate judged
  again on the merged totals (`scorewire.client._summary`).
- **Budget.** A run's `budget_usd` is divided among the chunks in proportion to their
  cases, so the whole batch never spends more than it; a chunk may run out of its share
  while another has some left.
- **One run.** A batch of several chunks sent with `record=True` is recorded as one run:
  the client opens it (OpenRun), sends each chunk as a part of it (`part`, with the index
  of its first case) and closes it with the merged summary (CloseRun), or as interrupted
  when the run fails or is cancelled. `run_ids` then names that one run, and so does the
  merged summary's `run_id`. A chunk sent again after its replica was lost may leave the
  lost attempt's first results in the run as well: the run then lists those cases twice.
- **Whole batches.** A checkllm batch (`format` CHECKLLM, or any case naming its
  `test`, `prompt` or `provider`) is sent as one chunk: the server scores recorded
  combinations only with every one present, so a part of the batch would be refused.
  So is a request without cases (a suite document with its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import grpc
from scorewire.client._summary import merge_summaries
from scorewire.client.errors import ScorewireError
from scorewire.v1 import scoring_pb2 as pb

DEFAULT_CHUNK_CASES = 5_000
"""Most cases in one chunk (one RunSuite call) unless `chunk_cases` says otherwise."""
DEFAULT_CHUNK_ATTEMPTS = 3
"""Attempts of one chunk, the first included, before the run fails."""

# What gRPC's own transport says when it lost a stream (no status from the server).
_BROKEN_STREAM = ("Stream removed", "RST_STREAM", "Socket closed", "ended without a summary")


def retryable(err: ScorewireError) -> bool:
    """Whether a chunk that failed with `err` is worth sending to another replica."""
    if err.code == grpc.StatusCode.UNAVAILABLE:
        return True
    if err.code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
        return any(mark in err.message for mark in _BROKEN_STREAM)
    return False


class ChunkRun(Protocol):
    """One chunk's RunSuite call: the client's SuiteRun."""

    def __iter__(self) -> Iterator[pb.CaseResult]: ...

    @property
    def summary(self) -> pb.RunSummary: ...

    def cancel(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive cases of the caller's list, from `offset`."""

    offset: int
    request: pb.RunSuiteRequest


def split(
    base: pb.RunSuiteRequest, cases: Sequence[pb.Case], shards: int, chunk_cases: int
) -> list[Chunk]:
    """Chunks of `cases`, each a copy of `base` (no cases in it) with its own cases and
    its share of `base.budget_usd`; one chunk for a checkllm batch (see the module)."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, not {shards}")
    if chunk_cases < 1:
        raise ValueError(f"chunk_cases must be at least 1, not {chunk_cases}")
    n = len(cases)
    count = max(min(shards, n), math.ceil(n / chunk_cases), 1)
    if base.format == pb.SUITE_FORMAT_CHECKLLM or any(
        c.test or c.prompt or c.provider for c in cases
    ):
        count = 1  # scored only whole: every combination in one request
    size = max(math.ceil(n / count), 1)
    template = pb.RunSuiteRequest()
    template.CopyFrom(base)
    del template.cases[:]
    chunks = []
    for offset in range(0, max(n, 1), size):
        part = cases[offset : offset + size]
        req = pb.RunSuiteRequest()
        req.CopyFrom(template)
        req.cases.extend(part)
        if base.HasField("budget_usd") and n:
            req.budget_usd = base.budget_usd * len(part) / n
        chunks.append(Chunk(offset, req))
    return chunks


def one_recorded_run(base: pb.RunSuiteRequest, chunks: Sequence[Chunk]) -> bool:
    """Whether `chunks` go as the parts of one recorded run (several, `record=True`)."""
    return len(chunks) > 1 and base.HasField("record") and base.record


def as_parts(chunks: Sequence[Chunk], run_id: str) -> None:
    """Make each chunk a part of the run `run_id`: OpenRun set what the run is."""
    for chunk in chunks:
        req = chunk.request
        req.ClearField("record")
        req.run_name = ""
        req.labels.clear()
        req.part.run_id, req.part.first_index = run_id, chunk.offset


Close = Callable[[pb.RunSummary | None], None]
"""CloseRun for a run sent in parts: its merged summary, or None (interrupted)."""


class ShardedRun(Iterator[pb.CaseResult]):
    """A batch run as chunks over several replicas: iterate for every CaseResult (each
    case once, chunk by chunk as chunks finish), then read `summary`, the merged one.

    `start(request)` starts one RunSuite call and returns its SuiteRun (the client's);
    `shards` chunks are in flight at a time. A failed run raises ScorewireError from the
    iteration after cancelling the other chunks.
    """

    def __init__(
        self,
        start: Callable[[pb.RunSuiteRequest], ChunkRun],
        chunks: Sequence[Chunk],
        shards: int,
        attempts: int = DEFAULT_CHUNK_ATTEMPTS,
        run_id: str = "",
        close: Close | None = None,
    ) -> None:
        self._start = start
        self._attempts = attempts
        self._run_id = run_id
        self._close = close
        self._done: queue.Queue[Future[tuple[list[pb.CaseResult], pb.RunSummary]]] = queue.Queue()
        self._open: set[ChunkRun] = set()
        self._lock = threading.Lock()
        self._cancelled = False
        self._pending = len(chunks)
        self._summaries: list[pb.RunSummary] = []
        self._batch: Iterator[pb.CaseResult] = iter(())
        self._summary: pb.RunSummary | None = None
        self.retries = 0
        """Chunk attempts that failed and were sent again."""
        self.received = 0
        """Results received so far, held ones and those of attempts that failed included
        (progress: more than the cases when chunks were retried)."""
        self.open_chunks: dict[int, int] = {}
        """Chunks in flight, by the offset of their first case: results received so far
        in the current attempt."""
        self._run_ids: dict[int, str] = {}
        self._pool = ThreadPoolExecutor(max_workers=shards, thread_name_prefix="scorewire-shard")
        for chunk in chunks:
            self._pool.submit(self._run, chunk).add_done_callback(self._done.put)

    def _run(self, chunk: Chunk) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        for attempt in range(1, self._attempts + 1):
            try:
                return self._attempt(chunk)
            except ScorewireError as err:
                if self._cancelled or attempt == self._attempts or not retryable(err):
                    raise
                with self._lock:
                    self.retries += 1
        raise AssertionError("unreachable")

    def _attempt(self, chunk: Chunk) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        if self._cancelled:
            raise ScorewireError(grpc.StatusCode.CANCELLED, "the run was cancelled")
        run = self._start(chunk.request)
        with self._lock:
            self._open.add(run)
            self.open_chunks[chunk.offset] = 0
        try:
            results = []
            for r in run:
                r.index += chunk.offset
                results.append(r)
                with self._lock:
                    self.received += 1
                    self.open_chunks[chunk.offset] += 1
            summary = run.summary
            if summary.run_id:
                with self._lock:
                    self._run_ids[chunk.offset] = summary.run_id
            return results, summary
        finally:
            with self._lock:
                self._open.discard(run)
                del self.open_chunks[chunk.offset]

    def __iter__(self) -> ShardedRun:
        return self

    def __next__(self) -> pb.CaseResult:
        while True:
            result = next(self._batch, None)
            if result is not None:
                return result
            if self._pending == 0:
                if self._summary is None:
                    merged = merge_summaries(self._summaries)
                    self._pool.shutdown(wait=False)
                    if self._close is not None:
                        merged.run_id = self._run_id
                        close, self._close = self._close, None
                        close(merged)
                    self._summary = merged
                raise StopIteration
            future = self._done.get()
            self._pending -= 1
            try:
                results, summary = future.result()
            except BaseException:
                self._pending = 0
                self.cancel()
                raise
            self._summaries.append(summary)
            self._batch = iter(results)

    @property
    def summary(self) -> pb.RunSummary:
        """The merged summary; available once every result has been read."""
        if self._summary is None:
            raise RuntimeError("the summary arrives after the last result: iterate first")
        return self._summary

    @property
    def run_ids(self) -> list[str]:
        """The ids of the runs the chunks were recorded as (`record`), in the order of
        their cases: several chunks are several runs, which the merged summary's empty
        `run_id` cannot name. Complete once every result has been read."""
        with self._lock:
            return list(dict.fromkeys(self._run_ids[k] for k in sorted(self._run_ids)))

    def collect(self) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        """Read every remaining result; return them with the merged summary."""
        results = list(self)
        return results, self.summary

    def cancel(self) -> None:
        """Stop the run: chunks not started never start, open calls are cancelled, and a
        run sent in parts is closed as interrupted."""
        self._cancelled = True
        with self._lock:
            runs = list(self._open)
        for run in runs:
            run.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._close is not None:
            close, self._close = self._close, None
            with contextlib.suppress(ScorewireError):  # the run lapses on the server anyway
                close(None)

    def __enter__(self) -> ShardedRun:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()


class AsyncChunkRun(Protocol):
    """One chunk's RunSuite call: the asyncio client's AsyncSuiteRun."""

    def __aiter__(self) -> AsyncIterator[pb.CaseResult]: ...

    @property
    def summary(self) -> pb.RunSummary: ...

    def cancel(self) -> None: ...


AsyncClose = Callable[[pb.RunSummary | None], Awaitable[None]]
"""`Close` for the asyncio client."""


class AsyncShardedRun(AsyncIterator[pb.CaseResult]):
    """`ShardedRun` for the asyncio client: `async for` every CaseResult, then read
    `summary`. The chunks are tasks of the running loop, started by the first `__anext__`,
    `shards` of them calling at a time."""

    def __init__(
        self,
        start: Callable[[pb.RunSuiteRequest], AsyncChunkRun],
        chunks: Sequence[Chunk],
        shards: int,
        attempts: int = DEFAULT_CHUNK_ATTEMPTS,
        parts: tuple[Callable[[], Awaitable[str]], AsyncClose] | None = None,
    ) -> None:
        self._start = start
        self._parts = parts
        self._run_id = ""
        self._chunks = list(chunks)
        self._shards = shards
        self._attempts = attempts
        self._tasks: list[asyncio.Task[tuple[list[pb.CaseResult], pb.RunSummary]]] = []
        self._done: asyncio.Queue[asyncio.Task[tuple[list[pb.CaseResult], pb.RunSummary]]]
        self._pending = len(self._chunks)
        self._summaries: list[pb.RunSummary] = []
        self._batch: Iterator[pb.CaseResult] = iter(())
        self._summary: pb.RunSummary | None = None
        self.retries = 0
        """Chunk attempts that failed and were sent again."""
        self.received = 0
        """Results received so far, those of attempts that failed included."""
        self.open_chunks: dict[int, int] = {}
        """Chunks in flight, by the offset of their first case: results received so far
        in the current attempt."""
        self._run_ids: dict[int, str] = {}

    def _begin(self) -> None:
        self._done = asyncio.Queue()
        slots = asyncio.Semaphore(self._shards)
        for chunk in self._chunks:
            task = asyncio.ensure_future(self._run(chunk, slots))
            task.add_done_callback(self._done.put_nowait)
            self._tasks.append(task)

    async def _run(
        self, chunk: Chunk, slots: asyncio.Semaphore
    ) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        async with slots:
            for attempt in range(1, self._attempts + 1):
                try:
                    return await self._attempt(chunk)
                except ScorewireError as err:
                    if attempt == self._attempts or not retryable(err):
                        raise
                    self.retries += 1
        raise AssertionError("unreachable")

    async def _attempt(self, chunk: Chunk) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        run = self._start(chunk.request)
        self.open_chunks[chunk.offset] = 0
        try:
            results = []
            async for r in run:
                r.index += chunk.offset
                results.append(r)
                self.received += 1
                self.open_chunks[chunk.offset] += 1
            summary = run.summary
            if summary.run_id:
                self._run_ids[chunk.offset] = summary.run_id
            return results, summary
        except asyncio.CancelledError:
            run.cancel()
            raise
        finally:
            del self.open_chunks[chunk.offset]

    def __aiter__(self) -> AsyncShardedRun:
        return self

    async def __anext__(self) -> pb.CaseResult:
        if not self._tasks and self._pending:
            if self._parts is not None:
                self._run_id = await self._parts[0]()
                as_parts(self._chunks, self._run_id)
            self._begin()
        while True:
            result = next(self._batch, None)
            if result is not None:
                return result
            if self._pending == 0:
                if self._summary is None:
                    merged = merge_summaries(self._summaries)
                    if self._parts is not None:
                        merged.run_id = self._run_id
                        close, self._parts = self._parts[1], None
                        await close(merged)
                    self._summary = merged
                raise StopAsyncIteration
            task = await self._done.get()
            self._pending -= 1
            if task.cancelled():
                continue
            try:
                results, summary = task.result()
            except BaseException:
                self._pending = 0
                self.cancel()
                if self._parts is not None:
                    close, self._parts = self._parts[1], None
                    with contextlib.suppress(ScorewireError):
                        await close(None)
                raise
            self._summaries.append(summary)
            self._batch = iter(results)

    @property
    def summary(self) -> pb.RunSummary:
        """The merged summary; available once every result has been read."""
        if self._summary is None:
            raise RuntimeError("the summary arrives after the last result: iterate first")
        return self._summary

    @property
    def run_ids(self) -> list[str]:
        """`ShardedRun.run_ids`: the chunks' recorded runs, in the order of their cases."""
        return list(dict.fromkeys(self._run_ids[k] for k in sorted(self._run_ids)))

    async def collect(self) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        """Read every remaining result; return them with the merged summary."""
        results = [r async for r in self]
        return results, self.summary

    def cancel(self) -> None:
        """Stop the run: every chunk's task is cancelled, and with it its call."""
        for task in self._tasks:
            task.cancel()
