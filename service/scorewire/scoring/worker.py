"""The scoring worker: a process of its own that compiles plans and scores chunks.

A job carries the plan's source and key (`protocol.WorkerJob`); the worker compiles it
once with `compile_plan` and keeps the plan by key. Cases travel as serialized `Case`
messages; answers go back as serialized response messages plus what the server's
summary and metrics need (`protocol.Scored`). The cases are scored by the engine's batch
scorer (`engine.runner.score_batch_sync`), or by the native kernel for the checks it has
twins of, which write what they run into shared memory (the progress slots), so the
server can kill a check that runs past its time limit even when it is stuck in C code,
and knows which check to blame. Nothing here touches grpc or an event loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import socket
import time
from collections.abc import Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import SpecError
from scorewire.core.memory import Trimmer
from scorewire.engine.metering import request_meter
from scorewire.engine.runner import (
    CASE_POS,
    CHECK_IDX,
    LIMIT_S,
    STARTED_AT,
    CaseResult,
    score_batch_sync,
)
from scorewire.engine.summary import SummaryBuilder
from scorewire.metrics.runs import tally, tally_from_counts
from scorewire.scoring import wire
from scorewire.scoring.checkllm_scorer import score_chunk
from scorewire.scoring.compiler import CompiledPlan, compile_plan, native_plan, suite_names
from scorewire.scoring.limits import check_extras
from scorewire.scoring.plan_source import source_bytes
from scorewire.scoring.plans import PlanCache, PlanInfo
from scorewire.scoring.protocol import (
    Answer,
    ChunkCounts,
    Compiled,
    Fault,
    Invalid,
    Missing,
    OverLimit,
    Reply,
    Scored,
    WorkerJob,
    killed_score,
    slim,
    stand_ins,
)
from scorewire.settings import Settings
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb

WORKER_NICENESS = 5
"""How much lower than the server's the workers' CPU priority is."""
ANSWER_BUFFER_BYTES = 1 << 22
"""Send buffer asked for on a worker's end of its pipe (the kernel caps it at
`net.core.wmem_max`): a chunk's answer (~100 KiB for 256 cases) fits whole, so the worker
takes its next job instead of waiting until the server's driver thread, which needs the
event loop's GIL between reads, has read the last part of the answer."""


class _Worker:
    """The state of one worker process: its plans and its progress slots."""

    def __init__(self, progress: Any, settings: Settings) -> None:
        self.progress = progress
        self.settings = settings
        self.plans: PlanCache[CompiledPlan] = PlanCache(max_bytes=settings.plan_cache_bytes)
        self.ctx = CheckContext(extras=check_extras(settings))

    def handle(self, job: WorkerJob) -> Answer:
        compiled = self.plans.get(job.key)
        if compiled is None:
            if job.source is None:
                return Missing()
            try:
                compiled = self._compile(job)
            except SpecError as err:
                return Invalid([(v.field, v.description) for v in err.violations])
            except LimitExceeded as err:
                return OverLimit(err.setting, err.field, err.message)
        info = compiled.info
        if job.list_suites:
            names = suite_names(job.source, request_meter(self.settings))
            info = replace(info, suites=names)
        if job.reply == Reply.CHECKLLM and compiled.checkllm is not None:
            return self._score_checkllm(job, compiled.checkllm, info)
        if job.reply == Reply.PLAN or compiled.suite is None or info.any_async:
            return Compiled(info)
        return self._score(job, compiled, info)

    def _score_checkllm(self, job: WorkerJob, suite: CheckllmSuite, info: PlanInfo) -> Answer:
        """A chunk of a checkllm document's recorded combinations (`checkllm_chunks`)."""
        limit = min(job.check_timeout_s, suite.check_timeout_s)
        self.progress[LIMIT_S] = limit
        cpu_started = time.thread_time()
        message, counts = score_chunk(suite, job, self.ctx, self.progress, limit, self.settings)
        return Scored(info, message, counts, time.thread_time() - cpu_started)

    def _compile(self, job: WorkerJob) -> CompiledPlan:
        """`compile_plan` of the job's source, watched by the server (the progress
        slots name no check: -1), kept by key."""
        source = job.source
        assert source is not None
        stand_ins(job.parent_types)
        p = self.progress
        p[CASE_POS], p[CHECK_IDX], p[LIMIT_S] = 0, -1, job.compile_timeout_s
        p[STARTED_AT] = time.monotonic()
        meter = request_meter(self.settings)
        try:
            compiled = compile_plan(source, self.settings, meter=meter)
        finally:
            p[STARTED_AT] = 0.0
        return self.plans.get_or_build(
            job.key, lambda: compiled, source_bytes(source), lambda: compiled.compiled_bytes
        )

    def _score(self, job: WorkerJob, compiled: CompiledPlan, info: PlanInfo) -> Answer:
        plan = compiled.plan
        limit = min(job.check_timeout_s, plan.check_timeout_s)
        if job.cases is not None and job.reply == Reply.RUN:
            kernel = native_plan(plan, self.settings, self.ctx)
            if kernel is not None:
                return self._score_native(kernel, job, info, limit)
        if job.cases is not None:
            cases = [wire.python_case(b, job.first + i) for i, b in enumerate(job.cases)]
        else:
            own = compiled.suite.cases if compiled.suite is not None else None
            cases = (own or [])[job.first : job.first + job.count]
        self.progress[LIMIT_S] = limit
        given = {
            pos: {j: killed_score(code, limit) for j, code in checks.items()}
            for pos, checks in job.skip.items()
        }
        cpu_started = time.thread_time()
        results = score_batch_sync(
            plan, cases, self.ctx, progress=self.progress, deadline=job.deadline, given=given
        )
        cpu_s = time.thread_time() - cpu_started
        if job.reply == Reply.RESULTS:  # whole results, reasons included (ScoreStream)
            return Scored(info, results, None, cpu_s)
        cap = self.settings.max_reason_chars
        if job.reply == Reply.SCORE:
            return Scored(info, _score_message(plan.checks, results[0], cap), [slim(results[0])],
                          cpu_s)  # fmt: skip
        summary = SummaryBuilder(info.names, info.types)
        for r in results:
            summary.add(r)
        counted = None
        if job.bounds_ms is not None:
            counted = tally(len(plan.checks), results, job.bounds_ms)
        message = wire.case_results_message(plan.checks, results, cap)
        return Scored(info, message, ChunkCounts(summary, counted), cpu_s)

    def _score_native(self, kernel: Any, job: WorkerJob, info: PlanInfo, limit: float) -> Answer:
        """`_score` of a `RUN` job in the native kernel (`engine.native`)."""
        assert job.cases is not None
        p = self.progress
        p[LIMIT_S] = limit
        cpu_started = time.thread_time()
        message, counts, tallied = kernel.score_wire(
            job.cases,
            job.first,
            wire.python_case,
            ctypes.addressof(p),
            job.deadline,
            job.skip,
            lambda code: killed_score(code, limit),
            list(job.bounds_ms) if job.bounds_ms is not None else None,
        )
        p[STARTED_AT] = 0.0
        cpu_s = time.thread_time() - cpu_started
        summary = SummaryBuilder(info.names, info.types)
        summary.add_counts(counts)
        counted = tally_from_counts(tallied) if tallied is not None else None
        return Scored(info, message, ChunkCounts(summary, counted), cpu_s)


def _score_message(checks: Sequence[Any], result: CaseResult, cap: int) -> bytes:
    response = pb.ScoreResponse(passed=result.passed)
    wire.add_scores(response.scores, checks, result.scores, cap)
    return response.SerializeToString()


def worker_main(conn: Connection, progress: Any, settings: Settings) -> None:
    """Serve jobs from `conn` until the server closes it."""
    # The server handles Ctrl-C and SIGTERM and then ends its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Scoring yields the CPU to the event loop that accepts and answers (health too).
    os.nice(WORKER_NICENESS)
    import scorewire.checks  # noqa: F401 - registers the built-in check types

    if settings.imports:
        from scorewire.engine.custom import load_imports

        load_imports(settings.imports)
    with contextlib.suppress(OSError):  # a smaller buffer only costs waiting
        end = socket.socket(fileno=os.dup(conn.fileno()))
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, ANSWER_BUFFER_BYTES)
        end.close()
    # What is loaded now lives as long as the process: keep it out of every collection.
    gc.freeze()
    worker = _Worker(progress, settings)
    trimmer = Trimmer()  # what a big job freed goes back to the system (core/memory.py)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = worker.handle(job)
        except Exception as err:  # a fault of ours: the server logs it, the caller sees INTERNAL
            worker.progress[STARTED_AT] = 0.0
            answer = Fault(f"{type(err).__name__}: {err}")
        # Before the answer: the server reads this worker's resident set when the answer
        # arrives (`SCOREWIRE_SCORING_WORKER_MAX_RSS_MB`), and memory the job freed but
        # kept would get the worker recycled for nothing.
        del job
        trimmer.maybe_trim()
        conn.send((answer, worker.plans.bytes, len(worker.plans)))
