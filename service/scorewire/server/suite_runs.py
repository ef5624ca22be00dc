"""RunSuite's run: check the cases, record, score, send and summarise, in one path.

Whichever way a batch is scored (in the workers, or in this process when its checks
wait on I/O: `scoring.executor`), it arrives as `ScoredBatch`es: the serialized results,
their part of the summary and of the metrics, and the cases as sent. Each is counted,
compared with a baseline, stored when the call is recorded (stored, then sent), and
sent; the summary closes the stream.

Every case is checked (output sizes, JSON text) before anything is answered: the first
problem is the call's error, as if no case had been scored.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol

import grpc
from google.protobuf.descriptor import Descriptor
from scorewire.core.context import CheckContext
from scorewire.engine import native
from scorewire.engine.summary import SummaryBuilder
from scorewire.runs import RunRecorder
from scorewire.scoring import wire
from scorewire.scoring.chunks import ChunkRun, ScoredBatch, chunk_jobs, job_maker, streamed_jobs
from scorewire.scoring.executor import DeadlineExpired, Executor
from scorewire.scoring.inprocess import LocalRun
from scorewire.scoring.limits import output_problem, short_output
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.plans import PlanInfo
from scorewire.scoring.recorded import cases_blob
from scorewire.scoring.recording import BaselineGate, Recording, resolve_baseline
from scorewire.scoring.screening import Bound, Screen
from scorewire.server import convert
from scorewire.server.call_context import RUN_ID_METADATA, CallContexts, deadline, fresh_judges
from scorewire.server.intake import CASES_PER_TURN, parse_case
from scorewire.server.run_parts import RunParts
from scorewire.server.run_records import check_run_fields, visible_tenant
from scorewire.server.security import Principal, principal
from scorewire.server.status import (
    RequestRejected,
    invalid_argument,
    resource_exhausted,
    unavailable,
)
from scorewire.settings import Settings
from scorewire.suites.yaml_document import suite_over_message
from scorewire.v1 import scoring_pb2 as pb

Context = grpc.aio.ServicerContext[Any, Any]

STORE_AHEAD = 4
"""Recorded batches of a RunSuite queued for the run store before the oldest must be
stored (and then sent): they share commits, and memory stays bounded."""


class Batches(Protocol):
    """A RunSuite's cases on their way to be scored (`ChunkRun`, `LocalRun`)."""

    async def check(self) -> None:
        """Check every case, raising the first problem."""

    def batches(self, ctx: CheckContext) -> AsyncIterator[ScoredBatch]:
        """The scored batches."""

    async def close(self, *, detach: bool = False) -> None:
        """Stop scoring (`detach`: leave what runs to finish unread)."""


class RequestChecks:
    """What a request, and each of its cases, must pass before it is scored."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def plan_size(self, checks: int, compact: Sequence[str], suite_yaml: str = "") -> None:
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

    def screen(self, message: Descriptor) -> Screen | None:
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

    def output(self, text: str, field: str, caps: Sequence[int | None]) -> None:
        """RESOURCE_EXHAUSTED for an output over the output limits (`scoring.limits`)."""
        problem = output_problem(text, field, caps, self._settings)
        if problem is not None:
            raise resource_exhausted(*problem)

    def json_fields(self, sample: pb.Sample, output: pb.Output, base: str) -> None:
        """INVALID_ARGUMENT naming a JSON-text field set beside its Value, or not JSON."""
        if not convert.json_fields_ok(sample, output):
            raise invalid_argument(convert.json_field_violations(sample, output, base))

    def bytes_checker(self, info: PlanInfo) -> Callable[[bytes, int], object]:
        """`case_checker` for cases checked and not kept parsed (a batch the workers
        score): the native kernel passes the cases of strings and JSON text it can vouch
        for (`plain_case_ok`, several times cheaper than parsing them here), and Python
        checks every other case, so both refuse the same cases with the same problems."""
        check = self.case_checker(info)
        plain = native.plain_case_ok() if self._settings.native_kernel else None
        if plain is None:
            return check
        short = short_output(self._settings, info.whole_text_caps)

        def vouched(data: bytes, i: int) -> object:
            return None if plain(data, short) else check(data, i)

        return vouched

    def case_checker(self, info: PlanInfo) -> Callable[[memoryview | bytes, int], pb.Case]:
        """Parses case `i` from its bytes and refuses it over the output limits or with bad
        JSON text (its field path); the case parsed."""
        caps = info.whole_text_caps
        short = short_output(self._settings, caps)

        def check(data: memoryview | bytes, i: int) -> pb.Case:
            c = parse_case(data)
            text = c.output.text
            if len(text) > short:  # else far within every limit, without measuring
                self.output(text, f"cases[{i}].output", caps)
            if not convert.json_fields_ok(c.sample, c.output):  # the path only when refused
                raise invalid_argument(
                    convert.json_field_violations(c.sample, c.output, f"cases[{i}]")
                )
            return c

        return check


class SuiteRuns:
    """RunSuite and RunSuiteStream calls, once their plan is known."""

    def __init__(
        self,
        settings: Settings,
        executor: Executor,
        calls: CallContexts,
        cases: RequestChecks,
        runs: RunRecorder | None,
        observer: Any,
    ) -> None:
        self._settings = settings
        self._executor = executor
        self._calls = calls
        self._cases = cases
        self._runs = runs
        self._observer = observer
        self.parts = RunParts(settings, runs, observer)
        """Runs sent in parts (OpenRun, `RunSuiteRequest.part`, CloseRun)."""

    def batches(
        self,
        key: bytes,
        source: PlanSource,
        info: PlanInfo,
        cases: Sequence[memoryview] | None,
        arriving: AsyncIterator[Sequence[memoryview]] | None,
        context: Context,
    ) -> Batches:
        """How the batch's cases are scored (`scoring.executor`'s rule): `cases` as sent
        (None: the suite document's own), or a stream's as they `arrive`."""
        if info.any_async:
            check = self._cases.case_checker(info)
            return _Here(self._executor, key, source, cases, check, self._settings)
        make = job_maker(key, source, self._settings.check_timeout_s, self._bounds)
        vouched = self._cases.bytes_checker(info)
        jobs: Any = (
            streamed_jobs(make, arriving, vouched)
            if arriving is not None
            else chunk_jobs(make, cases, info.suite_cases, vouched)
        )
        return _Chunks(self._executor.chunk_run(jobs, deadline(context)))

    @property
    def _bounds(self) -> tuple[float, ...] | None:
        return self._observer.bounds_ms if self._observer is not None else None

    async def run(
        self,
        request: pb.RunSuiteRequest,
        info: PlanInfo,
        batches: Batches,
        context: Context,
    ) -> AsyncIterator[bytes | pb.RunSuiteResponse]:
        """Check, then score, record and send `batches`; the summary last."""
        try:
            await batches.check()
            budget = request.budget_usd if request.HasField("budget_usd") else info.settings.budget
            fresh = fresh_judges(request.judge_cache, info.settings.fresh_judges, "judge_cache")
            self._calls.preflight(info, budget)
            ctx = self._calls.context(context, budget, fresh_judges=fresh)
            who = principal(context)
            baseline = await self._baseline(info.gate, who)
            part = request.HasField("part")
            recording: Recording | None
            if part:
                recording = await self.parts.join(request, who, context)
            else:
                recording = await self.recording(
                    "RunSuite", request.record if request.HasField("record") else None,
                    request.run_name, request.labels, "", lambda: _suite_text(request),
                    request.suite_name, info.names, who, context,
                )  # fmt: skip
        except BaseException:
            await batches.close(detach=True)  # refused before any answer
            raise
        builder = SummaryBuilder(info.names, info.types)
        try:
            async for message in self._send(info, batches.batches(ctx), builder, baseline,
                                            recording):  # fmt: skip
                yield message
            if ctx.past_deadline():
                # The caller's deadline passed while the last checks ran (they answered
                # DEADLINE_EXCEEDED): the call ends so, as Score does, not with a summary
                # that races the caller's own timer.
                raise DeadlineExpired()
            summary = builder.finish(info.gate)
            if baseline is not None:
                baseline.judge(summary)
            if self._observer is not None and not part:  # a part's run is counted by CloseRun
                self._observer.observe_summary(summary)
            message_summary = wire.summary_to_pb(summary)
            if recording is not None:
                await recording.complete(summary)
                message_summary.run_id = recording.run.run_id
            yield pb.RunSuiteResponse(summary=message_summary)
        finally:
            await batches.close()
            if recording is not None:
                recording.abandon()  # unless it completed: cancelled, failed

    async def _send(
        self,
        info: PlanInfo,
        scored: AsyncIterator[ScoredBatch],
        builder: SummaryBuilder,
        baseline: BaselineGate | None,
        recording: Recording | None,
    ) -> AsyncIterator[bytes]:
        """Count each batch, and send it (once stored, when the call is recorded)."""
        # Stored, then sent: a batch's message waits for its commit, while the next
        # batches are already queued (so they share commits).
        storing: collections.deque[tuple[asyncio.Future[None], bytes]] = collections.deque()
        async for batch in scored:
            builder.merge(batch.counts.summary)  # counted where it was scored
            if self._observer is not None and batch.counts.tally is not None:
                self._observer.observe_tally(info, batch.counts.tally)
            if baseline is not None:
                baseline.add_message(info.names, batch.message)
            if recording is None:
                yield batch.message
                continue
            stored = recording.submit(cases_blob(batch.cases), batch.message, batch.count)
            storing.append((stored, batch.message))
            while storing and (storing[0][0].done() or len(storing) > STORE_AHEAD):
                done, ready = storing.popleft()
                await done
                yield ready
        while storing:
            done, ready = storing.popleft()
            await done
            yield ready

    async def _baseline(self, gate: Any, who: Principal | None) -> BaselineGate | None:
        """The baseline a gate names, loaded from the run store; None without one."""
        if gate is None or gate.baseline is None:
            return None
        run_id, outcomes = await resolve_baseline(self._runs, gate.baseline, visible_tenant(who))
        return BaselineGate(run_id, outcomes, gate.max_regression)

    async def recording(
        self,
        source: str,
        record: bool | None,
        run_name: str,
        labels: Any,
        field_base: str,
        suite: Callable[[], str],
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
        recording = await Recording.begin(
            self._runs,
            name=run_name or suite_name or "unnamed",
            source=source,
            tenant=who.name if who is not None else "",
            labels=checked,
            suite=suite(),
            checks=checks,
        )
        await context.send_initial_metadata(((RUN_ID_METADATA, recording.run.run_id),))
        return recording


def _suite_text(request: pb.RunSuiteRequest) -> str:
    from scorewire.server.run_records import suite_text

    gate = request.gate if request.HasField("gate") else None
    return suite_text(request.suite_yaml, request.suite_name, request.checks, request.compact, gate)


class _Chunks:
    """A batch scored in the workers (`ChunkRun`)."""

    def __init__(self, run: ChunkRun) -> None:
        self._run = run

    async def check(self) -> None:
        await self._run.check()

    def batches(self, ctx: CheckContext) -> AsyncIterator[ScoredBatch]:
        return self._run.batches()

    async def close(self, *, detach: bool = False) -> None:
        await self._run.close(detach=detach)


class _Here:
    """A batch scored in this process (`LocalRun`), its plan compiled here first."""

    def __init__(
        self,
        executor: Executor,
        key: bytes,
        source: PlanSource,
        cases: Sequence[memoryview] | None,
        check: Callable[[memoryview | bytes, int], pb.Case],
        settings: Settings,
    ) -> None:
        self._executor, self._key, self._source = executor, key, source
        self._cases, self._check, self._settings = cases, check, settings
        self._parsed: list[pb.Case] | None = None

    async def check(self) -> None:
        """Parse and check every case, giving the event loop turns."""
        if self._cases is None:
            return
        self._parsed = []
        for i, data in enumerate(self._cases, 1):
            self._parsed.append(self._check(data, i - 1))
            if i % CASES_PER_TURN == 0:
                await asyncio.sleep(0)

    async def batches(self, ctx: CheckContext) -> AsyncIterator[ScoredBatch]:
        compiled = await self._executor.compiled_here(self._key, self._source)
        suite = compiled.suite
        assert suite is not None
        own = suite.cases or []
        cases = self._parsed if self._parsed or not own else None
        concurrency = min(suite.settings.concurrency, self._settings.max_concurrency)
        run = LocalRun(
            suite.plan, cases, self._cases or (), own, ctx,
            concurrency=concurrency,
            max_reason_chars=self._settings.max_reason_chars,
            bounds_ms=self._executor.bounds_ms,
        )  # fmt: skip
        async for batch in run.batches():
            yield batch

    async def close(self, *, detach: bool = False) -> None:
        """Nothing runs outside `batches()` (closing it cancels the cases in flight)."""
