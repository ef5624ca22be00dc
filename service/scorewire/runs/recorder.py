"""Writing runs off the scoring path: a bounded queue, one writer task, group commits.

The guarantee: `append` returns only after its chunk is committed, and the server sends
a chunk's results only after `append` returned (store, then send), so every result a
caller received is in the store. While a commit runs, the chunks that arrive meanwhile
wait in the queue and go together in the next transaction, so a run of 80 chunks costs a
handful of commits, not 80.

When the queue is full (`SCOREWIRE_RUNS_QUEUE_CHUNKS` chunks waiting), `append` waits for
room: a stream that records is slowed to the store's pace (backpressure), and no
result is ever dropped. When the store fails, `append` raises `RunsUnavailable` and the
call fails (its results cannot be both sent and stored); so do the writes that queued
while the failed one ran, at once, so that a call hears within about one store
deadline (`SCOREWIRE_STORE_TIMEOUT_S`) that the store is down.

A maintenance task beats this process's heartbeat, marks incomplete the running runs of
processes whose heartbeat stopped (a server killed mid-run), and enforces retention.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from scorewire.runs.run_model import Chunk, RunInfo, RunStore, RunsUnavailable, utc_now

log = logging.getLogger("scorewire.runs")

MAX_OPS_PER_COMMIT = 256
"""Most queued operations one transaction takes."""
MAX_BYTES_PER_COMMIT = 16 * 1024 * 1024
"""Most bytes of chunks one transaction takes (a single larger chunk goes alone): a
transaction must fit in the store's deadline (`SCOREWIRE_STORE_TIMEOUT_S`, 2 s by default).
In PostgreSQL on the development machine (2 cores, load average 4-6), 16 chunks of 1 MiB
took 0.18-0.25 s per transaction and 64 took 0.57-0.85 s (`bench/store_outage.py`)."""
STALE_AFTER_BEATS = 3
"""A process is dead when its heartbeat is this many periods old."""


@dataclass(slots=True)
class _Op:
    kind: str  # "create", "chunk" or "finish"
    item: RunInfo | Chunk
    done: asyncio.Future[None]

    @property
    def size(self) -> int:
        """The bytes it adds to a transaction (runs' rows count as nothing)."""
        item = self.item
        return len(item.cases) + len(item.results) if isinstance(item, Chunk) else 0


def run_owner(run_id: str) -> str:
    """The owner of a run sent in parts: the run itself (`RunRecorder.open`)."""
    return "r_" + run_id


class KeepAlive:
    """A heartbeat beaten in the background until `stop()` (a store that fails is only
    logged: the run then ends incomplete, as its caller would be told by the part)."""

    def __init__(self, store: RunStore, owner: str, period_s: float) -> None:
        self._task = asyncio.ensure_future(self._beat(store, owner, period_s))

    @staticmethod
    async def _beat(store: RunStore, owner: str, period_s: float) -> None:
        while True:
            try:
                await store.heartbeat(owner, utc_now())
            except RunsUnavailable as err:
                log.warning("heartbeat of %s: %s", owner, err)
            await asyncio.sleep(period_s)

    def stop(self) -> None:
        """Stop beating (idempotent)."""
        self._task.cancel()


class RunRecorder:
    """Records runs into a store through one writer task. Start it with `start()`."""

    def __init__(
        self,
        store: RunStore,
        *,
        queue_chunks: int,
        heartbeat_s: float,
        max_age_s: int = 0,
        max_runs: int = 0,
        on_finish: Callable[[RunStore, RunInfo], None] | None = None,
    ) -> None:
        """`on_finish(store, run)` is told of each run finished, after its commit (the
        judge drift watch: `scorewire.runs.drift.DriftWatch.finished`)."""
        self.store = store
        self._on_finish = on_finish
        self.owner = "p_" + uuid.uuid4().hex[:16]
        self._queue: asyncio.Queue[_Op] = asyncio.Queue(maxsize=queue_chunks)
        self._heartbeat_s = heartbeat_s
        self._max_age_s = max_age_s
        self._max_runs = max_runs
        self._tasks: list[asyncio.Task[None]] = []
        self._idle = asyncio.Event()
        self._idle.set()
        self.commits = 0
        """Transactions committed (tests and the benchmark read it)."""

    async def start(self) -> None:
        """Beat the first heartbeat, mark dead processes' runs, start the tasks."""
        await self.maintain()
        self._tasks = [
            asyncio.create_task(self._write_loop(), name="scorewire-runs-writer"),
            asyncio.create_task(self._maintain_loop(), name="scorewire-runs-maintenance"),
        ]

    async def _submit(self, kind: str, item: RunInfo | Chunk) -> None:
        if not self._tasks or self._tasks[0].done():
            raise RunsUnavailable("the run recorder is not running")
        op = _Op(kind, item, asyncio.get_running_loop().create_future())
        self._idle.clear()
        await self._queue.put(op)  # waits for room: backpressure, never loss
        await asyncio.shield(op.done)

    async def begin(self, run: RunInfo) -> None:
        """Create the run (status running, owned by this process); after its commit."""
        run.owner = self.owner
        await self._submit("create", run)

    async def open(self, run: RunInfo) -> None:
        """Create a run its caller sends in parts (OpenRun); after its commit.

        Such a run is owned by itself, not by this process: the calls that send its parts
        may reach any replica, and each beats the run's own heartbeat while it runs
        (`keep_alive`). The run is marked incomplete, like a dead server's, once no part
        has beaten it for `STALE_AFTER_BEATS` periods: its caller died.
        """
        run.owner = run_owner(run.run_id)
        await self.store.heartbeat(run.owner, utc_now())  # before the row: never stale
        await self._submit("create", run)

    def keep_alive(self, owner: str) -> KeepAlive:
        """Beat `owner`'s heartbeat now and every period until `stop()`: a run sent in parts
        stays running while one of its parts is being scored."""
        return KeepAlive(self.store, owner, self._heartbeat_s)

    async def append(self, chunk: Chunk) -> None:
        """Store a chunk of results; returns after its commit (send the results after)."""
        await self._submit("chunk", chunk)

    async def finish(self, run: RunInfo) -> None:
        """Record the run's end (status, end time, summary); after its commit."""
        await self._submit("finish", run)
        if self._on_finish is not None:
            self._on_finish(self.store, run)

    async def _write_loop(self) -> None:
        carried: _Op | None = None  # taken from the queue, the first of the next commit
        while True:
            ops = [carried if carried is not None else await self._queue.get()]
            carried, size = None, ops[0].size
            while len(ops) < MAX_OPS_PER_COMMIT and not self._queue.empty():
                op = self._queue.get_nowait()
                if size + op.size > MAX_BYTES_PER_COMMIT:
                    carried = op
                    break
                ops.append(op)
                size += op.size
            created = [o.item for o in ops if o.kind == "create"]
            chunks = [o.item for o in ops if o.kind == "chunk"]
            finished = [o.item for o in ops if o.kind == "finish"]
            try:
                await self.store.write(created, chunks, finished)  # type: ignore[arg-type]
            except RunsUnavailable as err:
                failure: BaseException | None = err
            except Exception as err:  # a bug must not stop the writer: fail these ops
                log.exception("run store write failed")
                failure = RunsUnavailable(f"the run store failed: {type(err).__name__}")
            else:
                failure = None
                self.commits += 1
            if failure is not None:
                # What queued meanwhile fails with it: its callers hear within one
                # deadline that the store is down, not after a second attempt's.
                if carried is not None:
                    ops.append(carried)
                    carried = None
                while not self._queue.empty():
                    ops.append(self._queue.get_nowait())
            if self._queue.empty() and carried is None:
                self._idle.set()
            for o in ops:
                if not o.done.done():
                    if failure is None:
                        o.done.set_result(None)
                    else:
                        # Each caller its own exception, with no traceback: the caught one
                        # holds this loop's frames, and a caller that clears the frames of
                        # what it raises (the server's refusals do) would close this task.
                        o.done.set_exception(type(failure)(*failure.args))

    async def maintain(self) -> None:
        """One maintenance round: heartbeat, dead owners' runs, retention."""
        now = utc_now()
        try:
            await self.store.heartbeat(self.owner, now)
            stale = now - timedelta(seconds=self._heartbeat_s * STALE_AFTER_BEATS)
            marked = await self.store.mark_stale(stale)
            if marked:
                log.info("marked %d runs of stopped servers incomplete", marked)
            older = now - timedelta(seconds=self._max_age_s) if self._max_age_s else None
            keep = self._max_runs or None
            if older is not None or keep is not None:
                await self.store.enforce_retention(older_than=older, keep=keep)
        except RunsUnavailable as err:
            log.warning("run store maintenance: %s", err)

    async def _maintain_loop(self) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_s)
            await self.maintain()

    async def close(self) -> None:
        """Let queued writes finish, stop the tasks, close the store."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await self._idle.wait()
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        await self.store.close()
