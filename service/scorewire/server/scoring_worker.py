"""The scoring worker: a process of its own that compiles plans and scores chunks.

Compiled plans hold RE2 objects and closures that cannot be pickled, so a job carries the
plan's *source* (suite YAML, serialized check specs, compact lines) and the key the server
derived from it; the worker compiles once and keeps the plan by key. Cases travel as
serialized `Case` messages; answers go back as serialized response messages plus a slim
tuple per score for the server's summary and metrics.

Before each check the worker writes what it is running into shared memory (`progress`), so
the server can kill a check that runs past its time limit even when it is stuck in C code,
and knows which check to blame. Nothing here touches grpc or an event loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import math
import os
import signal
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded, RequestMeter, metering
from scorewire.core.errors import SpecError, join_path
from scorewire.core.model import ErrorCode, Score, ScoreError
from scorewire.core.registry import REGISTRY, CheckType
from scorewire.engine import native
from scorewire.engine.cost import metric_input_bytes, request_meter
from scorewire.engine.execute import run_check_sync
from scorewire.engine.runner import Case, CaseResult, Plan
from scorewire.engine.summary import Gate, SummaryBuilder
from scorewire.metrics.runs import KNOWN_CODES, Tally, tally, tally_from_counts
from scorewire.regex.engine import PROGRAM_SIZE_SETTING
from scorewire.server import convert
from scorewire.server.memory import Trimmer
from scorewire.server.plan_cache import PLAN_BYTES_PER_REGEX_INSTRUCTION, PlanCache
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import (
    CHECKLLM,
    check_names,
    combinations,
    load_request_checkllm,
    request_format,
)
from scorewire.suites.evalstone import LoadedSuite, RunSettings, load_request_suite
from scorewire.suites.preflight import judge_needs
from scorewire.v1 import scoring_pb2 as pb

WORKER_NICENESS = 5
"""How much lower than the server's the workers' CPU priority is."""
ANSWER_BUFFER_BYTES = 1 << 22
"""Send buffer asked for on a worker's end of its pipe (the kernel caps it at
`net.core.wmem_max`): a chunk's answer (~100 KiB for 256 cases) fits whole, so the worker
takes its next job instead of waiting until the server's driver thread, which needs the
event loop's GIL between reads, has read the last part of the answer."""

# Slots of the shared progress array.
STARTED_AT = 0
"""`time.monotonic()` when the running check (or compilation) began; 0 when idle."""
CASE_POS = 1
"""Position in the job's cases of the case being scored."""
CHECK_IDX = 2
"""Index of the running check; -1 while compiling."""
LIMIT_S = 3
"""Seconds the running check may take before the server kills the worker."""
PROGRESS_SLOTS = 4


@dataclass(slots=True, frozen=True)
class PlanSource:
    """What a request says about its checks, as plain picklable data."""

    suite_yaml: str
    suite_name: str
    checks: tuple[bytes, ...]
    """Serialized `CheckSpec` messages."""
    compact: tuple[str, ...]
    gate: bytes | None
    """A serialized `Gate` message, or None when the request has none."""
    max_checks: int
    format: str = ""
    """`checkllm`, `evalstone`, or empty to detect it from the document's keys."""


@dataclass(slots=True, frozen=True)
class CheckName:
    """A check's name and type: all the server needs to label its scores."""

    name: str
    type: str


def _judge_models(src: PlanSource, checks: Any) -> tuple[tuple[str, str], ...]:
    """The judge calls a plan may make, each at the path its check has in the request."""
    yaml = bool(src.suite_yaml.strip())
    return tuple(
        judge_needs(
            (f"suite_yaml.checks.{c.name}" if yaml else f"checks[{i}]", c)
            for i, c in enumerate(checks)
        )
    )


@dataclass(slots=True)
class PlanInfo:
    """What the server learns about a compiled plan (it never holds the plan itself)."""

    checks: list[CheckName]
    any_async: bool
    gate: Gate
    settings: RunSettings
    suite_cases: int
    """Cases the suite document carries (its inline dataset), 0 when none."""
    whole_text_caps: tuple[int | None, ...] = ()
    """The caps of the checks that read a case's whole output (see `engine.cost`)."""
    suite_case_problem: tuple[str, str] | None = None
    """(field, message) of the first inline case over an output limit, if any."""
    suites: list[str] = field(default_factory=list)
    """Suite names of the YAML document (ValidateSuite only)."""
    compile_s: float = 0.0
    """CPU seconds the worker's thread spent compiling the plan: CPU, not wall time, so
    that a busy machine (the process descheduled mid-compile) does not inflate it."""
    ms_per_kb: float | None = None
    """The server's estimate of what a Score with this plan costs (ms per KiB of request):
    see `ScoringService._learn`."""
    cpu_ms_per_kb: float = 0.0
    """The worst CPU time a worker spent scoring one Score with this plan (ms per KiB)."""
    wall_ms_per_kb: float = math.inf
    """The best wall time the checks of one Score with this plan took (ms per KiB)."""
    judge_models: tuple[tuple[str, str], ...] = ()
    """(field path, judge model as written, `""` for the default) of every judge call the
    plan's checks may make: what the preflight checks before any call."""
    format: str = "evalstone"
    """`checkllm` for a checkllm document, which the server runs itself (`any_async`)."""

    @property
    def names(self) -> list[str]:
        """Check names in result order."""
        return [c.name for c in self.checks]

    @property
    def types(self) -> list[str]:
        """Check types in result order."""
        return [c.type for c in self.checks]


@dataclass(slots=True)
class Job:
    """One unit of work: compile a plan, and score some of its cases."""

    key: bytes
    source: PlanSource | None
    """None when the server believes this worker has the plan; it answers MISSING if not."""
    reply: str
    """`plan` (compile only), `score` (one ScoreResponse), `run` (a RunSuiteResponse) or
    `results` (the CaseResults themselves)."""
    check_timeout_s: float
    """Seconds one check may run."""
    deadline: float | None = None
    """`time.monotonic()` value after which checks are not started (DEADLINE_EXCEEDED)."""
    cases: list[bytes] | None = None
    """Serialized `Case` messages; None scores the suite's own cases `first..first+count`."""
    first: int = 0
    """Batch index of the first case."""
    count: int = 0
    skip: dict[int, dict[int, str]] = field(default_factory=dict)
    """Checks not to run again, by case position then check index: the error code to give."""
    list_suites: bool = False
    compile_timeout_s: float = 30.0
    """Seconds compiling the plan (when the worker lacks it) may take."""
    parent_types: tuple[ParentType, ...] = ()
    """Custom check types registered in the server process (see `stand_ins`)."""
    counts: bool = False
    """A `run` reply carries `ChunkCounts` instead of a slim result per case."""
    bounds_ms: tuple[float, ...] | None = None
    """With `counts`: the metrics histogram's bounds to tally latencies into (None: no
    metrics, no tally)."""


@dataclass(slots=True)
class ChunkCounts:
    """What the server's summary and metrics need of a scored chunk, counted here: the
    server adds two small objects per chunk instead of handling every score."""

    summary: SummaryBuilder
    tally: Tally | None


ParentType = tuple[str, tuple[str, ...], Any, bool]
"""A server-side check type: name, aliases, parameter model, whether it uses a judge."""


def parent_types() -> tuple[ParentType, ...]:
    """The server's custom check types, for workers that may not have imported them."""
    out = []
    for t in REGISTRY.types():
        if t.family == "custom":
            out.append((t.name, t.aliases, t.params, t.uses_judge))
    return tuple(out)


def _placeholder_build(params: Any) -> Any:
    async def never(sample: Any, output: Any, ctx: Any) -> Score:
        raise AssertionError("a stand-in check type never runs in a scoring worker")

    return never


def stand_ins(types: Sequence[ParentType]) -> None:
    """Register a stand-in for each server-side custom type this worker lacks.

    Custom checks run in the server (they are coroutines or run on its threads), so a
    worker only validates their parameters; a stand-in is async, which sends the plan
    back to the server for scoring.
    """
    for name, aliases, params, uses_judge in types:
        if REGISTRY.get(name) is not None:
            continue
        REGISTRY.add(
            CheckType(
                name=name,
                description=f"custom check {name}",
                family="custom",
                params=params,
                build=_placeholder_build,
                is_async=True,
                uses_judge=uses_judge,
                self_testable=False,
                aliases=tuple(aliases),
            ),
            replace=True,
        )


RESULTS = "results"
MISSING = "missing"
INVALID = "invalid"
LIMIT = "limit"
PLAN = "plan"
SCORED = "scored"
"""A scored job's answer: (SCORED, info, message or results, slims or counts, CPU seconds
the worker's thread spent scoring it)."""
FAULT = "fault"

SlimScore = tuple[float, bool, str | None, float, float, bool, bool, bool]
"""value, passed, error code, cost_usd, latency_ms, cached, unpriced, skipped."""
SlimResult = tuple[int, str, list[SlimScore]]
"""index, sample id, scores."""


def slim(r: CaseResult) -> SlimResult:
    """The parts of a result the server's summary and metrics read."""
    return (
        r.index,
        r.sample_id,
        [
            (
                s.value,
                s.passed,
                None if s.error is None else s.error.code,
                s.cost_usd,
                s.latency_ms,
                s.cached,
                s.unpriced,
                s.skipped,
            )
            for s in r.scores
        ],
    )


def unslim(r: SlimResult) -> CaseResult:
    """A CaseResult from its slim form (reasons and error messages left empty)."""
    index, sample_id, scores = r
    out = []
    for value, passed, code, cost, latency, cached, unpriced, skipped in scores:
        s = Score(value, passed, cost_usd=cost, latency_ms=latency, cached=cached)
        s.unpriced = unpriced
        s.skipped = skipped
        if code is not None:
            s.error = ScoreError(code, "")
            s.passed = False
        out.append(s)
    return CaseResult(index, sample_id, out)


def killed_score(code: str, limit_s: float) -> Score:
    """The score of a check the server stopped by killing its worker."""
    if code == ErrorCode.TIMEOUT:
        return Score.fail_with_error(
            ErrorCode.TIMEOUT,
            f"the check ran past its {limit_s:g} s time limit and was stopped (check_timeout_s)",
        )
    return Score.fail_with_error(
        ErrorCode.CHECK_FAILED, "the check crashed its scoring worker; see the server log"
    )


class _Worker:
    """The state of one worker process: its plans and its progress slots."""

    def __init__(self, progress: Any, settings: Settings) -> None:
        self.progress = progress
        self.settings = settings
        self.plans: PlanCache[tuple[LoadedSuite | None, PlanInfo]] = PlanCache(
            max_bytes=settings.plan_cache_bytes
        )
        self.ctx = CheckContext(extras=check_extras(settings))

    def handle(self, job: Job) -> tuple[Any, ...]:
        hit = self.plans.get(job.key)
        if hit is None:
            if job.source is None:
                return (MISSING,)
            meter = request_meter(self.settings)

            def compiled_bytes() -> int:
                return meter.used.get(PROGRAM_SIZE_SETTING, 0) * PLAN_BYTES_PER_REGEX_INSTRUCTION

            try:
                hit = self.plans.get_or_build(
                    job.key,
                    lambda: self._compile(job, meter),
                    source_bytes(job.source),
                    compiled_bytes,
                )
            except SpecError as err:
                return (INVALID, [(v.field, v.description) for v in err.violations])
            except LimitExceeded as err:
                return (LIMIT, err.field, err.message)
        suite, info = hit
        if suite is None:  # a checkllm document: the server runs it
            return (PLAN, info)
        if job.list_suites:
            with metering(request_meter(self.settings)):
                info = replace(info, suites=_suite_names(job.source))
        if job.reply == PLAN or info.any_async:
            return (PLAN, info)
        return self._score(job, suite, info)

    def _compile(self, job: Job, meter: RequestMeter) -> tuple[LoadedSuite | None, PlanInfo]:
        src = job.source
        assert src is not None
        stand_ins(job.parent_types)
        p = self.progress
        p[CASE_POS], p[CHECK_IDX], p[LIMIT_S] = 0, -1, job.compile_timeout_s
        p[STARTED_AT] = time.monotonic()
        cpu_started = time.thread_time()
        with metering(meter):  # the document is read within the request's limits
            checkllm = request_format(src.suite_yaml, src.format or None) == CHECKLLM
        if checkllm:
            try:
                return None, self._checkllm_info(src, meter, cpu_started)
            finally:
                p[STARTED_AT] = 0.0
        try:
            specs = convert.check_specs_from_pb([pb.CheckSpec.FromString(b) for b in src.checks])
            gate = convert.gate_from_pb(pb.Gate.FromString(src.gate)) if src.gate else None
            suite = load_request_suite(
                suite_yaml=src.suite_yaml,
                suite_name=src.suite_name,
                checks=specs,
                compact=src.compact,
                gate=gate,
                max_checks=src.max_checks,
                meter=meter,
                check_timeout_s=self.settings.check_timeout_s,
            )
        finally:
            p[STARTED_AT] = 0.0
        plan = suite.plan
        problem = None
        for i, case in enumerate(suite.cases or ()):
            field = f"suite_yaml.cases[{i}].output"
            problem = output_problem(case.output.text, field, plan.whole_text_caps, self.settings)
            if problem is not None:
                break
        info = PlanInfo(
            [CheckName(c.name, c.type) for c in plan.checks],
            plan.any_async,
            suite.gate,
            suite.settings,
            len(suite.cases or ()),
            plan.whole_text_caps,
            problem,
            compile_s=time.thread_time() - cpu_started,
            judge_models=_judge_models(src, plan.checks),
        )
        return suite, info

    def _checkllm_info(self, src: PlanSource, meter: RequestMeter, cpu_started: float) -> PlanInfo:
        """Validate a checkllm document within the limits; the server then runs it."""
        suite = load_request_checkllm(
            src.suite_yaml,
            has_checks=bool(src.checks or src.compact),
            meter=meter,
            max_checks=src.max_checks,
        )
        names = check_names(suite)
        return PlanInfo(
            [CheckName(n, "") for n in names],
            True,
            suite.gate,
            RunSettings(),
            combinations(suite),
            compile_s=time.thread_time() - cpu_started,
            judge_models=tuple(
                judge_needs(
                    (f"suite_yaml.tests[{t}].assert", c)
                    for t, g in enumerate(suite.groups())
                    for c in g.plan.checks
                )
            ),
            format=CHECKLLM,
        )

    def _score(self, job: Job, suite: LoadedSuite, info: PlanInfo) -> tuple[Any, ...]:
        plan = suite.plan
        limit = min(job.check_timeout_s, plan.check_timeout_s)
        if job.cases is not None and job.counts and job.reply not in ("score", RESULTS):
            kernel = native_plan(plan, self.settings, self.ctx)
            if kernel is not None:
                return self._score_native(kernel, job, info, limit)
        if job.cases is not None:
            cases = [python_case(b, job.first + i) for i, b in enumerate(job.cases)]
        else:
            own = suite.cases or []
            cases = own[job.first : job.first + job.count]
        p = self.progress
        p[LIMIT_S] = limit
        cpu_started = time.thread_time()
        results = []
        deadline = job.deadline
        monotonic = time.monotonic
        for pos, case in enumerate(cases):
            skip = job.skip.get(pos, {})
            scores = []
            p[CASE_POS] = pos  # before any check of the case starts: the slots name it
            for j, cc in enumerate(plan.checks):
                if j in skip:
                    scores.append(killed_score(skip[j], limit))
                    continue
                now = monotonic()
                if deadline is not None and now >= deadline:
                    scores.append(
                        Score.fail_with_error(
                            ErrorCode.DEADLINE_EXCEEDED,
                            "the request deadline expired before the check ran",
                        )
                    )
                    continue
                p[CHECK_IDX] = j
                p[STARTED_AT] = now
                scores.append(run_check_sync(cc, case.sample, case.output, self.ctx))
            p[STARTED_AT] = 0.0
            results.append(CaseResult(case.index, case.sample.id, scores))
        cpu_s = time.thread_time() - cpu_started
        if job.reply == RESULTS:  # whole results, reasons included (ScoreStream)
            return (SCORED, info, results, [], cpu_s)
        message = _message(job.reply, plan.checks, results, self.settings.max_reason_chars)
        if job.counts:
            summary = SummaryBuilder(info.names, info.types)
            for r in results:
                summary.add(r)
            counted = None
            if job.bounds_ms is not None:
                counted = tally(len(plan.checks), results, job.bounds_ms)
            return (SCORED, info, message, ChunkCounts(summary, counted), cpu_s)
        return (SCORED, info, message, [slim(r) for r in results], cpu_s)

    def _score_native(self, kernel: Any, job: Job, info: PlanInfo, limit: float) -> tuple[Any, ...]:
        """`_score` of a `run` job with counts, in the native kernel (`engine.native`)."""
        assert job.cases is not None
        p = self.progress
        p[LIMIT_S] = limit
        cpu_started = time.thread_time()
        message, counts, tallied = kernel.score_wire(
            job.cases,
            job.first,
            python_case,
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
        return (SCORED, info, message, ChunkCounts(summary, counted), cpu_s)


def native_plan(plan: Plan, settings: Settings, ctx: CheckContext) -> Any | None:
    """The native kernel's plan of `plan` (None: the kernel is off, missing or of no use
    to it), built on first use and kept on the plan, so it goes when the plan does."""
    if not settings.native_kernel:
        return None
    if plan.native is None:
        built = native.build(
            plan,
            ctx,
            max_reason_chars=settings.max_reason_chars,
            spread_bytes=convert.score_bytes,
            known_codes=sorted(KNOWN_CODES),
        )
        plan.native = built if built is not None else False
    return plan.native or None


def source_bytes(src: PlanSource) -> int:
    """How many bytes a plan's source takes (what the plan cache's estimate starts from)."""
    text = len(src.suite_yaml) + len(src.suite_name) + sum(len(c) for c in src.compact)
    text += len(src.format)
    return text + sum(len(c) for c in src.checks) + len(src.gate or b"")


def python_case(data: bytes, index: int) -> Case:
    """A serialized `Case` as the engine's Case, for Python checks (`index`: its position)."""
    m = pb.Case.FromString(data)
    return Case(convert.sample_from_pb(m.sample), convert.output_from_pb(m.output), index)


def _message(reply: str, checks: Sequence[Any], results: list[CaseResult], cap: int) -> bytes:
    if reply == "score":
        r = results[0]
        score = pb.ScoreResponse(passed=r.passed)
        convert.add_scores(score.scores, checks, r.scores, cap)
        return score.SerializeToString()
    return convert.case_results_message(checks, results, cap)


def check_extras(settings: Settings) -> dict[str, Any]:
    """What every check's context carries besides services: flags and per-request bounds."""
    return {
        "no_local_files": True,
        # Needles read from a case's sample are bounded like literal ones.
        "max_needles_per_request": settings.max_needles_per_request,
        "max_needle_chars_per_request": settings.max_needle_chars_per_request,
    }


def output_problem(
    text: str, field: str, caps: Sequence[int | None], settings: Settings
) -> tuple[str, str] | None:
    """(field, message) when an output is over `max_output_bytes` or would make the plan's
    whole-text checks read more than `max_metric_input_bytes_per_case`; else None."""
    limit = settings.max_output_bytes
    # len(text) counts code points; a code point is at most 4 bytes, so only long
    # texts need encoding to measure.
    chars = len(text)
    if chars * 4 > limit and len(text.encode("utf-8")) > limit:
        return (
            join_path(field, "text"),
            f"output text is larger than max_output_bytes ({limit} bytes)",
        )
    per_case = settings.max_metric_input_bytes_per_case
    if caps and metric_input_bytes(caps, chars * 4) > per_case:
        cost = metric_input_bytes(caps, len(text.encode("utf-8")))
        if cost > per_case:
            return (
                join_path(field, "text"),
                f"whole-text checks would read {cost} bytes of this output, over "
                f"max_metric_input_bytes_per_case ({per_case})",
            )
    return None


def _suite_names(src: PlanSource | None) -> list[str]:
    if src is None or not src.suite_yaml.strip():
        return []
    from scorewire.suites.evalstone import load_suite_text

    try:
        return sorted(load_suite_text(src.suite_yaml, allow_imports=False).suites)
    except SpecError:
        return []


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
    trimmer = Trimmer()  # what a big job freed goes back to the system (server/memory.py)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = worker.handle(job)
        except Exception as err:  # a fault of ours: the server logs it, the caller sees INTERNAL
            worker.progress[STARTED_AT] = 0.0
            answer = (FAULT, f"{type(err).__name__}: {err}")
        # Before the answer: the server reads this worker's resident set when the answer
        # arrives (`SCOREWIRE_SCORING_WORKER_MAX_RSS_MB`), and memory the job freed but
        # kept would get the worker recycled for nothing.
        del job
        trimmer.maybe_trim()
        conn.send((answer, worker.plans.bytes, len(worker.plans)))
