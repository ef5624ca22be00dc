"""The ScoringService handlers: convert, call the engine, convert back.

Compiled plans are cached by the request's check specs, so a caller sending the same
checks with every Score request pays validation and regex/schema compilation once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import grpc
from google.protobuf import json_format, struct_pb2
from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.registry import REGISTRY
from scorewire.engine.cost import metric_input_bytes, request_meter
from scorewire.engine.runner import (
    Case,
    CaseResult,
    Plan,
    run_cases,
    score_case,
)
from scorewire.engine.summary import Summary, SummaryBuilder
from scorewire.judge import Budget, PeriodBudget
from scorewire.regex.engine import PROGRAM_SIZE_SETTING
from scorewire.server import convert, streaming
from scorewire.server.errors import (
    RequestRejected,
    guarded_stream,
    guarded_unary,
    invalid_argument,
    resource_exhausted,
)
from scorewire.server.security import current_token, principal
from scorewire.settings import Settings
from scorewire.suites.evalstone import LoadedSuite, load_request_suite
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc as pb_grpc

log = logging.getLogger("scorewire.server")

Context = grpc.aio.ServicerContext[Any, Any]

PLAN_CACHE_SIZE = 512
PLAN_BYTES_PER_SOURCE_BYTE = 8
"""A compiled plan's memory per byte of the specs it came from, generously: parameters are
kept as Python objects (a str of n bytes is ~n + 49 bytes, a list slot 8 more per item)."""
PLAN_BYTES_PER_REGEX_INSTRUCTION = 32
"""Memory of a compiled RE2 program per instruction, generously (measured ~18): a short
pattern can compile to a big program (`\\d{1000}` is 84,000 instructions, ~1.5 MB)."""


class PlanCache:
    """An LRU of compiled suites keyed by a digest of the request's check specs.

    Bounded by count and by bytes: each plan's size is estimated from the size of the
    specs it was compiled from (`PLAN_BYTES_PER_SOURCE_BYTE` per byte) plus the RE2
    programs its patterns compiled to, so big parameters cannot pin memory; a plan bigger
    than the whole budget is used once and not kept.
    """

    def __init__(self, size: int = PLAN_CACHE_SIZE, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._size = size
        self._max_bytes = max_bytes
        self._items: OrderedDict[bytes, tuple[LoadedSuite, int]] = OrderedDict()
        self.bytes = 0
        """Estimated bytes of the plans held now."""

    def __len__(self) -> int:
        return len(self._items)

    def get_or_build(
        self,
        key: bytes,
        build: Callable[[], LoadedSuite],
        source_bytes: int = 0,
        compiled_bytes: Callable[[], int] = lambda: 0,
    ) -> LoadedSuite:
        """The cached suite for `key`, or `build()` stored under it.

        Its size is estimated from `source_bytes` plus `compiled_bytes()`, asked after
        the build (what compiling made that the source does not show).
        """
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
            return hit[0]
        suite = build()
        cost = (source_bytes + 256) * PLAN_BYTES_PER_SOURCE_BYTE + compiled_bytes()
        if cost > self._max_bytes:
            return suite
        self._items[key] = (suite, cost)
        self.bytes += cost
        while len(self._items) > self._size or self.bytes > self._max_bytes:
            _, (_, dropped) = self._items.popitem(last=False)
            self.bytes -= dropped
        return suite


def _plan_key(
    suite_yaml: str,
    suite_name: str,
    checks: Sequence[pb.CheckSpec],
    compact: Sequence[str],
    gate: pb.Gate | None,
) -> tuple[bytes, int]:
    """The digest of a request's check specs, and how many bytes they took."""
    h = hashlib.blake2b(digest_size=20)
    size = 0
    for part in (suite_yaml, "\0", suite_name, "\0", "\n".join(compact), "\0"):
        data = part.encode("utf-8", "surrogatepass")
        size += len(data)
        h.update(data)
    for c in checks:
        data = c.SerializeToString(deterministic=True)
        size += len(data)
        h.update(data)
        h.update(b"\1")
    if gate is not None:
        h.update(gate.SerializeToString(deterministic=True))
    return h.digest(), size


class RunObserver(Protocol):
    """Receives results for metrics; called once per batch, not per check, to stay cheap."""

    def observe_results(self, plan: Plan, results: Sequence[CaseResult]) -> None:
        """Count the scores of finished cases."""

    def observe_summary(self, summary: Summary) -> None:
        """Count a finished RunSuite and its gate outcome."""


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
    ) -> None:
        self._settings = settings
        self._observer = observer
        # Shared by every request's context: read-only run-wide services and flags.
        self._extras: dict[str, Any] = {
            **(extras or {}),
            "no_local_files": True,
            # Needles read from a case's sample are bounded like literal ones.
            "max_needles_per_request": settings.max_needles_per_request,
            "max_needle_chars_per_request": settings.max_needle_chars_per_request,
        }
        self._token_budgets: dict[str, PeriodBudget] = {}
        # One thread scores the chunks of every deterministic RunSuite in FIFO order: the
        # GIL allows no more, and one queue interleaves concurrent suites fairly.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorewire-score")
        self._plans = PlanCache(max_bytes=settings.plan_cache_bytes)
        self._judge = judge
        self._labels = labels
        self._catalog: pb.ListChecksResponse | None = None

    # ---- helpers -----------------------------------------------------------------------

    def _load(
        self,
        *,
        suite_yaml: str,
        suite_name: str,
        checks: Sequence[pb.CheckSpec],
        compact: Sequence[str],
        gate: pb.Gate | None = None,
    ) -> LoadedSuite:
        limit = self._settings.max_checks_per_request
        if len(checks) + len(compact) > limit:
            raise resource_exhausted(
                "checks",
                f"{len(checks) + len(compact)} checks exceed max_checks_per_request ({limit})",
            )
        key, source_bytes = _plan_key(suite_yaml, suite_name, checks, compact, gate)
        meter = request_meter(self._settings)

        def build() -> LoadedSuite:
            try:
                specs = convert.check_specs_from_pb(checks)
                return load_request_suite(
                    suite_yaml=suite_yaml,
                    suite_name=suite_name,
                    checks=specs,
                    compact=compact,
                    gate=convert.gate_from_pb(gate) if gate is not None else None,
                    max_checks=limit,
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

        return self._plans.get_or_build(key, build, source_bytes, compiled_bytes)

    def _context(self, context: Context, budget_usd: float | None) -> CheckContext:
        remaining = context.time_remaining()
        deadline = None if remaining is None else time.monotonic() + remaining
        if budget_usd is not None and not 0 <= budget_usd < math.inf:  # also NaN and inf
            raise invalid_argument([FieldViolation("budget_usd", "must be a finite number ≥ 0")])
        token_budget = self._token_budget()
        budget = None
        if budget_usd is not None or token_budget is not None:
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
            budget = PeriodBudget(limit, self._settings.judge_budget_period_s)
            self._token_budgets[digest] = budget
        return budget

    def _check_output(self, text: str, field: str, plan: Plan) -> None:
        limit = self._settings.max_output_bytes
        # len(text) counts code points; a code point is at most 4 bytes, so only long
        # texts need encoding to measure.
        chars = len(text)
        if chars * 4 > limit and len(text.encode("utf-8")) > limit:
            raise resource_exhausted(
                join_path(field, "text"),
                f"output text is larger than max_output_bytes ({limit} bytes)",
            )
        per_case = self._settings.max_metric_input_bytes_per_case
        caps = plan.whole_text_caps
        if caps and metric_input_bytes(caps, chars * 4) > per_case:
            cost = metric_input_bytes(caps, len(text.encode("utf-8")))
            if cost > per_case:
                raise resource_exhausted(
                    join_path(field, "text"),
                    f"whole-text checks would read {cost} bytes of this output, over "
                    f"max_metric_input_bytes_per_case ({per_case})",
                )

    # ---- RPCs ----------------------------------------------------------------------------

    @guarded_unary
    async def Score(self, request: pb.ScoreRequest, context: Context) -> pb.ScoreResponse:
        """Score one output against the request's checks."""
        suite = self._load(
            suite_yaml="",
            suite_name="",
            checks=request.checks,
            compact=request.compact,
        )
        self._check_output(request.output.text, "output", suite.plan)
        ctx = self._context(context, request.budget_usd if request.HasField("budget_usd") else None)
        case = Case(convert.sample_from_pb(request.sample), convert.output_from_pb(request.output))
        result = await score_case(suite.plan, case, ctx)
        if self._observer is not None:
            self._observer.observe_results(suite.plan, (result,))
        remaining = ctx.remaining()
        if remaining is not None and remaining <= 0:
            raise RequestRejected(
                grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline expired while checks ran"
            )
        return pb.ScoreResponse(
            scores=convert.scores_to_pb(
                suite.plan.checks, result.scores, max_reason_chars=self.max_reason_chars
            ),
            passed=result.passed,
        )

    @guarded_stream
    async def RunSuite(
        self, request: pb.RunSuiteRequest, context: Context
    ) -> AsyncIterator[pb.RunSuiteResponse]:
        """Score a batch and stream batched results, then the summary."""
        limit = self._settings.max_cases_per_request
        if len(request.cases) > limit:
            raise resource_exhausted(
                "cases", f"{len(request.cases)} cases exceed max_cases_per_request ({limit})"
            )
        suite = self._load(
            suite_yaml=request.suite_yaml,
            suite_name=request.suite_name,
            checks=request.checks,
            compact=request.compact,
            gate=request.gate if request.HasField("gate") else None,
        )
        for i, c in enumerate(request.cases):
            self._check_output(c.output.text, f"cases[{i}].output", suite.plan)
        if not request.cases:
            # Cases written inline in a suite document were bounded by its size, but
            # not yet by what the whole-text checks would read of them.
            for i, case in enumerate(suite.cases or ()):
                self._check_output(case.output.text, f"suite_yaml.cases[{i}].output", suite.plan)
        budget = request.budget_usd if request.HasField("budget_usd") else suite.settings.budget
        ctx = self._context(context, budget)
        plan = suite.plan
        builder = SummaryBuilder(plan.names, [c.type for c in plan.checks])
        source: Sequence[pb.Case] | Sequence[Case] = (
            request.cases if request.cases or not suite.cases else suite.cases
        )
        if not plan.any_async:
            # CPU-bound work goes to the scoring thread, chunk by chunk, so the event loop
            # stays free to accept and answer other calls while big suites run.
            loop = asyncio.get_running_loop()
            for start in range(0, len(source), streaming.BATCH_MAX_RESULTS):
                message, batch = await loop.run_in_executor(
                    self._executor,
                    streaming.score_chunk,
                    plan,
                    source,
                    start,
                    ctx,
                    builder,
                    self.max_reason_chars,
                )
                if self._observer is not None:
                    self._observer.observe_results(plan, batch)
                yield message
        else:
            cases = [streaming.to_case(source, i) for i in range(len(source))]
            concurrency = min(suite.settings.concurrency, self._settings.max_concurrency)
            results = run_cases(plan, cases, ctx, concurrency=concurrency)
            async for batch in streaming.batched(results):
                for r in batch:
                    builder.add(r)
                if self._observer is not None:
                    self._observer.observe_results(plan, batch)
                yield streaming.results_message(plan, batch, self.max_reason_chars)
        summary = builder.finish(suite.gate)
        if self._observer is not None:
            self._observer.observe_summary(summary)
        yield pb.RunSuiteResponse(summary=convert.summary_to_pb(summary))

    def close(self) -> None:
        """Stop the scoring thread (after the chunks already queued)."""
        self._executor.shutdown(wait=False, cancel_futures=True)

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
        suite = self._load(
            suite_yaml=cfg.suite_yaml,
            suite_name=cfg.suite_name,
            checks=cfg.checks,
            compact=cfg.compact,
        )
        ctx = self._context(context, cfg.budget_usd if cfg.HasField("budget_usd") else None)
        async for resp in streaming.stream_scores(
            suite.plan, request_iterator, ctx, self._settings.max_concurrency, self
        ):
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
            suite = self._load(
                suite_yaml=request.suite_yaml,
                suite_name=request.suite_name,
                checks=request.checks,
                compact=request.compact,
            )
        except RequestRejected as err:
            if err.code != grpc.StatusCode.INVALID_ARGUMENT:
                raise
            return pb.ValidateSuiteResponse(
                valid=False, problems=convert.violations_to_pb(err.violations)
            )
        suites: list[str] = []
        if request.suite_yaml.strip():
            from scorewire.suites.evalstone import load_suite_text

            with contextlib.suppress(SpecError):
                suites = sorted(load_suite_text(request.suite_yaml, allow_imports=False).suites)
        return pb.ValidateSuiteResponse(valid=True, suites=suites, checks=suite.plan.names)

    @property
    def plan_cache(self) -> PlanCache:
        """The compiled-plan cache (its `bytes` and length show what it holds)."""
        return self._plans

    @property
    def observer(self) -> RunObserver | None:
        """The metrics observer, if any."""
        return self._observer

    @property
    def max_reason_chars(self) -> int:
        """The longest reason a response carries (`max_reason_chars`)."""
        return self._settings.max_reason_chars

    def check_stream_case(self, case: pb.StreamCase, plan: Plan) -> None:
        """Reject a streamed case over the output size limits."""
        self._check_output(case.output.text, "case.output", plan)
