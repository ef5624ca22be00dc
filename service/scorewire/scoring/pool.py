"""Worker processes that score, so that no request can hold the event loop.

The event loop only accepts, converts and answers; deterministic scoring and plan
compilation run in a pool of worker processes (`scoring.worker`), started by
`forkserver` (never by forking a process that runs grpc). Each worker has a driver
thread in the server that owns its pipe: it sends one job, waits for the answer, and
meanwhile watches the worker's progress slots. The driver kills the worker when

- the running check (or compilation) passes its time limit: the job is sent again with
  that check marked TIMEOUT, so the other checks and cases still get their scores;
- the request that owns the job is cancelled or its deadline passes (abandoned).

A killed or crashed worker is replaced before its driver takes the next job. Jobs wait
in a queue per caller, served by weighted round robin with a cap on the workers one
caller holds (`ScoringPool`); a request also keeps at most `share` jobs in flight.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import multiprocessing
import queue
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from scorewire.core.errors import StartupError
from scorewire.core.fairness import TENANT, FairQueue, current_caller, tenant_weights
from scorewire.core.memory import resident_bytes
from scorewire.core.model import ErrorCode
from scorewire.engine.runner import (
    CASE_BASE,
    CASE_POS,
    CHECK_IDX,
    LIMIT_S,
    PROGRESS_SLOTS,
    STARTED_AT,
)
from scorewire.scoring import worker
from scorewire.scoring.plans import PLAN_CACHE_SIZE
from scorewire.scoring.protocol import Answer, Compiled, Missing, Scored, WorkerJob, parent_types
from scorewire.settings import Settings

log = logging.getLogger("scorewire.server.pool")

IDLE_CHECK_S = 0.5
"""How often an idle driver checks that its worker is still alive."""
POLL_S = 0.02
"""How often a driver looks at its worker's progress while a job runs."""
_DIED_RETRIES = 2
"""A job whose worker dies outside any check is sent again this many times."""


class CompileTimeout(Exception):
    """Compiling a plan ran past its time limit; the worker was killed."""

    def __init__(self, limit_s: float) -> None:
        super().__init__(f"compiling the checks ran past {limit_s:g} s")
        self.limit_s = limit_s


class WorkerLost(Exception):
    """A job's worker died repeatedly outside any check."""


def pool_size(configured: int | None) -> int:
    """The configured size, or the cores this process may use (its CPU affinity and its
    cgroup's CPU quota, not the machine's core count)."""
    from scorewire.core.cgroup import read_limits

    return configured if configured else min(256, read_limits().cpus)


class _Entry:
    """A job waiting for, or running on, a worker."""

    __slots__ = ("caller", "future", "job", "worker")

    def __init__(
        self, job: WorkerJob, caller: str, future: asyncio.Future[tuple[Any, ...]]
    ) -> None:
        self.job = job
        self.caller = caller
        self.future = future
        self.worker: _Worker | None = None


class _Worker:
    """One worker process and the driver thread that talks to it."""

    def __init__(self, pool: ScoringPool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.progress: Any = pool.mp.RawArray("d", PROGRESS_SLOTS)
        self.proc: Any = None
        self.conn: Connection | None = None
        self.inbox: queue.SimpleQueue[tuple[_Entry, Callable[..., None]] | None] = (
            queue.SimpleQueue()
        )
        self.abandoned: object = None
        """The job the server gave up on; the driver kills the worker running it."""
        self.known: collections.OrderedDict[bytes, None] = collections.OrderedDict()
        """Plan keys this process has compiled (it answers MISSING if it dropped one)."""
        self.cache_bytes = 0
        self.cache_len = 0
        """What the process reported of its plan cache after its last job."""
        self.thread = threading.Thread(
            target=self._drive, name=f"scorewire-pool-{index}", daemon=True
        )

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else int(self.proc.pid)

    def start_process(self) -> None:
        for i in range(PROGRESS_SLOTS):
            self.progress[i] = 0.0
        parent, child = self.pool.mp.Pipe(duplex=True)
        proc = self.pool.mp.Process(
            target=worker.worker_main,
            args=(child, self.progress, self.pool.settings),
            name=f"scorewire-worker-{self.index}",
            daemon=True,
        )
        proc.start()
        child.close()
        self.proc, self.conn = proc, parent
        self.known.clear()
        self.cache_bytes = self.cache_len = 0

    def stop_process(self) -> None:
        proc, conn = self.proc, self.conn
        if proc is not None:
            with contextlib.suppress(Exception):
                proc.kill()
            proc.join(5)
        if conn is not None:
            conn.close()
        self.proc = self.conn = None

    def replace_process(self) -> None:
        self.stop_process()
        if not self.pool.closing:
            self.start_process()
            self.pool.replaced += 1

    # ---- the driver thread ---------------------------------------------------------------

    def _drive(self) -> None:
        while True:
            try:
                item = self.inbox.get(timeout=IDLE_CHECK_S)
            except queue.Empty:
                if self.proc is not None and not self.proc.is_alive() and not self.pool.closing:
                    log.error("idle scoring worker %d (pid %s) died", self.index, self.pid)
                    self.replace_process()
                continue
            if item is None:
                self.stop_process()
                return
            entry, deliver = item
            try:
                outcome = self._exchange(entry)
            except Exception as err:  # never lose a job: report it
                log.exception("scoring worker %d failed", self.index)
                with contextlib.suppress(Exception):
                    self.replace_process()
                outcome = ("lost", str(err))
            deliver(self, entry, outcome)
            if outcome[0] == "reply" and self._rss() > self.pool.max_rss:
                # A job left this process big (a huge plan, allocator high-water marks): a
                # fresh one returns the memory and keeps collection pauses short.
                log.info("recycling scoring worker %d (pid %s): over max RSS", self.index, self.pid)
                self.replace_process()

    def _exchange(self, entry: _Entry) -> tuple[Any, ...]:
        """Run one job: ("reply", answer), ("killed", pos, check, code, limit) or ("died",)."""
        job = entry.job
        if job.source is not None and job.key in self.known:
            outcome = self._send(entry, replace(job, source=None))
            if outcome[0] != "reply" or not isinstance(outcome[1], Missing):
                return outcome
            self.known.pop(job.key, None)
        return self._send(entry, replace(job, parent_types=parent_types()))

    def _send(self, entry: _Entry, job: WorkerJob) -> tuple[Any, ...]:
        if self.conn is None:
            self.start_process()
        assert self.conn is not None
        try:
            self.conn.send(job)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.replace_process()
            return ("died",)
        p = self.progress
        while True:
            if self.conn.poll(POLL_S):
                try:
                    answer, self.cache_bytes, self.cache_len = self.conn.recv()
                except (EOFError, OSError):
                    return self._died()
                if isinstance(answer, Compiled | Scored):
                    self._remember(job.key)
                return ("reply", answer)
            if self.abandoned is entry or self.pool.closing:
                self.replace_process()
                return ("abandoned",)
            started, limit = p[STARTED_AT], p[LIMIT_S]
            if started and limit and time.monotonic() - started > limit:
                pos, check = int(p[CASE_BASE] + p[CASE_POS]), int(p[CHECK_IDX])
                log.warning(
                    "scoring worker %d: check %d ran past %g s; killing pid %s",
                    self.index,
                    check,
                    limit,
                    self.pid,
                )
                self.replace_process()
                return ("killed", pos, check, ErrorCode.TIMEOUT, limit)

    def _died(self) -> tuple[Any, ...]:
        p = self.progress
        started, check = p[STARTED_AT], int(p[CHECK_IDX])
        pos = int(p[CASE_BASE] + p[CASE_POS])
        pid, proc = self.pid, self.proc
        self.stop_process()
        code = None if proc is None else proc.exitcode
        log.error("scoring worker %d (pid %s) died (exit code %s)", self.index, pid, code)
        self.replace_process()
        if started:
            return ("killed", pos, check, ErrorCode.CHECK_FAILED, p[LIMIT_S])
        return ("died",)

    def _rss(self) -> int:
        pid = self.pid
        return 0 if pid is None else resident_bytes(pid)

    def _remember(self, key: bytes) -> None:
        self.known[key] = None
        self.known.move_to_end(key)
        while len(self.known) > PLAN_CACHE_SIZE:
            self.known.popitem(last=False)


class ScoringPool:
    """`settings.scoring_workers` worker processes, shared fairly between callers.

    Jobs wait in a queue per caller (its tenant) and go to the workers by weighted round
    robin (`core.fairness.FairQueue`, weights `tenant_weights`); one tenant holds at most
    `tenant_max_workers` workers at once (default all but one), so a tenant with work for
    every worker still leaves one for the next tenant to arrive, who then waits for no
    one's job but its own. With auth off the callers are connections, which take turns
    without a cap (a worker frees, the next connection's job goes).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.size = pool_size(settings.scoring_workers)
        self.max_rss = settings.scoring_worker_max_rss_mb << 20
        self.mp: Any = multiprocessing.get_context("forkserver")
        # Workers are forked from a fresh interpreter that has imported the checks once.
        self.mp.set_forkserver_preload(["scorewire.scoring.worker", "scorewire.checks"])
        self.closing = False
        self.replaced = 0
        """Workers replaced after a kill or a crash (for tests and logs)."""
        self.submitted = 0
        """Jobs handed to the pool so far."""
        self.by_tenant: collections.Counter[str] = collections.Counter()
        """Jobs handed to the pool so far by tenant caller key (`tenant:<name>`); callers
        told apart by their connection (auth off) are not kept: they are unbounded."""
        self._workers = [_Worker(self, i) for i in range(self.size)]
        self._idle: list[_Worker] = []
        cap = settings.tenant_max_workers
        self.caller_cap = cap if cap is not None else max(1, self.size - 1)
        """Most workers one caller holds at once."""
        self._waiting: FairQueue[_Entry] = FairQueue(
            cap=self.caller_cap, weights=tenant_weights(settings.tenant_weights)
        )
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def share(self) -> int:
        """How many jobs one request may keep in flight: all but one worker, at least one."""
        return max(1, self.size - 1)

    async def start(self) -> None:
        """Start the processes (off the event loop: the first start boots the forkserver)."""
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self._start_all)
        for w in self._workers:
            w.thread.start()
        self._idle = list(self._workers)

    def _start_all(self) -> None:
        _ensure_temp_dir(self.settings)
        for w in self._workers:
            w.start_process()

    def pids(self) -> list[int]:
        """The worker processes' ids (a replaced worker has a new one)."""
        return [pid for w in self._workers if (pid := w.pid) is not None]

    def cache_stats(self) -> list[tuple[int, int]]:
        """(estimated bytes, plans) of each worker's plan cache, as last reported."""
        return [(w.cache_bytes, w.cache_len) for w in self._workers]

    def busy_pids(self, *, scoring: bool = False) -> list[int]:
        """The workers running a check (`scoring`) or also compiling a plan right now."""
        return [
            pid
            for w in self._workers
            if w.progress[STARTED_AT]
            and (not scoring or w.progress[CHECK_IDX] >= 0)
            and (pid := w.pid) is not None
        ]

    async def close(self) -> None:
        """Stop every worker; jobs still waiting are cancelled."""
        self.closing = True
        while (taken := self._waiting.pop()) is not None:
            caller, e = taken
            self._waiting.done(caller)
            if not e.future.done():
                e.future.cancel()
        for w in self._workers:
            w.inbox.put(None)
        await asyncio.to_thread(self._join)

    def _join(self) -> None:
        for w in self._workers:
            if w.thread.is_alive():
                w.thread.join(10)
            else:
                w.stop_process()

    # ---- running jobs ----------------------------------------------------------------------

    async def run(self, job: WorkerJob) -> Answer:
        """The worker's answer to `job`; a check that ran too long is given an error score.

        The job takes the share of the current caller (`core.fairness.current_caller`).
        Cancelling the call (its deadline, or the client went away) kills the worker
        running the job. Raises CompileTimeout or WorkerLost.
        """
        caller = current_caller.get()
        lost = 0
        while True:
            outcome = await self._submit(job, caller)
            kind = outcome[0]
            if kind == "reply":
                return outcome[1]  # type: ignore[no-any-return]
            if kind == "killed":
                _, pos, check, code, limit = outcome
                if check < 0:
                    if code == ErrorCode.TIMEOUT:
                        raise CompileTimeout(limit)
                    lost += 1  # crashed while compiling: again, on a fresh worker
                    if lost > _DIED_RETRIES:
                        raise WorkerLost("scoring workers crashed compiling these checks")
                    continue
                skip = {k: dict(v) for k, v in job.skip.items()}
                skip.setdefault(pos, {})[check] = code
                job = replace(job, skip=skip)
                continue
            lost += 1
            if lost > _DIED_RETRIES:
                raise WorkerLost("scoring workers died repeatedly on this request")

    async def _submit(self, job: WorkerJob, caller: str) -> tuple[Any, ...]:
        loop = self._loop or asyncio.get_running_loop()
        entry = _Entry(job, caller, loop.create_future())
        self.submitted += 1
        if caller.startswith(TENANT):
            self.by_tenant[caller] += 1
        # A tenant holds at most its cap; callers told apart only by their connection
        # (auth off) take turns without one, since one client may hold many connections.
        self._waiting.push(caller, entry, capped=caller.startswith(TENANT))
        self._dispatch()
        try:
            return await asyncio.shield(entry.future)
        except asyncio.CancelledError:
            if entry.worker is None:
                self._waiting.remove(caller, entry)
            elif not entry.future.done():
                entry.worker.abandoned = entry
            raise

    def _dispatch(self) -> None:
        while self._idle and (taken := self._waiting.pop()) is not None:
            caller, entry = taken
            if entry.future.done():
                self._waiting.done(caller)
                continue
            worker = self._pick(entry.job.key)
            entry.worker = worker
            worker.abandoned = None
            worker.inbox.put((entry, self._deliver))

    def _pick(self, key: bytes) -> _Worker:
        """An idle worker that has compiled the plan, else the one idle longest."""
        for i in range(len(self._idle) - 1, -1, -1):
            if key in self._idle[i].known:
                return self._idle.pop(i)
        return self._idle.pop(0)

    def _deliver(self, worker: _Worker, entry: _Entry, outcome: tuple[Any, ...]) -> None:
        """Called on the driver thread when a job ends: hand over to the loop."""
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            self._loop.call_soon_threadsafe(self._finished, worker, entry, outcome)

    def _finished(self, worker: _Worker, entry: _Entry, outcome: tuple[Any, ...]) -> None:
        worker.abandoned = None
        self._idle.append(worker)
        self._waiting.done(entry.caller)
        if not entry.future.done():
            entry.future.set_result(outcome)
        self._dispatch()


def _ensure_temp_dir(settings: Settings) -> None:
    """Give multiprocessing a writable temporary directory before the forkserver starts.

    The forkserver listens on a Unix socket in the temporary directory. Under a read-only
    root filesystem (the image as compose and k8s run it) /tmp may not be writable; the
    state directory is (it is the volume), so its `tmp/` is used then. Neither usable is a
    one-line start-up error naming the setting.
    """
    try:
        with tempfile.TemporaryFile():
            return
    except OSError:
        pass
    fallback = settings.state_path() / "tmp"
    try:
        fallback.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=fallback):
            pass
    except OSError as err:
        raise StartupError(
            f"no writable temporary directory for the scoring workers (/tmp, TMPDIR) and "
            f"{fallback} is not writable ({err.strerror}): set TMPDIR, mount a tmpfs at /tmp, "
            "or set SCOREWIRE_STATE_DIR to a writable directory"
        ) from None
    tempfile.tempdir = str(fallback)
