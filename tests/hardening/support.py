"""Helpers of the hardening tests: a server on its own thread, and the rules every answer obeys.

`ThreadServer` runs `create_server` on a private event loop in a background thread, so
one server can serve a whole module of synchronous tests (Hypothesis drives plain
functions) through ordinary blocking stubs.

The answer rules (`assert_rejection`, `assert_scores`, `collect_run`) are the contract
the fuzzing and hostile-input tests check: a rejection is INVALID_ARGUMENT,
RESOURCE_EXHAUSTED or FAILED_PRECONDITION (a judge the server cannot call) with a
google.rpc.BadRequest naming a field; a success has one score
per check, and a score with an error never passes. (A server as a child process is in
tests/support/servers.py.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import grpc
from scorewire.server.app import Running, create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.support.rpc import violations

BIG_MESSAGES = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]
REJECTIONS = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    # A well-formed check naming a judge the server cannot call (preflight).
    grpc.StatusCode.FAILED_PRECONDITION,
)


class ThreadServer:
    """A scorewire server on a private event loop in a daemon thread."""

    def __init__(
        self,
        settings: Settings,
        *,
        make_judge: Callable[[Settings], Any] | None = None,
        observer: Any = None,
    ) -> None:
        self.settings = settings
        self._make_judge = make_judge
        self._observer = observer
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.running: Running | None = None
        self.judge: Any = None
        self.port = 0

    def _run(self, coro: Awaitable[Any], timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)  # type: ignore[arg-type]

    def start(self) -> ThreadServer:
        """Bind and start; the port is then in `port`."""
        self._thread.start()

        async def boot() -> None:
            if self._make_judge is not None:
                self.judge = self._make_judge(self.settings)
            self.running, self.port = await create_server(
                self.settings, judge=self.judge, observer=self._observer
            )

        self._run(boot())
        return self

    @property
    def address(self) -> str:
        """`127.0.0.1:<port>`."""
        return f"127.0.0.1:{self.port}"

    def channel(self) -> grpc.Channel:
        """A new blocking channel to the server (large messages allowed)."""
        return grpc.insecure_channel(self.address, options=BIG_MESSAGES)

    def stop(self) -> None:
        """Stop serving (no grace), close the judge, end the thread."""

        async def down() -> None:
            if self.running is not None:
                await self.running.stop(0)
            if self.judge is not None:
                await self.judge.aclose()

        try:
            self._run(down())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()


@contextmanager
def thread_server(**overrides: Any) -> Iterator[ThreadServer]:
    """A ThreadServer with test settings (port 0, no metrics) and `overrides`."""
    make_judge = overrides.pop("make_judge", None)
    observer = overrides.pop("observer", None)
    settings = Settings(host="127.0.0.1", port=0, metrics_enabled=False, **overrides)
    server = ThreadServer(settings, make_judge=make_judge, observer=observer).start()
    try:
        yield server
    finally:
        server.stop()


def stub(channel: grpc.Channel) -> scoring_pb2_grpc.ScoringServiceStub:
    """The generated stub over `channel`."""
    return scoring_pb2_grpc.ScoringServiceStub(channel)


# --- the answer rules ------------------------------------------------------------------


def assert_rejection(err: grpc.RpcError, *codes: grpc.StatusCode) -> list[tuple[str, str]]:
    """The error is one of `codes` (default: the two rejections) and names a field."""
    allowed = codes or REJECTIONS
    code = err.code()  # type: ignore[attr-defined]
    assert code in allowed, f"{code}: {err.details()}"  # type: ignore[attr-defined]
    found = violations(err)
    assert found, f"{code} without a BadRequest: {err.details()}"  # type: ignore[attr-defined]
    assert all(field for field, _ in found), found
    return found


def assert_score(s: pb.Score) -> None:
    """One score obeys the Score rules: value in 0..1, an error never passes and is 0."""
    assert 0.0 <= s.value <= 1.0, s
    if s.HasField("error"):
        assert s.error.code, s
        assert not s.passed and s.value == 0.0, s


def assert_scores(scores: Sequence[pb.Score], n_checks: int, passed: bool) -> None:
    """A result: one score per check, each valid, `passed` only when all passed."""
    assert len(scores) == n_checks
    for s in scores:
        assert_score(s)
    assert passed == all(s.passed for s in scores)


def collect_run(
    events: Iterator[pb.RunSuiteResponse],
) -> tuple[dict[int, pb.CaseResult], pb.RunSummary]:
    """Results by index (each index exactly once) and the one summary, which comes last."""
    results: dict[int, pb.CaseResult] = {}
    summary: pb.RunSummary | None = None
    for ev in events:
        assert summary is None, "an event after the summary"
        if ev.WhichOneof("event") == "results":
            for r in ev.results.results:
                assert r.index not in results, f"case {r.index} delivered twice"
                results[r.index] = r
        else:
            assert ev.WhichOneof("event") == "summary", ev
            summary = ev.summary
    assert summary is not None, "the stream ended without a summary"
    return results, summary
