"""The ScoringService handlers: convert, call the engine, convert back.

Compiled plans are cached by the request's check specs, so a caller sending the same
checks with every Score request pays validation and regex/schema compilation once.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import grpc
from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import Descriptor
from scorewire.core import tracing
from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import FieldViolation, Precondition, SpecError
from scorewire.core.model import ErrorCode, Score
from scorewire.core.registry import REGISTRY
from scorewire.engine.cost import request_meter
from scorewire.engine.runner import (
    Case,
    CaseResult,
    Plan,
    PlanShape,
    run_cases,
    score_case,
    score_case_sync,
)
from scorewire.engine.summary import Summary, SummaryBuilder
from scorewire.judge import Budget, PeriodBudget
from scorewire.judge.shared import Ledger, SharedBudget
from scorewire.metrics.runs import Tally, tally_from_counts
from scorewire.regex.engine import PROGRAM_SIZE_SETTING
from scorewire.runs import RunRecorder
from scorewire.server import convert, streaming
from scorewire.server import scoring_worker as sw
from scorewire.server.checkllm import CheckllmRuns, format_name
from scorewire.server.chunks import ChunkRun
from scorewire.server.errors import (
    RequestRejected,
    failed_precondition,
    guarded_stream,
    guarded_unary,
    invalid_argument,
    resource_exhausted,
)
from scorewire.server.plan_cache import (
    PLAN_BYTES_PER_REGEX_INSTRUCTION,
    PLAN_CACHE_SIZE,
    PlanCache,
)
from scorewire.server.run_records import (
    BaselineGate,
    Recording,
    cases_blob,
    check_run_fields,
    resolve_baseline,
    suite_text,
    unavailable,
)
from scorewire.server.scoring_pool import CompileTimeout, ScoringPool
from scorewire.server.screening import Bound, Screen
from scorewire.server.security import Principal, current_token, principal
from scorewire.settings import Settings
from scorewire.suites.checkllm import CheckllmSuite
from scorewire.suites.checkllm_request import CHECKLLM, load_request_checkllm
from scorewire.suites.evalstone import LoadedSuite, load_request_suite, suite_over_message
from scorewire.suites.preflight import check_judges
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc as pb_grpc

log = logging.getLogger("scorewire.server")

Context = grpc.aio.ServicerContext[Any, Any]

CHUNK_MAX_BYTES = 1 << 20
"""A chunk of cases sent to a scoring worker closes at this many serialized bytes."""
INLINE_COMPILE_S = 0.02
"""A plan may be compiled in the server for inline Score only if a worker compiled it faster."""
INLINE_SCORE_MS = 1.0
"""A Score is scored inline only if workers scored its plan within this per KiB of request."""
STORE_AHEAD = 4
"""Recorded chunks of a RunSuite queued for the run store before the oldest must be
stored (and then sent): they share commits, and memory stays bounded."""
OUTPUT_CHECKS_PER_YIELD = 512
"""Output sizes checked between two yields to the event loop."""
CHUNKS_BUFFERED = 4
"""Chunks of one RunSuite sent to the workers but not yet answered, as a multiple of the
chunks it may have in the workers at once: how far scoring runs ahead of a slow reader."""


class _NoCaps:
    """A plan shape without whole-text checks: only max_output_bytes bounds an output."""

    whole_text_caps: tuple[int | None, ...] = ()


_NO_CAPS: Any = _NoCaps()


class PlanCacheView:
    """What the plan caches hold: the server's and each scoring worker's (last reported).

    The byte budget holds for each process, so `bytes` and the length are the fullest
    process's.
    """

    def __init__(self, here: PlanCache[LoadedSuite], pool: ScoringPool) -> None:
        self._here = here
        self._pool = pool

    @property
    def bytes(self) -> int:
        """Estimated bytes of the fullest process's cache."""
        return max([self._here.bytes, *(b for b, _ in self._pool.cache_stats())])

    def __len__(self) -> int:
        """Plans in the fullest process's cache."""
        return max([len(self._here), *(n for _, n in self._pool.cache_stats())])


RUN_ID_METADATA = "scorewire-run-id"
"""Request metadata naming the run a request belongs to: requests of one run (a batch
sharded over replicas) with `budget_usd` then share that budget, held in Redis."""

MAX_RUN_ID_CHARS = 128
"""Longest run id accepted (a longer one is INVALID_ARGUMENT)."""


def _run_id(context: Context) -> str | None:
    """The request's run id from its metadata, or None."""
    for key, value in context.invocation_metadata() or ():
        if key == RUN_ID_METADATA:
            text = value if isinstance(value, str) else value.decode("utf-8", "replace")
            if not text or len(text) > MAX_RUN_ID_CHARS:
                raise invalid_argument(
                    [
                        FieldViolation(
                            RUN_ID_METADATA,
                            f"must be 1-{MAX_RUN_ID_CHARS} characters",
                        )
                    ]
                )
            return text
    return None


def _request_case(request: pb.ScoreRequest) -> Case:
    """A Score request's sample and output, as the engine's Case."""
    return Case(convert.sample_from_pb(request.sample), convert.output_from_pb(request.output))


def _plan_key(source: sw.PlanSource) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for part in (
        source.format,
        source.suite_yaml,
        "\0",
        source.suite_name,
        "\0",
        "\n".join(source.compact),
    ):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    for c in source.checks:
        h.update(c)
        h.update(b"\1")
    if source.gate is not None:
        h.update(source.gate)
    return h.digest()


SOURCE_MEMO_SIZE = 256
"""Recent plan sources remembered with their key: a request repeating the checks of one
of them (every Score of a caller scoring with fixed checks) skips building and hashing
its source again."""
SOURCE_MEMO_MAX_BYTES = 16 * 1024
"""Only sources up to this size (characters of text plus bytes of serialized specs) are
remembered, so the memo holds at most 256 such sources; bigger ones would cost more to
hash for the lookup than the lookup saves."""


_PLAN_TAGS = (0x1A, 0x22)
"""ScoreRequest's `checks = 3` and `compact = 4`, length-delimited (wire type 2)."""
_CASE_TAGS = (0x0A, 0x12)
"""ScoreRequest's `sample = 1` and `output = 2`."""
_BUDGET_TAG = 0x29
"""ScoreRequest's `budget_usd = 5`, a fixed 8-byte double (wire type 1)."""


def score_plan_wire(raw: bytes) -> bytes | None:
    """The wire bytes of a serialized ScoreRequest's plan fields (its checks and compact
    lines, tags included), or None when the bytes are not the runtime's serialization of
    fields 1-5 (fields in number order, nothing unknown).

    Equal bytes are the same checks and compact lines in the same order, so the bytes
    are a memo key for the plan: `ScoringService.Score` looks its source up by them at a
    third of the cost of serializing each check for `SourceMemo`.
    """
    i, end = 0, len(raw)
    first = last = -1
    while i < end:
        tag = raw[i]
        if tag == _BUDGET_TAG:
            i += 9
            continue
        if tag not in _CASE_TAGS and tag not in _PLAN_TAGS:
            return None
        j = i + 1
        length = raw[j] if j < end else 0x80
        if length < 0x80:
            j += 1
        else:
            length = shift = 0
            while True:
                if j >= end or shift > 28:
                    return None
                b = raw[j]
                length |= (b & 0x7F) << shift
                j += 1
                if b < 0x80:
                    break
                shift += 7
        stop = j + length
        if tag in _PLAN_TAGS:
            if first < 0:
                first = i
            last = stop
        elif first >= 0:
            return None  # a case field after the plan's: not the runtime's order
        i = stop
    if i != end:
        return None
    return raw[first:last] if first >= 0 else b""


class _JobCutter:
    """Cuts consecutive cases into chunk jobs of at most BATCH_MAX_RESULTS cases (or
    CHUNK_MAX_BYTES of them), checking each case (`check(case, index)`) first."""

    def __init__(
        self, make: Callable[[list[bytes], int, int], sw.Job], check: Callable[[pb.Case, int], None]
    ) -> None:
        self._make, self._check = make, check
        self._start = self._next = self._size = 0
        self._chunk: list[bytes] = []

    def add(self, case: pb.Case) -> sw.Job | None:
        """Take the next case; the job it completes, if any."""
        self._check(case, self._next)
        self._next += 1
        data = case.SerializeToString()
        self._chunk.append(data)
        self._size += len(data)
        if len(self._chunk) >= streaming.BATCH_MAX_RESULTS or self._size >= CHUNK_MAX_BYTES:
            return self.rest()
        return None

    def rest(self) -> sw.Job | None:
        """The job of the cases taken since the last one, if any."""
        if not self._chunk:
            return None
        job = self._make(self._chunk, self._start, len(self._chunk))
        self._start, self._chunk, self._size = self._next, [], 0
        return job


class SourceMemo:
    """An LRU of (cache key, PlanSource) by the exact serialized parts of a request's plan.

    Keyed by the parts themselves, not a digest of them: equal parts are the same plan,
    so a hit can never be another plan's key."""

    def __init__(self, size: int = SOURCE_MEMO_SIZE) -> None:
        self._size = size
        # Keys: a tuple of the parts, or the wire bytes of a Score's plan fields (`wired`).
        self._items: OrderedDict[Any, tuple[bytes, sw.PlanSource]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def _remember(self, memo_key: Any, entry: tuple[bytes, sw.PlanSource]) -> None:
        self._items[memo_key] = entry
        if len(self._items) > self._size:
            self._items.popitem(last=False)

    def wired(
        self, plan: bytes, build: Callable[[], tuple[bytes, sw.PlanSource]]
    ) -> tuple[bytes, sw.PlanSource]:
        """The entry remembered for a Score's plan field bytes (`score_plan_wire`), built
        by `build` (and remembered, if small) on a miss."""
        if len(plan) > SOURCE_MEMO_MAX_BYTES:
            return build()
        hit = self._items.get(plan)
        if hit is not None:
            self._items.move_to_end(plan)
            return hit
        entry = build()
        self._remember(plan, entry)
        return entry

    def get(
        self,
        suite_yaml: str,
        suite_name: str,
        checks: tuple[bytes, ...],
        compact: tuple[str, ...],
        gate: bytes | None,
        max_checks: int,
        suite_format: str,
    ) -> tuple[bytes, sw.PlanSource]:
        """The key and source of these parts, built (and remembered, if small) on a miss."""
        size = len(suite_yaml) + len(suite_name) + sum(map(len, checks))
        size += sum(map(len, compact)) + len(gate or b"")
        parts = None
        if size <= SOURCE_MEMO_MAX_BYTES:
            parts = (suite_format, suite_yaml, suite_name, checks, compact, gate, max_checks)
            hit = self._items.get(parts)
            if hit is not None:
                self._items.move_to_end(parts)
                return hit
        source = sw.PlanSource(
            suite_yaml=suite_yaml,
            suite_name=suite_name,
            checks=checks,
            compact=compact,
            gate=gate,
            max_checks=max_checks,
            format=suite_format,
        )
        entry = (_plan_key(source), source)
        if parts is not None:
            self._remember(parts, entry)
        return entry


class RunObserver(Protocol):
    """Receives results for metrics; called once per batch, not per check, to stay cheap."""

    def observe_results(self, plan: PlanShape, results: Sequence[CaseResult]) -> None:
        """Count the scores of finished cases."""

    @property
    def bounds_ms(self) -> tuple[float, ...]:
        """The latency histogram's bounds (ms), for a worker to tally a chunk into."""

    def observe_tally(self, plan: PlanShape, counts: Tally) -> None:
        """Add the counts of a chunk a scoring worker tallied."""

    def observe_summary(self, summary: Summary) -> None:
        """Count a finished RunSuite and its gate outcome."""

    def observe_generation(self, provider: str, outcome: str, cost_usd: float) -> None:
        """Count one output the server generated (`generated`, `cached` or `error`)."""


class ScoringService(pb_grpc.ScoringServiceServicer):
    """scorewire.v1.ScoringService on grpc.aio."""

    def __init__(
        self,
        settings: Settings,
        *,
        judge: Any = None,
        labels: Any = None,
        observer: RunObserver | None = None,
        extras: dict[str, Any] | None = None,
        runs: RunRecorder | None = None,
    ) -> None:
        self._settings = settings
        self._runs = runs
        self._observer = observer
        # Shared by every request's context: read-only run-wide services and flags.
        self._extras: dict[str, Any] = {**(extras or {}), **sw.check_extras(settings)}
        self._token_budgets: dict[str, Budget] = {}
        # Deterministic checks and every plan compilation run in worker processes.
        self.pool = ScoringPool(settings)
        # Plans with judge-backed checks are compiled here too (the event loop runs their
        # judge calls), on this thread, after a worker has compiled them within the limits.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorewire-plan")
        self._plans: PlanCache[LoadedSuite] = PlanCache(max_bytes=settings.plan_cache_bytes)
        self._native_ctx = CheckContext(extras=sw.check_extras(settings))
        """The context native plans of inline Scores are built with (limits, flags)."""
        self._infos: OrderedDict[bytes, sw.PlanInfo] = OrderedDict()
        self._sources = SourceMemo()
        self._compiling: set[bytes] = set()
        self._judge = judge
        self._labels = labels
        self._catalog: pb.ListChecksResponse | None = None
        self._checkllm_suites: PlanCache[CheckllmSuite] = PlanCache(
            max_bytes=settings.plan_cache_bytes
        )
        self.checkllm = CheckllmRuns(self, settings)
        """checkllm suites: their runs, generation budget and generation cache."""

    # ---- helpers -----------------------------------------------------------------------

    def _source(
        self,
        *,
        suite_yaml: str,
        suite_name: str,
        checks: Sequence[pb.CheckSpec],
        compact: Sequence[str],
        gate: pb.Gate | None = None,
        suite_format: int = pb.SUITE_FORMAT_UNSPECIFIED,
    ) -> tuple[bytes, sw.PlanSource]:
        """The request's plan as plain data, and its cache key (the size limits first)."""
        self._check_plan_size(len(checks), compact, suite_yaml)
        limit = self._settings.max_checks_per_request
        return self._sources.get(
            suite_yaml,
            suite_name,
            tuple(c.SerializeToString(deterministic=True) for c in checks),
            tuple(compact),
            None if gate is None else gate.SerializeToString(deterministic=True),
            limit,
            format_name(suite_format),
        )

    def _check_plan_size(self, checks: int, compact: Sequence[str], suite_yaml: str = "") -> None:
        """Refuse a plan too big to ever load before its text is copied, hashed or sent to
        a worker: too many checks, a compact line longer than a check name may be (a
        line is its own name), a suite document over its size limit."""
        limit = self._settings.max_checks_per_request
        if checks + len(compact) > limit:
            raise resource_exhausted(
                "checks", f"{checks + len(compact)} checks exceed max_checks_per_request ({limit})"
            )
        chars = self._settings.max_check_name_chars
        for i, line in enumerate(compact):
            if len(line) > chars:
                raise self._long_line(f"compact[{i}]", f"{len(line):,} characters")
        if len(suite_yaml) > self._settings.max_suite_bytes:  # else measured when parsed
            raise self._suite_too_large("suite_yaml")

    def _long_line(self, field: str, size: str) -> RequestRejected:
        limit = self._settings.max_check_name_chars
        return resource_exhausted(
            field,
            f"the compact line is {size}, over max_check_name_chars ({limit} characters): "
            "a compact line is its check's name",
        )

    def _suite_too_large(self, field: str) -> RequestRejected:
        return resource_exhausted(field, suite_over_message(self._settings.max_suite_bytes))

    def request_screen(self, message: Descriptor) -> Screen | None:
        """What refuses a request of type `message` from its bytes, before they are
        parsed (`server.screening`): compact lines and suite documents surely over
        their limits (a character is at most 4 bytes)."""
        most = 4 * self._settings.max_check_name_chars
        screen = Screen(
            message,
            {
                "compact": Bound(most, lambda f, n: self._long_line(f, f"{n:,} bytes")),
                "suite_yaml": Bound(
                    self._settings.max_suite_bytes, lambda f, n: self._suite_too_large(f)
                ),
            },
        )
        return screen if screen else None

    async def _plan(
        self, key: bytes, source: sw.PlanSource, context: Context, *, list_suites: bool = False
    ) -> sw.PlanInfo:
        """What the plan is, compiled (and cached) in a worker; bad specs are INVALID_ARGUMENT."""
        info = self._infos.get(key)
        if info is not None and not list_suites:
            self._infos.move_to_end(key)
            return info
        job = sw.Job(key, source, sw.PLAN, self._settings.check_timeout_s, list_suites=list_suites)
        answer = await self._run_job(job, context)
        if answer[0] == sw.INVALID:
            raise invalid_argument([FieldViolation(f, d) for f, d in answer[1]])
        if answer[0] == sw.LIMIT:
            raise resource_exhausted(answer[1], answer[2])
        info = answer[1]
        self._infos[key] = info
        if len(self._infos) > PLAN_CACHE_SIZE:
            self._infos.popitem(last=False)
        return info  # type: ignore[no-any-return]

    async def _run_job(self, job: sw.Job, context: Context) -> tuple[Any, ...]:
        """A worker's answer, within the caller's deadline."""
        remaining = context.time_remaining()
        if remaining is not None:
            job.deadline = time.monotonic() + remaining
        job.compile_timeout_s = self._settings.plan_compile_timeout_s
        name = "scorewire.plan" if job.reply == sw.PLAN else "scorewire.cases"
        try:
            with tracing.span(name, {tracing.CASES: job.count}):
                async with asyncio.timeout(remaining):
                    answer = await self.pool.run(job)
        except TimeoutError:
            raise RequestRejected(
                grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline expired while checks ran"
            ) from None
        except CompileTimeout as err:
            raise resource_exhausted(
                "checks",
                f"compiling the checks ran past plan_compile_timeout_s ({err.limit_s:g} s); "
                "the work was stopped",
            ) from None
        if answer[0] == sw.FAULT:
            raise RuntimeError(f"scoring worker fault: {answer[1]}")
        return answer

    async def _load_here(self, key: bytes, source: sw.PlanSource) -> LoadedSuite:
        """The compiled plan in this process (judge-backed plans), off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._load, key, source)

    def _load(self, key: bytes, source: sw.PlanSource) -> LoadedSuite:
        meter = request_meter(self._settings)

        def build() -> LoadedSuite:
            checks = [pb.CheckSpec.FromString(b) for b in source.checks]
            gate = pb.Gate.FromString(source.gate) if source.gate is not None else None
            try:
                specs = convert.check_specs_from_pb(checks)
                return load_request_suite(
                    suite_yaml=source.suite_yaml,
                    suite_name=source.suite_name,
                    checks=specs,
                    compact=source.compact,
                    gate=convert.gate_from_pb(gate) if gate is not None else None,
                    max_checks=source.max_checks,
                    meter=meter,
                    check_timeout_s=self._settings.check_timeout_s,
                )
            except SpecError as err:
                raise invalid_argument(err.violations) from None
            except LimitExceeded as err:
                raise resource_exhausted(err.field, err.message) from None

        def compiled_bytes() -> int:
            instructions = meter.used.get(PROGRAM_SIZE_SETTING, 0)
            return instructions * PLAN_BYTES_PER_REGEX_INSTRUCTION

        return self._plans.get_or_build(key, build, sw.source_bytes(source), compiled_bytes)

    async def _load_checkllm(self, key: bytes, source: sw.PlanSource) -> CheckllmSuite:
        """The checkllm suite in this process (a worker validated it), off the event loop."""

        def build() -> CheckllmSuite:
            try:
                return load_request_checkllm(
                    source.suite_yaml,
                    has_checks=bool(source.checks or source.compact),
                    meter=request_meter(self._settings),
                    max_checks=source.max_checks,
                    check_timeout_s=self._settings.check_timeout_s,
                )
            except SpecError as err:
                raise invalid_argument(err.violations) from None
            except LimitExceeded as err:
                raise resource_exhausted(err.field, err.message) from None

        def load() -> CheckllmSuite:
            return self._checkllm_suites.get_or_build(key, build, sw.source_bytes(source))

        return await asyncio.get_running_loop().run_in_executor(self._executor, load)

    def request_context(self, context: Context, budget_usd: float | None) -> CheckContext:
        """The checks' context of one call: its deadline, judge budget and tenant."""
        return self._context(context, budget_usd)

    def check_output_size(self, text: str, field: str, plan: PlanShape | None = None) -> None:
        """RESOURCE_EXHAUSTED for an output over max_output_bytes, or one that `plan`'s
        whole-text checks would read too much of (max_metric_input_bytes_per_case)."""
        self._check_output(text, field, plan if plan is not None else _NO_CAPS)

    def _context(self, context: Context, budget_usd: float | None) -> CheckContext:
        remaining = context.time_remaining()
        deadline = None if remaining is None else time.monotonic() + remaining
        if budget_usd is not None and not 0 <= budget_usd < math.inf:  # also NaN and inf
            raise invalid_argument([FieldViolation("budget_usd", "must be a finite number ≥ 0")])
        token_budget = self._token_budget()
        budget: Budget | None = None
        run_id = _run_id(context)
        ledger = self.ledger()
        if budget_usd is not None and run_id is not None and ledger is not None:
            # One run's cases spread over replicas share its budget through Redis; the
            # key is the caller's too, so no caller can spend another's run.
            owner = current_token.get() or ""
            name = hashlib.sha256(f"{owner}\0{run_id}".encode()).hexdigest()[:32]
            budget = SharedBudget(
                ledger,
                f"run:{name}",
                budget_usd,
                key_ttl_s=self._settings.budget_run_ttl_s,
                parent=token_budget,
            )
        elif budget_usd is not None or token_budget is not None:
            budget = Budget(budget_usd, parent=token_budget)
        caller = principal(context)
        return CheckContext(
            deadline=deadline,
            judge=self._judge,
            labels=self._labels,
            budget=budget,
            extras=self._extras,
            # The token's name is the tenant: its labels, and its share of the verdict cache.
            tenant=caller.name if caller is not None else None,
        )

    def _token_budget(self) -> Budget | None:
        """The authenticated caller's judge budget for this period, when one is configured."""
        limit = self._settings.judge_budget_per_token_usd
        digest = current_token.get()
        if limit is None or digest is None:
            return None
        budget = self._token_budgets.get(digest)
        if budget is None:
            period = self._settings.judge_budget_period_s
            ledger = self.ledger()
            budget = (
                SharedBudget(ledger, f"token:{digest}", limit, period_s=period)
                if ledger is not None
                else PeriodBudget(limit, period)
            )
            self._token_budgets[digest] = budget
        return budget

    def _budgeted(self, budget_usd: float | None) -> bool:
        """Whether a call's judge calls are held against some budget (the request's or the
        suite's, the caller's token's, or the server's): then unpriced ones are refused."""
        return (
            budget_usd is not None
            or self._settings.judge_budget_usd is not None
            or (
                self._settings.judge_budget_per_token_usd is not None
                and current_token.get() is not None
            )
        )

    def _preconditions(
        self, info: sw.PlanInfo, budget_usd: float | None, *, credentials: bool = True
    ) -> list[Precondition]:
        """What the plan's judges need that this server lacks (cheap: no call is made)."""
        if not info.judge_models:
            return []
        return check_judges(
            info.judge_models,
            self._judge,
            budgeted=self._budgeted(budget_usd),
            credentials=credentials,
        )

    def _preflight(self, info: sw.PlanInfo, budget_usd: float | None) -> None:
        """FAILED_PRECONDITION before any judge call when a judge cannot be called."""
        problems = self._preconditions(info, budget_usd)
        if problems:
            raise failed_precondition(problems)

    def ledger(self) -> Ledger | None:
        """The judge's shared-budget store (Redis), or None: budgets are per process."""
        ledger = getattr(self._judge, "ledger", None)
        return ledger if isinstance(ledger, Ledger) else None

    def _check_json_fields(self, sample: pb.Sample, output: pb.Output, base: str) -> None:
        if convert.json_fields_ok(sample, output):
            return
        raise invalid_argument(convert.json_field_violations(sample, output, base))

    def _check_output(self, text: str, field: str, plan: PlanShape) -> None:
        problem = sw.output_problem(text, field, plan.whole_text_caps, self._settings)
        if problem is not None:
            raise resource_exhausted(*problem)

    # ---- RPCs ----------------------------------------------------------------------------

    @guarded_unary
    async def Score(  # type: ignore[override]  # bytes: serialized by a worker already
        self, request: pb.ScoreRequest, context: Context
    ) -> pb.ScoreResponse | bytes:
        """Score one output against the request's checks."""
        raw = request.SerializeToString()  # its size, and its plan's memo key
        size = len(raw)
        key, source = self._score_source(request, raw)
        # Kept only when small enough to be scored inline (the native kernel reads it);
        # a big request's copy is not held while the checks run.
        small = raw if size <= self._settings.inline_score_max_bytes else None
        del raw
        info = await self._plan(key, source, context)
        self._check_output(request.output.text, "output", info)
        self._check_json_fields(request.sample, request.output, "")
        budget_usd = request.budget_usd if request.HasField("budget_usd") else None
        self._preflight(info, budget_usd)
        ctx = self._context(context, budget_usd)
        if info.any_async:
            suite = await self._load_here(key, source)
            with tracing.span("scorewire.cases", {tracing.CASES: 1}):
                result = await score_case(suite.plan, _request_case(request), ctx)
            message: pb.ScoreResponse | bytes = self._score_response(suite.plan, result)
        elif (inline := self._inline_suite(key, info, size)) is not None:
            # Measured cheap for requests this small: faster here than a worker round trip.
            kernel = sw.native_plan(inline.plan, self._settings, self._native_ctx)
            if kernel is not None and small is not None:
                bounds = self._observer.bounds_ms if self._observer is not None else None
                message, tallied = kernel.score_one(
                    small, lambda: _request_case(request), ctx, bounds
                )
                if self._observer is not None and tallied is not None:
                    self._observer.observe_tally(info, tally_from_counts(tallied))
                return self._within_deadline(ctx, message)
            result = score_case_sync(inline.plan, _request_case(request), ctx)
            message = self._score_response(inline.plan, result)
        else:
            one = convert.case_bytes(request.sample, request.output)
            job = sw.Job(key, source, "score", self._check_timeout(), cases=[one], count=1)
            _, seen, message, slims, cpu_s = await self._run_job(job, context)
            result = sw.unslim(slims[0])
            info.compile_s = min(info.compile_s, seen.compile_s)  # a cold worker is slower
            self._learn(key, source, info, size, result, cpu_s)
        if self._observer is not None:
            self._observer.observe_results(info, (result,))
        return self._within_deadline(ctx, message)

    @staticmethod
    def _within_deadline(
        ctx: CheckContext, message: pb.ScoreResponse | bytes
    ) -> pb.ScoreResponse | bytes:
        """`message`, unless the request's deadline expired while its checks ran."""
        remaining = ctx.remaining()
        if remaining is not None and remaining <= 0:
            raise RequestRejected(
                grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline expired while checks ran"
            )
        return message

    def _score_source(self, request: pb.ScoreRequest, raw: bytes) -> tuple[bytes, sw.PlanSource]:
        """`_source` of a Score's checks (`raw`: the request serialized), remembered by the
        wire bytes of its plan fields."""

        def build() -> tuple[bytes, sw.PlanSource]:
            return self._source(
                suite_yaml="", suite_name="", checks=request.checks, compact=request.compact
            )

        wire = score_plan_wire(raw)
        if wire is None:
            return build()
        # Only a plan within max_checks_per_request is ever remembered (`_source` refuses
        # the rest), and the setting is fixed for the process: a hit needs no count check.
        return self._sources.wired(wire, build)

    def _score_response(self, plan: PlanShape, result: CaseResult) -> pb.ScoreResponse:
        response = pb.ScoreResponse(passed=result.passed)
        convert.add_scores(response.scores, plan.checks, result.scores, self.max_reason_chars)
        return response

    def _check_timeout(self) -> float:
        return self._settings.check_timeout_s

    def _inline_suite(self, key: bytes, info: sw.PlanInfo, size: int) -> LoadedSuite | None:
        """The local plan, when a Score of `size` bytes with it is known to cost little."""
        if size > self._settings.inline_score_max_bytes or info.ms_per_kb is None:
            return None
        if info.ms_per_kb * max(size, 1024) / 1024 > INLINE_SCORE_MS:
            return None
        return self._plans.get(key)

    def _learn(
        self,
        key: bytes,
        source: sw.PlanSource,
        info: sw.PlanInfo,
        size: int,
        result: CaseResult,
        cpu_s: float,
    ) -> None:
        """Record what a worker's Score cost; compile cheap plans here for inline scoring.

        The estimate is the worst CPU time a worker spent on one such Score, or the best
        wall time its checks took if that is more: CPU time, because on a busy machine a
        worker descheduled mid-check reports a long latency that says nothing about the
        plan (one such call used to keep a cheap plan off the inline path for good); and
        the best wall time too, so that a check that blocks without computing (a custom
        check sleeping or doing I/O) never runs on the event loop.
        """
        if size > self._settings.inline_score_max_bytes or info.compile_s > INLINE_COMPILE_S:
            return
        kib = max(size, 1024) / 1024
        info.cpu_ms_per_kb = max(info.cpu_ms_per_kb, cpu_s * 1000 / kib)
        wall_ms = sum(s.latency_ms for s in result.scores)
        info.wall_ms_per_kb = min(info.wall_ms_per_kb, wall_ms / kib)
        info.ms_per_kb = max(info.cpu_ms_per_kb, info.wall_ms_per_kb)
        if info.ms_per_kb > INLINE_SCORE_MS or key in self._compiling:
            return
        if self._plans.get(key) is not None:
            return
        self._compiling.add(key)
        future = asyncio.get_running_loop().run_in_executor(self._executor, self._load, key, source)

        def done(f: asyncio.Future[LoadedSuite]) -> None:
            self._compiling.discard(key)
            if not f.cancelled():
                f.exception()  # a plan that fails here is scored by the workers

        future.add_done_callback(done)

    @guarded_stream
    async def RunSuite(  # type: ignore[override]  # bytes: serialized by a worker already
        self, request: pb.RunSuiteRequest, context: Context
    ) -> AsyncIterator[pb.RunSuiteResponse | bytes]:
        """Score a batch and stream batched results, then the summary."""
        self._check_case_count(len(request.cases), "cases")
        key, source = self._run_source(request)
        info = await self._plan(key, source, context)
        async for reply in self._run_suite(request, key, source, info, None, context):
            yield reply

    @guarded_stream
    async def RunSuiteStream(  # type: ignore[override]  # bytes: serialized already
        self, request_iterator: AsyncIterator[pb.RunSuiteStreamRequest], context: Context
    ) -> AsyncIterator[bytes]:
        """RunSuite with the cases arriving in chunks after a config declaring their count."""
        first = await anext(aiter(request_iterator), None)
        if first is None or first.WhichOneof("message") != "config":
            raise invalid_argument(
                [FieldViolation("config", "the first message of a RunSuiteStream is a config")]
            )
        request, declared = first.config.request, first.config.case_count
        self._check_case_count(declared, "config.case_count")
        key, source = self._run_source(request)
        info = await self._plan(key, source, context)
        arriving = self._arriving(first, request_iterator, declared)
        jobs = None
        if info.format != CHECKLLM and not info.any_async and declared > 0:
            # Chunks go to the workers as their cases arrive and pass (ChunkRun).
            jobs = self._streamed_jobs(key, source, arriving, info)
        else:  # scored as one RunSuite once every case has arrived
            request = pb.RunSuiteRequest()
            request.CopyFrom(first.config.request)
            del request.cases[:]
            async for chunk in arriving:  # each chunk's message is dropped once copied
                request.cases.extend(chunk)
        async for reply in self._run_suite(request, key, source, info, jobs, context):
            yield reply if isinstance(reply, bytes) else reply.SerializeToString()

    def _check_case_count(self, n: int, field: str) -> None:
        limit = self._settings.max_cases_per_request
        if n > limit:
            raise resource_exhausted(field, f"{n} cases exceed max_cases_per_request ({limit})")

    def _run_source(self, request: pb.RunSuiteRequest) -> tuple[bytes, sw.PlanSource]:
        return self._source(
            suite_yaml=request.suite_yaml,
            suite_name=request.suite_name,
            checks=request.checks,
            compact=request.compact,
            gate=request.gate if request.HasField("gate") else None,
            suite_format=request.format,
        )

    async def _arriving(
        self,
        first: pb.RunSuiteStreamRequest,
        rest: AsyncIterator[pb.RunSuiteStreamRequest],
        declared: int,
    ) -> AsyncIterator[Sequence[pb.Case]]:
        """The stream's cases chunk by chunk (the config's own first): exactly `declared`
        of them, in messages within `max_message_bytes` together."""
        limit = self._settings.max_message_bytes
        size, sent = first.ByteSize(), len(first.config.request.cases)
        problem = "config.case_count", f"{declared} cases declared, more sent"
        if sent > declared:
            raise invalid_argument([FieldViolation(*problem)])
        if sent:
            yield first.config.request.cases
        async for message in rest:
            kind = message.WhichOneof("message")
            if kind != "cases":
                what = "a config after the first message" if kind else "neither config nor cases"
                raise invalid_argument([FieldViolation("message", f"the stream sent {what}")])
            size += message.ByteSize()
            if size > limit:
                raise resource_exhausted(
                    "cases",
                    f"the stream's messages together exceed max_message_bytes ({limit} bytes)",
                )
            sent += len(message.cases.cases)
            if sent > declared:
                raise invalid_argument([FieldViolation(*problem)])
            yield message.cases.cases
        if sent < declared:
            raise invalid_argument(
                [FieldViolation("config.case_count", f"{declared} cases declared, {sent} sent")]
            )

    async def _run_suite(
        self,
        request: pb.RunSuiteRequest,
        key: bytes,
        source: sw.PlanSource,
        info: sw.PlanInfo,
        streamed: AsyncIterator[sw.Job] | None,
        context: Context,
    ) -> AsyncIterator[pb.RunSuiteResponse | bytes]:
        """RunSuite's run of `request`; with `streamed`, the chunk jobs of cases arriving
        on a RunSuiteStream instead of `request.cases`."""
        if info.format == CHECKLLM:
            self._preflight(
                info, request.budget_usd if request.HasField("budget_usd") else info.settings.budget
            )
            checkllm = await self._load_checkllm(key, source)
            async for reply in self.checkllm.run_suite(checkllm, request, context):
                yield reply
            return
        if streamed is None and not request.cases and info.suite_case_problem is not None:
            # Cases written inline in a suite document were bounded by its size, but
            # not yet by what the whole-text checks would read of them.
            raise resource_exhausted(*info.suite_case_problem)
        chunks = None
        if not info.any_async:
            # Chunks go to the scoring workers as soon as their cases are checked, a few
            # in flight, answered in order once every case has passed.
            own = streamed is None and not request.cases and info.suite_cases > 0
            chunks = ChunkRun(
                streamed or self._chunk_jobs(key, source, None if own else request.cases, info),
                lambda job: self._run_job(job, context),
                self._suite_share,
                CHUNKS_BUFFERED * self._suite_share,
            )
        try:
            if chunks is not None:
                await chunks.check()
            else:
                await self._check_cases(request.cases, info)
            budget = request.budget_usd if request.HasField("budget_usd") else info.settings.budget
            self._preflight(info, budget)
            ctx = self._context(context, budget)
            who = principal(context)
            baseline = await self._baseline(info.gate, who)
            gate = request.gate if request.HasField("gate") else None
            recording = await self._begin_recording(
                "RunSuite",
                request.record if request.HasField("record") else None,
                request.run_name,
                request.labels,
                "",
                lambda: suite_text(
                    request.suite_yaml, request.suite_name, request.checks, request.compact, gate
                ),
                request.suite_name,
                info.names,
                who,
                context,
            )
        except BaseException:
            if chunks is not None:
                await chunks.close(detach=True)  # refused before any answer
            raise
        builder = SummaryBuilder(info.names, info.types)
        try:
            if chunks is not None:
                # Stored, then sent: a chunk's message waits for its commit, while the
                # next chunks are already queued (so they share commits).
                storing: collections.deque[tuple[asyncio.Future[None], bytes]] = collections.deque()
                async for job, answer in chunks.answers():
                    _, _, message, counts, _ = answer
                    # Counted in the worker: per chunk here, not per score.
                    builder.merge(counts.summary)
                    if self._observer is not None and counts.tally is not None:
                        self._observer.observe_tally(info, counts.tally)
                    if baseline is not None:
                        baseline.add_message(info.names, message)
                    if recording is None:
                        yield message
                        continue
                    blob = cases_blob(job.cases or ())
                    storing.append((recording.submit(blob, message, job.count), message))
                    while storing and (storing[0][0].done() or len(storing) > STORE_AHEAD):
                        stored, ready = storing.popleft()
                        await stored
                        yield ready
                while storing:
                    stored, ready = storing.popleft()
                    await stored
                    yield ready
            else:
                suite = await self._load_here(key, source)
                plan = suite.plan
                source_cases: Sequence[pb.Case] | Sequence[Case] = (
                    request.cases if request.cases or not suite.cases else suite.cases
                )
                cases = [streaming.to_case(source_cases, i) for i in range(len(source_cases))]
                concurrency = min(suite.settings.concurrency, self._settings.max_concurrency)
                results = run_cases(plan, cases, ctx, concurrency=concurrency)
                # Not made current: this generator's steps are not one context's.
                batch_span = tracing.start_span("scorewire.cases", {tracing.CASES: len(cases)})
                try:
                    async for batch in streaming.batched(results):
                        for r in batch:
                            builder.add(r)
                        if self._observer is not None:
                            self._observer.observe_results(plan, batch)
                        if baseline is not None:
                            baseline.add(info.names, batch)
                        msg = streaming.results_message(plan, batch, self.max_reason_chars)
                        if recording is None:
                            yield msg
                            continue
                        data = msg.SerializeToString()
                        sent = [r.index for r in batch] if request.cases else []
                        blob = cases_blob([request.cases[i].SerializeToString() for i in sent])
                        await recording.append(blob, data, len(batch))
                        yield data
                finally:
                    batch_span.end()
            summary = builder.finish(info.gate)
            if baseline is not None:
                baseline.judge(summary)
            if self._observer is not None:
                self._observer.observe_summary(summary)
            message_summary = convert.summary_to_pb(summary)
            if recording is not None:
                await recording.complete(summary)
                message_summary.run_id = recording.run.run_id
            yield pb.RunSuiteResponse(summary=message_summary)
        finally:
            if chunks is not None:
                await chunks.close()
            if recording is not None:
                recording.abandon()  # unless it completed: cancelled, failed

    async def _baseline(self, gate: Any, who: Principal | None) -> BaselineGate | None:
        """The baseline a gate names, loaded from the run store; None without one."""
        if gate is None or gate.baseline is None:
            return None
        run_id, outcomes = await resolve_baseline(self._runs, gate.baseline, who)
        return BaselineGate(run_id, outcomes, gate.max_regression)

    async def _begin_recording(
        self,
        source: str,
        record: bool | None,
        run_name: str,
        labels: Any,
        field_base: str,
        suite: Any,
        suite_name: str,
        checks: Sequence[str],
        who: Principal | None,
        context: Context,
    ) -> Recording | None:
        """Start recording the call when it asks (or by the server's default); else None."""
        if not (self._settings.runs_record if record is None else record):
            return None
        if self._runs is None:
            raise unavailable()
        checked = check_run_fields(run_name, dict(labels), self._settings, field_base)
        return await Recording.begin(
            self._runs,
            name=run_name or suite_name or "unnamed",
            source=source,
            who=who,
            labels=checked,
            suite=suite(),
            checks=checks,
            context=context,
        )

    async def score_now(
        self,
        checks: Sequence[pb.CheckSpec],
        cases: Sequence[pb.Case],
        context: Context,
        budget_usd: float | None,
    ) -> tuple[Plan, list[CaseResult]]:
        """Score `cases` with `checks` here, results in case order (Agreement, Calibrate).

        The same limits and errors as RunSuite: the checks compile in a worker first
        (INVALID_ARGUMENT, RESOURCE_EXHAUSTED naming the setting), then run in this
        process, where judge calls share the server's verdict cache and budgets.
        """
        limit = self._settings.max_cases_per_request
        if len(cases) > limit:
            raise resource_exhausted(
                "cases", f"{len(cases)} cases exceed max_cases_per_request ({limit})"
            )
        key, source = self._source(suite_yaml="", suite_name="", checks=checks, compact=())
        info = await self._plan(key, source, context)
        for i, c in enumerate(cases):
            self._check_output(c.output.text, f"cases[{i}].output", info)
        ctx = self._context(context, budget_usd)
        plan = (await self._load_here(key, source)).plan
        todo = [streaming.to_case(cases, i) for i in range(len(cases))]
        concurrency = self._settings.max_concurrency
        results = [r async for r in run_cases(plan, todo, ctx, concurrency=concurrency)]
        if self._observer is not None:
            self._observer.observe_results(plan, results)
        results.sort(key=lambda r: r.index)
        return plan, results

    def describe_judge(self, model: Any) -> str:
        """`backend:model` a check's `model:` parameter routes to (the default when unset)."""
        if self._judge is None:
            return ""
        from scorewire.judge.models import parse_model

        try:
            ref = parse_model(model if isinstance(model, str) else None)
        except ValueError:
            return str(model)
        return str(self._judge.describe(ref))

    def _check_case(self, c: pb.Case, i: int, info: sw.PlanInfo, short: int) -> None:
        """Refuse case `i` over the output limits or with bad JSON text (its field path)."""
        text = c.output.text
        if len(text) > short:  # else far within every limit, without measuring
            self._check_output(text, f"cases[{i}].output", info)
        if not convert.json_fields_ok(c.sample, c.output):  # the path only when refused
            raise invalid_argument(convert.json_field_violations(c.sample, c.output, f"cases[{i}]"))

    def _short_output(self, info: sw.PlanInfo) -> int:
        """Characters an output may have and be within the output limits whatever they are:
        a code point is at most 4 bytes, and each whole-text check reads the text once."""
        per_case = self._settings.max_metric_input_bytes_per_case
        most = min(self._settings.max_output_bytes, per_case // max(1, len(info.whole_text_caps)))
        return most // 4

    async def _check_cases(self, cases: Sequence[pb.Case], info: sw.PlanInfo) -> None:
        """Check every case (`_check_case`), yielding to the event loop now and then."""
        short = self._short_output(info)
        for i, c in enumerate(cases):
            self._check_case(c, i, info, short)
            if i % OUTPUT_CHECKS_PER_YIELD == OUTPUT_CHECKS_PER_YIELD - 1:
                await asyncio.sleep(0)

    def _chunk_jobs(
        self,
        key: bytes,
        source: sw.PlanSource,
        cases: Sequence[pb.Case] | None,
        info: sw.PlanInfo,
    ) -> Iterator[sw.Job]:
        """Jobs of at most BATCH_MAX_RESULTS cases (or CHUNK_MAX_BYTES of them) each; each
        case is checked (`_check_case`) before the job holding it is made."""
        if cases is None:  # the suite document's own cases, which the workers hold
            job = self._job_maker(key, source)
            for start in range(0, info.suite_cases, streaming.BATCH_MAX_RESULTS):
                yield job(None, start, min(streaming.BATCH_MAX_RESULTS, info.suite_cases - start))
            return
        cut = _JobCutter(self._job_maker(key, source), self._case_checker(info))
        for c in cases:
            if (done := cut.add(c)) is not None:
                yield done
        if (done := cut.rest()) is not None:
            yield done

    async def _streamed_jobs(
        self,
        key: bytes,
        source: sw.PlanSource,
        arriving: AsyncIterator[Sequence[pb.Case]],
        info: sw.PlanInfo,
    ) -> AsyncIterator[sw.Job]:
        """`_chunk_jobs` of a RunSuiteStream's cases as their chunks arrive: the jobs are
        cut as RunSuite's are, whatever the chunks, so indexes and results are the same."""
        cut = _JobCutter(self._job_maker(key, source), self._case_checker(info))
        async for cases in arriving:
            for c in cases:
                if (done := cut.add(c)) is not None:
                    yield done
        if (done := cut.rest()) is not None:
            yield done

    def _job_maker(self, key: bytes, source: sw.PlanSource) -> Callable[..., sw.Job]:
        timeout = self._check_timeout()
        bounds = self._observer.bounds_ms if self._observer is not None else None

        def job(cases: list[bytes] | None, first: int, count: int) -> sw.Job:
            return sw.Job(
                key,
                source,
                "run",
                timeout,
                cases=cases,
                first=first,
                count=count,
                counts=True,
                bounds_ms=bounds,
            )

        return job

    def _case_checker(self, info: sw.PlanInfo) -> Callable[[pb.Case, int], None]:
        short = self._short_output(info)
        return lambda c, i: self._check_case(c, i, info, short)

    @property
    def _suite_share(self) -> int:
        """Chunks of one RunSuite in the workers at once (`suite_chunks_in_flight`)."""
        configured = self._settings.suite_chunks_in_flight
        return configured if configured is not None else max(2, self.pool.share)

    async def close(self) -> None:
        """Stop the scoring workers and the plan thread."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        await self.checkllm.aclose()
        await self.pool.close()

    @guarded_stream
    async def ScoreStream(
        self, request_iterator: AsyncIterator[pb.ScoreStreamRequest], context: Context
    ) -> AsyncIterator[pb.ScoreStreamResponse]:
        """Score cases as they arrive; responses carry the caller's request id."""
        first = await anext(aiter(request_iterator), None)
        if first is None:
            return
        if first.WhichOneof("message") != "config":
            raise invalid_argument(
                [FieldViolation("config", "the first message of a ScoreStream must be a config")]
            )
        cfg = first.config
        key, source = self._source(
            suite_yaml=cfg.suite_yaml,
            suite_name=cfg.suite_name,
            checks=cfg.checks,
            compact=cfg.compact,
            suite_format=cfg.format,
        )
        info = await self._plan(key, source, context)
        budget_usd = cfg.budget_usd if cfg.HasField("budget_usd") else None
        self._preflight(info, budget_usd)
        ctx = self._context(context, budget_usd)
        if info.format == CHECKLLM:
            # A checkllm stream is scored as recorded by the checkllm runner (not recorded
            # in the run store yet).
            checkllm = await self._load_checkllm(key, source)
            async for resp in self.checkllm.stream(checkllm, request_iterator, ctx):
                yield resp
            return
        recording = await self._begin_recording(
            "ScoreStream",
            cfg.record if cfg.HasField("record") else None,
            cfg.run_name,
            cfg.labels,
            "config",
            lambda: suite_text(cfg.suite_yaml, cfg.suite_name, cfg.checks, cfg.compact, None),
            cfg.suite_name,
            info.names,
            principal(context),
            context,
        )
        on_result = None
        builder = SummaryBuilder(info.names, info.types)
        if recording is not None:
            on_result = self._stream_recorder(recording, builder)
        try:
            async for resp in self._score_stream(key, source, info, ctx, request_iterator, context,
                                                 on_result):  # fmt: skip
                yield resp
            if recording is not None:
                await recording.complete(builder.finish())
        finally:
            if recording is not None:
                recording.abandon()

    @staticmethod
    def _stream_recorder(recording: Recording, builder: SummaryBuilder) -> streaming.OnResult:
        """Store each streamed case (and count it) before its response is sent."""
        seen = 0

        async def on_result(
            case: pb.StreamCase, scores: list[Score], response: pb.ScoreStreamResponse
        ) -> None:
            nonlocal seen
            index, seen = seen, seen + 1
            builder.add(CaseResult(index, case.sample.id, scores))
            result = pb.CaseResult(
                index=index, sample_id=case.sample.id, scores=response.scores,
                passed=response.passed,
            )  # fmt: skip
            results = pb.RunSuiteResponse(results=pb.CaseResultBatch(results=[result]))
            blob = cases_blob([convert.case_bytes(case.sample, case.output)])
            await recording.append(blob, results.SerializeToString(), 1)

        return on_result

    async def _score_stream(
        self,
        key: bytes,
        source: sw.PlanSource,
        info: sw.PlanInfo,
        ctx: CheckContext,
        request_iterator: AsyncIterator[pb.ScoreStreamRequest],
        context: Context,
        on_result: streaming.OnResult | None,
    ) -> AsyncIterator[pb.ScoreStreamResponse]:
        if info.any_async:
            suite = await self._load_here(key, source)
            stream = streaming.stream_scores(
                suite.plan, request_iterator, ctx, self._settings.max_concurrency, self,
                on_result=on_result,
            )  # fmt: skip
        else:

            async def score(case: pb.StreamCase) -> CaseResult:
                one = convert.case_bytes(case.sample, case.output)
                job = sw.Job(key, source, "results", self._check_timeout(), cases=[one], count=1)
                try:
                    answer = await self._run_job(job, context)
                except RequestRejected as err:
                    # Every streamed case gets an answer: the deadline passed while it ran.
                    error = Score.fail_with_error(ErrorCode.DEADLINE_EXCEEDED, err.message)
                    return CaseResult(0, case.sample.id, [error for _ in info.checks])
                return answer[2][0]  # type: ignore[no-any-return]

            concurrency = min(self._settings.max_concurrency, self.pool.share)
            stream = streaming.stream_scores(
                info, request_iterator, ctx, concurrency, self, score=score, on_result=on_result
            )
        async for resp in stream:
            yield resp

    @guarded_unary
    async def ListChecks(
        self, request: pb.ListChecksRequest, context: Context
    ) -> pb.ListChecksResponse:
        """The catalog of check types: the canonical ones, with their other spellings;
        types that only work in process (`python`) are not offered over the wire."""
        if self._catalog is None:
            infos = []
            for t in REGISTRY.types():
                if t.in_process_only:
                    continue
                schema = struct_pb2.Struct()
                json_format.ParseDict(t.params_schema(), schema)
                infos.append(
                    pb.CheckInfo(
                        type=t.name,
                        description=t.description,
                        family=t.family,
                        params_schema=schema,
                        uses_judge=t.uses_judge,
                        aliases=REGISTRY.aliases_of(t.name),
                    )
                )
            self._catalog = pb.ListChecksResponse(checks=infos)
        return self._catalog

    @guarded_unary
    async def ValidateSuite(
        self, request: pb.ValidateSuiteRequest, context: Context
    ) -> pb.ValidateSuiteResponse:
        """Every problem of a suite, with paths; never INVALID_ARGUMENT for a bad suite."""
        try:
            key, source = self._source(
                suite_yaml=request.suite_yaml,
                suite_name=request.suite_name,
                checks=request.checks,
                compact=request.compact,
                suite_format=request.format,
            )
            info = await self._plan(key, source, context, list_suites=True)
        except RequestRejected as err:
            if err.code != grpc.StatusCode.INVALID_ARGUMENT:
                raise
            return pb.ValidateSuiteResponse(
                valid=False, problems=convert.violations_to_pb(err.violations)
            )
        problems = self._preconditions(info, info.settings.budget, credentials=not request.offline)
        return pb.ValidateSuiteResponse(
            valid=True,
            suites=info.suites,
            checks=info.names,
            preconditions=[
                pb.PreconditionProblem(
                    field=p.field, setting=p.setting, description=p.description, kind=p.kind
                )
                for p in problems
            ],
            runnable=not problems,
        )

    @property
    def observer(self) -> RunObserver | None:
        """The metrics observer, if any."""
        return self._observer

    @property
    def plan_cache(self) -> PlanCacheView:
        """The compiled-plan caches, here and in the scoring workers."""
        return PlanCacheView(self._plans, self.pool)

    def plan_cache_here_len(self) -> int:
        """Plans compiled in this process (judge-backed, or cheap for inline Score)."""
        return len(self._plans)

    @property
    def max_reason_chars(self) -> int:
        """The longest reason a response carries (`max_reason_chars`)."""
        return self._settings.max_reason_chars

    def check_stream_case(self, case: pb.StreamCase, plan: PlanShape) -> None:
        """Reject a streamed case over the output size limits or with bad JSON fields."""
        self._check_output(case.output.text, "case.output", plan)
        self._check_json_fields(case.sample, case.output, "case")
