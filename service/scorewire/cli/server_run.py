"""`scorewire run --server`: the run as one run on the server, however many calls it takes.

The CLI sends a run as several RunSuite calls (one per checkllm test, batches of at most
2,000 cases). It opens the run on the server first (RunService.OpenRun, just before the
first call), sends every call as a part of it (`RunSuiteRequest.part`), and closes it
with the summary and gate verdict it judged over every case (RunService.CloseRun). The
server then records it, with `--record`, as one run under the CLI's run name, and counts
it once in `scorewire_suite_runs_total`. Cases whose output could not be produced are
never sent to be scored: CloseRun carries them, so the recorded run holds every case. A
run interrupted, or refused by the server mid-way, is closed as incomplete; a CLI that
dies leaves it to the server, which marks it incomplete once its heartbeat stops.

A server without OpenRun (UNIMPLEMENTED: older, or one without a run store and so
without a RunService) scores the calls as before, each a run of its own; `--record` is
then refused with a message saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scorewire.cli.common import UsageError
from scorewire.cli.record import case_pb, result_pb
from scorewire.cli.remote import ServerTarget
from scorewire.cli.run_output import RunReport
from scorewire.scoring import wire
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import runs_pb2_grpc as rpb_grpc


@dataclass(slots=True)
class ServerRun:
    """One CLI run on a server: opened once, each call a part of it, closed once."""

    target: ServerTarget
    record: bool
    """`--record`: the server must record it (else the server's default decides)."""
    name: str
    labels: dict[str, str]
    suite: str
    """The suite file's text, stored as the run's suite."""
    checks: list[str]
    opened: bool = False
    run_id: str = ""
    """The recorded run's id; empty when the server does not record it."""
    in_parts: bool = True
    """False when the server predates OpenRun: calls go as runs of their own."""
    sent: set[int] = field(default_factory=set)
    """The run indexes of the cases sent in a part (the others go with CloseRun)."""
    closed: bool = False

    def _where(self) -> str:
        return self.target.address

    async def open(self, channel: Any) -> None:
        """OpenRun (once), over the run's channel."""
        import grpc

        if self.opened:
            return
        request = rpb.OpenRunRequest(
            run_name=self.name, labels=self.labels, suite=self.suite, checks=self.checks
        )
        if self.record:
            request.record = True
        try:
            answer = await rpb_grpc.RunServiceStub(channel).OpenRun(
                request, metadata=self.target.metadata, timeout=60
            )
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.UNIMPLEMENTED and not self.record:
                self.in_parts, self.opened = False, True
                return
            if err.code() == grpc.StatusCode.UNIMPLEMENTED:
                raise UsageError(
                    f"--record: {self._where()} cannot record a run sent in parts (it has "
                    "no RunService.OpenRun: an older server, or one without a run store)"
                ) from None
            raise UsageError(
                f"the server {self._where()} cannot open the run: "
                f"{err.code().name}: {err.details()}"
            ) from None
        self.run_id, self.opened = answer.run_id, True

    def run_suite(
        self, client: Any, cases: list[dict[str, Any]], kwargs: dict[str, Any], first_index: int
    ) -> Any:
        """A RunSuite call that is one part of the run: the client's `run_suite(cases,
        **kwargs)` naming the run and where its cases start."""
        return client.run_suite(
            cases,
            suite_yaml=kwargs.get("suite_yaml", ""),
            suite_name=kwargs.get("suite_name", ""),
            checks=kwargs.get("checks"),
            budget_usd=kwargs.get("budget_usd"),
            fresh_judges=kwargs.get("fresh_judges"),
            part=(self.run_id, first_index),
        )  # the client's own metadata and (no) deadline, as for every call of the run

    async def close(self, report: RunReport | None) -> str:
        """CloseRun: complete with the report's summary, or incomplete (an interrupted
        report, or None: the run failed). Returns the recorded run's id (may be empty)."""
        import grpc

        if self.closed:
            return self.run_id
        self.closed = True
        interrupted = report is None or report.interrupted
        if not self.opened:
            if not (self.record and interrupted):
                return ""  # nothing was sent: an unrecorded run that never scored counts nothing
            await self._with_channel(self.open)  # recorded as the incomplete run it was
        if not self.in_parts:
            return ""
        request = rpb.CloseRunRequest(run_id=self.run_id, interrupted=interrupted)
        if report is not None:
            if not interrupted:
                request.summary.CopyFrom(wire.summary_to_pb(report.summary))
            if self.run_id:
                unsent = [r for r in report.records if r.index not in self.sent]
                request.cases.extend(case_pb(r) for r in unsent)
                request.results.extend(result_pb(r) for r in unsent)

        async def call(channel: Any) -> None:
            await rpb_grpc.RunServiceStub(channel).CloseRun(
                request, metadata=self.target.metadata, timeout=60
            )

        try:
            await self._with_channel(call)
        except grpc.aio.AioRpcError as err:
            raise UsageError(
                f"the server {self._where()} cannot close the run: "
                f"{err.code().name}: {err.details()}"
            ) from None
        return self.run_id

    async def _with_channel(self, use: Any) -> None:
        import grpc

        t = self.target
        if t.credentials is not None:
            channel = grpc.aio.secure_channel(t.address, t.credentials)
        else:
            channel = grpc.aio.insecure_channel(t.address)
        try:
            await use(channel)
        finally:
            await channel.close(None)
