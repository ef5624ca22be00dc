"""The ScoringService handlers: convert the request, call the scoring layer, convert back.

Each handler turns its request into a plan source (`scoring.plan_source`), learns the plan
from the executor (compiled within the request limits), checks what the request sends
against the plan, and hands the cases to the executor (`scoring.executor` says where they
are scored), to `SuiteRuns` (a batch: recording, baselines, the summary) or to
`ScoreStreams`. Domain errors become statuses in `status.guarded_*`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import Descriptor
from scorewire.core.errors import FieldViolation, SpecError
from scorewire.core.registry import REGISTRY
from scorewire.engine.runner import Case, CaseResult, Plan, run_cases
from scorewire.runs import RunRecorder
from scorewire.scoring import wire
from scorewire.scoring.checkllm_runs import CheckllmRuns
from scorewire.scoring.executor import DeadlineExpired, Executor, OneCase, OneScored
from scorewire.scoring.limits import check_extras
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.plans import PlanInfo
from scorewire.scoring.screening import Screen
from scorewire.server import convert, intake
from scorewire.server.call_context import BytesInFlight, CallContexts, deadline, fresh_judges
from scorewire.server.observer import RunObserver
from scorewire.server.security import principal
from scorewire.server.status import (
    guarded_stream,
    guarded_unary,
    invalid_argument,
    resource_exhausted,
)
from scorewire.server.streaming import ScoreStreams
from scorewire.server.suite_runs import RequestChecks, SuiteRuns
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import CHECKLLM
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc as pb_grpc

Context = grpc.aio.ServicerContext[Any, Any]


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
        self._observer = observer
        bounds = observer.bounds_ms if observer is not None else None
        self.executor = Executor(settings, bounds_ms=bounds)
        """Compiles plans and scores cases (its worker pool: `executor.pool`)."""
        self.calls = CallContexts(
            settings, judge, labels, {**(extras or {}), **check_extras(settings)}
        )
        self.in_flight = BytesInFlight(
            settings.max_bytes_in_flight, settings.max_bytes_in_flight_per_tenant
        )
        """The bytes of the requests being served (`max_bytes_in_flight`)."""
        self.cases = RequestChecks(settings)
        self.suites = SuiteRuns(settings, self.executor, self.calls, self.cases, runs, observer)
        self.streams = ScoreStreams(settings, self.executor, self.cases, observer)
        self.checkllm = CheckllmRuns(settings, self.calls.ledger(), observer, self.executor)
        """checkllm suites: their runs, generation budget and generation cache."""
        self._catalog: pb.ListChecksResponse | None = None
        self._screens = _Screens(
            self.cases.screen(pb.RunSuiteRequest.DESCRIPTOR),
            self.cases.screen(pb.RunSuiteStreamRequest.DESCRIPTOR),
        )

    async def start(self) -> None:
        """Start the scoring workers."""
        await self.executor.start()

    async def close(self) -> None:
        """Stop the scoring workers and the plan thread."""
        await self.checkllm.aclose()
        await self.executor.close()

    # ---- requests to plan sources ----------------------------------------------------

    def _source(
        self,
        *,
        suite_yaml: str,
        suite_name: str,
        checks: Sequence[pb.CheckSpec],
        compact: Sequence[str],
        gate: pb.Gate | None = None,
        suite_format: int = pb.SUITE_FORMAT_UNSPECIFIED,
    ) -> tuple[bytes, PlanSource]:
        """The request's plan as plain data, and its cache key (the size limits first)."""
        self.cases.plan_size(len(checks), compact, suite_yaml)
        limit = self._settings.max_checks_per_request
        return self.executor.sources.get(
            suite_yaml,
            suite_name,
            tuple(c.SerializeToString(deterministic=True) for c in checks),
            tuple(compact),
            None if gate is None else gate.SerializeToString(deterministic=True),
            limit,
            convert.format_name(suite_format),
        )

    def _run_source(self, request: pb.RunSuiteRequest) -> tuple[bytes, PlanSource]:
        return self._source(
            suite_yaml=request.suite_yaml,
            suite_name=request.suite_name,
            checks=request.checks,
            compact=request.compact,
            gate=request.gate if request.HasField("gate") else None,
            suite_format=request.format,
        )

    async def _plan(
        self, key: bytes, source: PlanSource, context: Context, *, list_suites: bool = False
    ) -> PlanInfo:
        """What the plan is, compiled (and kept) within the limits."""
        return await self.executor.info(key, source, deadline(context), list_suites=list_suites)

    def request_screen(self, message: Descriptor) -> Screen | None:
        """What refuses a request of type `message` from its bytes before they are parsed."""
        return self.cases.screen(message)

    def _check_case_count(self, n: int, field: str) -> None:
        limit = self._settings.max_cases_per_request
        if n > limit:
            raise resource_exhausted(field, f"{n} cases exceed max_cases_per_request ({limit})")

    # ---- RPCs ----------------------------------------------------------------------------

    @guarded_unary
    async def Score(  # type: ignore[override]  # bytes: serialized by the scorer already
        self, request: pb.ScoreRequest, context: Context
    ) -> pb.ScoreResponse | bytes:
        """Score one output against the request's checks."""
        raw = request.SerializeToString()  # its size, and the kernel reads it
        with self.in_flight.holding(len(raw)):
            return await self._score(request, raw, context)

    async def _score(
        self, request: pb.ScoreRequest, raw: bytes, context: Context
    ) -> pb.ScoreResponse | bytes:
        key, source = self._source(
            suite_yaml="", suite_name="", checks=request.checks, compact=request.compact
        )
        # Kept only when small enough to be scored inline (the native kernel reads it);
        # a big request's copy is not held while the checks run.
        small = raw if len(raw) <= self._settings.inline_score_max_bytes else None
        one = OneCase(
            len(raw),
            small,
            lambda: Case(wire.sample_from_pb(request.sample), wire.output_from_pb(request.output)),
            lambda: wire.case_bytes(request.sample, request.output),
        )
        del raw
        info = await self._plan(key, source, context)
        self.cases.output(request.output.text, "output", info.whole_text_caps)
        self.cases.json_fields(request.sample, request.output, "")
        budget_usd = request.budget_usd if request.HasField("budget_usd") else None
        fresh = fresh_judges(request.judge_cache, False, "judge_cache")
        self.calls.preflight(info, budget_usd)
        ctx = self.calls.context(context, budget_usd, fresh_judges=fresh)
        scored = await self.executor.score_one(key, source, info, one, ctx)
        self._observe(info, scored)
        if ctx.past_deadline():
            raise DeadlineExpired()
        return scored.message

    def _observe(self, info: PlanInfo, scored: OneScored) -> None:
        if self._observer is None:
            return
        if scored.tally is not None:
            self._observer.observe_tally(info, scored.tally)
        elif scored.result is not None:
            self._observer.observe_results(info, (scored.result,))

    @guarded_stream
    async def RunSuite(  # type: ignore[override]  # bytes in (intake), bytes out
        self, raw: bytes, context: Context
    ) -> AsyncIterator[pb.RunSuiteResponse | bytes]:
        """Score a batch and stream batched results, then the summary."""
        with self.in_flight.holding(len(raw)):
            rest, cases = await intake.split(raw, intake.RUN_SUITE_CASES)
            del raw  # the cases' bytes keep what they need of it
            request = intake.parse(pb.RunSuiteRequest, rest, self._screens.run)
            self._check_case_count(len(cases), "cases")
            key, source = self._run_source(request)
            info = await self._plan(key, source, context)
            async for reply in self._run(request, cases, key, source, info, None, context):
                yield reply

    @guarded_stream
    async def RunSuiteStream(  # type: ignore[override]  # bytes in (intake), bytes out
        self, messages: AsyncIterator[bytes], context: Context
    ) -> AsyncIterator[bytes]:
        """RunSuite with the cases arriving in chunks after a config declaring their count."""
        first = await anext(aiter(messages), None)
        rest, cases = await intake.split(first or b"", intake.STREAM_CONFIG_CASES)
        config = intake.parse(pb.RunSuiteStreamRequest, rest, self._screens.stream)
        if first is None or config.WhichOneof("message") != "config":
            raise invalid_argument(
                [FieldViolation("config", "the first message of a RunSuiteStream is a config")]
            )
        request, declared = config.config.request, config.config.case_count
        self._check_case_count(declared, "config.case_count")
        key, source = self._run_source(request)
        info = await self._plan(key, source, context)
        limit = self._settings.max_message_bytes
        arriving: AsyncIterator[Sequence[memoryview]] | None
        arriving = _arriving(len(first), cases, messages, declared, limit)
        every: list[memoryview] = []
        if info.format == CHECKLLM or info.any_async or declared == 0:
            # Scored as one RunSuite once every case has arrived.
            async for chunk in arriving:
                every.extend(chunk)
            arriving = None
        async for reply in self._run(request, every, key, source, info, arriving, context):
            yield reply if isinstance(reply, bytes) else reply.SerializeToString()

    async def _run(
        self,
        request: pb.RunSuiteRequest,
        cases: Sequence[memoryview],
        key: bytes,
        source: PlanSource,
        info: PlanInfo,
        arriving: AsyncIterator[Sequence[memoryview]] | None,
        context: Context,
    ) -> AsyncIterator[pb.RunSuiteResponse | bytes]:
        """A RunSuite's run of `cases` (their bytes as sent): a checkllm document's, or the
        batch's (`SuiteRuns`); with `arriving`, a stream's cases as they arrive."""
        if info.format == CHECKLLM:
            if request.HasField("part"):
                raise invalid_argument(
                    [
                        FieldViolation(
                            "part",
                            "a checkllm suite_yaml is scored as a run of its own: send its "
                            "tests' assertions as checks to score them as parts of a run",
                        )
                    ]
                )
            budget = request.budget_usd if request.HasField("budget_usd") else info.settings.budget
            fresh = fresh_judges(request.judge_cache, info.settings.fresh_judges, "judge_cache")
            self.calls.preflight(info, budget)
            compiled = await self.executor.compiled_here(key, source)
            assert compiled.checkllm is not None
            own = compiled.checkllm.settings.budget
            ctx = self.calls.context(
                context,
                request.budget_usd if request.HasField("budget_usd") else own,
                fresh_judges=fresh,
            )
            run = self.checkllm.run_suite(
                compiled.checkllm, request, cases, intake.parse_case, ctx, (key, source, info)
            )
            async for response in run:
                yield response
            return
        if arriving is None and not cases and info.suite_case_problem is not None:
            # Cases written inline in a suite document were bounded by its size, but
            # not yet by what the whole-text checks would read of them.
            raise resource_exhausted(*info.suite_case_problem)
        own = arriving is None and not cases and info.suite_cases > 0
        batches = self.suites.batches(key, source, info, None if own else cases, arriving, context)
        async for reply in self.suites.run(request, info, batches, context):
            yield reply

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
            suite_yaml=cfg.suite_yaml, suite_name=cfg.suite_name, checks=cfg.checks,
            compact=cfg.compact, suite_format=cfg.format,
        )  # fmt: skip
        info = await self._plan(key, source, context)
        budget_usd = cfg.budget_usd if cfg.HasField("budget_usd") else None
        fresh = fresh_judges(cfg.judge_cache, info.settings.fresh_judges, "config.judge_cache")
        self.calls.preflight(info, budget_usd)
        ctx = self.calls.context(context, budget_usd, fresh_judges=fresh)
        if info.format == CHECKLLM:
            # Scored as recorded by the checkllm runner (not recorded in the run store yet).
            compiled = await self.executor.compiled_here(key, source)
            assert compiled.checkllm is not None
            stream = self.checkllm.stream(compiled.checkllm, request_iterator, ctx)
        else:
            recording = await self.suites.recording(
                "ScoreStream", cfg.record if cfg.HasField("record") else None,
                cfg.run_name, cfg.labels, "config", lambda: _stream_suite_text(cfg),
                cfg.suite_name, info.names, principal(context), context,
            )  # fmt: skip
            stream = self.streams.run(key, source, info, ctx, request_iterator, recording)
        async for resp in stream:
            yield resp

    @guarded_unary
    async def ListChecks(
        self, request: pb.ListChecksRequest, context: Context
    ) -> pb.ListChecksResponse:
        """The catalog of check types: the canonical ones, with their other spellings;
        types that only work in process (`python`) are not offered over the wire."""
        if self._catalog is None:
            self._catalog = _catalog()
        return self._catalog

    @guarded_unary
    async def ValidateSuite(
        self, request: pb.ValidateSuiteRequest, context: Context
    ) -> pb.ValidateSuiteResponse:
        """Every problem of a suite, with paths; never INVALID_ARGUMENT for a bad suite."""
        with self.in_flight.holding(request.ByteSize()):
            return await self._validate(request, context)

    async def _validate(
        self, request: pb.ValidateSuiteRequest, context: Context
    ) -> pb.ValidateSuiteResponse:
        try:
            key, source = self._source(
                suite_yaml=request.suite_yaml, suite_name=request.suite_name,
                checks=request.checks, compact=request.compact, suite_format=request.format,
            )  # fmt: skip
            info = await self._plan(key, source, context, list_suites=True)
        except SpecError as err:
            return pb.ValidateSuiteResponse(
                valid=False, problems=convert.violations_to_pb(err.violations)
            )
        problems = self.calls.preconditions(
            info, info.settings.budget, credentials=not request.offline
        )
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

    # ---- for the LabelService and the metrics ------------------------------------------

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
        self._check_case_count(len(cases), "cases")
        key, source = self._source(suite_yaml="", suite_name="", checks=checks, compact=())
        info = await self._plan(key, source, context)
        for i, c in enumerate(cases):
            self.cases.output(c.output.text, f"cases[{i}].output", info.whole_text_caps)
        ctx = self.calls.context(context, budget_usd)
        plan = (await self.executor.compiled_here(key, source)).plan
        todo = [
            Case(wire.sample_from_pb(c.sample), wire.output_from_pb(c.output), i)
            for i, c in enumerate(cases)
        ]
        concurrency = self._settings.max_concurrency
        results = [r async for r in run_cases(plan, todo, ctx, concurrency=concurrency)]
        if self._observer is not None:
            self._observer.observe_results(plan, results)
        results.sort(key=lambda r: r.index)
        return plan, results

    def describe_judge(self, model: Any) -> str:
        """`backend:model` a check's `model:` parameter routes to (the default when unset)."""
        return self.calls.describe_judge(model)

    @property
    def observer(self) -> RunObserver | None:
        """The metrics observer, if any."""
        return self._observer

    def plan_cache_stats(self) -> list[tuple[int, int]]:
        """(estimated bytes, plans) of each process's plan cache: this one's, then each
        worker's as last reported."""
        return self.executor.cache_stats()


@dataclass(frozen=True, slots=True)
class _Screens:
    """The screens of the requests that arrive as bytes (`intake`), run on what is left
    of them once their cases are taken out."""

    run: Screen | None
    stream: Screen | None


def _catalog() -> pb.ListChecksResponse:
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
    return pb.ListChecksResponse(checks=infos)


def _stream_suite_text(cfg: pb.StreamConfig) -> str:
    from scorewire.server.run_records import suite_text

    return suite_text(cfg.suite_yaml, cfg.suite_name, cfg.checks, cfg.compact, None)


async def _arriving(
    size: int,
    first: Sequence[memoryview],
    rest: AsyncIterator[bytes],
    declared: int,
    limit: int,
) -> AsyncIterator[Sequence[memoryview]]:
    """The stream's cases chunk by chunk (the config's own first): exactly `declared`
    of them, in messages within `max_message_bytes` (`limit`) together."""
    sent = len(first)
    problem = "config.case_count", f"{declared} cases declared, more sent"
    if sent > declared:
        raise invalid_argument([FieldViolation(*problem)])
    if sent:
        yield first
    async for raw in rest:
        size += len(raw)
        if size > limit:
            raise resource_exhausted(
                "cases",
                f"the stream's messages together exceed max_message_bytes ({limit} bytes)",
            )
        left, cases = await intake.split(raw, intake.STREAM_CHUNK_CASES)
        kind = intake.parse(pb.RunSuiteStreamRequest, left).WhichOneof("message")
        if kind != "cases":
            what = "a config after the first message" if kind else "neither config nor cases"
            raise invalid_argument([FieldViolation("message", f"the stream sent {what}")])
        sent += len(cases)
        if sent > declared:
            raise invalid_argument([FieldViolation(*problem)])
        yield cases
    if sent < declared:
        raise invalid_argument(
            [FieldViolation("config.case_count", f"{declared} cases declared, {sent} sent")]
        )
